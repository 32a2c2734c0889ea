/* gemm.c - portable SGEMM: rows of C in parallel, i-k-j loop order so the
 * inner loop runs over contiguous rows of B and C. */
#include "gemm.h"

#include <string.h>

typedef struct gemm_args {
  bool ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  float alpha, beta;
  const float *A, *B;
  float *C;
} gemm_args;

static void gemm_rows(void *arg, int64_t r0, int64_t r1) {
  const gemm_args *g = arg;
  for (int64_t i = r0; i < r1; i++) {
    float *c = g->C + i * g->ldc;
    if (g->beta == 0.0f)
      memset(c, 0, (size_t)g->N * sizeof(float));
    else if (g->beta != 1.0f)
      for (int64_t j = 0; j < g->N; j++) c[j] *= g->beta;
    for (int64_t k = 0; k < g->K; k++) {
      float a = g->alpha * (g->ta ? g->A[k * g->lda + i] : g->A[i * g->lda + k]);
      if (!g->tb) {
        const float *b = g->B + k * g->ldb;
        for (int64_t j = 0; j < g->N; j++) c[j] += a * b[j];
      } else {
        const float *b = g->B + k;
        for (int64_t j = 0; j < g->N; j++) c[j] += a * b[j * g->ldb];
      }
    }
  }
}

void ox_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, ox_thread_pool *pool) {
  gemm_args g = {trans_a, trans_b, M, N, K, lda, ldb, ldc, alpha, beta, A, B, C};
  int64_t grain = N * K > 0 ? 1 + 65536 / (N * K + 1) : M;
  ox_parallel_for(pool, M, grain, gemm_rows, &g);
}
