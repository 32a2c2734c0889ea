/* softmax.c - Softmax, LogSoftmax, Hardmax. Before opset 13 the input is
 * coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])] (axis default 1);
 * from 13 the function runs along one axis (default -1). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../opcore.h"

enum { SM_SOFT, SM_LOG, SM_HARD };

typedef struct sm_state {
  int op;
  bool coerce2d;
  int64_t axis;
} sm_state;

static int sm_prepare(const ox_kinfo *info, void **state, ox_err *e, int op) {
  sm_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->op = op;
  s->coerce2d = info->since_version < 13;
  s->axis = ox_node_attr_int(info->node, "axis", s->coerce2d ? 1 : -1);
  *state = s;
  return OX_OK;
}
static int prep_soft(const ox_kinfo *info, void **state, ox_err *e) {
  return sm_prepare(info, state, e, SM_SOFT);
}
static int prep_log(const ox_kinfo *info, void **state, ox_err *e) {
  return sm_prepare(info, state, e, SM_LOG);
}
static int prep_hard(const ox_kinfo *info, void **state, ox_err *e) {
  return sm_prepare(info, state, e, SM_HARD);
}

typedef struct sm_job {
  int op;
  int64_t n, inner;
  int32_t dt;
  const void *x;
  void *y;
  atomic_bool oom;
} sm_job;

/* one group of n values at stride `inner` */
#define DEF_SM(T, NAME, EXP, LOG)                                          \
  static void sm_##NAME(int op, const T *x, T *y, int64_t n, int64_t st) { \
    T m = x[0];                                                            \
    int64_t am = 0;                                                        \
    for (int64_t k = 1; k < n; k++)                                        \
      if (x[k * st] > m || (isnan(x[k * st]) && !isnan(m))) {              \
        m = x[k * st];                                                     \
        am = k;                                                            \
      }                                                                    \
    if (op == SM_HARD) {                                                   \
      for (int64_t k = 0; k < n; k++) y[k * st] = k == am ? (T)1 : (T)0;   \
      return;                                                              \
    }                                                                      \
    double sum = 0;                                                        \
    if (op == SM_SOFT) {                                                   \
      for (int64_t k = 0; k < n; k++) {                                    \
        T v = EXP(x[k * st] - m);                                          \
        y[k * st] = v;                                                     \
        sum += v;                                                          \
      }                                                                    \
      T inv = (T)(1.0 / sum);                                              \
      for (int64_t k = 0; k < n; k++) y[k * st] *= inv;                    \
    } else {                                                               \
      for (int64_t k = 0; k < n; k++) sum += EXP(x[k * st] - m);           \
      T lse = (T)log(sum);                                                 \
      for (int64_t k = 0; k < n; k++) y[k * st] = x[k * st] - m - lse;     \
    }                                                                      \
  }

DEF_SM(float, f32, expf, logf)
DEF_SM(double, f64, exp, log)

static void sm_chunk(void *arg, int64_t b, int64_t e) {
  sm_job *j = arg;
  /* contiguous float32 rows: kernels/vmath.h's, with the vectorisable
   * exponential */
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  int64_t n = j->n, inner = j->inner;
  float *buf = NULL, *obuf = NULL;
  if (j->dt != OX_FLOAT && j->dt != OX_DOUBLE) {
    buf = malloc((size_t)n * 2 * sizeof(float));
    if (!buf) {
      atomic_store(&j->oom, true);
      return;
    }
    obuf = buf + n;
  }
  for (int64_t g = b; g < e; g++) {
    int64_t a = g / inner, c = g % inner, base = a * n * inner + c;
    if (j->dt == OX_FLOAT && inner == 1 && j->op != SM_HARD)
      vk->softmax_row((const float *)j->x + base, (float *)j->y + base, n, j->op == SM_LOG);
    else if (j->dt == OX_FLOAT)
      sm_f32(j->op, (const float *)j->x + base, (float *)j->y + base, n, inner);
    else if (j->dt == OX_DOUBLE)
      sm_f64(j->op, (const double *)j->x + base, (double *)j->y + base, n, inner);
    else if (inner == 1) {
      /* a contiguous 16-bit row: widened in bulk, then the float32 row
       * kernel (attention scores of float16 models run here) */
      oc_to_f32((const uint16_t *)j->x + base, j->dt, buf, n);
      if (j->op == SM_HARD)
        sm_f32(j->op, buf, obuf, n, 1);
      else
        vk->softmax_row(buf, obuf, n, j->op == SM_LOG);
      oc_from_f32(obuf, j->dt, (uint16_t *)j->y + base, n);
    } else {
      for (int64_t k = 0; k < n; k++) buf[k] = (float)oc_get(j->x, j->dt, base + k * inner);
      sm_f32(j->op, buf, obuf, n, 1);
      for (int64_t k = 0; k < n; k++) oc_set(j->y, j->dt, base + k * inner, obuf[k]);
    }
  }
  free(buf);
}

static int sm_run(ox_kctx *ctx, void *state) {
  const sm_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  int32_t dt = x->dtype;
  if (dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_FLOAT16 && dt != OX_BFLOAT16)
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported",
                        ox_dtype_get(dt) ? ox_dtype_get(dt)->name : "?");
  size_t rank = x->rank;
  int64_t outer = 1, n = 1, inner = 1;
  if (rank > 0) {
    int64_t r = (int64_t)rank;
    if (s->axis < -r || s->axis > (s->coerce2d ? r : r - 1))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "axis %lld out of range for rank %zu",
                          (long long)s->axis, rank);
    size_t axis = (size_t)(s->axis < 0 ? s->axis + r : s->axis);
    for (size_t d = 0; d < axis; d++) outer *= x->dims[d];
    if (s->coerce2d) {
      for (size_t d = axis; d < rank; d++) n *= x->dims[d];
    } else {
      n = x->dims[axis];
      for (size_t d = axis + 1; d < rank; d++) inner *= x->dims[d];
    }
  }
  ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  if (x->numel == 0 || n == 0) return OX_OK;
  sm_job j = {s->op, n, inner, dt, x->data, y->data, false};
  int64_t groups = outer * inner;
  int64_t grain = 16384 / n + 1;
  ox_parallel_for(ox_kctx_pool(ctx), groups, grain, sm_chunk, &j);
  if (atomic_load(&j.oom)) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  return OX_OK;
}

const ox_kernel_def ox_ops_softmax[] = {
    {"", "Softmax", 1, 12, prep_soft, sm_run, NULL},
    {"", "Softmax", 13, 1000, prep_soft, sm_run, NULL},
    {"", "LogSoftmax", 1, 12, prep_log, sm_run, NULL},
    {"", "LogSoftmax", 13, 1000, prep_log, sm_run, NULL},
    {"", "Hardmax", 1, 12, prep_hard, sm_run, NULL},
    {"", "Hardmax", 13, 1000, prep_hard, sm_run, NULL},
    {0},
};
