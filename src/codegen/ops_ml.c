/* ops_ml.c - the C generators of ai.onnx.ml operators on tensors:
 * ArrayFeatureExtractor, Binarizer, LabelEncoder (numeric keys and values)
 * and TreeEnsemble (opset 5). The semantics are the runtime's
 * (src/ops/ml/ml.c, ml_tree.c): doubles where it computes in double (the
 * trees' comparisons and votes, Binarizer's threshold), float with
 * --float-only. What has strings (LabelEncoder's string keys or values, v1's
 * classes_strings) is refused: the compiled code has no strings. The ML
 * operators on maps and sequences are refused in ops_declined.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_impl.h"

/* The accumulation type: double as the runtime, float with --float-only. */
static bool acc_float(const cg_ctx *c) { return c->o->float_only; }
static const char *acc_type(const cg_ctx *c) { return acc_float(c) ? "float" : "double"; }

static void lit(const cg_ctx *c, char *buf, size_t size, double v) {
  cg_float_lit(buf, size, v, acc_float(c));
}

/* ---- ArrayFeatureExtractor: Z = X[..., Y] along the last axis ----
 * Y (int64, any shape, flattened) may be computed at run time; an index
 * outside [0, last) reads element 0 of its row (the runtime fails the run;
 * the generated function cannot), a constant one is refused here. */
static int gen_afe(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n, (void)n_out;
  const cg_val *X = in[0], *Y = n_in > 1 ? in[1] : NULL, *Z = out[0];
  if (!Y || Y->dtype != OX_INT64) return cg_fail(c, OX_EMODEL, "indices Y must be int64");
  if (X->rank == 0) return cg_fail(c, OX_EMODEL, "X must have rank >= 1");
  if (cg_packed_bits(X->dtype)) return cg_fail(c, OX_EUNSUPPORTED, "packed types are not compiled");
  int64_t last = X->dims[X->rank - 1], k = Y->numel, outer = last ? X->numel / last : 0;
  if (Z->numel != outer * k || Z->dtype != X->dtype)
    return cg_fail(c, OX_EMODEL, "output %s is not X's rows by %lld indices", cg_type_str(c, Z),
                   (long long)k);
  if (Y->cv)
    for (int64_t j = 0; j < k; j++) {
      int64_t v = ((const int64_t *)Y->cv->data)[j];
      if (v < 0 || v >= last)
        return cg_fail(c, OX_EMODEL, "index %lld out of range [0, %lld)", (long long)v,
                       (long long)last);
    }
  if (!Z->numel) return OX_OK;
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n", (long long)outer);
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) {\n", (long long)k);
  cg_printf(c, "      const int64_t ix = X1[j];\n");
  cg_printf(c, "      Y0[o * %lld + j] = X0[o * %lld + (ix >= 0 && ix < %lld ? (size_t)ix : 0)];\n",
            (long long)k, (long long)last, (long long)last);
  cg_printf(c, "    }\n");
  return OX_OK;
}

/* ---- Binarizer: y = x > threshold ? 1 : 0 (NaN stays NaN) ----
 * The runtime compares in double; for float input the float comparison is
 * the same. */
static int gen_binarizer(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  int32_t dt = X->dtype;
  if (dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_INT32 && dt != OX_INT64)
    return cg_fail(c, OX_EMODEL, "X must be a tensor of float, double, int32 or int64");
  if (Y->dtype != dt) return cg_fail(c, OX_EMODEL, "Y must have X's type");
  double thr = ox_node_attr_float(n, "threshold", 0.0f);
  bool fl = dt == OX_FLOAT || acc_float(c);
  char t[48];
  cg_float_lit(t, sizeof t, thr, fl);
  const char *ct = cg_ctype(dt), *A = fl ? "float" : "double";
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)X->numel);
  cg_printf(c, "    const %s v = (%s)X0[i];\n", A, A);
  if (dt == OX_FLOAT || dt == OX_DOUBLE)
    cg_printf(c, "    Y0[i] = v != v ? X0[i] : (%s)(v > %s ? 1 : 0);\n", ct, t);
  else
    cg_printf(c, "    Y0[i] = (%s)(v > %s ? 1 : 0);\n", ct, t);
  cg_printf(c, "  }\n");
  return OX_OK;
}

