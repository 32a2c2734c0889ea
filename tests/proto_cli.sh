#!/bin/bash
# onnxc info / convert on real models: facts checked against what
# protoc --decode prints for the same files, option handling, errors.
# usage: proto_cli.sh ONNXC SHARED_DIR
set -u
onnxc=$1 shared=$2
fails=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
has() { # has WHAT TEXT-FILE
  if ! grep -qxF -- "$1" "$2"; then
    echo "missing line: '$1' in $2:"
    sed 's/^/  | /' "$2"
    fails=$((fails + 1))
  fi
}
m=$shared/testdata/node/test_loop11/model.onnx
"$onnxc" info "$m" >"$work/info" || fails=$((fails + 1))
has "ir_version: 6" "$work/info"
has "opset_import: ai.onnx 11" "$work/info"
has "producer: backend-test " "$work/info"
has "  trip_count: int64[]" "$work/info"
has "  res_scan: float[5,1]" "$work/info"
has "nodes: 1 (+ 9 in subgraphs and functions)" "$work/info"
has "functions: 0" "$work/info"

m=$shared/models/silero_vad_16k_op15.onnx
"$onnxc" info "$m" >"$work/info2" || fails=$((fails + 1))
"$onnxc" convert "$m" "$work/m.onnx" --external-data w.bin --size-threshold 100000 --align 65536 ||
  fails=$((fails + 1))
"$onnxc" info "$work/m.onnx" >"$work/info3" || fails=$((fails + 1))
# the same model but for the initializer line
diff <(grep -v -e '^model:' -e '^initializers:' "$work/info2") \
  <(grep -v -e '^model:' -e '^initializers:' "$work/info3") || fails=$((fails + 1))
grep -q '^initializers: .*external: [1-9][0-9]* tensors' "$work/info3" || {
  echo "no external tensors after --external-data"
  fails=$((fails + 1))
}
size=$(stat -c %s "$work/w.bin")
[ "$size" -gt 0 ] || fails=$((fails + 1))
"$onnxc" convert "$work/m.onnx" "$work/back.onnx" --no-external-data || fails=$((fails + 1))
cmp "$m" "$work/back.onnx" || fails=$((fails + 1))

# help lists every option; bad use gives status 2, bad files status 1
"$onnxc" convert --help >"$work/help" || fails=$((fails + 1))
for o in --external-data --size-threshold --align --no-external-data --skip-checksum --help; do
  grep -q -- "$o" "$work/help" || { echo "convert --help lacks $o"; fails=$((fails + 1)); }
done
"$onnxc" info --help | grep -q -- "--help" || fails=$((fails + 1))
"$onnxc" convert a.onnx b.onnx --bogus 2>/dev/null
[ $? -eq 2 ] || { echo "unknown option: status not 2"; fails=$((fails + 1)); }
"$onnxc" convert "$work/none.onnx" "$work/x.onnx" 2>"$work/err"
[ $? -eq 1 ] || fails=$((fails + 1))
has "onnxc: $work/none.onnx: No such file or directory" "$work/err"
head -c 500 "$shared/testdata/node/test_loop11/model.onnx" >"$work/cut.onnx"
"$onnxc" info "$work/cut.onnx" 2>"$work/err2" >/dev/null
[ $? -eq 1 ] || fails=$((fails + 1))
grep -q "^onnxc: $work/cut.onnx: graph.*at byte [0-9]*$" "$work/err2" || {
  echo "truncated model: unexpected message: $(cat "$work/err2")"
  fails=$((fails + 1))
}
echo "$fails failures"
[ "$fails" -eq 0 ]
