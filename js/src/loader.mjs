// loader.mjs - finds and starts the WebAssembly module (libonnxc.mjs +
// libonnxc.wasm, made by `make wasm`), once per variant: the single-threaded
// one, or the pthreads one when a session asks for more than one thread and
// SharedArrayBuffer is usable (node; in browsers a cross-origin isolated page).

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

// Settings read when a module is first started (as ort-web's env.wasm).
export const env = {
  wasm: {
    // folder (URL or path) that holds libonnxc.mjs/.wasm, and threads/ with
    // the pthreads build; default: the package's dist/ (in node, the
    // environment's ONNXC_WASM_DIR first: the test runner points it at
    // build-wasm)
    wasmPaths: undefined,
    // threads of sessions that do not say (1: no workers; ort-web's
    // numThreads)
    numThreads: 1,
  },
};

function baseDir() {
  let dir = env.wasm.wasmPaths;
  if (!dir && isNode && process.env.ONNXC_WASM_DIR) dir = process.env.ONNXC_WASM_DIR;
  if (!dir) return new URL('../dist/', import.meta.url);
  if (dir instanceof URL) return dir;
  if (isNode && !/^[a-z]+:\/\//i.test(dir)) {
    // a file system path
    return new URL(`file://${dir.startsWith('/') ? '' : `${process.cwd()}/`}${dir.replace(/\/?$/, '/')}`);
  }
  return new URL(dir.replace(/\/?$/, '/'), globalThis.location?.href);
}

export function threadsUsable() {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  if (isNode) return true;
  return globalThis.crossOriginIsolated === true;
}

const started = new Map(); // variant -> Promise<module>
let notedNoThreads = false;

// The exports that return a pointer. A wasm i32 comes back to JavaScript
// signed, so an address past 2 GB of heap (MAXIMUM_MEMORY is 4 GB) would
// read as negative: these are wrapped to give it unsigned (>>> 0), so that
// the package never makes a view at a negative offset.
const POINTER_RESULTS = [
  '_malloc', '_onnxc_wasm_session_options', '_onnxc_wasm_error_new', '_onnxc_wasm_error_message',
  '_onnxc_version', '_onnxc_session_input_name', '_onnxc_session_output_name',
  '_onnxc_session_input_type', '_onnxc_session_output_type', '_onnxc_type_dim_param',
  '_onnxc_tensor_create', '_onnxc_tensor_create_strings', '_onnxc_tensor_data',
  '_onnxc_tensor_dims', '_onnxc_tensor_string', '_onnxc_optional_value', '_onnxc_sequence_at',
  '_onnxc_session_profile_top',
];

function unsignedPointers(mod) {
  for (const name of POINTER_RESULTS) {
    let f = mod[name];
    if (typeof f !== 'function') continue;
    // emscripten's stub replaces Module[name] with the raw export on its
    // first call: the wrapper takes that one and puts itself back
    const wrapped = (...args) => {
      const r = f(...args);
      if (mod[name] !== wrapped) {
        f = mod[name];
        mod[name] = wrapped;
      }
      return r >>> 0;
    };
    mod[name] = wrapped;
  }
  return mod;
}

// The module for a session that asks for `threads` (the pthreads build's
// pool is sized once, by the first such session: later ones asking for more
// get what it has). Rejects with a clear message when the files are missing.
export function loadModule(threads) {
  const usable = threadsUsable();
  if (threads > 1 && !usable && !notedNoThreads) {
    notedNoThreads = true;
    console.warn(`onnxc: ${threads} threads asked for, but SharedArrayBuffer is not usable here ` +
      '(a browser page must be cross-origin isolated); running on one thread');
  }
  const variant = threads > 1 && usable ? 'threads' : 'single';
  if (!started.has(variant)) {
    let p = startModule(variant, threads);
    if (variant === 'threads') {
      // without the pthreads build (`make wasm-threads`): one thread
      p = p.catch((e) => {
        console.warn(`${e.message}; running on one thread`);
        return loadModule(1);
      });
    }
    started.set(variant, p);
    p.catch(() => started.delete(variant));
  }
  return started.get(variant);
}

// emscripten 3.1.6's ES module output, in node, still uses CommonJS's require
// and __dirname: made here (once; an ES module has neither)
async function nodeGlobals(dir) {
  if (!isNode || typeof globalThis.require === 'function') return;
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  globalThis.require = createRequire(dir);
  if (globalThis.__dirname === undefined) globalThis.__dirname = fileURLToPath(dir).replace(/\/$/, '');
}

// The pthreads build's folder: threads/ in the single one's (js/dist/threads/
// after `make wasm-threads`); in node, ONNXC_WASM_THREADS_DIR first (the
// test runner points it at build-wasm-threads).
export function threadsDir() {
  const dir = isNode && process.env.ONNXC_WASM_THREADS_DIR;
  if (dir) return new URL(`file://${dir.startsWith('/') ? '' : `${process.cwd()}/`}${dir.replace(/\/?$/, '/')}`);
  return new URL('threads/', baseDir());
}

function startModule(variant, threads) {
  const dir = variant === 'threads' ? threadsDir() : baseDir();
  const url = new URL('libonnxc.mjs', dir);
  return nodeGlobals(dir).then(() => import(url.href)).then(async (m) => {
    const args = { onnxcPoolSize: variant === 'threads' ? threads - 1 : 0 };
    if (isNode) {
      // emscripten 3.1.6 would fetch() the file: URL, which node's fetch refuses
      const { readFile } = await import('node:fs/promises');
      args.wasmBinary = await readFile(new URL('libonnxc.wasm', dir));
    }
    const mod = unsignedPointers(await m.default(args));
    // the most threads a session of this module can have: the caller and
    // the workers started with it (a pthread made later would need the
    // event loop to start, which a blocked caller does not give back)
    mod.onnxcMaxThreads = variant === 'threads' ? threads : 1;
    // node: the pool's idle workers must not keep the process alive
    if (isNode && mod.PThread) {
      for (const w of [...mod.PThread.unusedWorkers, ...mod.PThread.runningWorkers]) w.unref?.();
    }
    return mod;
  }, (e) => {
    throw new Error(`onnxc: cannot load ${url.href} (run \`make ${variant === 'threads' ? 'wasm-threads' : 'wasm'}\`): ${e.message}`);
  });
}

// Forgets the started modules, so that the next session starts a fresh one
// (after a module aborted: a trap leaves it unusable). For test runners.
export function resetModules() {
  started.clear();
}
