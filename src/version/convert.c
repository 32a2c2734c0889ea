/* convert.c - the opset conversion driver, the generic (schema-driven)
 * adapter and the helpers the op-specific adapters use. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "../infer/infer.h"
#include "version_impl.h"

/* ------------------------------------------------------------ errors */

int ox_vfail(ox_vctx *c, const ox_node *n, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ox_err_set(c->e, OX_EUNSUPPORTED, "opset %lld -> %lld: node '%s' (%s) in graph '%s': %s",
                    (long long)c->from, (long long)c->to, n && n->name ? n->name : "",
                    n && n->op_type ? n->op_type : "?", c->graph_name ? c->graph_name : "", msg);
}

int ox_v_oom(ox_vctx *c) { return ox_err_set(c->e, OX_ENOMEM, "opset conversion: out of memory"); }

/* ------------------------------------------------------------ types */

const ox_type *ox_v_type(const ox_vctx *c, const char *name) {
  uintptr_t v;
  if (!name || !*name || !ox_map_get(&c->types, name, &v)) return NULL;
  return (const ox_type *)v;
}

int64_t ox_v_rank(const ox_vctx *c, const char *name) {
  const ox_type *t = ox_v_type(c, name);
  if (!t || t->kind != OX_TYPE_TENSOR || !t->shape) return -1;
  return (int64_t)t->shape->n_dim;
}

int64_t ox_v_dim(const ox_vctx *c, const char *name, int64_t k) {
  const ox_type *t = ox_v_type(c, name);
  if (!t || t->kind != OX_TYPE_TENSOR || !t->shape) return -1;
  if (k < 0) k += (int64_t)t->shape->n_dim;
  if (k < 0 || k >= (int64_t)t->shape->n_dim) return -1;
  const ox_dim *d = &t->shape->dim[k];
  return d->has_value ? d->value : -1;
}

int32_t ox_v_elem(const ox_vctx *c, const char *name) {
  const ox_type *t = ox_v_type(c, name);
  if (!t || (t->kind != OX_TYPE_TENSOR && t->kind != OX_TYPE_SPARSE_TENSOR) || !t->has_elem_type)
    return 0;
  return t->elem_type;
}

/* "tensor(float)", "seq(tensor(int64))", ... as the schema tables spell
 * types; false if some part is unknown. */
static bool type_str(const ox_type *t, char *buf, size_t cap, int depth) {
  if (!t || depth > 8 || cap < 8) return false;
  const ox_dtype_info *di;
  char inner[160];
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      di = t->has_elem_type ? ox_dtype_get(t->elem_type) : NULL;
      if (!di || t->elem_type == OX_UNDEFINED) return false;
      return snprintf(buf, cap, "%s(%s)", t->kind == OX_TYPE_TENSOR ? "tensor" : "sparse_tensor",
                      di->name) < (int)cap;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      if (!type_str(t->elem, inner, sizeof inner, depth + 1)) return false;
      return snprintf(buf, cap, "%s(%s)", t->kind == OX_TYPE_SEQUENCE ? "seq" : "optional", inner) <
             (int)cap;
    case OX_TYPE_MAP:
      di = ox_dtype_get(t->elem_type);
      if (!di || !type_str(t->elem, inner, sizeof inner, depth + 1)) return false;
      return snprintf(buf, cap, "map(%s, %s)", di->name, inner) < (int)cap;
    default:
      return false;
  }
}

/* ------------------------------------------------------------ names, nodes */

const char *ox_v_fresh(ox_vctx *c, const char *base) {
  for (;;) {
    char *s = ox_arena_printf(c->a, "%s_v%lld_%zu", base && *base ? base : "t", (long long)c->to,
                              c->counter++);
    if (!s) return NULL;
    uintptr_t v;
    if (ox_map_get(&c->names, s, &v)) continue;
    if (ox_map_put(&c->names, s, 1)) return NULL;
    return s;
  }
}

static ox_node *add_to(ox_vctx *c, ox_node **arr, size_t *n, const char *op) {
  ox_node *nd = OX_VEC_PUSH(c->a, *arr, *n);
  if (!nd) return NULL;
  nd->op_type = ox_arena_strdup(c->a, op);
  return nd->op_type ? nd : NULL;
}

ox_node *ox_v_add_pre(ox_vctx *c, const char *op) { return add_to(c, &c->pre, &c->n_pre, op); }
ox_node *ox_v_add_post(ox_vctx *c, const char *op) { return add_to(c, &c->post, &c->n_post, op); }

static const char *const_node(ox_vctx *c, const char *base, ox_tensor *t) {
  const char *out = ox_v_fresh(c, base);
  ox_node *nd = out ? ox_v_add_pre(c, "Constant") : NULL;
  if (!nd || ox_node_add_output(c->a, nd, out)) return NULL;
  nd->name = ox_arena_strdup(c->a, out);
  ox_attr *at = ox_node_add_attr(c->a, nd, "value", OX_ATTR_TENSOR);
  if (!at || !nd->name) return NULL;
  t->name = ox_arena_strdup(c->a, out);
  at->t = t;
  return t->name ? out : NULL;
}

static ox_tensor *new_tensor(ox_vctx *c, int32_t dt, size_t n, int rank) {
  ox_tensor *t = ox_arena_calloc(c->a, 1, sizeof *t);
  if (!t) return NULL;
  t->data_type = dt;
  t->has_data_type = true;
  if (rank == 1) {
    t->dims = ox_arena_alloc(c->a, sizeof *t->dims);
    if (!t->dims) return NULL;
    t->dims[0] = (int64_t)n;
    t->n_dims = 1;
  }
  return t;
}

const char *ox_v_const_i64(ox_vctx *c, const char *base, const int64_t *v, size_t n, int rank) {
  ox_tensor *t = new_tensor(c, OX_INT64, n, rank);
  if (!t) return NULL;
  if (n) {
    t->int64_data = ox_arena_memdup(c->a, v, n * sizeof *v);
    if (!t->int64_data) return NULL;
  }
  t->n_int64_data = n;
  return const_node(c, base, t);
}

