/* test_opscore.c - semantics of old operator versions that the conformance
 * data (mostly latest opsets) does not reach: the opset < 7 `broadcast` /
 * `axis` attributes, Softmax's 2-D coercion before opset 13, Cast-1's string
 * `to`, Clip-6 attributes, PRelu-6 per-channel slope, ReduceSum-13
 * noop_with_empty_axes, ArgMax-12 select_last_index, Gemm-6. Expected values
 * follow the operator descriptions in Changelog.md. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "onnxc.h"
#include "ops/opcore.h"

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* Runs a one-output text model on float inputs named in order; returns the
 * output (caller frees) or NULL. */
static onnxc_value *run(const char *text, size_t n_in, const char *const *names,
                        onnxc_value *const *inputs) {
  onnxc_error err = {0};
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_value *out = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "test", &m, &err) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", err.msg);
    return NULL;
  }
  onnxc_session_options o = {0};
  o.threads = 1;
  if (onnxc_session_create(m, &o, &s, &err) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", err.msg);
  } else if (onnxc_session_run(s, names, inputs, n_in, NULL, &out, 1, &err) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", err.msg);
    out = NULL;
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  return out;
}

static bool near(float a, float b) { return fabsf(a - b) <= 1e-5f + 1e-5f * fabsf(b); }

static void test_add_legacy_axis(void) {
  /* Add-6: "shape(A) = (2, 3, 4, 5), shape(B) = (3,), with axis=1" -> B
   * runs along dimension 1 */
  static float a[120], b[3] = {100, 200, 300};
  for (int i = 0; i < 120; i++) a[i] = (float)i;
  int64_t da[4] = {2, 3, 4, 5}, db[1] = {3};
  onnxc_value *in[2] = {onnxc_tensor_wrap(1, da, 4, a, NULL), onnxc_tensor_wrap(1, db, 1, b, NULL)};
  const char *names[2] = {"A", "B"};
  onnxc_value *y =
      run("<ir_version: 3, opset_import: [\"\" : 6]>\n"
          "g (float[2,3,4,5] A, float[3] B) => (float[2,3,4,5] C) {\n"
          "  C = Add<broadcast=1, axis=1>(A, B)\n}\n",
          2, names, in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 120; i++) CHECK(c[i] == (float)i + b[(i / 20) % 3]);
    onnxc_value_free(y);
  }
  /* without axis, B is matched to the trailing dimensions: (4, 5) */
  static float b2[20];
  for (int i = 0; i < 20; i++) b2[i] = (float)(1000 * i);
  int64_t db2[2] = {4, 5};
  onnxc_value *in2[2] = {in[0], onnxc_tensor_wrap(1, db2, 2, b2, NULL)};
  y =
      run("<ir_version: 3, opset_import: [\"\" : 6]>\n"
          "g (float[2,3,4,5] A, float[4,5] B) => (float[2,3,4,5] C) {\n"
          "  C = Sub<broadcast=1>(A, B)\n}\n",
          2, names, in2);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 120; i++) CHECK(c[i] == (float)i - b2[i % 20]);
    onnxc_value_free(y);
  }
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  onnxc_value_free(in2[1]);
}

/* QuantizeLinear and DequantizeLinear on float32 with 8-bit types (the
 * vectorised paths) against a double-precision reference written here:
 * ties to even, saturation, NaN and infinities, per tensor and per axis
 * (inner runs of 20, over two threads' worth of chunks not needed) */
static double q_ref(float x, float s, int zp, int lo, int hi) {
  double q = (double)(float)((double)x / (double)s);
  if (q != q) return 0;
  double r = nearbyint(q) + zp;
  return r < lo ? lo : r > hi ? hi : r;
}

