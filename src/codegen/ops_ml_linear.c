/* ops_ml_linear.c - the C generators of the ai.onnx.ml linear and SVM
 * models: LinearClassifier, LinearRegressor, SVMClassifier, SVMRegressor
 * (kernels LINEAR, POLY, RBF, SIGMOID; probabilities from prob_a/prob_b by
 * libsvm's pairwise coupling). The semantics are the runtime's
 * (src/ops/ml/ml_linear.c, whose notes say where they follow ONNX's
 * reference evaluator): the same sums in the same order, in double (float
 * with --float-only); the coefficients become constant tables. Class labels
 * are int64 (string labels are refused). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_ml.h"

enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

static int oom(cg_ctx *c) { return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory"); }

/* A float list attribute as doubles (NULL, *cnt 0 when absent). */
static int floats_attr(cg_ctx *c, const ox_node *n, const char *name, double **d, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_floats : 0;
  *d = ox_arena_calloc(c->a, *cnt + 1, sizeof **d);
  if (!*d) return oom(c);
  for (size_t i = 0; i < *cnt; i++) (*d)[i] = a->floats[i];
  return OX_OK;
}

/* Copies row r of X into xr[C] in the accumulation type. */
static void load_row(cg_ctx *c, int64_t C) {
  const char *A = cg_ml_acc(c);
  cg_printf(c, "    %s xr[%lld];\n", A, (long long)(C ? C : 1));
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) xr[j] = (%s)X0[r * %lld + j];\n", (long long)C,
            A, (long long)C);
}

/* Writes `best`, the index of the first maximum of w[0..n) (the label's). */
static void first_best(cg_ctx *c, const char *w, int64_t n) {
  cg_printf(c, "    size_t best = 0;\n");
  cg_printf(c, "    for (size_t k = 1; k < %lld; k++)\n      if (%s[k] > %s[best]) best = k;\n",
            (long long)n, w, w);
}

