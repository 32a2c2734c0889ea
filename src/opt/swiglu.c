/* swiglu.c - the gated SiLU of gated feed-forward layers, to one node.
 *
 * Llama-style MLPs compute down(SiLU(gate(x)) * up(x)) and exporters write
 * the gate as
 *
 *   s = Sigmoid(g)    t = Mul(g, s)    y = Mul(t, u)
 *
 * (either operand order of each Mul): three passes over the widest tensor
 * of the layer. With s and t read only by the next node, they become one
 * ai.onnxc SiLUMulFused(g, u), which computes g * Sigmoid(g) * u block by
 * block, the block still in cache (src/ops/fused/silu_mul.c). SiLU without
 * the gate product (x * Sigmoid(x) alone) is the elementwise_chain pass's:
 * this one takes the binary form, whose second operand is no constant. Runs
 * before elementwise_chain. */
#include <string.h>

#include "pass.h"

static bool live(const ox_pass_view *v, int64_t j) { return j >= 0 && !v->drop[j] && !v->repl[j]; }

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *sg = &v->nodes[i];
  if (!ox_opt_is_node(v, (int64_t)i, "Sigmoid", 6) || sg->n_input != 1 || !sg->input[0] ||
      !*sg->input[0])
    return OX_OK;
  const char *g = sg->input[0], *s = sg->output[0];
  int64_t m = ox_opt_next_op(v, s, (int64_t)i, "Mul", 7);
  const char *other = live(v, m) ? ox_opt_other_of(&v->nodes[m], s) : NULL;
  if (!other || strcmp(other, g) != 0) return OX_OK;
  const char *t = v->nodes[m].output[0];
  int64_t y = ox_opt_next_op(v, t, m, "Mul", 7);
  const char *u = live(v, y) ? ox_opt_other_of(&v->nodes[y], t) : NULL;
  /* a constant u joins the elementwise chain of Sigmoid and Mul instead */
  ox_pass_floats uc;
  if (!u || strcmp(u, t) == 0 || v->constant_any(v, u) || v->float_const(v, u, &uc)) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, &v->nodes[y], OX_ONNXC_SILU_MUL, 2, 0);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = ox_opt_fused_name(v, i, (size_t)y);
  if (!fn->name) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  fn->input[0] = (char *)g;
  fn->input[1] = (char *)u;
  fn->output[0] = v->nodes[y].output[0];
  /* in the last Mul's place: g and u are computed before it */
  v->drop[i] = v->drop[m] = true;
  v->repl[y] = fn;
  return OX_OK;
}

int ox_opt_swiglu(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
