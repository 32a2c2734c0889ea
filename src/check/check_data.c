/* check_data.c - rules for tensors, external-data locations, sparse tensors,
 * value infos and types (notes §2.4, 2.5, 2.8, 2.9). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_impl.h"

/* ---------------------------------------------------------------- paths */

bool ox_check_normalize_path(const char *p, char *out, size_t cap) {
  /* components kept so far, as offsets into out */
  size_t starts[256];
  size_t n = 0, len = 0;
  bool abs = p[0] == '/';
  if (cap < 2) return false;
  if (abs) out[len++] = '/';
  const char *s = p;
  while (*s) {
    while (*s == '/') s++;
    if (!*s) break;
    const char *e = s;
    while (*e && *e != '/') e++;
    size_t k = (size_t)(e - s);
    if (k == 1 && s[0] == '.') {
      /* drop "." */
    } else if (k == 2 && s[0] == '.' && s[1] == '.' && n > 0 &&
               !(len - starts[n - 1] >= 2 && out[starts[n - 1]] == '.' &&
                 out[starts[n - 1] + 1] == '.' && len - starts[n - 1] == 2)) {
      /* ".." cancels the previous normal component */
      len = starts[--n];
      if (len > (abs ? 1u : 0u)) len--; /* the separator before it */
    } else if (k == 2 && s[0] == '.' && s[1] == '.' && abs && n == 0) {
      /* "/.." is "/" */
    } else {
      if (n == sizeof starts / sizeof starts[0]) return false;
      if (len > (abs ? 1u : 0u)) {
        if (len + 1 >= cap) return false;
        out[len++] = '/';
      }
      if (len + k >= cap) return false;
      starts[n++] = len;
      memcpy(out + len, s, k);
      len += k;
    }
    s = e;
  }
  if (len == 0) out[len++] = '.';
  out[len] = '\0';
  return true;
}

static void check_location(ox_ck *c, const char *tname, const char *loc) {
  if (!loc || !loc[0]) {
    ox_ck_fail(c, "external-path", "location of external tensor '%s' is empty", ox_ck_str(tname));
    return;
  }
  if (loc[0] == '/') {
    ox_ck_fail(c, "external-path",
               "location of external tensor '%s' must be a relative path, got the absolute "
               "path '%s'",
               ox_ck_str(tname), loc);
    return;
  }
  char norm[PATH_MAX];
  if (!ox_check_normalize_path(loc, norm, sizeof norm) || strstr(norm, "..")) {
    ox_ck_fail(c, "external-path",
               "external data of tensor '%s' must be a file inside the model folder, but '%s' "
               "points outside it",
               ox_ck_str(tname), loc);
    return;
  }
  const char *base = c->model_dir && c->model_dir[0] ? c->model_dir : ".";
  char full[PATH_MAX];
  int k = snprintf(full, sizeof full, "%s/%s", base, loc);
  if (k < 0 || (size_t)k >= sizeof full) {
    ox_ck_fail(c, "external-path", "location '%s' of tensor '%s' is too long", loc,
               ox_ck_str(tname));
    return;
  }
  struct stat st;
  if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode)) {
    ox_ck_fail(c, "external-path",
               "external data of tensor '%s' must be a file inside the model folder, but '%s' "
               "is a symbolic link",
               ox_ck_str(tname), loc);
    return;
  }
  if (loc[0] == '#') return; /* in-memory container marker */
  if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
    ox_ck_fail(c, "external-path",
               "external data of tensor '%s' must be a regular file, but '%s' does not exist or "
               "is not a regular file",
               ox_ck_str(tname), loc);
    return;
  }
  char cb[PATH_MAX], cf[PATH_MAX];
  if (realpath(base, cb) && realpath(full, cf)) {
    size_t nb = strlen(cb);
    if (strncmp(cf, cb, nb) != 0 || (cb[nb - 1] != '/' && cf[nb] != '/')) {
      ox_ck_fail(c, "external-path",
                 "external data of tensor '%s' ('%s') resolves outside the "
                 "model folder",
                 ox_ck_str(tname), loc);
      return;
    }
  }
  if (st.st_nlink > 1) {
    ox_ck_fail(c, "external-path",
               "external data file '%s' of tensor '%s' has multiple hard links (possible "
               "hard-link attack)",
               loc, ox_ck_str(tname));
  }
}

