/* vmath_wasm.c - vmath.h's entries for the WebAssembly SIMD128 build:
 * vmath.c hands out this table when ox_cpu_get()->simd128 (the -msimd128
 * build, unless ONNXC_ISA=portable).
 *
 * Why: clang did not vectorise the portable loops (vmath_body.h, compiled
 * here as the _ref level) for SIMD128 where they matter: e^x, erf, tanh
 * and the sigmoid ran one lane at a time (e^x 3.9 ns, GELU 6.4 ns an
 * element in node on the Zen 5 here; MiniLM's GELU over 128 x 1536 values
 * cost a third of its MLP-up product), and an in-place call (x == y) fails
 * the overlap check clang puts in front of the vector loop anyway. So the
 * element-wise functions are written here in f32x4, the same operations
 * in the same order as vexp.h's ox_exp1 and vmath_body.h's erf_block,
 * tanh_block, sig_block, vm_gelu_run, row_apply and bias_relu: SIMD128 has
 * no fused multiply-add and wasm no excess precision, so every lane rounds
 * as the scalar C does and the bits are the portable level's
 * (tests/unit/test_ewise_wasm.c compares them, in place and not). The sums
 * in double (row_sum, row_sq_sum) keep the eight partial sums as four
 * f64x2 and add them in the same order. The row maximum is SIMD128 with
 * the bits of vmath.c's SSE2 loop (m > v ? m : v per lane, the signs of
 * equal zeros as there). */
#include "vmath.h"

#ifdef __wasm_simd128__
#include <math.h>
#include <string.h>
#include <wasm_simd128.h>

#include "vexp.h"

extern const ox_vmath_kernels ox_vmath_kernels_ref;
#define REF (&ox_vmath_kernels_ref)

/* shorthands: the four-lane operations, each rounded as its scalar one */
#define F4(v) wasm_f32x4_splat(v)
#define ADD wasm_f32x4_add
#define SUB wasm_f32x4_sub
#define MUL wasm_f32x4_mul
/* c ? a : b by lanes (c a comparison's mask), as ox_sel_f32 */
static inline v128_t sel4(v128_t c, v128_t a, v128_t b) { return wasm_v128_bitselect(a, b, c); }
/* The constants of the functions below, splatted. They come from a table
 * the compiler cannot fold (external linkage: another file could write it)
 * and are read into locals once per call: as v128.const in the loop V8
 * built each one from immediates on every iteration (several instructions
 * per constant, e^x's loop ran at a third of its speed). */
enum { VW_NK = 38 };
typedef struct vwk {
  v128_t c[VW_NK];
  v128_t bias127, sign; /* i32x4: the exponent's bias, the sign bit */
} vwk;
#define VW_K4(v) \
  { v, v, v, v }
__attribute__((aligned(16))) float ox_vmath_wasm_k[VW_NK][4] = {
    VW_K4(OX_EXP_ROUND),
    VW_K4(OX_EXP_LOG2E),
    VW_K4(OX_EXP_LN2_HI),
    VW_K4(OX_EXP_LN2_LO),
    VW_K4(1.0f / 5040.0f),
    VW_K4(1.0f / 720.0f),
    VW_K4(1.0f / 120.0f),
    VW_K4(1.0f / 24.0f),
    VW_K4(1.0f / 6.0f),
    VW_K4(0.5f),
    VW_K4(1.0f),
    VW_K4(OX_EXP_HI),
    VW_K4(OX_EXP_LO),
    VW_K4(0.0f),
    VW_K4(INFINITY),
    VW_K4(-1.0f / 1320.0f),
    VW_K4(1.0f / 216.0f),
    VW_K4(1.0f / 42.0f),
    VW_K4(1.0f / 10.0f),
    VW_K4(1.0f / 3.0f),
    VW_K4(1.12837916709551257f),
    VW_K4(87.0f),
    VW_K4(-87.0f),
    VW_K4(0.3275911f),
    VW_K4(1.061405429f),
    VW_K4(1.453152027f),
    VW_K4(1.421413741f),
    VW_K4(0.284496736f),
    VW_K4(0.254829592f),
    VW_K4(-929569.0f / 638512875.0f),
    VW_K4(21844.0f / 6081075.0f),
    VW_K4(1382.0f / 155925.0f),
    VW_K4(62.0f / 2835.0f),
    VW_K4(17.0f / 315.0f),
    VW_K4(2.0f / 15.0f),
    VW_K4(9.0f),
    VW_K4(-2.0f),
    VW_K4(-18.0f),
};
__attribute__((aligned(16))) int32_t ox_vmath_wasm_ki[2][4] = {VW_K4(127), VW_K4(INT32_MIN)};
static inline vwk vwk_load(void) {
  vwk k;
  for (int i = 0; i < VW_NK; i++) k.c[i] = wasm_v128_load(ox_vmath_wasm_k[i]);
  k.bias127 = wasm_v128_load(ox_vmath_wasm_ki[0]);
  k.sign = wasm_v128_load(ox_vmath_wasm_ki[1]);
  return k;
}

