/* conv_direct_wasm.c - conv_direct.h's WebAssembly SIMD128 entries: the
 * few-positions rows (STFT front ends such as openWakeWord's mel
 * spectrogram: 257 rows of 512 taps against 5 positions) in f32x4
 * intrinsics. conv_direct.c hands out this table in place of the portable
 * one when the build has -msimd128 and ONNXC_ISA does not cap it
 * (ox_cpu_get()->simd128). The depthwise rows below.
 *
 * Why by hand: the portable few_rows keeps P x 16 partial sums (80 floats
 * for 5 positions, 20 vectors), more than the 16 vector registers the
 * engines compile wasm to on x86, so clang's vectorised loop spills every
 * step. Here the positions go in groups of up to three (12 accumulators,
 * one W vector and one product live), each group re-reading the W row from
 * L1. Each output's 16 lanes are the portable level's partial sums, formed
 * and added in its order (one rounded multiply, one rounded add per step),
 * so this level gives the portable level's bits. */
#include "conv_direct.h"
#include "conv_direct_impl.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

/* y[m, p] for p in [p0, p0 + NP) (NP <= 3, a constant per instantiation so
 * that the 4 * NP accumulators stay in registers) */
static inline __attribute__((always_inline)) void few_group(const ox_few_job *j, int64_t m,
                                                            int64_t p0, int NP) {
  const int64_t K = j->K, K16 = K / 16 * 16;
  const float *wr = j->w + m * K;
  const float *c0 = j->colt + p0 * K, *c1 = NP > 1 ? c0 + K : c0, *c2 = NP > 2 ? c1 + K : c0;
  v128_t a0[4], a1[4], a2[4];
  for (int q = 0; q < 4; q++) a0[q] = a1[q] = a2[q] = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < K16; i += 16)
    for (int q = 0; q < 4; q++) {
      v128_t wv = wasm_v128_load(wr + i + 4 * q);
      a0[q] = wasm_f32x4_add(a0[q], wasm_f32x4_mul(wv, wasm_v128_load(c0 + i + 4 * q)));
      if (NP > 1) a1[q] = wasm_f32x4_add(a1[q], wasm_f32x4_mul(wv, wasm_v128_load(c1 + i + 4 * q)));
      if (NP > 2) a2[q] = wasm_f32x4_add(a2[q], wasm_f32x4_mul(wv, wasm_v128_load(c2 + i + 4 * q)));
    }
  for (int p = 0; p < NP; p++) {
    float lanes[16];
    v128_t *a = p == 0 ? a0 : p == 1 ? a1 : a2;
    for (int q = 0; q < 4; q++) wasm_v128_store(lanes + 4 * q, a[q]);
    float sum = 0.0f; /* the lanes in order, then the tail: the portable sum */
    for (int k = 0; k < 16; k++) sum += lanes[k];
    const float *cr = j->colt + (p0 + p) * K;
    for (int64_t i = K16; i < K; i++) sum += wr[i] * cr[i];
    j->y[m * j->P + p0 + p] = j->bias ? sum + j->bias[m] : sum;
  }
}

static void few_task_wasm(void *arg, int64_t m0, int64_t m1) {
  const ox_few_job *j = arg;
  for (int64_t m = m0; m < m1; m++) {
    int64_t p = 0;
    for (; p + 3 <= j->P; p += 3) few_group(j, m, p, 3);
    if (j->P - p == 2)
      few_group(j, m, p, 2);
    else if (j->P - p == 1)
      few_group(j, m, p, 1);
  }
}

/* ---- depthwise 2-D ----
 * The portable rows do the interior 16 outputs at a time and the rest one
 * by one: the 20 x 20 and 40 x 40 maps of 5 x 5 kernels in mobile backbones
 * (PP-OCRv4's detector) then spend most taps in scalar code, and stride 2
 * gathers do not vectorise. Here the interior goes 8, then 4 outputs at a
 * time, stride 2 through a shuffle of two loads; the edges stay scalar.
 * Every output starts from the bias and takes its valid taps in the
 * portable order, so the bits are the portable level's. */

/* four inputs for outputs ow .. ow + 3 at stride sw from xs (xs[0] the
 * first output's tap); `room`: xs[4 * sw - 1] may be read (stride 2) */
static inline v128_t dw_load4(const float *xs, int64_t sw, bool room) {
  if (sw == 1) return wasm_v128_load(xs);
  if (sw == 2 && room)
    return wasm_i32x4_shuffle(wasm_v128_load(xs), wasm_v128_load(xs + 4), 0, 2, 4, 6);
  return wasm_f32x4_make(xs[0], xs[sw], xs[2 * sw], xs[3 * sw]);
}

