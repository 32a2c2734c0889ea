/* infer_ops_contrib_nn.c - shape functions of onnxruntime's com.microsoft
 * encoder building blocks and of its default-domain additions (schemas in
 * src/schema/schema_contrib_nn.c). Each rejects, naming the node, the
 * shapes and attributes the kernel (src/ops/contrib/nn.c) would refuse,
 * where they are known. */
#include <string.h>

#include "../schema/schema_hand.h"
#include "infer_impl.h"

/* dim d of input i when its shape is known and d exists, else NULL */
static const ox_dim *dim_of(ox_ictx *c, size_t i, size_t *rank) {
  const ox_dim *d;
  size_t r;
  *rank = 0;
  if (!ix_shape(c, i, &d, &r)) return NULL;
  *rank = r;
  return d;
}

/* input i, when present with a known shape, is 1-D of n values (n < 0:
 * unknown, only the rank is checked) */
static int check_vec(ox_ictx *c, size_t i, const char *what, const ox_dim *n) {
  size_t r;
  const ox_dim *d = ix_has_input(c, i) ? dim_of(c, i, &r) : NULL;
  if (!d) return OX_OK;
  if (r != 1) return ix_fail(c, "%s must be 1-D, not of rank %zu", what, r);
  if (n && n->has_value && d[0].has_value && d[0].value != n->value)
    return ix_fail(c, "%s has %lld values, the hidden size is %lld", what, (long long)d[0].value,
                   (long long)n->value);
  return OX_OK;
}

/* output o: input 0's dims with those from `axis` on set to 1, type el */
static void stats_shape(ox_ictx *c, size_t o, size_t axis, int32_t el) {
  if (o >= c->n_out) return;
  size_t r;
  const ox_dim *x = dim_of(c, 0, &r);
  if (!x) {
    ix_set_tensor(c, o, el, NULL, -1);
    return;
  }
  ox_dim *d = ix_dims_new(c, r);
  if (!d) return;
  for (size_t k = 0; k < r; k++) d[k] = k < axis ? x[k] : ox_dim_known(1);
  ix_set_tensor(c, o, el, d, (int64_t)r);
}

/* ---- FastGelu (X, bias?) and BiasGelu (A, B): X's shape ---- */
static int bias_gelu(ox_ictx *c) {
  size_t r;
  const ox_dim *x = dim_of(c, 0, &r);
  if (check_vec(c, 1, "bias", x && r ? &x[r - 1] : NULL)) return OX_EMODEL;
  return ix_same_as_input0(c);
}

/* ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization ---- */
static int skip_ln(ox_ictx *c, bool rms) {
  size_t rx = 0, rs = 0;
  const ox_dim *x = dim_of(c, 0, &rx), *s = dim_of(c, 1, &rs);
  if (x && rx != 2 && rx != 3) return ix_fail(c, "input must be 2-D or 3-D, not of rank %zu", rx);
  const ox_dim *h = x ? &x[rx - 1] : NULL;
  if (x && s) {
    bool same = rs == rx, bc = rx == 3 && (rs == 2 || (rs == 3 && ox_dim_is(&s[0], 1)));
    for (size_t k = 0; k < rs && k < rx && same; k++)
      same = !(s[k].has_value && x[k].has_value && s[k].value != x[k].value);
    for (size_t k = 1; k <= 2 && bc; k++)
      bc = !(s[rs - k].has_value && x[rx - k].has_value && s[rs - k].value != x[rx - k].value);
    if (!same && !bc)
      return ix_fail(c,
                     "skip must have the input's shape, or [1, S, H] or [S, H] for a 3-D "
                     "input [B, S, H]");
  }
  if (check_vec(c, 2, "gamma", h) || (!rms && check_vec(c, 3, "beta", h)) ||
      check_vec(c, rms ? 3 : 4, "bias", h))
    return OX_EMODEL;
  ix_same_shape_as(c, 0, 0, ix_elem(c, 0));
  if (c->n_out > 3) ix_same_shape_as(c, 3, 0, ix_elem(c, 0));
  stats_shape(c, 1, rx ? rx - 1 : 0, OX_FLOAT);
  stats_shape(c, 2, rx ? rx - 1 : 0, OX_FLOAT);
  return OX_OK;
}
static int skip_layer_norm(ox_ictx *c) { return skip_ln(c, false); }
static int skip_rms_norm(ox_ictx *c) { return skip_ln(c, true); }

