/* server.c - start the server, wait for SIGTERM or SIGINT, shut down
 * gracefully: stop accepting, let the requests in flight finish (their
 * responses carry "Connection: close"), stop the workers, free everything,
 * exit 0. Kubernetes sends SIGTERM and waits terminationGracePeriodSeconds.
 * SIGHUP re-reads the token file and the TLS certificate and key. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

int ox_serve_main(const ox_serve_options *o) {
  static ox_serve_server srv; /* large; one per process */
  char err[1024];
  int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 1) threads = 1;
  /* The signals go to this thread's sigwait only: block them before any thread
     (pool, workers, connections) exists so that every thread inherits the mask.
     A client that hangs up mid-response must not kill the process. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP); /* re-read the token file and the certificate */
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  signal(SIGPIPE, SIG_IGN);

  memset(&srv, 0, sizeof srv);
  srv.max_body = o->max_body;
  srv.access_log = o->access_log;
  srv.model_control = o->model_control;
  srv.max_header = o->max_header;
  srv.idle_s = o->idle_s;
  if (o->tls_cert) {
    if (ox_serve_tls_load(o->tls_cert, o->tls_key, err, sizeof err)) {
      fprintf(stderr, "onnxc serve: %s\n", err);
      ox_serve_tls_free();
      return 1;
    }
    srv.tls = true;
  }
  /* each step that fails undoes the ones before it (`up` counts them) */
  int up = 0, port = 0, grpc_port = 0;
  struct MHD_Daemon *d = NULL;
  ox_serve_grpc *grpc = NULL;
  bool failed = true;
  if (ox_serve_auth_init(&srv.auth, o->auth_token_file, o->metrics_auth, err, sizeof err)) {
    fprintf(stderr, "onnxc serve: --auth-token-file: %s\n", err);
  } else if (up++, ox_serve_repo_open(&srv.repo, o->repository, threads, o->max_batch,
                                      o->delay_us * 1000u, err, sizeof err)) {
    fprintf(stderr, "onnxc serve: %s\n", err);
  } else if (up++, ox_serve_sched_start(&srv.sched, threads, o->max_queue)) {
    fprintf(stderr, "onnxc serve: cannot start the worker threads\n");
  } else if (up++, ox_serve_repo_load_all(&srv.repo),
             ox_serve_guard_start(&srv.guard, o->max_conns, o->max_per_client, o->request_s)) {
    fprintf(stderr, "onnxc serve: cannot start the request-timeout thread\n");
  } else if (up++, !(d = ox_serve_http_start(&srv, o->host, o->port, &port, err, sizeof err))) {
    fprintf(stderr, "onnxc serve: %s\n", err);
  } else if (up++, o->grpc_port >= 0) {
#ifdef ONNXC_HAVE_GRPC
    grpc = ox_serve_grpc_start(&srv, o->host, o->grpc_port, &grpc_port, err, sizeof err);
#else
    snprintf(err, sizeof err,
             "--grpc-port: this onnxc was built without gRPC (libgrpc-dev was "
             "not found at build time, or -DONNXC_GRPC=OFF)");
#endif
    if (!grpc) fprintf(stderr, "onnxc serve: %s\n", err);
    failed = !grpc;
  } else {
    failed = false;
  }
  if (failed) {
    if (up > 4) ox_serve_http_stop(d);
    if (up > 3) ox_serve_guard_stop(&srv.guard);
    if (up > 2) ox_serve_sched_stop(&srv.sched);
    if (up > 1) ox_serve_repo_close(&srv.repo);
    ox_serve_auth_free(&srv.auth);
    ox_serve_tls_free();
    return 1;
  }
  fprintf(stderr, "onnxc serve: listening on %s:%d (%s%d workers, onnxc %s)\n", o->host, port,
          srv.tls ? "TLS 1.2+, " : "", threads, onnxc_version());
  if (grpc)
    fprintf(stderr, "onnxc serve: gRPC (inference.GRPCInferenceService) on %s:%d%s\n", o->host,
            grpc_port, srv.tls ? " (TLS)" : "");
  if (o->auth_token_file)
    fprintf(stderr, "onnxc serve: bearer tokens from %s (%zu; SIGHUP re-reads it)\n",
            o->auth_token_file, srv.auth.n_tokens);
  int sig = 0;
  for (;;) {
    sigwait(&sigs, &sig);
    if (sig != SIGHUP) break;
    /* the certificate first: a renewed one and new tokens often come together */
    if (srv.tls) {
      if (ox_serve_tls_reload(err, sizeof err))
        fprintf(stderr, "onnxc serve: SIGHUP: %s; the previous certificate stays in force\n", err);
      else
        fprintf(stderr,
                "onnxc serve: SIGHUP: certificate and key re-read from %s, %s (new "
                "connections use them)\n",
                o->tls_cert, o->tls_key);
    }
    if (!o->auth_token_file) {
      if (!srv.tls)
        fprintf(stderr, "onnxc serve: SIGHUP: no --auth-token-file or --tls-cert to re-read\n");
    } else if (ox_serve_auth_reload(&srv.auth, err, sizeof err)) {
      fprintf(stderr, "onnxc serve: SIGHUP: %s; the previous tokens stay in force\n", err);
    } else {
      fprintf(stderr, "onnxc serve: SIGHUP: %zu bearer token(s) from %s\n", srv.auth.n_tokens,
              o->auth_token_file);
    }
  }
  fprintf(stderr, "onnxc serve: %s: draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  atomic_store(&srv.draining, true);
  ox_serve_http_quiesce(d);
#ifdef ONNXC_HAVE_GRPC
  ox_serve_grpc_quiesce(grpc);
#endif
  uint64_t until = ox_serve_now_ns() + (uint64_t)o->drain_seconds * 1000000000u;
  while (atomic_load(&srv.in_flight) > 0 && ox_serve_now_ns() < until) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  int left = atomic_load(&srv.in_flight);
  ox_serve_http_stop(d);
#ifdef ONNXC_HAVE_GRPC
  ox_serve_grpc_stop(grpc);
#endif
  ox_serve_guard_stop(&srv.guard);
  ox_serve_sched_stop(&srv.sched);
  ox_serve_repo_close(&srv.repo);
  ox_serve_auth_free(&srv.auth);
  ox_serve_tls_free();
  if (left > 0)
    fprintf(stderr, "onnxc serve: stopped with %d request(s) cut off after %d s\n", left,
            o->drain_seconds);
  else
    fprintf(stderr, "onnxc serve: stopped\n");
  return 0;
}
