/* test_training.c - the Gradient rewrite and the TrainingInfoProto API.
 *
 * Gradients of small graphs (broadcasting, MatMul, Sigmoid, ReduceMean, Gemm
 * with transA/transB, Tanh, Softmax, Log, Pow, Div, Transpose, Reshape) are
 * compared with derivatives written out by hand below and evaluated in double
 * precision; an operator without a rule must give an error naming it. The
 * training API is checked on a two-weight model with Momentum, whose updates
 * are worked out by hand, plus the binding rules' errors. */
#include <math.h>
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/ops/registry.h"
#include "../../src/runtime/training.h"
#include "../../src/text/text.h"

static int failures;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

static const char *const HEAD =
    "<ir_version: 8, opset_import: [\"\" : 18, \"ai.onnx.preview.training\" : 1]>\n";

static ox_model *parse(const char *body) {
  size_t n = strlen(HEAD) + strlen(body) + 1;
  char *s = malloc(n);
  ox_model *m = ox_model_new();
  ox_err e = {0};
  if (!s || !m) abort();
  snprintf(s, n, "%s%s", HEAD, body);
  if (ox_text_parse_model(s, strlen(s), "test", m->arena, &m->proto, &e)) {
    fprintf(stderr, "parse: %s\n", e.msg);
    failures++;
    ox_model_free(m);
    m = NULL;
  }
  free(s);
  return m;
}

static ox_value *tensor(const float *v, const int64_t *dims, size_t rank) {
  ox_err e = {0};
  ox_value *t = ox_tensor_new(OX_FLOAT, dims, rank, &e);
  if (!t) abort();
  memcpy(t->data, v, (size_t)t->numel * sizeof(float));
  return t;
}

static void expect(const ox_value *v, const double *want, int64_t n, const char *what) {
  if (!v || v->dtype != OX_FLOAT || v->numel != n) {
    fprintf(stderr, "%s: wrong value (numel %lld)\n", what, v ? (long long)v->numel : -1LL);
    failures++;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double got = ((const float *)v->data)[i];
    if (fabs(got - want[i]) > 1e-5 + 1e-4 * fabs(want[i])) {
      fprintf(stderr, "%s[%lld]: got %.7g, want %.7g\n", what, (long long)i, got, want[i]);
      failures++;
      return;
    }
  }
}

/* Runs m on inputs (by name), returns outputs by name. */
static int run(ox_model *m, const char *const *in_names, ox_value *const *ins, size_t n_in,
               const char *const *out_names, ox_value **outs, size_t n_out) {
  ox_session *s = NULL;
  ox_err e = {0};
  ox_session_opts o = {.threads = 1, .kernels = &ox_registry_builtin};
  int rc = ox_session_create(m, &o, &s, &e);
  if (!rc) rc = ox_session_run(s, in_names, ins, n_in, out_names, outs, n_out, &e);
  if (rc) {
    fprintf(stderr, "run: %s\n", e.msg);
    failures++;
  }
  ox_session_free(s);
  return rc;
}

/* y = sum(a * b + c), a [2,3], b [3], c [1]: dy/da[i][j] = b[j],
 * dy/db[j] = a[0][j] + a[1][j], dy/dc = 6. */
