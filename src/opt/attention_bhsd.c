/* attention_bhsd.c - attention on heads already split ([B, H, S, D]), as
 * real exporters write it, to one ai.onnxc AttentionBHSDFused node.
 *
 * Anchored on a Softmax over the last axis:
 *
 *   s  = MatMul(q, kT)          kT: Transpose<0,1,3,2>(k4), or a tensor
 *                               already [B, Hk, D, T]; or the
 *                               MatMulTransBFused(q, k4) matmul_transb made
 *   s1 = Mul/Div(s, c)          optional, c a float scalar constant
 *   s2 = Where(cond, s1, fill)  optional (GPT-2's causal mask), or
 *                               Where(cond, fill, s1); fill a scalar constant
 *   s3 = Add(s2, mask)          optional, mask any float tensor (its subgraph
 *                               left alone), either side
 *   p  = Softmax<axis -1>(s3)   each link, and p, may pass Casts to float32
 *                               (TorchScript's softmax(.., dtype), .to())
 *   y  = MatMul(p, v4)
 *
 * q may be Mul(q', a) and k Mul(k', a) (SDPA exports scale both by the
 * square root of the scale; before or after K's Transpose): the factors go
 * into the scale. k4 and v4 may be repeat_kv's grouped-query copies,
 * Reshape(Expand(Unsqueeze(kv, 2), [b, Hk, n, T, D]), [b, Hk * n, T, D]):
 * the fused node reads kv itself (kv_groups 1). Constant targets are
 * checked here and kept as the attribute kv_expand; computed ones (dynamic
 * exports) become inputs kv_expand and kv_shape. Either way the kernel
 * checks that the Expand repeated whole heads and nothing else. A
 * head split Transpose<0,2,1,3> before q, k4 or v4, or after y, is folded
 * (the heads read or written in place: q_bshd, k_bshd, v_bshd, y_bshd);
 * Transpose<0,2,3,1>(k) is K^T of such a split. What makes q, k and v is
 * not looked at (a rotary node, a projection ...).
 *
 * Every intermediate must be read only by the next node of the pattern.
 * What the fused node reads (q, k4, v4 or what it folds them from) may have
 * other readers or be a graph output: reading does not consume it, so it
 * and the nodes making it stay (Optimum's decoder-with-past, where
 * present.N.key = Concat(past, k) is an output, read by a Shape, and the
 * attention's K). A Transpose made into K^T that something else also reads
 * stays too. One operand's rank must be proved 4 (a Transpose of four
 * axes, a Reshape to four constant dims, repeat_kv; the kernel takes lower
 * ranks as MatMul broadcasts them) and float32 proved (a float32 constant
 * in the chain or a known type). Anything only partly matching is left as
 * it is. Runs after attention.c, which takes its narrower pattern first,
 * and after matmul_transb, whose MatMulTransBFused(q, k4) it reads as the
 * scores. */
#include <string.h>

#include "pass.h"

static bool perm_is(const ox_node *t, const int64_t *p) {
  const ox_attr *a = ox_node_attr(t, "perm");
  if (!a || a->n_ints != 4) return false;
  for (int i = 0; i < 4; i++)
    if (a->ints[i] != p[i]) return false;
  return true;
}

static const int64_t p0213[4] = {0, 2, 1, 3}, p0132[4] = {0, 1, 3, 2}, p0231[4] = {0, 2, 3, 1};

/* node i as the passes before this one left it (matmul_transb's
 * MatMulTransBFused replaces the scores' MatMul) */
static const ox_node *node_of(const ox_pass_view *v, int64_t i) {
  return v->repl[i] ? v->repl[i] : &v->nodes[i];
}

/* the live node before `before` whose output 0 is `name` (a replacement
 * counts as its node), or -1 */
static int64_t producer(const ox_pass_view *v, const char *name, int64_t before) {
  if (!name || !*name) return -1;
  for (int64_t i = before; i-- > 0;) {
    if (v->drop[i]) continue;
    const ox_node *n = node_of(v, i);
    for (size_t k = 0; k < n->n_output; k++)
      if (n->output[k] && strcmp(n->output[k], name) == 0) return k == 0 ? i : -1;
  }
  return -1;
}

/* the producer of `name` (before node `reader`) when it is a single-output
 * node whose output node `reader` alone reads (reader may be a node an
 * earlier pass dropped, its work taken by the node in `reader`'s place);
 * else -1 */
