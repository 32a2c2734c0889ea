# examples/c/custom_op.c in the build tree: registers com.example.Swish, checks
# and runs a model using it; the printed values are NumPy's
# max(x / (1 + exp(-1.5 x)), 0) + 1 (tests/install/data/custom_op.expected).
add_executable(example_custom_op ${PROJECT_SOURCE_DIR}/examples/c/custom_op.c)
target_link_libraries(example_custom_op PRIVATE onnxc m)
add_test(NAME example_custom_op
         COMMAND sh -c "\"$1\" > \"$2\" && diff -u \"$3\" \"$2\""
                 sh $<TARGET_FILE:example_custom_op> ${CMAKE_CURRENT_BINARY_DIR}/custom_op.out
                 ${PROJECT_SOURCE_DIR}/tests/install/data/custom_op.expected)
