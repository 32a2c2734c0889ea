# onnxruntime's com.microsoft operators (src/ops/contrib/) against
# onnxruntime-node: each tests/contrib/gen_*.py writes its cases (models
# from python3-onnx, .npy inputs) and tests/oracle/ort_cases.mjs runs them
# through both and compares, error cases included. Skipped (77) without
# node, onnxruntime-node or python3-onnx.
find_program(NODE_EXECUTABLE node)
file(GLOB ONNXC_CONTRIB_GENERATORS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/contrib/gen_*.py)
foreach(gen ${ONNXC_CONTRIB_GENERATORS})
  get_filename_component(family ${gen} NAME_WE)
  string(REPLACE "gen_" "ort_contrib_" name ${family})
  if(NODE_EXECUTABLE)
    add_test(NAME ${name}
             COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_cases.mjs
                     $<TARGET_FILE:onnxc_cli> ${gen})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'node not found'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS contrib)
endforeach()
