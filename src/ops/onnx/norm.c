/* norm.c - normalisation kernels: BatchNormalization, InstanceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization, LpNormalization,
 * MeanVarianceNormalization, LRN. Arithmetic in float32 with double
 * accumulators for the statistics (LRN's window of squares: float). */
#include "norm.h"

#include <stdatomic.h>

#include "../../kernels/levels.h"
#include "../../schema/onnxc_ops.h"
#include "../nn_common.h"
#include "../opcore.h"

typedef struct norm_attrs {
  float epsilon, momentum, alpha, beta, bias;
  int64_t axis, num_groups, p, size;
  int64_t training; /* BatchNormalization: 1 training, 0 inference, -1 by outputs */
  int64_t spatial;
  int64_t stash_type;
  int64_t axes[16];
  size_t n_axes;
  int version;
} norm_attrs;

static int norm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  norm_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->version = (int)info->since_version;
  a->epsilon = ox_node_attr_float(n, "epsilon", 1e-5f);
  a->momentum = ox_node_attr_float(n, "momentum", 0.9f);
  a->alpha = ox_node_attr_float(n, "alpha", 1e-4f);
  a->beta = ox_node_attr_float(n, "beta", 0.75f);
  a->bias = ox_node_attr_float(n, "bias", 1.0f);
  a->axis = ox_node_attr_int(n, "axis", -1);
  a->num_groups = ox_node_attr_int(n, "num_groups", 0);
  a->p = ox_node_attr_int(n, "p", 2);
  a->size = ox_node_attr_int(n, "size", 0);
  a->spatial = ox_node_attr_int(n, "spatial", 1);
  a->stash_type = ox_node_attr_int(n, "stash_type", 1);
  a->training = -1;
  const char *op = n->op_type ? n->op_type : "";
  const char *name = n->name ? n->name : "";
  if (strcmp(op, "BatchNormalization") == 0) {
    if (a->version >= 14)
      a->training = ox_node_attr_int(n, "training_mode", 0) != 0;
    else if (a->version < 7 && ox_node_attr_int(n, "is_test", 0) != 0)
      a->training = 0;
  }
  if (strcmp(op, "LpNormalization") == 0 && a->p != 1 && a->p != 2)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): p must be 1 or 2, got %lld", name, op,
                      (long long)a->p);
  if (strcmp(op, "LRN") == 0 && a->size <= 0)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): attribute size must be positive", name, op);
  if (strcmp(op, "GroupNormalization") == 0 && a->num_groups <= 0)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): attribute num_groups must be positive", name,
                      op);
  if (strcmp(op, "MeanVarianceNormalization") == 0) {
    const ox_attr *ax = ox_node_attr(n, "axes");
    if (ax) {
      if (ax->n_ints > 16)
        return ox_err_set(e, OX_EUNSUPPORTED, "node '%s' (%s): more than 16 axes", name, op);
      for (size_t i = 0; i < ax->n_ints; i++) a->axes[i] = ax->ints[i];
      a->n_axes = ax->n_ints;
    } else {
      a->axes[0] = 0, a->axes[1] = 2, a->axes[2] = 3;
      a->n_axes = 3;
    }
  }
  *state = a;
  return OX_OK;
}

