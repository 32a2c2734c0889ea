/* infer_ops_contrib_quant.c - shape functions of onnxruntime's com.microsoft
 * the QOperator forms (QLinear*, QGemm), DynamicQuantizeMatMul and MatMulIntegerToFloat
 * (schemas in src/schema/schema_contrib_quant.c). They reject what the
 * kernels (src/ops/contrib/quant.c, quant_eltwise.c) reject when the
 * shapes tell: a K that differs, scales and zero points of the wrong
 * length, a broken QLinearConcat triple, QGemm's y_zero_point without
 * y_scale. The pooling and convolution forms use the shape functions of
 * the standard operators, NHWC data (channels_last) turned to NCHW and
 * back around them. */
#include <string.h>

#include "../schema/schema_hand.h"
#include "infer_impl.h"

/* The element count of input i when its shape is fully known, else -1. */
static int64_t known_numel(ox_ictx *c, size_t i, size_t *rank) {
  const ox_dim *d;
  size_t r;
  if (!ix_has_input(c, i) || !ix_shape(c, i, &d, &r)) return -1;
  int64_t n = 1;
  for (size_t k = 0; k < r; k++) {
    if (!d[k].has_value) return -1;
    n *= d[k].value;
  }
  if (rank) *rank = r;
  return n;
}

/* input i, when given with a known shape, is one value, or (per_col > 0)
 * a 1-D tensor of per_col values, or (per_col < 0: N unknown) any 1-D
 * tensor; else ix_fail naming it */
static bool check_count(ox_ictx *c, size_t i, int64_t per_col, const char *what) {
  size_t r = 0;
  int64_t n = known_numel(c, i, &r);
  if (n < 0) return true;
  bool one = n == 1 && r <= 1, cols = per_col != 0 && r == 1 && (per_col < 0 || n == per_col);
  if (one || cols) return true;
  if (per_col > 0)
    ix_fail(c, "%s must be one value or 1-D of N = %lld values", what, (long long)per_col);
  else
    ix_fail(c, "%s must be one value (a per-tensor scale or zero point)", what);
  return false;
}

/* the last dimension of input i when known, else -1 */
static int64_t dim_at(ox_ictx *c, size_t i, size_t k, size_t want_rank) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, i, &d, &r) || r != want_rank || k >= r || !d[k].has_value) return -1;
  return d[k].value;
}

/* ---- DynamicQuantizeMatMul, MatMulIntegerToFloat: A [..., K] x B [K, N], float ---- */
static int matmul_to_float(ox_ictx *c) {
  bool dyn = strcmp(c->node->op_type, "DynamicQuantizeMatMul") == 0;
  size_t bs = dyn ? 2 : 3, zb = dyn ? 3 : 5, bias = dyn ? 4 : 6;
  const ox_dim *a, *b;
  size_t ra, rb;
  bool hb = ix_shape(c, 1, &b, &rb);
  if (hb && (dyn ? rb != 2 : rb < 2))
    return ix_fail(c, "B must be %s, not of rank %zu", dyn ? "2-D" : "of rank 2 or more", rb);
  int64_t K = hb ? dim_at(c, 1, rb - 2, rb) : -1, N = hb ? dim_at(c, 1, rb - 1, rb) : -1;
  if (hb && rb > 2 && ix_shape(c, 0, &a, &ra) && ra != rb)
    return ix_fail(c, "a B of rank %zu needs an A of the same batch dimensions", rb);
  if (ix_shape(c, 0, &a, &ra) && ra >= 1 && a[ra - 1].has_value && K >= 0 && a[ra - 1].value != K)
    return ix_fail(c, "A's last dimension (%lld) differs from B's K (%lld)",
                   (long long)a[ra - 1].value, (long long)K);
  if (!check_count(c, bs, N, "b_scale") || !check_count(c, zb, N, "b_zero_point") ||
      (!dyn && (!check_count(c, 2, 0, "a_scale") || !check_count(c, 4, 0, "a_zero_point"))))
    return OX_EMODEL;
  size_t rbias = 0;
  int64_t nb = known_numel(c, bias, &rbias);
  if (nb >= 0 && N >= 0 && (rbias != 1 || nb != N))
    return ix_fail(c, "bias must have N = %lld values", (long long)N);
  if (ix_elem(c, zb) != OX_UNDEFINED && ix_elem(c, 1) != OX_UNDEFINED &&
      ix_elem(c, zb) != ix_elem(c, 1))
    return ix_fail(c, "b_zero_point must have B's type");
  int32_t el = !dyn && ix_elem(c, 2) == OX_FLOAT16 ? OX_FLOAT16 : OX_FLOAT;
  return ix_matmul_shape(c, 0, 1, el);
}

