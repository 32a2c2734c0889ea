#!/bin/sh
# bench/models.sh - single-thread run latency of the real models in
# ../shared/models and of light_resnet50, beside onnxruntime 1.30's figures
# (from ../shared/spec/notes/performance-notes.md and ../shared/models/README.md).
# (bench/ort_latency.mjs measures onnxruntime-node itself beside `onnxc bench`, on the same
# machine and at the same moment, when scripts/setup.sh could install the package.)
#
#   bench/models.sh [BUILD_DIR] [REPS]
#
# Needs the onnxc_latency tool (built with the project: BUILD_DIR/tests/onnxc_latency).
# Inputs: as ../shared/models/README.md says (float inputs filled with arange(n)/n).
# On a shared machine, compare the "cpu" column and ratios, not absolute times.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
reps=${2:-10}
shared=${ONNXC_SHARED:-$here/../shared}
tool=$build/tests/onnxc_latency
if [ ! -x "$tool" ]; then
  echo "missing $tool: build the project first (cmake --build $build)" >&2
  exit 1
fi
models=$shared/models
light=$shared/testdata/light

run() { # name ort_ms model args...
  name=$1 ort=$2 model=$3
  shift 3
  if [ ! -f "$model" ]; then
    printf '%-22s %-48s onnxruntime %s ms\n' "$name" "(model not found)" "$ort"
    return
  fi
  line=$("$tool" "$model" --threads 1 --reps "$reps" "$@" 2>&1 | head -n 1) || true
  printf '%-22s %-48s onnxruntime %s ms\n' "$name" "${line#*: }" "$ort"
}

echo "single-thread latency, $reps runs after one warm-up ($(date -u +%Y-%m-%dT%H:%MZ))"
run PP-OCRv4-det-640 "108-166" "$models/ch_PP-OCRv4_det_infer.onnx" --shape x=1x3x640x640
run openWakeWord-embed "1.7-1.9" "$models/embedding_model.onnx" --shape input_1=1x76x32x1
run melspectrogram "0.2-0.3" "$models/melspectrogram.onnx" --shape input=1x1280
run silero-vad-step "0.3-0.4" "$models/silero_vad_16k_op15.onnx" \
  --shape input=1x512 --shape state=2x1x128 --int sr=16000
run light_resnet50 "72" "$light/light_resnet50.onnx" \
  --expect "$light/light_resnet50_output_0.pb"
