/* reduce.c - Reduce* (axes as attribute or input by version, keepdims,
 * noop_with_empty_axes), ArgMax/ArgMin, CumSum/CumProd. Accumulation is in
 * double (exact for the integer ranges of the tests, more precise than
 * float32 for floats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/levels.h"
#include "../opcore.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };

typedef struct red_state {
  int op;
  bool axes_input; /* axes come from input 1 */
  bool keepdims, noop_empty;
  int64_t axes[OC_MAXRANK];
  size_t n_axes;
  bool has_axes_attr;
} red_state;

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i ? i->name : "?";
}

static int red_prepare(const ox_kinfo *info, void **state, ox_err *e, int op, int input_since) {
  red_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->op = op;
  s->axes_input = info->since_version >= input_since;
  s->keepdims = ox_node_attr_int(info->node, "keepdims", 1) != 0;
  s->noop_empty = ox_node_attr_int(info->node, "noop_with_empty_axes", 0) != 0;
  const ox_attr *ax = ox_node_attr(info->node, "axes");
  if (ax && !s->axes_input) {
    if (ax->n_ints > OC_MAXRANK) return oc_prep_fail(info, e, "too many axes");
    if (ax->n_ints) /* an empty or mistyped list has no array */
      memcpy(s->axes, ax->ints, ax->n_ints * sizeof *s->axes);
    s->n_axes = ax->n_ints;
    s->has_axes_attr = true;
  }
  *state = s;
  return OX_OK;
}

typedef struct red_plan {
  size_t rank;
  int64_t dims[OC_MAXRANK];
  int64_t ost[OC_MAXRANK]; /* output stride per input dim, 0 when reduced */
  int64_t out_numel, count;
} red_plan;

typedef void (*red_fn)(void *, int64_t, int64_t, int64_t, bool);

/* Walks the input in order; fn gets contiguous runs: input start, output
 * start, length, and whether the run is reduced into one output element.
 * Only rows whose index along dim `d` lies in [lo, hi) (d < rank - 1), and
 * of each row only columns [c0, c1): the walk of one task. */
static void red_walk_part(const red_plan *p, red_fn fn, void *arg, size_t d, int64_t lo,
                          int64_t hi, int64_t c0, int64_t c1) {
  size_t r = p->rank;
  int64_t ist[OC_MAXRANK], idx[OC_MAXRANK] = {0};
  bool red_inner = p->ost[r - 1] == 0;
  ist[r - 1] = 1;
  for (size_t k = r - 1; k-- > 0;) ist[k] = ist[k + 1] * p->dims[k + 1];
  for (size_t k = 0; k < r; k++)
    if (p->dims[k] == 0) return;
  if (lo >= hi || c0 >= c1) return;
  idx[d] = lo;
  int64_t i = lo * ist[d], o = lo * p->ost[d];
  for (;;) {
    fn(arg, i + c0, o + (red_inner ? 0 : c0), c1 - c0, red_inner);
    size_t k = r - 1;
    while (k-- > 0) {
      int64_t end = k == d ? hi : p->dims[k], start = k == d ? lo : 0;
      idx[k]++;
      i += ist[k];
      o += p->ost[k];
      if (idx[k] < end) break;
      i -= ist[k] * (end - start);
      o -= p->ost[k] * (end - start);
      idx[k] = start;
    }
    if (k == (size_t)-1) return;
  }
}

typedef struct walk_job {
  const red_plan *p;
  red_fn fn;
  void *arg;
  size_t d;          /* the split dim, or rank - 1: columns */
  int64_t per;       /* its indices (or columns) per task */
} walk_job;

static void walk_task(void *arg, int64_t t0, int64_t t1) {
  const walk_job *w = arg;
  const red_plan *p = w->p;
  size_t r = p->rank;
  int64_t lo = t0 * w->per, hi = t1 * w->per;
  if (w->d == r - 1) {
    if (hi > p->dims[r - 1]) hi = p->dims[r - 1];
    red_walk_part(p, w->fn, w->arg, 0, 0, p->dims[0], lo, hi);
  } else {
    if (hi > p->dims[w->d]) hi = p->dims[w->d];
    red_walk_part(p, w->fn, w->arg, w->d, lo, hi, 0, p->dims[r - 1]);
  }
}

