/* grpc_client.c - a gRPC client over gRPC's C core for the tests of
 * `onnxc serve --grpc-port`: it carries protobuf bytes made and read by the
 * test (Python's protobuf, from grpc_service.proto), so that nothing of the
 * server's own codec is on the client's side.
 *
 *   grpc_client ADDR METHOD REQUEST OUT [--calls N] [--token T] [--ca PEM]
 *               [--timeout S] [--bench S]
 *
 * Sends the bytes of the file REQUEST to METHOD ("/inference.
 * GRPCInferenceService/ModelInfer") N times at once on one channel (default
 * 1), with "authorization: Bearer T" metadata when --token is given, over
 * TLS trusting PEM when --ca is given. For each call i it prints
 * "i STATUS MESSAGE" and writes the response message to OUT.i. Exit 0 when
 * every call finished (whatever its status), 2 on bad arguments or files,
 * 3 when the calls did not finish in time.
 *
 * With --bench S it is a load generator instead: N calls in flight on the
 * channel for S seconds (each slot starts a new call when its previous one
 * ends), then one line with the calls per second and the p50/p99 latency. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* what every call shares */
typedef struct shared {
  grpc_channel *ch;
  grpc_completion_queue *cq;
  grpc_slice method, body;
  grpc_metadata *md; /* NULL: no token */
  gpr_timespec deadline;
} shared;

typedef struct call_state {
  double t0; /* --bench: when the call started */
  grpc_call *call;
  grpc_metadata_array initial, trailing;
  grpc_byte_buffer *response;
  grpc_status_code status;
  grpc_slice details;
  bool done;
} call_state;

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *p = malloc(cap + 1);
  for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *q = realloc(p, cap * 2 + 1);
      if (!q) {
        free(p);
        p = NULL;
        break;
      }
      p = q;
      cap *= 2;
    }
  }
  fclose(f);
  if (p) p[n] = 0;
  *len = n;
  return p;
}

static int start_call(const shared *sh, call_state *c, grpc_byte_buffer **msg) {
  c->call = grpc_channel_create_call(sh->ch, NULL, GRPC_PROPAGATE_DEFAULTS, sh->cq, sh->method,
                                     NULL, sh->deadline, NULL);
  grpc_metadata_array_init(&c->initial);
  grpc_metadata_array_init(&c->trailing);
  c->response = NULL;
  c->t0 = now_s();
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = sh->md ? 1 : 0;
  ops[0].data.send_initial_metadata.metadata = sh->md;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  grpc_slice body = sh->body;
  *msg = grpc_raw_byte_buffer_create(&body, 1);
  ops[1].data.send_message.send_message = *msg;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &c->response;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &c->trailing;
  ops[5].data.recv_status_on_client.status = &c->status;
  ops[5].data.recv_status_on_client.status_details = &c->details;
  return grpc_call_start_batch(c->call, ops, 6, c, NULL) != GRPC_CALL_OK;
}

static void end_call(call_state *c, grpc_byte_buffer *msg) {
  if (c->response) grpc_byte_buffer_destroy(c->response);
  grpc_byte_buffer_destroy(msg);
  grpc_slice_unref(c->details);
  grpc_metadata_array_destroy(&c->initial);
  grpc_metadata_array_destroy(&c->trailing);
  grpc_call_unref(c->call);
}

