/* vmath_wasm.c - vmath.h's entries for the WebAssembly SIMD128 build:
 * vmath.c hands out this table when ox_cpu_get()->simd128 (the -msimd128
 * build, unless ONNXC_ISA=portable).
 *
 * Why: the portable loops (vmath_body.h, here compiled as the _ref level)
 * are vectorised by clang behind a run-time check that the output does not
 * overlap the input, and x == y fails it: every in-place call (GELU's erf
 * of its own block, softmax's exponentials over the row they read, an
 * in-place normalisation) ran one lane at a time. And the row maximum has
 * SSE2 code only, a serial loop with a NaN test per element elsewhere.
 * So the in-place calls here go through the portable entries a block at a
 * time from a copy of the input (x != y: the vector path), the maximum is
 * SIMD128, and everything else is the portable entry itself: the bits are
 * the portable level's (the maximum's are SSE2's: m > v ? m : v per lane,
 * the signs of equal zeros as there). */
#include "vmath.h"

#ifdef __wasm_simd128__
#include <math.h>
#include <string.h>
#include <wasm_simd128.h>

extern const ox_vmath_kernels ox_vmath_kernels_ref;
#define REF (&ox_vmath_kernels_ref)
#define VM_BLK 256 /* floats per copied block: 1 KiB on the stack */

/* CALL over x[0..n) a block at a time, from a copy t of x's block b..b+c
 * (x == y: the entry then reads t and writes y, which do not overlap) */
#define VM_BLOCKS(CALL)                            \
  do {                                             \
    float t[VM_BLK];                               \
    for (int64_t b = 0; b < n; b += VM_BLK) {      \
      int64_t c = n - b < VM_BLK ? n - b : VM_BLK; \
      memcpy(t, x + b, (size_t)c * sizeof *t);     \
      CALL;                                        \
    }                                              \
  } while (0)

/* The largest of x (n >= 1), NaN when any is: four vectors of maxima and a
 * vector of NaN flags, as vmath.c's SSE2 loop. */
static float vw_row_max(const float *x, int64_t n) {
  float r = x[0];
  int64_t k = 0;
  bool nan = false;
  if (n >= 16) {
    v128_t m[4], bad = wasm_i32x4_splat(0);
    for (int q = 0; q < 4; q++) m[q] = wasm_v128_load(x + 4 * q);
    for (; k + 16 <= n; k += 16)
      for (int q = 0; q < 4; q++) {
        v128_t v = wasm_v128_load(x + k + 4 * q);
        bad = wasm_v128_or(bad, wasm_f32x4_ne(v, v));
        m[q] = wasm_v128_bitselect(m[q], v, wasm_f32x4_gt(m[q], v)); /* _mm_max_ps */
      }
    v128_t a = wasm_v128_bitselect(m[0], m[1], wasm_f32x4_gt(m[0], m[1]));
    v128_t b = wasm_v128_bitselect(m[2], m[3], wasm_f32x4_gt(m[2], m[3]));
    float t[4];
    wasm_v128_store(t, wasm_v128_bitselect(a, b, wasm_f32x4_gt(a, b)));
    r = t[0];
    for (int q = 1; q < 4; q++) r = t[q] > r ? t[q] : r;
    nan = wasm_v128_any_true(bad);
  }
  for (; k < n; k++) {
    if (isnan(x[k])) nan = true;
    r = x[k] > r ? x[k] : r;
  }
  return nan ? NAN : r;
}

static void vw_exp(const float *x, float shift, float *y, int64_t n) {
  if (x != y) {
    REF->exp(x, shift, y, n);
    return;
  }
  VM_BLOCKS(REF->exp(t, shift, y + b, c));
}

/* the portable exp_sum is exp then row_sum over y: the same two steps */
static double vw_exp_sum(const float *x, float shift, float *y, int64_t n) {
  vw_exp(x, shift, y, n);
  return REF->row_sum(y, n);
}

