# Type and shape inference (issue 5).
onnxc_unit_test(test_infer)
if(EXISTS "${ONNXC_SHARED}/testdata")
  add_test(NAME infer_strict_all
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/infer/strict_all.sh $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED})
endif()
if(EXISTS "${ONNXC_SHARED}/models")
  add_test(NAME infer_concrete_models
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/infer/concrete.sh $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/models)
endif()
