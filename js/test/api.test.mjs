// api.test.mjs - the package's API (onnxruntime-web's shape) over the wasm
// module: every element type copied into the heap and back through Identity
// models, external data from bytes, errors as rejected promises carrying
// onnxc's message. The models and the expected product come from
// make_models.py (onnx's helper and numpy), not from onnxc.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { InferenceSession, Tensor } from '../src/index.mjs';
import { threadsDir, threadsUsable } from '../src/loader.mjs';

const here = dirname(fileURLToPath(import.meta.url));
let dir;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'onnxc-js-'));
  execFileSync(process.env.PYTHON ?? '/usr/bin/python3', [join(here, 'make_models.py'), dir]);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const SAMPLES = {
  float32: new Float32Array([1.5, -2, 0, 3.25, NaN, -Infinity]),
  float16: new Uint16Array([0x3c00, 0xc000, 0, 0x7bff, 0x0001, 0xfc00]),
  float64: new Float64Array([1e300, -2.5, 0, 1 / 3, -0, 7]),
  int8: new Int8Array([-128, 127, 0, -1, 5, 6]),
  int16: new Int16Array([-32768, 32767, 0, -1, 5, 6]),
  int32: new Int32Array([-2147483648, 2147483647, 0, -1, 5, 6]),
  int64: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 2n ** 40n, 6n]),
  uint8: new Uint8Array([0, 255, 1, 2, 3, 4]),
  uint16: new Uint16Array([0, 65535, 1, 2, 3, 4]),
  uint32: new Uint32Array([0, 4294967295, 1, 2, 3, 4]),
  uint64: new BigUint64Array([0n, 2n ** 64n - 1n, 1n, 2n, 3n, 4n]),
  bool: new Uint8Array([1, 0, 1, 1, 0, 0]),
  string: ['', 'a', 'héllo wörld', 'x'.repeat(300), '日本', 'z'],
};

for (const [type, data] of Object.entries(SAMPLES)) {
  test(`identity ${type}: copied into the heap and back`, async () => {
    const s = await InferenceSession.create(join(dir, `identity_${type}.onnx`));
    assert.deepEqual(s.inputNames, ['x']);
    assert.deepEqual(s.outputNames, ['y']);
    const out = await s.run({ x: new Tensor(type, data, [2, 3]) });
    assert.equal(out.y.type, type);
    assert.deepEqual(out.y.dims, [2, 3]);
    if (type === 'string') assert.deepEqual(out.y.data, data);
    else assert.deepEqual(Array.from(out.y.data), Array.from(data));
    await s.release();
  });
}

test('external data given as bytes, model from an ArrayBuffer; result within float rounding of numpy', async () => {
  const model = readFileSync(join(dir, 'ext.onnx'));
  const weights = readFileSync(join(dir, 'weights.bin'));
  const want = JSON.parse(readFileSync(join(dir, 'ext_expected.json'), 'utf8'));
  const ab = model.buffer.slice(model.byteOffset, model.byteOffset + model.byteLength);
  const s = await InferenceSession.create(ab, { externalData: [{ path: 'weights.bin', data: new Uint8Array(weights) }] });
  const { Y } = await s.run({ X: new Tensor('float32', Float32Array.from(want.X), [2, 64]) });
  assert.deepEqual(Y.dims, [2, 32]);
  Y.data.forEach((v, i) => assert.ok(Math.abs(v - want.Y[i]) <= 1e-4 + 1e-4 * Math.abs(want.Y[i]), `Y[${i}] ${v} vs ${want.Y[i]}`));
  await s.release();
  // without the file: onnxc's message names it
  await assert.rejects(InferenceSession.create(ab), /weights\.bin/);
});

test('errors are rejected promises with onnxc\'s message', async () => {
  await assert.rejects(InferenceSession.create(new Uint8Array([1, 2, 3, 4, 5])), /onnxc: loading the model: .+/);
  const s = await InferenceSession.create(join(dir, 'identity_float32.onnx'));
  await assert.rejects(s.run({ x: new Tensor('int32', new Int32Array(6), [2, 3]) }), /onnxc: run: .*x/);
  await assert.rejects(s.run({ x: new Tensor('float32', new Float32Array(4), [2, 2]) }), /onnxc: run: .+/);
  assert.throws(() => new Tensor('float32', new Float32Array(5), [2, 3]), /5 elements/);
  await s.release();
  await assert.rejects(s.run({}), /released/);
});

