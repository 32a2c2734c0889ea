/* ml_linear.c - ai.onnx.ml linear and SVM models: LinearClassifier,
 * LinearRegressor, SVMClassifier, SVMRegressor (all version 1).
 *
 * Where Operators-ml.md is silent these follow ONNX's reference evaluator
 * (onnx/reference/ops/aionnxml, described in the notes):
 *  - LinearClassifier with one coefficient row and two labels: the scores
 *    are (-s, s); the label is the first maximum of the post-transformed
 *    scores;
 *  - SVMClassifier without support vectors (liblinear form): one row of
 *    coefficients per class, score = x.row + rho[0];
 *  - SVMClassifier with support vectors, libsvm one-vs-one layout: for
 *    classes i < j, decision = rho[pair] + sum over class-i vectors of
 *    coef[j-1][v] K(x,v) + sum over class-j vectors of coef[i][v] K(x,v);
 *    > 0 votes for i. With prob_a/prob_b the pairwise probabilities
 *    1/(1+exp(dec*A+B)) (clamped to [1e-7, 1-1e-7]) are coupled into class
 *    probabilities (libsvm's multiclass_probability, Wu, Lin and Weng 2004).
 *    Without them Z holds the decision values. The label is the class with
 *    most votes (first on ties), or the best score in the liblinear form;
 *    with a single rho and two labels it is label 1 when there are no
 *    probabilities, all coefficients are >= 0 and that maximum is >= 0.5;
 *    a single score with two labels and one rho is output as (-s, s) (post
 *    transform applied) except for PROBIT.
 *  - PROBIT is the exact sqrt(2) erfinv(2p - 1). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ml_common.h"

typedef struct lin_st {
  const float *coef, *icpt;
  size_t ncoef, nicpt;
  int64_t targets; /* regressor */
  mlc_post post;
  char **ls;
  const int64_t *li;
  size_t nl;
} lin_st;

static int labels_read(const ox_kinfo *info, const char *sname, const char *iname, char ***ls,
                       const int64_t **li, size_t *n, ox_err *e) {
  size_t ns, ni;
  bool ok;
  *ls = mlc_strings(info, sname, &ns, &ok);
  *li = mlc_ints(info->node, iname, &ni);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if ((ns > 0) == (ni > 0))
    return oc_prep_fail(info, e, "exactly one of %s and %s must be set", sname, iname);
  *n = ns ? ns : ni;
  return OX_OK;
}

static int lin_prepare(const ox_kinfo *info, void **st, bool cls, ox_err *e) {
  lin_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->coef = mlc_floats(info->node, "coefficients", &s->ncoef);
  s->icpt = mlc_floats(info->node, "intercepts", &s->nicpt);
  if (!s->ncoef) return oc_prep_fail(info, e, "coefficients must be set");
  if (mlc_post_parse(info, ox_node_attr_str(info->node, "post_transform", "NONE"), &s->post, e))
    return e->code;
  if (cls) {
    if (labels_read(info, "classlabels_strings", "classlabels_ints", &s->ls, &s->li, &s->nl, e))
      return e->code;
  } else {
    s->targets = ox_node_attr_int(info->node, "targets", 1);
    if (s->targets < 1 || s->ncoef % (size_t)s->targets)
      return oc_prep_fail(info, e, "%zu coefficients do not split into %lld targets", s->ncoef,
                          (long long)s->targets);
    if (s->nicpt && s->nicpt != (size_t)s->targets)
      return oc_prep_fail(info, e, "%zu intercepts for %lld targets", s->nicpt,
                          (long long)s->targets);
  }
  *st = s;
  return OX_OK;
}
static int lc_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return lin_prepare(info, st, true, e);
}
static int lr_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return lin_prepare(info, st, false, e);
}

