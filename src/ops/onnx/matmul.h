/* matmul.h - what matmul.c lends the fused products built on MatMul
 * (matmul_epi.c): its preparation (a constant 2-D float B packed once) and
 * its product with an epilogue called on each finished block of the
 * output. */
#ifndef OX_OPS_MATMUL_H
#define OX_OPS_MATMUL_H

#include "../../kernels/gemm.h"
#include "../../runtime/kernel.h"

/* An epilogue over the float output; the caller embeds it first in its own
 * context: fn is called with the struct itself. y and N are set by
 * ox_mm_compute_post before the product starts. */
typedef struct ox_mm_post {
  ox_sgemm_post_fn fn;
  float *y;  /* the output, rows of N */
  int64_t N; /* its row length */
} ox_mm_post;

/* MatMul's prepare and release (state: B packed, or NULL) */
int ox_mm_prepare(const ox_kinfo *info, void **state, ox_err *e);
void ox_mm_release(void *state);
/* MatMul(a, b) into output 0 (b NULL when packed at prepare; tb: b's last
 * two axes swapped, as MatMulTransBFused), then post on
 * every block: as the product makes it when B was packed, else over the
 * whole output after it. Fails (naming the node) for anything but a float
 * A and a 2-D B. */
int ox_mm_compute_post(ox_kctx *ctx, const void *state, ox_value *a, ox_value *b, bool tb,
                       ox_mm_post *post);
/* MatMulTransBFused's prepare: a constant 2-D B [N, K] packed once as B^T
 * (shared by the session's nodes reading it); the product is then
 * ox_mm_compute_post with tb */
int ox_mm_prepare_tb(const ox_kinfo *info, void **state, ox_err *e);
/* MatMul(a, b) into output 0, or a times b with its last two axes swapped
 * when tb (numpy broadcasting of the batch axes; any float type) */
int ox_mm_compute_tb(ox_kctx *ctx, ox_value *a, ox_value *b, bool tb);
/* N of the packed B, or -1 when B was not packed */
int64_t ox_mm_packed_n(const void *state);

#endif
