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
gen() { # OUT OPSETS SUITES...
  out=$1 opsets=$2
  shift 2
  {
    echo "# Conformance cases that fail after onnxc test --opset $opsets: \"suite/case<TAB>reason\"."
    echo "# Regenerate with tools/update_version_expected.sh (do not edit by hand)."
    "$onnxc" test --jobs 2 --opset "$opsets" "$@" | sed -n 's/^FAIL \([^:]*\): \(.*\)$/\1\t\2/p' |
      while IFS='	' read -r name why; do
        if grep -q "^$name	random" "$root/tests/conformance/expected_failures.txt" &&
          [ "${why#opset conversion refused}" = "$why" ]; then
          why="random: see tests/conformance/expected_failures.txt"
        fi
        printf '%s\t%s\n' "$name" "$why"
      done | LC_ALL=C sort
  } > "$out"
}
gen "$root/tests/version/expected_up.txt" 28 "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
gen "$root/tests/version/expected_down.txt" min,28 "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
gen "$root/tests/version/expected_min.txt" min "$data/node" "$data/pytorch-converted" \
  "$data/pytorch-operator" "$data/simple"
