# Binary format, external data, info/convert (issue 2).
onnxc_unit_test(test_proto_pb)
set_tests_properties(test_proto_pb PROPERTIES ENVIRONMENT "ONNXC_TESTDATA=${ONNXC_TESTDATA}")

if(PROTOC)
  add_test(NAME proto_roundtrip
           COMMAND ${PROJECT_SOURCE_DIR}/tests/proto_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                   ${ONNXC_SHARED} ${ONNXC_SHARED}/spec/onnx/protoc)
  set_tests_properties(proto_roundtrip PROPERTIES LABELS release-only)
endif()
onnxc_unit_test(test_proto_errors)

# libFuzzer target for the decoder (clang, ONNXC_FUZZ=ON): a short run here,
# long runs by hand: tests/fuzz_run.sh build-asan/tests/fuzz_decode ../shared/testdata /tmp/fz 600
if(ONNXC_FUZZ)
  # the codec is compiled into the target itself so that libFuzzer's coverage
  # instrumentation (-fsanitize=fuzzer) covers it
  add_executable(fuzz_decode ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_decode.c
                 ${PROJECT_SOURCE_DIR}/src/proto/decode.c ${PROJECT_SOURCE_DIR}/src/proto/encode.c
                 ${PROJECT_SOURCE_DIR}/src/proto/desc.c)
  target_include_directories(fuzz_decode PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(fuzz_decode PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_decode PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_decode PRIVATE onnxc)
  add_test(NAME fuzz_decode_short
           COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz_run.sh $<TARGET_FILE:fuzz_decode>
                   ${ONNXC_TESTDATA} ${CMAKE_CURRENT_BINARY_DIR}/fuzz_decode_work 35)
  set_tests_properties(fuzz_decode_short PROPERTIES LABELS asan-only TIMEOUT 300)
endif()
onnxc_unit_test(test_proto_external)
onnxc_unit_test(test_proto_big)
set_tests_properties(test_proto_big PROPERTIES LABELS release-only)
onnxc_unit_test(test_proto_clone)
set_tests_properties(test_proto_clone PROPERTIES ENVIRONMENT "ONNXC_TESTDATA=${ONNXC_TESTDATA}")
add_test(NAME proto_cli COMMAND ${PROJECT_SOURCE_DIR}/tests/proto_cli.sh $<TARGET_FILE:onnxc_cli>
                                ${ONNXC_SHARED})