/* -------------------------------------------------------------- tensors */

enum { F_FLOAT, F_INT32, F_STRING, F_INT64, F_RAW, F_DOUBLE, F_UINT64, F_COUNT };
static const char *const field_names[F_COUNT] = {"float_data", "int32_data", "string_data",
                                                 "int64_data", "raw_data",   "double_data",
                                                 "uint64_data"};

/* Which typed field holds values of dt, and how many entries n elements take
 * (lenient = what the reference requires; exact = the spec's packing). */
static int typed_field(int32_t dt, int64_t n, int64_t *lenient, int64_t *exact) {
  *lenient = *exact = n;
  switch (dt) {
    case OX_FLOAT:
      return F_FLOAT;
    case OX_COMPLEX64:
      *lenient = *exact = 2 * n;
      return F_FLOAT;
    case OX_DOUBLE:
      return F_DOUBLE;
    case OX_COMPLEX128:
      *lenient = *exact = 2 * n;
      return F_DOUBLE;
    case OX_INT32:
    case OX_INT16:
    case OX_INT8:
    case OX_UINT16:
    case OX_UINT8:
    case OX_BOOL:
    case OX_FLOAT16:
    case OX_BFLOAT16:
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
    case OX_FLOAT8E8M0:
      return F_INT32;
    case OX_UINT4:
    case OX_INT4:
    case OX_FLOAT4E2M1:
      *lenient = (n + 7) / 8;
      *exact = (n + 1) / 2;
      return F_INT32;
    case OX_UINT2:
    case OX_INT2:
      *lenient = (n + 15) / 16;
      *exact = (n + 3) / 4;
      return F_INT32;
    case OX_INT64:
      return F_INT64;
    case OX_UINT32:
    case OX_UINT64:
      return F_UINT64;
    case OX_STRING:
      return F_STRING;
    default:
      return -1;
  }
}