static int check_real(ox_kctx *c, const ox_value *v, const char *what) {
  if (!v || v->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(c, OX_ERUNTIME, "input %s is missing or not a tensor", what);
  if (!nn_is_real(v->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "input %s has type %s, expected a float type", what,
                        ox_dtype_get(v->dtype) ? ox_dtype_get(v->dtype)->name : "?");
  return OX_OK;
}

/* Loads a parameter tensor expanded to shape d[r] (unidirectional broadcast). */
static int load_param(ox_kctx *c, const ox_value *v, const int64_t *d, size_t r, const char *what,
                      float **out) {
  *out = NULL;
  int64_t n = nn_prod(d, 0, r);
  nn_fbuf b;
  int rc = nn_fload(c, v, &b);
  if (rc) return rc;
  float *p = malloc(((size_t)n + 1) * sizeof(float));
  if (!p) {
    nn_ffree(&b);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  bool ok = v->numel == n ? (memcpy(p, b.p, (size_t)n * sizeof(float)), true)
                          : nn_expand(b.p, v->dims, v->rank, d, r, p);
  nn_ffree(&b);
  if (!ok) {
    free(p);
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "%s of %lld elements does not broadcast to the normalized shape", what,
                        (long long)v->numel);
  }
  *out = p;
  return OX_OK;
}

/* ---- BatchNormalization ---- */
/* (x - mean) * (scale / sqrt(var + eps)) + B over blocks [b0, b1) of
 * n * pn + k: centring first keeps the cancellation of nearly equal terms
 * out of the result */
typedef struct bn_job {
  const norm_attrs *a;
  const float *x;
  float *y;
  const float *scale, *shift;
  const double *mean, *var;
  int64_t pn, per;
} bn_job;

OX_LEVEL_BODY void bn_apply_c(void *arg, int64_t b0, int64_t b1) {
  const bn_job *j = arg;
  for (int64_t b = b0; b < b1; b++) {
    int64_t k = b % j->pn;
    double inv = 1.0 / sqrt(j->var[k] + (double)j->a->epsilon);
    float mk = (float)j->mean[k], sc = (float)(j->scale[k] * inv), sh = j->shift[k];
    const float *xs = j->x + b * j->per;
    float *ys = j->y + b * j->per;
    for (int64_t i = 0; i < j->per; i++) ys[i] = (xs[i] - mk) * sc + sh;
  }
}
OX_LEVELS_VOID(bn_apply, (void *arg, int64_t b0, int64_t b1), arg, b0, b1)

static int batchnorm_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0);
  const char *names[5] = {"X", "scale", "B", "input_mean", "input_var"};
  ox_value *in[5];
  for (int i = 0; i < 5; i++) {
    in[i] = ox_kctx_input(c, (size_t)i);
    int rc = check_real(c, in[i], names[i]);
    if (rc) return rc;
  }
  if (x->rank < 1) return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank >= 1");
  int64_t N = x->dims[0], C = x->rank > 1 ? x->dims[1] : 1;
  int64_t S = nn_prod(x->dims, 2, x->rank);
  /* per-channel (spatial) or per-activation (C x D1 x ...) parameters */
  int64_t pn = C;
  if (a->version < 9 && a->spatial == 0) pn = C * S;
  for (int i = 1; i < 5; i++)
    if (in[i]->numel != pn)
      return ox_kctx_fail(c, OX_ERUNTIME, "%s has %lld elements, expected %lld", names[i],
                          (long long)in[i]->numel, (long long)pn);
  bool training = a->training == 1 || (a->training == -1 && ox_kctx_n_outputs(c) > 1);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  nn_fbuf fx, fp[4], fy = {0};
  int rc = nn_fload(c, x, &fx);
  if (rc) return rc;
  for (int i = 0; i < 4; i++) fp[i].p = NULL, fp[i].owned = false;
  for (int i = 0; i < 4 && !rc; i++) rc = nn_fload(c, in[i + 1], &fp[i]);
  if (!rc) rc = nn_fout(c, y, &fy);
  double *mean = NULL, *var = NULL;
  if (!rc) {
    mean = calloc((size_t)pn + 1, sizeof(double));
    var = calloc((size_t)pn + 1, sizeof(double));
    if (!mean || !var) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  if (rc) goto done;
  int64_t per = pn == C ? S : 1; /* elements of one parameter inside a sample-channel block */
  if (training) {
    double cnt = (double)N * (double)(C * S / pn);
    for (int64_t n = 0; n < N; n++)
      for (int64_t i = 0; i < C * S; i++) mean[i / per] += fx.p[n * C * S + i];
    for (int64_t k = 0; k < pn; k++) mean[k] = cnt > 0 ? mean[k] / cnt : 0.0;
    for (int64_t n = 0; n < N; n++)
      for (int64_t i = 0; i < C * S; i++) {
        double d = fx.p[n * C * S + i] - mean[i / per];
        var[i / per] += d * d;
      }
    for (int64_t k = 0; k < pn; k++) var[k] = cnt > 0 ? var[k] / cnt : 0.0;
  } else {
    for (int64_t k = 0; k < pn; k++) mean[k] = fp[2].p[k], var[k] = fp[3].p[k];
  }
  {
    bn_job bj = {a, fx.p, fy.p, fp[0].p, fp[1].p, mean, var, pn, per};
    /* about 64K elements per task: small maps stay on one thread */
    ox_parallel_for(ox_kctx_pool(c), N * pn, 65536 / (per + 1) + 1, OX_LEVEL_PICK(bn_apply), &bj);
  }
  nn_fstore(y, &fy);
  if (training) {
    /* outputs 1, 2: running mean / var; (before opset 14) 3, 4: saved mean / var */
    int64_t pd[1] = {pn};
    for (size_t o = 1; o < ox_kctx_n_outputs(c) && o < 5; o++) {
      if (!ox_kctx_output_wanted(c, o)) continue;
      int32_t dt = in[o <= 2 ? o + 2 : 3]->dtype;
      ox_value *out = ox_kctx_output(c, o, dt, pd, 1);
      if (!out) {
        rc = OX_ERUNTIME;
        break;
      }
      for (int64_t k = 0; k < pn; k++) {
        double v;
        if (o == 1)
          v = fp[2].p[k] * a->momentum + mean[k] * (1.0 - a->momentum);
        else if (o == 2)
          v = fp[3].p[k] * a->momentum + var[k] * (1.0 - a->momentum);
        else
          v = o == 3 ? mean[k] : var[k];
        nn_set_real(out->data, dt, k, v);
      }
    }
  }
done:
  if (fy.owned) nn_ffree(&fy);
  free(mean);
  free(var);
  nn_ffree(&fx);
  for (int i = 0; i < 4; i++) nn_ffree(&fp[i]);
  return rc;
}

/* ---- mean/variance normalisation of `outer` rows of `inner` elements ---- */
/* y[r, j] = (x[r, j] - mean_r) * inv_r; mean and inv (1/sqrt(var+eps)) per row
 * are stored when the pointers are not NULL. rms: no centering. Rows are
 * spread over the thread pool. */
typedef ox_norm_rows_args rows_job;

/* the row loops: kernels/vmath.h's (row sums in double with eight
 * independent partial sums, so that they vectorise: one chain of double
 * additions was the cost of a whole normalisation) */
static void norm_rows_range(void *arg, int64_t r0, int64_t r1) {
  const rows_job *j = arg;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  int64_t inner = j->inner;
  for (int64_t r = r0; r < r1; r++) {
    const float *xs = j->x + r * inner;
    float *ys = j->y + r * inner;
    /* the residual Add (and SkipLayerNormalization's bias), its row still
     * in cache for the statistics; into `sum` when the caller keeps it */
    float *ds = j->sum ? j->sum + r * inner : ys;
    if (j->skip) {
      vk->add(xs, j->skip + (j->skip_rows > 0 ? r % j->skip_rows : r) * inner, ds, inner);
      xs = ds;
    }
    if (j->add) {
      vk->add(xs, j->add, ds, inner);
      xs = ds;
    }
    double m = 0.0;
    if (!j->rms) m = inner ? vk->row_sum(xs, inner) / (double)inner : 0.0;
    double v = inner ? vk->row_sq_sum(xs, inner, m) / (double)inner : 0.0;
    double inv = 1.0 / sqrt(v + j->eps);
    float fm = (float)m, fi = (float)inv;
    vk->norm_row(xs, ys, inner, fm, fi, j->scale, j->bias);
    if (j->mean) j->mean[r] = fm;
    if (j->inv) j->inv[r] = fi;
  }
}

static void norm_rows_skip(ox_kctx *c, const float *x, const float *skip, float *y, int64_t outer,
                           int64_t inner, double eps, bool rms, float *mean_out, float *inv_out,
                           const float *scale, const float *bias) {
  rows_job j = {.x = x,
                .skip = skip,
                .y = y,
                .mean = mean_out,
                .inv = inv_out,
                .scale = scale,
                .bias = bias,
                .outer = outer,
                .inner = inner,
                .eps = eps,
                .rms = rms};
  ox_norm_rows(ox_kctx_pool(c), &j);
}

void ox_norm_rows(ox_thread_pool *pool, const ox_norm_rows_args *a) {
  int64_t grain = a->inner > 0 ? 1 + 16384 / a->inner : a->outer;
  ox_parallel_for(pool, a->outer, grain, norm_rows_range, (void *)a);
}

static void norm_rows(ox_kctx *c, const float *x, float *y, int64_t outer, int64_t inner,
                      double eps, bool rms, float *mean_out, float *inv_out, const float *scale,
                      const float *bias) {
  norm_rows_skip(c, x, NULL, y, outer, inner, eps, rms, mean_out, inv_out, scale, bias);
}

/* ---- InstanceNormalization ---- */
static int instnorm_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0), *sc = ox_kctx_input(c, 1), *b = ox_kctx_input(c, 2);
  int rc = check_real(c, x, "input");
  if (!rc) rc = check_real(c, sc, "scale");
  if (!rc) rc = check_real(c, b, "B");
  if (rc) return rc;
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "input must have rank >= 2");
  int64_t N = x->dims[0], C = x->dims[1], S = nn_prod(x->dims, 2, x->rank);
  if (sc->numel != C || b->numel != C)
    return ox_kctx_fail(c, OX_ERUNTIME, "scale and B must have %lld elements", (long long)C);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  nn_fbuf fx, fs = {0}, fb = {0}, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  if (!(rc = nn_fload(c, sc, &fs)) && !(rc = nn_fload(c, b, &fb)) && !(rc = nn_fout(c, y, &fy))) {
    norm_rows(c, fx.p, fy.p, N * C, S, a->epsilon, false, NULL, NULL, NULL, NULL);
    for (int64_t n = 0; n < N; n++)
      for (int64_t ch = 0; ch < C; ch++) {
        float *ys = fy.p + (n * C + ch) * S;
        for (int64_t j = 0; j < S; j++) ys[j] = ys[j] * fs.p[ch] + fb.p[ch];
      }
    nn_fstore(y, &fy);
  }
  nn_ffree(&fx);
  nn_ffree(&fs);
  nn_ffree(&fb);
  return rc;
}