static void test_broadcast(void) {
  ox_model *m = parse(
      "g (float[2,3] a, float[3] b, float[1] c)\n"
      "  => (float y, float[2,3] da, float[3] db, float[1] dc) {\n"
      "  p = Mul(a, b)\n  s = Add(p, c)\n  y = ReduceSum<keepdims = 0>(s)\n"
      "  da, db, dc = ai.onnx.preview.training.Gradient<xs = [\"a\", \"b\", \"c\"],"
      " y = \"y\">(a, b, c)\n}\n");
  if (!m) return;
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -1, 2}, c[1] = {7};
  ox_value *ins[3] = {tensor(a, (int64_t[]){2, 3}, 2), tensor(b, (int64_t[]){3}, 1),
                      tensor(c, (int64_t[]){1}, 1)};
  const char *in_names[3] = {"a", "b", "c"}, *out_names[3] = {"da", "db", "dc"};
  ox_value *outs[3] = {0};
  if (!run(m, in_names, ins, 3, out_names, outs, 3)) {
    double da[6], db[3], dc[1] = {6};
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) da[i * 3 + j] = b[j];
    for (int j = 0; j < 3; j++) db[j] = (double)a[j] + a[3 + j];
    expect(outs[0], da, 6, "broadcast da");
    expect(outs[1], db, 3, "broadcast db");
    expect(outs[2], dc, 1, "broadcast dc");
  }
  for (int k = 0; k < 3; k++) ox_value_unref(ins[k]), ox_value_unref(outs[k]);
  ox_model_free(m);
}

/* y = mean(sigmoid(x W)), x [2,3], W [3,2]:
 * dy/dW[k][j] = 1/4 * sum_i x[i][k] s[i][j] (1 - s[i][j]). */
static void test_matmul_sigmoid_mean(void) {
  ox_model *m = parse(
      "g (float[2,3] x, float[3,2] w) => (float y, float[3,2] dw) {\n"
      "  z = MatMul(x, w)\n  s = Sigmoid(z)\n  y = ReduceMean<keepdims = 0>(s)\n"
      "  dw = ai.onnx.preview.training.Gradient<xs = [\"w\"], zs = [\"x\"], "
      "y = \"y\">(w, x)\n}\n");
  if (!m) return;
  const float x[6] = {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f};
  const float w[6] = {1, -1, 0.5f, 2, -0.25f, 0.75f};
  ox_value *ins[2] = {tensor(x, (int64_t[]){2, 3}, 2), tensor(w, (int64_t[]){3, 2}, 2)};
  const char *in_names[2] = {"x", "w"}, *out_names[1] = {"dw"};
  ox_value *outs[1] = {0};
  if (!run(m, in_names, ins, 2, out_names, outs, 1)) {
    double s[2][2], dw[6] = {0};
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) {
        double z = 0;
        for (int k = 0; k < 3; k++) z += (double)x[i * 3 + k] * w[k * 2 + j];
        s[i][j] = 1 / (1 + exp(-z));
      }
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) dw[k * 2 + j] += 0.25 * x[i * 3 + k] * s[i][j] * (1 - s[i][j]);
    expect(outs[0], dw, 6, "matmul/sigmoid/mean dw");
  }
  for (int k = 0; k < 2; k++) ox_value_unref(ins[k]);
  ox_value_unref(outs[0]);
  ox_model_free(m);
}

/* y = sum(tanh(Z)), Z = 2 A^T B^T + 0.5 C, A [3,2], B [2,3], C [1,2]; with
 * D = 1 - tanh(Z)^2: dA[k][m] = 2 sum_n D[m][n] B[n][k],
 * dB[n][k] = 2 sum_m D[m][n] A[k][m], dC[0][n] = 0.5 sum_m D[m][n]. */
