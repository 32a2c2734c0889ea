# Tests of the neural-network kernels (GEMM, conv, pool, resize, roi).
onnxc_unit_test(test_gemm)
onnxc_unit_test(test_nn)
