/* fma_wasm.c - fma_wasm.h: fmaf(x, a, b) four lanes at a time in SIMD128.
 *
 * How: x * a of two floats is exact in double (48 significant bits), so
 * the double sum x * a + b is rounded once; narrowing it to float rounds
 * again, which differs from one correct rounding only when the double sum
 * sits exactly halfway between two floats after its own rounding (its low
 * 29 mantissa bits 0x10000000). That is also how musl's fmaf (emscripten's
 * libc) proceeds: it returns the narrowed double sum unless it sees that
 * pattern (and the sum was inexact). So the lanes take the double sum
 * narrowed, and a group of four where any lane shows the pattern goes to
 * fmaf itself: the bits of fmaf always, the software path rarely. */
#include "fma_wasm.h"

#ifdef __wasm_simd128__
#include <math.h>
#include <wasm_simd128.h>

/* fmaf of two lanes' double sums r (lanes 0, 1): any lane halfway? */
static inline bool halfway2(v128_t r) {
  const v128_t mask = wasm_i64x2_splat(0x1fffffff), half = wasm_i64x2_splat(0x10000000);
  return wasm_v128_any_true(wasm_i64x2_eq(wasm_v128_and(r, mask), half));
}

void ox_fma_affine_wasm(const float *x, float a, float b, bool relu, float *y, int64_t n) {
  const v128_t da = wasm_f64x2_splat((double)a), db = wasm_f64x2_splat((double)b);
  const v128_t zero = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t v = wasm_v128_load(x + i);
    v128_t lo = wasm_f64x2_promote_low_f32x4(v);
    v128_t hi = wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v128_t rlo = wasm_f64x2_add(wasm_f64x2_mul(lo, da), db);
    v128_t rhi = wasm_f64x2_add(wasm_f64x2_mul(hi, da), db);
    v128_t r;
    if (halfway2(rlo) || halfway2(rhi)) {
      r = wasm_f32x4_make(fmaf(x[i], a, b), fmaf(x[i + 1], a, b), fmaf(x[i + 2], a, b),
                          fmaf(x[i + 3], a, b));
    } else {
      v128_t flo = wasm_f32x4_demote_f64x2_zero(rlo), fhi = wasm_f32x4_demote_f64x2_zero(rhi);
      r = wasm_i32x4_shuffle(flo, fhi, 0, 1, 4, 5);
    }
    /* v > 0 ? v : 0 (NaN and -0 give +0) */
    if (relu) r = wasm_v128_and(r, wasm_f32x4_gt(r, zero));
    wasm_v128_store(y + i, r);
  }
  for (; i < n; i++) {
    float v = fmaf(x[i], a, b);
    y[i] = relu ? (v > 0.0f ? v : 0.0f) : v;
  }
}
#endif
