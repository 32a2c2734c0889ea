/* value_data.c - values <-> onnx-data.proto messages (SequenceProto,
 * MapProto, OptionalProto), and value comparison for tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "value.h"

/* An integer element of es bytes at p, sign- or zero-extended. */
static long long int_at(const void *p, size_t es, bool sgn) {
  switch (es) {
    case 1:
      return sgn ? (long long)*(const int8_t *)p : (long long)*(const uint8_t *)p;
    case 2:
      return sgn ? (long long)*(const int16_t *)p : (long long)*(const uint16_t *)p;
    case 4:
      return sgn ? (long long)*(const int32_t *)p : (long long)*(const uint32_t *)p;
    default:
      return *(const long long *)p;
  }
}

static ox_value *sparse_from_proto(const ox_sparse_tensor *sp, ox_err *e) {
  ox_value *v = calloc(1, sizeof *v);
  if (!v) return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
  v->kind = OX_VAL_SPARSE;
  v->refcount = 1;
  v->dims = v->small_dims;
  if (sp->n_dims > 8) {
    ox_value_unref(v);
    return ox_err_set(e, OX_EUNSUPPORTED, "sparse tensor of rank > 8"), NULL;
  }
  v->rank = sp->n_dims;
  if (sp->n_dims) memcpy(v->small_dims, sp->dims, sp->n_dims * sizeof *sp->dims);
  if (sp->values) v->sp_values = ox_value_from_tensor_proto(sp->values, false, e);
  if (sp->indices) v->sp_indices = ox_value_from_tensor_proto(sp->indices, false, e);
  if (!v->sp_values || !v->sp_indices) {
    if (sp->values && sp->indices) {
      ox_value_unref(v);
      return NULL;
    }
    ox_value_unref(v);
    return ox_err_set(e, OX_EPARSE, "sparse tensor without values or indices"), NULL;
  }
  v->dtype = v->sp_values->dtype;
  ox_numel(v->dims, v->rank, &v->numel);
  return v;
}

ox_value *ox_value_from_sequence_data(const ox_sequence_data *s, ox_err *e) {
  ox_value *seq = ox_sequence_new(e);
  if (!seq) return NULL;
  size_t n = 0;
  ox_value *it = NULL;
#define ADD(expr)                                       \
  do {                                                  \
    it = (expr);                                        \
    if (!it || ox_sequence_push(seq, it, e)) goto fail; \
  } while (0)
  switch (s->elem_type) {
    case OX_DATA_TENSOR:
    case OX_DATA_UNDEFINED:
      for (n = 0; n < s->n_tensor_values; n++)
        ADD(ox_value_from_tensor_proto(&s->tensor_values[n], false, e));
      break;
    case OX_DATA_SPARSE_TENSOR:
      for (n = 0; n < s->n_sparse_tensor_values; n++)
        ADD(sparse_from_proto(&s->sparse_tensor_values[n], e));
      break;
    case OX_DATA_SEQUENCE:
      for (n = 0; n < s->n_sequence_values; n++)
        ADD(ox_value_from_sequence_data(&s->sequence_values[n], e));
      break;
    case OX_DATA_MAP:
      for (n = 0; n < s->n_map_values; n++) ADD(ox_value_from_map_data(&s->map_values[n], e));
      break;
    case OX_DATA_OPTIONAL:
      for (n = 0; n < s->n_optional_values; n++)
        ADD(ox_value_from_optional_data(&s->optional_values[n], e));
      break;
    default:
      ox_err_set(e, OX_EPARSE, "SequenceProto with unknown elem_type %d", (int)s->elem_type);
      goto fail;
  }
#undef ADD
  return seq;
fail:
  ox_value_unref(seq);
  return NULL;
}

