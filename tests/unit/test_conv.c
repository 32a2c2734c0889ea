/* test_conv.c - the float Conv kernel through the public API against a plain
 * double-precision convolution on random inputs: 1-D, 2-D and 3-D, odd
 * sizes, strides, pads, dilations, groups (depthwise too), batch > 1, 1x1
 * kernels (B read in place), stride-1 "same width" kernels (shifted-plane
 * im2col), depth over several GEMM blocks, ConvTranspose (kernel = stride
 * written directly, general col2im in row chunks), few output positions
 * (dot products with the rows of W), 3x3 stride-1 layers large enough for
 * the Winograd kernel (constant W; the same W given at run time takes the
 * direct path: both against the reference), with constant weights
 * (packed once) and weights given at run time, on 1, 2, 5 and 16 threads
 * (more threads than tasks, and the many-thread plans of kernels/split.h).
 * Layers of 1 to 4 input channels (a network's stem: the direct kernel of
 * kernels/conv_stem_body.h) also with what FusedConv takes after them
 * (Relu, Clip, HardSwish, SiLU, a residual Add), the reference applying it
 * in double. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"

static int failures;

static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct conv_case {
  int nd;
  bool transpose; /* ConvTranspose: W is C x M/group x k..., no output_padding */
  int64_t N, C, M, G;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
} conv_case;

static int64_t out_dim(const conv_case *c, int i) {
  if (c->transpose)
    return c->s[i] * (c->in[i] - 1) + (c->k[i] - 1) * c->d[i] + 1 - c->pb[i] - c->pe[i];
  return (c->in[i] + c->pb[i] + c->pe[i] - ((c->k[i] - 1) * c->d[i] + 1)) / c->s[i] + 1;
}

/* Appends printf-style text to a growing buffer. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->n + (size_t)n + 1 > b->cap) {
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *p = realloc(b->p, cap);
    if (!p) return;
    b->p = p;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

static void put_ints(sbuf *b, const int64_t *v, int n, const int64_t *v2) {
  put(b, "[");
  for (int i = 0; i < n; i++) put(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  for (int i = 0; v2 && i < n; i++) put(b, ", %lld", (long long)v2[i]);
  put(b, "]");
}

/* Naive convolution in double. */
static void reference(const conv_case *c, const float *x, const float *w, const float *bias,
                      int64_t *od, double *y) {
  int64_t Cg = c->C / c->G, Mg = c->M / c->G, in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1},
          s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[3] = {0, 0, 0};
  int off = 3 - c->nd;
  for (int i = 0; i < c->nd; i++) {
    in[off + i] = c->in[i];
    k[off + i] = c->k[i];
    o[off + i] = od[i];
    s[off + i] = c->s[i];
    d[off + i] = c->d[i];
    p[off + i] = c->pb[i];
  }
  int64_t isz = in[0] * in[1] * in[2], ksz = k[0] * k[1] * k[2];
  if (c->transpose) { /* scatter every input pixel through the kernel */
    int64_t osz = o[0] * o[1] * o[2];
    for (int64_t n = 0; n < c->N; n++)
      for (int64_t m = 0; m < c->M; m++)
        for (int64_t q = 0; q < osz; q++) y[(n * c->M + m) * osz + q] = bias ? bias[m] : 0.0;
    for (int64_t n = 0; n < c->N; n++)
      for (int64_t ch = 0; ch < c->C; ch++) {
        int64_t gi = ch / Cg;
        const float *xc = x + (n * c->C + ch) * isz;
        for (int64_t mm = 0; mm < Mg; mm++) {
          const float *wc = w + (ch * Mg + mm) * ksz;
          double *yc = y + (n * c->M + gi * Mg + mm) * osz;
          for (int64_t a = 0; a < in[0]; a++)
            for (int64_t b = 0; b < in[1]; b++)
              for (int64_t e = 0; e < in[2]; e++)
                for (int64_t ka = 0; ka < k[0]; ka++)
                  for (int64_t kb = 0; kb < k[1]; kb++)
                    for (int64_t ke = 0; ke < k[2]; ke++) {
                      int64_t ya = a * s[0] - p[0] + ka * d[0], yb = b * s[1] - p[1] + kb * d[1],
                              ye = e * s[2] - p[2] + ke * d[2];
                      if (ya < 0 || ya >= o[0] || yb < 0 || yb >= o[1] || ye < 0 || ye >= o[2])
                        continue;
                      yc[(ya * o[1] + yb) * o[2] + ye] += (double)xc[(a * in[1] + b) * in[2] + e] *
                                                          (double)wc[(ka * k[1] + kb) * k[2] + ke];
                    }
        }
      }
    return;
  }
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t m = 0; m < c->M; m++) {
      int64_t gi = m / Mg;
      for (int64_t a = 0; a < o[0]; a++)
        for (int64_t b = 0; b < o[1]; b++)
          for (int64_t e = 0; e < o[2]; e++) {
            double acc = bias ? bias[m] : 0.0;
            for (int64_t ci = 0; ci < Cg; ci++) {
              const float *xc = x + (n * c->C + gi * Cg + ci) * isz;
              const float *wc = w + (m * Cg + ci) * ksz;
              for (int64_t ka = 0; ka < k[0]; ka++)
                for (int64_t kb = 0; kb < k[1]; kb++)
                  for (int64_t ke = 0; ke < k[2]; ke++) {
                    int64_t ia = a * s[0] - p[0] + ka * d[0], ib = b * s[1] - p[1] + kb * d[1],
                            ie = e * s[2] - p[2] + ke * d[2];
                    if (ia < 0 || ia >= in[0] || ib < 0 || ib >= in[1] || ie < 0 || ie >= in[2])
                      continue;
                    acc += (double)xc[(ia * in[1] + ib) * in[2] + ie] *
                           (double)wc[(ka * k[1] + kb) * k[2] + ke];
                  }
            }
            y[((n * c->M + m) * o[0] + a) * o[1] * o[2] + b * o[2] + e] = acc;
          }
    }
}

