# nnb: conformance cases of the normalisation, recurrent, attention,
# quantisation and loss kernels (src/ops/{norm,rnn,attention,quant,loss}.c),
# run through `onnxc test`. The `_expanded` variants run the function bodies
# through other families' kernels and are a separate test.
set(NNB_NODE_PATTERNS
    test_batchnorm_* test_instancenorm_* test_layer_normalization_* test_group_normalization_*
    test_rms_normalization_* test_lpnormalization_* test_l1normalization_* test_l2normalization_*
    test_mvn* test_lrn*
    test_rnn_* test_simple_rnn_* test_gru_* test_lstm_*
    test_attention_* test_rotary_embedding* test_linear_attention_* test_causal_conv_with_state_*
    test_flexattention*
    test_quantizelinear* test_dequantizelinear* test_dynamicquantizelinear* test_qlinearmatmul_*
    test_matmulinteger*
    test_sce_* test_nllloss_*)

if(EXISTS "${ONNXC_TESTDATA}/node")
  set(nnb_direct "")
  set(nnb_expanded "")
  foreach(pat ${NNB_NODE_PATTERNS})
    file(GLOB dirs LIST_DIRECTORIES true "${ONNXC_TESTDATA}/node/${pat}")
    foreach(d ${dirs})
      if(d MATCHES "_expanded")
        list(APPEND nnb_expanded ${d})
      else()
        list(APPEND nnb_direct ${d})
      endif()
    endforeach()
  endforeach()
  file(GLOB nnb_torch LIST_DIRECTORIES true "${ONNXC_TESTDATA}/pytorch-converted/test_BatchNorm*"
       "${ONNXC_TESTDATA}/pytorch-operator/test_operator_symbolic_override")
  list(APPEND nnb_direct ${nnb_torch})
  list(REMOVE_DUPLICATES nnb_direct)
  list(REMOVE_DUPLICATES nnb_expanded)
  add_test(NAME nnb_node_conformance COMMAND $<TARGET_FILE:onnxc_cli> test ${nnb_direct})
  add_test(NAME nnb_node_conformance_expanded COMMAND $<TARGET_FILE:onnxc_cli> test ${nnb_expanded})
  set_tests_properties(nnb_node_conformance nnb_node_conformance_expanded PROPERTIES
                       FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
endif()

# Paths the node suite leaves out, checked against NumPy transcriptions of the
# spec (tests/oracle/nnb_*_oracle.py): recurrent directions/layout/sequence_lens,
# Attention-25 windows, older and rarer normalisation variants.
if(SYSTEM_PYTHON3)
  foreach(kind rnn attention norm)
    add_test(NAME nnb_${kind}_oracle
             COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/oracle/nnb_${kind}_oracle.py
                     $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/nnb_${kind}_cases)
    set_tests_properties(nnb_${kind}_oracle PROPERTIES SKIP_RETURN_CODE 77
                         FAIL_REGULAR_EXPRESSION "[1-9][0-9]* failed")
  endforeach()
endif()