static int64_t only_into(const ox_pass_view *v, const char *name, int64_t reader) {
  if (reader < 0) return -1; /* a reader outside the pattern: nothing made for it goes */
  int64_t at = producer(v, name, reader);
  if (at < 0) return -1;
  const ox_node *n = node_of(v, at);
  if (n->n_output != 1 || !n->output[0] || !*n->output[0] || ox_opt_has_subgraph(n) ||
      v->pinned(v, name) || v->n_reads(v, name) != 1 || v->last_read(v, name) != (size_t)reader + 1)
    return -1;
  return at;
}

/* what the match found; nodes to drop collect in gone[] */
typedef struct match {
  int64_t gone[24];
  size_t n_gone;
  float scale; /* the product of the Mul factors, or the divisor (div) */
  bool div, scaled;
  bool rank4;
  const char *factor; /* q and/or k times this computed value (SDPA's sqrt(scale)) */
  int factor_pow;     /* on how many of the two */
  bool bad;           /* q and k times different computed values */
  bool f32;           /* the factor is float32 (float32_by_chain) */
} match;

static void take(match *m, int64_t at) {
  if (at >= 0 && m->n_gone < sizeof m->gone / sizeof *m->gone) m->gone[m->n_gone++] = at;
}

/* Mul(x, c) or Mul(c, x), c a float scalar constant, made for `reader`
 * alone: x and c; else NULL */
static const char *mul_by_const(const ox_pass_view *v, int64_t at, float *c) {
  if (at < 0 || !ox_opt_op_is(node_of(v, at), "Mul") || node_of(v, at)->n_input != 2) return NULL;
  const ox_node *n = node_of(v, at);
  for (int side = 0; side < 2; side++)
    if (ox_opt_scalar_const(v, n->input[1 - side], c)) return n->input[side];
  return NULL;
}

/* a factor on q or k folded into the scale (Div's divisor can't take one:
 * the scale becomes a product then) */
static void fold_factor(match *m, float c) {
  if (m->div) {
    m->scale = c / m->scale;
    m->div = false;
  } else {
    m->scale *= c;
  }
  m->scaled = true;
}

/* `name` holds one value, of rank 0 or 1 (so that a Mul by it changes no
 * shape): a constant, or computed from such by elementwise nodes, or one
 * element of a Shape (SDPA exports compute 1 / sqrt(D) from Shape(q)) */
static bool one_value(const ox_pass_view *v, const char *name, int64_t before, int depth) {
  const ox_tensor *t = v->constant_any(v, name);
  if (t) return t->n_dims <= 1 && ox_opt_elems(t) == 1;
  int64_t at = producer(v, name, before), ix[2];
  if (at < 0 || depth > 8) return false;
  const ox_node *n = node_of(v, at);
  static const char *const unary[] = {"Sqrt", "Cast", "Reciprocal", "Neg", "Identity"};
  static const char *const binary[] = {"Div", "Mul", "Add", "Sub"};
  for (size_t k = 0; k < sizeof unary / sizeof *unary; k++)
    if (ox_opt_op_is(n, unary[k]) && n->n_input == 1)
      return one_value(v, n->input[0], at, depth + 1);
  for (size_t k = 0; k < sizeof binary / sizeof *binary; k++)
    if (ox_opt_op_is(n, binary[k]) && n->n_input == 2)
      return one_value(v, n->input[0], at, depth + 1) && one_value(v, n->input[1], at, depth + 1);
  /* Shape<start = -1>(x), Slice(Shape(x), [-1], [big]), Gather(Shape(x), scalar) */
  if (ox_opt_op_is(n, "Shape") && n->n_input == 1)
    return ox_node_attr_int(n, "start", 0) == -1 && !ox_node_attr(n, "end");
  int64_t sh = n->n_input >= 1 ? producer(v, n->input[0], at) : -1;
  if (sh < 0 || !ox_opt_op_is(node_of(v, sh), "Shape") || ox_node_attr(node_of(v, sh), "start") ||
      ox_node_attr(node_of(v, sh), "end"))
    return false;
  if (ox_opt_op_is(n, "Slice") && v->opsets[at] >= 10 && n->n_input >= 3 && n->n_input <= 4 &&
      ox_opt_const_ints(v, n->input[1], &ix[0], 1) && ox_opt_const_ints(v, n->input[2], &ix[1], 1))
    return ix[0] == -1 && ix[1] >= ((int64_t)1 << 31) &&
           (n->n_input < 4 || (ox_opt_const_ints(v, n->input[3], &ix[0], 1) && ix[0] == 0));
  if (ox_opt_op_is(n, "Gather") && n->n_input == 2) {
    const ox_tensor *i = v->constant_any(v, n->input[1]);
    return i && i->n_dims == 0 && ox_node_attr_int(n, "axis", 0) == 0;
  }
  return false;
}