const char *ox_v_const_float(ox_vctx *c, const char *base, int32_t dt, const double *v, size_t n,
                             int rank) {
  ox_tensor *t = new_tensor(c, dt, n, rank);
  if (!t) return NULL;
  if (dt == OX_DOUBLE) {
    t->double_data = n ? ox_arena_memdup(c->a, v, n * sizeof *v) : NULL;
    t->n_double_data = n;
  } else if (dt == OX_FLOAT) {
    t->float_data = ox_arena_calloc(c->a, n ? n : 1, sizeof(float));
    if (!t->float_data) return NULL;
    for (size_t i = 0; i < n; i++) t->float_data[i] = (float)v[i];
    t->n_float_data = n;
  } else if (dt == OX_FLOAT16 || dt == OX_BFLOAT16) {
    t->int32_data = ox_arena_calloc(c->a, n ? n : 1, sizeof(int32_t));
    if (!t->int32_data) return NULL;
    for (size_t i = 0; i < n; i++)
      t->int32_data[i] =
          dt == OX_FLOAT16 ? ox_f32_to_f16((float)v[i]) : ox_f32_to_bf16((float)v[i]);
    t->n_int32_data = n;
  } else
    return NULL;
  return const_node(c, base, t);
}

/* ------------------------------------------------------------ constants */

static bool is_graph_input(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i].name && strcmp(g->input[i].name, name) == 0) return true;
  return false;
}

/* A Constant node's value as a tensor (value_int(s)/value_float(s) made
 * into one). */
static const ox_tensor *constant_value(ox_vctx *c, const ox_node *nd) {
  for (size_t i = 0; i < nd->n_attribute; i++) {
    const ox_attr *at = &nd->attribute[i];
    if (at->ref_attr_name) return NULL;
    if (!at->name) continue; /* a decoded attribute may lack its name: not a value */
    if (strcmp(at->name, "value") == 0) return at->t;
    ox_tensor *t = NULL;
    if (strcmp(at->name, "value_int") == 0 || strcmp(at->name, "value_ints") == 0) {
      bool one = at->name[9] == 0;
      size_t n = one ? 1 : at->n_ints;
      t = new_tensor(c, OX_INT64, n, one ? 0 : 1);
      if (!t) return NULL;
      t->int64_data = one ? ox_arena_memdup(c->a, &at->i, sizeof at->i)
                          : ox_arena_memdup(c->a, at->ints, n * sizeof *at->ints);
      t->n_int64_data = n;
      return t;
    }
    if (strcmp(at->name, "value_float") == 0 || strcmp(at->name, "value_floats") == 0) {
      bool one = at->name[11] == 0;
      size_t n = one ? 1 : at->n_floats;
      t = new_tensor(c, OX_FLOAT, n, one ? 0 : 1);
      if (!t) return NULL;
      t->float_data = one ? ox_arena_memdup(c->a, &at->f, sizeof at->f)
                          : ox_arena_memdup(c->a, at->floats, n * sizeof *at->floats);
      t->n_float_data = n;
      return t;
    }
  }
  return NULL;
}

const ox_tensor *ox_v_find_const(ox_vctx *c, const char *name) {
  if (!name || !*name) return NULL;
  /* Before IR 4 every initializer is also a graph input (the models of
   * that time use them as weights); from IR 4 on, an initializer that is
   * also an input is a default the caller may override. */
  const ox_model_proto *mp = c->m->proto;
  bool old_ir = mp->has_ir_version && mp->ir_version < 4;
  for (const ox_vscope *s = c->scope; s; s = s->up) {
    const ox_graph *g = s->g;
    for (size_t i = 0; i < g->n_initializer; i++)
      if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
        return !old_ir && is_graph_input(g, name) ? NULL : &g->initializer[i];
    for (size_t i = 0; i < g->n_node; i++) {
      const ox_node *nd = &g->node[i];
      for (size_t k = 0; k < nd->n_output; k++)
        if (strcmp(nd->output[k], name) == 0) {
          if (nd->op_type && strcmp(nd->op_type, "Constant") == 0 &&
              ox_is_default_domain(nd->domain))
            return constant_value(c, nd);
          return NULL;
        }
    }
    if (is_graph_input(g, name)) return NULL;
  }
  return NULL;
}

static bool tensor_count(const ox_tensor *t, size_t *n) {
  int64_t cnt;
  if (!ox_numel(t->dims, t->n_dims, &cnt)) return false;
  *n = (size_t)cnt;
  return true;
}

bool ox_v_read_i64(ox_vctx *c, const ox_tensor *t, int64_t **v, size_t *n) {
  size_t cnt;
  if (!tensor_count(t, &cnt)) return false;
  int64_t *out = ox_arena_calloc(c->a, cnt ? cnt : 1, sizeof *out);
  if (!out) return false;
  ox_bytes raw = ox_tensor_payload(t);
  if (t->data_type == OX_INT64) {
    if (raw.data) {
      if (raw.size != cnt * 8) return false;
      memcpy(out, raw.data, cnt * 8);
    } else {
      if (t->n_int64_data != cnt) return false;
      if (cnt) memcpy(out, t->int64_data, cnt * 8);
    }
  } else if (t->data_type == OX_INT32) {
    if (raw.data) {
      if (raw.size != cnt * 4) return false;
      for (size_t i = 0; i < cnt; i++) {
        int32_t x;
        memcpy(&x, raw.data + 4 * i, 4);
        out[i] = x;
      }
    } else {
      if (t->n_int32_data != cnt) return false;
      for (size_t i = 0; i < cnt; i++) out[i] = t->int32_data[i];
    }
  } else
    return false;
  *v = out;
  *n = cnt;
  return true;
}

bool ox_v_read_f64(ox_vctx *c, const ox_tensor *t, double **v, size_t *n) {
  size_t cnt;
  if (!tensor_count(t, &cnt)) return false;
  double *out = ox_arena_calloc(c->a, cnt ? cnt : 1, sizeof *out);
  if (!out) return false;
  ox_bytes raw = ox_tensor_payload(t);
  int32_t dt = t->data_type;
  size_t es = dt == OX_DOUBLE                         ? 8
              : dt == OX_FLOAT                        ? 4
              : dt == OX_FLOAT16 || dt == OX_BFLOAT16 ? 2
                                                      : 0;
  if (!es) {
    int64_t *iv;
    size_t in;
    if (!ox_v_read_i64(c, t, &iv, &in)) return false;
    for (size_t i = 0; i < in; i++) out[i] = (double)iv[i];
    *v = out;
    *n = in;
    return true;
  }
  if (raw.data) {
    if (raw.size != cnt * es) return false;
    for (size_t i = 0; i < cnt; i++) {
      const uint8_t *p = raw.data + es * i;
      if (es == 8) {
        memcpy(&out[i], p, 8);
      } else if (es == 4) {
        float f;
        memcpy(&f, p, 4);
        out[i] = f;
      } else {
        uint16_t h;
        memcpy(&h, p, 2);
        out[i] = dt == OX_FLOAT16 ? ox_f16_to_f32(h) : ox_bf16_to_f32(h);
      }
    }
  } else if (es == 8) {
    if (t->n_double_data != cnt) return false;
    for (size_t i = 0; i < cnt; i++) out[i] = t->double_data[i];
  } else if (es == 4) {
    if (t->n_float_data != cnt) return false;
    for (size_t i = 0; i < cnt; i++) out[i] = t->float_data[i];
  } else {
    if (t->n_int32_data != cnt) return false;
    for (size_t i = 0; i < cnt; i++) {
      uint16_t h = (uint16_t)t->int32_data[i];
      out[i] = dt == OX_FLOAT16 ? ox_f16_to_f32(h) : ox_bf16_to_f32(h);
    }
  }
  *v = out;
  *n = cnt;
  return true;
}

