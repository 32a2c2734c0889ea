/* gemm.c - blocked SGEMM with packed panels and register-blocked
 * micro-kernels selected at run time (see gemm.h).
 *
 * Loop nest (per task): columns in blocks of NC, depth in blocks of KC (B
 * block packed in NR-column panels), rows in blocks of MC (A block packed in
 * MR-row panels), then NR x MR micro-tiles. The micro-kernel keeps an MR x NR
 * tile of C in registers over kc steps and writes alpha * acc + beta * C. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "gemm_impl.h"
#include "vexp.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OX_GEMM_X86 1
#include <immintrin.h>

#include "epi_avx512.h"
#endif

/* ox_sgemm_pa_sb copies each 32-column strip of B when A has more rows */
enum { STRIP_MIN_ROWS = 48 };
/* ... and walks A once per depth block, B in place, when N is at most this */
enum { SMALL_N = 128 };

/* ---- portable micro-kernel: 4 x 16 ---- */
static void ukernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             float alpha, float beta) {
  float acc[4][16];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) {
    const float *bk = b + k * 16, *ak = a + k * 4;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 16; j++) acc[i][j] += ak[i] * bk[j];
  }
  for (int i = 0; i < 4; i++) {
    float *ci = c + i * ldc;
    if (beta == 0.0f)
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j];
    else
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
  }
}

#ifdef OX_GEMM_X86
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

/* ---- AVX-512: 12 x 32 (24 zmm accumulators) ---- */
#define OX_ROW512(i)                          \
  av = _mm512_set1_ps(a[i]);                  \
  c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0); \
  c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1);

__attribute__((target("avx512f"))) static void ukernel_avx512(int64_t kc, const float *a,
                                                              const float *b, float *c, int64_t ldc,
                                                              float alpha, float beta) {
  __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z,
         c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z, c80 = z, c81 = z, c90 = z, c91 = z;
  __m512 cA0 = z, cA1 = z, cB0 = z, cB1 = z;
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), av;
    _mm_prefetch((const char *)(b + 256), _MM_HINT_T0);
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0); /* see OX_BY_WIDTH */
    OX_ROW512(0)
    OX_ROW512(1)
    OX_ROW512(2)
    OX_ROW512(3)
    OX_ROW512(4)
    OX_ROW512(5)
    OX_ROW512(6)
    OX_ROW512(7)
    OX_ROW512(8)
    OX_ROW512(9)
    av = _mm512_set1_ps(a[10]);
    cA0 = _mm512_fmadd_ps(av, b0, cA0);
    cA1 = _mm512_fmadd_ps(av, b1, cA1);
    av = _mm512_set1_ps(a[11]);
    cB0 = _mm512_fmadd_ps(av, b0, cB0);
    cB1 = _mm512_fmadd_ps(av, b1, cB1);
    a += 12;
    b += 32;
  }
  __m512 acc[24] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                    c60, c61, c70, c71, c80, c81, c90, c91, cA0, cA1, cB0, cB1};
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < 12; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      __m512 r = _mm512_mul_ps(va, acc[2 * i + h]);
      if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * h), r);
      _mm512_storeu_ps(ci + 16 * h, r);
    }
  }
}
#undef OX_ROW512

/* The same tile with A read in place: row i of the panel at a + i * lda. */
#define OX_ROWUA(i)                           \
  av = _mm512_set1_ps(r##i[k]);               \
  c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0); \
  c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1);

__attribute__((target("avx512f"))) static void ukernel_avx512_ua(int64_t kc, const float *a,
                                                                 int64_t lda, const float *b,
                                                                 float *c, int64_t ldc,
                                                                 float beta) {
  const float *r0 = a, *r1 = a + lda, *r2 = a + 2 * lda, *r3 = a + 3 * lda, *r4 = a + 4 * lda,
              *r5 = a + 5 * lda, *r6 = a + 6 * lda, *r7 = a + 7 * lda, *r8 = a + 8 * lda,
              *r9 = a + 9 * lda, *rA = a + 10 * lda, *rB = a + 11 * lda;
  __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z,
         c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z, c80 = z, c81 = z, c90 = z, c91 = z,
         cA0 = z, cA1 = z, cB0 = z, cB1 = z;
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), av;
    OX_ROWUA(0)
    OX_ROWUA(1)
    OX_ROWUA(2)
    OX_ROWUA(3)
    OX_ROWUA(4)
    OX_ROWUA(5)
    OX_ROWUA(6)
    OX_ROWUA(7)
    OX_ROWUA(8)
    OX_ROWUA(9)
    OX_ROWUA(A)
    OX_ROWUA(B)
    b += 32;
  }
  __m512 acc[24] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                    c60, c61, c70, c71, c80, c81, c90, c91, cA0, cA1, cB0, cB1};
  __m512 vb = _mm512_set1_ps(beta);
  for (int i = 0; i < 12; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      __m512 r = acc[2 * i + h];
      if (beta != 0.0f) r = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * h), r);
      _mm512_storeu_ps(ci + 16 * h, r);
    }
  }
}
#undef OX_ROWUA

/* The 12 x 32 tile for any B row stride (packed panels: ldb = 32; a matrix
 * read in place: its row stride) and partial tiles: rows past m and columns
 * past n are neither loaded (B) nor stored (C); A rows past m must be zero
 * or are ignored. C = acc + beta * C (beta == 0: C ignored). */
#define OX_ROWG(i, r)                         \
  av = _mm512_set1_ps(a[r]);                  \
  c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0); \
  c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1);

/* Rows [0, m) of a tile (row i: acc[2i] columns 0..15, acc[2i+1] 16..31),
 * columns masked by k0 / k1: C = acc + bias[i] (bias may be NULL) + beta * C
 * (beta == 0: C ignored), then the epilogue ep (NULL: none; its residual
 * starts at the tile's first element). */
__attribute__((target("avx512f"), always_inline)) static inline void store_rows(
    float *c, int64_t ldc, int m, const __m512 *acc, float beta, const float *bias,
    const ox_sgemm_epi *ep, __mmask16 k0, __mmask16 k1) {
  __m512 vb = _mm512_set1_ps(beta);
  for (int i = 0; i < m; i++) {
    float *ci = c + i * ldc;
    __m512 r0 = acc[2 * i], r1 = acc[2 * i + 1];
    if (bias) {
      r0 = _mm512_add_ps(r0, _mm512_set1_ps(bias[i]));
      r1 = _mm512_add_ps(r1, _mm512_set1_ps(bias[i]));
    }
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k0, ci), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(k1, ci + 16), r1);
    }
    if (ep) {
      if (ep->res) {
        const float *ri = ep->res + i * ep->ldr;
        r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(k0, ri));
        r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(k1, ri + 16));
      }
      r0 = ox_bound16(ep, ox_act16(ep, r0));
      r1 = ox_bound16(ep, ox_act16(ep, r1));
    }
    _mm512_mask_storeu_ps(ci, k0, r0);
    _mm512_mask_storeu_ps(ci + 16, k1, r1);
  }
}

/* The k loop of a tile, for full strips (B loaded unmasked: no mask moves
 * competing with the FMAs) or partial ones. The packed A panels follow one
 * another in memory: A is prefetched 64 depth steps ahead, into the next
 * panel at a panel's end (a large layer's weights come from DRAM once per
 * run, and without it their reads did not overlap the products: 0.8 ms of
 * a 2 ms 3x3 convolution with 9.4 MB of weights). */
#define OX_BY_WIDTH(LOOP)                             \
  if (n == 32)                                        \
    LOOP(_mm512_loadu_ps(b), _mm512_loadu_ps(b + 16)) \
  else                                                \
    LOOP(_mm512_maskz_loadu_ps(k0, b), _mm512_maskz_loadu_ps(k1, b + 16))

