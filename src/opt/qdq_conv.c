/* qdq_conv.c - QDQ convolution units to one integer node.
 *
 * Quantization tools (onnxruntime's quantize_static among them) write an
 * 8-bit convolution as float arithmetic between quantize/dequantize pairs:
 *
 *   xq -> DequantizeLinear(xs, xz) -+
 *   wq -> DequantizeLinear(ws, wz) -+-> Conv [-> Relu] -> QuantizeLinear(ys, yz) -> yq
 *   (bias, float: often DequantizeLinear of int32) -+
 *
 * When the scales and zero points are constants of the shapes the integer
 * kernel takes (x and y per tensor; w per tensor or per output channel, axis
 * 0), W is a constant 8-bit tensor and the float values in between are read
 * by nobody else, the unit becomes one ai.onnxc QLinearConvFused node:
 * QLinearConv's inputs, with the Conv's float bias as B, the Conv's
 * attributes and relu = 1 when a Relu sat before the QuantizeLinear. The
 * result differs from the float path only where rounding a value to the
 * output's quantum falls the other way (the kernel folds the scales into
 * one factor). DequantizeLinear nodes left without readers are dropped. */
#include <string.h>

#include "pass.h"

static bool default_op(const ox_node *n, const char *op) {
  return n->op_type && strcmp(n->op_type, op) == 0 &&
         (!n->domain || ox_is_default_domain(n->domain));
}

static bool given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

static int64_t elems(const ox_tensor *t) {
  int64_t n;
  return ox_numel(t->dims, t->n_dims, &n) ? n : -1;
}

static bool is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

/* The live node before `before` whose output 0 is `name`, or -1. */
static int64_t producer(const ox_pass_view *v, const char *name, size_t before) {
  for (size_t i = before; i-- > 0;) {
    const ox_node *n = &v->nodes[i];
    if (v->drop[i] || v->repl[i]) continue;
    for (size_t k = 0; k < n->n_output; k++)
      if (n->output[k] && strcmp(n->output[k], name) == 0) return k == 0 ? (int64_t)i : -1;
  }
  return -1;
}

/* A DequantizeLinear with a float32 scale of `want` elements (0: any) and
 * an 8-bit zero point of as many (required when need_zp), both constants. */
static bool dq_unit(const ox_pass_view *v, int64_t at, bool need_zp) {
  if (at < 0) return false;
  const ox_node *d = &v->nodes[at];
  if (!default_op(d, "DequantizeLinear") || v->opsets[at] < 10 || d->n_output != 1 ||
      d->n_input < 2 || d->n_input > 3 || ox_node_attr_int(d, "block_size", 0) != 0)
    return false;
  const ox_tensor *s = v->constant(v, d->input[1]);
  if (!s || s->data_type != OX_FLOAT) return false;
  if (!given(d, 2)) return !need_zp;
  const ox_tensor *z = v->constant(v, d->input[2]);
  return z && is_q8(z->data_type) && elems(z) == elems(s);
}