static const ox_tensor *input_const(ox_vctx *c, const ox_node *n, size_t k, const char *what) {
  if (!ox_v_has_input(n, k)) {
    ox_vfail(c, n, "input %zu (%s) is missing", k, what);
    return NULL;
  }
  const ox_tensor *t = ox_v_find_const(c, n->input[k]);
  if (t) (void)ox_map_put(&c->detached, n->input[k], 1); /* best effort: only for clean-up */
  if (!t)
    ox_vfail(c, n,
             "input '%s' (%s) must be a constant (an initializer or a Constant node) to "
             "become an attribute at opset %lld",
             n->input[k], what, (long long)c->to);
  return t;
}

int ox_v_input_i64(ox_vctx *c, const ox_node *n, size_t k, const char *what, int64_t **v,
                   size_t *cnt) {
  const ox_tensor *t = input_const(c, n, k, what);
  if (!t) return c->e->code;
  if (!ox_v_read_i64(c, t, v, cnt))
    return ox_vfail(c, n, "cannot read constant '%s' (%s) as integers", n->input[k], what);
  return OX_OK;
}

int ox_v_input_f64(ox_vctx *c, const ox_node *n, size_t k, const char *what, double **v,
                   size_t *cnt) {
  const ox_tensor *t = input_const(c, n, k, what);
  if (!t) return c->e->code;
  if (!ox_v_read_f64(c, t, v, cnt))
    return ox_vfail(c, n, "cannot read constant '%s' (%s) as numbers", n->input[k], what);
  return OX_OK;
}

/* ------------------------------------------------------------ node editing */

bool ox_v_has_input(const ox_node *n, size_t k) { return k < n->n_input && n->input[k][0]; }

int ox_v_set_input(ox_vctx *c, ox_node *n, size_t k, const char *name) {
  if (k < n->n_input) {
    n->input[k] = ox_arena_strdup(c->a, name);
    return n->input[k] ? OX_OK : ox_v_oom(c);
  }
  /* rebuild: the array may not have been made by OX_VEC_PUSH */
  char **arr = NULL;
  size_t cnt = 0;
  for (size_t i = 0; i <= k; i++) {
    char **slot = OX_VEC_PUSH(c->a, arr, cnt);
    if (!slot) return ox_v_oom(c);
    *slot = i < n->n_input ? n->input[i] : ox_arena_strdup(c->a, i == k ? name : "");
    if (!*slot) return ox_v_oom(c);
  }
  n->input = arr;
  n->n_input = cnt;
  return OX_OK;
}

void ox_v_trim_inputs(ox_node *n, size_t k) {
  if (n->n_input > k) n->n_input = k;
}

void ox_v_attr_del(ox_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (strcmp(n->attribute[i].name, name) == 0) {
      memmove(&n->attribute[i], &n->attribute[i + 1],
              (n->n_attribute - i - 1) * sizeof *n->attribute);
      n->n_attribute--;
      return;
    }
}

ox_attr *ox_v_attr_set(ox_vctx *c, ox_node *n, const char *name, ox_attr_type type) {
  ox_v_attr_del(n, name);
  ox_attr *arr = NULL;
  size_t cnt = 0;
  for (size_t i = 0; i <= n->n_attribute; i++) {
    ox_attr *slot = OX_VEC_PUSH(c->a, arr, cnt);
    if (!slot) return NULL;
    if (i < n->n_attribute) *slot = n->attribute[i];
  }
  ox_attr *at = &arr[cnt - 1];
  at->name = ox_arena_strdup(c->a, name);
  at->type = type;
  at->has_type = true;
  if (!at->name) return NULL;
  n->attribute = arr;
  n->n_attribute = cnt;
  return at;
}

int ox_v_attr_set_int(ox_vctx *c, ox_node *n, const char *name, int64_t v) {
  ox_attr *at = ox_v_attr_set(c, n, name, OX_ATTR_INT);
  if (!at) return ox_v_oom(c);
  at->i = v;
  at->has_i = true;
  return OX_OK;
}

int ox_v_attr_set_ints(ox_vctx *c, ox_node *n, const char *name, const int64_t *v, size_t k) {
  ox_attr *at = ox_v_attr_set(c, n, name, OX_ATTR_INTS);
  if (!at) return ox_v_oom(c);
  if (k && !(at->ints = ox_arena_memdup(c->a, v, k * sizeof *v))) return ox_v_oom(c);
  at->n_ints = k;
  return OX_OK;
}

int ox_v_attr_set_float(ox_vctx *c, ox_node *n, const char *name, float v) {
  ox_attr *at = ox_v_attr_set(c, n, name, OX_ATTR_FLOAT);
  if (!at) return ox_v_oom(c);
  at->f = v;
  at->has_f = true;
  return OX_OK;
}

int ox_v_attr_set_floats(ox_vctx *c, ox_node *n, const char *name, const double *v, size_t k) {
  ox_attr *at = ox_v_attr_set(c, n, name, OX_ATTR_FLOATS);
  if (!at) return ox_v_oom(c);
  at->floats = ox_arena_calloc(c->a, k ? k : 1, sizeof(float));
  if (!at->floats) return ox_v_oom(c);
  for (size_t i = 0; i < k; i++) at->floats[i] = (float)v[i];
  at->n_floats = k;
  return OX_OK;
}