/* copysignf(a, s) */
static inline v128_t copysign4(const vwk *K, v128_t a, v128_t s) {
  return wasm_v128_bitselect(s, a, K->sign);
}
/* 2^k for integral k in the normal range, from its bits */
static inline v128_t pow2_4(const vwk *K, v128_t k) {
  return wasm_i32x4_shl(wasm_i32x4_add(k, K->bias127), 23);
}

/* vexp.h's ox_exp_reduced: e^r and the k of c = k ln2 + r */
static inline v128_t exp_reduced4(const vwk *K, v128_t c, v128_t *fk) {
  const v128_t rnd = K->c[0];
  v128_t k = SUB(ADD(MUL(c, K->c[1]), rnd), rnd);
  v128_t r = SUB(SUB(c, MUL(k, K->c[2])), MUL(k, K->c[3]));
  v128_t p = K->c[4];
  p = ADD(MUL(p, r), K->c[5]);
  p = ADD(MUL(p, r), K->c[6]);
  p = ADD(MUL(p, r), K->c[7]);
  p = ADD(MUL(p, r), K->c[8]);
  p = ADD(MUL(p, r), K->c[9]);
  p = ADD(MUL(p, r), K->c[10]);
  p = ADD(MUL(p, r), K->c[10]);
  *fk = k;
  return p;
}

/* vexp.h's ox_exp1: the limits by selects, 2^k in two halves (k / 2
 * rounded toward zero, as C's division) */
static inline v128_t exp4(const vwk *K, v128_t v) {
  const v128_t hi = K->c[11], lo = K->c[12];
  v128_t c = sel4(wasm_f32x4_gt(v, hi), hi, v);
  c = sel4(wasm_f32x4_lt(c, lo), lo, c);
  c = sel4(wasm_f32x4_ne(c, c), K->c[13], c);
  v128_t fk, p = exp_reduced4(K, c, &fk);
  v128_t k = wasm_i32x4_trunc_sat_f32x4(fk);
  v128_t k1 = wasm_i32x4_shr(wasm_i32x4_add(k, wasm_u32x4_shr(k, 31)), 1);
  v128_t k2 = wasm_i32x4_sub(k, k1);
  v128_t res = MUL(MUL(p, pow2_4(K, k1)), pow2_4(K, k2));
  res = sel4(wasm_f32x4_gt(v, hi), K->c[14], res);
  res = sel4(wasm_f32x4_lt(v, lo), K->c[13], res);
  return sel4(wasm_f32x4_ne(v, v), v, res);
}

/* e^(-x^2) for erf and e^(-2|x|) for tanh: the argument z kept finite by
 * the caller's limit, 2^k built whole from its bits */
static inline v128_t exp_bits4(const vwk *K, v128_t z) {
  z = sel4(wasm_f32x4_ne(z, z), K->c[13], z); /* NaN: the result is replaced by the caller */
  v128_t fk, p = exp_reduced4(K, z, &fk);
  return MUL(p, pow2_4(K, wasm_i32x4_trunc_sat_f32x4(fk)));
}

