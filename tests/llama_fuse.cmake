onnxc_unit_test(test_fuse_llama)
# onnxc convert --optimize on a Llama block (RMSNorm, rotary, SwiGLU): the
# written graph checks, holds each fused node and runs to the same bytes
foreach(op RMSNormFused RotaryFused SiLUMulFused)
  add_test(NAME convert_optimize_llama_${op}
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/optimize_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                   ${PROJECT_SOURCE_DIR}/tests/opt/llama_block.onnxtxt
                   ${PROJECT_SOURCE_DIR}/tests/opt/llama_block_input.npy ${op}
                   ${CMAKE_CURRENT_BINARY_DIR}/convert_optimize_llama_${op})
endforeach()
