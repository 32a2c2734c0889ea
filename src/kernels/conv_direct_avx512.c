/* conv_direct_avx512.c - conv_direct.h's AVX-512 level: hand-written
 * depthwise planes (16 outputs per step; masked loads for the borders, or
 * a zero-bordered scratch plane, or one flat run over small planes) and
 * the few-positions rows, then the portable body compiled for AVX-512F. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>

#include "conv_direct_impl.h"
#include "epi_avx512.h"

/* Interior of a depthwise row for strides 1 and 2 with AVX-512: 16 outputs
 * per step; returns the first column left undone. */
__attribute__((target("avx512f"))) int64_t ox_dw_interior_avx512(const ox_nn_geom *g,
                                                                 const float *xc, const float *wm,
                                                                 float b, int64_t oh, float *yr,
                                                                 int64_t ow, int64_t in_hi) {
  int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], KW = g->k[1], sw = g->stride[1];
  int64_t dw = g->dil[1];
  if (sw != 1 && sw != 2) return ow;
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (; ow < in_hi; ow += 16) { /* masked loads and store cover a tail of r < 16 */
    int64_t r = in_hi - ow < 16 ? in_hi - ow : 16, need = (r - 1) * sw + 1;
    __mmask16 m1 = (__mmask16)((1u << (need < 16 ? need : 16)) - 1u);
    __mmask16 m2 = (__mmask16)(need > 16 ? (1u << (need - 16)) - 1u : 0u);
    __m512 acc = _mm512_set1_ps(b);
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih = oh * g->stride[0] - g->pb[0] + kh * g->dil[0];
      if (ih < 0 || ih >= IH) continue;
      const float *xr = xc + ih * IW + ow * sw - g->pb[1];
      for (int64_t kw = 0; kw < KW; kw++) {
        const float *xs = xr + kw * dw;
        __m512 v = sw == 1 ? _mm512_maskz_loadu_ps(m1, xs)
                           : _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m1, xs), even,
                                                    _mm512_maskz_loadu_ps(m2, xs + 16));
        acc = _mm512_fmadd_ps(_mm512_set1_ps(wm[kh * KW + kw]), v, acc);
      }
    }
    _mm512_mask_storeu_ps(yr + ow, (__mmask16)((1u << r) - 1u), acc);
  }
  if (ow > in_hi) ow = in_hi;
  return ow;
}

/* A whole depthwise plane (strides 1 or 2, output width up to 16 *
 * DW_MAXBLK, kernel width up to DW_MAXKW) with AVX-512: 16 outputs per step;
 * every tap is one masked load (stride 2: two and a permute) whose mask
 * drops the lanes left or right of the image, so the borders need no scalar
 * code. Masks depend only on the column block and kw: computed once. */
/* nb (1 or 4) consecutive blocks of 16 outputs of row oh, one accumulator
 * each (independent FMA chains). */
__attribute__((target("avx512f"), always_inline)) static inline void dw_blocks(
    const ox_nn_geom *g, const float *xc, const float *wm, float b, int64_t oh,
    const uint32_t *mask, int64_t blk0, int nb, __mmask16 tail, int64_t nblk, float *yr) {
  int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], KW = g->k[1];
  int64_t sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  __m512 acc[4];
  for (int u = 0; u < nb; u++) acc[u] = _mm512_set1_ps(b);
  for (int64_t kh = 0; kh < KH; kh++) {
    int64_t ih = oh * g->stride[0] - g->pb[0] + kh * dh;
    if (ih < 0 || ih >= IH) continue;
    const float *xr = xc + ih * IW + blk0 * 16 * sw - g->pb[1];
    for (int64_t kw = 0; kw < KW; kw++) {
      __m512 wv = _mm512_set1_ps(wm[kh * KW + kw]);
      for (int u = 0; u < nb; u++) {
        uint32_t m = mask[(blk0 + u) * DW_MAXKW + kw];
        const float *xs = xr + u * 16 * sw + kw * dw;
        __m512 v =
            sw == 1 ? _mm512_maskz_loadu_ps((__mmask16)m, xs)
                    : _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)m, xs), even,
                                             _mm512_maskz_loadu_ps((__mmask16)(m >> 16), xs + 16));
        acc[u] = _mm512_fmadd_ps(wv, v, acc[u]);
      }
    }
  }
  for (int u = 0; u < nb; u++) {
    if (blk0 + u + 1 < nblk)
      _mm512_storeu_ps(yr + (blk0 + u) * 16, acc[u]);
    else
      _mm512_mask_storeu_ps(yr + (blk0 + u) * 16, tail, acc[u]);
  }
}