static void vw_erf(const float *x, float *y, int64_t n) {
  if (x != y) {
    REF->erf(x, y, n);
    return;
  }
  VM_BLOCKS(REF->erf(t, y + b, c));
}

static void vw_tanh(const float *x, float *y, int64_t n) {
  if (x != y) {
    REF->tanh(x, y, n);
    return;
  }
  VM_BLOCKS(REF->tanh(t, y + b, c));
}

static void vw_sigmoid(const float *x, float *y, int64_t n, float scale, bool times_x) {
  if (x != y) {
    REF->sigmoid(x, y, n, scale, times_x);
    return;
  }
  VM_BLOCKS(REF->sigmoid(t, y + b, c, scale, times_x));
}

/* GELU's erf form as vmath_body.h's vm_gelu_run (the same operations in
 * the same order), its erf into a second block instead of over its own */
static void vw_gelu_erf(const float *x, float *y, int64_t n, const ox_gelu_erf *g) {
  float xs[VM_BLK], t[VM_BLK], e[VM_BLK];
  const float c0 = g->c0, c1 = g->c1, c2 = g->c2;
  for (int64_t b = 0; b < n; b += VM_BLK) {
    int64_t c = n - b < VM_BLK ? n - b : VM_BLK;
    memcpy(xs, x + b, (size_t)c * sizeof *xs); /* y may be x */
    if (g->mul_first)
      for (int64_t i = 0; i < c; i++) t[i] = xs[i] * c0;
    else
      for (int64_t i = 0; i < c; i++) t[i] = xs[i] / c0;
    REF->erf(t, e, c);
    float *yb = y + b;
    for (int64_t i = 0; i < c; i++) yb[i] = (xs[i] * (e[i] + c1)) * c2;
  }
}

/* vmath_body.h's softmax_row: the maximum, exp_sum, one scale */
static void vw_softmax_row(const float *x, float *y, int64_t n, bool log_form) {
  if (log_form) {
    REF->softmax_row(x, y, n, true);
    return;
  }
  float m = vw_row_max(x, n);
  float inv = (float)(1.0 / vw_exp_sum(x, m, y, n));
  for (int64_t k = 0; k < n; k++) y[k] *= inv;
}

static void vw_norm_row(const float *x, float *y, int64_t n, float m, float inv, const float *scale,
                        const float *bias) {
  if (x != y) {
    REF->norm_row(x, y, n, m, inv, scale, bias);
    return;
  }
  VM_BLOCKS(REF->norm_row(t, y + b, c, m, inv, scale ? scale + b : NULL, bias ? bias + b : NULL));
}

static void vw_add(const float *a, const float *b, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n; i++) y[i] = a[i] + b[i];
}

/* the entries taken as they are (the table is a constant: it names them) */
static double vw_row_sum(const float *x, int64_t n) { return REF->row_sum(x, n); }
static double vw_row_sq_sum(const float *x, int64_t n, double m) {
  return REF->row_sq_sum(x, n, m);
}
static void vw_sum_into(const float *x, int64_t n, bool sq, bool one, double *acc) {
  REF->sum_into(x, n, sq, one, acc);
}
static void vw_bias_relu(float *y, int64_t n, const float *bias, bool bias_one, bool relu) {
  REF->bias_relu(y, n, bias, bias_one, relu);
}

const ox_vmath_kernels ox_vmath_kernels_wasm = {
    .isa = OX_ISA_PORTABLE,
    .exp = vw_exp,
    .exp_sum = vw_exp_sum,
    .row_sum = vw_row_sum,
    .row_max = vw_row_max,
    .erf = vw_erf,
    .tanh = vw_tanh,
    .sigmoid = vw_sigmoid,
    .gelu_erf = vw_gelu_erf,
    .scale_mask_max = NULL, /* as the portable level: the caller's three passes */
    .softmax_row = vw_softmax_row,
    .row_sq_sum = vw_row_sq_sum,
    .norm_row = vw_norm_row,
    .add = vw_add,
    .sum_into = vw_sum_into,
    .bias_relu = vw_bias_relu,
};
#endif
