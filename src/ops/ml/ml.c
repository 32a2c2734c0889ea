/* ml.c - ai.onnx.ml kernels: the feature and encoding operators
 * (ArrayFeatureExtractor, Binarizer, CastMap, CategoryMapper, DictVectorizer,
 * FeatureVectorizer, Imputer, LabelEncoder 1/2/4, Normalizer, OneHotEncoder,
 * Scaler, ZipMap). The linear/SVM models are in ml_linear.c, the trees in
 * ml_tree.c. Semantics follow Operators-ml.md; where the spec is silent the
 * choices are noted at the kernel (they match the common runtime behaviour). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml_common.h"

/* ---------------- ArrayFeatureExtractor ----------------
 * Z = X[..., Y] along the last axis; Y is flattened. A 1-D X gives [1, |Y|]. */
static int afe_run(ox_kctx *ctx, void *st) {
  (void)st;
  ox_value *x = ox_kctx_input(ctx, 0), *y = ox_kctx_input(ctx, 1);
  if (!x || !y || x->kind != OX_VAL_TENSOR || y->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "inputs X and Y must be tensors");
  if (y->dtype != OX_INT64) return ox_kctx_fail(ctx, OX_ERUNTIME, "indices Y must be int64");
  if (x->rank == 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "X must have rank >= 1");
  int64_t last = x->dims[x->rank - 1], k = y->numel;
  const int64_t *idx = y->data;
  for (int64_t i = 0; i < k; i++)
    if (idx[i] < 0 || idx[i] >= last)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "index %lld out of range [0, %lld)", (long long)idx[i],
                          (long long)last);
  int64_t dims[OC_MAXRANK];
  size_t rank = x->rank;
  if (rank > OC_MAXRANK) return ox_kctx_fail(ctx, OX_ERUNTIME, "rank too large");
  if (rank == 1) {
    dims[0] = 1;
    dims[1] = k;
    rank = 2;
  } else {
    memcpy(dims, x->dims, (rank - 1) * sizeof *dims);
    dims[rank - 1] = k;
  }
  ox_value *z = ox_kctx_output(ctx, 0, x->dtype, dims, rank);
  if (!z) return OX_ERUNTIME;
  int64_t outer = last ? x->numel / last : 0;
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < k; j++) {
      int64_t src = o * last + idx[j], dst = o * k + j;
      if (x->dtype == OX_STRING) {
        if (mlc_set_str(ctx, z, dst, ((char **)x->data)[src])) return OX_ENOMEM;
      } else {
        memcpy((char *)z->data + (size_t)dst * es, (char *)x->data + (size_t)src * es, es);
      }
    }
  return OX_OK;
}

