#!/bin/bash
# Load time and added resident memory for a model with 1 GiB of initializers,
# inline and external. Needs a release build in build/ (make build).
# usage: bench/load.sh [WORKDIR]   (needs ~2.1 GB of free disk there)
set -eu
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
trap 'rm -f "$work/inline.onnx" "$work/ext.onnx" "$work/ext.bin" "$work/load"' EXIT
[ -f build/libonnxc.a ] || { echo "build first: make build" >&2; exit 1; }
cc -O2 -std=gnu11 -Isrc -Iinclude bench/load.c build/libonnxc.a -lpthread -lm -o "$work/load"
"$work/load" "$work"
