/* gemm_avx512.c - the float GEMM's AVX-512 level: the 12 x 32 micro-kernel
 * and its variants (partial tiles, A read in place, narrow columns), A's
 * 12-row packing, the GEMV and dot products, the epilogue, and the 1 x 1 /
 * implicit convolution drivers that read B in place or through strips. The
 * dispatch table (gemm.c) takes them through ox_gemm_fill_avx512. */
#include <stdlib.h>
#include <string.h>

#include "gemm_impl.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#include "epi_avx512.h"
#include "gemm_loops.h"

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

/* The first R (1 to 12, fixed at compile time) rows of a 12-row panel by
 * 32 columns, for any B row stride (packed panels: ldb = 32; a matrix read
 * in place: its row stride): rows past m and columns past n are neither
 * loaded (B) nor stored (C); A rows past m must be zero or are ignored. C =
 * acc + beta * C (beta == 0: C ignored). A panel of fewer rows costs R / 12
 * of a full tile, not a whole one (rows were rounded up to 4, 8 or 12: M =
 * 50 in 12-row panels paid for 60 rows). Named accumulators under R tests,
 * not an array (see ukernel_avx512_n16); each C element is summed in the
 * same order as by the other kernels, so results do not depend on the tile
 * shape. */
#define OX_ROWR(i, r)                           \
  if (R > r) {                                  \
    av = _mm512_set1_ps(a[r]);                  \
    c##i##0 = _mm512_fmadd_ps(av, b0, c##i##0); \
    c##i##1 = _mm512_fmadd_ps(av, b1, c##i##1); \
  }
__attribute__((target("avx512f"), always_inline)) static inline void ukernel_avx512_short(
    int R, int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc,
    float beta, const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  __mmask16 k1 = (__mmask16)(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
  __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z,
         c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z, c80 = z, c81 = z, c90 = z, c91 = z;
  __m512 cA0 = z, cA1 = z, cB0 = z, cB1 = z;
  const int64_t pf = 8 * ldb;
#define OX_SHORT_LOOP(LOAD0, LOAD1)                         \
  for (int64_t k = 0; k < kc; k++) {                        \
    __m512 b0 = LOAD0, b1 = LOAD1, av;                      \
    _mm_prefetch((const char *)(b + pf), _MM_HINT_T0);      \
    _mm_prefetch((const char *)(b + pf + 16), _MM_HINT_T0); \
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);     \
    OX_ROWR(0, 0)                                           \
    OX_ROWR(1, 1)                                           \
    OX_ROWR(2, 2)                                           \
    OX_ROWR(3, 3)                                           \
    OX_ROWR(4, 4)                                           \
    OX_ROWR(5, 5)                                           \
    OX_ROWR(6, 6)                                           \
    OX_ROWR(7, 7)                                           \
    OX_ROWR(8, 8)                                           \
    OX_ROWR(9, 9)                                           \
    OX_ROWR(A, 10)                                          \
    OX_ROWR(B, 11)                                          \
    a += 12;                                                \
    b += ldb;                                               \
  }
  OX_BY_WIDTH(OX_SHORT_LOOP)
#undef OX_SHORT_LOOP
  __m512 acc[24] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                    c60, c61, c70, c71, c80, c81, c90, c91, cA0, cA1, cB0, cB1};
  store_rows(c, ldc, m, acc, beta, bias, ep, k0, k1);
}
#undef OX_ROWR

/* The first R rows of a 12-row panel by at most 16 columns: one register
 * per row. A tile of 16 or fewer columns through the 32-column kernels did
 * the products of 32 (the masked half still multiplies): a 7 x 7 image (49
 * columns: 32 + 17) paid for 64. Each C element is summed in the same order
 * as by the other kernels, so results do not depend on the tile shape. */
