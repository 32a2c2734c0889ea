/* conv_stem_body.h - the stem convolution (conv_direct.h's stem entry: a
 * few input channels, one group) compiled once per level, included by
 * conv_direct_body.h. The driver below packs W, shares bands of output rows
 * among the threads and fills each band's zero-padded phase rows
 * (conv_direct_impl.h's stem_job); a row of outputs is then a direct
 * convolution with output pixels in the lanes and eight output channels
 * per block, each weight broadcast against a run of 16 pixels. At the
 * AVX-512 level the rows are conv_stem_avx512.c's (24 accumulators in
 * registers, the epilogue on them); here, for AVX2 and portable builds,
 * 4 channels x 16 pixels.
 *
 * Why not im2col + GEMM: with 3 input channels the GEMM's depth is 27
 * (3 x 3) or 147 (7 x 7), too short to amortise its packing, and the
 * im2col of a 224 x 224 image is 27 or 147 times the image. Each output
 * takes its taps in W's order from the bias, as the other direct paths. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_direct_impl.h"
#include "levels.h" /* OX_LEVEL_FN, OX_LEVEL_NAME for the including level */

/* The band of output rows [oh0, oh1) of image n: its input rows of every
 * channel, zero outside the image, split into column phases (layout in
 * conv_direct_impl.h). */
OX_LEVEL_BODY void stem_band(const stem_job *j, int64_t n, int64_t oh0, int64_t oh1, float *buf) {
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], sh = g->stride[0], sw = g->stride[1], pl = j->pl;
  int64_t rows = (oh1 - oh0 - 1) * sh + g->k[0], rs = sw * pl;
  for (int64_t c = 0; c < j->C; c++) {
    const float *xc = j->x + (n * j->C + c) * IH * IW;
    for (int64_t r = 0; r < rows; r++) {
      int64_t ih = oh0 * sh - g->pb[0] + r;
      float *dst = buf + (c * j->rows_in + r) * rs;
      if (ih < 0 || ih >= IH) {
        memset(dst, 0, (size_t)rs * sizeof(float));
        continue;
      }
      const float *xr = xc + ih * IW;
      for (int64_t p = 0; p < sw; p++) {
        /* phase p's entries q read column q * sw + p - pb: inside the image
         * for q in [q0, q1) */
        int64_t off = p - g->pb[1];
        int64_t q0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int64_t q1 = IW - off <= 0 ? 0 : (IW - off + sw - 1) / sw;
        if (q1 > pl) q1 = pl;
        if (q0 > q1) q0 = q1;
        float *d = dst + p * pl;
        const float *src = xr + off;
        memset(d, 0, (size_t)q0 * sizeof(float));
        if (sw == 1) memcpy(d + q0, src + q0, (size_t)(q1 - q0) * sizeof(float));
#if OX_LEVEL == 2
        else if (sw == 2)
          ox_stem_even_avx512(src + q0 * 2, q1 - q0, d + q0);
#endif
        else
          for (int64_t q = q0; q < q1; q++) d[q] = src[q * sw];
        memset(d + q1, 0, (size_t)(pl - q1) * sizeof(float));
      }
    }
  }
}

#if OX_LEVEL != 2
#if OX_LEVEL == 1
/* AVX2: 8-float vectors (GCC / clang vector extensions: ymm registers;
 * GCC 12 at -O2 left the plain loop below scalar), written out per vector:
 * loops over arrays of them, or copies of whole arrays, put the
 * accumulators in memory (20 times slower) */
typedef float stem_v8 __attribute__((vector_size(32)));

/* 4 channels (weights wt[0..3] of each tap, 8 apart) by 16 pixels from xr's
 * runs into out (4 x 16) */