/* ---------------- Binarizer: y = x > threshold ? 1 : 0 ---------------- */
typedef struct {
  double thr;
} bin_st;
static int bin_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  bin_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->thr = ox_node_attr_float(info->node, "threshold", 0.0f);
  *st = s;
  return OX_OK;
}
static int bin_run(ox_kctx *ctx, void *st) {
  bin_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || !mlc_is_numeric_in(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of float, double, int32 or int64");
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  for (int64_t i = 0; i < x->numel; i++) {
    double v = oc_get(x->data, x->dtype, i);
    oc_set(y->data, y->dtype, i, isnan(v) ? v : (v > s->thr ? 1.0 : 0.0));
  }
  return OX_OK;
}

/* ---------------- CastMap ----------------
 * map(int64, string|float) -> [1, N] tensor ordered by key (DENSE) or
 * [1, max_map] indexed by key (SPARSE; absent keys give 0 / ""). Strings
 * convert with strtod/strtoll; numbers to strings with %g-like shortest
 * form ("%.9g"). */
typedef struct {
  int32_t to;
  bool sparse;
  int64_t max_map;
} cm_st;
static int castmap_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  cm_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const char *to = ox_node_attr_str(info->node, "cast_to", "TO_FLOAT");
  const char *form = ox_node_attr_str(info->node, "map_form", "DENSE");
  if (!strcmp(to, "TO_FLOAT"))
    s->to = OX_FLOAT;
  else if (!strcmp(to, "TO_STRING"))
    s->to = OX_STRING;
  else if (!strcmp(to, "TO_INT64"))
    s->to = OX_INT64;
  else
    return oc_prep_fail(info, e, "cast_to must be TO_FLOAT, TO_STRING or TO_INT64, got '%s'", to);
  if (!strcmp(form, "SPARSE"))
    s->sparse = true;
  else if (strcmp(form, "DENSE"))
    return oc_prep_fail(info, e, "map_form must be DENSE or SPARSE, got '%s'", form);
  s->max_map = ox_node_attr_int(info->node, "max_map", 1);
  if (s->sparse && s->max_map < 0) return oc_prep_fail(info, e, "max_map must be >= 0");
  *st = s;
  return OX_OK;
}
static int cmp_i64_pos(const void *a, const void *b, const int64_t *keys) {
  int64_t x = keys[*(const int64_t *)a], y = keys[*(const int64_t *)b];
  return (x > y) - (x < y);
}
/* insertion sort of positions by key (maps are small; no global comparator state) */
static void sort_positions(int64_t *pos, int64_t n, const int64_t *keys) {
  for (int64_t i = 1; i < n; i++) {
    int64_t p = pos[i], j = i;
    while (j > 0 && cmp_i64_pos(&pos[j - 1], &p, keys) > 0) {
      pos[j] = pos[j - 1];
      j--;
    }
    pos[j] = p;
  }
}
static int castmap_run(ox_kctx *ctx, void *st) {
  cm_st *s = st;
  ox_value *m = ox_kctx_input(ctx, 0);
  int64_t n;
  if (mlc_map_check(ctx, m, &n)) return OX_ERUNTIME;
  if (m->keys->dtype != OX_INT64) return ox_kctx_fail(ctx, OX_ERUNTIME, "map keys must be int64");
  int32_t vt = mlc_map_val_dtype(m);
  if (n && vt != OX_STRING && vt != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "map values must be string or float");
  const int64_t *keys = m->keys->data;
  int64_t len = s->sparse ? s->max_map : n;
  int64_t dims[2] = {1, len};
  ox_value *y = ox_kctx_output_zero(ctx, 0, s->to, dims, 2);
  if (!y) return OX_ERUNTIME;
  int64_t *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
  if (!pos) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) pos[i] = i;
  sort_positions(pos, n, keys);
  int rc = OX_OK;
  if (s->to == OX_STRING && s->sparse)
    for (int64_t j = 0; j < len && !rc; j++) rc = mlc_set_str(ctx, y, j, "");
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t p = pos[i], dst = i;
    if (s->sparse) {
      dst = keys[p];
      if (dst < 0 || dst >= len) {
        rc = ox_kctx_fail(ctx, OX_ERUNTIME, "map key %lld outside [0, max_map=%lld)",
                          (long long)dst, (long long)len);
        break;
      }
    }
    if (vt == OX_STRING) {
      const char *v = mlc_map_val_str(m, p);
      if (s->to == OX_STRING)
        rc = mlc_set_str(ctx, y, dst, v);
      else if (s->to == OX_FLOAT)
        ((float *)y->data)[dst] = strtof(v, NULL);
      else
        ((int64_t *)y->data)[dst] = strtoll(v, NULL, 10);
    } else {
      double v = mlc_map_val_num(m, p);
      if (s->to == OX_STRING) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.9g", v);
        rc = mlc_set_str(ctx, y, dst, buf);
      } else if (s->to == OX_FLOAT) {
        ((float *)y->data)[dst] = (float)v;
      } else {
        ((int64_t *)y->data)[dst] = mlc_to_i64(v);
      }
    }
  }
  free(pos);
  return rc;
}

