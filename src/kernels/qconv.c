/* qconv.c - 8-bit integer convolution with requantisation (see qconv.h).
 *
 * Work is split into tasks of (chunk of output rows, range of output
 * channels). A task builds its chunk's columns once — im2col rows of bytes,
 * four at a time interleaved into 16-column panels, with the column sums
 * when some weight zero point is not 0 — then runs the micro-kernel over
 * blocks of 8 weight rows x up to 3 panels (24 accumulators of 16 int32)
 * and requantises in registers into Y's rows. */
#include "qconv.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QC_X86 1
#define QC_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma")))
#endif

enum { MR = OX_QCONV_MR, PANEL = 16, MAX_NP = 3 };

/* ------------------------------------------------------------ weights */

int ox_qconv_pack_w(const void *W, bool w_signed, int64_t M, int64_t K, int64_t ldw, const void *zw,
                    int64_t zw_n, ox_qconv_w *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  if (M <= 0 || K <= 0 || M > ((int64_t)1 << 30) || K > ((int64_t)1 << 30))
    return ox_err_set(e, OX_EINVAL, "integer convolution weights of %lld x %lld", (long long)M,
                      (long long)K);
  out->M = M;
  out->K = K;
  out->K4 = (K + 3) / 4;
  out->Mp = (M + MR - 1) / MR * MR;
  size_t bytes = (size_t)out->Mp * (size_t)out->K4 * 4;
  out->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  out->wsum = calloc((size_t)out->Mp, sizeof *out->wsum);
  out->zw = calloc((size_t)out->Mp, sizeof *out->zw);
  if (!out->data || !out->wsum || !out->zw) {
    ox_qconv_free_w(out);
    return ox_err_set(e, OX_ENOMEM, "out of memory packing integer convolution weights");
  }
  memset(out->data, 0, bytes);
  const uint8_t *wb = W;
  for (int64_t m = 0; m < M; m++) {
    int8_t *blk = out->data + (m / MR) * out->K4 * MR * 4 + (m % MR) * 4;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; k++) {
      int v = w_signed ? (int)(int8_t)wb[m * ldw + k] : (int)wb[m * ldw + k] - 128;
      blk[(k / 4) * MR * 4 + k % 4] = (int8_t)v;
      sum += v;
    }
    out->wsum[m] = sum;
    int32_t z = 0;
    if (zw) {
      int64_t j = zw_n == 1 ? 0 : m;
      z = w_signed ? ((const int8_t *)zw)[j] : ((const uint8_t *)zw)[j];
    }
    out->zw[m] = z - (w_signed ? 0 : 128);
    out->any_zw = out->any_zw || out->zw[m] != 0;
  }
  return OX_OK;
}

void ox_qconv_free_w(ox_qconv_w *w) {
  free(w->data);
  free(w->wsum);
  free(w->zw);
  memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------ columns */

/* Four byte rows of 16 columns each into one panel depth group: column c
 * gets bytes r0[c] r1[c] r2[c] r3[c]. */
static inline void interleave4(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                               const uint8_t *r3, uint8_t *dst) {
#ifdef QC_X86
  __m128i a = _mm_loadu_si128((const __m128i *)r0), b = _mm_loadu_si128((const __m128i *)r1);
  __m128i c = _mm_loadu_si128((const __m128i *)r2), d = _mm_loadu_si128((const __m128i *)r3);
  __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
  __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
  _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(ab0, cd0));
  _mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(ab0, cd0));
  _mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(ab1, cd1));
  _mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(ab1, cd1));
#else
  for (int c = 0; c < PANEL; c++) {
    dst[c * 4] = r0[c];
    dst[c * 4 + 1] = r1[c];
    dst[c * 4 + 2] = r2[c];
    dst[c * 4 + 3] = r3[c];
  }
#endif
}

struct qc_out;
typedef struct qc_job {
  const ox_nn_geom *g;
  const uint8_t *x;
  int64_t C, K, K4, OW, outer, chunk_rows, n_chunks, m_parts, blocks_per_part;
  int32_t zx;
  const ox_qconv_w *w;
  const ox_qconv_req *q;
  const int32_t *rowc; /* [Mp] -zx' wsum[m] + K zx' zw'[m] */
  uint8_t *y;
  int64_t P;
  const uint8_t *ph; /* stride 2: the input's phase planes (phg), or NULL */
  ox_nn_phases phg;
  /* several taps on AVX-512, and stride 1 with as many output as input
   * columns (cols_shift) or the phase planes (cols_phases): the panels are
   * loaded straight from the input, no im2col rows in between */
  bool shift;
  int fail;
  void (*block)(const struct qc_job *, const int8_t *, const uint8_t *, int, const struct qc_out *);
  /* leftover columns (cols_vnni), or NULL: whole panels only */
  void (*cols)(const struct qc_job *, const int8_t *, int, const uint8_t *, int,
               const struct qc_out *);
} qc_job;

#ifdef QC_X86
enum { SHIFT_MAXK = 64 };
/* Panels of a shifted-plane geometry without an im2col row in between: on
 * stride 1 with as many output as input columns, tap t of the output at
 * flat position p reads the input at p + off[t] (the same for every
 * position) where that lies in the image, and the pad byte elsewhere. Per
 * panel of 16 columns, each tap's valid columns are a 16-bit mask; a masked
 * load (masked-off bytes are never read, so the edges cannot fault) with
 * the pad byte underneath gives the im2col row's 16 bytes in a register,
 * four of which interleave into the panel. Saves writing and reading back
 * every im2col row (about a third of a 3 x 3 layer's column time). */
