/* half_values.h - what the tests of the 16-bit float paths share: random
 * float16 / bfloat16 values and their exact values and spacing, decoded by
 * the formats' definitions (not by the library's conversions). */
#ifndef ONNXC_TEST_HALF_VALUES_H
#define ONNXC_TEST_HALF_VALUES_H

#include <math.h>
#include <stdint.h>

#include "../../src/kernels/gemm_h.h"

static uint32_t rng = 20240611u;
static inline uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

/* A random 16-bit value: zero one time in 64, else a normal number of
 * magnitude in [2^-4, 4) (no subnormals: vdpbf16ps reads them as zero). */
static inline uint16_t rand_half(ox_hg_type t) {
  uint32_t r = next_u32();
  uint32_t sign = (r >> 31) << 15, e = (r >> 8) % 6u, man = r >> 12;
  if ((r & 63u) == 0) return (uint16_t)sign;
  if (t == OX_HG_F16) return (uint16_t)(sign | (e + 15u - 4u) << 10 | (man & 0x3FFu));
  return (uint16_t)(sign | (e + 127u - 4u) << 7 | (man & 0x7Fu));
}

/* the value of 16-bit bits by the formats' definitions */
static inline double half_value(ox_hg_type t, uint16_t h) {
  int neg = h >> 15;
  int eb = t == OX_HG_F16 ? 5 : 8, mb = t == OX_HG_F16 ? 10 : 7, bias = (1 << (eb - 1)) - 1;
  int e = (h >> mb) & ((1 << eb) - 1);
  int man = h & ((1 << mb) - 1);
  double v;
  if (e == (1 << eb) - 1)
    v = man ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp(man, 1 - bias - mb);
  else
    v = ldexp((1 << mb) + man, e - bias - mb);
  return neg ? -v : v;
}

/* the spacing of type t's values around x */
static inline double ulp_at(ox_hg_type t, double x) {
  int mb = t == OX_HG_F16 ? 10 : t == OX_HG_BF16 ? 7 : 23;
  int emin = t == OX_HG_F16 ? -14 : -126;
  int e = x == 0 ? emin : ilogb(x);
  if (e < emin) e = emin;
  return ldexp(1.0, e - mb);
}

#endif
