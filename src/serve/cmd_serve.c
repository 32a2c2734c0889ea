/* cmd_serve.c - `onnxc serve --model-repository DIR [--host H] [--port P]
 * [--threads N] [--max-body SIZE] [--max-batch-size N] [--max-queue-delay-us U]
 * [--no-access-log] [--drain-timeout S] [--model-control none|explicit]
 * [--auth-token-file FILE] [--metrics-auth] [--max-connections N]
 * [--max-connections-per-client N] [--max-header SIZE] [--request-timeout S]
 * [--idle-timeout S] [--max-queue N] [--tls-cert FILE --tls-key FILE]`: the tool's subcommand for
 * the server of this folder. It lives here, not in src/cli/, because the layers put the server
 * after the tool: the server may use the tool's cli.h (the subcommand's signature, option helpers),
 * the tool never the server. main.c's table names ox_cmd_serve through cli.h. Without libmicrohttpd
 * and jansson at build time only this file of the folder is built, and the subcommand says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#ifdef ONNXC_HAVE_SERVE
#include "serve.h"
#endif

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc serve --model-repository DIR [--host ADDR] [--port N] [--grpc-port N]\n"
          "                   [--threads N]\n"
          "                   [--max-body SIZE] [--max-batch-size N] [--max-queue-delay-us U]\n"
          "                   [--no-access-log] [--drain-timeout S]\n"
          "                   [--model-control none|explicit]\n"
          "                   [--auth-token-file FILE] [--metrics-auth]\n"
          "                   [--max-connections N] [--max-connections-per-client N]\n"
          "                   [--max-header SIZE] [--request-timeout S] [--idle-timeout S]\n"
          "                   [--max-queue N] [--tls-cert FILE --tls-key FILE]\n"
          "Serves the models of DIR over HTTP with the Open Inference Protocol (KServe v2\n"
          "REST, also Triton's HTTP API), binary tensor data and repository extensions.\n"
          "  --model-repository DIR  DIR/<model>/<version>/model.onnx (the highest version is\n"
          "                  served); optional DIR/<model>/config.json:\n"
          "                  {\"max_batch_size\": 8, \"max_queue_delay_microseconds\": 500}\n"
          "  --host ADDR     address to listen on (default 127.0.0.1; 0.0.0.0 in a container)\n"
          "  --port N        TCP port (default 8000; 0: any free port, printed at start)\n"
          "  --grpc-port N   also serve the KServe v2 gRPC API (inference.GRPCInferenceService,\n"
          "                  src/serve/grpc_service.proto) on port N, with the same models,\n"
          "                  workers, batching, tokens ('authorization' metadata), limits and\n"
          "                  TLS (default: off; 0: any free port, printed; 8001 is Triton's)\n"
#ifndef ONNXC_HAVE_GRPC
          "                  (this build has no gRPC: libgrpc-dev not found, or ONNXC_GRPC=OFF)\n"
#endif

          "  --threads N     workers running models, and the shared intra-op pool (default:\n"
          "                  the number of cores)\n"
          "  --max-body SIZE largest request body (bytes; K, M, G suffixes; default 64M):\n"
          "                  larger ones get 413\n"
          "  --max-batch-size N  dynamic batching for models without a config.json: up to N\n"
          "                  rows per run for models whose inputs and outputs have a dynamic\n"
          "                  leading dim (default 0: off)\n"
          "  --max-queue-delay-us U  how long a request may wait for a batch to fill\n"
          "                  (default 500)\n"
          "  --no-access-log do not write a line per request to standard error\n"
          "  --drain-timeout S  on SIGTERM/SIGINT, wait up to S seconds for requests in flight\n"
          "                  (default 30), then exit 0\n"
          "  --model-control none|explicit  explicit: POST /v2/repository/models/M/load and\n"
          "                  .../unload change what is served; none (default): they answer\n"
          "                  403, so that no client can reconfigure a deployed server (the\n"
          "                  index stays readable; every model is loaded at start either way)\n"
          "  --auth-token-file FILE  bearer tokens, one a line ('#' comments, blank lines\n"
          "                  skipped; re-read on SIGHUP): every request but the health probes\n"
          "                  (/v2/health/live, /v2/health/ready, .../ready) needs\n"
          "                  'Authorization: Bearer <token>', else 401 (default: no tokens,\n"
          "                  everything open)\n"
          "  --metrics-auth  /metrics needs a token too (default: open, as Prometheus scrapes\n"
          "                  pods without credentials; the page holds counters and model\n"
          "                  names, no tensor data)\n"
          "Limits (each turned-away request or connection is counted in /metrics,\n"
          "onnxc_http_rejections_total{reason}):\n"
          "  --max-connections N  open connections, each with its thread (default 512);\n"
          "                  more are answered 503 with Retry-After: 1 (16 at a time; past\n"
          "                  that, closed as they are accepted)\n"
          "  --max-connections-per-client N  open connections from one client address\n"
          "                  (default 64; 0: no limit)\n"
          "  --max-header SIZE  request line and headers (default 16K): larger get 431\n"
          "  --request-timeout S  a request's headers and body must have arrived S seconds\n"
          "                  after the connection opened or its previous answer was sent,\n"
          "                  else it is answered 408 (plain HTTP) and closed (default 30;\n"
          "                  0: no deadline); a gRPC call's message likewise, S seconds\n"
          "                  after the call opened, else DEADLINE_EXCEEDED.\n"
          "                  Stops slow clients (one byte a second) holding connections\n"
          "  --idle-timeout S  closes a connection that sent or received nothing for S\n"
          "                  seconds (default 15; not while its request is being served)\n"
          "  --max-queue N   inference requests waiting for a worker or a batch; more get\n"
          "                  503 with Retry-After: 1 (default 256; 0: no bound)\n"
          "  --tls-cert FILE --tls-key FILE  HTTPS: the PEM certificate (chain) and its\n"
          "                  private key; TLS 1.2 and 1.3 only (default: plain HTTP, for a\n"
          "                  mesh or ingress that terminates TLS); SIGHUP re-reads both\n"
          "Endpoints: GET /v2, /v2/health/live, /v2/health/ready, /v2/models/M[/versions/V],\n"
          ".../ready, /metrics; POST .../infer, /v2/repository/index,\n"
          "/v2/repository/models/M/load, /v2/repository/models/M/unload.\n");
}

static bool parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int ox_cmd_serve(int argc, char **argv) {
  const char *repo = NULL, *host = "127.0.0.1";
  long port = 8000, threads = 0, max_batch = 0, delay = 500, drain = 30;
  long grpc_port = -1;
  long max_conns = 512, max_per_client = 64, request_s = 30, idle_s = 15, max_queue = 256;
  size_t max_body = (size_t)64 << 20, max_header = (size_t)16 << 10;
  const char *token_file = NULL, *tls_cert = NULL, *tls_key = NULL;
  bool access_log = true, model_control = false, metrics_auth = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true;
    if (ox_cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--no-access-log") == 0) {
      access_log = false;
      continue;
    } else if (strcmp(a, "--metrics-auth") == 0) {
      metrics_auth = true;
      continue;
    } else if (!v || a[0] != '-') {
      fprintf(stderr, "onnxc serve: unexpected argument '%s'\n", a);
      usage(stderr);
      return 2;
    } else if (strcmp(a, "--model-repository") == 0) {
      repo = v;
    } else if (strcmp(a, "--host") == 0) {
      host = v;
    } else if (strcmp(a, "--port") == 0) {
      ok = parse_int(v, 0, 65535, &port);
    } else if (strcmp(a, "--grpc-port") == 0) {
      ok = parse_int(v, 0, 65535, &grpc_port);
    } else if (strcmp(a, "--threads") == 0) {
      ok = parse_int(v, 0, 1024, &threads);
    } else if (strcmp(a, "--max-body") == 0) {
      ok = ox_cli_parse_size(v, &max_body) && max_body > 0;
    } else if (strcmp(a, "--max-batch-size") == 0) {
      ok = parse_int(v, 0, 1 << 20, &max_batch);
    } else if (strcmp(a, "--max-queue-delay-us") == 0) {
      ok = parse_int(v, 0, 60000000, &delay);
    } else if (strcmp(a, "--drain-timeout") == 0) {
      ok = parse_int(v, 0, 3600, &drain);
    } else if (strcmp(a, "--model-control") == 0) {
      ok = strcmp(v, "none") == 0 || strcmp(v, "explicit") == 0;
      model_control = strcmp(v, "explicit") == 0;
    } else if (strcmp(a, "--auth-token-file") == 0) {
      token_file = v;
    } else if (strcmp(a, "--max-connections") == 0) {
      ok = parse_int(v, 1, 100000, &max_conns);
    } else if (strcmp(a, "--max-connections-per-client") == 0) {
      ok = parse_int(v, 0, 100000, &max_per_client);
    } else if (strcmp(a, "--max-header") == 0) {
      ok =
          ox_cli_parse_size(v, &max_header) && max_header >= 256 && max_header <= ((size_t)1 << 20);
    } else if (strcmp(a, "--request-timeout") == 0) {
      ok = parse_int(v, 0, 86400, &request_s);
    } else if (strcmp(a, "--idle-timeout") == 0) {
      ok = parse_int(v, 1, 86400, &idle_s);
    } else if (strcmp(a, "--max-queue") == 0) {
      ok = parse_int(v, 0, 1 << 20, &max_queue);
    } else if (strcmp(a, "--tls-cert") == 0) {
      tls_cert = v;
    } else if (strcmp(a, "--tls-key") == 0) {
      tls_key = v;
    } else {
      fprintf(stderr, "onnxc serve: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "onnxc serve: bad value '%s' for %s\n", v, a);
      return 2;
    }
    i++;
  }
  if (!repo) {
    fprintf(stderr, "onnxc serve: --model-repository DIR is required\n");
    usage(stderr);
    return 2;
  }
  if (!tls_cert != !tls_key) {
    fprintf(stderr, "onnxc serve: --tls-cert and --tls-key go together (%s is missing)\n",
            tls_cert ? "--tls-key" : "--tls-cert");
    return 2;
  }
#ifdef ONNXC_HAVE_SERVE
  ox_serve_options o = {.repository = repo,
                        .host = host,
                        .port = (int)port,
                        .threads = (int)threads,
                        .max_body = max_body,
                        .max_batch = (int)max_batch,
                        .delay_us = (uint64_t)delay,
                        .access_log = access_log,
                        .drain_seconds = (int)drain,
                        .model_control = model_control,
                        .auth_token_file = token_file,
                        .metrics_auth = metrics_auth,
                        .max_conns = (int)max_conns,
                        .max_per_client = (int)max_per_client,
                        .max_header = max_header,
                        .request_s = (int)request_s,
                        .idle_s = (int)idle_s,
                        .max_queue = (int)max_queue,
                        .tls_cert = tls_cert,
                        .tls_key = tls_key,
                        .grpc_port = (int)grpc_port};
  return ox_serve_main(&o);
#else
  (void)host, (void)grpc_port, (void)access_log, (void)model_control, (void)token_file,
      (void)metrics_auth, (void)max_conns, (void)max_per_client, (void)max_header, (void)request_s,
      (void)idle_s, (void)max_queue;
  fprintf(stderr,
          "onnxc serve: this onnxc was built without the server (libmicrohttpd or jansson was "
          "not found at build time, or -DONNXC_SERVE=OFF; install libmicrohttpd-dev and "
          "libjansson-dev and rebuild)\n");
  return 1;
#endif
}
