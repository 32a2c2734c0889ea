/* test_qdq_fuse.c - QDQ convolution units fused into integer kernels
 * (src/opt/qdq_conv.c, QLinearConvFused in src/ops/conv_int.c), through the
 * public API. Each model is written in the text format as quantization tools
 * lay it out (DequantizeLinear on X and W, Conv with a float bias, optional
 * Relu, QuantizeLinear) and run twice: as written (no_quant_fusion) and
 * fused. The outputs may differ by one quantum where rounding falls the
 * other way, on a few values only; the profile's node count shows that the
 * unit became one node. Units that must stay in float (a non-constant
 * weight, a Conv output read twice, a per-channel x scale) keep their node
 * count and give the same bytes. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

static uint32_t rng = 99;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct spec {
  const char *name;
  int x_signed, w_signed, y_signed;
  int64_t C, M, H, W, k, stride, dil, pad, group;
  bool per_channel, w_zero_points;
  int relu; /* 0 none, 1 Relu, 2 Clip to [0, 6] (ReLU6), 3 Clip to [-0.5, 1.5] */
  bool bias;
  int variant; /* 0 fusable; 1 W from a graph input; 2 Conv output also a graph output; 3 x scale
                  per channel */
} spec;

static size_t put(char *buf, size_t at, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + at, at < cap ? cap - at : 0, fmt, ap);
  va_end(ap);
  return at + (size_t)(n > 0 ? n : 0);
}

static char *model_text(const spec *s) {
  size_t cap = 1 << 20, at = 0;
  char *t = malloc(cap);
  const char *xt = s->x_signed ? "int8" : "uint8", *wt = s->w_signed ? "int8" : "uint8";
  const char *yt = s->y_signed ? "int8" : "uint8";
  int64_t Cg = s->C / s->group, nw = s->M * Cg * s->k * s->k, ns = s->per_channel ? s->M : 1;
  at = put(t, at, cap, "<ir_version: 8, opset_import: [\"\" : 13]>\nqdq (%s[1,%lld,%lld,%lld] X%s)",
           xt, (long long)s->C, (long long)s->H, (long long)s->W,
           s->variant == 1 ? (s->w_signed ? ", int8[M,C,K,K] wq" : ", uint8[M,C,K,K] wq") : "");
  at = put(t, at, cap, " => (%s[N,M,H,W] Y%s) <", yt, s->variant == 2 ? ", float[N,M,H,W] c" : "");
  if (s->variant != 1) {
    at = put(t, at, cap, "%s[%lld,%lld,%lld,%lld] wq = {", wt, (long long)s->M, (long long)Cg,
             (long long)s->k, (long long)s->k);
    for (int64_t i = 0; i < nw; i++)
      at = put(t, at, cap, "%s%d", i ? "," : "",
               s->w_signed ? (int)(next() % 255) - 127 : (int)(next() % 256));
    at = put(t, at, cap, "}, ");
  }
  if (s->variant == 3) {
    at = put(t, at, cap, "float[%lld] xs = {", (long long)s->C);
    for (int64_t i = 0; i < s->C; i++)
      at = put(t, at, cap, "%s0.0%d", i ? "," : "", 2 + (int)i % 5);
    at = put(t, at, cap, "}, %s[%lld] xz = {", xt, (long long)s->C);
    for (int64_t i = 0; i < s->C; i++) at = put(t, at, cap, "%s%d", i ? "," : "", 100 + (int)i);
    at = put(t, at, cap, "}, ");
  } else {
    at = put(t, at, cap, "float xs = {0.03}, %s xz = {%d}, ", xt, s->x_signed ? -3 : 121);
  }
  at = put(t, at, cap, "float[%lld] ws = {", (long long)ns);
  for (int64_t i = 0; i < ns; i++)
    at = put(t, at, cap, "%s%g", i ? "," : "", 0.002 + 0.0007 * (double)(next() % 10));
  at = put(t, at, cap, "}, %s[%lld] wz = {", wt, (long long)ns);
  for (int64_t i = 0; i < ns; i++)
    at = put(t, at, cap, "%s%d", i ? "," : "",
             !s->w_zero_points ? (s->w_signed ? 0 : 128)
             : s->w_signed     ? (int)(next() % 9) - 4
                               : 120 + (int)(next() % 16));
  at = put(t, at, cap, "}, float[%lld] b = {", (long long)s->M);
  for (int64_t i = 0; i < s->M; i++)
    at = put(t, at, cap, "%s%g", i ? "," : "", ((double)(next() % 200) - 100) / 50.0);
  at = put(t, at, cap, "}, float ys = {0.05}, %s yz = {%d}, float lo = {%g}, float hi = {%g}>\n{\n",
           yt, s->y_signed ? 5 : 110, s->relu == 3 ? -0.5 : 0.0, s->relu == 3 ? 1.5 : 6.0);
  at = put(t, at, cap, "  xd = DequantizeLinear%s (X, xs, xz)\n",
           s->variant == 3 ? " <axis = 1>" : "");
  at = put(t, at, cap, "  wd = DequantizeLinear <axis = 0> (wq, ws, wz)\n");
  at = put(t, at, cap,
           "  c = Conv <group = %lld, kernel_shape = [%lld, %lld], strides = [%lld, %lld], "
           "dilations = [%lld, %lld], pads = [%lld, %lld, %lld, %lld]> (xd, wd%s)\n",
           (long long)s->group, (long long)s->k, (long long)s->k, (long long)s->stride,
           (long long)s->stride, (long long)s->dil, (long long)s->dil, (long long)s->pad,
           (long long)s->pad, (long long)s->pad, (long long)s->pad, s->bias ? ", b" : "");
  at = put(t, at, cap, "%s  Y = QuantizeLinear (%s, ys, yz)\n}\n",
           s->relu == 1 ? "  r = Relu (c)\n"
           : s->relu    ? "  r = Clip (c, lo, hi)\n"
                        : "",
           s->relu ? "r" : "c");
  if (at >= cap) {
    free(t);
    return NULL;
  }
  return t;
}

