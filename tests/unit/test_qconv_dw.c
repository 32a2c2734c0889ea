/* test_qconv_dw.c - the depthwise 8-bit convolution (src/kernels/qconv_dw.c)
 * against a reference written here: the exact int64 sum of (x - zx)(w - zw)
 * over the taps inside the image, then y = clamp(round(acc * mult + bias +
 * zy)). int8 weights with zero points 0 take the VNNI path (where the CPU
 * has it), uint8 weights or non-zero zero points the float path. Planes
 * narrower and wider than 64 bytes (the byte rows' chunks), strides 1 and
 * 2, kernels 1 to 7, pads 0 to 3, odd sizes, a raised floor and a lowered
 * ceiling (a fused Relu / Clip), one and two threads. The float epilogue
 * may round a value on a .5 boundary the other way (fused multiply-add):
 * one quantum on a handful of values is allowed, nothing more. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/cpu.h"
#include "../../src/kernels/qconv_dw.h"
#include "../../src/runtime/session.h"

static int failures, declined;
static uint32_t rng = 77;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct dwcase {
  int64_t h, w, k, stride, pad, C;
} dwcase;

static void check(const dwcase *c, bool w_signed, bool zw_nonzero, bool y_signed, bool bounded,
                  ox_thread_pool *pool) {
  ox_nn_geom g;
  memset(&g, 0, sizeof g);
  g.nd = 2;
  int64_t in[2] = {c->h, c->w};
  g.in_size = g.out_size = g.k_size = 1;
  for (int d = 0; d < 2; d++) {
    g.in[d] = in[d];
    g.k[d] = c->k;
    g.stride[d] = c->stride;
    g.dil[d] = 1;
    g.pb[d] = g.pe[d] = c->pad;
    g.out[d] = (in[d] + 2 * c->pad - c->k) / c->stride + 1;
    g.in_size *= g.in[d];
    g.out_size *= g.out[d];
    g.k_size *= c->k;
  }
  if (!ox_qconv_dw_supported(&g)) {
    printf("geometry %lldx%lld k%lld s%lld p%lld not taken\n", (long long)c->h, (long long)c->w,
           (long long)c->k, (long long)c->stride, (long long)c->pad);
    failures++;
    return;
  }
  int64_t C = c->C, P = g.out_size, KK = g.k_size;
  uint8_t *x = malloc((size_t)(C * g.in_size)), *w = malloc((size_t)(C * KK));
  uint8_t *y = malloc((size_t)(C * P)), *zw = malloc((size_t)C);
  float *mult = malloc((size_t)C * sizeof *mult), *bias = malloc((size_t)C * sizeof *bias);
  for (int64_t i = 0; i < C * g.in_size; i++) x[i] = (uint8_t)next();
  for (int64_t i = 0; i < C * KK; i++) w[i] = (uint8_t)next();
  for (int64_t i = 0; i < C; i++) zw[i] = zw_nonzero ? (uint8_t)next() : 0;
  int32_t zx = (int32_t)(next() % 256);
  for (int64_t m = 0; m < C; m++) {
    mult[m] = (float)(1.0 / (sqrt((double)KK) * 4096.0) * (0.5 + (next() % 100) / 100.0));
    bias[m] = (float)((int)(next() % 200) - 100) / 7.0f;
  }
  ox_qconv_req q = {mult, bias, 0, 0, 0, y_signed};
  q.zy = y_signed ? (int32_t)(next() % 40) - 20 : (int32_t)(next() % 60) + 100;
  q.lo = y_signed ? -128 : 0;
  q.hi = y_signed ? 127 : 255;
  if (bounded) {
    q.lo = q.zy;
    q.hi = q.zy + 60 > q.hi ? q.hi : q.zy + 60;
  }
  ox_err e = {0};
  int rc = ox_qconv_dw_run(&g, x, C, zx, w, w_signed, zw, C, &q, y, pool, &e);
  /* the kernel is AVX-512 only: below that level (ONNXC_ISA or the CPU) it
   * must decline, and the operator takes the general integer convolution */
  const ox_cpu *cpu = ox_cpu_get();
  bool avail = cpu->avx512bw && cpu->avx512vl;
  if (!avail || rc == OX_EUNSUPPORTED) {
    if (avail || rc != OX_EUNSUPPORTED) {
      printf("%lldx%lld k%lld: rc %d with the kernel %savailable\n", (long long)c->h,
             (long long)c->w, (long long)c->k, rc, avail ? "" : "not ");
      failures++;
    }
    declined++;
  } else if (rc) {
    printf("%lldx%lld k%lld: %s\n", (long long)c->h, (long long)c->w, (long long)c->k, e.msg);
    failures++;
  } else {
    int64_t off = 0, worse = 0;
    for (int64_t m = 0; m < C; m++)
      for (int64_t oy = 0; oy < g.out[0]; oy++)
        for (int64_t ox = 0; ox < g.out[1]; ox++) {
          int64_t acc = 0;
          int32_t zwm = w_signed ? (int8_t)zw[m] : zw[m];
          for (int64_t ky = 0; ky < c->k; ky++)
            for (int64_t kx = 0; kx < c->k; kx++) {
              int64_t iy = oy * c->stride - c->pad + ky, ix = ox * c->stride - c->pad + kx;
              if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
              uint8_t wb = w[m * KK + ky * c->k + kx];
              int32_t wv = w_signed ? (int8_t)wb : wb;
              acc += (int64_t)(x[m * g.in_size + iy * c->w + ix] - zx) * (wv - zwm);
            }
          double f = (double)acc * mult[m] + bias[m] + q.zy;
          double r = nearbyint(f < q.lo ? q.lo : f > q.hi ? q.hi : f);
          uint8_t yb = y[m * P + oy * g.out[1] + ox];
          int32_t got = y_signed ? (int8_t)yb : yb;
          double d = fabs(got - r);
          if (d == 1) off++;
          if (d > 1 && !worse++)
            printf("%lldx%lld k%lld s%lld p%lld ch %lld (%lld, %lld): %d, want %.0f\n",
                   (long long)c->h, (long long)c->w, (long long)c->k, (long long)c->stride,
                   (long long)c->pad, (long long)m, (long long)oy, (long long)ox, got, r);
        }
    if (worse || off > 2 + C * P / 1000) {
      printf("%lldx%lld k%lld: %lld off by one, %lld worse\n", (long long)c->h, (long long)c->w,
             (long long)c->k, (long long)off, (long long)worse);
      failures++;
    }
  }
  free(x);
  free(w);
  free(y);
  free(zw);
  free(mult);
  free(bias);
}

