# training: the optimizer kernels and Gradient (conformance cases through
# `onnxc test`), the Gradient rewrite and the TrainingInfoProto API (unit
# test), every Gradient derivative rule against finite differences of the
# forward graph (test_gradient), and the linear-regression example trained
# with `onnxc train` and checked against NumPy (skipped without
# python3-onnx/NumPy).
onnxc_unit_test(test_training)
onnxc_unit_test(test_gradient)

if(EXISTS "${ONNXC_TESTDATA}/node")
  file(GLOB training_cases LIST_DIRECTORIES true
       "${ONNXC_TESTDATA}/node/test_adagrad*" "${ONNXC_TESTDATA}/node/test_adam*"
       "${ONNXC_TESTDATA}/node/test_momentum*" "${ONNXC_TESTDATA}/node/test_nesterov_momentum"
       "${ONNXC_TESTDATA}/simple/test_gradient_of_add*")
  add_test(NAME training_conformance COMMAND $<TARGET_FILE:onnxc_cli> test ${training_cases})
  set_tests_properties(training_conformance PROPERTIES FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
endif()

if(SYSTEM_PYTHON3)
  add_test(NAME training_linreg_example
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/training/linreg_check.py
                   $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR}/examples
                   ${CMAKE_CURRENT_BINARY_DIR}/training_linreg)
  set_tests_properties(training_linreg_example PROPERTIES SKIP_RETURN_CODE 77)
endif()