/* The walk over the pool: tasks own disjoint output elements, so each is
 * accumulated by one thread in the order of the serial walk (the same
 * bits). Split along the largest kept dim before the last, else along the
 * last dim's columns when it is kept; a reduction to one value stays on
 * one thread (splitting it would change the order of its sum). */
static void red_walk(const red_plan *p, red_fn fn, void *arg, ox_thread_pool *pool) {
  size_t r = p->rank, d = r;
  int64_t total = 1;
  for (size_t k = 0; k < r; k++) total *= p->dims[k];
  if (total == 0) return;
  int nt = ox_thread_pool_size(pool);
  if (nt > 1 && total >= ((int64_t)1 << 15)) {
    for (size_t k = 0; k + 1 < r; k++)
      if (p->ost[k] != 0 && p->dims[k] > 1 && (d == r || p->dims[k] > p->dims[d])) d = k;
    if (d == r && p->ost[r - 1] != 0 && p->dims[r - 1] >= 64) d = r - 1;
  }
  if (d == r) {
    red_walk_part(p, fn, arg, 0, 0, p->dims[0], 0, p->dims[r - 1]);
    return;
  }
  int64_t n = p->dims[d], tasks = (int64_t)nt * 4 < n ? (int64_t)nt * 4 : n;
  walk_job w = {p, fn, arg, d, (n + tasks - 1) / tasks};
  if (d == r - 1 && w.per < 16) w.per = 16; /* whole vectors of columns */
  ox_parallel_for(pool, (n + w.per - 1) / w.per, 1, walk_task, &w);
}

typedef struct red_job {
  int op;
  const void *x;
  int32_t dt;
  double *acc;
  const double *mx; /* LogSumExp: max per output */
} red_job;

OX_LEVEL_BODY void red_run_fn_c(void *arg, int64_t i, int64_t o, int64_t n, bool one) {
  const red_job *j = arg;
  double *acc = j->acc + o;
  const float *xf = j->dt == OX_FLOAT ? (const float *)j->x + i : NULL;
  bool sums = j->op == R_SUM || j->op == R_MEAN || j->op == R_SUMSQ || j->op == R_L2;
  bool sq = j->op == R_SUMSQ || j->op == R_L2;
  if (xf && sums) { /* kernels/vmath.h's sums */
    ox_vmath_kernels_get()->sum_into(xf, n, sq, one, acc);
    return;
  }
  if (sums && (j->dt == OX_FLOAT16 || j->dt == OX_BFLOAT16)) {
    /* 16-bit values widened a block at a time (the normalisations of
     * float16 models reduce here), then the float32 sums */
    float block[256];
    for (int64_t c = 0; c < n; c += 256) {
      int64_t m = n - c < 256 ? n - c : 256;
      oc_to_f32((const uint16_t *)j->x + i + c, j->dt, block, m);
      ox_vmath_kernels_get()->sum_into(block, m, sq, one, one ? acc : acc + c);
    }
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    double v = xf ? xf[k] : oc_get(j->x, j->dt, i + k);
    double *a = one ? acc : acc + k;
    switch (j->op) {
      case R_SUM:
      case R_MEAN:
      case R_LOGSUM:
        *a += v;
        break;
      case R_MAX:
        *a = isnan(v) || isnan(*a) ? NAN : v > *a ? v : *a;
        break;
      case R_MIN:
        *a = isnan(v) || isnan(*a) ? NAN : v < *a ? v : *a;
        break;
      case R_PROD:
        *a *= v;
        break;
      case R_L1:
        *a += fabs(v);
        break;
      case R_L2:
      case R_SUMSQ:
        *a += v * v;
        break;
      case R_LOGSUMEXP: {
        double m = j->mx[one ? o : o + k];
        *a += isinf(m) ? exp(v) : exp(v - m);
        break;
      }
      default:
        break;
    }
  }
}
OX_LEVELS_VOID(red_run_fn, (void *arg, int64_t i, int64_t o, int64_t n, bool one), arg, i, o, n,
               one)