int ox_v_attr_set_str(ox_vctx *c, ox_node *n, const char *name, const char *v) {
  ox_attr *at = ox_v_attr_set(c, n, name, OX_ATTR_STRING);
  if (!at) return ox_v_oom(c);
  size_t len = strlen(v);
  at->s.data = ox_arena_memdup(c->a, v, len + 1);
  at->s.size = len;
  return at->s.data ? OX_OK : ox_v_oom(c);
}

int ox_v_attr_plain(ox_vctx *c, const ox_node *n, const ox_attr *at) {
  if (at && at->ref_attr_name)
    return ox_vfail(c, n,
                    "attribute '%s' refers to the function attribute '%s' and cannot be "
                    "converted",
                    at->name, at->ref_attr_name);
  return OX_OK;
}

/* ------------------------------------------------------------ defaults */

/* Parses a schema default ("1", "1.0", "\"NOTSET\"", "[1, 1]", "[\"a\"]")
 * into a scratch attribute of type `type`. */
static bool parse_default(ox_vctx *c, const char *text, int32_t type, ox_attr *out) {
  memset(out, 0, sizeof *out);
  out->type = type;
  out->has_type = true;
  const char *p = text;
  char *end;
  switch (type) {
    case OX_ATTR_INT:
      out->i = strtoll(p, &end, 10);
      out->has_i = true;
      return end != p;
    case OX_ATTR_FLOAT:
      out->f = strtof(p, &end);
      out->has_f = true;
      return end != p;
    case OX_ATTR_STRING: {
      size_t len = strlen(p);
      if (len < 2 || p[0] != '"' || p[len - 1] != '"') return false;
      out->s.data = (const uint8_t *)ox_arena_strndup(c->a, p + 1, len - 2);
      out->s.size = len - 2;
      return out->s.data != NULL;
    }
    case OX_ATTR_INTS:
    case OX_ATTR_FLOATS:
    case OX_ATTR_STRINGS: {
      if (*p != '[') return false;
      p++;
      for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ']') return true;
        if (type == OX_ATTR_INTS) {
          int64_t *s = OX_VEC_PUSH(c->a, out->ints, out->n_ints);
          if (!s) return false;
          *s = strtoll(p, &end, 10);
        } else if (type == OX_ATTR_FLOATS) {
          float *s = OX_VEC_PUSH(c->a, out->floats, out->n_floats);
          if (!s) return false;
          *s = strtof(p, &end);
        } else {
          if (*p != '"') return false;
          const char *q = strchr(p + 1, '"');
          if (!q) return false;
          ox_bytes *s = OX_VEC_PUSH(c->a, out->strings, out->n_strings);
          if (!s) return false;
          s->data = (const uint8_t *)ox_arena_strndup(c->a, p + 1, (size_t)(q - p - 1));
          s->size = (size_t)(q - p - 1);
          end = (char *)q + 1;
        }
        if (end == p) return false;
        p = end;
      }
    }
    default:
      return false;
  }
}

static bool float_eq(float a, float b) {
  if (a == b) return true;
  return fabsf(a - b) <= 1e-5f * fmaxf(fabsf(a), fabsf(b));
}

static bool attr_value_eq(const ox_attr *x, const ox_attr *y) {
  if (x->type != y->type) return false;
  switch (x->type) {
    case OX_ATTR_INT:
      return x->i == y->i;
    case OX_ATTR_FLOAT:
      return float_eq(x->f, y->f);
    case OX_ATTR_STRING:
      return x->s.size == y->s.size && (!x->s.size || memcmp(x->s.data, y->s.data, x->s.size) == 0);
    case OX_ATTR_INTS:
      if (x->n_ints != y->n_ints) return false;
      for (size_t i = 0; i < x->n_ints; i++)
        if (x->ints[i] != y->ints[i]) return false;
      return true;
    case OX_ATTR_FLOATS:
      if (x->n_floats != y->n_floats) return false;
      for (size_t i = 0; i < x->n_floats; i++)
        if (!float_eq(x->floats[i], y->floats[i])) return false;
      return true;
    case OX_ATTR_STRINGS:
      if (x->n_strings != y->n_strings) return false;
      for (size_t i = 0; i < x->n_strings; i++)
        if (x->strings[i].size != y->strings[i].size ||
            (x->strings[i].size &&
             memcmp(x->strings[i].data, y->strings[i].data, x->strings[i].size) != 0))
          return false;
      return true;
    default:
      return false;
  }
}

/* ------------------------------------------------------------ generic adapter */

static const ox_formal *formal_at(const ox_formal *f, size_t nf, size_t k) {
  if (!nf) return NULL;
  if (k < nf) return &f[k];
  return f[nf - 1].option == OX_PARAM_VARIADIC ? &f[nf - 1] : NULL;
}

static bool type_allowed(const ox_schema *s, const ox_formal *f, const char *ts) {
  if (strchr(f->type_str, '(')) return strcmp(f->type_str, ts) == 0;
  const ox_type_constraint *tc = ox_schema_find_constraint(s, f->type_str);
  if (!tc) return true;
  for (size_t i = 0; i < tc->n_allowed; i++)
    if (strcmp(tc->allowed[i], ts) == 0) return true;
  return false;
}

static int check_types(ox_vctx *c, const ox_node *n, const ox_schema *s) {
  for (int pass = 0; pass < 2; pass++) {
    char **names = pass ? n->output : n->input;
    size_t cnt = pass ? n->n_output : n->n_input;
    for (size_t k = 0; k < cnt; k++) {
      const ox_formal *f =
          pass ? formal_at(s->outputs, s->n_outputs, k) : formal_at(s->inputs, s->n_inputs, k);
      char ts[200];
      if (!f || !names[k][0] || !type_str(ox_v_type(c, names[k]), ts, sizeof ts, 0)) continue;
      if (!type_allowed(s, f, ts))
        return ox_vfail(c, n, "%s '%s' has type %s, which %s-%d does not accept",
                        pass ? "output" : "input", names[k], ts, s->name, s->since_version);
    }
  }
  return OX_OK;
}

static bool is_unit_list(const ox_attr *at, const char *name) {
  if (!at->name || strcmp(at->name, name) != 0 || at->type != OX_ATTR_INTS || at->ref_attr_name)
    return false;
  for (size_t i = 0; i < at->n_ints; i++)
    if (at->ints[i] != 1) return false;
  return true;
}

/* Opset 11 allowed negative axes on most ops: going down to 10, a negative
 * `axis`/`axes` is made positive with the rank (of the first input; of the
 * output for Unsqueeze and OneHot), or refused when the rank is not known. */
