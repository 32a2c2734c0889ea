# wasm.cmake - the WebAssembly build (emcmake cmake, `make wasm`): libonnxc
# as one .wasm module plus emscripten's JavaScript loader, for the package in
# js/. Included by CMakeLists.txt in place of the native library, tool, install
# and tests when the compiler is emscripten's.
#
#   ONNXC_WASM_SIMD     ON: -msimd128 (every current engine has WebAssembly
#                       SIMD; OFF builds the portable C kernels only)
#   ONNXC_WASM_THREADS  ON: -pthread, the thread pool on Web Workers over a
#                       SharedArrayBuffer (node; browsers only on
#                       cross-origin isolated pages). OFF: one thread, and
#                       pthread_create fails, so the pool runs every loop on
#                       the caller.
#
#   ONNXC_WASM_EXCLUDE  operator families left out of the module, a list of
#                       training (ai.onnx.preview.training and the losses),
#                       ml (ai.onnx.ml), strings, image (ImageDecoder),
#                       signal (DFT, STFT, windows), contrib (com.microsoft),
#                       rnn (RNN, GRU, LSTM); e.g.
#                       -DONNXC_WASM_EXCLUDE="training;ml;strings". Their
#                       tables leave the registry, so the linker drops their
#                       files; a model using one fails at session creation
#                       with "operator ... is not in this build".
#
# The output is build-wasm/libonnxc.mjs (an ES module whose default export
# makes the module: MODULARIZE + EXPORT_ES6) and build-wasm/libonnxc.wasm;
# the threaded build adds libonnxc.worker.js. The core needs no library: the
# optional ones of cmake/deps.cmake and the server are not built here.
option(ONNXC_WASM_SIMD "build the WebAssembly module with SIMD128" ON)
option(ONNXC_WASM_THREADS "build the WebAssembly module with pthreads (needs SharedArrayBuffer)" OFF)

set(ONNXC_WASM_FLAGS "")
if(ONNXC_WASM_SIMD)
  list(APPEND ONNXC_WASM_FLAGS -msimd128)
endif()
if(ONNXC_WASM_THREADS)
  list(APPEND ONNXC_WASM_FLAGS -pthread)
endif()
target_compile_options(onnxc_objects PRIVATE ${ONNXC_WASM_FLAGS})

set(ONNXC_WASM_EXCLUDE "" CACHE STRING
    "operator families left out of the WebAssembly module: training;ml;strings;image;signal;contrib;rnn")
set(ONNXC_WASM_FAMILIES training ml strings image signal contrib rnn)
set(ONNXC_WASM_EXCLUDE_DEFS "")
foreach(family IN LISTS ONNXC_WASM_EXCLUDE)
  if(NOT family IN_LIST ONNXC_WASM_FAMILIES)
    message(FATAL_ERROR "ONNXC_WASM_EXCLUDE: no operator family '${family}' (there are: ${ONNXC_WASM_FAMILIES})")
  endif()
  string(TOUPPER "${family}" upper)
  list(APPEND ONNXC_WASM_EXCLUDE_DEFS ONNXC_NO_OPS_${upper})
endforeach()
if(ONNXC_WASM_EXCLUDE_DEFS)
  # only the registry changes (src/ops/registry.c): the families' own files
  # are still compiled, and simply not linked, nothing referring to them
  string(REPLACE ";" ", " excluded "${ONNXC_WASM_EXCLUDE}")
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/ops/registry.c PROPERTIES COMPILE_DEFINITIONS
    "${ONNXC_WASM_EXCLUDE_DEFS};ONNXC_OPS_EXCLUDED=\"${excluded}\"")
endif()

add_library(onnxc STATIC $<TARGET_OBJECTS:onnxc_objects>)
target_include_directories(onnxc PUBLIC ${PROJECT_SOURCE_DIR}/include)

