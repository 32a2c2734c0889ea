/* cg_fold.c - before generation, every value that is known at compile time
 * becomes a constant, so that the shapes it decides become static.
 *
 * A session folds the nodes whose inputs are all constants once, at
 * creation; the compiler knows more than a session does: the graph inputs'
 * shapes (fixed by the model or by --input). So here Shape and Size of a
 * value whose inferred shape is static are constants, and every node of the
 * default domain whose inputs are all constants runs once through the
 * runtime's own kernel (a one-node session), as a session would run it. The
 * folded nodes leave the graph and their outputs become initializers; shape
 * inference then runs again on the new graph, so a Reshape, Expand, Tile,
 * ConstantOfShape ... whose shape or count input was computed from shapes
 * now has a static output, whose Shape may fold in the next round. Rounds
 * repeat until one folds nothing.
 *
 * What depends on data (NonZero, Unique, a TopK k or a Loop trip count read
 * from a graph input) is never constant here and stays as it was: the
 * generator then declines it naming the node, as before. */
#include <stdlib.h>
#include <string.h>

#include "../infer/infer.h"
#include "../ops/registry.h"
#include "../runtime/session.h"
#include "cg_impl.h"

#define FOLD_ROUNDS 64
/* a folded output bigger than this (and than the node's inputs together) is
 * left to the generated code: a constant array in the .c file would cost
 * flash where a loop costs a few instructions (ConstantOfShape, Expand) */
#define FOLD_MAX_BYTES ((size_t)1 << 16)

typedef struct fstate {
  const ox_model *m;
  ox_arena *a; /* the compilation's: new graphs, tensors and names */
  ox_map cst;  /* name -> const ox_tensor * */
  ox_map types; /* name -> const ox_type * (the last inference) */
  ox_err *e;
} fstate;

/* Outputs not a function of the inputs: never folded (the session's list). */
static bool random_op(const char *op) {
  static const char *const ops[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                    "RandomUniformLike", "Bernoulli", "Multinomial", "Dropout"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

static bool has_subgraph(const ox_node *n) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i].g || n->attribute[i].n_graphs) return true;
  return false;
}

static const ox_type *type_of(fstate *f, const char *name) {
  uintptr_t t;
  return ox_map_get(&f->types, name, &t) ? (const ox_type *)t : NULL;
}

static const ox_tensor *cst_of(fstate *f, const char *name) {
  uintptr_t t;
  return ox_map_get(&f->cst, name, &t) ? (const ox_tensor *)t : NULL;
}

/* Dims [lo, hi) of a tensor type when they are all fixed numbers; the rank
 * in *rank (lo and hi are clamped as Shape's start and end). */
static bool static_dims(const ox_type *t, int64_t *start, int64_t *end, int64_t *dims,
                        size_t *rank) {
  if (!t || t->kind != OX_TYPE_TENSOR || !t->shape || t->shape->n_dim > CG_MAX_RANK) return false;
  int64_t r = (int64_t)t->shape->n_dim, s = start ? *start : 0, en = end ? *end : r;
  if (s < 0) s += r;
  if (en < 0) en += r;
  s = s < 0 ? 0 : s > r ? r : s;
  en = en < s ? s : en > r ? r : en;
  for (int64_t i = s; i < en; i++) {
    const ox_dim *d = &t->shape->dim[i];
    if (!d->has_value || d->value < 0) return false;
    dims[i - s] = d->value;
  }
  if (start) *start = s;
  if (end) *end = en;
  *rank = (size_t)r;
  return true;
}

/* A value as an initializer named name (in the compilation's arena). */
static ox_tensor *to_tensor(fstate *f, const ox_value *v, const char *name) {
  ox_tensor *t = ox_arena_calloc(f->a, 1, sizeof *t);
  ox_err te = {0};
  if (!t || ox_value_to_tensor_proto(v, f->a, t, &te)) return NULL;
  t->name = ox_arena_strdup(f->a, name);
  return t->name ? t : NULL;
}

