// page_test.mjs - the wasm_page test of tests/wasm.cmake: the demo page
// (js/demo/) in headless Chromium, served by js/demo/serve.mjs with the
// module of the build folder given (build-wasm). Three pages in one browser
// (iframes of page_frames.html: headless Chromium opens one URL):
//   ramp    the bundled model on the ramp input: its outputs must equal those
//           of the native tool (`onnxc run`, the path given) on the same
//           numbers, within 1e-4 relative;
//   image   the same model on the page's drawn picture (canvas, resize,
//           scaling): it must run, and its softmax scores sum to 1;
//   error   a file that is no model: the page must show onnxc's message.
// Each page POSTs its results to the server (its report= query), which is
// sturdier than reading the DOM back. Exits 77 (ctest: skipped) without
// chromium or the wasm build.
//   node js/test/page_test.mjs BUILD_WASM_DIR NATIVE_ONNXC
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../demo/serve.mjs';
import { fillValues } from '../demo/fill.mjs';
import { decodeTensorProto } from './tensorproto.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const build = resolve(process.argv[2] ?? join(here, '..', '..', 'build-wasm'));
const native = resolve(process.argv[3] ?? join(here, '..', '..', 'build', 'onnxc'));
const model = join(here, '..', 'demo', 'model.onnx');
const TIMEOUT_MS = Number(process.env.ONNXC_PAGE_TIMEOUT_MS ?? 90000);

function skip(why) {
  console.log(`wasm_page: skipped: ${why}`);
  process.exit(77);
}

function which(names) {
  for (const n of names) {
    for (const d of (process.env.PATH ?? '').split(delimiter)) {
      if (d && existsSync(join(d, n))) return join(d, n);
    }
  }
  return null;
}

const chromium = process.env.ONNXC_CHROMIUM ?? which(['chromium', 'chromium-browser', 'google-chrome']);
if (!chromium) skip('no chromium on PATH (Debian: apt-get install chromium; scripts/setup.sh installs it)');
if (!existsSync(join(build, 'libonnxc.mjs')) || !existsSync(join(build, 'libonnxc.wasm'))) {
  skip(`no WebAssembly build in ${build} (install emscripten and run \`make wasm\`)`);
}
if (!existsSync(native)) skip(`no native onnxc at ${native} (the oracle)`);

// float32 numbers as a .npy file (format 1.0: magic, header length, a
// Python dict literal padded to 64 bytes, little-endian data)
function npy(values, shape) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')},), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.concat([Buffer.from([0x93]), Buffer.from('NUMPY'), Buffer.from([1, 0]),
    Buffer.from(new Uint16Array([header.length]).buffer), Buffer.from(header, 'latin1')]);
  return Buffer.concat([head, Buffer.from(Float32Array.from(values).buffer)]);
}

const tmp = mkdtempSync(join(tmpdir(), 'onnxc-page-'));
let browser = null;
let server = null;
let failed = false;
function fail(msg) {
  console.log(`FAIL: ${msg}`);
  failed = true;
}

