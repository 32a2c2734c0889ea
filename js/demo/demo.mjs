// demo.mjs - the demo page (index.html): loads a model (a picked file or the
// bundled model.onnx) into an InferenceSession of the js/ package, makes its
// inputs (a picture drawn to a canvas and scaled to an image-shaped input, or
// zeros / random / ramp / typed values), runs it and shows each output and
// the timings. No bundler, no network beyond the page's own folder.
//
// Query string (for links and the headless test, js/test/page_test.mjs):
//   model=bundled|URL   the model to load at start (default: bundled)
//   input=image|zeros|random|ramp|values   values=1,2,3   seed=N   runs=N
//   norm=unit|imagenet|signed|byte (the picture's scaling)
//   auto=1              run once loaded
//   report=PATH         POST the results (the JSON below) to PATH on this
//                       server when the run ends or fails
import * as ort from '../src/index.mjs';
import { fillValues, parseValues } from './fill.mjs';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const FLOAT_TYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const BIG_TYPES = new Set(['int64', 'uint64']);
const MAX_REPORTED = 65536; // values per output in the JSON (all of a small model's)

let session = null;
let modelName = '';
let loadMs = 0;
let picture = null; // an ImageBitmap picked by the user (null: the drawn one)

function setStatus(text) {
  $('status').textContent = text;
}

// The error on the page (onnxc's own message) and in the report.
function showError(e) {
  const msg = e && e.message ? e.message : String(e);
  $('error').textContent = msg;
  setStatus('');
  publish({ ok: false, model: modelName, error: msg });
}

// The results as JSON into <pre id=result>, and to the test's server when asked.
function publish(result) {
  const text = JSON.stringify(result, null, 1);
  $('result').textContent = text;
  const report = params.get('report');
  if (report) fetch(report, { method: 'POST', body: text }).catch(() => {});
}

function cell(row, text, tag = 'td') {
  const c = document.createElement(tag);
  c.textContent = text;
  row.appendChild(c);
  return c;
}

function table(id, head, rows) {
  const t = $(id);
  t.replaceChildren();
  if (!rows.length) return;
  const h = t.insertRow();
  for (const x of head) cell(h, x, 'th');
  for (const r of rows) {
    const tr = t.insertRow();
    for (const x of r) cell(tr, x);
  }
}

// ---- the inputs ----

// An input's dims with the unknown ones made concrete: the first (a batch) 1,
// the others 224 when the input looks like an image, else 1.
function concreteDims(meta) {
  const dims = meta.dims ?? [1];
  const imageLike = dims.length === 4;
  return dims.map((d, k) => (typeof d === 'number' && d >= 0 ? d : k === 0 || !imageLike ? 1 : 224));
}

// The layout of an image-shaped float input: NCHW or NHWC with 1 or 3
// channels, or null.
function imageLayout(type, dims) {
  if (!FLOAT_TYPES.has(type) || dims.length !== 4) return null;
  if ((dims[1] === 1 || dims[1] === 3) && dims[2] > 1 && dims[3] > 1) return { layout: 'NCHW', c: dims[1], h: dims[2], w: dims[3] };
  if ((dims[3] === 1 || dims[3] === 3) && dims[1] > 1 && dims[2] > 1) return { layout: 'NHWC', c: dims[3], h: dims[1], w: dims[2] };
  return null;
}

function showInputs() {
  const rows = [];
  const t = $('inputs');
  t.replaceChildren();
  const h = t.insertRow();
  for (const x of ['input', 'type', 'declared dims', 'dims used']) cell(h, x, 'th');
  for (const meta of session.inputMetadata) {
    const tr = t.insertRow();
    cell(tr, meta.name);
    cell(tr, meta.isTensor ? meta.type ?? '?' : 'not a tensor');
    cell(tr, meta.dims ? `[${meta.dims.join(', ')}]` : 'any rank');
    const f = document.createElement('input');
    f.size = 18;
    f.dataset.input = meta.name;
    f.value = concreteDims(meta).join(', ');
    cell(tr, '').appendChild(f);
    rows.push(meta);
  }
  return rows;
}

function dimsOf(name) {
  const f = document.querySelector(`input[data-input="${CSS.escape(name)}"]`);
  const dims = parseValues(f.value);
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`input '${name}': dims must be whole numbers`);
  return dims;
}

// The picture to feed: the picked one, else a drawn test card (colour bands
// and a disc), so that the image path works without a file.
function drawPicture(ctx, w, h) {
  if (picture) {
    ctx.drawImage(picture, 0, 0, w, h);
    return;
  }
  const g = ctx.createLinearGradient(0, 0, w, h);
  g.addColorStop(0, '#d33');
  g.addColorStop(0.5, '#3b3');
  g.addColorStop(1, '#33d');
  ctx.fillStyle = g;
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = '#fff';
  ctx.beginPath();
  ctx.arc(w / 2, h / 2, Math.min(w, h) / 4, 0, 2 * Math.PI);
  ctx.fill();
}

