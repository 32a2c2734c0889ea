// ort_latency.mjs - single-thread latency of onnxruntime (npm onnxruntime-node,
// CPU) beside `onnxc bench`, on the four real models in ../shared/models at
// their README input sizes and on light_resnet50 (1x3x224x224), with the same
// seeded random inputs as tests/oracle/ort_compare.mjs.
//
//   node bench/ort_latency.mjs [ONNXC_BIN] [RUNS]
//
// onnxruntime-node comes from build/ort-oracle (scripts/setup.sh) or
// $ONNXC_ORT_DIR; $ONNXC_SHARED overrides ../shared. Exits 77 without it.
// On a shared machine, look at the min column and at the ratio, not the mean.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, repoRoot, loadOrt, rng, models, makeInput, writeTensorProto }
  from '../tests/oracle/ort_common.mjs';

const onnxc = process.argv[2] || path.join(repoRoot, 'build', 'onnxc');
const runs = Number(process.argv[3] || 20);
const shared = process.env.ONNXC_SHARED || path.join(repoRoot, '..', 'shared');
const ort = loadOrt();
if (!ort) process.exit(SKIP);

const list = models(shared);
list.push({ name: 'light_resnet50', file: path.join(shared, 'testdata', 'light', 'light_resnet50.onnx'),
            inputs: [['gpu_0/data_0', 'float32', [1, 3, 224, 224], (r) => 2 * r() - 1]] });

const fmt = (x) => (x < 10 ? x.toFixed(3) : x.toFixed(1)).padStart(8);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-ortbench-'));
console.log(`single-thread latency in ms, ${runs} runs after warm-up (${new Date().toISOString()}, ` +
            `onnxruntime-node ${ort.env.versions?.common ?? ''})`);
console.log(`${'model'.padEnd(20)} ${'ort min'.padStart(8)} ${'ort med'.padStart(8)} ` +
            `${'onnxc min'.padStart(9)} ${'onnxc med'.padStart(9)}  onnxc/ort (min)`);
try {
  for (const m of list) {
    if (!fs.existsSync(m.file)) {
      console.log(`${m.name.padEnd(20)} (model not found)`);
      continue;
    }
    const r = rng(7);
    const ins = m.inputs.map((s) => makeInput(ort, s, r));
    const sess = await ort.InferenceSession.create(m.file, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      logSeverityLevel: 3 });
    const feeds = {};
    const args = ['bench', m.file, '--threads', '1', '--runs', String(runs), '--warmup', '2'];
    for (const x of ins) {
      feeds[x.name] = x.tensor;
      const f = path.join(work, `${m.name}_${x.name.replace(/\W/g, '_')}.pb`);
      writeTensorProto(f, x);
      args.push('-i', `${x.name}=${f}`);
    }
    for (let i = 0; i < 2; i++) await sess.run(feeds);
    const t = [];
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      await sess.run(feeds);
      t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await sess.release();
    t.sort((a, b) => a - b);
    const ortMin = t[0], ortMed = t[Math.floor(runs / 2)];
    let cMin = NaN, cMed = NaN, note = '';
    try {
      const out = execFileSync(onnxc, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const mm = /median ([\d.]+) ms, min ([\d.]+) ms/.exec(out);
      if (mm) { cMed = Number(mm[1]); cMin = Number(mm[2]); } else note = 'cannot parse onnxc bench output';
    } catch (e) {
      note = `onnxc bench failed: ${String(e.stderr || e.message).trim()}`;
    }
    console.log(`${m.name.padEnd(20)} ${fmt(ortMin)} ${fmt(ortMed)} ${fmt(cMin)} ${' ' + fmt(cMed)}  ` +
                `${(cMin / ortMin).toFixed(2)}x ${note}`);
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
