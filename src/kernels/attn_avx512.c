/* attn_avx512.c - attention's row pass with AVX-512 (vmath.h's
 * scale_mask_max): compiled with -ffp-contract=off (CMakeLists.txt), so
 * that the scale and the mask round as the Div/Mul and Add nodes the fused
 * attention replaces. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

float ox_attn_scale_mask_max_avx512(float *row, int64_t n, float scale, bool div, const float *m);

/* The scale, the mask (contiguous or none) and the row's largest value in
 * one AVX-512 pass: the same roundings as the loops below, the maximum as
 * oc_row_max_f32 gives it (NaN when any value is NaN). */
__attribute__((target("avx512f"))) float ox_attn_scale_mask_max_avx512(float *row, int64_t n,
                                                                       float scale, bool div,
                                                                       const float *m) {
  const __m512 sc = _mm512_set1_ps(scale);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  __mmask16 nan = 0;
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 k = n - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - c)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(k, row + c);
    v = div ? _mm512_div_ps(v, sc) : _mm512_mul_ps(v, sc);
    v = _mm512_add_ps(v, m ? _mm512_maskz_loadu_ps(k, m + c) : _mm512_setzero_ps());
    _mm512_mask_storeu_ps(row + c, k, v);
    nan |= _mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q);
    mx = _mm512_mask_max_ps(mx, k, mx, v);
  }
  return nan ? NAN : _mm512_reduce_max_ps(mx);
}
#endif
