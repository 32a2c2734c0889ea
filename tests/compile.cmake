# onnxc compile: the ONNX node test cases through the C generator (built
# with cc -std=c99 -Wall -Wextra -Werror -O2, run, compared as `onnxc test`
# does) and a small CNN end to end (matches `onnxc run`, deterministic, no
# malloc/stdio/threads in the object, clean under ASan+UBSan). Release build
# only: the tool runs hundreds of times.
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_TESTDATA}/node")
  add_test(NAME compile_node_cases
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/node_cases.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_TESTDATA} ${CMAKE_CURRENT_BINARY_DIR}/compile_node_cases)
  set_tests_properties(compile_node_cases PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only"
                                                     TIMEOUT 900)
endif()
if(SYSTEM_PYTHON3)
  add_test(NAME compile_model_e2e
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/model_e2e.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_model_e2e)
  set_tests_properties(compile_model_e2e PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# If / Loop / Scan as C control flow: nested bodies, outer-scope reads,
# reversed scan axes; expected outputs from numpy; a Loop whose scan output
# length is dynamic is refused naming the node.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_control_flow
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/control_flow.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_control_flow)
  set_tests_properties(compile_control_flow PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# Values known at compile time (shape subgraphs, a constant If condition)
# folded into constants, float16 MatMul/Gemm/Conv/Pad/Clip; against numpy and
# `onnxc run`; shapes that depend on data refused naming the node.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_shape_fold
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/shape_fold.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_shape_fold)
  set_tests_properties(compile_shape_fold PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# Operators of other domains beyond the node tests (LabelEncoder on numbers,
# Binarizer on int32/float64, ArrayFeatureExtractor with run-time indices,
# TreeEnsemble on float16 with every aggregation and post transform, Adam on
# float64) against numpy oracles of their specifications; the ai.onnx.ml
# operators of skl2onnx models (ml_models.py: classic tree ensembles, linear
# and SVM models, Normalizer, Scaler, Imputer, OneHotEncoder,
# FeatureVectorizer) against stored onnxruntime outputs; strings, maps, a
# cyclic tree and an ai.onnx.ml node named like an ai.onnx one refused.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_domains
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/domains.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_domains)
  set_tests_properties(compile_domains PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# Model-local functions (ModelProto.functions), inlined before generation
# (cg_inline.c): attribute references and defaults, nested calls, unused
# outputs, ONNX function operators inside, a function overriding an operator
# of its domain, against numpy and `onnxc run`; strings inside a function and
# another opset version refused.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_local_functions
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/local_functions.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_local_functions)
  set_tests_properties(compile_local_functions PROPERTIES SKIP_RETURN_CODE 77
                                                          LABELS "compile;release-only")
endif()
# RNN, GRU, LSTM beyond the node tests (reverse, bidirectional, layout 1,
# sequence_lens, clip, activations with alpha/beta, input_forget,
# linear_before_reset, float64) against a numpy oracle of the spec's equations.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_recurrent
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/recurrent.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_recurrent)
  set_tests_properties(compile_recurrent PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# --float-only: no `double` in the generated code of a float32 model that
# builds with -Wdouble-promotion and matches numpy; float64 values and nodes
# that compute in double refused naming them.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_float_only
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/float_only.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_float_only)
  set_tests_properties(compile_float_only PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# Pooling with pads larger than the kernel (windows wholly in the padding),
# under ASan+UBSan where the compiler has them, against numpy.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_pool_pads
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/pool_pads.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_pool_pads)
  set_tests_properties(compile_pool_pads PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# DFT beyond the node tests (dft_length, onesided, inverse, irfft, a
# run-time axis) against numpy.fft.
if(SYSTEM_PYTHON3)
  add_test(NAME compile_dft
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/dft.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_dft)
  set_tests_properties(compile_dft PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# issue 33, "a microcontroller for real": an MNIST-sized CNN compiled, built
# with arm-none-eabi-gcc for a Cortex-M3 and a Cortex-M4F and run under
# qemu-system-arm (mps2-an385/an386, semihosting); output matches `onnxc run`.
# Skipped (77) without the cross compiler, newlib or QEMU (scripts/setup.sh).
if(SYSTEM_PYTHON3)
  add_test(NAME compile_cortexm_qemu
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/cortexm_qemu.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_cortexm_qemu)
  set_tests_properties(compile_cortexm_qemu PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only"
                                                       TIMEOUT 300)
endif()
# issue 33, int8 QDQ models: the MNIST CNN quantized with python3-onnx QDQ
# nodes compiles to integer-only kernels (no float in the folded units),
# matches `onnxc run` within one quantum, clean under ASan+UBSan.
# With the ONNX test data, also the QLinearConv/QLinearMatMul node cases
# with constant scales (the integer kernel).
if(SYSTEM_PYTHON3)
  set(qdq_testdata)
  if(EXISTS "${ONNXC_TESTDATA}/node")
    set(qdq_testdata --testdata ${ONNXC_TESTDATA})
  endif()
  add_test(NAME compile_qdq_e2e
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/qdq_mnist.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/compile_qdq_e2e
                   ${qdq_testdata})
  set_tests_properties(compile_qdq_e2e PROPERTIES SKIP_RETURN_CODE 77 LABELS "compile;release-only")
endif()
# onnxruntime's com.microsoft operators through the compiler: the cases of
# tests/contrib/gen_<family>.py (those ort_contrib_<family> runs through
# onnxruntime-node and `onnxc run`) compiled, built as one program, run, and
# compared with onnxruntime-node's outputs (tests/compile/contrib_cases.py).
# Release build only. A family is listed once its generators are in.
# Skipped (77) without node, onnxruntime-node, python3-onnx or numpy.
set(ONNXC_COMPILE_CONTRIB_FAMILIES)
list(APPEND ONNXC_COMPILE_CONTRIB_FAMILIES nn) # ops_ms_nn.c
list(APPEND ONNXC_COMPILE_CONTRIB_FAMILIES quant) # ops_ms_quant.c (QAttention: ops_ms_attn.c)
list(APPEND ONNXC_COMPILE_CONTRIB_FAMILIES gqa sparse lowbit) # ops_ms_gqa.c, ops_ms_lowbit.c
list(APPEND ONNXC_COMPILE_CONTRIB_FAMILIES attn) # ops_ms_attn.c
if(SYSTEM_PYTHON3)
  foreach(family ${ONNXC_COMPILE_CONTRIB_FAMILIES})
    add_test(NAME compile_contrib_${family}
             COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/compile/contrib_cases.py
                     $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR}/tests/contrib/gen_${family}.py
                     ${CMAKE_CURRENT_BINARY_DIR}/compile_contrib_${family})
    set_tests_properties(compile_contrib_${family} PROPERTIES SKIP_RETURN_CODE 77
                                                              LABELS "compile;release-only")
  endforeach()
endif()
