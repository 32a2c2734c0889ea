/* vmath.c - vmath.h's dispatch: the entries of the level the CPU probe
 * allows, and the row maximum every level shares. */
#include "vmath.h"

#include <math.h>
#include <stdbool.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "levels.h"

extern const ox_vmath_kernels ox_vmath_kernels_ref;
#if OX_LEVELS_X86
extern const ox_vmath_kernels ox_vmath_kernels_avx2, ox_vmath_kernels_avx512;
#endif
#ifdef __wasm_simd128__
extern const ox_vmath_kernels ox_vmath_kernels_wasm; /* vmath_wasm.c */
#endif

const ox_vmath_kernels *ox_vmath_kernels_at(ox_isa isa) {
#ifdef __wasm_simd128__
  /* the SIMD128 build's entries (levels.h: a build, not a pick;
   * ONNXC_ISA=portable clears simd128) */
  if (ox_cpu_get()->simd128) return &ox_vmath_kernels_wasm;
#endif
  return OX_LEVEL_TABLE(isa, ox_vmath_kernels);
}

const ox_vmath_kernels *ox_vmath_kernels_get(void) {
  return ox_vmath_kernels_at(ox_cpu_get()->isa);
}

float ox_vmath_row_max(const float *x, int64_t n);

/* Four vectors of four lanes: the max's latency is hidden (a serial max
 * with a NaN test per element cost more than the softmax around it). */
float ox_vmath_row_max(const float *x, int64_t n) {
  float r = x[0];
  int64_t k = 0;
  bool nan = false;
#if defined(__SSE2__)
  if (n >= 16) {
    __m128 m[4], bad = _mm_setzero_ps();
    for (int q = 0; q < 4; q++) m[q] = _mm_loadu_ps(x + 4 * q);
    for (; k + 16 <= n; k += 16)
      for (int q = 0; q < 4; q++) {
        __m128 v = _mm_loadu_ps(x + k + 4 * q);
        bad = _mm_or_ps(bad, _mm_cmpunord_ps(v, v));
        m[q] = _mm_max_ps(m[q], v);
      }
    float t[4];
    _mm_storeu_ps(t, _mm_max_ps(_mm_max_ps(m[0], m[1]), _mm_max_ps(m[2], m[3])));
    r = t[0];
    for (int q = 1; q < 4; q++) r = t[q] > r ? t[q] : r;
    nan = _mm_movemask_ps(bad) != 0;
  }
#endif
  for (; k < n; k++) {
    if (isnan(x[k])) nan = true;
    r = x[k] > r ? x[k] : r;
  }
  return nan ? NAN : r;
}
