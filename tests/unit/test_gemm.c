/* test_gemm.c - ox_gemm (plain and packed-A products) against a plain
 * double-precision triple loop, over shapes that exercise every edge of the
 * blocking (partial micro-tiles, several depth blocks, M == 1, transposes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"

static int failures;
/* pools of 3 and 16 threads: a product on them must give the bits of the
 * calling thread alone (every element summed in the same order however the
 * grid is cut) */
static ox_thread_pool *pools[2];

static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void check(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                  bool packed, bool sb) {
  uint32_t seed = (uint32_t)(M * 131 + N * 7 + K);
  int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 5;
  float *A = malloc(sizeof(float) * (size_t)((ta ? K : M) * lda));
  float *B = malloc(sizeof(float) * (size_t)((tb ? N : K) * ldb));
  float *C = malloc(sizeof(float) * (size_t)(M * ldc));
  float *C0 = malloc(sizeof(float) * (size_t)(M * ldc));
  float *C2 = malloc(sizeof(float) * (size_t)(M * ldc));
  bool threads_differ = false;
  for (int64_t i = 0; i < (ta ? K : M) * lda; i++) A[i] = rnd(&seed);
  for (int64_t i = 0; i < (tb ? N : K) * ldb; i++) B[i] = rnd(&seed);
  for (int64_t i = 0; i < M * ldc; i++) C[i] = C0[i] = beta == 0.0f || sb ? NAN : rnd(&seed);
  float *bias = sb && beta != 0.0f ? malloc(sizeof(float) * (size_t)(M > 0 ? M : 1)) : NULL;
  for (int64_t i = 0; bias && i < M; i++) bias[i] = rnd(&seed);
  if (packed) {
    ox_err e = {0};
    ox_sgemm_packed *p = ox_sgemm_pack_a(ta, M, K, A, lda, &e);
    if (!p) {
      printf("pack failed\n");
      failures++;
      return;
    }
    if (!tb && alpha == 1.0f && sb) /* B read in place; beta != 0 here means a row bias */
      ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_INPLACE, .pa = p, .N = N, .B = B, .ldb = ldb,
                              .bias = bias, .C = C, .ldc = ldc});
    else
      for (int q = 0; q <= 2; q++) { /* no pool, then each pool into C2 */
        float *Cq = q ? C2 : C;
        memcpy(Cq, C0, sizeof(float) * (size_t)(M * ldc));
        ox_gemm(&(ox_gemm_desc){.pa = p, .N = N, .B = B, .ldb = ldb, .trans_b = tb,
                                .alpha = alpha, .beta = beta, .C = Cq, .ldc = ldc,
                                .pool = q ? pools[q - 1] : NULL});
        if (q && memcmp(C, C2, sizeof(float) * (size_t)(M * ldc)) != 0) threads_differ = true;
      }
    ox_sgemm_packed_free(p);
  } else {
    for (int q = 0; q <= 2; q++) {
      float *Cq = q ? C2 : C;
      memcpy(Cq, C0, sizeof(float) * (size_t)(M * ldc));
      ox_gemm(&(ox_gemm_desc){.M = M, .N = N, .K = K, .A = A, .lda = lda, .trans_a = ta, .B = B,
                              .ldb = ldb, .trans_b = tb, .alpha = alpha, .beta = beta, .C = Cq,
                              .ldc = ldc, .pool = q ? pools[q - 1] : NULL});
      if (q && memcmp(C, C2, sizeof(float) * (size_t)(M * ldc)) != 0) threads_differ = true;
    }
  }
  if (threads_differ) {
    printf("FAIL ta=%d tb=%d M=%lld N=%lld K=%lld packed=%d: threads change the bits\n", ta, tb,
           (long long)M, (long long)N, (long long)K, packed);
    failures++;
  }
  double maxerr = 0.0;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < K; k++)
        s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
             (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
      double want = alpha * s + (bias                 ? (double)bias[i]
                                 : beta == 0.0f || sb ? 0.0
                                                      : beta * (double)C0[i * ldc + j]);
      double err = fabs(want - (double)C[i * ldc + j]) / (1.0 + fabs(want));
      if (!(err <= maxerr)) maxerr = isnan(err) ? INFINITY : err;
    }
  /* columns past N must be untouched */
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = N; j < ldc; j++)
      if (memcmp(&C[i * ldc + j], &C0[i * ldc + j], sizeof(float)) != 0) maxerr = INFINITY;
  if (maxerr > 1e-4 * (1.0 + (double)K / 64.0)) {
    printf("FAIL ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g packed=%d sb=%d: err %g\n", ta,
           tb, (long long)M, (long long)N, (long long)K, alpha, beta, packed, sb, maxerr);
    failures++;
  }
  free(A);
  free(B);
  free(C);
  free(C0);
  free(C2);
  free(bias);
}

