# The generation loop (onnxc_generate*, `onnxc generate`, onnxc.generate)
# against onnxruntime-node's greedy loop on the tiny decoders of
# tests/generate/make_decoders.py: no cache and Optimum's decoder-with-past
# (ort_generate, with the bad inputs), and onnxruntime-genai's layout
# (ort_generate_genai: GroupQueryAttention, MatMulNBits, ...; skipped, 77,
# while onnxc has no kernel for one of them). Skipped without node,
# onnxruntime-node or python3-onnx. Python's onnxc.generate is compared too
# when the extension is built in BUILD/python (the python test builds it).
find_program(NODE_EXECUTABLE node)
foreach(part "ort_generate;a,b,errors" "ort_generate_genai;c")
  list(GET part 0 name)
  list(GET part 1 only)
  if(NODE_EXECUTABLE)
    add_test(NAME ${name}
             COMMAND ${NODE_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/oracle/ort_generate.mjs
                     $<TARGET_FILE:onnxc_cli> ${PROJECT_SOURCE_DIR}/tests/generate/make_decoders.py
                     --only ${only})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'node not found'; exit 77")
  endif()
  # after the python test, which builds the extension the comparison uses
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS generate TIMEOUT 300
                                          DEPENDS python)
endforeach()

# The loop on models whose tokens follow from their weights by hand, the
# layouts' errors, genai_config.json and the sampler.
onnxc_unit_test(test_generate)

# Optimum's layout with the KV cache in place (the kv_cache pass,
# src/opt/kv_cache.c; src/api/generate_kv.c): the path taken, fixed buffers,
# the same tokens as the copying path, the session's listed inputs and plain
# runs unchanged; the KVCacheAppend kernel and AttentionBHSDFused's kv_len
# against plain ONNX operators.
onnxc_unit_test(test_generate_kv)
