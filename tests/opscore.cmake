# opscore: small float conversions and the core operator kernels
onnxc_unit_test(test_floatconv)
