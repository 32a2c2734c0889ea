/* unary.c - elementwise math and activation functions of one input. Float
 * types are computed in their own precision (float16/bfloat16 in float32);
 * integer types where the schema allows them (Abs, Neg, Sign, Relu, Clip,
 * Shrink). */
#include "unary.h"

#include <float.h>
#include <string.h>
#include <tgmath.h>

#include "../../kernels/levels.h"
#include "../opcore.h"

enum {
  U_ABS,
  U_NEG,
  U_RECIP,
  U_FLOOR,
  U_CEIL,
  U_ROUND,
  U_SQRT,
  U_EXP,
  U_LOG,
  U_SIN,
  U_COS,
  U_TAN,
  U_ASIN,
  U_ACOS,
  U_ATAN,
  U_SINH,
  U_COSH,
  U_ASINH,
  U_ACOSH,
  U_ATANH,
  U_TANH,
  U_ERF,
  U_SIGN,
  U_RELU,
  U_LEAKY,
  U_ELU,
  U_SELU,
  U_CELU,
  U_SIGMOID,
  U_HSIGMOID,
  U_HSWISH,
  U_SOFTPLUS,
  U_SOFTSIGN,
  U_GELU,
  U_GELU_TANH,
  U_MISH,
  U_THRELU,
  U_SHRINK,
  U_CLIP,
  U_SWISH,
  U_ISNAN,
  U_ISINF,
};

typedef struct un_state {
  int op;
  double alpha, beta, gamma;
  bool clip_inputs; /* Clip >= 11: min/max are inputs */
  bool det_pos, det_neg;
} un_state;

/* the same element code for float and double via <tgmath.h>: the bodies
 * un_f32_c and un_f64_c, compiled per level below (levels.h) */