/* ---------------- CategoryMapper ---------------- */
typedef struct {
  char **strs;
  const int64_t *ints;
  size_t n;
  mlc_lookup by_str, by_int;
  int64_t def_int;
  const char *def_str;
} catmap_st;
static int catmap_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  catmap_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t ns, ni;
  bool ok;
  s->strs = mlc_strings(info, "cats_strings", &ns, &ok);
  s->ints = mlc_ints(info->node, "cats_int64s", &ni);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (ns != ni)
    return oc_prep_fail(info, e, "cats_strings (%zu) and cats_int64s (%zu) differ in length", ns,
                        ni);
  s->n = ns;
  s->def_int = ox_node_attr_int(info->node, "default_int64", -1);
  s->def_str = ox_node_attr_str(info->node, "default_string", "_Unused");
  if (mlc_lookup_build(info->arena, &s->by_str, MLC_KSTR, s->strs, NULL, NULL, ns) ||
      mlc_lookup_build(info->arena, &s->by_int, MLC_KINT, NULL, s->ints, NULL, ni))
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  *st = s;
  return OX_OK;
}
static int catmap_run(ox_kctx *ctx, void *st) {
  catmap_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || (x->dtype != OX_STRING && x->dtype != OX_INT64))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of string or int64");
  bool s2i = x->dtype == OX_STRING;
  ox_value *y = ox_kctx_output(ctx, 0, s2i ? OX_INT64 : OX_STRING, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  for (int64_t i = 0; i < x->numel; i++) {
    if (s2i) {
      int64_t k = mlc_lookup_str(&s->by_str, ((char **)x->data)[i]);
      ((int64_t *)y->data)[i] = k < 0 ? s->def_int : s->ints[k];
    } else {
      int64_t k = mlc_lookup_int(&s->by_int, ((int64_t *)x->data)[i]);
      if (mlc_set_str(ctx, y, i, k < 0 ? s->def_str : s->strs[k])) return OX_ENOMEM;
    }
  }
  return OX_OK;
}

/* ---------------- DictVectorizer ----------------
 * Y[0, index of key in the vocabulary] = value; output [1, |vocabulary|] of
 * the map's value type. Keys missing from the vocabulary are ignored. */
typedef struct {
  bool str;
  size_t n;
  mlc_lookup lk;
} dv_st;
static int dv_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  dv_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t ns, ni;
  bool ok;
  char **sv = mlc_strings(info, "string_vocabulary", &ns, &ok);
  const int64_t *iv = mlc_ints(info->node, "int64_vocabulary", &ni);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if ((ns > 0) == (ni > 0))
    return oc_prep_fail(info, e,
                        "exactly one of string_vocabulary and int64_vocabulary must be set");
  s->str = ns > 0;
  s->n = s->str ? ns : ni;
  if (mlc_lookup_build(info->arena, &s->lk, s->str ? MLC_KSTR : MLC_KINT, sv, iv, NULL, s->n))
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  *st = s;
  return OX_OK;
}
static int dv_run(ox_kctx *ctx, void *st) {
  dv_st *s = st;
  ox_value *m = ox_kctx_input(ctx, 0);
  int64_t n;
  if (mlc_map_check(ctx, m, &n)) return OX_ERUNTIME;
  int32_t kt = m->keys->dtype;
  if (s->str ? kt != OX_STRING : kt != OX_INT64)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "map keys must be %s to match the vocabulary",
                        s->str ? "string" : "int64");
  int32_t vt = mlc_map_val_dtype(m);
  if (vt == OX_UNDEFINED) vt = OX_FLOAT;
  if (vt != OX_STRING && vt != OX_INT64 && vt != OX_FLOAT && vt != OX_DOUBLE)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "map values must be string, int64, float or double");
  if (vt == kt) return ox_kctx_fail(ctx, OX_ERUNTIME, "map key and value types must differ");
  int64_t dims[2] = {1, (int64_t)s->n};
  ox_value *y = ox_kctx_output_zero(ctx, 0, vt, dims, 2);
  if (!y) return OX_ERUNTIME;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = s->str ? mlc_lookup_str(&s->lk, ((char **)m->keys->data)[i])
                       : mlc_lookup_int(&s->lk, ((int64_t *)m->keys->data)[i]);
    if (k < 0) continue;
    if (vt == OX_STRING) {
      if (mlc_set_str(ctx, y, k, mlc_map_val_str(m, i))) return OX_ENOMEM;
    } else if (vt == OX_INT64) {
      const ox_value *v = m->vals;
      ((int64_t *)y->data)[k] =
          v->kind == OX_VAL_TENSOR ? ((int64_t *)v->data)[i] : ((int64_t *)v->items[i]->data)[0];
    } else {
      oc_set(y->data, vt, k, mlc_map_val_num(m, i));
    }
  }
  if (vt == OX_STRING)
    for (int64_t j = 0; j < (int64_t)s->n; j++)
      if (!((char **)y->data)[j] && mlc_set_str(ctx, y, j, "")) return OX_ENOMEM;
  return OX_OK;
}

/* ---------------- FeatureVectorizer ----------------
 * Inputs [N, C_i] (or [C_i] = [1, C_i]) -> [N, sum(inputdimensions)] float;
 * an input narrower than its declared dimension is zero padded, a wider one
 * truncated. */
