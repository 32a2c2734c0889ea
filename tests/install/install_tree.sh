#!/bin/sh
# install_tree.sh CMAKE BUILD_DIR SOURCE_DIR CC
# Installs the build into a fresh temporary prefix and builds outside programs
# against it as a user would, with nothing from the source tree but the
# programs themselves:
#   - with pkg-config: tests/install/perceptron.c, shared and static, and
#     examples/c/run_model.c and custom_op.c;
#   - with CMake projects using find_package(onnxc): tests/install/consumer
#     (perceptron.c against onnxc::onnxc and onnxc::onnxc_static) and
#     examples/c (run_model, custom_op);
# then moves the prefix elsewhere and builds with pkg-config again (both
# package files find the prefix from their own place).
# Every binary runs: perceptron.c's output is compared with
# data/perceptron_c.expected, NumPy's sigmoid(relu(X W1 + B1) W2 + B2) for
# examples/perceptron.onnxtxt on examples/perceptron_input.npy (numbers within
# a relative 1e-5, tests/install/compare.awk); run_model goes through
# tests/install/run_model.sh, custom_op's output is compared with
# data/custom_op.expected (NumPy's values, see tests/examples.cmake).
set -eu
cmake=$1 build=$2 src=$3 cc=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
data=$src/tests/install/data
here=$src/tests/install
model=$src/examples/perceptron.onnxtxt
fail=0

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; exit 1; }
for f in lib/libonnxc.a lib/libonnxc.so lib/libonnxc.so.0 include/onnxc.h bin/onnxc \
  lib/pkgconfig/onnxc.pc lib/cmake/onnxc/onnxcConfig.cmake \
  lib/cmake/onnxc/onnxcConfigVersion.cmake lib/cmake/onnxc/onnxcTargets.cmake; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done

# shellcheck source=tests/install/check.sh
. "$src/tests/install/check.sh"
# linked NAME BINARY yes|no: whether it needs libonnxc.so.0 at run time
linked() {
  if readelf -d "$2" | grep -q 'NEEDED.*libonnxc\.so\.0'; then has=yes; else has=no; fi
  [ "$has" = "$3" ] || { echo "FAIL: $1: dynamic dependency on libonnxc.so.0: $has"; fail=1; }
}
# The truncated inputs (run_model.sh's bulk: ~230 starts) go through the first
# run_model built here only: the other two are the same examples/c/run_model.c
# against the same installed libonnxc.so, so they would run the same code on
# the same bytes again (example_run_model runs them too, release and ASan).
# Every build still runs the value checks and the refusals.
cuts=
run_model_cases() { # NAME BINARY ONNXC_TOOL
  if sh "$here/run_model.sh" "$2" "$3" "$src" $cuts >"$work/$1.log" 2>&1; then
    echo "ok: $1"
  else
    echo "FAIL: $1:"; cat "$work/$1.log"; fail=1
  fi
  cuts=--no-cuts
}

# the installed tool
"$prefix/bin/onnxc" check "$model" >/dev/null || { echo "FAIL: installed onnxc check"; fail=1; }

# pkg-config (relative to the .pc file, so any prefix works)
pc_build() { # NAME PREFIX
  p=$2
  PKG_CONFIG_PATH=$p/lib/pkgconfig
  export PKG_CONFIG_PATH
  pkg-config --exists onnxc || { echo "FAIL: pkg-config does not find onnxc in $p"; fail=1; return; }
  for prog in tests/install/perceptron examples/c/run_model examples/c/custom_op; do
    # shellcheck disable=SC2046 # word splitting of the flags is intended
    "$cc" -std=c11 -Wall -Wextra -pedantic -Werror -o "$work/$1_${prog##*/}" "$src/$prog.c" \
      $(pkg-config --cflags --libs onnxc) -lm -Wl,-rpath,"$p/lib"
  done
  # static: the archive by name, then what it needs (Libs.private)
  libs=$(pkg-config --static --libs onnxc | sed 's/-lonnxc/-l:libonnxc.a/')
  # shellcheck disable=SC2046,SC2086
  "$cc" -std=c11 -o "$work/$1_perceptron_static" "$src/tests/install/perceptron.c" \
    $(pkg-config --cflags onnxc) $libs
  check "$1_perceptron" "$data/perceptron_c.expected" "$work/$1_perceptron" "$model"
  # the library says the version its package files say
  v=$(pkg-config --modversion onnxc)
  if ! grep -qx "onnxc $v" "$work/$1_perceptron.out"; then
    echo "FAIL: onnxc_version() is not the package version $v:"; head -1 "$work/$1_perceptron.out"
    fail=1
  fi
  linked "$1_perceptron" "$work/$1_perceptron" yes
  check "$1_perceptron_static" "$data/perceptron_c.expected" "$work/$1_perceptron_static" "$model"
  linked "$1_perceptron_static" "$work/$1_perceptron_static" no
  run_model_cases "$1_run_model" "$work/$1_run_model" "$p/bin/onnxc"
  # C++ callers: the header's extern "C" gives the exported (unmangled) names
  if command -v c++ >/dev/null 2>&1; then
    printf '#include <onnxc.h>\n#include <cstdio>\nint main() { std::puts(onnxc_version()); }\n' \
      >"$work/version.cpp"
    # shellcheck disable=SC2046
    if ! c++ -std=c++11 -Wall -Wextra -pedantic -Werror -o "$work/$1_cxx" "$work/version.cpp" \
      $(pkg-config --cflags --libs onnxc) -Wl,-rpath,"$p/lib" ||
      [ "$("$work/$1_cxx")" != "$(pkg-config --modversion onnxc)" ]; then
      echo "FAIL: a C++ program cannot use onnxc.h"; fail=1
    fi
  fi
  check "$1_custom_op" "$data/custom_op.expected" "$work/$1_custom_op"
}
pc_build pkgconfig "$prefix"

# find_package
cmake_build() { # NAME SOURCE
  if "$cmake" -S "$2" -B "$work/$1" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/$1.log" 2>&1 && "$cmake" --build "$work/$1" >>"$work/$1.log" 2>&1; then
    return 0
  fi
  echo "FAIL: the find_package project $2 does not build:"; cat "$work/$1.log"; fail=1
  return 1
}
if cmake_build consumer "$src/tests/install/consumer"; then
  check cmake_perceptron "$data/perceptron_c.expected" "$work/consumer/perceptron_shared" "$model"
  linked cmake_perceptron "$work/consumer/perceptron_shared" yes
  check cmake_perceptron_static "$data/perceptron_c.expected" \
    "$work/consumer/perceptron_static" "$model"
  linked cmake_perceptron_static "$work/consumer/perceptron_static" no
fi
if cmake_build examples "$src/examples/c"; then
  run_model_cases cmake_run_model "$work/examples/run_model" "$prefix/bin/onnxc"
  linked cmake_run_model "$work/examples/run_model" yes
  check cmake_custom_op "$data/custom_op.expected" "$work/examples/custom_op"
fi

# relocated tree
mv "$prefix" "$work/moved"
pc_build moved "$work/moved"

[ $fail -eq 0 ] && echo "install_tree: all good"
exit $fail
