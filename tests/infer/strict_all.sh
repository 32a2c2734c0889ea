#!/usr/bin/env bash
# Strict inference over every model of the conformance data and the real
# models: it must succeed, and every inferred graph-output type must agree
# with the declared one (a conflict is an error in --strict).
set -u
onnxc=$1; shared=$2
fails=0; total=0
list=$(mktemp)
{ find "$shared/testdata" -name '*.onnx' 2>/dev/null; find "$shared/models" -name '*.onnx' 2>/dev/null; } | sort > "$list"
while read -r m; do
  total=$((total + 1))
  if ! out=$("$onnxc" infer --strict --quiet "$m" 2>&1 >/dev/null); then
    fails=$((fails + 1))
    echo "FAIL $m: $(echo "$out" | head -3)"
  fi
done < "$list"
rm -f "$list"
echo "$((total - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
