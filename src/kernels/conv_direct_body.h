/* conv_direct_body.h - conv_direct.h's drivers and portable loops,
 * compiled once per level (included by conv_direct_avx512.c,
 * conv_direct_avx2.c and conv_direct_ref.c, levels.h's per-file form); at the
 * AVX-512 level they call the hand-written planes of conv_direct_avx512.c
 * and conv_dw_blk_avx512.c. */
#include <stdint.h>
#include <stdlib.h>

#include "conv_direct_impl.h"
#include "conv_stem_body.h" /* the stem entry */
#include "levels.h"         /* OX_LEVEL_FN, OX_LEVEL_NAME for the including level */

/* One output row of a depthwise 2-D convolution: columns where every kernel
 * column lands inside the input are computed 16 at a time in registers; the
 * edges tap by tap. */
static inline void dw_row(const ox_nn_geom *g, const float *xc, const float *wm, float b,
                          int64_t oh, float *yr) {
  int64_t IH = g->in[0], IW = g->in[1], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t sh = g->stride[0], sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
  /* interior [in_lo, in_hi): all kw taps valid */
  int64_t in_lo, in_hi;
  dw_interior(g, &in_lo, &in_hi);
  for (int64_t ow = 0; ow < OW; ow++) {
    if (ow == in_lo) ow = in_hi > ow ? in_hi : ow;
    if (ow >= OW) break;
    float acc = b;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih = oh * sh - g->pb[0] + kh * dh;
      if (ih < 0 || ih >= IH) continue;
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t iw = ow * sw + kw * dw - g->pb[1];
        if (iw >= 0 && iw < IW) acc += wm[kh * KW + kw] * xc[ih * IW + iw];
      }
    }
    yr[ow] = acc;
  }
  int64_t ow = in_lo;
#if OX_LEVEL == 2
  ow = ox_dw_interior_avx512(g, xc, wm, b, oh, yr, ow, in_hi);
#endif
  for (; ow + 16 <= in_hi; ow += 16) {
    float acc[16];
    for (int i = 0; i < 16; i++) acc[i] = b;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih = oh * sh - g->pb[0] + kh * dh;
      if (ih < 0 || ih >= IH) continue;
      const float *xr = xc + ih * IW + ow * sw - g->pb[1];
      for (int64_t kw = 0; kw < KW; kw++) {
        float wv = wm[kh * KW + kw];
        const float *xs = xr + kw * dw;
        if (sw == 1)
          for (int i = 0; i < 16; i++) acc[i] += wv * xs[i];
        else
          for (int i = 0; i < 16; i++) acc[i] += wv * xs[i * sw];
      }
    }
    for (int i = 0; i < 16; i++) yr[ow + i] = acc[i];
  }
  for (; ow < in_hi; ow++) {
    float acc = b;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih = oh * sh - g->pb[0] + kh * dh;
      if (ih < 0 || ih >= IH) continue;
      const float *xr = xc + ih * IW + ow * sw - g->pb[1];
      for (int64_t kw = 0; kw < KW; kw++) acc += wm[kh * KW + kw] * xr[kw * dw];
    }
    yr[ow] = acc;
  }
}

OX_LEVEL_FN static void dw_task(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];
#if OX_LEVEL == 2
  if (j->flat && ox_dw_flat_range_avx512(j, t0, t1)) return;
  if (j->padded && ox_dw_padded_range_avx512(j, t0, t1)) return;
#endif
  for (int64_t t = t0; t < t1; t++) { /* t = n * M + m */
    int64_t m = t % (j->C * j->Mg), n = t / (j->C * j->Mg), c = m / j->Mg;
    if (j->shuffle) c = c % j->shuffle * (j->C / j->shuffle) + c / j->shuffle;
    const float *xc = j->x + (n * j->C + c) * IH * IW;
    const float *wm = j->w + m * KH * KW;
    float *ym = j->y + t * OH * OW;
    float b = j->bias ? j->bias[m] : 0.0f;
    bool done_epi = false;
#if OX_LEVEL == 2
    /* an epilogue without a residual runs on the registers before the store */
    if (j->plane)
      ox_dw_plane_avx512(g, xc, wm, b, ym);
    else
#endif
      for (int64_t oh = 0; oh < OH; oh++) dw_row(g, xc, wm, b, oh, ym + oh * OW);
    if (j->epi && !done_epi) { /* over the plane just written */
      ox_sgemm_epi ep = ox_sgemm_epi_at(j->epi, 0, t * OH * OW);
      ox_sgemm_epi_apply(&ep, 1, OH * OW, ym, OH * OW);
    }
  }
}