static int positive_axes_11_10(ox_vctx *c, ox_node *n) {
  for (size_t i = 0; i < n->n_attribute; i++) {
    ox_attr *at = &n->attribute[i];
    bool one = at->type == OX_ATTR_INT && at->name && strcmp(at->name, "axis") == 0;
    bool many = at->type == OX_ATTR_INTS && at->name && strcmp(at->name, "axes") == 0;
    if (!one && !many) continue;
    bool neg = one ? at->i < 0 : false;
    for (size_t k = 0; many && k < at->n_ints; k++) neg |= at->ints[k] < 0;
    if (!neg) continue;
    if (ox_v_attr_plain(c, n, at)) return c->e->code;
    bool unsq = strcmp(n->op_type, "Unsqueeze") == 0 || strcmp(n->op_type, "OneHot") == 0;
    int64_t r = unsq ? ox_v_rank(c, n->output[0]) : n->n_input ? ox_v_rank(c, n->input[0]) : -1;
    if (r < 0)
      return ox_vfail(c, n,
                      "negative %s needs the rank of '%s', which is not known (opset 10 "
                      "takes non-negative axes)",
                      at->name,
                      unsq         ? n->output[0]
                      : n->n_input ? n->input[0]
                                   : "");
    if (one) {
      at->i += r;
    } else {
      int64_t *v = ox_arena_memdup(c->a, at->ints, at->n_ints * sizeof *at->ints);
      if (!v) return ox_v_oom(c);
      for (size_t k = 0; k < at->n_ints; k++)
        if (v[k] < 0) v[k] += r;
      at->ints = v;
    }
  }
  return OX_OK;
}

/* Makes a node that is valid for s_from valid for s_to where the schemas
 * tell how: attributes that disappear must hold their old default, defaults
 * that change are written out, optional inputs and outputs that disappear
 * must be absent; and the value types must be allowed by s_to. same_op is
 * false when an adapter renamed the op (then only s_to is checked). */
static int generic(ox_vctx *c, ox_node *n, const ox_schema *s_from, const ox_schema *s_to,
                   bool same_op) {
  bool up = c->to > c->from;
  if (!up && c->from == 11 && positive_axes_11_10(c, n)) return c->e->code;
  if (same_op) {
    for (size_t i = 0; i < n->n_attribute;) {
      const ox_attr *at = &n->attribute[i];
      const ox_attr_schema *as_to = ox_schema_find_attr(s_to, at->name);
      if (as_to) {
        if (at->type != as_to->type && !at->ref_attr_name)
          return ox_vfail(c, n, "attribute '%s' is %s at opset %lld", at->name,
                          ox_schema_attr_type_doc(as_to->type), (long long)c->to);
        i++;
        continue;
      }
      /* Legacy attributes without meaning for the result. */
      if (up && at->name &&
          (strcmp(at->name, "consumed_inputs") == 0 || strcmp(at->name, "is_test") == 0)) {
        ox_v_attr_del(n, at->name);
        continue;
      }
      if (is_unit_list(at, "dilations")) { /* no dilation, as before the attribute */
        ox_v_attr_del(n, at->name);
        continue;
      }
      const ox_attr_schema *as_from = ox_schema_find_attr(s_from, at->name);
      ox_attr dflt;
      if (as_from && as_from->default_text && !at->ref_attr_name &&
          parse_default(c, as_from->default_text, as_from->type, &dflt) &&
          attr_value_eq(at, &dflt)) {
        ox_v_attr_del(n, at->name);
        continue;
      }
      return ox_vfail(c, n, "attribute '%s' has no equivalent in %s-%d (opset %lld)%s", at->name,
                      s_to->name, s_to->since_version, (long long)c->to,
                      as_from && as_from->default_text ? " unless it holds its default" : "");
    }
    for (size_t i = 0; i < s_to->n_attrs; i++) {
      const ox_attr_schema *as_to = &s_to->attrs[i];
      if (ox_node_attr(n, as_to->name)) continue;
      const ox_attr_schema *as_from = ox_schema_find_attr(s_from, as_to->name);
      bool have_old = as_from && as_from->default_text;
      bool differs = !as_to->default_text || !have_old || as_from->type != as_to->type;
      if (have_old && !differs) {
        ox_attr a1, a2;
        differs = !parse_default(c, as_from->default_text, as_from->type, &a1) ||
                  !parse_default(c, as_to->default_text, as_to->type, &a2) ||
                  !attr_value_eq(&a1, &a2);
      }
      if (have_old && differs) {
        if (as_from->type != as_to->type)
          return ox_vfail(c, n, "attribute '%s' changes type at opset %lld", as_to->name,
                          (long long)c->to);
        ox_attr dv;
        if (!parse_default(c, as_from->default_text, as_from->type, &dv))
          return ox_vfail(c, n, "cannot read the default of attribute '%s'", as_to->name);
        ox_attr *at = ox_v_attr_set(c, n, as_to->name, (ox_attr_type)as_from->type);
        if (!at) return ox_v_oom(c);
        char *nm = at->name;
        *at = dv;
        at->name = nm;
      } else if (as_to->required && strcmp(as_to->name, "consumed_inputs") == 0) {
        /* legacy in-place hint of opset 1: nothing consumed */
        int64_t zeros[64] = {0};
        if (ox_v_attr_set_ints(c, n, as_to->name, zeros, n->n_input < 64 ? n->n_input : 64))
          return c->e->code;
      } else if (as_to->required)
        return ox_vfail(c, n, "%s-%d needs attribute '%s', which the node does not have",
                        s_to->name, s_to->since_version, as_to->name);
    }
  }
  while (n->n_input && !n->input[n->n_input - 1][0]) n->n_input--;
  while (n->n_output > 1 && !n->output[n->n_output - 1][0]) n->n_output--;
  if ((int64_t)n->n_input > s_to->max_inputs)
    return ox_vfail(c, n, "input %zu ('%s') has no equivalent in %s-%d (at most %d inputs)",
                    (size_t)s_to->max_inputs, n->input[s_to->max_inputs], s_to->name,
                    s_to->since_version, s_to->max_inputs);
  if ((int64_t)n->n_input < s_to->min_inputs)
    return ox_vfail(c, n, "%s-%d needs at least %d inputs, the node has %zu", s_to->name,
                    s_to->since_version, s_to->min_inputs, n->n_input);
  for (size_t k = 0; k < n->n_input && k < s_to->n_inputs; k++)
    if (!n->input[k][0] && s_to->inputs[k].option == OX_PARAM_SINGLE)
      return ox_vfail(c, n, "input %zu of %s-%d is not optional", k, s_to->name,
                      s_to->since_version);
  if ((int64_t)n->n_output > s_to->max_outputs)
    return ox_vfail(c, n, "output %zu ('%s') has no equivalent in %s-%d (at most %d outputs)",
                    (size_t)s_to->max_outputs, n->output[s_to->max_outputs], s_to->name,
                    s_to->since_version, s_to->max_outputs);
  if (check_types(c, n, s_to)) return c->e->code;
  if (s_to->deprecated)
    return ox_vfail(c, n, "%s is deprecated at opset %lld and no adapter replaces it", s_to->name,
                    (long long)c->to);
  return OX_OK;
}