/* ---- LinearClassifier / LinearRegressor: score k = intercept[k] + x . coef row k ---- */
static int linear(cg_ctx *c, const ox_node *n, cg_val **in, cg_val **out, size_t n_out, bool cls) {
  const cg_val *X = in[0];
  int64_t N, C;
  int rc = cg_ml_input_2d(c, X, &N, &C);
  if (rc) return rc;
  double *coef, *icpt;
  size_t ncoef, nicpt;
  int post;
  if ((rc = floats_attr(c, n, "coefficients", &coef, &ncoef)) ||
      (rc = floats_attr(c, n, "intercepts", &icpt, &nicpt)) || (rc = cg_ml_post_parse(c, n, &post)))
    return rc;
  if (!ncoef) return cg_fail(c, OX_EMODEL, "coefficients must be set");
  if (C <= 0 || ncoef % (size_t)C)
    return cg_fail(c, OX_EMODEL, "%zu coefficients do not fit %lld features", ncoef, (long long)C);
  int64_t E = (int64_t)ncoef / C;
  const int64_t *labels = NULL;
  size_t nl = 0;
  if (cls) {
    if ((rc = cg_ml_labels(c, n, "classlabels_ints", &labels, &nl))) return rc;
    if (!(E == (int64_t)nl || (E == 1 && nl == 2)))
      return cg_fail(c, OX_EMODEL, "%lld coefficient rows for %zu class labels", (long long)E, nl);
  } else {
    int64_t targets = ox_node_attr_int(n, "targets", 1);
    if (E != targets)
      return cg_fail(c, OX_EMODEL, "%zu coefficients for %lld targets of %lld features", ncoef,
                     (long long)targets, (long long)C);
  }
  if (nicpt && (int64_t)nicpt != E)
    return cg_fail(c, OX_EMODEL, "%zu intercepts for %lld score rows", nicpt, (long long)E);
  bool binary = cls && E == 1;
  int64_t ZE = binary ? 2 : E;
  const cg_val *L = cls ? out[0] : NULL, *Z = cls ? (n_out > 1 ? out[1] : NULL) : out[0];
  if (!L && !Z) return OX_OK; /* no output used */
  if (L && (L->dtype != OX_INT64 || L->numel != N))
    return cg_fail(c, OX_EMODEL, "the label output must be int64 [%lld]", (long long)N);
  if (Z && (Z->dtype != OX_FLOAT || Z->numel != N * ZE))
    return cg_fail(c, OX_EMODEL, "the scores output must be float [%lld, %lld]", (long long)N,
                   (long long)ZE);
  const char *A = cg_ml_acc(c);
  char zero[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_ml_table_d(c, "coef", coef, ncoef);
  if (nicpt) cg_ml_table_d(c, "icpt", icpt, nicpt);
  if (L) cg_ml_table_i(c, "int64_t", "labels", labels, nl);
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)N);
  cg_printf(c, "    %s sc[%lld];\n", A, (long long)(ZE < 2 ? 2 : ZE));
  cg_printf(c, "    for (size_t k = 0; k < %lld; k++) {\n", (long long)E);
  cg_printf(c, "      %s a = %s;\n", A, nicpt ? "icpt[k]" : zero);
  cg_printf(c, "      for (size_t j = 0; j < %lld; j++) a += (%s)X0[r * %lld + j] * coef[k * %lld + j];\n",
            (long long)C, A, (long long)C, (long long)C);
  cg_printf(c, "      sc[k] = a;\n    }\n");
  if (binary) cg_printf(c, "    sc[1] = sc[0];\n    sc[0] = -sc[1];\n");
  cg_ml_post(c, post, "sc", ZE, "    ");
  const char *zy = cls ? "Y1" : "Y0";
  if (L) {
    first_best(c, "sc", ZE);
    cg_printf(c, "    Y0[r] = labels[best];\n");
  }
  if (Z)
    cg_printf(c, "    for (size_t k = 0; k < %lld; k++) %s[r * %lld + k] = (float)sc[k];\n",
              (long long)ZE, zy, (long long)ZE);
  cg_printf(c, "  }\n");
  return OX_OK;
}

int cg_ml_gen_linear_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                                cg_val **out, size_t n_out) {
  (void)n_in;
  return linear(c, n, in, out, n_out, true);
}
int cg_ml_gen_linear_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                               cg_val **out, size_t n_out) {
  (void)n_in;
  return linear(c, n, in, out, n_out, false);
}

/* ---- SVM ---- */
typedef struct svm {
  int kernel, post;
  double gamma, coef0, degree;
  double *coef, *sv, *rho, *pa, *pb;
  size_t ncoef, nsv_f, nrho, npa, npb;
} svm;

static int svm_read(cg_ctx *c, const ox_node *n, svm *s) {
  const char *kt = ox_node_attr_str(n, "kernel_type", "LINEAR");
  static const char *const kn[] = {"LINEAR", "POLY", "RBF", "SIGMOID"};
  s->kernel = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(kt, kn[k])) s->kernel = k;
  if (s->kernel < 0) return cg_fail(c, OX_EMODEL, "unknown kernel_type '%s'", kt);
  double *kp;
  size_t nkp;
  int rc;
  if ((rc = floats_attr(c, n, "kernel_params", &kp, &nkp))) return rc;
  if (nkp && nkp != 3)
    return cg_fail(c, OX_EMODEL, "kernel_params must hold gamma, coef0, degree (got %zu)", nkp);
  s->gamma = nkp ? kp[0] : 0, s->coef0 = nkp ? kp[1] : 0, s->degree = nkp ? kp[2] : 0;
  if ((rc = floats_attr(c, n, "coefficients", &s->coef, &s->ncoef)) ||
      (rc = floats_attr(c, n, "support_vectors", &s->sv, &s->nsv_f)) ||
      (rc = floats_attr(c, n, "rho", &s->rho, &s->nrho)) ||
      (rc = floats_attr(c, n, "prob_a", &s->pa, &s->npa)) ||
      (rc = floats_attr(c, n, "prob_b", &s->pb, &s->npb)) || (rc = cg_ml_post_parse(c, n, &s->post)))
    return rc;
  if (!s->nrho) return cg_fail(c, OX_EMODEL, "rho must be set");
  return OX_OK;
}

