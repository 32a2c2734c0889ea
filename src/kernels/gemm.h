/* gemm.h - single-precision matrix multiply used by MatMul, Gemm, Conv, ...
 * Row-major. C = alpha * op(A) * op(B) + beta * C, op = transpose or not.
 * A is M x K after op, B is K x N after op. beta == 0 ignores C's content
 * (NaN in C does not propagate). */
#ifndef OX_GEMM_H
#define OX_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../runtime/kernel.h"

void ox_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, ox_thread_pool *pool);

#endif
