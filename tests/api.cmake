# docs/api.md is generated from include/onnxc.h (tools/gen_api_doc.py): this
# test fails when the two differ.
find_program(ONNXC_PYTHON3 NAMES python3)
if(ONNXC_PYTHON3)
  add_test(NAME api_doc_sync
           COMMAND ${ONNXC_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/gen_api_doc.py --check
                   ${PROJECT_SOURCE_DIR}/include/onnxc.h ${PROJECT_SOURCE_DIR}/docs/api.md)
endif()

# The public API as a client sees it (only <onnxc.h>): walking a model
# (tests/api/walk.onnx, written by tests/api/make_walk.py with the onnx
# package, and conformance models when ../shared is there), operator
# schemas against the spec, and what the tool's test runner and benchmark use.
add_executable(test_api_walk ${PROJECT_SOURCE_DIR}/tests/unit/test_api_walk.c)
target_include_directories(test_api_walk PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(test_api_walk PRIVATE onnxc)
add_test(NAME test_api_walk COMMAND test_api_walk ${ONNXC_TESTDATA}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
onnxc_unit_test(test_api_schema)
onnxc_unit_test(test_api_tools)
target_link_libraries(test_api_tools PRIVATE m)
