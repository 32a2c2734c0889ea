/* ops_ml.c - the C generators of ai.onnx.ml operators on tensors, their
 * table and shared helpers (ops_ml.h): ArrayFeatureExtractor, Binarizer,
 * LabelEncoder (numeric keys and values), Normalizer, Scaler, Imputer,
 * OneHotEncoder (int64 categories) and FeatureVectorizer here; the tree
 * ensembles in ops_ml_tree.c, the linear and SVM models in ops_ml_linear.c.
 * The semantics are the runtime's (src/ops/ml/): doubles where it computes
 * in double, float with --float-only. What has strings (LabelEncoder's
 * string keys or values, v1's classes_strings, string categories or class
 * labels) is refused: the compiled code has no strings. The ML operators on
 * maps and sequences are refused in ops_declined.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_ml.h"

bool cg_ml_acc_float(const cg_ctx *c) { return c->o->float_only; }
const char *cg_ml_acc(const cg_ctx *c) { return cg_ml_acc_float(c) ? "float" : "double"; }
#define acc_float cg_ml_acc_float
#define acc_type cg_ml_acc

void cg_ml_lit(const cg_ctx *c, char *buf, size_t size, double v) {
  cg_float_lit(buf, size, v, acc_float(c));
}

/* ---- ArrayFeatureExtractor: Z = X[..., Y] along the last axis ----
 * Y (int64, any shape, flattened) may be computed at run time; an index
 * outside [0, last) reads element 0 of its row (the runtime fails the run;
 * the generated function cannot), a constant one is refused here. */
