/* conv_dw.c - 2-D depthwise float convolution (one input channel per
 * group), direct: each output plane from its input plane and kernel, the
 * interior 16 outputs at a time with AVX-512, the borders tap by tap. */
#include <stdint.h>

#include "conv_common.h"

/* Depthwise 2-D (one input channel per group): direct loops with the valid
 * range of each kernel column precomputed. */
typedef struct dw_job {
  const ox_nn_geom *g;
  const float *x, *w, *bias;
  float *y;
  int64_t C, Mg;           /* channels (= groups), outputs per group */
  int64_t shuffle;         /* a channel shuffle before the layer (groups), or 0 */
  bool plane;              /* dw_plane_avx512 applies */
  bool padded;             /* dw_padded3x3 applies */
  const ox_sgemm_epi *epi; /* FusedConv epilogue (residual laid out like y), or NULL */
} dw_job;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "../kernels/epi_avx512.h"
/* Interior of a depthwise row for strides 1 and 2 with AVX-512: 16 outputs
 * per step; returns the first column left undone. */
__attribute__((target("avx512f"))) static int64_t dw_interior_avx512(const ox_nn_geom *g,
                                                                     const float *xc,
                                                                     const float *wm, float b,
                                                                     int64_t oh, float *yr,
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
#endif

#if defined(__x86_64__) && defined(__GNUC__)
enum { DW_MAXBLK = 64, DW_MAXKW = 8 };

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

__attribute__((target("avx512f"))) static void dw_plane_avx512(const ox_nn_geom *g, const float *xc,
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
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* 3 x 3 planes (strides 1 and 2, no dilation, pads up to 2, rows of 12
 * outputs or more: narrower ones filled a vector half): the plane is
 * first copied into a scratch plane with zero borders (stride 2: its even
 * and odd columns apart), so that every tap of 16 outputs is one unmasked
 * load and one FMA with the weight in a register. The masked path spent
 * its time on the masks (a load and a kmov per tap), not on the FMAs. The
 * sums are the same: the taps in the same order from the bias, a border
 * tap adding w * 0. The FusedConv activation and bound (no residual) are
 * applied before the store. */
enum { DWP_MAXW = 1024 };

__attribute__((target("avx512f"))) static bool dw_padded3x3(const ox_nn_geom *g, const float *xc,
                                                            const float *wm, float b, float *y,
                                                            const ox_sgemm_epi *ep) {
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t sh = g->stride[0], sw = g->stride[1], pt = g->pb[0], pl = g->pb[1];
  int64_t owp = (OW + 15) / 16 * 16;
  /* floats per plane row: stride 1 the padded columns; stride 2 each phase
   * (owp + 1 columns) */
  int64_t rw = sw == 1 ? owp + 2 : 2 * (owp + 1), ph = (OH - 1) * sh + 3;
  if (IW + pl > (sw == 1 ? rw : 2 * (owp + 1))) return false; /* wider than the outputs read */
  float *p = ox_scratch(0, (size_t)(rw * ph) * sizeof(float) + 64);
  if (!p) return false;
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t r = 0; r < ph; r++) {
    float *row = p + r * rw;
    int64_t ir = r - pt;
    for (int64_t i = 0; i < rw; i += 16)
      _mm512_mask_storeu_ps(
          row + i, rw - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (rw - i)) - 1u), zero);
    if (ir < 0 || ir >= IH) continue;
    const float *src = xc + ir * IW;
    if (sw == 1) {
      for (int64_t i = 0; i < IW; i += 16) {
        __mmask16 m = IW - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (IW - i)) - 1u);
        _mm512_mask_storeu_ps(row + pl + i, m, _mm512_maskz_loadu_ps(m, src + i));
      }
    } else {
      /* padded column c = i + pl: phase c % 2 at c / 2, so x's even
       * columns go to phase pl % 2 from pl / 2 on, its odd ones to phase
       * (pl + 1) % 2 from (pl + 1) / 2 on: 32 columns split per step */
      float *ev = row + (pl & 1) * (owp + 1) + (pl >> 1);
      float *od = row + ((pl + 1) & 1) * (owp + 1) + ((pl + 1) >> 1);
      const __m512i ie =
          _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
      const __m512i io =
          _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
      for (int64_t i = 0; i < IW; i += 32) {
        int64_t left = IW - i, ne = (left + 1) / 2, no = left / 2;
        __mmask16 m0 = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        __mmask16 m1 = left >= 32  ? (__mmask16)0xFFFF
                       : left > 16 ? (__mmask16)((1u << (left - 16)) - 1u)
                                   : (__mmask16)0;
        __m512 a = _mm512_maskz_loadu_ps(m0, src + i), c = _mm512_maskz_loadu_ps(m1, src + i + 16);
        __mmask16 me = ne >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << ne) - 1u);
        __mmask16 mo = no >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << no) - 1u);
        _mm512_mask_storeu_ps(ev + i / 2, me, _mm512_permutex2var_ps(a, ie, c));
        _mm512_mask_storeu_ps(od + i / 2, mo, _mm512_permutex2var_ps(a, io, c));
      }
    }
  }
  __m512 w[9];
  for (int t = 0; t < 9; t++) w[t] = _mm512_set1_ps(wm[t]);
  const __m512 bv = _mm512_set1_ps(b);
  for (int64_t oy = 0; oy < OH; oy++) {
    const float *r0 = p + oy * sh * rw, *r1 = r0 + rw, *r2 = r1 + rw;
    float *yr = y + oy * OW;
    for (int64_t ox = 0; ox < OW; ox += 16) {
      __m512 acc = bv;
      if (sw == 1) {
        acc = _mm512_fmadd_ps(w[0], _mm512_loadu_ps(r0 + ox), acc);
        acc = _mm512_fmadd_ps(w[1], _mm512_loadu_ps(r0 + ox + 1), acc);
        acc = _mm512_fmadd_ps(w[2], _mm512_loadu_ps(r0 + ox + 2), acc);
        acc = _mm512_fmadd_ps(w[3], _mm512_loadu_ps(r1 + ox), acc);
        acc = _mm512_fmadd_ps(w[4], _mm512_loadu_ps(r1 + ox + 1), acc);
        acc = _mm512_fmadd_ps(w[5], _mm512_loadu_ps(r1 + ox + 2), acc);
        acc = _mm512_fmadd_ps(w[6], _mm512_loadu_ps(r2 + ox), acc);
        acc = _mm512_fmadd_ps(w[7], _mm512_loadu_ps(r2 + ox + 1), acc);
        acc = _mm512_fmadd_ps(w[8], _mm512_loadu_ps(r2 + ox + 2), acc);
      } else { /* column 2 ox + kx: phase kx % 2 at ox + kx / 2 */
        int64_t o1 = owp + 1;
        acc = _mm512_fmadd_ps(w[0], _mm512_loadu_ps(r0 + ox), acc);
        acc = _mm512_fmadd_ps(w[1], _mm512_loadu_ps(r0 + o1 + ox), acc);
        acc = _mm512_fmadd_ps(w[2], _mm512_loadu_ps(r0 + ox + 1), acc);
        acc = _mm512_fmadd_ps(w[3], _mm512_loadu_ps(r1 + ox), acc);
        acc = _mm512_fmadd_ps(w[4], _mm512_loadu_ps(r1 + o1 + ox), acc);
        acc = _mm512_fmadd_ps(w[5], _mm512_loadu_ps(r1 + ox + 1), acc);
        acc = _mm512_fmadd_ps(w[6], _mm512_loadu_ps(r2 + ox), acc);
        acc = _mm512_fmadd_ps(w[7], _mm512_loadu_ps(r2 + o1 + ox), acc);
        acc = _mm512_fmadd_ps(w[8], _mm512_loadu_ps(r2 + ox + 1), acc);
      }
      if (ep) acc = ox_bound16(ep, ox_act16(ep, acc));
      if (ox + 16 <= OW)
        _mm512_storeu_ps(yr + ox, acc);
      else
        _mm512_mask_storeu_ps(yr + ox, (__mmask16)((1u << (OW - ox)) - 1u), acc);
    }
  }
  return true;
}
#endif

