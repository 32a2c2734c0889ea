# Type and shape inference (issue 5).
onnxc_unit_test(test_infer)
onnxc_unit_test(test_infer_api)
if(EXISTS "${ONNXC_SHARED}/testdata")
  add_test(NAME infer_strict_all
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/infer/strict_all.sh $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED})
endif()
if(EXISTS "${ONNXC_SHARED}/models")
  add_test(NAME infer_concrete_models
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/infer/concrete.sh $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/models)
endif()
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_SHARED}/testdata")
  add_test(NAME infer_vs_onnx112
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/infer/compare_onnx112.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED} ${PROJECT_SOURCE_DIR}/tests/infer/onnx112_differences.txt)
  set_tests_properties(infer_vs_onnx112 PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_SHARED}/models")
  # inferred shapes == shapes the runtime produces, on the four real models
  add_test(NAME infer_vs_runtime_models
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/infer/runtime_shapes.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/models)
  set_tests_properties(infer_vs_runtime_models PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()

# Text models of tests/infer/cases with the types inference must give
# (If branches merged when the condition is not known).
add_test(NAME infer_text_cases
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/infer/cases.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/infer/cases)
if(EXISTS "${ONNXC_SHARED}/testdata/node/test_affine_grid_2d_expanded")
  add_test(NAME infer_affine_grid_if
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/infer/affine_grid_if.sh $<TARGET_FILE:onnxc_cli>
                   ${ONNXC_SHARED}/testdata/node)
endif()
