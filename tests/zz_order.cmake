# The order of `make test`'s ctest -j runs on a clean clone (read last: the
# areas are included in name order). ctest starts the tests of highest COST
# first; without Testing/Temporary/CTestCostData.txt (a clean clone has none)
# every test costs the same and they start in name order, so a long test
# named late (version_sweep) could start when everything else is done and
# run alone on one of the two cores. The figures are seconds of one CI-like
# run (2 jobs), estimated from CPU time where a test was just made cheaper
# (version_vs_onnx112 through `onnxc batch`; `onnxc test` running 16 cases
# a child, which took ASan's conformance_node from first to middling, and the
# ort_contrib_* families' runs through one `onnxc batch`; the fuzz runs
# scaled to their new input counts, the text corpus built once for two);
# only their order matters, and a later run's cost data replaces them.
if(ONNXC_SANITIZE)
  # (fuzz_text_seeds first: fuzz_session_short and fuzz_text_short wait for it)
  set(_costs fuzz_text_seeds 140 version_conformance_down 130 fuzz_session_short 90 concurrent_node 80
             ort_contrib_quant 75 fuzz_text_short 35 version_conformance_up 50 test_special 45
             example_run_model 45 fuzz_tensorio_short 37 fuzz_convert_short 30
             schema_ctx_bodies 38 fuzz_infer_short 22 check_text_cases 33 fuzz_check_short 22
             conformance_node 30 ort_contrib_nn 25 opscore_node 20)
else()
  set(_costs install_tree 90 compile_node_cases 85 check_oracle_onnx 75 version_vs_onnx112 65
             version_light_down_up 40 text_oracle_onnx112 36 conformance_light 35
             version_sweep 30 test_special 22 version_conformance_down 20 python 20
             test_proto_big 15 compile_recurrent 14 half_gemm_ort 13 version_conformance_up 12
             example_run_model 12 conformance_node 10 proto_roundtrip 10)
endif()
while(_costs)
  list(POP_FRONT _costs _name _cost)
  if(TEST ${_name})
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  endif()
endwhile()
