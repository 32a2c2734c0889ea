/* qdq_conv.c - QDQ convolution units to one integer node.
 *
 * Quantization tools (onnxruntime's quantize_static among them) write an
 * 8-bit convolution as float arithmetic between quantize/dequantize pairs:
 *
 *   xq -> DequantizeLinear(xs, xz) -+
 *   wq -> DequantizeLinear(ws, wz) -+-> Conv [-> Relu|Clip] -> QuantizeLinear(ys, yz) -> yq
 *   (bias, float: often DequantizeLinear of int32) -+
 *
 * When the scales and zero points are constants of the shapes the integer
 * kernel takes (x and y per tensor; w per tensor or per output channel, axis
 * 0), W is a constant 8-bit tensor and the float values in between are read
 * by nobody else, the unit becomes one ai.onnxc QLinearConvFused node:
 * QLinearConv's inputs, with the Conv's float bias as B, the Conv's
 * attributes and relu = 1 when a Relu sat before the QuantizeLinear, or
 * clip_lo and clip_hi for a Clip with constant bounds there (ReLU6). The
 * result differs from the float path only where rounding a value to the
 * output's quantum falls the other way (the kernel folds the scales into
 * one factor). DequantizeLinear nodes left without readers are dropped. */
#include <math.h>
#include <string.h>

#include "pass.h"

/* Node j is a Relu (bounds [0, inf)) or a Clip with constant float
 * bounds (opset 11 on: inputs; before: attributes), bounds not NaN and
 * lo <= hi. */
static bool activation(const ox_pass_view *v, int64_t j, float *lo, float *hi) {
  const ox_node *n = &v->nodes[j];
  if (ox_opt_op_is(n, "Relu")) {
    *lo = 0.0f;
    return true;
  }
  if (!ox_opt_op_is(n, "Clip")) return false;
  if (v->opsets[j] < 11) {
    *lo = ox_node_attr_float(n, "min", -INFINITY);
    *hi = ox_node_attr_float(n, "max", INFINITY);
  } else {
    if (ox_opt_given(n, 1) && !ox_opt_scalar_f32(v->constant(v, n->input[1]), lo)) return false;
    if (ox_opt_given(n, 2) && !ox_opt_scalar_f32(v->constant(v, n->input[2]), hi)) return false;
  }
  return *lo == *lo && *hi == *hi && *lo <= *hi;
}

/* The unit around Conv node i, if it matches; fills the new node's inputs. */
static bool match(const ox_pass_view *v, size_t i, const char **in, size_t *n_in, int64_t *q_at,
                  int64_t *relu_at, float *clip_lo, float *clip_hi, int64_t *dqx, int64_t *dqw) {
  const ox_node *c = &v->nodes[i];
  if (!ox_opt_op_is(c, "Conv") || c->n_input < 2 || c->n_input > 3 || c->n_output != 1 ||
      !c->output[0] || !*c->output[0])
    return false;
  *dqx = ox_opt_producer(v, c->input[0], i);
  *dqw = ox_opt_producer(v, c->input[1], i);
  if (!ox_opt_dq_unit(v, *dqx, true) || !ox_opt_dq_unit(v, *dqw, false)) return false;
  const ox_node *dx = &v->nodes[*dqx], *dw = &v->nodes[*dqw];
  if (ox_opt_elems(v->constant(v, dx->input[1])) != 1) return false;
  /* W: a constant 8-bit tensor, scales per tensor or per output channel */
  const ox_tensor *w = v->constant(v, dw->input[0]);
  if (!w || !ox_opt_is_q8(w->data_type) || w->n_dims < 3 || w->dims[0] < 1) return false;
  if (ox_opt_given(dw, 2) && v->constant(v, dw->input[2])->data_type != w->data_type) return false;
  int64_t ns = ox_opt_elems(v->constant(v, dw->input[1]));
  int64_t axis = ox_node_attr_int(dw, "axis", 1);
  if (axis < 0) axis += (int64_t)w->n_dims;
  if (ns != 1 && (ns != w->dims[0] || axis != 0)) return false;
  /* then only a Relu or a Clip with constant bounds (optionally), then only
   * a QuantizeLinear */
  const char *out = c->output[0];
  int64_t j = v->sole_reader(v, out);
  *relu_at = -1;
  *clip_lo = -INFINITY;
  *clip_hi = INFINITY;
  if (j > (int64_t)i && v->nodes[j].n_output == 1 && v->nodes[j].output[0] &&
      *v->nodes[j].output[0] && activation(v, j, clip_lo, clip_hi)) {
    *relu_at = j;
    out = v->nodes[j].output[0];
    j = v->sole_reader(v, out);
  }
  if (j <= (int64_t)i) return false;
  if (!ox_opt_q_unit(v, j, out)) return false;
  const ox_node *q = &v->nodes[j];
  *q_at = j;
  in[0] = dx->input[0];
  in[1] = dx->input[1];
  in[2] = dx->input[2];
  in[3] = dw->input[0];
  in[4] = dw->input[1];
  in[5] = ox_opt_given(dw, 2) ? dw->input[2] : "";
  in[6] = q->input[1];
  in[7] = ox_opt_given(q, 2) ? q->input[2] : "";
  in[8] = ox_opt_given(c, 2) ? c->input[2] : "";
  *n_in = *in[8] ? 9 : 8;
  return true;
}

int ox_opt_qdq_conv(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    const char *in[9];
    size_t n_in;
    int64_t q_at, relu_at, dqx, dqw;
    float lo, hi;
    if (!match(v, i, in, &n_in, &q_at, &relu_at, &lo, &hi, &dqx, &dqw)) continue;
    const ox_node *c = &v->nodes[i];
    bool relu = relu_at >= 0 && lo == 0.0f && hi == INFINITY;
    ox_node *fn = ox_opt_new_node(v, c, "QLinearConvFused", n_in, relu || relu_at < 0 ? 1 : 2);
    if (!fn) return v->e->code;
    for (size_t k = 0; k < n_in; k++) fn->input[k] = (char *)in[k];
    fn->output[0] = v->nodes[q_at].output[0];
    ox_opt_add_int_attr(fn, "relu", relu);
    if (relu_at >= 0 && !relu) {
      ox_opt_add_float_attr(fn, "clip_lo", lo);
      ox_opt_add_float_attr(fn, "clip_hi", hi);
    }
    /* the dequantized X and W go with the Conv when it was their only reader */
    bool drop_x = v->sole_reader(v, v->nodes[dqx].output[0]) == (int64_t)i;
    bool drop_w = v->sole_reader(v, v->nodes[dqw].output[0]) == (int64_t)i;
    v->repl[i] = fn;
    v->drop[q_at] = true;
    if (relu_at >= 0) v->drop[relu_at] = true;
    if (drop_x) v->drop[dqx] = true;
    if (drop_w) v->drop[dqw] = true;
  }
  /* a DequantizeLinear read by several fused units is unread only now */
  ox_opt_drop_unread(v, "DequantizeLinear");
  return OX_OK;
}