/* Planes one block wide (output rows of 16 or fewer, 14x14 and 7x7 maps):
 * two rows at a time, two independent chains, summed in dw_blocks' order. */
__attribute__((target("avx512f"))) static void dw_pairs_1blk(const ox_nn_geom *g, const float *xc,
                                                             const float *wm, float b,
                                                             const uint32_t *mask, __mmask16 tail,
                                                             float *y) {
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t sw = g->stride[1], dh = g->dil[0], dw = g->dil[1], sh = g->stride[0];
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t oh = 0; oh < OH; oh += 2) {
    bool two = oh + 1 < OH;
    __m512 a0 = _mm512_set1_ps(b), a1 = a0;
    for (int64_t kh = 0; kh < KH; kh++) {
      int64_t ih0 = oh * sh - g->pb[0] + kh * dh, ih1 = ih0 + sh;
      bool v0 = ih0 >= 0 && ih0 < IH, v1 = two && ih1 >= 0 && ih1 < IH;
      const float *x0 = xc + ih0 * IW - g->pb[1], *x1 = xc + ih1 * IW - g->pb[1];
      for (int64_t kw = 0; kw < KW; kw++) {
        __m512 wv = _mm512_set1_ps(wm[kh * KW + kw]);
        uint32_t m = mask[kw];
        if (v0) {
          const float *xs = x0 + kw * dw;
          __m512 v = sw == 1 ? _mm512_maskz_loadu_ps((__mmask16)m, xs)
                             : _mm512_permutex2var_ps(
                                   _mm512_maskz_loadu_ps((__mmask16)m, xs), even,
                                   _mm512_maskz_loadu_ps((__mmask16)(m >> 16), xs + 16));
          a0 = _mm512_fmadd_ps(wv, v, a0);
        }
        if (v1) {
          const float *xs = x1 + kw * dw;
          __m512 v = sw == 1 ? _mm512_maskz_loadu_ps((__mmask16)m, xs)
                             : _mm512_permutex2var_ps(
                                   _mm512_maskz_loadu_ps((__mmask16)m, xs), even,
                                   _mm512_maskz_loadu_ps((__mmask16)(m >> 16), xs + 16));
          a1 = _mm512_fmadd_ps(wv, v, a1);
        }
      }
    }
    _mm512_mask_storeu_ps(y + oh * OW, tail, a0);
    if (two) _mm512_mask_storeu_ps(y + (oh + 1) * OW, tail, a1);
  }
}

__attribute__((target("avx512f"))) void ox_dw_plane_avx512(const ox_nn_geom *g, const float *xc,
                                                           const float *wm, float b, float *y) {
  int64_t IW = g->in[1], OH = g->out[0], OW = g->out[1], KW = g->k[1];
  int64_t sw = g->stride[1], dw = g->dil[1];
  int64_t nblk = (OW + 15) / 16;
  uint32_t mask[DW_MAXBLK][DW_MAXKW];
  for (int64_t blk = 0; blk < nblk; blk++)
    for (int64_t kw = 0; kw < KW; kw++) {
      /* source element e of the span starting at (16 blk) sw + kw dw - pb */
      int64_t base = blk * 16 * sw + kw * dw - g->pb[1], lanes = OW - blk * 16;
      if (lanes > 16) lanes = 16;
      uint32_t m = 0;
      for (int64_t q = 0; q < lanes; q++) {
        int64_t e = q * sw, iw = base + e;
        if (iw >= 0 && iw < IW) m |= 1u << e;
      }
      mask[blk][kw] = m;
    }
  __mmask16 tail = (__mmask16)((1u << (OW - (nblk - 1) * 16)) - 1u);
  if (nblk == 1) {
    dw_pairs_1blk(g, xc, wm, b, (const uint32_t *)mask, tail, y);
    return;
  }
  for (int64_t oh = 0; oh < OH; oh++) {
    float *yr = y + oh * OW;
    int64_t blk = 0;
    for (; blk + 4 <= nblk; blk += 4)
      dw_blocks(g, xc, wm, b, oh, (const uint32_t *)mask, blk, 4, tail, nblk, yr);
    /* the rest as one call too (independent chains: a 28-wide row is two
     * blocks, and one chain of multiply-adds at a time waited on latency) */
    if (nblk - blk == 3)
      dw_blocks(g, xc, wm, b, oh, (const uint32_t *)mask, blk, 3, tail, nblk, yr);
    else if (nblk - blk == 2)
      dw_blocks(g, xc, wm, b, oh, (const uint32_t *)mask, blk, 2, tail, nblk, yr);
    else if (nblk - blk == 1)
      dw_blocks(g, xc, wm, b, oh, (const uint32_t *)mask, blk, 1, tail, nblk, yr);
  }
}