/* outputs [ow, ow + 4 * NV) of row oh, all kernel columns inside the input */
static inline __attribute__((always_inline)) void dw_block(const ox_nn_geom *g, const float *xc,
                                                           const float *wm, float b, int64_t oh,
                                                           float *yr, int64_t ow, int NV,
                                                           bool room) {
  int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], KW = g->k[1];
  int64_t sh = g->stride[0], sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
  v128_t a0 = wasm_f32x4_splat(b), a1 = a0;
  for (int64_t kh = 0; kh < KH; kh++) {
    int64_t ih = oh * sh - g->pb[0] + kh * dh;
    if (ih < 0 || ih >= IH) continue;
    const float *xr = xc + ih * IW + ow * sw - g->pb[1];
    for (int64_t kw = 0; kw < KW; kw++) {
      v128_t wv = wasm_f32x4_splat(wm[kh * KW + kw]);
      const float *xs = xr + kw * dw;
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(wv, dw_load4(xs, sw, NV > 1 || room)));
      if (NV > 1) a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(wv, dw_load4(xs + 4 * sw, sw, room)));
    }
  }
  wasm_v128_store(yr + ow, a0);
  if (NV > 1) wasm_v128_store(yr + ow + 4, a1);
}

/* one output taking its valid taps in order from the bias (edges, tails) */
static inline float dw_one(const ox_nn_geom *g, const float *xc, const float *wm, float b,
                           int64_t oh, int64_t ow) {
  int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], KW = g->k[1];
  float acc = b;
  for (int64_t kh = 0; kh < KH; kh++) {
    int64_t ih = oh * g->stride[0] - g->pb[0] + kh * g->dil[0];
    if (ih < 0 || ih >= IH) continue;
    for (int64_t kw = 0; kw < KW; kw++) {
      int64_t iw = ow * g->stride[1] + kw * g->dil[1] - g->pb[1];
      if (iw >= 0 && iw < IW) acc += wm[kh * KW + kw] * xc[ih * IW + iw];
    }
  }
  return acc;
}

static void dw_row_wasm(const ox_nn_geom *g, const float *xc, const float *wm, float b, int64_t oh,
                        float *yr) {
  int64_t OW = g->out[1];
  /* interior [in_lo, in_hi): all kw taps valid */
  int64_t in_lo, in_hi;
  dw_interior(g, &in_lo, &in_hi);
  for (int64_t ow = 0; ow < in_lo; ow++) yr[ow] = dw_one(g, xc, wm, b, oh, ow);
  int64_t ow = in_lo;
  /* (stride 2's shuffle reads one input past the block's last tap: inside
   * the row while another interior output follows) */
  for (; ow + 8 < in_hi; ow += 8) dw_block(g, xc, wm, b, oh, yr, ow, 2, true);
  if (ow + 8 == in_hi) {
    dw_block(g, xc, wm, b, oh, yr, ow, 2, false);
    ow += 8;
  }
  for (; ow + 4 <= in_hi; ow += 4) dw_block(g, xc, wm, b, oh, yr, ow, 1, ow + 4 < in_hi);
  for (; ow < OW; ow++) yr[ow] = dw_one(g, xc, wm, b, oh, ow);
}

static void dw_task_wasm(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OH = g->out[0], OW = g->out[1], KK = g->k[0] * g->k[1];
  for (int64_t t = t0; t < t1; t++) { /* t = n * M + m */
    int64_t m = t % (j->C * j->Mg);
    const float *xc = dw_src(j, t), *wm = j->w + m * KK;
    float *ym = j->y + t * OH * OW;
    float b = j->bias ? j->bias[m] : 0.0f;
    for (int64_t oh = 0; oh < OH; oh++) dw_row_wasm(g, xc, wm, b, oh, ym + oh * OW);
    if (j->epi) { /* over the plane just written */
      ox_sgemm_epi ep = ox_sgemm_epi_at(j->epi, 0, t * OH * OW);
      ox_sgemm_epi_apply(&ep, 1, OH * OW, ym, OH * OW);
    }
  }
}

static void depthwise_wasm(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G,
                           int64_t Mg, const float *x, const float *w, const float *bias,
                           const ox_sgemm_epi *epi, int64_t shuffle, float *y) {
  dw_job dj = {g, x, w, bias, y, G, Mg, shuffle, false, false, false, epi};
  ox_parallel_for(pool, N * G * Mg, 1, dw_task_wasm, &dj);
}

/* the stem convolution: the portable entry, which clang vectorises here */
const ox_conv_direct_kernels ox_conv_direct_kernels_wasm = {OX_ISA_PORTABLE, depthwise_wasm,
                                                            few_task_wasm, ox_conv_stem_ref};
#endif