static void test_quantize_8bit(void) {
  enum { C = 3, IN = 20, N = C * IN };
  static float x[N];
  const float sc[C] = {0.5f, 0.1f, 3.0f};
  for (int i = 0; i < N; i++) x[i] = (float)(i - 30) * 0.25f * sc[i / IN]; /* ties at odd i */
  x[1] = NAN, x[2] = INFINITY, x[3] = -INFINITY, x[4] = 1e30f, x[5] = -1e30f, x[6] = -0.0f;
  const char *names[1] = {"X"};
  int64_t d[2] = {C, IN};
  onnxc_value *in = onnxc_tensor_wrap(1, d, 2, x, NULL);
  for (int is_signed = 0; is_signed < 2; is_signed++)
    for (int per_axis = 0; per_axis < 2; per_axis++) {
      const char *ty = is_signed ? "int8" : "uint8";
      int zp[C] = {is_signed ? -3 : 128, is_signed ? 5 : 7, is_signed ? 0 : 250};
      char text[1024];
      if (per_axis)
        snprintf(
            text, sizeof text,
            "<ir_version: 8, opset_import: [\"\" : 19]>\n"
            "g (float[3,20] X) => (%s[3,20] Q, float[3,20] D)\n"
            "<float[3] s = {0.5, 0.1, 3.0}, %s[3] z = {%d, %d, %d}> {\n"
            "  Q = QuantizeLinear<axis=0>(X, s, z)\n D = DequantizeLinear<axis=0>(Q, s, z)\n}\n",
            ty, ty, zp[0], zp[1], zp[2]);
      else
        snprintf(text, sizeof text,
                 "<ir_version: 8, opset_import: [\"\" : 19]>\n"
                 "g (float[3,20] X) => (%s[3,20] Q, float[3,20] D)\n"
                 "<float s = {0.5}, %s z = {%d}> {\n"
                 "  Q = QuantizeLinear(X, s, z)\n D = DequantizeLinear(Q, s, z)\n}\n",
                 ty, ty, zp[0]);
      onnxc_model *m = NULL;
      onnxc_session *ss = NULL;
      onnxc_error e;
      CHECK(onnxc_model_parse_text(text, strlen(text), "q", &m, &e) == ONNXC_OK);
      CHECK(m && onnxc_session_create(m, NULL, &ss, &e) == ONNXC_OK);
      onnxc_value *out[2] = {NULL, NULL};
      CHECK(ss && onnxc_session_run(ss, names, &in, 1, NULL, out, 2, &e) == ONNXC_OK);
      if (out[0] && out[1]) {
        const uint8_t *qu = onnxc_tensor_data(out[0]);
        const int8_t *qs = onnxc_tensor_data(out[0]);
        const float *dq = onnxc_tensor_data(out[1]);
        int bad = 0;
        for (int i = 0; i < N; i++) {
          int c = per_axis ? i / IN : 0;
          double want = q_ref(x[i], sc[c], zp[c], is_signed ? -128 : 0, is_signed ? 127 : 255);
          int got = is_signed ? qs[i] : qu[i];
          float back = (float)(((double)got - zp[c]) * sc[c]);
          if (got != (int)want || dq[i] != back) bad++;
        }
        CHECK(bad == 0);
      }
      onnxc_value_free(out[0]);
      onnxc_value_free(out[1]);
      onnxc_session_free(ss);
      onnxc_model_free(m);
    }
  onnxc_value_free(in);
}

static void test_softmax_coercion(void) {
  /* Softmax-11: the input is coerced to 2-D [a_0, a_1*...*a_k] at axis=1, so
   * a [2,2,2] input of equal values gives 1/4 everywhere; Softmax-13 with
   * axis=1 works along that axis only and gives 1/2. */
  static float x[8] = {1, 1, 1, 1, 5, 5, 5, 5};
  int64_t d[3] = {2, 2, 2};
  onnxc_value *in = onnxc_tensor_wrap(1, d, 3, x, NULL);
  const char *names[1] = {"X"};
  onnxc_value *y =
      run("<ir_version: 6, opset_import: [\"\" : 11]>\n"
          "g (float[2,2,2] X) => (float[2,2,2] Y) { Y = Softmax<axis=1>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 8; i++) CHECK(near(c[i], 0.25f));
    onnxc_value_free(y);
  }
  y =
      run("<ir_version: 7, opset_import: [\"\" : 13]>\n"
          "g (float[2,2,2] X) => (float[2,2,2] Y) { Y = Softmax<axis=1>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 8; i++) CHECK(near(c[i], 0.5f));
    onnxc_value_free(y);
  }
  /* Hardmax-11 over the coerced row: one 1 per batch, at the first maximum */
  static float h[8] = {1, 3, 3, 0, 2, 2, 2, 2};
  onnxc_value *hin = onnxc_tensor_wrap(1, d, 3, h, NULL);
  y =
      run("<ir_version: 6, opset_import: [\"\" : 11]>\n"
          "g (float[2,2,2] X) => (float[2,2,2] Y) { Y = Hardmax<axis=1>(X) }\n",
          1, names, &hin);
  CHECK(y != NULL);
  if (y) {
    static const float want[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 8; i++) CHECK(c[i] == want[i]);
    onnxc_value_free(y);
  }
  onnxc_value_free(in);
  onnxc_value_free(hin);
}

