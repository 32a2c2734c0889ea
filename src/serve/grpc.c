/* grpc.c - the KServe v2 gRPC endpoint (--grpc-port) on gRPC's C core
 * (grpc/grpc.h, Debian's libgrpc-dev). Only the transport is here: the
 * methods are grpc_call.c's and the messages grpc_msg.c's, so there is no
 * generated code and no C++.
 *
 * Calls are driven by their events, not by a thread each: THREADS threads
 * wait on one completion queue, and a call is a small state machine (asked
 * for, receiving its message, answering) that whichever thread takes its
 * next event moves on. A ModelInfer is queued for the workers (sched.c,
 * where concurrent calls meet and are batched) and answered from the worker
 * that ran it, so no thread sleeps while a model runs. The design before
 * this one (64 threads, each with its own queue, serving a call from start
 * to end and sleeping on its job) spent most of its time switching threads:
 * on a small model with 64 calls in flight it took 110-215 us of server CPU
 * per call, against 45-80 us now (a REST request: 75-80 us). And a caller
 * that opens calls and never finishes sending their messages holds no
 * thread, so it cannot starve the others (gRPC allows hundreds of streams
 * on one connection).
 *
 * The rules of the REST side hold here too: bearer tokens in the
 * `authorization` metadata (the health methods stay open), the body limit
 * (--max-body as gRPC's receive limit), the request deadline (a call whose
 * message has not arrived --request-timeout after it opened is cancelled
 * DEADLINE_EXCEEDED by the reaper thread, and counted as a request_timeout
 * rejection), TLS with the same certificate, re-read on SIGHUP through
 * gRPC's per-handshake certificate callback, and the access log. */
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

/* threads on the queue: they decode and check requests and answer the
   quick methods (a ModelInfer is queued for the workers, which answer it);
   calls asked for from gRPC at any time: LISTEN */
#define THREADS 4
#define LISTEN 16
#define INFER_METHOD "/inference.GRPCInferenceService/ModelInfer"

typedef enum { ST_REQUESTED, ST_RECEIVING, ST_ANSWERING } call_stage;

/* one call, from grpc_server_request_call to its last batch */
typedef struct gcall {
  ox_serve_grpc *g;
  /* stored (release) just before each batch starts, and loaded (acquire) by
     the thread that takes its event: a call moves between threads through
     gRPC's queue, whose own synchronisation ThreadSanitizer cannot see
     (libgrpc is not instrumented), and this makes the hand-off visible */
  _Atomic int stage;
  grpc_call *call;
  grpc_call_details det;
  grpc_metadata_array md;
  grpc_byte_buffer *in, *out;
  grpc_slice details;
  grpc_op ops[4];
  int cancelled;
  bool received; /* its initial metadata went out with the receiving batch */
  bool timed_out;
  grpc_slice msg; /* the request message, while holding */
  bool holding;
  char *method, *peer; /* the peer taken when the call opens (a cancelled call has none) */
  uint64_t t0, deadline_ns;
  size_t sent;
  ox_serve_grpc_answer a;
  struct gcall *prev, *next; /* in the receiving list while listed */
  bool listed;
} gcall;

struct ox_serve_grpc {
  ox_serve_server *srv;
  grpc_server *server;
  grpc_completion_queue *cq, *shutdown_cq;
  pthread_t threads[THREADS], reaper;
  int n_threads;
  bool reaper_up;
  _Atomic bool shutting_down;
  _Atomic int live; /* gcalls allocated: stop waits for none */
  _Atomic unsigned tls_generation; /* of the certificate gRPC holds */
  /* calls waiting for their message, oldest first: every deadline is its
     opening time + the same --request-timeout, so the head expires first */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  gcall *head, *tail;
  bool stop_reaper;
  char late[128]; /* the DEADLINE_EXCEEDED message */
};

static char *slice_str(grpc_slice s) { return grpc_slice_to_c_string(s); }

/* the value of the `authorization` metadata, or NULL (gpr_free it) */
static char *authorization(const grpc_metadata_array *md) {
  for (size_t i = 0; i < md->count; i++)
    if (grpc_slice_str_cmp(md->metadata[i].key, "authorization") == 0)
      return slice_str(md->metadata[i].value);
  return NULL;
}

static void access_log(const char *peer, const char *method, int code, size_t sent, uint64_t t0) {
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  fprintf(stderr, "%s %s \"GRPC %s\" %d %zu %.3fms\n", when, peer ? peer : "-", method, code, sent,
          (double)(ox_serve_now_ns() - t0) * 1e-6);
}

