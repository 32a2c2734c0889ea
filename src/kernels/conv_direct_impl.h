/* conv_direct_impl.h - what conv_direct_body.h and the AVX-512 planes of
 * conv_direct_avx512.c share: the depthwise job, its limits and the
 * geometry of the bordered and flat scratch planes. Kernel-internal. */
#ifndef OX_KERNELS_CONV_DIRECT_IMPL_H
#define OX_KERNELS_CONV_DIRECT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "conv_direct.h"

/* dw_plane_avx512's widest row (blocks of 16) and kernel width; the
 * bordered plane's widest row; the flat run's largest plane and its widest
 * stride-2 row */
enum { DW_MAXBLK = 64, DW_MAXKW = 8, DWP_MAXW = 1024, DWF_MAXF = 4096, DWF_S2W = 64 };

/* Depthwise 2-D (one input channel per group): direct loops with the valid
 * range of each kernel column precomputed. */
typedef struct dw_job {
  const ox_nn_geom *g;
  const float *x, *w, *bias;
  float *y;
  int64_t C, Mg;           /* channels (= groups), outputs per group */
  int64_t shuffle;         /* a channel shuffle before the layer (groups), or 0 */
  bool plane;              /* dw_plane_avx512 applies (AVX-512 level) */
  bool padded;             /* dw_padded_range applies */
  bool flat;               /* dw_flat_range applies */
  const ox_sgemm_epi *epi; /* FusedConv epilogue (residual laid out like y), or NULL */
} dw_job;

/* channel t's input plane and its place in the job */
static inline const float *dw_src(const dw_job *j, int64_t t) {
  const ox_nn_geom *g = j->g;
  int64_t m = t % (j->C * j->Mg), n = t / (j->C * j->Mg), c = m / j->Mg;
  if (j->shuffle) c = c % j->shuffle * (j->C / j->shuffle) + c / j->shuffle;
  return j->x + (n * j->C + c) * g->in[0] * g->in[1];
}

/* a depthwise row's interior [*lo, *hi): the outputs whose every kernel
 * column lands inside the input (empty: *hi == *lo) */
static inline void dw_interior(const ox_nn_geom *g, int64_t *lo, int64_t *hi) {
  int64_t IW = g->in[1], sw = g->stride[1], dw = g->dil[1];
  *lo = 0;
  *hi = g->out[1];
  for (int64_t kw = 0; kw < g->k[1]; kw++) {
    int64_t off = kw * dw - g->pb[1];
    int64_t l = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t h = IW - off <= 0 ? 0 : (IW - off + sw - 1) / sw;
    if (l > *lo) *lo = l;
    if (h < *hi) *hi = h;
  }
  if (*hi < *lo) *hi = *lo;
}

/* The bordered plane's row length (floats: a multiple of 16, so rows stay
 * aligned; stride 1 the padded columns and a vector more, stride 2 each
 * phase so), its rows and its size with a 32-float margin; false when the
 * input is wider than the plane. */
static inline bool dwp_dims(const ox_nn_geom *g, int64_t *L, int64_t *rw, int64_t *ph,
                            int64_t *size) {
  int64_t owp = (g->out[1] + 15) / 16 * 16, sw = g->stride[1];
  *L = owp + 16;
  *rw = sw == 1 ? *L : 2 * *L;
  *ph = (g->out[0] - 1) * g->stride[0] + 3;
  *size = *rw * *ph + 32;
  return sw == 1 ? g->in[1] + g->pb[1] <= *L : (g->in[1] + g->pb[1] + 1) / 2 <= *L;
}

/* the flat run's geometry for kernel K and stride S: row stride rs, rows
 * prows of each of np planes */
static inline void dwf_dims(const ox_nn_geom *g, int64_t *rs, int64_t *prows, int64_t *np) {
  int64_t K = g->k[0], S = g->stride[0], OH = g->out[0], OW = g->out[1];
  *rs = S == 1 ? OW + K - 1 : OW + (K - 1) / 2;
  *prows = S == 1 ? OH + K - 1 : OH + (K - 1) / 2;
  *np = S == 1 ? 1 : 4;
}

