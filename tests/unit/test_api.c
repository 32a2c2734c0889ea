/* test_api.c - the public header as a user sees it (only <onnxc.h>):
 * introspection without and with a session, string tensors, sequences,
 * maps and optionals in and out, run options (threads, terminate flag from
 * another thread, cancel, tag), outputs into caller buffers, environments,
 * the log callback, custom operators (kernel, checker, inference, errors),
 * one session run from four threads, and bad arguments everywhere.
 * Expected values are worked out by hand from the models' arithmetic. */
#include <math.h>
#include <onnxc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_check.h"

static onnxc_session *session(const onnxc_model *m, const onnxc_session_options *o) {
  onnxc_session *s = NULL;
  onnxc_error err = {0};
  if (onnxc_session_create(m, o, &s, &err) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", err.msg);
    failures++;
  }
  return s;
}

/* ------------------------------------------------------------ introspection */

static const char *interface_model =
    "<ir_version: 8, opset_import: [\"\" : 18, \"ai.onnx.ml\" : 3], producer_name: \"maker\",\n"
    " producer_version: \"1.2\", domain: \"org.test\", model_version: 5, doc_string: \"a doc\",\n"
    " metadata_props: [\"author\" : \"me\", \"licence\" : \"MIT\"]>\n"
    "main (float[batch, 3, 224, 224] image, seq(int64[N]) ids, map(string, float) scores,\n"
    "      optional(float[2]) maybe, float[3] bias) => (float[batch, 3, 224, 224] out, int64 count)\n"
    "<float[3] bias = {1, 2, 3}>\n"
    "{\n"
    "  out = Add(image, bias)\n"
    "  count = SequenceLength(ids)\n"
    "}\n";

static void test_introspection(void) {
  onnxc_model *m = parse(interface_model);
  if (!m) return;
  /* bias has an initializer: a default, not an input a caller feeds */
  CHECK(onnxc_model_input_count(m) == 4);
  CHECK(strcmp(onnxc_model_input_name(m, 0), "image") == 0);
  const onnxc_type *t = onnxc_model_input_type(m, 0);
  CHECK(onnxc_type_kind_of(t) == ONNXC_TYPE_TENSOR);
  CHECK(onnxc_type_elem_type(t) == 1);
  CHECK(onnxc_type_rank(t) == 4);
  CHECK(onnxc_type_dim(t, 0) == -1 && strcmp(onnxc_type_dim_param(t, 0), "batch") == 0);
  CHECK(onnxc_type_dim(t, 3) == 224 && onnxc_type_dim_param(t, 3) == NULL);
  CHECK(onnxc_type_dim(t, 9) == -1);
  char buf[128];
  CHECK(onnxc_type_describe(t, buf, sizeof buf) == strlen("tensor(float)"));
  CHECK(strcmp(buf, "tensor(float)") == 0);
  const onnxc_type *seq = onnxc_model_input_type(m, 1);
  CHECK(onnxc_type_kind_of(seq) == ONNXC_TYPE_SEQUENCE);
  CHECK(onnxc_type_elem_type(onnxc_type_element(seq)) == 7);
  onnxc_type_describe(seq, buf, sizeof buf);
  CHECK(strcmp(buf, "seq(tensor(int64))") == 0);
  const onnxc_type *map = onnxc_model_input_type(m, 2);
  CHECK(onnxc_type_kind_of(map) == ONNXC_TYPE_MAP && onnxc_type_map_key(map) == 8);
  CHECK(onnxc_type_elem_type(onnxc_type_map_value(map)) == 1);
  onnxc_type_describe(map, buf, sizeof buf);
  CHECK(strcmp(buf, "map(string,tensor(float))") == 0);
  const onnxc_type *opt = onnxc_model_input_type(m, 3);
  CHECK(onnxc_type_kind_of(opt) == ONNXC_TYPE_OPTIONAL);
  CHECK(onnxc_type_rank(onnxc_type_element(opt)) == 2 - 1);
  /* truncation: the full length comes back, the buffer stays terminated */
  char small[6];
  CHECK(onnxc_type_describe(map, small, sizeof small) == strlen("map(string,tensor(float))"));
  CHECK(strcmp(small, "map(s") == 0);
  CHECK(onnxc_type_kind_of(NULL) == ONNXC_TYPE_UNKNOWN && onnxc_type_rank(NULL) == -1);
  CHECK(onnxc_model_output_count(m) == 2);
  CHECK(strcmp(onnxc_model_output_name(m, 1), "count") == 0);
  CHECK(onnxc_type_rank(onnxc_model_output_type(m, 1)) == 0);
  CHECK(onnxc_model_output_name(m, 2) == NULL);
  CHECK(onnxc_model_ir_version(m) == 8 && onnxc_model_version(m) == 5);
  CHECK(strcmp(onnxc_model_producer_name(m), "maker") == 0);
  CHECK(strcmp(onnxc_model_producer_version(m), "1.2") == 0);
  CHECK(strcmp(onnxc_model_domain(m), "org.test") == 0);
  CHECK(strcmp(onnxc_model_doc_string(m), "a doc") == 0);
  CHECK(strcmp(onnxc_model_graph_name(m), "main") == 0);
  CHECK(onnxc_model_opset_count(m) == 2);
  CHECK(strcmp(onnxc_model_opset_domain(m, 0), "") == 0 && onnxc_model_opset_version(m, 0) == 18);
  CHECK(strcmp(onnxc_model_opset_domain(m, 1), "ai.onnx.ml") == 0);
  CHECK(onnxc_model_metadata_count(m) == 2);
  CHECK(strcmp(onnxc_model_metadata_key(m, 1), "licence") == 0);
  CHECK(strcmp(onnxc_model_metadata_value(m, 1), "MIT") == 0);
  CHECK(onnxc_model_metadata_key(m, 2) == NULL);
  CHECK(strcmp(onnxc_dtype_name(16), "bfloat16") == 0 && strcmp(onnxc_dtype_name(999), "") == 0);

  onnxc_session *s = session(m, NULL);
  if (s) {
    CHECK(onnxc_session_model(s) == m);
    CHECK(onnxc_session_input_count(s) == 4);
    CHECK(strcmp(onnxc_session_input_name(s, 3), "maybe") == 0);
    CHECK(onnxc_type_kind_of(onnxc_session_input_type(s, 3)) == ONNXC_TYPE_OPTIONAL);
    CHECK(onnxc_type_dim(onnxc_session_output_type(s, 0), 1) == 3);
    onnxc_session_free(s);
  }
  onnxc_model_free(m);
  /* no model, no crash */
  CHECK(onnxc_model_input_count(NULL) == 0 && onnxc_model_input_name(NULL, 0) == NULL);
  CHECK(onnxc_session_input_count(NULL) == 0 && onnxc_session_input_type(NULL, 0) == NULL);
}

