/* matmul_epi.c - a float MatMul (or Gemm) by a constant weight, its bias and
 * the activation after it, to one node.
 *
 * Transformer exports write each projection as MatMul(x, W) -> Add(bias)
 * (T5's without the Add: then only with an activation after it), and
 * PyTorch's dynamo exporter as Gemm(x2d, W, bias) with transB 0 or 1.
 * The feed-forward's first one continues with an activation: Relu; GELU
 * spelled out in its erf form
 *
 *   d = Div(h, c0) (or Mul(h, c0))   e = Erf(d)   f = Add(e, c1)
 *   g = Mul(h, f)   y = Mul(g, c2)                 (c0 = sqrt 2, c1 = 1, c2 = 1/2)
 *
 * or its tanh form (GPT-2's "new GELU")
 *
 *   a = Mul(h, 0.5)   p = Pow(h, 3)   q = Mul(p, 0.044715)   s = Add(h, q)
 *   r = Mul(s, sqrt(2 / pi))   t = Tanh(r)   u = Add(t, 1)   y = Mul(a, u)
 *
 * (or y = Mul(Mul(h, u), 0.5)); opset 20's Gelu node (either approximation);
 * SiLU, Mul(h, Sigmoid(h)). With W a constant 2-D float, the bias a float
 * constant with 1 or N elements ([N], or Gemm's [1, N]: the Add keeps the
 * product's shape), the scalars constant and every intermediate read only
 * inside the pattern, the nodes become one ai.onnxc MatMulFused (x, W,
 * bias) in the place of the last node replaced: act = 1 Relu, 2 GELU erf
 * (gelu_c0..2, gelu_mul), 3 GELU tanh, 4 SiLU; a Gemm's transB, alpha and
 * beta as trans_b, alpha and beta (only transA = 0 is taken: W then packs
 * once, either way round). Its kernel (src/ops/fused/matmul_epi.c) applies
 * bias and activation to each block of the product as the GEMM finishes
 * it; a plain Gemm would pack W and copy C into Y on every run. */
#include <math.h>
#include <string.h>

#include "pass.h"

enum { ACT_NONE, ACT_RELU, ACT_GELU, ACT_GELU_TANH, ACT_SILU };

/* a float constant with 1 or n elements, rank <= 1 (rank 2 [1, n] too when
 * row_ok: Gemm's C) */
static bool column_const(const ox_pass_view *v, const char *name, int64_t n, bool row_ok) {
  const ox_tensor *t = v->constant(v, name);
  int64_t e = ox_opt_elems(t);
  if (!t || t->data_type != OX_FLOAT || (e != 1 && e != n)) return false;
  return t->n_dims <= 1 || (row_ok && t->n_dims == 2 && t->dims[0] == 1);
}

/* a float scalar constant within tol of want */
static bool scalar_near(const ox_pass_view *v, const char *name, float want, float tol) {
  float f;
  return name && ox_opt_scalar_const(v, name, &f) && fabsf(f - want) <= tol;
}

/* the live nodes after `at` that read h (at most max; false when more, or
 * when a replacement reads it) */
static bool readers_of(const ox_pass_view *v, const char *h, int64_t at, int64_t *r, size_t max,
                       size_t *n) {
  *n = 0;
  for (size_t k = (size_t)at + 1; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    const ox_node *nd = v->repl[k] ? v->repl[k] : &v->nodes[k];
    bool reads = false;
    for (size_t q = 0; q < nd->n_input && !reads; q++)
      reads = nd->input[q] && strcmp(nd->input[q], h) == 0;
    if (!reads) continue;
    if (v->repl[k] || *n == max) return false;
    r[(*n)++] = (int64_t)k;
  }
  return true;
}

/* the sole reader of node j's output when it is `op` with the other input a
 * scalar near want (want NAN: any second input, returned in *other) */
static int64_t next_scaled(const ox_pass_view *v, int64_t j, const char *op, float want,
                           const char **other) {
  const char *x = v->nodes[j].output[0];
  int64_t k = ox_opt_next_op(v, x, j, op, 7);
  if (k < 0) return -1;
  const char *o = ox_opt_other_of(&v->nodes[k], x);
  if (!o || strcmp(o, x) == 0) return -1;
  if (other) *other = o;
  return isnan(want) || scalar_near(v, o, want, 1e-6f) ? k : -1;
}

/* GELU's tanh form on h (made by node `at`), as in the header; nodes[0..n)
 * the nodes replaced, the last one last */
