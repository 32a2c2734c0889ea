onnxc_unit_test(test_fuse)