/* ---- constant attributes read as doubles ---- */

/* An attribute tensor's elements as doubles (and as int64 in ints, when
 * ints is not NULL); *present false when the attribute is absent. Strings
 * and types other than the real and integer ones are refused. */
static int tensor_attr(cg_ctx *c, const ox_node *n, const char *name, double **d, int64_t **ints,
                       size_t *cnt, int32_t *dtype, bool *present) {
  *present = false;
  *cnt = 0;
  const ox_attr *a = ox_node_attr(n, name);
  if (!a) return OX_OK;
  if (!a->t) return cg_fail(c, OX_EMODEL, "attribute '%s' must be a tensor", name);
  ox_value *v = ox_value_from_tensor_proto(a->t, false, c->e);
  if (!v) return c->e->code;
  int rc = OX_OK;
  *dtype = v->dtype;
  size_t m = (size_t)v->numel;
  *d = ox_arena_calloc(c->a, m + 1, sizeof **d);
  if (ints) *ints = ox_arena_calloc(c->a, m + 1, sizeof **ints);
  if (!*d || (ints && !*ints)) rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  for (size_t i = 0; !rc && i < m; i++) {
    double x;
    int64_t k;
    switch (v->dtype) {
      case OX_FLOAT: x = ((const float *)v->data)[i], k = 0; break;
      case OX_DOUBLE: x = ((const double *)v->data)[i], k = 0; break;
      case OX_INT64: k = ((const int64_t *)v->data)[i], x = (double)k; break;
      case OX_INT32: k = ((const int32_t *)v->data)[i], x = (double)k; break;
      case OX_INT16: k = ((const int16_t *)v->data)[i], x = (double)k; break;
      case OX_UINT8: k = ((const uint8_t *)v->data)[i], x = (double)k; break;
      case OX_STRING:
        rc = cg_fail(c, OX_EUNSUPPORTED, "attribute '%s' holds strings: strings are not compiled",
                     name);
        continue;
      default:
        rc = cg_fail(c, OX_EUNSUPPORTED, "attribute '%s': element type %s is not compiled", name,
                     ox_dtype_get(v->dtype) ? ox_dtype_get(v->dtype)->name : "?");
        continue;
    }
    /* a real's integer value where it has one (NaN, inf and the huge ones: 0) */
    if ((v->dtype == OX_FLOAT || v->dtype == OX_DOUBLE) && x > -9.2e18 && x < 9.2e18)
      k = (int64_t)x;
    (*d)[i] = x;
    if (ints) (*ints)[i] = k;
  }
  ox_value_unref(v);
  if (!rc) {
    *cnt = m;
    *present = true;
  }
  return rc;
}

static void table_d(cg_ctx *c, const char *name, const double *v, size_t n) {
  cg_printf(c, "  static const %s %s[%zu] = {", acc_type(c), name, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    char b[48];
    lit(c, b, sizeof b, v[i]);
    cg_printf(c, "%s%s", i ? (i % 8 ? ", " : ",\n      ") : "", b);
  }
  cg_printf(c, "%s};\n", n ? "" : "0");
}

