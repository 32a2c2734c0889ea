// ort_lowbit.mjs - weight-only quantized MatMul (DequantizeLinear of constant
// 8/4/2-bit weights -> MatMul, which onnxc fuses into MatMulDQFused) against
// onnxruntime at its basic optimization level (DequantizeLinear then a float
// MatMul: the specification's arithmetic; the default level would quantize the
// activations to int8). Seeded text models are converted with `onnxc convert`;
// one row (decode) and several rows, blockwise (with a short last block), per
// column and per tensor scales, with and without zero points, at one and two
// threads: every output within 1e-5 of the output's largest magnitude.
//
//   node tests/oracle/ort_lowbit.mjs ONNXC_BIN
//
// Exits 77 (skip) when onnxruntime-node is not installed. A weight type that
// onnxruntime cannot load is reported and skipped, not failed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, loadOrt, rng, writeTensorProto, readTensorProto } from './ort_common.mjs';

const onnxc = process.argv[2];
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-lowbit-'));
const r = rng(31);
const range = (t) => {
  const bits = t.includes('8') ? 8 : t.includes('4') ? 4 : 2;
  return t.startsWith('u') ? [0, (1 << bits) - 1] : [-(1 << (bits - 1)), (1 << (bits - 1)) - 1];
};
const ints = (n, [lo, hi]) => Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo + 1)));
const cases = [
  // name, type, K, N, rows, batch, block (0: per column; -1: per tensor), zero point
  ['int4 block 32, one row', 'int4', 96, 70, 1, 1, 32, false],
  ['int4 block 32, 5 rows', 'int4', 96, 70, 5, 1, 32, false],
  ['uint4 zp, short last block', 'uint4', 100, 33, 3, 2, 32, true],
  ['uint4 zp block 16, one row', 'uint4', 64, 129, 1, 1, 16, true],
  ['int8 per column', 'int8', 50, 40, 1, 2, 0, false],
  ['uint8 zp per tensor', 'uint8', 33, 17, 6, 1, -1, true],
  ['int2 block 16', 'int2', 64, 20, 1, 1, 16, false],
  ['uint2 zp block 32', 'uint2', 70, 65, 4, 1, 32, true],
];
let passed = 0, failed = 0, skipped = 0;
for (const [name, type, K, N, rows, batch, block, zp] of cases) {
  const nb = block > 0 ? Math.ceil(K / block) : 1;
  const sdims = block > 0 ? `[${nb},${N}]` : block === 0 ? `[${N}]` : '';
  const ns = block > 0 ? nb * N : block === 0 ? N : 1;
  const opset = type.includes('2') ? 25 : 21;
  const attrs = block > 0 ? `<axis = 0, block_size = ${block}>` : '<axis = 1>';
  const scales = Array.from({ length: ns }, () => (0.001 + 0.02 * r()).toPrecision(6));
  const text = `<ir_version: 10, opset_import: ["" : ${opset}]>\n` +
    `lowbit (float[${batch},${rows},${K}] A) => (float[${batch},${rows},${N}] Y) ` +
    `<${type}[${K},${N}] wq = {${ints(K * N, range(type)).join(',')}}, float${sdims} ws = {${scales.join(',')}}` +
    (zp ? `, ${type}${sdims} wz = {${ints(ns, range(type)).join(',')}}` : '') + '>\n' +
    `{\n  w = DequantizeLinear ${attrs} (wq, ws${zp ? ', wz' : ''})\n  Y = MatMul (A, w)\n}\n`;
  const txt = path.join(work, 'm.onnxtxt'), onnx = path.join(work, 'm.onnx');
  fs.writeFileSync(txt, text);
  execFileSync(onnxc, ['convert', txt, onnx]);
  const n = batch * rows * K;
  const a = { type: 'float32', dims: [batch, rows, K], data: Float32Array.from({ length: n }, () => 2 * r() - 1) };
  let ref;
  try {
    const s = await ort.InferenceSession.create(onnx, { graphOptimizationLevel: 'basic', intraOpNumThreads: 1,
                                                       logSeverityLevel: 3 });
    ref = (await s.run({ A: new ort.Tensor('float32', a.data, a.dims) })).Y.data;
  } catch (e) {
    console.log(`${name}: onnxruntime cannot run it (${String(e.message).split('\n')[0].slice(0, 100)}): skipped`);
    skipped++;
    continue;
  }
  writeTensorProto(path.join(work, 'a.pb'), a);
  for (const threads of ['1', '2']) {
    execFileSync(onnxc, ['run', onnx, '-i', `A=${path.join(work, 'a.pb')}`, '-o', path.join(work, 'out'), '--threads', threads]);
    const got = readTensorProto(path.join(work, 'out', 'output_0.pb')).data;
    let big = 0, worst = 0;
    for (let i = 0; i < ref.length; i++) big = Math.max(big, Math.abs(ref[i]));
    for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref[i]));
    const ok = got.length === ref.length && worst <= 1e-5 * big;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}, ${threads} thread(s): max abs ${worst.toExponential(2)} (largest ${big.toFixed(3)})`);
    ok ? passed++ : failed++;
  }
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
