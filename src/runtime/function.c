/* function.c - inlining of model-local functions at session creation.
 *
 * A node whose (domain, op_type, overload) names a FunctionProto of the
 * model is replaced by the function's nodes: formal inputs and outputs are
 * renamed to the call's actual names, every other name defined inside the
 * body (node outputs, subgraph names) gets a fresh name so that it cannot
 * meet a name of the caller, attribute references (ref_attr_name) take the
 * call's attribute or the function's default, nested calls are inlined in
 * turn, and a function that reaches itself is rejected. The result is a new
 * main graph in the session's arena, with the opset of every node recorded
 * (a body's nodes use the function's own opset imports). */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define OX_FN_MAX_DEPTH 64

typedef struct fx {
  ox_session *s;
  ox_arena *a;
  const ox_model_proto *mp;
  const ox_function *stack[OX_FN_MAX_DEPTH];
  int depth;
  unsigned long counter;
  ox_err *e;
  /* outside a session (onnxc compile): output name -> the top-level call
   * that a node comes from, described as "'name' (domain:Op)" */
  ox_map *origin;
  const char *top;
} fx;

/* a graph being built: nodes plus their opsets */
typedef struct gb {
  ox_graph *g;
  int64_t *ops;
  size_t n_ops, cap_ops;
} gb;

typedef struct call_ctx {
  const ox_node *call;
  const ox_function *f;
} call_ctx;

static bool same_domain(const char *a, const char *b) {
  bool da = !a || ox_is_default_domain(a), db = !b || ox_is_default_domain(b);
  return da || db ? da == db : strcmp(a, b) == 0;
}

static const ox_function *find_fn(const fx *x, const ox_node *n) {
  for (size_t i = 0; i < x->mp->n_functions; i++) {
    const ox_function *f = &x->mp->functions[i];
    if (f->name && n->op_type && strcmp(f->name, n->op_type) == 0 &&
        same_domain(f->domain, n->domain) &&
        strcmp(f->overload ? f->overload : "", n->overload ? n->overload : "") == 0)
      return f;
  }
  return NULL;
}

static int oom(fx *x) { return ox_err_set(x->e, OX_ENOMEM, "out of memory inlining functions"); }

static const char *fresh(fx *x, const char *base) {
  return ox_arena_printf(x->a, "%s#%lu", base, ++x->counter);
}

/* renamed use of a name: mapped, else unchanged */
static char *use_name(const ox_map *m, char *name) {
  uintptr_t v;
  if (m && name && *name && ox_map_get(m, name, &v)) return (char *)v;
  return name;
}

/* renamed definition: mapped (formal outputs), else a fresh name recorded */
static char *def_name(fx *x, ox_map *m, char *name) {
  if (!m || !name || !*name) return name;
  uintptr_t v;
  if (ox_map_get(m, name, &v)) return (char *)v;
  char *f = (char *)fresh(x, name);
  if (!f || ox_map_put(m, name, (uintptr_t)f)) return NULL;
  return f;
}

static int64_t opset_of(const fx *x, const ox_opset *imp, size_t n, const char *domain) {
  int64_t v = imp ? ox_opset_version(imp, n, domain ? domain : "") : -1;
  if (v < 0) v = ox_opset_version(x->mp->opset_import, x->mp->n_opset_import, domain ? domain : "");
  return v;
}

static int emit(fx *x, gb *b, const ox_node *n, int64_t opset) {
  ox_node *d = OX_VEC_PUSH(x->a, b->g->node, b->g->n_node);
  if (!d) return oom(x);
  *d = *n;
  if (b->n_ops == b->cap_ops) {
    size_t cap = b->cap_ops ? b->cap_ops * 2 : 32;
    int64_t *o = realloc(b->ops, cap * sizeof *o);
    if (!o) return oom(x);
    b->ops = o;
    b->cap_ops = cap;
  }
  b->ops[b->n_ops++] = opset;
  for (size_t k = 0; x->origin && x->top && k < n->n_output; k++)
    if (*n->output[k] && ox_map_put(x->origin, n->output[k], (uintptr_t)x->top)) return oom(x);
  return OX_OK;
}

static int note_graph(fx *x, gb *b) {
  if (!x->s) { /* no session: one opset per domain (ox_rt_inline_functions' caller checks) */
    free(b->ops);
    b->ops = NULL;
    return OX_OK;
  }
  rt_opset_note *nt = OX_VEC_PUSH(x->a, x->s->notes, x->s->n_notes);
  if (!nt) return oom(x);
  nt->g = b->g;
  nt->opsets = ox_arena_calloc(x->a, b->n_ops + 1, sizeof *b->ops);
  if (nt->opsets && b->n_ops) memcpy(nt->opsets, b->ops, b->n_ops * sizeof *b->ops);
  free(b->ops);
  b->ops = NULL;
  return nt->opsets ? OX_OK : oom(x);
}

