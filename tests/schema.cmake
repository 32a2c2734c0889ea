# Operator schemas: lookup unit test, and every changelog entry in the table.
onnxc_unit_test(test_schema)
# the ai.onnxc contract: each kernel of the domain has a schema and a shape
# function, each schema a kernel
onnxc_unit_test(test_schema_onnxc)
find_program(ONNXC_PYTHON3 NAMES python3)
if(ONNXC_PYTHON3)
  add_test(NAME schema_changelog_coverage
           COMMAND ${ONNXC_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/schema/changelog_coverage.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/spec/onnx)
  set_tests_properties(schema_changelog_coverage PROPERTIES SKIP_RETURN_CODE 77)
endif()
if(SYSTEM_PYTHON3)
  add_test(NAME schema_function_bodies_oracle
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/schema/bodies_oracle.py
                   ${PROJECT_SOURCE_DIR}/src/schema/function_bodies.txt)
  set_tests_properties(schema_function_bodies_oracle PROPERTIES SKIP_RETURN_CODE 77)
endif()
onnxc_unit_test(test_schema_bodies)
