/* fuse.c - graph fusion at session creation (optimization_level >= 1).
 *
 * Rewrites the session's main graph into a new graph in the session arena
 * (the caller's model is never modified):
 *
 *  1. Conv folding: a Conv with constant weights (and bias) whose output
 *     feeds only an inference-mode BatchNormalization with constant
 *     parameters, or only a Mul/Add by a constant that is a scalar or one
 *     value per output channel, gets new weights and bias (computed in
 *     double, stored as float) and the following node is dropped; repeated
 *     while the Conv's only consumer is such a node.
 *  2. Elementwise chains: maximal groups of float32 elementwise nodes rooted
 *     at one tensor, whose other operands are constants of one element or
 *     of one element per channel, become one ai.onnxc ElementwiseChain node
 *     (src/ops/fused.c). A value computed inside a group may be read several
 *     times inside it; one read outside the group (or a graph output, or a
 *     use inside a subgraph) ends the group at that value.
 *  3. Conv epilogues (before 2): a float32 Conv whose output is read only by
 *     an Add / two-input Sum with a tensor computed before the Conv
 *     (residual), then optionally (or only) by a Relu, LeakyRelu, Clip with
 *     constant bounds, HardSigmoid, HardSwish or SiLU written as
 *     Mul(x, Sigmoid(x)) (YOLO, EfficientNet), becomes one ai.onnxc
 *     FusedConv node (src/ops/conv.c): Conv's inputs and attributes, the
 *     residual as 4th input, attributes activation (OX_ACT_*), alpha, beta;
 *     a following Max / Min with a scalar constant joins as attributes
 *     bound (1 Max, 2 Min) and bound_value.
 *
 * Constants are initializers (an initializer that backs a graph input only
 * while the session takes such inputs as constants, s->defaults_const) and
 * the `value` of Constant nodes. Subgraphs are left as they are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../ops/fused.h"
#include "../opt/pass.h"
#include "rt.h"

#define FZ_MAX_GROUP 64

typedef struct fcst {
  ox_value *v; /* float32 tensor */
} fcst;

typedef struct fctx {
  ox_session *s;
  ox_arena *a;
  const ox_graph *g;
  ox_err *e;
  ox_map csts; /* name -> index + 1 into cv */
  /* known constants: v an owned reference, or NULL until first asked for
   * when t is an initializer (a large weight is not copied unless a rewrite
   * reads it: most are only passed through) */
  struct known_cst {
    ox_value *v;
    const ox_tensor *t;
  } * cv;
  size_t n_cv;
  ox_map uses;     /* name -> number of reads by main-graph nodes */
  ox_map pinned;   /* graph outputs and names read inside subgraphs */
  ox_map lastuse;  /* name -> index + 1 of the last node reading it */
  ox_map floatval; /* names known to hold float32 tensors */
  const int64_t *opsets;
  ox_node *nodes; /* working copy of the node list */
  bool *drop;
  /* new initializers (folded Conv weights) */
  ox_tensor *inits;
  size_t n_inits;
  unsigned long counter;
  bool rename_oom;
} fctx;

static int oom(fctx *x) { return ox_err_set(x->e, OX_ENOMEM, "out of memory fusing the graph"); }

static size_t map_count(const ox_map *m, const char *k) {
  uintptr_t v;
  return k && ox_map_get(m, k, &v) ? (size_t)v : 0;
}

static int map_add(ox_map *m, const char *k, size_t d) {
  return ox_map_put(m, k, (uintptr_t)(map_count(m, k) + d));
}

static const ox_value *cst_of(const fctx *x, const char *name) {
  uintptr_t v;
  if (!name || !*name || !ox_map_get(&x->csts, name, &v)) return NULL;
  struct known_cst *c = &x->cv[v - 1];
  if (!c->v && c->t) { /* made on first use; a tensor that cannot be made is no constant */
    ox_err ce = {0};
    c->v = ox_value_from_tensor_proto(c->t, true, &ce);
    c->t = NULL;
  }
  return c->v;
}

/* v (owned) or, with v NULL, the initializer t as name's constant */
static int add_cst_from(fctx *x, const char *name, ox_value *v, const ox_tensor *t) {
  if (!v && !t) return OX_OK;
  struct known_cst *slot = OX_VEC_PUSH(x->a, x->cv, x->n_cv);
  if (!slot || ox_map_put(&x->csts, name, x->n_cv)) {
    ox_value_unref(v);
    return oom(x);
  }
  slot->v = v;
  slot->t = v ? NULL : t;
  return OX_OK;
}

static int add_cst(fctx *x, const char *name, ox_value *v) {
  return add_cst_from(x, name, v, NULL);
}

/* names read anywhere inside a subgraph (outer-scope uses among them) */
static int pin_subgraph(fctx *x, const ox_graph *sg) {
  for (size_t i = 0; i < sg->n_node; i++) {
    const ox_node *n = &sg->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && *n->input[k] && ox_map_put(&x->pinned, n->input[k], 1)) return oom(x);
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      if (at->g && pin_subgraph(x, at->g)) return x->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (pin_subgraph(x, &at->graphs[j])) return x->e->code;
    }
  }
  for (size_t i = 0; i < sg->n_output; i++)
    if (sg->output[i].name && ox_map_put(&x->pinned, sg->output[i].name, 1)) return oom(x);
  return OX_OK;
}

static bool has_subgraph(const ox_node *n) {
  for (size_t k = 0; k < n->n_attribute; k++)
    if (n->attribute[k].g || n->attribute[k].n_graphs) return true;
  return false;
}

static void note_float(fctx *x, const ox_value_info *vi) {
  if (vi->name && vi->type && vi->type->kind == OX_TYPE_TENSOR && vi->type->has_elem_type &&
      vi->type->elem_type == OX_FLOAT)
    (void)ox_map_put(&x->floatval, vi->name, 1);
}

static bool is_default(const ox_node *n) { return !n->domain || ox_is_default_domain(n->domain); }

static bool op_is(const ox_node *n, const char *op) {
  return n->op_type && strcmp(n->op_type, op) == 0 && is_default(n);
}

/* An initializer the session takes as a constant. */
static const ox_tensor *const_init(const fctx *x, const char *name) {
  const ox_graph *g = x->g;
  if (!name || !*name) return NULL;
  for (size_t k = 0; k < g->n_input; k++)
    if (g->input[k].name && strcmp(g->input[k].name, name) == 0 && !x->s->defaults_const)
      return NULL;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
      return &g->initializer[i];
  return NULL;
}

/* The float32 output of a ConstantOfShape over a constant shape (models
 * that build their weights this way), within a total element budget. */