static void table_i(cg_ctx *c, const char *type, const char *name, const int64_t *v, size_t n) {
  cg_printf(c, "  static const %s %s[%zu] = {", type, name, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    cg_printf(c, "%s%lld%s", i ? (i % 12 ? ", " : ",\n      ") : "", (long long)v[i],
              strcmp(type, "int64_t") == 0 && (v[i] > INT32_MAX || v[i] < INT32_MIN) ? "LL" : "");
  cg_printf(c, "%s};\n", n ? "" : "0");
}

/* ---- LabelEncoder (opset 2 and 4): keys -> values, else the default ----
 * Numeric keys and values only. A repeated key maps to its last value (the
 * table is searched from the end); float keys compare as doubles, NaN
 * matching NaN, as the runtime's lookup. */
static int le_list(cg_ctx *c, const ox_node *n, const char *base, double **d, int64_t **iv,
                   size_t *cnt, int32_t *dt) {
  char nm[32];
  int set = 0;
  snprintf(nm, sizeof nm, "%s_strings", base);
  const ox_attr *s = ox_node_attr(n, nm);
  if (s)
    return cg_fail(c, OX_EUNSUPPORTED, "%s: strings are not compiled (string keys or values)", nm);
  snprintf(nm, sizeof nm, "%s_tensor", base);
  bool present;
  int rc = tensor_attr(c, n, nm, d, iv, cnt, dt, &present);
  if (rc) return rc;
  set += present;
  snprintf(nm, sizeof nm, "%s_int64s", base);
  const ox_attr *a = ox_node_attr(n, nm);
  if (a) {
    set++;
    *dt = OX_INT64;
    *cnt = a->n_ints;
    *d = ox_arena_calloc(c->a, a->n_ints + 1, sizeof **d);
    *iv = ox_arena_calloc(c->a, a->n_ints + 1, sizeof **iv);
    if (!*d || !*iv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    for (size_t k = 0; k < a->n_ints; k++) (*iv)[k] = a->ints[k], (*d)[k] = (double)a->ints[k];
  }
  snprintf(nm, sizeof nm, "%s_floats", base);
  a = ox_node_attr(n, nm);
  if (a) {
    set++;
    *dt = OX_FLOAT;
    *cnt = a->n_floats;
    *d = ox_arena_calloc(c->a, a->n_floats + 1, sizeof **d);
    *iv = ox_arena_calloc(c->a, a->n_floats + 1, sizeof **iv);
    if (!*d || !*iv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    for (size_t k = 0; k < a->n_floats; k++) (*d)[k] = a->floats[k];
  }
  if (set != 1) return cg_fail(c, OX_EMODEL, "exactly one of the %s_* attributes must be set", base);
  return OX_OK;
}

static bool le_real(int32_t dt) { return dt == OX_FLOAT || dt == OX_DOUBLE; }
static bool le_int(int32_t dt) { return dt == OX_INT64 || dt == OX_INT32 || dt == OX_INT16; }

static int gen_label_encoder(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                             cg_val **out, size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  int64_t ver = ox_opset_version(c->m->proto->opset_import, c->m->proto->n_opset_import,
                                 CG_DOMAIN_ML);
  if (ver < 2)
    return cg_fail(c, OX_EUNSUPPORTED,
                   "LabelEncoder-1 maps strings to integers and back: strings are not compiled");
  double *kd = NULL, *vd = NULL;
  int64_t *ki = NULL, *vi = NULL;
  size_t nk = 0, nv = 0;
  int32_t kdt = 0, vdt = 0;
  int rc = le_list(c, n, "keys", &kd, &ki, &nk, &kdt);
  if (!rc) rc = le_list(c, n, "values", &vd, &vi, &nv, &vdt);
  if (rc) return rc;
  if (nk != nv) return cg_fail(c, OX_EMODEL, "keys (%zu) and values (%zu) differ in length", nk, nv);
  if (!(le_real(kdt) || le_int(kdt)) || !(le_real(vdt) || le_int(vdt)))
    return cg_fail(c, OX_EMODEL, "keys and values must be int64, int32, int16, float or double");
  bool kreal = le_real(kdt);
  if (kreal ? !le_real(X->dtype) : !le_int(X->dtype))
    return cg_fail(c, OX_EMODEL, "input type does not match the type of the keys");
  if (Y->dtype != vdt) return cg_fail(c, OX_EMODEL, "the output's type is not the values' type");
  /* the default: default_tensor, else default_float / default_int64 */
  double def_d = ox_node_attr_float(n, "default_float", -0.0f);
  int64_t def_i = ox_node_attr_int(n, "default_int64", -1);
  double *dd = NULL;
  int64_t *di = NULL;
  size_t nd = 0;
  int32_t ddt = 0;
  bool has_def;
  if ((rc = tensor_attr(c, n, "default_tensor", &dd, &di, &nd, &ddt, &has_def))) return rc;
  if (has_def) {
    if (nd != 1) return cg_fail(c, OX_EMODEL, "default_tensor must hold one element, got %zu", nd);
    def_d = dd[0];
    def_i = di[0];
  }
  bool vreal = le_real(vdt);
  const char *ct = cg_ctype(vdt), *A = acc_type(c);
  /* keys: reals as doubles, integers as int64; values in the output type */
  if (kreal)
    table_d(c, "keys", kd, nk);
  else
    table_i(c, "int64_t", "keys", ki, nk);
  char b[48];
  if (vreal) {
    cg_printf(c, "  static const %s vals[%zu] = {", ct, nk ? nk : 1);
    for (size_t i = 0; i < nv; i++) {
      cg_float_lit(b, sizeof b, vd[i], vdt == OX_FLOAT);
      cg_printf(c, "%s%s", i ? (i % 8 ? ", " : ",\n      ") : "", b);
    }
    cg_printf(c, "%s};\n", nv ? "" : "0");
    cg_float_lit(b, sizeof b, def_d, vdt == OX_FLOAT);
  } else {
    table_i(c, "int64_t", "vals", vi, nv);
    snprintf(b, sizeof b, "%lldLL", (long long)def_i);
  }
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)X->numel);
  if (kreal)
    cg_printf(c, "    const %s x = (%s)X0[i];\n", A, A);
  else
    cg_printf(c, "    const int64_t x = (int64_t)X0[i];\n");
  cg_printf(c, "    long k = %zu;\n", nk);
  if (kreal)
    cg_printf(c, "    while (k-- > 0 && !(keys[k] == x || (keys[k] != keys[k] && x != x))) {}\n");
  else
    cg_printf(c, "    while (k-- > 0 && keys[k] != x) {}\n");
  cg_printf(c, "    Y0[i] = k >= 0 ? (%s)vals[k] : (%s)%s;\n", ct, ct, b);
  cg_printf(c, "  }\n");
  return OX_OK;
}

/* ---- TreeEnsemble (opset 5) ----
 * The trees become constant tables (per node: feature, mode, threshold, the
 * two children coded as >= 0 a node, < 0 the leaf -(code+1), whether a NaN
 * takes the true branch, its member set), walked per row to their leaves;
 * the leaves' weights are aggregated per target (AVERAGE, SUM, MIN, MAX; a
 * target without a vote is 0) and the post transform applied, in double as
 * the runtime. A tree with a cycle is refused here (the runtime fails the
 * run when a row reaches it). */
enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER };
enum { POST_NONE, POST_SOFTMAX, POST_LOGISTIC, POST_SOFTMAX_ZERO, POST_PROBIT };

