/* test_conv_direct_wasm.c - conv_direct.h's WebAssembly SIMD128 entries
 * (kernels/conv_direct_wasm.c) against the portable ones (conv_direct_ref.c)
 * they replace: the few-positions rows form every output's sixteen partial
 * sums and their total in the portable order, so they must give the same
 * bits (NaN and infinity carried through) for every position count 1..8,
 * depths below, at and past a multiple of 16, with and without a bias. The
 * table handed out must be the SIMD128 one in a -msimd128 build (unless
 * ONNXC_ISA=portable) and the probed level's otherwise. The depthwise
 * rows likewise, over kernels 3 and 5 at strides 1, 2 and 3, dilation,
 * uneven padding, widths around the 4- and 8-output blocks, a bias, a
 * channel shuffle and more than one output per group; and the SIMD128
 * fmaf of the convolution's prologue (fma_wasm.c) against fmaf itself,
 * halfway cases (where a double sum narrowed to float rounds twice)
 * included; elsewhere (no
 * SIMD128 compiled in) only that check runs. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "kernels/conv_direct.h"
#include "kernels/fma_wasm.h"
#include "kernels/levels.h"

static int failures;


#ifdef __wasm_simd128__
static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 4096.0f - 8.0f;
}

extern const ox_conv_direct_kernels ox_conv_direct_kernels_ref, ox_conv_direct_kernels_wasm;

static int64_t count_diff(const float *a, const float *b, int64_t n) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i]))) bad++;
  return bad;
}

static void test_few(void) {
  uint32_t s = 7;
  static const int64_t Ks[] = {1, 15, 16, 33, 100, 512};
  for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
    for (int64_t P = 1; P <= 8; P++)
      for (int with_bias = 0; with_bias < 2; with_bias++) {
        int64_t K = Ks[ki], M = 13;
        float *colt = malloc(sizeof(float) * (size_t)(P * K)),
              *w = malloc(sizeof(float) * (size_t)(M * K));
        float bias[13], y0[13 * 8], y1[13 * 8];
        for (int64_t i = 0; i < P * K; i++) colt[i] = rnd(&s);
        for (int64_t i = 0; i < M * K; i++) w[i] = rnd(&s);
        for (int i = 0; i < 13; i++) bias[i] = rnd(&s);
        if (P == 3 && K > 16) w[K + 17] = INFINITY; /* carried through (row 1) */
        if (P == 5) colt[K * 4] = NAN;              /* position 4 of every row */
        ox_few_job j0 = {colt, w, with_bias ? bias : NULL, y0, P, K}, j1 = j0;
        j1.y = y1;
        memset(y0, 0, sizeof y0);
        memset(y1, 0xff, sizeof y1);
        ox_conv_direct_kernels_ref.few_task(&j0, 0, M);
        /* two calls over split rows, as the parallel-for hands them out */
        ox_conv_direct_kernels_wasm.few_task(&j1, 0, 5);
        ox_conv_direct_kernels_wasm.few_task(&j1, 5, M);
        int64_t bad = count_diff(y0, y1, M * P);
        if (bad) {
          printf("FAIL few_task K %lld P %lld bias %d: %lld values differ\n", (long long)K,
                 (long long)P, with_bias, (long long)bad);
          failures++;
        }
        free(colt);
        free(w);
      }
}

/* one depthwise geometry: C channels of IH x IW, kernel KH x KW */
static void dw_case(int64_t IH, int64_t IW, int64_t KH, int64_t KW, int64_t s, int64_t d,
                    int64_t pb, int64_t pe, int64_t C, int64_t Mg, int64_t shuffle, bool bias,
                    uint32_t *seed) {
  ox_nn_geom g = {.nd = 2};
  int64_t in[2] = {IH, IW}, k[2] = {KH, KW};
  g.in_size = g.out_size = g.k_size = 1;
  for (int i = 0; i < 2; i++) {
    g.in[i] = in[i];
    g.k[i] = k[i];
    g.stride[i] = s;
    g.dil[i] = d;
    g.pb[i] = pb;
    g.pe[i] = pe;
    g.out[i] = (in[i] + pb + pe - d * (k[i] - 1) - 1) / s + 1;
    g.in_size *= in[i];
    g.out_size *= g.out[i];
    g.k_size *= k[i];
  }
  if (g.out[0] <= 0 || g.out[1] <= 0) return;
  int64_t nx = C * g.in_size, nw = C * Mg * g.k_size, ny = C * Mg * g.out_size;
  float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw),
        *b = malloc(sizeof(float) * (size_t)(C * Mg)), *y0 = malloc(sizeof(float) * (size_t)ny),
        *y1 = malloc(sizeof(float) * (size_t)ny);
  for (int64_t i = 0; i < nx; i++) x[i] = rnd(seed);
  for (int64_t i = 0; i < nw; i++) w[i] = rnd(seed);
  for (int64_t i = 0; i < C * Mg; i++) b[i] = rnd(seed);
  x[nx / 2] = NAN;
  x[nx / 3] = INFINITY;
  memset(y1, 0xff, sizeof(float) * (size_t)ny);
  ox_conv_direct_kernels_ref.depthwise(NULL, &g, 1, C, Mg, x, w, bias ? b : NULL, NULL, shuffle,
                                       y0);
  ox_conv_direct_kernels_wasm.depthwise(NULL, &g, 1, C, Mg, x, w, bias ? b : NULL, NULL, shuffle,
                                        y1);
  int64_t bad = count_diff(y0, y1, ny);
  if (bad) {
    printf(
        "FAIL depthwise %lldx%lld k %lldx%lld s %lld d %lld pads %lld,%lld Mg %lld shuffle %lld:"
        " %lld values differ\n",
        (long long)IH, (long long)IW, (long long)KH, (long long)KW, (long long)s, (long long)d,
        (long long)pb, (long long)pe, (long long)Mg, (long long)shuffle, (long long)bad);
    failures++;
  }
  free(x);
  free(w);
  free(b);
  free(y0);
  free(y1);
}

