# The four real models against onnxruntime (npm onnxruntime-node, installed by
# scripts/setup.sh into build/ort-oracle): issue 7, done-when 2. Skipped (77)
# when node, the package or the models are absent.
find_program(NODE_EXECUTABLE node)
if(EXISTS "${ONNXC_SHARED}/models")
  # one thread (seed 7), and two threads on another seed (the parallel paths)
  foreach(cfg "ort_oracle_models;7;1" "ort_oracle_models_2threads;11;2")
    list(GET cfg 0 name)
    list(GET cfg 1 seed)
    list(GET cfg 2 threads)
    if(NODE_EXECUTABLE)
      add_test(NAME ${name}
               COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_compare.mjs
                       $<TARGET_FILE:onnxc_cli> ${ONNXC_SHARED} ${seed} --threads ${threads})
    else()
      add_test(NAME ${name} COMMAND sh -c "echo 'node not found'; exit 77")
    endif()
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
  endforeach()
endif()

# Weight-only quantized MatMul (MatMulDQFused) against onnxruntime's float
# DequantizeLinear + MatMul (issue 14)
if(NODE_EXECUTABLE)
  add_test(NAME ort_oracle_lowbit
           COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_lowbit.mjs
                   $<TARGET_FILE:onnxc_cli>)
else()
  add_test(NAME ort_oracle_lowbit COMMAND sh -c "echo 'node not found'; exit 77")
endif()
set_tests_properties(ort_oracle_lowbit PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)

# NonMaxSuppression (src/ops/onnx/nms.c: bucketed kept boxes) against
# onnxruntime: torchvision's batched form with thousands kept, classes,
# center boxes, thresholds, ties, infinite boxes
if(NODE_EXECUTABLE)
  add_test(NAME ort_oracle_nms
           COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_nms.mjs
                   $<TARGET_FILE:onnxc_cli>)
else()
  add_test(NAME ort_oracle_nms COMMAND sh -c "echo 'node not found'; exit 77")
endif()
set_tests_properties(ort_oracle_nms PROPERTIES SKIP_RETURN_CODE 77 LABELS release-only)
