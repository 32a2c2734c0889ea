#!/bin/sh
# What `onnxc test --sweep` and `--opset --skip-unchanged` leave out must not
# hide a wrong output: a copy of node/test_abs (opset 13; Abs changed at 6
# and 13) whose expected output is test_relu's (wrong for Abs) fails at the
# first opset of the sweep, and with --skip-unchanged when the case is listed
# in --expected (then it is run even though the conversion to 28 changes
# nothing for the runtime); a copy of test_abs as it is passes, the opsets
# binding Abs-13 again counted as not run again.
# usage: sweep_catches.sh ONNXC TESTDATA
set -u
onnxc=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
mkdir -p "$work/bad" "$work/good"
cp -r "$data/node/test_abs" "$work/bad/test_abs"
cp "$data/node/test_relu/test_data_set_0/output_0.pb" "$work/bad/test_abs/test_data_set_0/"
cp -r "$data/node/test_abs" "$work/good/test_abs"
check() { # what, expected status, output pattern, command...
  what=$1 want=$2 pat=$3
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! echo "$out" | grep -q "$pat"; then
    echo "FAIL $what: status $rc, output: $out"
    status=1
  else
    echo "ok $what"
  fi
}
check "sweep catches a wrong output" 1 "FAIL bad/test_abs: opset 13:" \
  "$onnxc" test --jobs 1 --sweep 13,15,17 "$work/bad"
check "sweep runs a program once" 0 "1 conversions run, 2 not run again" \
  "$onnxc" test --jobs 1 --sweep 13,15,17 "$work/good"
# 11 binds Abs-6, 13 and 15 Abs-13
check "sweep runs another operator version" 0 "2 conversions run, 1 not run again" \
  "$onnxc" test --jobs 1 --sweep 11,13,15 "$work/good"
check "skip-unchanged skips an unchanged conversion" 0 "1 conversions not run" \
  "$onnxc" test --jobs 1 --opset 28 --skip-unchanged "$work/good"
echo "bad/test_abs wrong expected output" >"$work/expected.txt"
check "skip-unchanged runs a listed case" 0 "1 expected failures, 0 unexpected" \
  "$onnxc" test --jobs 1 --opset 28 --skip-unchanged --expected "$work/expected.txt" "$work/bad"
exit $status
