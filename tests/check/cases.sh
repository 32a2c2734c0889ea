#!/bin/sh
# The checker on the text models of tests/check/cases. Each model says what
# each mode must find, in comment lines "# plain: valid", "# full: RULE",
# "# strict: RULE" (a mode not named is not run). RULE must be the rule id
# in brackets on an error line, and the exit status 1.
# The checks run through one `onnxc batch` (a fork a check instead of a start
# of onnxc: under ASan a start costs ~0.2 s CPU, and there are ~150).
# usage: cases.sh ONNXC CASES_DIR
onnxc=$1 dir=$2
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/list"
: >"$work/wants"
for f in "$dir"/*.onnxtxt; do
  for mode in plain full strict; do
    want=$(sed -n "s/^# $mode: *\([a-z0-9-]*\).*/\1/p" "$f")
    [ -n "$want" ] || continue
    case $mode in
      plain) printf 'check\t%s\n' "$f" ;;
      *) printf 'check\t--%s\t%s\n' "$mode" "$f" ;;
    esac >>"$work/list"
    printf '%s %s %s\n' "$want" "$mode" "$f" >>"$work/wants"
  done
done
mkdir "$work/out"
"$onnxc" batch "$work/list" "$work/out" >"$work/status"
[ $? -le 1 ] || { echo "onnxc batch failed"; exit 1; }
n=0
while read -r want mode f; do
  # the exit status, or sigS when a signal ended the check
  rc=$(awk -v n="$n" '$1 == n { print $2 }' "$work/status")
  out=$(cat "$work/out/$n.out" "$work/out/$n.err")
  if [ "$want" = valid ]; then
    ok=$([ "$rc" = 0 ] && echo yes)
  else
    ok=$([ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q "\[$want\]" && echo yes)
  fi
  if [ "$ok" = yes ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $(basename "$f") ($mode): expected $want, got exit $rc:"
    printf '%s\n' "$out" | sed 's/^/  /'
  fi
  n=$((n + 1))
done <"$work/wants"
[ $((pass + fail)) -gt 0 ] || { echo "no cases in $dir"; exit 1; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
