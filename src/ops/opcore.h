/* opcore.h - helpers shared by the core operator families (elementwise,
 * unary, cast, reduce, softmax, matmul): generic element access, numpy
 * broadcasting iteration, attribute reading. */
#ifndef OX_OPCORE_H
#define OX_OPCORE_H

#include <stdint.h>
#include <string.h>

#include "../base/floatconv.h"
#include "../kernels/vmath.h"
#include "../runtime/kernel.h"

#define OC_MAXRANK 32

/* Scalar float32 rules shared by the elementwise, unary and fused
 * (ElementwiseChain) kernels, so that fused and unfused results are the
 * same bits. Min/Max are branch-free (the loops vectorise) and propagate a
 * NaN operand like numpy. */
#define OC_DEF_FSEL(T, NAME)                 \
  static inline T oc_fmin_##NAME(T x, T y) { \
    T r = x < y ? x : y;                     \
    r = y != y ? y : r;                      \
    return x != x ? x : r;                   \
  }                                          \
  static inline T oc_fmax_##NAME(T x, T y) { \
    T r = x > y ? x : y;                     \
    r = y != y ? y : r;                      \
    return x != x ? x : r;                   \
  }
OC_DEF_FSEL(float, f32)
OC_DEF_FSEL(double, f64)
#undef OC_DEF_FSEL
/* c ? a : b by bit masks (vectorisable; kernels/vmath.h) */
static inline float oc_select_f32(int c, float a, float b) { return ox_sel_f32(c, a, b); }
/* x < 0 ? x * a : x, choosing by the sign bit of x (LeakyRelu, PRelu). */
static inline float oc_neg_scale_f32(float x, float a) {
  float m = x * a;
  uint32_t xb, mb;
  memcpy(&xb, &x, sizeof xb);
  memcpy(&mb, &m, sizeof mb);
  uint32_t k = 0u - (xb >> 31), r = (mb & k) | (xb & ~k);
  memcpy(&m, &r, sizeof m);
  return m;
}

/* Element i of a numeric tensor (any non-string, non-complex type) as double. */
double oc_get(const void *data, int32_t dt, int64_t i);
/* Stores v into element i, converting like a C cast (float types rounded,
 * integer types truncated toward zero with wrap-around, bool = v != 0). */
void oc_set(void *data, int32_t dt, int64_t i, double v);
/* Element i of an integer or bool tensor as int64 (uint64 reinterpreted). */
int64_t oc_get_i64(const void *data, int32_t dt, int64_t i);
void oc_set_i64(void *data, int32_t dt, int64_t i, int64_t v);

bool oc_is_float(int32_t dt);    /* float, double, float16, bfloat16, float8*, float4 */
bool oc_is_int(int32_t dt);      /* signed or unsigned integer (including 4/2-bit) */
bool oc_is_unsigned(int32_t dt); /* unsigned integer */

/* Broadcast iteration over up to 3 inputs, coalesced into runs along the
 * innermost dimension. */
typedef struct oc_bcast {
  int nin;
  size_t out_rank;
  int64_t out_dims[OC_MAXRANK];
  int64_t numel;
  /* coalesced iteration space */
  size_t rank;
  int64_t dims[OC_MAXRANK];
  int64_t st[3][OC_MAXRANK]; /* element strides per input (0 = broadcast) */
} oc_bcast;

/* Computes the numpy broadcast of the shapes; fails (ctx error) when they
 * do not broadcast. */
int oc_bcast_init(oc_bcast *b, ox_kctx *ctx, const int64_t *const *dims, const size_t *ranks,
                  int nin);
/* Same with tensors. */
int oc_bcast_values(oc_bcast *b, ox_kctx *ctx, ox_value *const *v, int nin);

/* One run of contiguous output elements: inputs start at off[k] and advance
 * by step[k] (0 or 1 in the innermost dimension). */
typedef void (*oc_run_fn)(void *arg, const int64_t *off, const int64_t *step, int64_t out_off,
                          int64_t n);
/* Calls fn for every run, in output order; runs split over the pool when
 * the output is large. */
void oc_bcast_each(const oc_bcast *b, ox_thread_pool *pool, oc_run_fn fn, void *arg);
/* Same with the work per task given: at least `grain` output elements per
 * task (rows longer than two grains are cut into runs of about `grain`);
 * any size runs on the pool. */
void oc_bcast_each_grain(const oc_bcast *b, ox_thread_pool *pool, int64_t grain, oc_run_fn fn,
                         void *arg);

/* Reads an int64 scalar or 1-D tensor (int32 or int64) into out (max n). */
int oc_read_ints(ox_kctx *ctx, const ox_value *v, int64_t *out, size_t max, size_t *n,
                 const char *what);
/* Normalises an axis in [-rank, rank); fails with a message naming `what`. */
int oc_axis(ox_kctx *ctx, int64_t axis, size_t rank, size_t *out, const char *what);

/* Node description for prepare-time errors: "node 'n' (Op)". */
int oc_prep_fail(const ox_kinfo *info, ox_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* float16/bfloat16 arrays <-> float */
void oc_to_f32(const void *src, int32_t dt, float *dst, int64_t n);
void oc_from_f32(const float *src, int32_t dt, void *dst, int64_t n);

/* y = e^x over float32 arrays (vectorisable; about 2 ulp, flushes results
 * below 2^-126 to zero). x and y may be the same array. */
void oc_exp_f32(const float *x, float *y, int64_t n);
/* y = e^(x - shift), the subtraction rounded in float first (softmax's
 * x - max in the same pass). */
void oc_exp_shift_f32(const float *x, float shift, float *y, int64_t n);
/* tanh for float32 arrays (opcore.c: within 3 ulp, vectorised) */
void oc_tanh_f32(const float *x, float *y, int64_t n);
/* y = erf(x) over float32 arrays, vectorised: an odd Taylor polynomial for
 * |x| < 0.5, Abramowitz & Stegun 7.1.26 with oc_exp_f32 above (absolute
 * error below 3e-7). x and y may be the same array. */
void oc_erf_f32(const float *x, float *y, int64_t n);
/* y = sigmoid(scale x) (times x when times_x: Swish), float32, as the
 * Sigmoid and Swish kernels and the fused chains compute it. */
void oc_sigmoid_f32(const float *x, float *y, int64_t n, float scale, bool times_x);
/* The largest of x[0..n) (n >= 1); NaN when one of them is NaN. */
float oc_row_max_f32(const float *x, int64_t n);
/* y = e^(x - shift) as oc_exp_shift_f32, and the sum of y in double:
 * eight partial sums (element i of the first n - n % 8 into sum i % 8, the
 * rest into sum 0), added as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 +
 * s7)) — softmax's denominator, the same bits whichever path runs. */
double oc_exp_shift_sum_f32(const float *x, float shift, float *y, int64_t n);
/* The same sum of x[0..n) alone. */
double oc_row_sum_f32(const float *x, int64_t n);

/* GELU as exported (kernels/vmath.h's ox_gelu_erf), the float operations
 * of the Div (Mul), Erf, Add, Mul, Mul nodes in their order. x and y may
 * be the same array. */
typedef ox_gelu_erf oc_gelu_erf;
void oc_gelu_erf_f32(const float *x, float *y, int64_t n, const oc_gelu_erf *g);

#endif