/* ---- epilogues: act(A * B + bias + R) against the plain product followed by
 * the activations written from the operator definitions ---- */

typedef struct strip_src {
  const float *B;
  int64_t ldb;
} strip_src;

static void strip_copy(void *ctx, int64_t k0, int64_t kc, int64_t j0, int n, float *buf) {
  const strip_src *s = ctx;
  for (int64_t k = 0; k < kc; k++)
    for (int j = 0; j < 32; j++) buf[k * 32 + j] = j < n ? s->B[(k0 + k) * s->ldb + j0 + j] : 0.0f;
}

static float act_ref(int act, float al, float be, float v) {
  switch (act) {
    case OX_ACT_RELU:
      return v > 0.0f ? v : 0.0f;
    case OX_ACT_LEAKY:
      return v < 0.0f ? al * v : v;
    case OX_ACT_CLIP:
      return v < al ? al : v > be ? be : v;
    case OX_ACT_HSIGMOID: {
      float t = al * v + be;
      return t > 1.0f ? 1.0f : t < 0.0f ? 0.0f : t;
    }
    case OX_ACT_HSWISH: {
      float t = v / 6.0f + 0.5f;
      return v * (t > 1.0f ? 1.0f : t < 0.0f ? 0.0f : t);
    }
    default:
      return v;
  }
}

static void check_epi(int64_t M, int64_t N, int64_t K, int act, bool res, bool strips) {
  uint32_t seed = (uint32_t)(M * 31 + N * 17 + K + act);
  int64_t ldb = N + 3, ldc = N + 2, ldr = N + 2;
  float *A = malloc(sizeof(float) * (size_t)(M * K + 1));
  float *B = malloc(sizeof(float) * (size_t)(K * ldb + 1));
  float *C = malloc(sizeof(float) * (size_t)(M * ldc));
  float *C0 = malloc(sizeof(float) * (size_t)(M * ldc));
  float *R = malloc(sizeof(float) * (size_t)(M * ldr));
  float *bias = malloc(sizeof(float) * (size_t)M);
  for (int64_t i = 0; i < M * K; i++) A[i] = rnd(&seed);
  for (int64_t i = 0; i < K * ldb; i++) B[i] = rnd(&seed);
  for (int64_t i = 0; i < M * ldr; i++) R[i] = 4.0f * rnd(&seed);
  for (int64_t i = 0; i < M; i++) bias[i] = 2.0f * rnd(&seed);
  for (int64_t i = 0; i < M * ldc; i++) C[i] = C0[i] = NAN;
  ox_err e = {0};
  ox_sgemm_packed *p = ox_sgemm_pack_a(false, M, K, A, K, &e);
  if (!p) {
    printf("pack failed\n");
    failures++;
    return;
  }
  float al = act == OX_ACT_CLIP ? -0.5f : 0.3f, be = act == OX_ACT_CLIP ? 0.75f : 0.4f;
  ox_sgemm_epi ep = {act, al, be, res ? R : NULL, ldr};
  strip_src src = {B, ldb};
  bool ran = true;
  if (strips) {
    ox_gemm_desc d = {.b = OX_GEMM_B_STRIPS, .pa = p, .N = N, .strip = strip_copy,
                      .strip_ctx = &src, .bias = bias, .ep = &ep, .C = C, .ldc = ldc};
    ran = ox_gemm(&d);
    d.ep = NULL;
    d.C = C0;
    if (ran) ox_gemm(&d);
  } else {
    ox_gemm_desc d = {.b = OX_GEMM_B_INPLACE, .pa = p, .N = N, .B = B, .ldb = ldb, .bias = bias,
                      .ep = &ep, .C = C, .ldc = ldc};
    ox_gemm(&d);
    d.ep = NULL;
    d.C = C0;
    ox_gemm(&d);
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < M && ran; i++)
    for (int64_t j = 0; j < ldc; j++) {
      float got = C[i * ldc + j], want = C0[i * ldc + j];
      if (j < N) {
        if (res) want = want + R[i * ldr + j];
        want = act_ref(act, al, be, want);
      }
      bool same = memcmp(&got, &want, sizeof got) == 0 ||
                  (act == OX_ACT_HSIGMOID && fabsf(got - want) <= 1e-6f * (1.0f + fabsf(want)));
      if (!same && bad++ < 3)
        printf(
            "FAIL epilogue %d res=%d strips=%d M=%lld N=%lld K=%lld at %lld,%lld: %.9g vs %.9g\n",
            act, res, strips, (long long)M, (long long)N, (long long)K, (long long)i, (long long)j,
            got, want);
    }
  failures += bad > 0;
  ox_sgemm_packed_free(p);
  free(A);
  free(B);
  free(C);
  free(C0);
  free(R);
  free(bias);
}