#define DEF_UN(T, NAME)                                                                          \
  OX_LEVEL_BODY void un_##NAME##_c(const un_state *s, const T *x, T *y, int64_t n, T lo, T hi) { \
    const T al = (T)s->alpha, be = (T)s->beta, ga = (T)s->gamma;                                 \
    const T one = 1, zero = 0, half = (T)0.5;                                                    \
    switch (s->op) {                                                                             \
      case U_ABS:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = fabs(x[i]);                                       \
        break;                                                                                   \
      case U_NEG:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = -x[i];                                            \
        break;                                                                                   \
      case U_RECIP:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = one / x[i];                                       \
        break;                                                                                   \
      case U_FLOOR:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = floor(x[i]);                                      \
        break;                                                                                   \
      case U_CEIL:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = ceil(x[i]);                                       \
        break;                                                                                   \
      case U_ROUND:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = nearbyint(x[i]);                                  \
        break;                                                                                   \
      case U_SQRT:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = sqrt(x[i]);                                       \
        break;                                                                                   \
      case U_EXP:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = exp(x[i]);                                        \
        break;                                                                                   \
      case U_LOG:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = log(x[i]);                                        \
        break;                                                                                   \
      case U_SIN:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = sin(x[i]);                                        \
        break;                                                                                   \
      case U_COS:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = cos(x[i]);                                        \
        break;                                                                                   \
      case U_TAN:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = tan(x[i]);                                        \
        break;                                                                                   \
      case U_ASIN:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = asin(x[i]);                                       \
        break;                                                                                   \
      case U_ACOS:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = acos(x[i]);                                       \
        break;                                                                                   \
      case U_ATAN:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = atan(x[i]);                                       \
        break;                                                                                   \
      case U_SINH:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = sinh(x[i]);                                       \
        break;                                                                                   \
      case U_COSH:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = cosh(x[i]);                                       \
        break;                                                                                   \
      case U_ASINH:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = asinh(x[i]);                                      \
        break;                                                                                   \
      case U_ACOSH:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = acosh(x[i]);                                      \
        break;                                                                                   \
      case U_ATANH:                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = atanh(x[i]);                                      \
        break;                                                                                   \
      case U_TANH:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = tanh(x[i]);                                       \
        break;                                                                                   \
      case U_ERF:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = erf(x[i]);                                        \
        break;                                                                                   \
      case U_SIGN:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] > zero ? one : x[i] < zero ? -one : x[i];    \
        break;                                                                                   \
      case U_RELU:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] > zero ? x[i] : zero;                        \
        break;                                                                                   \
      case U_LEAKY:                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = x[i], m = al * v;                                                                \
          y[i] = v < zero ? m : v;                                                               \
        }                                                                                        \
        break;                                                                                   \
      case U_ELU:                                                                                \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] < zero ? al * (exp(x[i]) - one) : x[i];      \
        break;                                                                                   \
      case U_SELU:                                                                               \
        for (int64_t i = 0; i < n; i++)                                                          \
          y[i] = x[i] <= zero ? ga * (al * exp(x[i]) - al) : ga * x[i];                          \
        break;                                                                                   \
      case U_CELU:                                                                               \
        for (int64_t i = 0; i < n; i++)                                                          \
          y[i] = fmax(zero, x[i]) + fmin(zero, al * (exp(x[i] / al) - one));                     \
        break;                                                                                   \
      case U_SIGMOID:                                                                            \
        for (int64_t i = 0; i < n; i++)                                                          \
          y[i] = x[i] >= zero ? one / (one + exp(-x[i])) : exp(x[i]) / (one + exp(x[i]));        \
        break;                                                                                   \
      case U_SWISH:                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T z = al * x[i];                                                                       \
          y[i] = x[i] * (z >= zero ? one / (one + exp(-z)) : exp(z) / (one + exp(z)));           \
        }                                                                                        \
        break;                                                                                   \
      case U_HSIGMOID:                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = al * x[i] + be;                                                                  \
          v = v > one ? one : v;                                                                 \
          y[i] = v < zero ? zero : v;                                                            \
        }                                                                                        \
        break;                                                                                   \
      case U_HSWISH:                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = x[i] / (T)6 + half;                                                              \
          v = v > one ? one : v;                                                                 \
          y[i] = x[i] * (v < zero ? zero : v);                                                   \
        }                                                                                        \
        break;                                                                                   \
      case U_SOFTPLUS:                                                                           \
        for (int64_t i = 0; i < n; i++)                                                          \
          y[i] = x[i] > zero ? x[i] + log1p(exp(-x[i])) : log1p(exp(x[i]));                      \
        break;                                                                                   \
      case U_SOFTSIGN:                                                                           \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] / (one + fabs(x[i]));                        \
        break;                                                                                   \
      case U_GELU:                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] = half * x[i] * (one + erf(x[i] / sqrt((T)2)));     \
        break;                                                                                   \
      case U_GELU_TANH:                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = x[i];                                                                            \
          y[i] = half * v *                                                                      \
                 (one +                                                                          \
                  tanh(sqrt((T)2 / (T)3.14159265358979323846) * (v + (T)0.044715 * v * v * v))); \
        }                                                                                        \
        break;                                                                                   \
      case U_MISH:                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = x[i];                                                                            \
          T sp = v > zero ? v + log1p(exp(-v)) : log1p(exp(v));                                  \
          y[i] = v * tanh(sp);                                                                   \
        }                                                                                        \
        break;                                                                                   \
      case U_THRELU:                                                                             \
        for (int64_t i = 0; i < n; i++) y[i] = x[i] > al ? x[i] : zero;                          \
        break;                                                                                   \
      case U_SHRINK:                                                                             \
        for (int64_t i = 0; i < n; i++)                                                          \
          y[i] = x[i] < -ga ? x[i] + be : x[i] > ga ? x[i] - be : zero;                          \
        break;                                                                                   \
      case U_CLIP:                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                        \
          T v = x[i];                                                                            \
          v = v < lo ? lo : v;                                                                   \
          y[i] = v > hi ? hi : v;                                                                \
        }                                                                                        \
        break;                                                                                   \
      default:                                                                                   \
        break;                                                                                   \
    }                                                                                            \
  }

DEF_UN(float, f32)
DEF_UN(double, f64)
OX_LEVELS_VOID(un_f64,
               (const un_state *s, const double *x, double *y, int64_t n, double lo, double hi), s,
               x, y, n, lo, hi)

