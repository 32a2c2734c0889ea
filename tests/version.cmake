# Opset conversion (src/version/): one unit case per adapter (before/after in
# the text syntax), then every conformance case converted, checked and run
# against its expected outputs: up to the newest opset (--opset 28), down to
# the lowest opset at which the model's ops exist (--opset min), and down then
# back up (--opset min,28). The lists name the cases expected to fail, mostly clear
# refusals (tools/update_version_expected.sh regenerates them).
onnxc_unit_test(test_version)

set(_v_data "${ONNXC_SHARED}/testdata")
if(EXISTS "${_v_data}/node")
  set(_v_suites "${_v_data}/node")
  foreach(suite pytorch-converted pytorch-operator simple)
    if(EXISTS "${_v_data}/${suite}")
      list(APPEND _v_suites "${_v_data}/${suite}")
    endif()
  endforeach()
  # random outputs, tested by statistics in tests/unit/test_special.c
  set(_v_random --exclude node/test_bernoulli --exclude node/test_training_dropout)
  # --skip-unchanged: a conversion that leaves the same program for the
  # runtime (same graph, every node bound to the same operator version; most
  # node cases converted up to 28, many down to their min) is converted and
  # checked but not run again: conformance_node and conformance_models run
  # those very cases (ONNXC_CONFORMANCE_DATA is this folder whenever these
  # tests exist), in this suite and under the sanitizers.
  list(APPEND _v_random --skip-unchanged)
  # Under the sanitizers the up conversions are converted and checked, not
  # run (--convert-only; the cases of the --expected list still run): the
  # converted programs bind their nodes to the newest operator versions,
  # whose kernels conformance_node, opscore_node and the other node-case
  # tests run under the sanitizers, and this suite's
  # release pass checks the converted outputs. The adapters' code, the part
  # only this test reaches, stays under the sanitizers. (The down
  # conversions still run there: old operator versions' kernels that no
  # other test runs under them.) Measured under ASan on 702 of the cases:
  # 132 -> 112 s CPU (the per-case load, conversion and check dominate).
  set(_v_up_only)
  if(ONNXC_SANITIZE)
    set(_v_up_only --convert-only)
  endif()
  add_test(NAME version_conformance_up
           COMMAND onnxc_cli test --jobs 2 --opset 28 ${_v_random} ${_v_up_only}
                   --expected ${PROJECT_SOURCE_DIR}/tests/version/expected_up.txt ${_v_suites})
  # Its ~680 expected failures (refusals) run in batches, not in a process
  # each as `onnxc test --expected` runs them: expected_batched.sh gives the
  # same verdict from two runs (the other cases must pass, the listed ones
  # fail). Under ASan a process a case cost ~0.14 s CPU against ~0.02 in a
  # batch: ~94 of this test's 156 s of CPU there.
  add_test(NAME version_conformance_down
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/version/expected_batched.sh
                   $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR}/tests/version/expected_min.txt
                   --jobs 2 --opset min ${_v_random} -- ${_v_suites})
  add_test(NAME version_conformance_down_up
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/version/expected_batched.sh
                   $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR}/tests/version/expected_down.txt
                   --jobs 2 --opset min,28 ${_v_random} -- ${_v_suites})
  # mostly the same refusals as version_conformance_down: once is enough under the sanitizers
  set_tests_properties(version_conformance_down_up PROPERTIES LABELS release-only)
endif()

# onnx 1.12's version converter as an oracle (opsets <= 17): both convert,
# both converted models run, outputs agree (skipped without python3-onnx).
# Its ~1,500 onnxc commands go through `onnxc batch` (one start of onnxc)
# and onnx's conversions through one forked child that a crash replaces:
# 188 s CPU before, 33 s after (the test's checks unchanged).
if(SYSTEM_PYTHON3 AND EXISTS "${_v_data}/node")
  add_test(NAME version_vs_onnx112
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/version/oracle_onnx112.py
                   $<TARGET_FILE:onnxc_cli> ${_v_data})
  set_tests_properties(version_vs_onnx112 PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()

# Full-size CNNs of the light suite (opset 9): down to the lowest opset of
# their ops, then up to 28, and run.
if(EXISTS "${_v_data}/light")
  add_test(NAME version_light_down_up
           COMMAND onnxc_cli test --jobs 2 --timeout 1200 --opset min,28 ${_v_data}/light)
  set_tests_properties(version_light_down_up PROPERTIES LABELS release-only)
endif()

# Every case converted to one opset after another (odd ones, and 6): refusals
# are allowed, wrong outputs are not. A conversion that is the same program
# for the runtime as the one to an earlier opset of the list is not run
# again (its outputs were checked with that one): sweep.sh.
if(EXISTS "${_v_data}/node")
  add_test(NAME version_sweep
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/version/sweep.sh $<TARGET_FILE:onnxc_cli>
                   ${_v_data} 6 9 11 13 15 17 19 21 23 25 27)
  set_tests_properties(version_sweep PROPERTIES LABELS release-only)
endif()
# what the sweep and --skip-unchanged do not run again cannot hide a wrong
# output (a case with a wrong expected output still fails)
if(EXISTS "${_v_data}/node/test_abs" AND EXISTS "${_v_data}/node/test_relu")
  add_test(NAME version_sweep_catches
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/version/sweep_catches.sh
                   $<TARGET_FILE:onnxc_cli> ${_v_data})
endif()

# The real models of ../shared/models converted to opsets 28 and 11 give the
# originals' outputs (skipped without python3-onnx).
if(SYSTEM_PYTHON3 AND EXISTS "${ONNXC_SHARED}/models")
  add_test(NAME version_real_models
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/version/real_models.py
                   $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED}/models)
  set_tests_properties(version_real_models PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
endif()

# `onnxc batch` (what the oracle above relies on): a status line per
# command, each command's standard error in its own file, the exit status
if(EXISTS "${_v_data}/node/test_abs")
  add_test(NAME cli_batch
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/version/batch.sh $<TARGET_FILE:onnxc_cli>
                   ${_v_data}/node/test_abs)
endif()
