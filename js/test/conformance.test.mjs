// conformance.test.mjs - ONNX's node conformance cases (../shared/testdata/
// node) through the package and the wasm module: every case passes except
// those listed in expected_failures.txt (the native list, tests/conformance/
// expected_failures.txt, plus the wasm build's own, with their reasons).
// Cases whose inputs or outputs are sequences or optionals are skipped: the
// Tensor API, as onnxruntime-web's, carries tensors only.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readExpected, runAll } from './conformance.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const shared = [process.env.ONNXC_SHARED, join(root, '..', 'shared'), join(root, '..', '..', 'shared')]
  .find((d) => d && existsSync(join(d, 'testdata', 'node')));

test('node conformance cases through wasm', { skip: !shared && 'no ../shared/testdata/node' }, async () => {
  const expected = await readExpected(join(root, 'tests', 'conformance', 'expected_failures.txt'));
  for (const [k, v] of await readExpected(join(here, 'expected_failures.txt'))) expected.set(k, v);
  const r = await runAll([join(shared, 'testdata', 'node')], expected);
  console.log(`wasm conformance: ${r.passed} passed, ${r.failed} failed (${r.failed - r.unexpected.length} expected), ${r.skipped} skipped`);
  assert.deepEqual(r.unexpected, []);
});
