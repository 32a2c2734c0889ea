onnxc_unit_test(test_base)