static int gen_afe(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
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
  if (!out[0]) return OX_OK; /* its only output unused */
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

/* (types other than the real and integer ones are refused too) */
int cg_ml_tensor_attr(cg_ctx *c, const ox_node *n, const char *name, double **d, int64_t **ints,
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

void cg_ml_table_d(cg_ctx *c, const char *name, const double *v, size_t n) {
  cg_printf(c, "  static const %s %s[%zu] = {", acc_type(c), name, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    char b[48];
    cg_ml_lit(c, b, sizeof b, v[i]);
    cg_printf(c, "%s%s", i ? (i % 8 ? ", " : ",\n      ") : "", b);
  }
  cg_printf(c, "%s};\n", n ? "" : "0");
}

void cg_ml_table_i(cg_ctx *c, const char *type, const char *name, const int64_t *v, size_t n) {
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
  int rc = cg_ml_tensor_attr(c, n, nm, d, iv, cnt, dt, &present);
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
  if (!out[0]) return OX_OK; /* its only output unused */
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
  if ((rc = cg_ml_tensor_attr(c, n, "default_tensor", &dd, &di, &nd, &ddt, &has_def))) return rc;
  if (has_def) {
    if (nd != 1) return cg_fail(c, OX_EMODEL, "default_tensor must hold one element, got %zu", nd);
    def_d = dd[0];
    def_i = di[0];
  }
  bool vreal = le_real(vdt);
  const char *ct = cg_ctype(vdt), *A = acc_type(c);
  /* keys: reals as doubles, integers as int64; values in the output type */
  if (kreal)
    cg_ml_table_d(c, "keys", kd, nk);
  else
    cg_ml_table_i(c, "int64_t", "keys", ki, nk);
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
    cg_ml_table_i(c, "int64_t", "vals", vi, nv);
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

/* ---- the helpers of the classic operators (ops_ml.h) ---- */

int cg_ml_doubles(cg_ctx *c, const ox_node *n, const char *name, double **out, size_t *cnt) {
  char tn[64];
  snprintf(tn, sizeof tn, "%s_as_tensor", name);
  int32_t dt;
  bool present;
  int rc = cg_ml_tensor_attr(c, n, tn, out, NULL, cnt, &dt, &present);
  if (rc) return rc;
  const ox_attr *a = ox_node_attr(n, name);
  if (present && a) return cg_fail(c, OX_EMODEL, "'%s' and '%s' are both set", name, tn);
  if (present) return OX_OK;
  *cnt = a ? a->n_floats : 0;
  *out = ox_arena_calloc(c->a, *cnt + 1, sizeof **out);
  if (!*out) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  for (size_t i = 0; i < *cnt; i++) (*out)[i] = a->floats[i];
  return OX_OK;
}

int cg_ml_post_parse(cg_ctx *c, const ox_node *n, int *post) {
  static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  const char *s = ox_node_attr_str(n, "post_transform", "NONE");
  for (int k = 0; k < 5; k++)
    if (strcmp(s, names[k]) == 0) {
      *post = k;
      return OX_OK;
    }
  return cg_fail(c, OX_EMODEL, "unknown post_transform '%s'", s);
}

/* a Horner step list: x = k[0]; x = k[i] + x * w */
static void horner(cg_ctx *c, const double *k, size_t n, const char *ind) {
  char b[48];
  cg_ml_lit(c, b, sizeof b, k[0]);
  cg_printf(c, "%s  x = %s;\n", ind, b);
  for (size_t i = 1; i < n; i++) {
    cg_ml_lit(c, b, sizeof b, k[i]);
    cg_printf(c, "%s  x = %s + x * w;\n", ind, b);
  }
}

void cg_ml_probit(cg_ctx *c, const char *dst, const char *p, const char *ind) {
  /* Giles' single-precision erfinv as the first guess, three Newton steps
   * on erf: the runtime's mlc_probit, operation for operation */
  static const double lo[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                              -4.39150654e-06, 0.00021858087,  -0.00125372503,
                              -0.00417768164,  0.246640727,    1.50140941};
  static const double hi[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                              -0.00367342844,  0.00573950773,  -0.0076224613,
                              0.00943887047,   1.00167406,     2.83297682};
  const char *A = acc_type(c);
  int32_t t = acc_float(c) ? OX_FLOAT : OX_DOUBLE;
  char one[48], two[48], five[48], h[48], three[48], k2[48], s2[48];
  cg_ml_lit(c, one, sizeof one, 1.0);
  cg_ml_lit(c, two, sizeof two, 2.0);
  cg_ml_lit(c, five, sizeof five, 5.0);
  cg_ml_lit(c, h, sizeof h, 2.5);
  cg_ml_lit(c, three, sizeof three, 3.0);
  cg_ml_lit(c, k2, sizeof k2, 1.1283791670955126);
  cg_ml_lit(c, s2, sizeof s2, 1.4142135623730951);
  cg_printf(c, "%s{\n%s  const %s y = %s * (%s) - %s;\n%s  %s x, w;\n", ind, ind, A, two, p, one,
            ind, A);
  cg_printf(c, "%s  if (y <= -%s) x = -INFINITY;\n%s  else if (y >= %s) x = INFINITY;\n", ind,
            one, ind, one);
  cg_printf(c, "%s  else {\n%s  w = -%s((%s - y) * (%s + y));\n", ind, ind,
            cg_mathfn(c, t, "log"), one, one);
  cg_printf(c, "%s  if (w < %s) {\n%s  w -= %s;\n", ind, five, ind, h);
  horner(c, lo, 9, ind);
  cg_printf(c, "%s  } else {\n%s  w = %s(w) - %s;\n", ind, ind, cg_mathfn(c, t, "sqrt"), three);
  horner(c, hi, 9, ind);
  cg_printf(c, "%s  }\n%s  x *= y;\n", ind, ind);
  cg_printf(c, "%s  for (int it = 0; it < 3; it++) x -= (%s(x) - y) / (%s * %s(-x * x));\n", ind,
            cg_mathfn(c, t, "erf"), k2, cg_mathfn(c, t, "exp"));
  cg_printf(c, "%s  }\n%s  %s = %s * x;\n%s}\n", ind, ind, dst, s2, ind);
}

void cg_ml_post(cg_ctx *c, int post, const char *sc, int64_t t, const char *ind) {
  const char *A = acc_type(c);
  const char *ex = cg_mathfn(c, acc_float(c) ? OX_FLOAT : OX_DOUBLE, "exp");
  char zero[48], one[48], half[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_ml_lit(c, one, sizeof one, 1.0);
  cg_ml_lit(c, half, sizeof half, 0.5);
  if (post == CG_ML_LOGISTIC) {
    cg_printf(c, "%sfor (size_t t = 0; t < %lld; t++) %s[t] = %s / (%s + %s(-%s[t]));\n", ind,
              (long long)t, sc, one, one, ex, sc);
  } else if (post == CG_ML_PROBIT) {
    cg_printf(c, "%sfor (size_t t = 0; t < %lld; t++)\n", ind, (long long)t);
    const char *d = ox_arena_printf(c->a, "%s[t]", sc), *i2 = ox_arena_printf(c->a, "%s  ", ind);
    if (d && i2) cg_ml_probit(c, d, d, i2);
  } else if (post == CG_ML_SOFTMAX || post == CG_ML_SOFTMAX_ZERO) {
    /* SOFTMAX_ZERO: a zero score stays zero and takes no part in the sum;
     * a row of zeros gives 0.5 everywhere */
    bool z = post == CG_ML_SOFTMAX_ZERO;
    cg_printf(c, "%s{\n%s  %s mx = -INFINITY, sum = %s;\n", ind, ind, A, zero);
    cg_printf(c, "%s  for (size_t t = 0; t < %lld; t++)\n%s    if (%s%s[t] > mx) mx = %s[t];\n", ind,
              (long long)t, ind, z ? ox_arena_printf(c->a, "%s[t] != 0 && ", sc) : "", sc, sc);
    cg_printf(c, "%s  for (size_t t = 0; t < %lld; t++) {\n", ind, (long long)t);
    if (z) cg_printf(c, "%s    if (%s[t] == 0) continue;\n", ind, sc);
    cg_printf(c, "%s    %s[t] = %s(%s[t] - mx);\n%s    sum += %s[t];\n%s  }\n", ind, sc, ex, sc, ind,
              sc, ind);
    cg_printf(c, "%s  for (size_t t = 0; t < %lld; t++) %s[t] = sum > 0 ? %s[t] / sum : %s;\n%s}\n",
              ind, (long long)t, sc, sc, half, ind);
  }
}

static bool numeric_in(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_INT32 || dt == OX_INT64;
}

int cg_ml_input_2d(cg_ctx *c, const cg_val *x, int64_t *N, int64_t *C) {
  *N = *C = 0;
  if (!x || !numeric_in(x->dtype))
    return cg_fail(c, OX_EMODEL, "X must be a tensor of float, double, int32 or int64");
  if (x->rank != 1 && x->rank != 2)
    return cg_fail(c, OX_EMODEL, "X must be [C] or [N, C], got rank %zu", x->rank);
  *N = x->rank == 2 ? x->dims[0] : 1;
  *C = x->dims[x->rank - 1];
  return OX_OK;
}

int cg_ml_labels(cg_ctx *c, const ox_node *n, const char *ints, const int64_t **li, size_t *nl) {
  const ox_attr *s = ox_node_attr(n, "classlabels_strings"), *a = ox_node_attr(n, ints);
  if (s && s->n_strings)
    return cg_fail(c, OX_EUNSUPPORTED,
                   "string class labels (classlabels_strings) are not compiled: strings are not "
                   "compiled");
  if (!a || !a->n_ints) return cg_fail(c, OX_EMODEL, "%s must be set", ints);
  *li = a->ints;
  *nl = a->n_ints;
  return OX_OK;
}

/* A float list attribute as doubles in the arena (NULL when absent). */
static double *floats_d(cg_ctx *c, const ox_node *n, const char *name, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_floats : 0;
  double *d = ox_arena_calloc(c->a, *cnt + 1, sizeof *d);
  if (!d) {
    ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    return NULL;
  }
  for (size_t i = 0; i < *cnt; i++) d[i] = a->floats[i];
  return d;
}

/* ---- Normalizer: per row x / max(x), x / sum |x| or x / sqrt(sum x^2);
 * a zero divisor leaves the row as it is. Float output. ---- */
static int gen_normalizer(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  int64_t N, C;
  int rc = cg_ml_input_2d(c, in[0], &N, &C);
  if (rc) return rc;
  const char *nm = ox_node_attr_str(n, "norm", "MAX");
  int norm = !strcmp(nm, "MAX") ? 0 : !strcmp(nm, "L1") ? 1 : !strcmp(nm, "L2") ? 2 : -1;
  if (norm < 0) return cg_fail(c, OX_EMODEL, "norm must be MAX, L1 or L2, got '%s'", nm);
  if (out[0]->dtype != OX_FLOAT || out[0]->numel != N * C)
    return cg_fail(c, OX_EMODEL, "the output must be float, X's shape");
  const char *A = acc_type(c);
  int32_t t = acc_float(c) ? OX_FLOAT : OX_DOUBLE;
  char zero[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n    %s d = %s;\n", (long long)N, A, zero);
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) {\n", (long long)C);
  cg_printf(c, "      const %s v = (%s)X0[r * %lld + j];\n", A, A, (long long)C);
  if (norm == 0)
    cg_printf(c, "      d = j == 0 || v > d ? v : d;\n");
  else if (norm == 1)
    cg_printf(c, "      d += %s(v);\n", cg_mathfn(c, t, "fabs"));
  else
    cg_printf(c, "      d += v * v;\n");
  cg_printf(c, "    }\n");
  if (norm == 2) cg_printf(c, "    d = %s(d);\n", cg_mathfn(c, t, "sqrt"));
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) {\n", (long long)C);
  cg_printf(c, "      const %s v = (%s)X0[r * %lld + j];\n", A, A, (long long)C);
  cg_printf(c, "      Y0[r * %lld + j] = (float)(d == 0 ? v : v / d);\n    }\n  }\n", (long long)C);
  return OX_OK;
}

/* offset/scale or imputed values: one for every feature, or one for all */
static int per_feature(cg_ctx *c, size_t nv, int64_t F, const char *what) {
  if (nv != 1 && (int64_t)nv != F)
    return cg_fail(c, OX_EMODEL, "%s has %zu entries for %lld features", what, nv, (long long)F);
  return OX_OK;
}

/* ---- Scaler: y = (x - offset) * scale, per feature (last axis); float ---- */
static int gen_scaler(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const cg_val *X = in[0], *Y = out[0];
  if (!numeric_in(X->dtype))
    return cg_fail(c, OX_EMODEL, "X must be a tensor of float, double, int32 or int64");
  size_t no, ns;
  double *off = floats_d(c, n, "offset", &no), *sc = floats_d(c, n, "scale", &ns);
  if (!off || !sc) return c->e->code;
  if (no != ns || !no)
    return cg_fail(c, OX_EMODEL, "offset (%zu) and scale (%zu) must be set with equal length", no,
                   ns);
  int64_t F = X->rank ? X->dims[X->rank - 1] : 1;
  int rc = per_feature(c, no, F, "offset/scale");
  if (rc) return rc;
  if (Y->dtype != OX_FLOAT || Y->numel != X->numel)
    return cg_fail(c, OX_EMODEL, "the output must be float, X's shape");
  if (!X->numel) return OX_OK;
  const char *A = acc_type(c);
  cg_ml_table_d(c, "off", off, no);
  cg_ml_table_d(c, "sc", sc, no);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)X->numel);
  cg_printf(c, "    const size_t f = %s;\n", no == 1 ? "0" : ox_arena_printf(c->a, "i %% %lld", (long long)F));
  cg_printf(c, "    Y0[i] = (float)(((%s)X0[i] - off[f]) * sc[f]);\n  }\n", A);
  return OX_OK;
}

/* ---- Imputer: replaced_value -> imputed value of the feature (NaN
 * matches NaN); reals against the floats, integers the int64s ---- */
static int gen_imputer(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const cg_val *X = in[0], *Y = out[0];
  if (!numeric_in(X->dtype))
    return cg_fail(c, OX_EMODEL, "X must be a tensor of float, double, int32 or int64");
  size_t nf, ni;
  double *fv = floats_d(c, n, "imputed_value_floats", &nf);
  const int64_t *iv = ox_node_attr(n, "imputed_value_int64s")
                          ? ox_node_attr(n, "imputed_value_int64s")->ints
                          : NULL;
  ni = iv ? ox_node_attr(n, "imputed_value_int64s")->n_ints : 0;
  if (!fv) return c->e->code;
  if ((nf > 0) == (ni > 0))
    return cg_fail(c, OX_EMODEL,
                   "exactly one of imputed_value_floats and imputed_value_int64s must be set");
  bool isf = X->dtype == OX_FLOAT || X->dtype == OX_DOUBLE;
  if (isf ? !nf : !ni)
    return cg_fail(c, OX_EMODEL, "%s input needs imputed_value_%s", isf ? "a floating" : "an integer",
                   isf ? "floats" : "int64s");
  size_t nv = isf ? nf : ni;
  int64_t F = X->rank ? X->dims[X->rank - 1] : 1;
  int rc = per_feature(c, nv, F, "the imputed values");
  if (rc) return rc;
  if (Y->dtype != X->dtype || Y->numel != X->numel)
    return cg_fail(c, OX_EMODEL, "the output must be X's type and shape");
  if (!X->numel) return OX_OK;
  const char *ct = cg_ctype(X->dtype);
  const char *f = nv == 1 ? "0" : ox_arena_printf(c->a, "i %% %lld", (long long)F);
  if (isf) {
    /* the comparison in double as the runtime (float with --float-only) */
    double rf = ox_node_attr_float(n, "replaced_value_float", 0.0f);
    const char *A = acc_type(c);
    char b[48];
    cg_ml_lit(c, b, sizeof b, rf);
    cg_ml_table_d(c, "imp", fv, nf);
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)X->numel);
    cg_printf(c, "    const %s v = (%s)X0[i];\n", A, A);
    cg_printf(c, "    Y0[i] = %s ? (%s)imp[%s] : X0[i];\n  }\n",
              isnan(rf) ? "v != v" : ox_arena_printf(c->a, "v == %s", b), ct, f);
  } else {
    int64_t ri = ox_node_attr_int(n, "replaced_value_int64", 0);
    cg_ml_table_i(c, "int64_t", "imp", iv, ni);
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++)\n", (long long)X->numel);
    cg_printf(c, "    Y0[i] = (int64_t)X0[i] == %lldLL ? (%s)imp[%s] : X0[i];\n", (long long)ri, ct,
              f);
  }
  return OX_OK;
}