QC_VNNI static void cols_shift(const qc_job *j, int64_t o0, int64_t o1, int64_t k4_0, int64_t k4_1,
                               uint8_t *bp) {
  const ox_nn_geom *g = j->g;
  size_t L = g->nd - 1;
  int64_t OW = j->OW, IW = g->in[L], IH = L ? g->in[0] : 1, ks = g->k_size;
  int64_t KW = g->k[L], KH = L ? g->k[0] : 1;
  int64_t ncols = (o1 - o0) * OW, npan = (ncols + PANEL - 1) / PANEL;
  int64_t off[SHIFT_MAXK];
  for (int64_t t = 0; t < ks; t++) {
    int64_t kh = t / KW, kw = t % KW;
    off[t] = (L ? (kh * g->dil[0] - g->pb[0]) * IW : 0) + kw * g->dil[L] - g->pb[L];
  }
  const __m128i zxv = _mm_set1_epi8((char)(uint8_t)j->zx);
  for (int64_t pn = 0; pn < npan; pn++) {
    int64_t c0 = pn * PANEL, p0 = o0 * OW + c0; /* Y's (and x's) flat position */
    __mmask16 mask[SHIFT_MAXK];
    for (int64_t t = 0; t < ks; t++) mask[t] = 0;
    for (int i = 0; i < PANEL && c0 + i < ncols; i++) {
      int64_t oh = (p0 + i) / OW, ow = (p0 + i) % OW;
      for (int64_t kh = 0; kh < KH; kh++) {
        int64_t ih = oh + (L ? kh * g->dil[0] - g->pb[0] : 0);
        if (ih < 0 || ih >= IH) continue;
        for (int64_t kw = 0; kw < KW; kw++) {
          int64_t iw = ow + kw * g->dil[L] - g->pb[L];
          if (iw >= 0 && iw < IW) mask[kh * KW + kw] |= (__mmask16)(1u << i);
        }
      }
    }
    uint8_t *dst = bp + pn * j->K4 * 64;
    /* channel and tap of depth row k, stepped (a division per row cost as
     * much as the loads) */
    int64_t t = (k4_0 * 4) % ks;
    uintptr_t xc = (uintptr_t)(j->x + (k4_0 * 4 / ks) * g->in_size) + (uintptr_t)p0;
    for (int64_t k4 = k4_0; k4 < k4_1; k4++) {
      __m128i r[4];
      for (int q = 0; q < 4; q++) {
        if (k4 * 4 + q >= j->K) { /* depth padding: the packed weights are 0 there */
          r[q] = _mm_setzero_si128();
          continue;
        }
        /* the address of column 0's tap, possibly outside the plane where
         * that column is masked off: formed as an integer */
        r[q] = _mm_mask_loadu_epi8(zxv, mask[t], (const void *)(xc + (uintptr_t)off[t]));
        if (++t == ks) t = 0, xc += (uintptr_t)g->in_size;
      }
      __m128i ab0 = _mm_unpacklo_epi8(r[0], r[1]), ab1 = _mm_unpackhi_epi8(r[0], r[1]);
      __m128i cd0 = _mm_unpacklo_epi8(r[2], r[3]), cd1 = _mm_unpackhi_epi8(r[2], r[3]);
      uint8_t *d = dst + k4 * 64;
      _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(ab1, cd1));
    }
  }
}

/* The same from the phase planes of a stride-2 geometry: tap (kh, kw) of
 * output (oh, ow) is byte (oh + kh / 2, ow + kw / 2) of phase plane (kh % 2,
 * kw % 2), the padding already in the planes. A plane row is wider than an
 * output row, so a panel's 16 columns are cut where their output row
 * changes (up to four pieces on a 7-wide map), one masked load a piece. */
QC_VNNI static void cols_phases(const qc_job *j, int64_t o0, int64_t o1, int64_t k4_0,
                                int64_t k4_1, uint8_t *bp) {
  const ox_nn_geom *g = j->g;
  int64_t OW = j->OW, QW = j->phg.ph_cols, plane = j->phg.plane, ks = g->k_size, KW = g->k[1];
  int64_t ncols = (o1 - o0) * OW, npan = (ncols + PANEL - 1) / PANEL;
  int64_t toff[SHIFT_MAXK];
  for (int64_t t = 0; t < ks; t++) {
    int64_t kh = t / KW, kw = t % KW;
    toff[t] = (2 * (kh & 1) + (kw & 1)) * plane + (kh / 2) * QW + kw / 2;
  }
  const __m128i zxv = _mm_set1_epi8((char)(uint8_t)j->zx);
  for (int64_t pn = 0; pn < npan; pn++) {
    int64_t c0 = pn * PANEL, p0 = o0 * OW + c0;
    /* the pieces: lanes (mask) and where lane 0 would read in a plane */
    __mmask16 mask[PANEL];
    int64_t soff[PANEL];
    int nseg = 0;
    for (int i = 0; i < PANEL && c0 + i < ncols;) {
      int64_t oh = (p0 + i) / OW, ow = (p0 + i) % OW;
      int n = (int)(OW - ow < PANEL - i ? OW - ow : PANEL - i);
      if (c0 + i + n > ncols) n = (int)(ncols - c0 - i);
      mask[nseg] = (__mmask16)(((1u << n) - 1) << i);
      soff[nseg++] = oh * QW + ow - i;
      i += n;
    }
    uint8_t *dst = bp + pn * j->K4 * 64;
    int64_t t = (k4_0 * 4) % ks; /* stepped, as in cols_shift */
    uintptr_t qc = (uintptr_t)(j->ph + (k4_0 * 4 / ks) * 4 * plane);
    for (int64_t k4 = k4_0; k4 < k4_1; k4++) {
      __m128i r[4];
      for (int q = 0; q < 4; q++) {
        if (k4 * 4 + q >= j->K) { /* depth padding: the packed weights are 0 there */
          r[q] = _mm_setzero_si128();
          continue;
        }
        uintptr_t base = qc + (uintptr_t)toff[t];
        __m128i v = zxv;
        for (int sg = 0; sg < nseg; sg++)
          v = _mm_mask_loadu_epi8(v, mask[sg], (const void *)(base + (uintptr_t)soff[sg]));
        r[q] = v;
        if (++t == ks) t = 0, qc += (uintptr_t)(4 * plane);
      }
      __m128i ab0 = _mm_unpacklo_epi8(r[0], r[1]), ab1 = _mm_unpackhi_epi8(r[0], r[1]);
      __m128i cd0 = _mm_unpacklo_epi8(r[2], r[3]), cd1 = _mm_unpackhi_epi8(r[2], r[3]);
      uint8_t *d = dst + k4 * 64;
      _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(ab1, cd1));
    }
  }
}
#endif

