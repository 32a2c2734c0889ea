/* infer.c - the inference driver: scopes, node loop, merging with declared
 * types, subgraphs, model-local functions, writing value_info back. */
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/onnxc_ops.h"
#include "infer_impl.h"

struct ox_iglobal {
  ox_model *m;
  ox_arena *a;
  const ox_infer_opts *o;
  ox_buf *warn;
  ox_err *e;
  ox_map symbols; /* every dim_param in use */
  int64_t next_unk;
  int errors;
  int depth; /* function-call / subgraph depth */
};

struct ox_igraph {
  ox_igraph *parent;
  ox_iglobal *gl;
  ox_graph *graph;            /* the graph whose value_info is written; NULL for functions */
  ox_map types, consts, data; /* name -> ox_type*, ox_tensor*, ox_dimv* */
  ox_map outs, vis;           /* name -> index+1 in graph->output / graph->value_info */
  const ox_opset *imports;
  size_t n_imports;
  const ox_node *caller; /* for function bodies: the calling node (attribute refs) */
  const ox_function *fn; /* for function bodies: the function (defaults) */
  ox_igraph *caller_scope;
};

/* ------------------------------------------------------------ symbols */

static void collect_type_syms(ox_iglobal *gl, const ox_type *t) {
  for (; t; t = t->elem) {
    if (t->shape)
      for (size_t i = 0; i < t->shape->n_dim; i++)
        if (t->shape->dim[i].param) ox_map_put(&gl->symbols, t->shape->dim[i].param, 1);
    if (t->kind != OX_TYPE_SEQUENCE && t->kind != OX_TYPE_OPTIONAL && t->kind != OX_TYPE_MAP) break;
  }
}

static void collect_graph_syms(ox_iglobal *gl, const ox_graph *g) {
  const ox_value_info *lists[3] = {g->input, g->output, g->value_info};
  size_t ns[3] = {g->n_input, g->n_output, g->n_value_info};
  for (int l = 0; l < 3; l++)
    for (size_t i = 0; i < ns[l]; i++) collect_type_syms(gl, lists[l][i].type);
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i].n_attribute; j++) {
      const ox_attr *at = &g->node[i].attribute[j];
      if (at->g) collect_graph_syms(gl, at->g);
      for (size_t k = 0; k < at->n_graphs; k++) collect_graph_syms(gl, &at->graphs[k]);
    }
}

static char *fresh_symbol(ox_iglobal *gl) {
  for (;;) {
    char *s = ox_arena_printf(gl->a, "unk__%lld", (long long)gl->next_unk++);
    if (!s) return NULL;
    if (!ox_map_get(&gl->symbols, s, NULL)) {
      ox_map_put(&gl->symbols, s, 1);
      return s;
    }
  }
}

static void materialize(ox_iglobal *gl, ox_type *t) {
  for (; t; t = t->elem) {
    if (t->shape)
      for (size_t i = 0; i < t->shape->n_dim; i++) {
        ox_dim *d = &t->shape->dim[i];
        if (!d->has_value && !d->param) d->param = fresh_symbol(gl);
      }
    if (t->kind != OX_TYPE_SEQUENCE && t->kind != OX_TYPE_OPTIONAL && t->kind != OX_TYPE_MAP) break;
  }
}

/* ------------------------------------------------------------ messages */

