/* qfused.c - the integer elementwise nodes the session makes from QDQ
 * units (src/opt/qdq_eltwise.c), domain ai.onnxc:
 *
 *  QLookupFused (x, x_scale, x_zero_point, y_scale, y_zero_point [, min, max])
 *    attributes: op (Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid,
 *    HardSwish) and that op's own. y = table[x], the table being
 *    QuantizeLinear(op(DequantizeLinear(v))) for each of the 256 bytes v —
 *    built once in prepare when the scales and zero points are constants.
 *  QAddFused (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
 *    y_zero_point), attribute relu: y = saturate(round(a' sa/sy + b' sb/sy
 *    (, at least 0)) + zy), numpy broadcasting; zero points per tensor.
 *
 * Both follow DequantizeLinear and QuantizeLinear: dequantizing in float,
 * rounding half to even, saturating to the output type, a NaN giving 0.
 *
 * onnxruntime's com.microsoft QLinearSigmoid, QLinearLeakyRelu, QLinearAdd
 * and QLinearMul (src/ops/contrib/quant_eltwise.c) have the same inputs and
 * run on these kernels through qfused.h: there an absent output zero point
 * gives the input's type, not uint8, and QLinearMul multiplies. */
#include "qfused.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/q8.h"
#include "../../runtime/kernel.h"
#include "../fused.h"
#include "../opcore.h"

static bool is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

/* The quantization parameters of a unit, read from its scalar inputs. */
typedef struct qp {
  float xs, ys, lo, hi;
  int32_t xz, yz, xtype, ytype;
} qp;

/* A scalar 8-bit zero point (NULL: 0 of uint8); NULL or a message. */
static const char *zero_point(const ox_value *z, int32_t *v, int32_t *type, const char *what) {
  *v = 0;
  *type = OX_UINT8;
  if (!z) return NULL;
  if (!is_q8(z->dtype) || z->numel != 1) return what;
  *type = z->dtype;
  *v = z->dtype == OX_UINT8 ? *(const uint8_t *)z->data : *(const int8_t *)z->data;
  return NULL;
}

static const char *scale_of(const ox_value *s, float *v, const char *what) {
  if (!s || s->dtype != OX_FLOAT || s->numel != 1) return what;
  *v = *(const float *)s->data;
  return NULL;
}

/* QuantizeLinear of one float: x / scale, round half to even, + zp,
 * saturate; a NaN gives 0 */
static uint8_t quantize1(float x, float scale, int32_t zp, bool sign) {
  float q = x / scale;
  if (q != q) return 0;
  double r = nearbyint((double)q) + zp;
  double lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  return (uint8_t)(int32_t)(r < lo ? lo : r > hi ? hi : r);
}

/* ---------------------------------------------------------------- lookup */

typedef enum { LK_RELU, LK_LEAKY, LK_CLIP, LK_SIGMOID, LK_TANH, LK_HSIGMOID, LK_HSWISH } lk_op;

typedef struct lk_state {
  lk_op op;
  float alpha, beta, lo, hi; /* op attributes; Clip's bounds before opset 11 */
  bool has_table;
  bool y_as_x; /* no y_zero_point: y has x's type (the com.microsoft forms) */
  qp p;        /* of the table */
  uint8_t table[256];
} lk_state;