/* --bench: `calls` in flight for secs seconds */
static int bench(const shared *base, call_state *cs, grpc_byte_buffer **msgs, int calls,
                 double secs) {
  shared sh = *base;
  sh.deadline = gpr_inf_future(GPR_CLOCK_REALTIME);
  size_t n = 0, cap = 1 << 16, failed = 0;
  double *lat = malloc(cap * sizeof *lat);
  double t_start = now_s(), t_end = t_start + secs;
  int in_flight = 0;
  for (int i = 0; i < calls; i++) in_flight += start_call(&sh, &cs[i], &msgs[i]) == 0;
  while (in_flight > 0) {
    grpc_event ev = grpc_completion_queue_next(sh.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type != GRPC_OP_COMPLETE) break;
    call_state *c = ev.tag;
    double t = now_s();
    if (c->status != GRPC_STATUS_OK) failed++;
    if (n == cap) lat = realloc(lat, (cap *= 2) * sizeof *lat);
    lat[n++] = t - c->t0;
    end_call(c, msgs[c - cs]);
    in_flight--;
    if (t < t_end && start_call(&sh, c, &msgs[c - cs]) == 0) in_flight++;
  }
  double took = now_s() - t_start;
  qsort(lat, n, sizeof *lat, cmp_double);
  printf(
      "bench: %d in flight, %zu calls in %.2f s: %.0f calls/s, p50 %.3f ms, p99 %.3f ms, "
      "%zu failed\n",
      calls, n, took, (double)n / took, n ? lat[n / 2] * 1e3 : 0.0,
      n ? lat[(size_t)((double)n * 0.99)] * 1e3 : 0.0, failed);
  free(lat);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: grpc_client ADDR METHOD REQUEST OUT [--calls N] [--token T] "
            "[--ca PEM] [--timeout S]\n");
    return 2;
  }
  const char *addr = argv[1], *method = argv[2], *out = argv[4], *token = NULL, *ca = NULL;
  int calls = 1, timeout_s = 60;
  double bench_s = 0;
  for (int i = 5; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0)
      calls = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--token") == 0)
      token = argv[i + 1];
    else if (strcmp(argv[i], "--ca") == 0)
      ca = argv[i + 1];
    else if (strcmp(argv[i], "--timeout") == 0)
      timeout_s = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--bench") == 0)
      bench_s = atof(argv[i + 1]);
  }
  if (calls < 1 || calls > 4096) return 2;
  size_t req_len;
  char *req = read_file(argv[3], &req_len);
  if (!req) {
    fprintf(stderr, "grpc_client: cannot read %s\n", argv[3]);
    return 2;
  }
  char *ca_pem = NULL;
  if (ca) {
    size_t n;
    if (!(ca_pem = read_file(ca, &n))) {
      fprintf(stderr, "grpc_client: cannot read %s\n", ca);
      return 2;
    }
  }
  grpc_init();
  grpc_channel_credentials *creds = ca_pem ? grpc_ssl_credentials_create(ca_pem, NULL, NULL, NULL)
                                           : grpc_insecure_credentials_create();
  /* large tensors both ways */
  grpc_arg arg = {GRPC_ARG_INTEGER, (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, {.integer = -1}};
  grpc_channel_args args = {1, &arg};
  grpc_channel *ch = grpc_channel_create(addr, creds, &args);
  grpc_channel_credentials_release(creds);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  gpr_timespec deadline =
      gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(timeout_s, GPR_TIMESPAN));
  grpc_slice method_s = grpc_slice_from_static_string(method);
  char bearer[512];
  snprintf(bearer, sizeof bearer, "Bearer %s", token ? token : "");
  grpc_metadata md;
  memset(&md, 0, sizeof md);
  md.key = grpc_slice_from_static_string("authorization");
  md.value = grpc_slice_from_copied_string(bearer);
  call_state *cs = calloc((size_t)calls, sizeof *cs);
  grpc_slice body = grpc_slice_from_copied_buffer(req, req_len);
  /* a byte buffer per call: sending one takes its slices */
  grpc_byte_buffer **msgs = calloc((size_t)calls, sizeof *msgs);
  shared sh = {ch, cq, method_s, body, token ? &md : NULL, deadline};
  if (bench_s > 0) return bench(&sh, cs, msgs, calls, bench_s);
  int started = 0;
  for (int i = 0; i < calls; i++) {
    if (start_call(&sh, &cs[i], &msgs[i])) {
      fprintf(stderr, "grpc_client: cannot start call %d\n", i);
      return 2;
    }
    started++;
  }
  int finished = 0;
  while (finished < started) {
    grpc_event ev = grpc_completion_queue_next(
        cq, gpr_time_add(deadline, gpr_time_from_seconds(5, GPR_TIMESPAN)), NULL);
    if (ev.type != GRPC_OP_COMPLETE) break;
    ((call_state *)ev.tag)->done = true;
    finished++;
  }
  for (int i = 0; i < calls; i++) {
    call_state *c = &cs[i];
    if (!c->done) continue;
    char *d = grpc_slice_to_c_string(c->details);
    for (char *p = d; *p; p++)
      if (*p == '\n') *p = ' ';
    printf("%d %d %s\n", i, (int)c->status, d);
    gpr_free(d);
    if (c->response) {
      grpc_byte_buffer_reader r;
      grpc_byte_buffer_reader_init(&r, c->response);
      grpc_slice all = grpc_byte_buffer_reader_readall(&r);
      grpc_byte_buffer_reader_destroy(&r);
      char path[4096];
      snprintf(path, sizeof path, "%s.%d", out, i);
      FILE *f = fopen(path, "wb");
      if (f) {
        fwrite(GRPC_SLICE_START_PTR(all), 1, GRPC_SLICE_LENGTH(all), f);
        fclose(f);
      }
      grpc_slice_unref(all);
    }
    end_call(c, msgs[i]);
  }
  fflush(stdout);
  free(msgs);
  grpc_slice_unref(body);
  grpc_slice_unref(md.value);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  grpc_channel_destroy(ch);
  grpc_shutdown();
  free(cs);
  free(req);
  free(ca_pem);
  return finished == started ? 0 : 3;
}
