/* graph_view.c - the host behind the pass view: what the passes of src/opt/
 * ask about the graph they rewrite.
 *
 * It keeps a working copy of the main graph's nodes with drop and
 * replacement marks (pass.h), and answers from what it collected once:
 *  - constants: initializers (an initializer that backs a graph input only
 *    when the request takes such inputs as constants), and float32 values
 *    of Constant nodes, of ConstantOfShape over a constant shape and of
 *    Unsqueeze / Reshape / Identity of a small float constant. Tensors are
 *    decoded from the IR (float_data, raw_data or loaded external data) by
 *    the runtime's rules, on first use for initializers (most weights are
 *    only passed through); a tensor the runtime would refuse is no constant;
 *  - readers: how many times each name is read, by which node last, and the
 *    names no rewrite may hide (graph outputs, names read in subgraphs);
 *  - names known to hold float32;
 *  - the initializers passes made (folded Conv weights). */
#include "graph_view.h"

#include <stdlib.h>
#include <string.h>

/* a constant: t until first asked for, then f (data borrowed from the model
 * or owned) when it could be decoded */
typedef struct known_cst {
  const ox_tensor *t;
  bool ready;
  float *owned;
  ox_pass_floats f;
} known_cst;

struct ox_opt_host {
  ox_arena *a;
  const ox_graph *g;
  ox_err *e;
  bool inputs_const;
  ox_map csts; /* name -> index + 1 into cv */
  known_cst *cv;
  size_t n_cv;
  ox_map uses;     /* name -> number of reads by main-graph nodes */
  ox_map pinned;   /* graph outputs and names read inside subgraphs */
  ox_map lastuse;  /* name -> index + 1 of the last node reading it */
  ox_map floatval; /* names known to hold float32 tensors */
  ox_map cnodes;   /* output of a Constant node with a `value` tensor -> index + 1 */
  ox_node **repl;
  ox_tensor *inits; /* made by passes */
  size_t n_inits;
  ox_value_info *inputs; /* graph inputs made by passes */
  size_t n_inputs;
  unsigned long counter;
  bool rename_oom;
};

static int oom(ox_opt_host *h) {
  return ox_err_set(h->e, OX_ENOMEM, "out of memory fusing the graph");
}

static size_t map_count(const ox_map *m, const char *k) {
  uintptr_t v;
  return k && ox_map_get(m, k, &v) ? (size_t)v : 0;
}

static int map_add(ox_map *m, const char *k, size_t d) {
  return ox_map_put(m, k, (uintptr_t)(map_count(m, k) + d));
}

/* ------------------------------------------------------------ decoding */

static bool little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* t's element count when the runtime would make a value of it (elements of
 * es bytes): data present, no segment, a valid shape */
static bool tensor_numel(const ox_tensor *t, size_t es, int64_t *n) {
  if ((t->data_location == 1 && !t->external.data) || t->segment || (t->n_dims && !t->dims))
    return false;
  for (size_t i = 0; i < t->n_dims; i++)
    if (t->dims[i] < 0) return false;
  size_t nb;
  return ox_numel(t->dims, t->n_dims, n) && ox_mul_size((size_t)*n, es, &nb);
}

/* a float32 tensor's values: the payload in place when aligned (little-
 * endian host), else a copy (*owned), or the float_data field */
static bool decode_floats(const ox_tensor *t, known_cst *c) {
  int64_t n;
  if (t->data_type != OX_FLOAT || !tensor_numel(t, 4, &n)) return false;
  ox_bytes pl = ox_tensor_payload(t);
  const float *data;
  if (pl.data) {
    if (pl.size != (size_t)n * 4) return false;
    if (little_endian() && (uintptr_t)pl.data % 4 == 0) {
      data = (const float *)(const void *)pl.data;
    } else {
      float *f = malloc(((size_t)n + 1) * sizeof *f);
      if (!f) return false;
      for (int64_t q = 0; q < n; q++) {
        const uint8_t *b = pl.data + q * 4;
        uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24;
        memcpy(&f[q], &u, 4);
      }
      /* a large payload copied out of the model file is read from the copy
       * from now on: its file pages may go (as the runtime's values do) */
      if (pl.size >= ((size_t)64 << 10)) ox_pages_unneeded(pl.data, pl.size);
      c->owned = f;
      data = f;
    }
  } else {
    if (t->n_float_data != (size_t)n) return false;
    data = t->float_data;
  }
  c->f.data = data;
  c->f.dims = t->dims;
  c->f.rank = t->n_dims;
  c->f.numel = n;
  c->ready = true;
  return true;
}