typedef struct {
  const int64_t *dims;
  size_t n;
  int64_t total;
} fv_st;
static int fv_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  fv_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->dims = mlc_ints(info->node, "inputdimensions", &s->n);
  if (s->n != info->n_inputs)
    return oc_prep_fail(info, e, "inputdimensions has %zu entries for %zu inputs", s->n,
                        info->n_inputs);
  for (size_t i = 0; i < s->n; i++) {
    if (s->dims[i] < 0 || s->dims[i] > INT32_MAX)
      return oc_prep_fail(info, e, "inputdimensions[%zu] = %lld is invalid", i,
                          (long long)s->dims[i]);
    s->total += s->dims[i];
  }
  *st = s;
  return OX_OK;
}
static int fv_run(ox_kctx *ctx, void *st) {
  fv_st *s = st;
  int64_t N = -1;
  for (size_t i = 0; i < s->n; i++) {
    ox_value *x = ox_kctx_input(ctx, i);
    int64_t n, c;
    if (!x) return ox_kctx_fail(ctx, OX_ERUNTIME, "input %zu is missing", i);
    if (mlc_input_2d(ctx, x, &n, &c)) return OX_ERUNTIME;
    if (N >= 0 && n != N)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "input %zu has %lld rows, expected %lld", i,
                          (long long)n, (long long)N);
    N = n;
  }
  if (N < 0) N = 1;
  int64_t dims[2] = {N, s->total};
  ox_value *y = ox_kctx_output_zero(ctx, 0, OX_FLOAT, dims, 2);
  if (!y) return OX_ERUNTIME;
  float *yd = y->data;
  int64_t off = 0;
  for (size_t i = 0; i < s->n; i++) {
    ox_value *x = ox_kctx_input(ctx, i);
    int64_t c = x->dims[x->rank - 1], w = c < s->dims[i] ? c : s->dims[i];
    for (int64_t r = 0; r < N; r++)
      for (int64_t j = 0; j < w; j++)
        yd[r * s->total + off + j] = (float)oc_get(x->data, x->dtype, r * c + j);
    off += s->dims[i];
  }
  return OX_OK;
}

/* ---------------- Imputer ---------------- */
typedef struct {
  const float *fv;
  const int64_t *iv;
  size_t nf, ni;
  float rf;
  int64_t ri;
} imp_st;
static int imp_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  imp_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->fv = mlc_floats(info->node, "imputed_value_floats", &s->nf);
  s->iv = mlc_ints(info->node, "imputed_value_int64s", &s->ni);
  if ((s->nf > 0) == (s->ni > 0))
    return oc_prep_fail(info, e,
                        "exactly one of imputed_value_floats and imputed_value_int64s must be set");
  s->rf = ox_node_attr_float(info->node, "replaced_value_float", 0.0f);
  s->ri = ox_node_attr_int(info->node, "replaced_value_int64", 0);
  *st = s;
  return OX_OK;
}
static int imp_run(ox_kctx *ctx, void *st) {
  imp_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || !mlc_is_numeric_in(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of float, double, int32 or int64");
  bool isf = x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE;
  if (isf ? !s->nf : !s->ni)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s input needs imputed_value_%s",
                        isf ? "a floating" : "an integer", isf ? "floats" : "int64s");
  size_t nv = isf ? s->nf : s->ni;
  int64_t F = x->rank ? x->dims[x->rank - 1] : 1;
  if (nv != 1 && (int64_t)nv != F)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu imputed values for %lld features", nv, (long long)F);
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t f = nv == 1 ? 0 : i % F;
    if (isf) {
      double v = oc_get(x->data, x->dtype, i);
      bool hit = isnan(s->rf) ? isnan(v) : v == (double)s->rf;
      oc_set(y->data, y->dtype, i, hit ? (double)s->fv[f] : v);
    } else {
      int64_t v = oc_get_i64(x->data, x->dtype, i);
      oc_set_i64(y->data, y->dtype, i, v == s->ri ? s->iv[f] : v);
    }
  }
  return OX_OK;
}

/* ---------------- LabelEncoder ----------------
 * v1: string -> index in classes_strings (else default_int64); int64 ->
 *     classes_strings[x] (else default_string).
 * v2/v4: keys_* -> values_* with default_* (v4 adds *_tensor forms and
 *     int16/int32/double). Repeated keys: the last wins. */