static ox_value *const_of_shape(fctx *x, const ox_node *n, int64_t *budget) {
  const ox_attr *va = ox_node_attr(n, "value");
  if (va && (!va->t || va->t->data_type != OX_FLOAT)) return NULL;
  const ox_tensor *st = const_init(x, n->input[0]);
  if (!st || st->data_type != OX_INT64) return NULL;
  ox_err ce = {0};
  ox_value *shape = ox_value_from_tensor_proto(st, true, &ce), *fill = NULL, *v = NULL;
  if (va && !(fill = ox_value_from_tensor_proto(va->t, true, &ce))) goto out;
  if (!shape || shape->rank != 1 || shape->numel > 8 || (fill && fill->numel != 1)) goto out;
  const int64_t *d = shape->data;
  int64_t numel = 1;
  for (int64_t k = 0; k < shape->numel; k++) {
    if (d[k] < 0 || d[k] > *budget) goto out;
    numel *= d[k];
    if (numel > *budget) goto out;
  }
  v = ox_tensor_new_uninit(OX_FLOAT, d, (size_t)shape->numel, &ce);
  if (!v) goto out;
  *budget -= numel;
  float f = fill ? *(const float *)fill->data : 0.0f, *o = v->data;
  for (int64_t k = 0; k < numel; k++) o[k] = f;
out:
  ox_value_unref(shape);
  ox_value_unref(fill);
  return v;
}

/* Unsqueeze, Reshape or Identity of a small float constant: its values under
 * the new dims. Exporters write a per-channel scale as Unsqueeze(s [C]) ->
 * [C, 1, 1]; known here, the Mul and Add after a Conv fold into it. */
static ox_value *reshaped_const(fctx *x, const ox_node *n, int64_t opset) {
  bool unsq = op_is(n, "Unsqueeze"), resh = op_is(n, "Reshape");
  if ((!unsq && !resh && !op_is(n, "Identity")) || n->n_output != 1 || n->n_input < 1 ||
      !n->output[0] || !*n->output[0])
    return NULL;
  const ox_value *c = cst_of(x, n->input[0]);
  if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT || c->numel > 65536 || c->rank > 8)
    return NULL;
  int64_t arg[8], dims[8];
  size_t na = 0, r = c->rank;
  memcpy(dims, c->dims, r * sizeof *dims);
  if (unsq || resh) { /* axes (Unsqueeze before opset 13: an attribute) or shape */
    const ox_attr *at = unsq && opset < 13 ? ox_node_attr(n, "axes") : NULL;
    if (at) {
      if (at->n_ints > 8) return NULL;
      na = at->n_ints;
      memcpy(arg, at->ints, na * sizeof *arg);
    } else {
      const ox_tensor *t = n->n_input == 2 ? const_init(x, n->input[1]) : NULL;
      ox_err ce = {0};
      ox_value *a = t && t->data_type == OX_INT64 ? ox_value_from_tensor_proto(t, true, &ce) : NULL;
      bool ok = a && a->rank == 1 && a->numel <= 8;
      if (ok) memcpy(arg, a->data, (size_t)a->numel * sizeof *arg), na = (size_t)a->numel;
      ox_value_unref(a);
      if (!ok) return NULL;
    }
  }
  if (unsq) {
    size_t out_r = r + na;
    if (out_r > 8) return NULL;
    bool one[8] = {false};
    for (size_t k = 0; k < na; k++) {
      int64_t ax = arg[k] < 0 ? arg[k] + (int64_t)out_r : arg[k];
      if (ax < 0 || ax >= (int64_t)out_r || one[ax]) return NULL;
      one[ax] = true;
    }
    for (size_t d = 0, src = 0; d < out_r; d++) dims[d] = one[d] ? 1 : c->dims[src++];
    r = out_r;
  } else if (resh) {
    if (opset >= 14 && ox_node_attr_int(n, "allowzero", 0) != 0) return NULL;
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < na; d++) {
      dims[d] = arg[d] == 0 && d < c->rank ? c->dims[d] : arg[d];
      if (dims[d] == -1 && infer < 0)
        infer = (int64_t)d;
      else if (dims[d] < 1)
        return NULL;
      else
        known *= dims[d];
    }
    if (infer >= 0) dims[infer] = known > 0 && c->numel % known == 0 ? c->numel / known : -1;
    if (infer >= 0 && dims[infer] < 0) return NULL;
    if ((infer >= 0 ? known * dims[infer] : known) != c->numel) return NULL;
    r = na;
  }
  ox_err ce = {0};
  ox_value *v = ox_tensor_new_uninit(OX_FLOAT, dims, r, &ce);
  if (v) memcpy(v->data, c->data, (size_t)c->numel * sizeof(float));
  return v;
}

static int collect(fctx *x) {
  const ox_graph *g = x->g;
  for (size_t i = 0; i < g->n_initializer; i++) {
    const ox_tensor *t = &g->initializer[i];
    if (!t->name || t->data_type != OX_FLOAT) continue;
    bool is_input = false;
    for (size_t k = 0; k < g->n_input && !is_input; k++)
      is_input = g->input[k].name && strcmp(g->input[k].name, t->name) == 0;
    if (is_input && !x->s->defaults_const) continue;
    if (add_cst_from(x, t->name, NULL, t)) return x->e->code;
    (void)ox_map_put(&x->floatval, t->name, 1);
  }
  int64_t budget = (int64_t)1 << 27; /* elements made from ConstantOfShape */
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    if (op_is(n, "ConstantOfShape") && n->n_input == 1 && n->n_output == 1 && n->output[0] &&
        *n->output[0]) {
      ox_value *v = const_of_shape(x, n, &budget);
      if (v && add_cst(x, n->output[0], v)) return x->e->code;
    }
    if (n->op_type && strcmp(n->op_type, "Constant") == 0 && !(n->domain && *n->domain) &&
        n->n_output == 1 && n->output[0] && *n->output[0]) {
      const ox_attr *a = ox_node_attr(n, "value");
      const ox_attr *af = ox_node_attr(n, "value_float");
      ox_err ce = {0};
      ox_value *v = NULL;
      if (a && a->t && a->t->data_type == OX_FLOAT)
        v = ox_value_from_tensor_proto(a->t, true, &ce);
      else if (af && af->has_f)
        v = ox_tensor_scalar_f32(af->f, &ce);
      if (v && add_cst(x, n->output[0], v)) return x->e->code;
    }
    ox_value *rv = reshaped_const(x, n, x->opsets[i]);
    if (rv) {
      if (add_cst(x, n->output[0], rv)) return x->e->code;
      (void)ox_map_put(&x->floatval, n->output[0], 1);
    }
    for (size_t k = 0; k < n->n_input; k++) {
      const char *nm = n->input[k];
      if (!nm || !*nm) continue;
      if (map_add(&x->uses, nm, 1) || ox_map_put(&x->lastuse, nm, i + 1)) return oom(x);
    }
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      if (at->g && pin_subgraph(x, at->g)) return x->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (pin_subgraph(x, &at->graphs[j])) return x->e->code;
    }
  }
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && ox_map_put(&x->pinned, g->output[i].name, 1)) return oom(x);
  for (size_t i = 0; i < g->n_input; i++) note_float(x, &g->input[i]);
  for (size_t i = 0; i < g->n_value_info; i++) note_float(x, &g->value_info[i]);
  for (size_t i = 0; i < g->n_output; i++) note_float(x, &g->output[i]);
  return OX_OK;
}

/* ------------------------------------------------------------ Conv folding */