void ox_ck_tensor(ox_ck *c, const ox_tensor *t) {
  const char *name = ox_ck_str(t->name);
  if (!t->has_data_type) {
    ox_ck_fail(c, "tensor-data-type", "tensor '%s': field 'data_type' is required but missing",
               name);
    return;
  }
  if (t->data_type == OX_UNDEFINED) {
    ox_ck_fail(c, "tensor-data-type", "tensor '%s': data_type UNDEFINED is not allowed", name);
    return;
  }
  size_t counts[F_COUNT] = {t->n_float_data,  t->n_int32_data,  t->n_string_data, t->n_int64_data,
                            t->raw_data.size, t->n_double_data, t->n_uint64_data};
  int nf = 0, which = -1;
  for (int i = 0; i < F_COUNT; i++)
    if (counts[i]) nf++, which = i;
  if (t->has_data_location && t->data_location == 1) {
    for (int i = 0; i < F_COUNT; i++)
      if (counts[i])
        ox_ck_fail(c, "tensor-external",
                   "tensor '%s' is stored externally and must not have data field '%s'", name,
                   field_names[i]);
    bool has_loc = false;
    for (size_t i = 0; i < t->n_external_data; i++) {
      const ox_str_pair *kv = &t->external_data[i];
      if (kv->key && strcmp(kv->key, "location") == 0) {
        has_loc = true;
        check_location(c, t->name, kv->value);
      }
    }
    if (!has_loc)
      ox_ck_fail(c, "tensor-external", "tensor '%s' is stored externally but has no location",
                 name);
    return;
  }
  int64_t nelem = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) {
      ox_ck_fail(c, "tensor-dims", "tensor '%s': negative dimension %lld", name,
                 (long long)t->dims[i]);
      return;
    }
  }
  for (size_t i = 0; i < t->n_dims; i++) {
    if (!ox_mul_i64(nelem, t->dims[i], &nelem)) {
      ox_ck_fail(c, "tensor-dims", "tensor '%s': the product of the dimensions overflows", name);
      return;
    }
  }
  if (c->strict && t->segment) {
    const ox_segment *sg = t->segment;
    if (!sg->has_begin || !sg->has_end || sg->begin < 0 || sg->begin > sg->end || sg->end > nelem)
      ox_ck_fail(c, "strict-segment",
                 "tensor '%s': segment [%lld, %lld) is not a range of its %lld elements", name,
                 (long long)sg->begin, (long long)sg->end, (long long)nelem);
  }
  if (nelem == 0) {
    if (nf != 0)
      ox_ck_fail(c, "tensor-payload", "tensor '%s' has 0 elements but contains data", name);
    return;
  }
  if (nf != 1) {
    ox_ck_fail(c, "tensor-payload",
               nf ? "tensor '%s' must have exactly one value field, has %d"
                  : "tensor '%s' must have exactly one value field, has none (%d)",
               name, nf);
    return;
  }
  const ox_dtype_info *di = ox_dtype_get(t->data_type);
  int64_t lenient = 0, exact = 0;
  int want = typed_field(t->data_type, nelem, &lenient, &exact);
  if (!di || want < 0) {
    ox_ck_fail(c, "tensor-data-type", "tensor '%s': unrecognized data_type %d", name,
               (int)t->data_type);
    return;
  }
  if (which == F_RAW) {
    if (t->data_type == OX_STRING) {
      ox_ck_fail(c, "tensor-payload", "tensor '%s': STRING data must not be stored in raw_data",
                 name);
      return;
    }
    size_t need = 0;
    if (!ox_dtype_nbytes(t->data_type, nelem, &need)) {
      ox_ck_fail(c, "tensor-payload",
                 "tensor '%s' has a shape too large to validate against its data type", name);
      return;
    }
    if (t->raw_data.size < need)
      ox_ck_fail(c, "tensor-payload",
                 "tensor '%s': raw_data size (%zu bytes) is too small for the declared shape and "
                 "type (%zu bytes required)",
                 name, t->raw_data.size, need);
    else if (c->strict && t->raw_data.size != need)
      ox_ck_fail(c, "strict-payload-size",
                 "tensor '%s': raw_data has %zu bytes, the shape and type need exactly %zu", name,
                 t->raw_data.size, need);
    return;
  }
  if (which != want) {
    ox_ck_fail(c, "tensor-payload",
               "tensor '%s': values of data_type %s must be stored in field '%s', not '%s'", name,
               di->upper, field_names[want], field_names[which]);
    return;
  }
  if ((int64_t)counts[which] < lenient)
    ox_ck_fail(c, "tensor-payload",
               "tensor '%s': %s size (%zu) is too small for the declared shape (%lld values "
               "required)",
               name, field_names[which], counts[which], (long long)lenient);
  else if (c->strict && (int64_t)counts[which] != exact)
    ox_ck_fail(c, "strict-payload-size", "tensor '%s': %s has %zu values, the shape needs %lld",
               name, field_names[which], counts[which], (long long)exact);
}

/* --------------------------------------------------------------- sparse */

/* Element k of an INT64 tensor held in int64_data or raw_data. */
static bool get_i64(const ox_tensor *t, int64_t k, int64_t *v) {
  if (t->n_int64_data) {
    if ((uint64_t)k >= t->n_int64_data) return false;
    *v = t->int64_data[k];
    return true;
  }
  if (t->raw_data.data && (uint64_t)k < t->raw_data.size / 8) {
    uint64_t u = 0;
    for (int b = 7; b >= 0; b--) u = (u << 8) | t->raw_data.data[(size_t)k * 8 + (size_t)b];
    *v = (int64_t)u;
    return true;
  }
  return false;
}