static void test_gemm_tanh(void) {
  ox_model *m = parse(
      "g (float[3,2] a, float[2,3] b, float[1,2] c)\n"
      "  => (float[3,2] da, float[2,3] db, float[1,2] dc) {\n"
      "  z = Gemm<alpha = 2.0, beta = 0.5, transA = 1, transB = 1>(a, b, c)\n"
      "  t = Tanh(z)\n  y = ReduceSum<keepdims = 0>(t)\n"
      "  da, db, dc = ai.onnx.preview.training.Gradient<xs = [\"a\", \"b\", \"c\"],"
      " y = \"y\">(a, b, c)\n}\n");
  if (!m) return;
  const float a[6] = {0.1f, 0.2f, -0.3f, 0.4f, 0.05f, -0.15f};
  const float b[6] = {0.3f, -0.1f, 0.2f, 0.25f, 0.1f, -0.2f}, c[2] = {0.1f, -0.3f};
  ox_value *ins[3] = {tensor(a, (int64_t[]){3, 2}, 2), tensor(b, (int64_t[]){2, 3}, 2),
                      tensor(c, (int64_t[]){1, 2}, 2)};
  const char *in_names[3] = {"a", "b", "c"}, *out_names[3] = {"da", "db", "dc"};
  ox_value *outs[3] = {0};
  if (!run(m, in_names, ins, 3, out_names, outs, 3)) {
    double D[2][2], da[6] = {0}, db[6] = {0}, dc[2] = {0};
    for (int i = 0; i < 2; i++)
      for (int n = 0; n < 2; n++) {
        double z = 0.5 * c[n];
        for (int k = 0; k < 3; k++) z += 2.0 * a[k * 2 + i] * b[n * 3 + k];
        D[i][n] = 1 - tanh(z) * tanh(z);
      }
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 2; i++)
        for (int n = 0; n < 2; n++) {
          da[k * 2 + i] += 2 * D[i][n] * b[n * 3 + k];
          db[n * 3 + k] += 2 * D[i][n] * a[k * 2 + i];
        }
    for (int n = 0; n < 2; n++) dc[n] = 0.5 * (D[0][n] + D[1][n]);
    expect(outs[0], da, 6, "gemm da");
    expect(outs[1], db, 6, "gemm db");
    expect(outs[2], dc, 2, "gemm dc");
  }
  for (int k = 0; k < 3; k++) ox_value_unref(ins[k]), ox_value_unref(outs[k]);
  ox_model_free(m);
}

/* Three Gradient nodes on x [2,3]:
 *  y1 = sum(w * log(softmax(x))): d/dx[i][j] = w[i][j] - p[i][j] sum_k w[i][k];
 *  y2 = sum(x^3 / 2): d/dx = 1.5 x^2;
 *  y3 = sum(reshape(transpose(x), [6]) * v): d/dx[i][j] = v[j*2 + i]. */
static void test_softmax_pow_transpose(void) {
  ox_model *m = parse(
      "g (float[2,3] x, float[2,3] w, float[6] v)\n"
      "  => (float[2,3] d1, float[2,3] d2, float[2,3] d3) {\n"
      "  p = Softmax<axis = -1>(x)\n  l = Log(p)\n  lw = Mul(l, w)\n"
      "  y1 = ReduceSum<keepdims = 0>(lw)\n"
      "  three = Constant<value = float {3.0}>()\n"
      "  two = Constant<value = float {2.0}>()\n"
      "  cube = Pow(x, three)\n  half = Div(cube, two)\n"
      "  y2 = ReduceSum<keepdims = 0>(half)\n"
      "  t = Transpose<perm = [1, 0]>(x)\n"
      "  shape = Constant<value = int64[1] {6}>()\n  r = Reshape(t, shape)\n"
      "  rv = Mul(r, v)\n  y3 = ReduceSum<keepdims = 0>(rv)\n"
      "  d1 = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y1\">(x)\n"
      "  d2 = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y2\">(x)\n"
      "  d3 = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y3\">(x)\n"
      "}\n");
  if (!m) return;
  const float x[6] = {0.5f, -1, 2, 0.25f, 1.5f, -0.75f}, w[6] = {1, 2, 3, -1, 0.5f, 2};
  const float v[6] = {1, 2, 3, 4, 5, 6};
  ox_value *ins[3] = {tensor(x, (int64_t[]){2, 3}, 2), tensor(w, (int64_t[]){2, 3}, 2),
                      tensor(v, (int64_t[]){6}, 1)};
  const char *in_names[3] = {"x", "w", "v"}, *out_names[3] = {"d1", "d2", "d3"};
  ox_value *outs[3] = {0};
  if (!run(m, in_names, ins, 3, out_names, outs, 3)) {
    double d1[6], d2[6], d3[6];
    for (int i = 0; i < 2; i++) {
      double z = 0, ws = 0;
      for (int j = 0; j < 3; j++) z += exp(x[i * 3 + j]), ws += w[i * 3 + j];
      for (int j = 0; j < 3; j++) {
        int k = i * 3 + j;
        d1[k] = w[k] - exp(x[k]) / z * ws;
        d2[k] = 1.5 * x[k] * x[k];
        d3[k] = v[j * 2 + i];
      }
    }
    expect(outs[0], d1, 6, "softmax/log d1");
    expect(outs[1], d2, 6, "pow/div d2");
    expect(outs[2], d3, 6, "transpose/reshape d3");
  }
  for (int k = 0; k < 3; k++) ox_value_unref(ins[k]), ox_value_unref(outs[k]);
  ox_model_free(m);
}

