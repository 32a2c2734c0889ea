/* test_pool_same.c - float 2-D MaxPool and AveragePool with stride 1 and
 * "same" padding (src/ops/pool.c, same_pool2d_task: whole-plane passes, the
 * pools inside Inception modules) and with stride 2 over 2- and 3-column
 * windows (sep_pool2d_task's rows: ox_nn_pool2_f32, tails of a 16-wide
 * vector, the windows straddling the padding), against a reference written here from
 * Operators.md: max over the window's taps inside the image (a NaN tap never
 * wins, as docs/numerics.md says; no tap: -inf), average = sum of the taps
 * inside / their count, or / the taps inside the padded image with
 * count_include_pad. Kernels 1, 3 and 5, symmetric and asymmetric pads,
 * planes smaller than the kernel's reach, NaN and infinities in the input,
 * one and two threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct pcase {
  int is_max, k, incl;
  int64_t pads[4]; /* top, left, bottom, right */
  int64_t n, c, h, w;
  int stride; /* 0: 1 */
} pcase;

static int64_t out_h(const pcase *p) {
  return (p->h + p->pads[0] + p->pads[2] - p->k) / (p->stride ? p->stride : 1) + 1;
}
static int64_t out_w(const pcase *p) {
  return (p->w + p->pads[1] + p->pads[3] - p->k) / (p->stride ? p->stride : 1) + 1;
}

static float input_value(int64_t i) {
  if (i % 17 == 3) return NAN;
  if (i % 23 == 5) return INFINITY;
  if (i % 29 == 7) return -INFINITY;
  return (float)((i * 7919) % 1999 - 999) / 128.0f;
}

static double reference(const pcase *p, const float *x, int64_t plane, int64_t oh, int64_t ow) {
  double acc = p->is_max ? -INFINITY : 0.0;
  int64_t inside = 0, padded = 0;
  for (int64_t kh = 0; kh < p->k; kh++)
    for (int64_t kw = 0; kw < p->k; kw++) {
      int64_t st = p->stride ? p->stride : 1;
      int64_t ih = oh * st - p->pads[0] + kh, iw = ow * st - p->pads[1] + kw;
      bool in_pad = ih >= -p->pads[0] && ih < p->h + p->pads[2] && iw >= -p->pads[1] &&
                    iw < p->w + p->pads[3];
      padded += in_pad;
      if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
      double v = x[(plane * p->h + ih) * p->w + iw];
      inside++;
      if (p->is_max)
        acc = v > acc ? v : acc;
      else
        acc += v;
    }
  if (p->is_max) return acc;
  int64_t count = p->incl ? padded : inside;
  return count ? acc / (double)count : NAN;
}

