#!/usr/bin/env bash
# With the benchmark input sizes of ../shared/models/README.md bound, every
# value of the four real models must get a concrete shape.
set -u
onnxc=$1; models=$2
fails=0
check() {
  local m=$1; shift
  local out
  if ! out=$("$onnxc" infer --strict --quiet "$models/$m" "$@" 2>&1); then
    echo "FAIL $m: inference failed: $(echo "$out" | tail -2)"; fails=$((fails + 1)); return
  fi
  # every line is "kind name: type[d1,d2,...]"; a dim that is not a number is symbolic
  local bad
  bad=$(echo "$out" | grep -E '\[[^]]*[^0-9,\[\]][^]]*\]|\[\.\.\.\]|: \?' | head -5)
  if [ -n "$bad" ]; then
    echo "FAIL $m: values without a concrete shape:"; echo "$bad"; fails=$((fails + 1))
  else
    echo "ok   $m: $(echo "$out" | wc -l) values, all concrete"
  fi
}
check ch_PP-OCRv4_det_infer.onnx --input x=1,3,640,640
check embedding_model.onnx --input input_1=1,76,32,1
check melspectrogram.onnx --input input=1,1280
check silero_vad_16k_op15.onnx --input input=1,512 --input state=2,1,128
echo "$((4 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
