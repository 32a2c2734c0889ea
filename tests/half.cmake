# float16 / bfloat16 paths. MatMul and Gemm by constant weights: the GEMM of
# src/kernels/gemm_h.c on every path of this CPU, and in sessions
onnxc_unit_test(test_gemm_h)
# the elementwise arithmetic and Softmax of 16-bit tensors
onnxc_unit_test(test_half_ops)
# the same products against onnxruntime (npm onnxruntime-node in
# build/ort-oracle, installed by scripts/setup.sh): float16 MatMul and Gemm by
# constant weights within one float16 unit; skipped (77) without it or node
find_program(NODE_EXECUTABLE node)
if(SYSTEM_PYTHON3 AND NODE_EXECUTABLE)
  add_test(NAME half_gemm_ort
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/oracle/half_gemm_ort.py
                   $<TARGET_FILE:onnxc_cli> ${PROJECT_BINARY_DIR}/ort-oracle/node_modules)
  set_tests_properties(half_gemm_ort PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()
