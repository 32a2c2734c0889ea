# Tests of the neural-network kernels (GEMM, conv, pool, resize, roi).
onnxc_unit_test(test_gemm)
onnxc_unit_test(test_gemm_pb)
# the WebAssembly SIMD128 GEMM entries against the portable ones (elsewhere: the table check only)
onnxc_unit_test(test_gemm_wasm)
# the same for conv_direct.h's SIMD128 entries (conv_direct_wasm.c)
onnxc_unit_test(test_conv_direct_wasm)
onnxc_unit_test(test_nn)
onnxc_unit_test(test_conv)
# the kernel families' dispatch tables at the level found and at each level
# below it (ONNXC_ISA caps the CPU probe)
onnxc_unit_test(test_kernel_dispatch)
foreach(level avx2 portable)
  add_test(NAME test_kernel_dispatch_${level} COMMAND test_kernel_dispatch
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_kernel_dispatch_${level} PROPERTIES ENVIRONMENT "ONNXC_ISA=${level}")
endforeach()

# Conformance: every node case of these operators, and the pytorch-converted /
# pytorch-operator cases of conv, pooling and upsampling (well under a second).
set(NNA_PATTERNS
    basic_conv conv_ convtranspose convinteger qlinearconv basic_deform_conv deform_conv col2im
    averagepool maxpool lppool globalaveragepool globalmaxpool maxunpool resize upsample
    roialign nonmaxsuppression gridsample affine_grid)
set(NNA_CASES "")
foreach(p ${NNA_PATTERNS})
  file(GLOB cases LIST_DIRECTORIES true "${ONNXC_TESTDATA}/node/test_${p}*")
  list(APPEND NNA_CASES ${cases})
endforeach()
foreach(p AvgPool Conv MaxPool PixelShuffle Upsample operator_conv operator_maxpool)
  file(GLOB cases LIST_DIRECTORIES true "${ONNXC_TESTDATA}/pytorch-converted/test_${p}*"
       "${ONNXC_TESTDATA}/pytorch-operator/test_${p}*")
  list(APPEND NNA_CASES ${cases})
endforeach()
if(NNA_CASES)
  list(REMOVE_DUPLICATES NNA_CASES)
  add_test(NAME nna_conformance COMMAND onnxc_cli test ${NNA_CASES})
endif()

# Model latency tool used by bench/models.sh (not a test).
add_executable(onnxc_latency ${PROJECT_SOURCE_DIR}/bench/latency.c)
target_include_directories(onnxc_latency PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(onnxc_latency PRIVATE onnxc)

# The light CNNs end to end (arange input, reference output): release only.
# (alexnet, inception_v1, squeezenet and vgg19 also need a Dropout kernel.)
foreach(m densenet121 inception_v2 resnet50 shufflenet zfnet512)
  set(f "${ONNXC_TESTDATA}/light/light_${m}")
  if(EXISTS "${f}.onnx")
    add_test(NAME nna_light_${m}
             COMMAND onnxc_latency "${f}.onnx" --threads 2 --reps 1 --expect "${f}_output_0.pb")
    set_tests_properties(nna_light_${m} PROPERTIES LABELS release-only)
  endif()
endforeach()

# Depthwise / grouped Conv against a NumPy oracle (skipped without python3-onnx).
if(SYSTEM_PYTHON3)
  add_test(NAME nna_dwconv_oracle
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/nna/dwconv_oracle.py
                   $<TARGET_FILE:onnxc_cli>)
  set_tests_properties(nna_dwconv_oracle PROPERTIES SKIP_RETURN_CODE 77)
  # 1-D Conv (Whisper's front end: strides 1 and 2, chunks of columns)
  add_test(NAME nna_conv1d_oracle
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/nna/conv1d_oracle.py
                   $<TARGET_FILE:onnxc_cli>)
  set_tests_properties(nna_conv1d_oracle PROPERTIES SKIP_RETURN_CODE 77)
endif()

# Memory read bandwidth tool used by bench/lowbit_bench.py (not a test).
add_executable(onnxc_membw ${PROJECT_SOURCE_DIR}/bench/membw.c)
find_package(Threads REQUIRED)
target_link_libraries(onnxc_membw PRIVATE Threads::Threads)
