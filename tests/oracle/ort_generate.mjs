// ort_generate.mjs - the generation loop against onnxruntime-node: builds the
// tiny decoders of tests/generate/make_decoders.py, runs a greedy loop over
// onnxruntime for each layout (no cache, Optimum's decoder-with-past,
// onnxruntime-genai's shared past/present buffer), and checks that
// `onnxc generate` and Python's onnxc.generate (when the extension is built
// in BUILD/python) give the same tokens; then the errors onnxc must report.
//
// usage: node ort_generate.mjs ONNXC GENERATOR [--only a,b,errors,c]
// Exit 77 when node's onnxruntime, python3-onnx or, for c alone, onnxc's
// com.microsoft kernels are missing. Prints the tokens per second of b at one
// thread, onnxc and onnxruntime, for the record.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SKIP, loadOrt, python, runGenerator } from './ort_common.mjs';

const [onnxc, generator, ...rest] = process.argv.slice(2);
const only = rest[0] === '--only' ? rest[1].split(',') : ['a', 'b', 'errors'];
const ort = loadOrt();
if (!ort) process.exit(SKIP);
const work = runGenerator(generator, 'onnxc-generate-');
const manifest = JSON.parse(fs.readFileSync(path.join(work, 'manifest.json'), 'utf8'));
const pyBuild = path.join(path.dirname(onnxc), 'python');
const havePython = fs.existsSync(path.join(pyBuild, 'onnxc', '__init__.py'));
let failures = 0, skipped = 0;
const fail = (what, why) => { failures++; console.log(`FAIL ${what}: ${why}`); };

// the first index of the largest logit (numpy's argmax, onnxruntime-genai's greedy)
function argmaxLast(logits) {
  const V = logits.dims[2], S = logits.dims[1], d = logits.data;
  let best = 0;
  for (let v = 1; v < V; v++) if (d[(S - 1) * V + v] > d[(S - 1) * V + best]) best = v;
  return best;
}

const i64 = (arr, dims) => new ort.Tensor('int64', BigInt64Array.from(arr.map(BigInt)), dims);

// onnxruntime's greedy loop for one layout; returns { tokens, firstMs,
// decodeMs, runMs } (the first token's step, the steps after it, and of
// those the time inside session.run alone)
async function ortGreedy(model, spec, prompt, maxNew, eos, threads) {
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads,
                                                       interOpNumThreads: 1 });
  const ids = prompt.slice(), out = [];
  const past = {};
  if (spec.layout !== 'nocache')
    for (let l = 0; l < spec.layers; l++)
      for (const kind of ['key', 'value']) {
        const len = spec.layout === 'genai' ? spec.max_length : 0;
        past[`past_key_values.${l}.${kind}`] = new ort.Tensor(
          'float32', new Float32Array(spec.heads * len * spec.head), [1, spec.heads, len, spec.head]);
      }
  let done = 0, tFirst = 0, runMs = 0;
  const t0 = performance.now();
  for (let step = 0; out.length < maxNew; step++) {
    let feeds;
    if (spec.layout === 'nocache') {
      feeds = { input_ids: i64(ids, [1, ids.length]) };
    } else {
      const fresh = ids.slice(done), total = ids.length;
      feeds = { input_ids: i64(fresh, [1, fresh.length]),
                attention_mask: i64(new Array(total).fill(1), [1, total]), ...past };
      if (spec.layout === 'optimum')
        feeds.position_ids = i64(fresh.map((_, i) => done + i), [1, fresh.length]);
    }
    const tr = performance.now();
    const r = await s.run(feeds);
    if (step > 0) runMs += performance.now() - tr;
    if (spec.layout !== 'nocache')
      for (const name of Object.keys(past))
        past[name] = r[name.replace('past_key_values.', 'present.')];
    done = ids.length;
    const t = argmaxLast(r.logits);
    out.push(t);
    ids.push(t);
    if (out.length === 1) tFirst = performance.now();
    if (eos.includes(t)) break;
  }
  const t1 = performance.now();
  return { tokens: out, firstMs: tFirst - t0, decodeMs: t1 - tFirst, runMs };
}

function onnxcGenerate(model, prompt, maxNew, extra = []) {
  const r = spawnSync(onnxc, ['generate', model, '--ids', prompt.join(','), '--max-new-tokens',
                              String(maxNew), '--greedy', ...extra], { encoding: 'utf8' });
  return r;
}

function pythonGenerate(model, prompt, maxNew, stream) {
  const code = `import onnxc, sys
ids = [${prompt.join(',')}]
if ${stream ? 'True' : 'False'}:
    toks = list(onnxc.generate(sys.argv[1], ids, max_new_tokens=${maxNew}, stream=True))
else:
    toks = onnxc.generate(onnxc.InferenceSession(sys.argv[1]), ids, max_new_tokens=${maxNew})
print(' '.join(str(t) for t in toks))`;
  return spawnSync(python, ['-c', code, model], { encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: pyBuild, PYTHONDONTWRITEBYTECODE: '1' } });
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

