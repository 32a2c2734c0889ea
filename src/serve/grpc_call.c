/* grpc_call.c - the methods of inference.GRPCInferenceService on the server's
 * repository and workers, apart from the transport (grpc.c), so that the
 * fuzz target can drive them with bytes alone.
 *
 * A call is the same work as the REST endpoint of the same name (router.c):
 * the same sessions, the same queue and dynamic batching, the same
 * model-control rule for load and unload, the same metrics. Inputs come
 * either all in raw_input_contents (one entry per input, in order, in the
 * layout of the binary extension: binary.c makes the tensors) or each in
 * its typed contents. Outputs go back in raw_output_contents when the
 * inputs came raw (what Triton's clients read first), typed when they came
 * typed, except that a response with an FP16 or BF16 output (no typed field)
 * is all raw: the protocol has one entry per output or none. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define SERVICE "/inference.GRPCInferenceService/"

static void fail(ox_serve_grpc_answer *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(ox_serve_grpc_answer *a, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, sizeof a->msg, fmt, ap);
  va_end(ap);
  a->code = code;
  free(a->body.data);
  a->body = (ox_serve_buf){0};
}

/* the REST status of a shared path as a gRPC status */
static int code_of_http(int status) {
  switch (status) {
    case 400:
      return OX_GRPC_INVALID_ARGUMENT;
    case 401:
      return OX_GRPC_UNAUTHENTICATED;
    case 403:
      return OX_GRPC_PERMISSION_DENIED;
    case 404:
      return OX_GRPC_NOT_FOUND;
    case 503:
      return OX_GRPC_UNAVAILABLE;
    default:
      return OX_GRPC_INTERNAL;
  }
}

/* "" or absent: the loaded version (-1); else a positive integer */
static bool parse_version(const char *s, int64_t *v) {
  *v = -1;
  if (!s || !*s) return true;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end || x <= 0) return false;
  *v = x;
  return true;
}

static ox_serve_version *acquire(ox_serve_server *srv, const char *name, const char *version,
                                 ox_serve_grpc_answer *a) {
  int64_t v;
  if (!name || !*name) {
    fail(a, OX_GRPC_INVALID_ARGUMENT, "name is missing");
    return NULL;
  }
  if (!parse_version(version, &v)) {
    fail(a, OX_GRPC_INVALID_ARGUMENT, "version '%s' is not a positive integer", version);
    return NULL;
  }
  char err[512];
  ox_serve_version *ver = ox_serve_repo_acquire(&srv->repo, name, v, err, sizeof err);
  if (!ver) fail(a, OX_GRPC_NOT_FOUND, "%s", err);
  return ver;
}

/* ---------------------------------------------------------------- metadata */

static void tensor_metadata(ox_serve_buf *b, uint32_t num, const char *name, const onnxc_type *t) {
  ox_serve_buf m = {0};
  ox_serve_pb_str(&m, 1, name);
  const char *dt = ox_serve_dtype_name(onnxc_type_elem_type(t));
  ox_serve_pb_str(&m, 2, dt ? dt : "");
  int64_t rank = onnxc_type_rank(t);
  int64_t dims[64];
  size_t n = 0;
  if (rank < 0) dims[n++] = -1; /* unknown rank, as the REST metadata writes it */
  for (int64_t d = 0; d < rank && n < 64; d++) dims[n++] = onnxc_type_dim(t, (size_t)d);
  ox_serve_pb_dims(&m, 3, dims, n);
  ox_serve_pb_sub(b, num, &m);
}

static void model_metadata(ox_serve_version *v, ox_serve_grpc_answer *a) {
  onnxc_session *s = v->session;
  ox_serve_buf *b = &a->body;
  char ver[32];
  snprintf(ver, sizeof ver, "%lld", (long long)v->version);
  ox_serve_pb_str(b, 1, v->model_name);
  ox_serve_pb_str(b, 2, ver);
  ox_serve_pb_str(b, 3, "onnx_onnxv1");
  for (size_t i = 0; i < onnxc_session_input_count(s); i++)
    tensor_metadata(b, 4, onnxc_session_input_name(s, i), onnxc_session_input_type(s, i));
  for (size_t i = 0; i < onnxc_session_output_count(s); i++)
    tensor_metadata(b, 5, onnxc_session_output_name(s, i), onnxc_session_output_type(s, i));
}