/* ------------------------------------------------------------ driver */

static int step_graph(ox_vctx *c, ox_graph *g, const ox_vscope *up, const char *name);

static int step_node(ox_vctx *c, ox_node *n) {
  if (!ox_is_default_domain(n->domain) || !n->op_type) return OX_OK;
  bool up = c->to > c->from;
  const ox_schema *s_from = ox_schema_lookup("", n->op_type, c->from);
  const ox_schema *s_to = ox_schema_lookup("", n->op_type, c->to);
  if (!s_from) return OX_OK; /* unknown op: the checker reports it */
  /* does the op have a version exactly at the step's upper opset? */
  if (up ? !(s_to && s_to->since_version == c->to) : s_from->since_version != c->from) return OX_OK;
  /* adapters read attributes by name (found by fuzz_convert) */
  for (size_t k = 0; k < n->n_attribute; k++)
    if (!n->attribute[k].name || !n->attribute[k].name[0])
      return ox_vfail(c, n, "attribute %zu has no name", k);
  /* adapters rely on the node matching its own schema's arity */
  if ((int64_t)n->n_input < s_from->min_inputs || (int64_t)n->n_output < s_from->min_outputs ||
      (n->n_output && s_from->n_outputs && s_from->outputs[0].option == OX_PARAM_SINGLE &&
       !n->output[0][0]))
    return ox_vfail(c, n, "the node does not match %s-%d (%zu inputs, %zu outputs)", s_from->name,
                    s_from->since_version, n->n_input, n->n_output);
  for (size_t k = 0; k < n->n_input && k < s_from->n_inputs; k++)
    if (!n->input[k][0] && s_from->inputs[k].option == OX_PARAM_SINGLE)
      return ox_vfail(c, n, "input %zu of %s-%d is not optional", k, s_from->name,
                      s_from->since_version);
  ox_vadapter fn = ox_v_find_adapter(n->op_type, c->from, c->to);
  if (!up && !s_to && !fn)
    return ox_vfail(c, n, "%s does not exist before opset %lld", n->op_type, (long long)c->from);
  const char *op0 = n->op_type;
  if (fn && fn(c, n)) return c->e->code;
  bool same = strcmp(op0, n->op_type) == 0;
  if (!same) {
    s_to = ox_schema_lookup("", n->op_type, c->to);
    if (!s_to)
      return ox_vfail(c, n, "%s does not exist at opset %lld", n->op_type, (long long)c->to);
  }
  return generic(c, n, s_from, s_to, same);
}

static int push_node(ox_vctx *c, ox_node **arr, size_t *cnt, const ox_node *src) {
  ox_node *d = OX_VEC_PUSH(c->a, *arr, *cnt);
  if (!d) return ox_v_oom(c);
  *d = *src;
  return OX_OK;
}

static int step_nodes(ox_vctx *c, ox_node **nodes, size_t *n_nodes, const ox_vscope *sc) {
  ox_node *out = NULL;
  size_t n_out = 0;
  for (size_t i = 0; i < *n_nodes; i++) {
    ox_node *n = &(*nodes)[i];
    for (size_t k = 0; k < n->n_attribute; k++) {
      ox_attr *at = &n->attribute[k];
      char nm[300];
      snprintf(nm, sizeof nm, "%s/%s.%s", c->graph_name ? c->graph_name : "",
               n->name && *n->name ? n->name : n->op_type, at->name);
      if (at->g && step_graph(c, at->g, sc, nm)) return c->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (step_graph(c, &at->graphs[j], sc, nm)) return c->e->code;
    }
    c->pre = c->post = NULL;
    c->n_pre = c->n_post = 0;
    const ox_vscope *saved = c->scope;
    c->scope = sc;
    int rc = step_node(c, n);
    c->scope = saved;
    if (rc) return rc;
    for (size_t k = 0; k < c->n_pre; k++)
      if (push_node(c, &out, &n_out, &c->pre[k])) return c->e->code;
    if (push_node(c, &out, &n_out, n)) return c->e->code;
    for (size_t k = 0; k < c->n_post; k++)
      if (push_node(c, &out, &n_out, &c->post[k])) return c->e->code;
  }
  *nodes = out;
  *n_nodes = n_out;
  return OX_OK;
}

static int step_graph(ox_vctx *c, ox_graph *g, const ox_vscope *up, const char *name) {
  ox_vscope sc = {g, up};
  const char *saved = c->graph_name;
  c->graph_name = name ? name : g->name ? g->name : "";
  int rc = step_nodes(c, &g->node, &g->n_node, &sc);
  c->graph_name = saved;
  return rc;
}

/* ------------------------------------------------------------ set-up */

static int note_names_graph(ox_vctx *c, const ox_graph *g);

bool ox_v_is_used(const ox_vctx *c, const char *name) {
  uintptr_t v;
  return name && *name && ox_map_get(&c->used, name, &v);
}

static int note_node_names(ox_vctx *c, const ox_node *nodes, size_t cnt) {
  for (size_t i = 0; i < cnt; i++) {
    const ox_node *n = &nodes[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (ox_map_put(&c->names, n->input[k], 1) || ox_map_put(&c->used, n->input[k], 1))
        return ox_v_oom(c);
    for (size_t k = 0; k < n->n_output; k++)
      if (ox_map_put(&c->names, n->output[k], 1)) return ox_v_oom(c);
    if (n->name && ox_map_put(&c->names, n->name, 1)) return ox_v_oom(c);
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      if (at->g && note_names_graph(c, at->g)) return c->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (note_names_graph(c, &at->graphs[j])) return c->e->code;
    }
  }
  return OX_OK;
}

