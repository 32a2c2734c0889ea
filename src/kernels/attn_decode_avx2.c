/* attn_decode_avx2.c - the AVX2 block pass of grouped-query attention's
 * decode step (attn_decode.h; attn_decode.c picks it at the AVX2 level).
 *
 * The plan of the AVX-512 pass (attn_decode_avx512.c) in sixteen 256-bit
 * registers: scores one head x eight keys, eight registers of partial sums
 * reduced to one register of eight scores by horizontal adds (7 per eight
 * keys instead of a scalar tree per key, which held the plain pass to
 * about half of memory bandwidth); values acc[G x H] += P V as register
 * tiles of up to four heads x two vectors, each value slice loaded once
 * per tile. The AVX2 level has fused multiply-adds (base/cpu.c asks for
 * both), so this pass uses them. The softmax step between the passes is
 * attn_decode.c's. */
#define OX_LEVEL 1
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>

#include "attn_decode_impl.h"

#define AV_AVX2 __attribute__((target("avx2,fma")))
#define AV_INLINE __attribute__((always_inline)) static inline
#define AV_UNROLL _Pragma("GCC unroll 8")

/* a lane mask (for maskload / maskstore) of the first `left` of 8 lanes */
AV_AVX2 AV_INLINE __m256i av_mask(int64_t left) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(left >= 8 ? 8 : (int)left), idx);
}

/* sc[j] = scale * q . k[j] for the nk <= 8 keys of one tile (a short
 * tile's missing keys repeat its last, unstored); with pf, the tile's
 * value rows (pf on) prefetched a few lines per step, as in
 * attn_decode_avx512.c */
AV_AVX2 AV_INLINE void av_scores8(const float *q, const float *k, int64_t H, int64_t nk,
                                  float scale, float *sc, const char *pf) {
  const float *kr[8];
  for (int j = 0; j < 8; j++) kr[j] = k + (j < nk ? j : nk - 1) * H;
  __m256 a[8];
  for (int j = 0; j < 8; j++) a[j] = _mm256_setzero_ps();
  int64_t h = 0;
  for (; h + 8 <= H; h += 8) {
    if (pf) { /* eight rows' 32 bytes: four lines a step */
      for (int t = 0; t < 4; t++) _mm_prefetch(pf + 64 * t, _MM_HINT_T0);
      pf += 256;
    }
    __m256 qv = _mm256_loadu_ps(q + h);
    for (int j = 0; j < 8; j++) a[j] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kr[j] + h), a[j]);
  }
  if (h < H) { /* head sizes that are no multiple of 8 */
    __m256i m = av_mask(H - h);
    __m256 qv = _mm256_maskload_ps(q + h, m);
    for (int j = 0; j < 8; j++) a[j] = _mm256_fmadd_ps(qv, _mm256_maskload_ps(kr[j] + h, m), a[j]);
  }
  /* within each 128-bit half: sums of keys 0-3 and 4-7; then the halves */
  __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
  __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
  __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  __m256 r =
      _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
  _mm256_maskstore_ps(sc, av_mask(nk), _mm256_mul_ps(r, _mm256_set1_ps(scale)));
}

/* acc[g][0 .. 8 C) += sum_j p[g * ldp + j] v[j][0 .. 8 C) for GT heads, the
 * last vector's lanes limited by `last` unless `full` (masked loads are
 * slower than plain ones on some cores); arrays sized exactly per shape so
 * that they stay in registers (see attn_decode_avx512.c) */
#define AV_TILE(GT, C)                                                                             \
  AV_AVX2 static void av_vtile_##GT##_##C(const float *p, int64_t ldp, const float *v, int64_t H,  \
                                          int64_t n, float *acc, __m256i last, bool full) {        \
    __m256 a[GT][C], x[C];                                                                         \
    AV_UNROLL for (int g = 0; g < GT; g++) AV_UNROLL for (int c = 0; c < C; c++) a[g][c] =         \
        c < C - 1 || full ? _mm256_loadu_ps(acc + g * H + 8 * c)                                   \
                          : _mm256_maskload_ps(acc + g * H + 8 * c, last);                         \
    for (int64_t j = 0; j < n; j++) {                                                              \
      const float *vj = v + j * H;                                                                 \
      AV_UNROLL for (int c = 0; c < C; c++) x[c] =                                                 \
          c < C - 1 || full ? _mm256_loadu_ps(vj + 8 * c) : _mm256_maskload_ps(vj + 8 * c, last);  \
      AV_UNROLL for (int g = 0; g < GT; g++) {                                                     \
        __m256 w = _mm256_broadcast_ss(p + g * ldp + j);                                           \
        AV_UNROLL for (int c = 0; c < C; c++) a[g][c] = _mm256_fmadd_ps(w, x[c], a[g][c]);         \
      }                                                                                            \
    }                                                                                              \
    AV_UNROLL for (int g = 0; g < GT; g++) AV_UNROLL for (int c = 0; c < C; c++)                   \
        _mm256_maskstore_ps(acc + g * H + 8 * c, c < C - 1 || full ? _mm256_set1_epi32(-1) : last, \
                            a[g][c]);                                                              \
  }
AV_TILE(1, 1)
AV_TILE(1, 2)
AV_TILE(2, 1)
AV_TILE(2, 2)
AV_TILE(3, 1)
AV_TILE(3, 2)
AV_TILE(4, 1)
AV_TILE(4, 2)

typedef void (*av_vtile_fn)(const float *, int64_t, const float *, int64_t, int64_t, float *,
                            __m256i, bool);

/* acc[G x H] += P[G x n] V[n x H]: four heads x two vectors at a time */
AV_AVX2 static void av_values(const float *p, int64_t n, const float *v, int64_t G, int64_t H,
                              float *acc) {
  static const av_vtile_fn tiles[4][2] = {{av_vtile_1_1, av_vtile_1_2},
                                          {av_vtile_2_1, av_vtile_2_2},
                                          {av_vtile_3_1, av_vtile_3_2},
                                          {av_vtile_4_1, av_vtile_4_2}};
  int64_t nv = (H + 7) / 8;
  for (int64_t g0 = 0; g0 < G; g0 += 4) {
    int gt = G - g0 < 4 ? (int)(G - g0) : 4;
    for (int64_t c0 = 0; c0 < nv; c0 += 2) {
      int c = nv - c0 < 2 ? 1 : 2;
      __m256i last = av_mask(H - 8 * (c0 + c - 1));
      tiles[gt - 1][c - 1](p + g0 * n, n, v + 8 * c0, H, n, acc + g0 * H + 8 * c0, last,
                           H % 8 == 0);
    }
  }
}

AV_AVX2 void ox_attn_decode_block_avx2(const ox_attn_dec *d, const float *k, const float *v,
                                       int64_t n, ox_attn_part *st, float *sc) {
  int64_t G = d->G, H = d->H;
  for (int64_t j0 = 0; j0 < n; j0 += 8) {
    int64_t nk = n - j0 < 8 ? n - j0 : 8;
    for (int64_t g = 0; g < G; g++)
      av_scores8(d->q + g * H, k + j0 * H, H, nk, d->scale, sc + g * n + j0,
                 g == 0 ? (const char *)(v + j0 * H) : NULL);
  }
  ox_attn_decode_softmax_avx2(d, n, st, sc);
  av_values(sc, n, v, G, H, st->acc);
}
#endif