/* asks gRPC for one more call; false when the server is shutting down */
static bool listen_one(ox_serve_grpc *g) {
  gcall *c = calloc(1, sizeof *c);
  if (!c) return false;
  c->g = g;
  grpc_call_details_init(&c->det);
  grpc_metadata_array_init(&c->md);
  atomic_fetch_add(&g->live, 1);
  atomic_store_explicit(&c->stage, ST_REQUESTED, memory_order_release);
  if (grpc_server_request_call(g->server, &c->call, &c->det, &c->md, g->cq, g->cq, c) ==
      GRPC_CALL_OK)
    return true;
  grpc_call_details_destroy(&c->det);
  grpc_metadata_array_destroy(&c->md);
  free(c);
  atomic_fetch_sub(&g->live, 1);
  return false;
}

static void unlist_locked(ox_serve_grpc *g, gcall *c) {
  if (!c->listed) return;
  if (c->prev)
    c->prev->next = c->next;
  else
    g->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    g->tail = c->prev;
  c->prev = c->next = NULL;
  c->listed = false;
}

static void release_message(gcall *c) {
  if (c->holding) grpc_slice_unref(c->msg);
  c->holding = false;
  if (c->in) grpc_byte_buffer_destroy(c->in);
  c->in = NULL;
}

/* the call's end: its last batch completed (or none could start) */
static void done(gcall *c) {
  ox_serve_grpc *g = c->g;
  ox_serve_server *srv = g->srv;
  if (c->call && c->method) {
    if (srv->access_log)
      access_log(c->peer, c->method, c->timed_out ? OX_GRPC_DEADLINE_EXCEEDED : c->a.code, c->sent,
                 c->t0);
    atomic_fetch_sub(&srv->in_flight, 1);
  }
  release_message(c);
  if (c->out) grpc_byte_buffer_destroy(c->out);
  if (atomic_load_explicit(&c->stage, memory_order_relaxed) == ST_ANSWERING)
    grpc_slice_unref(c->details);
  free(c->a.body.data);
  gpr_free(c->method);
  gpr_free(c->peer);
  if (c->call) grpc_call_unref(c->call);
  grpc_call_details_destroy(&c->det);
  grpc_metadata_array_destroy(&c->md);
  free(c);
  atomic_fetch_sub(&g->live, 1);
}

/* sends the answer in c->a (the message when OK, then the status) */
static void answer(gcall *c) {
  ox_serve_grpc_answer *a = &c->a;
  if (a->code < 0) { /* cancelled or gone: nothing to answer */
    done(c);
    return;
  }
  c->details = grpc_slice_from_copied_string(a->code ? a->msg : "");
  size_t n = 0;
  grpc_op *ops = c->ops;
  memset(c->ops, 0, sizeof c->ops);
  if (a->code == OX_GRPC_OK) {
    /* gRPC takes the buffer as it is and frees it with free() */
    grpc_slice s = a->body.len ? grpc_slice_new(a->body.data, a->body.len, free) : grpc_empty_slice();
    if (!a->body.len) free(a->body.data);
    a->body.data = NULL;
    c->sent = GRPC_SLICE_LENGTH(s);
    c->out = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->out;
  }
  if (!c->received) ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.status = (grpc_status_code)a->code;
  ops[n++].data.send_status_from_server.status_details = &c->details;
  ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
  grpc_call *call = c->call; /* c is not read after the store: the event may free it */
  atomic_store_explicit(&c->stage, ST_ANSWERING, memory_order_release);
  if (grpc_call_start_batch(call, ops, n, c, NULL) != GRPC_CALL_OK) done(c);
}

/* a new call: the token first, from its metadata (a caller without one gets
   its status before any of its message is taken in), then its message */