/* One output row of a depthwise 2-D convolution: columns where every kernel
 * column lands inside the input are computed 16 at a time in registers; the
 * edges tap by tap. */
static inline void dw_row(const ox_nn_geom *g, const float *xc, const float *wm, float b,
                          int64_t oh, float *yr) {
  int64_t IH = g->in[0], IW = g->in[1], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t sh = g->stride[0], sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
  /* interior [in_lo, in_hi): all kw taps valid */
  int64_t in_lo = 0, in_hi = OW;
  for (int64_t kw = 0; kw < KW; kw++) {
    int64_t off = kw * dw - g->pb[1];
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t hi = IW - off <= 0 ? 0 : (IW - off + sw - 1) / sw;
    if (lo > in_lo) in_lo = lo;
    if (hi < in_hi) in_hi = hi;
  }
  if (in_hi < in_lo) in_hi = in_lo;
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
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) ow = dw_interior_avx512(g, xc, wm, b, oh, yr, ow, in_hi);
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

OX_NN_CLONES static void dw_task(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  for (int64_t t = t0; t < t1; t++) { /* t = n * M + m */
    int64_t m = t % (j->C * j->Mg), n = t / (j->C * j->Mg), c = m / j->Mg;
    if (j->shuffle) c = c % j->shuffle * (j->C / j->shuffle) + c / j->shuffle;
    const float *xc = j->x + (n * j->C + c) * IH * IW;
    const float *wm = j->w + m * KH * KW;
    float *ym = j->y + t * OH * OW;
    float b = j->bias ? j->bias[m] : 0.0f;
    bool done_epi = false;
#if defined(__x86_64__) && defined(__GNUC__)
    /* an epilogue without a residual runs on the registers before the store */
    if (j->padded && dw_padded3x3(g, xc, wm, b, ym, j->epi && !j->epi->res ? j->epi : NULL))
      done_epi = j->epi && !j->epi->res;
    else if (j->plane)
      dw_plane_avx512(g, xc, wm, b, ym);
    else
#endif
      for (int64_t oh = 0; oh < OH; oh++) dw_row(g, xc, wm, b, oh, ym + oh * OW);
    if (j->epi && !done_epi) { /* over the plane just written */
      ox_sgemm_epi ep = ox_sgemm_epi_at(j->epi, 0, t * OH * OW);
      ox_sgemm_epi_apply(&ep, 1, OH * OW, ym, OH * OW);
    }
  }
}

void ox_conv_depthwise(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Mg,
                       const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                       int64_t shuffle, float *y) {
  dw_job dj = {g, x, w, bias, y, G, Mg, shuffle, false, false, epi};
#if defined(__x86_64__) && defined(__GNUC__)
  dj.plane = (g->stride[1] == 1 || g->stride[1] == 2) && g->out[1] <= 16 * DW_MAXBLK &&
             g->k[1] <= DW_MAXKW && g->out[1] > 0 && __builtin_cpu_supports("avx512f");
  dj.padded = dj.plane && g->nd == 2 && g->k[0] == 3 && g->k[1] == 3 && g->dil[0] == 1 &&
              g->dil[1] == 1 && g->stride[0] == g->stride[1] && g->pb[0] <= 2 && g->pb[1] <= 2 &&
              g->out[1] >= 12 && g->out[1] <= DWP_MAXW;
#endif
  ox_parallel_for(pool, N * G * Mg, 1, dw_task, &dj);
}
