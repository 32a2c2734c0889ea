/* session.c - session creation: function expansion, value slots, binding of
 * every node (and subgraph node) to a kernel, prepare, lifetimes. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/cores.h"
#include "../opt/opt.h"
#include "../schema/schema.h"
#include "rt.h"

static const char *norm_domain(const char *d) { return !d || ox_is_default_domain(d) ? "" : d; }

static const char *domain_label(const char *d) { return *d ? d : "ai.onnx"; }

static const char *node_label(ox_arena *a, const rt_graph *g, const ox_node *n, size_t idx) {
  const char *self = n->name && *n->name ? ox_arena_printf(a, "node '%s' (%s)", n->name, n->op_type)
                                         : ox_arena_printf(a, "node #%zu (%s)", idx, n->op_type);
  if (!self) return "node";
  if (g->path && *g->path) return ox_arena_printf(a, "%s / %s", g->path, self);
  return self;
}

/* ------------------------------------------------------------ types */

int ox_type_describe(const ox_type *t, char *buf, size_t size) {
  if (!t) return snprintf(buf, size, "(unknown type)");
  const ox_dtype_info *d = ox_dtype_get(t->elem_type);
  const char *en = d ? d->name : "?";
  char inner[256];
  switch (t->kind) {
    case OX_TYPE_TENSOR:
      return snprintf(buf, size, "tensor(%s)", en);
    case OX_TYPE_SPARSE_TENSOR:
      return snprintf(buf, size, "sparse_tensor(%s)", en);
    case OX_TYPE_SEQUENCE:
      ox_type_describe(t->elem, inner, sizeof inner);
      return snprintf(buf, size, "seq(%s)", inner);
    case OX_TYPE_OPTIONAL:
      ox_type_describe(t->elem, inner, sizeof inner);
      return snprintf(buf, size, "optional(%s)", inner);
    case OX_TYPE_MAP:
      ox_type_describe(t->elem, inner, sizeof inner);
      return snprintf(buf, size, "map(%s, %s)", en, inner);
    default:
      return snprintf(buf, size, "(type kind %d)", (int)t->kind);
  }
}

bool ox_value_matches_type(const ox_value *v, const ox_type *t, char *why, size_t n) {
  char want[300], got[300];
  if (!t || t->kind == OX_TYPE_NONE) return true;
  if (!v) {
    if (t->kind == OX_TYPE_OPTIONAL) return true;
    snprintf(why, n, "no value");
    return false;
  }
  ox_type_describe(t, want, sizeof want);
  ox_value_describe(v, got, sizeof got);
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (v->kind != (t->kind == OX_TYPE_TENSOR ? OX_VAL_TENSOR : OX_VAL_SPARSE)) break;
      if (t->has_elem_type && t->elem_type && t->elem_type != v->dtype) break;
      if (t->shape) {
        if (t->shape->n_dim != v->rank) {
          snprintf(why, n, "expected %s of rank %zu, got %s", want, t->shape->n_dim, got);
          return false;
        }
        for (size_t i = 0; i < v->rank; i++)
          if (t->shape->dim[i].has_value && t->shape->dim[i].value != v->dims[i]) {
            snprintf(why, n, "expected dimension %zu to be %lld, got %s", i,
                     (long long)t->shape->dim[i].value, got);
            return false;
          }
      }
      return true;
    case OX_TYPE_SEQUENCE:
      if (v->kind != OX_VAL_SEQUENCE) break;
      return true;
    case OX_TYPE_MAP:
      if (v->kind != OX_VAL_MAP) break;
      return true;
    case OX_TYPE_OPTIONAL:
      if (v->kind == OX_VAL_OPTIONAL) return true;
      /* a plain value for an optional input is accepted */
      return ox_value_matches_type(v, t->elem, why, n);
    default:
      return true;
  }
  snprintf(why, n, "expected %s, got %s", want, got);
  return false;
}

/* ------------------------------------------------------------ constants */

static ox_value *densify(const ox_sparse_tensor *sp, ox_err *e) {
  if (!sp->values || !sp->indices)
    return ox_err_set(e, OX_EMODEL, "sparse tensor without values or indices"), NULL;
  ox_value *vals = ox_value_from_tensor_proto(sp->values, false, e);
  if (!vals) return NULL;
  ox_value *idx = ox_value_from_tensor_proto(sp->indices, false, e);
  if (!idx) {
    ox_value_unref(vals);
    return NULL;
  }
  ox_value *d = ox_tensor_new(vals->dtype, sp->dims, sp->n_dims, e);
  const char *name = sp->values->name ? sp->values->name : "?";
  if (!d) goto fail;
  int64_t nnz = vals->numel;
  size_t es = ox_value_elem_size(vals->dtype);
  if (idx->dtype != OX_INT64 || vals->rank != 1 ||
      !((idx->rank == 1 && idx->dims[0] == nnz) ||
        (idx->rank == 2 && idx->dims[0] == nnz && idx->dims[1] == (int64_t)sp->n_dims))) {
    ox_err_set(e, OX_EMODEL, "sparse tensor '%s': indices must be int64 [NNZ] or [NNZ, rank]",
               name);
    goto fail;
  }
  const int64_t *ix = idx->data;
  for (int64_t k = 0; k < nnz; k++) {
    int64_t lin = 0;
    if (idx->rank == 1) {
      lin = ix[k];
    } else {
      for (size_t r = 0; r < sp->n_dims; r++) {
        int64_t c = ix[k * (int64_t)sp->n_dims + (int64_t)r];
        if (c < 0 || c >= sp->dims[r]) {
          lin = -1;
          break;
        }
        lin = lin * sp->dims[r] + c;
      }
    }
    if (lin < 0 || lin >= d->numel) {
      ox_err_set(e, OX_EMODEL, "sparse tensor '%s': index %lld out of range", name, (long long)k);
      goto fail;
    }
    if (vals->dtype == OX_STRING) {
      char **dd = d->data;
      dd[lin] = strdup(((char **)vals->data)[k] ? ((char **)vals->data)[k] : "");
      if (!dd[lin]) {
        ox_err_set(e, OX_ENOMEM, "out of memory");
        goto fail;
      }
    } else {
      memcpy((char *)d->data + (size_t)lin * es, (char *)vals->data + (size_t)k * es, es);
    }
  }
  ox_value_unref(vals);
  ox_value_unref(idx);
  return d;
fail:
  ox_value_unref(vals);
  ox_value_unref(idx);
  ox_value_unref(d);
  return NULL;
}

