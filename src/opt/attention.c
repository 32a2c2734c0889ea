/* attention.c - multi-head attention as exporters write it, to one node.
 *
 *   q4 = Transpose<0,2,1,3>(Reshape(Q, [b, s, H, D]))
 *   kT = Transpose<0,2,3,1>(Reshape(K, [b, s, H, D]))
 *   v4 = Transpose<0,2,1,3>(Reshape(V, [b, s, H, D]))
 *   p  = Softmax<axis -1>(Add(Div(MatMul(q4, kT), c), mask))   (Mul by c; the Add optional)
 *   y  = Transpose<0,2,1,3>(MatMul(p, v4))
 *
 * becomes ai.onnxc MultiHeadAttentionFused(Q, K, V [, mask]) with
 * num_heads H, head_dim D, scale c and scale_div (1: Div, 0: Mul), and the
 * Reshapes' first two target values (q_b, q_s, k_b, k_s: 0 copies the
 * input's dim, -1 is inferred; Q's head count may be -1 too, as Whisper's
 * export writes it: q_heads_inferred): y of shape [B, S, H, D], the heads read in
 * place by strided products (src/ops/attn_fused.c) — no transposed copies,
 * one head's scores at a time. Every intermediate must be read only inside
 * the pattern; K's and V's Reshapes must agree. */
#include <string.h>

#include "pass.h"

static bool perm_is(const ox_node *t, const int64_t *p) {
  const ox_attr *a = ox_node_attr(t, "perm");
  if (!a || a->n_ints != 4) return false;
  for (int i = 0; i < 4; i++)
    if (a->ints[i] != p[i]) return false;
  return true;
}

/* node `at` is a live single-output op; its output read only by `reader` */
static bool only_into(const ox_pass_view *v, int64_t at, int64_t reader) {
  if (at < 0) return false;
  const ox_node *n = &v->nodes[at];
  return n->n_output == 1 && n->output[0] && *n->output[0] &&
         v->sole_reader(v, n->output[0]) == reader;
}

