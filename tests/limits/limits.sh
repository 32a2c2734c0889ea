#!/bin/sh
# Resource limits against hostile models (tests/limits/*.onnxtxt): with
# --max-memory each fails with one clear line naming the limit and the node,
# and never takes the process down; deep nesting fails in the parser and the
# decoder with its own message.
# usage: limits.sh ONNXC DIR
set -u
onnxc=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect_fail() { # name, status wanted, text wanted, command...
  name=$1; want_status=$2; want_text=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  status=$?
  if [ "$status" -ne "$want_status" ]; then
    echo "FAIL $name: exit status $status, wanted $want_status"; cat "$tmp/err"; fail=1; return
  fi
  if ! grep -q -- "$want_text" "$tmp/err"; then
    echo "FAIL $name: stderr lacks '$want_text':"; cat "$tmp/err"; fail=1; return
  fi
  echo "ok $name: $(head -c 300 "$tmp/err")"
}

python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, dtype, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (dtype, shape)
    header = header + " " * (63 - len(header) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
npy(d + "/shape.npy", "<i8", "(2,)", struct.pack("<qq", 50000, 50000))
npy(d + "/x.npy", "<f4", "()", struct.pack("<f", 1.0))
# text nesting: 300 levels of graph attributes
inner = "g0 () => (float y) { y = Constant <value = float {1}> () }"
s = inner
for i in range(300):
    s = "b%d () => (float y) { y = If (c) <then_branch = %s, else_branch = %s> () }" % (i, s, inner)
with open(d + "/deep.onnxtxt", "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 18]>\nmain (bool c) => (float y) { y = If (c) <then_branch = '
            + s + ', else_branch = ' + inner + '> () }\n')
PY

expect_fail huge_shape_run 1 "exceeds the memory limit\|exceed the memory limit of 1073741824" \
  "$onnxc" run "$dir/huge_shape.onnxtxt" -i "$tmp/shape.npy" --max-memory 1G
grep -q "ConstantOfShape" "$tmp/err" || { echo "FAIL huge_shape_run: the node is not named"; fail=1; }
expect_fail huge_constant_create 1 "exceed the memory limit of 268435456" \
  "$onnxc" run "$dir/huge_constant.onnxtxt" -i "$tmp/x.npy" --max-memory 256M
expect_fail endless_sequence 1 "exceed the memory limit of 67108864" \
  "$onnxc" run "$dir/endless_sequence.onnxtxt" -i "$tmp/x.npy" --max-memory 64M
grep -q "Loop" "$tmp/err" || { echo "FAIL endless_sequence: the Loop is not named"; fail=1; }
expect_fail endless_references 1 "exceed the memory limit of 65536" \
  "$onnxc" run "$dir/endless_references.onnxtxt" -i "$tmp/x.npy" --max-memory 64K
expect_fail bad_size 2 "bad --max-memory" "$onnxc" run "$dir/huge_shape.onnxtxt" --max-memory 12Q
expect_fail deep_text 2 "nesting deeper than" "$onnxc" check "$tmp/deep.onnxtxt"
# the same limit lets a model that fits run: a 2x3 shape
python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }"
header = header + " " * (63 - len(header) % 64) + "\n"
with open(d + "/small.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<qq", 2, 3))
PY
if "$onnxc" run "$dir/huge_shape.onnxtxt" -i "$tmp/small.npy" --max-memory 1M >"$tmp/out" 2>&1 &&
   grep -q "\[2,3\]" "$tmp/out"; then
  echo "ok small_shape_fits"
else
  echo "FAIL small_shape_fits:"; cat "$tmp/out"; fail=1
fi
exit $fail
