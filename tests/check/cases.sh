#!/bin/sh
# The checker on the text models of tests/check/cases. Each model says what
# each mode must find, in comment lines "# plain: valid", "# full: RULE",
# "# strict: RULE" (a mode not named is not run). RULE must be the rule id
# in brackets on an error line, and the exit status 1.
# usage: cases.sh ONNXC CASES_DIR
onnxc=$1 dir=$2
pass=0 fail=0
for f in "$dir"/*.onnxtxt; do
  for mode in plain full strict; do
    want=$(sed -n "s/^# $mode: *\([a-z0-9-]*\).*/\1/p" "$f")
    [ -n "$want" ] || continue
    case $mode in plain) flag= ;; *) flag=--$mode ;; esac
    out=$("$onnxc" check $flag "$f" 2>&1)
    rc=$?
    if [ "$want" = valid ]; then
      ok=$([ $rc -eq 0 ] && echo yes)
    else
      ok=$([ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q "\[$want\]" && echo yes)
    fi
    if [ "$ok" = yes ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL $(basename "$f") ($mode): expected $want, got exit $rc:"
      printf '%s\n' "$out" | sed 's/^/  /'
    fi
  done
done
[ $((pass + fail)) -gt 0 ] || { echo "no cases in $dir"; exit 1; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