/* ------------------------------------------------------------ slots */

static int32_t add_slot(ox_session *s, rt_graph *g, const char *name, ox_err *e) {
  rt_slot *sl = OX_VEC_PUSH(s->arena, g->slots, g->n_slots);
  if (!sl || ox_map_put(&g->names, name, g->n_slots)) {
    ox_err_set(e, OX_ENOMEM, "out of memory preparing the session");
    return -1;
  }
  sl->name = name;
  sl->import = -1;
  sl->producer = -1;
  sl->last_use = -1;
  sl->cat = -1;
  return (int32_t)(g->n_slots - 1);
}

static int32_t find_slot(const rt_graph *g, const char *name) {
  uintptr_t v;
  return ox_map_get(&g->names, name, &v) ? (int32_t)(v - 1) : -1;
}

/* Initializers of this many payload bytes or more become values when their
 * first reader is prepared (rt_slot.pending). */
#define LAZY_CONSTANT_BYTES ((size_t)64 << 10)

static int materialise(rt_slot *sl, ox_err *e) {
  const ox_tensor *t = sl->pending;
  if (!t) return OX_OK;
  sl->pending = NULL;
  sl->cst = ox_value_from_tensor_proto(t, true, e);
  return sl->cst ? OX_OK : ox_err_prefix(e, "initializer '%s'", t->name);
}

/* Resolves a name used in g: local slot, or an import from enclosing graphs
 * (the owning node of the parent records the use). -1 if undefined. */
static int32_t resolve(ox_session *s, rt_graph *g, const char *name, ox_err *e) {
  int32_t k = find_slot(g, name);
  if (k >= 0 || !g->parent) return k;
  int32_t p = resolve(s, g->parent, name, e);
  if (p < 0) return p;
  rt_graph *pg = g->parent;
  if (pg->slots[p].producer >= pg->cur_node) return -1; /* produced later in the parent */
  k = add_slot(s, g, name, e);
  if (k < 0) return -2;
  g->slots[k].import = p;
  g->slots[k].dtype = pg->slots[p].dtype;
  g->slots[k].type = pg->slots[p].type;
  if (pg->slots[p].last_use < pg->cur_node) pg->slots[p].last_use = pg->cur_node;
  return k;
}

static void note_type(rt_graph *g, const ox_value_info *vi) {
  if (!vi->name || !vi->type) return;
  int32_t k = find_slot(g, vi->name);
  if (k < 0) return;
  g->slots[k].type = vi->type;
  if (vi->type->kind == OX_TYPE_TENSOR && vi->type->has_elem_type)
    g->slots[k].dtype = vi->type->elem_type;
}

static int prepare_graph(ox_session *s, rt_graph *g, ox_err *e);

static rt_graph *new_graph(ox_session *s, const ox_graph *src, rt_graph *parent, rt_node *owner,
                           const char *path, ox_err *e) {
  if (s->n_graphs == s->cap_graphs) {
    size_t cap = s->cap_graphs ? s->cap_graphs * 2 : 8;
    rt_graph **ng = realloc(s->graphs, cap * sizeof *ng);
    if (!ng) return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
    s->graphs = ng;
    s->cap_graphs = cap;
  }
  rt_graph *g = calloc(1, sizeof *g);
  if (!g) return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
  g->id = s->n_graphs;
  s->graphs[s->n_graphs++] = g;
  ox_map_init(&g->names);
  g->g = src;
  g->parent = parent;
  g->owner = owner;
  g->path = path;
  for (size_t i = 0; i < s->n_notes; i++)
    if (s->notes[i].g == src) g->node_opsets = s->notes[i].opsets;
  return g;
}

static int64_t node_opset(ox_session *s, const rt_graph *g, size_t i, const char *domain) {
  if (g->node_opsets) return g->node_opsets[i];
  const ox_model_proto *mp = s->model->proto;
  int64_t v = ox_opset_version(mp->opset_import, mp->n_opset_import, domain);
  if (v < 0 && !*domain && mp->n_opset_import == 0) v = 1;
  return v;
}

/* Checks the known element types of a node's inputs against the schema's
 * type constraints: a type the operator does not define at this version is
 * an error at session creation. Only tensor types are checked. */
static int check_input_types(const rt_node *rn, const ox_schema *sch, const char *domain,
                             int64_t opset, const int32_t *in_dt, ox_err *e) {
  const ox_node *n = rn->node;
  for (size_t i = 0; i < n->n_input && sch->n_inputs; i++) {
    if (!in_dt[i]) continue;
    const ox_formal *f = &sch->inputs[i < sch->n_inputs ? i : sch->n_inputs - 1];
    if (i >= sch->n_inputs && f->option != OX_PARAM_VARIADIC) break;
    const ox_dtype_info *di = ox_dtype_get(in_dt[i]);
    if (!di || !f->type_str) continue;
    char want[64];
    snprintf(want, sizeof want, "tensor(%s)", di->name);
    const char *const *allowed = NULL;
    const char *direct[2] = {f->type_str, NULL};
    for (size_t c = 0; c < sch->n_constraints; c++)
      if (strcmp(sch->constraints[c].name, f->type_str) == 0) allowed = sch->constraints[c].allowed;
    if (!allowed) allowed = direct;
    bool any_tensor = false, ok = false;
    for (const char *const *a = allowed; *a; a++) {
      if (strncmp(*a, "tensor(", 7) == 0) any_tensor = true;
      if (strcmp(*a, want) == 0) ok = true;
    }
    if (any_tensor && !ok) {
      int pl = (int)strlen(rn->path) - 1;
      return ox_err_set(e, OX_EUNSUPPORTED, "%.*s, %s opset %lld): no kernel for %s (input %zu)",
                        pl, rn->path, *domain ? domain : "ai.onnx", (long long)opset, want, i);
    }
  }
  return OX_OK;
}