/* the values of a 1-D int64 tensor of at most max elements (a shape) */
static bool small_ints(const ox_tensor *t, int64_t *out, size_t max, size_t *count) {
  int64_t n;
  if (!t || t->data_type != OX_INT64 || !tensor_numel(t, 8, &n) || t->n_dims != 1 ||
      n > (int64_t)max)
    return false;
  ox_bytes pl = ox_tensor_payload(t);
  if (pl.data) {
    if (pl.size != (size_t)n * 8) return false;
    for (int64_t i = 0; i < n; i++) { /* little-endian, as raw_data is */
      uint64_t x = 0;
      for (int b = 7; b >= 0; b--) x = x << 8 | pl.data[i * 8 + b];
      out[i] = (int64_t)x;
    }
  } else {
    if (t->n_int64_data != (size_t)n) return false;
    if (n) memcpy(out, t->int64_data, (size_t)n * sizeof *out);
  }
  *count = (size_t)n;
  return true;
}

/* ------------------------------------------------------------ constants */

static const ox_pass_floats *cst_of(const ox_opt_host *h, const char *name) {
  uintptr_t v;
  if (!name || !*name || !ox_map_get(&h->csts, name, &v)) return NULL;
  known_cst *c = &h->cv[v - 1];
  if (c->t) { /* decoded on first use; a tensor that cannot be is no constant */
    const ox_tensor *t = c->t;
    c->t = NULL;
    decode_floats(t, c);
  }
  return c->ready ? &c->f : NULL;
}

/* c (decoded, or an initializer to decode later) as name's constant */
static int add_cst(ox_opt_host *h, const char *name, const known_cst *c) {
  known_cst *slot = OX_VEC_PUSH(h->a, h->cv, h->n_cv);
  if (!slot) {
    free(c->owned);
    return oom(h);
  }
  *slot = *c; /* the host frees what the slot owns */
  return ox_map_put(&h->csts, name, h->n_cv) ? oom(h) : OX_OK;
}

/* An initializer taken as a constant. */
static const ox_tensor *const_init(const ox_opt_host *h, const char *name) {
  const ox_graph *g = h->g;
  if (!name || !*name) return NULL;
  for (size_t k = 0; k < g->n_input; k++)
    if (g->input[k].name && strcmp(g->input[k].name, name) == 0 && !h->inputs_const) return NULL;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
      return &g->initializer[i];
  return NULL;
}

/* The float32 output of a ConstantOfShape over a constant shape (models
 * that build their weights this way), within a total element budget. */
static bool const_of_shape(ox_opt_host *h, const ox_node *n, int64_t *budget, known_cst *out) {
  const ox_attr *va = ox_node_attr(n, "value");
  if (va && (!va->t || va->t->data_type != OX_FLOAT)) return false;
  int64_t d[8];
  size_t rank;
  if (!small_ints(const_init(h, n->input[0]), d, 8, &rank)) return false;
  known_cst fill = {0};
  if (va && !decode_floats(va->t, &fill)) return false;
  bool ok = !va || fill.f.numel == 1;
  int64_t numel = 1;
  for (size_t k = 0; k < rank && ok; k++) {
    ok = d[k] >= 0 && d[k] <= *budget;
    numel *= ok ? d[k] : 1;
    ok = ok && numel <= *budget;
  }
  int64_t *dims = ok ? ox_arena_calloc(h->a, rank + 1, sizeof *dims) : NULL;
  float *o = dims ? malloc(((size_t)numel + 1) * sizeof *o) : NULL;
  if (o) {
    *budget -= numel;
    float f = va ? fill.f.data[0] : 0.0f;
    for (int64_t k = 0; k < numel; k++) o[k] = f;
    if (rank) memcpy(dims, d, rank * sizeof *dims);
    *out = (known_cst){.ready = true, .owned = o, .f = {o, dims, rank, numel}};
  }
  free(fill.owned);
  return o != NULL;
}

/* Unsqueeze, Reshape or Identity of a small float constant: its values under
 * the new dims. Exporters write a per-channel scale as Unsqueeze(s [C]) ->
 * [C, 1, 1]; known here, the Mul and Add after a Conv fold into it. */
