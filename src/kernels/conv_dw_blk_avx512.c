/* conv_dw_blk_avx512.c - 2-D depthwise float convolution of small maps (at most
 * 16 x 16 outputs for 3 x 3 stride 1, 32 x 32 otherwise: the later stages
 * of MobileNet and EfficientNet) with the channels in the vector lanes.
 *
 * A plane-at-a-time kernel gives a 7 x 7 map seven useful lanes a row (or
 * 49 of 77 in a flat run), and its activation runs on the empty lanes too.
 * Here sixteen channels go through together: their input planes are
 * transposed (16 x 16 blocks in registers) into a zero-bordered plane of
 * 16-channel vectors, every output position is one vector whose taps are
 * aligned loads times the tap's 16 weights, and the outputs are transposed
 * back. Each output takes its taps in order from the bias, as the other
 * paths, with the FusedConv activation in registers. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <string.h>

#include "conv_direct_impl.h"
#include "epi_avx512.h"

enum {
  DWB_MAX_OUT = 1024,    /* output positions */
  DWB_MAX_OUT_3S1 = 256, /* of 3 x 3 stride-1 layers */
  DWB_MAX_PAD = 1296     /* bordered positions */
};

/* r[i][j] <-> r[j][i] for 16 rows of 16 floats */
__attribute__((target("avx512f"), always_inline)) static inline void tr16(__m512 *r) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_f32x4(u[i], u[4 + i], 0x88);
    t[4 + i] = _mm512_shuffle_f32x4(u[i], u[4 + i], 0xDD);
    t[8 + i] = _mm512_shuffle_f32x4(u[8 + i], u[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(u[8 + i], u[12 + i], 0xDD);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD);
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xDD);
  }
}

static inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

typedef struct dwb_job {
  const ox_nn_geom *g;
  const float *x, *w, *bias;
  const ox_sgemm_epi *ep; /* no residual; NULL: none */
  float *y;
  int64_t C, nblk, PH, PW;
  uint8_t *done; /* per task (image, block of 16 channels): computed */
} dwb_job;

/* nb outputs from flat position o0 (row-major over OH x OW) of a K x K
 * kernel, stride S, from the bordered plane p (PW positions a row) */
__attribute__((target("avx512f"), always_inline)) static inline void dwb_outs(
    const float *p, int64_t PW, int64_t OW, const int S, const int K, int64_t o0, const int nb,
    const float *wt, __m512 bv, const ox_sgemm_epi *ep, float *o) {
  __m512 acc[4];
  const float *base[4];
  for (int i = 0; i < nb; i++) {
    int64_t oy = (o0 + i) / OW, ox = (o0 + i) % OW;
    base[i] = p + (oy * S * PW + ox * S) * 16;
    acc[i] = bv;
  }
  for (int ky = 0; ky < K; ky++)
    for (int kx = 0; kx < K; kx++) {
      __m512 wv = _mm512_load_ps(wt + (ky * K + kx) * 16);
      for (int i = 0; i < nb; i++)
        acc[i] = _mm512_fmadd_ps(wv, _mm512_load_ps(base[i] + (ky * PW + kx) * 16), acc[i]);
    }
  for (int i = 0; i < nb; i++)
    _mm512_store_ps(o + (o0 + i) * 16, ep ? ox_bound16(ep, ox_act16(ep, acc[i])) : acc[i]);
}

__attribute__((target("avx512f"), always_inline)) static inline void dwb_compute(
    const float *p, int64_t PW, int64_t OH, int64_t OW, const int S, const int K, const float *wt,
    __m512 bv, const ox_sgemm_epi *ep, float *o) {
  int64_t n = OH * OW, i = 0;
  for (; i + 4 <= n; i += 4) dwb_outs(p, PW, OW, S, K, i, 4, wt, bv, ep, o);
  for (; i < n; i++) dwb_outs(p, PW, OW, S, K, i, 1, wt, bv, ep, o);
}

