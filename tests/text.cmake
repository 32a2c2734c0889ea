# The textual syntax: unit tests, round trips over all shared models, the
# python3-onnx oracle, the fuzzer.
onnxc_unit_test(test_text)

add_executable(text_roundtrip ${PROJECT_SOURCE_DIR}/tests/text/text_roundtrip.c)
target_include_directories(text_roundtrip PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(text_roundtrip PRIVATE onnxc)
if(EXISTS "${ONNXC_SHARED}/testdata")
  add_test(NAME text_roundtrip_testdata
           COMMAND text_roundtrip ${ONNXC_SHARED}/testdata ${ONNXC_SHARED}/models)
endif()

# python3-onnx 1.12's parser as an independent oracle on the printed models
# and the examples (skipped without python3-onnx).
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_SHARED}/testdata")
  set(_d ${CMAKE_CURRENT_BINARY_DIR}/text_oracle)
  add_test(NAME text_oracle_onnx112
           COMMAND sh -c "rm -rf '${_d}' && mkdir -p '${_d}' && \
$<TARGET_FILE:text_roundtrip> -o '${_d}' '${PROJECT_SOURCE_DIR}/examples' \
'${ONNXC_SHARED}/testdata' '${ONNXC_SHARED}/models' >/dev/null && \
'${SYSTEM_PYTHON3}' '${PROJECT_SOURCE_DIR}/tests/text/oracle.py' '${_d}' 200")
  set_tests_properties(text_oracle_onnx112 PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()