/* ------------------------------------------------------------ values */

static void test_strings(void) {
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 18]>\n"
      "g (string[2] a, string[2] b) => (string[4] c) { c = Concat <axis = 0> (a, b) }\n");
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  const char *sa[] = {"hello", ""};
  const char *sb[] = {"with\ttab", "xyz-extra"};
  size_t lens_b[] = {8, 3};
  int64_t d2 = 2;
  onnxc_value *a = onnxc_tensor_create_strings(&d2, 1, sa, NULL, &err);
  onnxc_value *b = onnxc_tensor_create_strings(&d2, 1, sb, lens_b, &err);
  CHECK(a && b);
  CHECK(onnxc_tensor_data(a) == NULL && onnxc_tensor_nbytes(a) == 0);
  onnxc_value *in[] = {a, b}, *out = NULL;
  CHECK(onnxc_session_run(s, NULL, in, 2, NULL, &out, 1, &err) == ONNXC_OK);
  size_t len = 0;
  CHECK(out && onnxc_tensor_numel(out) == 4 && onnxc_tensor_dtype(out) == 8);
  CHECK(strcmp(onnxc_tensor_string(out, 0, &len), "hello") == 0 && len == 5);
  CHECK(strcmp(onnxc_tensor_string(out, 1, &len), "") == 0 && len == 0);
  CHECK(strcmp(onnxc_tensor_string(out, 2, NULL), "with\ttab") == 0);
  CHECK(strcmp(onnxc_tensor_string(out, 3, &len), "xyz") == 0 && len == 3);
  CHECK(onnxc_tensor_string(out, 4, NULL) == NULL);
  /* a NUL inside a string is refused */
  size_t bad_len[] = {3, 1};
  const char *nul[] = {"a\0b", "c"};
  CHECK(onnxc_tensor_create_strings(&d2, 1, nul, bad_len, &err) == NULL);
  CHECK(strstr(err.msg, "NUL") != NULL);
  onnxc_value_free(out);
  onnxc_value_free(a);
  onnxc_value_free(b);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