/* vmath_body.h's erf_block on four lanes */
static inline v128_t erf4(const vwk *K, v128_t v) {
  v128_t a = wasm_f32x4_abs(v), v2 = MUL(v, v);
  v128_t small = K->c[15];
  small = ADD(MUL(small, v2), K->c[16]);
  small = SUB(MUL(small, v2), K->c[17]);
  small = ADD(MUL(small, v2), K->c[18]);
  small = SUB(MUL(small, v2), K->c[19]);
  small = ADD(MUL(small, v2), K->c[10]);
  small = MUL(MUL(small, v), K->c[20]);
  v128_t z = sel4(wasm_f32x4_lt(v2, K->c[21]), wasm_f32x4_neg(v2), K->c[22]);
  v128_t ex = exp_bits4(K, z);
  v128_t t = wasm_f32x4_div(K->c[10], ADD(K->c[10], MUL(K->c[23], a)));
  v128_t q = K->c[24];
  q = SUB(MUL(q, t), K->c[25]);
  q = ADD(MUL(q, t), K->c[26]);
  q = SUB(MUL(q, t), K->c[27]);
  q = ADD(MUL(q, t), K->c[28]);
  v128_t big = copysign4(K, SUB(K->c[10], MUL(MUL(q, t), ex)), v);
  v128_t res = sel4(wasm_f32x4_lt(a, K->c[9]), small, big);
  return sel4(wasm_f32x4_ne(v, v), v, res);
}

/* vmath_body.h's tanh_block on four lanes */
static inline v128_t tanh4(const vwk *K, v128_t v) {
  v128_t a = wasm_f32x4_abs(v), v2 = MUL(v, v);
  v128_t small = K->c[29];
  small = ADD(MUL(small, v2), K->c[30]);
  small = SUB(MUL(small, v2), K->c[31]);
  small = ADD(MUL(small, v2), K->c[32]);
  small = SUB(MUL(small, v2), K->c[33]);
  small = ADD(MUL(small, v2), K->c[34]);
  small = SUB(MUL(small, v2), K->c[19]);
  small = ADD(MUL(MUL(small, v2), v), v);
  v128_t z = sel4(wasm_f32x4_lt(a, K->c[35]), MUL(K->c[36], a), K->c[37]);
  v128_t ex = exp_bits4(K, z);
  v128_t big = copysign4(K, wasm_f32x4_div(SUB(K->c[10], ex), ADD(K->c[10], ex)), v);
  v128_t res = copysign4(K, sel4(wasm_f32x4_lt(a, K->c[9]), small, big), v);
  return sel4(wasm_f32x4_ne(v, v), v, res);
}

/* Element-wise loops: BODY maps the vector x4 (at x + i) to y4, stored at
 * y + i; the last n % 4 values go through the same body from a padded copy.
 * Each vector is loaded before its result is stored: x == y is fine. */
#define VW_MAP(BODY)                                   \
  do {                                                 \
    int64_t i = 0;                                     \
    for (; i + 4 <= n; i += 4) {                       \
      v128_t x4 = wasm_v128_load(x + i), y4;           \
      BODY;                                            \
      wasm_v128_store(y + i, y4);                      \
    }                                                  \
    if (i < n) {                                       \
      float tx[4] = {0}, ty[4];                        \
      memcpy(tx, x + i, (size_t)(n - i) * sizeof *tx); \
      v128_t x4 = wasm_v128_load(tx), y4;              \
      BODY;                                            \
      wasm_v128_store(ty, y4);                         \
      memcpy(y + i, ty, (size_t)(n - i) * sizeof *ty); \
    }                                                  \
  } while (0)

/* The largest of x (n >= 1), NaN when any is: four vectors of maxima and a
 * vector of NaN flags, as vmath.c's SSE2 loop. */
static float vw_row_max(const float *x, int64_t n) {
  float r = x[0];
  int64_t k = 0;
  bool nan = false;
  if (n >= 16) {
    v128_t m[4], bad = wasm_i32x4_splat(0);
    for (int q = 0; q < 4; q++) m[q] = wasm_v128_load(x + 4 * q);
    for (; k + 16 <= n; k += 16)
      for (int q = 0; q < 4; q++) {
        v128_t v = wasm_v128_load(x + k + 4 * q);
        bad = wasm_v128_or(bad, wasm_f32x4_ne(v, v));
        m[q] = wasm_v128_bitselect(m[q], v, wasm_f32x4_gt(m[q], v)); /* _mm_max_ps */
      }
    v128_t a = wasm_v128_bitselect(m[0], m[1], wasm_f32x4_gt(m[0], m[1]));
    v128_t b = wasm_v128_bitselect(m[2], m[3], wasm_f32x4_gt(m[2], m[3]));
    float t[4];
    wasm_v128_store(t, wasm_v128_bitselect(a, b, wasm_f32x4_gt(a, b)));
    r = t[0];
    for (int q = 1; q < 4; q++) r = t[q] > r ? t[q] : r;
    nan = wasm_v128_any_true(bad);
  }
  for (; k < n; k++) {
    if (isnan(x[k])) nan = true;
    r = x[k] > r ? x[k] : r;
  }
  return nan ? NAN : r;
}