__attribute__((target("avx512f"))) static void ukernel_avx512_g12(
    int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, float beta,
    const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __mmask16 k1 = (__mmask16)(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
  __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z,
         c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z, c80 = z, c81 = z, c90 = z, c91 = z;
  __m512 cA0 = z, cA1 = z, cB0 = z, cB1 = z;
  const int64_t pf = 8 * ldb;
#define OX_G12_LOOP(LOAD0, LOAD1)                           \
  for (int64_t k = 0; k < kc; k++) {                        \
    __m512 b0 = LOAD0, b1 = LOAD1, av;                      \
    _mm_prefetch((const char *)(b + pf), _MM_HINT_T0);      \
    _mm_prefetch((const char *)(b + pf + 16), _MM_HINT_T0); \
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);     \
    OX_ROWG(0, 0)                                           \
    OX_ROWG(1, 1)                                           \
    OX_ROWG(2, 2)                                           \
    OX_ROWG(3, 3)                                           \
    OX_ROWG(4, 4)                                           \
    OX_ROWG(5, 5)                                           \
    OX_ROWG(6, 6)                                           \
    OX_ROWG(7, 7)                                           \
    OX_ROWG(8, 8)                                           \
    OX_ROWG(9, 9)                                           \
    OX_ROWG(A, 10)                                          \
    OX_ROWG(B, 11)                                          \
    a += 12;                                                \
    b += ldb;                                               \
  }
  OX_BY_WIDTH(OX_G12_LOOP)
#undef OX_G12_LOOP
  __m512 acc[24] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                    c60, c61, c70, c71, c80, c81, c90, c91, cA0, cA1, cB0, cB1};
  store_rows(c, ldc, m, acc, beta, bias, ep, k0, k1);
}
#undef OX_ROWG

/* The first R (4 or 8) rows of a 12-row panel: the last row panel of an M
 * that is not a multiple of 12 costs R / 12 of a full tile. */
__attribute__((target("avx512f"), always_inline)) static inline void ukernel_avx512_short(
    int R, int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc,
    float beta, const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __mmask16 k1 = (__mmask16)(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
  __m512 acc0[8], acc1[8];
#pragma GCC unroll 8
  for (int i = 0; i < R; i++) acc0[i] = acc1[i] = _mm512_setzero_ps();
#define OX_SHORT_LOOP(LOAD0, LOAD1)                       \
  for (int64_t k = 0; k < kc; k++) {                      \
    __m512 b0 = LOAD0, b1 = LOAD1;                        \
    _Pragma("GCC unroll 8") for (int i = 0; i < R; i++) { \
      __m512 av = _mm512_set1_ps(a[i]);                   \
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);         \
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);         \
    }                                                     \
    a += 12;                                              \
    b += ldb;                                             \
  }
  OX_BY_WIDTH(OX_SHORT_LOOP)
#undef OX_SHORT_LOOP
  __m512 acc[16];
  for (int i = 0; i < R; i++) {
    acc[2 * i] = acc0[i];
    acc[2 * i + 1] = acc1[i];
  }
  store_rows(c, ldc, m, acc, beta, bias, ep, k0, k1);
}

/* The first R rows of a 12-row panel by at most 16 columns: one register
 * per row. A tile of 16 or fewer columns through the 32-column kernels did
 * the products of 32 (the masked half still multiplies): a 7 x 7 image (49
 * columns: 32 + 17) paid for 64. Each C element is summed in the same order
 * as by the other kernels, so results do not depend on the tile shape. */
__attribute__((target("avx512f"), always_inline)) static inline void ukernel_avx512_n16(
    int R, int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc,
    float beta, const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __m512 acc0[12];
#pragma GCC unroll 12
  for (int i = 0; i < R; i++) acc0[i] = _mm512_setzero_ps();
#define OX_N16_LOOP(LOAD0)                                         \
  for (int64_t k = 0; k < kc; k++) {                               \
    __m512 b0 = LOAD0;                                             \
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);            \
    _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) acc0[i] = \
        _mm512_fmadd_ps(_mm512_set1_ps(a[i]), b0, acc0[i]);        \
    a += 12;                                                       \
    b += ldb;                                                      \
  }
  if (n == 16)
    OX_N16_LOOP(_mm512_loadu_ps(b))
  else
    OX_N16_LOOP(_mm512_maskz_loadu_ps(k0, b))
#undef OX_N16_LOOP
  __m512 acc[24];
  for (int i = 0; i < R; i++) {
    acc[2 * i] = acc0[i];
    acc[2 * i + 1] = _mm512_setzero_ps();
  }
  store_rows(c, ldc, m, acc, beta, bias, ep, k0, 0);
}

/* A few columns (n <= 8) by the twelve rows of a panel: the panel's twelve
 * values of a depth step are one register, times each column's B value
 * broadcast from memory; n products per step instead of 12 (the leftover of
 * an image width that is not a multiple of 16). Same summation order as
 * the other kernels. */
__attribute__((target("avx512f"), always_inline)) static inline void ukernel_avx512_cols(
    int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, float beta,
    const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __m512 col[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++) col[j] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; k++) {
    __m512 av = _mm512_maskz_loadu_ps(0x0FFF, a);
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++)
      if (j < n) col[j] = _mm512_fmadd_ps(av, _mm512_set1_ps(b[j]), col[j]);
    a += 12;
    b += ldb;
  }
  float t[8][16] __attribute__((aligned(64)));
  for (int j = 0; j < n; j++) _mm512_store_ps(t[j], col[j]);
  __m512 acc[24];
  for (int i = 0; i < m; i++) {
    float row[16] __attribute__((aligned(64))) = {0};
    for (int j = 0; j < n; j++) row[j] = t[j][i];
    acc[2 * i] = _mm512_load_ps(row);
    acc[2 * i + 1] = _mm512_setzero_ps();
  }
  store_rows(c, ldc, m, acc, beta, bias, ep, (__mmask16)((1u << n) - 1u), 0);
}

/* Tiles narrower than 32 columns: 16 at a time, and a leftover of a few
 * columns by ukernel_avx512_cols when that needs fewer products than a
 * 16-column register per row (R rows: n <= R - 4). */
__attribute__((target("avx512f"))) static void ukernel_avx512_narrow(
    int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, float beta,
    const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  int R = m <= 4 ? 4 : m <= 8 ? 8 : 12;
  int w = n >= 16 ? 16 : n <= R - 4 ? 0 : n;
  if (w == 16 && R == 12)
    ukernel_avx512_n16(12, kc, a, b, ldb, c, ldc, beta, bias, ep, m, 16);
  else if (w == 16 && R == 8)
    ukernel_avx512_n16(8, kc, a, b, ldb, c, ldc, beta, bias, ep, m, 16);
  else if (w == 16)
    ukernel_avx512_n16(4, kc, a, b, ldb, c, ldc, beta, bias, ep, m, 16);
  else if (w > 0 && R == 12)
    ukernel_avx512_n16(12, kc, a, b, ldb, c, ldc, beta, bias, ep, m, w);
  else if (w > 0 && R == 8)
    ukernel_avx512_n16(8, kc, a, b, ldb, c, ldc, beta, bias, ep, m, w);
  else if (w > 0)
    ukernel_avx512_n16(4, kc, a, b, ldb, c, ldc, beta, bias, ep, m, w);
  int r = n - w;
  if (r <= 0) return;
  ox_sgemm_epi te;
  if (ep && w) {
    te = ox_sgemm_epi_at(ep, 0, w);
    ep = &te;
  }
  b += w;
  c += w;
  switch (r) { /* the column count fixed at compile time: no tests in the depth loop */
#define OX_COLS(N)                                                    \
  case N:                                                             \
    ukernel_avx512_cols(kc, a, b, ldb, c, ldc, beta, bias, ep, m, N); \
    break;
    OX_COLS(1)
    OX_COLS(2)
    OX_COLS(3)
    OX_COLS(4)
    OX_COLS(5)
    OX_COLS(6)
    OX_COLS(7)
    OX_COLS(8)
#undef OX_COLS
    default:
      break;
  }
}

