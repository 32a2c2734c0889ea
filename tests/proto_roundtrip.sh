#!/bin/bash
# Round trip of every .onnx under the shared test data and models (and
# Debian's libonnx-testdata when installed): `onnxc convert a.onnx b.onnx`
# (batched: `onnxc convert --batch LIST DIR`), then protoc
# --decode=onnx.ModelProto must print the same text for a and b.
# Byte-identical output (the usual case: the encoder writes what protobuf
# C++ writes) is counted and needs no protoc run.
# usage: proto_roundtrip.sh ONNXC SHARED_DIR PROTO_DIR
set -u
onnxc=$1 shared=$2 protodir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
list=$work/list
{
  find "$shared/testdata" "$shared/models" -name '*.onnx' 2>/dev/null
  if command -v dpkg >/dev/null && dpkg -L libonnx-testdata >/dev/null 2>&1; then
    dpkg -L libonnx-testdata | grep '\.onnx$'
  fi
} | sort -u >"$list"
total=$(wc -l <"$list")
if [ "$total" -eq 0 ]; then
  echo "no .onnx files found under $shared" >&2
  exit 1
fi
# `onnxc convert --batch`: the conversion of `onnxc convert a.onnx b.onnx`
# for every file of a list in one process (a process per file cost ~0.1 s
# of CPU each, mostly loading onnxc's shared libraries: most of this test's
# time); two processes, one per half of the list.
split -n l/2 "$list" "$work/part."
parts=$(ls "$work"/part.*)
for p in $parts; do
  mkdir -p "$p.out"
  "$onnxc" convert --batch "$p" "$p.out" >"$p.res" 2>"$p.err" &
done
wait
for p in $parts; do
  cat "$p.res"
  # a batch that stopped early (a crash) leaves files without a line
  if [ "$(wc -l <"$p.res")" -ne "$(wc -l <"$p")" ]; then
    echo "FAIL convert --batch stopped after $(wc -l <"$p.res") of $(wc -l <"$p") files:" \
      "$(tail -3 "$p.err")"
  fi
done >"$work/batch"
same=$(grep -ac '^SAME' "$work/batch")
grep -a "^FAIL" "$work/batch"
fails=$(grep -ac '^FAIL' "$work/batch")
# the outputs that differ in bytes: protoc must print the same text
text=0
while IFS= read -r line; do
  case $line in DIFF\ *) ;; *) continue ;; esac
  line=${line#DIFF }
  out=${line##* } f=${line% *}
  if protoc -I"$protodir" --decode=onnx.ModelProto onnx.proto <"$f" >"$work/a" 2>&1 &&
    protoc -I"$protodir" --decode=onnx.ModelProto onnx.proto <"$out" >"$work/b" 2>&1 &&
    cmp -s "$work/a" "$work/b"; then
    text=$((text + 1))
  else
    echo "FAIL protoc text differs for $f"
    fails=$((fails + 1))
  fi
  rm -f "$out"
done <"$work/batch"
echo "$total models: $same byte-identical, $text same protoc text, $fails failed"
[ "$fails" -eq 0 ]