static void test_cast1_clip6_prelu6(void) {
  static float x[4] = {1.0f, -2.0f, 0.5f, 65504.0f};
  int64_t d[1] = {4};
  onnxc_value *in = onnxc_tensor_wrap(1, d, 1, x, NULL);
  const char *names[1] = {"X"};
  /* Cast-1 names the target type with a string */
  onnxc_value *y =
      run("<ir_version: 3, opset_import: [\"\" : 1]>\n"
          "g (float[4] X) => (float16[4] Y) { Y = Cast<to=\"FLOAT16\">(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const uint16_t *c = onnxc_tensor_data(y);
    CHECK(onnxc_tensor_dtype(y) == 10);
    CHECK(c[0] == 0x3c00 && c[1] == 0xc000 && c[2] == 0x3800 && c[3] == 0x7bff);
    onnxc_value_free(y);
  }
  /* Clip-6: bounds are attributes */
  y =
      run("<ir_version: 3, opset_import: [\"\" : 6]>\n"
          "g (float[4] X) => (float[4] Y) { Y = Clip<min=-1.0, max=0.75>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    CHECK(c[0] == 0.75f && c[1] == -1.0f && c[2] == 0.5f && c[3] == 0.75f);
    onnxc_value_free(y);
  }
  onnxc_value_free(in);
  /* PRelu-6 with one slope per channel (dimension 1) */
  static float px[8] = {-1, -2, -3, -4, -1, -2, 5, 6}, slope[2] = {0.5f, 2.0f};
  int64_t dx[3] = {1, 2, 4}, ds[1] = {2};
  onnxc_value *pin[2] = {onnxc_tensor_wrap(1, dx, 3, px, NULL),
                         onnxc_tensor_wrap(1, ds, 1, slope, NULL)};
  const char *pn[2] = {"X", "S"};
  y =
      run("<ir_version: 3, opset_import: [\"\" : 6]>\n"
          "g (float[1,2,4] X, float[2] S) => (float[1,2,4] Y) { Y = PRelu(X, S) }\n",
          2, pn, pin);
  CHECK(y != NULL);
  if (y) {
    static const float want[8] = {-0.5f, -1, -1.5f, -2, -2, -4, 5, 6};
    const float *c = onnxc_tensor_data(y);
    for (int i = 0; i < 8; i++) CHECK(c[i] == want[i]);
    onnxc_value_free(y);
  }
  onnxc_value_free(pin[0]);
  onnxc_value_free(pin[1]);
}