static int note_names_graph(ox_vctx *c, const ox_graph *g) {
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && ox_map_put(&c->used, g->output[i].name, 1)) return ox_v_oom(c);
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i].name && ox_map_put(&c->names, g->input[i].name, 1)) return ox_v_oom(c);
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && ox_map_put(&c->names, g->initializer[i].name, 1))
      return ox_v_oom(c);
  return note_node_names(c, g->node, g->n_node);
}

static void note_types_vi(ox_vctx *c, const ox_value_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uintptr_t old;
    if (v[i].name && v[i].type && !ox_map_get(&c->types, v[i].name, &old))
      (void)ox_map_put(&c->types, v[i].name, (uintptr_t)v[i].type);
  }
}

static void note_types_graph(ox_vctx *c, ox_arena *a, const ox_graph *g, int depth) {
  if (depth > 64) return;
  note_types_vi(c, g->input, g->n_input);
  note_types_vi(c, g->output, g->n_output);
  note_types_vi(c, g->value_info, g->n_value_info);
  for (size_t i = 0; i < g->n_initializer; i++) {
    const ox_tensor *t = &g->initializer[i];
    uintptr_t old;
    if (!t->name || ox_map_get(&c->types, t->name, &old)) continue;
    ox_type *ty = ox_type_new_tensor(a, t->data_type, t->dims, t->n_dims);
    if (ty) (void)ox_map_put(&c->types, t->name, (uintptr_t)ty);
  }
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i].n_attribute; k++) {
      const ox_attr *at = &g->node[i].attribute[k];
      if (at->g) note_types_graph(c, a, at->g, depth + 1);
      for (size_t j = 0; j < at->n_graphs; j++) note_types_graph(c, a, &at->graphs[j], depth + 1);
    }
}

/* Infers the value types of a copy of m (m itself is left as it is) and
 * keeps them in c->types. Failing inference leaves what is known. */
static ox_model *infer_types(ox_vctx *c) {
  ox_model *tmp = ox_model_new();
  if (!tmp) return NULL;
  ox_model_proto *p = ox_arena_alloc(tmp->arena, sizeof *p);
  if (!p) return tmp;
  *p = *c->m->proto;
  p->graph = ox_graph_clone(tmp->arena, c->m->proto->graph);
  p->training_info = NULL;
  p->n_training_info = 0;
  tmp->proto = p;
  if (!p->graph) return tmp;
  ox_err e = {0};
  ox_infer_opts o = {0};
  (void)ox_infer_model(tmp, &o, NULL, &e);
  note_types_graph(c, tmp->arena, p->graph, 0);
  return tmp;
}

static int convert_nodes(ox_vctx *c, ox_node **nodes, size_t *n_nodes, ox_graph *g, int64_t from,
                         int64_t target, const char *name) {
  ox_graph fake = {0};
  for (int64_t v = from; v != target;) {
    c->from = v;
    c->to = v < target ? v + 1 : v - 1;
    if (g) {
      if (step_graph(c, g, NULL, name)) return c->e->code;
    } else {
      fake.node = *nodes;
      fake.n_node = *n_nodes;
      ox_vscope sc = {&fake, NULL};
      c->graph_name = name;
      if (step_nodes(c, nodes, n_nodes, &sc)) return c->e->code;
    }
    v = c->to;
  }
  return OX_OK;
}

static int set_version(ox_vctx *c, ox_opset *imports, size_t n, int64_t target) {
  for (size_t i = 0; i < n; i++)
    if (ox_is_default_domain(imports[i].domain)) {
      imports[i].version = target;
      imports[i].has_version = true;
      return OX_OK;
    }
  (void)c;
  return OX_OK;
}

/* ------------------------------------------------------------ clean-up */

/* Constants whose values went into attributes are removed when nothing
 * reads them any more (Constant nodes, and initializers that are not graph
 * inputs). */
static int note_reads(ox_map *used, const ox_graph *g, int depth);

static int note_reads_nodes(ox_map *used, const ox_node *nodes, size_t cnt, int depth) {
  for (size_t i = 0; i < cnt; i++) {
    for (size_t k = 0; k < nodes[i].n_input; k++)
      if (ox_map_put(used, nodes[i].input[k], 1)) return OX_ENOMEM;
    for (size_t k = 0; k < nodes[i].n_attribute; k++) {
      const ox_attr *at = &nodes[i].attribute[k];
      if (at->g && note_reads(used, at->g, depth + 1)) return OX_ENOMEM;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (note_reads(used, &at->graphs[j], depth + 1)) return OX_ENOMEM;
    }
  }
  return OX_OK;
}

static int note_reads(ox_map *used, const ox_graph *g, int depth) {
  if (depth > 64) return OX_OK;
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && ox_map_put(used, g->output[i].name, 1)) return OX_ENOMEM;
  return note_reads_nodes(used, g->node, g->n_node, depth);
}

static bool dead(const ox_vctx *c, const ox_map *used, const char *name) {
  uintptr_t v;
  return name && ox_map_get(&c->detached, name, &v) && !ox_map_get(used, name, &v);
}

static void drop_dead_nodes(const ox_vctx *c, const ox_map *used, ox_node *nodes, size_t *cnt) {
  size_t keep = 0;
  for (size_t i = 0; i < *cnt; i++) {
    const ox_node *n = &nodes[i];
    bool drop = n->n_output == 1 && n->op_type && strcmp(n->op_type, "Constant") == 0 &&
                ox_is_default_domain(n->domain) && dead(c, used, n->output[0]);
    if (!drop) nodes[keep++] = nodes[i];
  }
  *cnt = keep;
}

static void drop_dead(const ox_vctx *c, const ox_map *used, ox_graph *g, int depth) {
  if (depth > 64) return;
  drop_dead_nodes(c, used, g->node, &g->n_node);
  size_t keep = 0;
  for (size_t i = 0; i < g->n_initializer; i++) {
    const char *nm = g->initializer[i].name;
    if (!(dead(c, used, nm) && !is_graph_input(g, nm))) g->initializer[keep++] = g->initializer[i];
  }
  g->n_initializer = keep;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i].n_attribute; k++) {
      ox_attr *at = &g->node[i].attribute[k];
      if (at->g) drop_dead(c, used, at->g, depth + 1);
      for (size_t j = 0; j < at->n_graphs; j++) drop_dead(c, used, &at->graphs[j], depth + 1);
    }
}

