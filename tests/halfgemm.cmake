# MatMul and Gemm by constant float16 / bfloat16 weights: the GEMM of
# src/kernels/gemm_h.c on every path of this CPU, and in sessions
onnxc_unit_test(test_gemm_h)
