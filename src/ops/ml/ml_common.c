/* ml_common.c - helpers shared by the ai.onnx.ml kernels. */
#include "ml_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const float *mlc_floats(const ox_node *n, const char *name, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_floats : 0;
  return a && a->n_floats ? a->floats : NULL;
}

const int64_t *mlc_ints(const ox_node *n, const char *name, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_ints : 0;
  return a && a->n_ints ? a->ints : NULL;
}

int64_t mlc_to_i64(double v) { return v > -9.2e18 && v < 9.2e18 ? (int64_t)v : 0; }

bool mlc_has(const ox_node *n, const char *name) { return ox_node_attr(n, name) != NULL; }

char **mlc_strings(const ox_kinfo *info, const char *name, size_t *cnt, bool *ok) {
  const ox_attr *a = ox_node_attr(info->node, name);
  *ok = true;
  *cnt = 0;
  if (!a || !a->n_strings) return NULL;
  char **r = ox_arena_calloc(info->arena, a->n_strings, sizeof *r);
  if (!r) {
    *ok = false;
    return NULL;
  }
  for (size_t i = 0; i < a->n_strings; i++) {
    r[i] = ox_arena_strndup(info->arena, a->strings[i].data ? (const char *)a->strings[i].data : "",
                            a->strings[i].size);
    if (!r[i]) {
      *ok = false;
      return NULL;
    }
  }
  *cnt = a->n_strings;
  return r;
}

int mlc_tensor_attr(const ox_kinfo *info, const char *name, mlc_tarr *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  const ox_attr *a = ox_node_attr(info->node, name);
  if (!a) return OX_OK;
  if (!a->t) return oc_prep_fail(info, e, "attribute '%s' must be a tensor", name);
  ox_err e2 = {0};
  ox_value *v = ox_value_from_tensor_proto(a->t, false, &e2);
  if (!v) return oc_prep_fail(info, e, "attribute '%s': %s", name, e2.msg);
  out->present = true;
  out->dtype = v->dtype;
  out->n = (size_t)v->numel;
  size_t cnt = out->n ? out->n : 1;
  int rc = OX_OK;
  if (v->dtype == OX_STRING) {
    out->s = ox_arena_calloc(info->arena, cnt, sizeof *out->s);
    if (!out->s) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < out->n; i++) {
      const char *s = ((char **)v->data)[i];
      out->s[i] = ox_arena_strdup(info->arena, s ? s : "");
      if (!out->s[i]) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    }
  } else if (v->dtype == OX_COMPLEX64 || v->dtype == OX_COMPLEX128 || v->dtype == OX_UNDEFINED) {
    rc = oc_prep_fail(info, e, "attribute '%s' has an unsupported tensor type", name);
  } else {
    out->d = ox_arena_calloc(info->arena, cnt, sizeof *out->d);
    out->i = ox_arena_calloc(info->arena, cnt, sizeof *out->i);
    if (!out->d || !out->i) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    bool isf = oc_is_float(v->dtype);
    for (size_t i = 0; !rc && i < out->n; i++) {
      out->d[i] = oc_get(v->data, v->dtype, (int64_t)i);
      double dv = out->d[i];
      out->i[i] = isf ? mlc_to_i64(dv) : oc_get_i64(v->data, v->dtype, (int64_t)i);
    }
  }
  ox_value_unref(v);
  return rc;
}

int mlc_post_parse(const ox_kinfo *info, const char *s, mlc_post *out, ox_err *e) {
  static const char *const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  for (int k = 0; k < 5; k++)
    if (strcmp(s, names[k]) == 0) {
      *out = (mlc_post)k;
      return OX_OK;
    }
  return oc_prep_fail(info, e, "unknown post_transform '%s'", s);
}