static bool match_gelu_tanh(const ox_pass_view *v, const char *h, int64_t at, int64_t *nodes,
                            size_t *n_nodes) {
  int64_t r[3];
  size_t n = 0;
  if (v->pinned(v, h) || v->n_reads(v, h) != 3 || !readers_of(v, h, at, r, 3, &n) || n != 3)
    return false;
  int64_t p = -1;
  for (size_t k = 0; k < 3; k++) {
    const ox_node *nd = &v->nodes[r[k]];
    if (ox_opt_is_node(v, r[k], "Pow", 7) && nd->n_input == 2 && strcmp(nd->input[0], h) == 0 &&
        scalar_near(v, nd->input[1], 3.0f, 0.0f))
      p = r[k];
  }
  if (p < 0) return false;
  const char *o = NULL;
  int64_t q = next_scaled(v, p, "Mul", 0.044715f, NULL);
  int64_t s = q < 0 ? -1 : next_scaled(v, q, "Add", NAN, &o);
  if (s < 0 || strcmp(o, h) != 0) return false;
  int64_t m = next_scaled(v, s, "Mul", 0.7978845608f, NULL);
  int64_t t = m < 0 ? -1 : ox_opt_next_op(v, v->nodes[m].output[0], m, "Tanh", 6);
  int64_t u = t < 0 ? -1 : next_scaled(v, t, "Add", 1.0f, NULL);
  int64_t w = u < 0 ? -1 : next_scaled(v, u, "Mul", NAN, &o);
  if (w < 0) return false;
  int64_t last = w, half = -1;
  if (strcmp(o, h) == 0) { /* (h * u) * 0.5 */
    last = next_scaled(v, w, "Mul", 0.5f, NULL);
    if (last < 0) return false;
  } else { /* (h * 0.5) * u */
    for (size_t k = 0; k < 3; k++)
      if (r[k] != p && r[k] != s && v->nodes[r[k]].n_output == 1 &&
          strcmp(v->nodes[r[k]].output[0], o) == 0)
        half = r[k];
    if (half < 0 || !ox_opt_is_node(v, half, "Mul", 7) ||
        !scalar_near(v, ox_opt_other_of(&v->nodes[half], h), 0.5f, 0.0f) ||
        ox_opt_next_op(v, o, half, "Mul", 7) != w)
      return false;
  }
  /* every reader of h is in the chain: p, s and w or half */
  for (size_t k = 0; k < 3; k++)
    if (r[k] != p && r[k] != s && r[k] != w && r[k] != half) return false;
  int64_t all[8] = {p, q, s, m, t, u, w, half};
  *n_nodes = 0;
  for (size_t k = 0; k < 8; k++)
    if (all[k] >= 0 && all[k] != last) nodes[(*n_nodes)++] = all[k];
  nodes[(*n_nodes)++] = last;
  return true;
}

/* SiLU on h: Sigmoid(h) read only by a Mul(h, .), h read only by the two;
 * the Mul's index, or -1 */
static int64_t match_silu(const ox_pass_view *v, const char *h, int64_t at, int64_t *sig) {
  int64_t r[2];
  size_t n = 0;
  if (v->pinned(v, h) || v->n_reads(v, h) != 2 || !readers_of(v, h, at, r, 2, &n) || n != 2)
    return -1;
  for (size_t k = 0; k < 2; k++) {
    if (!ox_opt_is_node(v, r[k], "Sigmoid", 6) || v->nodes[r[k]].n_input != 1) continue;
    const char *o = NULL;
    int64_t m = next_scaled(v, r[k], "Mul", NAN, &o);
    if (m == r[1 - k] && strcmp(o, h) == 0) {
      *sig = r[k];
      return m;
    }
  }
  return -1;
}

/* the activation after h (made by node `at`): its code, the nodes it
 * replaces into drop (the last in *last) and GELU's constants */
static int match_act(ox_pass_view *v, const char *h, int64_t at, int64_t *drop, size_t *n_drop,
                     int64_t *last, ox_opt_gelu *g) {
  *n_drop = 0;
  int64_t j = ox_opt_next_op(v, h, at, "Relu", 6);
  if (j >= 0) {
    *last = j;
    return ACT_RELU;
  }
  if (ox_opt_match_gelu(v, h, at, g)) {
    memcpy(drop, g->nodes, 4 * sizeof *drop);
    *n_drop = 4;
    *last = g->nodes[4];
    return ACT_GELU;
  }
  j = ox_opt_next_op(v, h, at, "Gelu", 20);
  if (j >= 0 && v->nodes[j].n_input == 1) {
    const char *ap = ox_node_attr_str(&v->nodes[j], "approximate", "none");
    *last = j;
    if (strcmp(ap, "tanh") == 0) return ACT_GELU_TANH;
    if (strcmp(ap, "none") != 0) return ACT_NONE;
    /* Gelu's own constants, as its kernel (ops/onnx/unary.c) holds them */
    *g = (ox_opt_gelu){{1.41421353816986083984375f, 1.0f, 0.5f}, false, {0}};
    return ACT_GELU;
  }
  int64_t nodes[9];
  size_t n = 0;
  if (match_gelu_tanh(v, h, at, nodes, &n)) {
    memcpy(drop, nodes, (n - 1) * sizeof *drop);
    *n_drop = n - 1;
    *last = nodes[n - 1];
    return ACT_GELU_TANH;
  }
  int64_t sig = -1;
  j = match_silu(v, h, at, &sig);
  if (j >= 0) {
    drop[0] = sig;
    *n_drop = 1;
    *last = j;
    return ACT_SILU;
  }
  return ACT_NONE;
}

