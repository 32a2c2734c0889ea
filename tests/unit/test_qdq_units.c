/* test_qdq_units.c - the other quantized units the session fuses, through
 * the public API: QDQ activations (a 256-entry table, src/opt/qdq_eltwise.c),
 * QDQ additions (with broadcasting and a following Relu) and dynamically
 * quantized matrix products (src/opt/dyn_matmul.c). Each text model runs as
 * written (no_quant_fusion) and fused, on one and two threads; the node
 * count from the profile shows the fusion happened. The tables and the
 * dynamic product compute what the float nodes compute, so they must give
 * the same bytes; the addition folds its scales and may differ by one
 * quantum on a few values. Units that do not match (a per-channel scale, a
 * product read twice) keep their nodes and their bytes. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct outcome {
  uint8_t *y;
  size_t bytes;
  int32_t dtype;
  size_t nodes;
  bool ok;
} outcome;

/* X: dtype xt (1 float, 2 uint8, 3 int8), dims xd; output Y */
static outcome run(const char *name, const char *text, int32_t xt, const int64_t *xd, size_t xr,
                   bool fuse, int threads) {
  outcome r = {0};
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *s = open_text_session(name, text, fuse, threads, &m);
  if (!s) return r;
  int64_t n = 1;
  for (size_t d = 0; d < xr; d++) n *= xd[d];
  size_t esize = xt == 1 ? 4 : 1;
  uint8_t *x = malloc((size_t)n * esize + 1);
  uint32_t st = 31;
  for (int64_t i = 0; i < n; i++) {
    st = st * 1664525u + 1013904223u;
    if (xt == 1)
      ((float *)x)[i] = ((float)(st >> 8) / 16777216.0f - 0.5f) * 6.0f;
    else
      x[i] = (uint8_t)(st >> 24);
  }
  onnxc_value *in = onnxc_tensor_wrap(xt, xd, xr, x, &e);
  const char *names[1] = {"X"}, *outs[1] = {"Y"};
  onnxc_value *out = NULL;
  if (onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: run: %s\n", name, e.msg);
  } else {
    r.bytes = onnxc_tensor_nbytes(out);
    r.dtype = onnxc_tensor_dtype(out);
    r.y = malloc(r.bytes + 1);
    memcpy(r.y, onnxc_tensor_data(out), r.bytes);
    r.nodes = profiled_nodes(s);
    r.ok = true;
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  free(x);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return r;
}

/* exact: same bytes required; else 8-bit outputs within one quantum on at
 * most 1% of the values. fused_nodes 0: the fusion must not happen. */
static void check(const char *name, const char *text, int32_t xt, const int64_t *xd, size_t xr,
                  bool exact, size_t fused_nodes) {
  outcome a = run(name, text, xt, xd, xr, false, 1);
  CHECK(a.ok);
  for (int threads = 1; threads <= 2 && a.ok; threads++) {
    outcome b = run(name, text, xt, xd, xr, true, threads);
    CHECK(b.ok && b.bytes == a.bytes && b.dtype == a.dtype);
    if (b.ok && b.bytes == a.bytes) {
      size_t off = 0, worse = 0;
      for (size_t i = 0; i < a.bytes; i++) {
        if (a.y[i] == b.y[i]) continue;
        int d = a.dtype == 3 ? (int8_t)a.y[i] - (int8_t)b.y[i] : a.y[i] - b.y[i];
        if (exact || a.dtype == 1 || (d != 1 && d != -1))
          worse++;
        else
          off++;
      }
      if (worse || off > 1 + a.bytes / 100) {
        fprintf(stderr, "%s (%d threads): %zu values off by one, %zu worse\n", name, threads, off,
                worse);
        fails++;
      }
      size_t want = fused_nodes ? fused_nodes : a.nodes;
      if (b.nodes != want)
        fprintf(stderr, "%s: %zu nodes fused, %zu as written, %zu expected\n", name, b.nodes,
                a.nodes, want);
      CHECK(b.nodes == want);
    }
    free(b.y);
  }
  free(a.y);
}

#define HEAD "<ir_version: 8, opset_import: [\"\" : 14]>\n"

/* QuantizeLinear's fast path divides by the scale through its reciprocal
 * and one exact correction: every float of the binade [1, 2) (and its
 * negatives, a zero and an inf among them) against the division, rounded
 * half to even, for scales that put thousands of rounding boundaries in
 * it; the reciprocal's bound (a scale of 2^-41) divides outright. */
static void quantize_binade(void) {
  enum { N = 1 << 23 };
  float *x = malloc((size_t)N * sizeof *x);
  uint8_t *want = malloc(N);
  CHECK(x && want);
  if (!x || !want) return;
  static const float scales[] = {2.0f / 255.0f, 0.0137f, 1.0f / 3.0f, 0.0039215689f, 0x1p-41f};
  for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
    float sc = scales[k];
    char text[512];
    snprintf(text, sizeof text,
             HEAD
             "q (float[%d] X) => (int8[%d] Y)\n<float s = {%.9g}, int8 z = {3}>\n"
             "{ Y = QuantizeLinear (X, s, z) }\n",
             N, N, (double)sc);
    for (uint32_t i = 0; i < N; i++) {
      uint32_t bits = 0x3F800000u + i;
      memcpy(&x[i], &bits, sizeof bits);
      if (i % 2) x[i] = -x[i];
      if (k == 4) x[i] *= 0x1p-36f; /* quotients of about 32 */
    }
    x[12] = 0.0f;
    x[13] = INFINITY;
    for (uint32_t i = 0; i < N; i++) {
      float q = x[i] / sc;
      double r = nearbyint((double)q) + 3;
      r = r < -128 ? -128 : r > 127 ? 127 : r;
      want[i] = (uint8_t)(int8_t)r;
    }
    onnxc_model *m = NULL;
    onnxc_session *s = open_text_session("binade", text, true, 2, &m);
    CHECK(s != NULL);
    if (!s) continue;
    onnxc_error e;
    const int64_t d[1] = {N};
    onnxc_value *in = onnxc_tensor_wrap(1, d, 1, x, &e), *out = NULL;
    const char *names[1] = {"X"}, *outs[1] = {"Y"};
    CHECK(onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) == ONNXC_OK);
    if (out) {
      const uint8_t *got = onnxc_tensor_data(out);
      size_t bad = 0;
      for (uint32_t i = 0; i < N; i++) bad += got[i] != want[i];
      if (bad) fprintf(stderr, "binade, scale %g: %zu values differ\n", (double)sc, bad);
      CHECK(bad == 0);
    }
    onnxc_value_free(out);
    onnxc_value_free(in);
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
  free(x);
  free(want);
}

