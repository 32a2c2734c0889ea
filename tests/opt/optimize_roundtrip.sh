#!/bin/sh
# `onnxc convert --optimize`: the written graph (fused nodes as ai.onnxc
# operators) passes `onnxc check`, shows the fused node, and runs to the
# same bytes as the model as written.
# usage: optimize_roundtrip.sh ONNXC MODEL INPUT FUSED_OP WORKDIR
set -eu
onnxc=$1 model=$2 input=$3 op=$4 work=$5
rm -rf "$work"
mkdir -p "$work/plain" "$work/opt"
"$onnxc" convert "$model" "$work/opt.onnx" --optimize
"$onnxc" check "$work/opt.onnx"
"$onnxc" info "$work/opt.onnx" | grep -q "ai.onnxc *$op" || { echo "no $op in the optimised graph"; exit 1; }
"$onnxc" run "$model" -i "X=$input" -o "$work/plain"
"$onnxc" run "$work/opt.onnx" -i "X=$input" -o "$work/opt"
cmp "$work/plain/output_0.pb" "$work/opt/output_0.pb"
echo "optimised graph: checked, $op present, same output"