__attribute__((target("avx512f"), always_inline)) static inline void ukernel_avx512_n16(
    int R, int64_t kc, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc,
    float beta, const float *bias, const ox_sgemm_epi *ep, int m, int n) {
  __mmask16 k0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  /* named accumulators, not an array: with an array GCC kept the twelve
   * sums on the stack, a store of each every step (1.7x slower) */
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0,
         s8 = s0, s9 = s0, s10 = s0, s11 = s0;
#define OX_N16_FMA(I, S) S = _mm512_fmadd_ps(_mm512_set1_ps(a[I]), b0, S)
#define OX_N16_LOOP(LOAD0)                                                                     \
  for (int64_t k = 0; k < kc; k++) {                                                           \
    __m512 b0 = LOAD0;                                                                         \
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);                                        \
    OX_N16_FMA(0, s0), OX_N16_FMA(1, s1), OX_N16_FMA(2, s2), OX_N16_FMA(3, s3);                \
    if (R > 4) OX_N16_FMA(4, s4), OX_N16_FMA(5, s5), OX_N16_FMA(6, s6), OX_N16_FMA(7, s7);     \
    if (R > 8) OX_N16_FMA(8, s8), OX_N16_FMA(9, s9), OX_N16_FMA(10, s10), OX_N16_FMA(11, s11); \
    a += 12;                                                                                   \
    b += ldb;                                                                                  \
  }
  if (n == 16)
    OX_N16_LOOP(_mm512_loadu_ps(b))
  else
    OX_N16_LOOP(_mm512_maskz_loadu_ps(k0, b))
#undef OX_N16_LOOP
#undef OX_N16_FMA
  const __m512 z = _mm512_setzero_ps();
  __m512 acc[24] = {s0, z, s1, z, s2, z, s3, z, s4,  z, s5,  z,
                    s6, z, s7, z, s8, z, s9, z, s10, z, s11, z};
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
  /* named sums, not an array (an array of them was stored to the stack
   * every step, as in ukernel_avx512_n16) */
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (int64_t k = 0; k < kc; k++) {
    __m512 av = _mm512_maskz_loadu_ps(0x0FFF, a);
    _mm_prefetch((const char *)(a + 768), _MM_HINT_T0);
#define OX_COL_FMA(J, S) \
  if (J < n) S = _mm512_fmadd_ps(av, _mm512_set1_ps(b[J]), S)
    OX_COL_FMA(0, s0);
    OX_COL_FMA(1, s1);
    OX_COL_FMA(2, s2);
    OX_COL_FMA(3, s3);
    OX_COL_FMA(4, s4);
    OX_COL_FMA(5, s5);
    OX_COL_FMA(6, s6);
    OX_COL_FMA(7, s7);
#undef OX_COL_FMA
    a += 12;
    b += ldb;
  }
  float t[8][16] __attribute__((aligned(64)));
  const __m512 col[8] = {s0, s1, s2, s3, s4, s5, s6, s7};
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
/* kept out of ukernel_avx512_g: inlined there, its loops ran 1.7x slower
 * (a 12 x 12 map's Winograd products, 9 columns) */
__attribute__((target("avx512f"), noinline)) static void ukernel_avx512_narrow(
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
  switch (m) { /* the row count fixed at compile time: no tests in the depth loop */
#define OX_SHORT(R)                                                       \
  case R:                                                                 \
    ukernel_avx512_short(R, kc, a, b, ldb, c, ldc, beta, bias, ep, m, n); \
    break;
    OX_SHORT(1)
    OX_SHORT(2)
    OX_SHORT(3)
    OX_SHORT(4)
    OX_SHORT(5)
    OX_SHORT(6)
    OX_SHORT(7)
    OX_SHORT(8)
    OX_SHORT(9)
    OX_SHORT(10)
    OX_SHORT(11)
#undef OX_SHORT
    default:
      ukernel_avx512_short(12, kc, a, b, ldb, c, ldc, beta, bias, ep, m, n);
      break;
  }
}

/* rows (1 to 12) rows of A, kc deep, into one 12-row panel (rows past
 * rows zero): 16 columns at a time as a 16 x 16 transpose in registers
 * (rows 12-15 zero), each column's twelve values stored at once. The
 * element-wise scatter took about as much time as a tenth of the products
 * in a transformer's GEMMs (A is the activation, packed on every call). */
__attribute__((target("avx512f"))) static void pack_a12_avx512(const float *s, int64_t lda,
                                                               int64_t kc, float *d, int rows) {
  int64_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++)
      r[i] = i < rows ? _mm512_loadu_ps(s + i * lda + k) : _mm512_setzero_ps();
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
    for (int i = 0; i < 12; i++) d[k * 12 + i] = i < rows ? s[i * lda + k] : 0.0f;
}

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

/* Eight dot products at once: a is loaded once for eight rows of B (eight
 * sequential streams, enough in flight to keep one core at the memory's
 * bandwidth), the sums reduced together at the end. */
