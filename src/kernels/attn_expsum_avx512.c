/* attn_expsum_avx512.c - attention's softmax exponentials and their sum with
 * AVX-512 (attn_expsum.h). vexp.h's exponential (the same reduction and
 * polynomial as every other exp here) without its upper limit, which a
 * shift by the row's maximum never reaches; the sum in double in four
 * accumulators so that the additions of one 32-value step do not wait on
 * each other. */
#define OX_LEVEL 2
#include "levels.h"

#include "attn_expsum.h"
#include "vmath.h"

#if OX_LEVELS_X86
#include <immintrin.h>
#include <math.h>

#include "vexp.h"

#define AE_AVX512 __attribute__((target("avx512f")))

/* e^v for v <= 0 or NaN: below OX_EXP_LO 0, NaN kept */
AE_AVX512 static inline __m512 ae_exp16(__m512 v) {
  const __m512 lo = _mm512_set1_ps(OX_EXP_LO);
  /* a NaN lane becomes lo (max returns its second operand), put back last */
  __m512 fk, p = ox_exp_reduced16(_mm512_max_ps(v, lo), &fk);
  __m512 res = _mm512_scalef_ps(p, fk);
  res = _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), _mm512_setzero_ps());
  return _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

/* 16 floats into two double accumulators */
AE_AVX512 static inline void ae_acc(__m512 e, __m512d *lo, __m512d *hi) {
  *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
  *hi = _mm512_add_pd(
      *hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
}

AE_AVX512 static double ae_exp_sum(float *row, int64_t n, float shift) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 e0 = ae_exp16(_mm512_sub_ps(_mm512_loadu_ps(row + i), sh));
    __m512 e1 = ae_exp16(_mm512_sub_ps(_mm512_loadu_ps(row + i + 16), sh));
    _mm512_storeu_ps(row + i, e0);
    _mm512_storeu_ps(row + i + 16, e1);
    ae_acc(e0, &s0, &s1);
    ae_acc(e1, &s2, &s3);
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
    /* lanes past n: e^-inf = 0, nothing added */
    __m512 v = _mm512_mask_sub_ps(_mm512_set1_ps(-INFINITY), k, _mm512_maskz_loadu_ps(k, row + i),
                                  sh);
    __m512 e = ae_exp16(v);
    _mm512_mask_storeu_ps(row + i, k, e);
    ae_acc(e, &s0, &s1);
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}
#endif

ox_attn_exp_sum_fn ox_attn_exp_sum_get(void) {
#if OX_LEVELS_X86
  if (ox_vmath_kernels_get()->isa == OX_ISA_AVX512) return ae_exp_sum;
#endif
  return NULL;
}