static void test_depthwise(void) {
  uint32_t s = 11;
  static const int64_t widths[] = {1, 3, 7, 8, 9, 12, 13, 17, 20, 33, 40};
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
    for (int64_t st = 1; st <= 3; st++)
      for (int64_t k = 3; k <= 5; k += 2) {
        int64_t W = widths[wi];
        dw_case(6, W, k, k, st, 1, k / 2, k / 2, 3, 1, 0, true, &s);
        dw_case(5, W, k, k, st, 1, 0, 0, 2, 1, 0, false, &s);
        dw_case(7, W, k, 1, st, 2, 1, 2, 2, 1, 0, true, &s);
      }
  dw_case(9, 21, 3, 3, 1, 1, 1, 1, 4, 2, 0, true, &s); /* two outputs per group */
  dw_case(9, 21, 3, 3, 2, 1, 1, 1, 4, 1, 2, true, &s); /* a channel shuffle */
  /* a 7 x 7 kernel, stride 2 with dilation 2, and pads wider than the
   * kernel's reach on one side */
  dw_case(8, 29, 7, 7, 1, 1, 3, 3, 2, 1, 0, true, &s);
  dw_case(8, 30, 3, 3, 2, 2, 2, 1, 3, 1, 0, true, &s);
  dw_case(6, 11, 3, 3, 2, 1, 4, 0, 2, 1, 0, false, &s);
}

static void test_fma(void) {
  uint32_t s = 5;
  enum { N = 1027 };
  float x[N], y[N];
  for (int t = 0; t < 40; t++) {
    float a = rnd(&s) * (t % 3 ? 1.0f : 1e-3f), b = t % 5 ? rnd(&s) : 0.0f;
    for (int i = 0; i < N; i++) x[i] = rnd(&s) * (i % 7 ? 1.0f : 1e30f);
    if (t == 1) { /* (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: halfway between floats */
      a = 1.0f + 0x1p-12f;
      b = 0x1p-60f; /* lost in the double sum, which then looks halfway */
      for (int i = 0; i < N; i++) x[i] = i % 2 ? a : -a;
    }
    x[3] = NAN;
    x[10] = INFINITY;
    x[11] = 0x1p-140f; /* subnormal products */
    for (int relu = 0; relu < 2; relu++) {
      ox_fma_affine_wasm(x, a, b, relu, y, N);
      int bad = 0;
      for (int i = 0; i < N; i++) {
        float v = fmaf(x[i], a, b);
        v = relu ? (v > 0.0f ? v : 0.0f) : v;
        if (memcmp(&v, &y[i], sizeof v) != 0 && !(isnan(v) && isnan(y[i]))) bad++;
      }
      if (bad) {
        printf("FAIL fma case %d relu %d: %d values differ\n", t, relu, bad);
        failures++;
      }
    }
  }
}
#endif

int main(void) {
  const ox_cpu *c = ox_cpu_get();
  const ox_conv_direct_kernels *k = ox_conv_direct_kernels_get();
#ifdef __wasm_simd128__
  if (c->simd128 ? k != &ox_conv_direct_kernels_wasm : k != &ox_conv_direct_kernels_ref) {
    printf("FAIL table: simd128 %d but the other entries\n", (int)c->simd128);
    failures++;
  }
  test_few();
  test_depthwise();
  test_fma();
#else
  if (k != ox_conv_direct_kernels_at(c->isa) || k->isa != ox_level_at(c->isa)) {
    printf("FAIL table: not the probed level's entries\n");
    failures++;
  }
#endif
  if (!failures) printf("ok\n");
  return failures != 0;
}