/* R output rows from oy times V vectors of 16 outputs from column 16 v0 of
 * the bordered plane p (rows of rw floats, 64-byte aligned): R V
 * independent chains (one chain at a time waited on the FMA latency).
 * Each bordered row is read once per tile with aligned loads, its shifted
 * taps made by valignd (the unaligned loads split cache lines); every
 * output takes its taps in order from the bias. Stride 2: phase e (even
 * columns) at 0, phase o at rw / 2; column 2 ox + kx is phase kx % 2 at
 * ox + kx / 2. */
__attribute__((target("avx512f"), always_inline)) static inline void dwp_tile(
    const float *p, int64_t rw, const int S, int64_t OW, int64_t oy, int64_t v0, const int R,
    const int V, const __m512 *w, float b, const ox_sgemm_epi *ep, float *y) {
  __m512 acc[4][2];
  for (int i = 0; i < R; i++)
    for (int v = 0; v < V; v++) acc[i][v] = _mm512_set1_ps(b);
  /* bordered rows oy S + j, j < (R - 1) S + 3: row i takes j = i S + ky
   * (all compile-time once unrolled, so the weights stay in registers) */
  for (int j = 0; j < (R - 1) * S + 3; j++) {
    const float *row = p + (oy * S + j) * rw;
    for (int v = 0; v < V; v++) {
      int64_t ox = (v0 + v) * 16;
      __m512 lo = _mm512_load_ps(row + ox), hi = _mm512_load_ps(row + ox + 16), t[3];
      t[0] = lo;
      if (S == 1) {
        t[1] = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), 1));
        t[2] = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), 2));
      } else {
        t[1] = _mm512_load_ps(row + rw / 2 + ox);
        t[2] = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), 1));
      }
      for (int i = 0; i < R; i++) {
        int ky = j - i * S;
        if (ky < 0 || ky > 2) continue;
        for (int kx = 0; kx < 3; kx++)
          acc[i][v] = _mm512_fmadd_ps(w[ky * 3 + kx], t[kx], acc[i][v]);
      }
    }
  }
  for (int i = 0; i < R; i++)
    for (int v = 0; v < V; v++) {
      int64_t ox = (v0 + v) * 16;
      __m512 r = ep ? ox_bound16(ep, ox_act16(ep, acc[i][v])) : acc[i][v];
      float *yr = y + (oy + i) * OW + ox;
      if (ox + 16 <= OW)
        _mm512_storeu_ps(yr, r);
      else
        _mm512_mask_storeu_ps(yr, (__mmask16)((1u << (OW - ox)) - 1u), r);
    }
}

/* rows [oy, oy + R) of the plane: vectors two at a time, an odd one alone */
__attribute__((target("avx512f"), always_inline)) static inline void dwp_rows(
    const float *p, int64_t rw, const int S, int64_t OW, int64_t nv, int64_t oy, const int R,
    const __m512 *w, float b, const ox_sgemm_epi *ep, float *y) {
  int64_t v = 0;
  for (; v + 2 <= nv; v += 2) dwp_tile(p, rw, S, OW, oy, v, R, 2, w, b, ep, y);
  if (v < nv) dwp_tile(p, rw, S, OW, oy, v, R, 1, w, b, ep, y);
}

/* the plane's outputs in tiles of four chains: four rows of one vector
 * (the nine weights, four sums and one row's taps stay in registers; with
 * two vectors the weights were spilled and every FMA loaded one) */
