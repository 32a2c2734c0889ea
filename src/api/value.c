/* value.c - the public values (include/onnxc.h "values"): tensors, string
 * tensors, sequences, maps, optionals. An onnxc_value is the runtime's
 * reference-counted ox_value; values built from other values reference
 * them, so the caller keeps and frees its own. */
#include <stdlib.h>
#include <string.h>

#include "../runtime/session.h"
#include "onnxc.h"

static const ox_value *V(const onnxc_value *v) { return (const ox_value *)v; }
static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

onnxc_type_kind onnxc_value_kind(const onnxc_value *v) {
  if (!v) return ONNXC_TYPE_UNKNOWN;
  switch (V(v)->kind) {
    case OX_VAL_TENSOR: return ONNXC_TYPE_TENSOR;
    case OX_VAL_SEQUENCE: return ONNXC_TYPE_SEQUENCE;
    case OX_VAL_MAP: return ONNXC_TYPE_MAP;
    case OX_VAL_OPTIONAL: return ONNXC_TYPE_OPTIONAL;
    case OX_VAL_SPARSE: return ONNXC_TYPE_SPARSE_TENSOR;
  }
  return ONNXC_TYPE_UNKNOWN;
}

/* ------------------------------------------------------------ tensors */

static bool dims_ok(const int64_t *dims, size_t rank, onnxc_error *err) {
  if (rank && !dims) return ox_err_set(E(err), OX_EINVAL, "dims is NULL for rank %zu", rank), false;
  if (rank > 64) return ox_err_set(E(err), OX_EINVAL, "rank %zu is too large", rank), false;
  for (size_t i = 0; i < rank; i++)
    if (dims[i] < 0)
      return ox_err_set(E(err), OX_EINVAL, "dim %zu is negative (%lld)", i, (long long)dims[i]),
             false;
  return true;
}

static bool dtype_ok(int32_t dtype, onnxc_error *err) {
  if (ox_value_elem_size(dtype) == 0)
    return ox_err_set(E(err), OX_EINVAL, "unknown element type %d", (int)dtype), false;
  return true;
}

onnxc_value *onnxc_tensor_create(int32_t dtype, const int64_t *dims, size_t rank,
                                 onnxc_error *err) {
  if (!dtype_ok(dtype, err) || !dims_ok(dims, rank, err)) return NULL;
  return (onnxc_value *)ox_tensor_new(dtype, dims, rank, E(err));
}

onnxc_value *onnxc_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank, void *data,
                               onnxc_error *err) {
  if (!dtype_ok(dtype, err) || !dims_ok(dims, rank, err)) return NULL;
  if (dtype == OX_STRING) {
    ox_err_set(E(err), OX_EINVAL, "string tensors cannot wrap memory: use onnxc_tensor_create_strings");
    return NULL;
  }
  int64_t numel;
  if (!data && ox_numel(dims, rank, &numel) && numel > 0) {
    ox_err_set(E(err), OX_EINVAL, "data is NULL for %lld elements", (long long)numel);
    return NULL;
  }
  return (onnxc_value *)ox_tensor_wrap(dtype, dims, rank, data, E(err));
}

onnxc_value *onnxc_tensor_create_strings(const int64_t *dims, size_t rank,
                                         const char *const *strs, const size_t *lens,
                                         onnxc_error *err) {
  if (!dims_ok(dims, rank, err)) return NULL;
  ox_value *v = ox_tensor_new(OX_STRING, dims, rank, E(err));
  if (!v) return NULL;
  if (v->numel && !strs) {
    ox_value_unref(v);
    ox_err_set(E(err), OX_EINVAL, "strs is NULL for %lld strings", (long long)v->numel);
    return NULL;
  }
  char **d = v->data;
  for (int64_t i = 0; i < v->numel; i++) {
    const char *s = strs[i] ? strs[i] : "";
    size_t n = lens ? lens[i] : strlen(s);
    if (lens && memchr(s, 0, n)) {
      ox_value_unref(v);
      ox_err_set(E(err), OX_EINVAL, "string %lld contains a NUL byte", (long long)i);
      return NULL;
    }
    d[i] = malloc(n + 1);
    if (!d[i]) {
      ox_value_unref(v);
      ox_err_set(E(err), OX_ENOMEM, "out of memory");
      return NULL;
    }
    memcpy(d[i], s, n);
    d[i][n] = 0;
  }
  return (onnxc_value *)v;
}

static bool is_tensor(const onnxc_value *v) { return v && V(v)->kind == OX_VAL_TENSOR; }

void *onnxc_tensor_data(onnxc_value *v) {
  return is_tensor(v) && V(v)->dtype != OX_STRING ? ((ox_value *)v)->data : NULL;
}

const void *onnxc_tensor_data_const(const onnxc_value *v) {
  return is_tensor(v) && V(v)->dtype != OX_STRING ? V(v)->data : NULL;
}

int32_t onnxc_tensor_dtype(const onnxc_value *v) { return is_tensor(v) ? V(v)->dtype : 0; }
size_t onnxc_tensor_rank(const onnxc_value *v) { return is_tensor(v) ? V(v)->rank : 0; }
const int64_t *onnxc_tensor_dims(const onnxc_value *v) { return is_tensor(v) ? V(v)->dims : NULL; }
int64_t onnxc_tensor_numel(const onnxc_value *v) { return is_tensor(v) ? V(v)->numel : 0; }
size_t onnxc_tensor_nbytes(const onnxc_value *v) {
  return is_tensor(v) && V(v)->dtype != OX_STRING ? V(v)->nbytes : 0;
}