/* `name` is float32 by the nearest node that says: a Cast's `to`, a
 * constant's type, through Sqrt / Neg / Reciprocal / Identity and the
 * arithmetic (their operands' type) */
static bool float32_by_chain(const ox_pass_view *v, const char *name, int64_t before, int depth) {
  const ox_tensor *t = v->constant_any(v, name);
  if (t) return t->data_type == OX_FLOAT;
  int64_t at = producer(v, name, before);
  if (at < 0 || depth > 8) return false;
  const ox_node *n = node_of(v, at);
  if (ox_opt_op_is(n, "Cast")) return ox_node_attr_int(n, "to", 0) == OX_FLOAT;
  static const char *const same[] = {"Sqrt", "Reciprocal", "Neg", "Identity",
                                     "Div",  "Mul",        "Add", "Sub"};
  for (size_t k = 0; k < sizeof same / sizeof *same; k++)
    if (ox_opt_op_is(n, same[k]) && n->n_input >= 1)
      return float32_by_chain(v, n->input[0], at, depth + 1) ||
             (n->n_input == 2 && float32_by_chain(v, n->input[1], at, depth + 1));
  return false;
}

/* q or k made for `reader` by Mul(x, c): a constant c folds into the scale,
 * a computed single value becomes the factor input. x, or NULL */
static const char *side_factor(const ox_pass_view *v, match *m, int64_t at) {
  float c;
  const char *x = mul_by_const(v, at, &c);
  if (x) {
    take(m, at);
    fold_factor(m, c);
    return x;
  }
  if (at < 0 || !ox_opt_op_is(node_of(v, at), "Mul") || node_of(v, at)->n_input != 2) return NULL;
  const ox_node *n = node_of(v, at);
  for (int side = 0; side < 2; side++)
    if (one_value(v, n->input[1 - side], at, 0)) {
      m->f32 = m->f32 || float32_by_chain(v, n->input[1 - side], at, 0);
      if (m->factor && strcmp(m->factor, n->input[1 - side]) != 0) m->bad = true;
      m->factor = n->input[1 - side];
      m->factor_pow++;
      take(m, at);
      return n->input[side];
    }
  return NULL;
}

/* `name` proved of rank 4 by its producer (before `before`) */
static bool proves_rank4(const ox_pass_view *v, const char *name, size_t before) {
  int64_t at = producer(v, name, (int64_t)before), shp[4];
  if (at < 0) return false;
  const ox_node *n = node_of(v, at);
  if (ox_opt_op_is(n, "Transpose")) {
    const ox_attr *p = ox_node_attr(n, "perm");
    return p && p->n_ints == 4;
  }
  return ox_opt_op_is(n, "Reshape") && n->n_input == 2 && v->opsets[at] >= 5 &&
         ox_opt_const_ints(v, n->input[1], shp, 4);
}

/* An operand read by node `reader`: a head split Transpose<0,2,1,3> made
 * for it alone is folded (*bshd). Returns the name the fused node reads. */
static const char *head_split(const ox_pass_view *v, match *m, const char *name, int64_t reader,
                              bool *bshd) {
  int64_t t = only_into(v, name, reader);
  *bshd = false;
  if (t >= 0 && ox_opt_op_is(node_of(v, t), "Transpose") && node_of(v, t)->n_input == 1 &&
      perm_is(node_of(v, t), p0213)) {
    take(m, t);
    *bshd = true;
    m->rank4 = true;
    return node_of(v, t)->input[0];
  }
  if (proves_rank4(v, name, (size_t)reader)) m->rank4 = true;
  return name;
}

/* repeat_kv: Reshape(Expand(Unsqueeze(kv, [2]), e), r) made for `reader`
 * alone. With e = [b, Hk, n, T, D] and r = [b, Hk * n, T, D] constants: e
 * in e5, *es = *rs = NULL. With either computed (dynamic shapes): their
 * names in *es and *rs, which the kernel checks at run time, and *allowzero
 * the Reshape's. Returns kv (the nodes in at[3]), or NULL. */