static bool reshaped_const(ox_opt_host *h, const ox_node *n, int64_t opset, known_cst *out) {
  bool unsq = ox_opt_op_is(n, "Unsqueeze"), resh = ox_opt_op_is(n, "Reshape");
  if ((!unsq && !resh && !ox_opt_op_is(n, "Identity")) || n->n_output != 1 || n->n_input < 1 ||
      !n->output[0] || !*n->output[0])
    return false;
  const ox_pass_floats *c = cst_of(h, n->input[0]);
  if (!c || c->numel > 65536 || c->rank > 8) return false;
  int64_t arg[8], dims[8];
  size_t na = 0, r = c->rank;
  if (r) memcpy(dims, c->dims, r * sizeof *dims);
  if (unsq || resh) { /* axes (Unsqueeze before opset 13: an attribute) or shape */
    const ox_attr *at = unsq && opset < 13 ? ox_node_attr(n, "axes") : NULL;
    if (at) {
      if (at->n_ints > 8) return false;
      na = at->n_ints;
      if (na) memcpy(arg, at->ints, na * sizeof *arg);
    } else if (n->n_input != 2 || !small_ints(const_init(h, n->input[1]), arg, 8, &na)) {
      return false;
    }
  }
  if (unsq) {
    size_t out_r = r + na;
    if (out_r > 8) return false;
    bool one[8] = {false};
    for (size_t k = 0; k < na; k++) {
      int64_t ax = arg[k] < 0 ? arg[k] + (int64_t)out_r : arg[k];
      if (ax < 0 || ax >= (int64_t)out_r || one[ax]) return false;
      one[ax] = true;
    }
    for (size_t d = 0, src = 0; d < out_r; d++) dims[d] = one[d] ? 1 : c->dims[src++];
    r = out_r;
  } else if (resh) {
    if (opset >= 14 && ox_node_attr_int(n, "allowzero", 0) != 0) return false;
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < na; d++) {
      dims[d] = arg[d] == 0 && d < c->rank ? c->dims[d] : arg[d];
      if (dims[d] == -1 && infer < 0)
        infer = (int64_t)d;
      else if (dims[d] < 1)
        return false;
      else
        known *= dims[d];
    }
    if (infer >= 0) dims[infer] = known > 0 && c->numel % known == 0 ? c->numel / known : -1;
    if (infer >= 0 && dims[infer] < 0) return false;
    if ((infer >= 0 ? known * dims[infer] : known) != c->numel) return false;
    r = na;
  }
  int64_t *d = ox_arena_calloc(h->a, r + 1, sizeof *d);
  if (!d) return false;
  memcpy(d, dims, r * sizeof *d);
  /* the values are the source constant's, which lives as long as the host */
  *out = (known_cst){.ready = true, .f = {c->data, d, r, c->numel}};
  return true;
}

/* ------------------------------------------------------------ collecting */

/* names read anywhere inside a subgraph (outer-scope uses among them) */
static int pin_subgraph(ox_opt_host *h, const ox_graph *sg) {
  for (size_t i = 0; i < sg->n_node; i++) {
    const ox_node *n = &sg->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && *n->input[k] && ox_map_put(&h->pinned, n->input[k], 1)) return oom(h);
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      if (at->g && pin_subgraph(h, at->g)) return h->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (pin_subgraph(h, &at->graphs[j])) return h->e->code;
    }
  }
  for (size_t i = 0; i < sg->n_output; i++)
    if (sg->output[i].name && ox_map_put(&h->pinned, sg->output[i].name, 1)) return oom(h);
  return OX_OK;
}

static void note_float(ox_opt_host *h, const ox_value_info *vi) {
  if (vi->name && vi->type && vi->type->kind == OX_TYPE_TENSOR && vi->type->has_elem_type &&
      vi->type->elem_type == OX_FLOAT)
    (void)ox_map_put(&h->floatval, vi->name, 1);
}

