// bench_set.mjs - onnxc's wasm build against onnxruntime-web on the bench set
// (../shared/bench/bench.json), in node, side by side:
//   node js/bench_set.mjs [--threads N] [--runs N] [--rounds N] [--cpu 1] [MODEL_NAME...]
// Each model's inputs are made from its bench.json spec (seeded), written as
// .npy files and given to js/bench.mjs and js/ortweb_bench.mjs, which run in
// turn, --rounds times (interleaved: a shared machine's load then falls on
// both alike); the table keeps each one's smallest min and median. Models
// missing here (the generated ones before sidebyside.py made them) are listed
// as such. --cpu 1 compares the process's CPU time per run instead of the
// wall clock (one thread only: on a loaded shared machine the wall clock
// counts the other jobs' time slices).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// ../shared beside the checkout (or beside the folder of worktrees)
const shared = [process.env.ONNXC_SHARED, join(here, '..', '..', 'shared'), join(here, '..', '..', '..', 'shared')]
  .find((d) => d && existsSync(join(d, 'bench')));
const roots = {
  shared: join(shared, 'models'),
  testdata: join(shared, 'testdata'),
  generated: process.env.ONNXC_BENCH_MODELS ?? join(tmpdir(), 'onnxc-bench-models'),
};

const args = process.argv.slice(2);
const opt = { threads: '1', runs: '10', rounds: '3', cpu: '0' };
const names = [];
for (let i = 0; i < args.length; i++) {
  if (args[i].startsWith('--')) opt[args[i].slice(2)] = args[++i];
  else names.push(args[i]);
}

// seeded numbers: xorshift32, normals by Box-Muller
let seed = 12345;
function rand() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return (seed + 0.5) / 4294967296;
}
const randn = () => Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());

const NPY = { float32: ['<f4', Float32Array], int64: ['<i8', BigInt64Array], int32: ['<i4', Int32Array] };

function makeNpy(path, dtype, dims, gen) {
  const [descr, cls] = NPY[dtype] ?? [];
  if (!cls) throw new Error(`input type ${dtype}`);
  const n = dims.reduce((a, b) => a * b, 1);
  const a = new cls(n);
  const big = cls === BigInt64Array;
  for (let i = 0; i < n; i++) {
    let v;
    if (gen === undefined || gen === null || gen === 'randn') v = randn() * 0.5;
    else if (gen === 'ones') v = 1;
    else if (gen === 'zeros') v = 0;
    else if (gen === 'arange') v = i % dims[dims.length - 1];
    else if (Array.isArray(gen) && gen[0] === 'randint') v = gen[1] + Math.floor(rand() * (gen[2] - gen[1]));
    else if (Array.isArray(gen) && gen[0] === 'fill') v = gen[1];
    else if (typeof gen === 'number') v = gen;
    else throw new Error(`input spec ${JSON.stringify(gen)}`);
    a[i] = big ? BigInt(Math.trunc(v)) : v;
  }
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  while ((10 + header.length + 1) % 64) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(a.buffer)]));
}

function runBench(script, model, files) {
  try {
    const out = execFileSync('node', [join(here, script), model, '--threads', opt.threads, '--runs', opt.runs,
      '--warmup', '2', ...files], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 900000 });
    const m = opt.cpu === '1' ? /cpu: (median) ([\d.]+) ms, min ([\d.]+) ms/.exec(out)
      : /run: mean ([\d.]+) ms, median ([\d.]+) ms, min ([\d.]+) ms/.exec(out);
    return m ? { median: Number(m[2]), min: Number(m[3]) } : { error: 'no run line' };
  } catch (e) {
    return { error: (e.stderr?.toString() || e.message).trim().split('\n').pop().slice(0, 100) };
  }
}

const spec = JSON.parse(readFileSync(join(shared, 'bench', 'bench.json'), 'utf8'));
const fmt = (x) => (x === undefined ? '-' : x.toFixed(2));
if (opt.cpu === '1' && opt.threads !== '1') throw new Error('--cpu 1 needs --threads 1 (CPU time is summed over threads)');
console.log(`threads ${opt.threads}, ${opt.runs} runs x ${opt.rounds} rounds (interleaved)${opt.cpu === '1' ? ', CPU time' : ''}, ${new Date().toISOString()}`);
console.log(`${'model'.padEnd(18)} ${'ortweb min'.padStart(10)} ${'ortweb med'.padStart(10)} ${'onnxc min'.padStart(10)} ${'onnxc med'.padStart(10)} ${'min x'.padStart(6)} ${'med x'.padStart(6)}`);
for (const [name, m] of Object.entries(spec)) {
  if (names.length && !names.includes(name)) continue;
  const model = join(roots[m.root ?? 'shared'], m.file);
  if (!existsSync(model)) {
    console.log(`${name.padEnd(18)} (missing ${model})`);
    continue;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'onnxc-wasm-bench-'));
  try {
    const files = [];
    Object.entries(m.inputs).forEach(([inp, v], k) => {
      const f = join(tmp, `i${k}.npy`);
      makeNpy(f, v[0], v[1], v[2]);
      files.push('-i', `${inp}=${f}`);
    });
    const best = { ort: {}, ox: {} };
    let err = '';
    for (let r = 0; r < Number(opt.rounds); r++) {
      for (const [key, script] of [['ort', 'ortweb_bench.mjs'], ['ox', 'bench.mjs']]) {
        const res = runBench(script, model, files);
        if (res.error) { err ||= `${key}: ${res.error}`; continue; }
        best[key].min = Math.min(best[key].min ?? Infinity, res.min);
        best[key].median = Math.min(best[key].median ?? Infinity, res.median);
      }
      if (err) break;
    }
    const rx = (a, b) => (a && b ? (a / b).toFixed(2) : '-');
    console.log(`${name.padEnd(18)} ${fmt(best.ort.min).padStart(10)} ${fmt(best.ort.median).padStart(10)} ` +
      `${fmt(best.ox.min).padStart(10)} ${fmt(best.ox.median).padStart(10)} ${rx(best.ox.min, best.ort.min).padStart(6)} ` +
      `${rx(best.ox.median, best.ort.median).padStart(6)}${err ? `  ${err}` : ''}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
