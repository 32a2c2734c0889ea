/* vmath_avx512.c - vmath.h's AVX-512 level: hand-written exponential,
 * erf and GELU's erf form, then the portable body (vmath_body.h) compiled
 * for AVX-512F.
 *
 * They compute the formulas of the portable loops (the same Cody-Waite
 * reduction, polynomials and limits), written with intrinsics so that each
 * lane takes about half the instructions the compiler's vectorisation of
 * those loops gave: the power of two is applied by vscalefps (one
 * rounding, as the two exact-then-rounding products it replaces: the first
 * of those is exact), and the limits are min/max and masked moves instead
 * of integer selects. The sum of a row of exponentials (softmax) is taken
 * in the same pass, in double, in the order of the portable row sum. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "vexp.h"
#include "vmath.h"

#define VM_AVX512 __attribute__((target("avx512f")))

VM_AVX512 static inline __mmask16 vm_tail(int64_t left) {
  return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* y = e^(x - shift); with sum, the eight-lane double sum of the results in
 * the portable order: lane q gathers elements q, q + 8, ... of the first
 * n - n % 8, the rest go to lane 0 one by one */
VM_AVX512 static double vm_exp_run(const float *x, float shift, float *y, int64_t n, bool sum) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512d s = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 e = ox_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), sh));
    _mm512_storeu_ps(y + i, e);
    if (sum) {
      s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
      s = _mm512_add_pd(
          s, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
  }
  if (i < n) {
    __mmask16 m = vm_tail(n - i);
    __m512 e = ox_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), sh));
    _mm512_mask_storeu_ps(y + i, m, e);
  }
  if (!sum) return 0;
  if (n - i >= 8) {
    s = _mm512_add_pd(s, _mm512_cvtps_pd(_mm256_loadu_ps(y + i)));
    i += 8;
  }
  double lanes[8];
  _mm512_storeu_pd(lanes, s);
  for (; i < n; i++) lanes[0] += y[i];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/* erf by opcore.c's formulas: the odd Taylor polynomial below |x| = 0.5,
 * Abramowitz & Stegun 7.1.26 with e^{-x^2} above, the sign of x put back */
VM_AVX512 static inline __m512 vm_erf16(__m512 v) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000u));
  __m512 a =
      _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(sign), _mm512_castps_si512(v)));
  __m512 v2 = _mm512_mul_ps(v, v);
  __m512 sm = _mm512_set1_ps(-1.0f / 1320.0f);
  sm = _mm512_fmadd_ps(sm, v2, _mm512_set1_ps(1.0f / 216.0f));
  sm = _mm512_fmadd_ps(sm, v2, _mm512_set1_ps(-1.0f / 42.0f));
  sm = _mm512_fmadd_ps(sm, v2, _mm512_set1_ps(1.0f / 10.0f));
  sm = _mm512_fmadd_ps(sm, v2, _mm512_set1_ps(-1.0f / 3.0f));
  sm = _mm512_fmadd_ps(sm, v2, _mm512_set1_ps(1.0f));
  sm = _mm512_mul_ps(_mm512_mul_ps(sm, v), _mm512_set1_ps(1.12837916709551257f));
  /* e^{-x^2}, the argument kept in [-87, 0] (NaN lanes: -87, replaced) */
  __m512 z = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_min_ps(v2, _mm512_set1_ps(87.0f))), fk;
  __m512 ep = ox_exp_reduced16(z, &fk);
  __m512 ex = _mm512_scalef_ps(ep, fk);
  /* a division: Zen 4's divider runs beside the FMA pipes this loop keeps
   * busy (a 14-bit reciprocal and a Newton step measured slower there) */
  __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f),
                           _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), a, _mm512_set1_ps(1.0f)));
  __m512 q = _mm512_set1_ps(1.061405429f);
  q = _mm512_fmsub_ps(q, t, _mm512_set1_ps(1.453152027f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.421413741f));
  q = _mm512_fmsub_ps(q, t, _mm512_set1_ps(0.284496736f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.254829592f));
  __m512 big = _mm512_fnmadd_ps(_mm512_mul_ps(q, t), ex, _mm512_set1_ps(1.0f));
  /* big >= 0: the sign of v is or-ed in (copysign, -0 included) */
  big = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(big),
                      _mm512_and_si512(_mm512_castps_si512(v), _mm512_castps_si512(sign))));
  __m512 res = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.5f), _CMP_LT_OQ), sm);
  return _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

VM_AVX512 static void vm_erf_run(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, vm_erf16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = vm_tail(n - i);
    _mm512_mask_storeu_ps(y + i, m, vm_erf16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

/* GELU's erf form as the exporters write it, in registers: the same five
 * float operations as the unfused nodes */
VM_AVX512 static inline __m512 vm_gelu16(__m512 v, const ox_gelu_erf *g) {
  __m512 c0 = _mm512_set1_ps(g->c0);
  __m512 t = g->mul_first ? _mm512_mul_ps(v, c0) : _mm512_div_ps(v, c0);
  __m512 u = _mm512_add_ps(vm_erf16(t), _mm512_set1_ps(g->c1));
  return _mm512_mul_ps(_mm512_mul_ps(v, u), _mm512_set1_ps(g->c2));
}

VM_AVX512 static void vm_gelu_run(const float *x, float *y, int64_t n, const ox_gelu_erf *g) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, vm_gelu16(_mm512_loadu_ps(x + i), g));
  if (i < n) {
    __mmask16 m = vm_tail(n - i);
    _mm512_mask_storeu_ps(y + i, m, vm_gelu16(_mm512_maskz_loadu_ps(m, x + i), g));
  }
}

#include "vmath_body.h"
#endif