/* The columns of outer output rows [o0, o1) as panels bp ([npan][K4][64])
 * and, when wanted, their sums (colsum, npad values). tmp: 4 rows of npad. */
static void build_cols(const qc_job *j, int64_t o0, int64_t o1, int64_t k4_0, int64_t k4_1,
                       uint8_t *bp, int32_t *colsum, uint8_t *tmp) {
  const ox_nn_geom *g = j->g;
  int64_t ncols = (o1 - o0) * j->OW, npan = (ncols + PANEL - 1) / PANEL, npad = npan * PANEL;
  int64_t ks = g->k_size;
  uint8_t zx = (uint8_t)j->zx;
#ifdef QC_X86
  if (j->shift && !colsum) {
    if (j->ph)
      cols_phases(j, o0, o1, k4_0, k4_1, bp);
    else
      cols_shift(j, o0, o1, k4_0, k4_1, bp);
    return;
  }
#endif
  if (colsum) memset(colsum, 0, (size_t)npad * sizeof *colsum);
  /* 1x1, stride 1, no padding: a column row is a run of x itself */
  bool direct = ks == 1 && ox_nn_shifted_plane(g);
  for (size_t d = 0; direct && d < g->nd; d++) direct = g->pb[d] == 0;
  /* 1 x 1, stride 2: the even-even phase plane is the subsampled image */
  if (ks == 1 && j->ph) direct = true;
  int64_t full = direct ? ncols / PANEL : npan; /* panels read in place */
  for (int64_t k4 = k4_0; k4 < k4_1; k4++) {
    const uint8_t *rows[4];
    for (int q = 0; q < 4; q++) {
      int64_t k = k4 * 4 + q;
      uint8_t *t = tmp + q * npad;
      rows[q] = t;
      if (k >= j->K) { /* depth padding: the packed weights are 0 there */
        memset(t, 0, (size_t)npad);
        continue;
      }
      if (direct) {
        const uint8_t *src =
            j->ph ? j->ph + k * 4 * j->phg.plane + o0 * j->OW : j->x + k * g->in_size + o0 * j->OW;
        rows[q] = src;
        if (full < npan) { /* the last, partial panel from a padded copy */
          memcpy(t + full * PANEL, src + full * PANEL, (size_t)(ncols - full * PANEL));
          memset(t + ncols, zx, (size_t)(npad - ncols));
        }
      } else {
        if (j->ph)
          ox_nn_phases_row_u8(g, &j->phg, j->ph + (k / ks) * 4 * j->phg.plane, k % ks, o0, o1, t);
        else
          ox_nn_im2col_row_u8(g, j->x + (k / ks) * g->in_size, k % ks, o0, o1, t, zx);
        if (npad > ncols) memset(t + ncols, zx, (size_t)(npad - ncols));
      }
      if (colsum)
        for (int64_t c = 0; c < ncols; c++) colsum[c] += rows[q][c];
    }
    for (int64_t pn = 0; pn < npan; pn++) {
      const uint8_t *r[4];
      for (int q = 0; q < 4; q++)
        r[q] = (pn < full || k4 * 4 + q >= j->K ? rows[q] : tmp + q * npad) + pn * PANEL;
      interleave4(r[0], r[1], r[2], r[3], bp + (pn * j->K4 + k4) * 64);
    }
  }
}

/* ------------------------------------------------------------ micro-kernels */

/* Where a block's results go: weight rows m0.., columns col0.. of the chunk
 * whose first column is Y's column ybase; ncols valid columns in the chunk. */
typedef struct qc_out {
  int64_t m0, col0, ncols, ybase;
  const int32_t *colsum; /* the chunk's column sums, or NULL */
} qc_out;

/* Requantises one value (portable path and tails). */
static inline int32_t requant1(const qc_job *j, int64_t m, int32_t acc) {
  const ox_qconv_req *q = j->q;
  float f = (float)acc * q->mult[m] + (q->bias ? q->bias[m] : 0.0f) + (float)q->zy;
  if (f < (float)q->lo) f = (float)q->lo;
  if (f > (float)q->hi) f = (float)q->hi;
  return (int32_t)nearbyintf(f);
}

/* the plain C block, compiled for each level (the table takes the one of
 * the level in use) */
