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

if(EXISTS "${ONNXC_CONFORMANCE_DATA}/node")
  # Fails when a case outside the list fails, or a listed case passes.
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
