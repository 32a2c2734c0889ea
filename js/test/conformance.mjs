// conformance.mjs - ONNX's conformance cases (a folder with model.onnx and
// test_data_set_N/input_K.pb, output_K.pb) through the JavaScript package and
// the wasm module, as `onnxc test` runs them natively: inputs bound to the
// session's inputs in order, every output compared with rtol 1e-3, atol 1e-7
// (NaN equals NaN), element type and shape exactly.
//
//   node js/test/conformance.mjs [--expected FILE]... [--threads N] [--match RE] DIR...
// DIR is a case folder or a folder of cases (../shared/testdata/node);
// --threads: sessions of N threads (the pthreads build when N > 1); --match:
// only the cases whose folder name matches RE. Prints
// a line per failing case, then "N passed, N failed, N skipped"; exits 1 when
// a case fails that FILE ("suite/case<TAB>reason" lines) does not list.
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InferenceSession } from '../src/index.mjs';
import { resetModules } from '../src/loader.mjs';
import { decodeTensorProto } from './tensorproto.mjs';

const RTOL = 1e-3;
const ATOL = 1e-7;

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function bf16ToFloat(h) {
  const f = new Float32Array(new Uint32Array([h << 16]).buffer);
  return f[0];
}

const FLOATING = { float32: (x) => x, float64: (x) => x, float16: halfToFloat, bfloat16: bf16ToFloat };

// '' when actual matches expected, else the first difference.
export function compareTensors(expected, actual) {
  if (actual === null || actual === undefined) return 'no value';
  if (Array.isArray(actual)) return 'a sequence where a tensor was expected';
  if (expected.type !== actual.type) return `type ${actual.type}, expected ${expected.type}`;
  if (expected.dims.join() !== actual.dims.join()) return `shape [${actual.dims}], expected [${expected.dims}]`;
  const conv = FLOATING[expected.type];
  for (let i = 0; i < expected.size; i++) {
    const e = expected.data[i], a = actual.data[i];
    if (conv) {
      const x = conv(e), y = conv(a);
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      if (x === y) continue;
      if (!(Math.abs(x - y) <= ATOL + RTOL * Math.abs(x))) return `element ${i}: ${y}, expected ${x}`;
    } else if (e !== a) {
      return `element ${i}: ${a}, expected ${e}`;
    }
  }
  return '';
}

async function isFile(p) {
  try { return (await stat(p)).isFile(); } catch { return false; }
}

// The case folders under the given paths, sorted.
export async function findCases(paths) {
  const cases = [];
  for (const p of paths) {
    if (await isFile(join(p, 'model.onnx'))) { cases.push(p); continue; }
    for (const n of (await readdir(p)).sort()) {
      if (await isFile(join(p, n, 'model.onnx'))) cases.push(join(p, n));
    }
  }
  return cases;
}

// {status: 'pass' | 'fail' | 'skip', reason}. skip: a case whose inputs or
// outputs are not tensors (sequences, maps, optionals), which the Tensor
// API (as onnxruntime-web's) does not carry.
export async function runCase(dir, threads = 1) {
  let session;
  try {
    session = await InferenceSession.create(join(dir, 'model.onnx'), { threads });
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) resetModules();
    return { status: 'fail', reason: e.message };
  }
  try {
    if (session.inputMetadata.some((m) => !m.isTensor) || session.outputMetadata.some((m) => !m.isTensor)) {
      return { status: 'skip', reason: 'a sequence, map or optional input or output' };
    }
    const sets = (await readdir(dir)).filter((n) => n.startsWith('test_data_set_')).sort();
    for (const set of sets) {
      const sd = join(dir, set);
      const files = await readdir(sd);
      const feeds = {};
      const nIn = files.filter((f) => /^input_\d+\.pb$/.test(f)).length;
      for (let k = 0; k < nIn; k++) {
        if (k >= session.inputNames.length) return { status: 'fail', reason: `${set}: more inputs than the session has` };
        feeds[session.inputNames[k]] = decodeTensorProto(await readFile(join(sd, `input_${k}.pb`)));
      }
      const nOut = files.filter((f) => /^output_\d+\.pb$/.test(f)).length;
      const wanted = session.outputNames.slice(0, nOut);
      const expected = [];
      for (let k = 0; k < nOut; k++) {
        try {
          expected.push(decodeTensorProto(await readFile(join(sd, `output_${k}.pb`))));
        } catch (e) {
          return { status: 'skip', reason: `output ${k}: ${e.message} (non-tensor output)` };
        }
      }
      const got = await session.run(feeds, wanted);
      for (let k = 0; k < nOut; k++) {
        const why = compareTensors(expected[k], got[wanted[k]]);
        if (why) return { status: 'fail', reason: `${set}: output '${wanted[k]}': ${why}` };
      }
    }
    return { status: 'pass' };
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) resetModules();
    return { status: 'fail', reason: e.message.split('\n')[0] };
  } finally {
    await session.release().catch(() => {});
  }
}

// "suite/case" -> reason, from an expected-failures file.
export async function readExpected(file) {
  const m = new Map();
  if (!file) return m;
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [name, reason = ''] = line.split('\t');
    m.set(name, reason);
  }
  return m;
}

// Runs the cases; returns {passed, failed, skipped, unexpected: [..], lines: [..]}.
// opts: threads (per session), match (a RegExp on the case folder's name).
export async function runAll(paths, expected = new Map(), log = () => {}, opts = {}) {
  const r = { passed: 0, failed: 0, skipped: 0, unexpected: [], fixed: [] };
  for (const dir of await findCases(paths)) {
    if (opts.match && !opts.match.test(basename(dir))) continue;
    const name = `${basename(dirname(dir))}/${basename(dir)}`;
    const res = await runCase(dir, opts.threads ?? 1);
    if (res.status === 'pass') {
      r.passed++;
      if (expected.has(name)) r.fixed.push(name);
    } else if (res.status === 'skip') {
      r.skipped++;
      log(`SKIP ${name}: ${res.reason}`);
    } else {
      r.failed++;
      log(`FAIL ${name}: ${res.reason}`);
      if (!expected.has(name)) r.unexpected.push(`${name}: ${res.reason}`);
    }
  }
  return r;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const expected = new Map();
  const paths = [];
  const opts = {};
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--expected') for (const [k, v] of await readExpected(args[++i])) expected.set(k, v);
    else if (args[i] === '--threads') opts.threads = Math.max(1, Number(args[++i]) | 0);
    else if (args[i] === '--match') opts.match = new RegExp(args[++i]);
    else paths.push(args[i]);
  }
  if (!paths.length) {
    console.error('usage: node js/test/conformance.mjs [--expected FILE] [--threads N] [--match RE] DIR...');
    process.exit(2);
  }
  const t0 = Date.now();
  const r = await runAll(paths, expected, (l) => console.log(l), opts);
  console.log(`${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  for (const u of r.unexpected) console.log(`unexpected: ${u}`);
  process.exit(r.unexpected.length ? 1 : 0);
}