/* ---- LayerNormalization and RMSNormalization ---- */
static int layernorm_rows(ox_kctx *c, const norm_attrs *a, bool rms, ox_value *x, ox_value *sc,
                          ox_value *b, ox_value *skip);

/* x + skip with numpy broadcasting, in x's type, as the Add node computes
 * it (float16 and bfloat16 through float, rounded once) */
typedef struct skip_job {
  const ox_value *a, *b;
  ox_value *y;
} skip_job;

static void skip_run(void *arg, const int64_t *off, const int64_t *st, int64_t oo, int64_t n) {
  const skip_job *j = arg;
  int32_t dt = j->y->dtype;
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = off[0] + i * st[0], ib = off[1] + i * st[1];
    if (dt == OX_FLOAT)
      ((float *)j->y->data)[oo + i] =
          ((const float *)j->a->data)[ia] + ((const float *)j->b->data)[ib];
    else if (dt == OX_DOUBLE)
      ((double *)j->y->data)[oo + i] =
          ((const double *)j->a->data)[ia] + ((const double *)j->b->data)[ib];
    else
      oc_set(j->y->data, dt, oo + i,
             (float)((float)oc_get(j->a->data, dt, ia) + (float)oc_get(j->b->data, dt, ib)));
  }
}

static ox_value *skip_sum(ox_kctx *c, ox_value *x, ox_value *skip) {
  if (skip->dtype != x->dtype) {
    ox_kctx_fail(c, OX_ERUNTIME, "the residual is %d, X is %d", (int)skip->dtype, (int)x->dtype);
    return NULL;
  }
  oc_bcast bc;
  ox_value *both[2] = {x, skip};
  if (oc_bcast_values(&bc, c, both, 2)) return NULL;
  ox_err e = {0};
  ox_value *y = ox_tensor_new_uninit(x->dtype, bc.out_dims, bc.out_rank, &e);
  if (!y) {
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  skip_job j = {x, skip, y};
  oc_bcast_each(&bc, ox_kctx_pool(c), skip_run, &j);
  return y;
}

static int layernorm_common(ox_kctx *c, const norm_attrs *a, bool rms) {
  ox_value *x = ox_kctx_input(c, 0), *sc = ox_kctx_input(c, 1), *b = ox_kctx_input(c, 2);
  /* LayerNormFused's input 3: a residual added to X first (skip layer
   * norm); float tensors of one shape add row by row inside the
   * normalisation, anything else through a broadcast sum first */
  ox_value *skip = ox_kctx_n_inputs(c) > 3 ? ox_kctx_input(c, 3) : NULL, *sum = NULL;
  if (skip && x && skip->kind == OX_VAL_TENSOR && x->kind == OX_VAL_TENSOR &&
      !(x->dtype == OX_FLOAT && skip->dtype == OX_FLOAT &&
        ox_shape_equal(x->dims, x->rank, skip->dims, skip->rank))) {
    if (!(sum = skip_sum(c, x, skip))) return OX_ERUNTIME;
    x = sum;
    skip = NULL;
  }
  int rc = layernorm_rows(c, a, rms, x, sc, b, skip);
  ox_value_unref(sum);
  return rc;
}

static int layernorm_rows(ox_kctx *c, const norm_attrs *a, bool rms, ox_value *x, ox_value *sc,
                          ox_value *b, ox_value *skip) {
  int rc = check_real(c, x, "X");
  if (!rc) rc = check_real(c, sc, "Scale");
  if (!rc && b && !rms) rc = check_real(c, b, "B");
  if (rc) return rc;
  int64_t axis;
  if (!nn_axis(a->axis, x->rank, false, &axis))
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %zu",
                        (long long)a->axis, x->rank);
  int64_t outer = nn_prod(x->dims, 0, (size_t)axis),
          inner = nn_prod(x->dims, (size_t)axis, x->rank);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  float *scale = NULL, *bias = NULL, *mean = NULL, *inv = NULL;
  const int64_t *nd = x->dims + axis;
  size_t nr = x->rank - (size_t)axis;
  nn_fbuf fx, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  if ((rc = load_param(c, sc, nd, nr, "Scale", &scale))) goto done;
  if (b && !rms && (rc = load_param(c, b, nd, nr, "B", &bias))) goto done;
  mean = malloc(((size_t)outer + 1) * sizeof(float));
  inv = malloc(((size_t)outer + 1) * sizeof(float));
  if (!mean || !inv) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = nn_fout(c, y, &fy))) goto done;
  norm_rows_skip(c, fx.p, skip ? skip->data : NULL, fy.p, outer, inner, a->epsilon, rms, mean, inv,
                 scale, bias);
  nn_fstore(y, &fy);
  if (!rms) {
    int64_t sd[16];
    if (x->rank > 16) {
      rc = ox_kctx_fail(c, OX_EUNSUPPORTED, "rank above 16");
      goto done;
    }
    for (size_t i = 0; i < x->rank; i++) sd[i] = (int64_t)i < axis ? x->dims[i] : 1;
    for (size_t o = 1; o < 3 && o < ox_kctx_n_outputs(c); o++) {
      if (!ox_kctx_output_wanted(c, o)) continue;
      const ox_kinfo *info = ox_kctx_info(c);
      int32_t dt = info->output_dtypes ? info->output_dtypes[o] : OX_UNDEFINED;
      if (!nn_is_real(dt)) dt = a->stash_type == OX_BFLOAT16 ? OX_BFLOAT16 : OX_FLOAT;
      ox_value *out = ox_kctx_output(c, o, dt, sd, x->rank);
      if (!out) {
        rc = OX_ERUNTIME;
        goto done;
      }
      const float *src = o == 1 ? mean : inv;
      for (int64_t r = 0; r < outer; r++) nn_set_real(out->data, dt, r, src[r]);
    }
  }
