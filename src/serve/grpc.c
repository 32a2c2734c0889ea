/* grpc.c - the KServe v2 gRPC endpoint (--grpc-port) on gRPC's C core
 * (grpc/grpc.h, Debian's libgrpc-dev). Only the transport is here: the
 * methods are grpc_call.c's and the messages grpc_msg.c's, so there is no
 * generated code and no C++.
 *
 * Threads: HANDLERS threads, each with its own completion queue registered
 * with the server, each asking for one call at a time and then serving it
 * from start to end with blocking waits on its own queue. That is the REST
 * side's thread-per-connection model again: a handler sleeps while a worker
 * runs its model (sched.c), which is what lets concurrent calls meet in the
 * queue and be batched. Calls beyond HANDLERS wait in gRPC's own queue.
 *
 * The rules of the REST side hold here too: bearer tokens in the
 * `authorization` metadata (the health methods stay open), the body limit
 * (--max-body as gRPC's receive limit), the request deadline (a call whose
 * message has not arrived after --request-timeout is cancelled
 * DEADLINE_EXCEEDED), TLS with the same certificate, re-read on SIGHUP
 * through gRPC's per-handshake certificate callback, and the access log. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

#define HANDLERS 64

struct ox_serve_grpc {
  ox_serve_server *srv;
  grpc_server *server;
  grpc_completion_queue *cqs[HANDLERS], *shutdown_cq;
  pthread_t threads[HANDLERS];
  int n_threads;
  bool shutting_down;
  _Atomic unsigned tls_generation; /* of the certificate gRPC holds */
};

static gpr_timespec after_ns(uint64_t ns) {
  if (!ns) return gpr_inf_future(GPR_CLOCK_MONOTONIC);
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_nanos((int64_t)ns, GPR_TIMESPAN));
}

/* runs one batch and waits for it on the handler's own queue; false when the
   call failed (the client went away, or it was cancelled) */
static bool run_batch(grpc_call *call, grpc_completion_queue *cq, const grpc_op *ops, size_t n,
                      uint64_t deadline_ns, const char *why_late) {
  void *tag = (void *)ops;
  if (grpc_call_start_batch(call, ops, n, tag, NULL) != GRPC_CALL_OK) return false;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(cq, after_ns(deadline_ns), NULL);
    if (ev.type == GRPC_OP_COMPLETE && ev.tag == tag) return ev.success != 0;
    if (ev.type == GRPC_QUEUE_TIMEOUT) {
      /* the batch then completes, failed, and the next wait returns it */
      ox_serve_metrics_reject(OX_SERVE_REJECT_REQUEST_TIMEOUT);
      grpc_call_cancel_with_status(call, GRPC_STATUS_DEADLINE_EXCEEDED, why_late, NULL);
      deadline_ns = 0;
      continue;
    }
    if (ev.type == GRPC_QUEUE_SHUTDOWN) return false;
  }
}

static char *slice_str(grpc_slice s) { return grpc_slice_to_c_string(s); }

/* the value of the `authorization` metadata, or NULL (gpr_free it) */
static char *authorization(const grpc_metadata_array *md) {
  for (size_t i = 0; i < md->count; i++)
    if (grpc_slice_str_cmp(md->metadata[i].key, "authorization") == 0)
      return slice_str(md->metadata[i].value);
  return NULL;
}

static void access_log(grpc_call *call, const char *method, int code, size_t sent, uint64_t t0) {
  char *peer = grpc_call_get_peer(call);
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  fprintf(stderr, "%s %s \"GRPC %s\" %d %zu %.3fms\n", when, peer ? peer : "-", method, code, sent,
          (double)(ox_serve_now_ns() - t0) * 1e-6);
  gpr_free(peer);
}