int main(void) {
  quantize_binade();
  const int64_t img[4] = {1, 4, 9, 11}, mat[3] = {2, 5, 16};
  /* activations as tables: DQ -> op -> Q becomes one node */
  static const char *const acts[][2] = {{"Relu", ""},
                                        {"Sigmoid", ""},
                                        {"Tanh", ""},
                                        {"LeakyRelu", "<alpha = 0.1>"},
                                        {"HardSigmoid", "<alpha = 0.3, beta = 0.4>"},
                                        {"HardSwish", ""}};
  for (size_t k = 0; k < sizeof acts / sizeof *acts; k++) {
    char text[1024];
    snprintf(text, sizeof text,
             HEAD
             "act (uint8[1,4,9,11] X) => (int8[1,4,9,11] Y)\n"
             "<float xs = {0.04}, uint8 xz = {118}, float ys = {0.021}, int8 yz = {-7}>\n"
             "{ xd = DequantizeLinear (X, xs, xz)\n  a = %s %s (xd)\n"
             "  Y = QuantizeLinear (a, ys, yz) }\n",
             acts[k][0], acts[k][1]);
    check(acts[k][0], text, 2, img, 4, true, 1);
  }
  check("Clip",
        HEAD
        "clip (int8[1,4,9,11] X) => (uint8[1,4,9,11] Y)\n"
        "<float xs = {0.05}, int8 xz = {3}, float lo = {-1.5}, float hi = {2.25},\n"
        " float ys = {0.017}, uint8 yz = {90}>\n"
        "{ xd = DequantizeLinear (X, xs, xz)\n  a = Clip (xd, lo, hi)\n"
        "  Y = QuantizeLinear (a, ys, yz) }\n",
        3, img, 4, true, 1);
  /* additions: two dequantized tensors (the second broadcast along H), then
   * Relu, requantized; and without a Relu */
  check("Add Relu",
        HEAD
        "add (uint8[1,4,9,11] X) => (uint8[1,4,9,11] Y)\n"
        "<float as = {0.031}, uint8 az = {121}, float bs = {0.047}, uint8 bz = {97},\n"
        " int64[1] st = {0}, int64[1] en = {1}, int64[1] ax = {2},\n"
        " float ys = {0.052}, uint8 yz = {16}>\n"
        "{ b = Slice (X, st, en, ax)\n  ad = DequantizeLinear (X, as, az)\n"
        "  bd = DequantizeLinear (b, bs, bz)\n  s = Add (ad, bd)\n  r = Relu (s)\n"
        "  Y = QuantizeLinear (r, ys, yz) }\n",
        2, img, 4, false, 2);
  check("Add s8",
        HEAD
        "add8 (int8[1,4,9,11] X) => (int8[1,4,9,11] Y)\n"
        "<float as = {0.031}, int8 az = {-5}, float bs = {0.047}, int8 bz = {9},\n"
        " float ys = {0.052}, int8 yz = {4}>\n"
        "{ ad = DequantizeLinear (X, as, az)\n  bd = DequantizeLinear (X, bs, bz)\n"
        "  s = Add (ad, bd)\n  Y = QuantizeLinear (s, ys, yz) }\n",
        3, img, 4, false, 1);
  /* uint8 operands of one shape (the vectorised path), with a Relu: Max
   * and the fused addition */
  check("Add u8 same shape",
        HEAD
        "addu (uint8[1,4,9,11] X) => (uint8[1,4,9,11] Y)\n"
        "<float as = {0.031}, uint8 az = {121}, float bs = {0.047}, uint8 bz = {97},\n"
        " uint8 m = {200}, float ys = {0.052}, uint8 yz = {16}>\n"
        "{ b = Max (X, m)\n  ad = DequantizeLinear (X, as, az)\n"
        "  bd = DequantizeLinear (b, bs, bz)\n"
        "  s = Add (ad, bd)\n  r = Relu (s)\n  Y = QuantizeLinear (r, ys, yz) }\n",
        2, img, 4, false, 2);
  /* not fused: per-channel scale on an input of the addition */
  check("Add per channel",
        HEAD
        "addc (uint8[1,4,9,11] X) => (uint8[1,4,9,11] Y)\n"
        "<float[4] as = {0.03, 0.02, 0.05, 0.01}, uint8[4] az = {1, 2, 3, 4},\n"
        " float bs = {0.047}, uint8 bz = {97}, float ys = {0.052}, uint8 yz = {16}>\n"
        "{ ad = DequantizeLinear <axis = 1> (X, as, az)\n"
        "  bd = DequantizeLinear (X, bs, bz)\n  s = Add (ad, bd)\n"
        "  Y = QuantizeLinear (s, ys, yz) }\n",
        2, img, 4, true, 0);
  /* layout ops between conversions of the same parameters run on the bytes */
  check("Transpose on bytes",
        HEAD
        "tr (uint8[1,4,9,11] X) => (uint8[1,11,9,4] Y)\n"
        "<float s = {0.037}, uint8 z = {99}>\n"
        "{ d = DequantizeLinear (X, s, z)\n  t = Transpose <perm = [0, 3, 2, 1]> (d)\n"
        "  Y = QuantizeLinear (t, s, z) }\n",
        2, img, 4, true, 1);
  check("MaxPool on bytes",
        HEAD
        "mp (int8[1,4,9,11] X) => (int8[1,4,5,6] Y)\n"
        "<float s = {0.037}, int8 z = {-3}>\n"
        "{ d = DequantizeLinear (X, s, z)\n"
        "  t = MaxPool <kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]> (d)\n"
        "  Y = QuantizeLinear (t, s, z) }\n",
        3, img, 4, true, 1);
  check("Transpose, other scale",
        HEAD
        "tr2 (uint8[1,4,9,11] X) => (uint8[1,11,9,4] Y)\n"
        "<float s = {0.037}, float s2 = {0.05}, uint8 z = {99}>\n"
        "{ d = DequantizeLinear (X, s, z)\n  t = Transpose <perm = [0, 3, 2, 1]> (d)\n"
        "  Y = QuantizeLinear (t, s2, z) }\n",
        2, img, 4, true, 0);
  /* dynamic quantization: DQL -> MatMulInteger -> Cast -> Mul -> Add */
  char text[8192];
  size_t at = (size_t)snprintf(
      text, sizeof text, HEAD "dyn (float[2,5,16] X) => (float[2,5,12] Y)\n<int8[16,12] w = {");
  uint32_t st = 5;
  for (int i = 0; i < 16 * 12; i++) {
    st = st * 1664525u + 1013904223u;
    at +=
        (size_t)snprintf(text + at, sizeof text - at, "%s%d", i ? "," : "", (int)(st >> 24) - 128);
  }
  snprintf(text + at, sizeof text - at,
           "}, int8 wz = {0}, float[12] ws = {0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1,"
           "0.11,0.12},\n float[12] bias = {1,-2,3,-4,5,-6,7,-8,9,-10,11,-12}>\n"
           "{ q, s, z = DynamicQuantizeLinear (X)\n  mi = MatMulInteger (q, w, z, wz)\n"
           "  sc = Mul (s, ws)\n  c = Cast <to = 1> (mi)\n  m = Mul (c, sc)\n"
           "  Y = Add (m, bias) }\n");
  /* DQL, scale Mul and the fused product */
  check("dynamic MatMul", text, 1, mat, 3, true, 3);
  /* not fused: the Cast's result is also a graph output */
  char twice[8300];
  const char *sig = strstr(text, "=> (float[2,5,12] Y)");
  CHECK(sig != NULL);
  if (sig) {
    snprintf(twice, sizeof twice, "%.*s=> (float[2,5,12] Y, float[2,5,12] c)%s", (int)(sig - text),
             text, sig + strlen("=> (float[2,5,12] Y)"));
    check("dynamic MatMul, Cast read", twice, 1, mat, 3, true, 0);
  }
  /* with an activation after the bias: GELU's erf form (x / sqrt 2, or
   * x * 1/sqrt 2 with operands swapped) or Relu joins the fused product (one
   * node for the six or two it replaces); 70 rows (two row blocks) and 100
   * columns (a partial panel) */
  static const char *const dyn_acts[] = {
      "  h = Add (m, bias)\n  d = Div (h, r2)\n  e = Erf (d)\n  f = Add (e, one)\n"
      "  g = Mul (h, f)\n  Y = Mul (g, half) }\n",
      "  h = Add (bias, m)\n  d = Mul (ir2, h)\n  e = Erf (d)\n  f = Add (one, e)\n"
      "  g = Mul (f, h)\n  Y = Mul (half, g) }\n",
      "  h = Add (m, bias)\n  Y = Relu (h) }\n"};
  const int64_t big[3] = {1, 70, 40};
  for (size_t k = 0; k < sizeof dyn_acts / sizeof *dyn_acts; k++) {
    size_t cap = 64 * 1024;
    char *t = malloc(cap);
    CHECK(t != NULL);
    if (!t) break;
    size_t n = (size_t)snprintf(
        t, cap, HEAD "dynact (float[1,70,40] X) => (float[1,70,100] Y)\n<int8[40,100] w = {");
    for (int i = 0; i < 40 * 100; i++) {
      st = st * 1664525u + 1013904223u;
      n += (size_t)snprintf(t + n, cap - n, "%s%d", i ? "," : "", (int)(st >> 24) - 128);
    }
    n += (size_t)snprintf(t + n, cap - n,
                          "}, int8 wz = {3}, float ws = {0.004}, float[100] bias = {");
    for (int i = 0; i < 100; i++)
      n += (size_t)snprintf(t + n, cap - n, "%s%g", i ? "," : "", (i % 11 - 5) * 0.5);
    snprintf(t + n, cap - n,
             "}, float r2 = {1.4142135}, float ir2 = {0.70710678}, float one = {1}, float half = "
             "{0.5}>\n{ q, s, z = DynamicQuantizeLinear (X)\n  mi = MatMulInteger (q, w, z, wz)\n"
             "  sc = Mul (s, ws)\n  c = Cast <to = 1> (mi)\n  m = Mul (c, sc)\n%s",
             dyn_acts[k]);
    check(k == 2 ? "dynamic MatMul + Relu" : "dynamic MatMul + GELU", t, 1, big, 3, true, 3);
    free(t);
  }
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("QDQ activation, addition and dynamic product units: fused and float paths agree\n");
  return fails != 0;
}
