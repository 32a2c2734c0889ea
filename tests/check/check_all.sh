#!/bin/sh
# Every model of the shared test data, the shared models and the seed
# examples passes `onnxc check` (done-when 1 of issue 4).
# usage: check_all.sh ONNXC SHARED_DIR SOURCE_DIR
onnxc=$1 shared=$2 src=$3
if [ ! -d "$shared/testdata" ] && [ ! -d "$shared/models" ]; then
  echo "no shared data in $shared: skipped"
  exit 77
fi
list=$(mktemp) out=$(mktemp) tmp=$(mktemp -d)
trap 'rm -rf "$list" "$out" "$tmp"' EXIT
find "$shared/testdata" "$shared/models" -name '*.onnx' 2>/dev/null | sort > "$list"
for f in "$src"/examples/*.onnxtxt; do
  [ -e "$f" ] || continue
  # until the text parser lands (branch text), examples cannot be read at all
  if "$onnxc" check --quiet "$f" 2>&1 | grep -q 'text parser is not built'; then
    echo "note: $f not checked: the text parser is not in this build"
    continue
  fi
  if grep -q '"location"' "$f"; then
    # An example with external data is meant to sit next to its weight file,
    # which is generated, not committed: check a copy next to a file of the
    # size the entries ask for (the checker looks at locations, not bytes).
    d="$tmp/$(basename "$f" .onnxtxt)"
    mkdir -p "$d"
    cp "$f" "$d/"
    grep -o '"location": *"[^"]*", *"offset": *"[0-9]*", *"length": *"[0-9]*"' "$f" |
      sed 's/"location": *"\([^"]*\)", *"offset": *"\([0-9]*\)", *"length": *"\([0-9]*\)"/\1 \2 \3/' |
      awk '{ e = $2 + $3; if (e > m[$1]) m[$1] = e } END { for (k in m) print k, m[k] }' |
      while read -r loc size; do head -c "$size" /dev/zero > "$d/$loc"; done
    echo "$d/$(basename "$f")" >> "$list"
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
