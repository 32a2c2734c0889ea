/* q8_body.h - q8.h's portable loops, compiled once per level (included by
 * q8_avx512.c, q8_avx2.c and q8_ref.c, levels.h's per-file form); the AVX-512 file
 * defines its hand-written loops and add_u8 first. */
#include <stdint.h>

#include "levels.h" /* OX_LEVEL_FN, OX_LEVEL_NAME for the including level */
#include "q8.h"
#include "vmath.h" /* ox_sel_f32 */

/* float32 -> 8 bits with a float32 scale:
 * y = saturate(round_half_even(x / scale) + zp) with a float32 division
 * (the generic path's double division rounded to float is the same
 * number: a quotient of floats rounds once either way). The quotient is
 * clamped to +-1024 first (the result saturates there anyway) so that the
 * 1.5 * 2^23 trick rounds it to nearest even; NaN gives 0 (a zero scale). */
OX_LEVEL_FN static void q8_from_f32_any(const float *x, int64_t n, float scale, float zp,
                                        bool to_signed, void *y) {
  float lo = to_signed ? -128.0f : 0.0f, hi = to_signed ? 127.0f : 255.0f;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i] / scale;
    v = ox_sel_f32(v < -1024.0f, -1024.0f, v);
    v = ox_sel_f32(v > 1024.0f, 1024.0f, v);
    float r = ((v + 12582912.0f) - 12582912.0f) + zp;
    r = ox_sel_f32(r < lo, lo, r);
    r = ox_sel_f32(r > hi, hi, r);
    r = ox_sel_f32(r != r, 0.0f, r);
    if (to_signed)
      ((int8_t *)y)[i] = (int8_t)(int32_t)r;
    else
      ((uint8_t *)y)[i] = (uint8_t)(int32_t)r;
  }
}

#if OX_LEVEL == 2
int64_t ox_q8_from_f32_avx512(const float *x, int64_t n, float scale, float zp, bool to_signed,
                              void *y);
void ox_q8_range_avx512(const float *x, int64_t n, float *lo, float *hi);
void ox_q8_lookup_vbmi(const uint8_t *t, const uint8_t *x, uint8_t *y, int64_t n);
#endif

/* x / scale rounded half to even, plus the zero point, saturated to 8 bits;
 * NaN -> 0 (AVX-512: 16 at a time, the rest by the loop) */
static void from_f32(const float *x, int64_t n, float scale, float zp, bool to_signed, void *y) {
  int64_t done = 0;
#if OX_LEVEL == 2
  done = ox_q8_from_f32_avx512(x, n, scale, zp, to_signed, y);
#endif
  q8_from_f32_any(x + done, n - done, scale, zp, to_signed, (uint8_t *)y + done);
}

/* y = (x - zp) * scale: x - zp is exact in float and the product of two
 * floats rounds once, as in the generic path */
OX_LEVEL_FN static void q8_to_f32(const void *x, int64_t n, float scale, float zp, bool from_signed,
                                  float *y) {
  if (from_signed)
    for (int64_t i = 0; i < n; i++) y[i] = ((float)((const int8_t *)x)[i] - zp) * scale;
  else
    for (int64_t i = 0; i < n; i++) y[i] = ((float)((const uint8_t *)x)[i] - zp) * scale;
}

#if OX_LEVEL < 2
/* the range of x with 0 included; NaN is skipped (no comparison holds).
 * Sixteen running minima and maxima so that the loop vectorises (x < m ?
 * x : m is exactly minps). */
OX_LEVEL_FN static void dynq_range(const float *x, int64_t n, float *lo, float *hi) {
  float mn[16] = {0}, mx[16] = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; j++) {
      float v = x[i + j];
      mn[j] = v < mn[j] ? v : mn[j];
      mx[j] = v > mx[j] ? v : mx[j];
    }
  for (; i < n; i++) {
    mn[0] = x[i] < mn[0] ? x[i] : mn[0];
    mx[0] = x[i] > mx[0] ? x[i] : mx[0];
  }
  for (int j = 1; j < 16; j++) {
    mn[0] = mn[j] < mn[0] ? mn[j] : mn[0];
    mx[0] = mx[j] > mx[0] ? mx[j] : mx[0];
  }
  *lo = mn[0];
  *hi = mx[0];
}
#define OX_Q8_RANGE dynq_range
#else
#define OX_Q8_RANGE ox_q8_range_avx512
#endif

/* uint8 + uint8 -> uint8, both contiguous: the common case, vectorised
 * (no AVX-512 copy: that level's add_u8 takes this AVX2 one for its tail) */
#if OX_LEVEL < 2
#if OX_LEVEL == 1
void ox_q8_add_u8_plain_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, float ka,
                             float kb, float c, float lo, float hi);
#define add_u8 ox_q8_add_u8_plain_avx2
#else
static
#endif
OX_LEVEL_FN void add_u8(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, float ka,
                        float kb, float c, float lo, float hi) {
  for (int64_t i = 0; i < n; i++) {
    float v = ox_q8_clamp((float)a[i] * ka + (float)b[i] * kb + c, lo, hi);
    y[i] = (uint8_t)ox_q8_round_small(v);
  }
}
#endif

static void lookup(const uint8_t *t, const uint8_t *x, uint8_t *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = t[x[i]];
}

const ox_q8_kernels OX_LEVEL_NAME(ox_q8_kernels) = {(ox_isa)OX_LEVEL, from_f32, q8_to_f32,
                                                    OX_Q8_RANGE,      add_u8,   lookup};