/* Ops whose outputs are not a function of their inputs: never folded. */
static bool is_random_op(const char *op) {
  static const char *const ops[] = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Bernoulli",    "Multinomial",   "Dropout"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

/* A node of the default domain whose inputs are all constants (initializers
 * that no caller can override, or outputs of folded nodes), with no subgraph
 * and no randomness: it gives the same outputs on every run, so it runs once
 * here and its outputs become constants of the graph. Constant nodes (no
 * inputs) are folded the same way. Consumers then see these values as
 * constant inputs at prepare time (weights get packed once). */
static bool foldable(const rt_node *rn, const char *domain, const char *op, ox_value *const *csts) {
  const ox_node *n = rn->node;
  if (*domain || rn->n_subs || is_random_op(op)) return false;
  if (strcmp(op, "Constant") == 0) return n->n_input == 0;
  size_t present = 0;
  for (size_t i = 0; i < n->n_input; i++) {
    if (rn->in[i] < 0) continue;
    if (!csts[i]) return false;
    present++;
  }
  return present > 0;
}

/* Runs a foldable node once. If the kernel fails or leaves an output unset,
 * nothing is folded and the node runs (and reports) at run time as usual. */
static int fold_node(ox_session *s, rt_graph *g, rt_node *rn, ox_value *const *csts) {
  const ox_node *n = rn->node;
  ox_err fe = {0};
  ox_value **in = calloc(n->n_input + n->n_output + 1, sizeof *in);
  if (!in) return OX_OK; /* not folded: the node runs at run time */
  ox_value **out = in + n->n_input;
  ox_kctx ctx = {.s = s, .run = NULL, .g = g, .n = rn, .in = in, .out = out, .e = &fe};
  for (size_t j = 0; j < n->n_input; j++) in[j] = rn->in[j] >= 0 ? csts[j] : NULL;
  for (size_t j = 0; j < n->n_output; j++)
    rn->wanted[j] = rn->out[j] >= 0; /* the real use is known later; make every output */
  bool ok = rn->k->run(&ctx, rn->state) == OX_OK;
  for (size_t j = 0; ok && j < n->n_output; j++)
    if (rn->out[j] >= 0 && !out[j]) ok = false;
  for (size_t j = 0; j < n->n_output; j++) {
    if (ok && rn->out[j] >= 0)
      g->slots[rn->out[j]].cst = out[j];
    else
      ox_value_unref(out[j]);
  }
  free(in);
  rn->folded = ok;
  return OX_OK;
}

static int prepare_node(ox_session *s, rt_graph *g, size_t idx, ox_err *e) {
  rt_node *rn = &g->nodes[idx];
  const ox_node *n = rn->node;
  ox_arena *a = s->arena;
  const char *op = n->op_type ? n->op_type : "";
  const char *domain = norm_domain(n->domain);
  g->cur_node = (int64_t)idx;
  rn->path = node_label(a, g, n, idx);

  /* inputs */
  rn->in = ox_arena_calloc(a, n->n_input + 1, sizeof *rn->in);
  rn->out = ox_arena_calloc(a, n->n_output + 1, sizeof *rn->out);
  rn->wanted = ox_arena_calloc(a, n->n_output + 1, sizeof *rn->wanted);
  if (n->n_input > g->max_in) g->max_in = n->n_input;
  if (n->n_output > g->max_out) g->max_out = n->n_output;
  int32_t *in_dt = ox_arena_calloc(a, n->n_input + 1, sizeof *in_dt);
  int32_t *out_dt = ox_arena_calloc(a, n->n_output + 1, sizeof *out_dt);
  ox_value **csts = ox_arena_calloc(a, n->n_input + 1, sizeof *csts);
  int64_t *ids = ox_arena_calloc(a, n->n_input + 1, sizeof *ids);
  rt_graph **cst_graph = ox_arena_calloc(a, n->n_input + 1, sizeof *cst_graph);
  if (!rn->in || !rn->out || !rn->wanted || !in_dt || !out_dt || !csts || !ids || !cst_graph)
    return ox_err_set(e, OX_ENOMEM, "out of memory preparing %s", rn->path);
  for (size_t i = 0; i < n->n_input; i++) {
    const char *nm = n->input[i];
    ids[i] = -1;
    if (!nm || !*nm) {
      rn->in[i] = -1;
      continue;
    }
    int32_t k = resolve(s, g, nm, e);
    if (k == -2) return e->code;
    if (k < 0 || g->slots[k].producer >= (int64_t)idx)
      return ox_err_set(e, OX_EMODEL, "%s: input '%s' is not defined before it is used", rn->path,
                        nm);
    rn->in[i] = k;
    if (g->slots[k].last_use < (int64_t)idx) g->slots[k].last_use = (int64_t)idx;
    in_dt[i] = g->slots[k].dtype;
    /* constants: follow imports up to the defining graph */
    rt_graph *cg = g;
    int32_t ck = k;
    while (cg->slots[ck].import >= 0) {
      ck = cg->slots[ck].import;
      cg = cg->parent;
    }
    bool fixed = !cg->slots[ck].is_input || (s->defaults_const && cg == s->main);
    if (fixed && (cg->slots[ck].cst || cg->slots[ck].pending)) {
      cst_graph[i] = cg;
      /* graph index in the high half: widened first, since size_t is 32
       * bits in WebAssembly (a shift by its width is undefined; clang made
       * it garbage there, and a subgraph's constants then indexed far out
       * of their graph's slots) */
      ids[i] = (int64_t)((uint64_t)cg->id << 32 | (uint32_t)ck);
    }
  }
  for (size_t i = 0; i < n->n_output; i++) {
    const char *nm = n->output[i];
    if (!nm || !*nm) {
      rn->out[i] = -1;
      continue;
    }
    rn->out[i] = find_slot(g, nm);
    out_dt[i] = g->slots[rn->out[i]].dtype;
  }

  /* subgraphs */
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *at = &n->attribute[i];
    size_t ng = at->g ? 1 : at->n_graphs;
    for (size_t j = 0; j < ng; j++) {
      const ox_graph *sg = at->g ? at->g : &at->graphs[j];
      const char *path = ox_arena_printf(a, "%s / graph '%s'", rn->path, at->name ? at->name : "");
      rt_graph *child = new_graph(s, sg, g, rn, path, e);
      if (!child) return e->code;
      rt_graph **subs = OX_VEC_PUSH(a, rn->subs, rn->n_subs);
      if (!subs) return ox_err_set(e, OX_ENOMEM, "out of memory");
      *subs = child;
      size_t n_src = rn->n_subs - 1;
      const ox_graph **src = OX_VEC_PUSH(a, rn->sub_src, n_src);
      if (!src) return ox_err_set(e, OX_ENOMEM, "out of memory");
      *src = sg;
      if (prepare_graph(s, child, e)) return e->code;
      g->cur_node = (int64_t)idx;
    }
  }

  /* binding */
  int64_t opset = node_opset(s, g, idx, domain);
  if (opset < 0)
    return ox_err_set(e, OX_EMODEL, "%s: domain '%s' is not imported by the model", rn->path,
                      domain_label(domain));
  /* the schema's since_version; without a schema (custom domains) the
   * imported opset finds the same kernel, by the registry's range rule */
  const ox_schema *sch = ox_schema_lookup(domain, op, opset);
  int64_t since = sch ? sch->since_version : opset;
  rn->k = ox_custom_ops_find(s->opts.custom_ops, domain, op, since);
  if (!rn->k) rn->k = s->opts.kernels->find(domain, op, since);
  if (!rn->k) {
    int pl = (int)strlen(rn->path) - 1; /* the path ends with ')' */
    if (s->opts.kernels->has_op(domain, op))
      return ox_err_set(e, OX_EUNSUPPORTED, "%.*s, %s opset %lld): no kernel for this version", pl,
                        rn->path, domain_label(domain), (long long)opset);
    return ox_err_set(e, OX_EUNSUPPORTED, "%.*s, %s opset %lld): no kernel for operator %s", pl,
                      rn->path, domain_label(domain), (long long)opset, op);
  }
  /* constant inputs, made into values now unless the kernel reads them
   * only through shared state (ox_kernel_def.lazy_consts) */
  for (size_t i = 0; i < n->n_input; i++) {
    if (!cst_graph[i]) continue;
    rt_slot *sl = &cst_graph[i]->slots[ids[i] & 0xffffffff];
    if (!(i < 32 && (rn->k->lazy_consts >> i & 1)) && materialise(sl, e)) return e->code;
    csts[i] = sl->cst;
    if (csts[i] && !in_dt[i] && csts[i]->kind == OX_VAL_TENSOR) in_dt[i] = csts[i]->dtype;
  }
  if (sch && check_input_types(rn, sch, domain, opset, in_dt, e)) return e->code;
  ox_kinfo *ki = &rn->info;
  ki->node = n;
  ki->domain = domain;
  ki->opset = opset;
  ki->since_version = since;
  ki->n_inputs = n->n_input;
  ki->n_outputs = n->n_output;
  ki->input_dtypes = in_dt;
  ki->output_dtypes = out_dt;
  ki->const_inputs = csts;
  ki->const_ids = ids;
  ki->arena = a;
  ki->pool = s->pool;
  ki->session = s;
  ki->def = rn->k;
  ki->consumed = ox_arena_calloc(a, n->n_input + 1, sizeof *ki->consumed);
  if (!ki->consumed) return ox_err_set(e, OX_ENOMEM, "out of memory preparing %s", rn->path);
  if (rn->k->prepare) {
    ox_err pe = {0};
    if (rn->k->prepare(ki, &rn->state, &pe)) {
      /* a state made before the failure is the kernel's to release */
      if (rn->state && rn->k->release) rn->k->release(rn->state);
      rn->state = NULL;
      if (!pe.code) pe.code = OX_EMODEL;
      /* kernels name the node as "node 'NAME' (OP): ..."; the session's
       * label adds the index (for unnamed nodes) and the subgraph path */
      const char *msg = pe.msg, *cut = strstr(msg, "): ");
      if (!strncmp(msg, "node '", 6) && cut) msg = cut + 3;
      ox_err_set(e, pe.code, "%s", msg);
      if (msg != pe.msg || strncmp(msg, "node", 4) != 0) ox_err_prefix(e, "%s", rn->path);
      return e->code;
    }
  }
  rn->prepared = true;
  /* Constant nodes always; every other constant computation from level 1 */
  if (foldable(rn, domain, op, csts) && (s->fold_constants || strcmp(op, "Constant") == 0))
    return fold_node(s, g, rn, csts);
  return OX_OK;
}

