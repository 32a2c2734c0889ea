/* qdq_eltwise.c - QDQ elementwise units to integer nodes.
 *
 * Between the quantized convolutions of a QDQ model, the activations and
 * residual additions are float arithmetic on dequantized bytes:
 *
 *   xq -> DequantizeLinear -> Relu (Sigmoid, Clip ...) -> QuantizeLinear -> yq
 *   aq -> DequantizeLinear -+
 *   bq -> DequantizeLinear -+-> Add [-> Relu] -> QuantizeLinear -> yq
 *
 * A unary unit maps each of the 256 input bytes to one output byte: it
 * becomes ai.onnxc QLookupFused (xq, xs, xz, ys, yz [, min, max]) with the
 * float op's name and attributes, which builds that table once. An addition
 * becomes ai.onnxc QAddFused (aq, as, az, bq, bs, bz, ys, yz), relu = 1 when
 * a Relu followed: y = round(a' as/ys + b' bs/ys) + yz in float. Scales and
 * zero points must be constant scalars; the DequantizeLinear nodes that lose
 * their last reader are dropped.
 *
 * Between a DequantizeLinear and a QuantizeLinear of the same scale and
 * zero point, an op that only moves values (Reshape, Transpose, Flatten,
 * Squeeze, Unsqueeze, Identity) or takes maxima (MaxPool, for a positive
 * scale: dequantizing is increasing) gives the same bytes when run on the
 * quantized input itself — (q - z) s / s rounds back to q - z — so it is
 * rewired to the bytes and both conversions go. */
#include <string.h>

#include "pass.h"

static const char *const lookup_ops[] = {"Relu", "LeakyRelu",   "Clip",     "Sigmoid",
                                         "Tanh", "HardSigmoid", "HardSwish"};

static bool lookup_op(const ox_node *n) {
  for (size_t k = 0; k < sizeof lookup_ops / sizeof *lookup_ops; k++)
    if (ox_opt_op_is(n, lookup_ops[k])) return true;
  return false;
}

/* a DequantizeLinear of a scalar scale and zero point feeding node i */
static int64_t scalar_dq(const ox_pass_view *v, const char *name, size_t i) {
  int64_t d = ox_opt_producer(v, name, i);
  if (!ox_opt_dq_unit(v, d, true) || ox_opt_elems(v->constant(v, v->nodes[d].input[1])) != 1)
    return -1;
  return d;
}

static void drop_if_only(ox_pass_view *v, int64_t dq, size_t reader) {
  if (v->sole_reader(v, v->nodes[dq].output[0]) == (int64_t)reader) v->drop[dq] = true;
}

static int fuse_lookup(ox_pass_view *v, size_t i) {
  const ox_node *u = &v->nodes[i];
  if (!lookup_op(u) || u->n_input < 1 || u->n_output != 1 || !u->output[0] || !*u->output[0])
    return OX_OK;
  /* Clip's bounds (opset 11 and later) must be constants, scalars */
  bool clip_inputs = ox_opt_op_is(u, "Clip") && v->opsets[i] >= 11;
  for (size_t k = 1; k < u->n_input; k++) {
    if (!ox_opt_given(u, k)) continue;
    const ox_tensor *b = clip_inputs ? v->constant(v, u->input[k]) : NULL;
    if (!b || b->data_type != OX_FLOAT || ox_opt_elems(b) != 1) return OX_OK;
  }
  int64_t d = scalar_dq(v, u->input[0], i);
  int64_t q = v->sole_reader(v, u->output[0]);
  if (d < 0 || q <= (int64_t)i || !ox_opt_q_unit(v, q, u->output[0])) return OX_OK;
  const ox_node *dn = &v->nodes[d], *qn = &v->nodes[q];
  ox_node *fn = ox_opt_new_node(v, u, "QLookupFused", 7, 1);
  if (!fn) return v->e->code;
  const char *in[7] = {dn->input[0],
                       dn->input[1],
                       dn->input[2],
                       qn->input[1],
                       ox_opt_given(qn, 2) ? qn->input[2] : "",
                       clip_inputs && ox_opt_given(u, 1) ? u->input[1] : "",
                       clip_inputs && ox_opt_given(u, 2) ? u->input[2] : ""};
  for (size_t k = 0; k < 7; k++) fn->input[k] = (char *)in[k];
  fn->n_input = *in[6] ? 7 : *in[5] ? 6 : 5;
  fn->output[0] = qn->output[0];
  /* the float op, for the table (its attributes came with the node) */
  ox_attr *a = &fn->attribute[fn->n_attribute++];
  a->name = (char *)"op";
  a->type = OX_ATTR_STRING;
  a->has_type = true;
  a->s.data = (uint8_t *)u->op_type;
  a->s.size = strlen(u->op_type);
  v->repl[i] = fn;
  v->drop[q] = true;
  drop_if_only(v, d, i);
  return OX_OK;
}