__attribute__((target("avx512f"), always_inline)) static inline void dwp_plane(
    const float *p, int64_t rw, const int S, int64_t OH, int64_t OW, const __m512 *w, float b,
    const ox_sgemm_epi *ep, float *y) {
  int64_t nv = (OW + 15) / 16, oy = 0;
  for (; oy + 4 <= OH; oy += 4) {
    for (int64_t v = 0; v < nv; v++) dwp_tile(p, rw, S, OW, oy, v, 4, 1, w, b, ep, y);
  }
  for (; oy + 2 <= OH; oy += 2) dwp_rows(p, rw, S, OW, nv, oy, 2, w, b, ep, y);
  if (oy < OH) dwp_rows(p, rw, S, OW, nv, oy, 1, w, b, ep, y);
}

/* 3 x 3 planes (strides 1 and 2, no dilation, pads up to 2, rows of 12
 * outputs or more: narrower ones filled a vector half): the plane is
 * first copied into a scratch plane with zero borders (stride 2: its even
 * and odd columns apart), so that every tap is an aligned load or a
 * register shift, and the weights stay in registers. The masked path spent
 * its time on the masks (a load and a kmov per tap), not on the FMAs. The
 * sums are the same: the taps in the same order from the bias, a border
 * tap adding w * 0. The FusedConv activation and bound (no residual) are
 * applied before the store. */

/* Input row src (IW values) into bordered row(s): stride 1 at dst + pl;
 * stride 2 its padded columns c = i + pl split, column c going to phase
 * c % 2 (dst0 or dst1) at c / 2 (32 columns a step). */
__attribute__((target("avx512f"))) static void dwf_row(const float *src, int64_t IW, int64_t pl,
                                                       int S, float *dst0, float *dst1) {
  if (S == 1) {
    for (int64_t i = 0; i < IW; i += 16) {
      __mmask16 m = IW - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (IW - i)) - 1u);
      _mm512_mask_storeu_ps(dst0 + pl + i, m, _mm512_maskz_loadu_ps(m, src + i));
    }
    return;
  }
  float *ev = ((pl & 1) ? dst1 : dst0) + (pl >> 1);
  float *od = (((pl + 1) & 1) ? dst1 : dst0) + ((pl + 1) >> 1);
  const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  for (int64_t i = 0; i < IW; i += 32) {
    int64_t left = IW - i, ne = (left + 1) / 2, no = left / 2;
    __mmask16 m0 = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    __mmask16 m1 = left >= 32  ? (__mmask16)0xFFFF
                   : left > 16 ? (__mmask16)((1u << (left - 16)) - 1u)
                               : (__mmask16)0;
    __m512 x0 = _mm512_maskz_loadu_ps(m0, src + i), x1 = _mm512_maskz_loadu_ps(m1, src + i + 16);
    __mmask16 me = ne >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << ne) - 1u);
    __mmask16 mo = no >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << no) - 1u);
    _mm512_mask_storeu_ps(ev + i / 2, me, _mm512_permutex2var_ps(x0, ie, x1));
    _mm512_mask_storeu_ps(od + i / 2, mo, _mm512_permutex2var_ps(x0, io, x1));
  }
}

/* Plane xc into the bordered plane p (dwp_dims), fetching the next plane
 * (next, or NULL) into L2 as it goes. */