/* integer and bool inputs: exact int64 accumulation (wrap-around like the
 * element type) */
typedef struct ired_job {
  int op;
  const void *x;
  int32_t dt;
  int64_t *acc;
  bool u64;
} ired_job;

static void red_int_fn(void *arg, int64_t i, int64_t o, int64_t n, bool one) {
  const ired_job *j = arg;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = oc_get_i64(j->x, j->dt, i + k);
    int64_t *a = one ? j->acc + o : j->acc + o + k;
    uint64_t ua = (uint64_t)*a, uv = (uint64_t)v;
    switch (j->op) {
      case R_SUM:
      case R_MEAN:
        *a = (int64_t)(ua + uv);
        break;
      case R_PROD:
        *a = (int64_t)(ua * uv);
        break;
      case R_L1:
        *a = (int64_t)(ua + (uint64_t)(v < 0 && !j->u64 ? 0 - uv : uv));
        break;
      case R_SUMSQ:
        *a = (int64_t)(ua + uv * uv);
        break;
      case R_MAX:
        *a = (j->u64 ? uv > ua : v > *a) ? v : *a;
        break;
      case R_MIN:
        *a = (j->u64 ? uv < ua : v < *a) ? v : *a;
        break;
      default:
        break;
    }
  }
}

/* smallest and largest value of an integer or bool type, as int64 bits */
static void int_range(int32_t dt, int64_t *lo, int64_t *hi) {
  const ox_dtype_info *d = ox_dtype_get(dt);
  int bits = dt == OX_BOOL ? 1 : d ? d->bits : 64;
  if (dt == OX_UINT64) {
    *lo = 0;
    *hi = -1; /* UINT64_MAX */
  } else if (oc_is_unsigned(dt) || dt == OX_BOOL) {
    *lo = 0;
    *hi = (int64_t)((UINT64_C(1) << bits) - 1);
  } else if (bits >= 64) {
    *lo = INT64_MIN;
    *hi = INT64_MAX;
  } else {
    *lo = -(INT64_C(1) << (bits - 1));
    *hi = (INT64_C(1) << (bits - 1)) - 1;
  }
}

static int red_run_int(ox_kctx *ctx, int op, const red_plan *p, const ox_value *x, ox_value *y) {
  int64_t on = y->numel, lo, hi;
  int32_t dt = x->dtype;
  int_range(dt, &lo, &hi);
  int64_t *acc = malloc((size_t)(on ? on : 1) * sizeof *acc);
  if (!acc) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  int64_t init = op == R_MAX ? lo : op == R_MIN ? hi : op == R_PROD ? 1 : 0;
  for (int64_t i = 0; i < on; i++) acc[i] = init;
  ired_job j = {op, x->data, dt, acc, dt == OX_UINT64};
  red_walk(p, red_int_fn, &j, ox_kctx_pool(ctx));
  for (int64_t i = 0; i < on; i++) {
    if (op == R_MEAN) {
      double sum = dt == OX_UINT64 ? (double)(uint64_t)acc[i] : (double)acc[i];
      oc_set(y->data, dt, i, sum / (double)p->count);
    } else
      oc_set_i64(y->data, dt, i, acc[i]);
  }
  free(acc);
  return OX_OK;
}

