#!/bin/sh
# --list-passes and --disable-pass (run, bench, convert): the list names every
# pass that has a model under tests/opt/passes/ and constant_folding; with
# conv_epilogue (or matmul_epi and matmul_transb) disabled, `run` writes the
# outputs of the run with every pass disabled, bit for bit, and the profile
# shows the plain operators; an unknown name fails naming it.
# usage: disable_pass.sh ONNXC SOURCE_DIR WORKDIR
set -eu
onnxc=$1 src=$2 work=$3
model=$src/tests/opt/conv_relu_dense.onnxtxt
rm -rf "$work" && mkdir -p "$work"
list=$("$onnxc" convert --optimize --list-passes)
[ "$("$onnxc" convert --list-passes)" = "$list" ] || { echo "plain --list-passes differs"; exit 1; }
[ "$("$onnxc" run --list-passes)" = "$list" ] || { echo "run --list-passes differs"; exit 1; }
all=
for f in "$src"/tests/opt/passes/*.onnxtxt; do
  case $f in *.expected.onnxtxt|*.disabled.onnxtxt|*@*) continue ;; esac
  name=$(basename "$f" .onnxtxt)
  echo "$list" | grep -Eq "^$name +level 1 +on " || { echo "--list-passes lacks $name: $list"; exit 1; }
  all=$all${all:+,}$name
done
echo "$list" | grep -Eq "^constant_folding +level 1 +on " || { echo "no constant_folding"; exit 1; }
[ "$(echo "$list" | wc -l)" -eq "$(echo "$all" | tr ',' '\n' | wc -l)" ] ||
  [ "$(echo "$list" | wc -l)" -eq $(($(echo "$all" | tr ',' '\n' | wc -l) + 1)) ] ||
  { echo "--list-passes lists passes without a model under tests/opt/passes: $list"; exit 1; }
# inputs as .npy: X [1,2,4,4] and A [3,4] float32, values 1, -0.5, 2, -1.5, ...
npy() { # npy FILE SHAPE COUNT
  hdr="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
  pad=$((118 - ${#hdr} - 1)) # 128 bytes in all
  { printf '\223NUMPY\001\000\166\000%s%*s\n' "$hdr" "$pad" ''
    i=0
    while [ $i -lt "$3" ]; do
      case $((i % 4)) in
        0) printf '\000\000\200\077' ;; 1) printf '\000\000\000\277' ;;
        2) printf '\000\000\000\100' ;; 3) printf '\000\000\300\277' ;;
      esac
      i=$((i + 1))
    done; } > "$1"
}
npy "$work/x.npy" "(1, 2, 4, 4)" 32
npy "$work/a.npy" "(3, 4)" 12
ins="-i X=$work/x.npy -i A=$work/a.npy"
mkdir -p "$work/off" "$work/epi" "$work/mm"
# shellcheck disable=SC2086
"$onnxc" run "$model" $ins -o "$work/off" --disable-pass "$all" > /dev/null
# shellcheck disable=SC2086
"$onnxc" run "$model" $ins -o "$work/epi" --disable-pass conv_epilogue > /dev/null
# shellcheck disable=SC2086
"$onnxc" run "$model" $ins -o "$work/mm" --disable-pass matmul_epi,matmul_transb > /dev/null
cmp "$work/off/output_0.pb" "$work/epi/output_0.pb" || { echo "Y differs with conv_epilogue off"; exit 1; }
cmp "$work/off/output_1.pb" "$work/mm/output_1.pb" || { echo "Z differs with matmul_epi off"; exit 1; }
fused=$("$onnxc" bench "$model" --runs 1 --warmup 0 --profile)
plain=$("$onnxc" bench "$model" --runs 1 --warmup 0 --profile --disable-pass conv_epilogue \
  --disable-pass matmul_epi)
echo "$fused" | grep -q "FusedConv" || { echo "no FusedConv by default: $fused"; exit 1; }
echo "$fused" | grep -q "MatMulFused" || { echo "no MatMulFused by default: $fused"; exit 1; }
echo "$plain" | grep -Eq "FusedConv|MatMulFused" && { echo "fused despite --disable-pass: $plain"; exit 1; }
"$onnxc" convert "$model" "$work/o.onnxtxt" --optimize --disable-pass conv_epilogue
grep -q FusedConv "$work/o.onnxtxt" && { echo "convert fused despite --disable-pass"; exit 1; }
grep -q MatMulFused "$work/o.onnxtxt" || { echo "convert did not fuse the MatMul"; exit 1; }
# an unknown name fails with a message naming it
for cmd in run bench; do
  if "$onnxc" $cmd "$model" --disable-pass cse,bogus_pass > "$work/out" 2> "$work/err"; then
    echo "$cmd accepted an unknown pass"; exit 1
  fi
  grep -q "unknown graph pass 'bogus_pass'" "$work/err" || { echo "$cmd: $(cat "$work/err")"; exit 1; }
done
if "$onnxc" convert "$model" "$work/b.onnx" --optimize --disable-pass bogus_pass 2> "$work/err"; then
  echo "convert accepted an unknown pass"; exit 1
fi
grep -q "unknown graph pass 'bogus_pass'" "$work/err" || { echo "convert: $(cat "$work/err")"; exit 1; }
echo "passes listed; disabled by name in run, bench and convert; unknown names refused"
