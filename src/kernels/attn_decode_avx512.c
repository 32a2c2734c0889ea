/* attn_decode_avx512.c - the AVX-512 block pass of grouped-query attention's
 * decode step (attn_decode.h; attn_decode.c picks it at the AVX-512 level,
 * the plain-C pass serves the others).
 *
 * The step reads each cached key and value row once and does a few dozen
 * multiply-adds with it per query head, so it runs at memory bandwidth
 * only if the arithmetic per row stays well under the time the row takes
 * to arrive. The plain-C pass spent most of it on a horizontal add per key
 * and head; here
 *  - scores: one head against sixteen keys at a time, sixteen registers of
 *    partial sums walking the head size together (the query slice loaded
 *    once per step, the key slices read as memory operands, L1-resident for
 *    the group's other heads), then reduced to one register of sixteen
 *    scores by a transpose-style tree (15 adds, no scalar work);
 *  - values: acc[G x H] += P[G x n] V[n x H] as a register tile of up to
 *    four heads x up to eight vectors of the head size, each value slice
 *    loaded once per tile and multiplied into every head's accumulator, the
 *    accumulators loaded and stored once per block instead of once per key;
 *  - the value rows of the keys are prefetched while their scores are
 *    computed, a few lines per step of the score loop (a burst of them per
 *    tile cost a tenth of the time in cache, waiting on the miss buffers,
 *    for no more speed from memory), so the value pass finds them in
 *    cache.
 * The softmax bookkeeping between the two (cap, bias, running maximum,
 * exponentials, rescale) is the plain pass's (attn_decode.c), compiled for
 * AVX-512 there. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>

#include "attn_decode_impl.h"

#define AD_AVX512 __attribute__((target("avx512f")))
#define AD_INLINE __attribute__((always_inline)) static inline

/* the lanes of the first `left` values of a vector */
AD_AVX512 AD_INLINE __mmask16 ad_mask(int64_t left) {
  return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* one register whose lane i is the sum of the lanes of a[i]: halving trees
 * that pair registers (8 + 4 + 2 + 1 adds) and leave the sums in the order
 * the final permutation undoes */
AD_AVX512 AD_INLINE __m512 ad_reduce16(__m512 a[16]) {
  __m512 b[8], c[4], e[2];
  for (int i = 0; i < 8; i++) /* 256-bit halves: a[i] low, a[i + 8] high */
    b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[i], a[i + 8], 0x44),
                         _mm512_shuffle_f32x4(a[i], a[i + 8], 0xEE));
  for (int i = 0; i < 4; i++) /* 128-bit lanes: a[i], a[i + 8], a[i + 4], a[i + 12] */
    c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[i], b[i + 4], 0x88),
                         _mm512_shuffle_f32x4(b[i], b[i + 4], 0xDD));
  for (int i = 0; i < 2; i++) /* pairs within a lane: c[i] even, c[i + 2] odd */
    e[i] = _mm512_add_ps(_mm512_unpacklo_ps(c[i], c[i + 2]), _mm512_unpackhi_ps(c[i], c[i + 2]));
  __m512 r = _mm512_add_ps(_mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(3, 2, 3, 2)));
  /* r[4L + p] sums a[s(p) + 8 (L & 1) + 4 (L >> 1)], s swapping 1 and 2;
   * key i is at that position with L = (i >> 3 & 1) | (i >> 1 & 2) and
   * p = s(i & 3) */
  const __m512i order = _mm512_set_epi32(15, 13, 14, 12, 7, 5, 6, 4, 11, 9, 10, 8, 3, 1, 2, 0);
  return _mm512_permutexvar_ps(order, r);
}

/* sc[j] = scale * q . k[j] for the nk <= 16 keys of one tile; the missing
 * keys of a short tile repeat the last one (no reads past the block) and
 * are not stored. With pf, the tile's value rows (pf on) are prefetched,
 * one line per key and step (a short tile's prefetches may run past the
 * block: they never fault) */
