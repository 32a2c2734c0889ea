// ort_common.mjs - helpers shared by tests/oracle/ort_compare.mjs and
// bench/ort_latency.mjs: locating onnxruntime-node (installed by
// scripts/setup.sh into build/ort-oracle with --ignore-scripts), the four real
// models with their README input sizes, seeded random inputs, and a minimal
// TensorProto writer/reader (dims, data_type, raw_data and the typed *_data
// fields), enough for `onnxc run` files.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SKIP = 77;
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Loads onnxruntime-node from $ONNXC_ORT_DIR or <repo>/build/ort-oracle;
// returns null when it is absent or does not load.
export function loadOrt() {
  const dir = process.env.ONNXC_ORT_DIR || path.join(repoRoot, 'build', 'ort-oracle');
  try {
    const req = createRequire(path.join(dir, 'package.json'));
    return req('onnxruntime-node');
  } catch (e) {
    console.log(`onnxruntime-node not available in ${dir}: ${String(e.message).split('\n')[0]}`);
    return null;
  }
}

// The python3 that has python3-onnx (Debian's, in /usr/bin).
export const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

// Runs a Python generator of test models (`python3 GENERATOR DIR`) into a
// fresh temporary folder and returns it; exits 77 when the generator says
// it cannot run (no onnx or numpy), 1 when it fails.
export function runGenerator(generator, prefix) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const gen = spawnSync(python, [generator, work], { encoding: 'utf8' });
  if (gen.status === SKIP) {
    console.log(`generator skipped: ${gen.stdout}${gen.stderr}`);
    process.exit(SKIP);
  }
  if (gen.status !== 0) {
    console.log(`generator failed (${gen.status}):\n${gen.stdout}${gen.stderr}`);
    process.exit(1);
  }
  return work;
}

// mulberry32: small seeded generator, uniform in [0,1)
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A seeded synthetic "text page" for the detector: white background with rows
// of dark glyph-like blocks, normalised with PaddleOCR's mean/std, so that the
// detector's probability map spans 0..1 (uniform noise gives a map near 0,
// which would make atol 1e-4 a vacuous check).
function textPage(r, dims) {
  const [, C, H, W] = dims;
  const img = new Float32Array(C * H * W).fill(1);
  for (let line = 0; line < 14; line++) {
    const y0 = 20 + line * 44 + Math.floor(r() * 8), h = 18 + Math.floor(r() * 10);
    const xend = 300 + Math.floor(r() * 320);
    for (let x = 20 + Math.floor(r() * 60); x < xend;) {
      const w = 4 + Math.floor(r() * 12);
      for (let y = y0; y < y0 + h; y++)
        for (let xx = x; xx < Math.min(x + w, W); xx++)
          if (r() < 0.8) for (let c = 0; c < C; c++) img[(c * H + y) * W + xx] = 0.1 * r();
      x += w + 2 + Math.floor(r() * 6);
    }
  }
  const mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
  for (let c = 0; c < C; c++)
    for (let i = c * H * W; i < (c + 1) * H * W; i++) img[i] = (img[i] - mean[c]) / std[c];
  return img;
}

// Input specs: [name, type, dims, fill]; fill(r) gives one value, or with
// fill.whole set, fill(r, dims) gives the whole array.
export function models(shared) {
  const m = path.join(shared, 'models');
  const u = (lo, hi) => (r) => lo + (hi - lo) * r();
  return [
    { name: 'PP-OCRv4-det', file: path.join(m, 'ch_PP-OCRv4_det_infer.onnx'),
      inputs: [['x', 'float32', [1, 3, 640, 640], Object.assign(textPage, { whole: true })]] },
    { name: 'openWakeWord-embed', file: path.join(m, 'embedding_model.onnx'),
      inputs: [['input_1', 'float32', [1, 76, 32, 1], u(-1, 1)]] },
    { name: 'melspectrogram', file: path.join(m, 'melspectrogram.onnx'),
      inputs: [['input', 'float32', [1, 1280], u(-1, 1)]] },
    { name: 'silero-vad', file: path.join(m, 'silero_vad_16k_op15.onnx'),
      inputs: [['input', 'float32', [1, 512], u(-1, 1)],
               ['state', 'float32', [2, 1, 128], u(-0.5, 0.5)],
               ['sr', 'int64', [], () => 16000]] },
  ];
}

const ELEM = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float64: 11 };
const ARRAY = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array,
                float64: Float64Array, uint8: Uint8Array, int8: Int8Array, bool: Uint8Array };

export function makeInput(ort, spec, r) {
  const [name, type, dims, fill] = spec;
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (fill.whole) {
    data = fill(r, dims);
  } else {
    data = new ARRAY[type](n);
    for (let i = 0; i < n; i++) data[i] = type === 'int64' ? BigInt(fill(r)) : fill(r);
  }
  return { name, type, dims, data, tensor: new ort.Tensor(type, data, dims) };
}

function varint(out, v) { // v: BigInt >= 0 (two's complement for negatives)
  let x = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
}