/* ---- OneHotEncoder (int64 categories): X.shape + [categories], float ----
 * A value's category is the last equal entry of cats_int64s; reals count
 * by their integer part (as the runtime). A value of no category gives a
 * row of zeros: with zeros=0 the runtime fails the run, the generated
 * function cannot. */
static int gen_one_hot_encoder(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                               cg_val **out, size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const cg_val *X = in[0], *Y = out[0];
  const ox_attr *s = ox_node_attr(n, "cats_strings"), *a = ox_node_attr(n, "cats_int64s");
  if (s && s->n_strings)
    return cg_fail(c, OX_EUNSUPPORTED, "cats_strings: strings are not compiled");
  if (!a || !a->n_ints) return cg_fail(c, OX_EMODEL, "cats_int64s must be set");
  if (!numeric_in(X->dtype))
    return cg_fail(c, OX_EMODEL, "X must be a tensor of float, double, int32 or int64");
  int64_t K = (int64_t)a->n_ints;
  if (Y->dtype != OX_FLOAT || Y->numel != X->numel * K)
    return cg_fail(c, OX_EMODEL, "the output must be float, X's shape by %lld categories",
                   (long long)K);
  if (!Y->numel) return OX_OK;
  cg_ml_table_i(c, "int64_t", "cats", a->ints, a->n_ints);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = 0.0f;\n", (long long)Y->numel);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)X->numel);
  if (X->dtype == OX_FLOAT || X->dtype == OX_DOUBLE) {
    const char *A = acc_type(c);
    cg_printf(c, "    const %s v = (%s)X0[i];\n", A, A);
    /* NaN, the infinities and what int64 cannot hold: no category */
    cg_printf(c, "    if (!(v > -9.2e18%s && v < 9.2e18%s)) continue;\n", acc_float(c) ? "f" : "",
              acc_float(c) ? "f" : "");
    cg_printf(c, "    const int64_t x = (int64_t)v;\n");
  } else {
    cg_printf(c, "    const int64_t x = (int64_t)X0[i];\n");
  }
  cg_printf(c, "    long k = %lld;\n    while (k-- > 0 && cats[k] != x) {}\n", (long long)K);
  cg_printf(c, "    if (k >= 0) Y0[i * %lld + (size_t)k] = 1.0f;\n  }\n", (long long)K);
  return OX_OK;
}

