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