static void check(const pcase *p, int threads) {
  char text[1024];
  int64_t numel = p->n * p->c * p->h * p->w;
  int64_t OH = out_h(p), OW = out_w(p);
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 13]>\n"
           "G (float[%lld,%lld,%lld,%lld] X) => (float[%lld,%lld,%lld,%lld] Y) {\n"
           "  Y = %s <kernel_shape = [%d, %d], pads = [%lld, %lld, %lld, %lld], strides = [%d, %d]"
           "%s> (X)\n}\n",
           (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->n,
           (long long)p->c, (long long)OH, (long long)OW, p->is_max ? "MaxPool" : "AveragePool",
           p->k, p->k, (long long)p->pads[0], (long long)p->pads[1], (long long)p->pads[2],
           (long long)p->pads[3], p->stride ? p->stride : 1, p->stride ? p->stride : 1,
           p->is_max ? ""
           : p->incl ? ", count_include_pad = 1"
                     : "");
  onnxc_model *m = NULL;
  onnxc_session *s = open_text_session("pool", text, true, threads, &m);
  CHECK(s != NULL);
  if (!s) return;
  float *x = malloc((size_t)numel * sizeof *x);
  for (int64_t i = 0; i < numel; i++) x[i] = input_value(i);
  int64_t dims[4] = {p->n, p->c, p->h, p->w};
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, dims, 4, x, &e), *out = NULL;
  const char *names[1] = {"X"}, *outs[1] = {"Y"};
  if (onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", e.msg);
    fails++;
  } else {
    const float *y = onnxc_tensor_data(out);
    int bad = 0;
    for (int64_t plane = 0; plane < p->n * p->c; plane++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double want = reference(p, x, plane, oh, ow);
          double got = y[(plane * OH + oh) * OW + ow];
          bool ok = (isnan(want) && isnan(got)) || (isinf(want) && got == want) ||
                    (isfinite(want) && fabs(got - want) <= 1e-5 * fabs(want) + 1e-6);
          bad += !ok;
        }
    if (bad)
      fprintf(stderr, "%s k=%d s=%d pads=[%lld,%lld,%lld,%lld] incl=%d %lldx%lld: %d values off\n",
              p->is_max ? "max" : "avg", p->k, p->stride, (long long)p->pads[0],
              (long long)p->pads[1], (long long)p->pads[2], (long long)p->pads[3], p->incl,
              (long long)p->h, (long long)p->w, bad);
    CHECK(bad == 0);
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  free(x);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

int main(void) {
  const pcase cases[] = {
      {1, 3, 0, {1, 1, 1, 1}, 2, 5, 7, 7},
      {0, 3, 0, {1, 1, 1, 1}, 2, 5, 14, 14},
      {0, 3, 1, {1, 1, 1, 1}, 1, 3, 9, 11},
      {1, 5, 0, {2, 2, 2, 2}, 1, 4, 6, 8},
      {0, 5, 0, {1, 2, 3, 2}, 1, 3, 10, 9},
      {0, 5, 1, {1, 2, 3, 2}, 1, 3, 10, 9},
      {1, 3, 0, {0, 2, 2, 0}, 1, 2, 5, 5},
      {0, 1, 0, {0, 0, 0, 0}, 1, 2, 4, 4},
      {0, 3, 0, {1, 1, 1, 1}, 1, 2, 2, 3},
      {1, 5, 0, {2, 2, 2, 2}, 1, 2, 3, 5},
      {1, 3, 0, {1, 1, 1, 1}, 1, 70, 28, 28},
      {0, 3, 0, {1, 1, 1, 1}, 1, 64, 28, 28},
      /* stride 2 (SqueezeNet's and ShuffleNet's pools, VGG's 2 x 2) */
      {1, 3, 0, {0, 0, 0, 0}, 1, 3, 111, 111, 2},
      {0, 3, 1, {1, 1, 1, 1}, 2, 3, 56, 57, 2},
      {0, 3, 0, {1, 1, 1, 1}, 1, 3, 35, 34, 2},
      {1, 3, 0, {1, 1, 1, 1}, 1, 2, 9, 8, 2},
      {1, 2, 0, {0, 0, 0, 0}, 1, 3, 20, 66, 2},
      {0, 2, 0, {0, 1, 1, 0}, 1, 2, 13, 31, 2},
      {0, 3, 0, {0, 0, 0, 0}, 1, 2, 7, 33, 2},
      {1, 3, 0, {1, 0, 0, 1}, 1, 2, 7, 5, 2},
      /* 3 x 3 max at stride 2 with no window across the left edge: each
       * output row straight from three input rows (ox_nn_pool3x3s2_f32),
       * padded rows above and below, 16 outputs and 16 + 2 */
      {1, 3, 0, {1, 0, 1, 0}, 1, 2, 9, 37, 2},
      {1, 3, 0, {0, 0, 0, 0}, 2, 2, 6, 33, 2},
      /* and with the last window across the right edge (Inception's pads
       * [0, 0, 1, 1]) */
      {1, 3, 0, {0, 0, 1, 1}, 1, 2, 9, 8, 2},
      {1, 3, 0, {0, 0, 1, 1}, 1, 2, 6, 40, 2},
      /* 3 x 3 stride 2 on planes of up to 48 columns, padded or averaged:
       * a bordered copy of each plane (bordered3s2_task) */
      {0, 3, 1, {1, 1, 1, 1}, 2, 3, 20, 27, 2},
      {1, 3, 0, {1, 1, 1, 1}, 1, 2, 12, 40, 2},
      {0, 3, 0, {2, 1, 0, 1}, 1, 2, 11, 46, 2},
      /* the rows of a plane in one call (ox_nn_pool3x3s2_rows_f32): two
       * whole vectors of 16 outputs a row, each taking its last column from
       * the next 32; an average of exactly 16 outputs a row */
      {1, 3, 0, {0, 0, 0, 0}, 1, 4, 27, 65, 2},
      {0, 3, 0, {1, 1, 1, 1}, 1, 3, 29, 31, 2},
  };
  size_t n = sizeof cases / sizeof *cases;
  for (size_t i = 0; i < n; i++)
    for (int threads = 1; threads <= 2; threads++) check(&cases[i], threads);
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%zu pools (same-padded, stride 2): max and average agree with the definition\n", n);
  return fails != 0;
}
