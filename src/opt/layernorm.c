/* layernorm.c - layer normalisation written out, to one node.
 *
 * Exports of BERT-style encoders and GPT-2 (before opset 17 had
 * LayerNormalization) spell it over the last axis as
 *
 *   m = ReduceMean(x)    d = Sub(x, m)    p = Pow(d, 2)    v = ReduceMean(p)
 *   s = Sqrt(Add(v, eps))    n = Div(d, s)    y = Add(Mul(n, gamma), beta)
 *
 * nine nodes, each a pass over the tensor. With each intermediate read only
 * inside the pattern (d by Pow and Div), eps a constant scalar and gamma and
 * beta constants of rank <= 1, the nodes become one ai.onnxc LayerNormFused
 * (x, gamma, beta) with axis -1 and that epsilon, run by the kernel of
 * LayerNormalization (src/ops/norm.c). Mul by gamma and Add of beta are
 * optional (the last node present gives the output). When x is an Add
 * read by nothing else, its operands become inputs 0 and 3 (the residual,
 * added to X row by row inside the normalisation: skip layer norm). */
#include <string.h>

#include "pass.h"

/* the other input of binary node n when one input is `name`, else NULL */
static const char *other_input(const ox_node *n, const char *name) {
  if (n->n_input != 2) return NULL;
  if (strcmp(n->input[0], name) == 0) return n->input[1];
  if (strcmp(n->input[1], name) == 0) return n->input[0];
  return NULL;
}

/* the sole reader of `name` after node `after` if it is `op` with one output */
static int64_t next_op(const ox_pass_view *v, const char *name, int64_t after, const char *op) {
  int64_t j = v->sole_reader(v, name);
  if (j <= after || !ox_opt_op_is(&v->nodes[j], op) || v->nodes[j].n_output != 1 ||
      !v->nodes[j].output[0] || !*v->nodes[j].output[0])
    return -1;
  return j;
}

static bool small_const(const ox_pass_view *v, const char *name) {
  const ox_tensor *t = v->constant(v, name);
  return t && t->data_type == OX_FLOAT && t->n_dims <= 1 && ox_opt_elems(t) >= 1;
}

/* The Add (opset >= 7, two inputs) making x when x is read by nodes rm
 * and sub only (the pattern's ReduceMean and Sub), else -1 */