typedef struct te_attrs {
  size_t n, nl, nr, nmem;
  const int64_t *fe, *tn, *fn, *tl, *fl, *mv, *roots, *lt;
  double *modes, *splits, *lw, *mem;
  int64_t *imodes;
} te_attrs;

static const int64_t *ints_attr(const ox_node *n, const char *name, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_ints : 0;
  return a ? a->ints : NULL;
}

/* whether a walk can loop: a node-to-node edge cycle (Kahn's count) */
static bool te_has_cycle(cg_ctx *c, const int64_t *tcode, const int64_t *fcode, size_t n) {
  size_t *indeg = ox_arena_calloc(c->a, n + 1, sizeof *indeg);
  size_t *stack = ox_arena_calloc(c->a, n + 1, sizeof *stack);
  if (!indeg || !stack) return true;
  for (size_t i = 0; i < n; i++) {
    if (tcode[i] >= 0) indeg[tcode[i]]++;
    if (fcode[i] >= 0) indeg[fcode[i]]++;
  }
  size_t top = 0, done = 0;
  for (size_t i = 0; i < n; i++)
    if (!indeg[i]) stack[top++] = i;
  while (top) {
    size_t i = stack[--top];
    done++;
    int64_t ch[2] = {tcode[i], fcode[i]};
    for (int k = 0; k < 2; k++)
      if (ch[k] >= 0 && --indeg[ch[k]] == 0) stack[top++] = (size_t)ch[k];
  }
  return done != n;
}