/* erfinv by Newton iterations on erf from a rational first guess */
static double erfinv(double y) {
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  /* Giles' single-precision approximation as the starting point */
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w;
    x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w;
    x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w;
    x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    x = 0.000100950558 + x * w;
    x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w;
    x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w;
    x = 2.83297682 + x * w;
  }
  x *= y;
  for (int it = 0; it < 3; it++) {
    double err = erf(x) - y;
    x -= err / (1.1283791670955126 * exp(-x * x)); /* 2/sqrt(pi) */
  }
  return x;
}

double mlc_probit(double p) { return 1.4142135623730951 * erfinv(2.0 * p - 1.0); }

void mlc_post_apply(mlc_post p, double *s, size_t n) {
  switch (p) {
    case MLC_NONE:
      break;
    case MLC_LOGISTIC:
      for (size_t i = 0; i < n; i++) s[i] = 1.0 / (1.0 + exp(-s[i]));
      break;
    case MLC_PROBIT:
      for (size_t i = 0; i < n; i++) s[i] = mlc_probit(s[i]);
      break;
    case MLC_SOFTMAX:
    case MLC_SOFTMAX_ZERO: {
      /* SOFTMAX_ZERO: a zero score stays zero and takes no part in the sum */
      double mx = -INFINITY, sum = 0;
      for (size_t i = 0; i < n; i++)
        if (!(p == MLC_SOFTMAX_ZERO && s[i] == 0) && s[i] > mx) mx = s[i];
      for (size_t i = 0; i < n; i++) {
        if (p == MLC_SOFTMAX_ZERO && s[i] == 0) continue;
        s[i] = exp(s[i] - mx);
        sum += s[i];
      }
      /* a row of zeros (SOFTMAX_ZERO) gives 0.5 everywhere */
      for (size_t i = 0; i < n; i++) s[i] = sum > 0 ? s[i] / sum : 0.5;
      break;
    }
  }
}

/* comparators: ties broken by position so the last duplicate sorts last */
static int cmp_idx(const mlc_kent *a, const mlc_kent *b) {
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}
static int cmp_str(const void *x, const void *y) {
  const mlc_kent *a = x, *b = y;
  int c = strcmp(a->s, b->s);
  return c ? c : cmp_idx(a, b);
}
static int cmp_int(const void *x, const void *y) {
  const mlc_kent *a = x, *b = y;
  return a->i != b->i ? (a->i < b->i ? -1 : 1) : cmp_idx(a, b);
}
/* NaN sorts after every number */
static int dbl_order(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return a < b ? -1 : a > b;
}
static int cmp_dbl(const void *x, const void *y) {
  const mlc_kent *a = x, *b = y;
  int c = dbl_order(a->d, b->d);
  return c ? c : cmp_idx(a, b);
}

int mlc_lookup_build(ox_arena *a, mlc_lookup *lk, mlc_kkind kind, char *const *s, const int64_t *i,
                     const double *d, size_t n) {
  lk->kind = kind;
  lk->n = n;
  lk->e = ox_arena_calloc(a, n ? n : 1, sizeof *lk->e);
  if (!lk->e) return OX_ENOMEM;
  for (size_t k = 0; k < n; k++) {
    lk->e[k].idx = k;
    if (kind == MLC_KSTR) lk->e[k].s = s[k];
    if (kind == MLC_KINT) lk->e[k].i = i[k];
    if (kind == MLC_KDBL) lk->e[k].d = d[k];
  }
  if (n > 1)
    qsort(lk->e, n, sizeof *lk->e,
          kind == MLC_KSTR   ? cmp_str
          : kind == MLC_KINT ? cmp_int
                             : cmp_dbl);
  return OX_OK;
}

/* binary search for the last entry whose key equals; c(k) < 0 when entry k
 * is before the probe */
#define LOOKUP_BODY(CMP)                    \
  size_t lo = 0, hi = lk->n;                \
  while (lo < hi) {                         \
    size_t mid = lo + (hi - lo) / 2;        \
    const mlc_kent *m = &lk->e[mid];        \
    if ((CMP) <= 0)                         \
      lo = mid + 1;                         \
    else                                    \
      hi = mid;                             \
  }                                         \
  if (lo == 0) return -1;                   \
  {                                         \
    const mlc_kent *m = &lk->e[lo - 1];     \
    if ((CMP) == 0) return (int64_t)m->idx; \
  }                                         \
  return -1;