/* Shape and Size of a value whose shape is static (no kernel needed). */
static ox_value *fold_shape(fstate *f, const ox_node *n) {
  bool size = strcmp(n->op_type, "Size") == 0;
  if (n->n_input != 1 || !*n->input[0]) return NULL;
  const ox_type *t = type_of(f, n->input[0]);
  const ox_tensor *c = cst_of(f, n->input[0]);
  ox_type ct = {0};
  ox_shape cs = {0};
  ox_dim cd[CG_MAX_RANK];
  if (c && c->n_dims <= CG_MAX_RANK) { /* an initializer: its own dims */
    for (size_t i = 0; i < c->n_dims; i++) cd[i] = (ox_dim){.has_value = true, .value = c->dims[i]};
    cs.dim = cd;
    cs.n_dim = c->n_dims;
    ct.kind = OX_TYPE_TENSOR;
    ct.shape = &cs;
    t = &ct;
  }
  int64_t dims[CG_MAX_RANK];
  size_t rank;
  ox_err te = {0};
  if (size) {
    int64_t numel;
    if (!static_dims(t, NULL, NULL, dims, &rank) || !ox_numel(dims, rank, &numel)) return NULL;
    return ox_tensor_scalar_i64(numel, &te);
  }
  int64_t start = ox_node_attr_int(n, "start", 0), end = ox_node_attr_int(n, "end", INT64_MAX);
  if (!static_dims(t, &start, &end, dims, &rank)) return NULL;
  int64_t d = end - start;
  ox_value *v = ox_tensor_new(OX_INT64, &d, 1, &te);
  if (v && d) memcpy(v->data, dims, (size_t)d * sizeof(int64_t));
  return v;
}

/* Whether the node may run now: default domain, deterministic, no body,
 * every present input a constant (a Constant node has none), and no output
 * inferred to be big. */
static bool foldable(fstate *f, const ox_node *n) {
  if (!ox_is_default_domain(n->domain) || random_op(n->op_type) || has_subgraph(n)) return false;
  /* constant int8 weights stay quantized: ox_cg_fold_qdq makes integer
   * kernels of DequantizeLinear -> Conv/MatMul units */
  if (strcmp(n->op_type, "DequantizeLinear") == 0) return false;
  size_t present = 0, in_bytes = 0;
  for (size_t i = 0; i < n->n_input; i++) {
    if (!*n->input[i]) continue;
    const ox_tensor *t = cst_of(f, n->input[i]);
    if (!t) return false;
    present++;
    int64_t numel;
    size_t nb;
    if (ox_numel(t->dims, t->n_dims, &numel) && ox_dtype_nbytes(t->data_type, numel, &nb))
      in_bytes += nb;
  }
  if (!present && strcmp(n->op_type, "Constant") != 0) return false;
  for (size_t i = 0; i < n->n_output; i++) {
    int64_t dims[CG_MAX_RANK], numel;
    size_t rank, nb;
    const ox_type *t = *n->output[i] ? type_of(f, n->output[i]) : NULL;
    if (t && t->kind != OX_TYPE_TENSOR) return false; /* sequences, maps: not constants */
    if (t && t->has_elem_type && t->elem_type == OX_STRING) return false;
    if (static_dims(t, NULL, NULL, dims, &rank) && ox_numel(dims, rank, &numel) &&
        ox_dtype_nbytes(t->elem_type, numel, &nb) && nb > FOLD_MAX_BYTES && nb > in_bytes)
      return false;
  }
  return true;
}

/* Runs node n once on its constant inputs through a one-node session; out[k]
 * gets output k (NULL for an absent one). false when the runtime cannot run
 * it (no kernel, an error): the node is then left to the generator. */