static void warnf(ox_iglobal *gl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void warnf(ox_iglobal *gl, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  gl->errors++;
  if (gl->o && gl->o->strict && gl->e && gl->e->code == OX_OK)
    ox_err_set(gl->e, OX_EMODEL, "%s", msg);
  if (gl->warn) {
    ox_buf_puts(gl->warn, msg);
    ox_buf_putc(gl->warn, '\n');
  }
}

/* A warning that is not an error even in strict mode (what could not be
 * checked, as opposed to what is wrong). */
static void notef(ox_iglobal *gl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void notef(ox_iglobal *gl, const char *fmt, ...) {
  if (!gl->warn) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ox_buf_puts(gl->warn, msg);
  ox_buf_putc(gl->warn, '\n');
}

/* Domains whose operators the schema table is meant to know completely
 * (onnxc's own among them). */
static bool standard_domain(const char *d) {
  return ox_is_default_domain(d) || strcmp(d, "ai.onnx.ml") == 0 ||
         strcmp(d, "ai.onnx.training") == 0 || strcmp(d, "ai.onnx.preview.training") == 0 ||
         strcmp(d, OX_ONNXC_DOMAIN) == 0;
}

static const char *node_label(const ox_node *n) {
  return n->name && *n->name ? n->name : (n->n_output && *n->output[0] ? n->output[0] : "?");
}

/* A node of a domain without schemas: the caller's registry types it, or
 * nothing is known of it (so nothing is wrong). */
static void infer_custom(ox_iglobal *gl, ox_ictx *c, const ox_node *n, const char *dom,
                         int64_t opset) {
  char why[600] = "";
  int r = gl->o && gl->o->custom
              ? gl->o->custom(gl->o->custom_user, n, dom, opset, (const ox_type *const *)c->in,
                              c->n_in, c->out, c->n_out, gl->a, why, sizeof why)
              : 0;
  if (r < 0)
    warnf(gl, "node '%s' (%s, domain '%s' opset %lld): %s", node_label(n), n->op_type, dom,
          (long long)opset, why[0] ? why : "rejected by its custom operator");
  else if (r == 0)
    notef(gl, "node '%s' (%s, domain '%s' opset %lld): custom operator, not checked",
          node_label(n), n->op_type, dom, (long long)opset);
}

int ix_fail(ox_ictx *c, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->failed = true;
  warnf(c->g->gl, "node '%s' (%s-%lld): %s", node_label(c->node), c->node->op_type,
        (long long)c->since, msg);
  return OX_EMODEL;
}

/* ------------------------------------------------------------ scopes */

static void scope_init(ox_igraph *s, ox_iglobal *gl, ox_igraph *parent) {
  memset(s, 0, sizeof *s);
  s->gl = gl;
  s->parent = parent;
  ox_map_init(&s->types);
  ox_map_init(&s->consts);
  ox_map_init(&s->data);
  ox_map_init(&s->outs);
  ox_map_init(&s->vis);
  if (parent) {
    s->imports = parent->imports;
    s->n_imports = parent->n_imports;
  }
}

static void scope_free(ox_igraph *s) {
  ox_map_free(&s->types);
  ox_map_free(&s->consts);
  ox_map_free(&s->data);
  ox_map_free(&s->outs);
  ox_map_free(&s->vis);
}

static void *scope_get(const ox_igraph *s, size_t which, const char *name) {
  if (!name) return NULL;
  for (; s; s = s->parent) {
    const ox_map *m = which == 0 ? &s->types : which == 1 ? &s->consts : &s->data;
    uintptr_t v;
    if (ox_map_get(m, name, &v)) return (void *)v;
  }
  return NULL;
}

/* ------------------------------------------------------------ merging */

static bool type_merge(ox_iglobal *gl, ox_type *dst, const ox_type *src, const char *what) {
  if (!src) return true;
  if (dst->kind == OX_TYPE_NONE) {
    ox_type *c = ox_type_clone(gl->a, src);
    if (c) *dst = *c;
    return true;
  }
  if (dst->kind != src->kind) {
    warnf(gl, "%s: inferred type kind %d differs from declared kind %d", what, src->kind,
          dst->kind);
    return false;
  }
  switch (dst->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (src->elem_type && dst->elem_type && src->elem_type != dst->elem_type) {
        warnf(gl, "%s: inferred element type %s differs from declared %s", what,
              ox_dtype_get(src->elem_type) ? ox_dtype_get(src->elem_type)->name : "?",
              ox_dtype_get(dst->elem_type) ? ox_dtype_get(dst->elem_type)->name : "?");
        return false;
      }
      if (!dst->elem_type && src->elem_type) {
        dst->elem_type = src->elem_type;
        dst->has_elem_type = true;
      }
      if (!src->shape) return true;
      if (!dst->shape) {
        ox_type *c = ox_type_clone(gl->a, src);
        if (c) dst->shape = c->shape;
        return true;
      }
      if (dst->shape->n_dim != src->shape->n_dim) {
        warnf(gl, "%s: inferred rank %zu differs from declared rank %zu", what, src->shape->n_dim,
              dst->shape->n_dim);
        return false;
      }
      for (size_t i = 0; i < dst->shape->n_dim; i++) {
        ox_dim *d = &dst->shape->dim[i];
        const ox_dim *s = &src->shape->dim[i];
        if (d->has_value && s->has_value && d->value != s->value) {
          warnf(gl, "%s: inferred dim %zu is %lld, declared %lld", what, i, (long long)s->value,
                (long long)d->value);
          return false;
        }
        if (s->has_value && !d->has_value) {
          d->has_value = true;
          d->value = s->value;
          d->param = NULL;
        } else if (!d->has_value && !d->param && s->param) {
          d->param = ox_arena_strdup(gl->a, s->param);
        }
      }
      return true;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      if (!src->elem) return true;
      if (!dst->elem) {
        dst->elem = ox_type_clone(gl->a, src->elem);
        return true;
      }
      return type_merge(gl, dst->elem, src->elem, what);
    case OX_TYPE_MAP:
      if (!dst->elem && src->elem) dst->elem = ox_type_clone(gl->a, src->elem);
      return true;
    default:
      return true;
  }
}

/* ------------------------------------------------------------ ictx helpers */

bool ix_has_input(ox_ictx *c, size_t i) { return i < c->n_in && c->in_present[i]; }

bool ix_shape(ox_ictx *c, size_t i, const ox_dim **dims, size_t *rank) {
  if (i >= c->n_in || !c->in[i]) return false;
  const ox_type *t = c->in[i];
  if ((t->kind != OX_TYPE_TENSOR && t->kind != OX_TYPE_SPARSE_TENSOR) || !t->shape) return false;
  *dims = t->shape->dim;
  *rank = t->shape->n_dim;
  return true;
}

int32_t ix_elem(ox_ictx *c, size_t i) {
  if (i >= c->n_in || !c->in[i]) return OX_UNDEFINED;
  const ox_type *t = c->in[i];
  return t->kind == OX_TYPE_TENSOR || t->kind == OX_TYPE_SPARSE_TENSOR ? t->elem_type
                                                                       : OX_UNDEFINED;
}

ox_type *ix_set_tensor(ox_ictx *c, size_t i, int32_t elem, const ox_dim *dims, int64_t rank) {
  if (i >= c->n_out) return NULL;
  ox_type *t = ox_arena_alloc(c->a, sizeof *t);
  if (!t) return NULL;
  t->kind = OX_TYPE_TENSOR;
  t->elem_type = elem;
  t->has_elem_type = elem != OX_UNDEFINED;
  if (rank >= 0) {
    t->shape = ox_arena_alloc(c->a, sizeof *t->shape);
    if (!t->shape) return NULL;
    if (rank > 0) {
      t->shape->dim = ox_arena_calloc(c->a, (size_t)rank, sizeof(ox_dim));
      if (!t->shape->dim) return NULL;
      t->shape->n_dim = (size_t)rank;
      if (dims) memcpy(t->shape->dim, dims, (size_t)rank * sizeof(ox_dim));
      for (int64_t k = 0; k < rank; k++) t->shape->dim[k].denotation = NULL;
    }
  }
  c->out[i] = t;
  return t;
}

ox_type *ix_copy_type(ox_ictx *c, size_t out, size_t in) {
  if (out >= c->n_out || in >= c->n_in || !c->in[in]) return NULL;
  c->out[out] = ox_type_clone(c->a, c->in[in]);
  return c->out[out];
}

/* resolve attribute references inside function bodies */
static const ox_attr *resolve_attr(const ox_igraph *g, const ox_attr *at) {
  while (at && at->ref_attr_name) {
    const ox_igraph *s = g;
    while (s && !s->caller) s = s->parent;
    if (!s) return NULL;
    const ox_attr *found = ox_node_attr(s->caller, at->ref_attr_name);
    if (!found && s->fn)
      for (size_t i = 0; i < s->fn->n_attribute_proto; i++)
        if (strcmp(s->fn->attribute_proto[i].name, at->ref_attr_name) == 0)
          found = &s->fn->attribute_proto[i];
    at = found;
    g = s->caller_scope;
  }
  return at;
}

const ox_attr *ix_attr(ox_ictx *c, const char *name) {
  return resolve_attr(c->g, ox_node_attr(c->node, name));
}

int64_t ix_attr_int(ox_ictx *c, const char *name, int64_t dflt) {
  const ox_attr *a = ix_attr(c, name);
  return a && (a->has_i || a->type == OX_ATTR_INT) ? a->i : dflt;
}

bool ix_attr_ints(ox_ictx *c, const char *name, const int64_t **v, size_t *n) {
  const ox_attr *a = ix_attr(c, name);
  if (!a || (a->type != OX_ATTR_INTS && !a->n_ints)) return false;
  *v = a->ints;
  *n = a->n_ints;
  return true;
}

static bool tensor_ints(ox_arena *ar, const ox_tensor *t, int64_t **v, size_t *n) {
  int64_t cnt;
  if (!ox_numel(t->dims, t->n_dims, &cnt) || cnt > (1 << 20)) return false;
  int64_t *out = ox_arena_calloc(ar, (size_t)(cnt ? cnt : 1), sizeof(int64_t));
  if (!out) return false;
  ox_bytes raw = ox_tensor_payload(t);
  if (t->data_type == OX_INT64) {
    if (raw.data) {
      if (raw.size != (size_t)cnt * 8) return false;
      memcpy(out, raw.data, raw.size);
    } else {
      if (t->n_int64_data != (size_t)cnt) return false;
      if (cnt) memcpy(out, t->int64_data, (size_t)cnt * 8); /* NULL when empty */
    }
  } else if (t->data_type == OX_INT32) {
    if (raw.data) {
      if (raw.size != (size_t)cnt * 4) return false;
      for (int64_t i = 0; i < cnt; i++) {
        int32_t x;
        memcpy(&x, raw.data + 4 * i, 4);
        out[i] = x;
      }
    } else {
      if (t->n_int32_data != (size_t)cnt) return false;
      for (int64_t i = 0; i < cnt; i++) out[i] = t->int32_data[i];
    }
  } else {
    return false;
  }
  *v = out;
  *n = (size_t)cnt;
  return true;
}

bool ix_const_ints(ox_ictx *c, size_t i, int64_t **v, size_t *n) {
  if (i >= c->n_in || !c->in_present[i]) return false;
  if (c->in_const[i]) return tensor_ints(c->a, c->in_const[i], v, n);
  const ox_dimv *d = c->in_data[i];
  if (!d) return false;
  int64_t *out = ox_arena_calloc(c->a, d->n ? d->n : 1, sizeof(int64_t));
  if (!out) return false;
  for (size_t k = 0; k < d->n; k++) {
    if (!d->d[k].has_value) return false;
    out[k] = d->d[k].value;
  }
  *v = out;
  *n = d->n;
  return true;
}

ox_dimv *ix_dimv_new(ox_ictx *c, size_t n) {
  ox_dimv *d = ox_arena_alloc(c->a, sizeof *d);
  if (!d) return NULL;
  d->n = n;
  d->d = ox_arena_calloc(c->a, n ? n : 1, sizeof(ox_dim));
  return d->d ? d : NULL;
}

bool ix_axis(int64_t axis, size_t rank, size_t *out) {
  int64_t r = (int64_t)rank;
  if (axis < -r || axis >= r) return false;
  *out = (size_t)(axis < 0 ? axis + r : axis);
  return true;
}

bool ix_broadcast(ox_ictx *c, size_t first, size_t n, ox_dim **out, size_t *rank) {
  size_t r = 0;
  for (size_t i = first; i < first + n; i++) {
    const ox_dim *d;
    size_t ri;
    if (!ix_has_input(c, i)) continue;
    if (!ix_shape(c, i, &d, &ri)) return false;
    if (ri > r) r = ri;
  }
  ox_dim *res = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!res) return false;
  for (size_t k = 0; k < r; k++) {
    ox_dim acc = ox_dim_known(1);
    bool conflict_sym = false, have_unknown = false;
    for (size_t i = first; i < first + n; i++) {
      const ox_dim *d;
      size_t ri;
      if (!ix_has_input(c, i) || !ix_shape(c, i, &d, &ri)) continue;
      if (k + ri < r) continue;
      const ox_dim *x = &d[k + ri - r];
      if (ox_dim_is(x, 1)) continue;
      if (x->has_value) {
        if (acc.has_value && acc.value != 1 && acc.value != x->value) {
          ix_fail(c, "incompatible dimensions %lld and %lld for broadcasting", (long long)acc.value,
                  (long long)x->value);
          return false;
        }
        acc = *x;
      } else if (x->param) {
        if (acc.has_value && acc.value != 1) continue; /* known wins over symbol */
        if (!acc.has_value && acc.param && strcmp(acc.param, x->param) != 0) conflict_sym = true;
        if (!acc.has_value && !acc.param && have_unknown) continue;
        acc = *x;
      } else {
        have_unknown = true;
        if (!(acc.has_value && acc.value != 1)) acc = ox_dim_unknown();
      }
    }
    if (conflict_sym && !acc.has_value) acc = ox_dim_unknown();
    if (have_unknown && !acc.has_value) acc = ox_dim_unknown();
    res[k] = acc;
  }
  *out = res;
  *rank = r;
  return true;
}

/* ------------------------------------------------------------ nodes */

static int infer_graph(ox_igraph *s, ox_graph *g, const ox_node *nodes, size_t n_nodes);

static const ox_function *find_function(const ox_iglobal *gl, const ox_node *n) {
  const ox_model_proto *m = gl->m->proto;
  for (size_t i = 0; i < m->n_functions; i++) {
    const ox_function *f = &m->functions[i];
    const char *fd = f->domain ? f->domain : "", *nd = n->domain ? n->domain : "";
    const char *fo = f->overload ? f->overload : "", *no = n->overload ? n->overload : "";
    if (f->name && strcmp(f->name, n->op_type) == 0 && strcmp(fd, nd) == 0 && strcmp(fo, no) == 0)
      return f;
  }
  return NULL;
}

/* "tensor(float16)" -> OX_FLOAT16; OX_UNDEFINED for anything else. */
static int32_t tensor_type_elem(const char *ts) {
  size_t L = strlen(ts);
  char nm[32];
  if (strncmp(ts, "tensor(", 7) != 0 || L < 9 || L - 8 >= sizeof nm || ts[L - 1] != ')')
    return OX_UNDEFINED;
  memcpy(nm, ts + 7, L - 8);
  nm[L - 8] = 0;
  return ox_dtype_from_name(nm);
}

/* Generic element-type rule from the schema's type constraints. */
static void infer_from_schema(ox_ictx *c) {
  const ox_schema *sc = c->schema;
  if (!sc || !sc->n_outputs) return; /* a node with outputs its op lacks (fuzz_convert) */
  for (size_t o = 0; o < c->n_out && o < sc->n_outputs + 64; o++) {
    if (c->out[o]) continue;
    const ox_formal *f = &sc->outputs[o < sc->n_outputs ? o : sc->n_outputs - 1];
    if (o >= sc->n_outputs && f->option != OX_PARAM_VARIADIC) break;
    int32_t elem = OX_UNDEFINED;
    const char *ts = f->type_str;
    if (strncmp(ts, "tensor(", 7) == 0) {
      elem = tensor_type_elem(ts);
    } else {
      /* bound by an input with the same constraint? */
      for (size_t i = 0; i < c->n_in && elem == OX_UNDEFINED; i++) {
        size_t fi = i < sc->n_inputs ? i : sc->n_inputs - 1;
        if (sc->n_inputs == 0 || (i >= sc->n_inputs && sc->inputs[fi].option != OX_PARAM_VARIADIC))
          break;
        if (strcmp(sc->inputs[fi].type_str, ts) == 0 && c->in[i] &&
            c->in[i]->kind == OX_TYPE_TENSOR)
          elem = c->in[i]->elem_type;
      }
      if (elem == OX_UNDEFINED)
        for (size_t k = 0; k < sc->n_constraints; k++)
          if (strcmp(sc->constraints[k].name, ts) == 0 && sc->constraints[k].n_allowed == 1)
            elem = tensor_type_elem(sc->constraints[k].allowed[0]);
    }
    if (elem != OX_UNDEFINED) ix_set_tensor(c, o, elem, NULL, -1);
  }
}

static int infer_call(ox_igraph *s, ox_ictx *c, const ox_function *f) {
  ox_iglobal *gl = s->gl;
  if (gl->depth > 64) return ix_fail(c, "function calls nest too deeply (recursion?)");
  ox_igraph fs;
  scope_init(&fs, gl, NULL);
  fs.imports = f->opset_import;
  fs.n_imports = f->n_opset_import;
  fs.caller = c->node;
  fs.fn = f;
  fs.caller_scope = s;
  for (size_t i = 0; i < f->n_input && i < c->n_in; i++) {
    if (c->in[i]) ox_map_put(&fs.types, f->input[i], (uintptr_t)c->in[i]);
    if (c->in_const[i]) ox_map_put(&fs.consts, f->input[i], (uintptr_t)c->in_const[i]);
    if (c->in_data[i]) ox_map_put(&fs.data, f->input[i], (uintptr_t)c->in_data[i]);
  }
  gl->depth++;
  int rc = infer_graph(&fs, NULL, f->node, f->n_node);
  gl->depth--;
  for (size_t o = 0; o < f->n_output && o < c->n_out; o++) {
    ox_type *t = scope_get(&fs, 0, f->output[o]);
    if (t) c->out[o] = ox_type_clone(c->a, t);
    c->out_data[o] = scope_get(&fs, 2, f->output[o]);
  }
  scope_free(&fs);
  return rc;
}

ox_type **ix_subgraph(ox_ictx *c, const ox_graph *g, const ox_type *const *in_types, size_t n_in,
                      size_t *n_out) {
  ox_iglobal *gl = c->g->gl;
  ox_graph *mg = (ox_graph *)g; /* subgraph value_info is written too */
  ox_igraph ss;
  scope_init(&ss, gl, c->g);
  for (size_t i = 0; i < mg->n_input && i < n_in; i++) {
    ox_value_info *vi = &mg->input[i];
    if (!in_types[i]) continue;
    if (!vi->type) {
      vi->type = ox_type_clone(gl->a, in_types[i]);
    } else {
      char what[300];
      snprintf(what, sizeof what, "subgraph '%s' input '%s'", mg->name ? mg->name : "", vi->name);
      type_merge(gl, vi->type, in_types[i], what);
    }
  }
  gl->depth++;
  infer_graph(&ss, mg, mg->node, mg->n_node);
  gl->depth--;
  ox_type **res = ox_arena_calloc(c->a, mg->n_output ? mg->n_output : 1, sizeof(ox_type *));
  if (res)
    for (size_t o = 0; o < mg->n_output; o++) res[o] = mg->output[o].type;
  *n_out = mg->n_output;
  scope_free(&ss);
  return res;
}

static const ox_type *declared_type(ox_igraph *s, ox_graph *g, const char *name,
                                    ox_type **slot_out) {
  if (!g) return NULL;
  uintptr_t ix;
  if (ox_map_get(&s->outs, name, &ix)) {
    ox_value_info *vi = &g->output[ix - 1];
    if (!vi->type) vi->type = ox_arena_alloc(s->gl->a, sizeof(ox_type));
    *slot_out = vi->type;
    return vi->type;
  }
  if (ox_map_get(&s->vis, name, &ix)) {
    *slot_out = g->value_info[ix - 1].type;
    return g->value_info[ix - 1].type;
  }
  return NULL;
}

/* Constant node outputs as constant tensors */
static const ox_tensor *constant_value(ox_igraph *s, const ox_node *n) {
  ox_arena *a = s->gl->a;
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *at = resolve_attr(s, &n->attribute[i]);
    if (!at) continue;
    const char *nm = n->attribute[i].name;
    if (strcmp(nm, "value") == 0 && at->t) return at->t;
    ox_tensor *t = ox_arena_alloc(a, sizeof *t);
    if (!t) return NULL;
    t->has_data_type = true;
    if (strcmp(nm, "value_int") == 0) {
      t->data_type = OX_INT64;
      t->int64_data = ox_arena_memdup(a, &at->i, sizeof at->i);
      t->n_int64_data = 1;
      return t;
    }
    if (strcmp(nm, "value_ints") == 0) {
      t->data_type = OX_INT64;
      t->dims = ox_arena_alloc(a, sizeof(int64_t));
      if (!t->dims) return NULL;
      t->dims[0] = (int64_t)at->n_ints;
      t->n_dims = 1;
      t->int64_data = at->ints;
      t->n_int64_data = at->n_ints;
      return t;
    }
    if (strcmp(nm, "value_float") == 0 || strcmp(nm, "value_floats") == 0) {
      t->data_type = OX_FLOAT;
      return t; /* only the type matters here */
    }
  }
  return NULL;
}