static void test_sequences(void) {
  /* seq in, seq out: the sequence with its first element appended again */
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 18]>\n"
      "g (seq(float[N]) xs) => (seq(float[N]) ys, int64 n) {\n"
      "  zero = Constant <value = int64 {0}> ()\n"
      "  first = SequenceAt(xs, zero)\n"
      "  ys = SequenceInsert(xs, first)\n"
      "  n = SequenceLength(ys)\n"
      "}\n");
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  float v0[2] = {1.5f, -2.0f}, v1[2] = {3.0f, 4.0f};
  int64_t d2 = 2;
  onnxc_value *t0 = onnxc_tensor_wrap(1, &d2, 1, v0, &err), *t1 = onnxc_tensor_wrap(1, &d2, 1, v1, &err);
  const onnxc_value *items[] = {t0, t1};
  onnxc_value *seq = onnxc_sequence_create(items, 2, &err);
  CHECK(seq && onnxc_value_kind(seq) == ONNXC_TYPE_SEQUENCE && onnxc_sequence_length(seq) == 2);
  /* the sequence references the items: freeing ours is safe */
  onnxc_value_free(t0);
  onnxc_value_free(t1);
  onnxc_value *outs[2] = {0};
  CHECK(onnxc_session_run(s, NULL, &seq, 1, NULL, outs, 2, &err) == ONNXC_OK);
  CHECK(onnxc_sequence_length(outs[0]) == 3);
  const onnxc_value *last = onnxc_sequence_at(outs[0], 2);
  const float *lv = onnxc_tensor_data_const(last);
  CHECK(lv && lv[0] == 1.5f && lv[1] == -2.0f);
  CHECK(*(const int64_t *)onnxc_tensor_data_const(outs[1]) == 3);
  CHECK(onnxc_sequence_at(outs[0], 3) == NULL);
  /* mixed item types are refused */
  int64_t iv = 1;
  onnxc_value *ti = onnxc_tensor_wrap(7, NULL, 0, &iv, &err);
  float fv = 1;
  onnxc_value *tf = onnxc_tensor_wrap(1, NULL, 0, &fv, &err);
  const onnxc_value *mixed[] = {ti, tf};
  CHECK(onnxc_sequence_create(mixed, 2, &err) == NULL && strstr(err.msg, "item 1") != NULL);
  onnxc_value_free(ti);
  onnxc_value_free(tf);
  onnxc_value_free(outs[0]);
  onnxc_value_free(outs[1]);
  onnxc_value_free(seq);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

static void test_maps_optionals(void) {
  /* DictVectorizer (ai.onnx.ml) reads a map; OptionalHasElement an optional */
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 18, \"ai.onnx.ml\" : 3]>\n"
      "g (map(string, float) d, optional(float[1]) o) => (float[1, 3] v, bool has) {\n"
      "  v = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\", \"b\", \"c\"]> (d)\n"
      "  has = OptionalHasElement(o)\n"
      "}\n");
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  const char *ks[] = {"c", "a"};
  int64_t d2 = 2, d1 = 1;
  float vals[2] = {7.0f, 5.0f}, one = 9.0f;
  onnxc_value *keys = onnxc_tensor_create_strings(&d2, 1, ks, NULL, &err);
  onnxc_value *vv = onnxc_tensor_wrap(1, &d2, 1, vals, &err);
  onnxc_value *map = onnxc_map_create(keys, vv, &err);
  CHECK(map && onnxc_value_kind(map) == ONNXC_TYPE_MAP);
  CHECK(onnxc_map_keys(map) != NULL && onnxc_tensor_numel(onnxc_map_values(map)) == 2);
  onnxc_value *inner = onnxc_tensor_wrap(1, &d1, 1, &one, &err);
  onnxc_value *full = onnxc_optional_create(inner, &err), *empty = onnxc_optional_create(NULL, &err);
  CHECK(onnxc_optional_has_value(full) && !onnxc_optional_has_value(empty));
  CHECK(onnxc_optional_value(full) == inner && onnxc_optional_value(empty) == NULL);
  const char *names[] = {"d", "o"};
  onnxc_value *in[] = {map, full}, *outs[2] = {0};
  CHECK(onnxc_session_run(s, names, in, 2, NULL, outs, 2, &err) == ONNXC_OK);
  const float *v = onnxc_tensor_data_const(outs[0]);
  CHECK(v && v[0] == 5.0f && v[1] == 0.0f && v[2] == 7.0f);
  CHECK(outs[1] && *(const uint8_t *)onnxc_tensor_data_const(outs[1]) == 1);
  onnxc_value_free(outs[0]);
  onnxc_value_free(outs[1]);
  in[1] = empty;
  CHECK(onnxc_session_run(s, names, in, 2, NULL, outs, 2, &err) == ONNXC_OK);
  CHECK(outs[1] && *(const uint8_t *)onnxc_tensor_data_const(outs[1]) == 0);
  onnxc_value_free(outs[0]);
  onnxc_value_free(outs[1]);
  /* a map whose lengths differ */
  onnxc_value *short_vals = onnxc_tensor_wrap(1, &d1, 1, vals, &err);
  CHECK(onnxc_map_create(keys, short_vals, &err) == NULL && strstr(err.msg, "2 keys") != NULL);
  CHECK(onnxc_map_create(vv, vv, &err) == NULL); /* float keys */
  onnxc_value_free(short_vals);
  onnxc_value_free(keys);
  onnxc_value_free(vv);
  onnxc_value_free(map);
  onnxc_value_free(inner);
  onnxc_value_free(full);
  onnxc_value_free(empty);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* ------------------------------------------------------------ run options */