AD_AVX512 AD_INLINE void ad_scores16(const float *q, const float *k, int64_t H, int64_t nk,
                                     float scale, float *sc, const char *pf) {
  const float *kr[16];
  for (int j = 0; j < 16; j++) kr[j] = k + (j < nk ? j : nk - 1) * H;
  __m512 a[16];
  for (int j = 0; j < 16; j++) a[j] = _mm512_setzero_ps();
  int64_t h = 0;
  for (; h + 16 <= H; h += 16) {
    if (pf) {
      for (int t = 0; t < 16; t++) _mm_prefetch(pf + 64 * t, _MM_HINT_T0);
      pf += 64 * 16;
    }
    __m512 qv = _mm512_loadu_ps(q + h);
    for (int j = 0; j < 16; j++) a[j] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(kr[j] + h), a[j]);
  }
  if (h < H) { /* head sizes that are no multiple of 16 */
    __mmask16 m = ad_mask(H - h);
    __m512 qv = _mm512_maskz_loadu_ps(m, q + h);
    for (int j = 0; j < 16; j++)
      a[j] = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, kr[j] + h), a[j]);
  }
  __m512 s = _mm512_mul_ps(ad_reduce16(a), _mm512_set1_ps(scale));
  _mm512_mask_storeu_ps(sc, ad_mask(nk), s);
}

/* the same for two heads (q0, q1) against the nk <= 8 keys of a half tile:
 * per step of the head size two query slices and eight key slices feed
 * sixteen multiply-adds (the one-head tile loads one slice per
 * multiply-add); the reduced register holds head 0's scores in its low
 * half, head 1's in its high half */
AD_AVX512 AD_INLINE void ad_scores2x8(const float *q0, const float *q1, const float *k, int64_t H,
                                      int64_t nk, float scale, float *sc0, float *sc1,
                                      const char *pf) {
  const float *kr[8];
  for (int j = 0; j < 8; j++) kr[j] = k + (j < nk ? j : nk - 1) * H;
  __m512 a[16];
  for (int j = 0; j < 16; j++) a[j] = _mm512_setzero_ps();
  int64_t h = 0;
  for (; h + 16 <= H; h += 16) {
    if (pf) {
      for (int t = 0; t < 8; t++) _mm_prefetch(pf + 64 * t, _MM_HINT_T0);
      pf += 64 * 8;
    }
    __m512 x0 = _mm512_loadu_ps(q0 + h), x1 = _mm512_loadu_ps(q1 + h);
    for (int j = 0; j < 8; j++) {
      __m512 kv = _mm512_loadu_ps(kr[j] + h);
      a[j] = _mm512_fmadd_ps(x0, kv, a[j]);
      a[8 + j] = _mm512_fmadd_ps(x1, kv, a[8 + j]);
    }
  }
  if (h < H) {
    __mmask16 m = ad_mask(H - h);
    __m512 x0 = _mm512_maskz_loadu_ps(m, q0 + h), x1 = _mm512_maskz_loadu_ps(m, q1 + h);
    for (int j = 0; j < 8; j++) {
      __m512 kv = _mm512_maskz_loadu_ps(m, kr[j] + h);
      a[j] = _mm512_fmadd_ps(x0, kv, a[j]);
      a[8 + j] = _mm512_fmadd_ps(x1, kv, a[8 + j]);
    }
  }
  __m512 s = _mm512_mul_ps(ad_reduce16(a), _mm512_set1_ps(scale));
  __mmask16 m = ad_mask(nk < 8 ? nk : 8);
  _mm512_mask_storeu_ps(sc0, m, s);
  _mm512_mask_storeu_ps(sc1, m, _mm512_shuffle_f32x4(s, s, 0xEE));
}

/* acc[g][0 .. 16 C) += sum_j p[g * ldp + j] v[j][0 .. 16 C) for GT heads,
 * the last vector's lanes limited to `last`: one function per shape, its
 * arrays sized exactly (GT x C accumulators and C value slices, at most
 * 4 x 4 + 4 or 2 x 8 + 8 of the 32 registers) so that the compiler keeps
 * them in registers; an array sized for the largest shape was stored to
 * the stack every key */
#define AD_UNROLL _Pragma("GCC unroll 8")
#define AD_TILE(GT, C)                                                                          \
  AD_AVX512 static void ad_vtile_##GT##_##C(const float *p, int64_t ldp, const float *v,        \
                                            int64_t H, int64_t n, float *acc, __mmask16 last) { \
    __m512 a[GT][C], x[C];                                                                      \
    AD_UNROLL for (int g = 0; g < GT; g++) AD_UNROLL for (int c = 0; c < C; c++) a[g][c] =      \
        _mm512_maskz_loadu_ps(c == C - 1 ? last : 0xFFFF, acc + g * H + 16 * c);                \
    for (int64_t j = 0; j < n; j++) {                                                           \
      const float *vj = v + j * H;                                                              \
      AD_UNROLL for (int c = 0; c < C; c++) x[c] =                                              \
          _mm512_maskz_loadu_ps(c == C - 1 ? last : 0xFFFF, vj + 16 * c);                       \
      AD_UNROLL for (int g = 0; g < GT; g++) {                                                  \
        __m512 w = _mm512_set1_ps(p[g * ldp + j]);                                              \
        AD_UNROLL for (int c = 0; c < C; c++) a[g][c] = _mm512_fmadd_ps(w, x[c], a[g][c]);      \
      }                                                                                         \
    }                                                                                           \
    AD_UNROLL for (int g = 0; g < GT; g++) AD_UNROLL for (int c = 0; c < C; c++)                \
        _mm512_mask_storeu_ps(acc + g * H + 16 * c, c == C - 1 ? last : 0xFFFF, a[g][c]);       \
  }
