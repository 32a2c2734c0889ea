# Build products and installation (issue 12): the exports of libonnxc.so.
add_test(NAME shared_exports
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/exports.sh ${CMAKE_NM}
                 $<TARGET_FILE:onnxc_shared> ${PROJECT_SOURCE_DIR}/include/onnxc.h
                 ${PROJECT_VERSION_MAJOR})
