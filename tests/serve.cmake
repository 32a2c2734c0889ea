# onnxc serve (tests/serve/): the Open Inference Protocol over real HTTP on
# 127.0.0.1 with Python's http.client (/usr/bin/python3 with numpy and onnx),
# when the server is built (libmicrohttpd and jansson found). In the ASan+UBSan
# build the same test runs a longer soak of mixed good and bad requests; the
# server exits on SIGTERM so that LeakSanitizer checks it.
if(ONNXC_SERVE_FOUND AND SYSTEM_PYTHON3)
  if(ONNXC_SANITIZE)
    set(ONNXC_SERVE_SOAK 20000)
  else()
    set(ONNXC_SERVE_SOAK 2000)
  endif()
  add_test(NAME serve_http
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve/test_serve.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/serve_http
                   --soak ${ONNXC_SERVE_SOAK} --shared ${ONNXC_SHARED})
  # also under ThreadSanitizer (make test's build-tsan runs the `concurrency` label):
  # connection threads, workers and batching share queues and sessions
  set_tests_properties(serve_http PROPERTIES TIMEOUT 300 LABELS concurrency)
  if(TARGET concurrency_tests)
    add_dependencies(concurrency_tests onnxc_cli)
  endif()
  # what makes it safe to deploy: bearer tokens (SIGHUP reload), model control,
  # connection/header/body/time limits under a slow-loris, the full queue, TLS
  add_test(NAME serve_secure
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve/test_serve_secure.py
                   $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/serve_secure)
  set_tests_properties(serve_secure PROPERTIES TIMEOUT 180 LABELS concurrency)
  # the KServe v2 gRPC endpoint (--grpc-port), when gRPC's C core is found:
  # a client on the same C core (tests/serve/grpc_client.c) carries messages
  # that the test makes and reads with Python's protobuf from
  # src/serve/grpc_service.proto (compiled here by protoc), so that the
  # server's own codec is checked against an independent one
  find_program(ONNXC_PROTOC protoc)
  if(ONNXC_GRPC_FOUND AND ONNXC_PROTOC)
    add_executable(grpc_client ${PROJECT_SOURCE_DIR}/tests/serve/grpc_client.c)
    target_link_libraries(grpc_client PRIVATE PkgConfig::ONNXC_SERVE_GRPC)
    # The client is the test's tool, not code under test: under ThreadSanitizer
    # it is built plain. Its frees run inside gRPC's uninstrumented threads, so
    # their stacks show no gRPC frame for the suppressions to match, and a
    # report on the client's side fails the server's test (a CI run did).
    if(ONNXC_TSAN)
      foreach(_prop COMPILE_OPTIONS LINK_OPTIONS)
        get_target_property(_opts grpc_client ${_prop})
        if(_opts)
          list(REMOVE_ITEM _opts -fsanitize=thread)
          set_property(TARGET grpc_client PROPERTY ${_prop} "${_opts}")
        endif()
      endforeach()
    endif()
    add_test(NAME serve_grpc
             COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve/test_serve_grpc.py
                     $<TARGET_FILE:onnxc_cli> ${CMAKE_CURRENT_BINARY_DIR}/serve_grpc
                     $<TARGET_FILE:grpc_client> ${ONNXC_PROTOC})
    # also under ThreadSanitizer (build-tsan), with gRPC's, abseil's and
    # OpenSSL's own reports suppressed (tests/serve/tsan_grpc.supp says why)
    set_tests_properties(serve_grpc PROPERTIES TIMEOUT 180 LABELS concurrency
      ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 suppressions=${PROJECT_SOURCE_DIR}/tests/serve/tsan_grpc.supp")
    if(TARGET concurrency_tests)
      add_dependencies(concurrency_tests grpc_client)
    endif()
    # bench/serve_rest_grpc.py (REST with wrk, gRPC with grpc_client --bench)
    # for 1 s at 1 client: the load script keeps working. Skipped (77) without
    # wrk; not in the sanitizer builds, where its figures mean nothing.
    if(NOT ONNXC_SANITIZE AND NOT ONNXC_TSAN)
      add_test(NAME serve_load_smoke
               COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/bench/serve_rest_grpc.py
                       ${PROJECT_SOURCE_DIR}/examples/perceptron.onnxtxt
                       --onnxc $<TARGET_FILE:onnxc_cli> --client $<TARGET_FILE:grpc_client>
                       --clients 1 --seconds 1 --threads 2)
      set_tests_properties(serve_load_smoke PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
    endif()
  endif()
endif()

# deploy/ (Dockerfile, KServe and Kubernetes YAML) against the server's
# options, ports and health paths; with the server built, also started with
# the Deployment's arguments. Needs python3-yaml.
if(SYSTEM_PYTHON3)
  if(ONNXC_SERVE_FOUND)
    set(ONNXC_SERVE_BIN $<TARGET_FILE:onnxc_cli>)
  else()
    set(ONNXC_SERVE_BIN "")
  endif()
  add_test(NAME serve_deploy
           COMMAND ${SYSTEM_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/serve/check_deploy.py
                   ${PROJECT_SOURCE_DIR} ${ONNXC_SERVE_BIN})
  set_tests_properties(serve_deploy PROPERTIES TIMEOUT 120 LABELS release-only)
endif()