const NORMS = {
  unit: { mean: [0, 0, 0], std: [1, 1, 1], scale: 1 / 255 },
  imagenet: { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], scale: 1 / 255 },
  signed: { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], scale: 1 / 255 },
  byte: { mean: [0, 0, 0], std: [1, 1, 1], scale: 1 },
};

// The picture resized to the input's h x w on the canvas, as numbers in the
// input's layout, scaled as chosen.
function imageValues(img) {
  const canvas = $('canvas');
  canvas.width = img.w;
  canvas.height = img.h;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.clearRect(0, 0, img.w, img.h);
  drawPicture(ctx, img.w, img.h);
  const px = ctx.getImageData(0, 0, img.w, img.h).data;
  const { mean, std, scale } = NORMS[$('norm').value];
  const hw = img.h * img.w;
  const out = new Array(hw * img.c);
  for (let p = 0; p < hw; p++) {
    const rgb = [px[4 * p], px[4 * p + 1], px[4 * p + 2]];
    const chans = img.c === 3 ? rgb : [0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]];
    for (let c = 0; c < img.c; c++) {
      const v = (chans[c] * scale - (img.c === 3 ? mean[c] : mean[0])) / (img.c === 3 ? std[c] : std[0]);
      out[img.layout === 'NCHW' ? c * hw + p : p * img.c + c] = v;
    }
  }
  return out;
}

