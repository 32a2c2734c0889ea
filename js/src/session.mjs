// session.mjs - InferenceSession over libonnxc.wasm, shaped as
// onnxruntime-web's: create(urlOrBytes, options) -> session, run(feeds) ->
// {name: Tensor}, inputNames / outputNames, release(). Every call of the C
// API goes through this file: tensors are copied into the wasm heap for a
// run and their results copied out, so that no JS object points into memory
// that a later run may move (the heap grows).
import { env, loadModule } from './loader.mjs';
import { Tensor, arrayClass, typeCode, typeName } from './tensor.mjs';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

const TYPE_TENSOR = 1;
const TYPE_SEQUENCE = 2;
const TYPE_OPTIONAL = 4;

// ort-web's graphOptimizationLevel names -> onnxc's levels (1: constant
// folding and every fusion; onnxc has no finer steps)
const OPT_LEVELS = { disabled: 0, basic: 1, extended: 1, layout: 1, all: 1 };

// A typed view of the heap as it is now (memory growth replaces the buffer:
// never keep one across a call into the module).
function heap(mod, cls, ptr, length) {
  let buf = mod.HEAPU8.buffer;
  const mem = mod.wasmMemory;
  if (mem && mem.buffer !== buf) buf = mem.buffer;
  return new cls(buf, ptr, length);
}

// Scratch allocations of one call, freed together.
class Scratch {
  constructor(mod) {
    this.mod = mod;
    this.ptrs = [];
  }

  alloc(bytes) {
    const p = this.mod._malloc(Math.max(bytes, 1));
    if (!p) throw new Error('onnxc: out of memory in the wasm heap');
    this.ptrs.push(p);
    return p;
  }

  bytes(u8) {
    const p = this.alloc(u8.length);
    heap(this.mod, Uint8Array, p, u8.length).set(u8);
    return p;
  }

  string(s) {
    return this.bytes(new TextEncoder().encode(`${s}\0`));
  }

  int64s(values) {
    const p = this.alloc(values.length * 8);
    const v = heap(this.mod, BigInt64Array, p, values.length);
    values.forEach((x, i) => { v[i] = BigInt(x); });
    return p;
  }

  pointers(values) {
    const p = this.alloc(values.length * 4);
    heap(this.mod, Uint32Array, p, values.length).set(values);
    return p;
  }

  free() {
    for (const p of this.ptrs) this.mod._free(p);
    this.ptrs = [];
  }
}

function asBytes(data, what) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && data instanceof SharedArrayBuffer)) {
    return new Uint8Array(data);
  }
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`${what} must be a Uint8Array, an ArrayBuffer or a URL/path`);
}

