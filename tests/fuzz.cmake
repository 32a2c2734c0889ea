# libFuzzer targets (clang, ONNXC_FUZZ=ON; the library itself is built with
# coverage instrumentation then). `make test` runs each for a short time in
# the sanitizer build and replays tests/fuzz/regressions/<target>/; long runs
# by hand, e.g.
#   tests/fuzz/seed.sh models build-asan/tests/fuzz_check build-asan/onnxc \
#     ../shared/testdata . /tmp/fz_check 3600
# (kinds and dictionaries: tests/fuzz/seed.sh).
if(NOT ONNXC_FUZZ)
  return()
endif()

function(onnxc_fuzz_target name)
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.c ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE onnxc)
  # every input that once found a bug is run again
  file(GLOB regressions ${PROJECT_SOURCE_DIR}/tests/fuzz/regressions/${name}/*)
  if(regressions)
    add_test(NAME ${name}_regressions COMMAND ${name} ${regressions})
    set_tests_properties(${name}_regressions PROPERTIES LABELS asan-only)
  endif()
endfunction()

onnxc_fuzz_target(fuzz_decode)
onnxc_fuzz_target(fuzz_text)
onnxc_fuzz_target(fuzz_check)
onnxc_fuzz_target(fuzz_infer)
onnxc_fuzz_target(fuzz_convert)
onnxc_fuzz_target(fuzz_session)
onnxc_fuzz_target(fuzz_external)
onnxc_fuzz_target(fuzz_tensorio)
# the server's request parsing (only when it is built)
set(serve_spec "")
if(ONNXC_SERVE_FOUND)
  onnxc_fuzz_target(fuzz_serve ${ONNXC_SERVE_SOURCES})
  target_link_libraries(fuzz_serve PRIVATE PkgConfig::ONNXC_SERVE_MHD PkgConfig::ONNXC_SERVE_JANSSON
                                           PkgConfig::ONNXC_SERVE_GNUTLS)
  set(serve_spec "fuzz_serve:serve:80000")
endif()

if(EXISTS "${ONNXC_SHARED}/testdata/node")
  # target:seed kind:inputs run (deterministic, -seed=1: the same inputs in
  # every run, so that make test is repeatable; about 5-80 s each in CI).
  # The input counts: where the run, on its corpus and -seed=1, had reached
  # 90% or more of the new coverage (edges, and 87% or more of the features)
  # that a run of the earlier counts (in brackets) reached past its seeds;
  # a run of N inputs is exactly the first N inputs of a longer one, so these
  # runs still reach that coverage (1.17 million inputs in all, 1.86 before).
  # Long fuzzing is done by hand (above).
  # The time bound only stops a run gone wrong: make test runs this suite
  # beside the release lane, and a bound near a run's normal time would cut
  # the runs short on a loaded machine (fewer inputs tried, silently).
  foreach(spec "fuzz_decode:models:100000" # (250000)
               "fuzz_text:text:300000" # (500000)
               "fuzz_check:models:200000" # (300000)
               "fuzz_infer:models:60000" # (100000)
               "fuzz_convert:convert:85000" # (120000)
               "fuzz_session:text:220000" # (300000)
               "fuzz_external:external:60000"
               "fuzz_tensorio:tensors:65000" # (80000)
               ${serve_spec}) # (fuzz_serve: 150000)
    string(REPLACE ":" ";" f "${spec}")
    list(GET f 0 target)
    list(GET f 1 kind)
    list(GET f 2 runs)
    set(secs 480)
    set(env "ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1;FUZZ_RUNS=${runs}")
    add_test(NAME ${target}_short
             COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz/seed.sh ${kind} $<TARGET_FILE:${target}>
                     $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/testdata ${PROJECT_SOURCE_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/${target}_work ${secs})
    if(kind STREQUAL "text")
      # the text corpus is built once (fuzz_text_seeds) for both text targets
      list(APPEND env "FUZZ_SEEDS=${CMAKE_CURRENT_BINARY_DIR}/fuzz_text_seeds/corpus")
      set_tests_properties(${target}_short PROPERTIES FIXTURES_REQUIRED fuzz_text_seeds)
    endif()
    set_tests_properties(${target}_short PROPERTIES LABELS asan-only TIMEOUT 600
                         ENVIRONMENT "${env}")
  endforeach()
  # the seed corpus of the text targets: the examples, the check cases, past
  # findings and 250 node models printed in the text syntax (seed.sh)
  add_test(NAME fuzz_text_seeds
           COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz/seed.sh text --seeds-only
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/testdata ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz_text_seeds 0)
  set_tests_properties(fuzz_text_seeds PROPERTIES LABELS asan-only FIXTURES_SETUP fuzz_text_seeds
                       ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
endif()