OX_LEVEL_BODY void stem_4x16(const stem_job *j, const float *xr0, int64_t cs, int64_t rs,
                             const float *wt, const float *bb, float out[4][16]) {
  stem_v8 a0[4], a1[4];
  for (int i = 0; i < 4; i++) a0[i] = a1[i] = (stem_v8){0} + bb[i];
  for (int64_t c = 0; c < j->C; c++)
    for (int64_t kh = 0; kh < j->g->k[0]; kh++) {
      const float *xr = xr0 + c * cs + kh * rs;
      for (int64_t kw = 0; kw < j->g->k[1]; kw++, wt += 8) {
        stem_v8 x0, x1;
        memcpy(&x0, xr + j->koff[kw], sizeof x0);
        memcpy(&x1, xr + j->koff[kw] + 8, sizeof x1);
        for (int i = 0; i < 4; i++) {
          a0[i] += wt[i] * x0;
          a1[i] += wt[i] * x1;
        }
      }
    }
  for (int i = 0; i < 4; i++) {
    memcpy(out[i], &a0[i], sizeof a0[i]);
    memcpy(out[i] + 8, &a1[i], sizeof a1[i]);
  }
}
#else
/* portable: plain floats (clang vectorises them for SIMD128; GCC's
 * lowering of 8-float vectors to SSE2 ran 2.7 times slower than this) */
OX_LEVEL_BODY void stem_4x16(const stem_job *j, const float *xr0, int64_t cs, int64_t rs,
                             const float *wt, const float *bb, float out[4][16]) {
  for (int i = 0; i < 4; i++)
    for (int l = 0; l < 16; l++) out[i][l] = bb[i];
  for (int64_t c = 0; c < j->C; c++)
    for (int64_t kh = 0; kh < j->g->k[0]; kh++) {
      const float *xr = xr0 + c * cs + kh * rs;
      for (int64_t kw = 0; kw < j->g->k[1]; kw++, wt += 8) {
        const float *xs = xr + j->koff[kw];
        for (int i = 0; i < 4; i++)
          for (int l = 0; l < 16; l++) out[i][l] += wt[i] * xs[l];
      }
    }
}
#endif

/* Output row oh of image n, every channel (the AVX-512 level's is
 * conv_stem_avx512.c's): blocks of 4 channels by 16 pixels (8
 * accumulators), the pixels past OW computed from the zero-padded phase
 * rows and not stored; then the epilogue over the row. */
OX_LEVEL_BODY void stem_row(const stem_job *j, const float *xb, int64_t n, int64_t oh) {
  const ox_nn_geom *g = j->g;
  int64_t OH = g->out[0], OW = g->out[1], M = j->M, T = j->T;
  int64_t rs = g->stride[1] * j->pl, cs = j->rows_in * rs;
  float *yrow = j->y + n * M * OH * OW + oh * OW;
  for (int64_t m0 = 0; m0 < M; m0 += 4) {
    /* channels m0..m0+3 are half of the block of 8 at m0 / 8 */
    const float *wb = j->wp + m0 / 8 * T * 8 + m0 % 8, *bb = j->bp + m0;
    for (int64_t ow = 0; ow < OW; ow += 16) {
      float out[4][16];
      stem_4x16(j, xb + ow, cs, rs, wb, bb, out);
      int64_t nl = OW - ow < 16 ? OW - ow : 16;
      for (int i = 0; i < 4 && m0 + i < M; i++)
        memcpy(yrow + (m0 + i) * OH * OW + ow, out[i], (size_t)nl * sizeof(float));
    }
  }
  if (j->epi) { /* over the row just written (channel rows OH * OW apart) */
    ox_sgemm_epi ep = *j->epi;
    if (ep.res) ep.res += n * M * OH * OW + oh * OW;
    ep.ldr = OH * OW;
    ox_sgemm_epi_apply(&ep, M, OW, yrow, OH * OW);
  }
}
#endif

