#!/bin/sh
# Regenerates tests/version/expected_{up,min,down}.txt: the conformance
# cases that fail after opset conversion (`onnxc test --opset 28`,
# `--opset min` and `--opset min,28`), with the reason (a refusal names the
# node and why).
# Usage: tools/update_version_expected.sh [BUILD_DIR]   (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
onnxc=${1:-$root/build}/onnxc
data=$root/../shared/testdata
# random outputs (tested by statistics elsewhere): not run, as in tests/version.cmake
RANDOM_CASES="--exclude node/test_bernoulli --exclude node/test_training_dropout"
gen() { # OUT OPSETS SUITES...
  out=$1 opsets=$2
  shift 2
  {
    echo "# Conformance cases that fail after onnxc test --opset $opsets: \"suite/case<TAB>reason\"."
    echo "# Regenerate with tools/update_version_expected.sh (do not edit by hand)."
    "$onnxc" test --jobs 2 --opset "$opsets" $RANDOM_CASES "$@" | sed -n 's/^FAIL \([^:]*\): \(.*\)$/\1\t\2/p' |
      LC_ALL=C sort
  } > "$out"
}
gen "$root/tests/version/expected_up.txt" 28 "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
gen "$root/tests/version/expected_down.txt" min,28 "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
gen "$root/tests/version/expected_min.txt" min "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