static void repository_index(ox_serve_server *srv, bool only_ready, ox_serve_grpc_answer *a) {
  ox_serve_repo *r = &srv->repo;
  ox_serve_repo_rescan(r);
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->n_models; i++) {
    ox_serve_model *m = r->models[i];
    if (only_ready && !m->loaded) continue;
    ox_serve_buf e = {0};
    char ver[32] = "";
    if (m->loaded)
      snprintf(ver, sizeof ver, "%lld", (long long)m->loaded->version);
    else if (m->n_versions)
      snprintf(ver, sizeof ver, "%lld", (long long)m->versions[m->n_versions - 1]);
    ox_serve_pb_str(&e, 1, m->name);
    if (ver[0]) ox_serve_pb_str(&e, 2, ver);
    ox_serve_pb_str(&e, 3, m->loaded ? "READY" : "UNAVAILABLE");
    if (!m->loaded) ox_serve_pb_str(&e, 4, m->reason);
    ox_serve_pb_sub(&a->body, 1, &e);
  }
  pthread_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------- ModelInfer */

/* input i of the request as the tensor the session takes (into job->inputs) */
static int make_input(ox_serve_version *ver, const ox_serve_grpc_infer *q, size_t i,
                      ox_serve_job *job, char *err, size_t errsz) {
  onnxc_session *s = ver->session;
  const ox_serve_grpc_tensor *t = &q->inputs[i];
  long k = ox_serve_session_input(s, t->name);
  if (k < 0) {
    snprintf(err, errsz, "inputs[%zu].name: model '%s' has no input '%s'", i, ver->model_name,
             t->name);
    return -1;
  }
  if (job->inputs[k]) {
    snprintf(err, errsz, "inputs[%zu].name: input '%s' is given twice", i, t->name);
    return -1;
  }
  ox_serve_input in = {.name = t->name, .rank = t->rank, .numel = 1, .binary_size = -1};
  if (!(in.dtype = ox_serve_dtype_from_name(t->datatype))) {
    snprintf(err, errsz, "inputs[%zu].datatype: '%s' is not a protocol datatype (input '%s')", i,
             t->datatype, t->name);
    return -1;
  }
  for (size_t d = 0; d < t->rank; d++) {
    in.dims[d] = t->dims[d];
    if (t->dims[d] && in.numel > ((int64_t)1 << 40) / t->dims[d]) {
      snprintf(err, errsz, "inputs[%zu].shape: over 2^40 elements (input '%s')", i, t->name);
      return -1;
    }
    in.numel *= t->dims[d];
  }
  if (ox_serve_input_check(&in, onnxc_session_input_type(s, (size_t)k), err, errsz)) return -1;
  ox_serve_buf typed = {0};
  size_t size = ox_serve_dtype_size(in.dtype);
  if (q->n_raw) {
    if (t->has_contents) {
      snprintf(err, errsz,
               "inputs[%zu].contents is set but the request uses raw_input_contents "
               "(one or the other for every input)",
               i);
      return -1;
    }
    in.binary = q->raw[i].p;
    in.binary_size = (long long)q->raw[i].n;
    if (in.dtype != 8 && q->raw[i].n != (size_t)in.numel * size) {
      snprintf(err, errsz,
               "raw_input_contents[%zu]: %zu bytes, but input '%s' (%s, %lld "
               "elements) takes %zu",
               i, q->raw[i].n, t->name, t->datatype, (long long)in.numel, (size_t)in.numel * size);
      return -1;
    }
  } else {
    size_t count = 0;
    if (ox_serve_grpc_contents_raw(t, in.dtype, i, &typed, &count, err, errsz)) {
      free(typed.data);
      return -1;
    }
    if (count != (size_t)in.numel) {
      snprintf(err, errsz,
               "inputs[%zu].contents.%s: %zu values, but the shape of input '%s' "
               "holds %lld",
               i, ox_serve_grpc_contents_name(in.dtype), count, t->name, (long long)in.numel);
      free(typed.data);
      return -1;
    }
    in.binary = (const unsigned char *)(typed.data ? typed.data : "");
    in.binary_size = (long long)typed.len;
  }
  char why[512];
  job->inputs[k] = ox_serve_binary_value(&in, why, sizeof why);
  free(typed.data);
  if (!job->inputs[k]) {
    snprintf(err, errsz, "%s[%zu]: %s", q->n_raw ? "raw_input_contents" : "inputs", i, why);
    return -1;
  }
  return 0;
}

