/* elementwise_chain.c - chains of float32 elementwise nodes as one node.
 *
 * Maximal groups of float32 elementwise nodes rooted at one tensor, whose
 * other operands are constants of one element or of one element per
 * channel, become one ai.onnxc ElementwiseChain node (src/ops/fused/fused.c;
 * opcodes FZ_* of onnxc_ops.h). A value computed inside a group may be read
 * several times inside it; one read outside the group (or a graph output,
 * or a use inside a subgraph) ends the group at that value. Runs after the
 * convolution passes, so a Conv's activation goes to its epilogue first. */
#include <math.h>
#include <string.h>

#include "pass.h"

#define FZ_MAX_GROUP 64

/* the float32 constant the input graph holds for name (in *c), or NULL */
static const ox_pass_floats *cst(const ox_pass_view *v, const char *name, ox_pass_floats *c) {
  return name && v->graph_float_const(v, name, c) ? c : NULL;
}

/* The fused opcode of a node (checking arity and opset), or -1. */
static int chain_op(const ox_pass_view *v, size_t i) {
  const ox_node *n = &v->nodes[i];
  int64_t ver = v->opsets[i];
  if (!ox_opt_default_domain(n) || !n->op_type || n->n_output != 1 || !n->output[0] || !*n->output[0] ||
      ox_opt_has_subgraph(n))
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
    ox_pass_floats ec;
    const ox_pass_floats *e = n->n_input == 2 && n->input[1] ? cst(v, n->input[1], &ec) : NULL;
    if (ver < 7 || !e || e->numel != 1) return -1;
    float p = e->data[0];
    return p == 2.0f ? FZ_POW2 : p == 3.0f ? FZ_POW3 : -1;
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
static bool operand_const(const ox_pass_floats *c, int64_t *from_right, int64_t *len) {
  if (!c || c->numel < 1) return false;
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
static bool can_join(const ox_pass_view *v, grp *gr, size_t n_vals, size_t i) {
  const ox_node *n = &v->nodes[i];
  int op = chain_op(v, i);
  if (op < 0) return false;
  int64_t fr = gr->axis_from_right, ln = gr->axis_len;
  for (size_t k = 0; k < n->n_input; k++) {
    const char *nm = n->input[k];
    if ((op == FZ_POW2 || op == FZ_POW3) && k > 0) continue; /* the exponent: chain_op checked it */
    if (op == FZ_CLIP && k > 0) {
      if (!nm || !*nm) continue;
      ox_pass_floats cc;
      const ox_pass_floats *c = cst(v, nm, &cc);
      if (!c || c->numel != 1) return false;
      continue;
    }
    if (!nm || !*nm) return false;
    int vi = value_of(gr, n_vals, nm);
    if (vi >= 0) continue;
    if (op >= FZ_CLIP) return false; /* unary: the operand must be a value */
    int64_t cfr, cln;
    ox_pass_floats oc;
    if (!operand_const(cst(v, nm, &oc), &cfr, &cln)) return false;
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
static const char *root_of(const ox_pass_view *v, size_t i) {
  const ox_node *n = &v->nodes[i];
  int op = chain_op(v, i);
  const char *root = NULL;
  size_t n_in = op == FZ_CLIP || op == FZ_POW2 || op == FZ_POW3 ? 1 : n->n_input;
  for (size_t k = 0; k < n_in; k++) {
    const char *nm = n->input[k];
    if (!nm || !*nm) return NULL;
    ox_pass_floats c;
    if (cst(v, nm, &c) && op < FZ_CLIP) continue;
    if (root && strcmp(root, nm) != 0) return NULL;
    root = nm;
  }
  return root;
}

static size_t uses_within(const ox_pass_view *v, const grp *gr, const char *name) {
  size_t c = 0;
  for (size_t m = 0; m < gr->n; m++) {
    const ox_node *n = &v->nodes[gr->idx[m]];
    for (size_t q = 0; q < n->n_input; q++) c += n->input[q] && strcmp(n->input[q], name) == 0;
  }
  return c;
}

/* The part of the group that computes its k-th node: that node and the
 * nodes of the first k whose values it reads, directly or not. Fills sub
 * and tells whether it is closed: no value but the last one is read
 * outside it (nor is a graph output, nor read in a subgraph). */
static bool closed_part(const ox_pass_view *v, const grp *gr, size_t k, grp *sub) {
  bool mark[FZ_MAX_GROUP] = {false};
  mark[k - 1] = true;
  for (size_t m = k - 1; m-- > 0;)
    for (size_t l = m + 1; l < k && !mark[m]; l++) {
      if (!mark[l]) continue;
      const ox_node *n = &v->nodes[gr->idx[l]];
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
    if (v->pinned(v, nm)) return false;
    if (uses_within(v, sub, nm) != v->n_reads(v, nm)) return false;
  }
  return sub->n >= 2;
}

static bool has_const(const ox_pass_view *v, const grp *gr) {
  ox_pass_floats c;
  for (size_t m = 0; m < gr->n; m++) {
    const ox_node *n = &v->nodes[gr->idx[m]];
    for (size_t q = 0; q < n->n_input; q++)
      if (cst(v, n->input[q], &c)) return true;
  }
  return false;
}

typedef struct prog {
  int64_t *ops, *args, *crank, *cdims;
  float *params, *cdata;
  size_t n_ops, n_args, n_crank, n_cdims, n_params, n_cdata;
} prog;

static int push_i(ox_pass_view *v, int64_t **arr, size_t *n, int64_t val) {
  int64_t *p = OX_VEC_PUSH(v->a, *arr, *n);
  if (!p) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  *p = val;
  return OX_OK;
}

static int push_f(ox_pass_view *v, float **arr, size_t *n, float val) {
  float *p = OX_VEC_PUSH(v->a, *arr, *n);
  if (!p) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  *p = val;
  return OX_OK;
}

static int operand(ox_pass_view *v, prog *p, const grp *gr, size_t n_vals, const char *nm, int64_t *out) {
  int vi = value_of(gr, n_vals, nm);
  if (vi >= 0) {
    *out = vi;
    return OX_OK;
  }
  ox_pass_floats cc;
  const ox_pass_floats *c = cst(v, nm, &cc);
  *out = -(int64_t)p->n_crank - 1;
  if (push_i(v, &p->crank, &p->n_crank, (int64_t)c->rank)) return v->e->code;
  for (size_t d = 0; d < c->rank; d++)
    if (push_i(v, &p->cdims, &p->n_cdims, c->dims[d])) return v->e->code;
  const float *f = c->data;
  for (int64_t q = 0; q < c->numel; q++)
    if (push_f(v, &p->cdata, &p->n_cdata, f[q])) return v->e->code;
  return OX_OK;
}

static ox_attr *new_attr(ox_pass_view *v, ox_node *n, const char *name, int type) {
  ox_attr *a = OX_VEC_PUSH(v->a, n->attribute, n->n_attribute);
  if (!a) return NULL;
  a->name = (char *)name;
  a->type = type;
  a->has_type = true;
  return a;
}

/* Builds the ElementwiseChain node of the first k nodes of the group. */
static int emit_chain(ox_pass_view *v, const grp *gr, size_t k, ox_node **out) {
  prog p = {0};
  for (size_t m = 0; m < k; m++) {
    const ox_node *n = &v->nodes[gr->idx[m]];
    int op = chain_op(v, gr->idx[m]);
    size_t n_vals = m + 1;
    int64_t a = 0, b = 0;
    float p0 = 0, p1 = 0;
    if (operand(v, &p, gr, n_vals, n->input[0], &a)) return v->e->code;
    if (op < FZ_CLIP && operand(v, &p, gr, n_vals, n->input[1], &b)) return v->e->code;
    if (op == FZ_CLIP) {
      if (v->opsets[gr->idx[m]] >= 11) {
        p0 = -INFINITY;
        p1 = INFINITY;
        ox_pass_floats c;
        if (n->n_input > 1 && *n->input[1]) p0 = cst(v, n->input[1], &c)->data[0];
        if (n->n_input > 2 && *n->input[2]) p1 = cst(v, n->input[2], &c)->data[0];
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
    if (push_i(v, &p.ops, &p.n_ops, op) || push_i(v, &p.args, &p.n_args, a) ||
        push_i(v, &p.args, &p.n_args, b) || push_f(v, &p.params, &p.n_params, p0) ||
        push_f(v, &p.params, &p.n_params, p1))
      return v->e->code;
  }
  ox_node *fn = ox_arena_calloc(v->a, 1, sizeof *fn);
  if (!fn) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  fn->op_type = "ElementwiseChain";
  fn->domain = OX_ONNXC_DOMAIN;
  fn->name = ox_opt_fused_name(v, gr->idx[0], gr->idx[k - 1]);
  fn->input = ox_arena_calloc(v->a, 2, sizeof *fn->input);
  fn->output = ox_arena_calloc(v->a, 2, sizeof *fn->output);
  if (!fn->name || !fn->input || !fn->output) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  fn->input[0] = (char *)gr->names[0];
  fn->output[0] = (char *)gr->names[k];
  fn->n_input = fn->n_output = 1;
  ox_attr *a;
  if (!(a = new_attr(v, fn, "ops", OX_ATTR_INTS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->ints = p.ops, a->n_ints = p.n_ops;
  if (!(a = new_attr(v, fn, "args", OX_ATTR_INTS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->ints = p.args, a->n_ints = p.n_args;
  if (!(a = new_attr(v, fn, "params", OX_ATTR_FLOATS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->floats = p.params, a->n_floats = p.n_params;
  if (!(a = new_attr(v, fn, "crank", OX_ATTR_INTS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->ints = p.crank, a->n_ints = p.n_crank;
  if (!(a = new_attr(v, fn, "cdims", OX_ATTR_INTS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->ints = p.cdims, a->n_ints = p.n_cdims;
  if (!(a = new_attr(v, fn, "cdata", OX_ATTR_FLOATS))) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  a->floats = p.cdata, a->n_floats = p.n_cdata;
  *out = fn;
  return OX_OK;
}

/* Finds the groups; repl[i] is the fused node that replaces node i (the
 * group's last node), drop[i] marks the group's other nodes. */
int ox_opt_elementwise_chain(ox_pass_view *v) {
  ox_node **repl = v->repl;
  size_t nn = v->n_node;
  for (size_t i = 0; i < nn; i++) {
    if (v->drop[i] || repl[i] || chain_op(v, i) < 0) continue;
    const char *root = root_of(v, i);
    ox_pass_floats rc;
    if (!root || cst(v, root, &rc)) continue; /* constant roots are folded in prepare */
    grp gr = {0};
    gr.names[0] = root;
    gr.n = 0;
    if (!can_join(v, &gr, 1, i)) continue;
    gr.idx[gr.n++] = i;
    gr.names[gr.n] = v->nodes[i].output[0];
    size_t end = v->last_read(v, gr.names[1]);
    for (size_t j = i + 1; j < nn && j < end && gr.n < FZ_MAX_GROUP; j++) {
      if (v->drop[j] || repl[j]) continue;
      grp trial = gr;
      if (!can_join(v, &trial, gr.n + 1, j)) continue;
      gr = trial;
      gr.idx[gr.n++] = j;
      gr.names[gr.n] = v->nodes[j].output[0];
      size_t lu = v->last_read(v, gr.names[gr.n]);
      if (lu > end) end = lu;
    }
    grp sub;
    size_t k = gr.n;
    while (k >= 2 && !closed_part(v, &gr, k, &sub)) k--;
    if (k < 2 || !(has_const(v, &sub) || v->is_float(v, root))) continue;
    ox_node *fn = NULL;
    if (emit_chain(v, &sub, sub.n, &fn)) return v->e->code;
    for (size_t m = 0; m + 1 < sub.n; m++) v->drop[sub.idx[m]] = true;
    repl[sub.idx[sub.n - 1]] = fn;
  }
  return OX_OK;
}
