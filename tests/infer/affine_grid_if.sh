#!/bin/sh
# The official affine_grid _expanded models compute step_d_else with an If
# whose condition is known only at run time: its type must be the merge of
# the branches' types (float; the branches' ranks differ: 0 and 1).
# usage: affine_grid_if.sh ONNXC NODE_DIR
onnxc=$1 node=$2
pass=0 fail=0
for c in 2d 2d_align_corners 3d 3d_align_corners; do
  m=$node/test_affine_grid_${c}_expanded/model.onnx
  line=$("$onnxc" infer "$m" 2>&1 | grep 'output .*_step_d_else:')
  case $line in
    *"_step_d_else: float"*) pass=$((pass + 1)) ;;
    *) fail=$((fail + 1)); echo "FAIL $c: '$line'" ;;
  esac
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