/* ---- SimplifiedLayerNormalization: X's shape; inv_std_var ---- */
static int simplified_ln(ox_ictx *c) {
  int64_t axis = ix_attr_int(c, "axis", -1);
  size_t r, ax = 0, rs;
  const ox_dim *x = dim_of(c, 0, &r), *s = dim_of(c, 1, &rs);
  if (x && !ix_axis(axis, r, &ax))
    return ix_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
  if (x && s) { /* scale broadcasts (numpy) to X's dims from axis on */
    bool ok = rs <= r - ax;
    for (size_t k = 0; k < rs && ok; k++) {
      const ox_dim *d = &s[rs - 1 - k], *t = &x[r - 1 - k];
      ok = !(d->has_value && t->has_value && d->value != 1 && d->value != t->value);
    }
    if (!ok) return ix_fail(c, "scale does not broadcast to the normalized axes of X");
  }
  int32_t xe = ix_elem(c, 0), se = ix_elem(c, 1);
  if (xe != OX_UNDEFINED && se != OX_UNDEFINED && xe != se)
    return ix_fail(c, "X and scale must have one element type");
  ix_same_shape_as(c, 0, 0, xe);
  int64_t st = ix_attr_int(c, "stash_type", 1);
  stats_shape(c, 1, ax, st == OX_BFLOAT16 ? OX_BFLOAT16 : OX_FLOAT);
  return OX_OK;
}

/* ---- EmbedLayerNormalization: [B, S, H], mask_index [B] ---- */
static int embed_ln(ox_ictx *c) {
  size_t ri = 0, rw = 0;
  const ox_dim *ids = dim_of(c, 0, &ri), *w = dim_of(c, 2, &rw);
  if (ids && ri != 2) return ix_fail(c, "input_ids must be 2-D, not of rank %zu", ri);
  if (w && rw != 2) return ix_fail(c, "word_embedding must be 2-D, not of rank %zu", rw);
  if (ix_has_input(c, 1) != ix_has_input(c, 4))
    return ix_fail(c, "segment_ids and segment_embedding go together");
  const ox_dim *h = w ? &w[1] : NULL;
  if (check_vec(c, 5, "gamma", h) || check_vec(c, 6, "beta", h)) return OX_EMODEL;
  int32_t el = ix_elem(c, 2);
  ox_dim o[3] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown()};
  if (ids) o[0] = ids[0], o[1] = ids[1];
  if (h) o[2] = *h;
  ix_set_tensor(c, 0, el, o, 3);
  if (c->n_out > 1) ix_set_tensor(c, 1, OX_INT32, o, 1);
  if (c->n_out > 2) ix_set_tensor(c, 2, el, o, 3);
  return OX_OK;
}

/* ---- BiasSoftmax: data's shape; bias as the kernel broadcasts it ---- */
static int bias_softmax(ox_ictx *c) {
  if (!ix_attr(c, "is_inner_broadcast"))
    return ix_fail(c, "attribute is_inner_broadcast is required");
  bool inner = ix_attr_int(c, "is_inner_broadcast", 0) != 0;
  int64_t axis = ix_attr_int(c, "axis", 1);
  size_t r = 0, rb = 0, ax = 0;
  const ox_dim *x = dim_of(c, 0, &r), *b = dim_of(c, 1, &rb);
  if (x && (!ix_axis(axis, r, &ax) || (axis < 0 ? axis + (int64_t)r : axis) >= (int64_t)r))
    return ix_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
  if (x && b) {
    bool ok = rb <= r, all = true;
    for (size_t k = 0; k < r && all; k++) all = x[k].has_value;
    for (size_t k = 0; k < rb && all; k++) all = b[k].has_value;
    if (ok && all) {
      int64_t bd[64];
      if (r > 64) return OX_OK;
      for (size_t k = 0; k < r; k++) bd[k] = k + rb >= r ? b[k + rb - r].value : 1;
      size_t lead = 0, trail = 0;
      while (lead < ax && bd[lead] == 1 && x[lead].value != 1) lead++;
      while (trail < ax && bd[ax - 1 - trail] == 1) trail++;
      for (size_t k = 0; k < r && ok; k++) {
        if (k >= ax)
          ok = bd[k] == x[k].value;
        else if (bd[k] != x[k].value)
          ok = bd[k] == 1 && (inner ? k >= ax - trail : k < lead);
      }
    }
    if (!ok)
      return ix_fail(c, "bias does not broadcast to data as is_inner_broadcast=%d allows",
                     inner ? 1 : 0);
  }
  return ix_same_as_input0(c);
}

