/* router.c - the REST endpoints of the Open Inference Protocol:
 *
 *   GET  /v2                                  server metadata
 *   GET  /v2/health/live | /v2/health/ready   liveness, readiness
 *   GET  /v2/models/M[/versions/V]            model metadata
 *   GET  /v2/models/M[/versions/V]/ready      model readiness
 *   POST /v2/models/M[/versions/V]/infer      inference (JSON or binary tensors)
 *   POST /v2/repository/index                 what the repository holds
 *   POST /v2/repository/models/M/load|unload  the repository extension
 *   GET  /metrics                             Prometheus text
 *
 * Every error is a JSON {"error": "..."} that names what was wrong. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_INPUTS 1024

static void reply_json(ox_serve_reply *rep, int status) {
  rep->status = status;
  rep->content_type = "application/json";
  rep->header_length = -1;
}

/* shape of a declared type: -1 for a dynamic dim */
static void put_shape(ox_serve_buf *b, const onnxc_type *t) {
  int64_t rank = onnxc_type_rank(t);
  ox_serve_buf_puts(b, "[");
  if (rank < 0) ox_serve_buf_puts(b, "-1"); /* unknown rank */
  for (int64_t d = 0; d < rank; d++)
    ox_serve_buf_printf(b, "%s%lld", d ? "," : "", (long long)onnxc_type_dim(t, (size_t)d));
  ox_serve_buf_puts(b, "]");
}

static void put_tensor_list(ox_serve_buf *b, onnxc_session *s, bool outputs) {
  size_t n = outputs ? onnxc_session_output_count(s) : onnxc_session_input_count(s);
  ox_serve_buf_puts(b, "[");
  for (size_t i = 0; i < n; i++) {
    const char *name = outputs ? onnxc_session_output_name(s, i) : onnxc_session_input_name(s, i);
    const onnxc_type *t =
        outputs ? onnxc_session_output_type(s, i) : onnxc_session_input_type(s, i);
    ox_serve_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
    ox_serve_buf_json_str(b, name, strlen(name));
    ox_serve_buf_printf(
        b, ",\"datatype\":\"%s\",\"shape\":", ox_serve_dtype_name(onnxc_type_elem_type(t)));
    put_shape(b, t);
    ox_serve_buf_puts(b, "}");
  }
  ox_serve_buf_puts(b, "]");
}

static void model_metadata(ox_serve_version *v, ox_serve_reply *rep) {
  ox_serve_buf *b = &rep->body;
  ox_serve_buf_puts(b, "{\"name\":");
  ox_serve_buf_json_str(b, v->model_name, strlen(v->model_name));
  ox_serve_buf_printf(b, ",\"versions\":[\"%lld\"],\"platform\":\"onnx_onnxv1\",\"inputs\":",
                      (long long)v->version);
  put_tensor_list(b, v->session, false);
  ox_serve_buf_puts(b, ",\"outputs\":");
  put_tensor_list(b, v->session, true);
  if (v->max_batch)
    ox_serve_buf_printf(b,
                        ",\"parameters\":{\"max_batch_size\":%d,"
                        "\"max_queue_delay_microseconds\":%llu}",
                        v->max_batch, (unsigned long long)(v->max_delay_ns / 1000u));
  ox_serve_buf_puts(b, "}");
  reply_json(rep, 200);
}

