/* ir.c - data-type table, lookups and builders of the in-memory model. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* name, upper, bits, float, int, signed, complex */
static const ox_dtype_info dtypes[OX_DTYPE_COUNT] = {
    [OX_UNDEFINED] = {"undefined", "UNDEFINED", 0, false, false, false, false},
    [OX_FLOAT] = {"float", "FLOAT", 32, true, false, true, false},
    [OX_UINT8] = {"uint8", "UINT8", 8, false, true, false, false},
    [OX_INT8] = {"int8", "INT8", 8, false, true, true, false},
    [OX_UINT16] = {"uint16", "UINT16", 16, false, true, false, false},
    [OX_INT16] = {"int16", "INT16", 16, false, true, true, false},
    [OX_INT32] = {"int32", "INT32", 32, false, true, true, false},
    [OX_INT64] = {"int64", "INT64", 64, false, true, true, false},
    [OX_STRING] = {"string", "STRING", 0, false, false, false, false},
    [OX_BOOL] = {"bool", "BOOL", 8, false, false, false, false},
    [OX_FLOAT16] = {"float16", "FLOAT16", 16, true, false, true, false},
    [OX_DOUBLE] = {"double", "DOUBLE", 64, true, false, true, false},
    [OX_UINT32] = {"uint32", "UINT32", 32, false, true, false, false},
    [OX_UINT64] = {"uint64", "UINT64", 64, false, true, false, false},
    [OX_COMPLEX64] = {"complex64", "COMPLEX64", 64, false, false, true, true},
    [OX_COMPLEX128] = {"complex128", "COMPLEX128", 128, false, false, true, true},
    [OX_BFLOAT16] = {"bfloat16", "BFLOAT16", 16, true, false, true, false},
    [OX_FLOAT8E4M3FN] = {"float8e4m3fn", "FLOAT8E4M3FN", 8, true, false, true, false},
    [OX_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", "FLOAT8E4M3FNUZ", 8, true, false, true, false},
    [OX_FLOAT8E5M2] = {"float8e5m2", "FLOAT8E5M2", 8, true, false, true, false},
    [OX_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", "FLOAT8E5M2FNUZ", 8, true, false, true, false},
    [OX_UINT4] = {"uint4", "UINT4", 4, false, true, false, false},
    [OX_INT4] = {"int4", "INT4", 4, false, true, true, false},
    [OX_FLOAT4E2M1] = {"float4e2m1", "FLOAT4E2M1", 4, true, false, true, false},
    [OX_FLOAT8E8M0] = {"float8e8m0", "FLOAT8E8M0", 8, true, false, false, false},
    [OX_UINT2] = {"uint2", "UINT2", 2, false, true, false, false},
    [OX_INT2] = {"int2", "INT2", 2, false, true, true, false},
};

const ox_dtype_info *ox_dtype_get(int32_t dt) {
  return dt >= 0 && dt < OX_DTYPE_COUNT ? &dtypes[dt] : NULL;
}

ox_dtype ox_dtype_from_name(const char *name) {
  for (int i = 1; i < OX_DTYPE_COUNT; i++)
    if (strcmp(dtypes[i].name, name) == 0) return (ox_dtype)i;
  return OX_UNDEFINED;
}

bool ox_dtype_nbytes(int32_t dt, int64_t n, size_t *bytes) {
  const ox_dtype_info *d = ox_dtype_get(dt);
  if (!d || d->bits == 0 || n < 0) return false;
  uint64_t bits;
  if (__builtin_mul_overflow((uint64_t)n, (uint64_t)d->bits, &bits)) return false;
  uint64_t b = bits / 8 + (bits % 8 != 0);
  if (b > SIZE_MAX) return false;
  *bytes = (size_t)b;
  return true;
}

bool ox_numel(const int64_t *dims, size_t rank, int64_t *n) {
  int64_t r = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0 || !ox_mul_i64(r, dims[i], &r)) return false;
  }
  *n = r;
  return true;
}

ox_model *ox_model_new(void) {
  ox_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->arena = ox_arena_new();
  if (m->arena) m->proto = ox_arena_alloc(m->arena, sizeof *m->proto);
  if (!m->proto) {
    ox_arena_free(m->arena);
    free(m);
    return NULL;
  }
  m->dir = ox_arena_strdup(m->arena, "");
  return m;
}

void ox_model_free(ox_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n_maps; i++) ox_file_map_close(&m->maps[i]);
  free(m->maps);
  free(m->owned);
  ox_arena_free(m->arena);
  free(m);
}

