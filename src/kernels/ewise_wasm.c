/* ewise_wasm.c - ewise.h's WebAssembly SIMD128 entries: the element-wise
 * rows four lanes at a time, in place or not.
 *
 * Why by hand: clang vectorises the portable loops behind a run-time check
 * that the output does not overlap an input, and an element-wise chain
 * writes its operations over their operands: every in-place loop took the
 * scalar path (one f32.div per element for HardSwish's x / 6). Each lane
 * here is the portable expression's IEEE operations in its order, and the
 * selects are the C conditionals' (pmin / pmax are b < a ? b : a and
 * a < b ? b : a, NaN keeping a), so the bits are the portable level's. The
 * last n % 4 elements go through the same vector code on a zero-padded copy
 * (lanes past n are computed and dropped). */
#include "ewise.h"

#ifdef __wasm_simd128__
#include <string.h>
#include <wasm_simd128.h>

#define EW_INLINE static inline __attribute__((always_inline))

/* ---- one vector of each operation ---- */
EW_INLINE v128_t ew_add(v128_t x, v128_t y) { return wasm_f32x4_add(x, y); }
EW_INLINE v128_t ew_sub(v128_t x, v128_t y) { return wasm_f32x4_sub(x, y); }
EW_INLINE v128_t ew_mul(v128_t x, v128_t y) { return wasm_f32x4_mul(x, y); }
EW_INLINE v128_t ew_div(v128_t x, v128_t y) { return wasm_f32x4_div(x, y); }
/* opcore.h's oc_fmax_f32: r = x > y ? x : y; y's NaN, then x's, win */
EW_INLINE v128_t ew_max(v128_t x, v128_t y) {
  v128_t r = wasm_v128_bitselect(x, y, wasm_f32x4_gt(x, y));
  r = wasm_v128_bitselect(y, r, wasm_f32x4_ne(y, y));
  return wasm_v128_bitselect(x, r, wasm_f32x4_ne(x, x));
}
EW_INLINE v128_t ew_min(v128_t x, v128_t y) {
  v128_t r = wasm_v128_bitselect(x, y, wasm_f32x4_lt(x, y));
  r = wasm_v128_bitselect(y, r, wasm_f32x4_ne(y, y));
  return wasm_v128_bitselect(x, r, wasm_f32x4_ne(x, x));
}

/* y = a op b over n elements, the operand forms vector-vector,
 * vector-scalar and scalar-vector */
#define EW_BIN_LOOP(F)                                                                  \
  do {                                                                                  \
    const v128_t vsa = wasm_f32x4_splat(sa), vsb = wasm_f32x4_splat(sb);                \
    int64_t i = 0;                                                                      \
    if (a && b)                                                                         \
      for (; i + 4 <= n; i += 4)                                                        \
        wasm_v128_store(y + i, F(wasm_v128_load(a + i), wasm_v128_load(b + i)));        \
    else if (a)                                                                         \
      for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, F(wasm_v128_load(a + i), vsb)); \
    else                                                                                \
      for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, F(vsa, wasm_v128_load(b + i))); \
    if (i < n) {                                                                        \
      float ta[4] = {0}, tb[4] = {0}, ty[4];                                            \
      size_t k = (size_t)(n - i) * sizeof(float);                                       \
      if (a) memcpy(ta, a + i, k);                                                      \
      if (b) memcpy(tb, b + i, k);                                                      \
      v128_t va = a ? wasm_v128_load(ta) : vsa, vb = b ? wasm_v128_load(tb) : vsb;      \
      wasm_v128_store(ty, F(va, vb));                                                   \
      memcpy(y + i, ty, k);                                                             \
    }                                                                                   \
  } while (0)

static void ew_bin_wasm(ox_ew_bin op, const float *a, const float *b, float sa, float sb, float *y,
                        int64_t n) {
  switch (op) {
    case OX_EW_ADD:
      EW_BIN_LOOP(ew_add);
      break;
    case OX_EW_SUB:
      EW_BIN_LOOP(ew_sub);
      break;
    case OX_EW_MUL:
      EW_BIN_LOOP(ew_mul);
      break;
    case OX_EW_DIV:
      EW_BIN_LOOP(ew_div);
      break;
    case OX_EW_MAX:
      EW_BIN_LOOP(ew_max);
      break;
    case OX_EW_MIN:
      EW_BIN_LOOP(ew_min);
      break;
  }
}

