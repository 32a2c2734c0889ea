#!/bin/sh
# bench/serve_load.sh - throughput and latency of `onnxc serve` under wrk on
# 127.0.0.1: a small model (the mel spectrogram of ../shared/models, JSON
# request of 1x1280 floats) and resnet50 (seeded random weights, the
# make_cnn.py model of ../shared/bench; binary request of 1x3x224x224 floats),
# each at 1, 8 and 64 connections, without and with dynamic batching.
#
#   bench/serve_load.sh [BUILD_DIR] [SECONDS_PER_POINT] [THREADS]
#
# Every point runs for SECONDS_PER_POINT (default 5); the server is stopped at
# the end. Not part of `make test`. Needs wrk (Debian) and /usr/bin/python3
# with numpy (to write the request bodies). On a shared machine wrk competes
# with the server for the cores: compare rows measured in one run.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
secs=${2:-5}
threads=${3:-$(nproc)}
shared=${ONNXC_SHARED:-$here/../shared}
models=${ONNXC_BENCH_MODELS:-${TMPDIR:-/tmp}/onnxc-bench-models}
onnxc=$build/onnxc
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 1; }
[ -x "$onnxc" ] || { echo "missing $onnxc: build first" >&2; exit 1; }

work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

repo=$work/repo
add() { # name model.onnx [max_batch delay_us]
  mkdir -p "$repo/$1/1"
  ln -s "$2" "$repo/$1/1/model.onnx"
  if [ $# -gt 2 ]; then
    printf '{"max_batch_size": %s, "max_queue_delay_microseconds": %s}\n' "$3" "$4" \
      >"$repo/$1/config.json"
  fi
}
mel=$shared/models/melspectrogram.onnx
[ -f "$mel" ] || { echo "missing $mel" >&2; exit 1; }
add mel "$mel"
add mel_batched "$mel" 32 1000
resnet=$models/resnet50.onnx
if [ ! -f "$resnet" ] && [ -f "$shared/bench/make_cnn.py" ]; then
  /usr/bin/python3 "$shared/bench/make_cnn.py" "$models" resnet50 >/dev/null 2>&1 || true
fi
if [ -f "$resnet" ]; then
  add resnet50 "$resnet"
  add resnet50_batched "$resnet" 8 5000
else
  echo "note: $resnet not found (make_cnn.py could not build it): resnet50 left out" >&2
fi

# request bodies: JSON for the small model, the binary extension for resnet50
/usr/bin/python3 - "$work" <<'EOF'
import json, sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(1)
x = rng.standard_normal(1280).astype(np.float32)
with open(work + '/mel.body', 'w') as f:
    json.dump({'inputs': [{'name': 'input', 'datatype': 'FP32', 'shape': [1, 1280],
                           'data': [float(v) for v in x]}]}, f)
img = rng.standard_normal(3 * 224 * 224).astype(np.float32)
head = json.dumps({'inputs': [{'name': 'input', 'datatype': 'FP32', 'shape': [1, 3, 224, 224],
                               'parameters': {'binary_data_size': img.nbytes}}],
                   'outputs': [{'name': 'logits', 'parameters': {'binary_data': True}}]}).encode()
with open(work + '/resnet50.body', 'wb') as f:
    f.write(head + img.tobytes())
with open(work + '/resnet50.hlen', 'w') as f:
    f.write(str(len(head)))
EOF

# wrk posts the body file of its first script argument, with the header length
# of the second (binary requests) when given: bench/serve_post.lua

# wrk's connections all come from 127.0.0.1: no per-client connection limit
"$onnxc" serve --model-repository "$repo" --host 127.0.0.1 --port 0 --threads "$threads" \
  --no-access-log --max-connections-per-client 0 >"$work/server.log" 2>&1 &
pid=$!
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }

echo "onnxc serve load, $secs s per point, server --threads $threads, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-18s %6s %10s %10s %10s %8s\n' model conns "req/s" p50 p99 errors
# requests left over from a point (wrk stops, the server still runs what it
# had queued) must not slow the next one: wait until only our probe is in flight
wait_idle() {
  /usr/bin/python3 - "$port" <<'PY'
import http.client, re, sys, time
end = time.time() + 120
while time.time() < end:
    c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=10)
    c.request('GET', '/metrics')
    m = re.search(r'^onnxc_http_requests_in_flight (\d+)', c.getresponse().read().decode(), re.M)
    c.close()
    if m and int(m.group(1)) <= 1:
        break
    time.sleep(0.2)
PY
}
point() { # model body hlen conns
  m=$1 body=$2 hlen=$3 c=$4
  t=2
  [ "$c" -lt 2 ] && t=1
  url=http://127.0.0.1:$port/v2/models/$m/infer
  wait_idle
  # a short warm-up so that the first runs' allocations are not measured
  wrk -t1 -c1 -d1s -s "$here/bench/serve_post.lua" "$url" -- "$body" $hlen >/dev/null 2>&1 || true
  out=$(wrk -t"$t" -c"$c" -d"${secs}s" --timeout 10s --latency -s "$here/bench/serve_post.lua" "$url" \
    -- "$body" $hlen 2>&1)
  rps=$(echo "$out" | awk '/^Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  err=$(echo "$out" | awk '/Non-2xx/ {n += $NF} /Socket errors/ {n += 1} END {print n + 0}')
  printf '%-18s %6s %10s %10s %10s %8s\n' "$m" "$c" "$rps" "$p50" "$p99" "$err"
}
for m in mel mel_batched; do
  for c in 1 8 64; do point "$m" "$work/mel.body" "" "$c"; done
done
if [ -d "$repo/resnet50" ]; then
  hlen=$(cat "$work/resnet50.hlen")
  for m in resnet50 resnet50_batched; do
    for c in 1 8 64; do point "$m" "$work/resnet50.body" "$hlen" "$c"; done
  done
fi
# how the batched models' runs were filled
curl_metrics() {
  /usr/bin/python3 -c "import http.client,sys; c=http.client.HTTPConnection('127.0.0.1',$port,timeout=10); c.request('GET','/metrics'); sys.stdout.write(c.getresponse().read().decode())"
}
curl_metrics | awk '/^onnxc_inference_batch_size_(sum|count)\{model="[a-z0-9_]*batched"\}/ {print "  " $0}'