static const char *const attr_type_names[] = {
    "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
    "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};

const char *ox_attr_type_name(int32_t t) {
  return t >= 0 && t <= OX_ATTR_TYPE_PROTOS ? attr_type_names[t] : "UNDEFINED";
}

const ox_attr *ox_node_attr(const ox_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i].name && strcmp(n->attribute[i].name, name) == 0) return &n->attribute[i];
  return NULL;
}

int64_t ox_node_attr_int(const ox_node *n, const char *name, int64_t dflt) {
  const ox_attr *a = ox_node_attr(n, name);
  return a && (a->has_i || a->type == OX_ATTR_INT) ? a->i : dflt;
}

float ox_node_attr_float(const ox_node *n, const char *name, float dflt) {
  const ox_attr *a = ox_node_attr(n, name);
  return a && (a->has_f || a->type == OX_ATTR_FLOAT) ? a->f : dflt;
}

const char *ox_node_attr_str(const ox_node *n, const char *name, const char *dflt) {
  const ox_attr *a = ox_node_attr(n, name);
  /* attribute strings are bytes; the decoder NUL-terminates every bytes field */
  return a && a->s.data ? (const char *)a->s.data : dflt;
}

bool ox_is_default_domain(const char *domain) {
  return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

int64_t ox_opset_version(const ox_opset *imports, size_t n, const char *domain) {
  bool dflt = ox_is_default_domain(domain);
  for (size_t i = 0; i < n; i++) {
    const char *d = imports[i].domain;
    if (dflt ? ox_is_default_domain(d) : (d && strcmp(d, domain) == 0)) return imports[i].version;
  }
  return -1;
}

ox_node *ox_graph_add_node(ox_arena *a, ox_graph *g, const char *op_type, const char *domain,
                           const char *name) {
  ox_node *n = OX_VEC_PUSH(a, g->node, g->n_node);
  if (!n) return NULL;
  n->op_type = ox_arena_strdup(a, op_type);
  n->domain = domain ? ox_arena_strdup(a, domain) : NULL;
  n->name = name ? ox_arena_strdup(a, name) : NULL;
  if (!n->op_type || (domain && !n->domain) || (name && !n->name)) return NULL;
  return n;
}

static int push_str(ox_arena *a, char ***arr, size_t *n, const char *s) {
  char *c = ox_arena_strdup(a, s ? s : "");
  if (!c) return OX_ENOMEM;
  char **slot = OX_VEC_PUSH(a, *arr, *n);
  if (!slot) return OX_ENOMEM;
  *slot = c;
  return OX_OK;
}

int ox_node_add_input(ox_arena *a, ox_node *n, const char *name) {
  return push_str(a, &n->input, &n->n_input, name);
}

int ox_node_add_output(ox_arena *a, ox_node *n, const char *name) {
  return push_str(a, &n->output, &n->n_output, name);
}

ox_attr *ox_node_add_attr(ox_arena *a, ox_node *n, const char *name, ox_attr_type type) {
  ox_attr *at = OX_VEC_PUSH(a, n->attribute, n->n_attribute);
  if (!at) return NULL;
  at->name = ox_arena_strdup(a, name);
  at->type = type;
  at->has_type = true;
  return at->name ? at : NULL;
}

ox_value_info *ox_value_info_push(ox_arena *a, ox_value_info **arr, size_t *n, const char *name) {
  ox_value_info *v = OX_VEC_PUSH(a, *arr, *n);
  if (!v) return NULL;
  v->name = ox_arena_strdup(a, name ? name : "");
  return v->name ? v : NULL;
}

ox_type *ox_type_new_tensor(ox_arena *a, int32_t elem_type, const int64_t *dims, size_t rank) {
  ox_type *t = ox_arena_alloc(a, sizeof *t);
  if (!t) return NULL;
  t->kind = OX_TYPE_TENSOR;
  t->elem_type = elem_type;
  t->has_elem_type = true;
  t->shape = ox_arena_alloc(a, sizeof *t->shape);
  if (!t->shape) return NULL;
  for (size_t i = 0; i < rank; i++) {
    ox_dim *d = OX_VEC_PUSH(a, t->shape->dim, t->shape->n_dim);
    if (!d) return NULL;
    if (dims && dims[i] >= 0) {
      d->value = dims[i];
      d->has_value = true;
    }
  }
  return t;
}

ox_bytes ox_tensor_payload(const ox_tensor *t) {
  if (t->data_location == 1 && t->external.data) return t->external;
  if (t->raw_data.data) return t->raw_data;
  ox_bytes none = {NULL, 0};
  return none;
}