/* The only node reading `name` (index), or -1 when there are several, none,
 * or the value is a graph output or read inside a subgraph. */
static int64_t sole_reader(const fctx *x, const char *name) {
  if (!name || !*name || map_count(&x->uses, name) != 1 || map_count(&x->pinned, name)) return -1;
  size_t at = map_count(&x->lastuse, name);
  return at && !x->drop[at - 1] ? (int64_t)at - 1 : -1;
}

/* A float32 constant with M elements per output channel of a Conv whose
 * output has rank r, or with one element: *per set to its length (1 or M). */
static const ox_value *channel_const(const fctx *x, const char *name, int64_t m, size_t r,
                                     int64_t *per) {
  const ox_value *c = cst_of(x, name);
  if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT || c->rank > r) return NULL;
  if (c->numel == 1) {
    *per = 1;
    return c;
  }
  for (size_t d = 0; d < c->rank; d++) {
    size_t axis = r - c->rank + d;
    if (c->dims[d] != (axis == 1 ? m : 1)) return NULL;
  }
  *per = m;
  return c;
}

/* BatchNormalization in inference mode with per-channel constants. */
static bool bn_foldable(const fctx *x, size_t j, int64_t m, const ox_value **p) {
  const ox_node *n = &x->nodes[j];
  int64_t ver = x->opsets[j];
  if (!op_is(n, "BatchNormalization") || n->n_input != 5 || ver < 7) return false;
  for (size_t o = 1; o < n->n_output; o++)
    if (n->output[o] && *n->output[o]) return false;
  if (ver >= 14 && ox_node_attr_int(n, "training_mode", 0) != 0) return false;
  if (ver < 9 && ox_node_attr_int(n, "spatial", 1) != 1) return false;
  for (size_t k = 1; k < 5; k++) {
    p[k - 1] = cst_of(x, n->input[k]);
    if (!p[k - 1] || p[k - 1]->dtype != OX_FLOAT || p[k - 1]->rank != 1 || p[k - 1]->numel != m)
      return false;
  }
  return true;
}

/* A new float32 initializer of the given shape; its data is filled by the
 * caller through *data. */
static int new_init(fctx *x, const char *base, const int64_t *dims, size_t rank, float **data,
                    const char **name) {
  int64_t n = 1;
  for (size_t k = 0; k < rank; k++) n *= dims[k];
  ox_tensor *t = OX_VEC_PUSH(x->a, x->inits, x->n_inits);
  float *f = ox_arena_alloc(x->a, ((size_t)n + 1) * sizeof *f);
  int64_t *d = ox_arena_calloc(x->a, rank + 1, sizeof *d);
  char *nm = ox_arena_printf(x->a, "%s#folded%lu", base, ++x->counter);
  if (!t || !f || !d || !nm) return oom(x);
  memcpy(d, dims, rank * sizeof *d);
  t->name = nm;
  t->dims = d;
  t->n_dims = rank;
  t->data_type = OX_FLOAT;
  t->has_data_type = true;
  t->float_data = f;
  t->n_float_data = (size_t)n;
  *name = nm;
  *data = f;
  return OX_OK;
}

/* Folds the BatchNormalization / Mul / Add nodes that follow Conv node i. */
static int fold_conv(fctx *x, size_t i) {
  ox_node *c = &x->nodes[i];
  if (!op_is(c, "Conv") || c->n_input < 2 || c->n_input > 3 || c->n_output != 1) return OX_OK;
  const ox_value *w = cst_of(x, c->input[1]);
  const ox_value *b = c->n_input == 3 && *c->input[2] ? cst_of(x, c->input[2]) : NULL;
  if (!w || w->dtype != OX_FLOAT || w->rank < 3 || w->dims[0] < 1) return OX_OK;
  int64_t m = w->dims[0], per_m = w->numel / m;
  if (c->n_input == 3 && *c->input[2] && (!b || b->rank != 1 || b->numel != m)) return OX_OK;
  double *sd = NULL, *bd = NULL; /* per channel: weight scale, bias */
  const char *out = c->output[0];
  size_t folded = 0;
  int64_t j;
  while ((j = sole_reader(x, out)) > (int64_t)i) {
    const ox_node *n = &x->nodes[j];
    const ox_value *p[4];
    const ox_value *k = NULL;
    int64_t per = 0;
    int kind = 0; /* 1 BN, 2 Mul, 3 Add */
    if (bn_foldable(x, (size_t)j, m, p) && strcmp(n->input[0], out) == 0) {
      kind = 1;
    } else if ((op_is(n, "Mul") || op_is(n, "Add")) && n->n_input == 2 && x->opsets[j] >= 7 &&
               n->n_output == 1) {
      const char *other = strcmp(n->input[0], out) == 0 ? n->input[1] : n->input[0];
      if (strcmp(other, out) != 0) k = channel_const(x, other, m, w->rank, &per);
      if (k) kind = op_is(n, "Mul") ? 2 : 3;
    }
    if (!kind) break;
    if (!sd) {
      sd = malloc((size_t)m * sizeof *sd);
      bd = malloc((size_t)m * sizeof *bd);
      if (!sd || !bd) {
        free(sd);
        free(bd);
        return oom(x);
      }
      for (int64_t q = 0; q < m; q++) {
        sd[q] = 1;
        bd[q] = b ? ((const float *)b->data)[q] : 0.0;
      }
    }
    for (int64_t q = 0; q < m; q++) {
      double sc = 1, sh = 0;
      if (kind == 1) {
        double eps = ox_node_attr_float(n, "epsilon", 1e-5f);
        const float *scale = p[0]->data, *bias = p[1]->data, *mean = p[2]->data, *var = p[3]->data;
        sc = (double)scale[q] / sqrt((double)var[q] + eps);
        sh = (double)bias[q] - (double)mean[q] * sc;
      } else {
        double kv = ((const float *)k->data)[per == 1 ? 0 : q];
        if (kind == 2)
          sc = kv;
        else
          sh = kv;
      }
      sd[q] *= sc;
      bd[q] = bd[q] * sc + sh;
    }
    x->drop[j] = true;
    out = n->output[0];
    folded++;
  }
  if (!folded) return OX_OK;
  const char *wn = NULL, *bn = NULL;
  float *wf = NULL, *bf = NULL;
  int rc = new_init(x, c->input[1], w->dims, w->rank, &wf, &wn);
  if (!rc) rc = new_init(x, out, &m, 1, &bf, &bn);
  if (!rc && ox_map_put(&x->floatval, wn, 1)) rc = oom(x);
  if (!rc) {
    const float *w0 = w->data;
    for (int64_t q = 0; q < m; q++) {
      for (int64_t r = 0; r < per_m; r++)
        wf[q * per_m + r] = (float)((double)w0[q * per_m + r] * sd[q]);
      bf[q] = (float)bd[q];
    }
  }
  free(sd);
  free(bd);
  if (rc) return rc;
  char **in = ox_arena_calloc(x->a, 4, sizeof *in);
  char **o = ox_arena_calloc(x->a, 2, sizeof *o);
  if (!in || !o) return oom(x);
  in[0] = c->input[0];
  in[1] = (char *)wn;
  in[2] = (char *)bn;
  o[0] = (char *)out;
  c->input = in;
  c->n_input = 3;
  c->output = o;
  return OX_OK;
}