static void test_reduce_arg_gemm(void) {
  static float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t d[2] = {2, 3};
  onnxc_value *in = onnxc_tensor_wrap(1, d, 2, x, NULL);
  const char *names[1] = {"X"};
  /* ReduceSum-13 with no axes and noop_with_empty_axes=1: the input as is */
  onnxc_value *y =
      run("<ir_version: 7, opset_import: [\"\" : 13]>\n"
          "g (float[2,3] X) => (float[2,3] Y) {\n"
          "  Y = ReduceSum<noop_with_empty_axes=1>(X)\n}\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    CHECK(onnxc_tensor_rank(y) == 2);
    for (int i = 0; i < 6; i++) CHECK(c[i] == x[i]);
    onnxc_value_free(y);
  }
  /* ReduceSum-11: axes attribute, negative allowed, keepdims=0 */
  y =
      run("<ir_version: 6, opset_import: [\"\" : 11]>\n"
          "g (float[2,3] X) => (float[2] Y) { Y = ReduceSum<axes=[-1], keepdims=0>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    CHECK(onnxc_tensor_rank(y) == 1 && c[0] == 6 && c[1] == 15);
    onnxc_value_free(y);
  }
  /* Gemm-6 with broadcast=1 and a scalar C: Y = alpha*A*B' + beta*C */
  static float b[6] = {1, 0, 0, 0, 1, 0};
  static float cval[1] = {10};
  int64_t db[2] = {2, 3}, dc[1] = {1};
  onnxc_value *gin[3] = {in, onnxc_tensor_wrap(1, db, 2, b, NULL),
                         onnxc_tensor_wrap(1, dc, 1, cval, NULL)};
  const char *gn[3] = {"A", "B", "C"};
  y =
      run("<ir_version: 3, opset_import: [\"\" : 6]>\n"
          "g (float[2,3] A, float[2,3] B, float[1] C) => (float[2,2] Y) {\n"
          "  Y = Gemm<transB=1, broadcast=1, alpha=2.0, beta=0.5>(A, B, C)\n}\n",
          3, gn, gin);
  CHECK(y != NULL);
  if (y) {
    /* A*B' = [[1,2],[4,5]] */
    const float *c = onnxc_tensor_data(y);
    CHECK(c[0] == 7 && c[1] == 9 && c[2] == 13 && c[3] == 15);
    onnxc_value_free(y);
  }
  onnxc_value_free(gin[1]);
  onnxc_value_free(gin[2]);
  onnxc_value_free(in);
  /* ArgMax-12 select_last_index picks the last of equal maxima */
  static int32_t v[5] = {3, 7, 1, 7, 2};
  int64_t dv[1] = {5};
  onnxc_value *vin = onnxc_tensor_wrap(6, dv, 1, v, NULL);
  y =
      run("<ir_version: 7, opset_import: [\"\" : 12]>\n"
          "g (int32[5] X) => (int64[1] Y) { Y = ArgMax<select_last_index=1>(X) }\n",
          1, names, &vin);
  CHECK(y != NULL);
  if (y) {
    CHECK(((const int64_t *)onnxc_tensor_data(y))[0] == 3);
    onnxc_value_free(y);
  }
  onnxc_value_free(vin);
}

/* the vectorisable exponential against the C library's double exp */
static void test_exp_accuracy(void) {
  enum { N = 200001 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -87.0f + 175.5f * (float)i / (float)(N - 1);
  oc_exp_f32(x, y, N);
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double ref = exp((double)x[i]);
    double rel = fabs((double)y[i] - ref) / ref;
    if (rel > worst) worst = rel;
  }
  CHECK(worst < 3e-7); /* a few float32 ulps */
  float sp[6] = {NAN, INFINITY, -INFINITY, 0.0f, 100.0f, -200.0f}, sy[6];
  oc_exp_f32(sp, sy, 6);
  CHECK(isnan(sy[0]) && isinf(sy[1]) && sy[2] == 0.0f && sy[3] == 1.0f && isinf(sy[4]) &&
        sy[5] == 0.0f);
}

/* the vectorised erf against libm's double erf over [-6, 6] (both forms
 * and the switch between them at |x| = 0.5), relative error near 0 too */
static void test_erf_accuracy(void) {
  enum { N = 240001 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -6.0f + 12.0f * (float)i / (float)(N - 1);
  oc_erf_f32(x, y, N);
  double worst_abs = 0, worst_rel = 0;
  for (int i = 0; i < N; i++) {
    double ref = erf((double)x[i]), d = fabs((double)y[i] - ref);
    if (d > worst_abs) worst_abs = d;
    if (ref != 0 && d / fabs(ref) > worst_rel) worst_rel = d / fabs(ref);
  }
  CHECK(worst_abs < 4e-7);
  CHECK(worst_rel < 1e-6);
  float sp[6] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-30f, 100.0f}, sy[6];
  oc_erf_f32(sp, sy, 6);
  CHECK(isnan(sy[0]) && sy[1] == 1.0f && sy[2] == -1.0f && sy[3] == 0.0f && signbit(sy[3]) &&
        fabs(sy[4] - 1.1283791671e-30) < 1e-36 && sy[5] == 1.0f);
}

/* softmax's exponential and denominator in one pass: the same values and
 * the same double sum as oc_exp_shift_f32 then oc_row_sum_f32, for every
 * length up to 70 (vector tails, the half step of 8) and a long row */
