#!/bin/sh
# usage: fuzz_text.sh FUZZER SEED_DIR WORK_DIR SECONDS
# Runs the text-parser fuzzer for SECONDS on a corpus seeded with the .onnxtxt
# files of SEED_DIR. Exit status is libFuzzer's (non-zero on any finding).
set -e
fuzzer=$1 seeds=$2 work=$3 secs=$4
mkdir -p "$work/corpus"
cp "$seeds"/*.onnxtxt "$work/corpus/" 2>/dev/null || true
cd "$work"
exec "$fuzzer" -max_total_time="$secs" -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 corpus
