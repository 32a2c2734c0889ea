# Every CPU level, on any machine that has the highest: the tests that run
# the kernels (unit kernel tests, node conformance, the light models, the
# oracles) carry the label isa-levels, and `make test` runs them again with
# ONNXC_ISA=avx2 and ONNXC_ISA=portable (base/cpu.h caps the dispatch
# tables there). Labelled at the end of the directory, once every area's
# tests exist; a name that is not a test (an area off on this machine) is
# skipped. test_fuse and test_opscore compare fused SiLU epilogues with the
# Sigmoid operator bit for bit: both follow the cap, so they hold at every level.
onnxc_unit_test(test_isa_levels)

set(ONNXC_ISA_LEVEL_TESTS
    test_isa_levels test_floatconv test_opstensor test_nn test_conv test_gemm test_gemm_pb test_fuse test_opscore
    test_gemm_h test_half_ops test_qdq_fuse test_qdq_units test_qgemm test_qconv
    test_qconv_dw test_wqgemm test_dq_matmul test_matmul_const test_matmul_transb test_pool_same
    test_pool_bytes test_channel_shuffle test_conv_maxpool test_special test_training numerics_edge_cases
    conformance_node conformance_models opscore_node opstensor_node ml_node_conformance
    nna_conformance nna_dwconv_oracle nna_conv1d_oracle nna_light_densenet121 nna_light_inception_v2
    nna_light_resnet50 nna_light_shufflenet nna_light_zfnet512 nnb_node_conformance
    nnb_node_conformance_expanded nnb_rnn_oracle nnb_attention_oracle nnb_norm_oracle
    half_gemm_ort ort_oracle_models ort_oracle_lowbit training_conformance)

function(onnxc_label_isa_level_tests)
  foreach(t ${ONNXC_ISA_LEVEL_TESTS})
    if(TEST ${t})
      set_property(TEST ${t} APPEND PROPERTY LABELS isa-levels)
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL onnxc_label_isa_level_tests)
