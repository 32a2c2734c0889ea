// ort_compare.mjs - the four real models in ../shared/models, at their README
// input sizes, on seeded random inputs: onnxc's outputs against onnxruntime's
// (npm onnxruntime-node, CPU, one thread), rtol 1e-3 / atol 1e-4.
//
//   node tests/oracle/ort_compare.mjs ONNXC_BIN SHARED_DIR [SEED]
//
// Prints max abs/rel error per output and a closing line `N passed, N failed`.
// Exits 77 (skip) when onnxruntime-node is not installed (scripts/setup.sh puts
// it in build/ort-oracle; $ONNXC_ORT_DIR overrides) or no model is present.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, loadOrt, rng, models, makeInput, writeTensorProto, readTensorProto }
  from './ort_common.mjs';

const RTOL = 1e-3, ATOL = 1e-4;
const [onnxc, shared, seedArg] = process.argv.slice(2);
if (!onnxc || !shared) {
  console.error('usage: node ort_compare.mjs ONNXC_BIN SHARED_DIR [SEED]');
  process.exit(2);
}
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const seed = Number(seedArg ?? 7);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-ort-'));
let passed = 0, failed = 0, present = 0;
try {
  for (const m of models(shared)) {
    if (!fs.existsSync(m.file)) {
      console.log(`${m.name}: model not found (${m.file})`);
      continue;
    }
    present++;
    const dir = path.join(work, m.name);
    fs.mkdirSync(dir);
    const r = rng(seed);
    const ins = m.inputs.map((s) => makeInput(ort, s, r));
    const sess = await ort.InferenceSession.create(m.file, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1 });
    const feeds = {};
    const args = ['run', m.file];
    for (const x of ins) {
      feeds[x.name] = x.tensor;
      const f = path.join(dir, `in_${x.name}.pb`);
      writeTensorProto(f, x);
      args.push('-i', `${x.name}=${f}`);
    }
    const ref = await sess.run(feeds);
    const out = path.join(dir, 'out');
    args.push('-o', out, '--threads', '1');
    try {
      execFileSync(onnxc, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      console.log(`FAIL ${m.name}: onnxc run failed: ${String(e.stderr || e.message).trim()}`);
      failed++;
      continue;
    }
    let ok = true;
    sess.outputNames.forEach((oname, k) => {
      const want = ref[oname];
      const label = `${m.name}/${oname}`;
      let got;
      try {
        got = readTensorProto(path.join(out, `output_${k}.pb`));
      } catch (e) {
        console.log(`  ${label}: cannot read onnxc output ${k}: ${e.message}`);
        ok = false;
        return;
      }
      const wd = want.dims.map(Number);
      if (got.dims.length !== wd.length || got.dims.some((d, i) => d !== wd[i])) {
        console.log(`  ${label}: shape [${got.dims}] but onnxruntime gives [${wd}]`);
        ok = false;
        return;
      }
      const isFloat = want.type === 'float32' || want.type === 'float64';
      let maxAbs = 0, maxRel = 0, bad = 0, firstBad = -1;
      for (let i = 0; i < got.data.length; i++) {
        const a = got.data[i], b = Number(want.data[i]);
        const d = Math.abs(a - b);
        const within = isFloat ? d <= ATOL + RTOL * Math.abs(b) || (Number.isNaN(a) && Number.isNaN(b))
                               : a === b;
        if (!within) { if (firstBad < 0) firstBad = i; bad++; }
        if (d > maxAbs) maxAbs = d;
        if (b !== 0 && d / Math.abs(b) > maxRel) maxRel = d / Math.abs(b);
      }
      const n = got.data.length;
      let lo = Infinity, hi = -Infinity;
      for (const v of want.data) { const x = Number(v); if (x < lo) lo = x; if (x > hi) hi = x; }
      const line = `${label} [${wd}] ${want.type} (onnxruntime range ${lo.toPrecision(3)}..${hi.toPrecision(3)}): max abs ${maxAbs.toExponential(2)}, ` +
                   `max rel ${maxRel.toExponential(2)}`;
      if (bad) {
        console.log(`  ${line}: ${bad}/${n} elements off; first at ${firstBad}: onnxc ` +
                    `${got.data[firstBad]} vs onnxruntime ${want.data[firstBad]}`);
        ok = false;
      } else {
        console.log(`  ${line}: ok`);
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