static int fuse_add(ox_pass_view *v, size_t i) {
  const ox_node *n = &v->nodes[i];
  if (!ox_opt_op_is(n, "Add") || v->opsets[i] < 7 || n->n_input != 2 || n->n_output != 1 ||
      !n->output[0] || !*n->output[0])
    return OX_OK;
  int64_t da = scalar_dq(v, n->input[0], i), db = scalar_dq(v, n->input[1], i);
  if (da < 0 || db < 0 || da == db) return OX_OK;
  const char *out = n->output[0];
  int64_t j = v->sole_reader(v, out), relu = -1;
  if (j > (int64_t)i && ox_opt_op_is(&v->nodes[j], "Relu") && v->nodes[j].n_output == 1 &&
      v->nodes[j].output[0] && *v->nodes[j].output[0]) {
    relu = j;
    out = v->nodes[j].output[0];
    j = v->sole_reader(v, out);
  }
  if (j <= (int64_t)i || !ox_opt_q_unit(v, j, out)) return OX_OK;
  const ox_node *a = &v->nodes[da], *b = &v->nodes[db], *q = &v->nodes[j];
  ox_node *fn = ox_opt_new_node(v, n, "QAddFused", 8, 1);
  if (!fn) return v->e->code;
  const char *in[8] = {
      a->input[0], a->input[1], a->input[2], b->input[0],
      b->input[1], b->input[2], q->input[1], ox_opt_given(q, 2) ? q->input[2] : ""};
  for (size_t k = 0; k < 8; k++) fn->input[k] = (char *)in[k];
  fn->n_input = *in[7] ? 8 : 7;
  fn->output[0] = q->output[0];
  ox_opt_add_int_attr(fn, "relu", relu >= 0);
  v->repl[i] = fn;
  v->drop[j] = true;
  if (relu >= 0) v->drop[relu] = true;
  drop_if_only(v, da, i);
  drop_if_only(v, db, i);
  return OX_OK;
}

static const char *const passthrough_ops[] = {"MaxPool", "Reshape",   "Transpose", "Flatten",
                                              "Squeeze", "Unsqueeze", "Identity"};

static bool same_q_params(const ox_pass_view *v, const ox_node *d, const ox_node *q,
                          bool positive) {
  float sd, sq;
  int32_t zd = 0, zq = 0;
  if (!ox_opt_scalar_f32(v->constant(v, d->input[1]), &sd) ||
      !ox_opt_scalar_f32(v->constant(v, q->input[1]), &sq) || sd != sq || !(sd == sd) ||
      sd == 0.0f || (positive && !(sd > 0.0f)) || !ox_opt_given(d, 2) || !ox_opt_given(q, 2))
    return false;
  const ox_tensor *td = v->constant(v, d->input[2]), *tq = v->constant(v, q->input[2]);
  return td && tq && td->data_type == tq->data_type && ox_opt_scalar_q8(td, &zd) &&
         ox_opt_scalar_q8(tq, &zq) && zd == zq;
}

static int pass_through(ox_pass_view *v, size_t i) {
  ox_node *u = &v->nodes[i];
  bool known = false;
  for (size_t k = 0; k < sizeof passthrough_ops / sizeof *passthrough_ops && !known; k++)
    known = ox_opt_op_is(u, passthrough_ops[k]);
  if (!known || u->n_input < 1 || u->n_output != 1 || !u->output[0] || !*u->output[0]) return OX_OK;
  bool maxpool = ox_opt_op_is(u, "MaxPool");
  if (maxpool && v->opsets[i] < 12) return OX_OK; /* bytes from opset 12 on */
  int64_t d = scalar_dq(v, u->input[0], i);
  int64_t q = v->sole_reader(v, u->output[0]);
  if (d < 0 || q <= (int64_t)i || !ox_opt_q_unit(v, q, u->output[0]) ||
      !same_q_params(v, &v->nodes[d], &v->nodes[q], maxpool))
    return OX_OK;
  /* the node keeps its op and opset: rewired in place */
  char **in = ox_arena_calloc(v->a, u->n_input + 1, sizeof *in);
  char **out = ox_arena_calloc(v->a, 2, sizeof *out);
  if (!in || !out) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  memcpy(in, u->input, u->n_input * sizeof *in);
  in[0] = v->nodes[d].input[0];
  out[0] = v->nodes[q].output[0];
  u->input = in;
  u->output = out;
  v->drop[q] = true;
  drop_if_only(v, d, i);
  return OX_OK;
}

int ox_opt_qdq_eltwise(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_add(v, i);
    if (!rc && !v->repl[i]) rc = fuse_lookup(v, i);
    if (!rc && !v->repl[i]) rc = pass_through(v, i);
    if (rc) return rc;
  }
  ox_opt_drop_unread(v, "DequantizeLinear");
  return OX_OK;
}