typedef struct {
  int version;
  /* v1 */
  char **classes;
  size_t n_classes;
  mlc_lookup lk;
  /* v2/v4 */
  mlc_kkind kkind;
  int32_t out_dt;
  mlc_tarr vals; /* values as numbers or strings */
  double def_d;
  int64_t def_i;
  const char *def_s;
  int64_t def_str_len;
} le_st;

/* out holds n numbers of type dt: both arrays allocated, to be filled */
static int le_numbers(const ox_kinfo *info, mlc_tarr *out, int32_t dt, size_t n, ox_err *e) {
  out->present = true;
  out->dtype = dt;
  out->n = n;
  out->i = ox_arena_calloc(info->arena, n ? n : 1, sizeof *out->i);
  out->d = ox_arena_calloc(info->arena, n ? n : 1, sizeof *out->d);
  if (!out->i || !out->d) return ox_err_set(e, OX_ENOMEM, "out of memory");
  return OX_OK;
}

static int le_list(const ox_kinfo *info, const char *base, mlc_tarr *out, ox_err *e) {
  /* base "keys" or "values": reads base_tensor, base_strings, base_int64s,
   * base_floats into out; error when several are set */
  char nm[32];
  int set = 0;
  memset(out, 0, sizeof *out);
  snprintf(nm, sizeof nm, "%s_tensor", base);
  if (mlc_has(info->node, nm)) {
    if (info->since_version < 4) return oc_prep_fail(info, e, "%s needs opset 4", nm);
    if (mlc_tensor_attr(info, nm, out, e)) return e->code;
    set++;
  }
  snprintf(nm, sizeof nm, "%s_strings", base);
  size_t n;
  bool ok;
  char **s = mlc_strings(info, nm, &n, &ok);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (mlc_has(info->node, nm)) {
    set++;
    out->present = true;
    out->dtype = OX_STRING;
    out->n = n;
    out->s = s;
  }
  snprintf(nm, sizeof nm, "%s_int64s", base);
  if (mlc_has(info->node, nm)) {
    const int64_t *iv = mlc_ints(info->node, nm, &n);
    set++;
    if (le_numbers(info, out, OX_INT64, n, e)) return e->code;
    for (size_t k = 0; k < n; k++) {
      out->i[k] = iv[k];
      out->d[k] = (double)iv[k];
    }
  }
  snprintf(nm, sizeof nm, "%s_floats", base);
  if (mlc_has(info->node, nm)) {
    const float *fv = mlc_floats(info->node, nm, &n);
    set++;
    if (le_numbers(info, out, OX_FLOAT, n, e)) return e->code;
    for (size_t k = 0; k < n; k++) {
      out->d[k] = fv[k];
      out->i[k] = mlc_to_i64(fv[k]);
    }
  }
  if (set != 1)
    return oc_prep_fail(info, e, "exactly one of the %s_* attributes must be set", base);
  return OX_OK;
}

static bool le_dtype_ok(int32_t dt) {
  return dt == OX_STRING || dt == OX_INT64 || dt == OX_FLOAT || dt == OX_INT32 || dt == OX_INT16 ||
         dt == OX_DOUBLE;
}

static int le_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  le_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->version = info->since_version >= 4 ? 4 : info->since_version >= 2 ? 2 : 1;
  s->def_s = ox_node_attr_str(info->node, "default_string", "_Unused");
  s->def_i = ox_node_attr_int(info->node, "default_int64", -1);
  *st = s;
  if (s->version == 1) {
    bool ok;
    s->classes = mlc_strings(info, "classes_strings", &s->n_classes, &ok);
    if (!ok ||
        mlc_lookup_build(info->arena, &s->lk, MLC_KSTR, s->classes, NULL, NULL, s->n_classes))
      return ox_err_set(e, OX_ENOMEM, "out of memory");
    return OX_OK;
  }
  mlc_tarr keys;
  if (le_list(info, "keys", &keys, e) || le_list(info, "values", &s->vals, e)) return e->code;
  if (!le_dtype_ok(keys.dtype) || !le_dtype_ok(s->vals.dtype))
    return oc_prep_fail(info, e,
                        "keys and values must be string, int64, int32, int16, float or "
                        "double");
  if (keys.n != s->vals.n)
    return oc_prep_fail(info, e, "keys (%zu) and values (%zu) differ in length", keys.n, s->vals.n);
  s->kkind = keys.dtype == OX_STRING                               ? MLC_KSTR
             : (keys.dtype == OX_FLOAT || keys.dtype == OX_DOUBLE) ? MLC_KDBL
                                                                   : MLC_KINT;
  if (mlc_lookup_build(info->arena, &s->lk, s->kkind, keys.s, keys.i, keys.d, keys.n))
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->out_dt = s->vals.dtype;
  s->def_d = ox_node_attr_float(info->node, "default_float", -0.0f);
  mlc_tarr dt;
  if (mlc_tensor_attr(info, "default_tensor", &dt, e)) return e->code;
  if (dt.present) {
    if (dt.n != 1)
      return oc_prep_fail(info, e, "default_tensor must hold one element, got %zu", dt.n);
    if ((dt.dtype == OX_STRING) != (s->out_dt == OX_STRING))
      return oc_prep_fail(info, e, "default_tensor type does not match the values type");
    if (dt.dtype == OX_STRING)
      s->def_s = dt.s[0];
    else {
      s->def_d = dt.d[0];
      s->def_i = dt.i[0];
    }
  }
  return OX_OK;
}

