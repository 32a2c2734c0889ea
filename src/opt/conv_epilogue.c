/* conv_epilogue.c - what follows a float32 convolution, fused into it.
 *
 * A Conv whose output is read only by an Add / two-input Sum with a tensor
 * computed before the Conv (a residual), then optionally (or only) by a
 * Relu, LeakyRelu, Clip with constant bounds, HardSigmoid, HardSwish or SiLU
 * written as Mul(x, Sigmoid(x)) (YOLO, EfficientNet), becomes one ai.onnxc
 * FusedConv (src/ops/onnx/conv.c): Conv's inputs and attributes, the
 * residual as 4th input, attributes activation (a name of onnxc_ops.h),
 * alpha, beta; a following Max / Min with a scalar constant joins as
 * attributes bound (1 Max, 2 Min) and bound_value. Runs after conv_fold.c
 * (folded weights are float32 by construction) and before the passes that
 * read FusedConv (conv_prologue, channel_shuffle, conv_gate). */
#include <math.h>
#include <string.h>

#include "pass.h"

/* The activation of node j with its parameters, or -1. */
static int act_of(const ox_pass_view *v, size_t j, float *al, float *be) {
  const ox_node *n = &v->nodes[j];
  int64_t ver = v->opsets[j];
  if (v->drop[j] || n->n_output != 1 || !n->output[0] || !*n->output[0] || n->n_input < 1 ||
      ver < 6)
    return -1;
  *al = *be = 0;
  if (ox_opt_op_is(n, "Relu") && n->n_input == 1) return OX_ONNXC_ACT_RELU;
  if (ox_opt_op_is(n, "LeakyRelu") && n->n_input == 1) {
    *al = ox_node_attr_float(n, "alpha", 0.01f);
    return OX_ONNXC_ACT_LEAKY_RELU;
  }
  if (ox_opt_op_is(n, "HardSigmoid") && n->n_input == 1) {
    *al = ox_node_attr_float(n, "alpha", 0.2f);
    *be = ox_node_attr_float(n, "beta", 0.5f);
    return OX_ONNXC_ACT_HARD_SIGMOID;
  }
  if (ox_opt_op_is(n, "HardSwish") && n->n_input == 1 && ver >= 14) return OX_ONNXC_ACT_HARD_SWISH;
  if (!ox_opt_op_is(n, "Clip")) return -1;
  if (ver < 11) {
    if (n->n_input != 1) return -1;
    *al = ox_node_attr_float(n, "min", -3.402823466e+38f);
    *be = ox_node_attr_float(n, "max", 3.402823466e+38f);
    return OX_ONNXC_ACT_CLIP;
  }
  if (n->n_input > 3) return -1;
  *al = -INFINITY;
  *be = INFINITY;
  for (size_t k = 1; k < n->n_input; k++) {
    if (!n->input[k] || !*n->input[k]) continue;
    ox_pass_floats c;
    if (!v->graph_float_const(v, n->input[k], &c) || c.numel != 1) return -1;
    *(k == 1 ? al : be) = c.data[0];
  }
  return OX_ONNXC_ACT_CLIP;
}

/* SiLU written out: `out` (made before node `after`) read only by
 * s = Sigmoid(out) and m = Mul(out, s) (either order), s only by m, none a
 * graph output: the Mul's index (the Sigmoid's in *sig), else -1. */
static int64_t silu_after(const ox_pass_view *v, const char *out, size_t after, int64_t *sig) {
  if (!out || !*out || v->n_reads(v, out) != 2 || v->pinned(v, out)) return -1;
  for (size_t k = after + 1; k < v->n_node; k++) {
    const ox_node *n = &v->nodes[k];
    if (v->drop[k] || !ox_opt_op_is(n, "Sigmoid") || v->opsets[k] < 6 || n->n_input != 1 ||
        n->n_output != 1 || !n->input[0] || strcmp(n->input[0], out) != 0 || !n->output[0] ||
        !*n->output[0])
      continue;
    int64_t m = v->sole_reader(v, n->output[0]);
    if (m <= (int64_t)k) return -1;
    const ox_node *mn = &v->nodes[m];
    if (!ox_opt_op_is(mn, "Mul") || v->opsets[m] < 7 || mn->n_input != 2 || mn->n_output != 1 ||
        !mn->output[0] || !*mn->output[0] || !mn->input[0] || !mn->input[1])
      return -1;
    bool order = strcmp(mn->input[0], out) == 0 && strcmp(mn->input[1], n->output[0]) == 0;
    bool swapped = strcmp(mn->input[1], out) == 0 && strcmp(mn->input[0], n->output[0]) == 0;
    if (!order && !swapped) return -1;
    *sig = (int64_t)k;
    return m;
  }
  return -1;
}

/* Whether `name` is available before node i: not produced by a node at i
 * or later (graph inputs, initializers and earlier nodes' outputs). */
static bool ready_before(const ox_pass_view *v, const char *name, size_t i) {
  for (size_t k = i; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    const ox_node *n = &v->nodes[k];
    for (size_t o = 0; o < n->n_output; o++)
      if (n->output[o] && strcmp(n->output[o], name) == 0) return false;
  }
  return true;
}

static ox_attr *attr_at(ox_attr *at, const char *name, int type) {
  at->name = (char *)name;
  at->type = type;
  at->has_type = true;
  return at;
}

/* Conv node i and what follows it as one FusedConv (repl[i]); the nodes it
 * takes in are dropped. */
