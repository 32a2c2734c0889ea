/* gemm.h - single-precision matrix multiply used by MatMul, Gemm, Conv, ...
 * Row-major. C = alpha * op(A) * op(B) + beta * C, op = transpose or not.
 * A is M x K after op, B is K x N after op. beta == 0 ignores C's content
 * (NaN in C does not propagate).
 *
 * Blocked GEMM: B is packed in panels of NR columns (K-major), A in panels of
 * MR rows; a register-blocked micro-kernel (AVX-512 12x32, AVX2+FMA 6x16, or
 * portable 4x16) chosen at run time from the CPU's feature bits. Work is split
 * over the pool's threads by columns (or rows when N is small). On an
 * allocation failure the product is still computed (unblocked loop). */
#ifndef OX_GEMM_H
#define OX_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"

void ox_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, ox_thread_pool *pool);

/* A matrix packed once (e.g. constant convolution weights) for repeated
 * products C = alpha * A * op(B) + beta * C. The layout depends on the
 * micro-kernel selected for this CPU. */
typedef struct ox_sgemm_packed ox_sgemm_packed;

/* Packs op(A) (M x K). NULL with *e set on OOM or overflow. Free with
 * ox_sgemm_packed_free. */
ox_sgemm_packed *ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                                 ox_err *e);
void ox_sgemm_packed_free(ox_sgemm_packed *p);
/* The same made in parts (e.g. transformed kernels made a panel at a
 * time): room for M x K, then rows [m0, m1) packed from A (row m0 at A, row
 * stride lda); m0 a multiple of ox_sgemm_packed_mr, m1 one too or M. Every
 * row must be filled before a product. */
ox_sgemm_packed *ox_sgemm_packed_alloc(int64_t M, int64_t K, ox_err *e);
int ox_sgemm_packed_mr(const ox_sgemm_packed *p);
void ox_sgemm_packed_fill(ox_sgemm_packed *p, int64_t m0, int64_t m1, const float *A, int64_t lda);
int64_t ox_sgemm_packed_rows(const ox_sgemm_packed *p);
int64_t ox_sgemm_packed_depth(const ox_sgemm_packed *p);
/* C (M x N) = alpha * A * op(B) + beta * C with A packed. */
void ox_sgemm_pa(const ox_sgemm_packed *A, bool trans_b, int64_t N, float alpha, const float *B,
                 int64_t ldb, float beta, float *C, int64_t ldc, ox_thread_pool *pool);

/* B packed by the caller (e.g. im2col writing panels directly): depth split in
 * blocks of ox_sgemm_kc() rows; block pc starts at pc * Npad (Npad = N
 * rounded up to ox_sgemm_nr()); inside it panel j (columns j*nr ...) starts at
 * j * nr * kc and holds kc rows of nr values (columns past N zero or
 * ignored). */
int ox_sgemm_nr(void);
int64_t ox_sgemm_kc(void);
size_t ox_sgemm_packed_b_floats(int64_t K, int64_t N);
/* C (M x N) = A * B + beta * C, both packed; runs on the calling thread. */
void ox_sgemm_pa_pb(const ox_sgemm_packed *A, int64_t N, const float *Bp, float beta, float *C,
                    int64_t ldc);

/* C (M x N) = A * B + beta * C with A row-major in place (lda) and B packed
 * as above: for weights that change between runs (no packing pass). Only
 * where ox_sgemm_has_ua() says so (AVX-512); calling thread only. */
bool ox_sgemm_has_ua(void);
void ox_sgemm_ua_pb(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp,
                    float beta, float *C, int64_t ldc);

/* C (M x N) = A * B + bias (bias[i] added to row i; NULL: none) with A
 * packed and B (K x N, row stride ldb) read in place, without a packing copy
 * (e.g. the input planes of a 1x1 convolution); calling thread only. */
void ox_sgemm_pa_sb(const ox_sgemm_packed *A, int64_t N, const float *B, int64_t ldb,
                    const float *bias, float *C, int64_t ldc);

/* C (M x N) = A * B + bias (as above) with A packed and B produced on the fly, 32
 * columns by at most ox_sgemm_kc() rows at a time: strip(ctx, k0, kc, j0, n,
 * buf) writes rows [k0, k0+kc) of columns [j0, j0+n) (n <= 32) to buf, row
 * stride 32, zeros in columns n..31. Each strip is used for every row panel
 * while it is in L1 (implicit GEMM, e.g. convolution taps read straight from
 * the image). Calling thread only. Returns false, doing nothing, when the
 * micro-kernel in use does not support it (then pack B instead). */
typedef void (*ox_sgemm_strip_fn)(void *ctx, int64_t k0, int64_t kc, int64_t j0, int n, float *buf);
bool ox_sgemm_pa_strips(const ox_sgemm_packed *A, int64_t N, ox_sgemm_strip_fn strip, void *ctx,
                        const float *bias, float *C, int64_t ldc);

