# Binary format, external data, info/convert (issue 2).
onnxc_unit_test(test_proto_pb)
set_tests_properties(test_proto_pb PROPERTIES ENVIRONMENT "ONNXC_TESTDATA=${ONNXC_TESTDATA}")

if(PROTOC AND EXISTS "${ONNXC_SHARED}/spec/onnx/protoc")
  add_test(NAME proto_roundtrip
           COMMAND ${PROJECT_SOURCE_DIR}/tests/proto_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                   ${ONNXC_SHARED} ${ONNXC_SHARED}/spec/onnx/protoc)
  set_tests_properties(proto_roundtrip PROPERTIES LABELS release-only)
endif()
onnxc_unit_test(test_proto_errors)

# the decoder fuzzer is in tests/fuzz.cmake
onnxc_unit_test(test_proto_external)
onnxc_unit_test(test_proto_big)
set_tests_properties(test_proto_big PROPERTIES LABELS release-only)
onnxc_unit_test(test_proto_clone)
set_tests_properties(test_proto_clone PROPERTIES ENVIRONMENT "ONNXC_TESTDATA=${ONNXC_TESTDATA}")
add_test(NAME proto_cli COMMAND ${PROJECT_SOURCE_DIR}/tests/proto_cli.sh $<TARGET_FILE:onnxc_cli>
                                ${ONNXC_SHARED})