/* How an error names a fused node: the original nodes' names (or index and
 * op), first to last, so that the user can find them in the model. */
static void node_ref(const fctx *x, size_t i, char *buf, size_t size) {
  const ox_node *n = &x->nodes[i];
  if (n->name && *n->name)
    snprintf(buf, size, "%s", n->name);
  else
    snprintf(buf, size, "#%zu %s", i, n->op_type ? n->op_type : "?");
}

static char *fused_name(fctx *x, size_t first, size_t last) {
  char fa[160], fb[160];
  node_ref(x, first, fa, sizeof fa);
  node_ref(x, last, fb, sizeof fb);
  return ox_arena_printf(x->a, "fused %s .. %s", fa, fb);
}

/* ------------------------------------------------------------ Conv epilogues */

/* The FusedConv activation (OX_ACT_*) of node j with its parameters, or -1. */
static int act_of(const fctx *x, size_t j, float *al, float *be) {
  const ox_node *n = &x->nodes[j];
  int64_t ver = x->opsets[j];
  if (x->drop[j] || n->n_output != 1 || !n->output[0] || !*n->output[0] || n->n_input < 1 ||
      ver < 6)
    return -1;
  *al = *be = 0;
  if (op_is(n, "Relu") && n->n_input == 1) return OX_ACT_RELU;
  if (op_is(n, "LeakyRelu") && n->n_input == 1) {
    *al = ox_node_attr_float(n, "alpha", 0.01f);
    return OX_ACT_LEAKY;
  }
  if (op_is(n, "HardSigmoid") && n->n_input == 1) {
    *al = ox_node_attr_float(n, "alpha", 0.2f);
    *be = ox_node_attr_float(n, "beta", 0.5f);
    return OX_ACT_HSIGMOID;
  }
  if (op_is(n, "HardSwish") && n->n_input == 1 && ver >= 14) return OX_ACT_HSWISH;
  if (!op_is(n, "Clip")) return -1;
  if (ver < 11) {
    if (n->n_input != 1) return -1;
    *al = ox_node_attr_float(n, "min", -3.402823466e+38f);
    *be = ox_node_attr_float(n, "max", 3.402823466e+38f);
    return OX_ACT_CLIP;
  }
  if (n->n_input > 3) return -1;
  *al = -INFINITY;
  *be = INFINITY;
  for (size_t k = 1; k < n->n_input; k++) {
    if (!n->input[k] || !*n->input[k]) continue;
    const ox_value *c = cst_of(x, n->input[k]);
    if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT || c->numel != 1) return -1;
    *(k == 1 ? al : be) = *(const float *)c->data;
  }
  return OX_ACT_CLIP;
}

/* SiLU written out: `out` (made before node `after`) read only by
 * s = Sigmoid(out) and m = Mul(out, s) (either order), s only by m, none a
 * graph output: the Mul's index (the Sigmoid's in *sig), else -1. */
static int64_t silu_after(const fctx *x, const char *out, size_t after, int64_t *sig) {
  if (!out || !*out || map_count(&x->uses, out) != 2 || map_count(&x->pinned, out)) return -1;
  for (size_t k = after + 1; k < x->g->n_node; k++) {
    const ox_node *n = &x->nodes[k];
    if (x->drop[k] || !op_is(n, "Sigmoid") || x->opsets[k] < 6 || n->n_input != 1 ||
        n->n_output != 1 || !n->input[0] || strcmp(n->input[0], out) != 0 || !n->output[0] ||
        !*n->output[0])
      continue;
    int64_t m = sole_reader(x, n->output[0]);
    if (m <= (int64_t)k) return -1;
    const ox_node *mn = &x->nodes[m];
    if (!op_is(mn, "Mul") || x->opsets[m] < 7 || mn->n_input != 2 || mn->n_output != 1 ||
        !mn->output[0] || !*mn->output[0] || !mn->input[0] || !mn->input[1])
      return -1;
    bool order = strcmp(mn->input[0], out) == 0 && strcmp(mn->input[1], n->output[0]) == 0;
    bool swapped = strcmp(mn->input[1], out) == 0 && strcmp(mn->input[0], n->output[0]) == 0;
    if (!order && !swapped) return -1;
    *sig = (int64_t)k;
    return m;
  }
  return -1;
}

/* Whether `name` is available before node i: not produced by a node at i
 * or later (graph inputs, initializers and earlier nodes' outputs). */
static bool ready_before(const fctx *x, const char *name, size_t i) {
  for (size_t k = i; k < x->g->n_node; k++) {
    if (x->drop[k]) continue;
    const ox_node *n = &x->nodes[k];
    for (size_t o = 0; o < n->n_output; o++)
      if (n->output[o] && strcmp(n->output[o], name) == 0) return false;
  }
  return true;
}

/* A float32 Conv i whose output feeds only an Add (or a Sum of two) with
 * another tensor (residual, computed before the Conv), then / or only an
 * activation, then / or only a Max / Min with a scalar constant and/or only an activation becomes
 * one FusedConv (repl[i]); the Add and activation nodes are dropped. */
