#!/bin/bash
# Runs a libFuzzer target for SECONDS on a seed corpus made at test time from
# the shared test data (small models and test-data .pb files; never committed).
# usage: fuzz_run.sh FUZZER TESTDATA WORKDIR SECONDS
set -eu
fuzzer=$1 testdata=$2 work=$3 secs=$4
corpus=$work/corpus
rm -rf "$corpus"
mkdir -p "$corpus"
n=0
while IFS= read -r f; do
  n=$((n + 1))
  cp "$f" "$corpus/seed_$n"
done < <(find "$testdata" \( -name 'model.onnx' -o -name '*.pb' \) -size -16k 2>/dev/null |
  sort | awk 'NR % 3 == 0' | head -1500)
echo "seed corpus: $n files"
[ "$n" -gt 0 ]
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "$corpus"