void ox_ck_sparse(ox_ck *c, const ox_sparse_tensor *s) {
  if (!s->values) {
    ox_ck_fail(c, "sparse-tensor", "sparse tensor: field 'values' is required but missing");
    return;
  }
  const char *name = ox_ck_str(s->values->name);
  size_t errs = c->n_errors;
  ox_ck_tensor(c, s->values);
  if (c->n_errors != errs) return;
  if (s->values->n_dims != 1) {
    ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s': values must have rank 1, have rank %zu",
               name, s->values->n_dims);
    return;
  }
  int64_t nnz = s->values->dims[0];
  if (s->n_dims == 0) {
    ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s' must have a dense rank > 0", name);
    return;
  }
  int64_t dense = 1;
  for (size_t i = 0; i < s->n_dims; i++) {
    if (s->dims[i] <= 0) {
      ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s': dimensions are not positive", name);
      return;
    }
    if (!ox_mul_i64(dense, s->dims[i], &dense)) dense = INT64_MAX;
  }
  const ox_tensor *ix = s->indices;
  if (!ix) {
    if (nnz != 0) ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s' has no index values", name);
    return;
  }
  errs = c->n_errors;
  ox_ck_tensor(c, ix);
  if (c->n_errors != errs) return;
  if (ix->data_type != OX_INT64) {
    ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s': indices must have type INT64", name);
    return;
  }
  if (ix->n_dims == 1) {
    if (ix->dims[0] != nnz) {
      ox_ck_fail(c, "sparse-tensor",
                 "sparse tensor '%s': indices have %lld values, but NNZ is %lld", name,
                 (long long)ix->dims[0], (long long)nnz);
      return;
    }
    int64_t prev = -1;
    for (int64_t i = 0; i < nnz; i++) {
      int64_t v;
      if (!get_i64(ix, i, &v)) return; /* payload already judged by check_tensor */
      if (v < 0 || v >= dense) {
        ox_ck_fail(c, "sparse-tensor",
                   "sparse tensor '%s': index value at position [%lld] out of range [0, %lld]",
                   name, (long long)i, (long long)(dense - 1));
        return;
      }
      if (v <= prev) {
        ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s': indices are not in sorted order", name);
        return;
      }
      prev = v;
    }
  } else if (ix->n_dims == 2) {
    if (ix->dims[0] != nnz) {
      ox_ck_fail(c, "sparse-tensor",
                 "sparse tensor '%s': first dimension of indices does not equal NNZ", name);
      return;
    }
    if (ix->dims[1] != (int64_t)s->n_dims) {
      ox_ck_fail(c, "sparse-tensor",
                 "sparse tensor '%s': second dimension of indices does not match the rank", name);
      return;
    }
    int64_t prev = -1;
    for (int64_t i = 0; i < nnz; i++) {
      int64_t lin = 0;
      for (size_t j = 0; j < s->n_dims; j++) {
        int64_t v;
        if (!get_i64(ix, i * (int64_t)s->n_dims + (int64_t)j, &v)) return;
        if (v < 0 || v >= s->dims[j]) {
          ox_ck_fail(c, "sparse-tensor",
                     "sparse tensor '%s': index value at position [%lld,%zu] out of range", name,
                     (long long)i, j);
          return;
        }
        lin = lin * s->dims[j] + v;
      }
      if (lin <= prev) {
        ox_ck_fail(c, "sparse-tensor",
                   "sparse tensor '%s': indices are not in lexicographic sorted order", name);
        return;
      }
      prev = lin;
    }
  } else {
    ox_ck_fail(c, "sparse-tensor", "sparse tensor '%s': indices must have rank 1 or 2, have %zu",
               name, ix->n_dims);
  }
}

/* ----------------------------------------------------------- data protos */

static void check_sequence(ox_ck *c, const ox_sequence_data *s, int depth);

static void check_map(ox_ck *c, const ox_map_data *m, int depth) {
  const char *name = ox_ck_str(m->name);
  if (!m->has_key_type || m->key_type == OX_UNDEFINED) {
    ox_ck_fail(c, "data-map", "map '%s': field 'key_type' is required and must not be UNDEFINED",
               name);
    return;
  }
  switch (m->key_type) {
    case OX_FLOAT:
    case OX_BOOL:
    case OX_FLOAT16:
    case OX_COMPLEX64:
    case OX_COMPLEX128:
      ox_ck_fail(c, "data-map", "map '%s': key_type %d is not an integer or string type", name,
                 (int)m->key_type);
      return;
    default:
      break;
  }
  if (m->n_keys && m->n_string_keys) {
    ox_ck_fail(c, "data-map", "map '%s' must not contain more than one keys field", name);
    return;
  }
  if (!m->values) {
    ox_ck_fail(c, "data-map", "map '%s': field 'values' is required but missing", name);
    return;
  }
  check_sequence(c, m->values, depth + 1);
  const ox_sequence_data *v = m->values;
  size_t nv = v->n_tensor_values + v->n_sparse_tensor_values + v->n_sequence_values +
              v->n_map_values + v->n_optional_values;
  size_t nk = m->n_keys + m->n_string_keys;
  if (nk != nv) ox_ck_fail(c, "data-map", "map '%s' has %zu keys but %zu values", name, nk, nv);
}