static int64_t skip_add(const ox_pass_view *v, const char *x, size_t rm, int64_t sub) {
  int64_t p = ox_opt_producer(v, x, rm);
  if (p < 0 || v->drop[p] || v->repl[p] || !ox_opt_op_is(&v->nodes[p], "Add") || v->opsets[p] < 7 ||
      v->nodes[p].n_input != 2 || v->nodes[p].n_output != 1 || v->pinned(v, x))
    return -1;
  for (size_t k = (size_t)p + 1; k < v->n_node; k++) {
    if (v->drop[k] || k == rm || (int64_t)k == sub) continue;
    const ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    for (size_t q = 0; q < n->n_input; q++)
      if (n->input[q] && strcmp(n->input[q], x) == 0) return -1;
  }
  const ox_node *rn = &v->nodes[rm], *sn = &v->nodes[sub];
  for (size_t q = 1; q < rn->n_input; q++)
    if (rn->input[q] && strcmp(rn->input[q], x) == 0) return -1;
  if (strcmp(sn->input[1], x) == 0) return -1;
  return p;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *rm = &v->nodes[i];
  if (!ox_opt_op_is(rm, "ReduceMean") || rm->n_output != 1 || !rm->output[0] ||
      !ox_opt_axes_last(v, rm, v->opsets[i]))
    return OX_OK;
  const char *x = rm->input[0];
  int64_t sub = next_op(v, rm->output[0], (int64_t)i, "Sub");
  if (sub < 0 || v->nodes[sub].n_input != 2 || strcmp(v->nodes[sub].input[0], x) != 0 ||
      strcmp(v->nodes[sub].input[1], rm->output[0]) != 0)
    return OX_OK;
  const char *d = v->nodes[sub].output[0];
  if (!d || !*d || v->pinned(v, d)) return OX_OK;
  /* d is read by exactly Pow(d, 2) and Div(d, s), found after Sub */
  int64_t pw = -1, dv = -1;
  size_t readers = 0;
  for (size_t k = (size_t)sub + 1; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    const ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    for (size_t q = 0; q < n->n_input; q++)
      if (n->input[q] && strcmp(n->input[q], d) == 0) readers++;
    if (v->repl[k]) continue;
    if (ox_opt_op_is(n, "Pow") && n->n_input == 2 && strcmp(n->input[0], d) == 0) pw = (int64_t)k;
    if (ox_opt_op_is(n, "Div") && n->n_input == 2 && strcmp(n->input[0], d) == 0) dv = (int64_t)k;
  }
  float two, eps;
  if (readers != 2 || pw < 0 || dv < 0 || v->nodes[pw].n_output != 1 ||
      !ox_opt_scalar_const(v, v->nodes[pw].input[1], &two) || two != 2.0f)
    return OX_OK;
  int64_t rm2 = next_op(v, v->nodes[pw].output[0], pw, "ReduceMean");
  if (rm2 < 0 || !ox_opt_axes_last(v, &v->nodes[rm2], v->opsets[rm2])) return OX_OK;
  int64_t add = next_op(v, v->nodes[rm2].output[0], rm2, "Add");
  if (add < 0) return OX_OK;
  const char *e = other_input(&v->nodes[add], v->nodes[rm2].output[0]);
  if (!e || !ox_opt_scalar_const(v, e, &eps)) return OX_OK;
  int64_t sq = next_op(v, v->nodes[add].output[0], add, "Sqrt");
  if (sq < 0 || v->sole_reader(v, v->nodes[sq].output[0]) != dv ||
      strcmp(v->nodes[dv].input[1], v->nodes[sq].output[0]) != 0 || v->nodes[dv].n_output != 1)
    return OX_OK;
  /* then optionally Mul by gamma, then optionally Add beta */
  const char *out = v->nodes[dv].output[0], *gamma = "", *beta = "";
  int64_t last = dv, mul = next_op(v, out, dv, "Mul"), badd = -1;
  if (mul >= 0) {
    const char *gmm = other_input(&v->nodes[mul], out);
    if (gmm && small_const(v, gmm)) {
      gamma = gmm;
      out = v->nodes[mul].output[0];
      last = mul;
      badd = next_op(v, out, mul, "Add");
      const char *bt = badd >= 0 ? other_input(&v->nodes[badd], out) : NULL;
      if (bt && small_const(v, bt)) {
        beta = bt;
        out = v->nodes[badd].output[0];
        last = badd;
      } else {
        badd = -1;
      }
    } else {
      mul = -1;
    }
  }
  if (!*gamma) return OX_OK; /* LayerNormalization needs a scale */
  /* x = Add(p, q) read only here: the residual Add joins (input 3) */
  int64_t skip = skip_add(v, x, i, sub);
  ox_node *fn = ox_opt_new_node(v, &v->nodes[last], "LayerNormFused",
                                skip >= 0 ? 4
                                : *beta   ? 3
                                          : 2,
                                2);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = v->nodes[i].name;
  fn->input[0] = (char *)x;
  fn->input[1] = (char *)gamma;
  if (*beta || skip >= 0) fn->input[2] = (char *)beta;
  if (skip >= 0) {
    fn->input[0] = v->nodes[skip].input[0];
    fn->input[3] = v->nodes[skip].input[1];
    v->drop[skip] = true;
  }
  fn->output[0] = (char *)out;
  ox_opt_add_int_attr(fn, "axis", -1);
  ox_opt_add_float_attr(fn, "epsilon", eps);
  /* in the place of the last node: gamma and beta are constants, x is
   * computed before the first */
  const int64_t gone[] = {(int64_t)i, sub, pw, rm2, add, sq, dv, mul, badd};
  for (size_t k = 0; k < sizeof gone / sizeof *gone; k++)
    if (gone[k] >= 0 && gone[k] != last) v->drop[gone[k]] = true;
  v->repl[last] = fn;
  return OX_OK;
}

/* LayerNormalization (opset 17) over the last axis whose X is such an Add
 * and whose only output is Y: the same LayerNormFused with the residual */
static int skip_op_at(ox_pass_view *v, size_t i) {
  const ox_node *ln = &v->nodes[i];
  if (!ox_opt_op_is(ln, "LayerNormalization") || v->opsets[i] < 17 || ln->n_input < 2 ||
      ln->n_output < 1 || !ln->output[0] || !*ln->output[0] ||
      ox_node_attr_int(ln, "axis", -1) != -1 || ox_node_attr_int(ln, "stash_type", 1) != 1)
    return OX_OK;
  for (size_t o = 1; o < ln->n_output; o++)
    if (ln->output[o] && *ln->output[o]) return OX_OK;
  const char *x = ln->input[0];
  int64_t p = ox_opt_producer(v, x, i);
  if (p < 0 || v->drop[p] || v->repl[p] || !ox_opt_op_is(&v->nodes[p], "Add") || v->opsets[p] < 7 ||
      v->nodes[p].n_input != 2 || v->nodes[p].n_output != 1 || v->sole_reader(v, x) != (int64_t)i)
    return OX_OK;
  for (size_t q = 1; q < ln->n_input; q++)
    if (ln->input[q] && strcmp(ln->input[q], x) == 0) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, ln, "LayerNormFused", 4, 2);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->input[0] = v->nodes[p].input[0];
  fn->input[1] = ln->input[1];
  fn->input[2] = ox_opt_given(ln, 2) ? ln->input[2] : "";
  fn->input[3] = v->nodes[p].input[1];
  fn->output[0] = ln->output[0];
  fn->n_output = 1;
  ox_opt_add_int_attr(fn, "axis", -1);
  ox_opt_add_float_attr(fn, "epsilon", ox_node_attr_float(ln, "epsilon", 1e-5f));
  v->repl[i] = fn;
  v->drop[p] = true;
  return OX_OK;
}

int ox_opt_layernorm(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (!rc && !v->drop[i] && !v->repl[i]) rc = skip_op_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