int64_t mlc_lookup_str(const mlc_lookup *lk, const char *s) {
  s = s ? s : "";
  LOOKUP_BODY(strcmp(m->s, s))
}
int64_t mlc_lookup_int(const mlc_lookup *lk, int64_t v){
    LOOKUP_BODY((m->i > v) - (m->i < v))} int64_t mlc_lookup_dbl(const mlc_lookup *lk, double v) {
  LOOKUP_BODY(dbl_order(m->d, v))
}

bool mlc_is_numeric_in(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_INT32 || dt == OX_INT64;
}

int mlc_input_2d(ox_kctx *ctx, const ox_value *x, int64_t *N, int64_t *C) {
  if (x->kind != OX_VAL_TENSOR || !mlc_is_numeric_in(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "input X must be a tensor of float, double, int32 or int64");
  if (x->rank == 1) {
    *N = 1;
    *C = x->dims[0];
  } else if (x->rank == 2) {
    *N = x->dims[0];
    *C = x->dims[1];
  } else {
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input X must be [C] or [N,C], got rank %zu", x->rank);
  }
  return OX_OK;
}

int mlc_map_check(ox_kctx *ctx, const ox_value *m, int64_t *n) {
  if (!m || m->kind != OX_VAL_MAP || !m->keys || m->keys->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input X must be a map");
  *n = m->keys->numel;
  const ox_value *v = m->vals;
  if (!v) return *n ? ox_kctx_fail(ctx, OX_ERUNTIME, "map has keys but no values") : OX_OK;
  if (v->kind == OX_VAL_TENSOR) {
    if (v->numel != *n || v->dtype == OX_UNDEFINED)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "map has %lld keys but %lld values", (long long)*n,
                          (long long)v->numel);
    return OX_OK;
  }
  if (v->kind != OX_VAL_SEQUENCE || (int64_t)v->n_items != *n)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "map values do not match its %lld keys", (long long)*n);
  for (size_t i = 0; i < v->n_items; i++) {
    const ox_value *t = v->items[i];
    if (!t || t->kind != OX_VAL_TENSOR || t->numel != 1 || t->dtype != v->items[0]->dtype)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "map value %zu is not a scalar of the map's value type",
                          i);
  }
  return OX_OK;
}

int32_t mlc_map_val_dtype(const ox_value *m) {
  const ox_value *v = m->vals;
  if (!v) return OX_UNDEFINED;
  if (v->kind == OX_VAL_TENSOR) return v->dtype;
  if (v->n_items) return v->items[0]->dtype;
  if (v->elem_type && v->elem_type->kind == OX_TYPE_TENSOR) return v->elem_type->elem_type;
  return OX_UNDEFINED;
}

double mlc_map_val_num(const ox_value *m, int64_t i) {
  const ox_value *v = m->vals;
  if (v->kind == OX_VAL_TENSOR) return oc_get(v->data, v->dtype, i);
  const ox_value *t = v->items[i];
  return oc_get(t->data, t->dtype, 0);
}

const char *mlc_map_val_str(const ox_value *m, int64_t i) {
  const ox_value *v = m->vals;
  const char *s =
      v->kind == OX_VAL_TENSOR ? ((char **)v->data)[i] : ((char **)v->items[(size_t)i]->data)[0];
  return s ? s : "";
}

int mlc_set_str(ox_kctx *ctx, ox_value *t, int64_t i, const char *s) {
  char **d = (char **)t->data;
  size_t l = strlen(s ? s : "");
  char *c = malloc(l + 1);
  if (!c) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  memcpy(c, s ? s : "", l + 1);
  free(d[i]);
  d[i] = c;
  return OX_OK;
}