static void serve_call(ox_serve_grpc *g, grpc_completion_queue *cq, grpc_call *call,
                       const grpc_call_details *det, const grpc_metadata_array *md) {
  ox_serve_server *srv = g->srv;
  uint64_t t0 = ox_serve_now_ns();
  atomic_fetch_add(&srv->in_flight, 1);
  char *method = slice_str(det->method);
  grpc_byte_buffer *in = NULL;
  ox_serve_grpc_answer a;
  memset(&a, 0, sizeof a);
  /* the token first, from the call's metadata: a caller without one gets
     its status before any of its message is taken in */
  if (srv->auth.file && !ox_serve_grpc_open_method(method)) {
    char *h = authorization(md);
    if (!ox_serve_auth_check(&srv->auth, h)) {
      ox_serve_metrics_reject(OX_SERVE_REJECT_UNAUTHORIZED);
      a.code = OX_GRPC_UNAUTHENTICATED;
      snprintf(a.msg, sizeof a.msg, "%s",
               h ? "the authorization metadata carries no valid bearer token"
                 : "this method needs 'authorization: Bearer <token>' metadata");
    }
    gpr_free(h);
  }
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_RECV_MESSAGE;
  ops[1].data.recv_message.recv_message = &in;
  char late[128];
  snprintf(late, sizeof late,
           "the request message did not arrive within %llu s (--request-timeout)",
           (unsigned long long)(srv->guard.request_ns / 1000000000u));
  bool received = !a.code; /* the first batch (initial metadata, the message) runs */
  bool ok = !received || run_batch(call, cq, ops, 2, srv->guard.request_ns, late);
  if (!ok) {
    a.code = -1; /* cancelled or gone: nothing to answer */
  } else if (!in && !a.code) {
    a.code = OX_GRPC_INVALID_ARGUMENT;
    snprintf(a.msg, sizeof a.msg, "no request message (a unary call takes one)");
  }
  if (ok && in && !a.code) {
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, in)) {
      a.code = OX_GRPC_INTERNAL;
      snprintf(a.msg, sizeof a.msg, "cannot read the request message");
    } else {
      grpc_slice all = grpc_byte_buffer_reader_readall(&r);
      grpc_byte_buffer_reader_destroy(&r);
      ox_serve_grpc_handle(srv, method, GRPC_SLICE_START_PTR(all), GRPC_SLICE_LENGTH(all), &a);
      grpc_slice_unref(all);
    }
  }
  if (in) grpc_byte_buffer_destroy(in);
  size_t sent = 0;
  if (a.code >= 0) {
    grpc_byte_buffer *out = NULL;
    grpc_slice details = grpc_slice_from_copied_string(a.code ? a.msg : "");
    int cancelled = 0;
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (a.code == OX_GRPC_OK) {
      /* gRPC takes the buffer as it is and frees it with free() */
      grpc_slice s =
          a.body.len ? grpc_slice_new(a.body.data, a.body.len, free) : grpc_empty_slice();
      if (!a.body.len) free(a.body.data);
      a.body.data = NULL;
      sent = GRPC_SLICE_LENGTH(s);
      out = grpc_raw_byte_buffer_create(&s, 1);
      grpc_slice_unref(s);
      ops[n].op = GRPC_OP_SEND_MESSAGE;
      ops[n++].data.send_message.send_message = out;
    }
    if (!received) ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)a.code;
    ops[n++].data.send_status_from_server.status_details = &details;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &cancelled;
    run_batch(call, cq, ops, n, 0, "");
    if (out) grpc_byte_buffer_destroy(out);
    grpc_slice_unref(details);
  }
  free(a.body.data);
  if (srv->access_log) access_log(call, method, a.code, sent, t0);
  gpr_free(method);
  atomic_fetch_sub(&srv->in_flight, 1);
}

typedef struct handler_arg {
  ox_serve_grpc *g;
  int i;
} handler_arg;

static void *handler(void *arg) {
  handler_arg h = *(handler_arg *)arg;
  free(arg);
  ox_serve_grpc *g = h.g;
  grpc_completion_queue *cq = g->cqs[h.i];
  for (;;) {
    grpc_call *call = NULL;
    grpc_call_details det;
    grpc_metadata_array md;
    grpc_call_details_init(&det);
    grpc_metadata_array_init(&md);
    bool got = false;
    if (grpc_server_request_call(g->server, &call, &det, &md, cq, cq, &det) == GRPC_CALL_OK) {
      grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
      got = ev.type == GRPC_OP_COMPLETE && ev.success && call;
    }
    if (got) serve_call(g, cq, call, &det, &md);
    if (call) grpc_call_unref(call);
    grpc_call_details_destroy(&det);
    grpc_metadata_array_destroy(&md);
    if (!got) break; /* the server is shutting down */
  }
  return NULL;
}

/* gRPC asks at each handshake whether the certificate changed (SIGHUP) */
static grpc_ssl_certificate_config_reload_status fetch_cert(
    void *user, grpc_ssl_server_certificate_config **config) {
  ox_serve_grpc *g = user;
  if (g->tls_generation && ox_serve_tls_generation() == g->tls_generation)
    return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
  char *cert = NULL, *key = NULL;
  unsigned gen = ox_serve_tls_pem(&cert, &key);
  if (!cert || !key) {
    free(cert);
    free(key);
    return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
  }
  grpc_ssl_pem_key_cert_pair pair = {key, cert};
  /* gRPC's reloading path asserts that root certificates are given even when
     no client certificate is asked for (GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
     so they are never used): the server's own chain stands in */
  *config = grpc_ssl_server_certificate_config_create(cert, &pair, 1); /* copies them */
  for (volatile char *p = key; *p; p++) *p = 0;
  free(key);
  free(cert);
  g->tls_generation = gen;
  return *config ? GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW : GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
}