static void check_optional(ox_ck *c, const ox_optional_data *o, int depth);

static void check_sequence(ox_ck *c, const ox_sequence_data *s, int depth) {
  const char *name = ox_ck_str(s->name);
  if (depth > 64) {
    ox_ck_fail(c, "data-sequence", "sequence '%s' is nested too deeply", name);
    return;
  }
  if (!s->has_elem_type) {
    ox_ck_fail(c, "data-sequence", "sequence '%s': field 'elem_type' is required but missing",
               name);
    return;
  }
  switch (s->elem_type) {
    case OX_DATA_TENSOR:
      for (size_t i = 0; i < s->n_tensor_values; i++) ox_ck_tensor(c, &s->tensor_values[i]);
      break;
    case OX_DATA_SPARSE_TENSOR:
      for (size_t i = 0; i < s->n_sparse_tensor_values; i++)
        ox_ck_sparse(c, &s->sparse_tensor_values[i]);
      break;
    case OX_DATA_SEQUENCE:
      for (size_t i = 0; i < s->n_sequence_values; i++)
        check_sequence(c, &s->sequence_values[i], depth + 1);
      break;
    case OX_DATA_MAP:
      for (size_t i = 0; i < s->n_map_values; i++) check_map(c, &s->map_values[i], depth + 1);
      break;
    default:
      ox_ck_fail(c, "data-sequence", "sequence '%s': elem_type %d is not a valid element type",
                 name, (int)s->elem_type);
      break;
  }
}

static void check_optional(ox_ck *c, const ox_optional_data *o, int depth) {
  const char *name = ox_ck_str(o->name);
  if (!o->has_elem_type) {
    ox_ck_fail(c, "data-optional", "optional '%s': field 'elem_type' is required but missing",
               name);
    return;
  }
  switch (o->elem_type) {
    case OX_DATA_UNDEFINED:
      break; /* an empty optional */
    case OX_DATA_TENSOR:
      if (o->tensor_value) ox_ck_tensor(c, o->tensor_value);
      break;
    case OX_DATA_SPARSE_TENSOR:
      if (o->sparse_tensor_value) ox_ck_sparse(c, o->sparse_tensor_value);
      break;
    case OX_DATA_SEQUENCE:
      if (o->sequence_value) check_sequence(c, o->sequence_value, depth + 1);
      break;
    case OX_DATA_MAP:
      if (o->map_value) check_map(c, o->map_value, depth + 1);
      break;
    default:
      ox_ck_fail(c, "data-optional", "optional '%s': elem_type %d is not a valid element type",
                 name, (int)o->elem_type);
      break;
  }
}

int ox_check_data(int kind, const void *value, const char *base_dir, ox_buf *report,
                  size_t *n_errors, ox_err *e) {
  if (n_errors) *n_errors = 0;
  if (!value) return ox_err_set(e, OX_EINVAL, "check: no value");
  ox_ck c;
  memset(&c, 0, sizeof c);
  c.model_dir = base_dir ? base_dir : "";
  c.report = report;
  c.is_main_graph = true;
  switch (kind) {
    case OX_DATA_TENSOR:
      ox_ck_tensor(&c, value);
      break;
    case OX_DATA_SPARSE_TENSOR:
      ox_ck_sparse(&c, value);
      break;
    case OX_DATA_SEQUENCE:
      check_sequence(&c, value, 0);
      break;
    case OX_DATA_MAP:
      check_map(&c, value, 0);
      break;
    case OX_DATA_OPTIONAL:
      check_optional(&c, value, 0);
      break;
    default:
      return ox_err_set(e, OX_EINVAL, "check: unknown data kind %d", kind);
  }
  if (n_errors) *n_errors = c.n_errors;
  if (report && report->failed) return ox_err_set(e, OX_ENOMEM, "check: out of memory");
  if (c.n_errors) {
    if (e) *e = c.first;
    return OX_EMODEL;
  }
  return OX_OK;
}