static int fuse_conv_epilogue(fctx *x, size_t i, ox_node **repl) {
  const ox_node *c = &x->nodes[i];
  if (x->drop[i] || repl[i] || !op_is(c, "Conv") || c->n_input < 2 || c->n_input > 3 ||
      c->n_output != 1 || !c->output[0] || !*c->output[0] || x->opsets[i] < 1)
    return OX_OK;
  if (!cst_of(x, c->input[1]) && !map_count(&x->floatval, c->input[1]) &&
      !map_count(&x->floatval, c->input[0]))
    return OX_OK; /* not known to be float32 */
  const char *out = c->output[0], *res = NULL;
  size_t last = i;
  size_t gone[4];
  size_t n_gone = 0;
  int act = OX_ACT_NONE;
  float al = 0, be = 0;
  int64_t j = sole_reader(x, out);
  if (j > (int64_t)i &&
      ((op_is(&x->nodes[j], "Add") && x->opsets[j] >= 7) ||
       (op_is(&x->nodes[j], "Sum") && x->opsets[j] >= 6)) &&
      x->nodes[j].n_input == 2 && x->nodes[j].n_output == 1 && x->nodes[j].output[0] &&
      *x->nodes[j].output[0]) {
    const ox_node *a = &x->nodes[j];
    const char *other = strcmp(a->input[0], out) == 0 ? a->input[1] : a->input[0];
    if (other && *other && strcmp(other, out) != 0 && ready_before(x, other, i)) {
      res = other;
      out = a->output[0];
      last = (size_t)j;
      gone[n_gone++] = last;
      j = sole_reader(x, out);
    }
  }
  int k;
  int64_t sm, ss;
  if (j > (int64_t)last && (k = act_of(x, (size_t)j, &al, &be)) >= 0 &&
      strcmp(x->nodes[j].input[0], out) == 0) {
    act = k;
    out = x->nodes[j].output[0];
    last = (size_t)j;
    gone[n_gone++] = last;
    j = sole_reader(x, out);
  } else if ((sm = silu_after(x, out, last, &ss)) >= 0) { /* x * Sigmoid(x) */
    act = OX_ACT_SILU;
    out = x->nodes[sm].output[0];
    gone[n_gone++] = (size_t)ss;
    gone[n_gone++] = (size_t)sm;
    last = (size_t)sm;
    j = sole_reader(x, out);
  }
  /* then Max / Min with a scalar constant (not NaN) that raises no rank */
  int bound = 0;
  float bval = 0;
  const ox_node *mn = j > (int64_t)last ? &x->nodes[j] : NULL;
  if (mn && (op_is(mn, "Max") || op_is(mn, "Min")) && x->opsets[j] >= 8 && mn->n_input == 2 &&
      mn->n_output == 1 && mn->output[0] && *mn->output[0]) {
    const char *other = strcmp(mn->input[0], out) == 0 ? mn->input[1] : mn->input[0];
    const ox_value *cv = cst_of(x, other);
    const ox_value *wv = cst_of(x, c->input[1]);
    size_t max_rank = wv ? wv->rank : 3; /* Y has W's rank (at least 3) */
    if (cv && cv->kind == OX_VAL_TENSOR && cv->dtype == OX_FLOAT && cv->numel == 1 &&
        cv->rank <= max_rank && !isnan(*(const float *)cv->data)) {
      bound = op_is(mn, "Max") ? 1 : 2;
      bval = *(const float *)cv->data;
      out = mn->output[0];
      gone[n_gone++] = (size_t)j;
    }
  }
  if (!n_gone) return OX_OK;
  ox_node *fn = ox_arena_calloc(x->a, 1, sizeof *fn);
  char **in = ox_arena_calloc(x->a, 5, sizeof *in);
  char **o = ox_arena_calloc(x->a, 2, sizeof *o);
  ox_attr *at = ox_arena_calloc(x->a, c->n_attribute + 5, sizeof *at);
  if (!fn || !in || !o || !at) return oom(x);
  *fn = *c;
  fn->op_type = "FusedConv";
  fn->domain = OX_FUSED_DOMAIN;
  fn->name = fused_name(x, i, gone[n_gone - 1]);
  if (!fn->name) return oom(x);
  for (size_t q = 0; q < c->n_input; q++) in[q] = c->input[q];
  fn->n_input = c->n_input;
  if (res) {
    if (c->n_input < 3) in[2] = "";
    in[3] = (char *)res;
    fn->n_input = 4;
  }
  fn->input = in;
  o[0] = (char *)out;
  fn->output = o;
  if (c->n_attribute) memcpy(at, c->attribute, c->n_attribute * sizeof *at);
  ox_attr *aa = &at[c->n_attribute], *af = aa + 1, *ab = aa + 2;
  aa->name = "activation", aa->type = OX_ATTR_INT, aa->has_type = true;
  aa->i = act, aa->has_i = true;
  af->name = "alpha", af->type = OX_ATTR_FLOAT, af->has_type = true;
  af->f = al, af->has_f = true;
  ab->name = "beta", ab->type = OX_ATTR_FLOAT, ab->has_type = true;
  ab->f = be, ab->has_f = true;
  ox_attr *ad = aa + 3, *av = aa + 4;
  ad->name = "bound", ad->type = OX_ATTR_INT, ad->has_type = true;
  ad->i = bound, ad->has_i = true;
  av->name = "bound_value", av->type = OX_ATTR_FLOAT, av->has_type = true;
  av->f = bval, av->has_f = true;
  fn->attribute = at;
  fn->n_attribute = c->n_attribute + 5;
  for (size_t q = 0; q < n_gone; q++) x->drop[gone[q]] = true;
  repl[i] = fn;
  return OX_OK;
}

/* ------------------------------------------------------------ elementwise chains */

/* The fused opcode of a node (checking arity and opset), or -1. */
static int chain_op(const fctx *x, size_t i) {
  const ox_node *n = &x->nodes[i];
  int64_t ver = x->opsets[i];
  if (!is_default(n) || !n->op_type || n->n_output != 1 || !n->output[0] || !*n->output[0] ||
      has_subgraph(n))
    return -1;
  static const struct {
    const char *op;
    int code, min_ver, n_in;
  } t[] = {
      {"Add", FZ_ADD, 7, 2},           {"Sub", FZ_SUB, 7, 2},
      {"Mul", FZ_MUL, 7, 2},           {"Div", FZ_DIV, 7, 2},
      {"Max", FZ_MAX, 8, 2},           {"Min", FZ_MIN, 8, 2},
      {"Clip", FZ_CLIP, 6, -1},        {"Relu", FZ_RELU, 6, 1},
      {"LeakyRelu", FZ_LEAKY, 6, 1},   {"HardSigmoid", FZ_HSIGMOID, 6, 1},
      {"HardSwish", FZ_HSWISH, 14, 1}, {"Neg", FZ_NEG, 6, 1},
      {"Abs", FZ_ABS, 6, 1},           {"Sqrt", FZ_SQRT, 6, 1},
      {"Tanh", FZ_TANH, 6, 1},         {"Erf", FZ_ERF, 9, 1},
      {"Sigmoid", FZ_SIGMOID, 6, 1},
  };
  /* Pow by a float32 constant 2 or 3: the Pow kernel's x * x and x * x * x
   * (GPT-2's tanh GELU cubes its input) */
  if (strcmp(n->op_type, "Pow") == 0) {
    const ox_value *e = n->n_input == 2 && n->input[1] ? cst_of(x, n->input[1]) : NULL;
    if (ver < 7 || !e || e->kind != OX_VAL_TENSOR || e->dtype != OX_FLOAT || e->numel != 1)
      return -1;
    float v = *(const float *)e->data;
    return v == 2.0f ? FZ_POW2 : v == 3.0f ? FZ_POW3 : -1;
  }
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    if (strcmp(n->op_type, t[k].op) != 0) continue;
    if (ver < t[k].min_ver) return -1;
    if (t[k].n_in >= 0 && n->n_input != (size_t)t[k].n_in) return -1;
    if (t[k].code == FZ_CLIP && (n->n_input < 1 || n->n_input > (ver >= 11 ? 3u : 1u))) return -1;
    return t[k].code;
  }
  return -1;
}

/* A constant usable as an operand: float32, one element, or varying along
 * one axis only (axis counted from the right: *from_right, length *len). */
static bool operand_const(const ox_value *c, int64_t *from_right, int64_t *len) {
  if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT || c->numel < 1) return false;
  *from_right = 0;
  *len = 1;
  if (c->numel == 1) return true;
  int varying = 0;
  for (size_t d = 0; d < c->rank; d++)
    if (c->dims[d] != 1) {
      varying++;
      *from_right = (int64_t)(c->rank - d);
      *len = c->dims[d];
    }
  return varying == 1;
}