static int infer_node(ox_igraph *s, ox_graph *g, const ox_node *n) {
  ox_iglobal *gl = s->gl;
  ox_arena *a = gl->a;
  /* ill-formed nodes (the checker rejects them) are not inferred: found by
   * fuzz_infer */
  if (!n->op_type || !*n->op_type) {
    warnf(gl, "node '%s': no op_type, not inferred", node_label(n));
    return OX_OK;
  }
  for (size_t i = 0; i < n->n_attribute; i++)
    if (!n->attribute[i].name || !*n->attribute[i].name) {
      warnf(gl, "node '%s' (%s): an attribute has no name, not inferred", node_label(n),
            n->op_type);
      return OX_OK;
    }
  ox_ictx c;
  memset(&c, 0, sizeof c);
  c.g = s;
  c.node = n;
  c.a = a;
  c.e = gl->e;
  c.n_in = n->n_input;
  c.n_out = n->n_output;
  size_t nin = c.n_in ? c.n_in : 1, nout = c.n_out ? c.n_out : 1;
  c.in = ox_arena_calloc(a, nin, sizeof(ox_type *));
  c.in_data = ox_arena_calloc(a, nin, sizeof(ox_dimv *));
  c.in_const = ox_arena_calloc(a, nin, sizeof(ox_tensor *));
  c.in_present = ox_arena_calloc(a, nin, sizeof(bool));
  c.out = ox_arena_calloc(a, nout, sizeof(ox_type *));
  c.out_data = ox_arena_calloc(a, nout, sizeof(ox_dimv *));
  if (!c.in || !c.in_data || !c.in_const || !c.in_present || !c.out || !c.out_data)
    return ox_err_set(gl->e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < c.n_in; i++) {
    const char *nm = n->input[i];
    if (!nm || !*nm) continue;
    c.in_present[i] = true;
    c.in[i] = scope_get(s, 0, nm);
    c.in_const[i] = scope_get(s, 1, nm);
    c.in_data[i] = scope_get(s, 2, nm);
  }
  const char *dom = n->domain ? n->domain : "";
  int64_t opset = ox_opset_version(s->imports, s->n_imports, dom);
  c.opset = opset;
  c.schema = opset >= 0 ? ox_schema_lookup(dom, n->op_type, opset) : NULL;
  c.since = c.schema ? c.schema->since_version : opset;
  const ox_function *fn = find_function(gl, n);
  if (fn && !c.schema) {
    infer_call(s, &c, fn);
  } else if (opset < 0) {
    warnf(gl, "node '%s' (%s): no opset import for domain '%s'", node_label(n), n->op_type, dom);
  } else {
    const ox_infer_def *d = ox_infer_find(dom, n->op_type, c.since);
    if (d) d->fn(&c);
    if (!c.failed) infer_from_schema(&c);
    if (!d && !c.schema && !fn) {
      if (standard_domain(dom))
        warnf(gl, "node '%s' (%s, domain '%s' opset %lld): unknown operator", node_label(n),
              n->op_type, dom, (long long)opset);
      else
        infer_custom(gl, &c, n, dom, opset);
    }
  }
  if (strcmp(n->op_type, "Constant") == 0 && ox_is_default_domain(dom) && c.n_out == 1) {
    const ox_tensor *t = constant_value(s, n);
    if (t && n->output[0][0]) ox_map_put(&s->consts, n->output[0], (uintptr_t)t);
  }
  for (size_t o = 0; o < c.n_out; o++) {
    const char *nm = n->output[o];
    if (!nm || !*nm) continue;
    if (c.out_data[o]) ox_map_put(&s->data, nm, (uintptr_t)c.out_data[o]);
    ox_type *slot = NULL;
    const ox_type *decl = declared_type(s, g, nm, &slot);
    ox_type *res = NULL;
    if (decl && slot) {
      char what[400];
      snprintf(what, sizeof what, "node '%s' (%s) output '%s'", node_label(n), n->op_type, nm);
      if (c.out[o]) type_merge(gl, slot, c.out[o], what);
      res = slot;
    } else if (c.out[o]) {
      res = c.out[o];
      if (g) {
        ox_value_info *vi = ox_value_info_push(a, &g->value_info, &g->n_value_info, nm);
        if (!vi) return ox_err_set(gl->e, OX_ENOMEM, "out of memory");
        vi->type = res;
        ox_map_put(&s->vis, vi->name, (uintptr_t)g->n_value_info);
      }
    }
    if (res) {
      materialize(gl, res);
      ox_map_put(&s->types, nm, (uintptr_t)res);
    }
  }
  return OX_OK;
}