/* nf support vector values make nsv (> 0) vectors of C features */
static bool sv_fits(size_t nf, int64_t nsv, int64_t C) {
  return C > 0 && nf % (size_t)nsv == 0 && nf / (size_t)nsv == (size_t)C;
}

/* Writes `dst = K(xr, vec)` for vector expression vec (C values of the
 * accumulation type), indented by ind, as the runtime's svm_k. */
static void kernel(cg_ctx *c, const svm *s, const char *dst, const char *vec, int64_t C,
                   const char *ind) {
  const char *A = cg_ml_acc(c);
  int32_t t = cg_ml_acc_float(c) ? OX_FLOAT : OX_DOUBLE;
  char zero[48], g[48], c0[48], dg[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_ml_lit(c, g, sizeof g, s->gamma);
  cg_ml_lit(c, c0, sizeof c0, s->coef0);
  cg_ml_lit(c, dg, sizeof dg, s->degree);
  cg_printf(c, "%s{\n%s  %s d = %s;\n", ind, ind, A, zero);
  cg_printf(c, "%s  for (size_t j = 0; j < %lld; j++) ", ind, (long long)C);
  if (s->kernel == K_RBF) {
    cg_printf(c, "{\n%s    const %s u = xr[j] - %s[j];\n%s    d += u * u;\n%s  }\n", ind, A, vec, ind,
              ind);
    cg_printf(c, "%s  %s = %s(-%s * d);\n", ind, dst, cg_mathfn(c, t, "exp"), g);
  } else {
    cg_printf(c, "d += xr[j] * %s[j];\n", vec);
    if (s->kernel == K_POLY)
      cg_printf(c, "%s  %s = %s(%s * d + %s, %s);\n", ind, dst, cg_mathfn(c, t, "pow"), g, c0, dg);
    else if (s->kernel == K_SIGMOID)
      cg_printf(c, "%s  %s = %s(%s * d + %s);\n", ind, dst, cg_mathfn(c, t, "tanh"), g, c0);
    else
      cg_printf(c, "%s  %s = d;\n", ind, dst);
  }
  cg_printf(c, "%s}\n", ind);
}

int cg_ml_gen_svm_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  (void)n_in, (void)n_out;
  int64_t N, C;
  int rc = cg_ml_input_2d(c, in[0], &N, &C);
  if (rc) return rc;
  svm s;
  if ((rc = svm_read(c, n, &s))) return rc;
  int64_t nsv = ox_node_attr_int(n, "n_supports", 0);
  bool one_class = ox_node_attr_int(n, "one_class", 0) != 0;
  if (nsv < 0 || nsv > INT32_MAX) return cg_fail(c, OX_EMODEL, "n_supports is invalid");
  if (nsv > 0 && s.ncoef != (size_t)nsv)
    return cg_fail(c, OX_EMODEL, "%zu coefficients for %lld support vectors", s.ncoef,
                   (long long)nsv);
  if (!s.ncoef) return cg_fail(c, OX_EMODEL, "coefficients must be set");
  if (nsv > 0 ? !sv_fits(s.nsv_f, nsv, C) : s.ncoef != (size_t)C)
    return cg_fail(c, OX_EMODEL, "model sizes do not fit %lld features", (long long)C);
  if (!out[0]) return OX_OK; /* its only output unused */
  if (out[0]->dtype != OX_FLOAT || out[0]->numel != N)
    return cg_fail(c, OX_EMODEL, "the output must be float [%lld, 1]", (long long)N);
  const char *A = cg_ml_acc(c);
  char zero[48], one[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_ml_lit(c, one, sizeof one, 1.0);
  cg_ml_table_d(c, "coef", s.coef, s.ncoef);
  if (nsv > 0) cg_ml_table_d(c, "sv", s.sv, s.nsv_f);
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)N);
  load_row(c, C);
  cg_printf(c, "    %s a[1] = {%s}, k;\n", A, zero);
  if (nsv > 0) {
    cg_printf(c, "    for (size_t v = 0; v < %lld; v++) {\n", (long long)nsv);
    kernel(c, &s, "k", ox_arena_printf(c->a, "(sv + v * %lld)", (long long)C), C, "      ");
    cg_printf(c, "      a[0] += coef[v] * k;\n    }\n");
  } else {
    kernel(c, &s, "k", "coef", C, "    ");
    cg_printf(c, "    a[0] = k;\n");
  }
  char rho[48];
  cg_ml_lit(c, rho, sizeof rho, s.rho[0]);
  cg_printf(c, "    a[0] += %s;\n", rho);
  if (one_class) cg_printf(c, "    a[0] = a[0] > 0 ? %s : -%s;\n", one, one);
  cg_ml_post(c, s.post, "a", 1, "    ");
  cg_printf(c, "    Y0[r] = (float)a[0];\n  }\n");
  return OX_OK;
}

