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
#include <stdlib.h>
#include <string.h>
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

/* ---- depthwise 2-D over a padded plane ----
 * The rows above leave the edge outputs scalar (a 5 x 5 kernel on a 40-wide
 * map: 4 of 40 outputs, each 25 branchy scalar taps, about as long as the
 * vector interior) and gather stride 2 by a shuffle of two loads per tap.
 * Here a task first copies the channel's plane with zeros left and right,
 * a stride-2 plane split into its even and odd columns, so that every tap
 * of every output is a plain vector load: the whole row goes 8 outputs at
 * a time (the last block's lanes past the row dropped). A block reaching
 * past the input takes each tap only in the lanes where the portable rows
 * take it (a select keeps the sum elsewhere), so the bits stay the
 * portable level's. */
enum { DW_MAXTAPS = 64 }; /* kernels of up to 8 x 8: the weights as vectors */

/* the plane's layout: rows of pw floats (stride 2: the even columns then
 * the odd ones, pw / 2 each), the input's column iw at iw + pl */
typedef struct dw_pad {
  int64_t pw, pl;
} dw_pad;

static bool dw_pad_fits(const ox_nn_geom *g) {
  return g->k[0] * g->k[1] <= DW_MAXTAPS && (g->stride[1] == 1 || g->stride[1] == 2) &&
         g->pb[1] >= 0 && g->pe[1] >= 0;
}

static dw_pad dw_pad_layout(const ox_nn_geom *g) {
  int64_t OW8 = (g->out[1] + 7) / 8 * 8, reach = (g->k[1] - 1) * g->dil[1];
  dw_pad d = {0, g->pb[1]};
  /* the last block's lanes read up to column (OW8 - 1) * sw + reach */
  int64_t need = (OW8 - 1) * g->stride[1] + reach + 1, data = d.pl + g->in[1];
  d.pw = need > data ? need : data;
  d.pw = (d.pw + 7) / 8 * 8 + 8; /* whole vectors, and a stride-2 row's halves even */
  return d;
}

/* channel plane xc (IH x IW) into buf with the zero columns (buf: IH + 1
 * rows, the last one a stride-2 row's staging) */
static void dw_pad_plane(const ox_nn_geom *g, dw_pad d, const float *xc, float *buf) {
  int64_t IH = g->in[0], IW = g->in[1], pw = d.pw, half = pw / 2;
  float *row = buf + IH * pw;
  for (int64_t ih = 0; ih < IH; ih++) {
    float *dst = buf + ih * pw;
    float *r = g->stride[1] == 1 ? dst : row;
    memset(r, 0, (size_t)d.pl * sizeof(float));
    memcpy(r + d.pl, xc + ih * IW, (size_t)IW * sizeof(float));
    memset(r + d.pl + IW, 0, (size_t)(pw - d.pl - IW) * sizeof(float));
    if (g->stride[1] == 2) /* even columns to dst[0, half), odd ones after */
      for (int64_t i = 0; i < half; i += 4) {
        v128_t a = wasm_v128_load(row + 2 * i), b = wasm_v128_load(row + 2 * i + 4);
        wasm_v128_store(dst + i, wasm_i32x4_shuffle(a, b, 0, 2, 4, 6));
        wasm_v128_store(dst + half + i, wasm_i32x4_shuffle(a, b, 1, 3, 5, 7));
      }
  }
}

/* the four inputs of tap offset o (padded columns from the block's first
 * output's) for outputs ow .. ow + 3 of padded row r */
static inline __attribute__((always_inline)) v128_t dw_pad_load(const float *r, int64_t half,
                                                                int64_t sw, int64_t ow, int64_t o) {
  if (sw == 1) return wasm_v128_load(r + ow + o);
  return wasm_v128_load(r + (o & 1) * half + ow + (o >> 1));
}

/* outputs [ow, ow + 8) of row oh into dst; masked: the block reaches past
 * the input on the left or right (lanes keep their sum where the portable
 * rows skip the tap). KW: the kernel width when a constant, else 0. */