static int le_run(ox_kctx *ctx, void *st) {
  le_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor");
  if (s->version == 1) {
    if (x->dtype != OX_STRING && x->dtype != OX_INT64)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of string or int64");
    bool s2i = x->dtype == OX_STRING;
    ox_value *y = ox_kctx_output(ctx, 0, s2i ? OX_INT64 : OX_STRING, x->dims, x->rank);
    if (!y) return OX_ERUNTIME;
    for (int64_t i = 0; i < x->numel; i++) {
      if (s2i) {
        int64_t k = mlc_lookup_str(&s->lk, ((char **)x->data)[i]);
        ((int64_t *)y->data)[i] = k < 0 ? s->def_i : k;
      } else {
        int64_t v = ((int64_t *)x->data)[i];
        const char *r = v >= 0 && v < (int64_t)s->n_classes ? s->classes[v] : s->def_s;
        if (mlc_set_str(ctx, y, i, r)) return OX_ENOMEM;
      }
    }
    return OX_OK;
  }
  bool ok = s->kkind == MLC_KSTR ? x->dtype == OX_STRING
            : s->kkind == MLC_KDBL
                ? (x->dtype == OX_FLOAT || x->dtype == OX_DOUBLE)
                : (x->dtype == OX_INT64 || x->dtype == OX_INT32 || x->dtype == OX_INT16);
  if (!ok) return ox_kctx_fail(ctx, OX_ERUNTIME, "input type does not match the type of the keys");
  ox_value *y = ox_kctx_output(ctx, 0, s->out_dt, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  bool out_f = s->out_dt == OX_FLOAT || s->out_dt == OX_DOUBLE;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t k;
    if (s->kkind == MLC_KSTR)
      k = mlc_lookup_str(&s->lk, ((char **)x->data)[i]);
    else if (s->kkind == MLC_KDBL)
      k = mlc_lookup_dbl(&s->lk, oc_get(x->data, x->dtype, i));
    else
      k = mlc_lookup_int(&s->lk, oc_get_i64(x->data, x->dtype, i));
    if (s->out_dt == OX_STRING) {
      if (mlc_set_str(ctx, y, i, k < 0 ? s->def_s : s->vals.s[k])) return OX_ENOMEM;
    } else if (out_f) {
      oc_set(y->data, s->out_dt, i, k < 0 ? s->def_d : s->vals.d[k]);
    } else {
      oc_set_i64(y->data, s->out_dt, i, k < 0 ? s->def_i : s->vals.i[k]);
    }
  }
  return OX_OK;
}

/* ---------------- Normalizer ----------------
 * per row: MAX x/max(x), L1 x/sum|x|, L2 x/sqrt(sum x^2); a zero divisor
 * leaves the row unchanged. */
