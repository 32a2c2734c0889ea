/* gemm_avx2.c - the float GEMM's AVX2 + FMA level: the 6 x 16 micro-kernel,
 * the GEMV, packed-B rows and the epilogue compiled for AVX2. The dispatch
 * table (gemm.c) takes them through ox_gemm_fill_avx2. */
#include <string.h>

#include "gemm_impl.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#include "gemm_loops.h"

/* ---- AVX2 + FMA: 6 x 16 (12 ymm accumulators) ---- */
__attribute__((target("avx2,fma"))) static void ukernel_avx2(int64_t kc, const float *a,
                                                             const float *b, float *c, int64_t ldc,
                                                             float alpha, float beta) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k = 0; k < kc; k++) {
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), av;
    _mm_prefetch((const char *)(a + 384), _MM_HINT_T0); /* see OX_BY_WIDTH */
    av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += 6;
    b += 16;
  }
  __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  __m256 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  for (int i = 0; i < 6; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      __m256 r = _mm256_mul_ps(va, acc[2 * i + h]);
      if (beta != 0.0f) r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8 * h), r);
      _mm256_storeu_ps(ci + 8 * h, r);
    }
  }
}

__attribute__((target("avx2,fma"))) static void pgemv_avx2(const pgemv_job *j, int64_t p0,
                                                           int64_t p1) {
  OX_PGEMV_BODY(16);
}

/* the portable exponential, compiled as the operators' loops are at this
 * level (the same contraction into multiply-adds as theirs) */
__attribute__((target("avx2"))) static void silu_row(float *c, int64_t n) {
  for (int64_t j = 0; j < n; j++) c[j] = ox_silu1(c[j]);
}

__attribute__((target("avx2"))) static void epi_avx2(const ox_sgemm_epi *ep, int64_t M, int64_t N,
                                                     float *C, int64_t ldc) {
  epi_rows(ep, M, N, C, ldc);
}

bool ox_gemm_fill_avx2(ox_gemm_table *t) {
  t->uk = (ukernel){6, 16, ukernel_avx2, "avx2"};
  t->epi = epi_avx2;
  t->pgemv = pgemv_avx2;
  return true;
}

#else
bool ox_gemm_fill_avx2(ox_gemm_table *t) {
  (void)t;
  return false;
}
#endif