static int collect(ox_opt_host *h, const int64_t *opsets) {
  const ox_graph *g = h->g;
  for (size_t i = 0; i < g->n_initializer; i++) {
    const ox_tensor *t = &g->initializer[i];
    if (!t->name || t->data_type != OX_FLOAT) continue;
    bool is_input = false;
    for (size_t k = 0; k < g->n_input && !is_input; k++)
      is_input = g->input[k].name && strcmp(g->input[k].name, t->name) == 0;
    if (is_input && !h->inputs_const) continue;
    known_cst c = {.t = t};
    if (add_cst(h, t->name, &c)) return h->e->code;
    (void)ox_map_put(&h->floatval, t->name, 1);
  }
  int64_t budget = (int64_t)1 << 27; /* elements made from ConstantOfShape */
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    known_cst c = {0};
    if (ox_opt_op_is(n, "ConstantOfShape") && n->n_input == 1 && n->n_output == 1 &&
        n->output[0] && *n->output[0] && const_of_shape(h, n, &budget, &c) &&
        add_cst(h, n->output[0], &c))
      return h->e->code;
    if (n->op_type && strcmp(n->op_type, "Constant") == 0 && !(n->domain && *n->domain) &&
        n->n_output == 1 && n->output[0] && *n->output[0]) {
      const ox_attr *a = ox_node_attr(n, "value");
      const ox_attr *af = ox_node_attr(n, "value_float");
      bool made = false;
      if (a && a->t && ox_map_put(&h->cnodes, n->output[0], i + 1)) return oom(h);
      c = (known_cst){0};
      if (a && a->t && a->t->data_type == OX_FLOAT) {
        made = decode_floats(a->t, &c);
      } else if (af && af->has_f && (c.owned = malloc(sizeof *c.owned))) {
        c.owned[0] = af->f;
        c.f = (ox_pass_floats){c.owned, NULL, 0, 1};
        made = c.ready = true;
      }
      if (made && add_cst(h, n->output[0], &c)) return h->e->code;
    }
    c = (known_cst){0};
    if (reshaped_const(h, n, opsets[i], &c)) {
      if (add_cst(h, n->output[0], &c)) return h->e->code;
      (void)ox_map_put(&h->floatval, n->output[0], 1);
    }
    for (size_t k = 0; k < n->n_input; k++) {
      const char *nm = n->input[k];
      if (!nm || !*nm) continue;
      if (map_add(&h->uses, nm, 1) || ox_map_put(&h->lastuse, nm, i + 1)) return oom(h);
    }
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      if (at->g && pin_subgraph(h, at->g)) return h->e->code;
      for (size_t j = 0; j < at->n_graphs; j++)
        if (pin_subgraph(h, &at->graphs[j])) return h->e->code;
    }
  }
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && ox_map_put(&h->pinned, g->output[i].name, 1)) return oom(h);
  for (size_t i = 0; i < g->n_input; i++) note_float(h, &g->input[i]);
  for (size_t i = 0; i < g->n_value_info; i++) note_float(h, &g->value_info[i]);
  for (size_t i = 0; i < g->n_output; i++) note_float(h, &g->output[i]);
  return OX_OK;
}

/* ------------------------------------------------------------ the view */

static const ox_tensor *view_constant(const ox_pass_view *v, const char *name) {
  return const_init(v->host, name);
}

static const ox_tensor *view_constant_any(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  const ox_tensor *t = const_init(h, name);
  size_t at = t ? 0 : map_count(&h->cnodes, name);
  if (at) {
    const ox_attr *a = ox_node_attr(&h->g->node[at - 1], "value");
    t = a ? a->t : NULL;
  }
  return t;
}

/* The only node reading `name` (index), or -1 when there are several, none,
 * or the value is a graph output or read inside a subgraph. */
static int64_t view_sole_reader(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  if (!name || !*name || map_count(&h->uses, name) != 1 || map_count(&h->pinned, name)) return -1;
  size_t at = map_count(&h->lastuse, name);
  return at && !v->drop[at - 1] ? (int64_t)at - 1 : -1;
}

static bool view_pinned(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  return map_count(&h->pinned, name) > 0;
}

static void view_renamed(const ox_pass_view *v, const char *from, const char *to) {
  ox_opt_host *h = v->host;
  size_t last = map_count(&h->lastuse, from);
  if (map_add(&h->uses, to, map_count(&h->uses, from)) ||
      (last > map_count(&h->lastuse, to) && ox_map_put(&h->lastuse, to, last)))
    h->rename_oom = true;
}

static bool view_graph_float_const(const ox_pass_view *v, const char *name,
                                   ox_pass_floats *out) {
  const ox_pass_floats *c = cst_of(v->host, name);
  if (c) *out = *c;
  return c != NULL;
}

static bool view_float_const(const ox_pass_view *v, const char *name, ox_pass_floats *out) {
  const ox_opt_host *h = v->host;
  if (view_graph_float_const(v, name, out)) return true;
  for (size_t k = 0; name && k < h->n_inits; k++) /* a weight a pass folded */
    if (strcmp(h->inits[k].name, name) == 0) {
      const ox_tensor *t = &h->inits[k];
      out->data = t->float_data;
      out->dims = t->dims;
      out->rank = t->n_dims;
      out->numel = (int64_t)t->n_float_data;
      return true;
    }
  return false;
}

static void view_reads(const ox_pass_view *v, const char *name, size_t at) {
  ox_opt_host *h = v->host;
  if (map_count(&h->lastuse, name) < at + 1 && ox_map_put(&h->lastuse, name, at + 1))
    h->rename_oom = true;
}