/* exp_block: e^(x - shift) */
static void vw_exp(const float *x, float shift, float *y, int64_t n) {
  const v128_t sh = F4(shift);
  const vwk K = vwk_load();
  VW_MAP(y4 = exp4(&K, SUB(x4, sh)));
}

/* row_sum: sums s0..s7 as four f64x2 (s0 s1 | s2 s3 | s4 s5 | s6 s7), the
 * tail into s0, then ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) */
static double vw_row_sum(const float *x, int64_t n) {
  v128_t s01 = wasm_f64x2_splat(0.0), s23 = s01, s45 = s01, s67 = s01;
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    v128_t a = wasm_v128_load(x + k), b = wasm_v128_load(x + k + 4);
    s01 = wasm_f64x2_add(s01, wasm_f64x2_promote_low_f32x4(a));
    s23 = wasm_f64x2_add(s23, wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(a, a, 1, 1)));
    s45 = wasm_f64x2_add(s45, wasm_f64x2_promote_low_f32x4(b));
    s67 = wasm_f64x2_add(s67, wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(b, b, 1, 1)));
  }
  double s[8];
  wasm_v128_store(s, s01);
  wasm_v128_store(s + 2, s23);
  wasm_v128_store(s + 4, s45);
  wasm_v128_store(s + 6, s67);
  for (; k < n; k++) s[0] += x[k];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* row_sq_d: the same partial sums of (x - m)^2, x - m in double */
static double vw_row_sq_sum(const float *x, int64_t n, double m) {
  v128_t s01 = wasm_f64x2_splat(0.0), s23 = s01, s45 = s01, s67 = s01, md = wasm_f64x2_splat(m);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    v128_t a = wasm_v128_load(x + k), b = wasm_v128_load(x + k + 4);
    v128_t d01 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(a), md);
    v128_t d23 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(a, a, 1, 1)), md);
    v128_t d45 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(b), md);
    v128_t d67 = wasm_f64x2_sub(wasm_f64x2_promote_low_f32x4(wasm_i64x2_shuffle(b, b, 1, 1)), md);
    s01 = wasm_f64x2_add(s01, wasm_f64x2_mul(d01, d01));
    s23 = wasm_f64x2_add(s23, wasm_f64x2_mul(d23, d23));
    s45 = wasm_f64x2_add(s45, wasm_f64x2_mul(d45, d45));
    s67 = wasm_f64x2_add(s67, wasm_f64x2_mul(d67, d67));
  }
  double s[8];
  wasm_v128_store(s, s01);
  wasm_v128_store(s + 2, s23);
  wasm_v128_store(s + 4, s45);
  wasm_v128_store(s + 6, s67);
  for (; k < n; k++) s[0] += (x[k] - m) * (x[k] - m);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* the portable exp_sum is exp then row_sum over y: the same two steps */
static double vw_exp_sum(const float *x, float shift, float *y, int64_t n) {
  vw_exp(x, shift, y, n);
  return vw_row_sum(y, n);
}

static void vw_erf(const float *x, float *y, int64_t n) {
  const vwk K = vwk_load();
  VW_MAP(y4 = erf4(&K, x4));
}

static void vw_tanh(const float *x, float *y, int64_t n) {
  const vwk K = vwk_load();
  VW_MAP(y4 = tanh4(&K, x4));
}

/* sig_block: z = -|scale x| by its sign bit, e = e^(z - 0), then
 * (1 + (e - 1) neg) / (1 + e) with neg the sign of scale x (0 or 1), times
 * x for Swish */
