#!/usr/bin/env bash
# setup.sh - install what the build and the tests need on a Debian machine.
# Installs only missing packages, and only when running as root.
set -u
pkgs=(cmake make gcc clang libclang-rt-14-dev protobuf-compiler python3 python3-onnx python3-numpy
      libpcre2-dev libutf8proc-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages (install them as root): ${missing[*]}" >&2
  exit 0
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
  { echo "setup: apt-get install failed" >&2; exit 1; }
