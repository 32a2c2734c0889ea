# wasm_threads.cmake - the JavaScript package over the pthreads WebAssembly
# build (`make wasm-threads`: build-wasm-threads/) beside the single-threaded
# one (build-wasm/): the API tests with their 2-threads-equal-1 case, and the
# node conformance cases of the operators a thread pool splits, on 2 threads
# (js/test/ctest_threads.mjs). Skipped, with the reason, without node, either
# build or SharedArrayBuffer.
find_program(ONNXC_NODE node)
if(ONNXC_NODE)
  add_test(NAME wasm_js_threads
           COMMAND ${ONNXC_NODE} ${PROJECT_SOURCE_DIR}/js/test/ctest_threads.mjs
                   ${PROJECT_SOURCE_DIR}/build-wasm-threads)
  set_tests_properties(wasm_js_threads PROPERTIES SKIP_RETURN_CODE 77 LABELS "release-only"
                       ENVIRONMENT "ONNXC_SHARED=${ONNXC_SHARED};ONNXC_WASM_DIR=${PROJECT_SOURCE_DIR}/build-wasm"
                       TIMEOUT 900)
endif()