/* integer types */
static int64_t un_int(const un_state *s, int64_t v, int64_t lo, int64_t hi) {
  uint64_t u = (uint64_t)v;
  switch (s->op) {
    case U_ABS:
      return v < 0 ? (int64_t)(0 - u) : v;
    case U_NEG:
      return (int64_t)(0 - u);
    case U_SIGN:
      return v > 0 ? 1 : v < 0 ? -1 : 0;
    case U_RELU:
      return v > 0 ? v : 0;
    case U_CLIP:
      v = v < lo ? lo : v;
      return v > hi ? hi : v;
    default:
      return v;
  }
}

static bool int_ok(int op) {
  return op == U_ABS || op == U_NEG || op == U_SIGN || op == U_RELU || op == U_CLIP ||
         op == U_SHRINK;
}

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i ? i->name : "?";
}

OX_LEVEL_BODY void un_f32_fast_c(const un_state *s, const float *x, float *y, int64_t n, float lo,
                                 float hi) {
  if (s->op == U_EXP) {
    oc_exp_f32(x, y, n);
    return;
  }
  if (s->op == U_ERF) { /* the same function as in fused chains (bit-identical) */
    oc_erf_f32(x, y, n);
    return;
  }
  if (s->op == U_TANH) { /* likewise */
    oc_tanh_f32(x, y, n);
    return;
  }
  if (s->op == U_LEAKY) { /* x < 0 ? alpha * x : x, choosing by the sign bit */
    float al = (float)s->alpha;
    for (int64_t k = 0; k < n; k++) y[k] = oc_neg_scale_f32(x[k], al);
    return;
  }
  if (s->op == U_GELU) { /* (x * (erf(x / sqrt 2) + 1)) * 0.5: vector erf */
    const oc_gelu_erf g = {1.41421353816986083984375f, 1.0f, 0.5f, false};
    oc_gelu_erf_f32(x, y, n, &g);
    return;
  }
  if (s->op == U_GELU_TANH) { /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), vector tanh */
    ox_unary_gelu_tanh_f32(x, y, n);
    return;
  }
  if (s->op == U_SIGMOID || s->op == U_SWISH) { /* the function of fused chains too */
    oc_sigmoid_f32(x, y, n, s->op == U_SWISH ? (float)s->alpha : 1.0f, s->op == U_SWISH);
    return;
  }
  un_f32_c(s, x, y, n, lo, hi);
}
OX_LEVELS_VOID(un_f32_fast,
               (const un_state *s, const float *x, float *y, int64_t n, float lo, float hi), s, x,
               y, n, lo, hi)

typedef struct un_job {
  const un_state *s;
  const void *x;
  void *y;
  int32_t dt;
  double lo, hi;
  OX_LEVEL_PTR(un_f32_fast) f32; /* the loops of the level in use */
  OX_LEVEL_PTR(un_f64) f64;
} un_job;

static void un_chunk(void *arg, int64_t b, int64_t e) {
  const un_job *j = arg;
  int64_t n = e - b;
  if (j->dt == OX_FLOAT)
    j->f32(j->s, (const float *)j->x + b, (float *)j->y + b, n, (float)j->lo, (float)j->hi);
  else if (j->dt == OX_DOUBLE)
    j->f64(j->s, (const double *)j->x + b, (double *)j->y + b, n, j->lo, j->hi);
  else {
    float bx[512], by[512];
    size_t es = ox_value_elem_size(j->dt);
    for (int64_t s = 0; s < n; s += 512) {
      int64_t m = n - s < 512 ? n - s : 512;
      const uint8_t *src = (const uint8_t *)j->x + (size_t)(b + s) * es;
      oc_to_f32(src, j->dt, bx, m);
      j->f32(j->s, bx, by, m, (float)j->lo, (float)j->hi);
      oc_from_f32(by, j->dt, (uint8_t *)j->y + (size_t)(b + s) * es, m);
    }
  }
}