/* MatMul with 1-D operands and with a broadcast batch, all summed:
 *  y1 = sum(v M), v [3], M [3,2]: dv[k] = sum_j M[k][j], dM[k][j] = v[k];
 *  y2 = sum(M^T v') with M^T [2,3] given as mt, v' = u [3]: dmt[i][k] = u[k],
 *       du[k] = sum_i mt[i][k];
 *  y3 = sum(A M), A [2,2,3]: dM[k][j] = sum_{b,i} A[b][i][k]. */
static void test_matmul_ranks(void) {
  ox_model *m = parse(
      "g (float[3] v, float[3,2] m, float[2,3] mt, float[3] u, float[2,2,3] a)\n"
      "  => (float[3] dv, float[3,2] dm, float[2,3] dmt, float[3] du, "
      "float[3,2] dm3) {\n"
      "  p1 = MatMul(v, m)\n  y1 = ReduceSum<keepdims = 0>(p1)\n"
      "  p2 = MatMul(mt, u)\n  y2 = ReduceSum<keepdims = 0>(p2)\n"
      "  p3 = MatMul(a, m)\n  y3 = ReduceSum<keepdims = 0>(p3)\n"
      "  dv, dm = ai.onnx.preview.training.Gradient<xs = [\"v\", \"m\"], "
      "y = \"y1\">(v, m)\n"
      "  dmt, du = ai.onnx.preview.training.Gradient<xs = [\"mt\", \"u\"], "
      "y = \"y2\">(mt, u)\n"
      "  dm3 = ai.onnx.preview.training.Gradient<xs = [\"m\"], y = \"y3\">(m)\n"
      "}\n");
  if (!m) return;
  const float v[3] = {1, -2, 3}, mm[6] = {0.5f, 1, -1, 2, 3, -0.5f};
  const float mt[6] = {1, 2, 3, 4, 5, 6}, u[3] = {-1, 0.5f, 2};
  float a[12];
  for (int i = 0; i < 12; i++) a[i] = (float)(i - 4) / 4.0f;
  ox_value *ins[5] = {tensor(v, (int64_t[]){3}, 1), tensor(mm, (int64_t[]){3, 2}, 2),
                      tensor(mt, (int64_t[]){2, 3}, 2), tensor(u, (int64_t[]){3}, 1),
                      tensor(a, (int64_t[]){2, 2, 3}, 3)};
  const char *in_names[5] = {"v", "m", "mt", "u", "a"};
  const char *out_names[5] = {"dv", "dm", "dmt", "du", "dm3"};
  ox_value *outs[5] = {0};
  if (!run(m, in_names, ins, 5, out_names, outs, 5)) {
    double dv[3], dm[6], dmt[6], du[3] = {0}, dm3[6] = {0};
    for (int k = 0; k < 3; k++) {
      dv[k] = (double)mm[k * 2] + mm[k * 2 + 1];
      for (int j = 0; j < 2; j++) {
        dm[k * 2 + j] = v[k];
        dmt[j * 3 + k] = u[k];
        du[k] += mt[j * 3 + k];
        for (int bi = 0; bi < 4; bi++) dm3[k * 2 + j] += a[bi * 3 + k];
      }
    }
    expect(outs[0], dv, 3, "1-D matmul dv");
    expect(outs[1], dm, 6, "1-D matmul dm");
    expect(outs[2], dmt, 6, "matmul 1-D rhs dmt");
    expect(outs[3], du, 3, "matmul 1-D rhs du");
    expect(outs[4], dm3, 6, "batched matmul dm");
  }
  for (int k = 0; k < 5; k++) ox_value_unref(ins[k]), ox_value_unref(outs[k]);
  ox_model_free(m);
}

