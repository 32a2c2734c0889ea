# Tests of the neural-network kernels (GEMM, conv, pool, resize, roi).
onnxc_unit_test(test_gemm)
onnxc_unit_test(test_nn)

# Model latency tool used by bench/models.sh (not a test).
add_executable(onnxc_latency ${PROJECT_SOURCE_DIR}/bench/latency.c)
target_include_directories(onnxc_latency PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(onnxc_latency PRIVATE onnxc)
