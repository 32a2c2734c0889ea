# The decode step's block pass and merge (kernels/attn_decode*.c) against a
# double-precision softmax, at the level found and at each level below it
# (ONNXC_ISA caps the CPU probe): each level has a block pass of its own.
onnxc_unit_test(test_attn_decode)
foreach(level avx2 portable)
  add_test(NAME test_attn_decode_${level} COMMAND test_attn_decode
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_attn_decode_${level} PROPERTIES ENVIRONMENT "ONNXC_ISA=${level}")
endforeach()