/* Constants that every node reading them consumed at prepare
 * (ox_kinfo.consumed: weights packed into the kernel's state) are freed as
 * soon as their last reader is prepared, so that a packed matrix is not held
 * twice, not even during creation. g->cst_readers counts, per slot, the
 * nodes of g still to consume it; graphs with subgraphs (which may import
 * any constant) keep theirs. Kept too: graph inputs (a run may override
 * them), graph outputs, constants a folded node reads. */
static bool has_graph_attr(const ox_node *n) {
  for (size_t k = 0; k < n->n_attribute; k++)
    if (n->attribute[k].g || n->attribute[k].n_graphs) return true;
  return false;
}

static int count_const_readers(ox_session *s, rt_graph *g, ox_err *e) {
  const ox_graph *src = g->g;
  g->cst_readers = NULL;
  for (size_t i = 0; i < src->n_node; i++)
    if (has_graph_attr(&src->node[i])) return OX_OK;
  g->cst_readers = ox_arena_calloc(s->arena, g->n_slots + 1, sizeof *g->cst_readers);
  if (!g->cst_readers) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < src->n_node; i++)
    for (size_t j = 0; j < src->node[i].n_input; j++) {
      const char *nm = src->node[i].input[j];
      int32_t k = nm && *nm ? find_slot(g, nm) : -1;
      if (k >= 0) g->cst_readers[k]++;
    }
  for (size_t i = 0; i < src->n_output; i++) {
    int32_t k = src->output[i].name ? find_slot(g, src->output[i].name) : -1;
    if (k >= 0) g->cst_readers[k] = -1; /* never */
  }
  return OX_OK;
}

static void *find_shared(const ox_session *s, const ox_kinfo *info, size_t i, const char *kind) {
  int64_t id = i < info->n_inputs && info->const_ids ? info->const_ids[i] : -1;
  for (size_t k = 0; id >= 0 && k < s->n_shared; k++)
    if (s->shared[k].id == id && strcmp(s->shared[k].kind, kind) == 0) return s->shared[k].obj;
  return NULL;
}

static rt_slot *const_slot(const ox_kinfo *info, size_t i) {
  const ox_session *s = info->session;
  int64_t id = i < info->n_inputs && info->const_ids ? info->const_ids[i] : -1;
  if (id < 0 || (size_t)(id >> 32) >= s->n_graphs) return NULL;
  return &s->graphs[id >> 32]->slots[id & 0xffffffff];
}

const ox_tensor *ox_kinfo_const_proto(const ox_kinfo *info, size_t i) {
  const rt_slot *sl = const_slot(info, i);
  return sl ? sl->pending : NULL;
}

ox_value *ox_kinfo_const(const ox_kinfo *info, size_t i, ox_err *e) {
  rt_slot *sl = const_slot(info, i);
  if (!sl) return NULL;
  if (materialise(sl, e)) return NULL;
  /* the node's own view of its constants follows */
  ((ox_value **)info->const_inputs)[i] = sl->cst;
  return sl->cst;
}