/* Transpose<perm>(Reshape(X, shape)) feeding `reader`: X and the shape */
static bool head_split(const ox_pass_view *v, const char *name, int64_t reader, const int64_t *perm,
                       const char **x, int64_t *shape, int64_t *tr, int64_t *rs) {
  *tr = ox_opt_producer(v, name, (size_t)reader);
  if (*tr < 0 || !only_into(v, *tr, reader)) return false;
  const ox_node *t = &v->nodes[*tr];
  if (!ox_opt_op_is(t, "Transpose") || t->n_input != 1 || !perm_is(t, perm)) return false;
  *rs = ox_opt_producer(v, t->input[0], (size_t)*tr);
  if (*rs < 0 || !only_into(v, *rs, *tr)) return false;
  const ox_node *r = &v->nodes[*rs];
  if (!ox_opt_op_is(r, "Reshape") || v->opsets[*rs] < 5 || r->n_input != 2 ||
      ox_node_attr_int(r, "allowzero", 0) != 0 || !ox_opt_const_ints(v, r->input[1], shape, 4) ||
      shape[2] < -1 || shape[2] == 0 || shape[3] <= 0 || shape[0] < -1 || shape[1] < -1 ||
      (shape[2] == -1 && (shape[0] == -1 || shape[1] == -1)))
    return false;
  *x = r->input[0];
  return true;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  static const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
  const ox_node *sm = &v->nodes[i];
  if (!ox_opt_op_is(sm, "Softmax") || sm->n_input != 1 || sm->n_output != 1) return OX_OK;
  int64_t axis = ox_node_attr_int(sm, "axis", v->opsets[i] >= 13 ? -1 : 1);
  if (axis != -1 && axis != 3) return OX_OK;
  /* backwards: [Add(mask)] <- Div/Mul(c) <- MatMul(q4, kT) */
  int64_t add = ox_opt_producer(v, sm->input[0], i), sc;
  const char *mask = "";
  if (add < 0 || !only_into(v, add, (int64_t)i)) return OX_OK;
  if (ox_opt_op_is(&v->nodes[add], "Add") && v->nodes[add].n_input == 2) {
    const ox_node *a = &v->nodes[add];
    int64_t p0 = ox_opt_producer(v, a->input[0], (size_t)add);
    int64_t p1 = ox_opt_producer(v, a->input[1], (size_t)add);
    bool first =
        p0 >= 0 && (ox_opt_op_is(&v->nodes[p0], "Div") || ox_opt_op_is(&v->nodes[p0], "Mul"));
    sc = first ? p0 : p1;
    mask = first ? a->input[1] : a->input[0];
  } else {
    sc = add;
    add = -1;
  }
  if (sc < 0 || !only_into(v, sc, add >= 0 ? add : (int64_t)i)) return OX_OK;
  const ox_node *s = &v->nodes[sc];
  bool div = ox_opt_op_is(s, "Div");
  if ((!div && !ox_opt_op_is(s, "Mul")) || s->n_input != 2) return OX_OK;
  float scale;
  int64_t mm = -1;
  for (int side = 0; side < 2 && mm < 0; side++) {
    if (div && side == 1) break; /* Div(scores, c) only */
    if (!ox_opt_scalar_const(v, s->input[1 - side], &scale)) continue;
    mm = ox_opt_producer(v, s->input[side], (size_t)sc);
  }
  if (mm < 0 || !only_into(v, mm, sc) || !ox_opt_op_is(&v->nodes[mm], "MatMul") ||
      v->nodes[mm].n_input != 2)
    return OX_OK;
  const char *q, *k, *vv;
  int64_t qs[4], ks[4], vs[4], tq, rq, tk, rk, tv, rv;
  if (!head_split(v, v->nodes[mm].input[0], mm, p0213, &q, qs, &tq, &rq) ||
      !head_split(v, v->nodes[mm].input[1], mm, p0231, &k, ks, &tk, &rk))
    return OX_OK;
  /* forwards: MatMul(p, v4) -> Transpose<0,2,1,3> */
  int64_t pv = v->sole_reader(v, sm->output[0]);
  if (pv <= (int64_t)i || !ox_opt_op_is(&v->nodes[pv], "MatMul") || v->nodes[pv].n_input != 2 ||
      strcmp(v->nodes[pv].input[0], sm->output[0]) != 0 || v->nodes[pv].n_output != 1 ||
      !head_split(v, v->nodes[pv].input[1], pv, p0213, &vv, vs, &tv, &rv))
    return OX_OK;
  int64_t to = v->sole_reader(v, v->nodes[pv].output[0]);
  if (to <= pv || !ox_opt_op_is(&v->nodes[to], "Transpose") || !perm_is(&v->nodes[to], p0213) ||
      v->nodes[to].n_output != 1)
    return OX_OK;
  /* K and V name their heads; Q may leave its count to the Reshape (-1) */
  if (ks[2] < 0 || (qs[2] != ks[2] && qs[2] != -1) || qs[3] != ks[3] ||
      memcmp(ks, vs, sizeof ks) != 0)
    return OX_OK;
  ox_node *fn = ox_opt_new_node(v, &v->nodes[to], "MultiHeadAttentionFused", *mask ? 4 : 3, 9);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = v->nodes[mm].name;
  fn->input[0] = (char *)q;
  fn->input[1] = (char *)k;
  fn->input[2] = (char *)vv;
  if (*mask) fn->input[3] = (char *)mask;
  fn->output[0] = v->nodes[to].output[0];
  ox_opt_add_int_attr(fn, "num_heads", ks[2]);
  ox_opt_add_int_attr(fn, "head_dim", qs[3]);
  ox_opt_add_float_attr(fn, "scale", scale);
  ox_opt_add_int_attr(fn, "scale_div", div);
  ox_opt_add_int_attr(fn, "q_b", qs[0]);
  ox_opt_add_int_attr(fn, "q_s", qs[1]);
  ox_opt_add_int_attr(fn, "k_b", ks[0]);
  ox_opt_add_int_attr(fn, "k_s", ks[1]);
  if (qs[2] == -1) ox_opt_add_int_attr(fn, "q_heads_inferred", 1);
  const int64_t gone[] = {rq, tq, rk, tk, rv, tv, mm, sc, add, (int64_t)i, pv};
  for (size_t g = 0; g < sizeof gone / sizeof *gone; g++)
    if (gone[g] >= 0) v->drop[gone[g]] = true;
  v->repl[to] = fn;
  return OX_OK;
}

int ox_opt_attention(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