__attribute__((target("avx512f"))) static void dwp_border(const ox_nn_geom *g, const float *xc,
                                                          const float *next, float *p) {
  int64_t IH = g->in[0], IW = g->in[1];
  int64_t sw = g->stride[1], pt = g->pb[0], pl = g->pb[1], L, rw, ph, size;
  (void)dwp_dims(g, &L, &rw, &ph, &size);
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t r = 0; r < ph; r++) {
    float *row = p + r * rw;
    int64_t ir = r - pt;
    if (ir < 0 || ir >= IH || sw != 1) {
      for (int64_t i = 0; i < rw; i += 16) _mm512_store_ps(row + i, zero);
      if (ir < 0 || ir >= IH) continue;
    }
    const float *src = xc + ir * IW;
    for (int64_t i = 0; next && i < IW; i += 16)
      _mm_prefetch((const char *)(next + ir * IW + i), _MM_HINT_T1);
    if (sw == 1) {
      /* the left border, then the row in whole vectors (zeros past its
       * end), then zeros to the end of the plane row */
      _mm512_store_ps(row, zero);
      int64_t i = 0;
      for (; i + 16 <= IW; i += 16) _mm512_storeu_ps(row + pl + i, _mm512_loadu_ps(src + i));
      if (i < IW)
        _mm512_storeu_ps(row + pl + i,
                         _mm512_maskz_loadu_ps((__mmask16)((1u << (IW - i)) - 1u), src + i));
      else
        _mm512_storeu_ps(row + pl + i, zero);
      /* (a vector may reach into the next row, written after this one, or
       * the plane's 64-byte margin) */
      if (pl + i + 16 < rw) _mm512_storeu_ps(row + pl + i + 16, zero);
      for (int64_t z = (pl + i + 32 + 15) / 16 * 16; z < rw; z += 16)
        _mm512_store_ps(row + z, zero);
    } else {
      dwf_row(src, IW, pl, 2, row, row + L);
    }
  }
}

/* The outputs of a bordered plane, with the epilogue ep (no residual) */
__attribute__((target("avx512f"))) static void dwp_compute(const ox_nn_geom *g, const float *p,
                                                           const float *wm, float b, float *y,
                                                           const ox_sgemm_epi *ep) {
  int64_t L, rw, ph, size;
  (void)dwp_dims(g, &L, &rw, &ph, &size);
  __m512 w[9];
  for (int t = 0; t < 9; t++) w[t] = _mm512_set1_ps(wm[t]);
  if (g->stride[1] == 1)
    dwp_plane(p, rw, 1, g->out[0], g->out[1], w, b, ep, y);
  else
    dwp_plane(p, rw, 2, g->out[0], g->out[1], w, b, ep, y);
}

/* Planes [t0, t1) of the job: each bordered, then computed; planes of up
 * to 8 KiB in a pipeline over two buffers (plane t + 1 bordered before
 * plane t is computed: loads straddling fresh stores wait for them), larger
 * ones one after the other, the next fetched into L2 while one is
 * bordered (planes come from the layer before, mostly out of L3). False
 * (nothing done) without scratch memory or when the input is wider than
 * the plane. */
__attribute__((target("avx512f"))) bool ox_dw_padded_range_avx512(const dw_job *j, int64_t t0,
                                                                  int64_t t1) {
  const ox_nn_geom *g = j->g;
  int64_t L, rw, ph, size, OH = g->out[0], OW = g->out[1], MC = j->C * j->Mg;
  if (!dwp_dims(g, &L, &rw, &ph, &size)) return false;
  size = (size + 15) / 16 * 16;
  bool pipe = size * (int64_t)sizeof(float) <= 8192 && t1 - t0 > 1;
  float *buf = ox_scratch(0, (size_t)(pipe ? 2 * size : size) * sizeof(float));
  if (!buf) return false;
  const ox_sgemm_epi *ep = j->epi && !j->epi->res ? j->epi : NULL;
  for (int64_t t = t0 - (pipe ? 1 : 0); t < t1; t++) {
    if (pipe && t + 1 < t1) dwp_border(g, dw_src(j, t + 1), NULL, buf + ((t + 1) & 1) * size);
    if (t < t0) continue;
    float *p = pipe ? buf + (t & 1) * size : buf;
    if (!pipe) dwp_border(g, dw_src(j, t), t + 1 < t1 ? dw_src(j, t + 1) : NULL, p);
    float *ym = j->y + t * OH * OW;
    dwp_compute(g, p, j->w + t % MC * 9, j->bias ? j->bias[t % MC] : 0.0f, ym, ep);
    if (j->epi && !ep) { /* a residual: over the plane just written */
      ox_sgemm_epi e = ox_sgemm_epi_at(j->epi, 0, t * OH * OW);
      ox_sgemm_epi_apply(&e, 1, OH * OW, ym, OH * OW);
    }
  }
  return true;
}

/* Small 3 x 3 stride-1 planes (rows under 12 outputs: 7 x 7 maps): the
 * zero-bordered plane with rows of OW + 2 floats is one flat run, so output
 * (oy, ox) is at flat index f = oy (OW + 2) + ox and tap (ky, kx) at
 * f + ky (OW + 2) + kx: the vectors sweep f over all rows at once (two
 * columns of garbage per row, dropped when the rows are copied out) instead
 * of one vector per row of seven. Taps in order from the bias, as the other
 * paths; the activation before the copy. */