/* ---- QGemm: [M, N]; float, or y_zero_point's type ---- */
static int qgemm(ox_ictx *c) {
  if (ix_has_input(c, 8) && !ix_has_input(c, 7))
    return ix_fail(c, "y_zero_point is given without y_scale");
  int32_t el = ix_has_input(c, 8) ? ix_elem(c, 8) : OX_FLOAT;
  const ox_dim *a, *b;
  size_t ra, rb;
  bool ta = ix_attr_int(c, "transA", 0) != 0, tb = ix_attr_int(c, "transB", 0) != 0;
  bool ha = ix_shape(c, 0, &a, &ra), hb = ix_shape(c, 3, &b, &rb);
  if ((ha && ra != 2) || (hb && rb != 2)) return ix_fail(c, "A and B must be 2-D");
  if (!ha || !hb) return ix_set_tensor(c, 0, el, NULL, 2), OX_OK;
  const ox_dim *ka = &a[ta ? 0 : 1], *kb = &b[tb ? 1 : 0];
  if (ka->has_value && kb->has_value && ka->value != kb->value)
    return ix_fail(c, "A's K (%lld) differs from B's K (%lld)", (long long)ka->value,
                   (long long)kb->value);
  int64_t N = b[tb ? 0 : 1].has_value ? b[tb ? 0 : 1].value : -1;
  if (!check_count(c, 1, 0, "a_scale") || !check_count(c, 2, 0, "a_zero_point") ||
      !check_count(c, 4, N, "b_scale") || !check_count(c, 5, N, "b_zero_point") ||
      !check_count(c, 7, 0, "y_scale") || !check_count(c, 8, 0, "y_zero_point"))
    return OX_EMODEL;
  ox_dim o[2] = {ta ? a[1] : a[0], tb ? b[0] : b[1]};
  ix_set_tensor(c, 0, el, o, 2);
  return OX_OK;
}

/* ---- numpy broadcasting of some inputs (the others hidden) ---- */
static int broadcast_of(ox_ictx *c, const size_t *which, size_t n, int32_t el) {
  bool present[16] = {false};
  size_t last = 0;
  for (size_t k = 0; k < n; k++) {
    present[which[k]] = which[k] < c->n_in && c->in_present[which[k]];
    last = which[k] > last ? which[k] : last;
  }
  ox_ictx sub = *c;
  sub.in_present = present;
  sub.n_in = last + 1 < c->n_in ? last + 1 : c->n_in;
  ox_dim *o;
  size_t r;
  bool ok = ix_broadcast(&sub, 0, sub.n_in, &o, &r);
  c->failed = c->failed || sub.failed;
  if (sub.failed) return OX_EMODEL;
  return ix_set_tensor(c, 0, el, ok ? o : NULL, ok ? (int64_t)r : -1), OX_OK;
}

/* every scale and zero point among inputs [from, to) is one value */
static bool per_tensor(ox_ictx *c, size_t from, size_t to) {
  for (size_t i = from; i < to && i < c->n_in; i++)
    if (i < c->node->n_input && !check_count(c, i, 0, c->node->input[i])) return false;
  return true;
}

static int qbinary(ox_ictx *c) {
  if (!per_tensor(c, 1, 3) || !per_tensor(c, 4, 8)) return OX_EMODEL;
  const size_t which[2] = {0, 3};
  return broadcast_of(c, which, 2, ix_elem(c, 0));
}

static int qunary(ox_ictx *c) {
  if (!per_tensor(c, 1, 5)) return OX_EMODEL;
  return ix_same_as_input0(c);
}

static int qsoftmax(ox_ictx *c) {
  if (!ix_attr(c, "opset")) return ix_fail(c, "attribute opset is required");
  const ox_dim *x;
  size_t r;
  size_t axis;
  int64_t ax = ix_attr_int(c, "axis", -1);
  if (ix_shape(c, 0, &x, &r) && !ix_axis(ax, r, &axis))
    return ix_fail(c, "axis %lld is out of range for rank %zu", (long long)ax, r);
  return qunary(c);
}

static int qwhere(ox_ictx *c) {
  if (!per_tensor(c, 2, 4) || !per_tensor(c, 5, 9)) return OX_EMODEL;
  const size_t which[3] = {0, 1, 4};
  return broadcast_of(c, which, 3, ix_elem(c, 1));
}