/* libsvm's multiclass_probability (Wu, Lin and Weng 2004) on the pairwise
 * probabilities rm (L x L) into sc[0..L), as the runtime's svm_couple. */
static void couple(cg_ctx *c, int64_t L) {
  const char *A = cg_ml_acc(c);
  int32_t t = cg_ml_acc_float(c) ? OX_FLOAT : OX_DOUBLE;
  char inv[48], eps[48], one[48], two[48], zero[48];
  cg_ml_lit(c, inv, sizeof inv, 1.0 / (double)L);
  cg_ml_lit(c, eps, sizeof eps, 0.005 / (double)L);
  cg_ml_lit(c, one, sizeof one, 1.0);
  cg_ml_lit(c, two, sizeof two, 2.0);
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  long long k = (long long)L, iters = L > 100 ? k : 100;
  cg_printf(c, "      %s Q[%lld], Qp[%lld];\n", A, k * k, k);
  cg_printf(c, "      for (size_t t = 0; t < %lld; t++) {\n", k);
  cg_printf(c, "        sc[t] = %s;\n        Q[t * %lld + t] = %s;\n", inv, k, zero);
  cg_printf(c, "        for (size_t j = 0; j < %lld; j++)\n          if (j != t) {\n", k);
  cg_printf(c, "            Q[t * %lld + t] += rm[j * %lld + t] * rm[j * %lld + t];\n", k, k, k);
  cg_printf(c, "            Q[t * %lld + j] = -rm[j * %lld + t] * rm[t * %lld + j];\n          }\n      }\n",
            k, k, k);
  cg_printf(c, "      for (size_t it = 0; it < %lld; it++) {\n", iters);
  cg_printf(c, "        %s pQp = %s, max_err = %s;\n", A, zero, zero);
  cg_printf(c, "        for (size_t t = 0; t < %lld; t++) {\n          Qp[t] = %s;\n", k, zero);
  cg_printf(c, "          for (size_t j = 0; j < %lld; j++) Qp[t] += Q[t * %lld + j] * sc[j];\n", k, k);
  cg_printf(c, "          pQp += sc[t] * Qp[t];\n        }\n");
  cg_printf(c, "        for (size_t t = 0; t < %lld; t++) {\n", k);
  cg_printf(c, "          const %s er = %s(Qp[t] - pQp);\n", A, cg_mathfn(c, t, "fabs"));
  cg_printf(c, "          if (er > max_err) max_err = er;\n        }\n");
  cg_printf(c, "        if (max_err < %s) break;\n", eps);
  cg_printf(c, "        for (size_t t = 0; t < %lld; t++) {\n", k);
  cg_printf(c, "          const %s diff = (-Qp[t] + pQp) / Q[t * %lld + t];\n", A, k);
  cg_printf(c, "          sc[t] += diff;\n");
  cg_printf(c, "          pQp = (pQp + diff * (diff * Q[t * %lld + t] + %s * Qp[t])) / (%s + diff) / (%s + diff);\n",
            k, two, one, one);
  cg_printf(c, "          for (size_t j = 0; j < %lld; j++) {\n", k);
  cg_printf(c, "            Qp[j] = (Qp[j] + diff * Q[t * %lld + j]) / (%s + diff);\n", k, one);
  cg_printf(c, "            sc[j] /= (%s + diff);\n          }\n        }\n      }\n", one);
}

