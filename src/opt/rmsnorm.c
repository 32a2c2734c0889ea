/* rmsnorm.c - RMS normalisation written out, to one node.
 *
 * Llama-style decoders (Hugging Face's LlamaRMSNorm, Mistral's, Qwen's,
 * T5's layer norm) normalise by the root mean square over the last axis,
 * and exporters spell it as
 *
 *   p = Pow(x, 2) or Mul(x, x)     v = ReduceMean(p)   (last axis, kept)
 *   a = Add(v, eps)                n = x / sqrt(a), one of
 *       Div(x, Sqrt(a))            Mul(x, Reciprocal(Sqrt(a)))
 *       Mul(x, Div(1, Sqrt(a)))    Mul(x, Pow(a, -0.5))   (torch.rsqrt)
 *   y = Mul(n, gamma)              (optional)
 *
 * five to seven passes over the tensor. With eps a constant float32 scalar
 * (so x is float32: the Add takes one type), gamma a float32 constant of
 * rank <= 1, ReduceMean's axes -1 (attribute before opset 18, constant input
 * from 18) and every intermediate read only by the next node, the nodes
 * become one ai.onnxc RMSNormFused(x, gamma) with that epsilon, run by the
 * row loop of RMSNormalization (src/ops/fused/rms_norm.c). When HF casts to
 * float32 and back around the normalisation (half-precision models), the
 * Casts stay where they are: x is the first Cast's output and the pattern
 * ends before the second (gamma then multiplies in the model's type). The
 * pass runs after layernorm.c: layer normalisation's variance is this
 * pattern on x - mean, and LayerNormFused takes the whole of it. */
#include <string.h>

#include "pass.h"

/* node j is live (neither dropped nor replaced by an earlier pass) */
static bool live(const ox_pass_view *v, int64_t j) { return j >= 0 && !v->drop[j] && !v->repl[j]; }

/* the sole reader of `name` after `after` when it is a live `op` */
static int64_t next(const ox_pass_view *v, const char *name, int64_t after, const char *op,
                    int64_t min) {
  int64_t j = ox_opt_next_op(v, name, after, op, min);
  return live(v, j) && v->nodes[j].n_input >= 1 ? j : -1;
}

/* node j's input k is `name` */
static bool reads_at(const ox_pass_view *v, int64_t j, size_t k, const char *name) {
  return k < v->nodes[j].n_input && v->nodes[j].input[k] && strcmp(v->nodes[j].input[k], name) == 0;
}

/* a float32 constant of rank <= 1 (gamma: one value or one per column) */
static bool small_const(const ox_pass_view *v, const char *name) {
  const ox_tensor *t = v->constant(v, name);
  return t && t->data_type == OX_FLOAT && t->n_dims <= 1 && ox_opt_elems(t) >= 1;
}

/* x's square: Pow(x, 2) or Mul(x, x) at node i; x in *x */
static bool square_of(const ox_pass_view *v, size_t i, const char **x) {
  const ox_node *n = &v->nodes[i];
  if (n->n_input != 2 || !live(v, (int64_t)i)) return false;
  float two;
  if (ox_opt_is_node(v, (int64_t)i, "Pow", 7) && ox_opt_scalar_const(v, n->input[1], &two) &&
      two == 2.0f)
    *x = n->input[0];
  else if (ox_opt_is_node(v, (int64_t)i, "Mul", 7) && strcmp(n->input[0], n->input[1]) == 0)
    *x = n->input[0];
  else
    return false;
  return *x && **x;
}

/* From a = v + eps (node `add`): the node giving x / sqrt(a) (*y) and the
 * nodes between (up to two, -1 when absent) */