/* label output, and the [N, E] (or [N, 2] binary) score output */
static int cls_outputs(ox_kctx *ctx, int64_t N, int64_t E, char **ls, ox_value **lab,
                       ox_value **z) {
  *lab = ox_kctx_output(ctx, 0, ls ? OX_STRING : OX_INT64, &N, 1);
  if (!*lab) return OX_ERUNTIME;
  *z = NULL;
  if (ox_kctx_output_wanted(ctx, 1)) {
    int64_t d[2] = {N, E};
    *z = ox_kctx_output(ctx, 1, OX_FLOAT, d, 2);
    if (!*z) return OX_ERUNTIME;
  }
  return OX_OK;
}
static int set_label(ox_kctx *ctx, ox_value *lab, int64_t r, char **ls, const int64_t *li,
                     size_t k) {
  if (ls) return mlc_set_str(ctx, lab, r, ls[k]);
  ((int64_t *)lab->data)[r] = li[k];
  return OX_OK;
}
static int lin_run(ox_kctx *ctx, void *st, bool cls) {
  lin_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  int64_t N, C;
  if (!x || mlc_input_2d(ctx, x, &N, &C)) return OX_ERUNTIME;
  if (C <= 0 || s->ncoef % (size_t)C)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu coefficients do not fit %lld features", s->ncoef,
                        (long long)C);
  int64_t E = (int64_t)s->ncoef / C;
  if (!cls && E != s->targets)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu coefficients for %lld targets of %lld features",
                        s->ncoef, (long long)s->targets, (long long)C);
  if (cls && !(E == (int64_t)s->nl || (E == 1 && s->nl == 2)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%lld coefficient rows for %zu class labels",
                        (long long)E, s->nl);
  if (s->nicpt && (int64_t)s->nicpt != E)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu intercepts for %lld score rows", s->nicpt,
                        (long long)E);
  bool binary = cls && E == 1;
  int64_t ZE = binary ? 2 : E;
  ox_value *lab = NULL, *z = NULL;
  if (cls) {
    if (cls_outputs(ctx, N, ZE, s->ls, &lab, &z)) return OX_ERUNTIME;
  } else {
    int64_t d[2] = {N, E};
    z = ox_kctx_output(ctx, 0, OX_FLOAT, d, 2);
    if (!z) return OX_ERUNTIME;
  }
  double *sc = malloc((size_t)(ZE + 1) * sizeof *sc);
  if (!sc) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  int rc = OX_OK;
  for (int64_t r = 0; r < N && !rc; r++) {
    for (int64_t k = 0; k < E; k++) {
      double a = s->nicpt ? s->icpt[k] : 0;
      for (int64_t j = 0; j < C; j++)
        a += oc_get(x->data, x->dtype, r * C + j) * (double)s->coef[k * C + j];
      sc[k] = a;
    }
    if (binary) {
      sc[1] = sc[0];
      sc[0] = -sc[1];
    }
    mlc_post_apply(s->post, sc, (size_t)ZE);
    size_t best = 0;
    for (int64_t k = 1; k < ZE; k++)
      if (sc[k] > sc[best]) best = (size_t)k;
    if (lab) rc = set_label(ctx, lab, r, s->ls, s->li, best);
    if (z)
      for (int64_t k = 0; k < ZE; k++) ((float *)z->data)[r * ZE + k] = (float)sc[k];
  }
  free(sc);
  return rc;
}
static int lc_run(ox_kctx *ctx, void *st) { return lin_run(ctx, st, true); }
static int lr_run(ox_kctx *ctx, void *st) { return lin_run(ctx, st, false); }

/* ---------------- SVM ---------------- */
enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };
typedef struct svm_st {
  int kernel;
  double gamma, coef0, degree;
  const float *coef, *sv, *rho, *pa, *pb;
  size_t ncoef, nsv_f, nrho, npa, npb;
  const int64_t *vpc;
  size_t nvpc;
  int64_t nsv; /* support vectors (0: linear mode) */
  bool one_class;
  mlc_post post;
  char **ls;
  const int64_t *li;
  size_t nl;
} svm_st;

static double svm_k(const svm_st *s, const double *x, const float *v, int64_t C) {
  double d = 0;
  if (s->kernel == K_RBF) {
    for (int64_t j = 0; j < C; j++) {
      double t = x[j] - (double)v[j];
      d += t * t;
    }
    return exp(-s->gamma * d);
  }
  for (int64_t j = 0; j < C; j++) d += x[j] * (double)v[j];
  if (s->kernel == K_POLY) return pow(s->gamma * d + s->coef0, s->degree);
  if (s->kernel == K_SIGMOID) return tanh(s->gamma * d + s->coef0);
  return d;
}

