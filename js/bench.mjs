// bench.mjs - `node js/bench.mjs MODEL [--threads N] [--runs N] [--warmup N]
// [-i NAME=FILE.npy]... [--profile]`: run latency of onnxc's WebAssembly
// build in node, printed as `onnxc bench` prints it (js/ortweb_bench.mjs: the
// same for onnxruntime-web). The module's start-up (compiling the .wasm) is
// not counted. --profile times every node of the measured runs and prints
// the time per operator type and of the slowest nodes, as `onnxc bench
// --profile` does (the timing itself adds a little per node).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { InferenceSession, Tensor } from './src/index.mjs';
import { loadModule } from './src/loader.mjs';
import { makeInputs, parseArgs, timeRuns } from './bench_common.mjs';

try {
  const o = parseArgs(process.argv.slice(2), 'js/bench.mjs');
  await loadModule(o.threads);
  const t0 = performance.now();
  const bytes = readFileSync(o.model);
  const t1 = performance.now();
  const s = await InferenceSession.create(bytes, { threads: o.threads, profile: o.profile });
  const t2 = performance.now();
  const feeds = makeInputs(o, s.inputMetadata, Tensor);
  await timeRuns(o, t1 - t0, t2 - t1, s.threads, () => s.run(feeds), o.profile ? () => s.resetProfile() : undefined);
  if (o.profile) process.stdout.write(s.profile(15));
  await s.release();
} catch (e) {
  console.error(e.message.startsWith("onnxc") ? e.message : `onnxc: ${e.message}`);
  process.exit(1);
}