/* nb vectors of 16 flat outputs from f0 of a K x K kernel: stride 1 reads
 * the one bordered plane (row stride rs) at f + ky rs + kx; stride 2 the
 * phase plane (ky % 2, kx % 2) (planes plen apart, row stride rs) at
 * f + (ky / 2) rs + kx / 2 */
__attribute__((target("avx512f"), always_inline)) static inline void dwf_vecs(
    const float *p, int64_t rs, int64_t plen, const int S, const int K, int64_t f0, const int nb,
    const float *wm, __m512 bv, const ox_sgemm_epi *ep, float *out) {
  __m512 acc[4];
  for (int i = 0; i < nb; i++) acc[i] = bv;
  for (int ky = 0; ky < K; ky++)
    for (int kx = 0; kx < K; kx++) {
      const float *q = S == 1 ? p + ky * rs + kx
                              : p + ((ky & 1) * 2 + (kx & 1)) * plen + (ky >> 1) * rs + (kx >> 1);
      __m512 wv = _mm512_set1_ps(wm[ky * K + kx]);
      for (int i = 0; i < nb; i++)
        acc[i] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(q + f0 + 16 * i), acc[i]);
    }
  for (int i = 0; i < nb; i++)
    _mm512_storeu_ps(out + f0 + 16 * i, ep ? ox_bound16(ep, ox_act16(ep, acc[i])) : acc[i]);
}

__attribute__((target("avx512f"), always_inline)) static inline void dwf_plane(
    const float *p, int64_t rs, int64_t plen, const int S, const int K, int64_t nvec,
    const float *wm, __m512 bv, const ox_sgemm_epi *ep, float *out) {
  int64_t v = 0;
  for (; v + 4 <= nvec; v += 4) dwf_vecs(p, rs, plen, S, K, 16 * v, 4, wm, bv, ep, out);
  if (nvec - v == 3)
    dwf_vecs(p, rs, plen, S, K, 16 * v, 3, wm, bv, ep, out);
  else if (nvec - v == 2)
    dwf_vecs(p, rs, plen, S, K, 16 * v, 2, wm, bv, ep, out);
  else if (nvec - v == 1)
    dwf_vecs(p, rs, plen, S, K, 16 * v, 1, wm, bv, ep, out);
}

/* Planes [t0, t1) in a pipeline over two pairs of buffers: plane t + 1 is
 * bordered while plane t is computed and plane t - 1 copied out, so that no
 * load reads a store of the moment before (a load straddling fresh stores
 * waits for them to reach the cache: done in sequence, the plane took four
 * times its arithmetic). Stride 1: one bordered plane, rows of OW + 2;
 * stride 2: its four phase planes (even / odd rows x columns), rows of
 * OW + 1, so that output (y, x) is at y (OW + 1) + x in each. False
 * (nothing done) without scratch memory. */
