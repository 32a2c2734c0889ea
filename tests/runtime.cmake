# Runtime tests: unit tests of values/sessions/control flow, and the
# conformance suites run through `onnxc test` against an expected-failures list.
onnxc_unit_test(test_runtime)

# Conformance data: ../shared/testdata, else Debian's libonnx-testdata.
set(ONNXC_CONFORMANCE_DATA "${ONNXC_SHARED}/testdata")
if(NOT EXISTS "${ONNXC_CONFORMANCE_DATA}/node" AND EXISTS "/usr/share/libonnx-testdata/data/node")
  set(ONNXC_CONFORMANCE_DATA "/usr/share/libonnx-testdata/data")
endif()
set(ONNXC_EXPECTED_FAILURES "${PROJECT_SOURCE_DIR}/tests/conformance/expected_failures.txt")
if(ONNXC_CONFORMANCE_DATA STREQUAL "/usr/share/libonnx-testdata/data")
  set(ONNXC_EXPECTED_FAILURES "${PROJECT_SOURCE_DIR}/tests/conformance/expected_failures_libonnx.txt")
endif()

if(EXISTS "${ONNXC_CONFORMANCE_DATA}/node/test_acos")
  # a listed random case may pass by chance; another listed case may not
  add_test(NAME conformance_expected_random
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/conformance/expected_random.sh
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_CONFORMANCE_DATA}/node
                   ${CMAKE_CURRENT_BINARY_DIR}/expected_random)
endif()
if(EXISTS "${ONNXC_CONFORMANCE_DATA}/node")
  # Fails when a case outside the list fails, or a listed case passes (a
  # case listed as random may: its draws can match the reference by chance).
  # `onnxc test` runs 16 cases a child process (--batch): under ASan a
  # child's exit and leak check cost more than a case (all 1802 cases: about
  # 285 -> 29 s CPU); a crash, a timeout or a leak is still pinned on its case.
  add_test(NAME conformance_node
           COMMAND onnxc_cli test --jobs 2 --expected ${ONNXC_EXPECTED_FAILURES}
                   ${ONNXC_CONFORMANCE_DATA}/node)
  set(_suites "")
  foreach(suite simple pytorch-converted pytorch-operator)
    if(EXISTS "${ONNXC_CONFORMANCE_DATA}/${suite}")
      list(APPEND _suites "${ONNXC_CONFORMANCE_DATA}/${suite}")
    endif()
  endforeach()
  if(_suites)
    add_test(NAME conformance_models
             COMMAND onnxc_cli test --jobs 2 --expected ${ONNXC_EXPECTED_FAILURES} ${_suites})
  endif()
  if(EXISTS "${ONNXC_CONFORMANCE_DATA}/light")
    # full-size CNNs: too slow under the sanitizers
    add_test(NAME conformance_light
             COMMAND onnxc_cli test --jobs 2 --timeout 1200 --expected ${ONNXC_EXPECTED_FAILURES}
                     ${ONNXC_CONFORMANCE_DATA}/light)
    set_tests_properties(conformance_light PROPERTIES LABELS release-only)
  endif()
else()
  message(STATUS "onnxc: no conformance data (../shared/testdata or libonnx-testdata)")
endif()
onnxc_unit_test(test_fold)
# Concat in place: outputs and placement counts over repeated runs
onnxc_unit_test(test_concat_place)
onnxc_unit_test(test_qgemm)
onnxc_unit_test(test_qconv)
onnxc_unit_test(test_qconv_dw)

# One session run from many threads at once: outputs equal a serial run's,
# bit for bit (tests/unit/test_concurrent.c). The ThreadSanitizer build
# (build-tsan, `make test`) runs the same tests and fails on any data race.
add_executable(test_concurrent ${PROJECT_SOURCE_DIR}/tests/unit/test_concurrent.c
                               ${PROJECT_SOURCE_DIR}/src/cli/runio.c)
target_include_directories(test_concurrent PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(test_concurrent PRIVATE onnxc)
add_test(NAME concurrent_examples
         COMMAND test_concurrent --threads 4 --runs 50 examples/perceptron.onnxtxt
                 examples/double.onnxtxt tests/concurrency/winograd_conv.onnxtxt
                 tests/concurrency/concat_inplace.onnxtxt
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
if(EXISTS "${ONNXC_CONFORMANCE_DATA}/node")
  # every operator's kernel from four threads at once: races in kernel state
  add_test(NAME concurrent_node
           COMMAND test_concurrent --threads 4 --runs 10 ${ONNXC_CONFORMANCE_DATA}/node)
endif()
if(EXISTS "${ONNXC_SHARED}/models/silero_vad_16k_op15.onnx")
  # control flow (If, Loop), fused convolutions, STFT, packed weights
  add_test(NAME concurrent_models
           COMMAND test_concurrent --threads 4 --runs 8
                   --dims input=1,512 --dims state=2,1,128 --i64 sr=16000
                   ${ONNXC_SHARED}/models/silero_vad_16k_op15.onnx --dims input=1,1280
                   ${ONNXC_SHARED}/models/melspectrogram.onnx
                   --dims input_1=1,76,32,1 ${ONNXC_SHARED}/models/embedding_model.onnx
                   ${ONNXC_CONFORMANCE_DATA}/simple)
endif()
set_tests_properties(concurrent_examples PROPERTIES LABELS concurrency)
if(TEST concurrent_node)
  set_tests_properties(concurrent_node PROPERTIES LABELS concurrency)
endif()
if(TEST concurrent_models)
  set_tests_properties(concurrent_models PROPERTIES LABELS concurrency)
endif()

# The thread pool and the core list: every index once over thousands of short
# jobs, nested and concurrent callers, no CPU when idle, pinning.
onnxc_unit_test(test_split_plan)
onnxc_unit_test(test_threadpool)
target_link_libraries(test_threadpool PRIVATE pthread)
set_tests_properties(test_threadpool PROPERTIES LABELS concurrency)

# The public header as a user sees it: introspection, values, run options,
# environments, logging, custom operators, threads, bad arguments.
onnxc_unit_test(test_api)
# onnxc_session_run_into writing outputs in place (a KV cache appended in its own buffer)
onnxc_unit_test(test_run_inplace)
target_link_libraries(test_run_inplace PRIVATE m)
# parallel_branches: independent nodes side by side give the node-by-node bytes
onnxc_unit_test(test_branches)
target_link_libraries(test_branches PRIVATE pthread)
set_tests_properties(test_branches PROPERTIES LABELS concurrency)
target_link_libraries(test_api PRIVATE m pthread)
set_tests_properties(test_api PROPERTIES LABELS concurrency)

# What the ThreadSanitizer build compiles (`make build-tsan`): every program a
# test labelled `concurrency` runs. Add a target here when labelling a test.
add_custom_target(concurrency_tests DEPENDS test_concurrent test_api test_threadpool
                  test_split_threads test_branches)