void *ox_kinfo_shared(const ox_kinfo *info, size_t i, const char *kind) {
  return find_shared(info->session, info, i, kind);
}

void *ox_kctx_shared(const ox_kctx *c, size_t i, const char *kind) {
  return find_shared(c->s, &c->n->info, i, kind);
}

int ox_kinfo_share(const ox_kinfo *info, size_t i, const char *kind, void *obj,
                   void (*release)(void *), ox_err *e) {
  ox_session *s = info->session;
  int64_t id = i < info->n_inputs && info->const_ids ? info->const_ids[i] : -1;
  if (id < 0) {
    release(obj);
    return ox_err_set(e, OX_EINVAL, "shared state for an input that is no constant");
  }
  if (s->n_shared == s->cap_shared) {
    size_t cap = s->cap_shared ? 2 * s->cap_shared : 8;
    struct rt_shared *grown = realloc(s->shared, cap * sizeof *grown);
    if (!grown) {
      release(obj);
      return ox_err_set(e, OX_ENOMEM, "out of memory");
    }
    s->shared = grown;
    s->cap_shared = cap;
  }
  s->shared[s->n_shared++] = (struct rt_shared){id, kind, obj, release};
  return OX_OK;
}

static void release_consumed(rt_graph *g, const rt_node *rn) {
  if (!g->cst_readers) return;
  for (size_t j = 0; j < rn->node->n_input; j++) {
    int32_t k = rn->in[j];
    if (k < 0 || g->cst_readers[k] <= 0) continue;
    rt_slot *sl = &g->slots[k];
    bool consumed = rn->prepared && !rn->folded && rn->info.consumed && rn->info.consumed[j];
    if (!consumed) {
      g->cst_readers[k] = -1; /* a reader that needs it at run time */
      continue;
    }
    if (--g->cst_readers[k] == 0 && !sl->is_input && sl->import < 0)
      sl->pending = NULL; /* read through shared state only: never made */
    if (g->cst_readers[k] == 0 && sl->cst && !sl->is_input && sl->import < 0) {
      ox_value_unref(sl->cst);
      sl->cst = NULL;
    }
  }
}

static int prepare_graph(ox_session *s, rt_graph *g, ox_err *e) {
  const ox_graph *src = g->g;
  /* 1. every name defined here */
  for (size_t i = 0; i < src->n_input; i++) {
    const char *nm = src->input[i].name;
    if (!nm || !*nm) return ox_err_set(e, OX_EMODEL, "%sgraph input %zu has no name", g->path, i);
    if (find_slot(g, nm) >= 0)
      return ox_err_set(e, OX_EMODEL, "%s%sgraph input '%s' is declared twice", g->path,
                        *g->path ? ": " : "", nm);
    int32_t k = add_slot(s, g, nm, e);
    if (k < 0) return e->code;
    g->slots[k].is_input = true;
  }
  for (size_t i = 0; i < src->n_initializer; i++) {
    const ox_tensor *t = &src->initializer[i];
    if (!t->name) return ox_err_set(e, OX_EMODEL, "initializer %zu has no name", i);
    int32_t k = find_slot(g, t->name);
    if (k < 0) k = add_slot(s, g, t->name, e);
    if (k < 0) return e->code;
    if (g->slots[k].cst || g->slots[k].pending)
      return ox_err_set(e, OX_EMODEL, "initializer '%s' is duplicated", t->name);
    g->slots[k].dtype = t->data_type;
    if (!g->slots[k].is_input && ox_tensor_payload(t).size >= LAZY_CONSTANT_BYTES) {
      g->slots[k].pending = t;
      continue;
    }
    g->slots[k].cst = ox_value_from_tensor_proto(t, true, e);
    if (!g->slots[k].cst) return ox_err_prefix(e, "initializer '%s'", t->name);
  }
  for (size_t i = 0; i < src->n_sparse_initializer; i++) {
    const ox_sparse_tensor *sp = &src->sparse_initializer[i];
    const char *nm = sp->values ? sp->values->name : NULL;
    if (!nm) return ox_err_set(e, OX_EMODEL, "sparse initializer %zu has no name", i);
    int32_t k = find_slot(g, nm);
    if (k < 0) k = add_slot(s, g, nm, e);
    if (k < 0) return e->code;
    g->slots[k].cst = densify(sp, e);
    if (!g->slots[k].cst) return ox_err_prefix(e, "sparse initializer '%s'", nm);
    g->slots[k].dtype = g->slots[k].cst->dtype;
  }
  g->nodes = calloc(src->n_node + 1, sizeof *g->nodes);
  if (!g->nodes) return ox_err_set(e, OX_ENOMEM, "out of memory");
  g->n_nodes = src->n_node;
  for (size_t i = 0; i < src->n_node; i++) {
    const ox_node *n = &src->node[i];
    g->nodes[i].node = n;
    if (!n->op_type) return ox_err_set(e, OX_EMODEL, "%snode %zu has no op_type", g->path, i);
    for (size_t j = 0; j < n->n_output; j++) {
      const char *nm = n->output[j];
      if (!nm || !*nm) continue;
      if (find_slot(g, nm) >= 0)
        return ox_err_set(e, OX_EMODEL, "%s: value '%s' is defined twice",
                          node_label(s->arena, g, n, i), nm);
      int32_t k = add_slot(s, g, nm, e);
      if (k < 0) return e->code;
      g->slots[k].producer = (int64_t)i;
    }
  }
  for (size_t i = 0; i < src->n_input; i++) note_type(g, &src->input[i]);
  for (size_t i = 0; i < src->n_value_info; i++) note_type(g, &src->value_info[i]);
  for (size_t i = 0; i < src->n_output; i++) note_type(g, &src->output[i]);
  for (size_t i = 0; i < src->n_initializer; i++) {
    int32_t k = find_slot(g, src->initializer[i].name);
    g->slots[k].dtype = src->initializer[i].data_type;
  }

  /* 2. nodes, in order */
  if (count_const_readers(s, g, e)) return e->code;
  for (size_t i = 0; i < src->n_node; i++) {
    if (prepare_node(s, g, i, e)) return e->code;
    release_consumed(g, &g->nodes[i]);
  }
  /* constants no node read: graph outputs, or unused */
  for (size_t k = 0; k < g->n_slots; k++)
    if (materialise(&g->slots[k], e)) return e->code;
  g->cur_node = (int64_t)src->n_node;

  /* 3. graph inputs and outputs */
  g->n_in = src->n_input;
  g->n_out = src->n_output;
  g->in = ox_arena_calloc(s->arena, g->n_in + 1, sizeof *g->in);
  g->out = ox_arena_calloc(s->arena, g->n_out + 1, sizeof *g->out);
  if (!g->in || !g->out) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < g->n_in; i++) g->in[i] = find_slot(g, src->input[i].name);
  for (size_t i = 0; i < g->n_out; i++) {
    const char *nm = src->output[i].name;
    int32_t k = nm ? resolve(s, g, nm, e) : -1;
    if (k == -2) return e->code;
    if (k < 0)
      return ox_err_set(e, OX_EMODEL, "%s%sgraph output '%s' is not produced", g->path,
                        *g->path ? ": " : "", nm ? nm : "");
    g->out[i] = k;
    g->slots[k].last_use = INT64_MAX;
  }

  /* 4. releases: after the last reader, or right after the producer */
  for (size_t k = 0; k < g->n_slots; k++) {
    rt_slot *sl = &g->slots[k];
    int64_t at = sl->last_use;
    if (at == INT64_MAX) continue;
    if (at < 0) at = sl->producer;
    if (at < 0) continue; /* unused input/constant: dropped at the end */
    rt_node *rn = &g->nodes[at];
    int32_t *r = OX_VEC_PUSH(s->arena, rn->rel, rn->n_rel);
    if (!r) return ox_err_set(e, OX_ENOMEM, "out of memory");
    *r = (int32_t)k;
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    rt_node *rn = &g->nodes[i];
    for (size_t j = 0; j < rn->node->n_output; j++)
      rn->wanted[j] = rn->out[j] >= 0 && g->slots[rn->out[j]].last_use >= 0;
  }
  return ox_rt_plan_concats(s, g, e);
}