#define AD_TILES(GT) AD_TILE(GT, 1) AD_TILE(GT, 2) AD_TILE(GT, 3) AD_TILE(GT, 4)
AD_TILES(1)
AD_TILES(2)
AD_TILES(3)
AD_TILES(4)
AD_TILE(1, 8)
AD_TILE(2, 8)

typedef void (*ad_vtile_fn)(const float *, int64_t, const float *, int64_t, int64_t, float *,
                            __mmask16);
static const ad_vtile_fn ad_tiles[4][4] = {
    {ad_vtile_1_1, ad_vtile_1_2, ad_vtile_1_3, ad_vtile_1_4},
    {ad_vtile_2_1, ad_vtile_2_2, ad_vtile_2_3, ad_vtile_2_4},
    {ad_vtile_3_1, ad_vtile_3_2, ad_vtile_3_3, ad_vtile_3_4},
    {ad_vtile_4_1, ad_vtile_4_2, ad_vtile_4_3, ad_vtile_4_4},
};

/* acc[G x H] += P[G x n] V[n x H]: heads four at a time, the head size in
 * strips of eight vectors (one or two heads) or four */
AD_AVX512 static void ad_values(const float *p, int64_t n, const float *v, int64_t G, int64_t H,
                                float *acc) {
  int64_t nv = (H + 15) / 16;
  for (int64_t g0 = 0; g0 < G; g0 += 4) {
    int gt = G - g0 < 4 ? (int)(G - g0) : 4;
    int wide = gt <= 2 ? 8 : 4;
    for (int64_t c0 = 0; c0 < nv; c0 += wide) {
      int c = nv - c0 < wide ? (int)(nv - c0) : wide;
      __mmask16 last = ad_mask(H - 16 * (c0 + c - 1));
      const float *pg = p + g0 * n;
      float *ag = acc + g0 * H + 16 * c0;
      const float *vc = v + 16 * c0;
      if (c == 8)
        (gt == 1 ? ad_vtile_1_8 : ad_vtile_2_8)(pg, n, vc, H, n, ag, last);
      else if (c > 4) { /* one or two heads, 5 to 7 vectors: 4 then the rest */
        ad_tiles[gt - 1][3](pg, n, vc, H, n, ag, 0xFFFF);
        ad_tiles[gt - 1][c - 5](pg, n, vc + 64, H, n, ag + 64, last);
      } else
        ad_tiles[gt - 1][c - 1](pg, n, vc, H, n, ag, last);
    }
  }
}

AD_AVX512 void ox_attn_decode_block_avx512(const ox_attn_dec *d, const float *k, const float *v,
                                           int64_t n, ox_attn_part *st, float *sc) {
  int64_t G = d->G, H = d->H;
  for (int64_t j0 = 0; j0 < n; j0 += 16) {
    int64_t nk = n - j0 < 16 ? n - j0 : 16;
    /* heads in pairs, eight keys at a time; an odd last head alone */
    int64_t g = 0;
    for (; g + 2 <= G; g += 2)
      for (int64_t h0 = 0; h0 < nk; h0 += 8)
        ad_scores2x8(d->q + g * H, d->q + (g + 1) * H, k + (j0 + h0) * H, H, nk - h0, d->scale,
                     sc + g * n + j0 + h0, sc + (g + 1) * n + j0 + h0,
                     g == 0 ? (const char *)(v + (j0 + h0) * H) : NULL);
    if (g < G)
      ad_scores16(d->q + g * H, k + j0 * H, H, nk, d->scale, sc + g * n + j0,
                  g == 0 ? (const char *)(v + j0 * H) : NULL);
  }
  ox_attn_decode_softmax_avx512(d, n, st, sc);
  ad_values(sc, n, v, G, H, st->acc);
}
#endif
