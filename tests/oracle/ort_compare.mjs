// ort_compare.mjs - the four real models in ../shared/models, at their README
// input sizes, on seeded random inputs: onnxc's outputs against onnxruntime's
// (npm onnxruntime-node, CPU, one thread), rtol 1e-3 / atol 1e-4.
//
//   node tests/oracle/ort_compare.mjs ONNXC_BIN SHARED_DIR [SEED] [--probe MODEL] [--threads N]
//
// onnxc runs with --threads N (default 1); onnxruntime always with one thread.
// Prints max abs/rel error per output and a closing line `N passed, N failed`.
// --probe MODEL (a name printed by the normal run) is for diagnosis: every
// output of every node of that model's main graph becomes a graph output, each
// is compared, and the first node in graph order whose output disagrees is named.
// There an element may also pass against the tensor's scale (|a-b| <= atol +
// rtol * max|b|): intermediate values of hundreds to thousands in magnitude carry
// summation-order noise that the elementwise test flags on values near zero.
// Exits 77 (skip) when onnxruntime-node is not installed (scripts/setup.sh puts
// it in build/ort-oracle; $ONNXC_ORT_DIR overrides) or no model is present.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, loadOrt, rng, models, makeInput, writeTensorProto, readTensorProto,
         graphNodes, withExtraOutputs } from './ort_common.mjs';

const RTOL = 1e-3, ATOL = 1e-4;
const argv = process.argv.slice(2);
let probe = null;
const pi = argv.indexOf('--probe');
if (pi >= 0) probe = argv.splice(pi, 2)[1];
let threads = '1';
const ti = argv.indexOf('--threads');
if (ti >= 0) threads = argv.splice(ti, 2)[1];
const [onnxc, shared, seedArg] = argv;
if (!onnxc || !shared || (pi >= 0 && !probe) || !/^[1-9]\d*$/.test(threads ?? '')) {
  console.error('usage: node ort_compare.mjs ONNXC_BIN SHARED_DIR [SEED] [--probe MODEL] [--threads N]');
  process.exit(2);
}
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const seed = Number(seedArg ?? 7);

// Compares onnxc's output file with onnxruntime's tensor; prints one line, returns ok.
function compare(label, want, file, quiet, scaled) {
  let got;
  try {
    got = readTensorProto(file);
  } catch (e) {
    console.log(`  ${label}: cannot read onnxc output: ${e.message}`);
    return false;
  }
  const wd = want.dims.map(Number);
  if (got.dims.length !== wd.length || got.dims.some((d, i) => d !== wd[i])) {
    console.log(`  ${label}: shape [${got.dims}] but onnxruntime gives [${wd}]`);
    return false;
  }
  const isFloat = want.type === 'float32' || want.type === 'float64';
  let maxAbs = 0, maxRel = 0, bad = 0, firstBad = -1, lo = Infinity, hi = -Infinity, scale = 0;
  if (scaled) for (const v of want.data) scale = Math.max(scale, Math.abs(Number(v)));
  for (let i = 0; i < got.data.length; i++) {
    const a = got.data[i], b = Number(want.data[i]);
    const d = Math.abs(a - b);
    const within = isFloat ? d <= ATOL + RTOL * Math.max(Math.abs(b), scale) ||
                               (Number.isNaN(a) && Number.isNaN(b))
                           : a === b;
    if (!within) { if (firstBad < 0) firstBad = i; bad++; }
    if (d > maxAbs) maxAbs = d;
    if (b !== 0 && d / Math.abs(b) > maxRel) maxRel = d / Math.abs(b);
    if (b < lo) lo = b;
    if (b > hi) hi = b;
  }
  const line = `${label} [${wd}] ${want.type} (onnxruntime range ${lo.toPrecision(3)}..` +
               `${hi.toPrecision(3)}): max abs ${maxAbs.toExponential(2)}, max rel ${maxRel.toExponential(2)}`;
  if (bad) {
    console.log(`  ${line}: ${bad}/${got.data.length} elements off; first at ${firstBad}: onnxc ` +
                `${got.data[firstBad]} vs onnxruntime ${want.data[firstBad]}`);
    return false;
  }
  if (!quiet) console.log(`  ${line}: ok`);
  return true;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-ort-'));
let passed = 0, failed = 0, present = 0;
try {
  for (const m of models(shared)) {
    if (!fs.existsSync(m.file)) {
      console.log(`${m.name}: model not found (${m.file})`);
      continue;
    }
    if (probe && m.name !== probe) continue;
    present++;
    const dir = path.join(work, m.name);
    fs.mkdirSync(dir);
    let file = m.file, probeNodes = null;
    if (probe) { // every node output of the main graph becomes a graph output
      const bytes = fs.readFileSync(m.file);
      probeNodes = new Map();
      for (const n of graphNodes(bytes))
        for (const o of n.outputs) if (o) probeNodes.set(o, `${n.op} '${n.name}'`);
      file = path.join(dir, 'probe.onnx');
      fs.writeFileSync(file, withExtraOutputs(bytes, [...probeNodes.keys()]));
      console.log(`${m.name}: probing ${probeNodes.size} node outputs`);
    }
    const r = rng(seed);
    const ins = m.inputs.map((s) => makeInput(ort, s, r));
    const sess = await ort.InferenceSession.create(file, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      logSeverityLevel: 3 });
    const feeds = {};
    const args = ['run', file];
    for (const x of ins) {
      feeds[x.name] = x.tensor;
      const f = path.join(dir, `in_${x.name}.pb`);
      writeTensorProto(f, x);
      args.push('-i', `${x.name}=${f}`);
    }
    const ref = await sess.run(feeds);
    const out = path.join(dir, 'out');
    args.push('-o', out, '--threads', threads);
    try {
      execFileSync(onnxc, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      console.log(`FAIL ${m.name}: onnxc run failed: ${String(e.stderr || e.message).trim()}`);
      failed++;
      continue;
    }
    let ok = true;
    sess.outputNames.forEach((oname, k) => {
      const nodeOf = probeNodes ? probeNodes.get(oname) : null;
      const label = nodeOf ? `${m.name}/${nodeOf} -> ${oname}` : `${m.name}/${oname}`;
      if (!compare(label, ref[oname], path.join(out, `output_${k}.pb`), !!probeNodes,
                   !!probeNodes)) {
        if (ok && probeNodes) console.log(`  first disagreement in graph order: ${label}`);
        ok = false;
      }
    });
    if (ok) { passed++; console.log(`ok ${m.name}`); }
    else { failed++; console.log(`FAIL ${m.name}`); }
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
if (!present) {
  console.log('no model found');
  process.exit(SKIP);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
