/* vmath_body.h - the portable loops of vmath.h, compiled once per level
 * (included by vmath_avx512.c, vmath_avx2.c, vmath_ref.c: levels.h's
 * per-file form). Written so that the compiler vectorises them whole; the
 * AVX-512 file defines vm_exp_run and vm_erf_run / vm_gelu_run (hand-
 * written, the same formulas) before including this, and the table takes
 * those instead of exp_block and erf_block there. */
#include <math.h>
#include <string.h>

#include "levels.h" /* OX_LEVEL_FN, OX_LEVEL_NAME for the including level */
#include "vexp.h"
#include "vmath.h"

/* the same at every level: vmath.c (SSE2 is x86-64's baseline) */
float ox_vmath_row_max(const float *x, int64_t n);
/* attn_avx512.c (compiled without contraction, as the nodes round) */
float ox_attn_scale_mask_max_avx512(float *row, int64_t n, float scale, bool div, const float *m);

#if OX_LEVEL != 2 /* (AVX-512 has its own exp and erf) */
/* e^x by vexp.h's ox_exp1, one loop the compiler vectorises */
OX_LEVEL_FN static void exp_block(const float *x, float shift, float *y, int64_t n) {
  /* x - shift is exact for shift 0 (-0 - 0 = +0: e^0 either way) */
  for (int64_t i = 0; i < n; i++) y[i] = ox_exp1(x[i] - shift);
}

#endif

/* eight partial sums: one vector of doubles per step */
OX_LEVEL_FN static double row_sum(const float *x, int64_t n) {
  double s[8] = {0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int q = 0; q < 8; q++) s[q] += x[k + q];
  for (; k < n; k++) s[0] += x[k];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#if OX_LEVEL != 2
/* erf over a block: e^{-x^2} by the same range reduction as exp_block with
 * the power of two built from its bits, then both forms computed without
 * branches and the right one picked. Near 0 the Taylor series keeps the
 * relative error small (A&S 7.1.26 alone has an absolute bound only). */
OX_LEVEL_FN static void erf_block(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i], a = fabsf(v), v2 = v * v;
    /* 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320) */
    float small = -1.0f / 1320.0f;
    small = small * v2 + 1.0f / 216.0f;
    small = small * v2 - 1.0f / 42.0f;
    small = small * v2 + 1.0f / 10.0f;
    small = small * v2 - 1.0f / 3.0f;
    small = small * v2 + 1.0f;
    small = small * v * 1.12837916709551257f;
    /* e^{-x^2}, the argument kept in [-87, 0] (the result stays normal;
     * past |x| = 4 erf rounds to 1 anyway) */
    float z = ox_sel_f32(v2 < 87.0f, -v2, -87.0f);
    z = ox_sel_f32(z != z, 0.0f, z); /* NaN: the result is replaced below */
    float fk, p = ox_exp_reduced(z, &fk);
    uint32_t bits = (uint32_t)((int32_t)fk + 127) << 23;
    float two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    float ex = p * two_k;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float q = 1.061405429f;
    q = q * t - 1.453152027f;
    q = q * t + 1.421413741f;
    q = q * t - 0.284496736f;
    q = q * t + 0.254829592f;
    float big = 1.0f - q * t * ex;
    big = copysignf(big, v);
    float res = ox_sel_f32(a < 0.5f, small, big);
    y[i] = ox_sel_f32(v != v, v, res);
  }
}

#endif

/* tanh over a block, vectorised like erf_block: for |x| >= 0.5,
 * (1 - e^{-2|x|}) / (1 + e^{-2|x|}) with the sign put back (no cancellation
 * there: e^{-2|x|} <= 0.37); below, the Taylor series to x^15 (the next term
 * is under 3e-8 of the result at 0.5); within 3 ulp of tanh in double
 * over [-12, 12]. Past |x| = 9 the result rounds to +-1; the argument of e
 * is kept there so it never underflows. */
