#!/usr/bin/env bash
# Time of type and shape inference (model loading excluded) on the real
# models; issue 5's target is < 10 ms on the PP-OCR detector. Median of RUNS.
set -eu
onnxc=${1:-build/onnxc}
models=${2:-../shared/models}
runs=${RUNS:-15}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for spec in "ch_PP-OCRv4_det_infer.onnx --input x=1,3,640,640" "embedding_model.onnx --input input_1=1,76,32,1" \
            "melspectrogram.onnx --input input=1,1280" "silero_vad_16k_op15.onnx --input input=1,512 --input state=2,1,128"; do
  set -- $spec
  m=$1; shift
  t=$(for _ in $(seq "$runs"); do "$onnxc" infer --quiet --time "$models/$m" "$@" 2>&1 >/dev/null | sed -n 's/^inference: \(.*\) ms/\1/p'; done | median)
  echo "$m: inference ${t} ms (median of $runs)"
done