// Bytes of a model or external-data file given as bytes, a URL or (in node) a path.
async function fetchBytes(src, what) {
  if (typeof src !== 'string' && !(src instanceof URL)) return asBytes(src, what);
  const s = src instanceof URL ? src.href : src;
  if (isNode && !/^(https?|data|blob):/i.test(s)) {
    const { readFile } = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    return new Uint8Array(await readFile(s.startsWith('file:') ? fileURLToPath(s) : s));
  }
  const r = await fetch(s);
  if (!r.ok) throw new Error(`onnxc: ${s}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

// Runs fn(errPtr); throws onnxc's message when it returns a non-zero status.
function check(mod, status, errPtr, what) {
  if (status === 0) return;
  const msg = mod.UTF8ToString(mod._onnxc_wasm_error_message(errPtr));
  const e = new Error(msg ? `${what}: ${msg}` : `${what} failed (status ${status})`);
  e.code = status;
  throw e;
}

let nextId = 0;

export class InferenceSession {
  // Use InferenceSession.create.
  constructor(mod, state) {
    this._mod = mod;
    Object.assign(this, state);
  }

  // urlOrBytes: Uint8Array / ArrayBuffer of the model, a URL (fetched), or
  // in node a path or file: URL. options: threads (or ort-web's
  // intraOpNumThreads; default env.wasm.numThreads), graphOptimizationLevel
  // ('disabled' | 'basic' | 'extended' | 'all'), externalData: [{path,
  // data}] as ort-web (data: bytes or a URL) or {fileName: bytes}; profile:
  // true times every node (onnxc's own: see profile()).
  static async create(urlOrBytes, options = {}) {
    const threads = Math.max(1, Number(options.threads ?? options.intraOpNumThreads ??
      env.wasm.numThreads ?? 1) | 0);
    const bytes = await fetchBytes(urlOrBytes, 'the model');
    let ext = options.externalData ?? [];
    if (!Array.isArray(ext)) ext = Object.entries(ext).map(([path, data]) => ({ path, data }));
    const extFiles = [];
    for (const { path, data } of ext) extFiles.push([String(path), await fetchBytes(data, `external data '${path}'`)]);
    const mod = await loadModule(threads);
    // no more than the module's workers (the first threaded session sized
    // them; js/src/loader.mjs)
    return InferenceSession._open(mod, bytes, extFiles, Math.min(threads, mod.onnxcMaxThreads ?? 1),
      OPT_LEVELS[options.graphOptimizationLevel ?? 'all'] ?? 1, Boolean(options.profile));
  }

  static _open(mod, bytes, extFiles, threads, level, profile = false) {
    const sc = new Scratch(mod);
    const err = mod._onnxc_wasm_error_new();
    // the model's bytes stay in the heap while the session lives: its
    // weights are used in place
    const modelPtr = mod._malloc(Math.max(bytes.length, 1));
    let model = 0, session = 0, dir = null;
    try {
      if (!modelPtr) throw new Error('onnxc: out of memory for the model');
      heap(mod, Uint8Array, modelPtr, bytes.length).set(bytes);
      // external data: files in the module's in-memory file system, in a
      // folder of the session's own, which is the model's base folder
      if (extFiles.length) {
        dir = `/onnxc-session-${nextId++}`;
        mod.FS.mkdir(dir);
        for (const [path, data] of extFiles) {
          const parts = path.replace(/^\.?\//, '').split('/');
          if (parts.some((p) => p === '..')) throw new Error(`onnxc: external data path '${path}' leaves the model's folder`);
          let d = dir;
          for (const p of parts.slice(0, -1)) {
            d += `/${p}`;
            try { mod.FS.mkdir(d); } catch { /* exists */ }
          }
          mod.FS.writeFile(`${dir}/${parts.join('/')}`, data);
        }
      }
      const out = sc.alloc(4);
      check(mod, mod._onnxc_model_load_buffer(modelPtr, bytes.length, dir ? sc.string(dir) : 0, 0, out, err),
        err, 'onnxc: loading the model');
      model = heap(mod, Uint32Array, out, 1)[0];
      const opts = mod._onnxc_wasm_session_options(threads, level, profile ? 1 : 0);
      sc.ptrs.push(opts);
      check(mod, mod._onnxc_session_create(model, opts, out, err), err, 'onnxc: creating the session');
      session = heap(mod, Uint32Array, out, 1)[0];
      const names = (count, get) => Array.from({ length: count(session) }, (_, i) => mod.UTF8ToString(get(session, i)));
      const inputNames = names(mod._onnxc_session_input_count, mod._onnxc_session_input_name);
      const outputNames = names(mod._onnxc_session_output_count, mod._onnxc_session_output_name);
      return new InferenceSession(mod, {
        _model: model, _session: session, _modelPtr: modelPtr, _dir: dir, _err: err,
        inputNames, outputNames,
        threads: mod._onnxc_session_threads(session),
      });
    } catch (e) {
      if (session) mod._onnxc_session_free(session);
      if (model) mod._onnxc_model_free(model);
      if (modelPtr) mod._free(modelPtr);
      mod._free(err);
      if (dir) removeTree(mod.FS, dir);
      throw e;
    } finally {
      sc.free();
    }
  }

  // The declared metadata of the inputs and outputs: [{name, isTensor, type,
  // dims}] (dims: numbers, names of symbolic dims, or -1 for unknown ones;
  // undefined for an unknown rank).
  get inputMetadata() {
    return this.inputNames.map((name, i) => typeMetadata(this._mod, name, this._mod._onnxc_session_input_type(this._session, i)));
  }

  get outputMetadata() {
    return this.outputNames.map((name, i) => typeMetadata(this._mod, name, this._mod._onnxc_session_output_type(this._session, i)));
  }

  // feeds: {name: Tensor}; fetches (optional): names of the outputs wanted
  // (an array, or an object whose keys are the names). Resolves to {name:
  // Tensor} (a sequence output: an array of Tensors; an empty optional: null).
  async run(feeds, fetches) {
    return this.runSync(feeds, fetches);
  }

  runSync(feeds, fetches) {
    if (!this._session) throw new Error('onnxc: the session was released');
    const mod = this._mod;
    let wanted = this.outputNames;
    if (Array.isArray(fetches)) wanted = fetches;
    else if (fetches && typeof fetches === 'object') wanted = Object.keys(fetches);
    const sc = new Scratch(mod);
    const values = [];
    const outPtr = sc.alloc(4 * Math.max(wanted.length, 1));
    heap(mod, Uint32Array, outPtr, wanted.length).fill(0);
    try {
      const names = Object.keys(feeds ?? {});
      for (const name of names) values.push(this._tensorIn(sc, name, feeds[name]));
      const status = mod._onnxc_session_run(this._session,
        sc.pointers(names.map((n) => sc.string(n))), sc.pointers(values), names.length,
        sc.pointers(wanted.map((n) => sc.string(n))), outPtr, wanted.length, this._err);
      check(mod, status, this._err, 'onnxc: run');
      const outs = Array.from(heap(mod, Uint32Array, outPtr, wanted.length));
      const result = {};
      try {
        wanted.forEach((n, k) => { result[n] = valueOut(mod, outs[k], n); });
      } finally {
        for (const v of outs) if (v) mod._onnxc_value_free(v);
      }
      return result;
    } finally {
      for (const v of values) mod._onnxc_value_free(v);
      sc.free();
    }
  }

  // A tensor value in the heap holding a copy of t.
  _tensorIn(sc, name, t) {
    const mod = this._mod;
    if (!t || typeof t.type !== 'string' || !t.dims) throw new TypeError(`onnxc: feed '${name}' is not a Tensor`);
    const code = typeCode(t.type);
    const dims = sc.int64s(t.dims);
    let v;
    if (t.type === 'string') {
      const enc = new TextEncoder();
      const strs = t.data.map((s) => enc.encode(s));
      v = mod._onnxc_tensor_create_strings(dims, t.dims.length, sc.pointers(strs.map((s) => sc.bytes(s))),
        sc.pointers(strs.map((s) => s.length)), this._err);
    } else {
      v = mod._onnxc_tensor_create(code, dims, t.dims.length, this._err);
    }
    if (!v) check(mod, 1, this._err, `onnxc: input '${name}'`);
    if (t.type !== 'string') {
      const cls = arrayClass(t.type);
      const data = t.data instanceof cls ? t.data : new Tensor(t.type, t.data, t.dims).data;
      const n = data.length;
      if (n) heap(mod, cls, mod._onnxc_tensor_data(v), n).set(data);
    }
    return v;
  }

  // For a session created with {profile: true}: the time per operator type
  // and of the `top` slowest nodes per run so far, as text (onnxc bench
  // --profile's report); resetProfile() forgets the runs before (warm-up).
  profile(top = 15) {
    if (!this._session) throw new Error('onnxc: the session was released');
    const p = this._mod._onnxc_session_profile_top(this._session, top);
    if (!p) throw new Error('onnxc: out of memory for the profile');
    try {
      return this._mod.UTF8ToString(p);
    } finally {
      this._mod._free(p);
    }
  }

  resetProfile() {
    if (this._session) this._mod._onnxc_session_profile_reset(this._session);
  }

  // Frees the session, its model and its files; runs after this reject.
  async release() {
    if (!this._session) return;
    const mod = this._mod;
    mod._onnxc_session_free(this._session);
    mod._onnxc_model_free(this._model);
    mod._free(this._modelPtr);
    mod._free(this._err);
    if (this._dir) removeTree(mod.FS, this._dir);
    this._session = 0;
  }
}