/* Any tile of the 12-row panel layout; bias: NULL or the m row biases. */
__attribute__((target("avx512f"))) static void ukernel_avx512_g(
    int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, float beta,
    const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  int R = m <= 4 ? 4 : m <= 8 ? 8 : 12;
  if (n <= 16 || (n < 32 && n - 16 <= R - 4)) {
    ukernel_avx512_narrow(kc, a, b, ldb, c, ldc, beta, bias, ep, m, n);
    return;
  }
  if (m <= 4)
    ukernel_avx512_short(4, kc, a, b, ldb, c, ldc, beta, bias, ep, m, n);
  else if (m <= 8)
    ukernel_avx512_short(8, kc, a, b, ldb, c, ldc, beta, bias, ep, m, n);
  else
    ukernel_avx512_g12(kc, a, b, ldb, c, ldc, beta, bias, ep, m, n);
}
#endif

ukernel ox_gemm_kernel(void) {
#ifdef OX_GEMM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return (ukernel){12, 32, ukernel_avx512, "avx512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return (ukernel){6, 16, ukernel_avx2, "avx2"};
#endif
  return (ukernel){4, 16, ukernel_portable, "portable"};
}

const char *ox_sgemm_isa(void) { return ox_gemm_kernel().name; }

bool ox_sgemm_has_ua(void) {
#ifdef OX_GEMM_X86
  return ox_gemm_kernel().fn == ukernel_avx512;
#else
  return false;
#endif
}

/* ---- packing ---- */
/* Rows [i0, i0+mc) x depth [k0, k0+kc) of op(A) into MR-row panels: panel p
 * holds kc groups of MR values (rows past M are zero). */
#if defined(__x86_64__)
/* Twelve rows of A, kc deep, into one 12-row panel: 16 columns at a time as
 * a 16 x 16 transpose in registers (rows 12-15 zero), each column's twelve
 * values stored at once. The element-wise scatter took about as much time
 * as a tenth of the products in a transformer's GEMMs (A is the activation,
 * packed on every call). */
__attribute__((target("avx512f"))) static void pack_a12_avx512(const float *s, int64_t lda,
                                                               int64_t kc, float *d) {
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    __m512 r[16], t[16];
    for (int i = 0; i < 12; i++) r[i] = _mm512_loadu_ps(s + i * lda + k);
    for (int i = 12; i < 16; i++) r[i] = _mm512_setzero_ps();
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* r[4g + m], lane l: column 4l + m of rows 4g .. 4g + 3 */
    for (int g = 0; g < 16; g += 4) {
      r[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
      r[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
      r[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
      r[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int m = 0; m < 4; m++) {
      __m512 a = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88);
      __m512 b = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
      __m512 c = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
      __m512 e = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
      _mm512_mask_storeu_ps(d + (k + m) * 12, 0x0FFF, _mm512_shuffle_f32x4(a, c, 0x88));
      _mm512_mask_storeu_ps(d + (k + 4 + m) * 12, 0x0FFF, _mm512_shuffle_f32x4(b, e, 0x88));
      _mm512_mask_storeu_ps(d + (k + 8 + m) * 12, 0x0FFF, _mm512_shuffle_f32x4(a, c, 0xDD));
      _mm512_mask_storeu_ps(d + (k + 12 + m) * 12, 0x0FFF, _mm512_shuffle_f32x4(b, e, 0xDD));
    }
  }
  for (; k < kc; k++)
    for (int i = 0; i < 12; i++) d[k * 12 + i] = s[i * lda + k];
}
#endif

void ox_gemm_pack_a(int mr, bool ta, const float *A, int64_t lda, int64_t M, int64_t i0, int64_t mc,
                    int64_t k0, int64_t kc, float *dst) {
  for (int64_t p = 0; p < mc; p += mr) {
    int64_t rows = mc - p < mr ? mc - p : mr;
    float *d = dst + p * kc;
    if (i0 + p + rows > M) rows = M - (i0 + p);
#if defined(__x86_64__)
    /* twelve-row panels belong to the AVX-512 kernel: the CPU has it */
    if (!ta && mr == 12 && rows == 12) {
      pack_a12_avx512(A + (i0 + p) * lda + k0, lda, kc, d);
      continue;
    }
#endif
    if (!ta) { /* read each row of A contiguously, write with stride mr */
      for (int64_t i = 0; i < rows; i++) {
        const float *s = A + (i0 + p + i) * lda + k0;
        for (int64_t k = 0; k < kc; k++) d[k * mr + i] = s[k];
      }
      for (int64_t i = rows; i < mr; i++)
        for (int64_t k = 0; k < kc; k++) d[k * mr + i] = 0.0f;
    } else {
      for (int64_t k = 0; k < kc; k++) {
        const float *s = A + (k0 + k) * lda + i0 + p;
        int64_t i = 0;
        for (; i < rows; i++) d[k * mr + i] = s[i];
        for (; i < mr; i++) d[k * mr + i] = 0.0f;
      }
    }
  }
}

/* Columns [j0, j0+nc) x depth [k0, k0+kc) of op(B) into NR-column panels. */

void ox_gemm_pack_b_panels(int nr, bool tb, const f32_unaligned *B, int64_t ldb, int64_t k0,
                           int64_t kc, int64_t j0, int64_t nc, float *dst) {
  for (int64_t p = 0; p < nc; p += nr) {
    int64_t cols = nc - p < nr ? nc - p : nr;
    float *d = dst + p * kc;
    if (!tb) {
      const f32_unaligned *s = B + k0 * ldb + j0 + p;
      if (cols == nr) {
        for (int64_t k = 0; k < kc; k++, s += ldb, d += nr)
          memcpy(d, s, (size_t)nr * sizeof(float));
      } else {
        for (int64_t k = 0; k < kc; k++, s += ldb, d += nr) {
          int64_t j = 0;
          for (; j < cols; j++) d[j] = s[j];
          for (; j < nr; j++) d[j] = 0.0f;
        }
      }
    } else {
      for (int64_t j = 0; j < cols; j++) {
        const f32_unaligned *s = B + (j0 + p + j) * ldb + k0;
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = s[k];
      }
      for (int64_t j = cols; j < nr; j++)
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = 0.0f;
    }
  }
}

struct ox_sgemm_packed {
  int64_t M, K, Mpad;
  int mr, nr;
  float *data; /* for depth block pc: data + pc * Mpad, panel r at + r * kc */
};

/* ---- the blocked product over rows [m0, m1) and columns [n0, n1) ---- */

static void gemm_naive(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; i++)
    for (int64_t j = n0; j < n1; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < g->K; k++) {
        float a = g->ta ? g->A[k * g->lda + i] : g->A[i * g->lda + k];
        float b = g->tb ? g->B[j * g->ldb + k] : g->B[k * g->ldb + j];
        s += (double)a * (double)b;
      }
      float *c = g->C + i * g->ldc + j;
      *c = g->beta == 0.0f ? g->alpha * (float)s : g->alpha * (float)s + g->beta * *c;
    }
}

/* Micro-kernel tiles over mc rows of packed A (apan) and nc columns of
 * packed B (panels of kc x nr from bblk) into C (row stride ldc); edge tiles
 * through a scratch tile. */