static void depthwise(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Mg,
                      const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                      int64_t shuffle, float *y) {
  dw_job dj = {g, x, w, bias, y, G, Mg, shuffle, false, false, false, epi};
#if OX_LEVEL == 2
  /* small maps: sixteen channels at a time in the vector lanes */
  int64_t nblk = Mg == 1 && !shuffle && !(epi && epi->res) ? ox_dw_blocks_avx512(g, G) : 0;
  uint8_t *done = nblk ? calloc((size_t)(N * nblk), 1) : NULL;
  if (done) {
    ox_dw_blocked_avx512(pool, g, N, G, x, w, bias, epi, y, done);
    for (int64_t t = 0; t < N * nblk; t++) /* blocks a thread could not take: plane by plane */
      if (!done[t]) {
        int64_t c0 = t % nblk * 16, c1 = c0 + 16 < G ? c0 + 16 : G, n = t / nblk;
        dw_task(&dj, n * G + c0, n * G + c1);
      }
    free(done);
    return;
  }
  dj.plane = (g->stride[1] == 1 || g->stride[1] == 2) && g->out[1] <= 16 * DW_MAXBLK &&
             g->k[1] <= DW_MAXKW && g->out[1] > 0;
  dj.padded = dj.plane && g->nd == 2 && g->k[0] == 3 && g->k[1] == 3 && g->dil[0] == 1 &&
              g->dil[1] == 1 && g->stride[0] == g->stride[1] && g->pb[0] <= 2 && g->pb[1] <= 2 &&
              g->out[1] >= 12 && g->out[1] <= DWP_MAXW;
  /* (3 x 3: rows under 12 outputs at stride 1 (wider ones take the
   * bordered plane), under DWF_S2W at stride 2; 5 x 5: both strides, rows
   * under DWF_S2W: one flat run) */
  int64_t fs = g->stride[0], fk = g->k[0], rs = 0, prows = 0, np = 0;
  dj.flat = dj.plane && g->nd == 2 && (fk == 3 || fk == 5) && g->k[1] == fk && g->dil[0] == 1 &&
            g->dil[1] == 1 && fs == g->stride[1] && (fs == 1 || fs == 2) && g->pb[0] <= fk - 1 &&
            g->pb[1] <= fk - 1 && g->pe[0] <= fk - 1 && g->pe[1] <= fk - 1 &&
            g->out[1] < (fs == 1 && fk == 3 ? 12 : DWF_S2W);
  if (dj.flat) {
    dwf_dims(g, &rs, &prows, &np);
    dj.flat = g->in[1] + g->pb[1] <= fs * rs && g->out[0] * rs <= DWF_MAXF;
  }
#endif
  ox_parallel_for(pool, N * G * Mg, 1, dw_task, &dj);
}

/* y[m, p] for p < P (P <= 8, a constant in each instantiation so that the
 * accumulators stay in registers): one pass over each row of W */
static inline __attribute__((always_inline)) void few_rows(const ox_few_job *j, int64_t m0,
                                                           int64_t m1, int P) {
  int64_t K = j->K, K16 = K / 16 * 16;
  for (int64_t m = m0; m < m1; m++) {
    const float *wr = j->w + m * K;
    float acc[8][16] = {{0}};
    for (int64_t i = 0; i < K16; i += 16)
      for (int p = 0; p < P; p++) {
        const float *cr = j->colt + p * K + i;
        for (int k = 0; k < 16; k++) acc[p][k] += wr[i + k] * cr[k];
      }
    for (int p = 0; p < P; p++) {
      float sum = 0.0f;
      for (int k = 0; k < 16; k++) sum += acc[p][k];
      const float *cr = j->colt + p * K;
      for (int64_t i = K16; i < K; i++) sum += wr[i] * cr[i];
      j->y[m * j->P + p] = j->bias ? sum + j->bias[m] : sum;
    }
  }
}

OX_LEVEL_FN static void few_task(void *arg, int64_t m0, int64_t m1) {
  const ox_few_job *j = arg;
#if OX_LEVEL == 2
  ox_few_rows_avx512(j, m0, m1);
#else
  switch (j->P) {
    case 1:
      few_rows(j, m0, m1, 1);
      break;
    case 2:
      few_rows(j, m0, m1, 2);
      break;
    case 3:
      few_rows(j, m0, m1, 3);
      break;
    case 4:
      few_rows(j, m0, m1, 4);
      break;
    case 5:
      few_rows(j, m0, m1, 5);
      break;
    case 6:
      few_rows(j, m0, m1, 6);
      break;
    case 7:
      few_rows(j, m0, m1, 7);
      break;
    default:
      few_rows(j, m0, m1, 8);
      break;
  }
#endif
}

const ox_conv_direct_kernels OX_LEVEL_NAME(ox_conv_direct_kernels) = {(ox_isa)OX_LEVEL, depthwise,
                                                                      few_task, stem, stem_pool};