static void repo_index(ox_serve_server *srv, const char *body, size_t len, ox_serve_reply *rep) {
  bool only_ready = false;
  if (len) {
    json_error_t je;
    json_t *j = json_loadb(body, len, 0, &je);
    if (!j || !json_is_object(j)) {
      ox_serve_reply_error(rep, 400, "malformed JSON body: %s", j ? "not an object" : je.text);
      json_decref(j);
      return;
    }
    only_ready = json_is_true(json_object_get(j, "ready"));
    json_decref(j);
  }
  ox_serve_repo *r = &srv->repo;
  ox_serve_repo_rescan(r);
  ox_serve_buf *b = &rep->body;
  ox_serve_buf_puts(b, "[");
  bool first = true;
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->n_models; i++) {
    ox_serve_model *m = r->models[i];
    if (only_ready && !m->loaded) continue;
    ox_serve_buf_puts(b, first ? "{\"name\":" : ",{\"name\":");
    first = false;
    ox_serve_buf_json_str(b, m->name, strlen(m->name));
    if (m->loaded) {
      ox_serve_buf_printf(b, ",\"version\":\"%lld\",\"state\":\"READY\"}",
                          (long long)m->loaded->version);
    } else {
      if (m->n_versions)
        ox_serve_buf_printf(b, ",\"version\":\"%lld\"", (long long)m->versions[m->n_versions - 1]);
      ox_serve_buf_puts(b, ",\"state\":\"UNAVAILABLE\",\"reason\":");
      ox_serve_buf_json_str(b, m->reason, strlen(m->reason));
      ox_serve_buf_puts(b, "}");
    }
  }
  pthread_mutex_unlock(&r->lock);
  ox_serve_buf_puts(b, "]");
  reply_json(rep, 200);
}

/* ---------------------------------------------------------------- infer */

/* input i of the session named `name`, or -1 */
long ox_serve_session_input(onnxc_session *s, const char *name) {
  for (size_t i = 0; i < onnxc_session_input_count(s); i++)
    if (strcmp(onnxc_session_input_name(s, i), name) == 0) return (long)i;
  return -1;
}

long ox_serve_session_output(onnxc_session *s, const char *name) {
  for (size_t i = 0; i < onnxc_session_output_count(s); i++)
    if (strcmp(onnxc_session_output_name(s, i), name) == 0) return (long)i;
  return -1;
}

/* a request input against the declared type: datatype, rank, fixed dims */
int ox_serve_input_check(const ox_serve_input *in, const onnxc_type *t, char *err, size_t errsz) {
  int32_t want = onnxc_type_elem_type(t);
  if (want && want != in->dtype) {
    snprintf(err, errsz, "input '%s': datatype %s but the model takes %s", in->name,
             ox_serve_dtype_name(in->dtype), ox_serve_dtype_name(want));
    return -1;
  }
  int64_t rank = onnxc_type_rank(t);
  if (rank < 0) return 0;
  bool ok = (size_t)rank == in->rank;
  for (size_t d = 0; ok && d < in->rank; d++)
    ok = onnxc_type_dim(t, d) < 0 || onnxc_type_dim(t, d) == in->dims[d];
  if (!ok) {
    ox_serve_buf want_s = {0};
    put_shape(&want_s, t);
    snprintf(err, errsz, "input '%s': shape does not match the model's %s (-1: any)", in->name,
             want_s.data ? want_s.data : "?");
    free(want_s.data);
    return -1;
  }
  return 0;
}

typedef struct infer_req {
  json_t *root;
  ox_serve_input *ins;
  size_t n_ins;
  ox_serve_job job;
  int status;
  char err[1536]; /* room for the model's name before a run's message */
} infer_req;

/* Parses and checks the request and makes the job's inputs. 0, or an HTTP
   status with req->err set. */
