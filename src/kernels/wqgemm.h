/* wqgemm.h - float matrix products with a constant low-bit weight matrix
 * (weight-only quantization: DequantizeLinear of int8/int4/int2 weights
 * feeding MatMul), without ever making the float weights:
 *
 *   C[m][n] = sum_k A[m][k] * (q[k][n] - z[b][n]) * s[b][n],   b = k / kb
 *
 * with blocks of kb rows along K (a whole column is one block when the
 * scale is per column or per tensor). The weights are packed once, at
 * session creation, at their own width: 32 / bits consecutive rows of a
 * column share a 32-bit unit, and the units of 64 columns for the same rows
 * lie together, so that a one-row product streams the matrix once.
 *
 * One and two rows (token-by-token decode) take a block-sum form. With
 * AVX512-VNNI, the fixed-point form: each block of activations as 22-bit
 * integers (a power-of-two scale), three signed bytes each, multiplied with
 * the weight fields by vpdpbusd into exact sums per byte plane; three
 * vpdpbusd per 64 weights leave the step bound by memory. Otherwise the float
 * form: each weight field is made into the float 1 + q / 2^bits by bit
 * operations alone (placed under the exponent of 1.0), so
 *
 *   sum_k a_k q_k = 2^bits (sum_k a_k (1 + q_k / 2^bits) - sum_k a_k)
 *
 * and y += s (2^bits S - (2^bits + z) sum_k a_k) per block: a shift, a
 * ternary logic op and a multiply-add per weight, in float32 throughout.
 * (A bfloat16 form with vdpbf16ps, A split in two bfloat16 parts, was
 * faster from the caches but slower streaming from memory on Zen 4, and
 * less exact; it was left out.) More rows dequantize a slab of columns at a time into a small
 * buffer (the values DequantizeLinear gives, bit for bit) and multiply it with the float GEMM.
 * Paths: AVX-512, AVX2+FMA, portable C, chosen at run time. */
#ifndef OX_WQGEMM_H
#define OX_WQGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"

typedef struct ox_wq_matrix {
  int bits;          /* 8, 4 or 2 */
  int64_t K, N;      /* the float matrix is K x N */
  int64_t rows_unit; /* rows sharing a 32-bit unit: 32 / bits */
  int64_t Kp;        /* K rounded up to rows_unit */
  int64_t kb;        /* rows per scale block (a multiple of rows_unit) */
  int64_t n_blk;     /* ceil(Kp / kb) */
  int64_t n_grp;     /* groups of 64 columns: ceil(N / 64) */
  uint32_t *q;       /* [n_grp][Kp / rows_unit][64] units of unsigned offsets;
                      * row 2p + h of a unit in bits 16 h + bits p */
  float *scale;      /* [n_grp][n_blk][64] (0 in the padding columns) */
  uint8_t *zero;     /* [n_grp][n_blk][64] zero points as unsigned offsets, or
                      * NULL when every one is zero_all (no zero point given) */
  int zero_all;
  bool finite; /* every scale is finite: the block-sum form may be used */
} ox_wq_matrix;

/* Packs q (K x N row-major, one element per byte as the runtime holds
 * sub-byte tensors: int8_t values when q_signed, else uint8_t) of the given
 * width, with scales `scale` (n_blk x N row-major, or one value when
 * n_scale == 1) and zero points `zp` (same layout, same type as q; NULL:
 * 0). kb: rows per block; kb >= K for one block per column. Fails
 * (OX_EUNSUPPORTED) when kb is not a multiple of the rows sharing a unit. */
int ox_wq_pack(int bits, bool q_signed, int64_t K, int64_t N, const void *q, const float *scale,
               int64_t n_scale, const void *zp, int64_t kb, ox_wq_matrix *out, ox_err *e);
void ox_wq_free(ox_wq_matrix *w);

/* C (M x N, row stride ldc) = A (M x K, row stride lda) times the matrix.
 * int8_decode: one and two rows take the "int8" form (below) where the CPU
 * has AVX512-VNNI. */
int ox_wq_gemm(const float *A, int64_t M, int64_t lda, const ox_wq_matrix *W, float *C, int64_t ldc,
               bool int8_decode, ox_thread_pool *pool, ox_err *e);

/* ox_wq_gemm on a given path and form, for tests; OX_EUNSUPPORTED when
 * this CPU lacks the path. Forms: NULL (by M: one and two rows the
 * fixed-point form where VNNI is, else the float block-sum form; a named
 * path means the float form), "blocksum" (the float block-sum form at any
 * M), "fixed" (the fixed-point form at any M: paths "avx512vnni",
 * "portable"; blocks of activations too small for a normal power-of-two
 * scale, or too long for 32-bit sums, take the float form), "int8" (each row quantized to int8 per block:
 * scale max|a| / 127, values rounded to nearest even; then
 * y += s * scale_a * (sum_k aq_k q_k - z sum_k aq_k) with exact integer
 * sums: onnxruntime's default for such products, about 1/254 of a block's
 * largest activation in error). Paths: "avx512", "avx2", "portable" for the
 * float forms; "avx512vnni", "portable" for "int8"; NULL: the best here
 * (for "int8" without VNNI: the float form). */
int ox_wq_gemm_on(const char *path, const char *form, const float *A, int64_t M, int64_t lda,
                  const ox_wq_matrix *W, float *C, int64_t ldc, ox_thread_pool *pool, ox_err *e);

#endif