typedef struct {
  int norm; /* 0 MAX, 1 L1, 2 L2 */
} norm_st;
static int norm_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  norm_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const char *n = ox_node_attr_str(info->node, "norm", "MAX");
  if (!strcmp(n, "MAX"))
    s->norm = 0;
  else if (!strcmp(n, "L1"))
    s->norm = 1;
  else if (!strcmp(n, "L2"))
    s->norm = 2;
  else
    return oc_prep_fail(info, e, "norm must be MAX, L1 or L2, got '%s'", n);
  *st = s;
  return OX_OK;
}
static int norm_run(ox_kctx *ctx, void *st) {
  norm_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  int64_t N, C;
  if (!x || mlc_input_2d(ctx, x, &N, &C)) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  float *yd = y->data;
  for (int64_t r = 0; r < N; r++) {
    double d = 0;
    for (int64_t j = 0; j < C; j++) {
      double v = oc_get(x->data, x->dtype, r * C + j);
      if (s->norm == 0)
        d = j == 0 || v > d ? v : d;
      else if (s->norm == 1)
        d += fabs(v);
      else
        d += v * v;
    }
    if (s->norm == 2) d = sqrt(d);
    for (int64_t j = 0; j < C; j++) {
      double v = oc_get(x->data, x->dtype, r * C + j);
      yd[r * C + j] = (float)(d == 0 ? v : v / d);
    }
  }
  return OX_OK;
}

/* ---------------- OneHotEncoder ---------------- */
typedef struct {
  bool str;
  size_t n;
  mlc_lookup lk;
  bool zeros;
} ohe_st;
static int ohe_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  ohe_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t ns, ni;
  bool ok;
  char **sv = mlc_strings(info, "cats_strings", &ns, &ok);
  const int64_t *iv = mlc_ints(info->node, "cats_int64s", &ni);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if ((ns > 0) == (ni > 0))
    return oc_prep_fail(info, e, "exactly one of cats_strings and cats_int64s must be set");
  s->str = ns > 0;
  s->n = s->str ? ns : ni;
  s->zeros = ox_node_attr_int(info->node, "zeros", 1) != 0;
  if (mlc_lookup_build(info->arena, &s->lk, s->str ? MLC_KSTR : MLC_KINT, sv, iv, NULL, s->n))
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  *st = s;
  return OX_OK;
}
static int ohe_run(ox_kctx *ctx, void *st) {
  ohe_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || (x->dtype != OX_STRING && !mlc_is_numeric_in(x->dtype)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of string or a numeric type");
  if ((x->dtype == OX_STRING) != s->str)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s input needs cats_%s",
                        s->str ? "a numeric" : "a string", s->str ? "int64s" : "strings");
  if (x->rank + 1 > OC_MAXRANK) return ox_kctx_fail(ctx, OX_ERUNTIME, "rank too large");
  int64_t dims[OC_MAXRANK];
  memcpy(dims, x->dims, x->rank * sizeof *dims);
  dims[x->rank] = (int64_t)s->n;
  ox_value *y = ox_kctx_output_zero(ctx, 0, OX_FLOAT, dims, x->rank + 1);
  if (!y) return OX_ERUNTIME;
  float *yd = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t k;
    if (s->str) {
      k = mlc_lookup_str(&s->lk, ((char **)x->data)[i]);
    } else {
      double v = oc_get(x->data, x->dtype, i);
      k = isfinite(v) && fabs(v) < 9.2e18 ? mlc_lookup_int(&s->lk, (int64_t)v) : -1;
    }
    if (k < 0) {
      if (!s->zeros)
        return ox_kctx_fail(ctx, OX_ERUNTIME, "element %lld is not a known category (zeros=0)",
                            (long long)i);
      continue;
    }
    yd[i * (int64_t)s->n + k] = 1.0f;
  }
  return OX_OK;
}

/* ---------------- Scaler: y = (x - offset) * scale ---------------- */
typedef struct {
  const float *off, *sc;
  size_t n;
} sc_st;
static int sc_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  sc_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t no, ns;
  s->off = mlc_floats(info->node, "offset", &no);
  s->sc = mlc_floats(info->node, "scale", &ns);
  if (no != ns || !no)
    return oc_prep_fail(info, e, "offset (%zu) and scale (%zu) must be set with equal length", no,
                        ns);
  s->n = no;
  *st = s;
  return OX_OK;
}
static int sc_run(ox_kctx *ctx, void *st) {
  sc_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || !mlc_is_numeric_in(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor of float, double, int32 or int64");
  int64_t F = x->rank ? x->dims[x->rank - 1] : 1;
  if (s->n != 1 && (int64_t)s->n != F)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "offset/scale have %zu entries for %lld features", s->n,
                        (long long)F);
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  float *yd = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    size_t f = s->n == 1 ? 0 : (size_t)(i % F);
    yd[i] = (float)((oc_get(x->data, x->dtype, i) - (double)s->off[f]) * (double)s->sc[f]);
  }
  return OX_OK;
}