static int un_prepare(const ox_kinfo *info, void **state, ox_err *e, int op, double alpha,
                      double beta, double gamma) {
  un_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const ox_node *n = info->node;
  s->op = op;
  s->alpha = ox_node_attr_float(n, "alpha", (float)alpha);
  s->beta = ox_node_attr_float(n, "beta", (float)beta);
  s->gamma = ox_node_attr_float(n, "gamma", (float)gamma);
  if (op == U_SHRINK) {
    s->beta = ox_node_attr_float(n, "bias", 0.0f);
    s->gamma = ox_node_attr_float(n, "lambd", 0.5f);
  }
  if (op == U_GELU) {
    const char *ap = ox_node_attr_str(n, "approximate", "none");
    if (strcmp(ap, "tanh") == 0)
      s->op = U_GELU_TANH;
    else if (strcmp(ap, "none") != 0)
      return oc_prep_fail(info, e, "approximate must be 'none' or 'tanh', not '%s'", ap);
  }
  if (op == U_CLIP) {
    s->clip_inputs = info->since_version >= 11;
    s->alpha = ox_node_attr_float(n, "min", -FLT_MAX);
    s->beta = ox_node_attr_float(n, "max", FLT_MAX);
  }
  if (op == U_ISINF) {
    s->det_pos = ox_node_attr_int(n, "detect_positive", 1) != 0;
    s->det_neg = ox_node_attr_int(n, "detect_negative", 1) != 0;
  }
  *state = s;
  return OX_OK;
}

int ox_unary_run(ox_kctx *ctx, void *state) {
  const un_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input 0 must be a tensor");
  int32_t dt = x->dtype;
  bool flt = oc_is_float(dt);
  if (s->op == U_ISNAN || s->op == U_ISINF) {
    if (!flt)
      return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
    ox_value *y = ox_kctx_output(ctx, 0, OX_BOOL, x->dims, x->rank);
    if (!y) return OX_ENOMEM;
    uint8_t *o = y->data;
    for (int64_t i = 0; i < x->numel; i++) {
      double v = oc_get(x->data, dt, i);
      bool r = s->op == U_ISNAN ? isnan(v) != 0
                                : (isinf(v) && ((v > 0 && s->det_pos) || (v < 0 && s->det_neg)));
      o[i] = r ? 1 : 0;
    }
    return OX_OK;
  }
  bool num_flt = dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
  bool intt = oc_is_int(dt) && ox_value_elem_size(dt) >= 1 && dt != OX_INT4 && dt != OX_UINT4 &&
              dt != OX_INT2 && dt != OX_UINT2;
  if (!num_flt && !(intt && int_ok(s->op)))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  double lo = s->alpha, hi = s->beta;
  if (s->op == U_CLIP) {
    if (s->clip_inputs) {
      lo = -INFINITY;
      hi = INFINITY;
      if (intt) {
        lo = oc_is_unsigned(dt) ? 0 : -9.3e18;
        hi = 1.9e19;
      }
      for (size_t k = 1; k <= 2; k++) {
        ox_value *b = ox_kctx_input(ctx, k);
        if (!b) continue;
        if (b->kind != OX_VAL_TENSOR || b->numel != 1 || b->dtype != dt)
          return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be a scalar of the input's type",
                              k == 1 ? "min" : "max");
        double v = oc_get(b->data, dt, 0);
        if (k == 1)
          lo = v;
        else
          hi = v;
      }
    }
  }
  ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  if (!num_flt) {
    int64_t ilo = INT64_MIN, ihi = INT64_MAX;
    if (s->op == U_CLIP && s->clip_inputs) {
      ox_value *b = ox_kctx_input(ctx, 1), *c = ox_kctx_input(ctx, 2);
      if (b) ilo = oc_get_i64(b->data, dt, 0);
      if (c) ihi = oc_get_i64(c->data, dt, 0);
    }
    if (dt == OX_UINT64) {
      const uint64_t *a = x->data;
      uint64_t *o = y->data;
      uint64_t ulo = (uint64_t)ilo, uhi = (uint64_t)ihi;
      if (!ox_kctx_input(ctx, 1)) ulo = 0;
      if (!ox_kctx_input(ctx, 2)) uhi = UINT64_MAX;
      for (int64_t i = 0; i < x->numel; i++) {
        uint64_t v = a[i];
        if (s->op == U_CLIP) {
          v = v < ulo ? ulo : v;
          v = v > uhi ? uhi : v;
        } else if (s->op == U_SIGN)
          v = v != 0;
        o[i] = v;
      }
      return OX_OK;
    }
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t v = oc_get_i64(x->data, dt, i);
      if (s->op == U_SHRINK) {
        double d = (double)v, r = d < -s->gamma ? d + s->beta : d > s->gamma ? d - s->beta : 0;
        oc_set(y->data, dt, i, r);
      } else
        oc_set_i64(y->data, dt, i, un_int(s, v, ilo, ihi));
    }
    return OX_OK;
  }
  un_job j = {s, x->data, y->data, dt, lo, hi, OX_LEVEL_PICK(un_f32_fast), OX_LEVEL_PICK(un_f64)};
  ox_parallel_for(ox_kctx_pool(ctx), x->numel, 16384, un_chunk, &j);
  return OX_OK;
}

