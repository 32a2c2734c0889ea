#!/bin/sh
# The Bernoulli body draws 1 with probability p (Operators.md): its mean over
# 100000 draws at p = 0.3 and p = 0.9 must be within 0.01 of p (about 7
# standard deviations). usage: bernoulli.sh ONNXC
set -eu
onnxc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$onnxc" schema Bernoulli --opset 22 --ctx-body | sed 's/domain: ""/domain: "local"/' > "$work/body"
for p in 0.3 0.9; do
  {
    cat <<EOT
<ir_version: 10, opset_import: ["" : 22, "local" : 1]>
g () => (float m)
{
   shape = Constant <value = int64[1] {100000}> ()
   p = ConstantOfShape <value = float[1] {$p}> (shape)
   draws = local.Bernoulli (p)
   m = ReduceMean <keepdims = 0> (draws)
}
EOT
    cat "$work/body"
  } > "$work/model.onnxtxt"
  out=$("$onnxc" run "$work/model.onnxtxt")
  mean=$(printf '%s\n' "$out" | sed -n 's/^m: .*\[\(.*\)\]$/\1/p')
  echo "p = $p: mean of the draws $mean"
  awk -v m="$mean" -v p="$p" 'BEGIN { d = m - p; if (d < 0) d = -d; exit !(m != "" && d < 0.01) }'
done