void ox_gemm_macro_tile(const gemm_job *g, const float *apan, const float *bblk, int64_t kc,
                        int64_t mc, float *C, int64_t nc, float beta) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  float tile[12 * 32];
  int64_t tiles = (mc + mr - 1) / mr;
  for (int64_t jr = 0; jr < nc; jr += nr) {
    int64_t n = nc - jr < nr ? nc - jr : nr;
    const float *bpan = bblk + jr * kc;
    /* a B packed whole comes from memory: the next panel is fetched into
     * L2 a share per tile while this one computes */
    const char *next = g->bpre && jr + nr < nc ? (const char *)(bpan + (int64_t)nr * kc) : NULL;
    int64_t share = next ? ((int64_t)nr * kc * 4 / 64 + tiles - 1) / tiles : 0;
    for (int64_t ir = 0; ir < mc; ir += mr) {
      int64_t m = mc - ir < mr ? mc - ir : mr;
      float *c = C + ir * g->ldc + jr;
#ifdef OX_GEMM_X86
      for (int64_t q = 0; q < share; q++) {
        int64_t line = ir / mr * share + q;
        if (line * 64 < (int64_t)nr * kc * 4) _mm_prefetch(next + line * 64, _MM_HINT_T1);
      }
#endif
      if (m == mr && n == nr) {
        g->uk.fn(kc, apan + ir * kc, bpan, c, g->ldc, g->alpha, beta);
        continue;
      }
      g->uk.fn(kc, apan + ir * kc, bpan, tile, nr, 1.0f, 0.0f);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          float *cc = c + i * g->ldc + j;
          float v = g->alpha * tile[i * nr + j];
          *cc = beta == 0.0f ? v : v + beta * *cc;
        }
    }
  }
}

void ox_gemm_block(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  int64_t ncb = n1 - n0 < NC_BLOCK ? n1 - n0 : NC_BLOCK;
  int64_t ncb_pad = (ncb + nr - 1) / nr * nr;
  int64_t kcb = g->K < KC_BLOCK ? g->K : KC_BLOCK;
  /* the thread's scratch (slots 0 and 1): buffers allocated per call were
   * faulted in anew on every run */
  float *bp = g->bpre ? NULL : ox_scratch(0, (size_t)(ncb_pad * kcb * 4));
  float *ap = g->pa ? NULL : ox_scratch(1, (size_t)(MC_BLOCK * kcb * 4));
  if ((!g->bpre && !bp) || (!g->pa && !ap)) {
    if (g->bpre) { /* A is plain here (B pre-packed): compute from B's panels */
      for (int64_t i = m0; i < m1; i++)
        for (int64_t j = n0; j < n1; j++) {
          double s = 0.0;
          for (int64_t pc = 0; pc < g->K; pc += KC_BLOCK) {
            int64_t kc = g->K - pc < KC_BLOCK ? g->K - pc : KC_BLOCK;
            const float *pan = g->bpre + pc * g->bpre_npad + (j / nr) * nr * kc + j % nr;
            for (int64_t k = 0; k < kc; k++)
              s += (double)g->A[i * g->lda + pc + k] * (double)pan[k * nr];
          }
          g->C[i * g->ldc + j] = (float)s;
        }
      return;
    }
    if (g->pa) { /* cannot fall back without the raw A: compute from the panels */
      for (int64_t i = m0; i < m1; i++)
        for (int64_t j = n0; j < n1; j++) {
          double s = 0.0;
          for (int64_t pc = 0; pc < g->K; pc += KC_BLOCK) {
            int64_t kc = g->K - pc < KC_BLOCK ? g->K - pc : KC_BLOCK;
            const float *pan = g->pa->data + pc * g->pa->Mpad + (i / mr) * mr * kc;
            for (int64_t k = 0; k < kc; k++) {
              float b = g->tb ? g->B[j * g->ldb + pc + k] : g->B[(pc + k) * g->ldb + j];
              s += (double)pan[k * mr + i % mr] * (double)b;
            }
          }
          float *c = g->C + i * g->ldc + j;
          *c = g->beta == 0.0f ? g->alpha * (float)s : g->alpha * (float)s + g->beta * *c;
        }
      return;
    }
    gemm_naive(g, m0, m1, n0, n1);
    return;
  }
  for (int64_t jc = n0; jc < n1; jc += NC_BLOCK) {
    int64_t nc = n1 - jc < NC_BLOCK ? n1 - jc : NC_BLOCK;
    for (int64_t pc = 0; pc < g->K; pc += KC_BLOCK) {
      int64_t kc = g->K - pc < KC_BLOCK ? g->K - pc : KC_BLOCK;
      float beta = pc == 0 ? g->beta : 1.0f;
      const float *bblk = bp;
      if (g->bpre) /* block pc starts at pc * npad, panel of column jc at jc * kc */
        bblk = g->bpre + pc * g->bpre_npad + jc * kc;
      else
        ox_gemm_pack_b_panels(nr, g->tb, g->B, g->ldb, pc, kc, jc, nc, bp);
      for (int64_t ic = m0; ic < m1; ic += MC_BLOCK) {
        int64_t mc = m1 - ic < MC_BLOCK ? m1 - ic : MC_BLOCK;
        const float *apan;
        if (g->pa)
          apan = g->pa->data + pc * g->pa->Mpad + ic * kc;
        else {
          ox_gemm_pack_a(mr, g->ta, g->A, g->lda, g->M, ic, (mc + mr - 1) / mr * mr, pc, kc, ap);
          apan = ap;
        }
        ox_gemm_macro_tile(g, apan, bblk, kc, mc, g->C + ic * g->ldc + jc, nc, beta);
      }
    }
  }
}

static void gemm_task(void *arg, int64_t t0, int64_t t1) {
  const gemm_job *g = arg;
  for (int64_t t = t0; t < t1; t++) {
    int64_t lo = t * g->chunk;
    void (*block)(const gemm_job *, int64_t, int64_t, int64_t, int64_t) =
        g->bpre ? ox_gemm_block_pb : ox_gemm_block;
    if (g->split == 0) {
      int64_t hi = lo + g->chunk < g->N ? lo + g->chunk : g->N;
      if (lo < hi) block(g, 0, g->M, lo, hi);
    } else {
      int64_t hi = lo + g->chunk < g->M ? lo + g->chunk : g->M;
      if (lo < hi) block(g, lo, hi, 0, g->N);
    }
  }
}

/* beta * C for the degenerate K == 0 product. */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    if (beta == 0.0f)
      memset(c, 0, (size_t)N * sizeof(float));
    else
      for (int64_t j = 0; j < N; j++) c[j] *= beta;
  }
}

/* C[i, :] += bias[i] (bias may be NULL). */
static void add_row_bias(int64_t M, int64_t N, const float *bias, float *C, int64_t ldc) {
  if (!bias) return;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) C[i * ldc + j] += bias[i];
}

/* Row vector times matrix (M == 1, B not transposed): c = alpha * a B + beta c,
 * accumulated over rows of B so the inner loop is contiguous. */
typedef struct gemv_job {
  int64_t K, ldb;
  float alpha, beta;
  const float *a, *B;
  float *c;
  int64_t chunk, N;
} gemv_job;

/* Columns in blocks of GEMV_BLOCK (the sums stay in L1) and rows four at a
 * time: each step reads four row segments of B (streams the prefetcher
 * follows; the rows ahead are also prefetched by hand, since a segment is
 * a small part of a page) and loads and stores the sums once per four
 * rows instead of once per row. */
enum { GEMV_BLOCK = 4096, GEMV_AHEAD = 4 };

static inline void gemv_rows_generic(const gemv_job *g, int64_t j0, int64_t j1) {
  float acc[GEMV_BLOCK];
  const int64_t K = g->K, ldb = g->ldb;
  for (int64_t jb = j0; jb < j1; jb += GEMV_BLOCK) {
    int64_t n = j1 - jb < GEMV_BLOCK ? j1 - jb : GEMV_BLOCK;
    memset(acc, 0, (size_t)n * sizeof(float));
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
      const float *b0 = g->B + k * ldb + jb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      float a0 = g->a[k], a1 = g->a[k + 1], a2 = g->a[k + 2], a3 = g->a[k + 3];
      if (k + GEMV_AHEAD + 4 <= K) {
        const float *p = b0 + GEMV_AHEAD * ldb;
        for (int64_t j = 0; j < n; j += 16)
          for (int r = 0; r < 4; r++) __builtin_prefetch(p + r * ldb + j);
      }
      for (int64_t j = 0; j < n; j++)
        acc[j] += (a0 * b0[j] + a1 * b1[j]) + (a2 * b2[j] + a3 * b3[j]);
    }
    for (; k < K; k++) {
      float a = g->a[k];
      const float *b = g->B + k * ldb + jb;
      for (int64_t j = 0; j < n; j++) acc[j] += a * b[j];
    }
    float *c = g->c + jb;
    for (int64_t j = 0; j < n; j++)
      c[j] = g->beta == 0.0f ? g->alpha * acc[j] : g->alpha * acc[j] + g->beta * c[j];
  }
}