static int red_run(ox_kctx *ctx, void *state) {
  const red_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  int32_t dt = x->dtype;
  bool ok = oc_is_int(dt) || dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 ||
            dt == OX_BFLOAT16 || (dt == OX_BOOL && (s->op == R_MAX || s->op == R_MIN));
  if (!ok) return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  size_t rank = x->rank;
  if (rank > OC_MAXRANK) return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "rank too large");
  int64_t axes[OC_MAXRANK];
  size_t n_axes = 0;
  bool have_axes = false;
  if (s->axes_input) {
    ox_value *a = ox_kctx_input(ctx, 1);
    if (a) {
      if (oc_read_ints(ctx, a, axes, OC_MAXRANK, &n_axes, "axes")) return OX_ERUNTIME;
      have_axes = n_axes > 0;
    }
  } else if (s->has_axes_attr) {
    memcpy(axes, s->axes, s->n_axes * sizeof *axes);
    n_axes = s->n_axes;
    have_axes = n_axes > 0;
  }
  if (!have_axes && s->noop_empty && s->axes_input) {
    ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank);
    if (!y) return OX_ENOMEM;
    memcpy(y->data, x->data, (size_t)x->numel * ox_value_elem_size(dt));
    return OX_OK;
  }
  bool red[OC_MAXRANK] = {false};
  for (size_t k = 0; k < n_axes; k++) {
    size_t a;
    if (oc_axis(ctx, axes[k], rank, &a, "axis")) return OX_ERUNTIME;
    red[a] = true;
  }
  if (!have_axes)
    for (size_t d = 0; d < rank; d++) red[d] = true;
  int64_t odims[OC_MAXRANK];
  size_t orank = 0;
  red_plan p = {0};
  p.rank = rank ? rank : 1;
  p.count = 1;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    p.dims[d] = x->dims[d];
    p.ost[d] = red[d] ? 0 : stride;
    if (red[d])
      p.count *= x->dims[d];
    else
      stride *= x->dims[d];
  }
  if (rank == 0) {
    p.dims[0] = 1;
    p.ost[0] = 0;
  }
  p.out_numel = stride;
  for (size_t d = 0; d < rank; d++)
    if (!red[d])
      odims[orank++] = x->dims[d];
    else if (s->keepdims)
      odims[orank++] = 1;
  ox_value *y = ox_kctx_output(ctx, 0, dt, odims, orank);
  if (!y) return OX_ENOMEM;
  int64_t on = y->numel;
  if ((oc_is_int(dt) || dt == OX_BOOL) &&
      (s->op == R_SUM || s->op == R_MEAN || s->op == R_PROD || s->op == R_L1 || s->op == R_SUMSQ ||
       s->op == R_MAX || s->op == R_MIN))
    return red_run_int(ctx, s->op, &p, x, y);
  double *acc = malloc((size_t)(on ? on : 1) * 2 * sizeof(double));
  if (!acc) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  double *mx = acc + (on ? on : 1);
  double init = s->op == R_MAX ? -INFINITY : s->op == R_MIN ? INFINITY : s->op == R_PROD ? 1 : 0;
  for (int64_t i = 0; i < on; i++) acc[i] = init;
  OX_LEVEL_PTR(red_run_fn) run = OX_LEVEL_PICK(red_run_fn);
  if (s->op == R_LOGSUMEXP) {
    for (int64_t i = 0; i < on; i++) mx[i] = -INFINITY;
    red_job jm = {R_MAX, x->data, dt, mx, NULL};
    red_walk(&p, run, &jm, ox_kctx_pool(ctx));
  }
  red_job j = {s->op, x->data, dt, acc, mx};
  red_walk(&p, run, &j, ox_kctx_pool(ctx));
  double cnt = (double)p.count;
  for (int64_t i = 0; i < on; i++) {
    double v = acc[i];
    switch (s->op) {
      case R_MEAN:
        v = v / cnt;
        break;
      case R_L2:
        v = sqrt(v);
        break;
      case R_LOGSUM:
        v = log(v);
        break;
      case R_LOGSUMEXP:
        v = isinf(mx[i]) ? log(v) : log(v) + mx[i];
        break;
      default:
        break;
    }
    oc_set(y->data, dt, i, v);
  }
  free(acc);
  return OX_OK;
}

#define PREP(NAME, OP, SINCE)                                             \
  static int prep_##NAME(const ox_kinfo *info, void **state, ox_err *e) { \
    return red_prepare(info, state, e, OP, SINCE);                        \
  }
PREP(sum, R_SUM, 13)
PREP(mean, R_MEAN, 18)
PREP(max, R_MAX, 18)
PREP(min, R_MIN, 18)
PREP(prod, R_PROD, 18)
PREP(l1, R_L1, 18)
PREP(l2, R_L2, 18)
PREP(logsum, R_LOGSUM, 18)
PREP(logsumexp, R_LOGSUMEXP, 18)
PREP(sumsq, R_SUMSQ, 18)