static void test_exp_sum_pass(void) {
  static float x[1000], y1[1000], y2[1000];
  for (int i = 0; i < 1000; i++) x[i] = (float)((i * 37) % 101) * 0.31f - 20.0f;
  x[3] = -INFINITY;
  x[17] = -200.0f;
  int64_t lens[] = {1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 70, 128, 1000};
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
    int64_t n = lens[l];
    double s = oc_exp_shift_sum_f32(x, 11.5f, y1, n);
    oc_exp_shift_f32(x, 11.5f, y2, n);
    CHECK(memcmp(y1, y2, (size_t)n * sizeof *y1) == 0);
    double ref = oc_row_sum_f32(y2, n);
    CHECK(memcmp(&s, &ref, sizeof s) == 0);
    /* and against the sum in long double: a few ulps of a double */
    long double exact = 0;
    for (int64_t i = 0; i < n; i++) exact += y2[i];
    CHECK(fabsl((long double)s - exact) <= 1e-13L * exact);
  }
  /* NaN in a row: the sum is NaN */
  float nx[20];
  for (int i = 0; i < 20; i++) nx[i] = (float)i;
  nx[12] = NAN;
  CHECK(isnan(oc_exp_shift_sum_f32(nx, 0.0f, y1, 20)) && isnan(y1[12]));
}

/* GELU's fused loop: bit for bit the unfused steps (x / c0 or x * c0, Erf,
 * + c1, * x, * c2) over values spanning both erf forms, with NaN, inf and
 * -0, vector tails, in place */
static void test_gelu_loop(void) {
  enum { N = 1037 };
  static float x[N], y[N], t[N], r[N];
  for (int i = 0; i < N; i++) x[i] = -9.0f + 18.0f * (float)i / (float)(N - 1);
  x[5] = NAN;
  x[6] = INFINITY;
  x[7] = -INFINITY;
  x[8] = -0.0f;
  x[9] = 1e-30f;
  for (int form = 0; form < 2; form++) {
    oc_gelu_erf g = {form ? 0.70710678f : 1.4142135f, 1.0f, 0.5f, form == 1};
    for (int64_t n = N; n >= N - 16; n -= 5) {
      oc_gelu_erf_f32(x, y, n, &g);
      for (int64_t i = 0; i < n; i++) t[i] = g.mul_first ? x[i] * g.c0 : x[i] / g.c0;
      oc_erf_f32(t, t, n);
      for (int64_t i = 0; i < n; i++) r[i] = (x[i] * (t[i] + g.c1)) * g.c2;
      CHECK(memcmp(y, r, (size_t)n * sizeof *y) == 0);
    }
    memcpy(y, x, sizeof y);
    oc_gelu_erf_f32(y, y, N, &g);
    CHECK(memcmp(y, r, sizeof y) == 0);
  }
  /* the values themselves: GELU(1) = 0.841344746, GELU(-inf) NaN (-inf * 0) */
  CHECK(fabsf(r[0] - (float)(-9.0 * 0.5 * erfc(9.0 / sqrt(2.0)))) < 1e-6f);
  oc_gelu_erf g = {1.4142135f, 1.0f, 0.5f, false};
  float one = 1.0f, g1;
  oc_gelu_erf_f32(&one, &g1, 1, &g);
  CHECK(fabsf(g1 - 0.841344746f) < 1e-6f);
}

/* SiLU as a convolution's epilogue (ox_sgemm_epi_apply, the row path of
 * every kernel) and as vexp.h's scalar: the bits of Sigmoid then Mul, NaN,
 * infinities, -0, the exponential's limits and denormals included */
