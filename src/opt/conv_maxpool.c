/* conv_maxpool.c - a network's stem convolution read only by a 3 x 3,
 * stride-2 MaxPool becomes one FusedConv with max_pool = [3, 3, 2, 2].
 *
 * SqueezeNet's stem (3 -> 64 channels, 3 x 3 stride 2, 111 x 111) writes
 * 3.2 MB that the MaxPool reads back right after: inside the model, with
 * the rest of the network between two runs, that output was out of cache
 * and the convolution ran 0.55-0.65 ms against 0.30-0.35 on its own (one
 * thread, Zen 5), the MaxPool 0.13 against 0.07. Fused, the kernel
 * (src/kernels/conv_stem_body.h) pools each output row band while it is in
 * L2 and the 3.2 MB are never written. Only the stem's geometry is matched
 * (constant W of at most 4 input channels, one group, a 2-D kernel of at
 * most 11 x 11, strides 1 or 2, no dilation: ox_conv_stem_fits without its
 * depth bound) and the MaxPool's plain form (kernel 3 x 3, strides 2, no
 * padding, dilation 1, floor, no Indices output); the convolution may
 * carry an activation and a bound (conv_epilogue.c) but no residual,
 * prologue, gate or channel shuffle. Runs after conv_epilogue. */
#include <string.h>

#include "pass.h"

/* attribute `name` of n is absent or the ints `want` (n_want of them) */
static bool ints_are(const ox_node *n, const char *name, const int64_t *want, size_t n_want) {
  const ox_attr *a = ox_node_attr(n, name);
  if (!a) return true;
  if (a->type != OX_ATTR_INTS || a->n_ints != n_want) return false;
  for (size_t k = 0; k < n_want; k++)
    if (a->ints[k] != want[k]) return false;
  return true;
}

/* node j: MaxPool 3 x 3, stride 2, unpadded, one output */
static bool plain_max_pool(const ox_pass_view *v, int64_t j) {
  static const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, d1[2] = {1, 1}, p0[4] = {0, 0, 0, 0};
  const ox_node *m = &v->nodes[j];
  if (v->drop[j] || v->repl[j] || !ox_opt_op_is(m, "MaxPool") || v->opsets[j] < 1 ||
      m->n_input != 1 || m->n_output < 1 || !m->output[0] || !*m->output[0])
    return false;
  for (size_t q = 1; q < m->n_output; q++)
    if (m->output[q] && *m->output[q]) return false; /* Indices */
  const ox_attr *ks = ox_node_attr(m, "kernel_shape");
  const char *pad = ox_node_attr_str(m, "auto_pad", "NOTSET");
  return ks && ints_are(m, "kernel_shape", k3, 2) && ints_are(m, "strides", s2, 2) &&
         ox_node_attr(m, "strides") && ints_are(m, "dilations", d1, 2) &&
         ints_are(m, "pads", p0, 4) && ox_node_attr_int(m, "ceil_mode", 0) == 0 &&
         (strcmp(pad, "NOTSET") == 0 || strcmp(pad, "VALID") == 0);
}

/* node i (or its replacement): a Conv or FusedConv of the stem's geometry,
 * X, W and B its only inputs */
static const ox_node *stem_conv(const ox_pass_view *v, size_t i) {
  if (v->drop[i]) return NULL;
  const ox_node *n = v->repl[i] ? v->repl[i] : &v->nodes[i];
  bool fused =
      n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0 && strcmp(n->op_type, "FusedConv") == 0;
  if (!fused && !(ox_opt_op_is(n, "Conv") && !v->repl[i])) return NULL;
  if (n->n_input < 2 || n->n_input > 3 || n->n_output != 1 || !n->output[0] || !*n->output[0] ||
      !n->input[0] || !*n->input[0] || ox_node_attr(n, OX_ONNXC_ATTR_PRE_SCALE) ||
      ox_node_attr(n, OX_ONNXC_ATTR_IN_SCALE) || ox_node_attr(n, OX_ONNXC_ATTR_IN_SHUFFLE) ||
      ox_node_attr(n, OX_ONNXC_ATTR_MAX_POOL))
    return NULL;
  if (ox_node_attr_int(n, "group", 1) != 1 ||
      strcmp(ox_node_attr_str(n, "auto_pad", "NOTSET"), "NOTSET") != 0)
    return NULL;
  static const int64_t d1[2] = {1, 1};
  if (!ints_are(n, "dilations", d1, 2)) return NULL;
  ox_pass_floats w;
  if (!v->float_const(v, n->input[1], &w) || w.rank != 4 || w.dims[1] < 1 || w.dims[1] > 4 ||
      w.dims[2] < 1 || w.dims[2] > 11 || w.dims[3] < 1 || w.dims[3] > 11)
    return NULL;
  const ox_attr *st = ox_node_attr(n, "strides");
  if (st && (st->type != OX_ATTR_INTS || st->n_ints != 2)) return NULL;
  for (size_t d = 0; st && d < 2; d++)
    if (st->ints[d] < 1 || st->ints[d] > 2) return NULL;
  return n;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *cv = stem_conv(v, i);
  if (!cv) return OX_OK;
  int64_t j = v->sole_reader(v, cv->output[0]);
  if (j <= (int64_t)i || !plain_max_pool(v, j)) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, cv, "FusedConv", cv->n_input, 1);
  if (!fn) return v->e->code;
  fn->name = ox_opt_fused_name(v, i, (size_t)j);
  if (!fn->name) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  for (size_t q = 0; q < cv->n_input; q++) fn->input[q] = cv->input[q];
  fn->output[0] = v->nodes[j].output[0];
  static const int64_t pool[4] = {3, 3, 2, 2};
  if (!ox_opt_add_ints_attr(v, fn, OX_ONNXC_ATTR_MAX_POOL, pool, 4))
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  v->drop[j] = true;
  v->repl[i] = fn;
  return OX_OK;
}

int ox_opt_conv_maxpool(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
