// lowbit_bench.mjs - a weight-only quantized decoder step (bench/make_int4_decoder.py)
// in onnxc beside onnxruntime (npm onnxruntime-node, CPU), and the rate at which
// onnxc's fused kernels read the weights against this machine's memory bandwidth.
//
//   node bench/lowbit_bench.mjs ONNXC_BIN MODEL [--threads N] [--runs N] [--rounds N] [--int8]
//
// --int8: onnxc runs with --low-bit-int8 (activations quantized to int8 per block, as
// onnxruntime's default path does).
// MODEL: e.g. from `/usr/bin/python3 bench/make_int4_decoder.py /tmp/gpt2_int4_step.onnx`
// (the GPT-2-small geometry: one token over 127 cached positions). Prints:
// - latency (min and median over rounds of `runs` runs) of onnxruntime with its
//   default optimizations (which turn DequantizeLinear -> MatMul into MatMulNBits,
//   and by default quantize the activations to int8) and of `onnxc bench`;
// - the largest difference of onnxc's logits from onnxruntime's at its basic
//   optimization level (DequantizeLinear then MatMul in float: the specification's
//   arithmetic) and from onnxruntime's default path;
// - the weight bytes per token (every initializer a DequantizeLinear reads), the
//   time onnxc's MatMulDQFused nodes take per run (`onnxc bench --profile`), the
//   GB/s that makes, and the read bandwidth of the machine (build/tests/onnxc_membw)
//   at the same thread count.
// Needs onnxruntime-node (build/ort-oracle from scripts/setup.sh, or $ONNXC_ORT_DIR).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, repoRoot, loadOrt, rng, writeTensorProto, readTensorProto, dequantizedBytes }
  from '../tests/oracle/ort_common.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args.splice(i, 2)[1]) : dflt;
};
const threads = opt('--threads', 1), runs = opt('--runs', 20), rounds = opt('--rounds', 2);
const int8 = args.indexOf('--int8') >= 0 ? args.splice(args.indexOf('--int8'), 1) && ['--low-bit-int8'] : [];
const [onnxc, model] = args;
if (!onnxc || !model) {
  console.log('usage: node bench/lowbit_bench.mjs ONNXC_BIN MODEL [--threads N] [--runs N] [--rounds N]');
  process.exit(2);
}
const ort = loadOrt();
if (!ort) process.exit(SKIP);

// the decoder's inputs: one token at position 127, 127 cached positions
const r = rng(17);
const inputs = [['input_ids', 'int64', [1, 1], () => 464n], ['position_ids', 'int64', [1, 1], () => 127n],
                ['attention_mask', 'int64', [1, 128], () => 1n]];
const session0 = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
for (const n of session0.inputNames)
  if (n.startsWith('past_')) inputs.push([n, 'float32', [1, 12, 127, 64], () => (r() - 0.5)]);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-lowbit-'));
const feeds = {}, files = [];
for (const [name, type, dims, gen] of inputs) {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = type === 'int64' ? BigInt64Array.from({ length: n }, gen) : Float32Array.from({ length: n }, gen);
  feeds[name] = new ort.Tensor(type, data, dims);
  const f = path.join(work, `${name}.pb`);
  writeTensorProto(f, { type, dims, data });
  files.push('-i', `${name}=${f}`);
}

async function ortSession(level) {
  return ort.InferenceSession.create(model, { graphOptimizationLevel: level, intraOpNumThreads: threads,
                                              interOpNumThreads: 1, logSeverityLevel: 3 });
}
const exact = await ortSession('basic'), fast = await ortSession('all');
const exactOut = (await exact.run(feeds)).logits.data, fastOut = (await fast.run(feeds)).logits.data;

execFileSync(onnxc, ['run', model, ...files, '-o', path.join(work, 'ox'), '--threads', String(threads), ...int8]);
const ours = readTensorProto(path.join(work, 'ox', 'output_0.pb')).data;
const maxDiff = (a, b) => { let m = 0, big = 0;
  for (let i = 0; i < a.length; i++) { m = Math.max(m, Math.abs(a[i] - b[i])); big = Math.max(big, Math.abs(b[i])); }
  return [m, big]; };
const [dExact, bigExact] = maxDiff(ours, exactOut), [dFast] = maxDiff(ours, fastOut), [dOrt] = maxDiff(fastOut, exactOut);

let ortMin = Infinity, ortMed = Infinity, oxMin = Infinity, oxMed = Infinity, dqMs = Infinity;
for (let k = 0; k < rounds; k++) {
  const t = [];
  for (let i = 0; i < runs + 2; i++) { const a = process.hrtime.bigint(); await fast.run(feeds); t.push(Number(process.hrtime.bigint() - a) / 1e6); }
  t.splice(0, 2); t.sort((a, b) => a - b);
  ortMin = Math.min(ortMin, t[0]); ortMed = Math.min(ortMed, t[t.length >> 1]);
  const out = execFileSync(onnxc, ['bench', model, ...files, '--threads', String(threads), '--runs', String(runs),
                                   '--warmup', '2', ...int8]).toString();
  const m = out.match(/median ([\d.]+) ms, min ([\d.]+) ms/);
  if (m) { oxMed = Math.min(oxMed, Number(m[1])); oxMin = Math.min(oxMin, Number(m[2])); }
  const prof = execFileSync(onnxc, ['bench', model, ...files, '--threads', String(threads), '--runs', String(runs),
                                    '--profile', ...int8]).toString();
  const p = prof.match(/^MatMulDQFused\s+\d+\s+\d+\s+([\d.]+)/m);
  if (p) dqMs = Math.min(dqMs, Number(p[1]));
}
const bytes = dequantizedBytes(fs.readFileSync(model));
let bw = NaN;
const membw = path.join(path.dirname(onnxc), 'tests', 'onnxc_membw');
if (fs.existsSync(membw)) {
  const o = execFileSync(membw, ['1024', String(threads)]).toString().match(/: ([\d.]+) GB\/s/);
  if (o) bw = Number(o[1]);
}
const f3 = (x) => x.toFixed(3);
console.log(`${path.basename(model)}${int8.length ? ' (onnxc --low-bit-int8)' : ''}, ${threads} thread(s), ${runs} runs x ${rounds} rounds (onnxruntime-node ${ort.env.versions?.common ?? ''})`);
console.log(`latency ms      onnxruntime min ${f3(ortMin)} median ${f3(ortMed)}   onnxc min ${f3(oxMin)} median ${f3(oxMed)}   onnxc/ort ${(oxMin / ortMin).toFixed(2)}x (min) ${(oxMed / ortMed).toFixed(2)}x (median)`);
console.log(`logits          onnxc vs onnxruntime basic (float DequantizeLinear + MatMul): max abs ${dExact.toExponential(2)} (largest logit ${bigExact.toFixed(3)}); vs onnxruntime default: ${dFast.toExponential(2)}; onnxruntime default vs basic: ${dOrt.toExponential(2)}`);
console.log(`weights         ${(bytes / 1e6).toFixed(1)} MB per token; MatMulDQFused ${f3(dqMs)} ms per run = ${(bytes / dqMs / 1e6).toFixed(1)} GB/s; machine read bandwidth (${threads} thread(s)) ${bw.toFixed(1)} GB/s: ${(100 * bytes / dqMs / 1e6 / bw).toFixed(0)}%`);
fs.rmSync(work, { recursive: true, force: true });
