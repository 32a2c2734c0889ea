/* qgemm.h - exact 8-bit integer matrix multiply (MatMulInteger and the
 * quantized operators built on it):
 *
 *   C[m][n] = sum_k (A[m][k] - za[m]) * (B[k][n] - zb[n])    (int32)
 *
 * with A and B uint8 or int8 and zero points per row / per column (or one
 * for all). Every case is brought to unsigned A times signed B (the form of
 * AVX512-VNNI's vpdpbusd): int8 A becomes A + 128 with za + 128, uint8 B
 * becomes B - 128 with zb - 128; the products are then exact and the zero
 * points enter through row and column sums:
 *
 *   C = A'B' - za' colsum(B') - zb' rowsum(A') + K za' zb'.
 *
 * B is packed once (a constant weight) in panels of 16 columns, depth in
 * groups of 4 bytes. Paths: AVX512-VNNI, AVX2 (bytes widened to 16 bits and
 * vpmaddwd, so nothing saturates), portable C; all give the same integers. */
#ifndef OX_QGEMM_H
#define OX_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"

typedef struct ox_qgemm_b {
  int64_t K, N, K4, Np; /* K4 = ceil(K / 4); Np = N rounded up to 16 */
  int8_t *data;         /* [Np / 16][K4][16][4] */
  int32_t *colsum;      /* [Np] column sums of B' */
  int32_t *zb;          /* [Np] zero points of B' */
} ox_qgemm_b;

/* Packs B (K x N, row stride ldb; signed or unsigned bytes) with its zero
 * points: zb NULL (0), one value (zb_n == 1) or N values, of B's type. */
int ox_qgemm_pack_b(const void *B, bool b_signed, int64_t K, int64_t N, int64_t ldb, const void *zb,
                    int64_t zb_n, ox_qgemm_b *out, ox_err *e);
void ox_qgemm_free_b(ox_qgemm_b *b);

/* C (M x N, row stride ldc) for A (M x K, row stride lda) with zero points
 * za (NULL: 0; za_n 1 or M values of A's type). */
int ox_qgemm(const void *A, bool a_signed, int64_t M, int64_t lda, const void *za, int64_t za_n,
             const ox_qgemm_b *B, int32_t *C, int64_t ldc, ox_thread_pool *pool, ox_err *e);

/* ox_qgemm on a given path ("avx512vnni", "avx2", "portable"; NULL: the
 * best here), for tests; OX_EUNSUPPORTED when this CPU lacks it. */
int ox_qgemm_on(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                const void *za, int64_t za_n, const ox_qgemm_b *B, int32_t *C, int64_t ldc,
                ox_thread_pool *pool, ox_err *e);

/* Float result of an integer product, as MatMulInteger -> Cast -> Mul ->
 * Add compute it: C = float(acc) * scale[n] (+ bias[n]), n_scale and n_bias
 * 1 (one value for all columns) or N. */
typedef struct ox_qgemm_epi {
  const float *scale, *bias; /* bias may be NULL */
  int64_t n_scale, n_bias;
  /* then, when not NULL, post(ctx, C, ldc, m0, m1, n0, n1) on each block of
   * C as soon as it is final (rows [m0, m1), columns [n0, n1)), on the
   * thread that made it: an activation over data still in cache */
  void (*post)(void *ctx, float *C, int64_t ldc, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
  void *post_ctx;
} ox_qgemm_epi;

/* ox_qgemm with that epilogue, on a given path (NULL: the best here). */
int ox_qgemm_scaled_on(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                       const void *za, int64_t za_n, const ox_qgemm_b *B, const ox_qgemm_epi *epi,
                       float *C, int64_t ldc, ox_thread_pool *pool, ox_err *e);

/* Which path runs here: "avx512vnni", "avx2" or "portable". */
const char *ox_qgemm_path(void);

#endif
