#!/bin/sh
# install_tree.sh CMAKE BUILD_DIR SOURCE_DIR CC
# Installs the build into a fresh temporary prefix and builds outside programs
# against it as a user would, with nothing from the source tree but the
# programs themselves:
#   - with pkg-config: tests/install/perceptron.c, shared and static;
#   - with a CMake project using find_package(onnxc) (tests/install/consumer):
#     the same program against onnxc::onnxc and onnxc::onnxc_static;
# then moves the prefix elsewhere and builds with pkg-config again (both
# package files find the prefix from their own place). Every binary runs
# examples/perceptron.onnxtxt on the two rows of examples/perceptron_input.npy
# and its output is compared with NumPy's result for that model,
# sigmoid(relu(X W1 + B1) W2 + B2), computed once with python3-numpy:
#   [[0.5697178, 0.57678765], [0.5632592, 0.5699384]]
set -eu
cmake=$1 build=$2 src=$3 cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
model=$src/examples/perceptron.onnxtxt
fail=0

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; exit 1; }
for f in lib/libonnxc.a lib/libonnxc.so lib/libonnxc.so.0 include/onnxc.h bin/onnxc \
  lib/pkgconfig/onnxc.pc lib/cmake/onnxc/onnxcConfig.cmake \
  lib/cmake/onnxc/onnxcConfigVersion.cmake lib/cmake/onnxc/onnxcTargets.cmake; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done

# check NAME BINARY: runs it and compares its output with the expected values
check() {
  if ! "$2" "$model" >"$work/$1.out" 2>&1; then
    echo "FAIL: $1 exited with an error:"; cat "$work/$1.out"; fail=1; return
  fi
  if awk 'BEGIN { split("0.5697178 0.57678765 0.5632592 0.5699384", want, " ") }
          { if ($1 != "Out" || $2 != "[2,2]" || NF != 6) exit 1
            for (i = 1; i <= 4; i++) { d = $(i + 2) - want[i]; if (d < 0) d = -d
                                       if (d > 2e-6) exit 1 }
            n++ }
          END { exit n == 1 ? 0 : 1 }' "$work/$1.out"; then
    echo "ok: $1: $(cat "$work/$1.out")"
  else
    echo "FAIL: $1 printed:"; cat "$work/$1.out"; fail=1
  fi
}
# linked NAME BINARY yes|no: whether it needs libonnxc.so.0 at run time
linked() {
  if readelf -d "$2" | grep -q 'NEEDED.*libonnxc\.so\.0'; then has=yes; else has=no; fi
  [ "$has" = "$3" ] || { echo "FAIL: $1: dynamic dependency on libonnxc.so.0: $has"; fail=1; }
}

# pkg-config (relative to the .pc file, so any prefix works)
pc_build() { # NAME PREFIX
  p=$2
  PKG_CONFIG_PATH=$p/lib/pkgconfig
  export PKG_CONFIG_PATH
  pkg-config --exists onnxc || { echo "FAIL: pkg-config does not find onnxc in $p"; fail=1; return; }
  # shellcheck disable=SC2046 # word splitting of the flags is intended
  "$cc" -std=c11 -Wall -Wextra -pedantic -Werror -o "$work/$1_shared" "$src/tests/install/perceptron.c" \
    $(pkg-config --cflags --libs onnxc) -Wl,-rpath,"$p/lib"
  # static: the archive by name, then what it needs (Libs.private)
  libs=$(pkg-config --static --libs onnxc | sed 's/-lonnxc/-l:libonnxc.a/')
  # shellcheck disable=SC2046,SC2086
  "$cc" -std=c11 -o "$work/$1_static" "$src/tests/install/perceptron.c" \
    $(pkg-config --cflags onnxc) $libs
  check "$1_shared" "$work/$1_shared"
  linked "$1_shared" "$work/$1_shared" yes
  check "$1_static" "$work/$1_static"
  linked "$1_static" "$work/$1_static" no
}
pc_build pkgconfig "$prefix"

# find_package
if "$cmake" -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" 2>&1 &&
  "$cmake" --build "$work/consumer" >>"$work/consumer.log" 2>&1; then
  grep 'onnxc 0.9' "$work/consumer.log" || true
  check cmake_shared "$work/consumer/perceptron_shared"
  linked cmake_shared "$work/consumer/perceptron_shared" yes
  check cmake_static "$work/consumer/perceptron_static"
  linked cmake_static "$work/consumer/perceptron_static" no
else
  echo "FAIL: the find_package project does not build:"; cat "$work/consumer.log"; fail=1
fi

# the installed tool
"$prefix/bin/onnxc" check "$model" >/dev/null || { echo "FAIL: installed onnxc check"; fail=1; }

# relocated tree
mv "$prefix" "$work/moved"
pc_build moved "$work/moved"

[ $fail -eq 0 ] && echo "install_tree: all good"
exit $fail
