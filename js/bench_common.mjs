// bench_common.mjs - what js/bench.mjs (onnxc's wasm) and js/ortweb_bench.mjs
// (onnxruntime-web) share, so that the two measure the same thing as
// `onnxc bench`: the same options, the same made-up inputs (floats i/n over
// the declared dims, unknown dims 1; other types zeros), the same
// `run: mean ..., median ..., min ..., max ...` line.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export const USAGE = 'MODEL [--threads N] [--runs N] [--warmup N] [-i NAME=FILE.npy]... [--input NAME=D1,D2,...]... [--profile]';

export function parseArgs(argv, prog) {
  const o = { threads: 1, runs: 10, warmup: 2, files: {}, dims: {}, model: null, profile: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--threads') o.threads = Number(val());
    else if (a === '--runs') o.runs = Number(val());
    else if (a === '--warmup') o.warmup = Number(val());
    else if (a === '--profile') o.profile = true;
    else if (a === '-i' || a === '--input') {
      const v = val();
      const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`bad ${a} '${v}' (expected NAME=...)`);
      const name = v.slice(0, eq), rest = v.slice(eq + 1);
      if (a === '-i') o.files[name] = rest;
      else o.dims[name] = rest === '' ? [] : rest.split(',').map(Number);
    } else if (a === '-h' || a === '--help') {
      console.log(`usage: node ${prog} ${USAGE}`);
      process.exit(0);
    } else if (a.startsWith('-')) throw new Error(`unknown option '${a}'`);
    else o.model = a;
  }
  if (!o.model || !(o.runs >= 1) || !(o.threads >= 1)) throw new Error(`usage: node ${prog} ${USAGE}`);
  return o;
}

const NPY_TYPES = {
  '<f4': 'float32', '<f8': 'float64', '|u1': 'uint8', '|i1': 'int8', '<u2': 'uint16', '<i2': 'int16',
  '<i4': 'int32', '<i8': 'int64', '<u4': 'uint32', '<u8': 'uint64', '|b1': 'bool', '<f2': 'float16',
};
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, uint32: Uint32Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};

// A .npy file (C order, little-endian) -> {type, data, dims}.
export function readNpy(path) {
  const b = readFileSync(path);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const type = NPY_TYPES[descr];
  if (!type || fortran || shape === undefined) throw new Error(`${path}: unsupported .npy (${descr}, fortran ${fortran})`);
  const dims = shape.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const cls = ARRAYS[type];
  const body = b.subarray(hstart + hlen);
  const copy = new Uint8Array(body); // aligned
  const n = dims.reduce((x, y) => x * y, 1);
  return { type, dims, data: new cls(copy.buffer, 0, n) };
}

// The input tensors: files given, else made up from the declared metadata
// (meta: [{name, type, dims}]).
export function makeInputs(o, meta, Tensor) {
  const feeds = {};
  for (const m of meta) {
    if (o.files[m.name]) {
      const a = readNpy(o.files[m.name]);
      feeds[m.name] = new Tensor(a.type, a.data, a.dims);
      continue;
    }
    const dims = o.dims[m.name] ?? (m.dims ?? []).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const n = dims.reduce((x, y) => x * y, 1);
    const cls = ARRAYS[m.type];
    if (!cls) throw new Error(`input '${m.name}': cannot make up a ${m.type} tensor; pass -i`);
    const data = new cls(n);
    if (m.type === 'float32') for (let i = 0; i < n; i++) data[i] = i / n;
    feeds[m.name] = new Tensor(m.type, data, dims);
  }
  return feeds;
}

// Times warmup + runs calls of run() and prints the lines of `onnxc bench`;
// warmed() (when given) is called once the warm-up runs are done. A `cpu:`
// line follows with the process's CPU time per run: on a machine shared
// with other jobs the wall clock counts their time slices too, the CPU time
// not (with threads it is summed over them, so it is no latency there).
export async function timeRuns(o, loadMs, sessionMs, threads, run, warmed) {
  const times = [], cpu = [];
  for (let r = 0; r < o.warmup + o.runs; r++) {
    if (r === o.warmup && warmed) warmed();
    const u = process.cpuUsage();
    const a = performance.now();
    await run();
    const b = performance.now();
    const du = process.cpuUsage(u);
    if (r >= o.warmup) {
      times.push(b - a);
      cpu.push((du.user + du.system) / 1000);
    }
  }
  times.sort((x, y) => x - y);
  cpu.sort((x, y) => x - y);
  const mean = times.reduce((x, y) => x + y, 0) / times.length;
  console.log(`load ${loadMs.toFixed(2)} ms, session ${sessionMs.toFixed(2)} ms`);
  console.log(`run: mean ${mean.toFixed(3)} ms, median ${times[times.length >> 1].toFixed(3)} ms, ` +
    `min ${times[0].toFixed(3)} ms, max ${times[times.length - 1].toFixed(3)} ms ` +
    `(${o.runs} runs, ${threads} threads)`);
  console.log(`cpu: median ${cpu[cpu.length >> 1].toFixed(3)} ms, min ${cpu[0].toFixed(3)} ms`);
  return times;
}