/* ---- QLinearConcat: Y_scale, Y_zero_point, then triples ---- */
static int qconcat(ox_ictx *c) {
  if (c->n_in < 5 || (c->n_in - 2) % 3 != 0)
    return ix_fail(c,
                   "inputs must be Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) "
                   "triples; %zu inputs do not make whole triples",
                   c->n_in);
  if (!ix_attr(c, "axis")) return ix_fail(c, "attribute axis is required");
  int32_t el = ix_elem(c, 1);
  const ox_dim *x0;
  size_t r0;
  for (size_t i = 2; i < c->n_in; i += 3)
    if (!per_tensor(c, i + 1, i + 3)) return OX_EMODEL;
  if (!ix_shape(c, 2, &x0, &r0)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t axis;
  if (!ix_axis(ix_attr_int(c, "axis", 0), r0, &axis))
    return ix_fail(c, "axis %lld is out of range for rank %zu",
                   (long long)ix_attr_int(c, "axis", 0), r0);
  ox_dim *o = ix_dims_new(c, r0);
  if (!o) return OX_ENOMEM;
  memcpy(o, x0, r0 * sizeof *o);
  o[axis] = ox_dim_known(0);
  for (size_t i = 2; i < c->n_in; i += 3) {
    const ox_dim *x;
    size_t r;
    if (!ix_shape(c, i, &x, &r)) return ix_set_tensor(c, 0, el, NULL, (int64_t)r0), OX_OK;
    if (r != r0) return ix_fail(c, "input %zu has rank %zu, not %zu", i, r, r0);
    for (size_t d = 0; d < r; d++)
      if (d != axis && x[d].has_value && o[d].has_value && x[d].value != o[d].value)
        return ix_fail(c, "input %zu differs in dimension %zu", i, d);
    o[axis] = ox_dim_add(c->a, o[axis], x[axis]);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r0);
  return OX_OK;
}

/* ---- pooling and convolution: the standard shape functions over NCHW ---- */

/* a copy of input i's tensor type with its dims permuted: to_nchw moves
 * the last dimension to position 1, else position 1 to the end */
static ox_type *permuted(ox_ictx *c, const ox_type *t, bool to_nchw) {
  if (!t || !t->shape || t->shape->n_dim < 3) return NULL;
  size_t r = t->shape->n_dim;
  ox_type *n = ox_arena_calloc(c->a, 1, sizeof *n);
  ox_shape *sh = ox_arena_calloc(c->a, 1, sizeof *sh);
  ox_dim *d = ix_dims_new(c, r);
  if (!n || !sh || !d) return NULL;
  *n = *t;
  const ox_dim *s = t->shape->dim;
  d[0] = s[0];
  if (to_nchw) {
    d[1] = s[r - 1];
    for (size_t k = 2; k < r; k++) d[k] = s[k - 1];
  } else {
    for (size_t k = 1; k + 1 < r; k++) d[k] = s[k + 1];
    d[r - 1] = s[1];
  }
  sh->dim = d;
  sh->n_dim = r;
  n->shape = sh;
  return n;
}

/* the standard operator `op`'s shape function on this node's inputs, X
 * (input 0) and Y seen in NCHW when channels_last */
static int as_standard(ox_ictx *c, const char *op, int64_t since) {
  const ox_infer_def *d = ox_infer_find("", op, since);
  if (!d) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  if (ix_attr_int(c, "channels_last", 0) == 0) return d->fn(c);
  const ox_type *in[16];
  size_t n = c->n_in < 16 ? c->n_in : 16;
  for (size_t i = 0; i < n; i++) in[i] = c->in[i];
  in[0] = permuted(c, c->in[0], true);
  ox_ictx sub = *c;
  sub.in = in;
  sub.n_in = n;
  int rc = d->fn(&sub);
  c->failed = c->failed || sub.failed;
  if (rc) return rc;
  ox_type *y = c->out[0];
  ox_type *p = y ? permuted(c, y, false) : NULL;
  if (p) c->out[0] = p;
  return OX_OK;
}

static int qpool(ox_ictx *c) {
  if (!per_tensor(c, 1, 5)) return OX_EMODEL;
  bool global = strcmp(c->node->op_type, "QLinearGlobalAveragePool") == 0;
  if (!global && !ix_attr(c, "kernel_shape"))
    return ix_fail(c, "attribute kernel_shape is required");
  return as_standard(c, global ? "GlobalAveragePool" : "AveragePool", 19);
}

static int qconv(ox_ictx *c) {
  if (!per_tensor(c, 1, 3) || !per_tensor(c, 6, 8)) return OX_EMODEL;
  return as_standard(c, "QLinearConv", 10);
}

/* ---- QAttention: [B, S, hidden], present [2, B, N, P + S, H] ---- */
static int qattention(ox_ictx *c) {
  int64_t heads = ix_attr_int(c, "num_heads", 0);
  if (heads <= 0) return ix_fail(c, "num_heads must be positive");
  if (ix_attr_int(c, "do_rotary", 0)) return ix_fail(c, "do_rotary is not supported");
  if (ix_attr_int(c, "past_present_share_buffer", 0))
    return ix_fail(c, "past_present_share_buffer is not supported");
  const ox_dim *x, *w, *p;
  size_t rx, rw, rp;
  bool hx = ix_shape(c, 0, &x, &rx), hw = ix_shape(c, 1, &w, &rw);
  if ((hx && rx != 3) || (hw && rw != 2))
    return ix_fail(c, "input must be 3-D [B, S, D] and weight 2-D [D, 3 hidden]");
  int64_t n3 = hw && w[1].has_value ? w[1].value : -1;
  if (hx && hw && x[2].has_value && w[0].has_value && x[2].value != w[0].value)
    return ix_fail(c, "weight's first dimension (%lld) differs from input's D (%lld)",
                   (long long)w[0].value, (long long)x[2].value);
  if (n3 >= 0 && (n3 % 3 || n3 == 0 || (n3 / 3) % heads))
    return ix_fail(c,
                   "weight's second dimension (%lld) must be 3 hidden, hidden a multiple of "
                   "num_heads (%lld)",
                   (long long)n3, (long long)heads);
  if (!check_count(c, 3, 0, "input_scale") || !check_count(c, 4, n3, "weight_scale") ||
      !check_count(c, 6, 0, "input_zero_point") || !check_count(c, 7, n3, "weight_zero_point"))
    return OX_EMODEL;
  if (!hx) return ix_set_tensor(c, 0, OX_FLOAT, NULL, 3), OX_OK;
  ox_dim o[3] = {x[0], x[1], n3 >= 0 ? ox_dim_known(n3 / 3) : ox_dim_unknown()};
  ix_set_tensor(c, 0, OX_FLOAT, o, 3);
  if (c->n_out < 2) return OX_OK;
  ox_dim pd[5] = {ox_dim_known(2), x[0], ox_dim_known(heads), ox_dim_unknown(),
                  n3 >= 0 ? ox_dim_known(n3 / 3 / heads) : ox_dim_unknown()};
  if (ix_has_input(c, 8) && ix_shape(c, 8, &p, &rp) && rp == 5)
    pd[3] = ox_dim_add(c->a, p[3], x[1]);
  else if (!ix_has_input(c, 8))
    pd[3] = x[1];
  ix_set_tensor(c, 1, OX_FLOAT, pd, 5);
  return OX_OK;
}

const ox_infer_def ox_infer_defs_contrib_quant[] = {
    {OX_CONTRIB_DOMAIN, "DynamicQuantizeMatMul", 1, 1, matmul_to_float},
    {OX_CONTRIB_DOMAIN, "MatMulIntegerToFloat", 1, 1, matmul_to_float},
    {OX_CONTRIB_DOMAIN, "QGemm", 1, 1, qgemm},
    {OX_CONTRIB_DOMAIN, "QLinearAdd", 1, 1, qbinary},
    {OX_CONTRIB_DOMAIN, "QLinearMul", 1, 1, qbinary},
    {OX_CONTRIB_DOMAIN, "QLinearSigmoid", 1, 1, qunary},
    {OX_CONTRIB_DOMAIN, "QLinearLeakyRelu", 1, 1, qunary},
    {OX_CONTRIB_DOMAIN, "QLinearSoftmax", 1, 1, qsoftmax},
    {OX_CONTRIB_DOMAIN, "QLinearWhere", 1, 1, qwhere},
    {OX_CONTRIB_DOMAIN, "QLinearConcat", 1, 1, qconcat},
    {OX_CONTRIB_DOMAIN, "QLinearAveragePool", 1, 1, qpool},
    {OX_CONTRIB_DOMAIN, "QLinearGlobalAveragePool", 1, 1, qpool},
    {OX_CONTRIB_DOMAIN, "QLinearConv", 1, 1, qconv},
    {OX_CONTRIB_DOMAIN, "QAttention", 1, 1, qattention},
    {NULL, NULL, 0, 0, NULL},
};