#ifdef OX_GEMM_X86
__attribute__((target("avx512f"))) static void gemv_rows_avx512(const gemv_job *g, int64_t j0,
                                                                int64_t j1) {
  gemv_rows_generic(g, j0, j1);
}
__attribute__((target("avx2,fma"))) static void gemv_rows_avx2(const gemv_job *g, int64_t j0,
                                                               int64_t j1) {
  gemv_rows_generic(g, j0, j1);
}
#endif

/* Dot products (B transposed): c[j] = alpha * <a, B[j, :]> + beta c[j]. */
static float dot_generic(const float *a, const float *b, int64_t K) {
  float acc[8] = {0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int i = 0; i < 8; i++) acc[i] += a[k + i] * b[k + i];
  float sum = 0.0f;
  for (int i = 0; i < 8; i++) sum += acc[i];
  for (; k < K; k++) sum += a[k] * b[k];
  return sum;
}

#ifdef OX_GEMM_X86
__attribute__((target("avx512f"))) static float dot_avx512(const float *a, const float *b,
                                                           int64_t K) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t k = 0;
  for (; k + 64 <= K; k += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k + 16), _mm512_loadu_ps(b + k + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k + 32), _mm512_loadu_ps(b + k + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k + 48), _mm512_loadu_ps(b + k + 48), s3);
  }
  for (; k + 16 <= K; k += 16)
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), s0);
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  for (; k < K; k++) sum += a[k] * b[k];
  return sum;
}
#endif

typedef struct dot_job {
  int64_t K, ldb, N, chunk;
  float alpha, beta;
  const float *a, *B;
  float *c;
} dot_job;

#ifdef OX_GEMM_X86
#define DOT_ROWS 8
/* Eight dot products at once: a is loaded once for eight rows of B (eight
 * sequential streams, enough in flight to keep one core at the memory's
 * bandwidth), the sums reduced together at the end. */
__attribute__((target("avx512f"))) static void dotn_avx512(const float *a, const float *b,
                                                           int64_t ldb, int64_t K, float *out) {
  __m512 s[DOT_ROWS];
  for (int r = 0; r < DOT_ROWS; r++) s[r] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 x = _mm512_loadu_ps(a + k);
    for (int r = 0; r < DOT_ROWS; r++)
      s[r] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + r * ldb + k), s[r]);
  }
  if (k < K) {
    __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
    __m512 x = _mm512_maskz_loadu_ps(m, a + k);
    for (int r = 0; r < DOT_ROWS; r++)
      s[r] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, b + r * ldb + k), s[r]);
  }
  for (int r = 0; r < DOT_ROWS; r++) out[r] = _mm512_reduce_add_ps(s[r]);
}
#endif

static void dot_task(void *arg, int64_t t0, int64_t t1) {
  const dot_job *g = arg;
  int64_t j0 = t0 * g->chunk, j1 = t1 * g->chunk < g->N ? t1 * g->chunk : g->N;
#ifdef OX_GEMM_X86
  bool avx512 = __builtin_cpu_supports("avx512f");
#endif
  for (int64_t j = j0; j < j1;) {
    float d[DOT_ROWS];
    int n = 1;
#ifdef OX_GEMM_X86
    if (avx512 && j + DOT_ROWS <= j1) {
      dotn_avx512(g->a, g->B + j * g->ldb, g->ldb, g->K, d);
      n = DOT_ROWS;
    } else {
      const float *b = g->B + j * g->ldb;
      d[0] = avx512 ? dot_avx512(g->a, b, g->K) : dot_generic(g->a, b, g->K);
    }
#else
    d[0] = dot_generic(g->a, g->B + j * g->ldb, g->K);
#endif
    for (int r = 0; r < n; r++, j++)
      g->c[j] = g->beta == 0.0f ? g->alpha * d[r] : g->alpha * d[r] + g->beta * g->c[j];
  }
}

static void gemv_task(void *arg, int64_t t0, int64_t t1) {
  const gemv_job *g = arg;
  int64_t j0 = t0 * g->chunk, j1 = t1 * g->chunk < g->N ? t1 * g->chunk : g->N;
  if (j0 >= j1) return;
#ifdef OX_GEMM_X86
  if (__builtin_cpu_supports("avx512f")) {
    gemv_rows_avx512(g, j0, j1);
    return;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    gemv_rows_avx2(g, j0, j1);
    return;
  }
#endif
  gemv_rows_generic(g, j0, j1);
}

/* Tasks for a vector product over N outputs (one task per thread). */
static int64_t vec_chunks(ox_thread_pool *pool, int64_t N, int64_t K, int64_t *chunk) {
  int nt = pool ? ox_thread_pool_size(pool) : 1;
  if (nt < 1 || (double)N * (double)K < 1.0e5) nt = 1;
  *chunk = ((N + nt - 1) / nt + 15) / 16 * 16;
  return (N + *chunk - 1) / *chunk;
}

void ox_gemm_run(gemm_job *g, ox_thread_pool *pool) {
  int nt = pool ? ox_thread_pool_size(pool) : 1;
  if (nt < 1) nt = 1;
  double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
  if (flops < 2.0e6) nt = 1;
  int64_t nr = g->uk.nr, mr = g->uk.mr;
  if (g->N >= nr * 2 * nt || g->M < mr * 2) {
    g->split = 0;
    int64_t per = (g->N + nt - 1) / nt;
    g->chunk = (per + nr - 1) / nr * nr;
    g->ntasks = (g->N + g->chunk - 1) / g->chunk;
  } else {
    g->split = 1;
    int64_t per = (g->M + nt - 1) / nt;
    g->chunk = (per + mr - 1) / mr * mr;
    g->ntasks = (g->M + g->chunk - 1) / g->chunk;
  }
  if (g->ntasks <= 1)
    gemm_task(g, 0, g->ntasks);
  else
    ox_parallel_for(pool, g->ntasks, 1, gemm_task, g);
}

void ox_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, ox_thread_pool *pool) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    scale_c(M, N, beta, C, ldc);
    return;
  }
  /* a few rows: one vector product per row of op(A) (B streamed once per row) */
  if (M <= 4) {
    float *abuf = NULL;
    if (trans_a && lda != 1) {
      abuf = malloc((size_t)K * sizeof(float));
      if (!abuf) goto blocked;
    }
    for (int64_t i = 0; i < M; i++) {
      const float *a = A + (trans_a ? i : i * lda);
      if (abuf) {
        for (int64_t k = 0; k < K; k++) abuf[k] = A[k * lda + i];
        a = abuf;
      }
      int64_t chunk, ntasks = vec_chunks(pool, N, K, &chunk);
      if (!trans_b) {
        gemv_job v = {K, ldb, alpha, beta, a, B, C + i * ldc, chunk, N};
        if (ntasks <= 1)
          gemv_task(&v, 0, 1);
        else
          ox_parallel_for(pool, ntasks, 1, gemv_task, &v);
      } else {
        dot_job v = {K, ldb, N, chunk, alpha, beta, a, B, C + i * ldc};
        if (ntasks <= 1)
          dot_task(&v, 0, 1);
        else
          ox_parallel_for(pool, ntasks, 1, dot_task, &v);
      }
    }
    free(abuf);
    return;
  }