__attribute__((target("avx512f"))) bool ox_dw_flat_range_avx512(const dw_job *j, int64_t t0,
                                                                int64_t t1) {
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], S = g->stride[0];
  int64_t pt = g->pb[0], pl = g->pb[1], K = g->k[0], rs, prows, np;
  dwf_dims(g, &rs, &prows, &np);
  int64_t nf = OH * rs, nvec = (nf + 15) / 16;
  /* a plane's run, then zeros for every tap of the last vector */
  int64_t reach = S == 1 ? (K - 1) * (rs + 1) : (K - 1) / 2 * (rs + 1);
  int64_t plen = (nvec * 16 + reach + 31) / 16 * 16, len = np * plen, olen = nvec * 16;
  float *buf = ox_scratch(0, (size_t)(2 * len + 2 * olen) * sizeof(float));
  if (!buf) return false;
  float *pb[2] = {buf, buf + len}, *ob[2] = {buf + 2 * len, buf + 2 * len + olen};
  const ox_sgemm_epi *ep = j->epi && !j->epi->res ? j->epi : NULL;
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t t = t0 - 1; t <= t1; t++) {
    if (t + 1 < t1) { /* border plane t + 1 */
      float *p = pb[(t + 1) & 1];
      const float *xc = dw_src(j, t + 1);
      /* the borders are zeroed once: every plane writes the same cells */
      if (t + 1 < t0 + 2)
        for (int64_t i = 0; i < len; i += 16) _mm512_store_ps(p + i, zero);
      for (int64_t r = 0; r < IH; r++) {
        int64_t pr = r + pt, row = S == 1 ? pr : pr >> 1;
        if (row >= prows) break;
        float *d0 = p + (S == 1 ? 0 : (pr & 1) * 2 * plen) + row * rs;
        dwf_row(xc + r * IW, IW, pl, (int)S, d0, d0 + plen);
      }
    }
    if (t >= t0 && t < t1) { /* compute plane t */
      const float *wm = j->w + t % (j->C * j->Mg) * K * K;
      const __m512 bv = _mm512_set1_ps(j->bias ? j->bias[t % (j->C * j->Mg)] : 0.0f);
      if (K == 3 && S == 1)
        dwf_plane(pb[t & 1], rs, plen, 1, 3, nvec, wm, bv, ep, ob[t & 1]);
      else if (K == 3)
        dwf_plane(pb[t & 1], rs, plen, 2, 3, nvec, wm, bv, ep, ob[t & 1]);
      else if (S == 1)
        dwf_plane(pb[t & 1], rs, plen, 1, 5, nvec, wm, bv, ep, ob[t & 1]);
      else
        dwf_plane(pb[t & 1], rs, plen, 2, 5, nvec, wm, bv, ep, ob[t & 1]);
    }
    if (t - 1 >= t0) { /* copy plane t - 1 out, its rows without the garbage columns */
      const float *out = ob[(t - 1) & 1];
      float *ym = j->y + (t - 1) * OH * OW;
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t x = 0; x < OW; x += 16) {
          __mmask16 m = OW - x >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (OW - x)) - 1u);
          _mm512_mask_storeu_ps(ym + oy * OW + x, m, _mm512_maskz_loadu_ps(m, out + oy * rs + x));
        }
      if (j->epi && !ep) { /* a residual: over the plane just written */
        ox_sgemm_epi e = ox_sgemm_epi_at(j->epi, 0, (t - 1) * OH * OW);
        ox_sgemm_epi_apply(&e, 1, OH * OW, ym, OH * OW);
      }
    }
  }
  return true;
}

/* AVX-512: columns four at a time with the accumulators in registers (a
 * missing column repeats the first and its sums are dropped); the W row
 * stays in L1 between the groups of four. */
__attribute__((target("avx512f"))) void ox_few_rows_avx512(const ox_few_job *j, int64_t m0,
                                                           int64_t m1) {
  int64_t K = j->K, K16 = K / 16 * 16, P = j->P;
  __mmask16 tail = (__mmask16)((1u << (K - K16)) - 1u);
  for (int64_t m = m0; m < m1; m++) {
    const float *wr = j->w + m * K;
    for (int64_t p0 = 0; p0 < P; p0 += 4) {
      const float *c[4];
      for (int q = 0; q < 4; q++) c[q] = j->colt + (p0 + q < P ? p0 + q : p0) * K;
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t i = 0; i < K16; i += 16) {
        __m512 w = _mm512_loadu_ps(wr + i);
        a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(c[0] + i), a0);
        a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(c[1] + i), a1);
        a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(c[2] + i), a2);
        a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(c[3] + i), a3);
      }
      if (tail) {
        __m512 w = _mm512_maskz_loadu_ps(tail, wr + K16);
        a0 = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(tail, c[0] + K16), a0);
        a1 = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(tail, c[1] + K16), a1);
        a2 = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(tail, c[2] + K16), a2);
        a3 = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(tail, c[3] + K16), a3);
      }
      float sums[4] = {_mm512_reduce_add_ps(a0), _mm512_reduce_add_ps(a1), _mm512_reduce_add_ps(a2),
                       _mm512_reduce_add_ps(a3)};
      for (int64_t q = 0; q < 4 && p0 + q < P; q++)
        j->y[m * P + p0 + q] = j->bias ? sums[q] + j->bias[m] : sums[q];
    }
  }
}

#include "conv_direct_body.h"
#endif
