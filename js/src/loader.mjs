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

// The module for a session that asks for `threads` (the pthreads build's
// pool is sized once, by the first such session: later ones asking for more
// get what it has). Rejects with a clear message when the files are missing.
export function loadModule(threads) {
  const variant = threads > 1 && threadsUsable() ? 'threads' : 'single';
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

function startModule(variant, threads) {
  const dir = variant === 'threads' ? new URL('threads/', baseDir()) : baseDir();
  const url = new URL('libonnxc.mjs', dir);
  return nodeGlobals(dir).then(() => import(url.href)).then(async (m) => {
    const args = { onnxcPoolSize: variant === 'threads' ? threads - 1 : 0 };
    if (isNode) {
      // emscripten 3.1.6 would fetch() the file: URL, which node's fetch refuses
      const { readFile } = await import('node:fs/promises');
      args.wasmBinary = await readFile(new URL('libonnxc.wasm', dir));
    }
    return m.default(args);
  }, (e) => {
    throw new Error(`onnxc: cannot load ${url.href} (run \`make wasm\`): ${e.message}`);
  });
}

// Forgets the started modules, so that the next session starts a fresh one
// (after a module aborted: a trap leaves it unusable). For test runners.
export function resetModules() {
  started.clear();
}