static int process_nodes(fx *x, gb *b, const ox_node *nodes, size_t n_nodes, const ox_opset *imp,
                         size_t n_imp, ox_map *rename, const call_ctx *cc);

/* A copy of subgraph sg with calls inlined (and, inside a function body,
 * every name renamed). */
static ox_graph *expand_subgraph(fx *x, const ox_graph *sg, const ox_opset *imp, size_t n_imp,
                                 ox_map *rename, const call_ctx *cc) {
  gb b = {0};
  b.g = ox_arena_alloc(x->a, sizeof *b.g);
  if (!b.g) return oom(x), NULL;
  *b.g = *sg;
  b.g->node = NULL;
  b.g->n_node = 0;
  if (rename) {
    /* definitions first: inputs, initializers, then node outputs as they come */
    ox_value_info *in = ox_arena_calloc(x->a, sg->n_input + 1, sizeof *in);
    ox_tensor *init = ox_arena_calloc(x->a, sg->n_initializer + 1, sizeof *init);
    if (!in || !init) return oom(x), NULL;
    for (size_t i = 0; i < sg->n_input; i++) {
      in[i] = sg->input[i];
      if (!(in[i].name = def_name(x, rename, sg->input[i].name))) return oom(x), NULL;
    }
    for (size_t i = 0; i < sg->n_initializer; i++) {
      init[i] = sg->initializer[i];
      if (!(init[i].name = def_name(x, rename, sg->initializer[i].name))) return oom(x), NULL;
    }
    b.g->input = in;
    b.g->initializer = init;
  }
  if (process_nodes(x, &b, sg->node, sg->n_node, imp, n_imp, rename, cc)) {
    free(b.ops);
    return NULL;
  }
  if (rename) {
    ox_value_info *out = ox_arena_calloc(x->a, sg->n_output + 1, sizeof *out);
    ox_value_info *vi = ox_arena_calloc(x->a, sg->n_value_info + 1, sizeof *vi);
    if (!out || !vi) return oom(x), NULL;
    for (size_t i = 0; i < sg->n_output; i++) {
      out[i] = sg->output[i];
      out[i].name = use_name(rename, sg->output[i].name);
    }
    for (size_t i = 0; i < sg->n_value_info; i++) {
      vi[i] = sg->value_info[i];
      vi[i].name = use_name(rename, sg->value_info[i].name);
    }
    b.g->output = out;
    b.g->value_info = vi;
  }
  if (note_graph(x, &b)) return NULL;
  return b.g;
}

static const ox_attr *find_attr(const ox_attr *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (v[i].name && strcmp(v[i].name, name) == 0) return &v[i];
  return NULL;
}

static int inline_call(fx *x, gb *b, const ox_node *call, const ox_function *f);

static int process_nodes(fx *x, gb *b, const ox_node *nodes, size_t n_nodes, const ox_opset *imp,
                         size_t n_imp, ox_map *rename, const call_ctx *cc) {
  for (size_t i = 0; i < n_nodes; i++) {
    ox_node nn = nodes[i];
    const ox_node *src = &nodes[i];
    if (rename) {
      nn.input = ox_arena_calloc(x->a, src->n_input + 1, sizeof *nn.input);
      nn.output = ox_arena_calloc(x->a, src->n_output + 1, sizeof *nn.output);
      if (!nn.input || !nn.output) return oom(x);
      for (size_t k = 0; k < src->n_input; k++) nn.input[k] = use_name(rename, src->input[k]);
      if (nn.name && *nn.name) nn.name = (char *)fresh(x, nn.name);
    }
    /* attributes: references resolved, subgraphs expanded */
    bool touch = cc != NULL;
    for (size_t k = 0; k < src->n_attribute && !touch; k++)
      touch = src->attribute[k].g || src->attribute[k].n_graphs;
    if (touch) {
      nn.attribute = ox_arena_calloc(x->a, src->n_attribute + 1, sizeof *nn.attribute);
      if (!nn.attribute) return oom(x);
      nn.n_attribute = 0;
      for (size_t k = 0; k < src->n_attribute; k++) {
        const ox_attr *at = &src->attribute[k];
        ox_attr na = *at;
        if (at->ref_attr_name && cc) {
          const ox_attr *v =
              find_attr(cc->call->attribute, cc->call->n_attribute, at->ref_attr_name);
          if (!v)
            v = find_attr(cc->f->attribute_proto, cc->f->n_attribute_proto, at->ref_attr_name);
          if (!v) continue; /* not given and no default: the attribute is absent */
          na = *v;
          na.name = at->name;
          na.ref_attr_name = NULL;
        }
        if (na.g) {
          na.g = expand_subgraph(x, na.g, imp, n_imp, rename, cc);
          if (!na.g) return x->e->code;
        }
        if (na.n_graphs) {
          ox_graph *gs = ox_arena_calloc(x->a, na.n_graphs, sizeof *gs);
          if (!gs) return oom(x);
          for (size_t j = 0; j < na.n_graphs; j++) {
            ox_graph *eg = expand_subgraph(x, &na.graphs[j], imp, n_imp, rename, cc);
            if (!eg) return x->e->code;
            gs[j] = *eg;
          }
          na.graphs = gs;
        }
        nn.attribute[nn.n_attribute++] = na;
      }
    }
    if (rename)
      for (size_t k = 0; k < src->n_output; k++)
        if (!(nn.output[k] = def_name(x, rename, src->output[k])) && src->output[k]) return oom(x);
    const ox_function *f = find_fn(x, &nn);
    int rc = f ? inline_call(x, b, &nn, f) : emit(x, b, &nn, opset_of(x, imp, n_imp, nn.domain));
    if (rc) return rc;
  }
  return OX_OK;
}