typedef struct outcome {
  uint8_t *y;
  int64_t n;
  size_t nodes;
  bool ok;
} outcome;

static outcome run(const spec *s, const char *text, bool fuse, int threads, const uint8_t *xw) {
  outcome r = {0};
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *ss = open_text_session(s->name, text, fuse, threads, &m);
  if (!ss) return r;
  int64_t xd[4] = {1, s->C, s->H, s->W};
  int64_t nx = s->C * s->H * s->W;
  uint8_t *x = malloc((size_t)nx);
  uint32_t st = 7;
  for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)((st = st * 1664525u + 1013904223u) >> 24);
  int32_t xtype = s->x_signed ? 3 : 2; /* INT8 : UINT8 */
  onnxc_value *in[2] = {onnxc_tensor_wrap(xtype, xd, 4, x, &e), NULL};
  const char *names[2] = {"X", "wq"}, *outs[1] = {"Y"};
  size_t n_in = 1;
  if (s->variant == 1) {
    int64_t wd[4] = {s->M, s->C / s->group, s->k, s->k};
    in[1] = onnxc_tensor_wrap(s->w_signed ? 3 : 2, wd, 4, (void *)xw, &e);
    n_in = 2;
  }
  onnxc_value *out = NULL;
  if (onnxc_session_run(ss, names, in, n_in, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: run: %s\n", s->name, e.msg);
  } else {
    r.n = 1;
    for (size_t d = 0; d < onnxc_tensor_rank(out); d++) r.n *= onnxc_tensor_dims(out)[d];
    r.y = malloc((size_t)r.n + 1);
    memcpy(r.y, onnxc_tensor_data(out), (size_t)r.n);
    r.nodes = profiled_nodes(ss);
    r.ok = true;
  }
  onnxc_value_free(out);
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  free(x);
  onnxc_session_free(ss);
  onnxc_model_free(m);
  return r;
}