static bool run_node(fstate *f, const ox_node *n, ox_value **out) {
  ox_model *fm = ox_model_new();
  ox_session *s = NULL;
  ox_err fe = {0};
  bool ok = false;
  const char **names = NULL;
  ox_value **vals = NULL;
  size_t n_out = 0;
  if (!fm) return false;
  ox_model_proto *p = fm->proto;
  ox_graph *g = ox_arena_calloc(fm->arena, 1, sizeof *g);
  names = calloc(n->n_output + 1, sizeof *names);
  vals = calloc(n->n_output + 1, sizeof *vals);
  if (!g || !names || !vals) goto done;
  *p = (ox_model_proto){0};
  p->ir_version = f->m->proto->ir_version;
  p->has_ir_version = f->m->proto->has_ir_version;
  p->opset_import = f->m->proto->opset_import; /* borrowed, as are the node and tensors */
  p->n_opset_import = f->m->proto->n_opset_import;
  p->graph = g;
  g->name = "fold";
  g->node = (ox_node *)n;
  g->n_node = 1;
  g->initializer = ox_arena_calloc(fm->arena, n->n_input + 1, sizeof *g->initializer);
  g->output = ox_arena_calloc(fm->arena, n->n_output + 1, sizeof *g->output);
  if (!g->initializer || !g->output) goto done;
  for (size_t i = 0; i < n->n_input; i++) {
    if (!*n->input[i]) continue;
    bool seen = false; /* an input read twice is one initializer */
    for (size_t k = 0; k < g->n_initializer; k++)
      seen |= strcmp(g->initializer[k].name, n->input[i]) == 0;
    if (seen) continue;
    g->initializer[g->n_initializer] = *cst_of(f, n->input[i]);
    g->initializer[g->n_initializer++].name = n->input[i];
  }
  for (size_t i = 0; i < n->n_output; i++) {
    if (!*n->output[i]) continue;
    const ox_type *t = type_of(f, n->output[i]);
    g->output[g->n_output].name = n->output[i];
    g->output[g->n_output++].type = t ? ox_type_clone(fm->arena, t) : NULL;
    names[n_out++] = n->output[i];
  }
  ox_session_opts so = {0};
  so.threads = 1;
  so.kernels = &ox_registry_builtin;
  so.log_level = 4; /* quiet: a node that does not fold is generated instead */
  if (ox_session_create(fm, &so, &s, &fe)) goto done;
  if (ox_session_run(s, NULL, NULL, 0, names, vals, n_out, &fe)) goto done;
  ok = true;
  for (size_t k = 0, j = 0; k < n->n_output; k++) {
    out[k] = NULL;
    if (!*n->output[k]) continue;
    out[k] = vals[j];
    vals[j++] = NULL;
    if (!out[k] || out[k]->kind != OX_VAL_TENSOR || out[k]->dtype == OX_STRING) ok = false;
  }
  if (!ok)
    for (size_t k = 0; k < n->n_output; k++) {
      ox_value_unref(out[k]);
      out[k] = NULL;
    }
done:
  for (size_t k = 0; vals && k < n_out; k++) ox_value_unref(vals[k]);
  free(vals);
  free(names);
  ox_session_free(s);
  ox_model_free(fm);
  return ok;
}

/* The branch an If takes when its condition is a constant (NULL otherwise). */
static const ox_graph *if_branch(fstate *f, const ox_node *n) {
  if (!ox_is_default_domain(n->domain) || strcmp(n->op_type, "If") != 0 || n->n_input != 1)
    return NULL;
  const ox_tensor *t = cst_of(f, n->input[0]);
  ox_err te = {0};
  ox_value *v = t ? ox_value_from_tensor_proto(t, false, &te) : NULL;
  bool cond = v && v->kind == OX_VAL_TENSOR && v->dtype == OX_BOOL && v->numel == 1 &&
              *(const uint8_t *)v->data != 0;
  bool known = v && v->kind == OX_VAL_TENSOR && v->dtype == OX_BOOL && v->numel == 1;
  ox_value_unref(v);
  if (!known) return NULL;
  const ox_attr *a = ox_node_attr(n, cond ? "then_branch" : "else_branch");
  const ox_graph *b = a ? a->g : NULL;
  /* its outputs are then the If's outputs, one for one */
  return b && b->n_output == n->n_output && !b->n_sparse_initializer ? b : NULL;
}

/* The nodes of branch b in place of If node n: b's nodes (they read outer
 * values by name, which are in scope here too), its initializers added to
 * inits, and an Identity per output from the branch's value to the If's. */