/* conv_direct_avx512.c (AVX-512 level only) */
int64_t ox_dw_interior_avx512(const ox_nn_geom *g, const float *xc, const float *wm, float b,
                              int64_t oh, float *yr, int64_t ow, int64_t in_hi);
void ox_dw_plane_avx512(const ox_nn_geom *g, const float *xc, const float *wm, float b, float *y);
bool ox_dw_padded_range_avx512(const dw_job *j, int64_t t0, int64_t t1);
bool ox_dw_flat_range_avx512(const dw_job *j, int64_t t0, int64_t t1);
void ox_few_rows_avx512(const ox_few_job *j, int64_t m0, int64_t m1);
/* conv_dw_blk_avx512.c: small maps (at most 256 or 1024 outputs) of 3 x 3
 * or 5 x 5 kernels, strides 1 or 2, with 16 channels in the vector lanes.
 * blocks: the number of 16-channel blocks when the geometry takes that
 * path, else 0. blocked: those blocks of N images, done[n * blocks + b]
 * set for each one computed (a thread without scratch memory leaves its
 * blocks to the caller); the epilogue without residual. */
int64_t ox_dw_blocks_avx512(const ox_nn_geom *g, int64_t C);
void ox_dw_blocked_avx512(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C,
                          const float *x, const float *w, const float *bias,
                          const ox_sgemm_epi *epi, float *y, uint8_t *done);

/* ---- the stem convolution (conv_stem_body.h, conv_stem_avx512.c) ---- */

/* limits of ox_conv_stem_fits: input channels, kernel side, output row */
enum { STEM_MAXC = 4, STEM_MAXK = 11, STEM_MAXW = 4096 };
/* a band's copied input rows at most (unless one row of outputs needs more):
 * half of a 48 KB L1 */
enum { STEM_BAND_BYTES = 24 * 1024 };

/* A stem convolution. Each task takes a band of output rows of one image:
 * the band's input rows of every channel are copied zero-padded into the
 * thread's scratch, each split into its sw column phases (phase p holds
 * columns p, p + sw, ...: a stride-2 tap then reads a contiguous run), so
 * that every output row is computed without borders. The band holds
 * channel c's row r (r from the band's first input row) at
 * (c * rows_in + r) * sw * pl, phase p pl floats further. W is packed in
 * blocks of 8 output channels, tap by tap (wp[(b * T + t) * 8 + i], zeros
 * past M), so that one tap's 8 weights are adjacent. */
typedef struct stem_job {
  const ox_nn_geom *g;
  const float *x, *wp, *bp; /* bp: the bias of the 8-channel blocks (zeros: none) */
  float *y;
  const ox_sgemm_epi *epi;       /* FusedConv epilogue (residual laid out like y), or NULL */
  int64_t C, M, T;               /* taps T = C * KH * KW, in W's order */
  int64_t band, nbands;          /* output rows per task, tasks per image */
  int64_t pl, rows_in;           /* a phase row's floats (a multiple of 16), a band's input rows */
  int64_t koff[STEM_MAXK];       /* kernel column kw's offset in a row: (kw % sw) * pl + kw / sw */
  int64_t pool_rows, pool_tasks; /* stem_pool: pool rows per task, tasks per image */
  _Atomic int oom;
} stem_job;

/* Output row oh of image n, every channel, from the band's rows xb (its
 * first input row for oh: the row of channel 0 that kernel row 0 reads),
 * the epilogue applied in registers (conv_stem_avx512.c). */
void ox_stem_row_avx512(const stem_job *j, const float *xb, int64_t n, int64_t oh);
/* d[q] = s[2 q] for q < n (conv_stem_avx512.c) */
void ox_stem_even_avx512(const float *s, int64_t n, float *d);
/* the portable level's entry (the SIMD128 build's table shares it) */
int ox_conv_stem_ref(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                     const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                     float *y);

#endif