static int svm_prepare(const ox_kinfo *info, void **st, bool cls, ox_err *e) {
  svm_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const ox_node *n = info->node;
  const char *kt = ox_node_attr_str(n, "kernel_type", "LINEAR");
  static const char *const kn[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
  s->kernel = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(kt, kn[k])) s->kernel = k;
  if (s->kernel < 0) return oc_prep_fail(info, e, "unknown kernel_type '%s'", kt);
  size_t nkp;
  const float *kp = mlc_floats(n, "kernel_params", &nkp);
  if (nkp && nkp != 3)
    return oc_prep_fail(info, e, "kernel_params must hold gamma, coef0, degree (got %zu)", nkp);
  if (nkp) {
    s->gamma = kp[0];
    s->coef0 = kp[1];
    s->degree = kp[2];
  }
  s->coef = mlc_floats(n, "coefficients", &s->ncoef);
  s->sv = mlc_floats(n, "support_vectors", &s->nsv_f);
  s->rho = mlc_floats(n, "rho", &s->nrho);
  if (mlc_post_parse(info, ox_node_attr_str(n, "post_transform", "NONE"), &s->post, e))
    return e->code;
  if (!s->nrho) return oc_prep_fail(info, e, "rho must be set");
  if (!cls) {
    s->nsv = ox_node_attr_int(n, "n_supports", 0);
    s->one_class = ox_node_attr_int(n, "one_class", 0) != 0;
    if (s->nsv < 0 || s->nsv > INT32_MAX) return oc_prep_fail(info, e, "n_supports is invalid");
    if (s->nsv > 0 && s->ncoef != (size_t)s->nsv)
      return oc_prep_fail(info, e, "%zu coefficients for %lld support vectors", s->ncoef,
                          (long long)s->nsv);
    if (!s->ncoef) return oc_prep_fail(info, e, "coefficients must be set");
  } else {
    if (labels_read(info, "classlabels_strings", "classlabels_ints", &s->ls, &s->li, &s->nl, e))
      return e->code;
    s->vpc = mlc_ints(n, "vectors_per_class", &s->nvpc);
    s->pa = mlc_floats(n, "prob_a", &s->npa);
    s->pb = mlc_floats(n, "prob_b", &s->npb);
    if (s->npa != s->npb) return oc_prep_fail(info, e, "prob_a and prob_b differ in length");
    int64_t tot = 0;
    for (size_t k = 0; k < s->nvpc; k++) {
      if (s->vpc[k] < 0 || s->vpc[k] > INT32_MAX)
        return oc_prep_fail(info, e, "vectors_per_class[%zu] = %lld is invalid", k,
                            (long long)s->vpc[k]);
      tot += s->vpc[k];
      if (tot > INT32_MAX) return oc_prep_fail(info, e, "too many support vectors");
    }
    s->nsv = tot;
    if (tot > 0) {
      size_t L = s->nl, pairs = L * (L - 1) / 2;
      if (s->nvpc != L)
        return oc_prep_fail(info, e, "vectors_per_class has %zu entries for %zu classes", s->nvpc,
                            L);
      if (L < 2) return oc_prep_fail(info, e, "an SVM needs at least 2 classes");
      if (s->ncoef != (L - 1) * (size_t)tot)
        return oc_prep_fail(info, e, "%zu coefficients, expected (classes-1)*vectors = %zu",
                            s->ncoef, (L - 1) * (size_t)tot);
      if (s->nrho != pairs)
        return oc_prep_fail(info, e, "rho has %zu entries, expected %zu class pairs", s->nrho,
                            pairs);
      if (s->npa && s->npa != pairs)
        return oc_prep_fail(info, e, "prob_a has %zu entries, expected %zu", s->npa, pairs);
    } else if (!s->ncoef) {
      return oc_prep_fail(info, e, "coefficients must be set");
    }
  }
  *st = s;
  return OX_OK;
}
static int svc_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return svm_prepare(info, st, true, e);
}
static int svr_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return svm_prepare(info, st, false, e);
}

/* nf support vector values make nsv (> 0) vectors of C features */
static bool sv_fits(size_t nf, int64_t nsv, int64_t C) {
  return C > 0 && nf % (size_t)nsv == 0 && nf / (size_t)nsv == (size_t)C;
}

