// ortweb_bench.mjs - `node js/ortweb_bench.mjs MODEL [--threads N] [--runs N]
// [--warmup N] [-i NAME=FILE.npy]...`: js/bench.mjs's measure of
// onnxruntime-web 1.30 (its WebAssembly backend, in node), the peer onnxc's
// wasm build is compared with. onnxruntime-web is found in ORTWEB_DIR, else
// in build/ortweb/node_modules (scripts/setup.sh installs it there).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { makeInputs, parseArgs, timeRuns } from './bench_common.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = process.env.ORTWEB_DIR ?? join(root, 'build', 'ortweb', 'node_modules', 'onnxruntime-web');
const entry = join(pkg, 'dist', 'ort.node.min.mjs');

try {
  const o = parseArgs(process.argv.slice(2), 'js/ortweb_bench.mjs');
  if (o.profile) throw new Error('--profile is onnxc\'s own (js/bench.mjs)');
  if (!existsSync(entry)) throw new Error(`${entry} not found: run scripts/setup.sh (or set ORTWEB_DIR)`);
  const ort = await import(pathToFileURL(entry).href);
  ort.env.wasm.numThreads = o.threads;
  ort.env.wasm.simd = true;
  const t0 = performance.now();
  const bytes = readFileSync(o.model);
  const t1 = performance.now();
  const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const t2 = performance.now();
  const meta = s.inputNames.map((name, i) => {
    const m = s.inputMetadata?.[i] ?? {};
    return { name, type: m.type, dims: m.shape?.map((d) => (typeof d === 'number' ? d : -1)) };
  });
  const feeds = makeInputs(o, meta, ort.Tensor);
  await timeRuns(o, t1 - t0, t2 - t1, o.threads, () => s.run(feeds));
  await s.release();
} catch (e) {
  console.error(`onnxruntime-web: ${e.message}`);
  process.exit(1);
}