static const char *repeat_kv(const ox_pass_view *v, const char *name, int64_t reader, int64_t at[3],
                             int64_t e5[5], const char **es, const char **rs, bool *allowzero) {
  int64_t r4[4], re = only_into(v, name, reader), ex = -1, us = -1;
  if (re < 0 || !ox_opt_op_is(node_of(v, re), "Reshape") || v->opsets[re] < 5 ||
      node_of(v, re)->n_input != 2)
    return NULL;
  ex = only_into(v, node_of(v, re)->input[0], re);
  if (ex < 0 || !ox_opt_op_is(node_of(v, ex), "Expand") || node_of(v, ex)->n_input != 2)
    return NULL;
  us = only_into(v, node_of(v, ex)->input[0], ex);
  if (us < 0 || !ox_opt_op_is(node_of(v, us), "Unsqueeze")) return NULL;
  const ox_node *u = node_of(v, us);
  int64_t axis;
  if (v->opsets[us] >= 13) {
    if (u->n_input != 2 || !ox_opt_const_ints(v, u->input[1], &axis, 1)) return NULL;
  } else {
    const ox_attr *ax = ox_node_attr(u, "axes");
    if (u->n_input != 1 || !ax || ax->n_ints != 1) return NULL;
    axis = ax->ints[0];
  }
  if (axis != 2 && axis != -3) return NULL;
  *allowzero = ox_node_attr_int(node_of(v, re), "allowzero", 0) != 0;
  bool e_const = ox_opt_const_ints(v, node_of(v, ex)->input[1], e5, 5);
  if (e_const && ox_opt_const_ints(v, node_of(v, re)->input[1], r4, 4)) {
    /* every value known and positive: the merge of axes 1 and 2 is
     * proved (an allowzero 0 or -1 in r is not) */
    for (int d = 0; d < 5; d++)
      if (e5[d] <= 0) return NULL;
    if (r4[0] != e5[0] || r4[1] != e5[1] * e5[2] || r4[2] != e5[3] || r4[3] != e5[4]) return NULL;
    *es = *rs = NULL;
  } else {
    /* a constant of the wrong length is no repeat_kv */
    int64_t n = ox_opt_elems(v->constant_any(v, node_of(v, ex)->input[1]));
    int64_t m = ox_opt_elems(v->constant_any(v, node_of(v, re)->input[1]));
    if ((n >= 0 && n != 5) || (m >= 0 && m != 4)) return NULL;
    *es = node_of(v, ex)->input[1];
    *rs = node_of(v, re)->input[1];
  }
  at[0] = re;
  at[1] = ex;
  at[2] = us;
  return u->input[0];
}

/* K^T's side of the scores' MatMul (node mm, input 1): the name the fused
 * node reads as K, its layout, and (*kr) the pattern node reading it */
static const char *k_side(const ox_pass_view *v, match *m, int64_t mm, bool trans_b_node, bool *kt,
                          bool *kbshd, int64_t *kr) {
  const char *name = node_of(v, mm)->input[1];
  int64_t reader = mm;
  *kt = false;
  *kbshd = false;
  /* Mul by sqrt(scale) after K's Transpose (SDPA), or before it */
  int64_t mk = only_into(v, name, reader);
  const char *x = side_factor(v, m, mk);
  bool k_mul = x != NULL;
  if (x) {
    name = x;
    reader = mk;
  }
  if (!trans_b_node) {
    int64_t t = only_into(v, name, reader);
    bool tr = t >= 0 && ox_opt_op_is(node_of(v, t), "Transpose") && node_of(v, t)->n_input == 1;
    if (tr && perm_is(node_of(v, t), p0231)) {
      /* K^T straight from [B, T, H, D] */
      take(m, t);
      m->rank4 = true;
      *kbshd = true;
      *kr = t;
      return node_of(v, t)->input[0];
    }
    if (!tr || !perm_is(node_of(v, t), p0132)) {
      *kt = true; /* already [B, Hk, D, T] */
      if (proves_rank4(v, name, (size_t)reader)) m->rank4 = true;
      *kr = reader;
      return name;
    }
    take(m, t);
    m->rank4 = true;
    name = node_of(v, t)->input[0];
    reader = t;
  }
  if (trans_b_node) {
    /* matmul_transb read k4 in place of the original MatMul's
     * Transpose<0,1,3,2>(k4): that Transpose, dropped when the MatMul alone
     * read it, else live for its other readers (it stays: the fused node
     * reads k4, not it) */
    const char *kT = v->nodes[mm].input[1];
    int64_t t = -1;
    for (int64_t j = mm; j-- > 0 && t < 0;)
      if (kT && v->nodes[j].n_output == 1 && v->nodes[j].output[0] &&
          strcmp(v->nodes[j].output[0], kT) == 0)
        t = j;
    const ox_node *tn = t >= 0 ? &v->nodes[t] : NULL;
    if (k_mul || !tn || v->repl[t] || !ox_opt_op_is(tn, "Transpose") || tn->n_input != 1 ||
        strcmp(tn->input[0], name) != 0 || !perm_is(tn, p0132) ||
        (v->drop[t] && v->n_reads(v, kT) != 1))
      return NULL;
    m->rank4 = true;
    /* the fused node reads k4 as K, and k4 stays for any other reader (a
     * Shape, a graph output). A node making k4 folds into the fused one
     * only when the dropped Transpose was k4's one reader, which only_into
     * checks against `reader`; a live Transpose still reads k4, so nothing
     * behind it may go (*kr -1: only_into takes nothing for it) */
    if (!v->drop[t]) {
      *kr = -1;
      return name;
    }
    reader = t;
  }
  if (!k_mul) {
    mk = only_into(v, name, reader);
    x = side_factor(v, m, mk);
    if (x) {
      name = x;
      reader = mk;
    }
  }
  *kr = reader;
  return name;
}