/* ------------------------------------------------------------ session */

/* The graph passes of src/opt/ over the main graph (one call; the table in
 * src/opt/passes.c says which run), and whether this session folds
 * constants (the table's constant_folding entry). The disabled names are
 * copied: a plain session made later reads them again. */
static int optimize(ox_session *s, ox_err *e) {
  const ox_model_proto *mp = s->model->proto;
  size_t nd = s->opts.n_disabled_passes;
  const char **names = ox_arena_calloc(s->arena, nd + 1, sizeof *names);
  if (!names) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < nd; i++)
    if (s->opts.disabled_passes[i] &&
        !(names[i] = ox_arena_strdup(s->arena, s->opts.disabled_passes[i])))
      return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->opts.disabled_passes = names;
  const int64_t *noted = NULL;
  for (size_t i = 0; i < s->n_notes; i++)
    if (s->notes[i].g == s->graph) noted = s->notes[i].opsets;
  ox_opt_request r = {.level = s->opts.optimization_level,
                      .disabled = names,
                      .n_disabled = nd,
                      .quant_fusion_off = s->opts.quant_fusion_off,
                      .low_bit_int8 = s->opts.low_bit_int8,
                      .inputs_const = s->defaults_const,
                      .node_opsets = noted,
                      .imports = mp->opset_import,
                      .n_imports = mp->n_opset_import};
  s->fold_constants = ox_opt_pass_enabled(&r, ox_opt_pass_find("constant_folding"));
  const ox_graph *g = NULL;
  const int64_t *opsets = NULL;
  if (ox_opt_run(&r, s->arena, s->graph, &g, &opsets, e)) return e->code;
  if (g != s->graph) {
    rt_opset_note *note = OX_VEC_PUSH(s->arena, s->notes, s->n_notes);
    if (!note) return ox_err_set(e, OX_ENOMEM, "out of memory fusing the graph");
    note->g = g;
    note->opsets = (int64_t *)opsets;
    s->graph = g;
  }
  return OX_OK;
}

/* A pool of `threads` with the session's spin time and pinning. */
static ox_thread_pool *new_pool(const ox_session *s, int threads, ox_err *e) {
  ox_pool_opts po = {threads, s->opts.spin_us == 0 ? -1 : s->opts.spin_us < 0 ? 0 : s->opts.spin_us,
                      s->opts.pin_threads};
  return ox_thread_pool_create(&po, e);
}