static float lk_apply(const lk_state *s, float x, float lo, float hi) {
  switch (s->op) {
    case LK_RELU:
      return x < 0 ? 0 : x;
    case LK_LEAKY:
      return x < 0 ? s->alpha * x : x;
    case LK_CLIP:
      return x < lo ? lo : x > hi ? hi : x;
    case LK_SIGMOID:
      return 1.0f / (1.0f + expf(-x));
    case LK_TANH:
      return tanhf(x);
    case LK_HSIGMOID: {
      float v = s->alpha * x + s->beta;
      return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case LK_HSWISH: {
      float v = x / 6.0f + 0.5f;
      return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
  }
  return x;
}

/* inputs: 1 xs, 2 xz, 3 ys, 4 yz, 5 min, 6 max; NULL or what is wrong */
static const char *lk_params(const lk_state *s, ox_value *const *in, qp *p) {
  const char *bad;
  p->lo = s->lo;
  p->hi = s->hi;
  if ((bad = scale_of(in[1], &p->xs, "x_scale must be one float")) ||
      (bad = scale_of(in[3], &p->ys, "y_scale must be one float")) ||
      (bad = zero_point(in[2], &p->xz, &p->xtype, "x_zero_point must be one int8/uint8")) ||
      (bad = zero_point(in[4], &p->yz, &p->ytype, "y_zero_point must be one int8/uint8")))
    return bad;
  if (in[5] && (bad = scale_of(in[5], &p->lo, "min must be one float"))) return bad;
  if (in[6] && (bad = scale_of(in[6], &p->hi, "max must be one float"))) return bad;
  return NULL;
}

static void lk_build(const lk_state *s, const qp *p, uint8_t *t) {
  bool xsig = p->xtype == OX_INT8, ysig = p->ytype == OX_INT8;
  for (int b = 0; b < 256; b++) {
    int32_t xv = xsig ? (int8_t)b : b;
    float real = (float)(xv - p->xz) * p->xs;
    t[b] = quantize1(lk_apply(s, real, p->lo, p->hi), p->ys, p->yz, ysig);
  }
}

static bool given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

/* the lookup of operator `op` (op_len bytes; NULL: none given) */
static int lk_prepare_as(const ox_kinfo *info, void **state, ox_err *e, const char *op,
                         size_t op_len, bool y_as_x) {
  static const char *const names[] = {"Relu", "LeakyRelu",   "Clip",     "Sigmoid",
                                      "Tanh", "HardSigmoid", "HardSwish"};
  const ox_node *n = info->node;
  lk_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t k = 0;
  for (; op && k < sizeof names / sizeof *names; k++)
    if (op_len == strlen(names[k]) && memcmp(op, names[k], op_len) == 0) break;
  if (!op || k == sizeof names / sizeof *names)
    return oc_prep_fail(info, e, "unknown lookup operator");
  s->op = (lk_op)k;
  s->y_as_x = y_as_x;
  s->alpha = ox_node_attr_float(n, "alpha", s->op == LK_LEAKY ? 0.01f : 0.2f);
  s->beta = ox_node_attr_float(n, "beta", 0.5f);
  s->lo = ox_node_attr_float(n, "min", -INFINITY);
  s->hi = ox_node_attr_float(n, "max", INFINITY);
  *state = s;
  /* the table now when every parameter is a constant */
  ox_value *in[7] = {0};
  for (size_t i = 1; i < 7; i++) {
    in[i] = info->const_inputs && i < info->n_inputs ? info->const_inputs[i] : NULL;
    if (given(n, i) && !in[i]) return OX_OK;
  }
  if (!lk_params(s, in, &s->p) && !(y_as_x && !given(n, 4))) {
    lk_build(s, &s->p, s->table);
    s->has_table = true;
  }
  return OX_OK;
}

static int lk_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_attr *op = ox_node_attr(info->node, "op");
  return lk_prepare_as(info, state, e, op ? (const char *)op->s.data : NULL, op ? op->s.size : 0,
                       false);
}

int ox_qlookup_prepare_op(const ox_kinfo *info, void **state, ox_err *e, const char *op) {
  return lk_prepare_as(info, state, e, op, strlen(op), true);
}

typedef struct lk_job {
  const uint8_t *t, *x;
  uint8_t *y;
} lk_job;

static void lk_task(void *arg, int64_t i0, int64_t i1) {
  const lk_job *j = arg;
  ox_q8_kernels_get()->lookup(j->t, j->x + i0, j->y + i0, i1 - i0);
}

static int lk_run(ox_kctx *ctx, void *st) {
  lk_state *s = st;
  ox_value *in[7];
  for (size_t i = 0; i < 7; i++) in[i] = ox_kctx_input(ctx, i);
  ox_value *x = in[0];
  if (!x || !is_q8(x->dtype)) return ox_kctx_fail(ctx, OX_ERUNTIME, "x must be int8 or uint8");
  qp p;
  uint8_t local[256];
  const uint8_t *t = s->table;
  if (s->has_table) {
    p = s->p;
  } else {
    const char *bad = lk_params(s, in, &p);
    if (bad) return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", bad);
    lk_build(s, &p, local);
    t = local;
  }
  if (in[2] && p.xtype != x->dtype)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x and x_zero_point have different types");
  if (s->y_as_x && in[4] && p.ytype != x->dtype)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x and y_zero_point have different types");
  if (s->y_as_x && !in[4]) p.ytype = x->dtype;          /* then never a table of prepare */
  if ((!in[2] && x->dtype != OX_UINT8) || t == local) { /* the table assumed uint8 */
    p.xtype = x->dtype;
    lk_build(s, &p, local);
    t = local;
  }
  ox_value *y = ox_kctx_output(ctx, 0, p.ytype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  lk_job j = {t, x->data, y->data};
  ox_parallel_for(ox_kctx_pool(ctx), x->numel, 65536, lk_task, &j);
  return OX_OK;
}

/* ---------------------------------------------------------------- add */

typedef struct add_job {
  const uint8_t *a, *b;
  uint8_t *y;
  bool as, bs, ys; /* signed */
  float ka, kb, c, lo, hi;
  /* degenerate scales (a zero y_scale ...): dequantize, add and quantize as written */
  bool exact, relu;
  bool mul; /* QLinearMul: y = round((a - za)(b - zb) ka + zy), ka = sa sb / sy */
  float sa, sb, sy;
  int32_t za, zb, zy;
} add_job;

/* y = round(a ka + b kb + c) clamped, c holding -za ka - zb kb + zy */
static void add_run_fn(void *arg, const int64_t *off, const int64_t *step, int64_t out_off,
                       int64_t n) {
  const add_job *j = arg;
  const uint8_t *a = j->a + off[0], *b = j->b + off[1];
  uint8_t *y = j->y + out_off;
  int64_t sa = step[0], sb = step[1];
  if (j->mul) {
    for (int64_t i = 0; i < n; i++) {
      float av = (float)((j->as ? (int8_t)a[i * sa] : a[i * sa]) - j->za);
      float bv = (float)((j->bs ? (int8_t)b[i * sb] : b[i * sb]) - j->zb);
      float v = nearbyintf(av * bv * j->ka) + (float)j->zy;
      y[i] = (uint8_t)(int32_t)(v != v ? 0 : ox_q8_clamp(v, j->lo, j->hi));
    }
    return;
  }
  if (j->exact) {
    for (int64_t i = 0; i < n; i++) {
      float av = (float)((j->as ? (int8_t)a[i * sa] : a[i * sa]) - j->za) * j->sa;
      float bv = (float)((j->bs ? (int8_t)b[i * sb] : b[i * sb]) - j->zb) * j->sb;
      float v = av + bv;
      if (j->relu && v < 0) v = 0;
      y[i] = quantize1(v, j->sy, j->zy, j->ys);
    }
    return;
  }
  if (sa == 1 && sb == 1 && !j->as && !j->bs && !j->ys) {
    ox_q8_kernels_get()->add_u8(a, b, y, n, j->ka, j->kb, j->c, j->lo, j->hi);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    float av = j->as ? (float)(int8_t)a[i * sa] : (float)a[i * sa];
    float bv = j->bs ? (float)(int8_t)b[i * sb] : (float)b[i * sb];
    y[i] = (uint8_t)ox_q8_round_small(ox_q8_clamp(av * j->ka + bv * j->kb + j->c, j->lo, j->hi));
  }
}

static void add_range(void *arg, int64_t i0, int64_t i1) {
  const int64_t off[2] = {i0, i0}, step[2] = {1, 1};
  add_run_fn(arg, off, step, i0, i1 - i0);
}

static int add_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)e;
  *state = (void *)(uintptr_t)(ox_node_attr_int(info->node, "relu", 0) != 0);
  return OX_OK;
}