__attribute__((always_inline)) static inline void block_c(const qc_job *j, const int8_t *wb,
                                                          const uint8_t *pb, int np,
                                                          const qc_out *o) {
  int64_t K4 = j->K4;
  int32_t acc[MR][MAX_NP * PANEL];
  memset(acc, 0, sizeof acc);
  for (int64_t k4 = 0; k4 < K4; k4++) {
    const int8_t *wk = wb + k4 * MR * 4;
    for (int t = 0; t < np; t++) {
      const uint8_t *ck = pb + (t * K4 + k4) * 64;
      for (int r = 0; r < MR; r++)
        for (int c = 0; c < PANEL; c++)
          acc[r][t * PANEL + c] += ck[c * 4] * wk[r * 4] + ck[c * 4 + 1] * wk[r * 4 + 1] +
                                   ck[c * 4 + 2] * wk[r * 4 + 2] + ck[c * 4 + 3] * wk[r * 4 + 3];
    }
  }
  const ox_qconv_w *w = j->w;
  for (int r = 0; r < MR && o->m0 + r < w->M; r++) {
    int64_t m = o->m0 + r;
    uint8_t *yr = j->y + m * j->P + o->ybase;
    for (int64_t c = 0; c < np * PANEL && o->col0 + c < o->ncols; c++) {
      int64_t col = o->col0 + c;
      int32_t v = acc[r][c] + j->rowc[m] - (o->colsum ? w->zw[m] * o->colsum[col] : 0);
      yr[col] = (uint8_t)requant1(j, m, v);
    }
  }
}

static void block_portable(const qc_job *j, const int8_t *wb, const uint8_t *pb, int np,
                           const qc_out *o) {
  block_c(j, wb, pb, np, o);
}
#ifdef QC_X86
__attribute__((target("avx2"))) static void block_c_avx2(const qc_job *j, const int8_t *wb,
                                                         const uint8_t *pb, int np,
                                                         const qc_out *o) {
  block_c(j, wb, pb, np, o);
}
__attribute__((target("avx512f"))) static void block_c_avx512(const qc_job *j, const int8_t *wb,
                                                              const uint8_t *pb, int np,
                                                              const qc_out *o) {
  block_c(j, wb, pb, np, o);
}
#endif

#ifdef QC_X86

/* Requantises the np panels of weight row r into Y, the row's factors
 * broadcast once (a call per accumulator, each broadcasting them again,
 * weighed on layers of little depth: 64 for a 1 x 1 of ResNet's first
 * stage). */
QC_VNNI __attribute__((always_inline)) static inline void vnni_store_row(
    const qc_job *j, const qc_out *o, int r, int np, __m512i a0, __m512i a1, __m512i a2) {
  int64_t m = o->m0 + r;
  if (m >= j->w->M) return;
  const ox_qconv_req *q = j->q;
  __m512i zw = _mm512_set1_epi32(j->w->zw[m]), rc = _mm512_set1_epi32(j->rowc[m]);
  __m512 mult = _mm512_set1_ps(q->mult[m]);
  __m512 add = _mm512_set1_ps((q->bias ? q->bias[m] : 0.0f) + (float)q->zy);
  __m512 lo = _mm512_set1_ps((float)q->lo), hi = _mm512_set1_ps((float)q->hi);
  uint8_t *yr = j->y + m * j->P + o->ybase;
  __m512i acc3[3] = {a0, a1, a2};
  for (int t = 0; t < np; t++) {
    int64_t col = o->col0 + t * PANEL;
    if (col >= o->ncols) return;
    __m512i acc = acc3[t];
    if (o->colsum)
      acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(zw, _mm512_loadu_si512(o->colsum + col)));
    acc = _mm512_add_epi32(acc, rc);
    __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), mult, add);
    f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    __m128i b = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f));
    int64_t left = o->ncols - col;
    __mmask16 mask = left >= PANEL ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    _mm_mask_storeu_epi8(yr + col, mask, b);
  }
}

/* 8 weight rows x up to 3 panels in 24 named accumulators (an array of
 * them made GCC shuffle registers and spill). */
#define QC_ROW(r)                                               \
  do {                                                          \
    int32_t wv_;                                                \
    memcpy(&wv_, wk + (r)*4, 4);                                \
    __m512i w_ = _mm512_set1_epi32(wv_);                        \
    a##r##0 = _mm512_dpbusd_epi32(a##r##0, c0, w_);             \
    if (NP > 1) a##r##1 = _mm512_dpbusd_epi32(a##r##1, c1, w_); \
    if (NP > 2) a##r##2 = _mm512_dpbusd_epi32(a##r##2, c2, w_); \
  } while (0)
#define QC_DECL(r) __m512i a##r##0 = z, a##r##1 = z, a##r##2 = z
#define QC_STORE(r) vnni_store_row(j, o, r, NP, a##r##0, a##r##1, a##r##2)

/* 8 weight rows x NP panels (NP a constant in each of the three copies, so
 * that a chunk's last one or two panels cost what they are) */
