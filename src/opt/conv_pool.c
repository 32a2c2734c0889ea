/* conv_pool.c - a 2-D MaxPool reading a convolution's output becomes part
 * of the convolution.
 *
 * The first layers of many image networks are Conv [-> Relu] -> MaxPool:
 * the convolution writes a large map (64 x 111 x 111 floats in SqueezeNet,
 * 3 MB) that the pool reads once and reduces four-fold. Inside a model the
 * map's lines are cold when the convolution writes them, and it cost as
 * much as the arithmetic. The fused node computes the convolution a band
 * of rows at a time into a buffer that stays in cache and pools each band
 * as it is done (src/ops/conv_pool.c); only the pooled map is written.
 * Output values are those of the two nodes run one after the other.
 *
 * Matched: Conv or FusedConv (after the epilogue fusion: bias, activation,
 * no residual, no prologue) on 4-D float input whose output is read only by
 * a MaxPool with 2-D kernel_shape, dilations 1, auto_pad NOTSET and no
 * Indices output. The result is a FusedConv with attributes pool_kernel,
 * pool_strides, pool_pads (4 values) and pool_ceil. */
#include <string.h>

#include "pass.h"

/* a copy of the ints (arena) as attribute `name` of n */
static bool add_ints(ox_pass_view *v, ox_node *n, const char *name, const int64_t *x, size_t k) {
  int64_t *d = ox_arena_calloc(v->a, k, sizeof *d);
  if (!d) return false;
  memcpy(d, x, k * sizeof *d);
  ox_attr *at = &n->attribute[n->n_attribute++];
  memset(at, 0, sizeof *at);
  at->name = (char *)name;
  at->type = OX_ATTR_INTS;
  at->has_type = true;
  at->ints = d;
  at->n_ints = k;
  return true;
}

/* ints attribute `name` of n with k values into out (default `dflt` each
 * when absent); false when present with another count */
static bool ints_or(const ox_node *n, const char *name, size_t k, int64_t dflt, int64_t *out) {
  const ox_attr *a = ox_node_attr(n, name);
  if (!a) {
    for (size_t i = 0; i < k; i++) out[i] = dflt;
    return true;
  }
  if (a->type != OX_ATTR_INTS || a->n_ints != k) return false;
  memcpy(out, a->ints, k * sizeof *out);
  return true;
}

static bool notset(const ox_node *n) {
  const ox_attr *ap = ox_node_attr(n, "auto_pad");
  return !ap || !ap->s.size || (ap->s.size == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0);
}

static int fuse_at(ox_pass_view *v, size_t i) {
  if (v->drop[i] || v->repl[i]) return OX_OK;
  const ox_node *mp = &v->nodes[i];
  if (!ox_opt_op_is(mp, "MaxPool") || v->opsets[i] < 1 || mp->n_input != 1 || mp->n_output < 1)
    return OX_OK;
  for (size_t o = 1; o < mp->n_output; o++) /* Indices */
    if (mp->output[o] && *mp->output[o]) return OX_OK;
  int64_t k[2], s[2], pads[4], dil[2];
  if (!ints_or(mp, "kernel_shape", 2, 0, k) || !ints_or(mp, "strides", 2, 1, s) ||
      !ints_or(mp, "pads", 4, 0, pads) || !ints_or(mp, "dilations", 2, 1, dil) || !notset(mp))
    return OX_OK;
  if (!ox_node_attr(mp, "kernel_shape") || k[0] < 1 || k[1] < 1 || k[0] > 16 || k[1] > 16 ||
      s[0] < 1 || s[1] < 1 || dil[0] != 1 || dil[1] != 1)
    return OX_OK;
  for (int d = 0; d < 4; d++)
    if (pads[d] < 0 || pads[d] >= k[d % 2]) return OX_OK;
  int64_t ceil = ox_node_attr_int(mp, "ceil_mode", 0);
  if (ceil != 0 && ceil != 1) return OX_OK;
  int64_t p = ox_opt_producer(v, mp->input[0], i);
  if (p < 0 || v->drop[p]) return OX_OK;
  const ox_node *pn = &v->nodes[p];
  if (pn->n_output != 1 || v->sole_reader(v, pn->output[0]) != (int64_t)i ||
      v->pinned(v, pn->output[0]))
    return OX_OK;
  const ox_node *cv = v->repl[p] ? v->repl[p] : pn;
  bool fused =
      cv->domain && strcmp(cv->domain, "ai.onnxc") == 0 && strcmp(cv->op_type, "FusedConv") == 0;
  if (!fused && !(ox_opt_op_is(cv, "Conv") && !v->repl[p])) return OX_OK;
  if (cv->n_input < 2 || cv->n_input > 3 || cv->n_output != 1 || ox_node_attr(cv, "pre_scale") ||
      ox_node_attr(cv, "pool_kernel") || !notset(cv))
    return OX_OK;
  ox_pass_floats w;
  if (!v->float_const(v, cv->input[1], &w) || w.rank != 4) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, cv, "FusedConv", cv->n_input, 4);
  if (!fn) return v->e->code;
  for (size_t q = 0; q < cv->n_input; q++) fn->input[q] = cv->input[q];
  fn->output[0] = mp->output[0];
  if (!add_ints(v, fn, "pool_kernel", k, 2) || !add_ints(v, fn, "pool_strides", s, 2) ||
      !add_ints(v, fn, "pool_pads", pads, 4))
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  ox_opt_add_int_attr(fn, "pool_ceil", ceil);
  v->drop[i] = true;
  v->repl[p] = fn;
  return OX_OK;
}

int ox_opt_conv_pool(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