done:
  if (fy.owned) nn_ffree(&fy);
  nn_ffree(&fx);
  free(scale);
  free(bias);
  free(mean);
  free(inv);
  return rc;
}

static int layernorm_run(ox_kctx *c, void *st) { return layernorm_common(c, st, false); }
static int rmsnorm_run(ox_kctx *c, void *st) { return layernorm_common(c, st, true); }

/* ---- GroupNormalization: scale/bias per group (18) or per channel (21) ---- */
static int groupnorm_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0), *sc = ox_kctx_input(c, 1), *b = ox_kctx_input(c, 2);
  int rc = check_real(c, x, "X");
  if (!rc) rc = check_real(c, sc, "scale");
  if (!rc) rc = check_real(c, b, "bias");
  if (rc) return rc;
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank >= 2");
  int64_t N = x->dims[0], C = x->dims[1], S = nn_prod(x->dims, 2, x->rank), G = a->num_groups;
  if (C % G != 0)
    return ox_kctx_fail(c, OX_ERUNTIME, "%lld channels are not divisible by num_groups %lld",
                        (long long)C, (long long)G);
  int64_t pn = a->version >= 21 ? C : G;
  if (sc->numel != pn || b->numel != pn)
    return ox_kctx_fail(c, OX_ERUNTIME, "scale and bias must have %lld elements", (long long)pn);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  nn_fbuf fx, fs = {0}, fb = {0}, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  if (!(rc = nn_fload(c, sc, &fs)) && !(rc = nn_fload(c, b, &fb)) && !(rc = nn_fout(c, y, &fy))) {
    norm_rows(c, fx.p, fy.p, N * G, C / G * S, a->epsilon, false, NULL, NULL, NULL, NULL);
    for (int64_t n = 0; n < N; n++)
      for (int64_t ch = 0; ch < C; ch++) {
        int64_t k = pn == C ? ch : ch / (C / G);
        float *ys = fy.p + (n * C + ch) * S;
        for (int64_t j = 0; j < S; j++) ys[j] = ys[j] * fs.p[k] + fb.p[k];
      }
    nn_fstore(y, &fy);
  }
  nn_ffree(&fx);
  nn_ffree(&fs);
  nn_ffree(&fb);
  return rc;
}

