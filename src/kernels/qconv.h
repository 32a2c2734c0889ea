/* qconv.h - 8-bit integer convolution with requantisation (QLinearConv and
 * the QDQ Conv units the session fuses into it).
 *
 * Per group, Y (M x P output positions) = W (M x K) times the im2col of X
 * (K x P), where W is packed once and the columns are built per chunk of
 * output rows straight into panels of 16 positions, 4 depth bytes each —
 * the operand layout of AVX512-VNNI's vpdpbusd (unsigned columns, signed
 * weights). Signed X is shifted to unsigned (+128) and unsigned W to signed
 * (-128) with the zero points shifted alike, so the integer sums are exact:
 *
 *   acc[m][p] = sum_k (x'[k][p] - zx')(w'[m][k] - zw'[m])
 *             = dot - zx' wsum[m] - zw'[m] colsum[p] + K zx' zw'[m]
 *
 * and the epilogue writes y = clamp(round(acc * mult[m] + bias[m]) + zy)
 * straight into Y's rows: no int32 or float intermediate tensor. */
#ifndef OX_QCONV_H
#define OX_QCONV_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"
#include "nn.h"

/* Weights of one group, packed: rows in blocks of OX_QCONV_MR, each block
 * [K4][MR][4] signed bytes (zero padded in K and M). */
#define OX_QCONV_MR 8
typedef struct ox_qconv_w {
  int64_t M, K, K4, Mp;
  int8_t *data;
  int32_t *wsum; /* [Mp] sums of w' per row */
  int32_t *zw;   /* [Mp] zero points of w' */
  bool any_zw;   /* some zw' != 0: the column sums are needed */
} ox_qconv_w;

/* Packs W (M rows of K bytes, row stride ldw; int8 or uint8) with its zero
 * points zw (NULL: 0; zw_n 1 or M values, of W's type). */
int ox_qconv_pack_w(const void *W, bool w_signed, int64_t M, int64_t K, int64_t ldw, const void *zw,
                    int64_t zw_n, ox_qconv_w *out, ox_err *e);
void ox_qconv_free_w(ox_qconv_w *w);

/* Requantisation of the output channels of one group. */
typedef struct ox_qconv_req {
  const float *mult;  /* [M] x_scale * w_scale[m] / y_scale */
  const float *bias;  /* [M] bias / y_scale, or NULL */
  int32_t zy, lo, hi; /* output zero point; clamp range (a fused Relu raises lo to zy) */
  bool y_signed;
} ox_qconv_req;

/* One image of one group: x is C planes of g->in_size unsigned bytes (signed
 * input already shifted by +128, zx likewise), y is M rows of g->out_size
 * bytes of the output type. Splits the output rows over the pool. */
int ox_qconv_run(const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx, const ox_qconv_w *w,
                 const ox_qconv_req *q, void *y, ox_thread_pool *pool, ox_err *e);

/* ox_qconv_run on a given path ("avx512vnni", "portable"; NULL: the best
 * here), for tests; OX_EUNSUPPORTED when this CPU lacks it. */
int ox_qconv_run_on(const char *path, const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx,
                    const ox_qconv_w *w, const ox_qconv_req *q, void *y, ox_thread_pool *pool,
                    ox_err *e);

/* The micro-kernel path in use here: "avx512vnni" or "portable". */
const char *ox_qconv_path(void);

#endif
