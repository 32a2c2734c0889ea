#!/bin/sh
# Every model of the shared test data, the shared models and the seed
# examples passes `onnxc check` (done-when 1 of issue 4).
# usage: check_all.sh ONNXC SHARED_DIR SOURCE_DIR
onnxc=$1 shared=$2 src=$3
if [ ! -d "$shared/testdata" ] && [ ! -d "$shared/models" ]; then
  echo "no shared data in $shared: skipped"
  exit 77
fi
list=$(mktemp) out=$(mktemp)
trap 'rm -f "$list" "$out"' EXIT
find "$shared/testdata" "$shared/models" -name '*.onnx' 2>/dev/null | sort > "$list"
for f in "$src"/examples/*.onnxtxt; do
  [ -e "$f" ] || continue
  # until the text parser lands (branch text), examples cannot be read at all
  if "$onnxc" check --quiet "$f" 2>&1 | grep -q 'text parser is not built'; then
    echo "note: $f not checked: the text parser is not in this build"
    continue
  fi
  echo "$f" >> "$list"
done
n=$(wc -l < "$list")
# one process per batch of models
tr '\n' '\0' < "$list" | xargs -0 "$onnxc" check --quiet > "$out" 2>&1
bad=$(grep -vc ': valid$' "$out")
good=$(grep -c ': valid$' "$out")
if [ "$bad" -ne 0 ] || [ "$good" -ne "$n" ]; then
  grep -v ': valid$' "$out" | head -50
  echo "$good of $n models valid"
  exit 1
fi
echo "all $n models valid"