/* An epilogue applied to each stored value of C (row i, column j) after the
 * product and the row bias: v += res[i * ldr + j] (when res is not NULL),
 * then v = act(v), then the bound below. The activations compute the same float expressions as
 * the Relu / LeakyRelu / Clip / HardSigmoid / HardSwish kernels, and Sigmoid then Mul. */
enum {
  OX_ACT_NONE,
  OX_ACT_RELU,
  OX_ACT_LEAKY,    /* alpha */
  OX_ACT_CLIP,     /* alpha = min, beta = max */
  OX_ACT_HSIGMOID, /* alpha, beta */
  OX_ACT_HSWISH,
  OX_ACT_SILU /* x sigmoid(x): the Sigmoid and Mul kernels' arithmetic (vexp.h) */
};
typedef struct ox_sgemm_epi {
  int act;
  float alpha, beta;
  const float *res; /* residual laid out like C (row stride ldr), NULL: none */
  int64_t ldr;
  /* then v = Max(v, bval) (bound 1) or Min(v, bval) (bound 2) with the
   * Max / Min kernels' rules (a NaN operand is the result); 0: none */
  int bound;
  float bval;
} ox_sgemm_epi;

/* Applies the epilogue to the M x N block C (a pass over a block just
 * written); ep NULL or without residual and activation: nothing. */
void ox_sgemm_epi_apply(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C, int64_t ldc);
/* The epilogue of the sub-block starting at row i, column j. */
ox_sgemm_epi ox_sgemm_epi_at(const ox_sgemm_epi *ep, int64_t i, int64_t j);

/* ox_sgemm_pa_sb and ox_sgemm_pa_strips with an epilogue (NULL: none),
 * applied by the tile stores of the last depth block. */
void ox_sgemm_pa_sb_epi(const ox_sgemm_packed *A, int64_t N, const float *B, int64_t ldb,
                        const float *bias, const ox_sgemm_epi *ep, float *C, int64_t ldc);
bool ox_sgemm_pa_strips_epi(const ox_sgemm_packed *A, int64_t N, ox_sgemm_strip_fn strip, void *ctx,
                            const float *bias, const ox_sgemm_epi *ep, float *C, int64_t ldc);

/* The same for rows [m0, m1) of A and C only (C and bias for the whole
 * matrix; m0 a multiple of 12): the tasks of a small image split its
 * output channels. The AVX-512 tiles only: false (nothing done) elsewhere
 * or for a range that is not whole panels. */
/* pro (NULL: none) transforms B's rows as they are read: row k becomes
 * max(fma(B[k][j], scale[k], bias[k]), 0) (the max when relu; as x > 0 ?
 * x : 0, NaN giving 0): a FusedConv's prologue (a BatchNormalization,
 * per-channel Mul / Add and Relu before a 1 x 1 convolution). */
typedef struct ox_sgemm_pro {
  const float *scale, *bias;
  bool relu;
} ox_sgemm_pro;
bool ox_sgemm_pa_sb_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                         const float *B, int64_t ldb, const float *bias, const ox_sgemm_epi *ep,
                         const ox_sgemm_pro *pro, float *C, int64_t ldc);
bool ox_sgemm_pa_strips_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                             ox_sgemm_strip_fn strip, void *ctx, const float *bias,
                             const ox_sgemm_epi *ep, float *C, int64_t ldc);

/* Name of the micro-kernel in use ("avx512", "avx2", "portable"). */
const char *ox_sgemm_isa(void);

/* B (K x N after op) packed whole, once, for repeated products by changing
 * A (a MatMul by a constant weight): C (M x N) = A * B. A few rows stream
 * the panels straight (decode at memory speed); more rows run the blocked
 * GEMM without packing B again. B holds floats and need not be aligned (a
 * weight packed straight from a model file's bytes). NULL with *e set on
 * OOM. */
typedef struct ox_sgemm_bpack ox_sgemm_bpack;
ox_sgemm_bpack *ox_sgemm_pack_b(bool trans_b, int64_t K, int64_t N, const void *B, int64_t ldb,
                                ox_err *e);
void ox_sgemm_bpack_free(ox_sgemm_bpack *p);
/* Column n of B (its K values, as packed: bit for bit) into out. */
void ox_sgemm_bpack_col(const ox_sgemm_bpack *p, int64_t n, float *out);
int64_t ox_sgemm_bpack_k(const ox_sgemm_bpack *p);
int64_t ox_sgemm_bpack_n(const ox_sgemm_bpack *p);
void ox_sgemm_pb(int64_t M, const float *A, int64_t lda, const ox_sgemm_bpack *B, float *C,
                 int64_t ldc, ox_thread_pool *pool);
/* The same, calling post(ctx, m0, m1, n0, n1) on each block of C as soon
 * as its values are final, on the thread that made it (an epilogue over
 * data still in cache: a MatMul's bias, residual and activation). Every
 * element of C is in exactly one block. */
typedef void (*ox_sgemm_post_fn)(void *ctx, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void ox_sgemm_pb_post(int64_t M, const float *A, int64_t lda, const ox_sgemm_bpack *B, float *C,
                      int64_t ldc, ox_thread_pool *pool, ox_sgemm_post_fn post, void *ctx);

#endif