/* the product at node i: MatMul(x, W) -> Add(bias), or Gemm(x, W[, C]) */
typedef struct linear {
  const char *x, *w, *bias, *out; /* bias NULL: none */
  int64_t last;                   /* the product's last node (the Add, or the Gemm) */
  bool trans_b;
  float alpha, beta;
} linear;

static bool match_linear(ox_pass_view *v, size_t i, linear *l) {
  const ox_node *mm = &v->nodes[i];
  *l = (linear){NULL, NULL, NULL, NULL, (int64_t)i, false, 1.0f, 1.0f};
  if (ox_opt_is_node(v, (int64_t)i, "Gemm", 7) && (mm->n_input == 2 || mm->n_input == 3)) {
    if (ox_node_attr_int(mm, "transA", 0) != 0) return false;
    l->trans_b = ox_node_attr_int(mm, "transB", 0) != 0;
    l->alpha = ox_node_attr_float(mm, "alpha", 1.0f);
    l->beta = ox_node_attr_float(mm, "beta", 1.0f);
    const ox_tensor *w = v->constant(v, mm->input[1]);
    if (!w || w->data_type != OX_FLOAT || w->n_dims != 2) return false;
    int64_t N = w->dims[l->trans_b ? 0 : 1];
    /* C with beta 0 is not read (the Gemm kernel's rule): no bias */
    if (ox_opt_given(mm, 2) && l->beta != 0.0f) {
      if (!column_const(v, mm->input[2], N, true)) return false;
      l->bias = mm->input[2];
    }
    if (!l->bias) l->beta = 1.0f;
    l->x = mm->input[0];
    l->w = mm->input[1];
    l->out = mm->output[0];
    return true;
  }
  if (!ox_opt_is_node(v, (int64_t)i, "MatMul", 1) || mm->n_input != 2) return false;
  const ox_tensor *w = v->constant(v, mm->input[1]);
  if (!w || w->data_type != OX_FLOAT || w->n_dims != 2) return false;
  l->x = mm->input[0];
  l->w = mm->input[1];
  l->out = mm->output[0];
  /* no bias (T5's feed-forward, MatMul -> Relu): fused only with an
   * activation (fuse_at) */
  int64_t a = ox_opt_next_op(v, mm->output[0], (int64_t)i, "Add", 7);
  if (a < 0) return true;
  const char *bias = ox_opt_other_of(&v->nodes[a], mm->output[0]);
  if (!bias || strcmp(bias, mm->output[0]) == 0 || !column_const(v, bias, w->dims[1], false))
    return true;
  l->bias = bias;
  l->out = v->nodes[a].output[0];
  l->last = a;
  return true;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  linear l;
  if (!match_linear(v, i, &l)) return OX_OK;
  ox_opt_gelu g = {{0}, false, {0}};
  int64_t drop[9], last = l.last;
  size_t n_drop = 0;
  int act = match_act(v, l.out, l.last, drop, &n_drop, &last, &g);
  /* a MatMul without a bias is taken with Relu or GELU only: with no
   * activation it stays itself, and a SiLU is left to swiglu.c (a SwiGLU's
   * gate, whose multiply by the up projection joins it there) */
  if (!l.bias && !ox_opt_op_is(&v->nodes[i], "Gemm") && act != ACT_RELU && act != ACT_GELU &&
      act != ACT_GELU_TANH)
    return OX_OK;
  const char *out = act == ACT_NONE ? l.out : v->nodes[last].output[0];
  if (act == ACT_NONE) last = l.last;
  ox_node *fn = ox_opt_new_node(v, &v->nodes[i], "MatMulFused", l.bias ? 3 : 2, 9);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->input[0] = (char *)l.x;
  fn->input[1] = (char *)l.w;
  if (l.bias) fn->input[2] = (char *)l.bias;
  fn->output[0] = (char *)out;
  ox_opt_add_int_attr(fn, "act", act);
  if (act == ACT_GELU) {
    ox_opt_add_float_attr(fn, "gelu_c0", g.c[0]);
    ox_opt_add_float_attr(fn, "gelu_c1", g.c[1]);
    ox_opt_add_float_attr(fn, "gelu_c2", g.c[2]);
    ox_opt_add_int_attr(fn, "gelu_mul", g.mul_first);
  }
  if (l.trans_b) ox_opt_add_int_attr(fn, "trans_b", 1);
  /* Gemm refuses an A that is not a matrix; the fused node must too */
  if (ox_opt_op_is(&v->nodes[i], "Gemm")) ox_opt_add_int_attr(fn, "a_matrix", 1);
  if (l.alpha != 1.0f) ox_opt_add_float_attr(fn, "alpha", l.alpha);
  if (l.beta != 1.0f) ox_opt_add_float_attr(fn, "beta", l.beta);
  for (size_t k = 0; k < n_drop; k++) v->drop[drop[k]] = true;
  v->repl[last] = fn;
  if ((int64_t)i != last) v->drop[i] = true;
  if (l.last != last && l.last != (int64_t)i) v->drop[l.last] = true;
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