static void test_silu_epilogue(void) {
  enum { N = 1043 };
  static float x[N], y[N], r[N];
  for (int i = 0; i < N; i++) x[i] = -100.0f + 200.0f * (float)i / (float)(N - 1);
  const float special[] = {NAN,    -NAN,    INFINITY, -INFINITY, -0.0f,  0.0f,   1e-40f, -1e-40f,
                           87.33f, -87.33f, -87.34f,  88.72f,    88.73f, -1e30f, 1e30f};
  memcpy(x + 3, special, sizeof special);
  for (int64_t n = N; n >= N - 20; n -= 7) {
    oc_sigmoid_f32(x, r, n, 1.0f, false);
    for (int64_t i = 0; i < n; i++) r[i] = x[i] * r[i];
    memcpy(y, x, (size_t)n * sizeof *y);
    ox_sgemm_epi ep = {.act = OX_ACT_SILU};
    ox_sgemm_epi_apply(&ep, 1, n, y, n);
    /* (a NaN's sign follows the operand order a compiler picks for the
     * product: NaN for NaN) */
    bool same = true;
    for (int64_t i = 0; i < n; i++)
      same = same && (isnan(r[i]) ? isnan(y[i]) : memcmp(&y[i], &r[i], sizeof *y) == 0);
    CHECK(same);
  }
  /* the values: silu(1) = 1 / (1 + e^-1), silu(-inf) NaN (-inf * 0) */
  float v[3] = {1.0f, -INFINITY, INFINITY};
  ox_sgemm_epi ep = {.act = OX_ACT_SILU};
  ox_sgemm_epi_apply(&ep, 1, 3, v, 3);
  CHECK(fabsf(v[0] - 0.731058579f) < 1e-7f && isnan(v[1]) && v[2] == INFINITY);
}

/* numpy semantics: maximum/minimum propagate NaN from either side (checked
 * over more than one vector width) */
static void test_max_nan(void) {
  static float a[9] = {NAN, 1, 2, 3, 4, NAN, -1, 0, 5}, b[9] = {0, NAN, 3, 1, 4, 2, NAN, -0.5f, 6};
  int64_t d[1] = {9};
  onnxc_value *in[2] = {onnxc_tensor_wrap(1, d, 1, a, NULL), onnxc_tensor_wrap(1, d, 1, b, NULL)};
  const char *names[2] = {"A", "B"};
  onnxc_value *y =
      run("<ir_version: 7, opset_import: [\"\" : 13]>\n"
          "g (float[9] A, float[9] B) => (float[9] C) { C = Max(A, B) }\n",
          2, names, in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    CHECK(isnan(c[0]) && isnan(c[1]) && c[2] == 3 && c[3] == 3 && c[4] == 4 && isnan(c[5]) &&
          isnan(c[6]) && c[7] == 0 && c[8] == 6);
    onnxc_value_free(y);
  }
  y =
      run("<ir_version: 7, opset_import: [\"\" : 13]>\n"
          "g (float[9] A, float[9] B) => (float[9] C) { C = Min(A, B) }\n",
          2, names, in);
  CHECK(y != NULL);
  if (y) {
    const float *c = onnxc_tensor_data(y);
    CHECK(isnan(c[0]) && isnan(c[1]) && c[2] == 2 && c[3] == 1 && c[4] == 4 && isnan(c[5]) &&
          isnan(c[6]) && c[7] == -0.5f && c[8] == 5);
    onnxc_value_free(y);
  }
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
}

/* integer reductions are exact beyond 2^53 */
static void test_reduce_int64_exact(void) {
  static int64_t v[2] = {(INT64_C(1) << 60) + 1, (INT64_C(1) << 60) + 3};
  int64_t d[1] = {2};
  onnxc_value *in = onnxc_tensor_wrap(7, d, 1, v, NULL);
  const char *names[1] = {"X"};
  onnxc_value *y =
      run("<ir_version: 8, opset_import: [\"\" : 18]>\n"
          "g (int64[2] X) => (int64[1] Y) { Y = ReduceSum<keepdims=1>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    CHECK(((const int64_t *)onnxc_tensor_data(y))[0] == (INT64_C(1) << 61) + 4);
    onnxc_value_free(y);
  }
  y =
      run("<ir_version: 8, opset_import: [\"\" : 18]>\n"
          "g (int64[2] X) => (int64[1] Y) { Y = ReduceMin<keepdims=1>(X) }\n",
          1, names, &in);
  CHECK(y != NULL);
  if (y) {
    CHECK(((const int64_t *)onnxc_tensor_data(y))[0] == (INT64_C(1) << 60) + 1);
    onnxc_value_free(y);
  }
  onnxc_value_free(in);
}

int main(void) {
  test_reduce_int64_exact();
  test_max_nan();
  test_exp_accuracy();
  test_erf_accuracy();
  test_exp_sum_pass();
  test_gelu_loop();
  test_silu_epilogue();
  test_quantize_8bit();
  test_add_legacy_axis();
  test_softmax_coercion();
  test_cast1_clip6_prelu6();
  test_reduce_arg_gemm();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("opscore ok\n");
  return 0;
}
