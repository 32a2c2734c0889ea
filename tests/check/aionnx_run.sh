#!/bin/sh
# A model that imports and names the default domain as "ai.onnx" runs, and
# converts to other opsets, with the values Sigmoid then Relu give for
# [-1, 2]: 1/(1+e) = 0.268941 and 1/(1+e^-2) = 0.880797.
# usage: aionnx_run.sh ONNXC MODEL TMPDIR
onnxc=$1 model=$2 tmp=$3
mkdir -p "$tmp" || exit 1
want='Y: tensor(float)[2] = [0.268941, 0.880797]'
fail=0
check() {
  got=$("$onnxc" run "$1" 2>&1)
  [ "$got" = "$want" ] || { echo "FAIL $1: $got"; fail=1; }
}
check "$model"
for v in 13 19 21; do
  "$onnxc" convert "$model" "$tmp/aionnx_$v.onnx" --opset $v || { echo "FAIL convert to $v"; fail=1; continue; }
  check "$tmp/aionnx_$v.onnx"
done
[ $fail -eq 0 ] && echo "4 passed, 0 failed"
exit $fail
