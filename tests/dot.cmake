# onnxc dot: the real models, a control-flow example and a model-local
# function drawn as SVG (parsed as XML, every node named) and as .dot text.
if(SYSTEM_PYTHON3)
  set(ONNXC_DOT_MODELS ${PROJECT_SOURCE_DIR}/examples/fizzbuzz.onnxtxt
      ${PROJECT_SOURCE_DIR}/tests/check/cases/ref_attr_in_function.onnxtxt)
  if(EXISTS "${ONNXC_SHARED}/models")
    file(GLOB ONNXC_DOT_REAL ${ONNXC_SHARED}/models/*.onnx)
    list(APPEND ONNXC_DOT_MODELS ${ONNXC_DOT_REAL} ${ONNXC_SHARED}/testdata/node/test_loop11/model.onnx
         ${ONNXC_SHARED}/testdata/node/test_scan9_sum/model.onnx)
  endif()
  add_test(NAME dot_render
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/dot/render.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/dot_render ${ONNXC_DOT_MODELS})
endif()