static void check(const spec *s) {
  char *text = model_text(s);
  CHECK(text != NULL);
  if (!text) return;
  int64_t nw = s->M * (s->C / s->group) * s->k * s->k;
  uint8_t *wv = malloc((size_t)nw);
  for (int64_t i = 0; i < nw; i++) wv[i] = (uint8_t)next();
  outcome a = run(s, text, false, 1, wv);
  CHECK(a.ok);
  for (int threads = 1; threads <= 2 && a.ok; threads++) {
    outcome b = run(s, text, true, threads, wv);
    CHECK(b.ok && b.n == a.n);
    if (b.ok && b.n == a.n) {
      int64_t off = 0, worse = 0;
      for (int64_t i = 0; i < a.n; i++) {
        int d = s->y_signed ? (int8_t)a.y[i] - (int8_t)b.y[i] : a.y[i] - b.y[i];
        off += d == 1 || d == -1;
        worse += d > 1 || d < -1;
      }
      if (worse || off > 2 + a.n / 200) {
        fprintf(stderr, "%s (%d threads): %lld of %lld values differ by one, %lld by more\n",
                s->name, threads, (long long)off, (long long)a.n, (long long)worse);
        fails++;
      }
      if (s->variant == 0) {
        /* DQ x, DQ w, Conv, (Relu,) Q -> one node */
        if (b.nodes != 1) fprintf(stderr, "%s: %zu nodes after fusion\n", s->name, b.nodes);
        CHECK(b.nodes == 1);
      } else {
        CHECK(b.nodes == a.nodes);
        CHECK(off == 0 && worse == 0);
      }
    }
    free(b.y);
  }
  free(a.y);
  free(wv);
  free(text);
}

int main(void) {
  const spec cases[] = {
      /* name            xs ws ys  C   M   H   W  k  s  d  p  g  per   wzp    relu   bias var */
      {"1x1 u8", 0, 1, 0, 16, 24, 9, 9, 1, 1, 1, 0, 1, true, false, false, true, 0},
      {"3x3 relu", 0, 1, 0, 8, 16, 12, 10, 3, 1, 1, 1, 1, true, false, true, true, 0},
      {"strided s8", 1, 1, 1, 6, 10, 15, 15, 3, 2, 1, 1, 1, false, false, true, true, 0},
      {"dilated", 0, 1, 0, 4, 12, 14, 14, 3, 1, 2, 2, 1, true, false, false, false, 0},
      {"u8 weights zp", 0, 0, 0, 5, 7, 11, 8, 3, 1, 1, 1, 1, true, true, true, true, 0},
      {"s8 weights zp", 1, 1, 0, 12, 9, 7, 7, 3, 1, 1, 0, 1, false, true, false, true, 0},
      {"grouped", 0, 1, 0, 8, 12, 10, 10, 3, 1, 1, 1, 2, true, false, true, true, 0},
      {"depthwise", 0, 1, 0, 8, 8, 10, 10, 3, 1, 1, 1, 8, true, false, true, true, 0},
      {"stem 7x7", 0, 1, 0, 3, 16, 32, 32, 7, 2, 1, 3, 1, true, false, true, true, 0},
      {"3x3 relu6", 0, 1, 0, 8, 16, 12, 10, 3, 1, 1, 1, 1, true, false, 2, true, 0},
      {"3x3 clip both", 1, 1, 1, 6, 10, 9, 9, 3, 1, 1, 1, 1, true, false, 3, true, 0},
      {"depthwise relu6", 0, 1, 0, 16, 16, 20, 70, 3, 1, 1, 1, 16, true, false, 2, true, 0},
      {"depthwise s2 relu6", 0, 1, 0, 12, 12, 21, 67, 3, 2, 1, 1, 12, true, false, 2, true, 0},
      {"depthwise s2 s8", 1, 1, 1, 10, 10, 14, 14, 3, 2, 1, 1, 10, true, false, 3, true, 0},
      {"depthwise u8 w zp", 0, 0, 0, 9, 9, 13, 17, 3, 1, 1, 1, 9, true, true, 2, true, 0},
      {"depthwise 5x5 s2", 0, 1, 0, 7, 7, 19, 23, 5, 2, 1, 2, 7, false, false, 0, false, 0},
      {"W as input", 0, 1, 0, 4, 8, 8, 8, 3, 1, 1, 1, 1, true, false, true, true, 1},
      {"Conv out read", 0, 1, 0, 4, 8, 8, 8, 3, 1, 1, 1, 1, true, false, false, true, 2},
      {"x per channel", 0, 1, 0, 4, 8, 8, 8, 3, 1, 1, 1, 1, true, false, false, true, 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check(&cases[i]);
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%zu QDQ models: fused and float paths agree\n", sizeof cases / sizeof *cases);
  return fails != 0;
}