OX_LEVEL_FN static void tanh_block(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i], a = fabsf(v), v2 = v * v;
    float small = -929569.0f / 638512875.0f;
    small = small * v2 + 21844.0f / 6081075.0f;
    small = small * v2 - 1382.0f / 155925.0f;
    small = small * v2 + 62.0f / 2835.0f;
    small = small * v2 - 17.0f / 315.0f;
    small = small * v2 + 2.0f / 15.0f;
    small = small * v2 - 1.0f / 3.0f;
    small = small * v2 * v + v;
    float z = ox_sel_f32(a < 9.0f, -2.0f * a, -18.0f);
    z = ox_sel_f32(z != z, 0.0f, z); /* NaN: the result is replaced below */
    float fk, p = ox_exp_reduced(z, &fk);
    uint32_t bits = (uint32_t)((int32_t)fk + 127) << 23;
    float two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    float ex = p * two_k;
    float big = copysignf((1.0f - ex) / (1.0f + ex), v);
    /* tanh is odd: the sign of v, also for -0 */
    float res = copysignf(ox_sel_f32(a < 0.5f, small, big), v);
    y[i] = ox_sel_f32(v != v, v, res);
  }
}

#if OX_LEVEL == 2
static void vm_exp(const float *x, float shift, float *y, int64_t n) {
  vm_exp_run(x, shift, y, n, false);
}
static double vm_exp_sum(const float *x, float shift, float *y, int64_t n) {
  return vm_exp_run(x, shift, y, n, true);
}
#define vm_erf vm_erf_run
#else
#define vm_exp exp_block
static double vm_exp_sum(const float *x, float shift, float *y, int64_t n) {
  exp_block(x, shift, y, n);
  return row_sum(y, n);
}
#define vm_erf erf_block
#endif

/* sigmoid (Swish: x times it) over at most 512 values, built on the
 * vectorisable exponential */
OX_LEVEL_FN static void sig_block(const float *x, float *y, int64_t n, float scale, bool times_x) {
  float z[512] = {0}, e[512];
  for (int64_t k = 0; k < n; k++) { /* z = -|scale*x| (bit operations: vectorisable) */
    float v = scale * x[k];
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u |= 0x80000000u;
    memcpy(&z[k], &u, sizeof u);
  }
  vm_exp(z, 0.0f, e, n);
  for (int64_t k = 0; k < n; k++) { /* x >= 0: 1/(1+e), else e/(1+e) */
    float v = scale * x[k];
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    float neg = (float)(u >> 31);
    float sg = (1.0f + (e[k] - 1.0f) * neg) / (1.0f + e[k]);
    y[k] = times_x ? x[k] * sg : sg;
  }
}

static void vm_sigmoid(const float *x, float *y, int64_t n, float scale, bool times_x) {
  for (int64_t b = 0; b < n; b += 512)
    sig_block(x + b, y + b, n - b < 512 ? n - b : 512, scale, times_x);
}

#if OX_LEVEL != 2
/* the portable loops, a block at a time so the intermediate stays in L1 */
static void vm_gelu_run(const float *x, float *y, int64_t n, const ox_gelu_erf *g) {
  float t[256];
  for (int64_t b = 0; b < n; b += 256) {
    int64_t c = n - b < 256 ? n - b : 256;
    for (int64_t i = 0; i < c; i++) t[i] = g->mul_first ? x[b + i] * g->c0 : x[b + i] / g->c0;
    vm_erf(t, t, c);
    for (int64_t i = 0; i < c; i++) y[b + i] = (x[b + i] * (t[i] + g->c1)) * g->c2;
  }
}
#define OX_VM_SCALE_MASK_MAX NULL
#else
#define OX_VM_SCALE_MASK_MAX ox_attn_scale_mask_max_avx512
#endif

/* ---- rows of the normalisation, softmax, reduction and MatMul-epilogue
 * operators (their loops, moved here so that the level is chosen by the
 * probe; the operators call them through the table) ---- */