const char *onnxc_tensor_string(const onnxc_value *v, size_t i, size_t *len) {
  if (!is_tensor(v) || V(v)->dtype != OX_STRING || i >= (size_t)V(v)->numel) return NULL;
  const char *s = ((char *const *)V(v)->data)[i];
  if (!s) s = "";
  if (len) *len = strlen(s);
  return s;
}

/* ------------------------------------------------------------ sequences, maps, optionals */

/* The element type that sequence items and map values share: the kind
 * plus, for tensors, the element type. */
static bool same_kind(const ox_value *a, const ox_value *b) {
  return a->kind == b->kind && (a->kind != OX_VAL_TENSOR || a->dtype == b->dtype);
}

onnxc_value *onnxc_sequence_create(const onnxc_value *const *items, size_t n, onnxc_error *err) {
  if (n && !items) {
    ox_err_set(E(err), OX_EINVAL, "items is NULL for %zu items", n);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!items[i]) {
      ox_err_set(E(err), OX_EINVAL, "item %zu is NULL", i);
      return NULL;
    }
    if (!same_kind(V(items[0]), V(items[i]))) {
      ox_err_set(E(err), OX_EINVAL, "item %zu differs in type from item 0", i);
      return NULL;
    }
  }
  ox_value *s = ox_sequence_new(E(err));
  for (size_t i = 0; s && i < n; i++)
    if (ox_sequence_push(s, ox_value_ref((ox_value *)items[i]), E(err))) {
      ox_value_unref(s);
      s = NULL;
    }
  return (onnxc_value *)s;
}

size_t onnxc_sequence_length(const onnxc_value *v) {
  return v && V(v)->kind == OX_VAL_SEQUENCE ? V(v)->n_items : 0;
}

const onnxc_value *onnxc_sequence_at(const onnxc_value *v, size_t i) {
  if (!v || V(v)->kind != OX_VAL_SEQUENCE || i >= V(v)->n_items) return NULL;
  return (const onnxc_value *)V(v)->items[i];
}

onnxc_value *onnxc_map_create(const onnxc_value *keys, const onnxc_value *values,
                              onnxc_error *err) {
  const ox_value *k = V(keys), *x = V(values);
  if (!k || !x || k->kind != OX_VAL_TENSOR || k->rank != 1) {
    ox_err_set(E(err), OX_EINVAL, "map keys must be a 1-D tensor");
    return NULL;
  }
  switch (k->dtype) {
    case OX_STRING: case OX_INT64: case OX_INT32: case OX_INT16: case OX_INT8:
    case OX_UINT64: case OX_UINT32: case OX_UINT16: case OX_UINT8: break;
    default:
      ox_err_set(E(err), OX_EINVAL, "map keys must be integers or strings, not %s",
                 onnxc_dtype_name(k->dtype));
      return NULL;
  }
  int64_t n_vals = x->kind == OX_VAL_TENSOR && x->rank == 1   ? x->numel
                   : x->kind == OX_VAL_SEQUENCE ? (int64_t)x->n_items
                                                : -1;
  if (n_vals < 0) {
    ox_err_set(E(err), OX_EINVAL, "map values must be a 1-D tensor or a sequence");
    return NULL;
  }
  if (n_vals != k->numel) {
    ox_err_set(E(err), OX_EINVAL, "%lld keys but %lld values", (long long)k->numel,
               (long long)n_vals);
    return NULL;
  }
  return (onnxc_value *)ox_map_new(ox_value_ref((ox_value *)k), ox_value_ref((ox_value *)x),
                                   E(err));
}

const onnxc_value *onnxc_map_keys(const onnxc_value *v) {
  return v && V(v)->kind == OX_VAL_MAP ? (const onnxc_value *)V(v)->keys : NULL;
}

const onnxc_value *onnxc_map_values(const onnxc_value *v) {
  return v && V(v)->kind == OX_VAL_MAP ? (const onnxc_value *)V(v)->vals : NULL;
}

onnxc_value *onnxc_optional_create(const onnxc_value *contained, onnxc_error *err) {
  return (onnxc_value *)ox_optional_new(ox_value_ref((ox_value *)contained), E(err));
}

int onnxc_optional_has_value(const onnxc_value *v) {
  return v && V(v)->kind == OX_VAL_OPTIONAL && V(v)->elem != NULL;
}

const onnxc_value *onnxc_optional_value(const onnxc_value *v) {
  return v && V(v)->kind == OX_VAL_OPTIONAL ? (const onnxc_value *)V(v)->elem : NULL;
}

void onnxc_value_free(onnxc_value *v) { ox_value_unref((ox_value *)v); }

int onnxc_value_compare(const onnxc_value *expected, const onnxc_value *actual, double rtol,
                        double atol, char *why, size_t why_size) {
  char scratch[1];
  if (!why || !why_size) { /* the runtime's comparison always writes a reason */
    why = scratch;
    why_size = sizeof scratch;
  }
  why[0] = 0;
  return ox_value_compare(V(expected), V(actual), rtol, atol, why, why_size);
}