#define QC_BLOCK_FN(name, np_)                                                   \
  QC_VNNI static void name(const qc_job *j, const int8_t *wb, const uint8_t *pb, \
                           const qc_out *o) {                                    \
    enum { NP = np_ };                                                           \
    int64_t K4 = j->K4;                                                          \
    const __m512i z = _mm512_setzero_si512();                                    \
    QC_DECL(0);                                                                  \
    QC_DECL(1);                                                                  \
    QC_DECL(2);                                                                  \
    QC_DECL(3);                                                                  \
    QC_DECL(4);                                                                  \
    QC_DECL(5);                                                                  \
    QC_DECL(6);                                                                  \
    QC_DECL(7);                                                                  \
    const uint8_t *p0 = pb, *p1 = NP > 1 ? pb + K4 * 64 : pb,                    \
                  *p2 = NP > 2 ? pb + 2 * K4 * 64 : pb;                          \
    for (int64_t k4 = 0; k4 < K4; k4++) {                                        \
      __m512i c0 = _mm512_loadu_si512(p0 + k4 * 64);                             \
      __m512i c1 = NP > 1 ? _mm512_loadu_si512(p1 + k4 * 64) : c0;               \
      __m512i c2 = NP > 2 ? _mm512_loadu_si512(p2 + k4 * 64) : c0;               \
      const int8_t *wk = wb + k4 * MR * 4;                                       \
      QC_ROW(0);                                                                 \
      QC_ROW(1);                                                                 \
      QC_ROW(2);                                                                 \
      QC_ROW(3);                                                                 \
      QC_ROW(4);                                                                 \
      QC_ROW(5);                                                                 \
      QC_ROW(6);                                                                 \
      QC_ROW(7);                                                                 \
    }                                                                            \
    QC_STORE(0);                                                                 \
    QC_STORE(1);                                                                 \
    QC_STORE(2);                                                                 \
    QC_STORE(3);                                                                 \
    QC_STORE(4);                                                                 \
    QC_STORE(5);                                                                 \
    QC_STORE(6);                                                                 \
    QC_STORE(7);                                                                 \
  }

QC_BLOCK_FN(vnni_np1, 1)
QC_BLOCK_FN(vnni_np2, 2)
QC_BLOCK_FN(vnni_np3, 3)

/* Leftover columns (an image width that is not a multiple of 16: a 7 x 7
 * map has 49 columns, 3 panels and one column) without a mostly empty
 * panel: each column's four bytes of a depth step broadcast against the
 * 8 rows of a weight block (256-bit), NB blocks x NC columns at a time.
 * A padded panel multiplied 16 columns for each real one. The results are
 * the panel kernel's: the same integer sums, requantised as vnni_store. */
QC_VNNI static inline void col_store(const qc_job *j, const qc_out *o, int64_t m0, int64_t col,
                                     __m256i acc) {
  int64_t M = j->w->M;
  if (m0 >= M || col >= o->ncols) return;
  int rows = M - m0 < 8 ? (int)(M - m0) : 8;
  __mmask8 rm = (__mmask8)((1u << rows) - 1);
  const ox_qconv_req *q = j->q;
  if (o->colsum)
    acc = _mm256_sub_epi32(acc,
                           _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)(j->w->zw + m0)),
                                              _mm256_set1_epi32(o->colsum[col])));
  acc = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(j->rowc + m0)));
  __m256 bias = q->bias ? _mm256_maskz_loadu_ps(rm, q->bias + m0) : _mm256_setzero_ps();
  __m256 add = _mm256_add_ps(bias, _mm256_set1_ps((float)q->zy));
  __m256 f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_maskz_loadu_ps(rm, q->mult + m0), add);
  f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps((float)q->lo)), _mm256_set1_ps((float)q->hi));
  uint8_t b[16];
  _mm_storeu_si128((__m128i *)b, _mm256_cvtepi32_epi8(_mm256_cvtps_epi32(f)));
  uint8_t *y = j->y + m0 * j->P + o->ybase + col;
  for (int r = 0; r < rows; r++) y[r * j->P] = b[r];
}

QC_VNNI __attribute__((always_inline)) static inline void cols_vnni_nb_nc(const qc_job *j,
                                                                          const int8_t *wb,
                                                                          const uint8_t *pan,
                                                                          int c0, const qc_out *o,
                                                                          int NB, int NC) {
  int64_t K4 = j->K4;
  __m256i acc[2][4];
  for (int b = 0; b < 2; b++)
    for (int c = 0; c < 4; c++) acc[b][c] = _mm256_setzero_si256();
  const int8_t *w1 = wb + K4 * MR * 4;
  for (int64_t k4 = 0; k4 < K4; k4++) {
    __m256i wv0 = _mm256_loadu_si256((const __m256i *)(wb + k4 * MR * 4));
    __m256i wv1 = NB > 1 ? _mm256_loadu_si256((const __m256i *)(w1 + k4 * MR * 4)) : wv0;
    const uint8_t *ck = pan + k4 * 64 + c0 * 4;
#pragma GCC unroll 4
    for (int c = 0; c < NC; c++) {
      int32_t v;
      memcpy(&v, ck + c * 4, 4);
      __m256i cb = _mm256_set1_epi32(v);
      acc[0][c] = _mm256_dpbusd_epi32(acc[0][c], cb, wv0);
      if (NB > 1) acc[1][c] = _mm256_dpbusd_epi32(acc[1][c], cb, wv1);
    }
  }
  for (int b = 0; b < NB; b++)
    for (int c = 0; c < NC; c++) col_store(j, o, o->m0 + b * MR, o->col0 + c0 + c, acc[b][c]);
}

/* Columns [0, ncol) of the panel at pan (ncol <= 8) for weight blocks wb
 * (nb: 1 or 2 consecutive blocks from o->m0); o->col0 is the panel's first
 * column. */
QC_VNNI static void cols_vnni(const qc_job *j, const int8_t *wb, int nb, const uint8_t *pan,
                              int ncol, const qc_out *o) {
  for (int c0 = 0; c0 < ncol; c0 += 4) {
    int nc = ncol - c0 < 4 ? ncol - c0 : 4;
    switch (nb * 4 + nc) {
#define QC_COLS(NB_, NC_)                         \
  case NB_ * 4 + NC_:                             \
    cols_vnni_nb_nc(j, wb, pan, c0, o, NB_, NC_); \
    break;
      QC_COLS(1, 1)
      QC_COLS(1, 2) QC_COLS(1, 3) QC_COLS(1, 4) QC_COLS(2, 1) QC_COLS(2, 2) QC_COLS(2, 3)
          QC_COLS(2, 4)
#undef QC_COLS
              default : break;
    }
  }
}

