// ort_cases.mjs - runs the cases a generator writes (python3-onnx models with
// .npy inputs) through onnxruntime-node and `onnxc run`, and compares the
// outputs; also the cases where onnxc must refuse a model with a clear error.
//
//   node tests/oracle/ort_cases.mjs ONNXC_BIN GENERATOR.py [--only SUBSTRING]
//
// The generator (tests/contrib/gen_*.py) is run as `python3 GENERATOR OUTDIR`
// and writes OUTDIR/cases.json, a list of cases:
//   { "name": "...", "model": "a.onnx", "inputs": {"X": "a_X.npy", ...},
//     "rtol": 1e-4, "atol": 1e-5,          // |onnxc - ort| <= atol + rtol |ort|
//     "threads": [1, 2],                   // onnxc thread counts to run at
//     "ort": "compare" | "refuses" | "none",
//     "expected": {"Y": "a_Y.npy"},        // with "ort": "none": an independent
//                                          // reference (numpy), when onnxruntime
//                                          // refuses what onnxc accepts
//     "ort_level": "disabled" | "basic" | "all",
//     "error": ["node 'n0'", "num_heads"], // onnxc must fail, its message
//                                          // holding each of these
//     "ort_share": {"PK": "PK_in"}         // onnxruntime writes output PK over
//                                          // input PK_in's tensor
//   }
// "ort": "refuses" asserts that onnxruntime refuses the model too (an error
// case both reject); "none" runs no onnxruntime. Exits 77 (skip) when
// onnxruntime-node or the generator's python modules are absent.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SKIP, loadOrt, ortOutputs, readNpy, readTensorProto, runGenerator, values } from './ort_common.mjs';

const [onnxc, generator, ...rest] = process.argv.slice(2);
const only = rest[0] === '--only' ? rest[1] : null;
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const work = runGenerator(generator, 'onnxc-cases-');
const cases = JSON.parse(fs.readFileSync(path.join(work, 'cases.json'), 'utf8'));


function compare(name, got, ref, rtol, atol) {
  if (got.dims.length !== ref.dims.length || got.dims.some((d, i) => d !== ref.dims[i]))
    return `${name}: shape [${got.dims}] where onnxruntime gives [${ref.dims}]`;
  let worst = 0, at = -1;
  for (let i = 0; i < ref.data.length; i++) {
    const a = got.data[i], b = ref.data[i];
    if (Number.isNaN(b) ? Number.isNaN(a) : a === b) continue;
    const err = Math.abs(a - b), lim = atol + rtol * Math.abs(b);
    if (!(err <= lim) && (at < 0 || err - lim > worst)) { worst = err - lim; at = i; }
  }
  if (at >= 0)
    return `${name}[${at}]: ${got.data[at]} where the reference gives ${ref.data[at]} ` +
           `(tolerance ${atol} + ${rtol} x |ref|)`;
  return null;
}

let passed = 0, failed = 0;
const fail = (c, why) => { console.log(`FAIL ${c.name}: ${why}`); failed++; };
// First onnxruntime's outputs for every case; then every `onnxc run` (a case
// at each of its thread counts) through one `onnxc batch`, a child each of
// one onnxc process: a start of onnxc (its ~78 shared libraries) cost more
// than most of these runs, 0.25 s CPU under ASan (480 runs in
// ort_contrib_quant); then each case's outputs compared, as before.
const todo = [];
for (const c of cases) {
  if (only && !c.name.includes(only)) continue;
  const model = path.join(work, c.model);
  const inputs = Object.entries(c.inputs || {});
  const mode = c.ort || 'compare';
  let refs = null;
  if (mode !== 'none') {
    try {
      refs = await ortOutputs(ort, work, c);
      if (mode === 'refuses') { fail(c, 'onnxruntime runs it, the case says it refuses it'); continue; }
    } catch (e) {
      if (mode === 'compare') {
        fail(c, `onnxruntime cannot run it: ${String(e.message).split('\n')[0].slice(0, 200)}`);
        continue;
      }
    }
  } else if (c.expected) {
    refs = {};
    for (const [n, f] of Object.entries(c.expected)) {
      const t = readNpy(path.join(work, f));
      refs[n] = { dims: t.dims, data: values(t) };
    }
  }
  todo.push({ c, model, inputs, refs });
}

const lines = [];
for (const t of todo) {
  t.runs = [];
  for (const threads of t.c.threads || [1]) {
    const outDir = path.join(work, `out_${lines.length}`);
    const args = ['run', t.model, '-o', outDir, '--threads', String(threads)];
    for (const [n, f] of t.inputs) args.push('-i', `${n}=${path.join(work, f)}`);
    t.runs.push({ threads, outDir, k: lines.length });
    lines.push(args.join('\t'));
  }
}
const logs = path.join(work, 'batch');
fs.mkdirSync(logs);
fs.writeFileSync(path.join(work, 'batch.txt'), lines.join('\n') + '\n');
const b = spawnSync(onnxc, ['batch', path.join(work, 'batch.txt'), logs], { encoding: 'utf8' });
const status = new Map(); // line -> exit status (a number) or 'sigS'
for (const m of (b.stdout || '').matchAll(/^(\d+) (\S+)$/gm))
  status.set(Number(m[1]), /^\d+$/.test(m[2]) ? Number(m[2]) : m[2]);
if (lines.length && status.size === 0) {
  console.log(`onnxc batch failed (${b.status}): ${b.stdout}${b.stderr}`);
  process.exit(1);
}
const readLog = (k, ext) => {
  try { return fs.readFileSync(path.join(logs, `${k}.${ext}`), 'utf8'); } catch { return ''; }
};

for (const { c, refs, runs } of todo) {
  let ok = true;
  for (const { threads, outDir, k } of runs) {
    const st = status.has(k) ? status.get(k) : 'none (not run)';
    const out = readLog(k, 'out'), err = readLog(k, 'err');
    if (c.error) {
      const msg = `${out}${err}`;
      if (st !== 1) { fail(c, `onnxc exited ${st}, not 1:\n${msg}`); ok = false; break; }
      const missing = c.error.filter((s) => !msg.includes(s));
      if (missing.length) { fail(c, `the error does not say ${JSON.stringify(missing)}: ${msg.trim()}`); ok = false; break; }
      continue;
    }
    if (st !== 0) { fail(c, `onnxc failed (${st}): ${out}${err}`.trim()); ok = false; break; }
    const names = Object.keys(refs || {});
    // onnxc writes output k of the graph as output_k.pb; the generator lists
    // the graph's outputs in order in c.outputs
    for (const [i, n] of (c.outputs || names).entries()) {
      if (!refs || !refs[n]) continue;
      const got = readTensorProto(path.join(outDir, `output_${i}.pb`));
      const why = compare(`${n} (${threads} thread${threads > 1 ? 's' : ''})`, got, refs[n],
                          c.rtol ?? 1e-4, c.atol ?? 1e-5);
      if (why) { fail(c, why); ok = false; break; }
    }
    if (!ok) break;
  }
  if (ok) { console.log(`ok   ${c.name}`); passed++; }
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);
