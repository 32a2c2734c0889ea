#!/bin/sh
# Regenerates tests/conformance/expected_failures.txt from a run of every
# conformance suite: one line per failing case, "suite/case<TAB>reason",
# sorted by case name so that the list merges line by line.
# usage: tools/update_expected_failures.sh [BUILD_DIR] [TESTDATA_DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
data=${2:-$root/../shared/testdata}
[ -d "$data/node" ] || data=/usr/share/libonnx-testdata/data
out=$root/tests/conformance/expected_failures.txt
# Debian's libonnx-testdata (ONNX 1.12, the fallback when ../shared/testdata is
# absent) has its own list
case "$data" in /usr/share/libonnx-testdata/*) out=$root/tests/conformance/expected_failures_libonnx.txt ;; esac
suites=""
for s in node simple pytorch-converted pytorch-operator light; do
  [ -d "$data/$s" ] && suites="$suites $data/$s"
done
tmp=$(mktemp)
# shellcheck disable=SC2086
"$build/onnxc" test --jobs "$(nproc)" $suites > "$tmp" || true
{
  echo "# Conformance cases expected to fail: \"suite/case<TAB>reason\", sorted."
  echo "# Regenerate with tools/update_expected_failures.sh (do not edit by hand)."
  sed -n 's/^FAIL \([^:]*\): \(.*\)$/\1\t\2/p' "$tmp" | cut -c1-300 | LC_ALL=C sort |
    awk -F'\t' -v reasons="$root/tests/conformance/reasons.txt" '
      BEGIN { while ((getline l < reasons) > 0) if (l !~ /^#/ && index(l, "\t")) {
                split(l, f, "\t"); why[f[1]] = f[2] } }
      { print $1 "\t" (($1 in why) ? why[$1] : $2) }' 
} > "$out"
tail -n 1 "$tmp"
rm -f "$tmp"
echo "wrote $out ($(grep -vc '^#' "$out") cases)"