/* a contiguous float32 row: softmax, or log-softmax (log) */
OX_LEVEL_FN static void softmax_row(const float *x, float *y, int64_t n, bool log_form) {
  float m = ox_vmath_row_max(x, n);
  if (!log_form) {
    float inv = (float)(1.0 / vm_exp_sum(x, m, y, n));
    for (int64_t k = 0; k < n; k++) y[k] *= inv;
  } else {
    for (int64_t k = 0; k < n; k++) y[k] = x[k] - m;
    float e[256];
    double sum = 0;
    for (int64_t b = 0; b < n; b += 256) {
      int64_t c = n - b < 256 ? n - b : 256;
      sum += vm_exp_sum(y + b, 0.0f, e, c);
    }
    float lse = (float)log(sum);
    for (int64_t k = 0; k < n; k++) y[k] -= lse;
  }
}

/* Sums of a row (oc_row_sum_f32) and of its squares about m, in double,
 * with eight independent partial sums so that they vectorise (one chain of
 * double additions was the cost of a whole normalisation). */
OX_LEVEL_FN static double row_sq_d(const float *x, int64_t n, double m) {
  double s[8] = {0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int q = 0; q < 8; q++) {
      double d = x[k + q] - m;
      s[q] += d * d;
    }
  for (; k < n; k++) s[0] += (x[k] - m) * (x[k] - m);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

OX_LEVEL_FN static void row_apply(const float *x, float *y, int64_t n, float m, float inv,
                                  const float *scale, const float *bias) {
  if (scale && bias)
    for (int64_t k = 0; k < n; k++) y[k] = (x[k] - m) * inv * scale[k] + bias[k];
  else if (scale)
    for (int64_t k = 0; k < n; k++) y[k] = (x[k] - m) * inv * scale[k];
  else
    for (int64_t k = 0; k < n; k++) y[k] = (x[k] - m) * inv;
}

/* y = a + b, the Add kernel's float addition */
OX_LEVEL_FN static void add_row(const float *a, const float *b, float *y, int64_t n) {
  for (int64_t k = 0; k < n; k++) y[k] = a[k] + b[k];
}

/* sums (of squares when sq) of n float32 values into *acc (one) or acc[k] */
OX_LEVEL_FN static void sum_f32(const float *xf, int64_t n, bool sq, bool one, double *acc) {
  if (one) {
    double s = 0;
    if (sq)
      for (int64_t k = 0; k < n; k++) s += (double)xf[k] * xf[k];
    else
      for (int64_t k = 0; k < n; k++) s += xf[k];
    *acc += s;
  } else if (sq)
    for (int64_t k = 0; k < n; k++) acc[k] += (double)xf[k] * xf[k];
  else
    for (int64_t k = 0; k < n; k++) acc[k] += xf[k];
}

/* the bias Add and the Relu of one row's columns, as their kernels compute them */
OX_LEVEL_FN static void bias_relu(float *y, int64_t n, const float *bias, bool bias_one,
                                  bool relu) {
  if (bias && bias_one) {
    float b = bias[0];
    for (int64_t k = 0; k < n; k++) y[k] = y[k] + b;
  } else if (bias) {
    for (int64_t k = 0; k < n; k++) y[k] = y[k] + bias[k];
  }
  if (relu)
    for (int64_t k = 0; k < n; k++) y[k] = y[k] > 0.0f ? y[k] : 0.0f;
}

const ox_vmath_kernels OX_LEVEL_NAME(ox_vmath_kernels) = {
    (ox_isa)OX_LEVEL, vm_exp,     vm_exp_sum, row_sum,     ox_vmath_row_max,
    vm_erf,           tanh_block, vm_sigmoid, vm_gelu_run, OX_VM_SCALE_MASK_MAX,
    softmax_row,      row_sq_d,   row_apply,  add_row,     sum_f32,
    bias_relu,
};
