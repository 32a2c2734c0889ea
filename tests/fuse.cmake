onnxc_unit_test(test_fuse)
onnxc_unit_test(test_qdq_fuse)
onnxc_unit_test(test_qdq_units)
onnxc_unit_test(test_passes)
onnxc_unit_test(test_api_passes)
onnxc_unit_test(test_matmul_const)
onnxc_unit_test(test_wqgemm)
onnxc_unit_test(test_dq_matmul)
onnxc_unit_test(test_matmul_transb)
onnxc_unit_test(test_tied_gather)
onnxc_unit_test(test_pool_same)
onnxc_unit_test(test_pool_bytes)
onnxc_unit_test(test_channel_shuffle)
onnxc_unit_test(test_conv_maxpool)
# onnxc convert --optimize writes the fused graph; it checks and runs the same
add_test(NAME convert_optimize
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/optimize_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/opt/attention.onnxtxt
                 ${PROJECT_SOURCE_DIR}/tests/opt/attention_input.npy MultiHeadAttentionFused
                 ${CMAKE_CURRENT_BINARY_DIR}/convert_optimize)
# an IR version 3 model (initializers are inputs) with folded Conv weights and a
# Conv prologue: the written graph moves to IR version 4 and stays valid
add_test(NAME convert_optimize_ir3
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/optimize_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/opt/dense_ir3.onnxtxt
                 ${PROJECT_SOURCE_DIR}/tests/opt/dense_ir3_input.npy FusedConv
                 ${CMAKE_CURRENT_BINARY_DIR}/convert_optimize_ir3)
# a channel shuffle read by a depthwise convolution: one FusedConv (in_shuffle)
add_test(NAME convert_optimize_shuffle
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/optimize_roundtrip.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/opt/channel_shuffle.onnxtxt
                 ${PROJECT_SOURCE_DIR}/tests/opt/channel_shuffle_input.npy FusedConv
                 ${CMAKE_CURRENT_BINARY_DIR}/convert_optimize_shuffle)
# --no-quant-fusion keeps QDQ units in float (run and bench)
add_test(NAME no_quant_fusion
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/no_quant_fusion.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/opt/qdq_conv.onnxtxt
                 ${PROJECT_SOURCE_DIR}/tests/opt/qdq_conv_input.npy)
# --list-passes and --disable-pass on run, bench and convert
add_test(NAME disable_pass
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/opt/disable_pass.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/disable_pass)
