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

# the parser and session fuzzers are in tests/fuzz.cmake

# print and parse speed on a real model with its weights inline (>= 50 MB/s;
# the figure is printed; release build only)
add_executable(text_bench ${PROJECT_SOURCE_DIR}/bench/text_bench.c)
target_include_directories(text_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(text_bench PRIVATE onnxc)
if(EXISTS "${ONNXC_SHARED}/models/ch_PP-OCRv4_det_infer.onnx")
  add_test(NAME text_bench_ppocr
           COMMAND text_bench ${ONNXC_SHARED}/models/ch_PP-OCRv4_det_infer.onnx 3 50)
  set_tests_properties(text_bench_ppocr PROPERTIES LABELS release-only)
endif()

# the seed examples pass the checker; FizzBuzz with Limit = 15 gives the 15 strings
if(PROTOC)
  add_test(NAME text_examples
           COMMAND ${PROJECT_SOURCE_DIR}/tests/text/examples.sh $<TARGET_FILE:onnxc_cli>
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/text_examples
                   ${ONNXC_SHARED}/spec/onnx/protoc)
endif()
