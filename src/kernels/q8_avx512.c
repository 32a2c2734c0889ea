/* q8_avx512.c - q8.h's AVX-512 level: hand-written quantization, range
 * and QLinearAdd loops and the VBMI byte lookup, then the portable body
 * (q8_body.h) compiled for AVX-512F. */
#define OX_LEVEL 2
#include "levels.h"
#if OX_LEVELS_X86
#include <immintrin.h>
#include <math.h>

#include "q8.h"

void ox_q8_add_u8_plain_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, float ka,
                             float kb, float c, float lo, float hi);

/* The same steps in 512-bit registers (the compiler's clone stayed at 256
 * bits to narrow to bytes, and spilled): the selects as masked blends, so
 * that NaN takes the same way as above, and vpmovdb to narrow. */
__attribute__((target("avx512f"))) int64_t ox_q8_from_f32_avx512(const float *x, int64_t n,
                                                                 float scale, float zp,
                                                                 bool to_signed, void *y) {
  const __m512 vs = _mm512_set1_ps(scale);
  const __m512i vzi = _mm512_set1_epi32((int32_t)zp); /* an 8-bit zero point: integral */
  const __m512i loi = _mm512_set1_epi32(to_signed ? -128 : 0);
  const __m512i hii = _mm512_set1_epi32(to_signed ? 127 : 255);
  const __m512 cl = _mm512_set1_ps(-1024.0f), ch = _mm512_set1_ps(1024.0f);
  /* x / scale from the rounded reciprocal and one correction by the exact
   * remainder (an FMA): the correctly rounded quotient whenever no step
   * under- or overflows (Markstein); test_qdq_units compares whole
   * binades with the division. Lanes above 2^60 in magnitude, inf and NaN
   * divide; below 2^-60 the quotient is under 2^-20 either way and rounds
   * to 0. */
  const bool recip = fabsf(scale) >= 0x1p-40f && fabsf(scale) <= 0x1p40f;
  const __m512 vr = _mm512_set1_ps(1.0f / scale), big = _mm512_set1_ps(0x1p60f);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 xv = _mm512_loadu_ps(x + i), v;
    if (recip) {
      v = _mm512_mul_ps(xv, vr);
      v = _mm512_fmadd_ps(_mm512_fnmadd_ps(v, vs, xv), vr, v);
      __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(xv), abs_mask));
      __mmask16 odd = _mm512_cmp_ps_mask(ax, big, _CMP_NLE_UQ);
      if (odd) v = _mm512_mask_div_ps(v, odd, xv, vs);
    } else {
      v = _mm512_div_ps(xv, vs);
    }
    /* NaN (0 / 0, NaN input) gives 0; the rest: clamp to +-1024, round to
     * nearest even (embedded rounding, whatever MXCSR says), add the zero
     * point and saturate in integers */
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    v = _mm512_min_ps(_mm512_max_ps(v, cl), ch);
    __m512i r = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzi);
    r = _mm512_maskz_mov_epi32(~nan, _mm512_min_epi32(_mm512_max_epi32(r, loi), hii));
    _mm_storeu_si128((__m128i *)((uint8_t *)y + i), _mm512_cvtepi32_epi8(r));
  }
  return i;
}

/* The same reduction with explicit vectors: GCC left the one above scalar.
 * min/max_ps(v, acc) keep acc when v is NaN, as the comparisons above. */
__attribute__((target("avx512f"))) void ox_q8_range_avx512(const float *x, int64_t n, float *lo,
                                                           float *hi) {
  __m512 mn0 = _mm512_setzero_ps(), mn1 = mn0, mx0 = mn0, mx1 = mn0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    mn0 = _mm512_min_ps(a, mn0);
    mx0 = _mm512_max_ps(a, mx0);
    mn1 = _mm512_min_ps(b, mn1);
    mx1 = _mm512_max_ps(b, mx1);
  }
  float l = _mm512_reduce_min_ps(_mm512_min_ps(mn0, mn1));
  float h = _mm512_reduce_max_ps(_mm512_max_ps(mx0, mx1));
  for (; i < n; i++) {
    l = x[i] < l ? x[i] : l;
    h = x[i] > h ? x[i] : h;
  }
  *lo = l;
  *hi = h;
}

/* The same with 512-bit registers: a ka + (b kb + c) by two FMAs, clamped
 * (the factors are finite here, so no NaN reaches min/max), converted with
 * the default rounding (half to even, as round_small) and narrowed. The
 * compiler's own vectorisation of the loop above used 256-bit blends. */
__attribute__((target("avx512f"))) static void add_u8_avx512(const uint8_t *a, const uint8_t *b,
                                                             uint8_t *y, int64_t n, float fa,
                                                             float fb, float fc, float flo,
                                                             float fhi) {
  const __m512 ka = _mm512_set1_ps(fa), kb = _mm512_set1_ps(fb), c = _mm512_set1_ps(fc);
  const __m512 lo = _mm512_set1_ps(flo), hi = _mm512_set1_ps(fhi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 av = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(a + i))));
    __m512 bv = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b + i))));
    __m512 v = _mm512_fmadd_ps(av, ka, _mm512_fmadd_ps(bv, kb, c));
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  /* the tail by the AVX2 level's loop, as the clone that ran it before */
  if (i < n) ox_q8_add_u8_plain_avx2(a + i, b + i, y + i, n - i, fa, fb, fc, flo, fhi);
}

/* 64 lookups at a time: two two-register byte permutes (7-bit indices)
 * and a blend on the top bit */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void ox_q8_lookup_vbmi(const uint8_t *t,
                                                                              const uint8_t *x,
                                                                              uint8_t *y,
                                                                              int64_t n) {
  __m512i t0 = _mm512_loadu_si512(t), t1 = _mm512_loadu_si512(t + 64);
  __m512i t2 = _mm512_loadu_si512(t + 128), t3 = _mm512_loadu_si512(t + 192);
  int64_t i = 0;
  for (; i < n; i += 64) {
    __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
    __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
}

static void add_u8(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, float ka, float kb,
                   float c, float lo, float hi) {
  add_u8_avx512(a, b, y, n, ka, kb, c, lo, hi);
}

#include "q8_body.h"

/* the same entries with the VBMI byte lookup (q8.c picks them where the
 * CPU has AVX-512 VBMI and BW) */
const ox_q8_kernels ox_q8_kernels_avx512_vbmi = {OX_ISA_AVX512,      from_f32, q8_to_f32,
                                                 ox_q8_range_avx512, add_u8,   ox_q8_lookup_vbmi};
#endif