/* SwiGLU-28: Y = Swish_alpha(A) * B, identical shapes, no broadcasting */
static int swiglu_run(ox_kctx *ctx, void *state) {
  const un_state *s = state;
  ox_value *a = ox_kctx_input(ctx, 0), *b = ox_kctx_input(ctx, 1);
  if (!a || !b || a->kind != OX_VAL_TENSOR || b->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A and B must be tensors");
  int32_t dt = a->dtype;
  if (dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_FLOAT16 && dt != OX_BFLOAT16)
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  if (b->dtype != dt || !ox_shape_equal(a->dims, a->rank, b->dims, b->rank))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A and B must have the same type and shape");
  ox_value *y = ox_kctx_output(ctx, 0, dt, a->dims, a->rank);
  if (!y) return OX_ENOMEM;
  un_job j = {s, a->data, y->data, dt, 0, 0, OX_LEVEL_PICK(un_f32_fast), OX_LEVEL_PICK(un_f64)};
  ox_parallel_for(ox_kctx_pool(ctx), a->numel, 16384, un_chunk, &j);
  if (dt == OX_FLOAT) {
    float *o = y->data;
    const float *v = b->data;
    for (int64_t i = 0; i < a->numel; i++) o[i] *= v[i];
  } else
    for (int64_t i = 0; i < a->numel; i++)
      oc_set(y->data, dt, i, oc_get(y->data, dt, i) * oc_get(b->data, dt, i));
  return OX_OK;
}

#define PREP(NAME, OP, A, B, G)                                           \
  static int prep_##NAME(const ox_kinfo *info, void **state, ox_err *e) { \
    return un_prepare(info, state, e, OP, A, B, G);                       \
  }
PREP(abs, U_ABS, 0, 0, 0)
PREP(neg, U_NEG, 0, 0, 0)
PREP(recip, U_RECIP, 0, 0, 0)
PREP(floor, U_FLOOR, 0, 0, 0)
PREP(ceil, U_CEIL, 0, 0, 0)
PREP(round, U_ROUND, 0, 0, 0)
PREP(sqrt, U_SQRT, 0, 0, 0)
PREP(exp, U_EXP, 0, 0, 0)
PREP(log, U_LOG, 0, 0, 0)
PREP(sin, U_SIN, 0, 0, 0)
PREP(cos, U_COS, 0, 0, 0)
PREP(tan, U_TAN, 0, 0, 0)
PREP(asin, U_ASIN, 0, 0, 0)
PREP(acos, U_ACOS, 0, 0, 0)
PREP(atan, U_ATAN, 0, 0, 0)
PREP(sinh, U_SINH, 0, 0, 0)
PREP(cosh, U_COSH, 0, 0, 0)
PREP(asinh, U_ASINH, 0, 0, 0)
PREP(acosh, U_ACOSH, 0, 0, 0)
PREP(atanh, U_ATANH, 0, 0, 0)
PREP(tanh, U_TANH, 0, 0, 0)
PREP(erf, U_ERF, 0, 0, 0)
PREP(sign, U_SIGN, 0, 0, 0)
PREP(isnan, U_ISNAN, 0, 0, 0)
PREP(isinf, U_ISINF, 0, 0, 0)
PREP(relu, U_RELU, 0, 0, 0)
PREP(leaky, U_LEAKY, 0.01, 0, 0)
PREP(elu, U_ELU, 1.0, 0, 0)
PREP(selu, U_SELU, 1.67326319217681884765625, 0, 1.05070102214813232421875)
PREP(celu, U_CELU, 1.0, 0, 0)
PREP(sigmoid, U_SIGMOID, 0, 0, 0)
PREP(hsigmoid, U_HSIGMOID, 0.2, 0.5, 0)
PREP(hswish, U_HSWISH, 0, 0, 0)
PREP(softplus, U_SOFTPLUS, 0, 0, 0)
PREP(softsign, U_SOFTSIGN, 0, 0, 0)
PREP(gelu, U_GELU, 0, 0, 0)
PREP(mish, U_MISH, 0, 0, 0)
PREP(threlu, U_THRELU, 1.0, 0, 0)
PREP(shrink, U_SHRINK, 0, 0, 0)
PREP(clip, U_CLIP, 0, 0, 0)
PREP(swish, U_SWISH, 1.0, 0, 0)
PREP(swiglu, U_SWISH, 1.0, 0, 0)