static int infer_prepare(ox_serve_version *ver, const char *body, size_t body_len,
                         const char *header_len, infer_req *q) {
  onnxc_session *s = ver->session;
  char *err = q->err;
  size_t errsz = sizeof q->err;
  long long jlen = ox_serve_binary_split(header_len, body_len, err, errsz);
  if (jlen < 0) return 400;
  json_error_t je;
  q->root = json_loadb(body, (size_t)jlen, JSON_REJECT_DUPLICATES, &je);
  if (!q->root) {
    snprintf(err, errsz, "malformed JSON at line %d, column %d: %s", je.line, je.column, je.text);
    return 400;
  }
  if (!json_is_object(q->root)) {
    snprintf(err, errsz, "the request must be a JSON object");
    return 400;
  }
  json_t *inputs = json_object_get(q->root, "inputs");
  size_t n_model = onnxc_session_input_count(s), n_out = onnxc_session_output_count(s);
  if (!json_is_array(inputs) || (n_model && json_array_size(inputs) == 0) ||
      json_array_size(inputs) > MAX_INPUTS) {
    snprintf(err, errsz, "\"inputs\" must be a non-empty array");
    return 400;
  }
  q->n_ins = json_array_size(inputs);
  q->ins = calloc(q->n_ins + 1, sizeof *q->ins);
  q->job.inputs = calloc(n_model + 1, sizeof *q->job.inputs);
  q->job.outputs = calloc(n_out + 1, sizeof *q->job.outputs);
  if (!q->ins || !q->job.inputs || !q->job.outputs) {
    snprintf(err, errsz, "out of memory");
    return 500;
  }
  for (size_t i = 0; i < q->n_ins; i++)
    if (ox_serve_input_parse(json_array_get(inputs, i), &q->ins[i], err, errsz)) return 400;
  if (ox_serve_binary_assign(q->ins, q->n_ins, (const unsigned char *)body + jlen,
                             body_len - (size_t)jlen, err, errsz))
    return 400;
  for (size_t i = 0; i < q->n_ins; i++) {
    long k = ox_serve_session_input(s, q->ins[i].name);
    if (k < 0) {
      snprintf(err, errsz, "model '%s' has no input '%s'", ver->model_name, q->ins[i].name);
      return 400;
    }
    if (q->job.inputs[k]) {
      snprintf(err, errsz, "input '%s' is given twice", q->ins[i].name);
      return 400;
    }
    if (ox_serve_input_check(&q->ins[i], onnxc_session_input_type(s, (size_t)k), err, errsz))
      return 400;
    if (!(q->job.inputs[k] = ox_serve_input_value(&q->ins[i], err, errsz))) return 400;
  }
  for (size_t k = 0; k < n_model; k++)
    if (!q->job.inputs[k]) {
      snprintf(err, errsz, "missing input '%s'", onnxc_session_input_name(s, k));
      return 400;
    }
  json_t *outs = json_object_get(q->root, "outputs");
  if (outs && !json_is_array(outs)) {
    snprintf(err, errsz, "\"outputs\" must be an array");
    return 400;
  }
  for (size_t i = 0; outs && i < json_array_size(outs); i++) {
    json_t *o = json_array_get(outs, i), *name = json_object_get(o, "name");
    if (!json_is_string(name)) {
      snprintf(err, errsz, "each requested output needs a \"name\" string");
      return 400;
    }
    if (ox_serve_session_output(s, json_string_value(name)) < 0) {
      snprintf(err, errsz, "model '%s' has no output '%s'", ver->model_name,
               json_string_value(name));
      return 400;
    }
  }
  return 0;
}

static bool wants_binary(json_t *root, json_t *req_out) {
  json_t *p = req_out ? json_object_get(req_out, "parameters") : NULL;
  json_t *b = p ? json_object_get(p, "binary_data") : NULL;
  if (b) return json_is_true(b);
  p = json_object_get(root, "parameters");
  return json_is_true(p ? json_object_get(p, "binary_data_output") : NULL);
}