// float -> IEEE half bits (round to nearest even), for float16 inputs
function halfBits(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rest = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rest > half || (rest === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return sign | h;
}

// numbers -> a Tensor of the input's type
function tensorOf(type, values, dims) {
  if (type === 'string') return new ort.Tensor('string', values.map(String), dims);
  if (type === 'float16') return new ort.Tensor('float16', Uint16Array.from(values, halfBits), dims);
  if (type === 'bfloat16') {
    const f = Float32Array.from(values);
    return new ort.Tensor('bfloat16', Uint16Array.from(new Uint32Array(f.buffer), (u) => u >>> 16), dims);
  }
  if (BIG_TYPES.has(type)) return new ort.Tensor(type, values.map((v) => BigInt(Math.round(v))), dims);
  if (type === 'bool') return new ort.Tensor('bool', values.map((v) => (v ? 1 : 0)), dims);
  const integral = !FLOAT_TYPES.has(type);
  return new ort.Tensor(type, integral ? values.map(Math.round) : values, dims);
}

function makeFeeds() {
  const kind = $('source').value;
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor: the page feeds tensors only`);
    const type = meta.type ?? 'float32';
    const dims = dimsOf(meta.name);
    const n = dims.reduce((a, b) => a * b, 1);
    let values;
    const img = imageLayout(type, dims);
    if (kind === 'image') {
      if (!img) throw new Error(`input '${meta.name}' (${type} [${dims}]) is not image-shaped (NCHW/NHWC float, 1 or 3 channels): pick another source`);
      values = imageValues(img);
    } else {
      values = fillValues(kind, n, { seed: Number($('seed').value) | 0, integral: !FLOAT_TYPES.has(type),
        values: kind === 'values' ? parseValues($('values').value) : [] });
    }
    feeds[meta.name] = tensorOf(type, values, dims);
  }
  return feeds;
}

// ---- the outputs ----

const num = (v) => (typeof v === 'bigint' ? Number(v) : v);

function fmt(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  const x = num(v);
  return Number.isInteger(x) ? String(x) : x.toPrecision(6);
}

// A 1-D score vector: one axis longer than 1, the others 1, numbers.
function isScoreVector(t) {
  return FLOAT_TYPES.has(t.type) && t.dims.filter((d) => d > 1).length === 1 && t.size > 1;
}

// float16/bfloat16 bits -> numbers for display
function displayData(t) {
  if (t.type === 'bfloat16') {
    const u = new Uint32Array(t.data.length);
    t.data.forEach((b, i) => { u[i] = b << 16; });
    return new Float32Array(u.buffer);
  }
  if (t.type === 'float16') {
    return Array.from(t.data, (b) => {
      const s = b & 0x8000 ? -1 : 1, e = (b >> 10) & 0x1f, m = b & 0x3ff;
      if (e === 0x1f) return m ? NaN : s * Infinity;
      return e ? s * 2 ** (e - 15) * (1 + m / 1024) : s * 2 ** -14 * (m / 1024);
    });
  }
  return t.data;
}

function showOutputs(outputs) {
  const rows = [];
  const json = {};
  for (const [name, t] of Object.entries(outputs)) {
    if (t === null || Array.isArray(t)) {
      rows.push([name, t === null ? 'empty optional' : `sequence of ${t.length}`, '', '', '']);
      json[name] = { kind: t === null ? 'optional' : 'sequence' };
      continue;
    }
    const data = displayData(t);
    let argmax = '';
    if (isScoreVector(t)) {
      let best = 0;
      for (let i = 1; i < data.length; i++) if (data[i] > data[best]) best = i;
      argmax = `${best} (${fmt(data[best])})`;
    }
    const first = Array.from(data.slice(0, 8), fmt).join(', ') + (t.size > 8 ? ', …' : '');
    rows.push([name, t.type, `[${t.dims.join(', ')}]`, first, argmax]);
    json[name] = { type: t.type, dims: t.dims,
      data: Array.from(data.slice(0, MAX_REPORTED), (v) => (typeof v === 'string' ? v : num(v))) };
  }
  table('outputs', ['output', 'type', 'dims', 'first values', 'argmax'], rows);
  return json;
}

// ---- load and run ----

async function loadModel(bytes, name) {
  $('run').disabled = true;
  $('error').textContent = '';
  modelName = name;
  if (session) {
    await session.release();
    session = null;
  }
  setStatus(`loading ${name} …`);
  const t0 = performance.now();
  session = await ort.InferenceSession.create(bytes);
  loadMs = performance.now() - t0;
  $('modelInfo').textContent = `${name}: ${bytes.length} bytes; inputs ${session.inputNames.join(', ')}; ` +
    `outputs ${session.outputNames.join(', ')}; loaded in ${loadMs.toFixed(1)} ms`;
  const metas = showInputs();
  // the image source only when some input can take a picture
  const anyImage = metas.some((m) => imageLayout(m.type ?? 'float32', concreteDims(m)));
  if (!anyImage && $('source').value === 'image') $('source').value = 'random';
  sourceChanged();
  $('run').disabled = false;
  setStatus('');
}

async function runModel() {
  if (!session) throw new Error('load a model first');
  $('error').textContent = '';
  $('run').disabled = true;
  try {
    const feeds = makeFeeds();
    setStatus('running …');
    let t0 = performance.now();
    const outputs = await session.run(feeds);
    const firstMs = performance.now() - t0;
    const runs = Math.max(1, Number($('runs').value) | 0);
    t0 = performance.now();
    for (let i = 0; i < runs; i++) await session.run(feeds);
    const meanMs = (performance.now() - t0) / runs;
    table('timings', ['load', 'first run', `mean of ${runs} runs`],
      [[`${loadMs.toFixed(1)} ms`, `${firstMs.toFixed(2)} ms`, `${meanMs.toFixed(3)} ms`]]);
    const json = showOutputs(outputs);
    setStatus('done');
    publish({ ok: true, model: modelName, input: $('source').value, load_ms: loadMs, first_run_ms: firstMs,
      mean_ms: meanMs, runs, outputs: json });
  } finally {
    $('run').disabled = false;
  }
}

async function fetchModel(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

function sourceChanged() {
  const kind = $('source').value;
  $('imageControls').style.display = kind === 'image' ? '' : 'none';
  $('valuesControls').style.display = kind === 'values' ? '' : 'none';
  $('seedControls').style.display = kind === 'random' ? '' : 'none';
}

// a failure anywhere (a rejected promise included) shows on the page
const guard = (fn) => (...a) => Promise.resolve().then(() => fn(...a)).catch(showError);
window.addEventListener('error', (e) => showError(e.error ?? e.message));
window.addEventListener('unhandledrejection', (e) => showError(e.reason));

$('modelFile').addEventListener('change', guard(async () => {
  const f = $('modelFile').files[0];
  if (f) await loadModel(new Uint8Array(await f.arrayBuffer()), f.name);
}));
$('useBundled').addEventListener('click', guard(async () => loadModel(await fetchModel('model.onnx'), 'model.onnx (bundled)')));
$('imageFile').addEventListener('change', guard(async () => {
  const f = $('imageFile').files[0];
  picture = f ? await createImageBitmap(f) : null;
}));
$('source').addEventListener('change', sourceChanged);
$('run').addEventListener('click', guard(runModel));

// the start the query string asks for
guard(async () => {
  for (const [key, id] of [['input', 'source'], ['values', 'values'], ['seed', 'seed'], ['runs', 'runs'], ['norm', 'norm']]) {
    if (params.has(key)) $(id).value = params.get(key);
  }
  if (params.has('input') && $('source').value !== params.get('input')) {
    throw new Error(`unknown input source '${params.get('input')}'`);
  }
  sourceChanged();
  const m = params.get('model') ?? 'bundled';
  if (m === 'bundled') await loadModel(await fetchModel('model.onnx'), 'model.onnx (bundled)');
  else await loadModel(await fetchModel(m), m);
  if (params.get('input')) $('source').value = params.get('input');
  sourceChanged();
  if (params.get('auto') === '1') await runModel();
})();
