#!/bin/sh
# --no-quant-fusion (run and bench): the QDQ convolution runs as the float
# nodes the model writes; without the flag, as one QLinearConvFused node.
# usage: no_quant_fusion.sh ONNXC MODEL INPUT
set -eu
onnxc=$1 model=$2 input=$3
fused=$("$onnxc" bench "$model" --runs 2 --profile)
plain=$("$onnxc" bench "$model" --runs 2 --profile --no-quant-fusion)
echo "$fused" | grep -q "QLinearConvFused" || { echo "not fused: $fused"; exit 1; }
echo "$plain" | grep -q "QLinearConvFused" && { echo "fused despite the flag: $plain"; exit 1; }
echo "$plain" | grep -Eq "^Conv " || { echo "no Conv in the plain run: $plain"; exit 1; }
"$onnxc" run "$model" -i "X=$input" > /dev/null
"$onnxc" run "$model" -i "X=$input" --no-quant-fusion > /dev/null
echo "fused by default, float nodes with --no-quant-fusion"