/* QuickGelu (com.microsoft): x * Sigmoid(alpha x), alpha 1.702 unless given */
int ox_unary_prepare_quick_gelu(const ox_kinfo *info, void **state, ox_err *e) {
  return un_prepare(info, state, e, U_SWISH, 1.702, 0, 0);
}

/* com.microsoft's GELU forms (contrib/nn.c): Gelu and BiasGelu the erf
 * one, FastGelu the tanh one; they have no attributes */
int ox_unary_prepare_gelu_form(const ox_kinfo *info, void **state, ox_err *e, bool tanh_form) {
  int rc = un_prepare(info, state, e, U_GELU, 0, 0, 0);
  if (!rc) ((un_state *)*state)->op = tanh_form ? U_GELU_TANH : U_GELU;
  return rc;
}

void ox_unary_apply(const void *state, ox_thread_pool *pool, int32_t dt, const void *x, void *y,
                    int64_t n) {
  un_job j = {state, x, y, dt, 0, 0, OX_LEVEL_PICK(un_f32_fast), OX_LEVEL_PICK(un_f64)};
  ox_parallel_for(pool, n, 16384, un_chunk, &j);
}

#define UN(OP, P, LO) \
  { "", OP, LO, 1000, prep_##P, ox_unary_run, NULL }

const ox_kernel_def ox_ops_unary[] = {
    UN("Abs", abs, 1),
    UN("Neg", neg, 1),
    UN("Reciprocal", recip, 1),
    UN("Floor", floor, 1),
    UN("Ceil", ceil, 1),
    UN("Round", round, 11),
    UN("Sqrt", sqrt, 1),
    UN("Exp", exp, 1),
    UN("Log", log, 1),
    UN("Sin", sin, 7),
    UN("Cos", cos, 7),
    UN("Tan", tan, 7),
    UN("Asin", asin, 7),
    UN("Acos", acos, 7),
    UN("Atan", atan, 7),
    UN("Sinh", sinh, 9),
    UN("Cosh", cosh, 9),
    UN("Asinh", asinh, 9),
    UN("Acosh", acosh, 9),
    UN("Atanh", atanh, 9),
    UN("Tanh", tanh, 1),
    UN("Erf", erf, 9),
    UN("Sign", sign, 9),
    UN("IsNaN", isnan, 9),
    UN("IsInf", isinf, 10),
    UN("Relu", relu, 1),
    UN("LeakyRelu", leaky, 1),
    UN("Elu", elu, 1),
    UN("Selu", selu, 1),
    UN("Celu", celu, 12),
    UN("Sigmoid", sigmoid, 1),
    UN("HardSigmoid", hsigmoid, 1),
    UN("HardSwish", hswish, 14),
    UN("Softplus", softplus, 1),
    UN("Softsign", softsign, 1),
    UN("Gelu", gelu, 20),
    UN("Mish", mish, 18),
    UN("ThresholdedRelu", threlu, 10),
    UN("Shrink", shrink, 9),
    {"", "Clip", 1, 10, prep_clip, ox_unary_run, NULL},
    {"", "Clip", 11, 1000, prep_clip, ox_unary_run, NULL},
    UN("Swish", swish, 24),
    {"", "SwiGLU", 28, 1000, prep_swiglu, swiglu_run, NULL},
    {0},
};
