# opscore: small float conversions and the core operator families
# (elementwise, unary, cast, reduce, softmax, matmul).
onnxc_unit_test(test_floatconv)
# old-version semantics (legacy broadcast, Softmax-11 coercion, Cast-1, ...)
onnxc_unit_test(test_opscore)

# Conformance: every node case of these operators, including the function
# expansions (about a second in release).
set(OPSCORE_PATTERNS
    abs acos acosh add and and2d and3d and4d argmax argmin asin asinh atan atanh bitshift bitwise
    cast castlike ceil celu clip cos cosh cumprod cumsum det div einsum elu equal erf exp floor
    gelu gemm greater hardmax hardsigmoid hardswish isinf isnan leakyrelu less log logsoftmax
    matmul max mean min mish mod mul neg not or or2d or3d or4d pow prelu reciprocal reduce relu
    round selu shrink sigmoid sign sin sinh softmax softplus softsign sqrt sub sum swish swiglu tan tanh
    thresholdedrelu where xor xor2d xor3d xor4d)
set(OPSCORE_CASES "")
foreach(p ${OPSCORE_PATTERNS})
  file(GLOB cases LIST_DIRECTORIES true "${ONNXC_TESTDATA}/node/test_${p}"
       "${ONNXC_TESTDATA}/node/test_${p}_*")
  list(APPEND OPSCORE_CASES ${cases})
endforeach()
if(OPSCORE_CASES)
  list(REMOVE_DUPLICATES OPSCORE_CASES)
  add_test(NAME opscore_node COMMAND onnxc_cli test ${OPSCORE_CASES})
endif()

# Einsum (batched-GEMM path and the general loop) against numpy.einsum.
if(SYSTEM_PYTHON3)
  add_test(NAME opscore_einsum_oracle
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/opscore/einsum_oracle.py
                   $<TARGET_FILE:onnxc_cli>)
  set_tests_properties(opscore_einsum_oracle PROPERTIES SKIP_RETURN_CODE 77)
endif()
# Where against numpy.where: every element size, strings, the broadcast
# patterns the typed row loops specialise.
if(SYSTEM_PYTHON3)
  add_test(NAME opscore_where_oracle
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/opscore/where_oracle.py
                   $<TARGET_FILE:onnxc_cli>)
  set_tests_properties(opscore_where_oracle PROPERTIES SKIP_RETURN_CODE 77)
endif()
# reductions over threads: the bytes of the one-thread run (the walk split by
# kept dims or columns, never inside one output element's sum)
onnxc_unit_test(test_split_threads)
target_link_libraries(test_split_threads PRIVATE m)
set_tests_properties(test_split_threads PROPERTIES LABELS concurrency)