export function writeTensorProto(file, inp) {
  const head = [];
  for (const d of inp.dims) { head.push(0x08); varint(head, d); } // dims = 1
  head.push(0x10); varint(head, ELEM[inp.type]);                // data_type = 2
  const raw = Buffer.from(inp.data.buffer, inp.data.byteOffset, inp.data.byteLength);
  head.push(0x4a); varint(head, raw.length);                    // raw_data = 9
  fs.writeFileSync(file, Buffer.concat([Buffer.from(head), raw]));
}

// Returns { dims, type, data } with data a Float64Array (floats/ints as numbers).
export function readTensorProto(file) {
  const b = fs.readFileSync(file);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = 0;
  const rv = () => {
    let x = 0n, s = 0n;
    for (;;) {
      if (p >= b.length) throw new Error(`${file}: truncated varint at byte ${p}`);
      const c = b[p++];
      x |= BigInt(c & 0x7f) << s;
      s += 7n;
      if (!(c & 0x80)) return x;
    }
  };
  const dims = [];
  let type = 0, raw = null;
  const vals = [];
  while (p < b.length) {
    const key = Number(rv()), field = key >> 3, wt = key & 7;
    if (wt === 0) {
      const v = rv();
      if (field === 1) dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) type = Number(v);
      else if (field === 5 || field === 7) vals.push(Number(BigInt.asIntN(64, v)));
    } else if (wt === 2) {
      const len = Number(rv()), end = p + len;
      if (field === 9) raw = b.subarray(p, end);
      else if (field === 1) while (p < end) dims.push(Number(BigInt.asIntN(64, rv())));
      else if (field === 4) for (; p < end; p += 4) vals.push(dv.getFloat32(p, true));
      else if (field === 10) for (; p < end; p += 8) vals.push(dv.getFloat64(p, true));
      else if (field === 5 || field === 7)
        while (p < end) vals.push(Number(BigInt.asIntN(64, rv())));
      p = end;
    } else if (wt === 5) {
      if (field === 4) vals.push(dv.getFloat32(p, true));
      p += 4;
    } else if (wt === 1) {
      if (field === 10) vals.push(dv.getFloat64(p, true));
      p += 8;
    } else {
      throw new Error(`${file}: unsupported wire type ${wt} at byte ${p}`);
    }
  }
  let data;
  if (raw) {
    const rdv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const size = { 1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
                   16: 2 }[type];
    if (!size) throw new Error(`${file}: data_type ${type} not supported by this reader`);
    const n = raw.length / size;
    data = new Float64Array(n);
    const half = (h) => { // float16 bits -> number
      const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
      if (e === 0) return s * f * 2 ** -24;
      return e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * 2 ** (e - 15);
    };
    const bf16 = new DataView(new ArrayBuffer(4));
    for (let i = 0; i < n; i++) {
      const o = i * size;
      if (type === 16) bf16.setUint32(0, rdv.getUint16(o, true) << 16);
      data[i] = type === 1 ? rdv.getFloat32(o, true) : type === 11 ? rdv.getFloat64(o, true)
        : type === 7 ? Number(rdv.getBigInt64(o, true)) : type === 6 ? rdv.getInt32(o, true)
        : type === 13 ? Number(rdv.getBigUint64(o, true)) : type === 12 ? rdv.getUint32(o, true)
        : type === 5 ? rdv.getInt16(o, true) : type === 4 ? rdv.getUint16(o, true)
        : type === 10 ? half(rdv.getUint16(o, true)) : type === 16 ? bf16.getFloat32(0)
        : type === 3 ? rdv.getInt8(o) : rdv.getUint8(o);
    }
  } else {
    data = Float64Array.from(vals);
  }
  return { dims, type, data };
}

// --- minimal ModelProto surgery for diagnosis: list the main graph's nodes and
// expose chosen intermediate values as extra graph outputs (name only: both
// onnxruntime and onnxc infer their types).
function fields(b) { // [{field, wt, start, end, vstart, vend, value}]
  const out = [];
  let p = 0;
  const rv = () => {
    let x = 0, m = 1;
    for (;;) {
      if (p >= b.length) throw new Error(`truncated varint at byte ${p}`);
      const c = b[p++];
      x += (c & 0x7f) * m;
      m *= 128;
      if (!(c & 0x80)) return x;
    }
  };
  while (p < b.length) {
    const start = p, key = rv(), field = Math.floor(key / 8), wt = key & 7;
    let vstart = p, value = 0;
    if (wt === 0) value = rv();
    else if (wt === 1) p += 8;
    else if (wt === 5) p += 4;
    else if (wt === 2) { const n = rv(); vstart = p; p += n; }
    else throw new Error(`unsupported wire type ${wt} at byte ${start}`);
    out.push({ field, wt, start, end: p, vstart, vend: p, value });
  }
  return out;
}

function lenField(field, bytes) {
  const h = [];
  varint(h, field * 8 + 2);
  varint(h, bytes.length);
  return Buffer.concat([Buffer.from(h), bytes]);
}

