# Small operator checks on hand-made text models whose expected output is
# derived by hand from Operators.md (written in each model's comment).
add_test(NAME resize_string_nearest
         COMMAND sh -c "out=$($<TARGET_FILE:onnxc_cli> run ${PROJECT_SOURCE_DIR}/tests/ops/resize_string.onnxtxt) && test \"$out\" = 'Y: tensor(string)[1,1,2,4] = [\"a\", \"a\", \"b\", \"b\", \"c\", \"c\", \"d\", \"d\"]'")
