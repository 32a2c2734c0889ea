/* vexp.h - the float32 exponential of the runtime, one definition for the
 * operators (src/ops/opcore.c's loops, src/ops/vmath.c's AVX-512 bodies)
 * and for the kernels' epilogues (SiLU after a convolution, epi_avx512.h
 * and gemm.c), so that a fused activation gives the bits of the operator
 * it replaces.
 *
 * e^x: Cody-Waite range reduction x = k ln2 + r (|r| <= ln2/2), the
 * degree-7 Taylor polynomial of e^r (truncation error below 6e-9
 * relative), and 2^k applied in two exact-then-rounding halves (scalar) or
 * by vscalefps (one rounding: the same value). Results below 2^-126 flush
 * to 0, above 88.72 give inf, NaN propagates. */
#ifndef OX_KERNELS_VEXP_H
#define OX_KERNELS_VEXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define OX_EXP_LO (-87.33f)
#define OX_EXP_HI 88.72f
#define OX_EXP_LOG2E 1.44269504088896341f
#define OX_EXP_LN2_HI 0.693359375f
#define OX_EXP_LN2_LO (-2.12194440e-4f)
#define OX_EXP_ROUND 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */

/* a ? b : c as a select the compiler vectorises */
static inline float ox_exp_sel(int a, float b, float c) { return a ? b : c; }

/* e^r for |r| <= ln2/2 (degree 7) and the reduction c = k ln2 + r around
 * it: returns e^r, sets *k. c must be finite and in [OX_EXP_LO, OX_EXP_HI].
 * The nearest integer comes from the 1.5 * 2^23 trick (floorf is a call on
 * baseline x86-64). */
static inline float ox_exp_reduced(float c, float *k) {
  float fk = (c * OX_EXP_LOG2E + OX_EXP_ROUND) - OX_EXP_ROUND;
  float r = (c - fk * OX_EXP_LN2_HI) - fk * OX_EXP_LN2_LO;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  *k = fk;
  return p;
}

/* e^v: every lane computes the polynomial, the limits applied by selects */
static inline float ox_exp1(float v) {
  float c = ox_exp_sel(v > OX_EXP_HI, OX_EXP_HI, v);
  c = ox_exp_sel(c < OX_EXP_LO, OX_EXP_LO, c);
  c = ox_exp_sel(c != c, 0.0f, c); /* NaN: the result is replaced below */
  float fk, p = ox_exp_reduced(c, &fk);
  int32_t k = (int32_t)fk, k1 = k / 2, k2 = k - k1;
  uint32_t b1 = (uint32_t)(k1 + 127) << 23, b2 = (uint32_t)(k2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  float res = p * s1 * s2;
  res = ox_exp_sel(v > OX_EXP_HI, INFINITY, res);
  res = ox_exp_sel(v < OX_EXP_LO, 0.0f, res);
  return ox_exp_sel(v != v, v, res);
}

/* x sigmoid(x) as the Sigmoid and Mul kernels compute it (opcore.c's
 * sig_block): e = e^-|x|, sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e)
 * below (as (1 + (e - 1) neg) / (1 + e): the product is exact, so a fused
 * multiply-add gives the same), then x times it */
static inline float ox_silu1(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint32_t un = u | 0x80000000u;
  float z;
  memcpy(&z, &un, sizeof z);
  float e = ox_exp1(z), neg = (float)(u >> 31);
  return x * ((1.0f + (e - 1.0f) * neg) / (1.0f + e));
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* ox_exp_reduced on 16 lanes */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_exp_reduced16(
    __m512 c, __m512 *fk) {
  const __m512 rnd = _mm512_set1_ps(OX_EXP_ROUND);
  __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(c, _mm512_set1_ps(OX_EXP_LOG2E), rnd), rnd);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(OX_EXP_LN2_HI), c);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(OX_EXP_LN2_LO), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  *fk = k;
  return p;
}

/* ox_exp1 on 16 lanes: the limits by min/max and masked moves */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_exp16(__m512 v) {
  const __m512 hi = _mm512_set1_ps(OX_EXP_HI), lo = _mm512_set1_ps(OX_EXP_LO);
  /* a NaN lane becomes hi here (min returns its second operand) and is
   * replaced at the end */
  __m512 c = _mm512_max_ps(_mm512_min_ps(v, hi), lo), fk;
  __m512 p = ox_exp_reduced16(c, &fk);
  __m512 res = _mm512_scalef_ps(p, fk);
  res = _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), _mm512_set1_ps(INFINITY));
  res = _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), _mm512_setzero_ps());
  return _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

/* ox_silu1 on 16 lanes. e^z for z = -|x| <= 0 needs only ox_exp16's lower
 * limit: the same values; a NaN x (z NaN: max gives the limit) still comes
 * out as x's NaN from the last product, as the unfused nodes give it. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_silu16(__m512 x) {
  const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
  const __m512 lo = _mm512_set1_ps(OX_EXP_LO);
  __m512i u = _mm512_castps_si512(x);
  __m512 z = _mm512_castsi512_ps(_mm512_or_si512(u, sign)), fk;
  __m512 p = ox_exp_reduced16(_mm512_max_ps(z, lo), &fk);
  __m512 e = _mm512_scalef_ps(p, fk);
  e = _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(z, lo, _CMP_LT_OQ), _mm512_setzero_ps());
  const __m512 one = _mm512_set1_ps(1.0f);
  /* neg = 1 where the sign bit is set: (e - 1) neg + 1 is e there, 1 elsewhere */
  __mmask16 neg = _mm512_test_epi32_mask(u, sign);
  __m512 num = _mm512_mask_mov_ps(one, neg, _mm512_add_ps(_mm512_sub_ps(e, one), one));
  return _mm512_mul_ps(x, _mm512_div_ps(num, _mm512_add_ps(one, e)));
}
#endif

#endif