static int infer_graph(ox_igraph *s, ox_graph *g, const ox_node *nodes, size_t n_nodes) {
  ox_iglobal *gl = s->gl;
  if (g) {
    s->graph = g;
    for (size_t i = 0; i < g->n_initializer; i++) {
      ox_tensor *t = &g->initializer[i];
      if (!t->name) continue;
      ox_map_put(&s->consts, t->name, (uintptr_t)t);
      ox_type *ty = ox_type_new_tensor(gl->a, t->data_type, t->dims, t->n_dims);
      if (ty) ox_map_put(&s->types, t->name, (uintptr_t)ty);
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
      ox_sparse_tensor *sp = &g->sparse_initializer[i];
      if (!sp->values || !sp->values->name) continue;
      ox_type *ty = ox_type_new_tensor(gl->a, sp->values->data_type, sp->dims, sp->n_dims);
      if (ty) ox_map_put(&s->types, sp->values->name, (uintptr_t)ty);
    }
    /* nameless entries are the checker's to report (fuzz_infer) */
    for (size_t i = 0; i < g->n_input; i++)
      if (g->input[i].type && g->input[i].name)
        ox_map_put(&s->types, g->input[i].name, (uintptr_t)g->input[i].type);
    for (size_t i = 0; i < g->n_value_info; i++) {
      if (g->value_info[i].type && g->value_info[i].name)
        ox_map_put(&s->types, g->value_info[i].name, (uintptr_t)g->value_info[i].type);
      if (g->value_info[i].name) ox_map_put(&s->vis, g->value_info[i].name, (uintptr_t)i + 1);
    }
    for (size_t i = 0; i < g->n_output; i++)
      if (g->output[i].name) ox_map_put(&s->outs, g->output[i].name, (uintptr_t)i + 1);
  }
  for (size_t i = 0; i < n_nodes; i++) {
    int rc = infer_node(s, g, &nodes[i]);
    if (rc != OX_OK && rc != OX_EMODEL) return rc;
    if (gl->e && gl->e->code != OX_OK && gl->o && gl->o->strict) return gl->e->code;
  }
  if (g)
    for (size_t i = 0; i < g->n_output; i++) {
      ox_value_info *vi = &g->output[i];
      ox_type *t = vi->name ? scope_get(s, 0, vi->name) : NULL;
      if (!t) continue;
      if (!vi->type)
        vi->type = ox_type_clone(gl->a, t);
      else if (vi->type != t) {
        char what[300];
        snprintf(what, sizeof what, "graph output '%s'", vi->name);
        type_merge(gl, vi->type, t, what);
      }
    }
  return OX_OK;
}

