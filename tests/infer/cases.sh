#!/bin/sh
# Shape inference on the text models of tests/infer/cases. Each model lists
# lines "# expect: value NAME: TYPE" (or input/output); `onnxc infer` must
# print each such line (TYPE may hold shell wildcards: unk__* for a fresh
# symbol; brackets and ? match themselves).
# usage: cases.sh ONNXC CASES_DIR
onnxc=$1 dir=$2
pass=0 fail=0
for f in "$dir"/*.onnxtxt; do
  out=$("$onnxc" infer "$f" 2>&1) || { echo "FAIL $(basename "$f"): infer failed: $out"; fail=$((fail + 1)); continue; }
  got=$(printf '%s\n' "$out" | sed 's/  */ /g')
  exp=$(sed -n 's/^# expect: *//p' "$f")
  [ -n "$exp" ] || { echo "FAIL $(basename "$f"): no expect lines"; fail=$((fail + 1)); continue; }
  while IFS= read -r want; do
    pat=$(printf '%s' "$want" | sed 's/\[/\\[/g; s/\]/\\]/g; s/?/\\?/g')
    found=no
    while IFS= read -r line; do
      case $line in $pat) found=yes; break ;; esac
    done <<EOT
$got
EOT
    if [ $found = yes ]; then pass=$((pass + 1)); else
      fail=$((fail + 1))
      echo "FAIL $(basename "$f"): no line '$want' in:"
      printf '%s\n' "$got" | sed 's/^/  /'
    fi
  done <<EOT
$exp
EOT
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
