/* gemm.h - single-precision matrix multiply used by MatMul, Gemm, Conv, ...
 * Row-major. C = alpha * op(A) * op(B) + beta * C, op = transpose or not.
 * A is M x K after op, B is K x N after op. beta == 0 ignores C's content
 * (NaN in C does not propagate).
 *
 * One call, ox_gemm, takes a descriptor (ox_gemm_desc): where A and B come
 * from (plain, packed once, packed by the caller, read in place, made in
 * strips), alpha / beta, a row bias, an epilogue, a prologue on B's rows, a
 * post-block callback and the pool. The helpers beside it pack operands
 * once and say which layout the micro-kernel in use wants.
 *
 * Blocked GEMM: B is packed in panels of NR columns (K-major), A in panels of
 * MR rows; a register-blocked micro-kernel (AVX-512 12x32, AVX2+FMA 6x16,
 * WebAssembly SIMD128 6x8 or portable 4x16) chosen once from the CPU probe
 * (kernels/gemm_impl.h's
 * table). Work is split over the pool's threads in a grid of row parts by
 * column parts chosen by split.c's planner (gemm.c's ox_gemm_plan; with B
 * packed whole, A packed once for every task, gemm_pb.c); every element is
 * summed in the same order however the grid is cut, so the bits do not
 * depend on the thread count. On an allocation failure the product is
 * still computed (unblocked loop). */
#ifndef OX_GEMM_H
#define OX_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"

/* ---- operands packed once ---- */

/* A matrix packed once (e.g. constant convolution weights) for repeated
 * products. The layout depends on the micro-kernel selected for this CPU. */
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

/* B packed by the caller (OX_GEMM_B_PANELS, e.g. im2col writing panels
 * directly): depth split in blocks of ox_sgemm_kc() rows; block pc starts
 * at pc * Npad (Npad = N rounded up to ox_sgemm_nr()); inside it panel j
 * (columns j*nr ...) starts at j * nr * kc and holds kc rows of nr values
 * (columns past N zero or ignored). */
int ox_sgemm_nr(void);
int64_t ox_sgemm_kc(void);
size_t ox_sgemm_packed_b_floats(int64_t K, int64_t N);

/* Whether the 12-row AVX-512 tiles are in use: A read in place by
 * OX_GEMM_B_PANELS, row ranges and prologues of OX_GEMM_B_INPLACE, and
 * OX_GEMM_B_STRIPS work only there. */
bool ox_sgemm_has_ua(void);

/* B (K x N after op) packed whole, once, for repeated products by changing
 * A (a MatMul by a constant weight; OX_GEMM_B_WHOLE). A few rows stream
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

/* Name of the micro-kernel in use ("avx512", "avx2", "portable"). */
const char *ox_sgemm_isa(void);

/* ---- epilogues and prologues ---- */

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

/* A prologue transforms B's rows as they are read: row k becomes
 * max(fma(B[k][j], scale[k], bias[k]), 0) (the max when relu; as x > 0 ?
 * x : 0, NaN giving 0): a FusedConv's prologue (a BatchNormalization,
 * per-channel Mul / Add and Relu before a 1 x 1 convolution). */
typedef struct ox_sgemm_pro {
  const float *scale, *bias;
  bool relu;
} ox_sgemm_pro;

/* B made on the fly (OX_GEMM_B_STRIPS): strip(ctx, k0, kc, j0, n, buf)
 * writes rows [k0, k0+kc) of columns [j0, j0+n) (n <= 32, kc <=
 * ox_sgemm_kc()) to buf, row stride 32, zeros in columns n..31. Each strip
 * is used for every row panel while it is in L1 (implicit GEMM, e.g.
 * convolution taps read straight from the image). */
typedef void (*ox_sgemm_strip_fn)(void *ctx, int64_t k0, int64_t kc, int64_t j0, int n, float *buf);

/* Called on each block of C (rows [m0, m1), columns [n0, n1)) as soon as
 * its values are final, on the thread that made it (an epilogue over data
 * still in cache: a MatMul's bias, residual and activation). Every element
 * of C is in exactly one block. */
typedef void (*ox_sgemm_post_fn)(void *ctx, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

/* ---- the product ---- */

/* Where B comes from. */
typedef enum ox_gemm_b {
  /* B (ldb, trans_b), packed per call; A plain (A, lda, trans_a) or packed
   * (pa). alpha, beta; threads from pool. */
  OX_GEMM_B_PLAIN,
  /* B packed by the caller (see ox_sgemm_nr): C = A B + beta C; A packed
   * (pa), or plain and read in place (A, lda, not transposed; only where
   * ox_sgemm_has_ua). Calling thread. */
  OX_GEMM_B_PANELS,
  /* B (K x N, row stride ldb) read in place without a packing copy (e.g.
   * the input planes of a 1 x 1 convolution): C = A B + bias, then ep;
   * A packed (pa); rows [m0, m1) only when rows is set (m0 a multiple of
   * 12), and pro, only on the 12-row tiles. Calling thread. */
  OX_GEMM_B_INPLACE,
  /* B made by strip(strip_ctx, ...): C = A B + bias, then ep; A packed
   * (pa); rows [m0, m1) when rows is set. Only on the 12-row tiles.
   * Calling thread. */
  OX_GEMM_B_STRIPS,
  /* B packed whole once (bp): C (M x N) = A B with A plain (A, lda); post
   * (NULL: none) on each finished block; threads from pool. */
  OX_GEMM_B_WHOLE,
} ox_gemm_b;

typedef struct ox_gemm_desc {
  ox_gemm_b b;
  int64_t M, N, K; /* M and K come from pa when A is packed, K from bp */
  /* A: plain, or packed once */
  const float *A;
  int64_t lda;
  bool trans_a;
  const ox_sgemm_packed *pa;
  bool rows; /* INPLACE, STRIPS: rows [m0, m1) of A and C only (C and bias whole) */
  int64_t m0, m1;
  /* B, by kind */
  const float *B; /* PLAIN, PANELS, INPLACE */
  int64_t ldb;
  bool trans_b;
  const ox_sgemm_bpack *bp;
  ox_sgemm_strip_fn strip;
  void *strip_ctx;
  /* C = alpha * A B + beta * C (PLAIN; PANELS takes beta, alpha 1) */
  float alpha, beta;
  const float *bias;       /* INPLACE, STRIPS: bias[i] added to row i; NULL: none */
  const ox_sgemm_epi *ep;  /* INPLACE, STRIPS: applied by the last depth block's stores */
  const ox_sgemm_pro *pro; /* INPLACE: B's rows transformed as read */
  ox_sgemm_post_fn post;   /* WHOLE */
  void *post_ctx;
  float *C;
  int64_t ldc;
  ox_thread_pool *pool; /* PLAIN, WHOLE; NULL: the calling thread */
} ox_gemm_desc;

/* Runs the product. false, doing nothing, where the combination cannot run
 * here (strips, row ranges, prologues off the 12-row tiles: then pack B
 * instead); true otherwise. */
bool ox_gemm(const ox_gemm_desc *d);

#endif