/* tasks [t0, t1): t = n * nbands + band */
OX_LEVEL_FN static void stem_task(void *arg, int64_t t0, int64_t t1) {
  stem_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OH = g->out[0], rs = g->stride[1] * j->pl;
  float *buf = ox_scratch(2, (size_t)(j->C * j->rows_in * rs) * sizeof(float));
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / j->nbands, oh0 = t % j->nbands * j->band;
    int64_t oh1 = oh0 + j->band < OH ? oh0 + j->band : OH;
    stem_band(j, n, oh0, oh1, buf);
    for (int64_t oh = oh0; oh < oh1; oh++) {
      const float *xb = buf + (oh - oh0) * g->stride[0] * rs;
#if OX_LEVEL == 2
      ox_stem_row_avx512(j, xb, n, oh);
#else
      stem_row(j, xb, n, oh);
#endif
    }
  }
}

/* W packed in blocks of 8 channels and the band geometry (stem_job), for
 * tasks of output rows; j->wp to be freed. OX_ENOMEM when W's copy could
 * not be had. */
static int stem_setup(stem_job *j, ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C,
                      int64_t M, const float *x, const float *w, const float *bias,
                      const ox_sgemm_epi *epi, float *y) {
  int64_t OH = g->out[0], OW = g->out[1], KW = g->k[1], sw = g->stride[1];
  int64_t T = C * g->k[0] * KW, nb = (M + 7) / 8;
  float *wp = malloc((size_t)(nb * 8 * (T + 1)) * sizeof(float));
  if (!wp) return OX_ENOMEM;
  float *bp = wp + nb * 8 * T;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t t = 0; t < T; t++)
      for (int64_t i = 0; i < 8; i++) {
        int64_t m = b * 8 + i;
        wp[(b * T + t) * 8 + i] = m < M ? w[m * T + t] : 0.0f;
      }
  for (int64_t m = 0; m < nb * 8; m++) bp[m] = bias && m < M ? bias[m] : 0.0f;
  *j = (stem_job){.g = g, .x = x, .wp = wp, .bp = bp, .y = y, .epi = epi, .C = C, .M = M, .T = T};
  /* a phase row: the 16-pixel runs of a whole output row (rounded up) and
   * the kernel's reach past them */
  int64_t ow16 = (OW + 15) / 16 * 16;
  j->pl = (ow16 + (KW - 1) / sw + 15) / 16 * 16;
  for (int64_t kw = 0; kw < KW; kw++) j->koff[kw] = kw % sw * j->pl + kw / sw;
  /* bands of up to 8 rows (the rows shared by consecutive output rows are
   * copied once per band), fewer when the threads need more tasks or when
   * the band would not stay in L1 (STEM_BAND_BYTES) */
  int nt = ox_thread_pool_size(pool);
  int64_t band = OH < 8 ? OH : 8, row_bytes = C * sw * j->pl * (int64_t)sizeof(float);
  while (band > 1 && (N * ((OH + band - 1) / band) < 4 * nt ||
                      ((band - 1) * g->stride[0] + g->k[0]) * row_bytes > STEM_BAND_BYTES))
    band--;
  j->band = band;
  j->nbands = (OH + band - 1) / band;
  j->rows_in = (band - 1) * g->stride[0] + g->k[0];
  atomic_init(&j->oom, 0);
  return OX_OK;
}

static int stem(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                float *y) {
  stem_job j;
  if (stem_setup(&j, pool, g, N, C, M, x, w, bias, epi, y)) return OX_ENOMEM;
  ox_parallel_for(pool, N * j.nbands, 1, stem_task, &j);
  free((void *)j.wp);
  return atomic_load(&j.oom) ? OX_ENOMEM : OX_OK;
}

/* ---- the stem and a 3 x 3 stride-2 max pool of its output ---- */

/* The ring slot of convolution row oh: pool row q reads rows 2 q, 2 q + 1
 * and 2 q + 2, held in slots 0, 1, 2 for q even and 2, 1, 0 for q odd (row
 * 2 q + 2 is pool row q + 1's first: the same slot), so that the three rows
 * are always evenly spaced (one vector pass per pool row, rows OW apart
 * up or down). */