QC_VNNI static void block_vnni(const qc_job *j, const int8_t *wb, const uint8_t *pb, int np,
                               const qc_out *o) {
  if (np == 3)
    vnni_np3(j, wb, pb, o);
  else if (np == 2)
    vnni_np2(j, wb, pb, o);
  else
    vnni_np1(j, wb, pb, o);
}
#endif

typedef void (*block_fn)(const qc_job *, const int8_t *, const uint8_t *, int, const qc_out *);
typedef void (*cols_fn)(const qc_job *, const int8_t *, int, const uint8_t *, int, const qc_out *);

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): the best block kernel and its name, the column kernel that
 * goes with it (NULL: none), the plain C block of the level (a named
 * "portable" path), and the blocking. */
typedef struct qc_table {
  block_fn best, plain;
  cols_fn cols;
  const char *name;
  /* bytes of columns per chunk (they stay in L2 while every weight block
   * passes), tasks per thread, and the most bytes of a whole image's
   * columns built once and shared by every task */
  int64_t chunk_bytes, tasks_per_thread, shared_bytes;
} qc_table;

/* Blocking per microarchitecture (today's values on every row; a core
 * that wants others gets its row here). */
static const struct {
  int64_t chunk_bytes, tasks_per_thread, shared_bytes;
} k_qc_blocking[] = {
    [OX_UARCH_GENERIC] = {262144, 4, 1 << 20},    [OX_UARCH_INTEL] = {262144, 4, 1 << 20},
    [OX_UARCH_INTEL_AVX2] = {262144, 4, 1 << 20}, [OX_UARCH_ZEN2_3] = {262144, 4, 1 << 20},
    [OX_UARCH_ZEN4] = {262144, 4, 1 << 20},       [OX_UARCH_ZEN5] = {262144, 4, 1 << 20},
};

static qc_table g_qc;
static pthread_once_t g_qc_once = PTHREAD_ONCE_INIT;

static void qc_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  qc_table *t = &g_qc;
  t->plain = block_portable;
#ifdef QC_X86
  if (c->isa >= OX_ISA_AVX512)
    t->plain = block_c_avx512;
  else if (c->isa >= OX_ISA_AVX2)
    t->plain = block_c_avx2;
#endif
  t->best = t->plain;
  t->name = "portable";
#ifdef QC_X86
  if (c->avx512vnni && c->avx512bw && c->avx512vl) {
    t->best = block_vnni;
    t->cols = cols_vnni;
    t->name = "avx512vnni";
  }
#endif
  size_t u = (size_t)c->uarch < sizeof k_qc_blocking / sizeof *k_qc_blocking ? (size_t)c->uarch : 0;
  t->chunk_bytes = k_qc_blocking[u].chunk_bytes;
  t->tasks_per_thread = k_qc_blocking[u].tasks_per_thread;
  t->shared_bytes = k_qc_blocking[u].shared_bytes;
}

static const qc_table *qc_dispatch(void) {
  pthread_once(&g_qc_once, qc_fill);
  return &g_qc;
}

const char *ox_qconv_path(void) { return qc_dispatch()->name; }

/* ------------------------------------------------------------ driver */

/* Weight blocks [b0, b1) over a chunk's columns (ncols, panels at bp, the
 * first at Y's column ybase): whole panels by the block kernel, and a
 * leftover of up to 8 columns by the column kernel where there is one. */
static void run_blocks(const qc_job *j, int64_t b0, int64_t b1, const uint8_t *bp, int64_t ncols,
                       int64_t ybase, const int32_t *colsum) {
  int64_t cpan = (ncols + PANEL - 1) / PANEL, rem = ncols % PANEL;
  int64_t kpan = j->cols && rem > 0 && rem <= 8 ? ncols / PANEL : cpan;
  for (int64_t b = b0; b < b1; b += 2) {
    int nb = b + 1 < b1 ? 2 : 1;
    for (int64_t bb = b; bb < b + nb; bb++) {
      const int8_t *wb = j->w->data + bb * j->K4 * MR * 4;
      for (int64_t pn = 0; pn < kpan; pn += MAX_NP) {
        int np = (int)(kpan - pn < MAX_NP ? kpan - pn : MAX_NP);
        qc_out o = {bb * MR, pn * PANEL, ncols, ybase, colsum};
        j->block(j, wb, bp + pn * j->K4 * 64, np, &o);
      }
    }
    if (kpan < cpan) {
      qc_out o = {b * MR, kpan * PANEL, ncols, ybase, colsum};
      j->cols(j, j->w->data + b * j->K4 * MR * 4, nb, bp + kpan * j->K4 * 64, (int)rem, &o);
    }
  }
}

static void qc_task(void *arg, int64_t t0, int64_t t1) {
  qc_job *j = arg;
  int64_t maxcols = j->chunk_rows * j->OW, npan = (maxcols + PANEL - 1) / PANEL;
  int64_t npad = npan * PANEL;
  /* the thread's scratch: allocated and freed per call, these were faulted
   * in anew on every run */
  uint8_t *bp = ox_scratch(0, (size_t)(npan * j->K4 * 64 + 64));
  uint8_t *tmp = ox_scratch(1, (size_t)(4 * npad));
  int32_t *colsum = j->w->any_zw ? ox_scratch(2, (size_t)npad * sizeof *colsum) : NULL;
  if (!bp || !tmp || (j->w->any_zw && !colsum)) {
    __atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t t = t0; t < t1; t++) {
    int64_t ch = t / j->m_parts, part = t % j->m_parts;
    int64_t o0 = ch * j->chunk_rows,
            o1 = o0 + j->chunk_rows < j->outer ? o0 + j->chunk_rows : j->outer;
    int64_t b0 = part * j->blocks_per_part, b1 = b0 + j->blocks_per_part;
    if (b1 > j->w->Mp / MR) b1 = j->w->Mp / MR;
    if (o0 >= o1 || b0 >= b1) continue;
    build_cols(j, o0, o1, 0, j->K4, bp, colsum, tmp);
    run_blocks(j, b0, b1, bp, (o1 - o0) * j->OW, o0 * j->OW, colsum);
  }
}

