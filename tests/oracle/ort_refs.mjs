// ort_refs.mjs - onnxruntime-node's outputs of the cases a contrib generator
// wrote (tests/contrib/gen_*.py into WORKDIR), for a driver in another
// language to compare with (tests/compile/contrib_cases.py):
//
//   node tests/oracle/ort_refs.mjs WORKDIR
//
// writes WORKDIR/ort_refs.json: case name -> output name -> { type, dims,
// data }, or -> { "error": message } where onnxruntime refused the case,
// for every case with "ort": "compare" and no "error". Non-finite values are
// written as the strings "nan", "inf" and "-inf" (JSON has no NaN). Exits 77
// (skip) without onnxruntime-node.
import fs from 'node:fs';
import path from 'node:path';
import { SKIP, loadOrt, ortOutputs } from './ort_common.mjs';

const work = process.argv[2];
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const cases = JSON.parse(fs.readFileSync(path.join(work, 'cases.json'), 'utf8'));
const finite = (v) => (Number.isFinite(v) ? v : Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf');
const all = {};
for (const c of cases) {
  if (c.error || (c.ort || 'compare') !== 'compare') continue;
  try {
    const refs = await ortOutputs(ort, work, c);
    for (const r of Object.values(refs)) r.data = r.data.map(finite);
    all[c.name] = refs;
  } catch (e) {
    all[c.name] = { error: String(e.message).split('\n')[0].slice(0, 300) };
  }
}
fs.writeFileSync(path.join(work, 'ort_refs.json'), JSON.stringify(all));