/* ---- ArgMax / ArgMin ---- */

typedef struct arg_state {
  bool is_max, keepdims, last;
  int64_t axis;
} arg_state;

static int arg_prepare(const ox_kinfo *info, void **state, ox_err *e, bool is_max) {
  arg_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->is_max = is_max;
  s->keepdims = ox_node_attr_int(info->node, "keepdims", 1) != 0;
  s->last = ox_node_attr_int(info->node, "select_last_index", 0) != 0;
  s->axis = ox_node_attr_int(info->node, "axis", 0);
  *state = s;
  return OX_OK;
}
static int prep_argmax(const ox_kinfo *info, void **state, ox_err *e) {
  return arg_prepare(info, state, e, true);
}
static int prep_argmin(const ox_kinfo *info, void **state, ox_err *e) {
  return arg_prepare(info, state, e, false);
}

static void outer_inner(const ox_value *x, size_t axis, int64_t *outer, int64_t *n,
                        int64_t *inner) {
  *outer = 1;
  *inner = 1;
  for (size_t d = 0; d < axis; d++) *outer *= x->dims[d];
  for (size_t d = axis + 1; d < x->rank; d++) *inner *= x->dims[d];
  *n = x->rank ? x->dims[axis] : 1;
}

typedef struct arg_job {
  const arg_state *s;
  const void *x;
  int32_t dt;
  int64_t n, inner;
  int64_t *o;
} arg_job;

/* lines [l0, l1) of the output: line l is (a, b) = (l / inner, l % inner) */
static void arg_task(void *arg, int64_t l0, int64_t l1) {
  const arg_job *j = arg;
  const arg_state *s = j->s;
  int64_t n = j->n, inner = j->inner;
  for (int64_t l = l0; l < l1; l++) {
    int64_t a = l / inner, b = l % inner, base = a * n * inner + b, best = 0;
    double bv = oc_get(j->x, j->dt, base);
    for (int64_t k = 1; k < n; k++) {
      double v = oc_get(j->x, j->dt, base + k * inner);
      if (isnan(bv)) { /* a NaN wins: the first one, or the last with select_last_index */
        if (!s->last) break;
        if (isnan(v)) best = k;
        continue;
      }
      bool better =
          isnan(v) || (s->is_max ? (s->last ? v >= bv : v > bv) : (s->last ? v <= bv : v < bv));
      if (better) {
        bv = v;
        best = k;
      }
    }
    j->o[l] = best;
  }
}

static int arg_run(ox_kctx *ctx, void *state) {
  const arg_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  int32_t dt = x->dtype;
  if (!(oc_is_int(dt) || dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 ||
        dt == OX_BFLOAT16))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  size_t axis;
  if (oc_axis(ctx, s->axis, x->rank, &axis, "axis")) return OX_ERUNTIME;
  int64_t outer, n, inner;
  outer_inner(x, axis, &outer, &n, &inner);
  if (n == 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "cannot take the arg over an empty axis");
  int64_t odims[OC_MAXRANK];
  size_t orank = 0;
  for (size_t d = 0; d < x->rank; d++)
    if (d != axis)
      odims[orank++] = x->dims[d];
    else if (s->keepdims)
      odims[orank++] = 1;
  ox_value *y = ox_kctx_output(ctx, 0, OX_INT64, odims, orank);
  if (!y) return OX_ENOMEM;
  arg_job j = {s, x->data, dt, n, inner, y->data};
  int64_t lines = outer * inner;
  /* lines are independent: split them when there is work for several */
  ox_parallel_for(ox_kctx_pool(ctx), lines, lines * n >= ((int64_t)1 << 15) ? 64 : lines, arg_task,
                  &j);
  return OX_OK;
}

/* ---- CumSum / CumProd ---- */

typedef struct cum_state {
  bool prod, exclusive, reverse;
} cum_state;

