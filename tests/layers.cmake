# The include order of DESIGN.md's "Layers" table (tools/check_layers.py):
# every #include of src/ and of the Python extension against the layer order,
# the public header only for src/api and its clients, the clients (cli,
# serve, python) on include/onnxc.h only. Known violations of work in flight
# are listed in tools/layer_exceptions.txt. Also run by .ci/run before the build.
if(SYSTEM_PYTHON3)
  add_test(NAME layers COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/check_layers.py
           --root ${PROJECT_SOURCE_DIR} --design ${ONNXC_SHARED}/DESIGN.md)
else()
  add_test(NAME layers COMMAND sh -c "echo 'skipped: no /usr/bin/python3'; exit 77")
  set_tests_properties(layers PROPERTIES SKIP_RETURN_CODE 77)
endif()
