/* conv_gate.c - a gate multiplied into a 1 x 1 convolution's input
 * (squeeze-and-excitation: Mul(Y, Sigmoid(...)) or Mul(Y, HardSigmoid(...))
 * read only by the next 1 x 1 convolution, in EfficientNet, MobileNet-v3,
 * RegNet-SE) becomes that convolution with attribute in_scale = 1 and the
 * gate as input 4 (src/ops/conv.c): a gate of one value per channel is
 * applied as the GEMM reads Y (one pass over Y fewer), any other shape is
 * multiplied first, as the Mul did. Shapes are not known here; the kernel
 * decides per run.
 *
 * Matched after the epilogue fusion (conv_epilogue.c): a Conv or FusedConv with a
 * constant float W [M, C, 1, 1], group 1, strides 1, no padding, no
 * prologue, shuffle or gate, whose X only it reads and is a Mul (opset >= 7)
 * of two values, one made by a Sigmoid, a HardSigmoid or a FusedConv ending in
 * HardSigmoid. */
#include <string.h>

#include "pass.h"

/* a live node before `before` whose output 0 is `name` and that is a
 * Sigmoid, a HardSigmoid, or a FusedConv whose activation is HardSigmoid
 * (conv_epilogue.c folds MobileNet-v3's gate activation into the gate's
 * convolution). Any other FusedConv is not a gate: torchvision's
 * squeeze-and-excitation writes Mul(gate, x) with x made by the depthwise
 * FusedConv, and taking x for the gate made the kernel multiply the whole
 * tensor first, serially, into a fresh buffer (MobileNet-v3's gated layers
 * ran no faster at 16 threads than at 1). */
static bool gate_made(const ox_pass_view *v, const char *name, size_t before) {
  for (size_t k = before; k-- > 0;) {
    if (v->drop[k]) continue;
    const ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    if (n->n_output < 1 || !n->output[0] || strcmp(n->output[0], name) != 0) continue;
    if (n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0)
      return strcmp(n->op_type, "FusedConv") == 0 &&
             strcmp(ox_node_attr_str(n, "activation", "none"), "HardSigmoid") == 0;
    return ox_opt_op_is(n, "Sigmoid") || ox_opt_op_is(n, "HardSigmoid");
  }
  return false;
}

static bool ints_all(const ox_node *n, const char *name, int64_t want) {
  const ox_attr *a = ox_node_attr(n, name);
  for (size_t q = 0; a && q < a->n_ints; q++)
    if (a->ints[q] != want) return false;
  return true;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  if (v->drop[i]) return OX_OK;
  const ox_node *cv = v->repl[i] ? v->repl[i] : &v->nodes[i];
  bool fused =
      cv->domain && strcmp(cv->domain, OX_ONNXC_DOMAIN) == 0 && strcmp(cv->op_type, "FusedConv") == 0;
  if (!fused && !(ox_opt_op_is(cv, "Conv") && !v->repl[i])) return OX_OK;
  if (cv->n_input < 2 || cv->n_input > 4 || cv->n_output != 1 || !ox_opt_given(cv, 0) ||
      ox_node_attr(cv, "pre_scale") || ox_node_attr(cv, "in_shuffle") ||
      ox_node_attr(cv, "in_scale") || ox_node_attr_int(cv, "group", 1) != 1 ||
      !ints_all(cv, "strides", 1) || !ints_all(cv, "pads", 0) || !ints_all(cv, "dilations", 1) ||
      strcmp(ox_node_attr_str(cv, "auto_pad", "NOTSET"), "NOTSET") != 0)
    return OX_OK;
  ox_pass_floats w;
  if (!v->float_const(v, cv->input[1], &w) || w.rank != 4 || w.dims[2] != 1 || w.dims[3] != 1)
    return OX_OK;
  int64_t m = ox_opt_producer(v, cv->input[0], i);
  if (m < 0 || v->sole_reader(v, cv->input[0]) != (int64_t)i) return OX_OK;
  const ox_node *mul = &v->nodes[m];
  if (!ox_opt_op_is(mul, "Mul") || v->opsets[m] < 7 || mul->n_input != 2 || !ox_opt_given(mul, 0) ||
      !ox_opt_given(mul, 1) || strcmp(mul->input[0], mul->input[1]) == 0)
    return OX_OK;
  int gi = gate_made(v, mul->input[1], (size_t)m)   ? 1
           : gate_made(v, mul->input[0], (size_t)m) ? 0
                                                    : -1;
  if (gi < 0) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, cv, "FusedConv", 5, 1);
  if (!fn) return v->e->code;
  fn->input[0] = mul->input[1 - gi];
  fn->input[1] = cv->input[1];
  fn->input[2] = ox_opt_given(cv, 2) ? cv->input[2] : "";
  fn->input[3] = ox_opt_given(cv, 3) ? cv->input[3] : "";
  fn->input[4] = mul->input[gi];
  fn->output[0] = cv->output[0];
  ox_opt_add_int_attr(fn, "in_scale", 1);
  v->drop[m] = true;
  v->reads(v, fn->input[0], i);
  v->reads(v, fn->input[4], i);
  v->repl[i] = fn;
  return OX_OK;
}

int ox_opt_conv_gate(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