/* ---- LpNormalization ---- */
static int lpnorm_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0);
  int rc = check_real(c, x, "input");
  if (rc) return rc;
  int64_t axis;
  if (!nn_axis(a->axis, x->rank, false, &axis))
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %zu",
                        (long long)a->axis, x->rank);
  int64_t outer = nn_prod(x->dims, 0, (size_t)axis), D = x->dims[axis];
  int64_t inner = nn_prod(x->dims, (size_t)axis + 1, x->rank);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  nn_fbuf fx, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  if (!(rc = nn_fout(c, y, &fy))) {
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        const float *xs = fx.p + o * D * inner + i;
        float *ys = fy.p + o * D * inner + i;
        double s = 0.0;
        for (int64_t d = 0; d < D; d++)
          s += a->p == 1 ? fabs(xs[d * inner]) : (double)xs[d * inner] * xs[d * inner];
        if (a->p == 2) s = sqrt(s);
        /* a zero norm gives a zero output (Operators.md, LpNormalization) */
        for (int64_t d = 0; d < D; d++)
          ys[d * inner] = s == 0.0 ? 0.0f : (float)(xs[d * inner] / s);
      }
    nn_fstore(y, &fy);
  }
  nn_ffree(&fx);
  return rc;
}

/* ---- MeanVarianceNormalization: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) ---- */
static int mvn_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0);
  int rc = check_real(c, x, "X");
  if (rc) return rc;
  if (x->rank > 16) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank above 16");
  bool red[16] = {false};
  for (size_t i = 0; i < a->n_axes; i++) {
    int64_t ax;
    if (!nn_axis(a->axes[i], x->rank, false, &ax))
      return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %zu",
                          (long long)a->axes[i], x->rank);
    red[ax] = true;
  }
  /* stride of each axis in the reduced (kept-axes) tensor */
  int64_t rst[16], s = 1, cnt = 1;
  for (size_t k = x->rank; k-- > 0;) {
    rst[k] = red[k] ? 0 : s;
    if (!red[k])
      s *= x->dims[k];
    else
      cnt *= x->dims[k];
  }
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  nn_fbuf fx, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  double *m1 = calloc((size_t)s + 1, sizeof(double)), *m2 = calloc((size_t)s + 1, sizeof(double));
  int64_t *ri = malloc(((size_t)x->numel + 1) * sizeof(int64_t));
  if (!m1 || !m2 || !ri) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  if (!rc) rc = nn_fout(c, y, &fy);
  if (!rc) {
    int64_t idx[16] = {0}, off = 0;
    for (int64_t i = 0; i < x->numel; i++) {
      ri[i] = off;
      for (size_t k = x->rank; k-- > 0;) {
        idx[k]++;
        off += rst[k];
        if (idx[k] < x->dims[k]) break;
        off -= rst[k] * idx[k];
        idx[k] = 0;
      }
    }
    for (int64_t i = 0; i < x->numel; i++) {
      m1[ri[i]] += fx.p[i];
      m2[ri[i]] += (double)fx.p[i] * fx.p[i];
    }
    for (int64_t k = 0; k < s; k++) {
      m1[k] /= (double)cnt;
      m2[k] /= (double)cnt;
      double v = m2[k] - m1[k] * m1[k];
      m2[k] = sqrt(v > 0 ? v : 0.0) + 1e-9;
    }
    for (int64_t i = 0; i < x->numel; i++) fy.p[i] = (float)((fx.p[i] - m1[ri[i]]) / m2[ri[i]]);
    nn_fstore(y, &fy);
  }
  free(m1);
  free(m2);
  free(ri);
  nn_ffree(&fx);
  return rc;
}