/* node `at` is a live Cast to float32 (TorchScript's softmax(.., dtype) and
 * .to(dtype) on float32 scores: no-ops, the chain being float32, which the
 * pass proves before fusing); else -1 */
static int64_t float_cast(const ox_pass_view *v, int64_t at) {
  if (at < 0 || v->drop[at] || v->repl[at] || !ox_opt_is_node(v, at, "Cast", 1)) return -1;
  const ox_node *n = node_of(v, at);
  return n->n_input == 1 && ox_node_attr_int(n, "to", 0) == OX_FLOAT ? at : -1;
}

/* past Casts to float32 (.to(dtype) between the links): *at the first
 * other node, *reader the one reading it; the Casts taken */
static void skip_casts(const ox_pass_view *v, match *m, int64_t *at, int64_t *reader) {
  while (*at >= 0 && float_cast(v, *at) == *at) {
    take(m, *at);
    *reader = *at;
    *at = only_into(v, node_of(v, *at)->input[0], *reader);
  }
}

/* `name` (read by `reader`) is the scores through Where / Mul / Div links
 * down to a MatMul or MatMulTransBFused, each made for the next alone */
static bool reaches_scores(const ox_pass_view *v, const char *name, int64_t reader) {
  for (int depth = 0; depth < 6; depth++) {
    int64_t p = only_into(v, name, reader);
    if (p < 0) return false;
    const ox_node *n = node_of(v, p);
    if (float_cast(v, p) == p) {
      name = n->input[0];
      reader = p;
      continue;
    }
    if (ox_opt_op_is(n, "MatMul") || (n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0 &&
                                      strcmp(n->op_type, "MatMulTransBFused") == 0))
      return true;
    float c;
    if (ox_opt_op_is(n, "Where") && n->n_input == 3)
      name = ox_opt_scalar_const(v, n->input[2], &c) ? n->input[1] : n->input[2];
    else if (ox_opt_op_is(n, "Div") && n->n_input == 2)
      name = n->input[0];
    else if (!(name = mul_by_const(v, p, &c)))
      return false;
    reader = p;
  }
  return false;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *sm = node_of(v, i);
  if (!ox_opt_op_is(sm, "Softmax") || sm->n_input != 1 || sm->n_output != 1 || !sm->output[0] ||
      !*sm->output[0])
    return OX_OK;
  /* the last axis only: -1 (before opset 13, axis -1 flattens nothing else) */
  if (ox_node_attr_int(sm, "axis", v->opsets[i] >= 13 ? -1 : 1) != -1) return OX_OK;
  match m = {.scale = 1.0f};
  take(&m, (int64_t)i);
  /* forwards: MatMul(p, v4) [-> Transpose<0,2,1,3>] */
  const char *probs = sm->output[0];
  int64_t pv = v->sole_reader(v, probs), pc = float_cast(v, pv);
  if (pc >= 0) { /* softmax(..).to(float32) */
    take(&m, pc);
    probs = node_of(v, pc)->output[0];
    pv = v->sole_reader(v, probs);
  }
  if (pv <= (int64_t)i || v->repl[pv] || !ox_opt_is_node(v, pv, "MatMul", 1) ||
      node_of(v, pv)->n_input != 2 || strcmp(node_of(v, pv)->input[0], probs) != 0)
    return OX_OK;
  int64_t last = pv, yt = v->sole_reader(v, node_of(v, pv)->output[0]);
  bool y_bshd = false;
  if (yt > pv && !v->repl[yt] && ox_opt_is_node(v, yt, "Transpose", 1) &&
      node_of(v, yt)->n_input == 1 && perm_is(node_of(v, yt), p0213)) {
    y_bshd = true;
    last = yt;
    m.rank4 = true;
  }
  /* backwards: [Add mask] <- [Where] <- [Mul/Div c] <- scores */
  const char *cur = sm->input[0], *mask = NULL, *cond = NULL;
  int64_t reader = (int64_t)i, at = only_into(v, cur, reader);
  skip_casts(v, &m, &at, &reader); /* softmax(.., dtype=float32) */
  if (at < 0) return OX_OK;
  const ox_node *n = node_of(v, at);
  if (ox_opt_op_is(n, "Add") && n->n_input == 2) {
    /* the scores' side is the one made for this Add alone by a link of the chain */
    int side = reaches_scores(v, n->input[0], at) ? 0 : reaches_scores(v, n->input[1], at) ? 1 : -1;
    if (side < 0) return OX_OK;
    mask = n->input[1 - side];
    take(&m, at);
    reader = at;
    cur = n->input[side];
    at = only_into(v, cur, reader);
    skip_casts(v, &m, &at, &reader);
    if (at < 0) return OX_OK;
    n = node_of(v, at);
  }
  bool keep_true = true;
  float fill = 0.0f;
  if (ox_opt_op_is(n, "Where") && n->n_input == 3) {
    if (ox_opt_scalar_const(v, n->input[2], &fill) && strcmp(n->input[1], n->input[2]) != 0)
      cur = n->input[1];
    else if (ox_opt_scalar_const(v, n->input[1], &fill))
      cur = n->input[2], keep_true = false;
    else
      return OX_OK;
    cond = n->input[0];
    take(&m, at);
    reader = at;
    at = only_into(v, cur, reader);
    skip_casts(v, &m, &at, &reader); /* GPT-2: Where(causal, w.to(w.dtype), min) */
    if (at < 0) return OX_OK;
    n = node_of(v, at);
  }
  float c;
  if (ox_opt_op_is(n, "Div") && n->n_input == 2 && ox_opt_scalar_const(v, n->input[1], &c)) {
    m.scale = c;
    m.div = true;
    m.scaled = true;
    take(&m, at);
    reader = at;
    at = only_into(v, n->input[0], reader);
  } else if (mul_by_const(v, at, &c)) {
    const char *x = mul_by_const(v, at, &c);
    m.scale = c;
    m.scaled = true;
    take(&m, at);
    reader = at;
    at = only_into(v, x, reader);
  }
  skip_casts(v, &m, &at, &reader);
  if (at < 0) return OX_OK;
  n = node_of(v, at);
  bool trans_b = n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0 &&
                 strcmp(n->op_type, "MatMulTransBFused") == 0;
  if ((!trans_b && !ox_opt_op_is(n, "MatMul")) || n->n_input != 2) return OX_OK;
  int64_t mm = at;
  take(&m, mm);
  /* Q: [Mul(q, sqrt(scale))] [<- Transpose<0,2,1,3>] */
  const char *qn = n->input[0];
  int64_t qr = mm, mq = only_into(v, qn, mm);
  const char *x = side_factor(v, &m, mq);
  if (x) {
    qn = x;
    qr = mq;
  }
  bool q_bshd, k_bshd = false, v_bshd, kt = false;
  qn = head_split(v, &m, qn, qr, &q_bshd);
  /* K */
  int64_t kr;
  const char *kn = k_side(v, &m, mm, trans_b, &kt, &k_bshd, &kr);
  if (!kn) return OX_OK;
  int64_t ek[5], ev[5], nk[3], nv[3];
  const char *kes = NULL, *krs = NULL, *ves = NULL, *vrs = NULL;
  bool groups = false, kaz = false, vaz = false;
  if (!kt && !k_bshd) {
    const char *kkv = repeat_kv(v, kn, kr, nk, ek, &kes, &krs, &kaz);
    if (kkv) {
      groups = true;
      m.rank4 = true;
      for (int g = 0; g < 3; g++) take(&m, nk[g]);
      kn = head_split(v, &m, kkv, nk[2], &k_bshd);
    } else {
      kn = head_split(v, &m, kn, kr, &k_bshd);
    }
  }
  /* V: the same repeat_kv as K, or none on either */
  const char *vn = node_of(v, pv)->input[1];
  const char *vkv = repeat_kv(v, vn, pv, nv, ev, &ves, &vrs, &vaz);
  if ((vkv != NULL) != groups) return OX_OK;
  /* K's and V's repeats alike: the same constants, or the same shape values */
  if (groups &&
      (!kes != !ves || kaz != vaz ||
       (kes ? strcmp(kes, ves) != 0 || strcmp(krs, vrs) != 0 : memcmp(ek, ev, sizeof ek) != 0)))
    return OX_OK;
  if (vkv) {
    for (int g = 0; g < 3; g++) take(&m, nv[g]);
    vn = head_split(v, &m, vkv, nv[2], &v_bshd); /* the Unsqueeze reads it */
  } else {
    vn = head_split(v, &m, vn, pv, &v_bshd);
  }
  if (!m.rank4 || m.bad || m.n_gone >= sizeof m.gone / sizeof *m.gone) return OX_OK;
  /* float32 (the kernel's type): a float32 scale or fill constant in the
   * chain says so (Mul, Div and Where take one type), else a known type */
  if (!m.scaled && !cond && !m.f32 && !v->is_float(v, qn) && !v->is_float(v, kn) &&
      !v->is_float(v, vn) && !(mask && v->is_float(v, mask)))
    return OX_OK;
  /* the nodes the fused one reads must all be made before `last` (they are:
   * each was read by a node of the pattern, all before it) */
  size_t n_in = m.factor ? 8 : kes ? 7 : cond ? 5 : mask ? 4 : 3;
  ox_node *fn = ox_opt_new_node(v, node_of(v, last), "AttentionBHSDFused", n_in, 14);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = node_of(v, mm)->name;
  fn->input[0] = (char *)qn;
  fn->input[1] = (char *)kn;
  fn->input[2] = (char *)vn;
  if (n_in > 3) fn->input[3] = (char *)(mask ? mask : "");
  if (n_in > 4) fn->input[4] = (char *)(cond ? cond : "");
  if (n_in > 5) {
    fn->input[5] = (char *)(kes ? kes : "");
    fn->input[6] = (char *)(kes ? krs : "");
  }
  if (m.factor) fn->input[7] = (char *)m.factor;
  fn->output[0] = node_of(v, last)->output[0];
  if (m.scaled) ox_opt_add_float_attr(fn, "scale", m.scale);
  if (m.div) ox_opt_add_int_attr(fn, "scale_div", 1);
  if (kt) ox_opt_add_int_attr(fn, "k_transposed", 1);
  if (q_bshd) ox_opt_add_int_attr(fn, "q_bshd", 1);
  if (k_bshd) ox_opt_add_int_attr(fn, "k_bshd", 1);
  if (v_bshd) ox_opt_add_int_attr(fn, "v_bshd", 1);
  if (y_bshd) ox_opt_add_int_attr(fn, "y_bshd", 1);
  if (groups) ox_opt_add_int_attr(fn, "kv_groups", 1);
  if (groups && !kes && !ox_opt_add_ints_attr(v, fn, "kv_expand", ek, 5))
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  if (kes && kaz) ox_opt_add_int_attr(fn, "kv_allowzero", 1);
  if (m.factor_pow == 2) ox_opt_add_int_attr(fn, "qk_factor_pow", 2);
  if (cond) {
    ox_opt_add_float_attr(fn, "where_fill", fill);
    if (!keep_true) ox_opt_add_int_attr(fn, "where_keep", 0);
  }
  for (size_t g = 0; g < m.n_gone; g++) v->drop[m.gone[g]] = true;
  /* the readers moved to `last`: later passes ask who reads what */
  for (size_t k = 0; k < n_in; k++)
    if (*fn->input[k]) v->reads(v, fn->input[k], (size_t)last);
  if (last != pv) v->drop[pv] = true;
  v->repl[last] = fn;
  return OX_OK;
}

int ox_opt_attention_bhsd(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