static int svr_run(ox_kctx *ctx, void *st) {
  svm_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  int64_t N, C;
  if (!x || mlc_input_2d(ctx, x, &N, &C)) return OX_ERUNTIME;
  if (s->nsv > 0 ? !sv_fits(s->nsv_f, s->nsv, C) : s->ncoef != (size_t)C)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "model sizes do not fit %lld features", (long long)C);
  int64_t d[2] = {N, 1};
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, d, 2);
  double *xr = malloc((size_t)(C + 1) * sizeof *xr);
  if (!y || !xr) {
    free(xr);
    return y ? ox_kctx_fail(ctx, OX_ENOMEM, "out of memory") : OX_ERUNTIME;
  }
  for (int64_t r = 0; r < N; r++) {
    for (int64_t j = 0; j < C; j++) xr[j] = oc_get(x->data, x->dtype, r * C + j);
    double a = 0;
    if (s->nsv > 0)
      for (int64_t v = 0; v < s->nsv; v++) a += (double)s->coef[v] * svm_k(s, xr, s->sv + v * C, C);
    else
      a = svm_k(s, xr, s->coef, C);
    a += (double)s->rho[0];
    if (s->one_class) a = a > 0 ? 1.0 : -1.0;
    mlc_post_apply(s->post, &a, 1);
    ((float *)y->data)[r] = (float)a;
  }
  free(xr);
  return OX_OK;
}

