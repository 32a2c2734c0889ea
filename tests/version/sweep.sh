#!/bin/sh
# Every conformance case converted to each opset of TARGETS, checked and run:
# a refusal (a clear error naming the node) is allowed, a wrong output or an
# invalid converted model is not. Random cases are left out (tested by
# statistics in tests/unit/test_special.c).
# usage: sweep.sh ONNXC TESTDATA TARGET...
set -u
onnxc=$1 data=$2
shift 2
status=0
for v in "$@"; do
  out=$("$onnxc" test --jobs 2 --opset "$v" --allow-refusal --exclude node/test_bernoulli \
    --exclude node/test_training_dropout "$data/node" "$data/pytorch-converted" \
    "$data/pytorch-operator" "$data/simple")
  rc=$?
  echo "opset $v: $(echo "$out" | tail -1)"
  if [ $rc -ne 0 ]; then
    echo "$out" | grep '^FAIL'
    status=1
  fi
done
exit $status