typedef struct grp {
  size_t idx[FZ_MAX_GROUP];
  size_t n;
  const char *names[FZ_MAX_GROUP + 1]; /* value names: root, then each node's output */
  int64_t axis_from_right, axis_len;   /* of the per-channel constants; 0: none */
} grp;

static int value_of(const grp *gr, size_t n_vals, const char *name) {
  for (size_t v = 0; v < n_vals; v++)
    if (strcmp(gr->names[v], name) == 0) return (int)v;
  return -1;
}

/* Whether node i can join the group (its operands are group values or
 * usable constants); updates the per-channel axis when it does. */
static bool can_join(const fctx *x, grp *gr, size_t n_vals, size_t i) {
  const ox_node *n = &x->nodes[i];
  int op = chain_op(x, i);
  if (op < 0) return false;
  int64_t fr = gr->axis_from_right, ln = gr->axis_len;
  for (size_t k = 0; k < n->n_input; k++) {
    const char *nm = n->input[k];
    if ((op == FZ_POW2 || op == FZ_POW3) && k > 0) continue; /* the exponent: chain_op checked it */
    if (op == FZ_CLIP && k > 0) {
      if (!nm || !*nm) continue;
      const ox_value *c = cst_of(x, nm);
      if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT || c->numel != 1) return false;
      continue;
    }
    if (!nm || !*nm) return false;
    int v = value_of(gr, n_vals, nm);
    if (v >= 0) continue;
    if (op >= FZ_CLIP) return false; /* unary: the operand must be a value */
    int64_t cfr, cln;
    if (!operand_const(cst_of(x, nm), &cfr, &cln)) return false;
    if (cln > 1) {
      if (fr && (fr != cfr || ln != cln)) return false;
      fr = cfr;
      ln = cln;
    }
  }
  /* a binary node needs a value operand */
  if (op < FZ_CLIP) {
    bool val = false;
    for (size_t k = 0; k < n->n_input; k++) val = val || value_of(gr, n_vals, n->input[k]) >= 0;
    if (!val) return false;
  }
  gr->axis_from_right = fr;
  gr->axis_len = ln;
  return true;
}

/* The root of a group started at node i: its one non-constant input. */
static const char *root_of(const fctx *x, size_t i) {
  const ox_node *n = &x->nodes[i];
  int op = chain_op(x, i);
  const char *root = NULL;
  size_t n_in = op == FZ_CLIP || op == FZ_POW2 || op == FZ_POW3 ? 1 : n->n_input;
  for (size_t k = 0; k < n_in; k++) {
    const char *nm = n->input[k];
    if (!nm || !*nm) return NULL;
    if (cst_of(x, nm) && op < FZ_CLIP) continue;
    if (root && strcmp(root, nm) != 0) return NULL;
    root = nm;
  }
  return root;
}

static size_t uses_within(const fctx *x, const grp *gr, const char *name) {
  size_t c = 0;
  for (size_t m = 0; m < gr->n; m++) {
    const ox_node *n = &x->nodes[gr->idx[m]];
    for (size_t q = 0; q < n->n_input; q++) c += n->input[q] && strcmp(n->input[q], name) == 0;
  }
  return c;
}

/* The part of the group that computes its k-th node: that node and the
 * nodes of the first k whose values it reads, directly or not. Fills sub
 * and tells whether it is closed: no value but the last one is read
 * outside it (nor is a graph output, nor read in a subgraph). */
static bool closed_part(const fctx *x, const grp *gr, size_t k, grp *sub) {
  bool mark[FZ_MAX_GROUP] = {false};
  mark[k - 1] = true;
  for (size_t m = k - 1; m-- > 0;)
    for (size_t l = m + 1; l < k && !mark[m]; l++) {
      if (!mark[l]) continue;
      const ox_node *n = &x->nodes[gr->idx[l]];
      for (size_t q = 0; q < n->n_input; q++)
        if (n->input[q] && strcmp(n->input[q], gr->names[m + 1]) == 0) mark[m] = true;
    }
  *sub = *gr;
  sub->n = 0;
  for (size_t m = 0; m < k; m++)
    if (mark[m]) {
      sub->idx[sub->n++] = gr->idx[m];
      sub->names[sub->n] = gr->names[m + 1];
    }
  for (size_t m = 0; m + 1 < sub->n; m++) {
    const char *nm = sub->names[m + 1];
    if (map_count(&x->pinned, nm)) return false;
    if (uses_within(x, sub, nm) != map_count(&x->uses, nm)) return false;
  }
  return sub->n >= 2;
}

static bool has_const(const fctx *x, const grp *gr) {
  for (size_t m = 0; m < gr->n; m++) {
    const ox_node *n = &x->nodes[gr->idx[m]];
    for (size_t q = 0; q < n->n_input; q++)
      if (cst_of(x, n->input[q])) return true;
  }
  return false;
}

typedef struct prog {
  int64_t *ops, *args, *crank, *cdims;
  float *params, *cdata;
  size_t n_ops, n_args, n_crank, n_cdims, n_params, n_cdata;
} prog;

static int push_i(fctx *x, int64_t **arr, size_t *n, int64_t v) {
  int64_t *p = OX_VEC_PUSH(x->a, *arr, *n);
  if (!p) return oom(x);
  *p = v;
  return OX_OK;
}

static int push_f(fctx *x, float **arr, size_t *n, float v) {
  float *p = OX_VEC_PUSH(x->a, *arr, *n);
  if (!p) return oom(x);
  *p = v;
  return OX_OK;
}

static int operand(fctx *x, prog *p, const grp *gr, size_t n_vals, const char *nm, int64_t *out) {
  int v = value_of(gr, n_vals, nm);
  if (v >= 0) {
    *out = v;
    return OX_OK;
  }
  const ox_value *c = cst_of(x, nm);
  *out = -(int64_t)p->n_crank - 1;
  if (push_i(x, &p->crank, &p->n_crank, (int64_t)c->rank)) return x->e->code;
  for (size_t d = 0; d < c->rank; d++)
    if (push_i(x, &p->cdims, &p->n_cdims, c->dims[d])) return x->e->code;
  const float *f = c->data;
  for (int64_t q = 0; q < c->numel; q++)
    if (push_f(x, &p->cdata, &p->n_cdata, f[q])) return x->e->code;
  return OX_OK;
}

static ox_attr *new_attr(fctx *x, ox_node *n, const char *name, int type) {
  ox_attr *a = OX_VEC_PUSH(x->a, n->attribute, n->n_attribute);
  if (!a) return NULL;
  a->name = (char *)name;
  a->type = type;
  a->has_type = true;
  return a;
}