test('profile: true times the nodes of the runs since resetProfile()', async () => {
  const s = await InferenceSession.create(join(dir, 'identity_float32.onnx'), { profile: true });
  const feeds = { x: new Tensor('float32', SAMPLES.float32, [2, 3]) };
  await s.run(feeds);
  s.resetProfile();
  await s.run(feeds);
  await s.run(feeds);
  const p = s.profile(5);
  assert.match(p, /profile over 2 runs/);
  assert.match(p, /Identity/);
  await s.release();
  assert.throws(() => s.profile(), /released/);
});

// The pthreads build (make wasm-threads: dist/threads/, or
// ONNXC_WASM_THREADS_DIR) when there is one; else the package runs on one
// thread.
const thrDir = fileURLToPath(threadsDir());
const haveThreads = threadsUsable() && existsSync(join(thrDir, 'libonnxc.mjs'));

test('threads: 2 give the outputs of 1 (and numpy\'s within float rounding)',
  { skip: !haveThreads && `no pthreads build in ${thrDir} (make wasm-threads)` }, async () => {
    const want = JSON.parse(readFileSync(join(dir, 'mlp_expected.json'), 'utf8'));
    const X = new Tensor('float32', Float32Array.from(want.X), [64, 256]);
    const one = await InferenceSession.create(join(dir, 'mlp.onnx'), { threads: 1 });
    const two = await InferenceSession.create(join(dir, 'mlp.onnx'), { threads: 2 });
    assert.equal(one.threads, 1);
    assert.equal(two.threads, 2);
    const a = (await one.run({ X })).Y, b = (await two.run({ X })).Y;
    for (let r = 0; r < 3; r++) assert.deepEqual(Array.from((await two.run({ X })).Y.data), Array.from(b.data));
    a.data.forEach((v, i) => {
      assert.ok(Math.abs(v - b.data[i]) <= 1e-5 + 1e-5 * Math.abs(v), `Y[${i}]: ${b.data[i]} on 2 threads, ${v} on 1`);
      assert.ok(Math.abs(v - want.Y[i]) <= 1e-4 + 1e-4 * Math.abs(want.Y[i]), `Y[${i}] ${v} vs numpy ${want.Y[i]}`);
    });
    await one.release();
    await two.release();
  });

// Winograd F(4x4, 3x3) (src/kernels/winograd_wasm.c in the SIMD128 module):
// the tolerance is test_conv's for a direct sum of C x 9 taps,
// |y - want| / (1 + |want|) <= 1e-5 (9 C + 1) (docs/numerics.md)
// (and with the pthreads build, 2 threads give the bits of 1: the tasks
// split bands and output channels, never a sum)
async function winogradRun(threads) {
  const want = JSON.parse(readFileSync(join(dir, 'winograd_expected.json'), 'utf8'));
  const s = await InferenceSession.create(join(dir, 'winograd.onnx'), { threads });
  const out = await s.run({
    X: new Tensor('float32', Float32Array.from(want.X), [2, 24, 38, 41]),
    R: new Tensor('float32', Float32Array.from(want.R), [2, 40, 38, 41]),
    Z: new Tensor('float32', Float32Array.from(want.Z), [1, 400, 10, 9]),
  });
  await s.release();
  return { want, out };
}

test('winograd-sized 3x3 convolutions: numpy\'s direct sums within the documented tolerance', async () => {
  const { want, out } = await winogradRun(1);
  for (const [name, dims, C] of [['Y', [2, 18, 36, 39], 40], ['Y2', [1, 64, 10, 10], 400]]) {
    const y = out[name];
    assert.deepEqual(y.dims, dims);
    const tol = 1e-5 * (9 * C + 1);
    let worst = 0, at = -1;
    y.data.forEach((v, i) => {
      const e = Math.abs(v - want[name][i]) / (1 + Math.abs(want[name][i]));
      if (!(e <= worst)) { worst = Number.isNaN(e) ? Infinity : e; at = i; }
    });
    assert.ok(worst <= tol, `${name}[${at}] ${y.data[at]} vs numpy ${want[name][at]} (relative error ${worst} > ${tol})`);
  }
});

test('winograd-sized 3x3 convolutions: 2 threads give the outputs of 1',
  { skip: !haveThreads && `no pthreads build in ${thrDir} (make wasm-threads)` }, async () => {
    const one = (await winogradRun(1)).out, two = (await winogradRun(2)).out;
    for (const name of ['Y', 'Y2']) assert.deepEqual(Array.from(two[name].data), Array.from(one[name].data), name);
  });

