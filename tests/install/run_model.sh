#!/bin/sh
# run_model.sh RUN_MODEL ONNXC SOURCE_DIR
# examples/c/run_model on text and binary models with .npy and TensorProto
# inputs (raw_data, each typed field, strings) and outputs of every kind,
# compared with tests/install/data/*.expected: the perceptron's values are
# NumPy's sigmoid(relu(X W1 + B1) W2 + B2) for examples/perceptron.onnxtxt on
# examples/perceptron_input.npy; identity.expected and kinds.expected list
# the values that data/make_data.py wrote into data/*.pb and *.npy (see
# identity.onnxtxt and kinds.onnxtxt); fizzbuzz.expected is FizzBuzz up to
# 15 (limit.pb). Then bad input: every truncation of every input file, a
# wrong element type, an unknown name, one file too many, a missing input, a
# missing model: an error message and exit status 1, never a crash.
# A fourth argument `--no-cuts` leaves out the truncated files (~230 starts
# of run_model, the bulk of this script's CPU): install_tree passes it for its
# second and third builds of run_model (see there).
set -eu
run_model=$1 onnxc=$2 src=$3 cuts=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$src/tests/install/data
model=$src/examples/perceptron.onnxtxt
fail=0

# shellcheck source=tests/install/check.sh
. "$src/tests/install/check.sh"
refused() { # NAME MESSAGE ARGS...: exit status 1 with MESSAGE on stderr
  name=$1 message=$2
  shift 2
  set +e
  "$run_model" "$@" >/dev/null 2>"$work/err"
  rc=$?
  set -e
  if [ $rc -ne 1 ] || ! grep -q "$message" "$work/err"; then
    echo "FAIL: $name: exit status $rc, stderr:"; cat "$work/err"; fail=1
  fi
}

"$onnxc" convert "$model" "$work/perceptron.onnx" >/dev/null
check npy "$data/perceptron.expected" "$run_model" "$model" X="$src/examples/perceptron_input.npy"
check onnx_raw_pb "$data/perceptron.expected" "$run_model" "$work/perceptron.onnx" "$data/x_raw.pb"
check typed_named "$data/identity.expected" "$run_model" "$data/identity.onnxtxt" H="$data/h.pb" \
  I="$data/i.pb" D="$data/d.pb" B="$data/b.pb" E="$data/i8.npy" U="$data/u.pb"
check typed_mixed "$data/identity.expected" "$run_model" "$data/identity.onnxtxt" "$data/h.pb" \
  "$data/i.pb" D="$data/d.pb" "$data/b.pb" E="$data/i8.npy" U="$data/u.pb"

check kinds "$data/kinds.expected" "$run_model" "$data/kinds.onnxtxt" "$data/a.npy" \
  "$data/b.npy" "$data/s.pb"
check fizzbuzz "$data/fizzbuzz.expected" "$run_model" "$src/examples/fizzbuzz.onnxtxt" \
  "$data/limit.pb" -n 20

refused wrong_type "input 'X'" "$model" X="$data/h.pb"
refused unknown_name "no input named 'Q'" "$model" Q="$data/x_raw.pb"
refused too_many "no model input left" "$model" "$data/x_raw.pb" "$data/x_raw.pb"
refused missing "input 'I' is missing" "$data/identity.onnxtxt" "$data/h.pb"
refused no_model "nothere" "$work/nothere.onnx"
refused not_a_tensor "malformed protobuf" "$model" X="$model"
# cut files: an error (or, cut at a field's end, a valid shorter tensor), no crash
[ "$cuts" = --no-cuts ] ||
for pair in H:h.pb I:i.pb D:d.pb B:b.pb U:u.pb E:i8.npy; do
  name=${pair%%:*} f=${pair#*:}
  others=""
  for other in H:h.pb I:i.pb D:d.pb B:b.pb U:u.pb E:i8.npy; do
    [ "$other" = "$pair" ] || others="$others ${other%%:*}=$data/${other#*:}"
  done
  size=$(wc -c <"$data/$f")
  n=0
  while [ "$n" -lt "$size" ]; do
    head -c "$n" "$data/$f" >"$work/cut"
    set +e
    # shellcheck disable=SC2086 # $others: one word per input
    "$run_model" "$data/identity.onnxtxt" $others "$name=$work/cut" >/dev/null 2>"$work/err"
    rc=$?
    set -e
    if [ $rc -gt 1 ] || { [ $rc -eq 1 ] && ! grep -q "$work/cut\|input '$name'" "$work/err"; }; then
      echo "FAIL: $f cut at $n bytes: exit status $rc, stderr:"; cat "$work/err"; fail=1
    fi
    n=$((n + 1))
  done
done
[ $fail -eq 0 ] && echo "run_model: all good"
exit $fail