async function compare(name, prompt, maxNew) {
  const spec = manifest.models[name];
  const model = path.join(work, name, 'model.onnx');
  const eos = name === 'c' ? [manifest.vocab - 1] : [];
  const ref = await ortGreedy(model, spec, prompt, maxNew, eos, 1);
  console.log(`${name} (${spec.layout}) onnxruntime: ${ref.tokens.join(' ')}`);
  for (const threads of ['1', '2']) {
    const r = onnxcGenerate(model, prompt, maxNew, ['--threads', threads]);
    if (r.status !== 0) {
      if (name === 'c' && /no kernel for operator/.test(r.stderr)) {
        console.log(`SKIP ${name}: onnxc lacks a kernel: ${r.stderr.trim()}`);
        skipped++;
        return;
      }
      fail(`${name} onnxc --threads ${threads}`, `exit ${r.status}: ${r.stderr.trim()}`);
      continue;
    }
    const got = r.stdout.trim().split(/\s+/).filter((x) => x).map(Number);
    if (!same(got, ref.tokens)) fail(`${name} onnxc --threads ${threads}`, `got ${got.join(' ')}`);
    if (!/first token/.test(r.stderr) || !/tokens\/s/.test(r.stderr))
      fail(`${name} onnxc timings`, `stderr lacks them: ${r.stderr.trim()}`);
    // b's Concats make each present in the loop's buffer (output_buffers)
    if (name === 'b' && !/; 0 cache bytes copied/.test(r.stderr))
      fail(`${name} onnxc in-place cache`, r.stderr.trim());
    // and its graph takes the path that appends to one buffer (generate_kv.c)
    if (name === 'b' && !/; cache in place/.test(r.stderr))
      fail(`${name} onnxc cache appended in place`, r.stderr.trim());
    if (name === 'c') console.log(`  onnxc: ${r.stderr.trim()}`);
  }
  if (!havePython) {
    console.log(`(python: no extension in ${pyBuild}, not compared)`);
    return;
  }
  for (const stream of [false, true]) {
    const r = pythonGenerate(model, prompt, maxNew, stream);
    const got = (r.stdout || '').trim().split(/\s+/).filter((x) => x).map(Number);
    if (r.status !== 0 || !same(got, ref.tokens))
      fail(`${name} python stream=${stream}`, `exit ${r.status}: ${got.join(' ')} ${r.stderr}`);
  }
}

// onnxc must fail with exit status `code` and each of `want` in its message
function expectError(what, args, want, code = 1) {
  const r = spawnSync(onnxc, ['generate', ...args], { encoding: 'utf8' });
  if (r.status !== code) return fail(what, `exit ${r.status}, not ${code}: ${r.stderr}`);
  for (const w of want) if (!r.stderr.includes(w)) fail(what, `message lacks '${w}': ${r.stderr}`);
}

const prompt = [5, 17, 42, 8];
if (only.includes('a')) await compare('a', prompt, 20);
if (only.includes('b')) {
  await compare('b', prompt, 20);
  await compare('b', [3], 12); // a one-token prompt
  // the figure: tokens per second of b at one thread, onnxc and onnxruntime
  const model = path.join(work, 'b', 'model.onnx'), n = 56;
  const ref = await ortGreedy(model, manifest.models.b, prompt, n, [], 1);
  const r = onnxcGenerate(model, prompt, n, ['--threads', '1']);
  const tps = /([0-9.]+) tokens\/s/.exec(r.stderr);
  console.log(`b, ${n} tokens, 1 thread: onnxruntime-node: time to first token ` +
              `${ref.firstMs.toFixed(2)} ms; ${((n - 1) / ref.decodeMs * 1e3).toFixed(1)} ` +
              `tokens/s after it (${((n - 1) / ref.runMs * 1e3).toFixed(1)} counting ` +
              `session.run alone)\n  ${r.stderr.trim()}`);
  if (!tps) fail('b timings', r.stderr);
}
if (only.includes('c')) {
  await compare('c', [5, 17, 42, 8], 20); // ends at the config's EOS
  await compare('c', [3, 1, 4, 1, 5], 40); // 40 tokens, no EOS on the way
}
if (only.includes('errors')) {
  const b = path.join(work, 'b', 'model.onnx');
  expectError('not a decoder', [path.join(work, 'notdecoder', 'model.onnx'), '--ids', '1'],
              ["input 'input_ids' not found"]);
  expectError('empty ids', [b, '--ids', ''], ['--ids'], 2);
  expectError('id beyond the vocabulary', [b, '--ids', '1,100,3'],
              ['token id 100', 'vocabulary of 100']);
  expectError('negative id', [b, '--ids', '1,-4'], ['token id -4']);
  expectError('beyond the context', [path.join(work, 'b_ctx', 'model.onnx'), '--ids', '1,2,3',
                                      '--max-new-tokens', '20'], ['context length 16']);
  expectError('bad top-p', [b, '--ids', '1', '--top-p', '1.5'], ['top-p'], 2);
}
console.log(`${failures} failed${skipped ? `, ${skipped} skipped` : ''}`);
fs.rmSync(work, { recursive: true, force: true });
process.exit(failures ? 1 : skipped ? SKIP : 0);