/* Builds the ElementwiseChain node of the first k nodes of the group. */
static int emit_chain(fctx *x, const grp *gr, size_t k, ox_node **out) {
  prog p = {0};
  for (size_t m = 0; m < k; m++) {
    const ox_node *n = &x->nodes[gr->idx[m]];
    int op = chain_op(x, gr->idx[m]);
    size_t n_vals = m + 1;
    int64_t a = 0, b = 0;
    float p0 = 0, p1 = 0;
    if (operand(x, &p, gr, n_vals, n->input[0], &a)) return x->e->code;
    if (op < FZ_CLIP && operand(x, &p, gr, n_vals, n->input[1], &b)) return x->e->code;
    if (op == FZ_CLIP) {
      if (x->opsets[gr->idx[m]] >= 11) {
        p0 = -INFINITY;
        p1 = INFINITY;
        if (n->n_input > 1 && *n->input[1]) p0 = *(const float *)cst_of(x, n->input[1])->data;
        if (n->n_input > 2 && *n->input[2]) p1 = *(const float *)cst_of(x, n->input[2])->data;
      } else {
        p0 = ox_node_attr_float(n, "min", -3.402823466e+38f);
        p1 = ox_node_attr_float(n, "max", 3.402823466e+38f);
      }
    } else if (op == FZ_LEAKY) {
      p0 = ox_node_attr_float(n, "alpha", 0.01f);
    } else if (op == FZ_HSIGMOID) {
      p0 = ox_node_attr_float(n, "alpha", 0.2f);
      p1 = ox_node_attr_float(n, "beta", 0.5f);
    }
    if (push_i(x, &p.ops, &p.n_ops, op) || push_i(x, &p.args, &p.n_args, a) ||
        push_i(x, &p.args, &p.n_args, b) || push_f(x, &p.params, &p.n_params, p0) ||
        push_f(x, &p.params, &p.n_params, p1))
      return x->e->code;
  }
  ox_node *fn = ox_arena_calloc(x->a, 1, sizeof *fn);
  if (!fn) return oom(x);
  fn->op_type = "ElementwiseChain";
  fn->domain = OX_FUSED_DOMAIN;
  fn->name = fused_name(x, gr->idx[0], gr->idx[k - 1]);
  fn->input = ox_arena_calloc(x->a, 2, sizeof *fn->input);
  fn->output = ox_arena_calloc(x->a, 2, sizeof *fn->output);
  if (!fn->name || !fn->input || !fn->output) return oom(x);
  fn->input[0] = (char *)gr->names[0];
  fn->output[0] = (char *)gr->names[k];
  fn->n_input = fn->n_output = 1;
  ox_attr *a;
  if (!(a = new_attr(x, fn, "ops", OX_ATTR_INTS))) return oom(x);
  a->ints = p.ops, a->n_ints = p.n_ops;
  if (!(a = new_attr(x, fn, "args", OX_ATTR_INTS))) return oom(x);
  a->ints = p.args, a->n_ints = p.n_args;
  if (!(a = new_attr(x, fn, "params", OX_ATTR_FLOATS))) return oom(x);
  a->floats = p.params, a->n_floats = p.n_params;
  if (!(a = new_attr(x, fn, "crank", OX_ATTR_INTS))) return oom(x);
  a->ints = p.crank, a->n_ints = p.n_crank;
  if (!(a = new_attr(x, fn, "cdims", OX_ATTR_INTS))) return oom(x);
  a->ints = p.cdims, a->n_ints = p.n_cdims;
  if (!(a = new_attr(x, fn, "cdata", OX_ATTR_FLOATS))) return oom(x);
  a->floats = p.cdata, a->n_floats = p.n_cdata;
  *out = fn;
  return OX_OK;
}

/* Finds the groups; repl[i] is the fused node that replaces node i (the
 * group's last node), drop[i] marks the group's other nodes. */
static int fuse_chains(fctx *x, ox_node **repl) {
  size_t nn = x->g->n_node;
  for (size_t i = 0; i < nn; i++) {
    if (x->drop[i] || repl[i] || chain_op(x, i) < 0) continue;
    const char *root = root_of(x, i);
    if (!root || cst_of(x, root)) continue; /* constant roots are folded in prepare */
    grp gr = {0};
    gr.names[0] = root;
    gr.n = 0;
    if (!can_join(x, &gr, 1, i)) continue;
    gr.idx[gr.n++] = i;
    gr.names[gr.n] = x->nodes[i].output[0];
    size_t end = map_count(&x->lastuse, gr.names[1]);
    for (size_t j = i + 1; j < nn && j < end && gr.n < FZ_MAX_GROUP; j++) {
      if (x->drop[j] || repl[j]) continue;
      grp trial = gr;
      if (!can_join(x, &trial, gr.n + 1, j)) continue;
      gr = trial;
      gr.idx[gr.n++] = j;
      gr.names[gr.n] = x->nodes[j].output[0];
      size_t lu = map_count(&x->lastuse, gr.names[gr.n]);
      if (lu > end) end = lu;
    }
    grp sub;
    size_t k = gr.n;
    while (k >= 2 && !closed_part(x, &gr, k, &sub)) k--;
    if (k < 2 || !(has_const(x, &sub) || map_count(&x->floatval, root))) continue;
    ox_node *fn = NULL;
    if (emit_chain(x, &sub, sub.n, &fn)) return x->e->code;
    for (size_t m = 0; m + 1 < sub.n; m++) x->drop[sub.idx[m]] = true;
    repl[sub.idx[sub.n - 1]] = fn;
  }
  return OX_OK;
}

/* Constant and ConstantOfShape nodes whose every reader was folded away. */
static void drop_dead_constants(fctx *x, ox_node *const *repl) {
  ox_map live;
  ox_map_init(&live);
  for (size_t i = 0; i < x->g->n_node; i++) {
    if (x->drop[i]) continue;
    const ox_node *n = repl[i] ? repl[i] : &x->nodes[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && *n->input[k] && ox_map_put(&live, n->input[k], 1)) goto out;
    for (size_t k = 0; k < n->n_attribute; k++)
      if (n->attribute[k].g || n->attribute[k].n_graphs) goto out; /* keep it simple */
  }
  for (size_t i = 0; i < x->g->n_node; i++) {
    const ox_node *n = &x->nodes[i];
    if (x->drop[i] || repl[i] || !(op_is(n, "Constant") || op_is(n, "ConstantOfShape")) ||
        n->n_output != 1 || !n->output[0])
      continue;
    if (!map_count(&live, n->output[0]) && !map_count(&x->pinned, n->output[0])) x->drop[i] = true;
  }
out:
  ox_map_free(&live);
}

/* ------------------------------------------------------------ src/opt/ passes */

static const ox_tensor *view_constant(const ox_pass_view *v, const char *name) {
  return const_init(v->host, name);
}

static int64_t view_sole_reader(const ox_pass_view *v, const char *name) {
  return sole_reader(v->host, name);
}

static bool view_pinned(const ox_pass_view *v, const char *name) {
  const fctx *x = v->host;
  return map_count(&x->pinned, name) > 0;
}

static void view_renamed(const ox_pass_view *v, const char *from, const char *to) {
  fctx *x = v->host;
  size_t last = map_count(&x->lastuse, from);
  if (map_add(&x->uses, to, map_count(&x->uses, from)) ||
      (last > map_count(&x->lastuse, to) && ox_map_put(&x->lastuse, to, last)))
    x->rename_oom = true;
}

