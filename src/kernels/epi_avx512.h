/* epi_avx512.h - the GEMM epilogue's activation and bound on 16 floats with
 * AVX-512, shared by the GEMM's tile stores (gemm.c) and the Winograd
 * convolution's output transform (winograd.c), so that both compute the
 * same float operations as ox_sgemm_epi_apply. Include after immintrin.h
 * on x86 with GCC or Clang only. */
#ifndef OX_KERNELS_EPI_AVX512_H
#define OX_KERNELS_EPI_AVX512_H

#include <immintrin.h>

#include "gemm.h"
#include "vexp.h"

/* The epilogue's activation on 16 values (the same float operations as
 * ox_sgemm_epi_apply: max/min as the comparisons x > y ? x : y). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_act16(
    const ox_sgemm_epi *ep, __m512 v) {
  __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  switch (ep->act) {
    case OX_ACT_RELU:
      return _mm512_max_ps(v, zero); /* v > 0 ? v : 0 */
    case OX_ACT_LEAKY:
      return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v,
                                _mm512_set1_ps(ep->alpha));
    case OX_ACT_CLIP: /* v < lo ? lo : v, then v > hi ? hi : v */
      return _mm512_min_ps(_mm512_set1_ps(ep->beta), _mm512_max_ps(_mm512_set1_ps(ep->alpha), v));
    case OX_ACT_HSIGMOID: { /* alpha * v + beta contracted, as the HardSigmoid kernel's
                               AVX-512 clone computes it */
      __m512 t = _mm512_fmadd_ps(_mm512_set1_ps(ep->alpha), v, _mm512_set1_ps(ep->beta));
      return _mm512_max_ps(zero, _mm512_min_ps(one, t));
    }
    case OX_ACT_HSWISH: {
      __m512 t = _mm512_add_ps(_mm512_div_ps(v, _mm512_set1_ps(6.0f)), _mm512_set1_ps(0.5f));
      return _mm512_mul_ps(v, _mm512_max_ps(zero, _mm512_min_ps(one, t)));
    }
    case OX_ACT_SILU:
      return ox_silu16(v);
    default:
      return v;
  }
}

/* Max(v, bval) / Min(v, bval) as the Max / Min kernels: the comparison,
 * then a NaN v kept (bval is not NaN: src/opt/conv_epilogue.c checks). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 ox_bound16(
    const ox_sgemm_epi *ep, __m512 v) {
  if (!ep->bound) return v;
  __m512 c = _mm512_set1_ps(ep->bval);
  __m512 r = ep->bound == 1 ? _mm512_max_ps(v, c) : _mm512_min_ps(v, c); /* v > c ? v : c */
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}

#endif
