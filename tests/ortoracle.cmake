# The four real models against onnxruntime (npm onnxruntime-node, installed by
# scripts/setup.sh into build/ort-oracle): issue 7, done-when 2. Skipped (77)
# when node, the package or the models are absent.
find_program(NODE_EXECUTABLE node)
if(EXISTS "${ONNXC_SHARED}/models")
  if(NODE_EXECUTABLE)
    add_test(NAME ort_oracle_models
             COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_compare.mjs
                     $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED})
  else()
    add_test(NAME ort_oracle_models COMMAND sh -c "echo 'node not found'; exit 77")
  endif()
  set_tests_properties(ort_oracle_models PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()
