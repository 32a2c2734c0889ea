# Checker: mutations of valid models rejected for the right rule; every
# shared model valid; agreement with python-onnx's checker; speed.
add_executable(test_check ${PROJECT_SOURCE_DIR}/tests/unit/test_check.c)
target_include_directories(test_check PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(test_check PRIVATE onnxc)
add_test(NAME test_check COMMAND test_check -s ${ONNXC_SHARED})

add_test(NAME check_all_models
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/check/check_all.sh $<TARGET_FILE:onnxc_cli>
                 ${ONNXC_SHARED} ${PROJECT_SOURCE_DIR})
set_tests_properties(check_all_models PROPERTIES SKIP_RETURN_CODE 77)

if(SYSTEM_PYTHON3)
  add_test(NAME check_oracle_onnx
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/check/oracle.py
                   $<TARGET_FILE:test_check> $<TARGET_FILE:onnxc_cli>
                   ${CMAKE_CURRENT_BINARY_DIR}/check_oracle ${ONNXC_SHARED})
  # the same cases run in-process under ASan in test_check
  set_tests_properties(check_oracle_onnx PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()

# Benchmark: checking the largest shared model takes under 20 ms.
add_executable(bench_check ${PROJECT_SOURCE_DIR}/tests/unit/bench_check.c)
target_include_directories(bench_check PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_check PRIVATE onnxc)
file(GLOB ONNXC_SHARED_MODELS ${ONNXC_SHARED}/models/*.onnx)
set(ONNXC_LARGEST_MODEL "")
set(largest_size 0)
foreach(f ${ONNXC_SHARED_MODELS})
  file(SIZE ${f} sz)
  if(sz GREATER largest_size)
    set(largest_size ${sz})
    set(ONNXC_LARGEST_MODEL ${f})
  endif()
endforeach()
if(ONNXC_LARGEST_MODEL)
  add_test(NAME check_bench_largest_model COMMAND bench_check ${ONNXC_LARGEST_MODEL} 20)
  set_tests_properties(check_bench_largest_model PROPERTIES LABELS release-only)
endif()

# Data protos (notes §2.10) of every node test input/output file.
add_executable(test_check_data ${PROJECT_SOURCE_DIR}/tests/unit/test_check_data.c)
target_include_directories(test_check_data PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(test_check_data PRIVATE onnxc)
add_test(NAME test_check_data COMMAND test_check_data ${ONNXC_SHARED})
set_tests_properties(test_check_data PROPERTIES SKIP_RETURN_CODE 77)

add_test(NAME check_rules_listed
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/check/rules_listed.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR})

# Text models of tests/check/cases, each naming what plain, --full and
# --strict must find (the "ai.onnx" alias, custom domains, Loop/Scan bodies,
# graph names, shadowing, ref_attr_name, local function calls).
add_test(NAME check_text_cases
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/check/cases.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/check/cases)
add_test(NAME check_aionnx_run
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/check/aionnx_run.sh $<TARGET_FILE:onnxc_cli>
                 ${PROJECT_SOURCE_DIR}/tests/check/cases/aionnx_run.onnxtxt
                 ${CMAKE_CURRENT_BINARY_DIR}/aionnx_run)

# Issue 30 done-when: the `convert --optimize` output of every model of
# ../shared/bench/bench.json passes `check --strict` and `infer --strict`
# (its ai.onnxc nodes match their schemas). The generated models are made
# into $ONNXC_BENCH_MODELS (as sidebyside.py does) when absent: about two
# minutes, resnet50_qdq calibrated with build/ort-oracle's onnxruntime-node.
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_SHARED}/bench/bench.json")
  add_test(NAME check_optimized_bench
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/check/optimized_bench.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}
                   ${CMAKE_CURRENT_BINARY_DIR}/optimized_bench
                   ${PROJECT_BINARY_DIR}/ort-oracle/node_modules)
  set_tests_properties(check_optimized_bench PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1500
                                                        LABELS release-only)
endif()
