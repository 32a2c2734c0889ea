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

/* a float constant of rank <= 1 with 1 or n elements */
static bool column_const(const ox_pass_view *v, const char *name, int64_t n) {
  const ox_tensor *t = v->constant(v, name);
  int64_t e = ox_opt_elems(t);
  return t && t->data_type == OX_FLOAT && t->n_dims <= 1 && (e == 1 || e == n);
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *mm = &v->nodes[i];
  if (!ox_opt_is_node(v, (int64_t)i, "MatMul", 1) || mm->n_input != 2) return OX_OK;
  const ox_tensor *w = v->constant(v, mm->input[1]);
  if (!w || w->data_type != OX_FLOAT || w->n_dims != 2) return OX_OK;
  int64_t N = w->dims[1];
  int64_t a = ox_opt_next_op(v, mm->output[0], (int64_t)i, "Add", 7);
  if (a < 0) return OX_OK;
  const char *bias = ox_opt_other_of(&v->nodes[a], mm->output[0]);
  if (!bias || strcmp(bias, mm->output[0]) == 0 || !column_const(v, bias, N)) return OX_OK;
  const char *out = v->nodes[a].output[0];
  int act = ACT_NONE;
  ox_opt_gelu g = {{0}, false, {0}};
  int64_t last = a, relu = ox_opt_next_op(v, out, a, "Relu", 6);
  if (relu >= 0) {
    act = ACT_RELU;
    out = v->nodes[relu].output[0];
    last = relu;
  } else if (ox_opt_match_gelu(v, out, a, &g)) {
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
