#!/bin/sh
# Attention-25 sliding windows have no conformance case: run the Attention
# kernel (src/ops/attention.c, an independent implementation) on the inputs of
# node/test_attention_4d with window attributes, then check that the body
# built for the same node (onnxc test --ctx-bodies) gives the same outputs.
# usage: windows.sh ONNXC NODE_DATA_DIR
set -eu
onnxc=$1
src=$2/test_attention_4d/test_data_set_0
[ -d "$src" ] || { echo "no $src"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mk() {
  d=$work/$1
  mkdir -p "$d/test_data_set_0"
  cat > "$d/model.onnxtxt" <<EOT
<ir_version: 11, opset_import: ["" : 25]>
g (float[2,3,4,8] Q, float[2,3,6,8] K, float[2,3,6,8] V) => (float[2,3,4,8] Y)
{
   Y = Attention <$2> (Q, K, V)
}
EOT
  "$onnxc" convert "$d/model.onnxtxt" "$d/model.onnx"
  rm "$d/model.onnxtxt"
  cp "$src"/input_0.pb "$src"/input_1.pb "$src"/input_2.pb "$d/test_data_set_0/"
  "$onnxc" run "$d/model.onnx" -i "$src/input_0.pb" -i "$src/input_1.pb" -i "$src/input_2.pb" \
    -o "$d/test_data_set_0" > /dev/null
}
mk left2_right0 "left_window_size = 2, right_window_size = 0"
mk left1_right2 "left_window_size = 1, right_window_size = 2"
mk causal_left1 "is_causal = 1, left_window_size = 1"
mk right1 "right_window_size = 1"
"$onnxc" test --jobs 1 --ctx-bodies "$work"
