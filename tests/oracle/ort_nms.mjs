// ort_nms.mjs - NonMaxSuppression against onnxruntime on seeded boxes: the
// torchvision "batched" form (one class, each class's boxes offset so that
// classes never overlap, thousands kept), several classes at once, corner
// and center boxes, iou thresholds 0 and 0.5 (onnxruntime refuses one
// outside [0, 1]), a score threshold, a max_output_boxes_per_class cap, boxes
// with infinities, and many equal scores. The selected triples must be
// the same, in the same order.
//
//   node tests/oracle/ort_nms.mjs ONNXC_BIN
//
// Exits 77 (skip) when onnxruntime-node is not installed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP, loadOrt, rng, writeTensorProto, readTensorProto } from './ort_common.mjs';

const onnxc = process.argv[2];
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnxc-nms-'));
const r = rng(57);

// name, batches, classes, boxes, groups (offset classes folded into one), center,
// iou, score threshold (null: none), max per class, extras ('inf', 'ties')
const cases = [
  ['batched, 40 groups x 150 boxes', 1, 1, 6000, 40, 0, 0.55, 0.001, 1e9, ''],
  ['3 classes, 2 batches', 2, 3, 400, 1, 0, 0.5, null, 50, ''],
  ['center boxes', 1, 2, 300, 1, 1, 0.4, 0.2, 1000, ''],
  ['iou 0', 1, 1, 500, 4, 0, 0.0, null, 1000, ''],
  ['equal scores', 1, 1, 800, 8, 0, 0.5, null, 1000, 'ties'],
  ['infinite boxes', 1, 1, 300, 1, 0, 0.5, null, 1000, 'inf'],
];
let passed = 0, failed = 0;
for (const [name, B, C, N, groups, center, iou, st, maxOut, extra] of cases) {
  const boxes = new Float32Array(B * N * 4), scores = new Float32Array(B * C * N);
  for (let b = 0; b < B; b++)
    for (let i = 0; i < N; i++) {
      // boxes of group g live in [g * 400, g * 400 + 320): torchvision's offsets
      const off = (i % groups) * 400;
      const y = off + 300 * r(), x = off + 300 * r(), h = 4 + 60 * r(), w = 4 + 60 * r();
      const o = (b * N + i) * 4;
      if (center) boxes.set([x, y, w, h], o);
      else boxes.set(r() < 0.5 ? [y, x, y + h, x + w] : [y + h, x + w, y, x], o);
      if (extra === 'inf' && i % 37 === 0) boxes[o + 2] = Infinity;
    }
  for (let i = 0; i < scores.length; i++)
    scores[i] = extra === 'ties' ? Math.floor(r() * 4) / 4 : r();
  const text = `<ir_version: 8, opset_import: ["" : 11]>\n` +
    `nms (float[${B},${N},4] boxes, float[${B},${C},${N}] scores) => (int64[?,3] sel) ` +
    `<int64[1] mo = {${maxOut}}, float[1] it = {${iou}}` + (st === null ? '' : `, float[1] stv = {${st}}`) +
    `>\n{\n  sel = NonMaxSuppression <center_point_box = ${center}> ` +
    `(boxes, scores, mo, it${st === null ? '' : ', stv'})\n}\n`;
  const txt = path.join(work, 'm.onnxtxt'), onnx = path.join(work, 'm.onnx');
  fs.writeFileSync(txt, text);
  execFileSync(onnxc, ['convert', txt, onnx]);
  const s = await ort.InferenceSession.create(onnx, { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const ref = (await s.run({
    boxes: new ort.Tensor('float32', boxes, [B, N, 4]),
    scores: new ort.Tensor('float32', scores, [B, C, N]),
  })).sel;
  writeTensorProto(path.join(work, 'boxes.pb'), { type: 'float32', dims: [B, N, 4], data: boxes });
  writeTensorProto(path.join(work, 'scores.pb'), { type: 'float32', dims: [B, C, N], data: scores });
  execFileSync(onnxc, ['run', onnx, '-i', `boxes=${path.join(work, 'boxes.pb')}`,
                       '-i', `scores=${path.join(work, 'scores.pb')}`, '-o', path.join(work, 'out')]);
  const got = readTensorProto(path.join(work, 'out', 'output_0.pb'));
  const want = Array.from(ref.data, Number);
  let same = got.data.length === want.length && got.dims[0] === ref.dims[0];
  for (let i = 0; same && i < want.length; i++) same = got.data[i] === want[i];
  console.log(`${same ? 'ok  ' : 'FAIL'} ${name}: ${ref.dims[0]} selected (onnxc ${got.dims[0]})`);
  same ? passed++ : failed++;
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