static int inline_branch(fstate *f, const ox_node *n, const ox_graph *b, ox_node **nodes,
                         size_t *n_nodes, size_t *cap, size_t rest, ox_tensor ***inits,
                         size_t *n_inits) {
  size_t need = *n_nodes + b->n_node + n->n_output + rest; /* rest: the nodes still to come */
  if (need > *cap) {
    ox_node *nn = ox_arena_calloc(f->a, need * 2, sizeof *nn);
    if (!nn) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
    memcpy(nn, *nodes, *n_nodes * sizeof *nn);
    *nodes = nn;
    *cap = need * 2;
  }
  for (size_t i = 0; i < b->n_node; i++) (*nodes)[(*n_nodes)++] = b->node[i];
  for (size_t i = 0; i < b->n_initializer; i++) {
    ox_tensor **slot = OX_VEC_PUSH(f->a, *inits, *n_inits);
    if (!slot) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
    *slot = &b->initializer[i];
  }
  for (size_t k = 0; k < n->n_output; k++) {
    if (!*n->output[k]) continue;
    ox_node *id = &(*nodes)[(*n_nodes)++];
    char **io = ox_arena_calloc(f->a, 2, sizeof *io);
    if (!io) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
    io[0] = b->output[k].name;
    io[1] = n->output[k];
    *id = (ox_node){0};
    id->input = io;
    id->n_input = 1;
    id->output = io + 1;
    id->n_output = 1;
    id->name = ox_arena_printf(f->a, "%s_out%zu", n->name && *n->name ? n->name : "If", k);
    id->op_type = "Identity";
    id->domain = "";
    if (!id->name) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
  }
  return OX_OK;
}

static void map_types(ox_map *m, const ox_graph *g) {
  for (size_t i = 0; i < g->n_value_info; i++)
    if (g->value_info[i].type) ox_map_put(m, g->value_info[i].name, (uintptr_t)g->value_info[i].type);
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i].type) ox_map_put(m, g->input[i].name, (uintptr_t)g->input[i].type);
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].type) ox_map_put(m, g->output[i].name, (uintptr_t)g->output[i].type);
}

/* One pass over g's nodes in order; *ng is the graph without the folded
 * nodes (their outputs initializers), or g itself when none folded. */