int main(void) {
  static const dwcase cases[] = {
      {112, 112, 3, 1, 1, 4}, {112, 112, 3, 2, 1, 5}, {56, 56, 3, 1, 1, 7},  {56, 56, 3, 2, 1, 6},
      {14, 14, 3, 1, 1, 9},   {7, 7, 3, 1, 1, 16},    {13, 11, 5, 2, 2, 5},  {9, 9, 7, 1, 3, 3},
      {5, 70, 3, 2, 1, 4},    {3, 1, 3, 1, 1, 3},     {20, 130, 5, 1, 2, 2}, {10, 67, 1, 2, 0, 3},
      {8, 66, 4, 2, 0, 2},    {6, 9, 2, 1, 1, 3}};
  ox_err e = {0};
  ox_thread_pool *pool = ox_thread_pool_new(2, &e);
  int ran = 0;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int v = 0; v < 8; v++) {
      bool w_signed = (v & 3) != 1, zw_nonzero = (v & 3) == 2;
      check(&cases[c], w_signed, zw_nonzero, (v >> 2) & 1, (c + (size_t)v) % 3 == 0,
            v % 2 ? pool : NULL);
      ran++;
    }
  ox_thread_pool_free(pool);
  printf("%d depthwise cases (%d declined below AVX-512)%s\n", ran, declined,
         failures ? "" : ": all agree");
  return failures != 0;
}
