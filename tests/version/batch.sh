#!/bin/sh
# `onnxc batch LIST OUTDIR`: each line runs as its own onnxc command (a
# conversion, a run of its output, an unknown command, a missing file), in
# order with --jobs 1, and the statuses, outputs and errors are those of
# separate processes: the run's output equals the one of a separate
# `onnxc run`, the failures' messages land in N.err.
# usage: batch.sh ONNXC CASE_DIR
set -eu
onnxc=$1 case=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/out" "$t/o1" "$t/o2"
tab=$(printf '\t')
{
  echo "convert${tab}$case/model.onnx${tab}$t/m9.onnx${tab}--opset${tab}13"
  echo ""
  echo "run${tab}$t/m9.onnx${tab}-o${tab}$t/o1${tab}-i${tab}$case/test_data_set_0/input_0.pb"
  echo "no-such-command"
  echo "convert${tab}$t/missing.onnx${tab}$t/x.onnx"
} > "$t/list"
rc=0
"$onnxc" batch "$t/list" "$t/out" > "$t/status" || rc=$?
printf '0 0\n1 0\n2 2\n3 1\n' | cmp - "$t/status" || { echo "FAIL: statuses:"; cat "$t/status"; exit 1; }
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, not 1"; exit 1; }
grep -q "unknown command 'no-such-command'" "$t/out/2.err" || { echo "FAIL: 2.err"; exit 1; }
grep -q "missing.onnx" "$t/out/3.err" || { echo "FAIL: 3.err"; exit 1; }
[ ! -s "$t/out/1.err" ] || { echo "FAIL: the run wrote errors"; cat "$t/out/1.err"; exit 1; }
"$onnxc" run "$t/m9.onnx" -o "$t/o2" -i "$case/test_data_set_0/input_0.pb"
cmp "$t/o1/output_0.pb" "$t/o2/output_0.pb" || { echo "FAIL: the batch's run differs"; exit 1; }
# every line passing: exit 0, and two at a time
printf 'info%s%s/model.onnx\ninfo%s%s/model.onnx\n' "$tab" "$case" "$tab" "$case" > "$t/list2"
"$onnxc" batch "$t/list2" "$t/out" --jobs 2 | sort > "$t/status2"
printf '0 0\n1 0\n' | cmp - "$t/status2" || { echo "FAIL: --jobs 2"; exit 1; }
grep -q . "$t/out/0.out" || { echo "FAIL: info's output not in 0.out"; exit 1; }
echo "onnxc batch: statuses, outputs and errors as separate processes"
