# The order of `make test`'s ctest -j runs on a clean clone (read last: the
# areas are included in name order). ctest starts the tests of highest COST
# first; without Testing/Temporary/CTestCostData.txt (a clean clone has none)
# every test costs the same and they start in name order, so a long test
# named late (version_sweep) could start when everything else is done and
# run alone on one of the two cores. The figures are seconds of one CI-like
# run (2 jobs; estimated from CPU time where a test was just made cheaper:
# version_vs_onnx112 through `onnxc batch`);
# only their order matters, and a later run's cost data replaces them.
if(ONNXC_SANITIZE)
  set(_costs conformance_node 260 version_conformance_down 210 version_conformance_up 130
             ort_contrib_quant 130 fuzz_session_short 120 opscore_node 80 concurrent_node 80
             fuzz_text_short 70 ort_contrib_nn 50 ort_contrib_lowbit 45 fuzz_tensorio_short 45
             test_special 45 example_run_model 45 fuzz_convert_short 40)
else()
  set(_costs install_tree 90 check_oracle_onnx 75 compile_node_cases 70 version_vs_onnx112 65
             version_conformance_down 45 version_light_down_up 40 conformance_node 40
             text_oracle_onnx112 36 conformance_light 35 version_sweep 35
             version_conformance_up 30 test_special 22 opscore_node 21
             version_conformance_down_up 20 proto_roundtrip 10)
endif()
while(_costs)
  list(POP_FRONT _costs _name _cost)
  if(TEST ${_name})
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  endif()
endwhile()
