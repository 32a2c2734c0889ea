# Numeric edge cases (docs/numerics.md, issue 19): small text models whose
# expected outputs come from the specification or an oracle (tests/numerics/).
add_test(NAME numerics_edge_cases
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/numerics/numerics.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/numerics)