/* y = sum(Where(c, LeakyRelu(x), Reciprocal(x)) + Expand(b, [2,2])), x [2,2],
 * b [1,2]: dx = c ? (x > 0 ? 1 : 0.1) : -1/x^2, db[j] = 2. */
static void test_where_expand(void) {
  ox_model *m = parse(
      "g (float[2,2] x, bool[2,2] c, float[1,2] b) => (float[2,2] dx, float[1,2] db) {\n"
      "  l = LeakyRelu<alpha = 0.1>(x)\n  r = Reciprocal(x)\n  w = Where(c, l, r)\n"
      "  shape = Constant<value = int64[2] {2, 2}>()\n  e = Expand(b, shape)\n"
      "  s = Add(w, e)\n  y = ReduceSum<keepdims = 0>(s)\n"
      "  dx, db = ai.onnx.preview.training.Gradient<xs = [\"x\", \"b\"], "
      "y = \"y\">(x, b)\n}\n");
  if (!m) return;
  const float x[4] = {2, -0.5f, -4, 0.25f}, b[2] = {1, 2};
  const uint8_t c[4] = {1, 1, 0, 0};
  ox_err e = {0};
  ox_value *cv = ox_tensor_new(OX_BOOL, (int64_t[]){2, 2}, 2, &e);
  if (!cv) abort();
  memcpy(cv->data, c, 4);
  ox_value *ins[3] = {tensor(x, (int64_t[]){2, 2}, 2), cv, tensor(b, (int64_t[]){1, 2}, 2)};
  const char *in_names[3] = {"x", "c", "b"}, *out_names[2] = {"dx", "db"};
  ox_value *outs[2] = {0};
  if (!run(m, in_names, ins, 3, out_names, outs, 2)) {
    double dx[4], db[2] = {2, 2};
    for (int i = 0; i < 4; i++)
      dx[i] = c[i] ? (x[i] > 0 ? 1.0 : 0.1) : -1.0 / ((double)x[i] * x[i]);
    expect(outs[0], dx, 4, "where/leakyrelu/reciprocal dx");
    expect(outs[1], db, 2, "expand db");
  }
  for (int k = 0; k < 3; k++) ox_value_unref(ins[k]);
  for (int k = 0; k < 2; k++) ox_value_unref(outs[k]);
  ox_model_free(m);
}

/* No rule for Atan; no gradient through Size (y = sum(x) / size as float
 * has dy/dx = 1/2 for x [2]); y not depending on a listed input gives zeros. */