/* what follows the convolution in the model (fused into a FusedConv at
 * optimization level 1), applied to the reference in double */
enum { POST_NONE, POST_RELU, POST_CLIP, POST_HSWISH, POST_SILU, POST_RES_RELU };

static double post_ref(int post, double v, double res) {
  switch (post) {
    case POST_RELU:
      return v > 0.0 ? v : 0.0;
    case POST_CLIP:
      return v < 0.0 ? 0.0 : v > 6.0 ? 6.0 : v;
    case POST_HSWISH: {
      double t = v / 6.0 + 0.5;
      return v * (t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t);
    }
    case POST_SILU:
      return v / (1.0 + exp(-v));
    case POST_RES_RELU:
      return v + res > 0.0 ? v + res : 0.0;
    default:
      return v;
  }
}

static void run_case(const char *name, const conv_case *c, bool with_bias, int post) {
  uint32_t seed = (uint32_t)(c->C * 977 + c->M * 31 + c->in[0] * 7 + c->k[0]);
  int64_t Cg = c->C / c->G, xn = c->N * c->C, wn = c->M * Cg, od[3] = {1, 1, 1}, osz = 1;
  int64_t wd0 = c->transpose ? c->C : c->M, wd1 = c->transpose ? c->M / c->G : Cg;
  for (int i = 0; i < c->nd; i++) {
    xn *= c->in[i];
    wn *= c->k[i];
    od[i] = out_dim(c, i);
    osz *= od[i];
  }
  int64_t yn = c->N * c->M * osz;
  float *x = malloc(sizeof(float) * (size_t)xn), *w = malloc(sizeof(float) * (size_t)wn);
  float *bias = malloc(sizeof(float) * (size_t)c->M);
  double *want = malloc(sizeof(double) * (size_t)yn);
  float *res = malloc(sizeof(float) * (size_t)yn);
  for (int64_t i = 0; i < xn; i++) x[i] = rnd(&seed);
  for (int64_t i = 0; i < wn; i++) w[i] = rnd(&seed);
  for (int64_t i = 0; i < c->M; i++) bias[i] = rnd(&seed);
  for (int64_t i = 0; i < yn; i++) res[i] = 4.0f * rnd(&seed);
  reference(c, x, w, with_bias ? bias : NULL, od, want);
  for (int64_t i = 0; i < yn; i++) want[i] = post_ref(post, want[i], res[i]);

  /* the model: W (and B) as initializers, W also a graph input that a run
   * may override (then W is no longer a constant: not packed in advance) */
  sbuf t = {0};
  int64_t xd[5] = {c->N, c->C}, wd[5] = {wd0, wd1}, yd[5] = {c->N, c->M};
  for (int i = 0; i < c->nd; i++) {
    xd[2 + i] = c->in[i];
    wd[2 + i] = c->k[i];
    yd[2 + i] = od[i];
  }
  int r = c->nd + 2;
  put(&t, "<ir_version: 8, opset_import: [\"\" : %d]>\ng (float", post ? 14 : 13);
  put_ints(&t, xd, r, NULL);
  put(&t, " x, float");
  if (post == POST_RES_RELU) {
    put_ints(&t, yd, r, NULL);
    put(&t, " res, float");
  }
  put_ints(&t, wd, r, NULL);
  put(&t, " w) => (float");
  put_ints(&t, yd, r, NULL);
  put(&t, " y) <float");
  put_ints(&t, wd, r, NULL);
  put(&t, " w = {");
  for (int64_t i = 0; i < wn; i++) put(&t, "%s%.9g", i ? "," : "", (double)w[i]);
  put(&t, "}, float[%lld] b = {", (long long)c->M);
  for (int64_t i = 0; i < c->M; i++) put(&t, "%s%.9g", i ? "," : "", (double)bias[i]);
  /* (with a post: the convolution's output is cv, what follows makes y) */
  put(&t, "}> {\n  %s = %s <kernel_shape = ", post ? "cv" : "y",
      c->transpose ? "ConvTranspose" : "Conv");
  put_ints(&t, c->k, c->nd, NULL);
  put(&t, ", strides = ");
  put_ints(&t, c->s, c->nd, NULL);
  put(&t, ", dilations = ");
  put_ints(&t, c->d, c->nd, NULL);
  put(&t, ", pads = ");
  put_ints(&t, c->pb, c->nd, c->pe);
  put(&t, ", group = %lld> (x, w%s)\n", (long long)c->G, with_bias ? ", b" : "");
  static const char *const post_text[] = {
      "",
      "  y = Relu (cv)\n",
      "  lo = Constant <value = float {0}> ()\n  hi = Constant <value = float {6}> ()\n"
      "  y = Clip (cv, lo, hi)\n",
      "  y = HardSwish (cv)\n",
      "  sg = Sigmoid (cv)\n  y = Mul (cv, sg)\n",
      "  sm = Add (cv, res)\n  y = Relu (sm)\n"};
  put(&t, "%s}\n", post_text[post]);

  onnxc_model *model = NULL;
  onnxc_error err;
  if (!t.p || onnxc_model_parse_text(t.p, t.n, name, &model, &err) != ONNXC_OK) {
    printf("FAIL %s: model text does not parse (%s)\n", name, t.p ? err.msg : "oom");
    failures++;
    goto out;
  }
  /* the output of one thread, which every other count must give bit for
   * bit (the plans split the work, never a sum) */
  float *y1 = malloc(sizeof(float) * (size_t)yn);
  for (int wrun = 0; y1 && wrun <= 1; wrun++) /* 1: W given at run time */
    for (int ti = 0; ti < 4; ti++) {
      /* 5 and 16: the many-thread split (split.h), rows by output channels */
      static const int thread_counts[4] = {1, 2, 5, 16};
      int threads = thread_counts[ti];
      onnxc_session_options so = {0};
      so.threads = threads;
      so.optimization_level = 1;
      onnxc_session *sess = NULL;
      onnxc_value *in[3] = {NULL, NULL, NULL}, *yv = NULL;
      if (onnxc_session_create(model, &so, &sess, &err) != ONNXC_OK ||
          !(in[0] = onnxc_tensor_wrap(1, xd, (size_t)r, x, &err)) ||
          !(in[1] = onnxc_tensor_wrap(1, wd, (size_t)r, w, &err)) ||
          !(in[2] = onnxc_tensor_wrap(1, yd, (size_t)r, res, &err))) {
        printf("FAIL %s: session (%s)\n", name, err.msg);
        failures++;
        onnxc_session_free(sess);
        continue;
      }
      /* x, then the residual when there is one, then W when given */
      const char *in_names[3] = {"x", "res", "w"};
      onnxc_value *ins[3] = {in[0], in[2], in[1]};
      int n_in = 1;
      if (post == POST_RES_RELU) n_in++;
      if (wrun) {
        in_names[n_in] = "w";
        ins[n_in++] = in[1];
      }
      if (onnxc_session_run(sess, in_names, ins, (size_t)n_in, NULL, &yv, 1, &err) != ONNXC_OK) {
        printf("FAIL %s wrun=%d threads=%d: run (%s)\n", name, wrun, threads, err.msg);
        failures++;
      } else {
        const float *y = onnxc_tensor_data(yv);
        int64_t Kg = c->transpose ? Cg * 4 : Cg;
        for (int i = 0; i < c->nd; i++) Kg *= c->k[i];
        double tol = 1e-5 * (double)(Kg + 1), worst = 0.0;
        int64_t at = -1;
        for (int64_t i = 0; i < yn; i++) {
          double e = fabs((double)y[i] - want[i]) / (1.0 + fabs(want[i]));
          if (!(e <= worst)) {
            worst = isnan(e) ? INFINITY : e;
            at = i;
          }
        }
        if (worst > tol) {
          printf("FAIL %s wrun=%d threads=%d: y[%lld] = %g, want %g\n", name, wrun, threads,
                 (long long)at, (double)y[at], want[at]);
          failures++;
        }
        if (ti == 0) {
          memcpy(y1, y, sizeof(float) * (size_t)yn);
        } else if (memcmp(y1, y, sizeof(float) * (size_t)yn)) {
          printf("FAIL %s wrun=%d threads=%d: not the bits of one thread\n", name, wrun, threads);
          failures++;
        }
      }
      onnxc_value_free(yv);
      onnxc_value_free(in[0]);
      onnxc_value_free(in[1]);
      onnxc_value_free(in[2]);
      onnxc_session_free(sess);
    }
  if (!y1) {
    printf("FAIL %s: out of memory\n", name);
    failures++;
  }
  free(y1);
out:
  onnxc_model_free(model);
  free(t.p);
  free(x);
  free(w);
  free(bias);
  free(res);
  free(want);
}