static int infer_respond(ox_serve_version *ver, infer_req *q, ox_serve_reply *rep) {
  onnxc_session *s = ver->session;
  ox_serve_buf *b = &rep->body, bin = {0};
  json_t *outs = json_object_get(q->root, "outputs"), *id = json_object_get(q->root, "id");
  ox_serve_buf_puts(b, "{\"model_name\":");
  ox_serve_buf_json_str(b, ver->model_name, strlen(ver->model_name));
  ox_serve_buf_printf(b, ",\"model_version\":\"%lld\"", (long long)ver->version);
  if (json_is_string(id)) {
    ox_serve_buf_puts(b, ",\"id\":");
    ox_serve_buf_json_str(b, json_string_value(id), json_string_length(id));
  }
  ox_serve_buf_puts(b, ",\"outputs\":[");
  size_t n = outs && json_array_size(outs) ? json_array_size(outs) : onnxc_session_output_count(s);
  for (size_t i = 0; i < n; i++) {
    json_t *ro = outs ? json_array_get(outs, i) : NULL;
    size_t k =
        ro ? (size_t)ox_serve_session_output(s, json_string_value(json_object_get(ro, "name"))) : i;
    const onnxc_value *v = q->job.outputs[k];
    const char *name = onnxc_session_output_name(s, k);
    if (!v || onnxc_value_kind(v) != ONNXC_TYPE_TENSOR ||
        !ox_serve_dtype_name(onnxc_tensor_dtype(v))) {
      free(bin.data);
      snprintf(q->err, sizeof q->err, "output '%s' is not a tensor the protocol can carry", name);
      return 500;
    }
    ox_serve_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
    ox_serve_buf_json_str(b, name, strlen(name));
    ox_serve_buf_printf(b, ",\"datatype\":\"%s\",\"shape\":[",
                        ox_serve_dtype_name(onnxc_tensor_dtype(v)));
    for (size_t d = 0; d < onnxc_tensor_rank(v); d++)
      ox_serve_buf_printf(b, "%s%lld", d ? "," : "", (long long)onnxc_tensor_dims(v)[d]);
    ox_serve_buf_puts(b, "]");
    if (wants_binary(q->root, ro)) {
      size_t nb = ox_serve_binary_put(&bin, v);
      ox_serve_buf_printf(b, ",\"parameters\":{\"binary_data_size\":%zu}}", nb);
    } else {
      ox_serve_buf_puts(b, ",\"data\":");
      ox_serve_json_data(b, v);
      ox_serve_buf_puts(b, "}");
    }
  }
  ox_serve_buf_puts(b, "]}");
  reply_json(rep, 200);
  if (bin.len || bin.data) { /* even zero binary bytes: the client asked for the layout */
    rep->header_length = (long long)b->len;
    rep->content_type = "application/octet-stream";
    ox_serve_buf_put(b, bin.data, bin.len);
  }
  bool oom = bin.oom || b->oom;
  free(bin.data);
  if (oom) {
    snprintf(q->err, sizeof q->err, "out of memory writing the response");
    return 500;
  }
  return 200;
}

void ox_serve_infer(ox_serve_server *srv, ox_serve_version *ver, const char *body, size_t body_len,
                    const char *header_len, ox_serve_reply *rep) {
  uint64_t t0 = ox_serve_now_ns();
  ox_serve_metrics *mt = ver->metrics;
  atomic_fetch_add_explicit(&mt->requests, 1, memory_order_relaxed);
  infer_req q = {0};
  q.job.ver = ver;
  atomic_fetch_add(&srv->sched.arriving, 1);
  int status = infer_prepare(ver, body, body_len, header_len, &q);
  if (status) atomic_fetch_sub(&srv->sched.arriving, 1);
  if (status == 0) {
    if (!ox_serve_sched_run(&srv->sched, &q.job)) {
      status = 503;
      snprintf(q.err, sizeof q.err,
               "model '%s': the server is overloaded (%d inference requests already waiting, "
               "--max-queue); retry later",
               ver->model_name, srv->sched.max_queue);
      ox_serve_metrics_reject(OX_SERVE_REJECT_QUEUE_FULL);
      rep->retry_after = 1;
    } else if (q.job.status) {
      ox_serve_hist_add(&mt->queue, q.job.t_start - q.job.t_enqueue);
      status = q.job.status == ONNXC_ERR_INVALID_ARG ? 400 : 500;
      snprintf(q.err, sizeof q.err, "model '%s': %s", ver->model_name, q.job.err);
    } else {
      ox_serve_hist_add(&mt->queue, q.job.t_start - q.job.t_enqueue);
      status = infer_respond(ver, &q, rep);
    }
  }
  if (status != 200) {
    ox_serve_reply_error(rep, status, "%s", q.err);
    atomic_fetch_add_explicit(&mt->failures, 1, memory_order_relaxed);
  }
  size_t n_model = onnxc_session_input_count(ver->session);
  size_t n_out = onnxc_session_output_count(ver->session);
  for (size_t k = 0; q.job.inputs && k < n_model; k++) onnxc_value_free(q.job.inputs[k]);
  for (size_t k = 0; q.job.outputs && k < n_out; k++) onnxc_value_free(q.job.outputs[k]);
  free(q.job.inputs);
  free(q.job.outputs);
  free(q.ins);
  json_decref(q.root);
  ox_serve_hist_add(&mt->latency, ox_serve_now_ns() - t0);
}

