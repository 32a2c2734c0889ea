/* loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 * Input (N, C, d1..dk), target (N, d1..dk); the loss of one element is
 * -input[n, t, d] * weight[t] (0 when t == ignore_index). "mean" divides the
 * sum by the sum of the weights that were used (their count without weights). */
#include "../nn_common.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_attrs {
  int reduction;
  bool has_ignore;
  int64_t ignore_index;
} loss_attrs;

static int loss_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  loss_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const char *r = ox_node_attr_str(n, "reduction", "mean");
  if (strcmp(r, "none") == 0)
    a->reduction = RED_NONE;
  else if (strcmp(r, "sum") == 0)
    a->reduction = RED_SUM;
  else if (strcmp(r, "mean") == 0)
    a->reduction = RED_MEAN;
  else
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): unknown reduction '%s'",
                      n->name ? n->name : "", n->op_type, r);
  const ox_attr *ii = ox_node_attr(n, "ignore_index");
  a->has_ignore = ii != NULL;
  a->ignore_index = ii ? ii->i : 0;
  *state = a;
  return OX_OK;
}

/* logp: (N, C, D) float32 log-probabilities; writes the loss output 0. */
static int nll_core(ox_kctx *c, const loss_attrs *a, const float *logp, const ox_value *x,
                    const ox_value *t, const ox_value *w, int32_t out_dt) {
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "input must have rank >= 2");
  int64_t N = x->dims[0], C = x->dims[1], D = nn_prod(x->dims, 2, x->rank);
  if (t->dtype != OX_INT32 && t->dtype != OX_INT64)
    return ox_kctx_fail(c, OX_ERUNTIME, "target must be int32 or int64");
  if (t->rank != x->rank - 1 || t->dims[0] != N ||
      !ox_shape_equal(t->dims + 1, t->rank - 1, x->dims + 2, x->rank - 2))
    return ox_kctx_fail(c, OX_ERUNTIME, "target shape does not match input (N, d1, ..., dk)");
  if (w && (w->rank != 1 || w->dims[0] != C))
    return ox_kctx_fail(c, OX_ERUNTIME, "weight must have shape (%lld)", (long long)C);
  double *loss = malloc(((size_t)(N * D) + 1) * sizeof(double));
  if (!loss) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  double wsum = 0.0, lsum = 0.0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++) {
      int64_t k = n * D + d, cls = nn_get_int(t->data, t->dtype, k);
      if (a->has_ignore && cls == a->ignore_index) {
        loss[k] = 0.0;
        continue;
      }
      if (cls < 0 || cls >= C) {
        free(loss);
        return ox_kctx_fail(c, OX_ERUNTIME, "target %lld is out of range [0, %lld)", (long long)cls,
                            (long long)C);
      }
      double wt = w ? nn_get(w->data, w->dtype, cls) : 1.0;
      loss[k] = -(double)logp[(n * C + cls) * D + d] * wt;
      wsum += wt;
      lsum += loss[k];
    }
  int rc = OX_OK;
  ox_value *out;
  if (a->reduction == RED_NONE) {
    out = ox_kctx_output(c, 0, out_dt, t->dims, t->rank);
    if (out)
      for (int64_t k = 0; k < N * D; k++) nn_set_real(out->data, out_dt, k, loss[k]);
  } else {
    out = ox_kctx_output(c, 0, out_dt, NULL, 0);
    if (out) nn_set_real(out->data, out_dt, 0, a->reduction == RED_SUM ? lsum : lsum / wsum);
  }
  if (!out) rc = OX_ERUNTIME;
  free(loss);
  return rc;
}

static int nll_run(ox_kctx *c, void *st) {
  ox_value *x = ox_kctx_input(c, 0), *t = ox_kctx_input(c, 1), *w = ox_kctx_input(c, 2);
  if (!x || !t || !nn_is_real(x->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "input must be a float tensor and target present");
  nn_fbuf fx = {0};
  int rc = nn_fload(c, x, &fx);
  if (rc) return rc;
  rc = nll_core(c, st, fx.p, x, t, w, x->dtype);
  nn_ffree(&fx);
  return rc;
}

static int sce_run(ox_kctx *c, void *st) {
  ox_value *x = ox_kctx_input(c, 0), *t = ox_kctx_input(c, 1), *w = ox_kctx_input(c, 2);
  if (!x || !t || !nn_is_real(x->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "scores must be a float tensor and labels present");
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "scores must have rank >= 2");
  int64_t N = x->dims[0], C = x->dims[1], D = nn_prod(x->dims, 2, x->rank);
  nn_fbuf fx = {0};
  int rc = nn_fload(c, x, &fx);
  if (rc) return rc;
  float *lp = malloc(((size_t)x->numel + 1) * sizeof(float));
  if (!lp) {
    nn_ffree(&fx);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  /* log-softmax over axis 1 */
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++) {
      const float *xs = fx.p + n * C * D + d;
      float *ls = lp + n * C * D + d;
      double mx = -INFINITY, s = 0.0;
      for (int64_t k = 0; k < C; k++)
        if (xs[k * D] > mx) mx = xs[k * D];
      for (int64_t k = 0; k < C; k++) s += exp(xs[k * D] - mx);
      double lse = mx + log(s);
      for (int64_t k = 0; k < C; k++) ls[k * D] = (float)(xs[k * D] - lse);
    }
  rc = nll_core(c, st, lp, x, t, w, x->dtype);
  if (!rc && ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1)) {
    ox_value *o = ox_kctx_output(c, 1, x->dtype, x->dims, x->rank);
    if (!o)
      rc = OX_ERUNTIME;
    else
      for (int64_t i = 0; i < x->numel; i++) nn_set_real(o->data, x->dtype, i, lp[i]);
  }
  free(lp);
  nn_ffree(&fx);
  return rc;
}

const ox_kernel_def ox_ops_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 1000, loss_prepare, nll_run, NULL},
    {"", "SoftmaxCrossEntropyLoss", 12, 1000, loss_prepare, sce_run, NULL},
    {0},
};
