#!/bin/bash
# Round trip of every .onnx under the shared test data and models (and
# Debian's libonnx-testdata when installed): `onnxc convert a.onnx b.onnx`,
# then protoc --decode=onnx.ModelProto must print the same text for a and b.
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
export onnxc protodir work
one() {
  f=$1
  out=$work/o.$BASHPID
  if ! "$onnxc" convert "$f" "$out.onnx" 2>"$out.err"; then
    echo "FAIL convert $f: $(cat "$out.err")"
    rm -f "$out.onnx" "$out.err"
    return
  fi
  if cmp -s "$f" "$out.onnx"; then
    echo SAME
  elif protoc -I"$protodir" --decode=onnx.ModelProto onnx.proto <"$f" >"$out.a" 2>&1 &&
    protoc -I"$protodir" --decode=onnx.ModelProto onnx.proto <"$out.onnx" >"$out.b" 2>&1 &&
    cmp -s "$out.a" "$out.b"; then
    echo TEXT
  else
    echo "FAIL protoc text differs for $f"
  fi
  rm -f "$out.onnx" "$out.err" "$out.a" "$out.b"
}
batch() { for f in "$@"; do one "$f"; done; }
export -f one batch
xargs -d '\n' -P 2 -n 100 bash -c 'batch "$@"' _ <"$list" >"$work/results"
same=$(grep -c '^SAME' "$work/results")
text=$(grep -c '^TEXT' "$work/results")
grep '^FAIL' "$work/results"
fails=$(grep -c '^FAIL' "$work/results")
echo "$total models: $same byte-identical, $text same protoc text, $fails failed"
[ "$fails" -eq 0 ]