/* ---------------------------------------------------------------- routing */

#define MAX_SEGS 8

static void model_route(ox_serve_server *srv, bool get, bool post, char **seg, size_t n,
                        const char *url, const char *header_len, const char *body, size_t len,
                        ox_serve_reply *rep) {
  /* seg: v2 models NAME [versions V] [ready|infer] */
  const char *name = seg[2];
  int64_t version = -1;
  size_t at = 3;
  if (n >= 5 && strcmp(seg[3], "versions") == 0) {
    char *end;
    errno = 0;
    long long v = strtoll(seg[4], &end, 10);
    if (errno || *end || v <= 0 || !seg[4][0]) {
      ox_serve_reply_error(rep, 400, "bad version '%s' (a positive integer)", seg[4]);
      return;
    }
    version = v;
    at = 5;
  }
  const char *action = at < n ? seg[at] : "";
  if (at + 1 < n || (at < n && strcmp(action, "ready") && strcmp(action, "infer"))) {
    ox_serve_reply_error(rep, 404, "no endpoint %s", url);
    return;
  }
  bool is_infer = strcmp(action, "infer") == 0;
  if ((is_infer && !post) || (!is_infer && !get)) {
    ox_serve_reply_error(rep, 405, "%s takes %s", url, is_infer ? "POST" : "GET");
    return;
  }
  char err[512];
  ox_serve_version *v = ox_serve_repo_acquire(&srv->repo, name, version, err, sizeof err);
  if (!v) {
    if (strcmp(action, "ready") == 0 && strncmp(err, "unknown", 7)) {
      /* known but not loaded: a readiness answer, not an error */
      ox_serve_buf_puts(&rep->body, "{\"name\":");
      ox_serve_buf_json_str(&rep->body, name, strlen(name));
      ox_serve_buf_puts(&rep->body, ",\"ready\":false}");
      reply_json(rep, 503);
      return;
    }
    ox_serve_reply_error(rep, 404, "%s", err);
    return;
  }
  if (is_infer) {
    ox_serve_infer(srv, v, body, len, header_len, rep);
  } else if (action[0]) {
    ox_serve_buf_puts(&rep->body, "{\"name\":");
    ox_serve_buf_json_str(&rep->body, name, strlen(name));
    ox_serve_buf_puts(&rep->body, ",\"ready\":true}");
    reply_json(rep, 200);
  } else {
    model_metadata(v, rep);
  }
  ox_serve_version_release(v);
}

