#!/bin/sh
# expected_batched.sh ONNXC EXPECTED [OPTION...] -- SUITE...
# `onnxc test [OPTION...] --expected EXPECTED SUITE...` with the same verdict
# (exit status 0 when exactly the listed cases fail, the other cases pass),
# but the listed cases run in batches: onnxc test runs every --expected case
# in a child process of its own, and under ASan a child's fork, exit and leak
# check cost ~0.14 s CPU a case against ~0.02 in a batch of 16
# (version_conformance_down lists 682 refusals: ~94 of its 156 s of CPU).
#   1. the cases not listed: `onnxc test OPTION... CASE...` (batched, as
#      before); every one must pass;
#   2. the listed cases: `onnxc test OPTION... CASE...` without
#      --skip-unchanged and --convert-only (a listed case always runs, as with
#      --expected); every one must fail (each FAIL line names its case).
# A crash in a batch fails its own case and the rest run again; a batch whose
# process ends abnormally after its cases (a leak) runs again one case a
# process: onnxc test's rules, the same whether a list is given or not. The
# names are "suite/case" (the folder names), as onnxc test makes them; every
# SUITE holds case folders (model.onnx and test_data_set_*); --exclude
# PREFIX applies to both runs.
set -eu
onnxc=$1 expected=$2
shift 2
opts='' opts_b='' excl=''
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --skip-unchanged | --convert-only) opts="$opts $1" ;;
    --exclude) excl="$excl $2"; opts="$opts $1 $2"; opts_b="$opts_b $1 $2"; shift ;;
    --*) opts="$opts $1"; opts_b="$opts_b $1" ;;
    *) opts="$opts $1"; opts_b="$opts_b $1" ;;
  esac
  shift
done
[ "${1:-}" = -- ] || { echo "usage: expected_batched.sh ONNXC EXPECTED [OPTION...] -- SUITE..." >&2; exit 2; }
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

grep -v '^[[:space:]]*#' "$expected" | awk 'NF { print $1 }' | sort -u >"$work/listed"
# every case folder: "suite/case<TAB>path", less the excluded prefixes
# (no basename: a fork and an exec for each of ~1,900 cases cost seconds)
for s in "$@"; do
  s=${s%/}
  for d in "$s"/*/; do
    [ -f "${d}model.onnx" ] || continue
    d=${d%/}
    printf '%s\t%s\n' "${s##*/}/${d##*/}" "$d"
  done
done | awk -v excl="$excl" 'BEGIN { n = split(excl, e, " ") }
  { for (i = 1; i <= n; i++) if (index($1, e[i]) == 1) next; print }' | sort >"$work/all"
awk -F '\t' 'NR == FNR { l[$1] = 1; next } !($1 in l) { print $2 }' "$work/listed" "$work/all" \
  >"$work/a.dirs"
awk -F '\t' 'NR == FNR { l[$1] = 1; next } ($1 in l) { print $1 }' "$work/listed" "$work/all" \
  >"$work/b.names"
awk -F '\t' 'NR == FNR { l[$1] = 1; next } ($1 in l) { print $2 }' "$work/listed" "$work/all" \
  >"$work/b.dirs"
fail=0

# 1. the cases not listed: all pass
if [ -s "$work/a.dirs" ]; then
  # shellcheck disable=SC2046,SC2086 # one word per option and per folder
  if ! "$onnxc" test $opts $(cat "$work/a.dirs") >"$work/a.out" 2>&1; then
    grep -v '^ok ' "$work/a.out" || true
    echo "FAIL: cases not in $expected failed (above)"
    fail=1
  else
    tail -n 1 "$work/a.out"
  fi
fi

# 2. the listed cases: all fail
if [ -s "$work/b.dirs" ]; then
  set +e
  # shellcheck disable=SC2046,SC2086
  "$onnxc" test $opts_b $(cat "$work/b.dirs") >"$work/b.out" 2>&1
  rc=$?
  set -e
  sed -n 's/^FAIL \([^ :]*\): .*/\1/p' "$work/b.out" | sort -u >"$work/b.failed"
  if [ $rc -ne 1 ] || ! grep -q '^0 passed, [0-9]* failed' "$work/b.out"; then
    echo "FAIL: the run of the listed cases (exit status $rc):"
    grep -v '^FAIL ' "$work/b.out" || true
    fail=1
  fi
  # listed cases that did not fail, FAIL lines that name no listed case
  comm -23 "$work/b.names" "$work/b.failed" | sed "s|^|unexpected pass |; s|\$| (listed in $expected)|"
  comm -13 "$work/b.names" "$work/b.failed" | while read -r n; do grep "^FAIL $n" "$work/b.out"; done
  if ! cmp -s "$work/b.names" "$work/b.failed"; then fail=1; fi
  echo "$(wc -l <"$work/b.failed") of $(wc -l <"$work/b.names") listed cases failed as expected" \
    "(their reasons: $expected)"
fi
[ $fail -eq 0 ] && echo "expected_batched: exactly the listed cases fail"
exit $fail
