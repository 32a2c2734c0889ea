# shellcheck shell=sh disable=SC2154,SC2034 # $work, $src, $fail belong to the caller
# check.sh - sourced by install_tree.sh and run_model.sh (which set $work,
# $fail and $src).
# check NAME EXPECTED COMMAND...: runs the command and compares its output with
# the file EXPECTED by tests/install/compare.awk; sets fail=1 on a difference.
check() {
  name=$1 expected=$2
  shift 2
  if ! "$@" >"$work/$name.out" 2>&1; then
    echo "FAIL: $name exited with an error:"; cat "$work/$name.out"; fail=1
  elif awk -v out="$work/$name.out" -f "$src/tests/install/compare.awk" "$expected"; then
    echo "ok: $name"
  else
    echo "FAIL: $name printed:"; cat "$work/$name.out"
    echo "expected:"; cat "$expected"; fail=1
  fi
}
