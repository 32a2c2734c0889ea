# Context-dependent function bodies (src/schema/ctx_bodies*.c): every node
# case of those ops that the backend tests also give in an `_expanded` form is
# run with its node replaced by the body built for it (onnxc test
# --ctx-bodies), against the case's expected outputs. The expected-failures
# list names the builders not written yet and the random Bernoulli outputs.
set(_ctx_data "${ONNXC_SHARED}/testdata/node")
if(EXISTS "${_ctx_data}")
  file(STRINGS "${PROJECT_SOURCE_DIR}/tests/ctxbodies/cases.txt" _ctx_cases)
  list(TRANSFORM _ctx_cases PREPEND "${_ctx_data}/")
  add_test(NAME schema_ctx_bodies
           COMMAND onnxc_cli test --jobs 2 --ctx-bodies
                   --expected ${PROJECT_SOURCE_DIR}/tests/ctxbodies/expected_failures.txt
                   ${_ctx_cases})
endif()
onnxc_unit_test(test_ctx_bodies)
if(EXISTS "${_ctx_data}")
  add_test(NAME schema_ctx_bodies_attention_windows
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/ctxbodies/windows.sh $<TARGET_FILE:onnxc_cli>
                   ${_ctx_data})
  set_tests_properties(schema_ctx_bodies_attention_windows PROPERTIES SKIP_RETURN_CODE 77)
endif()
add_test(NAME schema_ctx_bodies_bernoulli_statistics
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/ctxbodies/bernoulli.sh $<TARGET_FILE:onnxc_cli>)