/* A loop of 2^40 iterations: only a terminate flag or a cancel ends it. */
static const char *endless_loop =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "g (float x) => (float y) {\n"
    "  n = Constant <value = int64 {1099511627776}> ()\n"
    "  t = Constant <value = bool {1}> ()\n"
    "  y = Loop (n, t, x) <body = b (int64 i, bool c, float a) => (bool c2, float a2) {\n"
    "    c2 = Identity(c)\n"
    "    a2 = Identity(a)\n"
    "  }>\n"
    "}\n";

typedef struct stopper {
  volatile int *flag;
} stopper;

static void *stop_later(void *arg) {
  stopper *st = arg;
  usleep(20000);
  __atomic_store_n(st->flag, 1, __ATOMIC_RELAXED);
  return NULL;
}

static int cancel_always(void *user) {
  (*(int *)user)++;
  return 1;
}

static void test_run_options(void) {
  onnxc_model *m = parse(endless_loop);
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  float x = 1;
  onnxc_value *in = onnxc_tensor_wrap(1, NULL, 0, &x, &err), *out = NULL;
  volatile int flag = 0;
  stopper st = {&flag};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, stop_later, &st) == 0);
  onnxc_run_options ro = {.terminate = &flag, .tag = "request-17"};
  CHECK(onnxc_session_run_with(s, &ro, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_ERR_CANCELLED);
  pthread_join(t, NULL);
  CHECK(out == NULL && strstr(err.msg, "request-17") != NULL);
  int polls = 0;
  onnxc_run_options rc = {.cancel = cancel_always, .cancel_user = &polls, .threads = 1};
  CHECK(onnxc_session_run_with(s, &rc, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_ERR_CANCELLED);
  CHECK(polls >= 1);
  onnxc_value_free(in);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* perceptron (examples/perceptron.onnxtxt's weights) on one row */
static const char *perceptron =
    "<ir_version: 7, opset_import: [\"\" : 21]>\n"
    "G (float[N, 3] X) => (float[N, 2] Out)\n"
    "<float[3, 4] W1 = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12},\n"
    " float[4, 2] W2 = {0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18},\n"
    " float[4] B1 = {0.001, 0.002, 0.003, 0.004}, float[2] B2 = {0.01, 0.02}>\n"
    "{ Y1 = Gemm(X, W1, B1)\n Y2 = Relu(Y1)\n Z = Gemm(Y2, W2, B2)\n Out = Sigmoid(Z) }\n";

/* The expected output for row (a, b, c), by the model's formula in double. */
static void perceptron_expected(const float *x, double *y) {
  const double w1[3][4] = {{0.01, 0.02, 0.03, 0.04}, {0.05, 0.06, 0.07, 0.08}, {0.09, 0.10, 0.11, 0.12}};
  const double w2[4][2] = {{0.11, 0.12}, {0.13, 0.14}, {0.15, 0.16}, {0.17, 0.18}};
  const double b1[4] = {0.001, 0.002, 0.003, 0.004}, b2[2] = {0.01, 0.02};
  double h[4];
  for (int j = 0; j < 4; j++) {
    h[j] = b1[j];
    for (int i = 0; i < 3; i++) h[j] += x[i] * w1[i][j];
    if (h[j] < 0) h[j] = 0;
  }
  for (int k = 0; k < 2; k++) {
    double z = b2[k];
    for (int j = 0; j < 4; j++) z += h[j] * w2[j][k];
    y[k] = 1.0 / (1.0 + exp(-z));
  }
}

static void test_run_into(void) {
  onnxc_model *m = parse(perceptron);
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  float x[3] = {1.0f, -2.0f, 3.0f}, y[2] = {0, 0}, wrong[3] = {0, 0, 0};
  int64_t dx[2] = {1, 3}, dy[2] = {1, 2}, dw[2] = {1, 3};
  onnxc_value *in = onnxc_tensor_wrap(1, dx, 2, x, &err);
  onnxc_value *buf = onnxc_tensor_wrap(1, dy, 2, y, &err);
  CHECK(onnxc_session_run_into(s, NULL, NULL, &in, 1, NULL, &buf, 1, &err) == ONNXC_OK);
  double want[2];
  perceptron_expected(x, want);
  CHECK(fabs(y[0] - want[0]) < 1e-6 && fabs(y[1] - want[1]) < 1e-6);
  onnxc_value *bad = onnxc_tensor_wrap(1, dw, 2, wrong, &err);
  CHECK(onnxc_session_run_into(s, NULL, NULL, &in, 1, NULL, &bad, 1, &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(strstr(err.msg, "'Out'") != NULL && wrong[0] == 0);
  onnxc_value_free(bad);
  onnxc_value_free(buf);
  onnxc_value_free(in);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* ------------------------------------------------------------ threads */

typedef struct caller {
  onnxc_session *s;
  int runs, bad;
  unsigned seed;
} caller;

static void *call_many(void *arg) {
  caller *c = arg;
  onnxc_error err = {0};
  for (int r = 0; r < c->runs; r++) {
    /* each thread its own rows, so a mix-up between runs shows */
    float x[6];
    for (int i = 0; i < 6; i++) x[i] = (float)((c->seed * 31u + (unsigned)r * 7u + (unsigned)i) % 17) / 4.0f - 2.0f;
    int64_t dx[2] = {2, 3};
    onnxc_value *in = onnxc_tensor_wrap(1, dx, 2, x, &err), *out = NULL;
    onnxc_run_options ro = {.threads = r % 3 == 0 ? 1 : 0};
    if (!in || onnxc_session_run_with(c->s, &ro, NULL, &in, 1, NULL, &out, 1, &err) != ONNXC_OK) {
      c->bad++;
    } else {
      const float *y = onnxc_tensor_data_const(out);
      for (int row = 0; row < 2; row++) {
        double want[2];
        perceptron_expected(x + 3 * row, want);
        if (fabs(y[2 * row] - want[0]) > 1e-6 || fabs(y[2 * row + 1] - want[1]) > 1e-6) c->bad++;
      }
    }
    onnxc_value_free(out);
    onnxc_value_free(in);
  }
  return NULL;
}

static void log_count(void *user, onnxc_log_level level, const char *msg) {
  (void)msg;
  __atomic_fetch_add(&((int *)user)[level], 1, __ATOMIC_RELAXED);
}

static void test_threads_env_log(void) {
  onnxc_model *m = parse(perceptron);
  if (!m) return;
  onnxc_env *env = NULL;
  onnxc_error err = {0};
  CHECK(onnxc_env_create(2, &env, &err) == ONNXC_OK);
  int logs[4] = {0};
  onnxc_session_options o = {.env = env, .optimization_level = 1, .log = log_count,
                             .log_user = logs, .log_level = ONNXC_LOG_VERBOSE};
  onnxc_session *s = session(m, &o), *s2 = session(m, &o);
  if (s && s2) {
    /* the report: 4 threads x 3,000 runs of the perceptron on one session */
    caller cs[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
      cs[i] = (caller){i == 3 ? s2 : s, 3000, 0, (unsigned)i + 1};
      CHECK(pthread_create(&t[i], NULL, call_many, &cs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
      pthread_join(t[i], NULL);
      CHECK(cs[i].bad == 0);
    }
    CHECK(logs[ONNXC_LOG_INFO] == 2);           /* one creation line per session */
    CHECK(logs[ONNXC_LOG_VERBOSE] == 4 * 3000); /* one line per run */
    /* a failing run is logged as an error */
    onnxc_value *none = NULL;
    CHECK(onnxc_session_run(s, NULL, NULL, 0, NULL, &none, 1, &err) == ONNXC_ERR_INVALID_ARG);
    CHECK(logs[ONNXC_LOG_ERROR] == 1);
  }
  onnxc_session_free(s);
  onnxc_session_free(s2);
  onnxc_env_free(env);
  /* the session's own pool with pinned workers that sleep at once */
  onnxc_session_options po = {.threads = 3, .thread_spin_us = -1, .pin_threads = 1};
  onnxc_session *sp = session(m, &po);
  if (sp) {
    caller cp[2] = {{sp, 500, 0, 7}, {sp, 500, 0, 8}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, call_many, &cp[i]) == 0);
    for (int i = 0; i < 2; i++) {
      pthread_join(t[i], NULL);
      CHECK(cp[i].bad == 0);
    }
  }
  onnxc_session_free(sp);
  onnxc_model_free(m);
}

/* ------------------------------------------------------------ custom operators */

typedef struct scale_state {
  float alpha;
} scale_state;

static onnxc_status scale_prepare(void *user, const onnxc_kernel_info *info, void **state,
                                  onnxc_error *err) {
  (void)user;
  float alpha = onnxc_kernel_attr_float(info, "alpha", 1.0f);
  if (alpha == 0.0f) {
    snprintf(err->msg, sizeof err->msg, "alpha must not be 0");
    return ONNXC_ERR_INVALID_MODEL;
  }
  scale_state *st = malloc(sizeof *st);
  if (!st) return ONNXC_ERR_NOMEM;
  st->alpha = alpha;
  *state = st;
  return ONNXC_OK;
}

static onnxc_status scale_run(void *user, onnxc_kernel_context *ctx, void *state) {
  int *calls = user;
  __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
  const scale_state *st = state;
  const onnxc_value *x = onnxc_kernel_input(ctx, 0);
  if (onnxc_tensor_dtype(x) != 1) return onnxc_kernel_fail(ctx, "Scale takes float tensors");
  onnxc_value *y = onnxc_kernel_output(ctx, 0, 1, onnxc_tensor_dims(x), onnxc_tensor_rank(x));
  if (!y) return ONNXC_ERR_RUNTIME;
  const float *xv = onnxc_tensor_data_const(x);
  float *yv = onnxc_tensor_data(y);
  for (int64_t i = 0; i < onnxc_tensor_numel(x); i++) {
    if (xv[i] < -1000) return onnxc_kernel_fail(ctx, "value below -1000");
    yv[i] = xv[i] * st->alpha;
  }
  return ONNXC_OK;
}

static void scale_release(void *user, void *state) {
  (void)user;
  free(state);
}

static onnxc_status scale_infer(void *user, onnxc_infer_context *ctx) {
  (void)user;
  const onnxc_type *t = onnxc_infer_input_type(ctx, 0);
  if (!t) return ONNXC_OK;
  if (onnxc_type_elem_type(t) != 1) return onnxc_infer_fail(ctx, "Scale takes float tensors");
  int64_t dims[8];
  int64_t r = onnxc_type_rank(t);
  for (int64_t i = 0; i < r && i < 8; i++) dims[i] = onnxc_type_dim(t, (size_t)i);
  return onnxc_infer_set_output(ctx, 0, 1, dims, r);
}

static void test_custom_ops(void) {
  onnxc_error err = {0};
  onnxc_op_registry *reg = NULL;
  CHECK(onnxc_op_registry_create(&reg, &err) == ONNXC_OK);
  int calls = 0;
  onnxc_custom_op op = {"com.example", "Scale", 1, 0, 1, 1, 1, 1,
                        scale_prepare, scale_run, scale_release, scale_infer, &calls};
  CHECK(onnxc_op_registry_add(reg, &op, &err) == ONNXC_OK);
  CHECK(onnxc_op_registry_add(reg, &op, &err) == ONNXC_ERR_INVALID_ARG); /* overlap */
  onnxc_custom_op std_op = op;
  std_op.domain = "ai.onnx";
  CHECK(onnxc_op_registry_add(reg, &std_op, &err) == ONNXC_ERR_INVALID_ARG);
  onnxc_custom_op no_run = op;
  no_run.op_type = "Other";
  no_run.run = NULL;
  CHECK(onnxc_op_registry_add(reg, &no_run, &err) == ONNXC_ERR_INVALID_ARG);

  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 18, \"com.example\" : 1]>\n"
      "g (float[2, 2] x) => (float[2, 2] y) {\n"
      "  s = com.example.Scale <alpha = 2.5> (x)\n"
      "  y = Relu(s)\n"
      "}\n");
  if (!m) return;
  onnxc_session_options o = {.custom_ops = reg};
  onnxc_session *s = session(m, &o);
  if (s) {
    float x[4] = {1, -1, 2, 0.5f};
    int64_t d[2] = {2, 2};
    onnxc_value *in = onnxc_tensor_wrap(1, d, 2, x, &err), *out = NULL;
    CHECK(onnxc_session_run(s, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_OK);
    const float *y = onnxc_tensor_data_const(out);
    CHECK(y && y[0] == 2.5f && y[1] == 0.0f && y[2] == 5.0f && y[3] == 1.25f && calls == 1);
    onnxc_value_free(out);
    x[3] = -5000;
    CHECK(onnxc_session_run(s, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_ERR_RUNTIME);
    CHECK(strstr(err.msg, "below -1000") != NULL && strstr(err.msg, "Scale") != NULL);
    onnxc_value_free(in);
    onnxc_session_free(s);
  }
  /* without the registry the session says which op is missing */
  onnxc_session *s0 = NULL;
  CHECK(onnxc_session_create(m, NULL, &s0, &err) == ONNXC_ERR_UNSUPPORTED && s0 == NULL);
  CHECK(strstr(err.msg, "Scale") != NULL);
  /* checker: arity and (with full) inference through the callbacks */
  char *report = NULL;
  onnxc_check_options co = {.full = 1, .custom_ops = reg};
  CHECK(onnxc_check(m, &co, &report, &err) == ONNXC_OK);
  CHECK(report && strstr(report, "not checked") == NULL);
  free(report);
  onnxc_infer_options io = {.strict = 1, .custom_ops = reg};
  CHECK(onnxc_infer_shapes(m, &io, NULL, &err) == ONNXC_OK);
  onnxc_model_free(m);

  /* an int input: the infer callback rejects it; two inputs: wrong arity */
  onnxc_model *bad = parse(
      "<ir_version: 8, opset_import: [\"\" : 18, \"com.example\" : 1]>\n"
      "g (int64[2] x) => (float[2] y, float[2] z) {\n"
      "  y = com.example.Scale (x)\n"
      "  z = com.example.Scale (x, x)\n"
      "}\n");
  if (bad) {
    co.full = 0;
    CHECK(onnxc_check(bad, &co, &report, &err) == ONNXC_ERR_INVALID_MODEL);
    CHECK(report && strstr(report, "has 2 inputs") != NULL);
    free(report);
    CHECK(onnxc_infer_shapes(bad, &io, NULL, &err) == ONNXC_ERR_INVALID_MODEL);
    CHECK(strstr(err.msg, "float tensors") != NULL || strstr(err.msg, "inputs") != NULL);
    onnxc_session *sb = NULL;
    CHECK(onnxc_session_create(bad, &o, &sb, &err) == ONNXC_ERR_INVALID_MODEL && !sb);
    CHECK(strstr(err.msg, "has 2 inputs") != NULL);
    onnxc_model_free(bad);
  }
  /* prepare refusing the node */
  onnxc_model *zero = parse(
      "<ir_version: 8, opset_import: [\"\" : 18, \"com.example\" : 1]>\n"
      "g (float[2] x) => (float[2] y) { y = com.example.Scale <alpha = 0.0> (x) }\n");
  if (zero) {
    onnxc_session *sz = NULL;
    CHECK(onnxc_session_create(zero, &o, &sz, &err) == ONNXC_ERR_INVALID_MODEL && !sz);
    CHECK(strstr(err.msg, "alpha must not be 0") != NULL);
    onnxc_model_free(zero);
  }
  onnxc_op_registry_free(reg);
}

/* ------------------------------------------------------------ bad arguments */

static void test_bad_arguments(void) {
  onnxc_error err = {0};
  onnxc_value *out = NULL;
  CHECK(onnxc_session_run(NULL, NULL, NULL, 0, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(onnxc_session_create(NULL, NULL, NULL, &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(onnxc_tensor_create(1, NULL, 2, &err) == NULL);
  int64_t neg = -3;
  CHECK(onnxc_tensor_create(1, &neg, 1, &err) == NULL && strstr(err.msg, "negative") != NULL);
  CHECK(onnxc_tensor_create(12345, NULL, 0, &err) == NULL);
  int64_t d4 = 4;
  CHECK(onnxc_tensor_wrap(1, &d4, 1, NULL, &err) == NULL);
  CHECK(onnxc_tensor_wrap(8, &d4, 1, &d4, &err) == NULL); /* strings cannot wrap */
  CHECK(onnxc_tensor_data(NULL) == NULL && onnxc_tensor_rank(NULL) == 0);
  CHECK(onnxc_sequence_create(NULL, 2, &err) == NULL);
  CHECK(onnxc_map_create(NULL, NULL, &err) == NULL);
  onnxc_value_free(NULL);
  onnxc_session_free(NULL);
  onnxc_env_free(NULL);
  onnxc_op_registry_free(NULL);
  CHECK(onnxc_op_registry_add(NULL, NULL, &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(strcmp(onnxc_version(), "0.9.0") == 0);

  onnxc_model *m = parse(perceptron);
  onnxc_session *s = m ? session(m, NULL) : NULL;
  if (s) {
    float x[6] = {0};
    int64_t d[2] = {2, 3}, dwrong[2] = {2, 4};
    onnxc_value *in = onnxc_tensor_wrap(1, d, 2, x, &err);
    onnxc_value *wrong_shape = onnxc_tensor_wrap(1, dwrong, 2, x, &err);
    onnxc_value *wrong_type = onnxc_tensor_wrap(7, d, 2, x, &err);
    const char *bad_name = "Nope";
    CHECK(onnxc_session_run(s, &bad_name, &in, 1, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "Nope") != NULL);
    CHECK(onnxc_session_run(s, NULL, &wrong_shape, 1, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "'X'") != NULL);
    CHECK(onnxc_session_run(s, NULL, &wrong_type, 1, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    onnxc_value *null_in = NULL;
    CHECK(onnxc_session_run(s, NULL, &null_in, 1, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    const char *bad_out = "Missing";
    CHECK(onnxc_session_run(s, NULL, &in, 1, &bad_out, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    onnxc_value *three[3] = {0};
    CHECK(onnxc_session_run(s, NULL, &in, 1, NULL, three, 3, &err) == ONNXC_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "3 outputs requested") != NULL);
    onnxc_value *two[2] = {in, in};
    CHECK(onnxc_session_run(s, NULL, two, 2, NULL, &out, 1, &err) == ONNXC_ERR_INVALID_ARG);
    onnxc_value_free(in);
    onnxc_value_free(wrong_shape);
    onnxc_value_free(wrong_type);
    onnxc_session_free(s);
  }
  onnxc_model_free(m);
}

/* max_memory: a shape the caller gives asks for 10 GB */
static void test_memory_limit(void) {
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 18]>\n"
      "g (int64[2] shape) => (float[?, ?] y) { y = ConstantOfShape <value = float[1] {1.0}> (shape) }\n");
  onnxc_session_options o = {.max_memory = (size_t)1 << 20};
  onnxc_session *s = m ? session(m, &o) : NULL;
  if (!s) return;
  onnxc_error err = {0};
  int64_t huge[2] = {50000, 50000}, small[2] = {16, 16}, d2 = 2;
  onnxc_value *in = onnxc_tensor_wrap(7, &d2, 1, huge, &err), *out = NULL;
  CHECK(onnxc_session_run(s, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_ERR_NOMEM && !out);
  CHECK(strstr(err.msg, "memory limit of 1048576") != NULL && strstr(err.msg, "ConstantOfShape"));
  onnxc_value_free(in);
  in = onnxc_tensor_wrap(7, &d2, 1, small, &err);
  CHECK(onnxc_session_run(s, NULL, &in, 1, NULL, &out, 1, &err) == ONNXC_OK);
  CHECK(onnxc_tensor_numel(out) == 256);
  onnxc_value_free(out);
  onnxc_value_free(in);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

int main(void) {
  test_memory_limit();
  test_introspection();
  test_strings();
  test_sequences();
  test_maps_optionals();
  test_run_options();
  test_run_into();
  test_threads_env_log();
  test_custom_ops();
  test_bad_arguments();
  return finish("test_api");
}