// ConvTranspose of 2x2 kernels at stride 2 (src/kernels/convt_wasm.c in the
// SIMD128 module; the 130-channel layer takes the GEMM path): numpy's sums
// within test_conv's tolerance for C products, 1e-5 (C + 1), and with the
// pthreads build 2 threads give the bits of 1 (the tasks split output
// channels and bands of rows, never a sum)
async function convtRun(threads) {
  const want = JSON.parse(readFileSync(join(dir, 'convt_expected.json'), 'utf8'));
  const s = await InferenceSession.create(join(dir, 'convt.onnx'), { threads });
  const out = await s.run({
    X1: new Tensor('float32', Float32Array.from(want.X1), [1, 24, 70, 133]),
    X2: new Tensor('float32', Float32Array.from(want.X2), [2, 6, 7, 11]),
    X3: new Tensor('float32', Float32Array.from(want.X3), [1, 130, 3, 6]),
  });
  await s.release();
  return { want, out };
}

test('2x2 stride-2 ConvTranspose: numpy\'s sums within the documented tolerance', async () => {
  const { want, out } = await convtRun(1);
  for (const [name, dims, C] of [['Y1', [1, 1, 140, 266], 24], ['Y2', [2, 6, 14, 22], 3], ['Y3', [1, 4, 6, 12], 130]]) {
    const y = out[name];
    assert.deepEqual(y.dims, dims);
    const tol = 1e-5 * (C + 1);
    let worst = 0, at = -1;
    y.data.forEach((v, i) => {
      const e = Math.abs(v - want[name][i]) / (1 + Math.abs(want[name][i]));
      if (!(e <= worst)) { worst = Number.isNaN(e) ? Infinity : e; at = i; }
    });
    assert.ok(worst <= tol, `${name}[${at}] ${y.data[at]} vs numpy ${want[name][at]} (relative error ${worst} > ${tol})`);
  }
});

test('2x2 stride-2 ConvTranspose: 2 threads give the outputs of 1',
  { skip: !haveThreads && `no pthreads build in ${thrDir} (make wasm-threads)` }, async () => {
    const one = (await convtRun(1)).out, two = (await convtRun(2)).out;
    for (const name of ['Y1', 'Y2', 'Y3']) assert.deepEqual(Array.from(two[name].data), Array.from(one[name].data), name);
  });

// depthwise convolutions (src/kernels/conv_direct_wasm.c's rows in the
// SIMD128 module): strides 1 and 2, 3x3 to 7x7, dilation, asymmetric
// pads, a channel multiplier; numpy's sums within test_conv's tolerance
// for K x K products, 1e-5 (K^2 + 1), and with the pthreads build 2 threads
// give the bits of 1 (the tasks split channels, never a sum)
async function depthwiseRun(threads) {
  const want = JSON.parse(readFileSync(join(dir, 'depthwise_expected.json'), 'utf8'));
  const s = await InferenceSession.create(join(dir, 'depthwise.onnx'), { threads });
  const feeds = {};
  for (const [k, v] of Object.entries(want)) if (k[0] === 'X') feeds[k] = new Tensor('float32', Float32Array.from(v.data), v.dims);
  const out = await s.run(feeds);
  await s.release();
  return { want, out };
}

test('depthwise convolutions: numpy\'s sums within the documented tolerance', async () => {
  const { want, out } = await depthwiseRun(1);
  const K = { YD1: 3, YD2: 5, YD3: 3, YD4: 3, YD5: 7, YD6: 3, YD7: 5 };
  for (const [name, k] of Object.entries(K)) {
    const y = out[name], w = want[name];
    assert.deepEqual(y.dims, w.dims, name);
    const tol = 1e-5 * (k * k + 1);
    let worst = 0, at = -1;
    y.data.forEach((v, i) => {
      const e = Math.abs(v - w.data[i]) / (1 + Math.abs(w.data[i]));
      if (!(e <= worst)) { worst = Number.isNaN(e) ? Infinity : e; at = i; }
    });
    assert.ok(worst <= tol, `${name}[${at}] ${y.data[at]} vs numpy ${w.data[at]} (relative error ${worst} > ${tol})`);
  }
});

test('depthwise convolutions: 2 threads give the outputs of 1',
  { skip: !haveThreads && `no pthreads build in ${thrDir} (make wasm-threads)` }, async () => {
    const one = (await depthwiseRun(1)).out, two = (await depthwiseRun(2)).out;
    for (const name of Object.keys(one)) assert.deepEqual(Array.from(two[name].data), Array.from(one[name].data), name);
  });