/* checks the request and makes the job's inputs: 0, or a gRPC status */
static int infer_prepare(ox_serve_version *ver, const ox_serve_grpc_infer *q, ox_serve_job *job,
                         char *err, size_t errsz) {
  onnxc_session *s = ver->session;
  size_t n_model = onnxc_session_input_count(s), n_out = onnxc_session_output_count(s);
  job->inputs = calloc(n_model + 1, sizeof *job->inputs);
  job->outputs = calloc(n_out + 1, sizeof *job->outputs);
  if (!job->inputs || !job->outputs) {
    snprintf(err, errsz, "out of memory");
    return OX_GRPC_RESOURCE_EXHAUSTED;
  }
  if (q->n_raw && q->n_raw != q->n_inputs) {
    snprintf(err, errsz,
             "raw_input_contents has %zu entries for %zu inputs (one per input, in "
             "order, or none)",
             q->n_raw, q->n_inputs);
    return OX_GRPC_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < q->n_inputs; i++)
    if (make_input(ver, q, i, job, err, errsz)) return OX_GRPC_INVALID_ARGUMENT;
  for (size_t k = 0; k < n_model; k++)
    if (!job->inputs[k]) {
      snprintf(err, errsz, "inputs: missing input '%s' of model '%s'",
               onnxc_session_input_name(s, k), ver->model_name);
      return OX_GRPC_INVALID_ARGUMENT;
    }
  for (size_t i = 0; i < q->n_outputs; i++)
    if (ox_serve_session_output(s, q->outputs[i]) < 0) {
      snprintf(err, errsz, "outputs[%zu].name: model '%s' has no output '%s'", i, ver->model_name,
               q->outputs[i]);
      return OX_GRPC_INVALID_ARGUMENT;
    }
  return 0;
}

static void infer_respond(ox_serve_version *ver, const ox_serve_grpc_infer *q,
                          const ox_serve_job *job, ox_serve_grpc_answer *a) {
  onnxc_session *s = ver->session;
  size_t n = q->n_outputs ? q->n_outputs : onnxc_session_output_count(s);
  /* typed when the inputs were, and every output has a typed field */
  bool raw = q->n_raw > 0 || q->n_inputs == 0;
  for (size_t i = 0; i < n && !raw; i++) {
    size_t k = q->n_outputs ? (size_t)ox_serve_session_output(s, q->outputs[i]) : i;
    const onnxc_value *v = job->outputs[k];
    raw = v && onnxc_value_kind(v) == ONNXC_TYPE_TENSOR &&
          !ox_serve_grpc_contents_name(onnxc_tensor_dtype(v))[0];
  }
  ox_serve_buf *b = &a->body, rawbuf = {0};
  char ver_s[32];
  snprintf(ver_s, sizeof ver_s, "%lld", (long long)ver->version);
  ox_serve_pb_str(b, 1, ver->model_name);
  ox_serve_pb_str(b, 2, ver_s);
  if (q->id && q->id[0]) ox_serve_pb_str(b, 3, q->id);
  for (size_t i = 0; i < n; i++) {
    size_t k = q->n_outputs ? (size_t)ox_serve_session_output(s, q->outputs[i]) : i;
    const onnxc_value *v = job->outputs[k];
    const char *name = onnxc_session_output_name(s, k);
    if (!v || onnxc_value_kind(v) != ONNXC_TYPE_TENSOR ||
        !ox_serve_dtype_name(onnxc_tensor_dtype(v))) {
      free(rawbuf.data);
      fail(a, OX_GRPC_INTERNAL, "output '%s' is not a tensor the protocol can carry", name);
      return;
    }
    ox_serve_buf t = {0};
    ox_serve_pb_str(&t, 1, name);
    ox_serve_pb_str(&t, 2, ox_serve_dtype_name(onnxc_tensor_dtype(v)));
    ox_serve_pb_dims(&t, 3, onnxc_tensor_dims(v), onnxc_tensor_rank(v));
    if (!raw) ox_serve_grpc_typed_contents(&t, v);
    ox_serve_pb_sub(b, 5, &t);
  }
  for (size_t i = 0; raw && i < n; i++) {
    size_t k = q->n_outputs ? (size_t)ox_serve_session_output(s, q->outputs[i]) : i;
    ox_serve_binary_put(&rawbuf, job->outputs[k]);
    ox_serve_pb_sub(b, 6, &rawbuf);
  }
  if (b->oom) fail(a, OX_GRPC_RESOURCE_EXHAUSTED, "out of memory writing the response");
}

/* a ModelInfer from its decoding to its answer; the job first, so that the
   worker's callback (which gets the job) finds the rest */
typedef struct infer_call {
  ox_serve_job job;
  ox_serve_server *srv;
  ox_serve_grpc_infer q;
  ox_serve_grpc_answer *a;
  uint64_t t0;
  void (*done)(void *arg);
  void *arg;
} infer_call;

