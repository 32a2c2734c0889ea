/* test_attn_decode.c - the decode step's block pass and merge
 * (kernels/attn_decode.h) at the level in use (ONNXC_ISA caps it; the test
 * runs once per level, tests/attn_decode.cmake) against a double-precision
 * softmax: the shapes the vector passes split differently (head sizes with
 * and without a partial last vector, 1 to 8 heads per group, blocks of any
 * length, several blocks folded into one state), soft cap, additive bias
 * with masked keys (every key of a block, or of the whole cache), and the
 * sink of the merge. Needs no onnxruntime (the oracle cases, gen_gqa.py,
 * cover the operator). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/attn_decode.h"

static int failures;
static unsigned rng = 12345u;

static float frand(void) { /* in [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

typedef struct shape {
  int64_t G, H, T, step; /* heads per group, head size, keys, block length */
  float softcap;
  int bias; /* 0 none, 1 random, 2 random with masked keys, 3 all masked */
  int sink;
} shape;

/* y[g][i] by the definition, in double */
static void reference(const shape *s, const float *q, const float *k, const float *v,
                      const float *bias, float scale, const float *sink, double *y) {
  double *sc = malloc((size_t)s->T * sizeof(double));
  for (int64_t g = 0; g < s->G; g++) {
    double mx = sink ? sink[g] : -INFINITY;
    for (int64_t j = 0; j < s->T; j++) {
      double d = 0;
      for (int64_t i = 0; i < s->H; i++) d += (double)q[g * s->H + i] * k[j * s->H + i];
      d *= scale;
      if (s->softcap > 0) d = s->softcap * tanh(d / s->softcap);
      if (bias) d += bias[g * s->T + j];
      sc[j] = d;
      if (d > mx) mx = d;
    }
    double den = sink && mx > -INFINITY ? exp(sink[g] - mx) : 0;
    for (int64_t i = 0; i < s->H; i++) y[g * s->H + i] = 0;
    if (mx == -INFINITY) continue;
    for (int64_t j = 0; j < s->T; j++) {
      double w = exp(sc[j] - mx);
      den += w;
      for (int64_t i = 0; i < s->H; i++) y[g * s->H + i] += w * v[j * s->H + i];
    }
    for (int64_t i = 0; i < s->H; i++) y[g * s->H + i] /= den;
  }
  free(sc);
}

static void run(const shape *s) {
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t G = s->G, H = s->H, T = s->T;
  float *q = malloc((size_t)(G * H) * sizeof(float));
  float *k = malloc((size_t)(T * H) * sizeof(float)), *v = malloc((size_t)(T * H) * sizeof(float));
  float *bias = s->bias ? malloc((size_t)(G * T) * sizeof(float)) : NULL;
  float sink[8], m[8], l[8], *acc = malloc((size_t)(G * H) * sizeof(float));
  float *sc = malloc((size_t)(G * s->step) * sizeof(float)), *y = malloc((size_t)H * sizeof(float));
  double *ref = malloc((size_t)(G * H) * sizeof(double));
  for (int64_t i = 0; i < G * H; i++) q[i] = 2.0f * frand();
  for (int64_t i = 0; i < T * H; i++) k[i] = frand(), v[i] = frand();
  for (int64_t i = 0; s->bias && i < G * T; i++) {
    bias[i] = frand();
    /* masked keys: every third, the second block entirely, or all */
    int64_t j = i % T;
    if ((s->bias == 2 && (j % 3 == 1 || (j >= s->step && j < 2 * s->step))) || s->bias == 3)
      bias[i] = -INFINITY;
  }
  for (int g = 0; g < 8; g++) sink[g] = frand(), m[g] = -INFINITY, l[g] = 0.0f;
  memset(acc, 0, (size_t)(G * H) * sizeof(float));
  float scale = 1.0f / sqrtf((float)H);
  ox_attn_part st = {m, l, acc};
  for (int64_t j0 = 0; j0 < T; j0 += s->step) {
    int64_t n = T - j0 < s->step ? T - j0 : s->step;
    ox_attn_dec d = {.q = q, .G = G, .H = H, .scale = scale, .softcap = s->softcap};
    if (bias) d.bias = bias + j0, d.bias_ld = T;
    kd->block(&d, k + j0 * H, v + j0 * H, n, &st, sc);
  }
  reference(s, q, k, v, bias, scale, s->sink ? sink : NULL, ref);
  double worst = 0;
  for (int64_t g = 0; g < G; g++) {
    kd->merge(m + g, l + g, 1, acc + g * H, H, 1, H, s->sink, sink[g], y);
    for (int64_t i = 0; i < H; i++) {
      double e = fabs(y[i] - ref[g * H + i]) / (1e-5 + 1e-4 * fabs(ref[g * H + i]));
      if (!(e <= worst)) worst = e;
    }
  }
  if (!(worst <= 1.0)) {
    printf("G %lld H %lld T %lld step %lld softcap %g bias %d sink %d: error %.2f x tolerance\n",
           (long long)G, (long long)H, (long long)T, (long long)s->step, s->softcap, s->bias,
           s->sink, worst);
    failures++;
  }
  free(q), free(k), free(v), free(bias), free(acc), free(sc), free(y), free(ref);
}

int main(void) {
  static const int64_t heads[] = {8, 20, 40, 64, 80, 96, 128, 256};
  static const int64_t lens[][2] = {{1, 64}, {7, 64}, {16, 16}, {17, 64}, {100, 64}, {300, 64}};
  int cases = 0;
  for (int64_t G = 1; G <= 8; G++)
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++)
      for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        shape s = {G, heads[h], lens[t][0], lens[t][1], 0.0f, 0, 0};
        run(&s), cases++;
      }
  /* cap, bias, masks, sink on a few shapes */
  static const shape extra[] = {
      {4, 128, 150, 64, 1.5f, 0, 0}, {3, 80, 130, 64, 0.0f, 1, 0}, {5, 64, 200, 64, 0.0f, 2, 0},
      {2, 40, 70, 16, 0.0f, 3, 0},   {4, 96, 90, 64, 0.0f, 0, 1},  {8, 128, 140, 64, 2.0f, 2, 1},
      {1, 20, 33, 16, 0.0f, 3, 1},
  };
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) run(&extra[i]), cases++;
  printf("%d cases, %d failed\n", cases, failures);
  return failures ? 1 : 0;
}