/* libsvm's pairwise coupling; r is k*k, p gets k probabilities */
static void svm_couple(size_t k, const double *r, double *p, double *Q, double *Qp) {
  for (size_t t = 0; t < k; t++) {
    p[t] = 1.0 / (double)k;
    Q[t * k + t] = 0;
    for (size_t j = 0; j < k; j++)
      if (j != t) {
        Q[t * k + t] += r[j * k + t] * r[j * k + t];
        Q[t * k + j] = -r[j * k + t] * r[t * k + j];
      }
  }
  size_t max_iter = k > 100 ? k : 100;
  double eps = 0.005 / (double)k;
  for (size_t it = 0; it < max_iter; it++) {
    double pQp = 0;
    for (size_t t = 0; t < k; t++) {
      Qp[t] = 0;
      for (size_t j = 0; j < k; j++) Qp[t] += Q[t * k + j] * p[j];
      pQp += p[t] * Qp[t];
    }
    double max_err = 0;
    for (size_t t = 0; t < k; t++) {
      double er = fabs(Qp[t] - pQp);
      if (er > max_err) max_err = er;
    }
    if (max_err < eps) break;
    for (size_t t = 0; t < k; t++) {
      double diff = (-Qp[t] + pQp) / Q[t * k + t];
      p[t] += diff;
      pQp = (pQp + diff * (diff * Q[t * k + t] + 2 * Qp[t])) / (1 + diff) / (1 + diff);
      for (size_t j = 0; j < k; j++) {
        Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

static int svc_run(ox_kctx *ctx, void *st) {
  svm_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  int64_t N, C;
  if (!x || mlc_input_2d(ctx, x, &N, &C)) return OX_ERUNTIME;
  size_t L = s->nl, pairs = L * (L - 1) / 2;
  bool linear = s->nsv == 0, proba = s->npa > 0 && !linear;
  int64_t E; /* raw score columns */
  if (linear) {
    if ((int64_t)s->ncoef != (int64_t)L * C)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu coefficients, expected classes*features = %lld",
                          s->ncoef, (long long)L * C);
    E = (int64_t)L;
  } else {
    if (!sv_fits(s->nsv_f, s->nsv, C))
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "%zu support vector values for %lld vectors of %lld features", s->nsv_f,
                          (long long)s->nsv, (long long)C);
    E = proba ? (int64_t)L : (int64_t)pairs;
  }
  /* a single score becomes (-s, s) for two labels with one rho, except PROBIT */
  bool pair_out = s->nrho == 1 && L == 2;
  int64_t ZE = E >= 2 ? E : (s->post != MLC_PROBIT && pair_out ? 2 : 1);
  bool all_pos = true;
  for (size_t k = 0; k < s->ncoef; k++)
    if (s->coef[k] < 0) all_pos = false;
  ox_value *lab, *z;
  if (cls_outputs(ctx, N, ZE, s->ls, &lab, &z)) return OX_ERUNTIME;
  size_t nk = (size_t)(linear ? 0 : s->nsv);
  size_t need = (size_t)C + nk + (size_t)E + L + pairs + 3 * L * L + 4;
  double *buf = malloc(need * sizeof *buf);
  if (!buf) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  double *xr = buf, *kv = xr + C, *sc = kv + nk, *votes = sc + E + 2, *dec = votes + L,
         *rm = dec + pairs, *Q = rm + L * L, *Qp = Q + L * L;
  int rc = OX_OK;
  for (int64_t r = 0; r < N && !rc; r++) {
    for (int64_t j = 0; j < C; j++) xr[j] = oc_get(x->data, x->dtype, r * C + j);
    const double *w; /* what the label is chosen from: votes, else the raw scores */
    size_t nw;
    if (linear) {
      /* liblinear form: always a dot product, plus rho[0] */
      for (int64_t k = 0; k < E; k++) {
        double a = (double)s->rho[0];
        for (int64_t j = 0; j < C; j++) a += xr[j] * (double)s->coef[k * C + j];
        sc[k] = a;
      }
      w = sc;
      nw = (size_t)E;
    } else {
      for (size_t v = 0; v < nk; v++) kv[v] = svm_k(s, xr, s->sv + v * (size_t)C, C);
      for (size_t k = 0; k < L; k++) votes[k] = 0;
      size_t p = 0, si = 0;
      for (size_t i = 0; i < L; i++) {
        size_t sj = si + (size_t)s->vpc[i];
        for (size_t j = i + 1; j < L; j++, p++) {
          double a = (double)s->rho[p];
          for (int64_t v = 0; v < s->vpc[i]; v++)
            a += (double)s->coef[(j - 1) * nk + si + (size_t)v] * kv[si + (size_t)v];
          for (int64_t v = 0; v < s->vpc[j]; v++)
            a += (double)s->coef[i * nk + sj + (size_t)v] * kv[sj + (size_t)v];
          dec[p] = a;
          votes[a > 0 ? i : j] += 1;
          sj += (size_t)s->vpc[j];
        }
        si += (size_t)s->vpc[i];
      }
      if (proba) {
        p = 0;
        for (size_t i = 0; i < L; i++)
          for (size_t j = i + 1; j < L; j++, p++) {
            double f = dec[p] * (double)s->pa[p] + (double)s->pb[p];
            double q = f >= 0 ? exp(-f) / (1 + exp(-f)) : 1 / (1 + exp(f));
            q = q < 1e-7 ? 1e-7 : q > 1 - 1e-7 ? 1 - 1e-7 : q;
            rm[i * L + j] = q;
            rm[j * L + i] = 1 - q;
          }
        svm_couple(L, rm, sc, Q, Qp);
      } else {
        memcpy(sc, dec, pairs * sizeof *sc);
      }
      w = votes;
      nw = L;
    }
    size_t best = 0;
    for (size_t k = 1; k < nw; k++)
      if (w[k] > w[best]) best = k;
    double maxw = nw ? w[best] : 0;
    if (s->nrho == 1 && L == 2) {
      if (!proba && all_pos && maxw >= 0.5) best = 1;
    } else if (s->nrho == 1 && L < 2) {
      /* one rho and one label: the label is the class index 1 or 0 itself
       * (more labels, the liblinear form: the best score, as onnxruntime) */
      best = maxw > 0 ? 1 : 0;
      if (s->li && best >= L) {
        ((int64_t *)lab->data)[r] = (int64_t)best;
        best = SIZE_MAX;
      } else if (best >= L) {
        rc = ox_kctx_fail(ctx, OX_ERUNTIME, "no class label for class index %zu", best);
        break;
      }
    }
    if (E >= 2) {
      mlc_post_apply(s->post, sc, (size_t)E);
    } else if (s->post == MLC_PROBIT) {
      sc[0] = mlc_probit(sc[0]);
    } else if (pair_out) {
      sc[1] = sc[0];
      sc[0] = -sc[1];
      mlc_post_apply(s->post, sc, 2);
    }
    if (best != SIZE_MAX) rc = set_label(ctx, lab, r, s->ls, s->li, best);
    if (z)
      for (int64_t k = 0; k < ZE; k++) ((float *)z->data)[r * ZE + k] = (float)sc[k];
  }
  free(buf);
  return rc;
}

const ox_kernel_def ox_ops_ml_linear[] = {
    {ML_DOMAIN, "LinearClassifier", 1, 1000, lc_prepare, lc_run, NULL},
    {ML_DOMAIN, "LinearRegressor", 1, 1000, lr_prepare, lr_run, NULL},
    {ML_DOMAIN, "SVMClassifier", 1, 1000, svc_prepare, svc_run, NULL},
    {ML_DOMAIN, "SVMRegressor", 1, 1000, svr_prepare, svr_run, NULL},
    {0},
};
