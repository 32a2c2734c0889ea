#!/bin/sh
# Every conformance case converted to each opset of TARGETS, checked and run:
# a refusal (a clear error naming the node) is allowed, a wrong output or an
# invalid converted model is not. Random cases are left out (tested by
# statistics in tests/unit/test_special.c).
# `onnxc test --sweep` does every target of a case in one process (one load,
# one fork instead of one per target), and runs a conversion only when it is
# not the same program for the runtime as the conversion to an earlier target
# (same graph, every node bound to the same operator version: the outputs
# were checked with that one); its last line counts both.
# usage: sweep.sh ONNXC TESTDATA TARGET...
set -u
onnxc=$1 data=$2
shift 2
targets=$(echo "$@" | tr ' ' ',')
exec "$onnxc" test --jobs 2 --sweep "$targets" --exclude node/test_bernoulli \
  --exclude node/test_training_dropout "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