static int gen_tree_ensemble(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (X->dtype != OX_FLOAT && X->dtype != OX_DOUBLE && X->dtype != OX_FLOAT16)
    return cg_fail(c, OX_EMODEL, "X must be float, double or float16");
  if (X->rank != 1 && X->rank != 2) return cg_fail(c, OX_EMODEL, "X must be [N, F]");
  int64_t pt = ox_node_attr_int(n, "post_transform", 0);
  int64_t agg = ox_node_attr_int(n, "aggregate_function", 1);
  int64_t T = ox_node_attr_int(n, "n_targets", -1);
  if (pt < 0 || pt > 4) return cg_fail(c, OX_EMODEL, "post_transform %lld is not in 0..4", (long long)pt);
  if (pt == POST_PROBIT)
    return cg_fail(c, OX_EUNSUPPORTED, "post_transform PROBIT is not compiled (it needs erfinv)");
  if (agg < 0 || agg > 3)
    return cg_fail(c, OX_EMODEL, "aggregate_function %lld is not in 0..3", (long long)agg);
  if (T < 1 || T > INT32_MAX) return cg_fail(c, OX_EMODEL, "n_targets must be set and >= 1");
  int64_t N = X->rank == 2 ? X->dims[0] : 1, F = X->dims[X->rank - 1];
  if (Y->dtype != X->dtype || Y->numel != N * T)
    return cg_fail(c, OX_EMODEL, "the output must be X's type, [%lld, %lld]", (long long)N,
                   (long long)T);
  te_attrs a = {0};
  size_t nfl, nfn, ntl, ntn, nmv, nlt;
  a.fl = ints_attr(n, "nodes_falseleafs", &nfl);
  a.fn = ints_attr(n, "nodes_falsenodeids", &nfn);
  a.fe = ints_attr(n, "nodes_featureids", &a.n);
  a.tl = ints_attr(n, "nodes_trueleafs", &ntl);
  a.tn = ints_attr(n, "nodes_truenodeids", &ntn);
  a.mv = ints_attr(n, "nodes_missing_value_tracks_true", &nmv);
  a.roots = ints_attr(n, "tree_roots", &a.nr);
  a.lt = ints_attr(n, "leaf_targetids", &nlt);
  size_t nmodes = 0, nsplits = 0, nlw = 0;
  int32_t dt;
  bool pm, ps, pl, pmem;
  int rc;
  if ((rc = tensor_attr(c, n, "nodes_modes", &a.modes, &a.imodes, &nmodes, &dt, &pm)) ||
      (rc = tensor_attr(c, n, "nodes_splits", &a.splits, NULL, &nsplits, &dt, &ps)) ||
      (rc = tensor_attr(c, n, "leaf_weights", &a.lw, NULL, &nlw, &dt, &pl)) ||
      (rc = tensor_attr(c, n, "membership_values", &a.mem, NULL, &a.nmem, &dt, &pmem)))
    return rc;
  size_t nn = a.n;
  if (!nn || !a.nr) return cg_fail(c, OX_EMODEL, "nodes_featureids and tree_roots must be set");
  if (nfl != nn || nfn != nn || ntl != nn || ntn != nn || (nmv && nmv != nn) || nmodes != nn ||
      nsplits != nn)
    return cg_fail(c, OX_EMODEL, "the nodes_* attributes must all have %zu entries", nn);
  if (!pl || nlw != nlt)
    return cg_fail(c, OX_EMODEL, "leaf_targetids (%zu) and leaf_weights (%zu) differ in length",
                   nlt, nlw);
  a.nl = nlt;
  int64_t *feat = ox_arena_calloc(c->a, nn, sizeof *feat), *mode = ox_arena_calloc(c->a, nn, sizeof *mode);
  int64_t *tc = ox_arena_calloc(c->a, nn, sizeof *tc), *fc = ox_arena_calloc(c->a, nn, sizeof *fc);
  int64_t *miss = ox_arena_calloc(c->a, nn, sizeof *miss);
  int64_t *soff = ox_arena_calloc(c->a, nn, sizeof *soff), *slen = ox_arena_calloc(c->a, nn, sizeof *slen);
  if (!feat || !mode || !tc || !fc || !miss || !soff || !slen)
    return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  for (size_t l = 0; l < nlt; l++)
    if (a.lt[l] < 0 || a.lt[l] >= T)
      return cg_fail(c, OX_EMODEL, "leaf_targetids[%zu] = %lld outside [0, %lld)", l,
                     (long long)a.lt[l], (long long)T);
  bool any_member = false;
  size_t mpos = 0;
  for (size_t i = 0; i < nn; i++) {
    mode[i] = a.modes[i] == (double)a.imodes[i] ? a.imodes[i] : -1; /* 1.5, NaN: refused */
    if (mode[i] < M_LEQ || mode[i] > M_MEMBER)
      return cg_fail(c, OX_EMODEL, "nodes_modes[%zu] = %lld is not in 0..6", i, (long long)mode[i]);
    if (a.fe[i] < 0) return cg_fail(c, OX_EMODEL, "nodes_featureids[%zu] is negative", i);
    if (a.fe[i] >= F)
      return cg_fail(c, OX_EMODEL, "feature id %lld but X has %lld features", (long long)a.fe[i],
                     (long long)F);
    feat[i] = a.fe[i];
    miss[i] = nmv && a.mv[i];
    if (mode[i] == M_MEMBER) {
      if (!pmem || mpos > a.nmem)
        return cg_fail(c, OX_EMODEL, "node %zu is BRANCH_MEMBER but membership_values has no set for it", i);
      soff[i] = (int64_t)mpos;
      while (mpos < a.nmem && !isnan(a.mem[mpos])) mpos++;
      slen[i] = (int64_t)mpos - soff[i];
      mpos++; /* the NaN delimiter */
      any_member = true;
    }
    int64_t ch[2] = {a.tn[i], a.fn[i]}, isl[2] = {a.tl[i], a.fl[i]};
    for (int k = 0; k < 2; k++) {
      int64_t lim = isl[k] ? (int64_t)nlt : (int64_t)nn;
      if (ch[k] < 0 || ch[k] >= lim)
        return cg_fail(c, OX_EMODEL, "node %zu: %s child %lld outside [0, %lld)", i,
                       k ? "false" : "true", (long long)ch[k], (long long)lim);
      (k ? fc : tc)[i] = isl[k] ? -ch[k] - 1 : ch[k];
    }
  }
  for (size_t r = 0; r < a.nr; r++)
    if (a.roots[r] < 0 || a.roots[r] >= (int64_t)nn)
      return cg_fail(c, OX_EMODEL, "tree_roots[%zu] = %lld outside [0, %zu)", r,
                     (long long)a.roots[r], nn);
  if (te_has_cycle(c, tc, fc, nn))
    return cg_fail(c, OX_EMODEL, "a tree has a cycle (its walk would not end)");
  const char *A = acc_type(c), *ex = cg_mathfn(c, acc_float(c) ? OX_FLOAT : OX_DOUBLE, "exp");
  table_i(c, "int32_t", "feat", feat, nn);
  table_i(c, "uint8_t", "mode", mode, nn);
  table_d(c, "split", a.splits, nn);
  table_i(c, "int32_t", "tcode", tc, nn);
  table_i(c, "int32_t", "fcode", fc, nn);
  if (nmv) table_i(c, "uint8_t", "miss", miss, nn);
  if (any_member) {
    table_i(c, "int32_t", "soff", soff, nn);
    table_i(c, "int32_t", "slen", slen, nn);
    table_d(c, "members", a.mem, a.nmem);
  }
  table_i(c, "int32_t", "roots", a.roots, a.nr);
  table_i(c, "int32_t", "leaf_t", a.lt, nlt);
  table_d(c, "leaf_w", a.lw, nlt);
  char zero[48], one[48], half[48];
  lit(c, zero, sizeof zero, 0.0);
  lit(c, one, sizeof one, 1.0);
  lit(c, half, sizeof half, 0.5);
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)N);
  cg_printf(c, "    %s sc[%lld];\n    uint8_t has[%lld];\n", A, (long long)T, (long long)T);
  cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] = %s, has[t] = 0;\n", (long long)T, zero);
  cg_printf(c, "    for (size_t tr = 0; tr < %zu; tr++) {\n", a.nr);
  cg_printf(c, "      int32_t code = roots[tr];\n");
  cg_printf(c, "      while (code >= 0) {\n");
  /* float16 loads through float; float and double as they are */
  const char *xa = ox_arena_printf(c->a, "X0[r * %lld + (size_t)feat[code]]", (long long)F);
  const char *xe = xa && cg_is_small_float(X->dtype) ? cg_load(c, X->dtype, xa) : xa;
  if (!xe) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "        const %s x = (%s)%s, s = split[code];\n", A, A, xe);
  cg_printf(c, "        int cond;\n");
  if (nmv)
    cg_printf(c, "        if (x != x && miss[code]) cond = 1;\n        else\n");
  cg_printf(c, "        switch (mode[code]) {\n");
  cg_printf(c, "          case %d: cond = x <= s; break;\n", M_LEQ);
  cg_printf(c, "          case %d: cond = x < s; break;\n", M_LT);
  cg_printf(c, "          case %d: cond = x >= s; break;\n", M_GTE);
  cg_printf(c, "          case %d: cond = x > s; break;\n", M_GT);
  cg_printf(c, "          case %d: cond = x == s; break;\n", M_EQ);
  cg_printf(c, "          case %d: cond = x != s; break;\n", M_NEQ);
  if (any_member) {
    cg_printf(c, "          default:\n            cond = 0;\n");
    cg_printf(c, "            for (int32_t k = 0; k < slen[code]; k++)\n");
    cg_printf(c, "              if (members[soff[code] + k] == x) cond = 1;\n");
    cg_printf(c, "            break;\n");
  } else {
    cg_printf(c, "          default: cond = 0; break;\n");
  }
  cg_printf(c, "        }\n");
  cg_printf(c, "        code = cond ? tcode[code] : fcode[code];\n");
  cg_printf(c, "      }\n");
  cg_printf(c, "      const int32_t leaf = -code - 1, t = leaf_t[leaf];\n");
  cg_printf(c, "      const %s w = leaf_w[leaf];\n", A);
  if (agg == 2)
    cg_printf(c, "      sc[t] = !has[t] || w < sc[t] ? w : sc[t];\n");
  else if (agg == 3)
    cg_printf(c, "      sc[t] = !has[t] || w > sc[t] ? w : sc[t];\n");
  else
    cg_printf(c, "      sc[t] = has[t] ? sc[t] + w : w;\n");
  cg_printf(c, "      has[t] = 1;\n    }\n");
  if (agg == 0) {
    char nt[48];
    lit(c, nt, sizeof nt, (double)a.nr);
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] /= %s;\n", (long long)T, nt);
  }
  if (pt == POST_LOGISTIC) {
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] = %s / (%s + %s(-sc[t]));\n",
              (long long)T, one, one, ex);
  } else if (pt == POST_SOFTMAX || pt == POST_SOFTMAX_ZERO) {
    /* SOFTMAX_ZERO: a zero score stays zero and takes no part in the sum;
     * a row of zeros gives 0.5 everywhere */
    bool z = pt == POST_SOFTMAX_ZERO;
    cg_printf(c, "    %s mx = -INFINITY, sum = %s;\n", A, zero);
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++)\n      if (%ssc[t] > mx) mx = sc[t];\n",
              (long long)T, z ? "sc[t] != 0 && " : "");
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) {\n", (long long)T);
    if (z) cg_printf(c, "      if (sc[t] == 0) continue;\n");
    cg_printf(c, "      sc[t] = %s(sc[t] - mx);\n      sum += sc[t];\n    }\n", ex);
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] = sum > 0 ? sc[t] / sum : %s;\n",
              (long long)T, half);
  }
  /* float16 output: the double score rounded to float, then to float16 (as
   * the runtime's store) */
  const char *st = cg_store(c, Y->dtype, Y->dtype == OX_FLOAT16 ? "(float)sc[t]" : "sc[t]", false);
  if (!st) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "    for (size_t t = 0; t < %lld; t++) Y0[r * %lld + t] = %s;\n", (long long)T,
            (long long)T, st);
  cg_printf(c, "  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_ml[] = {
    {CG_DOMAIN_ML ":ArrayFeatureExtractor", gen_afe},
    {CG_DOMAIN_ML ":Binarizer", gen_binarizer},
    {CG_DOMAIN_ML ":LabelEncoder", gen_label_encoder},
    {CG_DOMAIN_ML ":TreeEnsemble", gen_tree_ensemble},
    {NULL, NULL},
};