static void test_gradient_errors(void) {
  ox_model *m = parse(
      "g (float[2] x) => (float[2] d) {\n  f = Atan(x)\n"
      "  y = ReduceSum<keepdims = 0>(f)\n"
      "  d = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y\">(x)\n}\n");
  if (m) {
    ox_session *s = NULL;
    ox_err e = {0};
    CHECK(ox_session_create(m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_EUNSUPPORTED);
    CHECK(strstr(e.msg, "Atan") && strstr(e.msg, "Gradient"));
    ox_session_free(s);
    ox_model_free(m);
  }
  m = parse(
      "g (float[2] x) => (float[2] d) {\n  s = ReduceSum<keepdims = 0>(x)\n"
      "  n = Size(x)\n  nf = Cast<to = 1>(n)\n  y = Div(s, nf)\n"
      "  d = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y\">(x)\n}\n");
  if (m) {
    const float x[2] = {1, 2};
    ox_value *in = tensor(x, (int64_t[]){2}, 1), *out = NULL;
    const char *in_name = "x", *out_name = "d";
    const double half[2] = {0.5, 0.5};
    if (!run(m, &in_name, &in, 1, &out_name, &out, 1)) expect(out, half, 2, "through Size");
    ox_value_unref(in);
    ox_value_unref(out);
    ox_model_free(m);
  }
  m = parse(
      "g (float[2] x, float[2] u) => (float[2] d) {\n  y = ReduceSum<keepdims = 0>(u)\n"
      "  d = ai.onnx.preview.training.Gradient<xs = [\"x\"], y = \"y\">(x)\n}\n");
  if (m) {
    const float x[2] = {1, 2}, u[2] = {3, 4};
    ox_value *ins[2] = {tensor(x, (int64_t[]){2}, 1), tensor(u, (int64_t[]){2}, 1)};
    const char *in_names[2] = {"x", "u"}, *out_names[1] = {"d"};
    ox_value *outs[1] = {0};
    const double zero[2] = {0, 0};
    if (!run(m, in_names, ins, 2, out_names, outs, 1)) expect(outs[0], zero, 2, "unrelated y");
    ox_value_unref(ins[0]);
    ox_value_unref(ins[1]);
    ox_value_unref(outs[0]);
    ox_model_free(m);
  }
}

/* A model y = sum(x * w), w = [1, 2], trained by Momentum (lr 0.1, alpha
 * 0.9, beta 0.5, T stays 0 so beta counts as 1): the gradient is x, so with
 * x = [3, 4]: v1 = [3, 4], w1 = [0.7, 1.6]; v2 = 0.9 v1 + x = [5.7, 7.6],
 * w2 = [0.13, 0.84]. The initialization graph sets w to [5, 5]. */
static ox_model *training_model(const char *init_bind_key, const char *update_val, bool dup) {
  ox_model *m = parse(
      "g (float[2] x) => (float y) <float[2] w = {1.0, 2.0}> {\n"
      "  p = Mul(x, w)\n  y = ReduceSum<keepdims = 0>(p)\n}\n");
  if (!m) return NULL;
  static const char *const algo =
      "algorithm () => (float[2] w_new, float[2] v_new)\n"
      "<float lr = {0.1}, int64 T = {0}, float[2] v = {0.0, 0.0}> {\n"
      "  g = ai.onnx.preview.training.Gradient<xs = [\"w\"], y = \"y\">(w)\n"
      "  w_new, v_new = ai.onnx.preview.training.Momentum<alpha = 0.9, beta = 0.5, "
      "mode = \"standard\", norm_coefficient = 0.0>(lr, T, w, g, v)\n}\n";
  static const char *const init =
      "init () => (float[2] w0) {\n  w0 = Constant<value = float[2] {5.0, 5.0}>()\n}\n";
  ox_err e = {0};
  ox_model_proto *p = m->proto;
  ox_training_info *ti = OX_VEC_PUSH(m->arena, p->training_info, p->n_training_info);
  ox_str_pair *b;
  if (!ti || ox_text_parse_graph(algo, strlen(algo), "algo", m->arena, &ti->algorithm, &e) ||
      ox_text_parse_graph(init, strlen(init), "init", m->arena, &ti->initialization, &e)) {
    fprintf(stderr, "training model: %s\n", e.msg);
    failures++;
    ox_model_free(m);
    return NULL;
  }
  const char *keys[3] = {"w", "v", dup ? "w" : NULL}, *vals[3] = {update_val, "v_new", "v_new"};
  for (int k = 0; k < 3 && keys[k]; k++) {
    if (!(b = OX_VEC_PUSH(m->arena, ti->update_binding, ti->n_update_binding))) abort();
    b->key = (char *)keys[k];
    b->value = (char *)vals[k];
  }
  if (!(b = OX_VEC_PUSH(m->arena, ti->initialization_binding, ti->n_initialization_binding)))
    abort();
  b->key = (char *)init_bind_key;
  b->value = "w0";
  return m;
}

static void test_training_api(void) {
  ox_model *m = training_model("w", "w_new", false);
  if (!m) return;
  onnxc_training *t = NULL;
  onnxc_error err = {0};
  CHECK(onnxc_training_create((onnxc_model *)m, NULL, &t, &err) == ONNXC_OK);
  if (!t) {
    fprintf(stderr, "%s\n", err.msg);
    ox_model_free(m);
    return;
  }
  const float x[2] = {3, 4};
  onnxc_value *in = (onnxc_value *)tensor(x, (int64_t[]){2}, 1), *out[2] = {0};
  const char *in_name = "x", *out_names[2] = {"y", "v_new"};
  CHECK(onnxc_training_step(t, 0, &in_name, &in, 1, out_names, out, 2, &err) == ONNXC_OK);
  const double y0[1] = {11}, v1[2] = {3, 4}, w1[2] = {0.7, 1.6}, w2[2] = {0.13, 0.84},
               v2[2] = {5.7, 7.6}, w5[2] = {5, 5};
  expect((ox_value *)out[0], y0, 1, "step 1 loss");
  expect((ox_value *)out[1], v1, 2, "step 1 v");
  onnxc_value_free(out[0]);
  onnxc_value_free(out[1]);
  const ox_training *ot = (const ox_training *)t;
  CHECK(ox_training_n_state(ot) == 2);
  expect(ox_training_state_value(ot, 0), w1, 2, "step 1 w");
  CHECK(onnxc_training_step(t, 0, &in_name, &in, 1, NULL, NULL, 0, &err) == ONNXC_OK);
  expect(ox_training_state_value(ot, 0), w2, 2, "step 2 w");
  expect(ox_training_state_value(ot, 1), v2, 2, "step 2 v");
  /* written back into the model's initializers */
  CHECK(onnxc_model_update_initializers((onnxc_model *)m, t, &err) == ONNXC_OK);
  ox_err e = {0};
  ox_value *wv = ox_value_from_tensor_proto(&m->proto->graph->initializer[0], false, &e);
  expect(wv, w2, 2, "saved w");
  ox_value_unref(wv);
  wv = ox_value_from_tensor_proto(&m->proto->training_info[0].algorithm->initializer[2], false, &e);
  expect(wv, v2, 2, "saved v");
  ox_value_unref(wv);
  CHECK(onnxc_training_init(t, &err) == ONNXC_OK);
  expect(ox_training_state_value(ot, 0), w5, 2, "initialized w");
  CHECK(onnxc_training_step(t, 1, &in_name, &in, 1, NULL, NULL, 0, &err) == ONNXC_ERR_INVALID_ARG);
  onnxc_value_free(in);
  onnxc_training_free(t);
  ox_model_free(m);
}

static void test_binding_rules(void) {
  struct {
    const char *init_key, *update_val;
    bool dup;
    const char *msg;
  } cases[] = {
      {"nope", "w_new", false, "key 'nope' is not an initializer"},
      {"w", "p", false, "value 'p' is not an output of the algorithm graph"},
      {"w", "w_new", true, "key 'w' repeats entry 0"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    ox_model *m = training_model(cases[k].init_key, cases[k].update_val, cases[k].dup);
    if (!m) continue;
    ox_err e = {0};
    CHECK(ox_training_check(m, &e) == OX_EMODEL);
    if (!strstr(e.msg, cases[k].msg)) {
      fprintf(stderr, "binding case %zu: message '%s'\n", k, e.msg);
      failures++;
    }
    ox_model_free(m);
  }
}

int main(void) {
  test_broadcast();
  test_matmul_sigmoid_mean();
  test_gemm_tanh();
  test_softmax_pow_transpose();
  test_matmul_ranks();
  test_where_expand();
  test_gradient_errors();
  test_training_api();
  test_binding_rules();
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  printf("test_training: all passed\n");
  return 0;
}