static void bind_inputs(ox_iglobal *gl, ox_graph *g) {
  const ox_infer_opts *o = gl->o;
  if (!o || !o->n_bindings) return;
  ox_map sym;
  ox_map_init(&sym);
  for (size_t b = 0; b < o->n_bindings; b++) {
    const ox_infer_binding *bd = &o->bindings[b];
    for (size_t i = 0; i < g->n_input; i++) {
      ox_value_info *vi = &g->input[i];
      if (strcmp(vi->name, bd->name) != 0) continue;
      if (!vi->type || vi->type->kind != OX_TYPE_TENSOR) {
        warnf(gl, "--input %s: not a tensor input", bd->name);
        continue;
      }
      if (!vi->type->shape) vi->type->shape = ox_arena_alloc(gl->a, sizeof(ox_shape));
      ox_shape *sh = vi->type->shape;
      if (!sh) continue;
      if (sh->n_dim && sh->n_dim != bd->rank) {
        warnf(gl, "--input %s: rank %zu does not match the declared rank %zu", bd->name, bd->rank,
              sh->n_dim);
        continue;
      }
      if (!sh->n_dim) {
        for (size_t k = 0; k < bd->rank; k++) OX_VEC_PUSH(gl->a, sh->dim, sh->n_dim);
        if (sh->n_dim != bd->rank) continue;
      }
      for (size_t k = 0; k < bd->rank; k++) {
        if (sh->dim[k].param) ox_map_put(&sym, sh->dim[k].param, (uintptr_t)(bd->dims[k] + 1));
        sh->dim[k].has_value = true;
        sh->dim[k].value = bd->dims[k];
        sh->dim[k].param = NULL;
      }
    }
  }
  /* the same symbol elsewhere among the inputs gets the same number */
  for (size_t i = 0; i < g->n_input; i++) {
    ox_type *t = g->input[i].type;
    if (!t || !t->shape) continue;
    for (size_t k = 0; k < t->shape->n_dim; k++) {
      uintptr_t v;
      ox_dim *d = &t->shape->dim[k];
      if (d->param && ox_map_get(&sym, d->param, &v)) {
        d->has_value = true;
        d->value = (int64_t)v - 1;
        d->param = NULL;
      }
    }
  }
  ox_map_free(&sym);
}