__attribute__((target("avx512f"))) static void dotn_avx512(const float *a, const float *b,
                                                           int64_t ldb, int64_t K, float *out) {
  __m512 s[OX_GEMM_DOT_ROWS];
  for (int r = 0; r < OX_GEMM_DOT_ROWS; r++) s[r] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 x = _mm512_loadu_ps(a + k);
    for (int r = 0; r < OX_GEMM_DOT_ROWS; r++)
      s[r] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + r * ldb + k), s[r]);
  }
  if (k < K) {
    __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
    __m512 x = _mm512_maskz_loadu_ps(m, a + k);
    for (int r = 0; r < OX_GEMM_DOT_ROWS; r++)
      s[r] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(m, b + r * ldb + k), s[r]);
  }
  for (int r = 0; r < OX_GEMM_DOT_ROWS; r++) out[r] = _mm512_reduce_add_ps(s[r]);
}

__attribute__((target("avx512f"))) static void pgemv_avx512(const pgemv_job *j, int64_t p0,
                                                            int64_t p1) {
  OX_PGEMV_BODY(32);
}

__attribute__((target("avx512f"))) static void silu_row(float *c, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) _mm512_storeu_ps(c + j, ox_silu16(_mm512_loadu_ps(c + j)));
  if (j < n) {
    __mmask16 m = (__mmask16)((1u << (n - j)) - 1u);
    _mm512_mask_storeu_ps(c + j, m, ox_silu16(_mm512_maskz_loadu_ps(m, c + j)));
  }
}

/* the epilogue (the activation operators' loops are compiled for the same
 * level: the same contractions) */
__attribute__((target("avx512f"))) static void epi_avx512(const ox_sgemm_epi *ep, int64_t M,
                                                          int64_t N, float *C, int64_t ldc) {
  epi_rows(ep, M, N, C, ldc);
}

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

/* OX_GEMM_B_INPLACE's tiles (A->mr == 12, A->K > 0, rows [m0, m1) whole
 * panels, N > 0): B read in place or copied a strip at a time. */
__attribute__((target("avx512f"))) static void sb_rows_avx512(
    const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N, const float *B, int64_t ldb,
    const float *bias, const ox_sgemm_epi *ep, const ox_sgemm_pro *pro, float *C, int64_t ldc) {
  const ox_gemm_table *t = ox_gemm_dispatch();
  const int64_t KCB = A->kc;
  float strip_buf[OX_GEMM_KC_MAX * 32] __attribute__((aligned(64)));
  /* a prologue needs the strips (B is never read in place) */
  float *strip = m1 - m0 > t->strip_min_rows || pro ? strip_buf : NULL;
  /* per depth block: a 32-column strip of B stays in cache for every row panel */
  for (int64_t pc = 0; pc < A->K; pc += KCB) {
    int64_t kc = A->K - pc < KCB ? A->K - pc : KCB;
    float bt = pc == 0 ? 0.0f : 1.0f;
    const float *bb = pc == 0 ? bias : NULL;
    const ox_sgemm_epi *be = pc + kc >= A->K ? ep : NULL; /* last depth block */
    const float *ablock = A->data + pc * A->Mpad, *bblock = B + pc * ldb;
    if (N <= t->small_n && !pro) { /* the whole B block stays in cache: A panels read once */
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
        tile_epi(kc, ablock + ir * kc, bs, bstride, C + ir * ldc + jr, ldc, bt, bb ? bb + ir : NULL,
                 be, ir, jr, m, n, next_n);
      }
    }
  }
}

/* OX_GEMM_B_STRIPS's tiles (A->mr == 12, A->K > 0, N > 0). */
__attribute__((target("avx512f"))) static void strips_rows_avx512(
    const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N, ox_sgemm_strip_fn strip, void *ctx,
    const float *bias, const ox_sgemm_epi *ep, float *C, int64_t ldc) {
  const int64_t KCB = A->kc;
  float buf[OX_GEMM_KC_MAX * 32] __attribute__((aligned(64)));
  for (int64_t pc = 0; pc < A->K; pc += KCB) {
    int64_t kc = A->K - pc < KCB ? A->K - pc : KCB;
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
}

bool ox_gemm_fill_avx512(ox_gemm_table *t) {
  t->uk = (ukernel){12, 32, ukernel_avx512, "avx512"};
  t->gtile = ukernel_avx512_g;
  t->ua = ukernel_avx512_ua;
  t->pack_a12 = pack_a12_avx512;
  t->dot = dot_avx512;
  t->dotn = dotn_avx512;
  t->epi = epi_avx512;
  t->pgemv = pgemv_avx512;
  t->sb_rows = sb_rows_avx512;
  t->strips_rows = strips_rows_avx512;
  return true;
}

#else
bool ox_gemm_fill_avx512(ox_gemm_table *t) {
  (void)t;
  return false;
}
#endif