ox_value *ox_value_from_map_data(const ox_map_data *m, ox_err *e) {
  ox_value *keys;
  if (m->key_type == OX_STRING) {
    int64_t n = (int64_t)m->n_string_keys;
    keys = ox_tensor_new(OX_STRING, &n, 1, e);
    if (!keys) return NULL;
    for (size_t i = 0; i < m->n_string_keys; i++) {
      char *c = malloc(m->string_keys[i].size + 1);
      if (!c) {
        ox_value_unref(keys);
        return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
      }
      if (m->string_keys[i].size) memcpy(c, m->string_keys[i].data, m->string_keys[i].size);
      c[m->string_keys[i].size] = 0;
      ((char **)keys->data)[i] = c;
    }
  } else {
    int64_t n = (int64_t)m->n_keys;
    int32_t kt = m->key_type ? m->key_type : OX_INT64;
    keys = ox_tensor_new(kt, &n, 1, e);
    if (!keys) return NULL;
    size_t es = ox_value_elem_size(kt);
    for (size_t i = 0; i < m->n_keys; i++) {
      int64_t k = m->keys[i];
      switch (es) {
        case 1:
          ((int8_t *)keys->data)[i] = (int8_t)k;
          break;
        case 2:
          ((int16_t *)keys->data)[i] = (int16_t)k;
          break;
        case 4:
          ((int32_t *)keys->data)[i] = (int32_t)k;
          break;
        default:
          ((int64_t *)keys->data)[i] = k;
          break;
      }
    }
  }
  ox_value *vals = NULL;
  if (m->values) {
    vals = ox_value_from_sequence_data(m->values, e);
    if (!vals) {
      ox_value_unref(keys);
      return NULL;
    }
  } else {
    vals = ox_sequence_new(e);
  }
  return ox_map_new(keys, vals, e);
}

ox_value *ox_value_from_optional_data(const ox_optional_data *o, ox_err *e) {
  ox_value *x = NULL;
  if (o->tensor_value)
    x = ox_value_from_tensor_proto(o->tensor_value, false, e);
  else if (o->sparse_tensor_value)
    x = sparse_from_proto(o->sparse_tensor_value, e);
  else if (o->sequence_value)
    x = ox_value_from_sequence_data(o->sequence_value, e);
  else if (o->map_value)
    x = ox_value_from_map_data(o->map_value, e);
  else if (o->optional_value)
    x = ox_value_from_optional_data(o->optional_value, e);
  else
    return ox_optional_new(NULL, e);
  if (!x) return NULL;
  return ox_optional_new(x, e);
}

/* ---------------------------------------------------------- to protos */

static int to_sparse(const ox_value *v, ox_arena *a, ox_sparse_tensor *out, ox_err *e) {
  out->values = ox_arena_alloc(a, sizeof *out->values);
  out->indices = ox_arena_alloc(a, sizeof *out->indices);
  if (!out->values || !out->indices) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (ox_value_to_tensor_proto(v->sp_values, a, out->values, e) ||
      ox_value_to_tensor_proto(v->sp_indices, a, out->indices, e))
    return e->code;
  out->n_dims = v->rank;
  out->dims = ox_arena_memdup(a, v->dims, (v->rank ? v->rank : 1) * sizeof *v->dims);
  return out->dims ? OX_OK : ox_err_set(e, OX_ENOMEM, "out of memory");
}

static int32_t data_kind(const ox_value *v) {
  switch (v->kind) {
    case OX_VAL_TENSOR:
      return OX_DATA_TENSOR;
    case OX_VAL_SPARSE:
      return OX_DATA_SPARSE_TENSOR;
    case OX_VAL_SEQUENCE:
      return OX_DATA_SEQUENCE;
    case OX_VAL_MAP:
      return OX_DATA_MAP;
    case OX_VAL_OPTIONAL:
      return OX_DATA_OPTIONAL;
  }
  return OX_DATA_UNDEFINED;
}

