#!/bin/sh
# Numeric edge cases (docs/numerics.md): each tests/numerics/*.onnxtxt is run
# with `onnxc run` and its printed outputs must equal the file's `# want:`
# lines in order, or, for a file with an `# error:` line, the run must fail
# with that text on standard error. Every expected value comes from the
# specification or an oracle named in the file, never from onnxc.
# usage: numerics.sh ONNXC DIR
onnxc=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for m in "$dir"/*.onnxtxt; do
  name=$(basename "$m")
  "$onnxc" run "$m" >"$tmp/out" 2>"$tmp/err"
  status=$?
  err=$(sed -n 's/^# error: //p' "$m")
  if [ -n "$err" ]; then
    if [ $status -ne 0 ] && grep -qF -- "$err" "$tmp/err"; then
      pass=$((pass + 1))
    else
      echo "FAIL $name: wanted an error with '$err', got status $status:"
      cat "$tmp/out" "$tmp/err"
      fail=$((fail + 1))
    fi
    continue
  fi
  sed -n 's/^# want: //p' "$m" >"$tmp/want"
  if [ $status -eq 0 ] && [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/out"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name (status $status):"
    diff "$tmp/want" "$tmp/out"
    cat "$tmp/err"
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