# What js/ calls, no more: the rest of the library is dropped by the linker
# (the smaller download). Kept in one list with js/src/api.mjs.
set(ONNXC_WASM_EXPORTS
    malloc free onnxc_wasm_session_options onnxc_wasm_error_new onnxc_wasm_error_message
    onnxc_wasm_error_code
    onnxc_version onnxc_model_load_buffer onnxc_model_free
    onnxc_session_create onnxc_session_free onnxc_session_threads
    onnxc_session_profile_top onnxc_session_profile_reset
    onnxc_session_input_count onnxc_session_output_count
    onnxc_session_input_name onnxc_session_output_name
    onnxc_session_input_type onnxc_session_output_type
    onnxc_type_kind_of onnxc_type_elem_type onnxc_type_rank onnxc_type_dim onnxc_type_dim_param
    onnxc_session_run onnxc_value_free onnxc_value_kind
    onnxc_tensor_create onnxc_tensor_create_strings onnxc_tensor_data onnxc_tensor_dtype
    onnxc_tensor_rank onnxc_tensor_dims onnxc_tensor_numel onnxc_tensor_nbytes
    onnxc_tensor_string onnxc_optional_has_value onnxc_optional_value
    onnxc_sequence_length onnxc_sequence_at)
list(TRANSFORM ONNXC_WASM_EXPORTS PREPEND "_")
string(REPLACE ";" "," ONNXC_WASM_EXPORT_LIST "${ONNXC_WASM_EXPORTS}")

add_executable(onnxc_wasm ${PROJECT_SOURCE_DIR}/js/src/module.c)
set_target_properties(onnxc_wasm PROPERTIES OUTPUT_NAME libonnxc SUFFIX .mjs)
target_link_libraries(onnxc_wasm PRIVATE onnxc)
target_compile_options(onnxc_wasm PRIVATE ${ONNXC_WASM_FLAGS})
target_link_options(onnxc_wasm PRIVATE ${ONNXC_WASM_FLAGS}
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createOnnxcModule
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=64MB
  -sENVIRONMENT=web,worker,node -sWASM_BIGINT=1
  -sEXPORTED_FUNCTIONS=${ONNXC_WASM_EXPORT_LIST}
  "-sEXPORTED_RUNTIME_METHODS=FS,UTF8ToString,HEAPU8"
  -sFORCE_FILESYSTEM=1)
if(ONNXC_WASM_THREADS)
  # the pool's workers are started with the module (pthread_create must not
  # wait for a Worker to load: a page's main thread cannot block on that);
  # js/ sets Module.onnxcPoolSize to the largest `threads` it will ask for
  target_link_options(onnxc_wasm PRIVATE -sPTHREAD_POOL_SIZE=Module.onnxcPoolSize
                                         -sDEFAULT_PTHREAD_STACK_SIZE=1MB)
  # libonnxc.worker.js is CommonJS (require, __filename); a package.json
  # beside it says so, or node takes it for an ES module wherever the nearest
  # package.json above says "type": "module" (js/dist/threads/ under js/) and
  # the workers fail to start. `make wasm-threads` writes one there too.
  file(WRITE ${CMAKE_BINARY_DIR}/package.json "{ \"type\": \"commonjs\" }\n")
endif()

# The onnxc tool as a node program (NODERAWFS: the host's files), for
# `node build-wasm/onnxc.js test ...`: the conformance of the same module code
# with the native tool's runner.
file(GLOB ONNXC_CLI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cli/*.c)
add_executable(onnxc_cli ${ONNXC_CLI_SOURCES} ${PROJECT_SOURCE_DIR}/src/serve/cmd_serve.c)
set_target_properties(onnxc_cli PROPERTIES OUTPUT_NAME onnxc SUFFIX .js EXCLUDE_FROM_ALL TRUE)
target_include_directories(onnxc_cli PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(onnxc_cli PRIVATE onnxc)
target_compile_options(onnxc_cli PRIVATE ${ONNXC_WASM_FLAGS})
target_link_options(onnxc_cli PRIVATE ${ONNXC_WASM_FLAGS} -sNODERAWFS=1 -sENVIRONMENT=node
                                      -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB
                                      -sEXIT_RUNTIME=1)