static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *c = &v->nodes[i];
  if (v->drop[i] || v->repl[i] || !ox_opt_op_is(c, "Conv") || c->n_input < 2 || c->n_input > 3 ||
      c->n_output != 1 || !c->output[0] || !*c->output[0] || v->opsets[i] < 1)
    return OX_OK;
  ox_pass_floats wv;
  bool w_const = v->graph_float_const(v, c->input[1], &wv);
  if (!w_const && !v->is_float(v, c->input[1]) && !v->is_float(v, c->input[0]))
    return OX_OK; /* not known to be float32 */
  const char *out = c->output[0], *res = NULL;
  size_t last = i;
  size_t gone[4];
  size_t n_gone = 0;
  int act = OX_ONNXC_ACT_NONE;
  float al = 0, be = 0;
  int64_t j = v->sole_reader(v, out);
  if (j > (int64_t)i &&
      ((ox_opt_op_is(&v->nodes[j], "Add") && v->opsets[j] >= 7) ||
       (ox_opt_op_is(&v->nodes[j], "Sum") && v->opsets[j] >= 6)) &&
      v->nodes[j].n_input == 2 && v->nodes[j].n_output == 1 && v->nodes[j].output[0] &&
      *v->nodes[j].output[0]) {
    const ox_node *a = &v->nodes[j];
    const char *other = strcmp(a->input[0], out) == 0 ? a->input[1] : a->input[0];
    if (other && *other && strcmp(other, out) != 0 && ready_before(v, other, i)) {
      res = other;
      out = a->output[0];
      last = (size_t)j;
      gone[n_gone++] = last;
      j = v->sole_reader(v, out);
    }
  }
  int k;
  int64_t sm, ss;
  if (j > (int64_t)last && (k = act_of(v, (size_t)j, &al, &be)) >= 0 &&
      strcmp(v->nodes[j].input[0], out) == 0) {
    act = k;
    out = v->nodes[j].output[0];
    last = (size_t)j;
    gone[n_gone++] = last;
    j = v->sole_reader(v, out);
  } else if ((sm = silu_after(v, out, last, &ss)) >= 0) { /* x * Sigmoid(x) */
    act = OX_ONNXC_ACT_SILU;
    out = v->nodes[sm].output[0];
    gone[n_gone++] = (size_t)ss;
    gone[n_gone++] = (size_t)sm;
    last = (size_t)sm;
    j = v->sole_reader(v, out);
  }
  /* then Max / Min with a scalar constant (not NaN) that raises no rank */
  int bound = 0;
  float bval = 0;
  const ox_node *mn = j > (int64_t)last ? &v->nodes[j] : NULL;
  if (mn && (ox_opt_op_is(mn, "Max") || ox_opt_op_is(mn, "Min")) && v->opsets[j] >= 8 &&
      mn->n_input == 2 && mn->n_output == 1 && mn->output[0] && *mn->output[0]) {
    const char *other = strcmp(mn->input[0], out) == 0 ? mn->input[1] : mn->input[0];
    ox_pass_floats cv;
    size_t max_rank = w_const ? wv.rank : 3; /* Y has W's rank (at least 3) */
    if (v->graph_float_const(v, other, &cv) && cv.numel == 1 && cv.rank <= max_rank &&
        !isnan(cv.data[0])) {
      bound = ox_opt_op_is(mn, "Max") ? 1 : 2;
      bval = cv.data[0];
      out = mn->output[0];
      gone[n_gone++] = (size_t)j;
    }
  }
  if (!n_gone) return OX_OK;
  ox_node *fn = ox_arena_calloc(v->a, 1, sizeof *fn);
  char **in = ox_arena_calloc(v->a, 5, sizeof *in);
  char **o = ox_arena_calloc(v->a, 2, sizeof *o);
  ox_attr *at = ox_arena_calloc(v->a, c->n_attribute + 5, sizeof *at);
  const char *act_name = ox_onnxc_act_name((ox_onnxc_act)act);
  if (!fn || !in || !o || !at)
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  *fn = *c;
  fn->op_type = "FusedConv";
  fn->domain = OX_ONNXC_DOMAIN;
  fn->name = ox_opt_fused_name(v, i, gone[n_gone - 1]);
  if (!fn->name) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  for (size_t q = 0; q < c->n_input; q++) in[q] = c->input[q];
  fn->n_input = c->n_input;
  if (res) {
    if (c->n_input < 3) in[2] = "";
    in[3] = (char *)res;
    fn->n_input = 4;
  }
  fn->input = in;
  o[0] = (char *)out;
  fn->output = o;
  if (c->n_attribute) memcpy(at, c->attribute, c->n_attribute * sizeof *at);
  ox_attr *aa = attr_at(&at[c->n_attribute], "activation", OX_ATTR_STRING);
  aa->s.data = (const uint8_t *)act_name;
  aa->s.size = strlen(act_name);
  ox_attr *af = attr_at(aa + 1, "alpha", OX_ATTR_FLOAT);
  af->f = al, af->has_f = true;
  ox_attr *ab = attr_at(aa + 2, "beta", OX_ATTR_FLOAT);
  ab->f = be, ab->has_f = true;
  ox_attr *ad = attr_at(aa + 3, "bound", OX_ATTR_INT);
  ad->i = bound, ad->has_i = true;
  ox_attr *av = attr_at(aa + 4, "bound_value", OX_ATTR_FLOAT);
  av->f = bval, av->has_f = true;
  fn->attribute = at;
  fn->n_attribute = c->n_attribute + 5;
  for (size_t q = 0; q < n_gone; q++) v->drop[gone[q]] = true;
  v->repl[i] = fn;
  return OX_OK;
}

int ox_opt_conv_epilogue(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