__attribute__((target("avx512f"))) static void dwb_task(void *arg, int64_t t0, int64_t t1) {
  dwb_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], K = g->k[0];
  int64_t S = g->stride[0], pt = g->pb[0], pl = g->pb[1], PW = j->PW, npad = j->PH * j->PW;
  int64_t in_n = IH * IW, out_n = OH * OW;
  /* the bordered plane, the outputs, the weights by tap: 64-byte aligned */
  float *p = ox_scratch(0, (size_t)((npad + out_n + K * K + 1) * 16) * sizeof(float));
  if (!p) return; /* the caller computes the blocks left undone */
  float *o = p + npad * 16, *wt = o + out_n * 16, *bt = wt + K * K * 16;
  /* the borders stay zero: every block writes the same positions */
  memset(p, 0, (size_t)(npad * 16) * sizeof(float));
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / j->nblk, c0 = t % j->nblk * 16, nc = j->C - c0 < 16 ? j->C - c0 : 16;
    const float *xb = j->x + (n * j->C + c0) * in_n;
    for (int64_t pos = 0; pos < in_n; pos += 16) { /* input positions, 16 at a time */
      __m512 r[16];
      __mmask16 m = lanes(in_n - pos);
      for (int ch = 0; ch < 16; ch++)
        r[ch] = ch < nc ? _mm512_maskz_loadu_ps(m, xb + ch * in_n + pos) : _mm512_setzero_ps();
      tr16(r);
      for (int q = 0; q < 16 && pos + q < in_n; q++) {
        int64_t pr = (pos + q) / IW + pt, pc = (pos + q) % IW + pl;
        if (pr < j->PH && pc < PW) _mm512_store_ps(p + (pr * PW + pc) * 16, r[q]);
      }
    }
    for (int64_t k = 0; k < K * K; k++)
      for (int ch = 0; ch < 16; ch++) wt[k * 16 + ch] = ch < nc ? j->w[(c0 + ch) * K * K + k] : 0;
    for (int ch = 0; ch < 16; ch++) bt[ch] = ch < nc && j->bias ? j->bias[c0 + ch] : 0;
    __m512 bv = _mm512_load_ps(bt);
    if (K == 3 && S == 1)
      dwb_compute(p, PW, OH, OW, 1, 3, wt, bv, j->ep, o);
    else if (K == 3)
      dwb_compute(p, PW, OH, OW, 2, 3, wt, bv, j->ep, o);
    else if (S == 1)
      dwb_compute(p, PW, OH, OW, 1, 5, wt, bv, j->ep, o);
    else
      dwb_compute(p, PW, OH, OW, 2, 5, wt, bv, j->ep, o);
    float *yb = j->y + (n * j->C + c0) * out_n;
    for (int64_t pos = 0; pos < out_n; pos += 16) { /* back to planes */
      __m512 r[16];
      for (int q = 0; q < 16; q++)
        r[q] = pos + q < out_n ? _mm512_load_ps(o + (pos + q) * 16) : _mm512_setzero_ps();
      tr16(r);
      __mmask16 m = lanes(out_n - pos);
      for (int ch = 0; ch < nc; ch++) _mm512_mask_storeu_ps(yb + ch * out_n + pos, m, r[ch]);
    }
    j->done[t] = 1;
  }
}

int64_t ox_dw_blocks_avx512(const ox_nn_geom *g, int64_t C) {
  int64_t K = g->k[0], S = g->stride[0];
  if (g->nd != 2 || (K != 3 && K != 5) || g->k[1] != K || g->dil[0] != 1 || g->dil[1] != 1 ||
      (S != 1 && S != 2) || g->stride[1] != S || C < 16)
    return 0;
  int64_t OH = g->out[0], OW = g->out[1];
  int64_t PH = (OH - 1) * S + K, PW = (OW - 1) * S + K;
  /* (3 x 3 stride 1 past 16 x 16 outputs: the bordered-plane rows of
   * conv_dw.c were faster, 192 x 28^2 0.069 against 0.079 ms) */
  int64_t max_out = K == 3 && S == 1 ? DWB_MAX_OUT_3S1 : DWB_MAX_OUT;
  if (OH < 1 || OW < 1 || OH * OW > max_out || PH * PW > DWB_MAX_PAD || g->pb[0] >= PH ||
      g->pb[1] >= PW)
    return 0;
  return (C + 15) / 16;
}

void ox_dw_blocked_avx512(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C,
                          const float *x, const float *w, const float *bias,
                          const ox_sgemm_epi *epi, float *y, uint8_t *done) {
  int64_t S = g->stride[0], K = g->k[0];
  dwb_job j = {g,
               x,
               w,
               bias,
               epi && (epi->act != OX_ACT_NONE || epi->bound) ? epi : NULL,
               y,
               C,
               (C + 15) / 16,
               (g->out[0] - 1) * S + K,
               (g->out[1] - 1) * S + K,
               done};
  ox_parallel_for(pool, N * j.nblk, 1, dwb_task, &j);
}
#endif
