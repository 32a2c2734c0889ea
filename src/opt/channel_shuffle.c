/* channel_shuffle.c - ShuffleNet's channel shuffle read by a depthwise
 * convolution becomes that convolution reading the channels where they are.
 *
 * The shuffle is X [N, C, H, W] -> Reshape [N, g, C/g, H, W] -> Transpose
 * (0, 2, 1, 3, 4) -> Reshape [N, C, H, W]: channel c of the result is X's
 * channel (c mod g) * C/g + c div g. A depthwise convolution (one input
 * channel per group) reads each channel's plane on its own, so it can read
 * X's plane directly: the copy the Transpose made (a pass over the whole
 * activation, written and read back) goes. The convolution (a FusedConv
 * after the epilogue fusion (conv_epilogue.c), or a Conv made one) gets attributes
 * in_shuffle = g and in_shuffle_shape = the second Reshape's shape; the
 * kernel (src/ops/conv.c) takes X's elements as that shape, as the Reshapes
 * did, and fails as they would when the element counts differ. Only
 * constant, fully given shapes (no 0 or -1) and values read by the next step
 * alone are matched. */
#include <string.h>

#include "pass.h"

/* node `at` is live with one output, read only by node `by` */
static bool only_read_by(const ox_pass_view *v, int64_t at, size_t by) {
  if (at < 0 || v->drop[at]) return false;
  const ox_node *n = &v->nodes[at];
  return n->n_output == 1 && n->output[0] && *n->output[0] &&
         v->sole_reader(v, n->output[0]) == (int64_t)by;
}

/* node `at` is a Reshape (opset >= 5, allowzero 0) to a constant shape of
 * `rank` positive dims, in *shape */
static bool reshape_to(const ox_pass_view *v, int64_t at, size_t rank, int64_t *shape) {
  const ox_node *r = &v->nodes[at];
  if (!ox_opt_op_is(r, "Reshape") || v->opsets[at] < 5 || r->n_input != 2 ||
      ox_node_attr_int(r, "allowzero", 0) != 0 ||
      !ox_opt_const_ints(v, r->input[1], shape, (int64_t)rank))
    return false;
  for (size_t d = 0; d < rank; d++)
    if (shape[d] <= 0) return false;
  return true;
}

static bool is_perm_02134(const ox_node *t) {
  static const int64_t want[5] = {0, 2, 1, 3, 4};
  const ox_attr *a = ox_node_attr(t, "perm");
  if (!a || a->n_ints != 5) return false;
  for (int i = 0; i < 5; i++)
    if (a->ints[i] != want[i]) return false;
  return true;
}

/* node i (or its replacement): a 2-D depthwise convolution of constant
 * float W [C, 1, kh, kw] with group C > 1, no prologue; C in *C */
static const ox_node *depthwise_conv(const ox_pass_view *v, size_t i, int64_t *C) {
  if (v->drop[i]) return NULL;
  const ox_node *n = v->repl[i] ? v->repl[i] : &v->nodes[i];
  bool fused =
      n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0 && strcmp(n->op_type, "FusedConv") == 0;
  if (!fused && !(ox_opt_op_is(n, "Conv") && !v->repl[i])) return NULL;
  if (n->n_input < 2 || n->n_output != 1 || ox_node_attr(n, "pre_scale") ||
      ox_node_attr(n, "in_shuffle"))
    return NULL;
  ox_pass_floats w;
  if (!v->float_const(v, n->input[1], &w) || w.rank != 4 || w.dims[1] != 1 || w.dims[0] < 2)
    return NULL;
  if (ox_node_attr_int(n, "group", 1) != w.dims[0]) return NULL;
  *C = w.dims[0];
  return n;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  int64_t C;
  const ox_node *cv = depthwise_conv(v, i, &C);
  if (!cv || !cv->input[0] || !*cv->input[0]) return OX_OK;
  int64_t s2[4], s1[5];
  int64_t r2 = ox_opt_producer(v, cv->input[0], i);
  if (!only_read_by(v, r2, i) || !reshape_to(v, r2, 4, s2)) return OX_OK;
  int64_t t = ox_opt_producer(v, v->nodes[r2].input[0], (size_t)r2);
  if (!only_read_by(v, t, (size_t)r2)) return OX_OK;
  const ox_node *tn = &v->nodes[t];
  if (!ox_opt_op_is(tn, "Transpose") || tn->n_input != 1 || !is_perm_02134(tn)) return OX_OK;
  int64_t r1 = ox_opt_producer(v, tn->input[0], (size_t)t);
  if (!only_read_by(v, r1, (size_t)t) || !reshape_to(v, r1, 5, s1)) return OX_OK;
  /* [N, g, C/g, H, W] and [N, C, H, W] */
  if (s1[1] < 2 || s1[1] * s1[2] != C || s2[0] != s1[0] || s2[1] != C || s2[2] != s1[3] ||
      s2[3] != s1[4])
    return OX_OK;
  const char *x = v->nodes[r1].input[0];
  if (!x || !*x) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, cv, "FusedConv", cv->n_input, 2);
  if (!fn) return v->e->code;
  for (size_t q = 0; q < cv->n_input; q++) fn->input[q] = cv->input[q];
  fn->input[0] = (char *)x;
  fn->output[0] = cv->output[0];
  ox_opt_add_int_attr(fn, "in_shuffle", s1[1]);
  if (!ox_opt_add_ints_attr(v, fn, "in_shuffle_shape", s2, 4))
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  v->drop[r1] = v->drop[t] = v->drop[r2] = true;
  v->reads(v, x, i);
  v->repl[i] = fn;
  return OX_OK;
}

int ox_opt_channel_shuffle(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