int ox_infer_model(ox_model *m, const ox_infer_opts *o, ox_buf *warnings, ox_err *e) {
  ox_model_proto *p = m->proto;
  if (!p->graph) return ox_err_set(e, OX_EMODEL, "model has no graph");
  ox_iglobal gl;
  memset(&gl, 0, sizeof gl);
  gl.m = m;
  gl.a = m->arena;
  gl.o = o;
  gl.warn = warnings;
  ox_err local = {0};
  gl.e = e ? e : &local;
  gl.e->code = OX_OK;
  gl.e->msg[0] = 0;
  ox_map_init(&gl.symbols);
  collect_graph_syms(&gl, p->graph);
  bind_inputs(&gl, p->graph);
  ox_igraph s;
  scope_init(&s, &gl, NULL);
  s.imports = p->opset_import;
  s.n_imports = p->n_opset_import;
  int rc = infer_graph(&s, p->graph, p->graph->node, p->graph->n_node);
  scope_free(&s);
  ox_map_free(&gl.symbols);
  if (rc == OX_OK && o && o->strict && gl.errors) rc = gl.e->code ? gl.e->code : OX_EMODEL;
  if (rc == OX_OK && gl.e->code == OX_EMODEL && !(o && o->strict)) {
    gl.e->code = OX_OK;
    gl.e->msg[0] = 0;
  }
  return rc;
}
