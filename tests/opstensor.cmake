# opstensor: data-movement kernels (tensor, gather, pad, sort families).
# Unit test: old attribute-driven versions and string tensors.
onnxc_unit_test(test_opstensor)

# Conformance: every node case of these operators (a few seconds in release).
set(OPSTENSOR_PATTERNS
    reshape flatten squeeze unsqueeze transpose concat split_equal split_variable split_zero
    split_1d split_2d slice expand tile shape size identity constant range eyelike tril triu
    depthtospace spacetodepth reversesequence bitcast center_crop_pad gather scatter
    tensorscatter onehot compress nonzero reflect_pad edge_pad wrap_pad constant_pad top_k
    unique)
set(OPSTENSOR_CASES "")
foreach(p ${OPSTENSOR_PATTERNS})
  file(GLOB cases LIST_DIRECTORIES true "${ONNXC_TESTDATA}/node/test_${p}*")
  list(APPEND OPSTENSOR_CASES ${cases})
endforeach()
if(OPSTENSOR_CASES)
  list(REMOVE_DUPLICATES OPSTENSOR_CASES)
  add_test(NAME opstensor_node COMMAND onnxc_cli test ${OPSTENSOR_CASES})
endif()