static int inline_call(fx *x, gb *b, const ox_node *call, const ox_function *f) {
  for (int i = 0; i < x->depth; i++)
    if (x->stack[i] == f)
      return ox_err_set(x->e, OX_EMODEL, "function '%s' (domain '%s') calls itself (recursion)",
                        f->name, f->domain ? f->domain : "");
  if (x->depth == OX_FN_MAX_DEPTH)
    return ox_err_set(x->e, OX_EMODEL, "functions nested more than %d deep", OX_FN_MAX_DEPTH);
  if (call->n_input > f->n_input || call->n_output > f->n_output)
    return ox_err_set(x->e, OX_EMODEL,
                      "node '%s' calls function '%s' with %zu inputs and %zu outputs; it takes %zu "
                      "and %zu",
                      call->name ? call->name : "", f->name, call->n_input, call->n_output,
                      f->n_input, f->n_output);
  ox_map m;
  ox_map_init(&m);
  int rc = OX_OK;
  for (size_t i = 0; i < f->n_input && !rc; i++)
    if (ox_map_put(&m, f->input[i], (uintptr_t)(i < call->n_input ? call->input[i] : "")))
      rc = oom(x);
  for (size_t i = 0; i < f->n_output && !rc; i++) {
    const char *actual = i < call->n_output && call->output[i] && *call->output[i]
                             ? call->output[i]
                             : fresh(x, f->output[i]);
    if (!actual || ox_map_put(&m, f->output[i], (uintptr_t)actual)) rc = oom(x);
  }
  const char *top = x->top;
  if (!rc && x->origin && x->depth == 0 &&
      !(x->top = ox_arena_printf(x->a, "'%s' (%s%s%s)", call->name ? call->name : "",
                                 call->domain ? call->domain : "",
                                 call->domain && *call->domain ? ":" : "", call->op_type)))
    rc = oom(x);
  if (!rc) {
    x->stack[x->depth++] = f;
    call_ctx cc = {call, f};
    rc = process_nodes(x, b, f->node, f->n_node, f->opset_import, f->n_opset_import, &m, &cc);
    x->depth--;
    if (rc) ox_err_prefix(x->e, "in function '%s'", f->name);
  }
  x->top = top;
  ox_map_free(&m);
  return rc;
}

int ox_rt_expand_functions(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e) {
  const ox_model_proto *mp = s->model->proto;
  *out = g;
  if (mp->n_functions == 0) return OX_OK;
  fx x = {0};
  x.s = s;
  x.a = s->arena;
  x.mp = mp;
  x.e = e;
  const ox_graph *r = expand_subgraph(&x, g, mp->opset_import, mp->n_opset_import, NULL, NULL);
  if (!r) return e->code ? e->code : OX_ENOMEM;
  *out = r;
  return OX_OK;
}

int ox_rt_inline_functions(ox_arena *a, const ox_model_proto *mp, const ox_graph *g,
                           ox_map *origin, const ox_graph **out, ox_err *e) {
  *out = g;
  if (mp->n_functions == 0) return OX_OK;
  fx x = {0};
  x.a = a;
  x.mp = mp;
  x.e = e;
  x.origin = origin;
  const ox_graph *r = expand_subgraph(&x, g, mp->opset_import, mp->n_opset_import, NULL, NULL);
  if (!r) return e->code ? e->code : OX_ENOMEM;
  *out = r;
  return OX_OK;
}
