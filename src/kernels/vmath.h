/* vmath.h - vector math on float32 arrays (exponential, erf, tanh,
 * sigmoid, GELU's erf form, softmax's row sums and attention's scaled,
 * masked row maximum): one dispatch table filled from the CPU probe
 * (base/cpu.h, capped by ONNXC_ISA), its entries per level in
 * vmath_avx512.c, vmath_avx2.c and vmath_ref.c (one body, vmath_body.h,
 * compiled for each; AVX-512 adds hand-written exp and erf). Every level
 * computes the same formulas; the tests hold the lower ones to the
 * tolerance of the formula, the AVX-512 one to its bits. */
#ifndef OX_KERNELS_VMATH_H
#define OX_KERNELS_VMATH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../base/cpu.h"

/* GELU as exported: y = (x * (erf(x / c0) + c1)) * c2 (x * c0 when
 * mul_first), the float operations of the Div (Mul), Erf, Add, Mul, Mul
 * nodes in their order. */
typedef struct ox_gelu_erf {
  float c0, c1, c2;
  bool mul_first;
} ox_gelu_erf;

typedef struct ox_vmath_kernels {
  ox_isa isa; /* the level these entries were compiled for */
  /* y = e^(x - shift), the subtraction rounded first (about 2 ulp, results
   * below 2^-126 flushed to zero); x and y may be the same array */
  void (*exp)(const float *x, float shift, float *y, int64_t n);
  /* the same, returning the sum of y in double: eight partial sums
   * (element i of the first n - n % 8 into sum i % 8, the rest into sum 0)
   * added as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) */
  double (*exp_sum)(const float *x, float shift, float *y, int64_t n);
  /* that sum of x alone */
  double (*row_sum)(const float *x, int64_t n);
  /* the largest of x[0..n) (n >= 1); NaN when one of them is NaN */
  float (*row_max)(const float *x, int64_t n);
  /* erf (absolute error below 3e-7) and tanh (within 3 ulp) */
  void (*erf)(const float *x, float *y, int64_t n);
  void (*tanh)(const float *x, float *y, int64_t n);
  /* y = sigmoid(scale x), times x when times_x (Swish) */
  void (*sigmoid)(const float *x, float *y, int64_t n, float scale, bool times_x);
  void (*gelu_erf)(const float *x, float *y, int64_t n, const ox_gelu_erf *g);
  /* attention's row pass: row = row / scale (div) or row * scale, + m
   * (contiguous, or NULL), rounded as the Div/Mul and Add it replaces;
   * returns the row's maximum as row_max. NULL below AVX-512 (the caller
   * runs the three passes). */
  float (*scale_mask_max)(float *row, int64_t n, float scale, bool div, const float *m);
  /* Softmax (log-softmax when log_form) of a contiguous row: its maximum,
   * then exp_sum (log: of the shifted row a block at a time) */
  void (*softmax_row)(const float *x, float *y, int64_t n, bool log_form);
  /* the sum of (x - m)^2 in double, in row_sum's order */
  double (*row_sq_sum)(const float *x, int64_t n, double m);
  /* y = (x - m) * inv * scale + bias (scale, bias: NULL for none; bias
   * only with scale): a normalisation's row */
  void (*norm_row)(const float *x, float *y, int64_t n, float m, float inv, const float *scale,
                   const float *bias);
  /* y = a + b */
  void (*add)(const float *a, const float *b, float *y, int64_t n);
  /* the sum (of squares when sq) of x in double into *acc (one) or acc[k] */
  void (*sum_into)(const float *x, int64_t n, bool sq, bool one, double *acc);
  /* y += bias (one value, bias_one, or one per element; NULL: none), then
   * y = max(y, 0) when relu, as the Add and Relu kernels compute them */
  void (*bias_relu)(float *y, int64_t n, const float *bias, bool bias_one, bool relu);
} ox_vmath_kernels;

/* The entries for the probed (capped) level; never NULL. */
const ox_vmath_kernels *ox_vmath_kernels_get(void);
/* The entries of one level (a lower one than the CPU's is always
 * available; a higher one falls back to the highest the CPU has). */
const ox_vmath_kernels *ox_vmath_kernels_at(ox_isa isa);

/* c ? a : b by bit masks: GCC does not if-convert a ?: whose arms may trap
 * (-ftrapping-math), and a branch stops vectorisation. */
static inline float ox_sel_f32(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)c, ua, ub;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  float r;
  memcpy(&r, &ua, sizeof r);
  return r;
}

#endif