static bool view_float_const(const ox_pass_view *v, const char *name, ox_pass_floats *out) {
  const fctx *x = v->host;
  const ox_value *c = cst_of(x, name);
  if (!c) /* a weight folded by this step (fold_conv) */
    for (size_t k = 0; name && k < x->n_inits; k++)
      if (strcmp(x->inits[k].name, name) == 0) {
        const ox_tensor *t = &x->inits[k];
        out->data = t->float_data;
        out->dims = t->dims;
        out->rank = t->n_dims;
        out->numel = (int64_t)t->n_float_data;
        return true;
      }
  if (!c || c->kind != OX_VAL_TENSOR || c->dtype != OX_FLOAT) return false;
  out->data = c->data;
  out->dims = c->dims;
  out->rank = c->rank;
  out->numel = c->numel;
  return true;
}

static void view_reads(const ox_pass_view *v, const char *name, size_t at) {
  fctx *x = v->host;
  if (map_count(&x->lastuse, name) < at + 1 && ox_map_put(&x->lastuse, name, at + 1))
    x->rename_oom = true;
}

static void view_init(fctx *x, ox_node **repl, ox_pass_view *v) {
  memset(v, 0, sizeof *v);
  v->a = x->a;
  v->e = x->e;
  v->nodes = x->nodes;
  v->n_node = x->g->n_node;
  v->opsets = x->opsets;
  v->drop = x->drop;
  v->repl = repl;
  v->constant = view_constant;
  v->sole_reader = view_sole_reader;
  v->pinned = view_pinned;
  v->renamed = view_renamed;
  v->float_const = view_float_const;
  v->reads = view_reads;
  v->host = x;
  v->low_bit_int8 = x->s->opts.low_bit_int8;
}

/* passes that read the FusedConv epilogues the host made */
static int run_late_passes(fctx *x, ox_node **repl) {
  ox_pass_view v;
  view_init(x, repl, &v);
  int rc = ox_opt_conv_prologue(&v);
  if (!rc) rc = ox_opt_channel_shuffle(&v);
  if (!rc) rc = ox_opt_conv_gate(&v);
  if (!rc && x->rename_oom) rc = oom(x);
  return rc;
}

static int run_opt_passes(fctx *x, ox_node **repl) {
  ox_pass_view v;
  view_init(x, repl, &v);
  int rc = ox_opt_cse(&v);
  if (!rc && x->rename_oom) rc = oom(x);
  if (!rc) rc = ox_opt_matmul_transb(&v);
  if (!rc) rc = ox_opt_tied_gather(&v);
  if (!rc) rc = ox_opt_layernorm(&v);
  if (!rc) rc = ox_opt_attention(&v);
  if (!rc) rc = ox_opt_matmul_epi(&v);
  if (rc || x->s->opts.quant_fusion_off) return rc;
  rc = ox_opt_qdq_conv(&v);
  if (!rc) rc = ox_opt_qdq_eltwise(&v);
  if (!rc) rc = ox_opt_dyn_matmul(&v);
  return rc ? rc : ox_opt_dq_matmul(&v);
}

/* ------------------------------------------------------------ pass */

static int64_t model_opset(const ox_session *s, const ox_node *n) {
  const ox_model_proto *mp = s->model->proto;
  const char *dom = n->domain ? n->domain : "";
  int64_t v = ox_opset_version(mp->opset_import, mp->n_opset_import, dom);
  if (v < 0 && ox_is_default_domain(dom) && mp->n_opset_import == 0) v = 1;
  return v;
}

int ox_rt_fuse(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e) {
  *out = g;
  if (s->opts.optimization_level < 1 || g->n_node < 2) return OX_OK;
  fctx x = {0};
  x.s = s;
  x.a = s->arena;
  x.g = g;
  x.e = e;
  ox_map_init(&x.csts);
  ox_map_init(&x.uses);
  ox_map_init(&x.pinned);
  ox_map_init(&x.lastuse);
  ox_map_init(&x.floatval);
  int rc = OX_OK;
  const int64_t *noted = NULL;
  for (size_t i = 0; i < s->n_notes; i++)
    if (s->notes[i].g == g) noted = s->notes[i].opsets;
  int64_t *opsets = ox_arena_calloc(x.a, g->n_node, sizeof *opsets);
  x.nodes = ox_arena_calloc(x.a, g->n_node, sizeof *x.nodes);
  x.drop = ox_arena_calloc(x.a, g->n_node, sizeof *x.drop);
  ox_node **repl = calloc(g->n_node, sizeof *repl);
  if (!opsets || !x.nodes || !x.drop || !repl) {
    rc = oom(&x);
    goto done;
  }
  for (size_t i = 0; i < g->n_node; i++) {
    opsets[i] = noted ? noted[i] : model_opset(s, &g->node[i]);
    x.nodes[i] = g->node[i];
  }
  x.opsets = opsets;
  if ((rc = collect(&x)) || (rc = run_opt_passes(&x, repl))) goto done;
  for (size_t i = 0; i < g->n_node && !rc; i++) rc = fold_conv(&x, i);
  for (size_t i = 0; i < g->n_node && !rc; i++) rc = fuse_conv_epilogue(&x, i, repl);
  if (rc || (rc = run_late_passes(&x, repl)) || (rc = fuse_chains(&x, repl))) goto done;
  drop_dead_constants(&x, repl);
  size_t kept = 0;
  bool changed = x.n_inits > 0;
  for (size_t i = 0; i < g->n_node; i++) {
    kept += !x.drop[i];
    changed = changed || x.drop[i] || repl[i];
  }
  if (!changed) goto done;
  ox_graph *ng = ox_arena_calloc(x.a, 1, sizeof *ng);
  ox_node *nodes = ox_arena_calloc(x.a, kept + 1, sizeof *nodes);
  int64_t *nops = ox_arena_calloc(x.a, kept + 1, sizeof *nops);
  rt_opset_note *note = ng && nodes && nops ? OX_VEC_PUSH(x.a, s->notes, s->n_notes) : NULL;
  if (!note) {
    rc = oom(&x);
    goto done;
  }
  *ng = *g;
  size_t k = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    if (x.drop[i]) continue;
    nodes[k] = repl[i] ? *repl[i] : x.nodes[i];
    nops[k++] = repl[i] ? 1 : opsets[i];
  }
  ng->node = nodes;
  ng->n_node = kept;
  if (x.n_inits) {
    ox_tensor *ini = ox_arena_calloc(x.a, g->n_initializer + x.n_inits, sizeof *ini);
    if (!ini) {
      rc = oom(&x);
      goto done;
    }
    if (g->n_initializer) memcpy(ini, g->initializer, g->n_initializer * sizeof *ini);
    memcpy(ini + g->n_initializer, x.inits, x.n_inits * sizeof *ini);
    ng->initializer = ini;
    ng->n_initializer = g->n_initializer + x.n_inits;
  }
  note->g = ng;
  note->opsets = nops;
  *out = ng;
done:
  for (size_t i = 0; i < x.n_cv; i++) ox_value_unref(x.cv[i].v);
  free(repl);
  ox_map_free(&x.csts);
  ox_map_free(&x.uses);
  ox_map_free(&x.pinned);
  ox_map_free(&x.lastuse);
  ox_map_free(&x.floatval);
  return rc;
}
