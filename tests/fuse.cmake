onnxc_unit_test(test_fuse)
onnxc_unit_test(test_qdq_fuse)
