# A build without some operator families (ONNXC_WASM_EXCLUDE in
# cmake/wasm.cmake): test_ops_exclude links a copy of the registry compiled
# without the strings and ml tables, which the linker takes in place of
# libonnxc.a's (every symbol of that member is defined first), and checks the
# "not in this build" error.
add_executable(test_ops_exclude ${PROJECT_SOURCE_DIR}/tests/unit/test_ops_exclude.c
                                ${PROJECT_SOURCE_DIR}/src/ops/registry.c)
target_include_directories(test_ops_exclude PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(test_ops_exclude PRIVATE ONNXC_NO_OPS_STRINGS ONNXC_NO_OPS_ML
                                                    "ONNXC_OPS_EXCLUDED=\"strings, ml\"")
target_link_libraries(test_ops_exclude PRIVATE onnxc)
add_test(NAME test_ops_exclude COMMAND test_ops_exclude WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
