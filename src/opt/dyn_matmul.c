/* dyn_matmul.c - dynamically quantized matrix products to one node.
 *
 * onnxruntime's quantize_dynamic writes each float MatMul as
 *
 *   DynamicQuantizeLinear(x) -> (xq, xs, xz)
 *   MatMulInteger(xq, Wq, xz, wz) -> Cast(to float) -> Mul(xs * ws) [-> Add(bias)]
 *
 * where xs * ws is a Mul of DynamicQuantizeLinear's scale and a constant.
 * With Wq a constant 8-bit matrix (its zero point constant, one value or one
 * per column), the scale one value or one per column and the bias a
 * constant of as many, MatMulInteger..Add becomes one ai.onnxc
 * QMatMulScaledFused (xq, Wq, xz, wz, scale [, bias]), in the place of
 * the last node it replaces, whose GEMM applies
 * scale and bias in registers: the same float operations in the same order,
 * so the result is bit for bit the same. A Relu or GELU's erf form after it
 * (ox_opt_match_gelu) joins as attribute act (1, 2 with gelu_c0..2 and
 * gelu_mul), run on each block of the product as it is finished. */
#include <string.h>

#include "pass.h"

/* a float constant of rank <= 1 with 1 or n elements */
static bool column_const(const ox_pass_view *v, const char *name, int64_t n) {
  const ox_tensor *t = v->constant(v, name);
  int64_t e = ox_opt_elems(t);
  return t && t->data_type == OX_FLOAT && t->n_dims <= 1 && (e == 1 || e == n);
}

/* `name` is xs * ws: a Mul of DynamicQuantizeLinear's scale output (a
 * scalar) and such a constant, or such a constant itself */
static bool scale_value(const ox_pass_view *v, const char *name, size_t before, int64_t n) {
  if (column_const(v, name, n)) return true;
  int64_t m = ox_opt_producer(v, name, before);
  if (m < 0) return false;
  const ox_node *mul = &v->nodes[m];
  if (!ox_opt_op_is(mul, "Mul") || v->opsets[m] < 7 || mul->n_input != 2) return false;
  for (int side = 0; side < 2; side++) {
    const char *s = mul->input[side], *c = mul->input[1 - side];
    if (!column_const(v, c, n)) continue;
    for (size_t i = 0; i < (size_t)m; i++) {
      const ox_node *d = &v->nodes[i];
      if (!v->drop[i] && ox_opt_op_is(d, "DynamicQuantizeLinear") && d->n_output >= 2 &&
          d->output[1] && strcmp(d->output[1], s) == 0)
        return true;
    }
  }
  return false;
}

static int fuse_one(ox_pass_view *v, size_t i) {
  const ox_node *mm = &v->nodes[i];
  if (!ox_opt_op_is(mm, "MatMulInteger") || v->opsets[i] < 10 || mm->n_input < 2 ||
      mm->n_output != 1 || !mm->output[0] || !*mm->output[0])
    return OX_OK;
  const ox_tensor *B = v->constant(v, mm->input[1]);
  if (!B || !ox_opt_is_q8(B->data_type) || B->n_dims != 2) return OX_OK;
  int64_t N = B->dims[1];
  if (ox_opt_given(mm, 3)) {
    const ox_tensor *zb = v->constant(v, mm->input[3]);
    int64_t e = ox_opt_elems(zb);
    if (!zb || zb->data_type != B->data_type || zb->n_dims > 1 || (e != 1 && e != N)) return OX_OK;
  }
  /* Cast to float, then Mul by the scale, then optionally Add a bias */
  int64_t c = v->sole_reader(v, mm->output[0]);
  if (c <= (int64_t)i) return OX_OK;
  const ox_node *cast = &v->nodes[c];
  if (!ox_opt_op_is(cast, "Cast") || ox_node_attr_int(cast, "to", 0) != OX_FLOAT ||
      cast->n_output != 1 || !cast->output[0] || !*cast->output[0])
    return OX_OK;
  int64_t m = v->sole_reader(v, cast->output[0]);
  if (m <= c) return OX_OK;
  const ox_node *mul = &v->nodes[m];
  if (!ox_opt_op_is(mul, "Mul") || v->opsets[m] < 7 || mul->n_input != 2 || mul->n_output != 1 ||
      !mul->output[0] || !*mul->output[0])
    return OX_OK;
  const char *sc = strcmp(mul->input[0], cast->output[0]) == 0 ? mul->input[1] : mul->input[0];
  if (strcmp(sc, cast->output[0]) == 0 || !scale_value(v, sc, (size_t)m, N)) return OX_OK;
  const char *out = mul->output[0], *bias = "";
  int64_t a = v->sole_reader(v, out);
  if (a > m && ox_opt_op_is(&v->nodes[a], "Add") && v->opsets[a] >= 7 && v->nodes[a].n_input == 2 &&
      v->nodes[a].n_output == 1 && v->nodes[a].output[0] && *v->nodes[a].output[0]) {
    const ox_node *add = &v->nodes[a];
    const char *other = strcmp(add->input[0], out) == 0 ? add->input[1] : add->input[0];
    /* only the form bias + x or x + bias with x the product: Add's result
     * has the product's shape when the bias is one value or one per column */
    if (strcmp(other, out) != 0 && column_const(v, other, N)) {
      bias = other;
      out = add->output[0];
    } else {
      a = -1;
    }
  } else {
    a = -1;
  }
  /* a Relu or GELU's erf form after it runs on the product's blocks too */
  int64_t at = a >= 0 ? a : m, relu = ox_opt_next_op(v, out, at, "Relu", 6), act_last = -1;
  ox_opt_gelu g = {{0}, false, {0}};
  int act = 0;
  if (relu >= 0) {
    act = 1;
    act_last = relu;
  } else if (ox_opt_match_gelu(v, out, at, &g)) {
    act = 2;
    act_last = g.nodes[4];
  }
  ox_node *fn = ox_opt_new_node(v, mm, "QMatMulScaledFused", *bias ? 6 : 5, act ? 5 : 0);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  if (act) {
    ox_opt_add_int_attr(fn, "act", act);
    if (act == 2) {
      ox_opt_add_float_attr(fn, "gelu_c0", g.c[0]);
      ox_opt_add_float_attr(fn, "gelu_c1", g.c[1]);
      ox_opt_add_float_attr(fn, "gelu_c2", g.c[2]);
      ox_opt_add_int_attr(fn, "gelu_mul", g.mul_first);
      for (int k = 0; k < 4; k++) v->drop[g.nodes[k]] = true;
    }
    out = v->nodes[act_last].output[0];
  }
  const char *in[6] = {mm->input[0],
                       mm->input[1],
                       ox_opt_given(mm, 2) ? mm->input[2] : "",
                       ox_opt_given(mm, 3) ? mm->input[3] : "",
                       sc,
                       bias};
  for (size_t k = 0; k < fn->n_input; k++) fn->input[k] = (char *)in[k];
  fn->output[0] = (char *)out;
  /* in the place of the last node replaced: the scale may be computed
   * between MatMulInteger and its Mul */
  int64_t last = act ? act_last : a >= 0 ? a : m;
  v->repl[last] = fn;
  v->drop[i] = true;
  v->drop[c] = true;
  if (last != m) v->drop[m] = true;
  if (a >= 0 && last != a) v->drop[a] = true;
  return OX_OK;
}

int ox_opt_dyn_matmul(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_one(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
