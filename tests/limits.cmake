# Resource limits against hostile models: huge shapes at run time and at
# creation, sequences growing without end, deep nesting (tests/limits/).
add_test(NAME limits_hostile
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/limits/limits.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/limits)
set_tests_properties(limits_hostile PROPERTIES TIMEOUT 300)