int ox_value_to_sequence_data(const ox_value *v, ox_arena *a, ox_sequence_data *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  if (v->kind != OX_VAL_SEQUENCE) return ox_err_set(e, OX_EINVAL, "not a sequence");
  int32_t k = v->n_items ? data_kind(v->items[0]) : OX_DATA_TENSOR;
  out->elem_type = k;
  out->has_elem_type = true;
  size_t n = v->n_items, cnt = n ? n : 1;
  for (size_t i = 0; i < n; i++)
    if (data_kind(v->items[i]) != k)
      return ox_err_set(e, OX_EINVAL, "sequence mixes values of different kinds");
  switch (k) {
    case OX_DATA_TENSOR:
      out->tensor_values = ox_arena_calloc(a, cnt, sizeof *out->tensor_values);
      if (!out->tensor_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        if (ox_value_to_tensor_proto(v->items[i], a, &out->tensor_values[i], e)) return e->code;
      out->n_tensor_values = n;
      break;
    case OX_DATA_SPARSE_TENSOR:
      out->sparse_tensor_values = ox_arena_calloc(a, cnt, sizeof *out->sparse_tensor_values);
      if (!out->sparse_tensor_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        if (to_sparse(v->items[i], a, &out->sparse_tensor_values[i], e)) return e->code;
      out->n_sparse_tensor_values = n;
      break;
    case OX_DATA_SEQUENCE:
      out->sequence_values = ox_arena_calloc(a, cnt, sizeof *out->sequence_values);
      if (!out->sequence_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        if (ox_value_to_sequence_data(v->items[i], a, &out->sequence_values[i], e)) return e->code;
      out->n_sequence_values = n;
      break;
    case OX_DATA_MAP:
      out->map_values = ox_arena_calloc(a, cnt, sizeof *out->map_values);
      if (!out->map_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        if (ox_value_to_map_data(v->items[i], a, &out->map_values[i], e)) return e->code;
      out->n_map_values = n;
      break;
    case OX_DATA_OPTIONAL:
      out->optional_values = ox_arena_calloc(a, cnt, sizeof *out->optional_values);
      if (!out->optional_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
      for (size_t i = 0; i < n; i++)
        if (ox_value_to_optional_data(v->items[i], a, &out->optional_values[i], e)) return e->code;
      out->n_optional_values = n;
      break;
  }
  return OX_OK;
}

int ox_value_to_map_data(const ox_value *v, ox_arena *a, ox_map_data *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  if (v->kind != OX_VAL_MAP || !v->keys) return ox_err_set(e, OX_EINVAL, "not a map");
  const ox_value *k = v->keys;
  size_t n = (size_t)k->numel;
  out->key_type = k->dtype;
  out->has_key_type = true;
  if (k->dtype == OX_STRING) {
    out->string_keys = ox_arena_calloc(a, n ? n : 1, sizeof *out->string_keys);
    if (!out->string_keys) return ox_err_set(e, OX_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
      const char *s = ((char *const *)k->data)[i];
      s = s ? s : "";
      out->string_keys[i].data = ox_arena_memdup(a, s, strlen(s) + 1);
      out->string_keys[i].size = strlen(s);
    }
    out->n_string_keys = n;
  } else {
    out->keys = ox_arena_calloc(a, n ? n : 1, sizeof *out->keys);
    if (!out->keys) return ox_err_set(e, OX_ENOMEM, "out of memory");
    size_t es = ox_value_elem_size(k->dtype);
    bool sgn = ox_dtype_get(k->dtype) && ox_dtype_get(k->dtype)->is_signed;
    for (size_t i = 0; i < n; i++) {
      out->keys[i] = int_at((const char *)k->data + i * es, es, sgn);
    }
    out->n_keys = n;
  }
  out->values = ox_arena_alloc(a, sizeof *out->values);
  if (!out->values) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (v->vals && v->vals->kind == OX_VAL_SEQUENCE)
    return ox_value_to_sequence_data(v->vals, a, out->values, e);
  if (v->vals && v->vals->kind == OX_VAL_TENSOR) {
    /* one scalar tensor per value */
    const ox_value *t = v->vals;
    size_t es = ox_value_elem_size(t->dtype);
    ox_sequence_data *s = out->values;
    s->elem_type = OX_DATA_TENSOR;
    s->has_elem_type = true;
    s->tensor_values = ox_arena_calloc(a, n ? n : 1, sizeof *s->tensor_values);
    if (!s->tensor_values) return ox_err_set(e, OX_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && (int64_t)i < t->numel; i++) {
      ox_value tmp = *t;
      tmp.rank = 0;
      tmp.dims = tmp.small_dims;
      tmp.numel = 1;
      tmp.nbytes = es;
      tmp.data = (char *)t->data + i * es;
      if (ox_value_to_tensor_proto(&tmp, a, &s->tensor_values[i], e)) return e->code;
    }
    s->n_tensor_values = n;
  }
  return OX_OK;
}

int ox_value_to_optional_data(const ox_value *v, ox_arena *a, ox_optional_data *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  const ox_value *x = v && v->kind == OX_VAL_OPTIONAL ? v->elem : v;
  if (!x) {
    out->elem_type = OX_DATA_UNDEFINED;
    out->has_elem_type = true;
    return OX_OK;
  }
  out->elem_type = data_kind(x);
  out->has_elem_type = true;
  switch (x->kind) {
    case OX_VAL_TENSOR:
      out->tensor_value = ox_arena_alloc(a, sizeof *out->tensor_value);
      return out->tensor_value ? ox_value_to_tensor_proto(x, a, out->tensor_value, e)
                               : ox_err_set(e, OX_ENOMEM, "out of memory");
    case OX_VAL_SPARSE:
      out->sparse_tensor_value = ox_arena_alloc(a, sizeof *out->sparse_tensor_value);
      return out->sparse_tensor_value ? to_sparse(x, a, out->sparse_tensor_value, e)
                                      : ox_err_set(e, OX_ENOMEM, "out of memory");
    case OX_VAL_SEQUENCE:
      out->sequence_value = ox_arena_alloc(a, sizeof *out->sequence_value);
      return out->sequence_value ? ox_value_to_sequence_data(x, a, out->sequence_value, e)
                                 : ox_err_set(e, OX_ENOMEM, "out of memory");
    case OX_VAL_MAP:
      out->map_value = ox_arena_alloc(a, sizeof *out->map_value);
      return out->map_value ? ox_value_to_map_data(x, a, out->map_value, e)
                            : ox_err_set(e, OX_ENOMEM, "out of memory");
    case OX_VAL_OPTIONAL:
      out->optional_value = ox_arena_alloc(a, sizeof *out->optional_value);
      return out->optional_value ? ox_value_to_optional_data(x, a, out->optional_value, e)
                                 : ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  return OX_OK;
}

/* ---------------------------------------------------------- comparison */

static double elem_as_double(const ox_value *v, int64_t i, bool *is_float) {
  const char *p = (const char *)v->data;
  *is_float = true;
  switch (v->dtype) {
    case OX_FLOAT:
      return ((const float *)p)[i];
    case OX_DOUBLE:
      return ((const double *)p)[i];
    case OX_FLOAT16:
      return ox_f16_to_f32(((const uint16_t *)p)[i]);
    case OX_BFLOAT16:
      return ox_bf16_to_f32(((const uint16_t *)p)[i]);
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
      return ox_f8_to_f32(((const uint8_t *)p)[i], v->dtype);
    case OX_FLOAT8E8M0:
      return ox_e8m0_to_f32(((const uint8_t *)p)[i]);
    case OX_FLOAT4E2M1:
      return ox_f4_to_f32(((const uint8_t *)p)[i]);
    default:
      *is_float = false;
      return 0;
  }
}

static bool close_enough(double want, double got, double rtol, double atol) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return want == got;
  return fabs(got - want) <= atol + rtol * fabs(want);
}

static int tensor_compare(const ox_value *want, const ox_value *got, double rtol, double atol,
                          char *why, size_t n) {
  char a[256], b[256];
  if (want->dtype != got->dtype || !ox_shape_equal(want->dims, want->rank, got->dims, got->rank)) {
    ox_value_describe(want, a, sizeof a);
    ox_value_describe(got, b, sizeof b);
    snprintf(why, n, "expected %s, got %s", a, b);
    return 1;
  }
  size_t es = ox_value_elem_size(want->dtype);
  for (int64_t i = 0; i < want->numel; i++) {
    bool fl;
    double w = elem_as_double(want, i, &fl), g;
    if (fl) {
      g = elem_as_double(got, i, &fl);
      if (!close_enough(w, g, rtol, atol)) {
        snprintf(why, n, "element %lld: expected %.9g, got %.9g", (long long)i, w, g);
        return 1;
      }
    } else if (want->dtype == OX_COMPLEX64 || want->dtype == OX_COMPLEX128) {
      for (int c = 0; c < 2; c++) {
        double x = want->dtype == OX_COMPLEX64 ? ((const float *)want->data)[2 * i + c]
                                               : ((const double *)want->data)[2 * i + c];
        double y = want->dtype == OX_COMPLEX64 ? ((const float *)got->data)[2 * i + c]
                                               : ((const double *)got->data)[2 * i + c];
        if (!close_enough(x, y, rtol, atol)) {
          snprintf(why, n, "element %lld (%s part): expected %.9g, got %.9g", (long long)i,
                   c ? "imaginary" : "real", x, y);
          return 1;
        }
      }
    } else if (want->dtype == OX_STRING) {
      const char *x = ((char *const *)want->data)[i], *y = ((char *const *)got->data)[i];
      if (strcmp(x ? x : "", y ? y : "") != 0) {
        snprintf(why, n, "element %lld: expected \"%.100s\", got \"%.100s\"", (long long)i,
                 x ? x : "", y ? y : "");
        return 1;
      }
    } else if (memcmp((const char *)want->data + (size_t)i * es,
                      (const char *)got->data + (size_t)i * es, es) != 0) {
      bool sgn = ox_dtype_get(want->dtype)->is_signed;
      long long x = int_at((const char *)want->data + (size_t)i * es, es, sgn);
      long long y = int_at((const char *)got->data + (size_t)i * es, es, sgn);
      snprintf(why, n, "element %lld: expected %lld, got %lld", (long long)i, x, y);
      return 1;
    }
  }
  return 0;
}

int ox_value_compare(const ox_value *want, const ox_value *got, double rtol, double atol, char *why,
                     size_t n) {
  char a[256], b[256];
  if (!want || !got) {
    if (!want && !got) return 0;
    ox_value_describe(want, a, sizeof a);
    ox_value_describe(got, b, sizeof b);
    snprintf(why, n, "expected %s, got %s", a, b);
    return 1;
  }
  /* an optional with a value compares equal to its plain value */
  if (want->kind == OX_VAL_OPTIONAL && got->kind != OX_VAL_OPTIONAL)
    return ox_value_compare(want->elem, got, rtol, atol, why, n);
  if (got->kind == OX_VAL_OPTIONAL && want->kind != OX_VAL_OPTIONAL)
    return ox_value_compare(want, got->elem, rtol, atol, why, n);
  if (want->kind != got->kind) {
    ox_value_describe(want, a, sizeof a);
    ox_value_describe(got, b, sizeof b);
    snprintf(why, n, "expected %s, got %s", a, b);
    return 1;
  }
  switch (want->kind) {
    case OX_VAL_TENSOR:
      return tensor_compare(want, got, rtol, atol, why, n);
    case OX_VAL_SEQUENCE:
      if (want->n_items != got->n_items) {
        snprintf(why, n, "expected a sequence of %zu, got %zu", want->n_items, got->n_items);
        return 1;
      }
      for (size_t i = 0; i < want->n_items; i++) {
        char sub[700];
        if (ox_value_compare(want->items[i], got->items[i], rtol, atol, sub, sizeof sub)) {
          snprintf(why, n, "sequence item %zu: %s", i, sub);
          return 1;
        }
      }
      return 0;
    case OX_VAL_OPTIONAL:
      return ox_value_compare(want->elem, got->elem, rtol, atol, why, n);
    case OX_VAL_MAP: {
      char sub[700];
      if (ox_value_compare(want->keys, got->keys, rtol, atol, sub, sizeof sub)) {
        snprintf(why, n, "map keys: %s", sub);
        return 1;
      }
      /* values: a sequence of scalars compares with a 1-D tensor */
      const ox_value *wv = want->vals, *gv = got->vals;
      if (wv && gv && wv->kind != gv->kind) {
        const ox_value *sq = wv->kind == OX_VAL_SEQUENCE ? wv : gv;
        const ox_value *t = wv->kind == OX_VAL_SEQUENCE ? gv : wv;
        if (t->kind != OX_VAL_TENSOR || (int64_t)sq->n_items != t->numel) {
          snprintf(why, n, "map values differ in kind or count");
          return 1;
        }
        size_t es = ox_value_elem_size(t->dtype);
        for (size_t i = 0; i < sq->n_items; i++) {
          ox_value tmp = *t;
          tmp.rank = 0;
          tmp.dims = tmp.small_dims;
          tmp.numel = 1;
          tmp.nbytes = es;
          tmp.data = (char *)t->data + i * es;
          const ox_value *x = sq->items[i];
          if (x->kind != OX_VAL_TENSOR || x->numel != 1 || x->dtype != t->dtype) {
            snprintf(why, n, "map value %zu differs in type", i);
            return 1;
          }
          ox_value x0 = *x;
          x0.rank = 0;
          if (ox_value_compare(wv == sq ? &x0 : &tmp, wv == sq ? &tmp : &x0, rtol, atol, sub,
                               sizeof sub)) {
            snprintf(why, n, "map value %zu: %s", i, sub);
            return 1;
          }
        }
        return 0;
      }
      if (ox_value_compare(wv, gv, rtol, atol, sub, sizeof sub)) {
        snprintf(why, n, "map values: %s", sub);
        return 1;
      }
      return 0;
    }
    case OX_VAL_SPARSE: {
      char sub[700];
      if (!ox_shape_equal(want->dims, want->rank, got->dims, got->rank)) {
        snprintf(why, n, "sparse tensor shapes differ");
        return 1;
      }
      if (ox_value_compare(want->sp_values, got->sp_values, rtol, atol, sub, sizeof sub) ||
          ox_value_compare(want->sp_indices, got->sp_indices, 0, 0, sub, sizeof sub)) {
        snprintf(why, n, "sparse tensor: %s", sub);
        return 1;
      }
      return 0;
    }
  }
  return 0;
}
