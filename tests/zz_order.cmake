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
# suitetime6 measured CPU seconds (user+sys of the test and its children,
# from one run each on the 2-core machine) where it could: ASan's
# version_conformance_down 130, 24 since its listed refusals run in batches
# (tests/version/expected_batched.sh), fuzz_text_seeds 38, example_run_model
# 32, release compile_node_cases 151 (two jobs), check_optimized_bench 62
# (one process after another, so the longest single-core test of the
# release suite, not listed before), check_oracle_onnx 12 (down from 75
# since it runs through `onnxc batch`), install_tree 22 after its
# --no-cuts passes, example_run_model 10. The compile_contrib_<family>
# tests (one a family of tests/contrib, release only) are listed at an
# estimate, for when they exist.
if(ONNXC_SANITIZE)
  # (fuzz_text_seeds first: fuzz_session_short and fuzz_text_short wait for it)
  set(_costs fuzz_text_seeds 140 fuzz_session_short 90
             concurrent_node 80 ort_contrib_quant 75 version_conformance_up 50 test_special 45
             example_run_model 45 fuzz_tensorio_short 37 fuzz_text_short 35 fuzz_convert_short 30
             schema_ctx_bodies 38 fuzz_infer_short 22 check_text_cases 33 fuzz_check_short 22
             conformance_node 30 ort_contrib_nn 25 version_conformance_down 25 opscore_node 20)
else()
  set(_costs compile_node_cases 90 check_optimized_bench 70 version_vs_onnx112 45
             version_light_down_up 40 text_oracle_onnx112 36 conformance_light 35
             install_tree 32 version_sweep 30 compile_contrib_quant 25 compile_contrib_attn 25
             compile_contrib_gqa 25 compile_contrib_nn 25 compile_contrib_lowbit 25
             compile_contrib_sparse 25 compile_model_e2e 22 test_special 22 python 20
             version_conformance_down 20 check_oracle_onnx 16 compile_domains 16 test_proto_big 15
             compile_recurrent 14 half_gemm_ort 13 version_conformance_up 12 example_run_model 12
             conformance_node 10 proto_roundtrip 10)
endif()
while(_costs)
  list(POP_FRONT _costs _name _cost)
  if(TEST ${_name})
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  endif()
endwhile()