/* ----------------------------------------------------------- value info */

void ox_ck_value_info(ox_ck *c, const ox_value_info *v) {
  if (!v->name || !v->name[0]) {
    ox_ck_fail(c, "value-info", "field 'name' of value_info is required to be non-empty");
    return;
  }
  if (!c->is_main_graph) return;
  const ox_type *t = v->type;
  if (!t) {
    ox_ck_fail(c, "value-info", "value '%s': field 'type' is required but missing", v->name);
    return;
  }
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (!t->has_elem_type)
        ox_ck_fail(c, "value-info",
                   "value '%s': field 'elem_type' of the type is required but "
                   "missing",
                   v->name);
      if (!t->shape)
        ox_ck_fail(c, "value-info", "value '%s': field 'shape' of the type is required but missing",
                   v->name);
      break;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      if (!t->elem)
        ox_ck_fail(c, "value-info",
                   "value '%s': field 'elem_type' of the type is required but "
                   "missing",
                   v->name);
      break;
    case OX_TYPE_MAP:
      if (!t->has_elem_type)
        ox_ck_fail(c, "value-info",
                   "value '%s': field 'key_type' of the map type is required but missing", v->name);
      if (!t->elem)
        ox_ck_fail(c, "value-info",
                   "value '%s': field 'value_type' of the map type is required but missing",
                   v->name);
      break;
    case OX_TYPE_OPAQUE:
      if (!t->opaque_name || !t->opaque_name[0])
        ox_ck_fail(c, "value-info", "value '%s': opaque type must have a non-empty name", v->name);
      break;
    default:
      ox_ck_fail(c, "value-info", "value '%s': unrecognized type value case %d", v->name,
                 (int)t->kind);
      break;
  }
}

/* ---------------------------------------------------------------- types */

static bool put(char *buf, size_t cap, size_t *len, const char *s) {
  size_t k = strlen(s);
  if (*len + k >= cap) return false;
  memcpy(buf + *len, s, k + 1);
  *len += k;
  return true;
}

static bool type_str(const ox_type *t, char *buf, size_t cap, size_t *len, bool bare_tensor) {
  if (!t) return false;
  const ox_dtype_info *di;
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (!t->has_elem_type || t->elem_type == 0 || !(di = ox_dtype_get(t->elem_type)))
        return false;
      if (bare_tensor && t->kind == OX_TYPE_TENSOR) return put(buf, cap, len, di->name);
      return put(buf, cap, len, t->kind == OX_TYPE_TENSOR ? "tensor(" : "sparse_tensor(") &&
             put(buf, cap, len, di->name) && put(buf, cap, len, ")");
    case OX_TYPE_SEQUENCE:
      return put(buf, cap, len, "seq(") && type_str(t->elem, buf, cap, len, false) &&
             put(buf, cap, len, ")");
    case OX_TYPE_OPTIONAL:
      return put(buf, cap, len, "optional(") && type_str(t->elem, buf, cap, len, false) &&
             put(buf, cap, len, ")");
    case OX_TYPE_MAP:
      /* the spec writes map value types bare: "map(int64, float)" */
      if (!t->has_elem_type || !(di = ox_dtype_get(t->elem_type)) || t->elem_type == 0)
        return false;
      return put(buf, cap, len, "map(") && put(buf, cap, len, di->name) &&
             put(buf, cap, len, ", ") && type_str(t->elem, buf, cap, len, true) &&
             put(buf, cap, len, ")");
    default:
      return false;
  }
}

bool ox_ck_type_str(const ox_type *t, char *buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  return type_str(t, buf, cap, &len, false);
}