/* state: the ADD_* bits */
enum { ADD_RELU = 1, ADD_Y_AS_A = 2, ADD_MUL = 4 };

static int add_run(ox_kctx *ctx, void *st) {
  unsigned flags = (unsigned)(uintptr_t)st;
  bool relu = (flags & ADD_RELU) != 0;
  ox_value *in[8];
  for (size_t i = 0; i < 8; i++) in[i] = ox_kctx_input(ctx, i);
  ox_value *a = in[0], *b = in[3];
  if (!a || !b || !is_q8(a->dtype) || !is_q8(b->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A and B must be int8 or uint8");
  float sa, sb, sy;
  int32_t za, zb, zy, ta, tb, ty;
  const char *bad;
  if ((bad = scale_of(in[1], &sa, "a_scale must be one float")) ||
      (bad = scale_of(in[4], &sb, "b_scale must be one float")) ||
      (bad = scale_of(in[6], &sy, "y_scale must be one float")) ||
      (bad = zero_point(in[2], &za, &ta, "a_zero_point must be one int8/uint8")) ||
      (bad = zero_point(in[5], &zb, &tb, "b_zero_point must be one int8/uint8")) ||
      (bad = zero_point(in[7], &zy, &ty, "y_zero_point must be one int8/uint8")))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", bad);
  if ((in[2] && ta != a->dtype) || (in[5] && tb != b->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "an input and its zero point have different types");
  if ((flags & ADD_Y_AS_A) && (a->dtype != b->dtype || (in[7] && ty != a->dtype)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A, B and C_zero_point must have one type");
  if ((flags & ADD_Y_AS_A) && !in[7]) ty = a->dtype;
  oc_bcast bc;
  ox_value *ab[2] = {a, b};
  if (oc_bcast_values(&bc, ctx, ab, 2)) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, ty, bc.out_dims, bc.out_rank);
  if (!y) return OX_ERUNTIME;
  add_job j = {a->data, b->data, y->data, a->dtype == OX_INT8, b->dtype == OX_INT8, ty == OX_INT8};
  /* the float path rounds (a' sa + b' sb) / sy; folding the scales changes
   * only values on a rounding boundary. A zero or non-finite factor is left
   * to the exact formula, element by element. */
  double ka = (double)sa / sy, kb = (double)sb / sy;
  j.ka = (float)ka;
  j.kb = (float)kb;
  j.c = (float)(zy - za * ka - zb * kb);
  j.lo = j.ys ? -128.0f : 0.0f;
  j.hi = j.ys ? 127.0f : 255.0f;
  if (relu && (float)zy > j.lo) j.lo = (float)zy;
  j.exact = !isfinite(j.ka) || !isfinite(j.kb) || !isfinite(j.c);
  j.sa = sa;
  j.sb = sb;
  j.sy = sy;
  j.za = za;
  j.zb = zb;
  j.zy = zy;
  j.relu = relu;
  j.mul = (flags & ADD_MUL) != 0;
  if (j.mul) j.ka = sa * sb / sy; /* onnxruntime's factor, in float */
  if (a->numel == y->numel && b->numel == y->numel) {
    /* same shapes: one run, split over the pool here (the broadcast walk
     * would hand it to one thread) */
    ox_parallel_for(ox_kctx_pool(ctx), y->numel, 16384, add_range, &j);
    return OX_OK;
  }
  oc_bcast_each(&bc, ox_kctx_pool(ctx), add_run_fn, &j);
  return OX_OK;
}

int ox_qlookup_run(ox_kctx *ctx, void *state) { return lk_run(ctx, state); }
int ox_qlinear_add_run(ox_kctx *ctx, void *state) {
  (void)state;
  return add_run(ctx, (void *)(uintptr_t)ADD_Y_AS_A);
}
int ox_qlinear_mul_run(ox_kctx *ctx, void *state) {
  (void)state;
  return add_run(ctx, (void *)(uintptr_t)(ADD_Y_AS_A | ADD_MUL));
}

const ox_kernel_def ox_ops_qfused[] = {
    {OX_FUSED_DOMAIN, "QLookupFused", 1, 1, lk_prepare, lk_run, NULL},
    {OX_FUSED_DOMAIN, "QAddFused", 1, 1, add_prepare, add_run, NULL},
    {0},
};