blocked:;
  gemm_job g = {
      ox_gemm_kernel(), trans_a, trans_b, M, N, K, lda, ldb, ldc, alpha, beta, A, B, C, NULL};
  ox_gemm_run(&g, pool);
}

ox_sgemm_packed *ox_sgemm_packed_alloc(int64_t M, int64_t K, ox_err *e) {
  ukernel uk = ox_gemm_kernel();
  ox_sgemm_packed *p = calloc(1, sizeof *p);
  if (!p) {
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld matrix", (long long)M,
               (long long)K);
    return NULL;
  }
  p->M = M;
  p->K = K;
  p->mr = uk.mr;
  p->nr = uk.nr;
  p->Mpad = (M + uk.mr - 1) / uk.mr * uk.mr;
  size_t n;
  if (M < 0 || K < 0 || !ox_mul_size((size_t)p->Mpad, (size_t)(K > 0 ? K : 1), &n) ||
      !ox_mul_size(n, sizeof(float), &n) || !(p->data = aligned_alloc(64, (n + 63) / 64 * 64))) {
    free(p);
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld matrix", (long long)M,
               (long long)K);
    return NULL;
  }
  return p;
}

int ox_sgemm_packed_mr(const ox_sgemm_packed *p) { return p->mr; }

void ox_sgemm_packed_fill(ox_sgemm_packed *p, int64_t m0, int64_t m1, const float *A, int64_t lda) {
  if (m0 < 0 || m1 > p->M || m0 >= m1 || m0 % p->mr) return;
  int64_t rows = m1 - m0, mc = (rows + p->mr - 1) / p->mr * p->mr;
  for (int64_t pc = 0; pc < p->K; pc += KC_BLOCK) {
    int64_t kc = p->K - pc < KC_BLOCK ? p->K - pc : KC_BLOCK;
    ox_gemm_pack_a(p->mr, false, A, lda, rows, 0, mc, pc, kc, p->data + pc * p->Mpad + m0 * kc);
  }
}

ox_sgemm_packed *ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                                 ox_err *e) {
  ox_sgemm_packed *p = ox_sgemm_packed_alloc(M, K, e);
  if (!p) return NULL;
  for (int64_t pc = 0; pc < K; pc += KC_BLOCK) {
    int64_t kc = K - pc < KC_BLOCK ? K - pc : KC_BLOCK;
    ox_gemm_pack_a(p->mr, trans_a, A, lda, M, 0, p->Mpad, pc, kc, p->data + pc * p->Mpad);
  }
  return p;
}

void ox_sgemm_packed_free(ox_sgemm_packed *p) {
  if (!p) return;
  free(p->data);
  free(p);
}

int64_t ox_sgemm_packed_rows(const ox_sgemm_packed *p) { return p->M; }
int64_t ox_sgemm_packed_depth(const ox_sgemm_packed *p) { return p->K; }

void ox_sgemm_pa(const ox_sgemm_packed *A, bool trans_b, int64_t N, float alpha, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc, ox_thread_pool *pool) {
  if (A->M <= 0 || N <= 0) return;
  if (A->K <= 0 || alpha == 0.0f) {
    scale_c(A->M, N, beta, C, ldc);
    return;
  }
  ukernel uk = ox_gemm_kernel();
  gemm_job g = {uk, false, trans_b, A->M, N, A->K, 0, ldb, ldc, alpha, beta, NULL, B, C, A};
  ox_gemm_run(&g, pool);
}

int ox_sgemm_nr(void) { return ox_gemm_kernel().nr; }
int64_t ox_sgemm_kc(void) { return KC_BLOCK; }

size_t ox_sgemm_packed_b_floats(int64_t K, int64_t N) {
  int nr = ox_sgemm_nr();
  int64_t npad = (N + nr - 1) / nr * nr;
  return (size_t)(npad * (K > 0 ? K : 1));
}

void ox_sgemm_pa_pb(const ox_sgemm_packed *A, int64_t N, const float *Bp, float beta, float *C,
                    int64_t ldc) {
  if (A->M <= 0 || N <= 0) return;
  if (A->K <= 0) {
    scale_c(A->M, N, beta, C, ldc);
    return;
  }
  ukernel uk = ox_gemm_kernel();
  const int mr = uk.mr, nr = uk.nr;
  bool avx512 = ox_sgemm_has_ua();
  int64_t npad = (N + nr - 1) / nr * nr;
  float tile[12 * 32];
  for (int64_t pc = 0; pc < A->K; pc += KC_BLOCK) {
    int64_t kc = A->K - pc < KC_BLOCK ? A->K - pc : KC_BLOCK;
    float bt = pc == 0 ? beta : 1.0f;
    const float *bblock = Bp + pc * npad;
    for (int64_t ic = 0; ic < A->M; ic += MC_BLOCK) {
      int64_t mc = A->M - ic < MC_BLOCK ? A->M - ic : MC_BLOCK;
      const float *apan = A->data + pc * A->Mpad + ic * kc;
      for (int64_t jr = 0; jr < N; jr += nr) {
        int64_t n = N - jr < nr ? N - jr : nr;
        const float *bpan = bblock + jr * kc;
        for (int64_t ir = 0; ir < mc; ir += mr) {
          int64_t m = mc - ir < mr ? mc - ir : mr;
          float *c = C + (ic + ir) * ldc + jr;
          if (m == mr && n == nr) {
            uk.fn(kc, apan + ir * kc, bpan, c, ldc, 1.0f, bt);
          } else if (avx512) {
#ifdef OX_GEMM_X86
            ukernel_avx512_g(kc, apan + ir * kc, bpan, nr, c, ldc, bt, NULL, NULL, (int)m, (int)n);
#endif
          } else {
            uk.fn(kc, apan + ir * kc, bpan, tile, nr, 1.0f, 0.0f);
            for (int64_t i = 0; i < m; i++)
              for (int64_t j = 0; j < n; j++) {
                float *cc = c + i * ldc + j;
                *cc = bt == 0.0f ? tile[i * nr + j] : tile[i * nr + j] + bt * *cc;
              }
          }
        }
      }
    }
  }
}

void ox_sgemm_ua_pb(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp,
                    float beta, float *C, int64_t ldc) {
#ifdef OX_GEMM_X86
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    scale_c(M, N, beta, C, ldc);
    return;
  }
  ukernel uk = ox_gemm_kernel();
  const int mr = uk.mr, nr = uk.nr;
  int64_t npad = (N + nr - 1) / nr * nr;
  float tile[12 * 32], edge[12 * KC_BLOCK];
  int64_t Mfull = M / mr * mr;
  for (int64_t pc = 0; pc < K; pc += KC_BLOCK) {
    int64_t kc = K - pc < KC_BLOCK ? K - pc : KC_BLOCK;
    float bt = pc == 0 ? beta : 1.0f;
    const float *bblock = Bp + pc * npad;
    if (Mfull < M) ox_gemm_pack_a(mr, false, A, lda, M, Mfull, mr, pc, kc, edge);
    for (int64_t jr = 0; jr < N; jr += nr) {
      int64_t n = N - jr < nr ? N - jr : nr;
      const float *bpan = bblock + jr * kc;
      for (int64_t ir = 0; ir < M; ir += mr) {
        int64_t m = M - ir < mr ? M - ir : mr;
        float *c = C + ir * ldc + jr;
        if (m == mr && n == nr) {
          ukernel_avx512_ua(kc, A + ir * lda + pc, lda, bpan, c, ldc, bt);
          continue;
        }
        if (m == mr)
          ukernel_avx512_ua(kc, A + ir * lda + pc, lda, bpan, tile, nr, 0.0f);
        else
          uk.fn(kc, edge, bpan, tile, nr, 1.0f, 0.0f);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            float *cc = c + i * ldc + j;
            *cc = bt == 0.0f ? tile[i * nr + j] : tile[i * nr + j] + bt * *cc;
          }
      }
    }
  }
#else
  (void)M, (void)N, (void)K, (void)A, (void)lda, (void)Bp, (void)beta, (void)C, (void)ldc;
