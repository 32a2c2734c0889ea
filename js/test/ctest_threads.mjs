// ctest_threads.mjs - the wasm_js_threads test of tests/wasm_threads.cmake:
// the package over the pthreads build (`make wasm-threads`, the folder given:
// build-wasm-threads) beside the single-threaded one (ONNXC_WASM_DIR or
// build-wasm): the API tests (their threads case compares 2 threads with 1),
// then the node conformance cases of the operators a pool splits (conv,
// gemm, matmul, pooling, reductions, softmax, ...) on 2 threads. Exits 77
// (ctest: skipped) saying why when a build, SharedArrayBuffer or the data is
// missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const thr = resolve(process.argv[2] ?? join(root, 'build-wasm-threads'));
const single = resolve(process.env.ONNXC_WASM_DIR ?? join(root, 'build-wasm'));
const skip = (why) => {
  console.log(`wasm_js_threads: skipped: ${why}`);
  process.exit(77);
};
if (typeof SharedArrayBuffer === 'undefined') skip('this node has no SharedArrayBuffer');
if (!existsSync(join(thr, 'libonnxc.mjs'))) skip(`no pthreads build in ${thr} (make wasm-threads)`);
if (!existsSync(join(single, 'libonnxc.mjs'))) skip(`no single-threaded build in ${single} (make wasm)`);
const env = { ...process.env, ONNXC_WASM_DIR: single, ONNXC_WASM_THREADS_DIR: thr };
let r = spawnSync(process.execPath, ['--test', join(here, 'api.test.mjs')], { stdio: 'inherit', env });
if (r.status !== 0) process.exit(r.status ?? 1);
const shared = [process.env.ONNXC_SHARED, join(root, '..', 'shared')]
  .find((d) => d && existsSync(join(d, 'testdata', 'node')));
if (!shared) skip('no ../shared/testdata/node for the conformance subset');
r = spawnSync(process.execPath, [join(here, 'conformance.mjs'),
  '--expected', join(root, 'tests', 'conformance', 'expected_failures.txt'),
  '--expected', join(here, 'expected_failures.txt'), '--threads', '2',
  '--match', '^test_(conv|gemm|matmul|.*pool|reduce|softmax|logsoftmax|layer_norm|gru|lstm|rnn|einsum|attention)',
  join(shared, 'testdata', 'node')], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