void ox_serve_route(ox_serve_server *srv, const char *method, const char *url,
                    const char *header_len, const char *body, size_t len, ox_serve_reply *rep) {
  bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  bool post = strcmp(method, "POST") == 0;
  char path[2048];
  char *seg[MAX_SEGS];
  size_t n = 0;
  rep->header_length = -1;
  if (strlen(url) >= sizeof path) {
    ox_serve_reply_error(rep, 414, "URL too long");
    return;
  }
  strcpy(path, url);
  char *q = strchr(path, '?'); /* no endpoint takes a query */
  if (q) *q = 0;
  for (char *save = NULL, *t = strtok_r(path, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
    if (n == MAX_SEGS) {
      ox_serve_reply_error(rep, 404, "no endpoint %s", url);
      return;
    }
    seg[n++] = t;
  }
  if (n == 1 && strcmp(seg[0], "metrics") == 0) {
    if (!get) {
      ox_serve_reply_error(rep, 405, "/metrics takes GET");
      return;
    }
    ox_serve_metrics_write(&srv->repo, atomic_load(&srv->in_flight), &rep->body);
    rep->status = 200;
    rep->content_type = "text/plain; version=0.0.4";
    return;
  }
  if (n == 0 || strcmp(seg[0], "v2") != 0) {
    ox_serve_reply_error(rep, 404, "no endpoint %s", url);
    return;
  }
  if (n == 1 || (n == 3 && strcmp(seg[1], "health") == 0)) {
    if (!get) {
      ox_serve_reply_error(rep, 405, "%s takes GET", url);
      return;
    }
    if (n == 1) {
      ox_serve_buf_printf(&rep->body,
                          "{\"name\":\"onnxc\",\"version\":\"%s\",\"extensions\":"
                          "[\"binary_tensor_data\",\"model_repository\"]}",
                          onnxc_version());
      reply_json(rep, 200);
    } else if (strcmp(seg[2], "live") == 0) {
      ox_serve_buf_puts(&rep->body, "{\"live\":true}");
      reply_json(rep, 200);
    } else if (strcmp(seg[2], "ready") == 0) {
      /* while draining for shutdown the server is live but takes no new work */
      bool ready = !atomic_load(&srv->draining);
      ox_serve_buf_puts(&rep->body, ready ? "{\"ready\":true}" : "{\"ready\":false}");
      reply_json(rep, ready ? 200 : 503);
    } else {
      ox_serve_reply_error(rep, 404, "no endpoint %s", url);
    }
    return;
  }
  if (n >= 3 && strcmp(seg[1], "models") == 0) {
    model_route(srv, get, post, seg, n, url, header_len, body, len, rep);
    return;
  }
  if (n >= 3 && strcmp(seg[1], "repository") == 0) {
    if (!post) {
      ox_serve_reply_error(rep, 405, "%s takes POST", url);
      return;
    }
    if (n == 3 && strcmp(seg[2], "index") == 0) {
      repo_index(srv, body, len, rep);
      return;
    }
    if (n == 5 && strcmp(seg[2], "models") == 0 &&
        (strcmp(seg[4], "load") == 0 || strcmp(seg[4], "unload") == 0)) {
      /* a server that anyone who reaches it can reconfigure is not one to
         deploy: changing what is loaded is opt-in (--model-control explicit) */
      if (!srv->model_control) {
        ox_serve_metrics_reject(OX_SERVE_REJECT_FORBIDDEN);
        ox_serve_reply_error(rep, 403,
                             "%s is refused: the server runs with --model-control none (start "
                             "it with --model-control explicit to load and unload models)",
                             url);
        return;
      }
      char err[1024];
      bool notfound = false;
      int rc = seg[4][0] == 'l' ? ox_serve_repo_load(&srv->repo, seg[3], &notfound, err, sizeof err)
                                : ox_serve_repo_unload(&srv->repo, seg[3], err, sizeof err);
      if (rc) {
        ox_serve_reply_error(rep, notfound || seg[4][0] == 'u' ? 404 : 400, "%s", err);
      } else {
        ox_serve_buf_puts(&rep->body, "{}");
        reply_json(rep, 200);
      }
      return;
    }
  }
  ox_serve_reply_error(rep, 404, "no endpoint %s", url);
}