static void opened(gcall *c) {
  ox_serve_grpc *g = c->g;
  ox_serve_server *srv = g->srv;
  c->t0 = ox_serve_now_ns();
  atomic_fetch_add(&srv->in_flight, 1);
  c->method = slice_str(c->det.method);
  if (srv->access_log) c->peer = grpc_call_get_peer(c->call);
  if (srv->auth.file && !ox_serve_grpc_open_method(c->method)) {
    char *h = authorization(&c->md);
    if (!ox_serve_auth_check(&srv->auth, h)) {
      ox_serve_metrics_reject(OX_SERVE_REJECT_UNAUTHORIZED);
      c->a.code = OX_GRPC_UNAUTHENTICATED;
      snprintf(c->a.msg, sizeof c->a.msg, "%s",
               h ? "the authorization metadata carries no valid bearer token"
                 : "this method needs 'authorization: Bearer <token>' metadata");
    }
    gpr_free(h);
    if (c->a.code) {
      answer(c);
      return;
    }
  }
  c->received = true;
  memset(c->ops, 0, sizeof c->ops);
  c->ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  c->ops[1].op = GRPC_OP_RECV_MESSAGE;
  c->ops[1].data.recv_message.recv_message = &c->in;
  /* listed before the batch starts: its completion (on another thread) unlists it */
  if (srv->guard.request_ns) {
    c->deadline_ns = c->t0 + srv->guard.request_ns;
    pthread_mutex_lock(&g->lock);
    c->prev = g->tail;
    if (g->tail)
      g->tail->next = c;
    else
      g->head = c;
    g->tail = c;
    c->listed = true;
    if (g->head == c) pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
  }
  grpc_call *call = c->call; /* c is not read after the store: the event may free it */
  atomic_store_explicit(&c->stage, ST_RECEIVING, memory_order_release);
  if (grpc_call_start_batch(call, c->ops, 2, c, NULL) != GRPC_CALL_OK) {
    pthread_mutex_lock(&g->lock);
    unlist_locked(g, c);
    pthread_mutex_unlock(&g->lock);
    c->a.code = -1;
    done(c);
  }
}

/* a ModelInfer's job ran, on a worker: its answer goes out from there */
static void infer_done(void *arg) {
  gcall *c = arg;
  release_message(c);
  answer(c);
}

/* the message is in (or the call failed). ModelInfer is queued for a
   worker, which answers it; the other methods are answered here */
static void received(gcall *c, bool ok) {
  ox_serve_grpc *g = c->g;
  pthread_mutex_lock(&g->lock);
  unlist_locked(g, c);
  pthread_mutex_unlock(&g->lock);
  ox_serve_grpc_answer *a = &c->a;
  grpc_byte_buffer_reader r;
  if (!ok) {
    a->code = -1; /* cancelled (the deadline) or gone */
  } else if (!c->in) {
    a->code = OX_GRPC_INVALID_ARGUMENT;
    snprintf(a->msg, sizeof a->msg, "no request message (a unary call takes one)");
  } else if (!grpc_byte_buffer_reader_init(&r, c->in)) {
    a->code = OX_GRPC_INTERNAL;
    snprintf(a->msg, sizeof a->msg, "cannot read the request message");
  } else {
    /* a message in one slice (the usual case below gRPC's frame size) is
       read where it is; several are joined into one copy */
    if (c->in->type == GRPC_BB_RAW && c->in->data.raw.compression == GRPC_COMPRESS_NONE &&
        c->in->data.raw.slice_buffer.count == 1)
      c->msg = grpc_slice_ref(c->in->data.raw.slice_buffer.slices[0]);
    else
      c->msg = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    c->holding = true;
    const uint8_t *p = GRPC_SLICE_START_PTR(c->msg);
    size_t n = GRPC_SLICE_LENGTH(c->msg);
    if (strcmp(c->method, INFER_METHOD) == 0) {
      /* from here on c may be the worker's (infer_done) */
      if (ox_serve_grpc_infer_submit(g->srv, p, n, a, infer_done, c)) return;
    } else {
      ox_serve_grpc_handle(g->srv, c->method, p, n, a);
    }
  }
  release_message(c);
  answer(c);
}

static void *handler(void *arg) {
  ox_serve_grpc *g = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    gcall *c = ev.tag;
    switch (atomic_load_explicit(&c->stage, memory_order_acquire)) {
      case ST_REQUESTED:
        if (!ev.success || !c->call) { /* the server is shutting down */
          done(c);
          break;
        }
        /* another in its place first, so that calls keep being taken in */
        if (!atomic_load(&g->shutting_down)) listen_one(g);
        opened(c);
        break;
      case ST_RECEIVING:
        received(c, ev.success != 0);
        break;
      case ST_ANSWERING:
        done(c);
        break;
    }
  }
  return NULL;
}

