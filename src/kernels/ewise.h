/* ewise.h - float32 element-wise rows (the binary arithmetic, Max/Min, and
 * the one-operand ops of an element-wise chain: Clip, Relu, LeakyRelu,
 * HardSigmoid, HardSwish, Neg, Abs, Sqrt, x^2, x^3), each the same float
 * expression as the unfused operator's loop, so results are bit-identical.
 *
 * Only a WebAssembly SIMD128 build has entries here (ewise_wasm.c): there
 * the portable loops are vectorised by clang only when the output does not
 * overlap an input, and a chain computes in place (an operation writes over
 * the operand it reads), so the plain loops ran one lane at a time. Native
 * levels get NULL: their compilers vectorise the plain loops in place too
 * (GCC checks overlap by distance), and the callers keep those. */
#ifndef OX_KERNELS_EWISE_H
#define OX_KERNELS_EWISE_H

#include <stdint.h>

typedef enum ox_ew_bin {
  OX_EW_ADD, /* a + b */
  OX_EW_SUB, /* a - b */
  OX_EW_MUL, /* a * b */
  OX_EW_DIV, /* a / b */
  OX_EW_MAX, /* the larger; NaN when either is NaN (a's NaN first) */
  OX_EW_MIN  /* the smaller; likewise */
} ox_ew_bin;

typedef enum ox_ew_un {
  OX_EW_CLIP,     /* v = x < p0 ? p0 : x; v > p1 ? p1 : v */
  OX_EW_RELU,     /* x > 0 ? x : 0 */
  OX_EW_LEAKY,    /* x * p0 where x's sign bit is set, else x */
  OX_EW_HSIGMOID, /* v = p0 x + p1, then clamped to [0, 1] (1 first) */
  OX_EW_HSWISH,   /* x * clamp(x / 6 + 0.5) as HardSigmoid's clamp */
  OX_EW_NEG,
  OX_EW_ABS,
  OX_EW_SQRT,
  OX_EW_POW2, /* x * x */
  OX_EW_POW3  /* x * x * x */
} ox_ew_un;

typedef struct ox_ew_kernels {
  /* y[i] = a[i] op b[i]; a NULL reads the scalar sa, b NULL sb (not both).
   * y may be a or b (in place). */
  void (*bin)(ox_ew_bin op, const float *a, const float *b, float sa, float sb, float *y,
              int64_t n);
  /* y[i] = op(x[i]) with the parameters p0, p1 above; y may be x */
  void (*un)(ox_ew_un op, const float *x, float *y, int64_t n, float p0, float p1);
} ox_ew_kernels;

/* The hand-written entries of the level in use, or NULL where the plain
 * loops are the ones to run (every native level; ONNXC_ISA=portable). */
const ox_ew_kernels *ox_ew_kernels_get(void);

#endif