static int cum_prepare(const ox_kinfo *info, void **state, ox_err *e, bool prod) {
  cum_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->prod = prod;
  s->exclusive = ox_node_attr_int(info->node, "exclusive", 0) != 0;
  s->reverse = ox_node_attr_int(info->node, "reverse", 0) != 0;
  *state = s;
  return OX_OK;
}
static int prep_cumsum(const ox_kinfo *info, void **state, ox_err *e) {
  return cum_prepare(info, state, e, false);
}
static int prep_cumprod(const ox_kinfo *info, void **state, ox_err *e) {
  return cum_prepare(info, state, e, true);
}

static int cum_run(ox_kctx *ctx, void *state) {
  const cum_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0), *ax = ox_kctx_input(ctx, 1);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  if (!ax) return ox_kctx_fail(ctx, OX_ERUNTIME, "axis input is required");
  int32_t dt = x->dtype;
  bool flt = dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
  if (!flt && !oc_is_int(dt))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  int64_t av;
  size_t na;
  if (oc_read_ints(ctx, ax, &av, 1, &na, "axis")) return OX_ERUNTIME;
  if (na != 1) return ox_kctx_fail(ctx, OX_ERUNTIME, "axis must hold one value");
  size_t axis;
  if (oc_axis(ctx, av, x->rank, &axis, "axis")) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  int64_t outer, n, inner;
  outer_inner(x, axis, &outer, &n, &inner);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < inner; b++) {
      int64_t base = a * n * inner + b;
      double acc = s->prod ? 1 : 0;
      int64_t iacc = s->prod ? 1 : 0;
      for (int64_t t = 0; t < n; t++) {
        int64_t k = s->reverse ? n - 1 - t : t;
        int64_t at = base + k * inner;
        if (flt) {
          double v = oc_get(x->data, dt, at);
          if (s->exclusive) {
            oc_set(y->data, dt, at, acc);
            acc = s->prod ? acc * v : acc + v;
          } else {
            acc = s->prod ? acc * v : acc + v;
            oc_set(y->data, dt, at, acc);
          }
        } else {
          int64_t v = oc_get_i64(x->data, dt, at);
          if (s->exclusive) oc_set_i64(y->data, dt, at, iacc);
          iacc = s->prod ? (int64_t)((uint64_t)iacc * (uint64_t)v)
                         : (int64_t)((uint64_t)iacc + (uint64_t)v);
          if (!s->exclusive) oc_set_i64(y->data, dt, at, iacc);
        }
      }
    }
  return OX_OK;
}

#define RED(OP, P, LO, HI) \
  { "", OP, LO, HI, prep_##P, red_run, NULL }

const ox_kernel_def ox_ops_reduce[] = {
    RED("ReduceSum", sum, 1, 12),
    RED("ReduceSum", sum, 13, 1000),
    RED("ReduceMean", mean, 1, 17),
    RED("ReduceMean", mean, 18, 1000),
    RED("ReduceMax", max, 1, 17),
    RED("ReduceMax", max, 18, 1000),
    RED("ReduceMin", min, 1, 17),
    RED("ReduceMin", min, 18, 1000),
    RED("ReduceProd", prod, 1, 17),
    RED("ReduceProd", prod, 18, 1000),
    RED("ReduceL1", l1, 1, 17),
    RED("ReduceL1", l1, 18, 1000),
    RED("ReduceL2", l2, 1, 17),
    RED("ReduceL2", l2, 18, 1000),
    RED("ReduceLogSum", logsum, 1, 17),
    RED("ReduceLogSum", logsum, 18, 1000),
    RED("ReduceLogSumExp", logsumexp, 1, 17),
    RED("ReduceLogSumExp", logsumexp, 18, 1000),
    RED("ReduceSumSquare", sumsq, 1, 17),
    RED("ReduceSumSquare", sumsq, 18, 1000),
    {"", "ArgMax", 1, 1000, prep_argmax, arg_run, NULL},
    {"", "ArgMin", 1, 1000, prep_argmin, arg_run, NULL},
    {"", "CumSum", 11, 1000, prep_cumsum, cum_run, NULL},
    {"", "CumProd", 26, 1000, prep_cumprod, cum_run, NULL},
    {0},
};
