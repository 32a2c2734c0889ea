# Specialised operators (random, signal, string, image): unit test of what
# the conformance cases cannot check bit for bit (random statistics, FFT
# lengths, Unicode, corrupt images). Reads ../shared/testdata when present.
onnxc_unit_test(test_special)
target_compile_definitions(test_special PRIVATE ONNXC_TESTDATA_DIR="${ONNXC_TESTDATA}")