/* ---- FeatureVectorizer: inputs [N, C_i] side by side as float, each in
 * inputdimensions[i] columns (zero padded when narrower, cut when wider) ---- */
static int gen_feature_vectorizer(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                                  cg_val **out, size_t n_out) {
  (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const ox_attr *a = ox_node_attr(n, "inputdimensions");
  size_t nd = a ? a->n_ints : 0;
  if (nd != n_in)
    return cg_fail(c, OX_EMODEL, "inputdimensions has %zu entries for %zu inputs", nd, n_in);
  int64_t N = -1, total = 0;
  for (size_t i = 0; i < n_in; i++) {
    int64_t r, cc;
    if (!in[i]) return cg_fail(c, OX_EMODEL, "input %zu is missing", i);
    int rc = cg_ml_input_2d(c, in[i], &r, &cc);
    if (rc) return rc;
    if (N >= 0 && r != N)
      return cg_fail(c, OX_EMODEL, "input %zu has %lld rows, expected %lld", i, (long long)r,
                     (long long)N);
    N = r;
    if (a->ints[i] < 0 || a->ints[i] > INT32_MAX)
      return cg_fail(c, OX_EMODEL, "inputdimensions[%zu] = %lld is invalid", i,
                     (long long)a->ints[i]);
    total += a->ints[i];
  }
  if (N < 0) N = 1;
  if (out[0]->dtype != OX_FLOAT || out[0]->numel != N * total)
    return cg_fail(c, OX_EMODEL, "the output must be float [%lld, %lld]", (long long)N,
                   (long long)total);
  if (!out[0]->numel) return OX_OK;
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = 0.0f;\n", (long long)out[0]->numel);
  int64_t off = 0;
  for (size_t i = 0; i < n_in; i++) {
    int64_t cc = in[i]->dims[in[i]->rank - 1], w = cc < a->ints[i] ? cc : a->ints[i];
    if (w > 0 && N > 0) {
      cg_printf(c, "  for (size_t r = 0; r < %lld; r++)\n", (long long)N);
      cg_printf(c, "    for (size_t j = 0; j < %lld; j++)\n", (long long)w);
      cg_printf(c, "      Y0[r * %lld + %lld + j] = (float)X%zu[r * %lld + j];\n", (long long)total,
                (long long)off, i, (long long)cc);
    }
    off += a->ints[i];
  }
  return OX_OK;
}

const cg_op ox_cg_ops_ml[] = {
    {CG_DOMAIN_ML ":ArrayFeatureExtractor", gen_afe},
    {CG_DOMAIN_ML ":Binarizer", gen_binarizer},
    {CG_DOMAIN_ML ":LabelEncoder", gen_label_encoder},
    {CG_DOMAIN_ML ":Normalizer", gen_normalizer},
    {CG_DOMAIN_ML ":Scaler", gen_scaler},
    {CG_DOMAIN_ML ":Imputer", gen_imputer},
    {CG_DOMAIN_ML ":OneHotEncoder", gen_one_hot_encoder},
    {CG_DOMAIN_ML ":FeatureVectorizer", gen_feature_vectorizer},
    {CG_DOMAIN_ML ":TreeEnsemble", cg_ml_gen_tree_ensemble},
    {CG_DOMAIN_ML ":TreeEnsembleClassifier", cg_ml_gen_tree_classifier},
    {CG_DOMAIN_ML ":TreeEnsembleRegressor", cg_ml_gen_tree_regressor},
    {CG_DOMAIN_ML ":LinearClassifier", cg_ml_gen_linear_classifier},
    {CG_DOMAIN_ML ":LinearRegressor", cg_ml_gen_linear_regressor},
    {CG_DOMAIN_ML ":SVMClassifier", cg_ml_gen_svm_classifier},
    {CG_DOMAIN_ML ":SVMRegressor", cg_ml_gen_svm_regressor},
    {NULL, NULL},
};