/* The unit around Conv node i, if it matches; fills the new node's inputs. */
static bool match(const ox_pass_view *v, size_t i, const char **in, size_t *n_in, int64_t *q_at,
                  int64_t *relu_at, int64_t *dqx, int64_t *dqw) {
  const ox_node *c = &v->nodes[i];
  if (!default_op(c, "Conv") || c->n_input < 2 || c->n_input > 3 || c->n_output != 1 ||
      !c->output[0] || !*c->output[0])
    return false;
  *dqx = producer(v, c->input[0], i);
  *dqw = producer(v, c->input[1], i);
  if (!dq_unit(v, *dqx, true) || !dq_unit(v, *dqw, false)) return false;
  const ox_node *dx = &v->nodes[*dqx], *dw = &v->nodes[*dqw];
  if (elems(v->constant(v, dx->input[1])) != 1) return false;
  /* W: a constant 8-bit tensor, scales per tensor or per output channel */
  const ox_tensor *w = v->constant(v, dw->input[0]);
  if (!w || !is_q8(w->data_type) || w->n_dims < 3 || w->dims[0] < 1) return false;
  if (given(dw, 2) && v->constant(v, dw->input[2])->data_type != w->data_type) return false;
  int64_t ns = elems(v->constant(v, dw->input[1]));
  int64_t axis = ox_node_attr_int(dw, "axis", 1);
  if (axis < 0) axis += (int64_t)w->n_dims;
  if (ns != 1 && (ns != w->dims[0] || axis != 0)) return false;
  /* then only a Relu (optionally), then only a QuantizeLinear */
  const char *out = c->output[0];
  int64_t j = v->sole_reader(v, out);
  *relu_at = -1;
  if (j > (int64_t)i && default_op(&v->nodes[j], "Relu") && v->nodes[j].n_output == 1 &&
      v->nodes[j].output[0] && *v->nodes[j].output[0]) {
    *relu_at = j;
    out = v->nodes[j].output[0];
    j = v->sole_reader(v, out);
  }
  if (j <= (int64_t)i) return false;
  const ox_node *q = &v->nodes[j];
  if (!default_op(q, "QuantizeLinear") || v->opsets[j] < 10 || q->n_input < 2 || q->n_output != 1 ||
      !q->output[0] || !*q->output[0] || strcmp(q->input[0], out) != 0)
    return false;
  const ox_tensor *ys = v->constant(v, q->input[1]);
  if (!ys || ys->data_type != OX_FLOAT || elems(ys) != 1) return false;
  if (given(q, 2)) {
    const ox_tensor *yz = v->constant(v, q->input[2]);
    if (!yz || !is_q8(yz->data_type) || elems(yz) != 1) return false;
  } else if (v->opsets[j] >= 21 && ox_node_attr_int(q, "output_dtype", 0) != 0) {
    return false; /* the output type comes from the attribute */
  }
  *q_at = j;
  in[0] = dx->input[0];
  in[1] = dx->input[1];
  in[2] = dx->input[2];
  in[3] = dw->input[0];
  in[4] = dw->input[1];
  in[5] = given(dw, 2) ? dw->input[2] : "";
  in[6] = q->input[1];
  in[7] = given(q, 2) ? q->input[2] : "";
  in[8] = given(c, 2) ? c->input[2] : "";
  *n_in = *in[8] ? 9 : 8;
  return true;
}

int ox_opt_qdq_conv(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    const char *in[9];
    size_t n_in;
    int64_t q_at, relu_at, dqx, dqw;
    if (!match(v, i, in, &n_in, &q_at, &relu_at, &dqx, &dqw)) continue;
    const ox_node *c = &v->nodes[i];
    ox_node *fn = ox_arena_calloc(v->a, 1, sizeof *fn);
    char **ins = ox_arena_calloc(v->a, 9, sizeof *ins);
    char **outs = ox_arena_calloc(v->a, 1, sizeof *outs);
    ox_attr *at = ox_arena_calloc(v->a, c->n_attribute + 1, sizeof *at);
    if (!fn || !ins || !outs || !at)
      return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
    *fn = *c;
    fn->op_type = "QLinearConvFused";
    fn->domain = "ai.onnxc";
    for (size_t k = 0; k < n_in; k++) ins[k] = (char *)in[k];
    fn->input = ins;
    fn->n_input = n_in;
    outs[0] = v->nodes[q_at].output[0];
    fn->output = outs;
    fn->n_output = 1;
    if (c->n_attribute) memcpy(at, c->attribute, c->n_attribute * sizeof *at);
    ox_attr *r = &at[c->n_attribute];
    r->name = "relu", r->type = OX_ATTR_INT, r->has_type = true;
    r->i = relu_at >= 0, r->has_i = true;
    fn->attribute = at;
    fn->n_attribute = c->n_attribute + 1;
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