/* cancels the calls whose message has not arrived by their deadline */
static void *reaper(void *arg) {
  ox_serve_grpc *g = arg;
  pthread_mutex_lock(&g->lock);
  while (!g->stop_reaper) {
    uint64_t now = ox_serve_now_ns();
    while (g->head && g->head->deadline_ns <= now) {
      gcall *c = g->head;
      unlist_locked(g, c);
      c->timed_out = true;
      ox_serve_metrics_reject(OX_SERVE_REJECT_REQUEST_TIMEOUT);
      /* its receiving batch then completes, failed; the call lives until
         then, and that completion waits for this lock to unlist it */
      grpc_call_cancel_with_status(c->call, GRPC_STATUS_DEADLINE_EXCEEDED, g->late, NULL);
    }
    if (g->head) {
      uint64_t wait = g->head->deadline_ns - now;
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + wait;
      ts.tv_sec = (time_t)(t / 1000000000u);
      ts.tv_nsec = (long)(t % 1000000000u);
      pthread_cond_timedwait(&g->wake, &g->lock, &ts);
    } else {
      pthread_cond_wait(&g->wake, &g->lock);
    }
  }
  pthread_mutex_unlock(&g->lock);
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

static void drain_queue(grpc_completion_queue *cq) {
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
}

static void destroy(ox_serve_grpc *g) {
  if (g->server) grpc_server_destroy(g->server);
  if (g->cq) drain_queue(g->cq);
  if (g->shutdown_cq) drain_queue(g->shutdown_cq);
  pthread_cond_destroy(&g->wake);
  pthread_mutex_destroy(&g->lock);
  free(g);
  grpc_shutdown();
}

/* stops taking calls, cuts off those left, waits for every one to end, then
   stops the threads */
static void teardown(ox_serve_grpc *g) {
  ox_serve_grpc_quiesce(g);
  grpc_server_cancel_all_calls(g->server);
  grpc_completion_queue_next(g->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  /* the calls asked for and those cut off come back as failed events that
     the threads free; a ModelInfer running ends when its worker is done */
  while (g->n_threads && atomic_load(&g->live) > 0) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  grpc_completion_queue_shutdown(g->cq);
  for (int i = 0; i < g->n_threads; i++) pthread_join(g->threads[i], NULL);
  if (g->reaper_up) {
    pthread_mutex_lock(&g->lock);
    g->stop_reaper = true;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->reaper, NULL);
  }
  destroy(g);
}

ox_serve_grpc *ox_serve_grpc_start(ox_serve_server *srv, const char *host, int port,
                                   int *bound_port, char *err, size_t errsz) {
  ox_serve_grpc *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, errsz, "out of memory");
    return NULL;
  }
  g->srv = srv;
  pthread_mutex_init(&g->lock, NULL);
  pthread_condattr_t ca_attr;
  pthread_condattr_init(&ca_attr);
  pthread_condattr_setclock(&ca_attr, CLOCK_MONOTONIC); /* the reaper's deadlines */
  pthread_cond_init(&g->wake, &ca_attr);
  pthread_condattr_destroy(&ca_attr);
  snprintf(g->late, sizeof g->late,
           "the request message did not arrive within %llu s (--request-timeout)",
           (unsigned long long)(srv->guard.request_ns / 1000000000u));
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
  args[2].value.integer = 256;
  grpc_channel_args ca = {3, args};
  g->server = grpc_server_create(&ca, NULL);
  g->cq = grpc_completion_queue_create_for_next(NULL);
  g->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
  grpc_server_register_completion_queue(g->server, g->cq, NULL);
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
  for (int i = 0; i < THREADS; i++) {
    if (pthread_create(&g->threads[i], NULL, handler, g)) break;
    g->n_threads++;
  }
  g->reaper_up = g->n_threads && pthread_create(&g->reaper, NULL, reaper, g) == 0;
  int listening = 0;
  for (int i = 0; g->reaper_up && i < LISTEN; i++) listening += listen_one(g);
  if (!listening) {
    snprintf(err, errsz, "--grpc-port: cannot start the call threads");
    teardown(g);
    return NULL;
  }
  return g;
}

void ox_serve_grpc_quiesce(ox_serve_grpc *g) {
  if (!g || atomic_exchange(&g->shutting_down, true)) return;
  /* no new calls; the calls in flight go on, and the tag comes when they end */
  grpc_server_shutdown_and_notify(g->server, g->shutdown_cq, NULL);
}

void ox_serve_grpc_stop(ox_serve_grpc *g) {
  if (!g) return;
  /* server.c waited for the calls in flight already: the rest are cut off */
  teardown(g);
}