int ox_session_create(const ox_model *m, const ox_session_opts *opts, ox_session **out, ox_err *e) {
  *out = NULL;
  if (!m || !m->proto || !m->proto->graph)
    return ox_err_set(e, OX_EINVAL, "the model has no graph");
  if (!opts || !opts->kernels)
    return ox_err_set(e, OX_EINVAL, "ox_session_create: no kernel registry (ox_session_opts.kernels)");
  ox_session *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->arena = ox_arena_new();
  if (!s->arena) {
    free(s);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  s->model = m;
  if (opts) s->opts = *opts;
  s->defaults_const = s->opts.optimization_level > 0 && !s->opts.inputs_overridable;
  int threads = s->opts.threads;
  if (threads <= 0) threads = ox_cores_default_threads(); /* physical cores */
  /* folding at creation allocates too: the same limit as a run */
  ox_mem_budget budget = {.limit = s->opts.max_memory}, *prev_budget = NULL;
  if (budget.limit) prev_budget = ox_mem_budget_enter(&budget);
  if (pthread_mutex_init(&s->mu, NULL)) {
    if (budget.limit) ox_mem_budget_leave(prev_budget);
    ox_arena_free(s->arena);
    free(s);
    return ox_err_set(e, OX_ENOMEM, "cannot create the session's lock");
  }
  if (s->opts.env) {
    s->env = s->opts.env;
    s->pool = ox_env_pool(s->env);
  } else if (threads > 1) {
    s->pool = new_pool(s, threads, e);
    if (!s->pool) goto fail;
  }
  if (ox_rt_expand_functions(s, m->proto->graph, &s->graph, e)) goto fail;
  if (ox_rt_expand_gradients(s, s->graph, &s->graph, e)) goto fail;
  s->n_model_inputs = s->graph->n_input;
  if (optimize(s, e)) goto fail;
  s->main = new_graph(s, s->graph, NULL, NULL, "", e);
  if (!s->main || prepare_graph(s, s->main, e)) goto fail;
  if (s->opts.parallel_branches && ox_rt_plan_levels(s, s->main, e)) goto fail;
  if (s->opts.log && s->opts.log_level <= 1) {
    size_t nodes = 0, folded = 0;
    for (size_t i = 0; i < s->n_graphs; i++) {
      nodes += s->graphs[i]->n_nodes;
      for (size_t j = 0; j < s->graphs[i]->n_nodes; j++) folded += s->graphs[i]->nodes[j].folded;
    }
    ox_session_log(s, 1,
                   "session: %zu nodes in the model's main graph, %zu after fusion; %zu graphs, "
                   "%zu nodes in all, %zu computed at creation; %d threads",
                   m->proto->graph->n_node, s->graph->n_node, s->n_graphs, nodes, folded,
                   ox_thread_pool_size(s->pool));
  }
  if (budget.limit) ox_mem_budget_leave(prev_budget);
  *out = s;
  return OX_OK;
fail:
  if (budget.limit) ox_mem_budget_leave(prev_budget);
  ox_session_free(s);
  return e ? e->code : OX_EMODEL;
}

const ox_kernel_def *ox_custom_ops_find(const ox_custom_ops *ops, const char *domain,
                                        const char *op, int64_t since) {
  for (size_t i = 0; ops && i < ops->n; i++) {
    const ox_kernel_def *d = ops->defs[i];
    if (strcmp(d->domain, domain) == 0 && strcmp(d->op, op) == 0 && since >= d->since_min &&
        since <= d->since_max)
      return d;
  }
  return NULL;
}

void ox_session_log(const ox_session *s, int level, const char *fmt, ...) {
  if (!s->opts.log || level < s->opts.log_level) return;
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  s->opts.log(s->opts.log_user, level, msg);
}

void ox_session_free(ox_session *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n_graphs; i++) {
    rt_graph *g = s->graphs[i];
    for (size_t k = 0; k < g->n_slots; k++) ox_value_unref(g->slots[k].cst);
    for (size_t j = 0; j < g->n_nodes; j++) {
      rt_node *rn = &g->nodes[j];
      if (rn->prepared && rn->k && rn->k->release) rn->k->release(rn->state);
    }
    free(g->nodes);
    ox_map_free(&g->names);
    free(g);
  }
  free(s->graphs);
  /* after the kernels: they may read shared state while releasing theirs */
  for (size_t k = 0; k < s->n_shared; k++) s->shared[k].release(s->shared[k].obj);
  free(s->shared);
  ox_session_free(s->plain);
  while (s->free_runs) {
    rt_run *r = s->free_runs;
    s->free_runs = r->next;
    ox_rt_run_free(r);
  }
  for (size_t i = 0; i < s->n_run_pools; i++) ox_thread_pool_free(s->run_pools[i]);
  free(s->run_pools);
  if (!s->env) ox_thread_pool_free(s->pool);
  pthread_mutex_destroy(&s->mu);
  ox_arena_free(s->arena);
  free(s);
}

int ox_session_threads(const ox_session *s) { return ox_thread_pool_size(s->pool); }

const ox_model *ox_session_model(const ox_session *s) { return s->model; }

