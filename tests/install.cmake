# Build products and installation (issue 12): the exports of libonnxc.so.
add_test(NAME shared_exports
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/exports.sh ${CMAKE_NM}
                 $<TARGET_FILE:onnxc_shared> ${PROJECT_SOURCE_DIR}/include/onnxc.h
                 ${PROJECT_VERSION_MAJOR})

# Install into a temporary prefix and build outside programs against it with
# pkg-config and with find_package (tests/install/install_tree.sh). Release
# only: a sanitized library cannot be linked by a plain outside program.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
if(PKG_CONFIG_EXECUTABLE)
  add_test(NAME install_tree
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/install_tree.sh ${CMAKE_COMMAND}
                   ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_C_COMPILER})
else()
  add_test(NAME install_tree COMMAND sh -c "echo 'pkg-config not found'; exit 77")
endif()
set_tests_properties(install_tree PROPERTIES LABELS release-only SKIP_RETURN_CODE 77)

# examples/c/run_model in the build tree (release and ASan+UBSan): text and
# binary models, .npy and TensorProto inputs, bad input (tests/install/run_model.sh).
add_executable(example_run_model ${PROJECT_SOURCE_DIR}/examples/c/run_model.c)
target_link_libraries(example_run_model PRIVATE onnxc)
add_test(NAME example_run_model
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/run_model.sh
                 $<TARGET_FILE:example_run_model> $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR})