static int clean_up(ox_vctx *c) {
  if (!c->detached.count) return OX_OK;
  ox_model_proto *p = c->m->proto;
  ox_map used;
  ox_map_init(&used);
  int rc = note_reads(&used, p->graph, 0);
  for (size_t i = 0; !rc && i < p->n_training_info; i++) {
    const ox_training_info *ti = &p->training_info[i];
    if (ti->initialization) rc = note_reads(&used, ti->initialization, 0);
    if (!rc && ti->algorithm) rc = note_reads(&used, ti->algorithm, 0);
    for (size_t k = 0; !rc && k < ti->n_update_binding; k++)
      if (ox_map_put(&used, ti->update_binding[k].value, 1) ||
          ox_map_put(&used, ti->update_binding[k].key, 1))
        rc = OX_ENOMEM;
    for (size_t k = 0; !rc && k < ti->n_initialization_binding; k++)
      if (ox_map_put(&used, ti->initialization_binding[k].key, 1)) rc = OX_ENOMEM;
  }
  for (size_t i = 0; !rc && i < p->n_functions; i++) {
    const ox_function *f = &p->functions[i];
    rc = note_reads_nodes(&used, f->node, f->n_node, 0);
    for (size_t k = 0; !rc && k < f->n_output; k++)
      if (ox_map_put(&used, f->output[k], 1)) rc = OX_ENOMEM;
  }
  if (rc) {
    ox_map_free(&used);
    return ox_v_oom(c);
  }
  drop_dead(c, &used, p->graph, 0);
  for (size_t i = 0; i < p->n_functions; i++)
    drop_dead_nodes(c, &used, p->functions[i].node, &p->functions[i].n_node);
  ox_map_free(&used);
  return OX_OK;
}

int ox_convert_opset(ox_model *m, int64_t target, ox_err *e) {
  if (!m || !m->proto || !m->proto->graph)
    return ox_err_set(e, OX_EINVAL, "opset conversion: the model has no graph");
  ox_model_proto *p = m->proto;
  int64_t max = ox_schema_max_opset("");
  if (target < 1 || target > max)
    return ox_err_set(e, OX_EINVAL, "opset conversion: target opset %lld is outside 1..%lld",
                      (long long)target, (long long)max);
  int64_t from = ox_opset_version(p->opset_import, p->n_opset_import, "");
  if (from < 0) return OX_OK; /* nothing of the default domain to convert */
  if (from < 1 || from > max)
    return ox_err_set(e, OX_EUNSUPPORTED,
                      "opset conversion: the model imports ai.onnx opset %lld, outside 1..%lld",
                      (long long)from, (long long)max);
  ox_vctx c = {0};
  c.m = m;
  c.a = m->arena;
  c.e = e;
  ox_map_init(&c.types);
  ox_map_init(&c.names);
  ox_map_init(&c.used);
  ox_map_init(&c.detached);
  ox_model *tmp = NULL;
  int rc = OX_OK;
  if (from == target) goto update;
  rc = note_names_graph(&c, p->graph);
  for (size_t i = 0; !rc && i < p->n_functions; i++) {
    ox_function *f = &p->functions[i];
    rc = note_node_names(&c, f->node, f->n_node);
    for (size_t k = 0; !rc && k < f->n_output; k++)
      if (ox_map_put(&c.used, f->output[k], 1)) rc = ox_v_oom(&c);
  }
  for (size_t i = 0; !rc && i < p->n_training_info; i++) {
    const ox_training_info *ti = &p->training_info[i];
    if (ti->initialization) rc = note_names_graph(&c, ti->initialization);
    if (!rc && ti->algorithm) rc = note_names_graph(&c, ti->algorithm);
  }
  if (rc) goto done;
  tmp = infer_types(&c);
  if (!tmp) {
    rc = ox_v_oom(&c);
    goto done;
  }
  if ((rc = convert_nodes(&c, NULL, NULL, p->graph, from, target,
                          p->graph->name ? p->graph->name : "main")))
    goto done;
  for (size_t i = 0; i < p->n_training_info; i++) {
    ox_training_info *ti = &p->training_info[i];
    if (ti->initialization &&
        (rc = convert_nodes(&c, NULL, NULL, ti->initialization, from, target, "initialization")))
      goto done;
    if (ti->algorithm &&
        (rc = convert_nodes(&c, NULL, NULL, ti->algorithm, from, target, "algorithm")))
      goto done;
  }
  /* model-local functions: each from its own import of the default domain */
  for (size_t i = 0; i < p->n_functions; i++) {
    ox_function *f = &p->functions[i];
    int64_t fv = ox_opset_version(f->opset_import, f->n_opset_import, "");
    if (fv < 1 || fv > max || fv == target) continue;
    char *nm = ox_arena_printf(c.a, "function %s", f->name ? f->name : "");
    if (!nm) {
      rc = ox_v_oom(&c);
      goto done;
    }
    if ((rc = convert_nodes(&c, &f->node, &f->n_node, NULL, fv, target, nm))) goto done;
    set_version(&c, f->opset_import, f->n_opset_import, target);
  }
  if ((rc = clean_up(&c))) goto done;
update:
  set_version(&c, p->opset_import, p->n_opset_import, target);
done:
  ox_model_free(tmp);
  ox_map_free(&c.types);
  ox_map_free(&c.names);
  ox_map_free(&c.used);
  ox_map_free(&c.detached);
  return rc;
}

/* ------------------------------------------------------------ lowest opset */

static int64_t min_opset_nodes(const ox_node *nodes, size_t cnt, int depth) {
  int64_t lo = 1;
  for (size_t i = 0; i < cnt && depth < 64; i++) {
    const ox_node *n = &nodes[i];
    if (ox_is_default_domain(n->domain) && n->op_type) {
      size_t nv = 0;
      const ox_schema *const *v = ox_schema_versions("", n->op_type, &nv);
      if (nv && v[0]->since_version > lo) lo = v[0]->since_version;
    }
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      int64_t x = at->g ? min_opset_nodes(at->g->node, at->g->n_node, depth + 1) : 1;
      if (x > lo) lo = x;
      for (size_t j = 0; j < at->n_graphs; j++) {
        x = min_opset_nodes(at->graphs[j].node, at->graphs[j].n_node, depth + 1);
        if (x > lo) lo = x;
      }
    }
  }
  return lo;
}

int64_t ox_version_min_opset(const ox_model *m) {
  if (!m || !m->proto || !m->proto->graph) return 1;
  return min_opset_nodes(m->proto->graph->node, m->proto->graph->n_node, 0);
}
