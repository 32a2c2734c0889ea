// ctest.mjs - the wasm_js test of tests/wasm.cmake: runs js/test/*.test.mjs
// with node's test runner against the module in the build folder given
// (build-wasm), or exits 77 (ctest: skipped) saying why it cannot.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const build = resolve(process.argv[2] ?? join(here, '..', '..', 'build-wasm'));
if (!existsSync(join(build, 'libonnxc.mjs')) || !existsSync(join(build, 'libonnxc.wasm'))) {
  console.log(`wasm_js: skipped: no WebAssembly build in ${build} (install emscripten and run \`make wasm\`)`);
  process.exit(77);
}
const files = readdirSync(here).filter((f) => f.endsWith('.test.mjs')).map((f) => join(here, f));
const r = spawnSync(process.execPath, ['--test', ...files], {
  stdio: 'inherit', env: { ...process.env, ONNXC_WASM_DIR: build },
});
process.exit(r.status ?? 1);
