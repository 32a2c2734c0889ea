/* q8.h - float32 <-> 8-bit integer loops of the quantization operators
 * (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearAdd,
 * the lookup-table activations): one dispatch table filled from the CPU
 * probe (base/cpu.h, capped by ONNXC_ISA), its entries per level in
 * q8_avx512.c, q8_avx2.c and q8_ref.c (one body, q8_body.h; AVX-512 adds
 * hand-written loops, and a VBMI byte lookup where the CPU has it). Every
 * level gives the same bytes, but for add_u8: AVX-512 fuses its multiply-
 * adds, so a sum near a half may round the other way (test_isa_levels). */
#ifndef OX_KERNELS_Q8_H
#define OX_KERNELS_Q8_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/cpu.h"

typedef struct ox_q8_kernels {
  ox_isa isa; /* the level these entries were compiled for */
  /* y = saturate(round_half_even(x / scale) + zp) to int8 (to_signed) or
   * uint8, the quotient a float32 division's; NaN gives 0 */
  void (*from_f32)(const float *x, int64_t n, float scale, float zp, bool to_signed, void *y);
  /* y = (x - zp) * scale from int8 (from_signed) or uint8 */
  void (*to_f32)(const void *x, int64_t n, float scale, float zp, bool from_signed, float *y);
  /* the range of x with 0 included (*lo <= 0 <= *hi); NaN skipped */
  void (*range)(const float *x, int64_t n, float *lo, float *hi);
  /* uint8 y = round_half_even(clamp(a ka + b kb + c, lo, hi)), the factors
   * finite and the clamp inside [0, 255] (QLinearAdd's common case) */
  void (*add_u8)(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, float ka, float kb,
                 float c, float lo, float hi);
  /* y[i] = t[x[i]] (t: 256 bytes) */
  void (*lookup)(const uint8_t *t, const uint8_t *x, uint8_t *y, int64_t n);
} ox_q8_kernels;

/* The entries for the probed (capped) level; never NULL. */
const ox_q8_kernels *ox_q8_kernels_get(void);
/* One level's entries (above the CPU's: the CPU's). */
const ox_q8_kernels *ox_q8_kernels_at(ox_isa isa);

/* round half to even of |v| < 2^22 by the float adder (vectorises, unlike
 * a libm call) */
static inline int32_t ox_q8_round_small(float v) {
  return (int32_t)((v + 12582912.0f) - 12582912.0f);
}
static inline float ox_q8_clamp(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

#endif