/* The whole image as one chunk, shared by the pool (small images, where
 * chunks per task would leave threads idle or build the columns again):
 * the columns are built by depth ranges, then the weight blocks split. */
typedef struct qc_shared {
  qc_job *j;
  uint8_t *bp;
  int64_t npad;
} qc_shared;

static void qc_build_task(void *arg, int64_t k0, int64_t k1) {
  const qc_shared *sh = arg;
  uint8_t *tmp = ox_scratch(1, (size_t)(4 * sh->npad));
  if (!tmp) {
    __atomic_store_n(&sh->j->fail, 1, __ATOMIC_RELAXED);
    return;
  }
  build_cols(sh->j, 0, sh->j->outer, k0, k1, sh->bp, NULL, tmp);
}

static void qc_block_task(void *arg, int64_t b0, int64_t b1) {
  const qc_shared *sh = arg;
  const qc_job *j = sh->j;
  run_blocks(j, b0, b1, sh->bp, j->outer * j->OW, 0, NULL);
}

/* true when it ran (or failed for memory, flagged in j->fail) */
static bool qc_run_shared(qc_job *j, ox_thread_pool *pool) {
  int64_t ncols = j->outer * j->OW, npan = (ncols + PANEL - 1) / PANEL;
  /* the calling thread's slot 3 (the build tasks take slot 1 of theirs) */
  qc_shared sh = {j, ox_scratch(3, (size_t)(npan * j->K4 * 64 + 64)), npan * PANEL};
  if (!sh.bp) return false;
  ox_parallel_for(pool, j->K4, 16, qc_build_task, &sh);
  if (!j->fail) ox_parallel_for(pool, j->w->Mp / MR, 1, qc_block_task, &sh);
  return true;
}

typedef struct qc_phase_job {
  const qc_job *j;
  uint8_t *ph;
} qc_phase_job;

static void qc_phase_task(void *arg, int64_t c0, int64_t c1) {
  const qc_phase_job *p = arg;
  const qc_job *j = p->j;
  ox_nn_phases_build_u8(j->g, &j->phg, j->x, c0, c1, (uint8_t)j->zx, p->ph + c0 * 4 * j->phg.plane);
}

/* Estimated cost of a chunk of cols columns, in panel-times: its whole
 * panels, a leftover of up to 8 columns by the column kernel (half-width
 * products, about half a panel per 4 columns) or else one more panel, and
 * one panel more for the chunk's own pass over the weights and the setup
 * of its columns. */
static double chunk_cost(int64_t cols, bool has_cols) {
  int64_t rem = cols % PANEL;
  double c = (double)(cols / PANEL) + 1.0;
  if (rem) c += has_cols && rem <= 8 ? 0.5 * (double)((rem + 3) / 4) : 1.0;
  return c;
}

/* When the last of `threads` threads finishes the chunks of `rows` output
 * rows (of OW columns; outer rows in all), taken in order by whichever
 * thread is free first, as the pool hands them out. */
static double chunks_makespan(int64_t outer, int64_t OW, int64_t rows, int threads,
                              bool has_cols) {
  enum { MAXT = 64 };
  double load[MAXT] = {0};
  int nt = threads < MAXT ? threads : MAXT;
  for (int64_t o = 0; o < outer; o += rows) {
    int64_t r = outer - o < rows ? outer - o : rows;
    int k = 0;
    for (int i = 1; i < nt; i++)
      if (load[i] < load[k]) k = i;
    load[k] += chunk_cost(r * OW, has_cols);
  }
  double m = 0.0;
  for (int i = 0; i < nt; i++) m = load[i] > m ? load[i] : m;
  return m;
}

int ox_qconv_run(const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx, const ox_qconv_w *w,
                 const ox_qconv_req *q, void *y, ox_thread_pool *pool, ox_err *e) {
  return ox_qconv_run_on(NULL, g, x, C, zx, w, q, y, pool, e);
}