/* The pool for a run asking for `threads` (see ox_run_opts). */
static int run_pool(ox_session *s, int threads, ox_thread_pool **out, ox_err *e) {
  *out = s->pool;
  if (threads <= 0 || threads == ox_thread_pool_size(s->pool)) return OX_OK;
  *out = NULL;
  if (threads == 1) return OX_OK;
  int rc = OX_OK;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->n_run_pools && !*out; i++)
    if (ox_thread_pool_size(s->run_pools[i]) == threads) *out = s->run_pools[i];
  if (!*out) {
    ox_thread_pool **np = realloc(s->run_pools, (s->n_run_pools + 1) * sizeof *np);
    ox_thread_pool *p = np ? new_pool(s, threads, e) : NULL;
    if (np) s->run_pools = np;
    if (p)
      *out = s->run_pools[s->n_run_pools++] = p;
    else
      rc = np ? (e ? e->code : OX_ENOMEM) : ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

/* A run from the free list, or a new one. */
static rt_run *run_take(ox_session *s) {
  pthread_mutex_lock(&s->mu);
  rt_run *r = s->free_runs;
  if (r) s->free_runs = r->next;
  pthread_mutex_unlock(&s->mu);
  if (!r) r = calloc(1, sizeof *r);
  if (r) r->s = s;
  return r;
}

static void run_give(ox_session *s, rt_run *r) {
  r->ro = NULL;
  r->pool = NULL;
  pthread_mutex_lock(&s->mu);
  r->next = s->free_runs;
  s->free_runs = r;
  pthread_mutex_unlock(&s->mu);
}

/* The session prepared without taking defaults as constants (made once,
 * under the lock, by the first run that overrides an initializer). */
static ox_session *plain_session(ox_session *s, ox_err *e) {
  pthread_mutex_lock(&s->mu);
  if (!s->plain) {
    ox_session_log(s, 2,
                   "a run overrides an initializer that the plan took as a constant: "
                   "preparing a second plan without that assumption");
    ox_session_opts o = s->opts;
    o.inputs_overridable = true;
    if (ox_session_create(s->model, &o, &s->plain, e)) {
      ox_err_prefix(e, "preparing the session for overridden initializers");
      s->plain = NULL;
    }
  }
  ox_session *p = s->plain;
  pthread_mutex_unlock(&s->mu);
  return p;
}

size_t ox_session_n_inputs(const ox_session *s) { return s->n_model_inputs; }
const char *ox_session_input_name(const ox_session *s, size_t i) {
  return i < s->n_model_inputs ? s->graph->input[i].name : NULL;
}
const ox_type *ox_session_input_type(const ox_session *s, size_t i) {
  return i < s->n_model_inputs ? s->graph->input[i].type : NULL;
}
bool ox_session_input_has_default(const ox_session *s, size_t i) {
  if (i >= s->n_model_inputs) return false;
  return s->main->slots[s->main->in[i]].cst != NULL;
}
size_t ox_session_n_outputs(const ox_session *s) { return s->graph->n_output; }
const char *ox_session_output_name(const ox_session *s, size_t i) {
  return i < s->graph->n_output ? s->graph->output[i].name : NULL;
}
const ox_type *ox_session_output_type(const ox_session *s, size_t i) {
  return i < s->graph->n_output ? s->graph->output[i].type : NULL;
}

int ox_session_run(ox_session *s, const char *const *in_names, ox_value *const *inputs, size_t n_in,
                   const char *const *out_names, ox_value **outputs, size_t n_out, ox_err *e) {
  return ox_session_run_opts(s, NULL, in_names, inputs, n_in, out_names, outputs, n_out, e);
}

static int run_bound(ox_session *s, const ox_run_opts *ro, ox_value **bound,
                     const char *const *out_names, ox_value **outputs, size_t n_out, ox_err *e);

int ox_session_run_opts(ox_session *s, const ox_run_opts *ro, const char *const *in_names,
                        ox_value *const *inputs, size_t n_in, const char *const *out_names,
                        ox_value **outputs, size_t n_out, ox_err *e) {
  rt_graph *g = s->main;
  for (size_t k = 0; k < n_out; k++) outputs[k] = NULL;
  if (s->opts.profile) __atomic_fetch_add(&s->prof_runs, 1, __ATOMIC_RELAXED);
  ox_value *stack_in[16];
  ox_value **bound = g->n_in <= 16 ? stack_in : calloc(g->n_in, sizeof *bound);
  if (!bound) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int rc = OX_OK;
  for (size_t i = 0; i < g->n_in; i++) bound[i] = NULL;
  for (size_t j = 0; j < n_in; j++) {
    size_t i = 0;
    if (in_names && in_names[j]) {
      while (i < g->n_in && strcmp(g->g->input[i].name, in_names[j]) != 0) i++;
      if (i == g->n_in) {
        rc = ox_err_set(e, OX_EINVAL, "the model has no input named '%s'", in_names[j]);
        goto done;
      }
    } else {
      i = j; /* by position: the model's inputs only (not those passes added) */
      if (i >= s->n_model_inputs) {
        rc = ox_err_set(e, OX_EINVAL, "%zu inputs given, the model has %zu", n_in,
                        s->n_model_inputs);
        goto done;
      }
    }
    bound[i] = inputs[j];
  }
  for (size_t i = 0; i < g->n_in; i++) {
    const ox_value_info *vi = &g->g->input[i];
    if (!bound[i]) {
      if (g->slots[g->in[i]].cst) continue;
      if (vi->type && vi->type->kind == OX_TYPE_OPTIONAL) continue;
      rc = ox_err_set(e, OX_EINVAL, "input '%s' is missing", vi->name);
      goto done;
    }
    char why[512];
    if (!ox_value_matches_type(bound[i], vi->type, why, sizeof why)) {
      rc = ox_err_set(e, OX_EINVAL, "input '%s': %s", vi->name, why);
      goto done;
    }
  }
  if (s->defaults_const) {
    bool overrides = false;
    for (size_t i = 0; i < g->n_in && !overrides; i++)
      overrides = bound[i] && g->slots[g->in[i]].cst;
    if (overrides) {
      /* this run replaces a value the plan took as constant */
      ox_session *p = plain_session(s, e);
      rc = p ? ox_session_run_opts(p, ro, in_names, inputs, n_in, out_names, outputs, n_out, e)
             : (e ? e->code : OX_ERUNTIME);
      goto done;
    }
  }
  rc = run_bound(s, ro, bound, out_names, outputs, n_out, e);
done:
  if (bound != stack_in) free(bound);
  if (rc && ro && ro->tag && e) ox_err_prefix(e, "run '%s'", ro->tag);
  return rc;
}

/* Runs the main graph on inputs bound in graph order. */
static int run_bound(ox_session *s, const ox_run_opts *ro, ox_value **bound,
                     const char *const *out_names, ox_value **outputs, size_t n_out, ox_err *e) {
  rt_graph *g = s->main;
  int rc = OX_OK;
  rt_run *r = run_take(s);
  if (!r) return ox_err_set(e, OX_ENOMEM, "out of memory");
  r->ro = ro;
  /* the caller's output buffers by graph output (ox_rt_out_take) */
  ox_value *stack_placed[16];
  r->placed = NULL;
  if (ro && ro->out_bufs) {
    r->placed = g->n_out <= 16 ? stack_placed : calloc(g->n_out, sizeof *r->placed);
    if (!r->placed) {
      run_give(s, r);
      return ox_err_set(e, OX_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < g->n_out; i++) r->placed[i] = NULL;
    for (size_t k = 0; k < n_out; k++) {
      size_t i = k;
      if (out_names) {
        i = 0;
        while (i < g->n_out && strcmp(g->g->output[i].name, out_names[k]) != 0) i++;
      }
      if (i < g->n_out) r->placed[i] = ro->out_bufs[k];
    }
  }
  ox_mem_budget budget = {.limit = s->opts.max_memory}, *prev_budget = NULL;
  if (budget.limit) prev_budget = ox_mem_budget_enter(&budget);
  rc = run_pool(s, ro ? ro->threads : 0, &r->pool, e);
  if (rc) goto done;
  if (out_names) {
    /* run everything, then pick the requested outputs */
    ox_value *stack_out[16];
    ox_value **all = g->n_out <= 16 ? stack_out : calloc(g->n_out, sizeof *all);
    if (!all) {
      rc = ox_err_set(e, OX_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t k = 0; k < n_out; k++) {
      size_t i = 0;
      while (i < g->n_out && strcmp(g->g->output[i].name, out_names[k]) != 0) i++;
      if (i == g->n_out) {
        rc = ox_err_set(e, OX_EINVAL, "the model has no output named '%s'", out_names[k]);
        break;
      }
    }
    if (!rc) rc = ox_rt_run_graph(r, g, NULL, bound, g->n_in, all, g->n_out, e);
    if (!rc)
      for (size_t k = 0; k < n_out; k++) {
        size_t i = 0;
        while (strcmp(g->g->output[i].name, out_names[k]) != 0) i++;
        outputs[k] = ox_value_ref(all[i]);
      }
    if (!rc)
      for (size_t i = 0; i < g->n_out; i++) ox_rt_release(r, all[i]);
    if (all != stack_out) free(all);
  } else {
    if (n_out != g->n_out) {
      rc = ox_err_set(e, OX_EINVAL, "%zu outputs requested, the model has %zu", n_out, g->n_out);
      goto done;
    }
    rc = ox_rt_run_graph(r, g, NULL, bound, g->n_in, outputs, n_out, e);
  }
done:
  /* the run keeps its pooled buffers for the next one: drop them when this
   * run hit the limit, so that a refused run does not keep the memory */
  if (budget.limit) {
    if (rc == OX_ENOMEM) {
      for (size_t i = 0; i < r->n_vpool; i++) ox_value_unref(r->vpool[i]);
      r->n_vpool = 0;
    }
    ox_mem_budget_leave(prev_budget);
  }
  if (r->placed != stack_placed) free(r->placed);
  r->placed = NULL;
  run_give(s, r);
  return rc;
}

const ox_graph *ox_session_graph(const ox_session *s) { return s->graph; }

const ox_session_opts *ox_session_options(const ox_session *s) { return &s->opts; }