static inline int64_t stem_ring_slot(int64_t oh) {
  int64_t q = oh / 2, r = oh % 2;
  return q % 2 ? 2 - r : r;
}

/* Tasks [t0, t1) of pool rows (t = n * pool_tasks + part): the convolution
 * rows a part's pool rows read are computed in band order into a ring of 3
 * rows per channel (the thread's scratch, after its band's phase rows:
 * stem_ring_slot), and each pool row is made as soon as its third row is in: the convolution's
 * output never leaves L2. A part's first row is also its predecessor's last
 * (computed twice: one row of 2 x pool rows per part). */
OX_LEVEL_FN static void stem_pool_task(void *arg, int64_t t0, int64_t t1) {
  stem_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OW = g->out[1], M = j->M, rs = g->stride[1] * j->pl;
  int64_t PH = (g->out[0] - 3) / 2 + 1, PW = (OW - 3) / 2 + 1;
  size_t in_floats = (size_t)(j->C * j->rows_in * rs);
  float *buf = ox_scratch(2, (in_floats + (size_t)(M * 3 * OW)) * sizeof(float));
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  float *ring = buf + in_floats;
  /* the row kernels write channel m's row oh of image n at ((n M + m) OH +
   * oh) OW: with OH = 3, n = 0 and oh the ring slot, into the ring */
  ox_nn_geom rg = *g;
  rg.out[0] = 3;
  stem_job rj = *j;
  rj.g = &rg;
  rj.y = ring;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / j->pool_tasks, part = t % j->pool_tasks;
    int64_t ph0 = part * j->pool_rows, ph1 = ph0 + j->pool_rows < PH ? ph0 + j->pool_rows : PH;
    int64_t c0 = 2 * ph0, c1 = 2 * (ph1 - 1) + 3, ph = ph0;
    for (int64_t b0 = c0; b0 < c1; b0 += j->band) {
      int64_t b1 = b0 + j->band < c1 ? b0 + j->band : c1;
      stem_band(j, n, b0, b1, buf);
      for (int64_t oh = b0; oh < b1; oh++) {
        const float *xb = buf + (oh - b0) * g->stride[0] * rs;
#if OX_LEVEL == 2
        ox_stem_row_avx512(&rj, xb, 0, stem_ring_slot(oh));
#else
        stem_row(&rj, xb, 0, stem_ring_slot(oh));
#endif
        if (oh != 2 * ph + 2) continue;
        /* rows 2 ph .. 2 ph + 2 in slots 0, 1, 2 (ph even) or 2, 1, 0 */
        int64_t ld = ph % 2 ? -OW : OW;
        for (int64_t m = 0; m < M; m++)
          ox_nn_pool3x3s2_rows_f32(j->y + ((n * M + m) * PH + ph) * PW, PW,
                                   ring + (m * 3 + stem_ring_slot(2 * ph)) * OW, ld, 1, PW, true);
        ph++;
      }
    }
  }
}

static int stem_pool(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                     const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                     float *y) {
  stem_job j;
  if (stem_setup(&j, pool, g, N, C, M, x, w, bias, epi, y)) return OX_ENOMEM;
  /* two parts of the pool rows per thread: few shared rows computed twice,
   * some slack for a thread the machine slows */
  int nt = ox_thread_pool_size(pool);
  int64_t PH = (g->out[0] - 3) / 2 + 1, parts = nt > 1 ? 2 * (int64_t)nt : 1;
  if (parts > PH) parts = PH;
  j.pool_rows = (PH + parts - 1) / parts;
  j.pool_tasks = (PH + j.pool_rows - 1) / j.pool_rows;
  ox_parallel_for(pool, N * j.pool_tasks, 1, stem_pool_task, &j);
  free((void *)j.wp);
  return atomic_load(&j.oom) ? OX_ENOMEM : OX_OK;
}

#if OX_LEVEL == 0
int ox_conv_stem_ref(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                     const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                     float *y) {
  return stem(pool, g, N, C, M, x, w, bias, epi, y);
}
#endif