int main(void) {
  /* nd, transpose, N, C, M, G, in, k, strides, dilations, pads begin, pads end */
  static const struct {
    const char *name;
    conv_case c;
    bool bias;
  } cases[] = {
      {"1x1 pointwise", {2, false, 1, 37, 29, 1, {13, 11}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}}, true},
      {"1x1 pointwise batch",
       {2, false, 3, 20, 64, 1, {7, 9}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}},
       false},
      {"1x1 deep", {2, false, 1, 300, 13, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}}, true},
      {"1x1 stride 2", {2, false, 2, 9, 17, 1, {9, 11}, {1, 1}, {2, 2}, {1, 1}, {0}, {0}}, true},
      {"1x1 padded", {2, false, 1, 5, 7, 1, {6, 5}, {1, 1}, {1, 1}, {1, 1}, {1, 0}, {0, 2}}, true},
      {"3x3 same",
       {2, false, 2, 11, 25, 1, {13, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"3x3 same deep",
       {2, false, 1, 40, 14, 1, {9, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       false},
      {"1x3 same width",
       {2, false, 1, 24, 24, 1, {21, 16}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}},
       true},
      {"3x1 valid", {2, false, 2, 19, 24, 1, {20, 8}, {3, 1}, {1, 1}, {1, 1}, {0}, {0}}, true},
      {"5x5 dilated same",
       {2, false, 1, 6, 10, 1, {15, 14}, {5, 3}, {1, 1}, {2, 3}, {4, 3}, {4, 3}},
       true},
      {"3x3 asym same",
       {2, false, 1, 7, 9, 1, {10, 12}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {0, 0}},
       true},
      {"3x3 stride 2",
       {2, false, 2, 8, 13, 1, {15, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}},
       true},
      {"7x7 stride 2",
       {2, false, 1, 3, 16, 1, {29, 31}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
       true},
      {"3x3 valid", {2, false, 1, 5, 6, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {0}, {0}}, true},
      /* Winograd F(4x4, 3x3): sizes that are not multiples of 4, bands that
       * cross tile rows (more than 128 tiles), pads 0 to 2 and asymmetric,
       * batches, channel counts off the 12-row panels, output channels
       * split for two threads (few tiles) */
      {"winograd same",
       {2, false, 2, 20, 30, 1, {17, 22}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"winograd valid",
       {2, false, 1, 33, 50, 1, {23, 13}, {3, 3}, {1, 1}, {1, 1}, {0}, {0}},
       false},
      {"winograd asym pads",
       {2, false, 1, 16, 16, 1, {11, 14}, {3, 3}, {1, 1}, {1, 1}, {2, 1}, {1, 2}},
       true},
      {"winograd bands",
       {2, false, 1, 24, 40, 1, {70, 66}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"winograd 9x9 channels split",
       {2, false, 3, 48, 100, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* small images: two threads split the output channels in 12-row panels */
      {"7x7 channels split",
       {2, false, 1, 40, 100, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"1x1 7x7 channels split",
       {2, false, 1, 70, 61, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}},
       true},
      /* 13 rows, not shared evenly by two threads (7 + 6): channels split too */
      {"1x1 13x13 uneven rows channels split",
       {2, false, 1, 64, 100, 1, {13, 13}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}},
       true},
      {"3x3 13x11 uneven rows channels split",
       {2, false, 1, 8, 60, 1, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* stride 2 onto a small image with at least 256 KiB of W: one part of
       * output channels per thread, the strips gathered in each part */
      {"1x1 stride 2 heavy W channels split",
       {2, false, 1, 512, 520, 1, {13, 13}, {1, 1}, {2, 2}, {1, 1}, {0}, {0}},
       true},
      /* the many-thread plans: a 14 x 14 stride-2 layer (rows x channel
       * parts over gathered strips), a 28 x 28 1 x 1 layer (rows x parts,
       * X read in place), Winograd on 28 x 28 (bands x parts) */
      {"3x3 stride 2 rows x parts",
       {2, false, 1, 40, 100, 1, {28, 27}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"1x1 rows x parts",
       {2, false, 1, 48, 90, 1, {28, 28}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}},
       true},
      {"8x8 stride 8 patches rows x parts (gathered columns)",
       {2, false, 1, 3, 100, 1, {32, 40}, {8, 8}, {8, 8}, {1, 1}, {0}, {0}},
       true},
      {"winograd bands x parts",
       {2, false, 1, 32, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* two threads on 7 x 7 tiles: two bands of whole rows of tiles (28
       * + 21), not 72 + 56 output channels (SqueezeNet's 27 x 27 layers) */
      {"winograd 27x27 row bands",
       {2, false, 1, 32, 128, 1, {27, 27}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* Winograd's shared plan (more than two threads, output channels in
       * parts): the input transformed once by channel parts, the 36
       * products as tasks, the output transform by channels. A 14 x 14
       * map of 16 tiles (gathered, rows of 4 tiles), a tall narrow one of
       * 135 tiles (two bands of the input's gathers), a wide one (rows of
       * 16 and more tiles: the row-wise output transform) */
      {"winograd shared 14x14",
       {2, false, 2, 64, 100, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"winograd shared tall narrow",
       {2, false, 1, 16, 240, 1, {108, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"winograd shared wide",
       {2, false, 1, 17, 120, 1, {10, 70}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {2, 1}},
       false},
      {"3x3 stride 2 heavy W channels split",
       {2, false, 1, 128, 260, 1, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"grouped", {2, false, 2, 12, 18, 3, {11, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}, true},
      {"grouped 1x1", {2, false, 1, 8, 12, 4, {6, 7}, {1, 1}, {1, 1}, {1, 1}, {0}, {0}}, true},
      {"depthwise",
       {2, false, 2, 16, 16, 16, {19, 23}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise s2",
       {2, false, 1, 10, 20, 10, {17, 20}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise 5x5 dilated x2",
       {2, false, 2, 6, 12, 6, {21, 37}, {5, 5}, {1, 2}, {2, 1}, {4, 2}, {3, 1}},
       true},
      {"depthwise wide",
       {2, false, 1, 3, 3, 3, {5, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       false},
      /* the bordered-plane 3x3 kernel: stride 2 with 16 and more outputs a
       * row, odd widths, pads 2 and 0, a channel multiplier of 2 */
      {"depthwise s2 wide",
       {2, false, 2, 6, 6, 6, {25, 33}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise pads 2 and 0",
       {2, false, 1, 4, 8, 4, {14, 40}, {3, 3}, {1, 1}, {1, 1}, {2, 0}, {0, 2}},
       true},
      {"depthwise s2 pads 2",
       {2, false, 1, 5, 5, 5, {15, 47}, {3, 3}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       false},
      /* its tiles (four rows of one vector; two of two; one row) and the
       * right border of rows that end one before a vector (right pads 2) */
      {"depthwise 7 rows of 14",
       {2, false, 1, 3, 3, 3, {7, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise width 31 pads 0 and 2",
       {2, false, 2, 2, 2, 2, {5, 31}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {2, 2}},
       true},
      {"depthwise width 15 pads 2",
       {2, false, 1, 3, 6, 3, {6, 15}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},
       false},
      {"depthwise s2 7 rows of 15",
       {2, false, 1, 4, 4, 4, {13, 29}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* rows under 12 outputs, stride 1: the flat-run kernel, its planes
       * in a pipeline (many channels, two images, a multiplier of 2) */
      {"depthwise 7x7 many channels",
       {2, false, 2, 40, 80, 40, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise 5x9 pads 2 and 0",
       {2, false, 1, 9, 9, 9, {5, 9}, {3, 3}, {1, 1}, {1, 1}, {2, 0}, {0, 2}},
       false},
      /* stride 2 with rows under 32 outputs: four flat phase planes; 35
       * outputs: the bordered plane again */
      {"depthwise s2 flat 14x14",
       {2, false, 2, 12, 12, 12, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise s2 odd pads 0 and 2",
       {2, false, 1, 3, 3, 3, {13, 27}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {2, 2}},
       true},
      {"depthwise s2 35 wide",
       {2, false, 1, 3, 6, 3, {9, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      /* 5 x 5: the flat runs too (EfficientNet's layers) */
      {"depthwise 5x5 flat",
       {2, false, 2, 20, 20, 20, {14, 14}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},
       true},
      {"depthwise 5x5 s2 flat odd",
       {2, false, 1, 7, 7, 7, {15, 29}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       true},
      {"depthwise 5x5 pads 4 and 0",
       {2, false, 1, 5, 10, 5, {9, 11}, {5, 5}, {1, 1}, {1, 1}, {4, 0}, {0, 4}},
       false},
      {"depthwise 5x5 s2 pads 1 and 3",
       {2, false, 1, 6, 6, 6, {12, 20}, {5, 5}, {2, 2}, {1, 1}, {1, 3}, {3, 1}},
       true},
      /* small maps with 16 channels or more: channels in the vector lanes
       * (blocks of 16 and a tail, both strides, both kernels, 256 outputs) */
      {"depthwise blocked s2 5x5",
       {2, false, 1, 16, 16, 16, {14, 14}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       true},
      {"depthwise blocked 33 s2 pads 0 and 2",
       {2, false, 2, 33, 33, 33, {9, 9}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {2, 2}},
       false},
      {"depthwise blocked 5x5 24x24",
       {2, false, 1, 18, 18, 18, {24, 24}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},
       false},
      {"depthwise blocked 16x16 outputs",
       {2, false, 1, 17, 17, 17, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"depthwise 1x1 map",
       {2, false, 1, 5, 5, 5, {1, 1}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"1-D same", {1, false, 2, 6, 14, 1, {50}, {5}, {1}, {1}, {2}, {2}}, true},
      {"1-D strided", {1, false, 1, 5, 7, 1, {41}, {4}, {3}, {2}, {1}, {2}}, true},
      /* few output positions (<= 8) and depth >= 32: dot products with W's rows */
      {"1-D STFT-like", {1, false, 1, 1, 20, 1, {576}, {256}, {128}, {1}, {0}, {0}}, true},
      {"1-D few positions batch grouped",
       {1, false, 2, 24, 18, 2, {9}, {3}, {2}, {1}, {1}, {1}},
       false},
      {"2-D 2x3 output",
       {2, false, 1, 8, 10, 1, {4, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"transpose k=s", {2, true, 1, 24, 20, 1, {9, 11}, {2, 2}, {2, 2}, {1, 1}, {0}, {0}}, true},
      {"transpose k=s batch",
       {2, true, 2, 5, 3, 1, {7, 6}, {3, 2}, {3, 2}, {1, 1}, {0}, {0}},
       false},
      {"transpose grouped",
       {2, true, 2, 6, 9, 3, {5, 7}, {3, 3}, {2, 1}, {1, 2}, {1, 0}, {0, 2}},
       true},
      {"transpose wide",
       {2, true, 1, 7, 5, 1, {40, 90}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
       true},
      {"transpose 1-D", {1, true, 1, 4, 6, 2, {33}, {5}, {3}, {1}, {2}, {1}}, true},
      {"3-D",
       {3, false, 1, 3, 5, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 2}, {1, 1, 2}},
       true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    conv_case c = cases[i].c;
    for (int d = 0; d < c.nd; d++) /* zero-initialised entries mean 0 */
      if (c.s[d] == 0) c.s[d] = 1;
    run_case(cases[i].name, &c, cases[i].bias, POST_NONE);
  }
  /* 1 to 4 input channels, one group: the stem kernel. Odd sizes, pads
   * asymmetric and larger than the kernel's reach on one side, rows of 1 to
   * 8 runs of 16 outputs (the 3 / 2 + 2 groupings and a masked last run),
   * output channels off the blocks of 8, batches; then each epilogue. */
  static const struct {
    const char *name;
    conv_case c;
    bool bias;
    int post;
  } stems[] = {
      {"stem c2 5x5 asym pads",
       {2, false, 1, 2, 10, 1, {19, 23}, {5, 5}, {1, 1}, {1, 1}, {2, 1}, {1, 3}},
       true,
       POST_NONE},
      {"stem c3 7x7 s2",
       {2, false, 1, 3, 24, 1, {37, 41}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
       true,
       POST_NONE},
      {"stem c4 5x5 s2 valid batch",
       {2, false, 2, 4, 20, 1, {17, 35}, {5, 5}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
       false,
       POST_NONE},
      /* (3 x 3 of 3 channels is left to the GEMM: the boundary) */
      {"stem c3 3x3 s1 64 wide",
       {2, false, 1, 3, 8, 1, {6, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       true,
       POST_NONE},
      {"stem c3 7x3 s2x1 asym pads",
       {2, false, 1, 3, 13, 1, {15, 70}, {7, 3}, {2, 1}, {1, 1}, {3, 0}, {2, 2}},
       true,
       POST_NONE},
      {"stem c3 5x5 s2 100 wide",
       {2, false, 1, 3, 32, 1, {11, 100}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       false,
       POST_NONE},
      {"stem c3 11x11 s2",
       {2, false, 1, 3, 9, 1, {30, 31}, {11, 11}, {2, 2}, {1, 1}, {5, 5}, {4, 4}},
       true,
       POST_NONE},
      {"stem c3 5x5 s2 229 wide",
       {2, false, 1, 3, 16, 1, {9, 229}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       true,
       POST_NONE},
      {"stem c1 7x7 s1 64 wide",
       {2, false, 2, 1, 5, 1, {7, 64}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}},
       true,
       POST_NONE},
      {"stem c3 7x7 s2 relu",
       {2, false, 1, 3, 16, 1, {21, 45}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
       true,
       POST_RELU},
      {"stem c3 7x7 s2 clip",
       {2, false, 2, 3, 12, 1, {13, 40}, {7, 7}, {2, 2}, {1, 1}, {0, 3}, {3, 0}},
       true,
       POST_CLIP},
      {"stem c3 5x5 s1 hardswish",
       {2, false, 1, 3, 16, 1, {25, 33}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}},
       true,
       POST_HSWISH},
      {"stem c3 7x7 s2 silu",
       {2, false, 1, 3, 32, 1, {17, 50}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
       true,
       POST_SILU},
      {"stem c4 7x7 s2 residual relu",
       {2, false, 2, 4, 10, 1, {19, 37}, {7, 7}, {2, 2}, {1, 1}, {3, 2}, {2, 3}},
       true,
       POST_RES_RELU},
      {"stem c1 7x7 s1 residual relu",
       {2, false, 1, 1, 8, 1, {12, 20}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {2, 4}},
       false,
       POST_RES_RELU},
  };
  for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++)
    run_case(stems[i].name, &stems[i].c, stems[i].bias, stems[i].post);
  printf("conv: %d failures\n", failures);
  return failures ? 1 : 0;
}