static int fold_round(fstate *f, const ox_graph *g, ox_graph **ng, size_t *n_folded) {
  *ng = (ox_graph *)g;
  *n_folded = 0;
  ox_map_free(&f->types);
  ox_map_free(&f->cst);
  ox_map_init(&f->types);
  ox_map_init(&f->cst);
  map_types(&f->types, g);
  for (size_t i = 0; i < g->n_initializer; i++)
    ox_map_put(&f->cst, g->initializer[i].name, (uintptr_t)&g->initializer[i]);
  size_t cap = g->n_node + 1, n_nodes = 0;
  ox_node *nodes = ox_arena_calloc(f->a, cap, sizeof *nodes);
  ox_tensor **added = NULL, **b_inits = NULL;
  size_t n_added = 0, n_b_inits = 0;
  ox_value *outs[64];
  if (!nodes) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    const ox_graph *br = if_branch(f, n);
    if (br) { /* a constant condition: the If becomes its branch */
      int rc = inline_branch(f, n, br, &nodes, &n_nodes, &cap, g->n_node - i, &b_inits,
                             &n_b_inits);
      if (rc) return rc;
      (*n_folded)++;
      continue;
    }
    nodes[n_nodes++] = *n; /* kept unless it folds below */
    if (n->n_output == 0 || n->n_output > sizeof outs / sizeof outs[0]) continue;
    bool shape = ox_is_default_domain(n->domain) &&
                 (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
    memset(outs, 0, sizeof outs);
    if (shape) {
      if (n->n_output != 1 || !(outs[0] = fold_shape(f, n))) continue;
    } else if (!foldable(f, n) || !run_node(f, n, outs)) {
      continue;
    }
    /* a result too big for the .c file (its shape was not known before) */
    size_t in_bytes = 0, out_bytes = 0;
    for (size_t k = 0; k < n->n_input; k++) {
      const ox_tensor *t = *n->input[k] ? cst_of(f, n->input[k]) : NULL;
      int64_t numel;
      size_t nb;
      if (t && ox_numel(t->dims, t->n_dims, &numel) && ox_dtype_nbytes(t->data_type, numel, &nb))
        in_bytes += nb;
    }
    for (size_t k = 0; k < n->n_output; k++) out_bytes += outs[k] ? outs[k]->nbytes : 0;
    bool keep = !shape && out_bytes > FOLD_MAX_BYTES && out_bytes > in_bytes;
    int rc = OX_OK;
    for (size_t k = 0; k < n->n_output && !keep && !rc; k++) {
      if (!outs[k]) continue;
      ox_tensor *t = to_tensor(f, outs[k], n->output[k]);
      ox_tensor **slot = t ? OX_VEC_PUSH(f->a, added, n_added) : NULL;
      if (!slot || ox_map_put(&f->cst, t->name, (uintptr_t)t) != OX_OK)
        rc = ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
      else
        *slot = t;
    }
    for (size_t k = 0; k < n->n_output; k++) ox_value_unref(outs[k]);
    if (rc) return rc;
    if (keep) continue;
    n_nodes--; /* folded: the node goes */
    (*n_folded)++;
  }
  if (!*n_folded) return OX_OK;
  ox_graph *r = ox_arena_calloc(f->a, 1, sizeof *r);
  ox_tensor *inits =
      ox_arena_calloc(f->a, g->n_initializer + n_added + n_b_inits + 1, sizeof *inits);
  ox_value_info *vis = ox_arena_calloc(f->a, g->n_value_info + 1, sizeof *vis);
  if (!r || !inits || !vis) return ox_err_set(f->e, OX_ENOMEM, "compile: out of memory");
  *r = *g;
  r->node = nodes;
  r->n_node = n_nodes;
  if (g->n_initializer) memcpy(inits, g->initializer, g->n_initializer * sizeof *inits);
  for (size_t k = 0; k < n_added; k++) inits[g->n_initializer + k] = *added[k];
  for (size_t k = 0; k < n_b_inits; k++) inits[g->n_initializer + n_added + k] = *b_inits[k];
  r->initializer = inits;
  r->n_initializer = g->n_initializer + n_added + n_b_inits;
  /* the folded values' value_info go (they are initializers now); the
   * others stay, and the next inference refines their dims */
  r->value_info = vis;
  r->n_value_info = 0;
  for (size_t i = 0; i < g->n_value_info; i++) {
    bool folded = false;
    for (size_t k = 0; k < n_added && !folded; k++)
      folded = strcmp(added[k]->name, g->value_info[i].name) == 0;
    if (!folded) vis[r->n_value_info++] = g->value_info[i];
  }
  *ng = r;
  return OX_OK;
}

int ox_cg_fold_static(ox_model *m, const ox_infer_opts *io, ox_arena *a, ox_model **out,
                      ox_err *e) {
  fstate f = {m, a, {0}, {0}, e};
  ox_map_init(&f.cst);
  ox_map_init(&f.types);
  *out = m;
  ox_model *cur = m;
  int rc = OX_OK;
  for (int round = 0; round < FOLD_ROUNDS && !rc; round++) {
    ox_graph *ng;
    size_t n;
    rc = fold_round(&f, cur->proto->graph, &ng, &n);
    if (rc || !n) break;
    /* a shallow copy of the model with the new graph: the caller's model
     * keeps its graph */
    ox_model *nm = ox_arena_calloc(a, 1, sizeof *nm);
    ox_model_proto *np = ox_arena_calloc(a, 1, sizeof *np);
    if (!nm || !np) {
      rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
      break;
    }
    *nm = *cur;
    *np = *cur->proto;
    np->graph = ng;
    nm->proto = np;
    cur = nm;
    if ((rc = ox_infer_model(cur, io, NULL, e))) ox_err_prefix(e, "compile: shape inference");
  }
  ox_map_free(&f.cst);
  ox_map_free(&f.types);
  if (!rc) *out = cur;
  return rc;
}