static size_t view_n_reads(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  return map_count(&h->uses, name);
}

static size_t view_last_read(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  return map_count(&h->lastuse, name);
}

static bool view_is_float(const ox_pass_view *v, const char *name) {
  const ox_opt_host *h = v->host;
  return map_count(&h->floatval, name) > 0;
}

static int view_new_float_init(ox_pass_view *v, const char *base, const int64_t *dims,
                               size_t rank, float **data, const char **name) {
  ox_opt_host *h = v->host;
  int64_t n = 1;
  for (size_t k = 0; k < rank; k++) n *= dims[k];
  ox_tensor *t = OX_VEC_PUSH(h->a, h->inits, h->n_inits);
  float *f = ox_arena_alloc(h->a, ((size_t)n + 1) * sizeof *f);
  int64_t *d = ox_arena_calloc(h->a, rank + 1, sizeof *d);
  char *nm = ox_arena_printf(h->a, "%s#folded%lu", base, ++h->counter);
  if (!t || !f || !d || !nm || ox_map_put(&h->floatval, nm, 1)) return oom(h);
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

static int view_new_input(ox_pass_view *v, const char *name, ox_type *t) {
  ox_opt_host *h = v->host;
  ox_value_info *vi = OX_VEC_PUSH(h->a, h->inputs, h->n_inputs);
  if (!vi) return oom(h);
  memset(vi, 0, sizeof *vi);
  vi->name = (char *)name;
  vi->type = t;
  return OX_OK;
}

/* ------------------------------------------------------------ life */

ox_opt_host *ox_opt_host_new(ox_arena *a, const ox_graph *g, const int64_t *opsets,
                             bool inputs_const, bool low_bit_int8, ox_pass_view *v, ox_err *e) {
  ox_opt_host *h = calloc(1, sizeof *h);
  ox_node *nodes = ox_arena_calloc(a, g->n_node + 1, sizeof *nodes);
  bool *drop = ox_arena_calloc(a, g->n_node + 1, sizeof *drop);
  ox_node **repl = calloc(g->n_node + 1, sizeof *repl);
  if (!h || !nodes || !drop || !repl) {
    free(h);
    free(repl);
    ox_err_set(e, OX_ENOMEM, "out of memory fusing the graph");
    return NULL;
  }
  h->a = a;
  h->g = g;
  h->e = e;
  h->inputs_const = inputs_const;
  h->repl = repl;
  ox_map_init(&h->csts);
  ox_map_init(&h->uses);
  ox_map_init(&h->pinned);
  ox_map_init(&h->lastuse);
  ox_map_init(&h->floatval);
  ox_map_init(&h->cnodes);
  for (size_t i = 0; i < g->n_node; i++) nodes[i] = g->node[i];
  if (collect(h, opsets)) {
    ox_opt_host_free(h);
    return NULL;
  }
  memset(v, 0, sizeof *v);
  v->a = a;
  v->e = e;
  v->nodes = nodes;
  v->n_node = g->n_node;
  v->opsets = opsets;
  v->drop = drop;
  v->repl = repl;
  v->low_bit_int8 = low_bit_int8;
  v->constant = view_constant;
  v->constant_any = view_constant_any;
  v->sole_reader = view_sole_reader;
  v->pinned = view_pinned;
  v->renamed = view_renamed;
  v->float_const = view_float_const;
  v->reads = view_reads;
  v->graph_float_const = view_graph_float_const;
  v->n_reads = view_n_reads;
  v->last_read = view_last_read;
  v->is_float = view_is_float;
  v->new_float_init = view_new_float_init;
  v->graph = g;
  v->new_input = view_new_input;
  v->host = h;
  return h;
}

bool ox_opt_host_oom(const ox_opt_host *h) { return h->rename_oom; }

const ox_tensor *ox_opt_host_inits(const ox_opt_host *h, size_t *n) {
  *n = h->n_inits;
  return h->inits;
}

const ox_value_info *ox_opt_host_new_inputs(const ox_opt_host *h, size_t *n) {
  *n = h->n_inputs;
  return h->inputs;
}

void ox_opt_host_free(ox_opt_host *h) {
  if (!h) return;
  for (size_t i = 0; i < h->n_cv; i++) free(h->cv[i].owned);
  free(h->repl);
  ox_map_free(&h->csts);
  ox_map_free(&h->uses);
  ox_map_free(&h->pinned);
  ox_map_free(&h->lastuse);
  ox_map_free(&h->floatval);
  ox_map_free(&h->cnodes);
  free(h);
}
