/* gemm_impl.h - what the float GEMM's files share inside src/kernels/:
 * the blocking, the micro-kernel chosen for this CPU, B's panel packing and
 * the threaded blocked product (gemm.c), used by the products on a B packed
 * once (gemm_pb.c). */
#ifndef OX_GEMM_IMPL_H
#define OX_GEMM_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"

enum { KC_BLOCK = 384, MC_BLOCK = 96, NC_BLOCK = 768 };

/* Full tile: C[MR x NR] (ldc) = alpha * sum + beta * C (beta == 0: C ignored). */
typedef void (*ukernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                           float alpha, float beta);

typedef struct ukernel {
  int mr, nr;
  ukernel_fn fn;
  const char *name;
} ukernel;

/* The micro-kernel for this CPU (AVX-512 12 x 32, AVX2 6 x 16, portable 4 x 16). */
ukernel ox_gemm_kernel(void);

/* B may lie unaligned (a weight packed straight out of a model file's
 * bytes): read through a float of alignment 1 */
typedef float f32_unaligned __attribute__((aligned(1)));

/* Columns [j0, j0+nc) x depth [k0, k0+kc) of op(B) into nr-column panels. */
void ox_gemm_pack_b_panels(int nr, bool tb, const f32_unaligned *B, int64_t ldb, int64_t k0,
                           int64_t kc, int64_t j0, int64_t nc, float *dst);

/* A blocked product, split over the pool by columns or rows. */
typedef struct gemm_job {
  ukernel uk;
  bool ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  float alpha, beta;
  const float *A, *B;
  float *C;
  const ox_sgemm_packed *pa; /* when A is pre-packed */
  const float *bpre;         /* when B is pre-packed whole (ox_sgemm_bpack): its data */
  int64_t bpre_npad;         /* and its padded column count */
  int64_t split;             /* 0: tasks split columns, 1: rows */
  int64_t chunk;             /* columns or rows per task */
  int64_t ntasks;
  /* with B packed whole: called on each finished block of C (rows [m0,
   * m1), columns [n0, n1) final), NULL: none */
  ox_sgemm_post_fn post;
  void *post_ctx;
} gemm_job;

void ox_gemm_run(gemm_job *g, ox_thread_pool *pool);

/* Rows [i0, i0 + mc) (mc a multiple of mr) x depth [k0, k0 + kc) of op(A)
 * into mr-row panels at dst. */
void ox_gemm_pack_a(int mr, bool ta, const float *A, int64_t lda, int64_t M, int64_t i0, int64_t mc,
                    int64_t k0, int64_t kc, float *dst);
/* Micro-kernel tiles over mc rows of packed A and nc columns of packed B
 * into C (row stride g->ldc); beta as the micro-kernel takes it. */
void ox_gemm_macro_tile(const gemm_job *g, const float *apan, const float *bblk, int64_t kc,
                        int64_t mc, float *C, int64_t nc, float beta);
/* The blocked product over rows [m0, m1) and columns [n0, n1) (gemm.c),
 * and the same with B packed whole (gemm_pb.c). */
void ox_gemm_block(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void ox_gemm_block_pb(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

#endif