static void destroy(ox_serve_grpc *g) {
  if (g->server) grpc_server_destroy(g->server);
  for (int i = 0; i < HANDLERS; i++)
    if (g->cqs[i]) {
      grpc_completion_queue_shutdown(g->cqs[i]);
      while (grpc_completion_queue_next(g->cqs[i], gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
             GRPC_QUEUE_SHUTDOWN) {
      }
      grpc_completion_queue_destroy(g->cqs[i]);
    }
  if (g->shutdown_cq) {
    grpc_completion_queue_shutdown(g->shutdown_cq);
    while (
        grpc_completion_queue_next(g->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
        GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(g->shutdown_cq);
  }
  free(g);
  grpc_shutdown();
}

ox_serve_grpc *ox_serve_grpc_start(ox_serve_server *srv, const char *host, int port,
                                   int *bound_port, char *err, size_t errsz) {
  ox_serve_grpc *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, errsz, "out of memory");
    return NULL;
  }
  g->srv = srv;
  grpc_init();
  grpc_arg args[3];
  memset(args, 0, sizeof args);
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[0].value.integer = srv->max_body > (size_t)INT32_MAX ? INT32_MAX : (int)srv->max_body;
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  args[1].value.integer = -1; /* outputs are as large as the model makes them */
  args[2].type = GRPC_ARG_INTEGER;
  args[2].key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS; /* per connection */
  args[2].value.integer = HANDLERS * 4;
  grpc_channel_args ca = {3, args};
  g->server = grpc_server_create(&ca, NULL);
  g->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
  for (int i = 0; i < HANDLERS; i++) {
    g->cqs[i] = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(g->server, g->cqs[i], NULL);
  }
  grpc_server_register_completion_queue(g->server, g->shutdown_cq, NULL);
  grpc_server_credentials *creds;
  if (srv->tls) {
    grpc_ssl_server_credentials_options *o =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(
            GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE, fetch_cert, g);
    creds = o ? grpc_ssl_server_credentials_create_with_options(o) : NULL;
  } else {
    creds = grpc_insecure_server_credentials_create();
  }
  char addr[300];
  /* an IPv6 literal goes in brackets */
  snprintf(addr, sizeof addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
  *bound_port = creds ? grpc_server_add_http2_port(g->server, addr, creds) : 0;
  if (creds) grpc_server_credentials_release(creds);
  if (*bound_port <= 0) {
    snprintf(err, errsz, "--grpc-port: cannot listen on %s%s", addr,
             srv->tls ? " with TLS" : " (in use, or not an address of this machine)");
    destroy(g);
    return NULL;
  }
  grpc_server_start(g->server);
  for (int i = 0; i < HANDLERS; i++) {
    handler_arg *h = malloc(sizeof *h);
    if (!h) break;
    *h = (handler_arg){g, i};
    if (pthread_create(&g->threads[i], NULL, handler, h)) {
      free(h);
      break;
    }
    g->n_threads++;
  }
  if (g->n_threads == 0) {
    snprintf(err, errsz, "--grpc-port: cannot start the call threads");
    grpc_server_shutdown_and_notify(g->server, g->shutdown_cq, NULL);
    grpc_server_cancel_all_calls(g->server);
    grpc_completion_queue_next(g->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    destroy(g);
    return NULL;
  }
  return g;
}

void ox_serve_grpc_quiesce(ox_serve_grpc *g) {
  if (!g || g->shutting_down) return;
  g->shutting_down = true;
  /* no new calls; the calls in flight go on, and the tag comes when they end */
  grpc_server_shutdown_and_notify(g->server, g->shutdown_cq, NULL);
}

void ox_serve_grpc_stop(ox_serve_grpc *g) {
  if (!g) return;
  ox_serve_grpc_quiesce(g);
  /* server.c waited for the calls in flight already: the rest are cut off */
  grpc_server_cancel_all_calls(g->server);
  grpc_completion_queue_next(g->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  for (int i = 0; i < g->n_threads; i++) pthread_join(g->threads[i], NULL);
  destroy(g);
}