function typeMetadata(mod, name, t) {
  const rank = Number(mod._onnxc_type_rank(t));
  const dims = [];
  for (let k = 0; k < rank; k++) {
    const d = Number(mod._onnxc_type_dim(t, k));
    const p = mod._onnxc_type_dim_param(t, k);
    dims.push(d >= 0 ? d : p ? mod.UTF8ToString(p) : -1);
  }
  return { name, isTensor: mod._onnxc_type_kind_of(t) === TYPE_TENSOR,
    type: typeName(mod._onnxc_type_elem_type(t)), dims: rank < 0 ? undefined : dims };
}

function removeTree(FS, path) {
  try {
    for (const n of FS.readdir(path)) {
      if (n === '.' || n === '..') continue;
      const p = `${path}/${n}`;
      if (FS.isDir(FS.stat(p).mode)) removeTree(FS, p);
      else FS.unlink(p);
    }
    FS.rmdir(path);
  } catch { /* best effort */ }
}

// A JS copy of a value the run made (borrowed v: not freed here).
function valueOut(mod, v, name) {
  if (!v) return null;
  const kind = mod._onnxc_value_kind(v);
  if (kind === TYPE_OPTIONAL) {
    return mod._onnxc_optional_has_value(v) ? valueOut(mod, mod._onnxc_optional_value(v), name) : null;
  }
  if (kind === TYPE_SEQUENCE) {
    const n = mod._onnxc_sequence_length(v);
    return Array.from({ length: n }, (_, i) => valueOut(mod, mod._onnxc_sequence_at(v, i), name));
  }
  if (kind !== TYPE_TENSOR) throw new Error(`onnxc: output '${name}' is a map or other non-tensor value`);
  const code = mod._onnxc_tensor_dtype(v);
  const type = typeName(code);
  if (!type) throw new Error(`onnxc: output '${name}' has element type ${code}, which the Tensor cannot hold`);
  const rank = mod._onnxc_tensor_rank(v);
  const dims = Array.from(heap(mod, BigInt64Array, mod._onnxc_tensor_dims(v), rank), Number);
  const n = Number(mod._onnxc_tensor_numel(v));
  if (type === 'string') {
    const lenPtr = mod._malloc(4);
    const dec = new TextDecoder();
    try {
      const strs = [];
      for (let i = 0; i < n; i++) {
        const p = mod._onnxc_tensor_string(v, i, lenPtr);
        const len = heap(mod, Uint32Array, lenPtr, 1)[0];
        strs.push(dec.decode(heap(mod, Uint8Array, p, len).slice()));
      }
      return new Tensor('string', strs, dims);
    } finally {
      mod._free(lenPtr);
    }
  }
  const cls = arrayClass(type);
  const data = n ? heap(mod, cls, mod._onnxc_tensor_data(v), n).slice() : new cls(0);
  return new Tensor(type, data, dims);
}
