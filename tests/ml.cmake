# ml: the ai.onnx.ml kernels (src/ops/ml*.c). The conformance node cases
# test_ai_onnx_ml_* run through `onnxc test`; tests/unit/test_ml.c covers
# every operator and version with small text-format models whose expected
# values are derived by hand from the spec (see the comment at its top).
onnxc_unit_test(test_ml)
if(EXISTS "${ONNXC_TESTDATA}/node")
  file(GLOB ml_cases LIST_DIRECTORIES true "${ONNXC_TESTDATA}/node/test_ai_onnx_ml_*")
  if(ml_cases)
    add_test(NAME ml_node_conformance COMMAND $<TARGET_FILE:onnxc_cli> test ${ml_cases})
    set_tests_properties(ml_node_conformance PROPERTIES FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
  endif()
endif()