/* ---- FusedMatMul: MatMul's shape of op(A) and op(B) ---- */
static const ox_type *op_type(ox_ictx *c, size_t i, bool tbatch, bool t) {
  size_t r;
  const ox_dim *d = dim_of(c, i, &r);
  if (!d || r < 2 || r > 64 || (!tbatch && !t)) return c->in[i];
  ox_dim p[64];
  memcpy(p, d, r * sizeof *p);
  if (tbatch) {
    for (size_t k = 0; k + 2 < r; k++) p[k] = d[k + 1];
    p[r - 2] = d[0];
  }
  if (t) {
    ox_dim tmp = p[r - 2];
    p[r - 2] = p[r - 1];
    p[r - 1] = tmp;
  }
  ox_type *ty = ox_arena_calloc(c->a, 1, sizeof *ty);
  ox_shape *sh = ox_arena_calloc(c->a, 1, sizeof *sh);
  ox_dim *nd = ix_dims_new(c, r);
  if (!ty || !sh || !nd) return c->in[i];
  memcpy(nd, p, r * sizeof *nd);
  *ty = *c->in[i];
  *sh = *c->in[i]->shape;
  sh->dim = nd;
  ty->shape = sh;
  return ty;
}

static int fused_matmul(ox_ictx *c) {
  const ox_type *in[2] = {NULL, NULL};
  if (c->n_in < 2) return OX_OK;
  in[0] = op_type(c, 0, ix_attr_int(c, "transBatchA", 0) != 0, ix_attr_int(c, "transA", 0) != 0);
  in[1] = op_type(c, 1, ix_attr_int(c, "transBatchB", 0) != 0, ix_attr_int(c, "transB", 0) != 0);
  ox_ictx s = *c;
  const ox_dimv *data[2] = {NULL, NULL};
  const ox_tensor *cst[2] = {NULL, NULL};
  s.in = in;
  s.in_data = data;
  s.in_const = cst;
  s.n_in = 2;
  int rc = ix_matmul_shape(&s, 0, 1, ix_elem(c, 0));
  c->failed = c->failed || s.failed;
  return rc;
}

/* ---- FusedConv: Conv's shape; the activation by name ---- */
static int fused_conv(ox_ictx *c) {
  static const char *const acts[] = {"",        "Identity",  "Relu", "Tanh",
                                     "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid"};
  static const size_t n_params[] = {0, 0, 0, 0, 0, 1, 2, 2};
  const ox_attr *a = ix_attr(c, "activation");
  if (a && a->type == OX_ATTR_STRING) {
    size_t k = 0, n = sizeof acts / sizeof acts[0];
    while (k < n && !(strlen(acts[k]) == a->s.size && memcmp(acts[k], a->s.data, a->s.size) == 0))
      k++;
    if (k == n)
      return ix_fail(c,
                     "unknown activation '%.*s' (Relu, Tanh, Sigmoid, LeakyRelu, Clip or "
                     "HardSigmoid)",
                     (int)(a->s.size > 64 ? 64 : a->s.size), (const char *)a->s.data);
    const ox_attr *p = ix_attr(c, "activation_params");
    size_t have = p && p->type == OX_ATTR_FLOATS ? p->n_floats : 0;
    if (have < n_params[k])
      return ix_fail(c, "activation %s needs %zu activation_params, got %zu", acts[k], n_params[k],
                     have);
  }
  return ix_conv_shape(c, 1, ix_elem(c, 0));
}

const ox_infer_def ox_infer_defs_contrib_nn[] = {
    {OX_CONTRIB_DOMAIN, "QuickGelu", 1, 1, ix_same_as_input0},
    {OX_CONTRIB_DOMAIN, "Gelu", 1, 1, ix_same_as_input0},
    {OX_CONTRIB_DOMAIN, "FastGelu", 1, 1, bias_gelu},
    {OX_CONTRIB_DOMAIN, "BiasGelu", 1, 1, bias_gelu},
    {OX_CONTRIB_DOMAIN, "SkipLayerNormalization", 1, 1, skip_layer_norm},
    {OX_CONTRIB_DOMAIN, "SkipSimplifiedLayerNormalization", 1, 1, skip_rms_norm},
    {OX_CONTRIB_DOMAIN, "EmbedLayerNormalization", 1, 1, embed_ln},
    {OX_CONTRIB_DOMAIN, "BiasSoftmax", 1, 1, bias_softmax},
    {OX_CONTRIB_DOMAIN, "FusedMatMul", 1, 1, fused_matmul},
    {OX_CONTRIB_DOMAIN, "FusedConv", 1, 1, fused_conv},
    {"", "SimplifiedLayerNormalization", 1, 1000, simplified_ln},
    {NULL, NULL, 0, 0, NULL},
};
