/* infer_ops_contrib_gqa.c - shape functions of onnxruntime's com.microsoft
 * GroupQueryAttention and RotaryEmbedding (schemas in
 * src/schema/schema_contrib_gqa.c). They reject what the kernels
 * (src/ops/contrib/gqa.c) would reject when the shapes already show it. */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

/* the one integer of a constant scalar input, when known */
static bool const_scalar(ox_ictx *c, size_t i, int64_t *v) {
  int64_t *vals;
  size_t n;
  if (!ix_const_ints(c, i, &vals, &n) || n != 1) return false;
  *v = vals[0];
  return true;
}

static bool dim_val(const ox_dim *d, int64_t *v) {
  if (!d->has_value) return false;
  *v = d->value;
  return true;
}

static int infer_gqa(ox_ictx *c) {
  int64_t nh = ix_attr_int(c, "num_heads", 0), kvh = ix_attr_int(c, "kv_num_heads", 0);
  if (nh <= 0 || kvh <= 0 || nh > (1 << 20) || kvh > (1 << 20))
    return ix_fail(c, "num_heads and kv_num_heads must be positive");
  if (nh % kvh)
    return ix_fail(c, "num_heads %lld is not a multiple of kv_num_heads %lld", (long long)nh,
                   (long long)kvh);
  int32_t el = ix_elem(c, 0);
  bool packed = !ix_has_input(c, 1);
  if (packed != !ix_has_input(c, 2))
    return ix_fail(c, "key and value must be given together (or both absent: packed QKV)");
  if (ix_has_input(c, 3) != ix_has_input(c, 4))
    return ix_fail(c, "past_key and past_value must be given together");
  const ox_dim *qd;
  size_t qr;
  ox_dim B = ox_dim_unknown(), S = ox_dim_unknown(), hid = ox_dim_unknown();
  int64_t H = -1, qw;
  if (ix_shape(c, 0, &qd, &qr)) {
    if (qr != 3) return ix_fail(c, "query must have rank 3, not %zu", qr);
    B = qd[0], S = qd[1];
    if (dim_val(&qd[2], &qw)) {
      int64_t parts = packed ? nh + 2 * kvh : nh;
      if (qw % parts)
        return ix_fail(c, "query's last dimension %lld is not a multiple of %lld heads",
                       (long long)qw, (long long)parts);
      H = qw / parts;
      hid = ox_dim_known(H * nh);
    }
  }
  const ox_dim *kd;
  size_t kr;
  if (!packed && ix_shape(c, 1, &kd, &kr)) {
    int64_t kw;
    if (kr != 3) return ix_fail(c, "key must have rank 3, not %zu", kr);
    if (H > 0 && dim_val(&kd[2], &kw) && kw != H * kvh)
      return ix_fail(c, "key's last dimension %lld is not kv_num_heads * head size %lld",
                     (long long)kw, (long long)(H * kvh));
  }
  const ox_dim *pd;
  size_t pr;
  int64_t P = -1, total = -1;
  bool have_past = ix_shape(c, 3, &pd, &pr);
  if (have_past) {
    int64_t v;
    if (pr != 4) return ix_fail(c, "past_key must have rank 4, not %zu", pr);
    if (dim_val(&pd[1], &v) && v != kvh)
      return ix_fail(c, "past_key has %lld heads, not kv_num_heads %lld", (long long)v,
                     (long long)kvh);
    if (H > 0 && dim_val(&pd[3], &v) && v != H)
      return ix_fail(c, "past_key's head size %lld is not the query's %lld", (long long)v,
                     (long long)H);
    dim_val(&pd[2], &P);
  }
  bool have_total = const_scalar(c, 6, &total);
  if (have_total && total <= 0) return ix_fail(c, "total_sequence_length must be positive");
  const ox_dim *cd;
  size_t cr;
  if (H > 0 && ix_shape(c, 7, &cd, &cr)) {
    int64_t w;
    if (cr != 2) return ix_fail(c, "cos_cache must have rank 2, not %zu", cr);
    if (dim_val(&cd[1], &w) && (w <= 0 || 2 * w > H))
      return ix_fail(c, "cos_cache width %lld is not in [1, head size / 2 = %lld]", (long long)w,
                     (long long)(H / 2));
  }
  ox_dim out[4];
  out[0] = B, out[1] = S, out[2] = hid;
  ix_set_tensor(c, 0, el, out, 3);
  ox_dim plen = ox_dim_unknown();
  if (have_total && (!ix_has_input(c, 3) || (have_past && P >= 0)))
    plen = ox_dim_known(P > total ? P : total);
  out[0] = B, out[1] = ox_dim_known(kvh), out[2] = plen,
  out[3] = H > 0 ? ox_dim_known(H) : ox_dim_unknown();
  if (c->n_out > 1) ix_set_tensor(c, 1, el, out, 4);
  if (c->n_out > 2) ix_set_tensor(c, 2, el, out, 4);
  if (c->n_out > 3) {
    out[0] = B, out[1] = ox_dim_known(nh), out[2] = S;
    out[3] = have_total ? ox_dim_known(total) : ox_dim_unknown();
    ix_set_tensor(c, 3, el, out, 4);
  }
  return OX_OK;
}

static int infer_rotary(ox_ictx *c) {
  const ox_dim *xd;
  size_t xr;
  if (ix_shape(c, 0, &xd, &xr) && xr != 3 && xr != 4)
    return ix_fail(c, "input must have rank 3 or 4, not %zu", xr);
  int64_t nh = ix_attr_int(c, "num_heads", 0), rd = ix_attr_int(c, "rotary_embedding_dim", 0);
  if (nh < 0 || rd < 0) return ix_fail(c, "num_heads and rotary_embedding_dim must be >= 0");
  if (rd > 0 && nh == 0) return ix_fail(c, "rotary_embedding_dim needs num_heads");
  const ox_dim *cd;
  size_t cr;
  if (ix_shape(c, 2, &cd, &cr) && cr != 2)
    return ix_fail(c, "cos_cache must have rank 2, not %zu", cr);
  return ix_same_as_input0(c);
}

const ox_infer_def ox_infer_defs_contrib_gqa[] = {
    {OX_CONTRIB_DOMAIN, "GroupQueryAttention", 1, 1, infer_gqa},
    {OX_CONTRIB_DOMAIN, "RotaryEmbedding", 1, 1, infer_rotary},
    {NULL, NULL, 0, 0, NULL},
};