// nodes of the main graph in order: [{name, op, outputs: [..]}]
export function graphNodes(model) {
  const g = fields(model).find((f) => f.field === 7);
  if (!g) throw new Error('model has no graph');
  const gb = model.subarray(g.vstart, g.vend);
  const str = (b, f) => b.subarray(f.vstart, f.vend).toString('utf8');
  return fields(gb).filter((f) => f.field === 1).map((f) => {
    const nb = gb.subarray(f.vstart, f.vend);
    const nf = fields(nb);
    return { name: nf.filter((x) => x.field === 3).map((x) => str(nb, x))[0] || '',
             op: nf.filter((x) => x.field === 4).map((x) => str(nb, x))[0] || '',
             outputs: nf.filter((x) => x.field === 2).map((x) => str(nb, x)) };
  });
}

// names already among the graph outputs are left out
export function withExtraOutputs(model, names) {
  return Buffer.concat(fields(model).map((f) => {
    if (f.field !== 7) return model.subarray(f.start, f.end);
    const gb = model.subarray(f.vstart, f.vend);
    const have = new Set(fields(gb).filter((x) => x.field === 12).map((x) => {
      const vb = gb.subarray(x.vstart, x.vend);
      const nf = fields(vb).find((y) => y.field === 1);
      return nf ? vb.subarray(nf.vstart, nf.vend).toString('utf8') : '';
    }));
    const extra = names.filter((n) => !have.has(n))
                       .map((n) => lenField(12, lenField(1, Buffer.from(n))));
    return lenField(7, Buffer.concat([gb, ...extra]));
  }));
}

// The bytes a run reads for the weights of DequantizeLinear nodes: the stored
// size of every initializer a DequantizeLinear of the main graph reads (the
// quantized values, scales and zero points, raw_data as written).
export function dequantizedBytes(model) {
  const g = fields(model).find((f) => f.field === 7);
  if (!g) throw new Error('model has no graph');
  const gb = model.subarray(g.vstart, g.vend);
  const str = (b, f) => b.subarray(f.vstart, f.vend).toString('utf8');
  const read = new Set();
  for (const f of fields(gb).filter((x) => x.field === 1)) {
    const nb = gb.subarray(f.vstart, f.vend);
    const nf = fields(nb);
    if (nf.filter((x) => x.field === 4).map((x) => str(nb, x))[0] !== 'DequantizeLinear') continue;
    for (const x of nf.filter((y) => y.field === 1)) read.add(str(nb, x));
  }
  let bytes = 0;
  for (const f of fields(gb).filter((x) => x.field === 5)) {
    const tb = gb.subarray(f.vstart, f.vend);
    const tf = fields(tb);
    const name = tf.filter((x) => x.field === 8).map((x) => str(tb, x))[0];
    const raw = tf.find((x) => x.field === 9);
    if (read.has(name) && raw) bytes += raw.vend - raw.vstart;
  }
  return bytes;
}

// .npy (version 1 or 2, little-endian) -> { type, dims, data } for ort.Tensor
const NPY = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array], '|i1': ['int8', Int8Array],
  '<u8': ['uint64', BigUint64Array], '<u4': ['uint32', Uint32Array],
  '<u2': ['uint16', Uint16Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
};
export function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = b.subarray(hstart, hstart + hlen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s).map(Number);
  const kind = NPY[descr];
  if (!kind) throw new Error(`${file}: dtype ${descr} not handled`);
  const raw = b.subarray(hstart + hlen);
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  const data = new kind[1](copy.buffer, 0, raw.length / kind[1].BYTES_PER_ELEMENT);
  return { type: kind[0], dims, data };
}
const num = (v) => (typeof v === 'bigint' ? Number(v) : v);
function half(h) { // float16 bits -> number
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
export const values = (t) => (t.type === 'float16' ? Array.from(t.data, half) : Array.from(t.data, num));

// onnxruntime's outputs of one case of a contrib generator (cases.py):
// output name -> { dims, data (numbers) }; throws what onnxruntime threw.
export async function ortOutputs(ort, work, c) {
  const s = await ort.InferenceSession.create(path.join(work, c.model), {
    graphOptimizationLevel: c.ort_level || 'disabled', intraOpNumThreads: 1, logSeverityLevel: 3,
  });
  const feeds = {};
  for (const [n, f] of Object.entries(c.inputs || {})) {
    const t = readNpy(path.join(work, f));
    feeds[n] = new ort.Tensor(t.type, t.data, t.dims);
  }
  // "ort_share": {output: input}: the output is written over the input's
  // own tensor (onnxruntime's SparseAttention runs only with present_key
  // / present_value over past_key / past_value's buffers)
  const fetches = {};
  for (const n of c.outputs || []) fetches[n] = feeds[(c.ort_share || {})[n]] ?? null;
  const out = c.ort_share ? await s.run(feeds, fetches) : await s.run(feeds);
  const refs = {};
  for (const [n, t] of Object.entries(out))
    refs[n] = { type: t.type, dims: Array.from(t.dims, Number), data: values(t) };
  return refs;
}