#endif
}

/* The same instruction-set clones as the activation kernels (src/ops/unary.c),
 * so that alpha * v + beta is contracted the same way. */
#if defined(__x86_64__) && defined(__GNUC__)
#define OX_EPI_CLONES OX_CLONES("avx512f", "avx2", "default")
#else
#define OX_EPI_CLONES
#endif

#ifdef OX_GEMM_X86
__attribute__((target("avx512f"))) static void silu_row_avx512(float *c, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) _mm512_storeu_ps(c + j, ox_silu16(_mm512_loadu_ps(c + j)));
  if (j < n) {
    __mmask16 m = (__mmask16)((1u << (n - j)) - 1u);
    _mm512_mask_storeu_ps(c + j, m, ox_silu16(_mm512_maskz_loadu_ps(m, c + j)));
  }
}
#endif

/* the portable exponential in the clones of the operators' loop (the
 * same contraction into multiply-adds as theirs) */
OX_EPI_CLONES static void silu_row_portable(float *c, int64_t n) {
  for (int64_t j = 0; j < n; j++) c[j] = ox_silu1(c[j]);
}

/* x sigmoid(x) over a row: with AVX-512 the operators' vector exponential
 * (the Sigmoid kernel takes it there), else the portable one, as theirs */
static void silu_row(float *c, int64_t n) {
#ifdef OX_GEMM_X86
  if (__builtin_cpu_supports("avx512f")) {
    silu_row_avx512(c, n);
    return;
  }
#endif
  silu_row_portable(c, n);
}

/* v = act(v) over one row (one loop per activation: vectorised) */
static inline void act_row(int act, float al, float be, float *c, int64_t n) {
  const float zero = 0.0f, one = 1.0f;
  switch (act) {
    case OX_ACT_RELU:
      for (int64_t j = 0; j < n; j++) c[j] = c[j] > zero ? c[j] : zero;
      break;
    case OX_ACT_LEAKY:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j], m = al * v;
        c[j] = v < zero ? m : v;
      }
      break;
    case OX_ACT_CLIP:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j] < al ? al : c[j];
        c[j] = v > be ? be : v;
      }
      break;
    case OX_ACT_HSIGMOID:
      for (int64_t j = 0; j < n; j++) {
        float t = al * c[j] + be;
        t = t > one ? one : t;
        c[j] = t < zero ? zero : t;
      }
      break;
    case OX_ACT_HSWISH:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j], t = v / 6.0f + 0.5f;
        t = t > one ? one : t;
        c[j] = v * (t < zero ? zero : t);
      }
      break;
    case OX_ACT_SILU:
      silu_row(c, n);
      break;
    default:
      break;
  }
}

/* static: clang makes no exported symbol for a cloned external function */
OX_EPI_CLONES static void epi_apply(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C,
                                    int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *ci = C + i * ldc;
    if (ep->res) {
      const float *ri = ep->res + i * ep->ldr;
      for (int64_t j = 0; j < N; j++) ci[j] += ri[j];
    }
    act_row(ep->act, ep->alpha, ep->beta, ci, N);
    float c = ep->bval;
    if (ep->bound == 1)
      for (int64_t j = 0; j < N; j++) {
        float v = ci[j], r = v > c ? v : c;
        ci[j] = v != v ? v : r;
      }
    else if (ep->bound == 2)
      for (int64_t j = 0; j < N; j++) {
        float v = ci[j], r = v < c ? v : c;
        ci[j] = v != v ? v : r;
      }
  }
}

void ox_sgemm_epi_apply(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C, int64_t ldc) {
  if (!ep || (!ep->res && ep->act == OX_ACT_NONE && !ep->bound)) return;
  epi_apply(ep, M, N, C, ldc);
}

ox_sgemm_epi ox_sgemm_epi_at(const ox_sgemm_epi *ep, int64_t i, int64_t j) {
  ox_sgemm_epi r = *ep;
  if (r.res) r.res += i * r.ldr + j;
  return r;
}

/* NULL when the epilogue does nothing. */
static const ox_sgemm_epi *epi_active(const ox_sgemm_epi *ep) {
  return ep && (ep->res || ep->act != OX_ACT_NONE || ep->bound) ? ep : NULL;
}

#ifdef OX_GEMM_X86
/* One tile through ukernel_avx512_g with the epilogue of its position
 * (ep NULL: none). */
__attribute__((target("avx512f"))) static void tile_epi(int64_t kc, const float *a, const float *b,
                                                        int64_t ldb, float *c, int64_t ldc,
                                                        float beta, const float *bias,
                                                        const ox_sgemm_epi *ep, int64_t ir,
                                                        int64_t jr, int m, int n, int next_n) {
  /* the same rows of the next strip's tile, written a strip from now: their
   * lines fetched while this tile computes (a cold output written through
   * one 128-byte run per row had stalled on every line: a stem convolution
   * ran at half its in-cache speed inside a model) */
  if (next_n > 0 && beta == 0.0f)
    for (int i = 0; i < m; i++) {
      _mm_prefetch((const char *)(c + i * ldc + 32), _MM_HINT_T1);
      if (next_n > 16) _mm_prefetch((const char *)(c + i * ldc + 48), _MM_HINT_T1);
    }
  if (!ep) {
    ukernel_avx512_g(kc, a, b, ldb, c, ldc, beta, bias, NULL, m, n);
    return;
  }
  ox_sgemm_epi te = ox_sgemm_epi_at(ep, ir, jr);
  if (te.res) /* the residual arrives while the tile computes */
    for (int i = 0; i < m; i++) {
      _mm_prefetch((const char *)(te.res + i * te.ldr), _MM_HINT_T0);
      _mm_prefetch((const char *)(te.res + i * te.ldr + 16), _MM_HINT_T0);
    }
  ukernel_avx512_g(kc, a, b, ldb, c, ldc, beta, bias, &te, m, n);
}
#endif

#ifdef OX_GEMM_X86
/* kc rows of n <= 32 columns (row stride ldb) into a 32-float-stride strip:
 * register moves (a memcpy call per 128-byte row was 9% of a 1 x 1
 * convolution). */
__attribute__((target("avx512f"))) static void copy_strip32(float *strip, const float *src,
                                                            int64_t ldb, int64_t kc, int n) {
  if (n == 32) {
    for (int64_t k = 0; k < kc; k++) {
      const float *s = src + k * ldb;
      _mm512_store_ps(strip + k * 32, _mm512_loadu_ps(s));
      _mm512_store_ps(strip + k * 32 + 16, _mm512_loadu_ps(s + 16));
    }
    return;
  }
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __mmask16 k1 = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1u : 0u);
  for (int64_t k = 0; k < kc; k++) {
    const float *s = src + k * ldb;
    _mm512_store_ps(strip + k * 32, _mm512_maskz_loadu_ps(k0, s));
    _mm512_store_ps(strip + k * 32 + 16, _mm512_maskz_loadu_ps(k1, s + 16));
  }
}

/* copy_strip32 with the prologue: row k times scale[k] plus bias[k] (one
 * rounding), then the Relu as the Relu kernel (x > 0 ? x : 0) */
__attribute__((target("avx512f"))) static void copy_strip32_pro(float *strip, const float *src,
                                                                int64_t ldb, int64_t kc, int n,
                                                                const float *scale,
                                                                const float *bias, bool relu) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __mmask16 k1 = (__mmask16)(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
  __m512 zero = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; k++) {
    const float *s = src + k * ldb;
    __m512 a = _mm512_set1_ps(scale[k]), b = _mm512_set1_ps(bias[k]);
    __m512 v0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, s), a, b);
    __m512 v1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, s + 16), a, b);
    if (relu) {
      v0 = _mm512_max_ps(v0, zero); /* v > 0 ? v : 0 */
      v1 = _mm512_max_ps(v1, zero);
    }
    _mm512_store_ps(strip + k * 32, v0);
    _mm512_store_ps(strip + k * 32 + 16, v1);
  }
}
#endif