static bool inverse_root(const ox_pass_view *v, const char *x, int64_t add, int64_t *y,
                         int64_t mid[2]) {
  const char *a = v->nodes[add].output[0];
  mid[0] = mid[1] = -1;
  *y = -1;
  int64_t r = -1; /* the node making 1 / sqrt(a) */
  int64_t sq = next(v, a, add, "Sqrt", 6);
  if (sq >= 0) {
    mid[0] = sq;
    const char *s = v->nodes[sq].output[0];
    int64_t j = v->sole_reader(v, s);
    float one;
    if (j > sq && live(v, j) && ox_opt_is_node(v, j, "Div", 7) && v->nodes[j].n_input == 2 &&
        reads_at(v, j, 1, s)) {
      if (reads_at(v, j, 0, x))
        *y = j; /* Div(x, Sqrt(a)) */
      else if (ox_opt_scalar_const(v, v->nodes[j].input[0], &one) && one == 1.0f)
        r = j; /* Div(1, Sqrt(a)) */
    } else if (j > sq && live(v, j) && ox_opt_is_node(v, j, "Reciprocal", 6) &&
               v->nodes[j].n_input == 1) {
      r = j;
    }
    mid[1] = r;
  } else {
    int64_t p = next(v, a, add, "Pow", 7);
    float e;
    if (p >= 0 && v->nodes[p].n_input == 2 && reads_at(v, p, 0, a) &&
        ox_opt_scalar_const(v, v->nodes[p].input[1], &e) && e == -0.5f)
      r = mid[0] = p;
  }
  if (*y >= 0) return true;
  if (r < 0) return false;
  const char *ro = v->nodes[r].output[0];
  int64_t m = next(v, ro, r, "Mul", 7);
  const char *other = m >= 0 ? ox_opt_other_of(&v->nodes[m], ro) : NULL;
  if (!other || strcmp(other, x) != 0) return false;
  *y = m;
  return true;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const char *x;
  if (!square_of(v, i, &x)) return OX_OK;
  const char *p = v->nodes[i].output[0];
  int64_t rm = next(v, p, (int64_t)i, "ReduceMean", 1);
  if (rm < 0 || !reads_at(v, rm, 0, p) || !ox_opt_axes_last(v, &v->nodes[rm], v->opsets[rm]))
    return OX_OK;
  int64_t add = next(v, v->nodes[rm].output[0], rm, "Add", 7);
  float eps;
  const char *e = add >= 0 ? ox_opt_other_of(&v->nodes[add], v->nodes[rm].output[0]) : NULL;
  if (!e || !ox_opt_scalar_const(v, e, &eps)) return OX_OK;
  int64_t y, mid[2];
  if (!inverse_root(v, x, add, &y, mid)) return OX_OK;
  /* then optionally Mul by gamma */
  const char *out = v->nodes[y].output[0], *gamma = NULL;
  int64_t last = y, g = next(v, out, y, "Mul", 7);
  const char *gm = g >= 0 ? ox_opt_other_of(&v->nodes[g], out) : NULL;
  if (gm && strcmp(gm, out) != 0 && small_const(v, gm)) {
    gamma = gm;
    out = v->nodes[g].output[0];
    last = g;
  }
  ox_node *fn = ox_opt_new_node(v, &v->nodes[last], OX_ONNXC_RMS_NORM, gamma ? 2 : 1, 1);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = ox_opt_fused_name(v, i, (size_t)last);
  if (!fn->name) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  fn->input[0] = (char *)x;
  if (gamma) fn->input[1] = (char *)gamma;
  fn->output[0] = (char *)out;
  ox_opt_add_float_attr(fn, "epsilon", eps);
  /* in the place of the last node: gamma is a constant, x is computed
   * before the first */
  const int64_t gone[] = {(int64_t)i, rm, add, mid[0], mid[1], y};
  for (size_t k = 0; k < sizeof gone / sizeof *gone; k++)
    if (gone[k] >= 0 && gone[k] != last) v->drop[gone[k]] = true;
  v->repl[last] = fn;
  return OX_OK;
}

int ox_opt_rmsnorm(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