int ox_qconv_run_on(const char *path, const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx,
                    const ox_qconv_w *w, const ox_qconv_req *q, void *y, ox_thread_pool *pool,
                    ox_err *e) {
  const qc_table *tab = qc_dispatch();
  block_fn fn = tab->best;
  cols_fn cols = tab->cols;
  if (path && strcmp(path, tab->name) != 0) {
    if (strcmp(path, "portable") != 0)
      return ox_err_set(e, OX_EUNSUPPORTED, "integer convolution path '%s' is not available here",
                        path);
    fn = tab->plain;
    cols = NULL;
  }
  if (C * g->k_size != w->K)
    return ox_err_set(e, OX_ERUNTIME, "weights have depth %lld, columns %lld", (long long)w->K,
                      (long long)(C * g->k_size));
  if (g->out_size == 0) return OX_OK;
  qc_job j = {0};
  j.g = g;
  j.x = x;
  j.C = C;
  j.K = w->K;
  j.K4 = w->K4;
  j.OW = g->out[g->nd - 1];
  j.outer = ox_nn_outer(g);
  j.zx = zx;
  j.w = w;
  j.q = q;
  j.y = y;
  j.P = g->out_size;
  j.block = fn;
  j.cols = cols;
#ifdef QC_X86
  /* (the vnni path only: the same columns, so a named portable run checks them) */
  j.shift = fn == block_vnni && g->k_size > 1 && g->k_size <= SHIFT_MAXK && ox_nn_shifted_plane(g);
#endif
  int32_t *rowc = malloc((size_t)w->Mp * sizeof *rowc);
  if (!rowc) return ox_err_set(e, OX_ENOMEM, "out of memory (integer convolution)");
  for (int64_t m = 0; m < w->Mp; m++)
    rowc[m] = (int32_t)(-(int64_t)zx * w->wsum[m] + w->K * (int64_t)zx * w->zw[m]);
  j.rowc = rowc;
  /* Stride 2: the phase planes once (a strided gather per kernel tap and
   * output row was 40% of a 3 x 3 stride-2 layer) */
  if (ox_nn_phases_fit(g, &j.phg)) {
    uint8_t *ph = ox_scratch(4, (size_t)(C * 4 * j.phg.plane));
    if (ph) {
      qc_phase_job pj = {&j, ph};
      ox_parallel_for(pool, C, 8, qc_phase_task, &pj);
      j.ph = ph;
#ifdef QC_X86
      /* several taps: the panels straight from the planes too, but for
       * rows of more than 64 columns (the 7 x 7 stem's 112: cut into
       * pieces, its panels came 13% slower than whole rows copied) */
      j.shift = fn == block_vnni && g->k_size > 1 && g->k_size <= SHIFT_MAXK && j.OW <= 64;
#endif
    }
  }
  /* Chunks of at most about 256 KiB of columns (they stay in L2 while every
   * weight block passes over them) and of at least three panels where the
   * image allows (a panel of a narrow chunk is mostly padding: a 7-wide row
   * alone would waste 9 of 16 columns). With a pool, about four tasks per
   * thread (they are taken dynamically): more chunks while they stay wide
   * enough, then ranges of output channels (each builds its columns again). */
  int threads = ox_thread_pool_size(pool);
  int64_t ccols = tab->chunk_bytes / (w->K4 * 4);
  if (ccols < 3 * PANEL) ccols = 3 * PANEL;
  int64_t min_rows = (3 * PANEL + j.OW - 1) / j.OW;
  j.chunk_rows = ccols / j.OW > 0 ? ccols / j.OW : 1;
  int64_t target = threads > 1 ? tab->tasks_per_thread * (int64_t)threads : 1;
  if (j.outer / j.chunk_rows < target) {
    int64_t r = j.outer / target;
    j.chunk_rows = r > min_rows ? r : min_rows;
    if (j.chunk_rows > ccols / j.OW && ccols / j.OW >= 1) j.chunk_rows = ccols / j.OW;
  }
  if (j.chunk_rows < 1) j.chunk_rows = 1;
  if (j.chunk_rows > j.outer) j.chunk_rows = j.outer;
  j.n_chunks = (j.outer + j.chunk_rows - 1) / j.chunk_rows;
  int64_t blocks = w->Mp / MR;
  j.m_parts = 1;
  if (j.n_chunks < target) {
    j.m_parts = (target + j.n_chunks - 1) / j.n_chunks;
    if (j.m_parts > blocks) j.m_parts = blocks;
  }
  /* Enough chunks for the threads: their size by the estimated finishing
   * time instead, when that is sooner (a 28 x 28 map split into ten
   * chunks of three rows for two threads had 84-column chunks, each with
   * a leftover, and ran 1.3x faster than on one thread; four of seven rows
   * balance two threads). At 1 thread nothing changes. */
  if (j.m_parts == 1 && threads > 1 && j.outer <= 512) { /* (a bounded search) */
    bool has_cols = cols != NULL;
    int64_t best = j.chunk_rows;
    double best_t = chunks_makespan(j.outer, j.OW, best, threads, has_cols);
    int64_t max_rows = ccols / j.OW > min_rows ? ccols / j.OW : min_rows;
    if (max_rows > j.outer) max_rows = j.outer;
    for (int64_t r = min_rows < 1 ? 1 : min_rows; r <= max_rows; r++) {
      /* at least two chunks a thread: one late thread leaves the others a
       * chunk to take */
      if ((j.outer + r - 1) / r < 2 * (int64_t)threads) break;
      double t = chunks_makespan(j.outer, j.OW, r, threads, has_cols);
      if (t < best_t * 0.97) best = r, best_t = t;
    }
    j.chunk_rows = best;
    j.n_chunks = (j.outer + j.chunk_rows - 1) / j.chunk_rows;
  }
  j.blocks_per_part = (blocks + j.m_parts - 1) / j.m_parts;
  /* few chunks for the threads, no zero points needing column sums, and the
   * whole image's columns within about 1 MiB: one shared chunk, built once
   * by all threads (1x1 convolutions too: building a 1024-channel 7x7
   * chunk in each of eight tasks made two threads no faster than one) */
  int64_t whole = (j.outer * j.OW + PANEL - 1) / PANEL * w->K4 * 64;
  if (j.m_parts > 1 && !w->any_zw && whole <= tab->shared_bytes && qc_run_shared(&j, pool)) {
    free(rowc);
    if (j.fail) return ox_err_set(e, OX_ENOMEM, "out of memory (integer convolution)");
    return OX_OK;
  }
  ox_parallel_for(pool, j.n_chunks * j.m_parts, 1, qc_task, &j);
  free(rowc);
  if (j.fail) return ox_err_set(e, OX_ENOMEM, "out of memory (integer convolution)");
  return OX_OK;
}