int main(void) {
  ox_err e = {0};
  pools[0] = ox_thread_pool_new(3, &e);
  pools[1] = ox_thread_pool_new(16, &e);
  static const int64_t shapes[][3] = {{1, 1, 1},     {1, 37, 19},    {5, 1, 7},     {12, 32, 8},
                                      {13, 33, 9},   {6, 16, 300},   {25, 70, 257}, {1, 1000, 600},
                                      {64, 49, 576}, {150, 200, 40}, {7, 3100, 5},  {300, 17, 520},
                                      {1, 4100, 9},  {3, 8200, 14},  {20, 36, 50},  {13, 45, 70},
                                      {6, 9, 33},    {4, 2, 33},     {64, 196, 40},
                                      {50, 70, 400}, {49, 33, 30},   {197, 40, 20},
                                      {50, 300, 200}, {197, 100, 64}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int t = 0; t < 4; t++) {
      check(t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, 0.0f, false, false);
      check(t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], 0.5f, 2.0f, false, false);
      /* alpha 1: edge tiles stored by the any-shape tile, C read back */
      check(t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, 0.5f, false, false);
      check(t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, 0.0f, true, false);
      check(t & 1, t & 2, shapes[s][0], shapes[s][1], shapes[s][2], -1.5f, 1.0f, true, false);
      check(t & 1, false, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, 0.0f, true, true);
      check(t & 1, false, shapes[s][0], shapes[s][1], shapes[s][2], 1.0f, 0.5f, true, true);
    }
  check(false, false, 4, 5, 0, 1.0f, 0.5f, false, false);
  check(false, false, 4, 5, 0, 1.0f, 0.5f, true, true);
  /* narrow tiles too: 16 columns and a few left (49 = 32 + 16 + 1, 36 = 32 + 4 with an
   * 8-row panel), a lone 16-or-fewer strip, short row panels */
  static const int64_t eshapes[][3] = {{5, 7, 9},     {13, 40, 300}, {30, 200, 20}, {64, 33, 520},
                                       {64, 49, 576}, {20, 36, 50},  {12, 8, 40},   {6, 9, 33},
                                       {4, 2, 33},    {40, 20, 70}};
  for (size_t s = 0; s < sizeof eshapes / sizeof eshapes[0]; s++)
    for (int act = OX_ACT_NONE; act <= OX_ACT_HSWISH; act++)
      for (int v = 0; v < 4; v++)
        check_epi(eshapes[s][0], eshapes[s][1], eshapes[s][2], act, v & 1, v & 2);
  ox_thread_pool_free(pools[0]);
  ox_thread_pool_free(pools[1]);
  printf("gemm (%s): %d failures\n", ox_sgemm_isa(), failures);
  return failures ? 1 : 0;
}