/* the end of a call that got past the model lookup: counts it and frees it */
static void infer_free(infer_call *ic) {
  ox_serve_version *ver = ic->job.ver;
  ox_serve_metrics *mt = ver->metrics;
  if (ic->a->code) atomic_fetch_add_explicit(&mt->failures, 1, memory_order_relaxed);
  size_t n_model = onnxc_session_input_count(ver->session);
  size_t n_out = onnxc_session_output_count(ver->session);
  for (size_t k = 0; ic->job.inputs && k < n_model; k++) onnxc_value_free(ic->job.inputs[k]);
  for (size_t k = 0; ic->job.outputs && k < n_out; k++) onnxc_value_free(ic->job.outputs[k]);
  free(ic->job.inputs);
  free(ic->job.outputs);
  ox_serve_hist_add(&mt->latency, ox_serve_now_ns() - ic->t0);
  ox_serve_version_release(ver);
  ox_serve_grpc_infer_free(&ic->q);
  free(ic);
}

/* decodes and checks the request and makes its job; NULL when it is
   answered already (a failure in *a) */
static infer_call *infer_begin(ox_serve_server *srv, const uint8_t *req, size_t len,
                               ox_serve_grpc_answer *a) {
  char err[1024];
  infer_call *ic = calloc(1, sizeof *ic);
  if (!ic) {
    fail(a, OX_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  ic->srv = srv;
  ic->a = a;
  if (ox_serve_grpc_infer_decode(req, len, &ic->q, err, sizeof err)) {
    ox_serve_grpc_infer_free(&ic->q);
    free(ic);
    fail(a, OX_GRPC_INVALID_ARGUMENT, "ModelInferRequest: %s", err);
    return NULL;
  }
  ox_serve_version *ver = acquire(srv, ic->q.model_name, ic->q.model_version, a);
  if (!ver) {
    ox_serve_grpc_infer_free(&ic->q);
    free(ic);
    return NULL;
  }
  ic->t0 = ox_serve_now_ns();
  atomic_fetch_add_explicit(&ver->metrics->requests, 1, memory_order_relaxed);
  ic->job.ver = ver;
  atomic_fetch_add(&srv->sched.arriving, 1);
  int code = infer_prepare(ver, &ic->q, &ic->job, err, sizeof err);
  if (code) {
    atomic_fetch_sub(&srv->sched.arriving, 1);
    fail(a, code, "%s", err);
    infer_free(ic);
    return NULL;
  }
  return ic;
}

/* the job ran (queued) or was refused (the queue was full): the answer */
static void infer_end(infer_call *ic, bool queued) {
  ox_serve_grpc_answer *a = ic->a;
  ox_serve_version *ver = ic->job.ver;
  if (!queued) {
    ox_serve_metrics_reject(OX_SERVE_REJECT_QUEUE_FULL);
    fail(a, OX_GRPC_UNAVAILABLE,
         "model '%s': the server is overloaded (%d inference requests already waiting, "
         "--max-queue); retry later",
         ver->model_name, ic->srv->sched.max_queue);
  } else {
    ox_serve_hist_add(&ver->metrics->queue, ic->job.t_start - ic->job.t_enqueue);
    if (ic->job.status)
      fail(a,
           ic->job.status == ONNXC_ERR_INVALID_ARG ? OX_GRPC_INVALID_ARGUMENT : OX_GRPC_INTERNAL,
           "model '%s': %s", ver->model_name, ic->job.err);
    else
      infer_respond(ver, &ic->q, &ic->job, a);
  }
  infer_free(ic);
}

static void model_infer(ox_serve_server *srv, const uint8_t *req, size_t len,
                        ox_serve_grpc_answer *a) {
  infer_call *ic = infer_begin(srv, req, len, a);
  if (ic) infer_end(ic, ox_serve_sched_run(&srv->sched, &ic->job));
}

/* on the worker that ran the job */
static void infer_ran(ox_serve_job *job) {
  infer_call *ic = (infer_call *)job;
  void (*done)(void *) = ic->done;
  void *arg = ic->arg;
  infer_end(ic, true);
  done(arg);
}

bool ox_serve_grpc_infer_submit(ox_serve_server *srv, const uint8_t *req, size_t len,
                                ox_serve_grpc_answer *a, void (*done)(void *arg), void *arg) {
  memset(a, 0, sizeof *a);
  infer_call *ic = infer_begin(srv, req, len, a);
  if (!ic) return false;
  ic->done = done;
  ic->arg = arg;
  ic->job.on_done = infer_ran;
  if (ox_serve_sched_submit(&srv->sched, &ic->job)) return true; /* ic is the worker's now */
  infer_end(ic, false);
  return false;
}

/* ---------------------------------------------------------------- dispatch */

bool ox_serve_grpc_open_method(const char *method) {
  return strcmp(method, SERVICE "ServerLive") == 0 || strcmp(method, SERVICE "ServerReady") == 0 ||
         strcmp(method, SERVICE "ModelReady") == 0;
}

void ox_serve_grpc_handle(ox_serve_server *srv, const char *method, const uint8_t *req, size_t len,
                          ox_serve_grpc_answer *a) {
  memset(a, 0, sizeof *a);
  if (strncmp(method, SERVICE, strlen(SERVICE)) != 0) {
    fail(a, OX_GRPC_UNIMPLEMENTED,
         "no service for %s (onnxc serves inference.GRPCInferenceService)", method);
    return;
  }
  const char *m = method + strlen(SERVICE);
  char err[1024];
  char *name = NULL, *version = NULL;
  if (strcmp(m, "ModelInfer") == 0) {
    model_infer(srv, req, len, a);
  } else if (strcmp(m, "ServerLive") == 0) {
    ox_serve_pb_bool(&a->body, 1, true);
  } else if (strcmp(m, "ServerReady") == 0) {
    /* while draining for shutdown the server is live but takes no new work */
    ox_serve_pb_bool(&a->body, 1, !atomic_load(&srv->draining));
  } else if (strcmp(m, "ServerMetadata") == 0) {
    ox_serve_pb_str(&a->body, 1, "onnxc");
    ox_serve_pb_str(&a->body, 2, onnxc_version());
    ox_serve_pb_str(&a->body, 3, "model_repository");
  } else if (strcmp(m, "ModelReady") == 0 || strcmp(m, "ModelMetadata") == 0) {
    if (ox_serve_grpc_names_decode(req, len, 1, 2, &name, &version, err, sizeof err)) {
      fail(a, OX_GRPC_INVALID_ARGUMENT, "%sRequest: %s", m, err);
    } else if (m[5] == 'R') { /* ModelReady */
      int64_t v;
      ox_serve_version *ver = NULL;
      if (!name || !*name)
        fail(a, OX_GRPC_INVALID_ARGUMENT, "ModelReadyRequest: name is missing");
      else if (!parse_version(version, &v))
        fail(a, OX_GRPC_INVALID_ARGUMENT,
             "ModelReadyRequest: version '%s' is not a positive integer", version);
      else if ((ver = ox_serve_repo_acquire(&srv->repo, name, v, err, sizeof err)) ||
               strncmp(err, "unknown", 7))
        ox_serve_pb_bool(&a->body, 1, ver != NULL); /* known: a readiness answer */
      else
        fail(a, OX_GRPC_NOT_FOUND, "%s", err);
      if (ver) ox_serve_version_release(ver);
    } else {
      ox_serve_version *ver = acquire(srv, name, version, a);
      if (ver) {
        model_metadata(ver, a);
        ox_serve_version_release(ver);
      }
    }
  } else if (strcmp(m, "RepositoryIndex") == 0) {
    bool ready;
    if (ox_serve_grpc_bool_decode(req, len, 2, &ready, err, sizeof err))
      fail(a, OX_GRPC_INVALID_ARGUMENT, "RepositoryIndexRequest: %s", err);
    else
      repository_index(srv, ready, a);
  } else if (strcmp(m, "RepositoryModelLoad") == 0 || strcmp(m, "RepositoryModelUnload") == 0) {
    bool load = m[15] == 'L';
    if (!srv->model_control) {
      ox_serve_metrics_reject(OX_SERVE_REJECT_FORBIDDEN);
      fail(a, OX_GRPC_PERMISSION_DENIED,
           "%s is refused: the server runs with --model-control none (start it with "
           "--model-control explicit to load and unload models)",
           m);
    } else if (ox_serve_grpc_names_decode(req, len, 2, 0, &name, &version, err, sizeof err)) {
      fail(a, OX_GRPC_INVALID_ARGUMENT, "%sRequest: %s", m, err);
    } else if (!name || !*name) {
      fail(a, OX_GRPC_INVALID_ARGUMENT, "%sRequest: model_name is missing", m);
    } else {
      bool notfound = false;
      int rc = load ? ox_serve_repo_load(&srv->repo, name, &notfound, err, sizeof err)
                    : ox_serve_repo_unload(&srv->repo, name, err, sizeof err);
      if (rc) fail(a, code_of_http(notfound || !load ? 404 : 400), "%s", err);
    }
  } else {
    fail(a, OX_GRPC_UNIMPLEMENTED, "inference.GRPCInferenceService has no method %s here", m);
  }
  free(name);
  free(version);
  if (!a->code && a->body.oom) fail(a, OX_GRPC_RESOURCE_EXHAUSTED, "out of memory");
}
