# wasm.cmake - the JavaScript package's tests (js/test/: the API over every
# element type, external data, errors, and ONNX's node conformance cases)
# in node, and the demo page in headless Chromium (wasm_page), through the WebAssembly module of `make wasm` (build-wasm/). Without
# node or that build (no emscripten: `make test` builds it when emcc is
# there) the test reports itself skipped, with the reason.
find_program(ONNXC_NODE node)
if(ONNXC_NODE)
  add_test(NAME wasm_js
           COMMAND ${ONNXC_NODE} ${PROJECT_SOURCE_DIR}/js/test/ctest.mjs ${PROJECT_SOURCE_DIR}/build-wasm)
  set_tests_properties(wasm_js PROPERTIES SKIP_RETURN_CODE 77 LABELS "release-only"
                       ENVIRONMENT "ONNXC_SHARED=${ONNXC_SHARED}" TIMEOUT 1500)
endif()

# The demo page (js/demo/) in headless Chromium over a local server, its
# outputs checked against this build's `onnxc run` on the same input
# (js/test/page_test.mjs); skipped without chromium or build-wasm.
if(ONNXC_NODE)
  add_test(NAME wasm_page
           COMMAND ${ONNXC_NODE} ${PROJECT_SOURCE_DIR}/js/test/page_test.mjs ${PROJECT_SOURCE_DIR}/build-wasm
                   $<TARGET_FILE:onnxc_cli>)
  set_tests_properties(wasm_page PROPERTIES SKIP_RETURN_CODE 77 LABELS "release-only" TIMEOUT 180)
endif()

# The SIMD128 element-wise rows (kernels/ewise_wasm.c) and vmath table
# (kernels/vmath_wasm.c) against the operators' expressions and the
# portable table: natively the dispatch check only (no SIMD128 entries). The
# SIMD128 checks run when the file is built with emcc -msimd128 and node:
#   emcc -O2 -msimd128 -Isrc -Iinclude tests/unit/test_ewise_wasm.c
#     build-wasm/libonnxc.a -sENVIRONMENT=node -o t.js && node t.js
onnxc_unit_test(test_ewise_wasm)