static void vw_sigmoid(const float *x, float *y, int64_t n, float scale, bool times_x) {
  const vwk K = vwk_load();
  const v128_t sc = F4(scale), sign = K.sign, one = K.c[10];
  VW_MAP({
    v128_t v = MUL(sc, x4);
    v128_t e = exp4(&K, SUB(wasm_v128_or(v, sign), K.c[13]));
    v128_t neg = wasm_f32x4_convert_u32x4(wasm_u32x4_shr(v, 31));
    v128_t sg = wasm_f32x4_div(ADD(one, MUL(SUB(e, one), neg)), ADD(one, e));
    y4 = times_x ? MUL(x4, sg) : sg;
  });
}

/* vm_gelu_run: (x (erf(x / c0 or x c0) + c1)) c2 */
static void vw_gelu_erf(const float *x, float *y, int64_t n, const ox_gelu_erf *g) {
  const v128_t c0 = F4(g->c0), c1 = F4(g->c1), c2 = F4(g->c2);
  const bool mul_first = g->mul_first;
  const vwk K = vwk_load();
  VW_MAP({
    v128_t t = erf4(&K, mul_first ? MUL(x4, c0) : wasm_f32x4_div(x4, c0));
    y4 = MUL(MUL(x4, ADD(t, c1)), c2);
  });
}

/* vmath_body.h's softmax_row: the maximum, exp_sum, one scale */
static void vw_softmax_row(const float *x, float *y, int64_t n, bool log_form) {
  if (log_form) {
    REF->softmax_row(x, y, n, true);
    return;
  }
  float m = vw_row_max(x, n);
  const v128_t inv = F4((float)(1.0 / vw_exp_sum(x, m, y, n)));
  x = y; /* the scale runs over y in place */
  VW_MAP(y4 = MUL(x4, inv));
}

/* row_apply: ((x - m) inv) scale + bias */
static void vw_norm_row(const float *x, float *y, int64_t n, float m, float inv, const float *scale,
                        const float *bias) {
  const v128_t mv = F4(m), iv = F4(inv);
  if (!scale) {
    VW_MAP(y4 = MUL(SUB(x4, mv), iv));
    return;
  }
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v128_t r = MUL(MUL(SUB(wasm_v128_load(x + i), mv), iv), wasm_v128_load(scale + i));
    if (bias) r = ADD(r, wasm_v128_load(bias + i));
    wasm_v128_store(y + i, r);
  }
  for (; i < n; i++)
    y[i] = bias ? (x[i] - m) * inv * scale[i] + bias[i] : (x[i] - m) * inv * scale[i];
}

static void vw_add(const float *a, const float *b, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  for (; i < n; i++) y[i] = a[i] + b[i];
}

/* bias_relu: y + bias, then y > 0 ? y : 0 (a NaN becomes 0, as the scalar) */
static void vw_bias_relu(float *y, int64_t n, const float *bias, bool bias_one, bool relu) {
  const float *x = y;
  const v128_t zero = F4(0.0f);
  if (bias && bias_one) {
    const v128_t b = F4(bias[0]);
    VW_MAP(y4 = ADD(x4, b));
  } else if (bias) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      wasm_v128_store(y + i, ADD(wasm_v128_load(y + i), wasm_v128_load(bias + i)));
    for (; i < n; i++) y[i] = y[i] + bias[i];
  }
  if (relu) VW_MAP(y4 = sel4(wasm_f32x4_gt(x4, zero), x4, zero));
}

/* the entry taken as it is (the table is a constant: it names it) */
static void vw_sum_into(const float *x, int64_t n, bool sq, bool one, double *acc) {
  REF->sum_into(x, n, sq, one, acc);
}

const ox_vmath_kernels ox_vmath_kernels_wasm = {
    .isa = OX_ISA_PORTABLE,
    .exp = vw_exp,
    .exp_sum = vw_exp_sum,
    .row_sum = vw_row_sum,
    .row_max = vw_row_max,
    .erf = vw_erf,
    .tanh = vw_tanh,
    .sigmoid = vw_sigmoid,
    .gelu_erf = vw_gelu_erf,
    .scale_mask_max = NULL, /* as the portable level: the caller's three passes */
    .softmax_row = vw_softmax_row,
    .row_sq_sum = vw_row_sq_sum,
    .norm_row = vw_norm_row,
    .add = vw_add,
    .sum_into = vw_sum_into,
    .bias_relu = vw_bias_relu,
};
#endif