function cleanup() {
  if (browser && browser.exitCode === null) {
    try { process.kill(-browser.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  server?.server.close();
  rmSync(tmp, { recursive: true, force: true });
}

try {
  // the oracle: the native tool on the ramp input the page makes (the same numbers)
  const shape = [1, 3, 32, 32];
  writeFileSync(join(tmp, 'image.npy'), npy(fillValues('ramp', 3 * 32 * 32), shape));
  const r = spawnSync(native, ['run', model, '-i', `image=${join(tmp, 'image.npy')}`, '-o', join(tmp, 'out')],
    { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`onnxc run failed: ${r.stderr || r.stdout}`);
  const expected = decodeTensorProto(readFileSync(join(tmp, 'out', 'output_0.pb')));

  const pages = {
    ramp: 'demo/?model=bundled&input=ramp&runs=3&auto=1&report=/report/ramp',
    image: 'demo/?model=bundled&input=image&norm=unit&runs=1&auto=1&report=/report/image',
    error: 'demo/?model=../package.json&input=zeros&auto=1&report=/report/error',
  };
  const results = {};
  let done;
  const allIn = new Promise((ok) => { done = ok; });
  server = await startServer({
    dist: build,
    onPost: (path, body) => {
      const name = path.replace('/report/', '');
      if (!(name in pages) || name in results) return;
      try { results[name] = JSON.parse(body); } catch { results[name] = { ok: false, error: `bad JSON: ${body}` }; }
      if (Object.keys(results).length === Object.keys(pages).length) done();
    },
  });
  const t0 = Date.now();
  browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-extensions', '--disable-background-networking', '--disable-component-update',
    '--disable-dev-shm-usage', `--user-data-dir=${join(tmp, 'profile')}`,
    `${server.url}test/page_frames.html?${Object.values(pages).map((p) => `src=${encodeURIComponent(`/${p}`)}`).join('&')}`],
  { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  browser.stderr.on('data', (c) => { stderr = (stderr + c).slice(-4000); });
  const exited = new Promise((ok) => browser.on('exit', ok));
  let timer;
  const outcome = await Promise.race([
    allIn.then(() => 'done'),
    exited.then((code) => `chromium exited (${code}) before the pages reported: ${stderr}`),
    new Promise((ok) => { timer = setTimeout(() => ok(`timed out after ${TIMEOUT_MS} ms`), TIMEOUT_MS); }),
  ]);
  clearTimeout(timer);
  console.log(`chromium: ${outcome === 'done' ? 'pages reported' : outcome} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (outcome !== 'done') {
    fail(`${outcome}; reports in: ${Object.keys(results).join(', ') || 'none'}`);
  }

  // ramp: every value as the native tool's
  const ramp = results.ramp;
  if (ramp && !ramp.ok) fail(`ramp page: ${ramp.error}`);
  else if (ramp) {
    const got = ramp.outputs.scores;
    if (!got) fail(`ramp page: no output 'scores' (${Object.keys(ramp.outputs)})`);
    else if (JSON.stringify(got.dims) !== JSON.stringify(expected.dims)) {
      fail(`ramp page: dims [${got.dims}], onnxc run [${expected.dims}]`);
    } else {
      let worst = 0;
      expected.data.forEach((e, i) => {
        const err = Math.abs(got.data[i] - e) / Math.max(Math.abs(e), 1e-6);
        worst = Math.max(worst, Number.isNaN(err) ? Infinity : err);
      });
      console.log(`ramp: ${expected.data.length} values, largest relative difference from onnxc run ${worst.toExponential(2)}; ` +
        `load ${ramp.load_ms.toFixed(1)} ms, first run ${ramp.first_run_ms.toFixed(2)} ms, mean ${ramp.mean_ms.toFixed(3)} ms`);
      if (!(worst <= 1e-4)) fail(`ramp page: outputs differ from onnxc run by ${worst} (relative): page ${got.data}, native ${Array.from(expected.data)}`);
    }
  }
  // image: it ran, and softmax sums to 1
  const image = results.image;
  if (image && !image.ok) fail(`image page: ${image.error}`);
  else if (image) {
    const s = image.outputs.scores?.data ?? [];
    const sum = s.reduce((a, b) => a + b, 0);
    console.log(`image: ${s.length} scores, sum ${sum.toFixed(6)}`);
    if (s.length !== 10 || Math.abs(sum - 1) > 1e-4) fail(`image page: scores ${s}`);
  }
  // error: onnxc's message on the page
  const error = results.error;
  if (error) {
    console.log(`error page: ${error.ok ? 'ran (!)' : error.error}`);
    if (error.ok || !/^onnxc: loading the model/.test(error.error)) fail('error page: expected onnxc\'s load error');
  }
} catch (e) {
  fail(e.stack ?? String(e));
} finally {
  cleanup();
}
console.log(failed ? 'wasm_page: FAILED' : 'wasm_page: passed');
process.exit(failed ? 1 : 0);
