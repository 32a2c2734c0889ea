#!/usr/bin/env bash
# Strict inference over every model of the conformance data and the real
# models (one onnxc process per 200 models): it must succeed, and every
# inferred graph-output type must agree with the declared one (a conflict is
# an error in --strict).
set -u
onnxc=$1; shared=$2
list=$(mktemp)
{ find "$shared/testdata" -name '*.onnx' 2>/dev/null; find "$shared/models" -name '*.onnx' 2>/dev/null; } | sort > "$list"
out=$(xargs -n 200 "$onnxc" infer --strict --quiet < "$list" 2>&1)
rc=$?
rm -f "$list"
echo "$out" | grep -v ' passed, ' 
echo "$out" | awk '/ passed, / {p += $1; f += $3} END {printf "%d passed, %d failed\n", p, f}'
exit $rc