/* ---------------- ZipMap: row r -> map {label_j: X[r, j]} ---------------- */
typedef struct {
  char **ls;
  const int64_t *li;
  size_t n;
} zm_st;
static int zm_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  zm_st *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t ns, ni;
  bool ok;
  s->ls = mlc_strings(info, "classlabels_strings", &ns, &ok);
  s->li = mlc_ints(info->node, "classlabels_int64s", &ni);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if ((ns > 0) == (ni > 0))
    return oc_prep_fail(info, e,
                        "exactly one of classlabels_strings and classlabels_int64s must be set");
  s->n = ns ? ns : ni;
  *st = s;
  return OX_OK;
}
static int zm_run(ox_kctx *ctx, void *st) {
  zm_st *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || x->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a float tensor");
  int64_t N, C;
  if (mlc_input_2d(ctx, x, &N, &C)) return OX_ERUNTIME;
  if (C != (int64_t)s->n)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X has %lld columns for %zu labels", (long long)C, s->n);
  ox_err e = {0};
  ox_value *seq = ox_sequence_new(&e);
  if (!seq) return ox_kctx_fail(ctx, e.code, "%s", e.msg);
  int64_t n = (int64_t)s->n;
  for (int64_t r = 0; r < N; r++) {
    ox_value *k = ox_tensor_new(s->ls ? OX_STRING : OX_INT64, &n, 1, &e);
    ox_value *v = k ? ox_tensor_new(OX_FLOAT, &n, 1, &e) : NULL;
    ox_value *m = NULL;
    if (v) {
      for (size_t j = 0; j < s->n && !e.code; j++) {
        if (s->ls) {
          char *c = malloc(strlen(s->ls[j]) + 1);
          if (!c) {
            ox_err_set(&e, OX_ENOMEM, "out of memory");
            break;
          }
          strcpy(c, s->ls[j]);
          ((char **)k->data)[j] = c;
        } else {
          ((int64_t *)k->data)[j] = s->li[j];
        }
        ((float *)v->data)[j] = ((const float *)x->data)[r * C + (int64_t)j];
      }
      if (!e.code) {
        m = ox_map_new(k, v, &e);
        k = v = NULL;
      }
    }
    ox_value_unref(k);
    ox_value_unref(v);
    /* ox_sequence_push takes the reference (and drops it on failure) */
    if (!m || ox_sequence_push(seq, m, &e)) {
      ox_value_unref(seq);
      return ox_kctx_fail(ctx, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
    }
  }
  return ox_kctx_set_output(ctx, 0, seq);
}

const ox_kernel_def ox_ops_ml[] = {
    {ML_DOMAIN, "ArrayFeatureExtractor", 1, 1000, NULL, afe_run, NULL},
    {ML_DOMAIN, "Binarizer", 1, 1000, bin_prepare, bin_run, NULL},
    {ML_DOMAIN, "CastMap", 1, 1000, castmap_prepare, castmap_run, NULL},
    {ML_DOMAIN, "CategoryMapper", 1, 1000, catmap_prepare, catmap_run, NULL},
    {ML_DOMAIN, "DictVectorizer", 1, 1000, dv_prepare, dv_run, NULL},
    {ML_DOMAIN, "FeatureVectorizer", 1, 1000, fv_prepare, fv_run, NULL},
    {ML_DOMAIN, "Imputer", 1, 1000, imp_prepare, imp_run, NULL},
    {ML_DOMAIN, "LabelEncoder", 1, 1, le_prepare, le_run, NULL},
    {ML_DOMAIN, "LabelEncoder", 2, 3, le_prepare, le_run, NULL},
    {ML_DOMAIN, "LabelEncoder", 4, 1000, le_prepare, le_run, NULL},
    {ML_DOMAIN, "Normalizer", 1, 1000, norm_prepare, norm_run, NULL},
    {ML_DOMAIN, "OneHotEncoder", 1, 1000, ohe_prepare, ohe_run, NULL},
    {ML_DOMAIN, "Scaler", 1, 1000, sc_prepare, sc_run, NULL},
    {ML_DOMAIN, "ZipMap", 1, 1000, zm_prepare, zm_run, NULL},
    {0},
};