/* ---- LRN across channels ---- */

/* Planes [p0, p1) of n * C + c: the squares of the window's channels summed
 * plane-wide (loops that vectorise), then x / (bias + alpha / size * sum)^beta
 * with beta 0.75 (AlexNet, GoogLeNet) as two square roots, 0.5 and 1
 * exactly, other betas by powf. The per-element double pow took 13 ns an
 * element: 6 ms of AlexNet's 20, and on one thread. */
typedef struct lrn_job {
  const norm_attrs *a;
  const float *x;
  float *y;
  int64_t C, S;
  atomic_int oom;
} lrn_job;

OX_LEVEL_BODY void lrn_task_c(void *arg, int64_t p0, int64_t p1) {
  lrn_job *j = arg;
  float *acc = ox_scratch(0, (size_t)j->S * sizeof(float));
  if (!acc) {
    atomic_store(&j->oom, 1);
    return;
  }
  const norm_attrs *a = j->a;
  int64_t C = j->C, S = j->S, lo = (a->size - 1) / 2, hi = a->size - 1 - lo;
  float k = a->alpha / (float)a->size, bias = a->bias, beta = a->beta;
  for (int64_t t = p0; t < p1; t++) {
    int64_t n = t / C, ch = t % C;
    int64_t c0 = ch - lo < 0 ? 0 : ch - lo, c1 = ch + hi >= C ? C - 1 : ch + hi;
    for (int64_t i = 0; i < S; i++) acc[i] = 0.0f;
    for (int64_t q = c0; q <= c1; q++) {
      const float *xq = j->x + (n * C + q) * S;
      for (int64_t i = 0; i < S; i++) acc[i] += xq[i] * xq[i];
    }
    const float *xi = j->x + t * S;
    float *yi = j->y + t * S;
    if (beta == 0.75f)
      for (int64_t i = 0; i < S; i++) {
        float r = sqrtf(bias + k * acc[i]);
        yi[i] = xi[i] / (r * sqrtf(r));
      }
    else if (beta == 0.5f)
      for (int64_t i = 0; i < S; i++) yi[i] = xi[i] / sqrtf(bias + k * acc[i]);
    else if (beta == 1.0f)
      for (int64_t i = 0; i < S; i++) yi[i] = xi[i] / (bias + k * acc[i]);
    else
      for (int64_t i = 0; i < S; i++) yi[i] = xi[i] / powf(bias + k * acc[i], beta);
  }
}
OX_LEVELS_VOID(lrn_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

static int lrn_run(ox_kctx *c, void *st) {
  const norm_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0);
  int rc = check_real(c, x, "X");
  if (rc) return rc;
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank >= 2");
  int64_t N = x->dims[0], C = x->dims[1], S = nn_prod(x->dims, 2, x->rank);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  nn_fbuf fx, fy = {0};
  if ((rc = nn_fload(c, x, &fx))) return rc;
  if (!(rc = nn_fout(c, y, &fy))) {
    lrn_job j = {a, fx.p, fy.p, C, S, 0};
    /* about 64K elements of work per task: small maps stay on one thread */
    int64_t grain = S * a->size > 0 ? 65536 / (S * a->size) + 1 : N * C;
    ox_parallel_for(ox_kctx_pool(c), N * C, grain, OX_LEVEL_PICK(lrn_task), &j);
    if (atomic_load(&j.oom))
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    else
      nn_fstore(y, &fy);
  }
  nn_ffree(&fx);
  return rc;
}

const ox_kernel_def ox_ops_norm[] = {
    {"", "BatchNormalization", 1, 1000, norm_prepare, batchnorm_run, NULL},
    {"", "InstanceNormalization", 1, 1000, norm_prepare, instnorm_run, NULL},
    {"", "LayerNormalization", 17, 1000, norm_prepare, layernorm_run, NULL},
    /* src/opt/layernorm.c: the written-out form, axis -1 */
    {OX_ONNXC_DOMAIN, "LayerNormFused", 1, 1, norm_prepare, layernorm_run, NULL},
    {"", "RMSNormalization", 23, 1000, norm_prepare, rmsnorm_run, NULL},
    {"", "GroupNormalization", 18, 1000, norm_prepare, groupnorm_run, NULL},
    {"", "LpNormalization", 1, 1000, norm_prepare, lpnorm_run, NULL},
    {"", "MeanVarianceNormalization", 9, 1000, norm_prepare, mvn_run, NULL},
    {"", "LRN", 1, 1000, norm_prepare, lrn_run, NULL},
    {0},
};
