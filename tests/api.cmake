# docs/api.md is generated from include/onnxc.h (tools/gen_api_doc.py): this
# test fails when the two differ.
find_program(ONNXC_PYTHON3 NAMES python3)
if(ONNXC_PYTHON3)
  add_test(NAME api_doc_sync
           COMMAND ${ONNXC_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/gen_api_doc.py --check
                   ${PROJECT_SOURCE_DIR}/include/onnxc.h ${PROJECT_SOURCE_DIR}/docs/api.md)
endif()
