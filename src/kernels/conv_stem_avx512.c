/* conv_stem_avx512.c - a row of the stem convolution (conv_stem_body.h)
 * with AVX-512: blocks of 8 output channels by up to 3 runs of 16 output
 * pixels, 24 accumulators in registers; each tap loads the runs once from
 * the band's phase rows (contiguous at strides 1 and 2) and broadcasts
 * each of its 8 weights against them (8 x NV multiply-adds for NV + 8
 * loads). The rows' runs are grouped 3 at a time, a remainder of 4 as
 * 2 + 2 (a lone run would do 8 multiply-adds for 9 loads). The last run is
 * stored under a mask; the epilogue (residual, activation, bound) is
 * applied in registers with the GEMM's arithmetic (epi_avx512.h). */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <stdint.h>

#include "conv_direct_impl.h"
#include "epi_avx512.h"

/* Channels m0..m0+7 (block wb, bias bb) by runs [ow, ow + 16 NV) of output
 * row oh of image n; `last` the lanes of the final run that are stored. */
__attribute__((target("avx512f"), always_inline)) static inline void stem_blk(
    const stem_job *j, const float *xb, const float *wb, const float *bb, int64_t n, int64_t oh,
    int64_t m0, int64_t ow, int NV, __mmask16 last) {
  const ox_nn_geom *g = j->g;
  int64_t OH = g->out[0], OW = g->out[1], KH = g->k[0], KW = g->k[1], M = j->M;
  int64_t rs = g->stride[1] * j->pl, cs = j->rows_in * rs;
  __m512 acc[8][3];
  for (int i = 0; i < 8; i++) {
    __m512 b = _mm512_set1_ps(bb[i]);
    for (int v = 0; v < NV; v++) acc[i][v] = b;
  }
  const float *wt = wb;
  for (int64_t c = 0; c < j->C; c++)
    for (int64_t kh = 0; kh < KH; kh++) {
      const float *xr = xb + c * cs + kh * rs + ow;
      for (int64_t kw = 0; kw < KW; kw++, wt += 8) {
        const float *xs = xr + j->koff[kw];
        __m512 xv[3];
        for (int v = 0; v < NV; v++) xv[v] = _mm512_loadu_ps(xs + 16 * v);
        for (int i = 0; i < 8; i++) {
          __m512 wv = _mm512_set1_ps(wt[i]);
          for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(wv, xv[v], acc[i][v]);
        }
      }
    }
  const ox_sgemm_epi *ep = j->epi;
  for (int i = 0; i < 8; i++) {
    if (m0 + i >= M) break;
    int64_t at = ((n * M + m0 + i) * OH + oh) * OW + ow;
    float *yr = j->y + at;
    const float *rr = ep && ep->res ? ep->res + at : NULL;
    for (int v = 0; v < NV; v++) {
      __mmask16 k = v == NV - 1 ? last : (__mmask16)0xffff;
      __m512 r = acc[i][v];
      if (ep) {
        if (rr) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(k, rr + 16 * v));
        r = ox_bound16(ep, ox_act16(ep, r));
      }
      _mm512_mask_storeu_ps(yr + 16 * v, k, r);
    }
  }
}

/* d[q] = s[2 q] for q < n: a stride-2 phase row of the band, 16 at a time
 * (two masked loads, which read nothing past s[2 n - 2], and a permute) */
__attribute__((target("avx512f"))) void ox_stem_even_avx512(const float *s, int64_t n, float *d) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (int64_t q = 0; q < n; q += 16) {
    int64_t r = n - q < 16 ? n - q : 16, need = 2 * r - 1;
    __mmask16 m1 = (__mmask16)(need >= 16 ? 0xffffu : (1u << need) - 1u);
    __mmask16 m2 = (__mmask16)(need > 16 ? (1u << (need - 16)) - 1u : 0u);
    __m512 v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m1, s + 2 * q), even,
                                      _mm512_maskz_loadu_ps(m2, s + 2 * q + 16));
    _mm512_mask_storeu_ps(d + q, (__mmask16)((1u << r) - 1u), v);
  }
}

__attribute__((target("avx512f"))) void ox_stem_row_avx512(const stem_job *j, const float *xb,
                                                           int64_t n, int64_t oh) {
  int64_t OW = j->g->out[1], nvec = (OW + 15) / 16;
  __mmask16 tail = (__mmask16)(OW % 16 ? (1u << (OW % 16)) - 1u : 0xffffu);
  for (int64_t m0 = 0; m0 < j->M; m0 += 8) {
    const float *wb = j->wp + m0 * j->T, *bb = j->bp + m0;
    for (int64_t v0 = 0; v0 < nvec;) {
      int64_t left = nvec - v0;
      int nv = left >= 3 && left != 4 ? 3 : left >= 2 ? 2 : 1;
      __mmask16 last = v0 + nv == nvec ? tail : (__mmask16)0xffff;
      if (nv == 3)
        stem_blk(j, xb, wb, bb, n, oh, m0, v0 * 16, 3, last);
      else if (nv == 2)
        stem_blk(j, xb, wb, bb, n, oh, m0, v0 * 16, 2, last);
      else
        stem_blk(j, xb, wb, bb, n, oh, m0, v0 * 16, 1, last);
      v0 += nv;
    }
  }
}

#endif
