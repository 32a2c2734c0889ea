#!/usr/bin/env bash
# setup.sh - install what the build and the tests need on a Debian machine.
# Installs only missing packages, and only when running as root.
#   setup.sh             the Debian packages, then the node packages of the tests
#   setup.sh --packages  the Debian packages only (what the builds need)
#   setup.sh --node      the node packages only (onnxruntime-node/-web: only
#                        tests read them, so `make test` fetches them while it builds)
set -u
want_packages=1 want_node=1
case "${1:-}" in
  --packages) want_node=0 ;;
  --node) want_packages=0 ;;
  "") ;;
  *) echo "setup.sh: unknown option $1 (--packages or --node)" >&2; exit 2 ;;
esac
pkgs=(cmake make gcc clang libclang-rt-14-dev lld protobuf-compiler python3 python3-onnx python3-numpy
      python3-dev python3-setuptools python3-pytest libonnx-testdata
      libpcre2-dev libutf8proc-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
      graphviz pkgconf libmicrohttpd-dev libjansson-dev libgnutls28-dev libgrpc-dev wrk python3-yaml
      gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
      emscripten nodejs chromium)
# (chromium: the WebAssembly demo page's test in headless Chromium, ctest wasm_page)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

# onnxruntime-node for the oracle test and the benchmark (tests/oracle/ort_compare.mjs,
# bench/ort_latency.mjs), into the gitignored build/ort-oracle. Best effort: without node,
# npm or the network the oracle test is skipped and the setup still succeeds.
# --ignore-scripts: the package's prebuilt CPU binary is in the tarball; no post-install download.
ort_version=1.30.0
install_ort() {
  local root dir
  root=$(cd "$(dirname "$0")/.." && pwd)
  dir=$root/build/ort-oracle
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 0
  if [ -f "$dir/node_modules/onnxruntime-node/package.json" ] &&
    grep -q "\"version\": *\"$ort_version\"" "$dir/node_modules/onnxruntime-node/package.json"; then
    return 0
  fi
  local made_build=0
  [ -d "$root/build" ] || made_build=1
  mkdir -p "$dir" || return 0
  [ -f "$dir/package.json" ] || echo '{ "private": true }' >"$dir/package.json"
  echo "setup: installing onnxruntime-node@$ort_version into build/ort-oracle (npm --ignore-scripts)"
  (cd "$dir" && timeout 300 npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
    --fetch-timeout=60000 --fetch-retries=1 \
    "onnxruntime-node@$ort_version" >/dev/null 2>&1) ||
    echo "setup: npm install onnxruntime-node failed; the onnxruntime oracle test will be skipped" >&2
  # keep the folders owned like the checkout, so that a later non-root build can write there
  if [ "$made_build" = 1 ]; then chown -R --reference="$root" "$root/build" 2>/dev/null || true
  else chown -R --reference="$root" "$dir" 2>/dev/null || true; fi
  return 0
}

# onnxruntime-web, the peer of the WebAssembly build (js/ortweb_bench.mjs), into the
# gitignored build/ortweb; best effort as above.
install_ortweb() {
  local root dir
  root=$(cd "$(dirname "$0")/.." && pwd)
  dir=$root/build/ortweb
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 0
  if [ -f "$dir/node_modules/onnxruntime-web/package.json" ] &&
    grep -q "\"version\": *\"$ort_version\"" "$dir/node_modules/onnxruntime-web/package.json"; then
    return 0
  fi
  mkdir -p "$dir" || return 0
  [ -f "$dir/package.json" ] || echo '{ "private": true }' >"$dir/package.json"
  echo "setup: installing onnxruntime-web@$ort_version into build/ortweb (npm --ignore-scripts)"
  (cd "$dir" && timeout 300 npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
    --fetch-timeout=60000 --fetch-retries=1 \
    "onnxruntime-web@$ort_version" >/dev/null 2>&1) ||
    echo "setup: npm install onnxruntime-web failed; js/ortweb_bench.mjs will not run" >&2
  chown -R --reference="$root" "$dir" 2>/dev/null || true
  return 0
}

if [ "$(id -u)" -ne 0 ]; then
  if [ "$want_packages" = 1 ] && [ ${#missing[@]} -ne 0 ]; then
    echo "setup: missing packages (install them as root): ${missing[*]}" >&2
  fi
  exit 0
fi
status=0
if [ "$want_packages" = 1 ] && [ ${#missing[@]} -ne 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || true
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "setup: apt-get install failed" >&2; status=1; }
fi
if [ "$want_node" = 1 ]; then
  install_ort
  install_ortweb
fi
exit $status
