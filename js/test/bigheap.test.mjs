// bigheap.test.mjs - tensors at heap addresses past 2 GB (MAXIMUM_MEMORY is
// 4 GB): a wasm i32 pointer comes back to JavaScript signed, so without the
// loader's unsigned wrappers such an address reads negative and making a
// view of it throws. Blocks of just over 2 GB in all are taken first, so
// that the run's tensors land above them; then a tensor of 3 GB, which must fail with
// onnxc's message, not trap. Own file: node's runner gives it its own
// process, whose heap then stays big. Skipped where the host has not the
// memory.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InferenceSession, Tensor } from '../src/index.mjs';
import { loadModule } from '../src/loader.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const GB = 2 ** 30;

test('tensors past 2 GB of heap are read and written at their unsigned addresses', {
  skip: freemem() < 4 * GB && `${(freemem() / GB).toFixed(1)} GB free, 4 wanted`,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'onnxc-js-'));
  try {
    execFileSync(process.env.PYTHON ?? '/usr/bin/python3', [join(here, 'make_models.py'), dir]);
    const mod = await loadModule(1);
    // two blocks: one allocation of 2 GB or more fails in emscripten's
    // malloc (sbrk takes a signed 32-bit increment)
    const blocks = [mod._malloc(GB + 32 * 2 ** 20), mod._malloc(GB + 32 * 2 ** 20)];
    assert.ok(blocks[0] > 0 && blocks[1] > 0, 'the two 1 GB blocks');
    const probe = mod._malloc(16);
    assert.ok(probe >= 2 ** 31, `an allocation after the block is past 2 GB (${probe})`);
    mod._free(probe);
    const s = await InferenceSession.create(join(dir, 'identity_float32.onnx'));
    const data = Float32Array.from({ length: 6 }, (_, i) => i * 1.5 - 2);
    const { y } = await s.run({ x: new Tensor('float32', data, [2, 3]) });
    assert.deepEqual(Array.from(y.data), Array.from(data));
    const strs = ['past', '2 GB', 'é', '', 'x', 'y'];
    const ss = await InferenceSession.create(join(dir, 'identity_string.onnx'));
    assert.deepEqual((await ss.run({ x: new Tensor('string', strs, [2, 3]) })).y.data, strs);
    // 3 GB more cannot fit under 4 GB: a clean error, and the module still works
    const huge = { type: 'float32', dims: [2, 3 * 2 ** 27], data: { length: 6 * 2 ** 27 } };
    await assert.rejects(s.run({ x: huge }), /onnxc: /);
    assert.deepEqual(Array.from((await s.run({ x: new Tensor('float32', data, [2, 3]) })).y.data), Array.from(data));
    await s.release();
    await ss.release();
    for (const b of blocks) mod._free(b);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
