/* matmul_epi.c - a float MatMul by a constant weight, its bias and the
 * activation after it, to one node.
 *
 * Transformer exports write each projection as MatMul(x, W) -> Add(bias),
 * and the feed-forward's first one continues with GELU spelled out
 *
 *   d = Div(h, c0) (or Mul(h, c0))   e = Erf(d)   f = Add(e, c1)
 *   g = Mul(h, f)   y = Mul(g, c2)                 (c0 = sqrt 2, c1 = 1, c2 = 1/2)
 *
 * or with Relu. With W a constant 2-D float [K, N], the bias a float
 * constant of rank <= 1 with 1 or N elements (so that the Add keeps the
 * product's shape), c0, c1, c2 constant float scalars and every
 * intermediate read only inside the pattern, the nodes become one ai.onnxc
 * MatMulFused (x, W, bias) with act = 1 (Relu) or 2 (GELU: gelu_c0..2,
 * gelu_mul), in the place of the last node replaced; its kernel
 * (src/ops/matmul_epi.c) applies bias and activation to each block of the
 * product as the GEMM finishes it, with the same float operations. */
#include <string.h>

#include "pass.h"

enum { ACT_NONE, ACT_RELU, ACT_GELU };

/* the other input of binary node n when one input is `name`, else NULL */
static const char *other_of(const ox_node *n, const char *name) {
  if (n->n_input != 2) return NULL;
  if (strcmp(n->input[0], name) == 0) return n->input[1];
  if (strcmp(n->input[1], name) == 0) return n->input[0];
  return NULL;
}

/* node j is `op` (opset >= min) with one named output */
static bool is_node(const ox_pass_view *v, int64_t j, const char *op, int64_t min) {
  const ox_node *n = &v->nodes[j];
  return ox_opt_op_is(n, op) && v->opsets[j] >= min && n->n_output == 1 && n->output[0] &&
         *n->output[0];
}

/* the sole reader of `name` after node `after` when it is `op`, else -1 */
static int64_t next_op(const ox_pass_view *v, const char *name, int64_t after, const char *op,
                       int64_t min) {
  int64_t j = v->sole_reader(v, name);
  return j > after && is_node(v, j, op, min) ? j : -1;
}

/* the value of a float scalar constant */
static bool scalar(const ox_pass_view *v, const char *name, float *out) {
  return name && ox_opt_scalar_f32(v->constant(v, name), out);
}

/* a float constant of rank <= 1 with 1 or n elements */
static bool column_const(const ox_pass_view *v, const char *name, int64_t n) {
  const ox_tensor *t = v->constant(v, name);
  int64_t e = ox_opt_elems(t);
  return t && t->data_type == OX_FLOAT && t->n_dims <= 1 && (e == 1 || e == n);
}

typedef struct gelu_match {
  float c[3];
  bool mul_first;
  int64_t nodes[5]; /* d, e, f, g, y */
} gelu_match;

/* d = Div(h, c0) or Mul(h, c0) -> Erf -> Add c1 -> g = Mul(h, .) -> Mul c2 */
static bool gelu_chain(const ox_pass_view *v, const char *h, int64_t d, int64_t g, gelu_match *m) {
  const ox_node *dn = &v->nodes[d];
  if (is_node(v, d, "Div", 7)) {
    if (dn->n_input != 2 || strcmp(dn->input[0], h) != 0) return false;
    m->mul_first = false;
  } else if (is_node(v, d, "Mul", 7)) {
    m->mul_first = true;
  } else {
    return false;
  }
  if (!is_node(v, g, "Mul", 7) || !scalar(v, other_of(dn, h), &m->c[0])) return false;
  int64_t e = next_op(v, dn->output[0], d, "Erf", 9);
  if (e < 0 || v->nodes[e].n_input != 1) return false;
  int64_t f = next_op(v, v->nodes[e].output[0], e, "Add", 7);
  if (f < 0 || !scalar(v, other_of(&v->nodes[f], v->nodes[e].output[0]), &m->c[1])) return false;
  if (next_op(v, v->nodes[f].output[0], f, "Mul", 7) != g) return false;
  const char *x = other_of(&v->nodes[g], v->nodes[f].output[0]);
  if (!x || strcmp(x, h) != 0) return false;
  int64_t y = next_op(v, v->nodes[g].output[0], g, "Mul", 7);
  if (y < 0 || !scalar(v, other_of(&v->nodes[y], v->nodes[g].output[0]), &m->c[2])) return false;
  int64_t nodes[5] = {d, e, f, g, y};
  memcpy(m->nodes, nodes, sizeof nodes);
  return true;
}

/* GELU's erf form on h (made by node `at`): h read once each by exactly
 * two nodes, d and g of the chain (either found first) */
static bool match_gelu(const ox_pass_view *v, const char *h, int64_t at, gelu_match *m) {
  if (v->pinned(v, h)) return false;
  int64_t r[2] = {-1, -1};
  size_t readers = 0, nodes = 0;
  for (size_t k = (size_t)at + 1; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    const ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    bool reads = false;
    for (size_t q = 0; q < n->n_input; q++)
      if (n->input[q] && strcmp(n->input[q], h) == 0) readers++, reads = true;
    if (!reads) continue;
    if (v->repl[k] || nodes == 2) return false;
    r[nodes++] = (int64_t)k;
  }
  if (readers != 2 || nodes != 2) return false;
  return gelu_chain(v, h, r[0], r[1], m) || gelu_chain(v, h, r[1], r[0], m);
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *mm = &v->nodes[i];
  if (!is_node(v, (int64_t)i, "MatMul", 1) || mm->n_input != 2) return OX_OK;
  const ox_tensor *w = v->constant(v, mm->input[1]);
  if (!w || w->data_type != OX_FLOAT || w->n_dims != 2) return OX_OK;
  int64_t N = w->dims[1];
  int64_t a = next_op(v, mm->output[0], (int64_t)i, "Add", 7);
  if (a < 0) return OX_OK;
  const char *bias = other_of(&v->nodes[a], mm->output[0]);
  if (!bias || strcmp(bias, mm->output[0]) == 0 || !column_const(v, bias, N)) return OX_OK;
  const char *out = v->nodes[a].output[0];
  int act = ACT_NONE;
  gelu_match g = {{0}, false, {0}};
  int64_t last = a, relu = next_op(v, out, a, "Relu", 6);
  if (relu >= 0) {
    act = ACT_RELU;
    out = v->nodes[relu].output[0];
    last = relu;
  } else if (match_gelu(v, out, a, &g)) {
    act = ACT_GELU;
    out = v->nodes[g.nodes[4]].output[0];
    last = g.nodes[4];
  }
  ox_node *fn = ox_opt_new_node(v, mm, "MatMulFused", 3, act == ACT_GELU ? 5 : 1);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->input[0] = mm->input[0];
  fn->input[1] = mm->input[1];
  fn->input[2] = (char *)bias;
  fn->output[0] = (char *)out;
  ox_opt_add_int_attr(fn, "act", act);
  if (act == ACT_GELU) {
    ox_opt_add_float_attr(fn, "gelu_c0", g.c[0]);
    ox_opt_add_float_attr(fn, "gelu_c1", g.c[1]);
    ox_opt_add_float_attr(fn, "gelu_c2", g.c[2]);
    ox_opt_add_int_attr(fn, "gelu_mul", g.mul_first);
    for (int k = 0; k < 4; k++) v->drop[g.nodes[k]] = true;
  }
  v->repl[last] = fn;
  v->drop[i] = true;
  if (last != a) v->drop[a] = true;
  return OX_OK;
}

int ox_opt_matmul_epi(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
