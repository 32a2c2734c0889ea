#!/bin/bash
# Builds a fuzz target's seed corpus at test time (seeds are made from the
# shared test data and the repository's examples, never committed) and runs
# the target for SECONDS with its dictionary. Exit status is libFuzzer's.
# usage: seed.sh KIND FUZZER ONNXC TESTDATA SOURCE_DIR WORK_DIR SECONDS
# With FUZZ_RUNS set, the run is deterministic (-seed=1, that many inputs;
# SECONDS stays a cap), as `make test` wants: the same inputs on every run.
# FUZZER `--seeds-only`: build the corpus in WORK_DIR/corpus and stop (make
# test builds the text corpus once, for fuzz_text and fuzz_session: its 250
# `onnxc print` calls under ASan cost more CPU than fuzz_text's fuzzing).
# With FUZZ_SEEDS set (a corpus folder built so), the text kind copies it.
#   KIND: models (binary models), convert (an opset byte + a model),
#         text (text models), external (length + model + data file),
#         tensors (a selector byte + a .pb or .npy file), serve (requests,
#         tests/fuzz/fuzz_serve.c)
set -eu
kind=$1 fuzzer=$2 onnxc=$3 testdata=$4 src=$5 work=$6 secs=$7
corpus=$work/corpus
rm -rf "$work"
mkdir -p "$corpus"
n=0
small_models() {
  find "$testdata" -name model.onnx -size -16k 2>/dev/null | sort | awk 'NR % 4 == 0' | head -400
}
le32() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 24 & 255)))"; }
case $kind in
  models)
    while IFS= read -r f; do n=$((n + 1)); cp "$f" "$corpus/seed_$n"; done < <(small_models) ;;
  convert)
    while IFS= read -r f; do
      n=$((n + 1))
      { printf "\\x$(printf %02x $((n % 28)))"; cat "$f"; } > "$corpus/seed_$n"
    done < <(small_models) ;;
  text)
    if [ -n "${FUZZ_SEEDS:-}" ]; then
      cp "$FUZZ_SEEDS"/* "$corpus/"
      n=$(find "$corpus" -type f | wc -l)
    else
      for f in "$src"/examples/*.onnxtxt "$src"/tests/check/cases/*.onnxtxt "$src"/tests/fuzz/regressions/fuzz_session/*; do
        [ -f "$f" ] || continue
        n=$((n + 1)); cp "$f" "$corpus/seed_$n"
      done
      # the node models in the text syntax, through one `onnxc batch` (a fork a
      # model, not a start: an ASan start of onnxc costs ~0.25 s CPU, a fork
      # half that); numbered seed_N as with one `onnxc print` a model, a model
      # that does not print leaving its number out
      find "$testdata/node" -name model.onnx -size -4k 2>/dev/null | sort | awk 'NR % 6 == 0' |
        head -250 | awk '{ printf "print\t%s\n", $0 }' > "$work/print.list"
      mkdir -p "$work/print"
      "$onnxc" batch "$work/print.list" "$work/print" > "$work/print.status" || true
      while read -r k st; do
        if [ "$st" = 0 ]; then cp "$work/print/$k.out" "$corpus/seed_$((n + k + 1))"; fi
      done < "$work/print.status"
      n=$((n + $(wc -l < "$work/print.list")))
      rm -rf "$work/print" "$work/print.list" "$work/print.status"
    fi ;;
  external)
    tmp=$work/ext
    mkdir -p "$tmp"
    for f in "$src"/examples/perceptron.onnxtxt "$src"/examples/double.onnxtxt; do
      n=$((n + 1))
      "$onnxc" convert "$f" "$tmp/m.onnx" --external-data weights.bin --size-threshold 0 >/dev/null
      size=$(stat -c %s "$tmp/m.onnx")
      { le32 "$size"; cat "$tmp/m.onnx"; cat "$tmp/weights.bin" 2>/dev/null || true; } > "$corpus/seed_$n"
      rm -f "$tmp/m.onnx" "$tmp/weights.bin"
    done ;;
  tensors)
    while IFS= read -r f; do
      n=$((n + 1)); { printf '\x02'; cat "$f"; } > "$corpus/seed_$n"
    done < <(find "$testdata/node" -name 'input_*.pb' -size -8k 2>/dev/null | sort | awk 'NR % 20 == 0' | head -200)
    for f in "$src"/examples/*.npy; do
      n=$((n + 1)); { printf '\x03'; cat "$f"; } > "$corpus/seed_$n"
    done ;;
  serve)
    # selector, header flag, then a request body (fuzz_serve.c)
    seed() { n=$((n + 1)); printf "$1" > "$corpus/seed_$n"; }
    seed '\x00\x00{"inputs":[{"name":"F","datatype":"FP32","shape":[1,3],"data":[1,2,3]},{"name":"I","datatype":"INT64","shape":[1],"data":[7]},{"name":"B","datatype":"BOOL","shape":[1],"data":[true]},{"name":"U","datatype":"UINT8","shape":[1,2],"data":[[1,2]]},{"name":"S","datatype":"BYTES","shape":[1],"data":["hi"]}]}'
    seed '\x01\x00{"id":"r1","inputs":[{"name":"F","datatype":"FP32","shape":[2,3],"data":[1,2,3,4,5,6]}],"outputs":[{"name":"F2","parameters":{"binary_data":true}}]}'
    seed '\x02\x00{"inputs":[{"name":"X","datatype":"FP32","shape":[1,3],"data":[0.5,-1,2]}]}'
    seed '\x02\x01\x5e\x00{"inputs":[{"name":"X","datatype":"FP32","shape":[1,3],"parameters":{"binary_data_size":12}}]}\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40'
    seed '\x03\x00'
    seed '\x05\x00{"ready":true}'
    seed '\x08\x00/v2/models/mlp/versions/1\n'
    seed '\x18\x00/v2/repository/models/id/unload\n{}'
    # gRPC request messages (bit 6; protobuf bytes made with Python's protobuf from
    # src/serve/grpc_service.proto): ModelInfer raw and typed, metadata, ready, index
    seed '\x40\x00\x0a\x03\x6d\x6c\x70\x1a\x01\x72\x2a\x0d\x0a\x01\x58\x12\x04\x46\x50\x33\x32\x1a\x02\x01\x03\x3a\x0c\x00\x00\x00\x3f\x00\x00\x80\xbf\x00\x00\x00\x40'
    seed '\x40\x00\x0a\x02\x69\x64\x12\x01\x31\x2a\x1d\x0a\x01\x46\x12\x04\x46\x50\x33\x32\x1a\x02\x01\x03\x2a\x0e\x32\x0c\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x2a\x1b\x0a\x01\x49\x12\x05\x49\x4e\x54\x36\x34\x1a\x01\x01\x2a\x0c\x1a\x0a\xf9\xff\xff\xff\xff\xff\xff\xff\xff\x01\x2a\x11\x0a\x01\x42\x12\x04\x42\x4f\x4f\x4c\x1a\x01\x01\x2a\x03\x0a\x01\x01\x2a\x14\x0a\x01\x55\x12\x05\x55\x49\x4e\x54\x38\x1a\x02\x01\x02\x2a\x04\x22\x02\x01\x02\x2a\x13\x0a\x01\x53\x12\x05\x42\x59\x54\x45\x53\x1a\x01\x01\x2a\x04\x42\x02\x68\x69\x32\x04\x0a\x02\x46\x32'
    seed '\x41\x00\x0a\x03\x6d\x6c\x70'
    seed '\x42\x00\x0a\x02\x69\x64\x12\x01\x31'
    seed '\x44\x00\x10\x01'
    # and the inputs of past findings (tests/fuzz/regressions/fuzz_serve)
    for f in "$src"/tests/fuzz/regressions/fuzz_serve/*; do
      [ -f "$f" ] || continue
      n=$((n + 1)); cp "$f" "$corpus/seed_$n"
    done ;;
  *) echo "unknown kind $kind"; exit 2 ;;
esac
echo "seed corpus: $n files"
[ "$n" -gt 0 ]
[ "$fuzzer" != --seeds-only ] || exit 0
dict=
case $kind in text) dict=-dict=$src/tests/fuzz/text.dict ;; models|convert|external) dict=-dict=$src/tests/fuzz/proto.dict ;; serve) dict=-dict=$src/tests/fuzz/serve.dict ;; esac
# findings are kept beside the work folder (which the next run empties)
mkdir -p "$work.findings"
cd "$work"
det=
[ -z "${FUZZ_RUNS:-}" ] || det="-seed=1 -runs=$FUZZ_RUNS"
# libFuzzer's progress lines (NEW, REDUCE, pulse) are kept in the log only,
# so that a failure's report is what the test prints
log=$work.log
rc=0
"$fuzzer" $dict $det -artifact_prefix="$work.findings/" -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 corpus > "$log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "fuzzer exit status $rc; the report (progress lines left out; whole log: $log):"
  grep -Ev '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)' "$log" | tail -150
else
  grep -E '^(Done|stat::)' "$log" || true
fi
exit "$rc"
