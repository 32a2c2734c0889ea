# The Python package (python/, issue 16): setup.py builds the extension
# against this build's libonnxc.a, then pytest runs python/tests (every element
# type, layouts, errors, threads, the tooling against python3-onnx, and onnx's
# backend harness on the conformance data). Release only: Python under
# AddressSanitizer needs the runtime preloaded.
if(SYSTEM_PYTHON3)
  add_test(NAME python
           COMMAND sh ${PROJECT_SOURCE_DIR}/tests/python/run.sh ${SYSTEM_PYTHON3}
                   ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${ONNXC_SHARED}/testdata)
else()
  add_test(NAME python COMMAND sh -c "echo 'skipped: no /usr/bin/python3'; exit 77")
endif()
set_tests_properties(python PROPERTIES LABELS release-only SKIP_RETURN_CODE 77 TIMEOUT 600)