static inline __attribute__((always_inline)) void dw_pad_block(
    const ox_nn_geom *g, dw_pad d, const float *buf, const v128_t *wv, float b, int64_t oh,
    int64_t ow, bool masked, int KW, float *dst) {
  const int64_t IH = g->in[0], IW = g->in[1], KH = g->k[0], kw_n = KW ? KW : g->k[1];
  const int64_t sh = g->stride[0], sw = g->stride[1], dh = g->dil[0], dwl = g->dil[1];
  const int64_t pw = d.pw, half = pw / 2;
  v128_t a0 = wasm_f32x4_splat(b), a1 = a0;
  for (int64_t kh = 0; kh < KH; kh++) {
    int64_t ih = oh * sh - g->pb[0] + kh * dh;
    if (ih < 0 || ih >= IH) continue;
    const float *r = buf + ih * pw;
    for (int64_t kw = 0; kw < kw_n; kw++) {
      int64_t o = kw * dwl; /* padded column of lane 0 = ow * sw + o */
      v128_t w = wv[kh * kw_n + kw];
      v128_t p0 = wasm_f32x4_mul(w, dw_pad_load(r, half, sw, ow, o));
      v128_t p1 = wasm_f32x4_mul(w, dw_pad_load(r, half, sw, ow + 4, o));
      if (!masked) {
        a0 = wasm_f32x4_add(a0, p0);
        a1 = wasm_f32x4_add(a1, p1);
      } else {
        /* input column of each lane: (ow + lane) * sw - pl + o */
        v128_t c0 = wasm_i32x4_add(wasm_i32x4_splat((int32_t)(ow * sw - d.pl + o)),
                                   wasm_i32x4_mul(wasm_i32x4_make(0, 1, 2, 3),
                                                  wasm_i32x4_splat((int32_t)sw)));
        v128_t c1 = wasm_i32x4_add(c0, wasm_i32x4_splat((int32_t)(4 * sw)));
        v128_t lim = wasm_i32x4_splat((int32_t)IW), zero = wasm_i32x4_splat(0);
        v128_t m0 = wasm_v128_and(wasm_i32x4_ge(c0, zero), wasm_i32x4_lt(c0, lim));
        v128_t m1 = wasm_v128_and(wasm_i32x4_ge(c1, zero), wasm_i32x4_lt(c1, lim));
        a0 = wasm_v128_bitselect(wasm_f32x4_add(a0, p0), a0, m0);
        a1 = wasm_v128_bitselect(wasm_f32x4_add(a1, p1), a1, m1);
      }
    }
  }
  wasm_v128_store(dst, a0);
  wasm_v128_store(dst + 4, a1);
}

/* one output plane from the padded input plane */
static inline __attribute__((always_inline)) void dw_pad_out(const ox_nn_geom *g, dw_pad d,
                                                              const float *buf, const v128_t *wv,
                                                              float b, float *ym, int KW) {
  int64_t OH = g->out[0], OW = g->out[1], in_lo, in_hi;
  dw_interior(g, &in_lo, &in_hi);
  float tail[8];
  for (int64_t oh = 0; oh < OH; oh++) {
    float *yr = ym + oh * OW;
    for (int64_t ow = 0; ow < OW; ow += 8) {
      bool masked = ow < in_lo || ow + 8 > in_hi, whole = ow + 8 <= OW;
      float *dst = whole ? yr + ow : tail;
      if (masked)
        dw_pad_block(g, d, buf, wv, b, oh, ow, true, KW, dst);
      else
        dw_pad_block(g, d, buf, wv, b, oh, ow, false, KW, dst);
      if (!whole) memcpy(yr + ow, tail, (size_t)(OW - ow) * sizeof(float));
    }
  }
}

static void dw_task_wasm(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OH = g->out[0], OW = g->out[1], KK = g->k[0] * g->k[1];
  bool pad = dw_pad_fits(g);
  dw_pad d = pad ? dw_pad_layout(g) : (dw_pad){0, 0};
  float *buf = pad ? malloc((size_t)((g->in[0] + 1) * d.pw) * sizeof(float)) : NULL;
  for (int64_t t = t0; t < t1; t++) { /* t = n * M + m */
    int64_t m = t % (j->C * j->Mg);
    const float *xc = dw_src(j, t), *wm = j->w + m * KK;
    float *ym = j->y + t * OH * OW;
    float b = j->bias ? j->bias[m] : 0.0f;
    if (buf) {
      v128_t wv[DW_MAXTAPS];
      for (int64_t k = 0; k < KK; k++) wv[k] = wasm_f32x4_splat(wm[k]);
      dw_pad_plane(g, d, xc, buf);
      if (g->k[1] == 3) /* the usual widths with the tap loop unrolled */
        dw_pad_out(g, d, buf, wv, b, ym, 3);
      else if (g->k[1] == 5)
        dw_pad_out(g, d, buf, wv, b, ym, 5);
      else
        dw_pad_out(g, d, buf, wv, b, ym, 0);
    } else { /* other strides, or no memory for the plane */
      for (int64_t oh = 0; oh < OH; oh++) dw_row_wasm(g, xc, wm, b, oh, ym + oh * OW);
    }
    if (j->epi) { /* over the plane just written */
      ox_sgemm_epi ep = ox_sgemm_epi_at(j->epi, 0, t * OH * OW);
      ox_sgemm_epi_apply(&ep, 1, OH * OW, ym, OH * OW);
    }
  }
  free(buf);
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