/* SVMClassifier, as the runtime's svc_run (its notes give the rules):
 * without support vectors one coefficient row per class (score = x.row +
 * rho[0]); with them libsvm's one-vs-one decisions, votes, and with
 * prob_a/prob_b the coupled probabilities. */
int cg_ml_gen_svm_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  (void)n_in;
  int64_t N, C;
  int rc = cg_ml_input_2d(c, in[0], &N, &C);
  if (rc) return rc;
  svm s;
  const int64_t *labels;
  size_t nl;
  if ((rc = svm_read(c, n, &s)) || (rc = cg_ml_labels(c, n, "classlabels_ints", &labels, &nl)))
    return rc;
  if (s.npa != s.npb) return cg_fail(c, OX_EMODEL, "prob_a and prob_b differ in length");
  const ox_attr *va = ox_node_attr(n, "vectors_per_class");
  size_t nvpc = va ? va->n_ints : 0;
  int64_t nsv = 0;
  for (size_t k = 0; k < nvpc; k++) {
    if (va->ints[k] < 0 || va->ints[k] > INT32_MAX)
      return cg_fail(c, OX_EMODEL, "vectors_per_class[%zu] = %lld is invalid", k,
                     (long long)va->ints[k]);
    nsv += va->ints[k];
    if (nsv > INT32_MAX) return cg_fail(c, OX_EMODEL, "too many support vectors");
  }
  int64_t L = (int64_t)nl, pairs = L * (L - 1) / 2, E;
  bool lin = nsv == 0, proba = s.npa > 0 && !lin;
  if (lin) {
    if (!s.ncoef) return cg_fail(c, OX_EMODEL, "coefficients must be set");
    if ((int64_t)s.ncoef != L * C)
      return cg_fail(c, OX_EMODEL, "%zu coefficients, expected classes*features = %lld", s.ncoef,
                     (long long)(L * C));
    E = L;
  } else {
    if ((int64_t)nvpc != L)
      return cg_fail(c, OX_EMODEL, "vectors_per_class has %zu entries for %zu classes", nvpc, nl);
    if (L < 2) return cg_fail(c, OX_EMODEL, "an SVM needs at least 2 classes");
    if ((int64_t)s.ncoef != (L - 1) * nsv)
      return cg_fail(c, OX_EMODEL, "%zu coefficients, expected (classes-1)*vectors = %lld",
                     s.ncoef, (long long)((L - 1) * nsv));
    if ((int64_t)s.nrho != pairs)
      return cg_fail(c, OX_EMODEL, "rho has %zu entries, expected %lld class pairs", s.nrho,
                     (long long)pairs);
    if (s.npa && (int64_t)s.npa != pairs)
      return cg_fail(c, OX_EMODEL, "prob_a has %zu entries, expected %lld", s.npa, (long long)pairs);
    if (!sv_fits(s.nsv_f, nsv, C))
      return cg_fail(c, OX_EMODEL, "%zu support vector values for %lld vectors of %lld features",
                     s.nsv_f, (long long)nsv, (long long)C);
    E = proba ? L : pairs;
  }
  bool pair_out = s.nrho == 1 && L == 2;
  int64_t ZE = E >= 2 ? E : (s.post != CG_ML_PROBIT && pair_out ? 2 : 1);
  bool all_pos = true;
  for (size_t k = 0; k < s.ncoef; k++)
    if (s.coef[k] < 0) all_pos = false;
  const cg_val *Lo = out[0], *Z = n_out > 1 ? out[1] : NULL;
  if (Lo && (Lo->dtype != OX_INT64 || Lo->numel != N))
    return cg_fail(c, OX_EMODEL, "the label output must be int64 [%lld]", (long long)N);
  if (Z && (Z->dtype != OX_FLOAT || Z->numel != N * ZE))
    return cg_fail(c, OX_EMODEL, "the scores output must be float [%lld, %lld]", (long long)N,
                   (long long)ZE);
  const char *A = cg_ml_acc(c);
  char zero[48], one[48], half[48], lo[48], hi[48], rho0[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_ml_lit(c, one, sizeof one, 1.0);
  cg_ml_lit(c, half, sizeof half, 0.5);
  cg_ml_lit(c, lo, sizeof lo, 1e-7);
  cg_ml_lit(c, hi, sizeof hi, 1 - 1e-7);
  cg_ml_lit(c, rho0, sizeof rho0, s.rho[0]);
  cg_ml_table_d(c, "coef", s.coef, s.ncoef);
  if (Lo) cg_ml_table_i(c, "int64_t", "labels", labels, nl);
  if (!lin) {
    /* pair p = (i, j), i < j in order; class k's vectors from start[k] */
    int64_t *pi = ox_arena_calloc(c->a, (size_t)pairs + 1, sizeof *pi);
    int64_t *pj = ox_arena_calloc(c->a, (size_t)pairs + 1, sizeof *pj);
    int64_t *start = ox_arena_calloc(c->a, (size_t)L + 1, sizeof *start);
    if (!pi || !pj || !start) return oom(c);
    for (int64_t i = 0, p = 0; i < L; i++)
      for (int64_t j = i + 1; j < L; j++, p++) pi[p] = i, pj[p] = j;
    for (int64_t i = 0; i < L; i++) start[i + 1] = start[i] + va->ints[i];
    cg_ml_table_d(c, "sv", s.sv, s.nsv_f);
    cg_ml_table_d(c, "rho", s.rho, s.nrho);
    cg_ml_table_i(c, "int32_t", "pi", pi, (size_t)pairs);
    cg_ml_table_i(c, "int32_t", "pj", pj, (size_t)pairs);
    cg_ml_table_i(c, "int32_t", "start", start, (size_t)L + 1);
    if (proba) {
      cg_ml_table_d(c, "pa", s.pa, s.npa);
      cg_ml_table_d(c, "pb", s.pb, s.npb);
    }
  }
  int32_t ft = cg_ml_acc_float(c) ? OX_FLOAT : OX_DOUBLE;
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)N);
  load_row(c, C);
  cg_printf(c, "    %s sc[%lld];\n", A, (long long)(E + 2));
  const char *w;
  int64_t nw;
  if (lin) {
    cg_printf(c, "    for (size_t k = 0; k < %lld; k++) {\n      %s a = %s;\n", (long long)E, A, rho0);
    cg_printf(c, "      for (size_t j = 0; j < %lld; j++) a += xr[j] * coef[k * %lld + j];\n",
              (long long)C, (long long)C);
    cg_printf(c, "      sc[k] = a;\n    }\n");
    w = "sc", nw = E;
  } else {
    cg_printf(c, "    %s kv[%lld], votes[%lld], dec[%lld];\n", A, (long long)nsv, (long long)L,
              (long long)pairs);
    cg_printf(c, "    for (size_t v = 0; v < %lld; v++)\n", (long long)nsv);
    kernel(c, &s, "kv[v]", ox_arena_printf(c->a, "(sv + v * %lld)", (long long)C), C, "      ");
    cg_printf(c, "    for (size_t k = 0; k < %lld; k++) votes[k] = %s;\n", (long long)L, zero);
    cg_printf(c, "    for (size_t p = 0; p < %lld; p++) {\n", (long long)pairs);
    cg_printf(c, "      const int32_t i = pi[p], j = pj[p];\n      %s a = rho[p];\n", A);
    cg_printf(c, "      for (int32_t v = start[i]; v < start[i + 1]; v++) a += coef[(j - 1) * %lld + v] * kv[v];\n",
              (long long)nsv);
    cg_printf(c, "      for (int32_t v = start[j]; v < start[j + 1]; v++) a += coef[i * %lld + v] * kv[v];\n",
              (long long)nsv);
    cg_printf(c, "      dec[p] = a;\n      votes[a > 0 ? i : j] += %s;\n    }\n", one);
    if (proba) {
      const char *ex = cg_mathfn(c, ft, "exp");
      cg_printf(c, "    {\n      %s rm[%lld];\n", A, (long long)(L * L));
      cg_printf(c, "      for (size_t k = 0; k < %lld; k++) rm[k] = %s;\n", (long long)(L * L), zero);
      cg_printf(c, "      for (size_t p = 0; p < %lld; p++) {\n", (long long)pairs);
      cg_printf(c, "        const %s f = dec[p] * pa[p] + pb[p];\n", A);
      cg_printf(c, "        %s q = f >= 0 ? %s(-f) / (%s + %s(-f)) : %s / (%s + %s(f));\n", A, ex, one,
                ex, one, one, ex);
      cg_printf(c, "        q = q < %s ? %s : q > %s ? %s : q;\n", lo, lo, hi, hi);
      cg_printf(c, "        rm[pi[p] * %lld + pj[p]] = q;\n        rm[pj[p] * %lld + pi[p]] = %s - q;\n      }\n",
                (long long)L, (long long)L, one);
      couple(c, L);
      cg_printf(c, "    }\n");
    } else {
      cg_printf(c, "    for (size_t p = 0; p < %lld; p++) sc[p] = dec[p];\n", (long long)pairs);
    }
    w = "votes", nw = L;
  }
  first_best(c, w, nw);
  bool label_set = false;
  if (nw)
    cg_printf(c, "    const %s maxw = %s[best];\n", A, w);
  else
    cg_printf(c, "    const %s maxw = %s;\n", A, zero);
  if (s.nrho == 1 && L == 2) {
    if (!proba && all_pos) cg_printf(c, "    if (maxw >= %s) best = 1;\n", half);
  } else if (s.nrho == 1 && L < 2) {
    /* one rho and one label: the class index 1 or 0; an index past the
     * labels is the label itself */
    cg_printf(c, "    best = maxw > 0 ? 1 : 0;\n");
    if (Lo) cg_printf(c, "    Y0[r] = best >= %lld ? (int64_t)best : labels[best];\n", (long long)L);
    label_set = true;
  }
  cg_printf(c, "    (void)maxw;\n    (void)best;\n");
  if (!label_set && Lo) cg_printf(c, "    Y0[r] = labels[best];\n");
  if (E >= 2) {
    cg_ml_post(c, s.post, "sc", E, "    ");
  } else if (s.post == CG_ML_PROBIT) {
    cg_ml_probit(c, "sc[0]", "sc[0]", "    ");
  } else if (pair_out) {
    cg_printf(c, "    sc[1] = sc[0];\n    sc[0] = -sc[1];\n");
    cg_ml_post(c, s.post, "sc", 2, "    ");
  }
  if (Z)
    cg_printf(c, "    for (size_t k = 0; k < %lld; k++) Y1[r * %lld + k] = (float)sc[k];\n",
              (long long)ZE, (long long)ZE);
  cg_printf(c, "  }\n");
  return OX_OK;
}
