/* gemm_h.h - matrix multiply by a constant float16 or bfloat16 matrix B that
 * stays 16-bit (MatMul and Gemm of fp16/bf16 models):
 *
 *   C (M x N) = alpha * op(A) * B + beta * C
 *
 * B is packed once, in its 16-bit form (half the memory of a float32 copy),
 * into panels of nr columns; the micro-kernels widen B in registers
 * (vcvtph2ps for float16, a 16-bit shift for bfloat16) and accumulate in
 * float32 with FMA over the whole depth. A (float32, float16 or bfloat16) is
 * widened to float32 per block of rows. C is rounded to its type once, at the
 * end: the same float32 sum, rounded once, that widening every operand to
 * float32 gives (within the float32 rounding of the sum's order).
 *
 * When A and B are both bfloat16 and the CPU has AVX512_BF16, vdpbf16ps
 * multiplies pairs of depth steps: bfloat16 products are exact in float32 and
 * the sums are float32, but the instruction treats subnormal inputs (below
 * 2^-126) as zero and flushes subnormal results; that is the precision the
 * path trades for twice the throughput.
 *
 * Paths, chosen from CPUID when B is packed: AVX-512F (12 x 32 tiles),
 * AVX2+FMA+F16C (6 x 16), portable C (4 x nr). One to four rows of A stream
 * B's panels (decode: B read once at memory speed), the columns split over
 * the pool's threads. */
#ifndef OX_GEMM_H_H
#define OX_GEMM_H_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"

/* element types of A, B and C */
typedef enum { OX_HG_F32, OX_HG_F16, OX_HG_BF16 } ox_hg_type;

/* code paths; OX_HG_AUTO: the best this CPU has */
typedef enum {
  OX_HG_AUTO,
  OX_HG_PORTABLE,
  OX_HG_AVX2,
  OX_HG_AVX512,
  OX_HG_AVX512BF16 /* AVX-512F kernels, and vdpbf16ps for bf16 x bf16 */
} ox_hg_path;

typedef struct ox_hgemm_b ox_hgemm_b;

/* Packs op(B) (K x N; B stored K x N, or N x K when trans_b; row stride
 * ldb) of type bt (OX_HG_F16 or OX_HG_BF16) for the path (OX_HG_AUTO in
 * sessions; tests name one). K or N may be 0. NULL with *e set on OOM,
 * overflow, a bad type or a path this CPU lacks (OX_EUNSUPPORTED). */
ox_hgemm_b *ox_hgemm_pack_b(ox_hg_path path, ox_hg_type bt, bool trans_b, int64_t K, int64_t N,
                            const uint16_t *B, int64_t ldb, ox_err *e);
void ox_hgemm_b_free(ox_hgemm_b *b);
int64_t ox_hgemm_b_k(const ox_hgemm_b *b);
int64_t ox_hgemm_b_n(const ox_hgemm_b *b);
/* bytes held by the packed panels */
size_t ox_hgemm_b_bytes(const ox_hgemm_b *b);
/* "avx512bf16", "avx512", "avx2" or "portable" */
const char *ox_hgemm_b_path(const ox_hgemm_b *b);
/* Whether this CPU can run the path. */
bool ox_hgemm_path_ok(ox_hg_path path);

/* C (M x N, row stride ldc, type ct) = alpha * op(A) * B + beta * C, A of
 * type at stored M x K (or K x M when trans_a) with row stride lda. beta ==
 * 0: C is not read (a NaN there does not propagate). OX_OK, or OX_ENOMEM
 * with *e set when scratch memory cannot be had. */
int ox_hgemm(int64_t M, ox_hg_type at, bool trans_a, const void *A, int64_t lda,
             const ox_hgemm_b *B, float alpha, float beta, ox_hg_type ct, void *C, int64_t ldc,
             ox_thread_pool *pool, ox_err *e);

#endif
