#!/bin/sh
# usage: examples.sh ONNXC SRC_DIR WORK_DIR PROTO_DIR
# The seed examples (examples/*.onnxtxt) pass the checker; the external-data
# perceptron reads its weights.bin; FizzBuzz with
# Limit = 15 gives the 15 strings of the game (expected values written here
# from the rules of FizzBuzz, decoded with protoc).
set -e
onnxc=$1 src=$2 work=$3 protodir=$4
rm -rf "$work" && mkdir -p "$work"
for f in perceptron double root fizzbuzz; do
  "$onnxc" check "$src/examples/$f.onnxtxt"
done
# the external-data perceptron with a weights.bin beside it: weights zero and
# B2 (the last 10 floats, at offset 307200) 100.0, so Out = sigmoid(100) = 1.0
cp "$src/examples/perceptron_external.onnxtxt" "$work/"
head -c 307200 /dev/zero > "$work/weights.bin"
for i in 1 2 3 4 5 6 7 8 9 10; do printf '\000\000\310\102' >> "$work/weights.bin"; done
"$onnxc" check "$work/perceptron_external.onnxtxt"
# X = zeros(1, 64) as a TensorProto (dims 1, 64; FLOAT; raw_data of 256 bytes)
{ printf '\010\001\010\100\020\001\112\200\002'; head -c 256 /dev/zero; } > "$work/x.pb"
"$onnxc" run "$work/perceptron_external.onnxtxt" -i "$work/x.pb" -o "$work/pout"
one='\\000\\000\\200?'
protoc --proto_path="$protodir" --decode=onnx.TensorProto onnx.proto < "$work/pout/output_0.pb" \
  | grep -q "^raw_data: \"\($one\)\{10\}\"$" || { echo "perceptron_external: Out is not ten 1.0"; exit 1; }

# FizzBuzz: Limit = 15 as a TensorProto (int64 scalar: data_type 7, int64_data 15)
printf '\020\007\072\001\017' > "$work/limit.pb"
"$onnxc" run "$src/examples/fizzbuzz.onnxtxt" -i "$work/limit.pb" -o "$work/out"
protoc --proto_path="$protodir" --decode=onnx.TensorProto onnx.proto < "$work/out/output_0.pb" \
  | sed -n 's/^string_data: "\(.*\)"$/\1/p' | tr '\n' ' ' > "$work/got.txt"
want="1 2 fizz 4 buzz fizz 7 8 fizz buzz 11 fizz 13 14 fizzbuzz "
if [ "$(cat "$work/got.txt")" != "$want" ]; then
  echo "FizzBuzz gave: $(cat "$work/got.txt")"
  echo "expected:      $want"
  exit 1
fi
echo "examples ok"
