#!/bin/sh
# exports.sh NM LIBONNXC_SO HEADER SOVERSION
# libonnxc.so exports exactly the API: every function declared in onnxc.h
# carries ONNXC_API (without it the function would be hidden), every
# defined dynamic symbol is an onnxc_* function declared there and every
# declared one is exported; the soname carries the major version.
set -eu
nm=$1 lib=$2 header=$3 major=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nm" -D --defined-only "$lib" | awk '{print $NF}' | sort -u >"$tmp/exported"
grep -o 'ONNXC_API [^(]*(' "$header" | grep -o 'onnxc_[a-z0-9_]*($' | tr -d '(' | sort -u \
  >"$tmp/declared"
fail=0
# a function declared at the start of a line without the macro would be hidden
if grep -nE '^(const |unsigned )?[a-z_][a-z0-9_]*[ *]+onnxc_[a-z0-9_]+\(' "$header" \
  >"$tmp/unmarked"; then
  echo "FAIL: declared without ONNXC_API in onnxc.h (hidden in libonnxc.so):"
  cat "$tmp/unmarked"
  fail=1
fi
if grep -v '^onnxc_' "$tmp/exported" >"$tmp/foreign"; then
  echo "FAIL: exported symbols outside the API:"
  cat "$tmp/foreign"
  fail=1
fi
if comm -13 "$tmp/exported" "$tmp/declared" | grep . >"$tmp/missing"; then
  echo "FAIL: declared with ONNXC_API in onnxc.h but not exported:"
  cat "$tmp/missing"
  fail=1
fi
if comm -23 "$tmp/exported" "$tmp/declared" | grep . >"$tmp/extra"; then
  echo "FAIL: exported but not declared in onnxc.h:"
  cat "$tmp/extra"
  fail=1
fi
if [ "$(wc -l <"$tmp/declared")" -lt 10 ]; then
  echo "FAIL: found only $(wc -l <"$tmp/declared") declarations in $header"
  fail=1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ "$soname" != "libonnxc.so.$major" ]; then
  echo "FAIL: soname '$soname', expected libonnxc.so.$major"
  fail=1
fi
[ $fail -eq 0 ] && echo "ok: $(wc -l <"$tmp/exported") onnxc_* functions exported, soname $soname"
exit $fail