/* the one-operand forms; p0, p1 are splatted by the loop */
EW_INLINE v128_t ew_clip(v128_t x, v128_t p0, v128_t p1) {
  return wasm_f32x4_pmin(wasm_f32x4_pmax(x, p0), p1); /* x < p0 ? p0 : x, then v > p1 ? p1 : v */
}
EW_INLINE v128_t ew_relu(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_pmax(wasm_f32x4_splat(0.0f), x); /* 0 < x ? x : 0 */
}
EW_INLINE v128_t ew_leaky(v128_t x, v128_t p0, v128_t p1) {
  (void)p1; /* oc_neg_scale_f32: x * p0 chosen by x's sign bit */
  return wasm_v128_bitselect(wasm_f32x4_mul(x, p0), x, wasm_i32x4_shr(x, 31));
}
/* HardSigmoid's clamp: v > 1 ? 1 : v, then v < 0 ? 0 : v */
EW_INLINE v128_t ew_unit(v128_t v) {
  return wasm_f32x4_pmax(wasm_f32x4_pmin(v, wasm_f32x4_splat(1.0f)), wasm_f32x4_splat(0.0f));
}
EW_INLINE v128_t ew_hsigmoid(v128_t x, v128_t p0, v128_t p1) {
  return ew_unit(wasm_f32x4_add(wasm_f32x4_mul(p0, x), p1));
}
EW_INLINE v128_t ew_hswish(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  v128_t v = wasm_f32x4_add(wasm_f32x4_div(x, wasm_f32x4_splat(6.0f)), wasm_f32x4_splat(0.5f));
  return wasm_f32x4_mul(x, ew_unit(v));
}
EW_INLINE v128_t ew_neg(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_neg(x);
}
EW_INLINE v128_t ew_abs(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_abs(x);
}
EW_INLINE v128_t ew_sqrt(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_sqrt(x);
}
EW_INLINE v128_t ew_pow2(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_mul(x, x);
}
EW_INLINE v128_t ew_pow3(v128_t x, v128_t p0, v128_t p1) {
  (void)p0, (void)p1;
  return wasm_f32x4_mul(wasm_f32x4_mul(x, x), x);
}

#define EW_UN_LOOP(F)                                                                    \
  do {                                                                                   \
    const v128_t v0 = wasm_f32x4_splat(p0), v1 = wasm_f32x4_splat(p1);                   \
    int64_t i = 0;                                                                       \
    for (; i + 4 <= n; i += 4) wasm_v128_store(y + i, F(wasm_v128_load(x + i), v0, v1)); \
    if (i < n) {                                                                         \
      float tx[4] = {0}, ty[4];                                                          \
      size_t k = (size_t)(n - i) * sizeof(float);                                        \
      memcpy(tx, x + i, k);                                                              \
      wasm_v128_store(ty, F(wasm_v128_load(tx), v0, v1));                                \
      memcpy(y + i, ty, k);                                                              \
    }                                                                                    \
  } while (0)

static void ew_un_wasm(ox_ew_un op, const float *x, float *y, int64_t n, float p0, float p1) {
  switch (op) {
    case OX_EW_CLIP:
      EW_UN_LOOP(ew_clip);
      break;
    case OX_EW_RELU:
      EW_UN_LOOP(ew_relu);
      break;
    case OX_EW_LEAKY:
      EW_UN_LOOP(ew_leaky);
      break;
    case OX_EW_HSIGMOID:
      EW_UN_LOOP(ew_hsigmoid);
      break;
    case OX_EW_HSWISH:
      EW_UN_LOOP(ew_hswish);
      break;
    case OX_EW_NEG:
      EW_UN_LOOP(ew_neg);
      break;
    case OX_EW_ABS:
      EW_UN_LOOP(ew_abs);
      break;
    case OX_EW_SQRT:
      EW_UN_LOOP(ew_sqrt);
      break;
    case OX_EW_POW2:
      EW_UN_LOOP(ew_pow2);
      break;
    case OX_EW_POW3:
      EW_UN_LOOP(ew_pow3);
      break;
  }
}

const ox_ew_kernels ox_ew_kernels_wasm = {ew_bin_wasm, ew_un_wasm};

#else
typedef int ox_ewise_wasm_empty; /* ISO C: a translation unit is not empty */
#endif