bool ox_sgemm_pa_sb_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                         const float *B, int64_t ldb, const float *bias, const ox_sgemm_epi *ep,
                         const ox_sgemm_pro *pro, float *C, int64_t ldc) {
  ep = epi_active(ep);
#ifdef OX_GEMM_X86
  if (m0 < 0 || m1 > A->M || m0 % 12) return false;
  if (m1 <= m0 || N <= 0) return true;
  if (A->K > 0 && A->mr == 12 && ox_sgemm_has_ua()) {
    float strip_buf[KC_BLOCK * 32] __attribute__((aligned(64)));
    /* a prologue needs the strips (B is never read in place) */
    float *strip = m1 - m0 > STRIP_MIN_ROWS || pro ? strip_buf : NULL;
    /* per depth block: a 32-column strip of B stays in cache for every row panel */
    for (int64_t pc = 0; pc < A->K; pc += KC_BLOCK) {
      int64_t kc = A->K - pc < KC_BLOCK ? A->K - pc : KC_BLOCK;
      float bt = pc == 0 ? 0.0f : 1.0f;
      const float *bb = pc == 0 ? bias : NULL;
      const ox_sgemm_epi *be = pc + kc >= A->K ? ep : NULL; /* last depth block */
      const float *ablock = A->data + pc * A->Mpad, *bblock = B + pc * ldb;
      if (N <= SMALL_N && !pro) { /* the whole B block stays in cache: A panels read once */
        for (int64_t ir = m0; ir < m1; ir += 12) {
          int m = m1 - ir < 12 ? (int)(m1 - ir) : 12;
          for (int64_t jr = 0; jr < N; jr += 32)
            tile_epi(kc, ablock + ir * kc, bblock + jr, ldb, C + ir * ldc + jr, ldc, bt,
                     bb ? bb + ir : NULL, be, ir, jr, m, N - jr < 32 ? (int)(N - jr) : 32, 0);
        }
        continue;
      }
      for (int64_t jr = 0; jr < N; jr += 32) {
        int n = N - jr < 32 ? (int)(N - jr) : 32;
        int next_n = N - jr - 32 > 32 ? 32 : N - jr - 32 > 0 ? (int)(N - jr - 32) : 0;
        const float *bs = bblock + jr;
        int64_t bstride = ldb;
        if (strip) { /* many row panels: copy the strip once into a contiguous panel */
          if (pro)
            copy_strip32_pro(strip, bblock + jr, ldb, kc, n, pro->scale + pc, pro->bias + pc,
                             pro->relu);
          else
            copy_strip32(strip, bblock + jr, ldb, kc, n);
          bs = strip;
          bstride = 32;
        }
        /* the next strip's rows of B, one 128-byte run per row that the
         * hardware prefetcher does not follow (rows a plane apart), on
         * their way to L2 while this strip's tiles compute: an input that
         * came from the layer before (not in L2) had stalled every row */
        if (next_n > 0)
          for (int64_t k = 0; k < kc; k++) {
            _mm_prefetch((const char *)(bblock + jr + k * ldb + 32), _MM_HINT_T1);
            _mm_prefetch((const char *)(bblock + jr + k * ldb + 48), _MM_HINT_T1);
          }
        for (int64_t ir = m0; ir < m1; ir += 12) {
          int m = m1 - ir < 12 ? (int)(m1 - ir) : 12;
          tile_epi(kc, ablock + ir * kc, bs, bstride, C + ir * ldc + jr, ldc, bt,
                   bb ? bb + ir : NULL, be, ir, jr, m, n, next_n);
        }
      }
    }
    return true;
  }
#endif
  if (m0 != 0 || m1 != A->M || pro) return false; /* row ranges, prologues: x86 tiles only */
  if (A->M <= 0 || N <= 0) return true;
  ox_sgemm_pa(A, false, N, 1.0f, B, ldb, 0.0f, C, ldc, NULL);
  add_row_bias(A->M, N, bias, C, ldc);
  ox_sgemm_epi_apply(ep, A->M, N, C, ldc);
  return true;
}

void ox_sgemm_pa_sb_epi(const ox_sgemm_packed *A, int64_t N, const float *B, int64_t ldb,
                        const float *bias, const ox_sgemm_epi *ep, float *C, int64_t ldc) {
  ox_sgemm_pa_sb_rows(A, 0, A->M, N, B, ldb, bias, ep, NULL, C, ldc);
}

void ox_sgemm_pa_sb(const ox_sgemm_packed *A, int64_t N, const float *B, int64_t ldb,
                    const float *bias, float *C, int64_t ldc) {
  ox_sgemm_pa_sb_epi(A, N, B, ldb, bias, NULL, C, ldc);
}

bool ox_sgemm_pa_strips_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                             ox_sgemm_strip_fn strip, void *ctx, const float *bias,
                             const ox_sgemm_epi *ep, float *C, int64_t ldc) {
  ep = epi_active(ep);
#ifdef OX_GEMM_X86
  if (A->mr != 12 || !ox_sgemm_has_ua() || m0 < 0 || m1 > A->M || m0 % 12) return false;
  if (m1 <= m0 || N <= 0) return true;
  if (A->K <= 0) {
    ox_sgemm_epi te = ep ? ox_sgemm_epi_at(ep, m0, 0) : (ox_sgemm_epi){0};
    scale_c(m1 - m0, N, 0.0f, C + m0 * ldc, ldc);
    add_row_bias(m1 - m0, N, bias ? bias + m0 : NULL, C + m0 * ldc, ldc);
    ox_sgemm_epi_apply(ep ? &te : NULL, m1 - m0, N, C + m0 * ldc, ldc);
    return true;
  }
  float buf[KC_BLOCK * 32] __attribute__((aligned(64)));
  for (int64_t pc = 0; pc < A->K; pc += KC_BLOCK) {
    int64_t kc = A->K - pc < KC_BLOCK ? A->K - pc : KC_BLOCK;
    float bt = pc == 0 ? 0.0f : 1.0f;
    const float *bb = pc == 0 ? bias : NULL;
    const ox_sgemm_epi *be = pc + kc >= A->K ? ep : NULL; /* last depth block */
    const float *ablock = A->data + pc * A->Mpad;
    for (int64_t jr = 0; jr < N; jr += 32) {
      int n = N - jr < 32 ? (int)(N - jr) : 32;
      int next_n = N - jr - 32 > 32 ? 32 : N - jr - 32 > 0 ? (int)(N - jr - 32) : 0;
      strip(ctx, pc, kc, jr, n, buf);
      for (int64_t ir = m0; ir < m1; ir += 12) {
        int m = m1 - ir < 12 ? (int)(m1 - ir) : 12;
        tile_epi(kc, ablock + ir * kc, buf, 32, C + ir * ldc + jr, ldc, bt, bb ? bb + ir : NULL, be,
                 ir, jr, m, n, next_n);
      }
    }
  }
  return true;
#else
  (void)A, (void)m0, (void)m1, (void)N, (void)strip, (void)ctx, (void)bias, (void)ep, (void)C,
      (void)ldc;
  return false;
#endif
}

bool ox_sgemm_pa_strips_epi(const ox_sgemm_packed *A, int64_t N, ox_sgemm_strip_fn strip, void *ctx,
                            const float *bias, const ox_sgemm_epi *ep, float *C, int64_t ldc) {
  return ox_sgemm_pa_strips_rows(A, 0, A->M, N, strip, ctx, bias, ep, C, ldc);
}

bool ox_sgemm_pa_strips(const ox_sgemm_packed *A, int64_t N, ox_sgemm_strip_fn strip, void *ctx,
                        const float *bias, float *C, int64_t ldc) {
  return ox_sgemm_pa_strips_epi(A, N, strip, ctx, bias, NULL, C, ldc);
}
