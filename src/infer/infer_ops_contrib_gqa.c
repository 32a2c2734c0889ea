/* infer_ops_contrib_gqa.c - shape functions of onnxruntime's com.microsoft
 * GroupQueryAttention, RotaryEmbedding and SparseAttention (schemas in
 * src/schema/schema_contrib_gqa.c). They reject what the kernels
 * (src/ops/contrib/gqa.c, sparse_attn.c) would reject when the shapes already show it. */
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

/* num_heads and kv_num_heads of GroupQueryAttention and SparseAttention */
static int heads(ox_ictx *c, int64_t *nh, int64_t *kvh) {
  *nh = ix_attr_int(c, "num_heads", 0), *kvh = ix_attr_int(c, "kv_num_heads", 0);
  if (*nh <= 0 || *kvh <= 0 || *nh > (1 << 20) || *kvh > (1 << 20))
    return ix_fail(c, "num_heads and kv_num_heads must be positive");
  if (*nh % *kvh)
    return ix_fail(c, "num_heads %lld is not a multiple of kv_num_heads %lld", (long long)*nh,
                   (long long)*kvh);
  if (!ix_has_input(c, 1) != !ix_has_input(c, 2))
    return ix_fail(c, "key and value must be given together (or both absent: packed QKV)");
  return OX_OK;
}

/* query [B, S, width] (Q, K and V packed when key is absent): out = [B, S,
 * num_heads * H], *H the head size when the width is known (else -1) */
static int query_dims(ox_ictx *c, int64_t nh, int64_t kvh, ox_dim *out, int64_t *H) {
  const ox_dim *qd;
  size_t qr;
  int64_t qw;
  out[0] = out[1] = out[2] = ox_dim_unknown();
  *H = -1;
  if (!ix_shape(c, 0, &qd, &qr)) return OX_OK;
  if (qr != 3) return ix_fail(c, "query must have rank 3, not %zu", qr);
  out[0] = qd[0], out[1] = qd[1];
  if (dim_val(&qd[2], &qw)) {
    int64_t parts = ix_has_input(c, 1) ? nh : nh + 2 * kvh;
    if (qw % parts)
      return ix_fail(c, "query's last dimension %lld is not a multiple of %lld heads",
                     (long long)qw, (long long)parts);
    *H = qw / parts;
    out[2] = ox_dim_known(*H * nh);
  }
  return OX_OK;
}

/* past_key [B, kvh, P, H]: its dims in *pd, *pr when *known */
static int past_dims(ox_ictx *c, int64_t kvh, int64_t H, const ox_dim **pd, size_t *pr,
                     bool *known) {
  int64_t v;
  *known = ix_shape(c, 3, pd, pr);
  if (!*known) return OX_OK;
  if (*pr != 4) return ix_fail(c, "past_key must have rank 4, not %zu", *pr);
  if (dim_val(&(*pd)[1], &v) && v != kvh)
    return ix_fail(c, "past_key has %lld heads, not kv_num_heads %lld", (long long)v,
                   (long long)kvh);
  if (H > 0 && dim_val(&(*pd)[3], &v) && v != H)
    return ix_fail(c, "past_key's head size %lld is not the query's %lld", (long long)v,
                   (long long)H);
  return OX_OK;
}

static int infer_gqa(ox_ictx *c) {
  int64_t nh, kvh, H;
  int rc = heads(c, &nh, &kvh);
  if (rc) return rc;
  int32_t el = ix_elem(c, 0);
  bool packed = !ix_has_input(c, 1);
  if (ix_has_input(c, 3) != ix_has_input(c, 4))
    return ix_fail(c, "past_key and past_value must be given together");
  ox_dim out[4];
  if ((rc = query_dims(c, nh, kvh, out, &H))) return rc;
  ox_dim B = out[0], S = out[1];
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
  bool have_past;
  if ((rc = past_dims(c, kvh, H, &pd, &pr, &have_past))) return rc;
  if (have_past) dim_val(&pd[2], &P);
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

/* output [B, S, num_heads * H]; present_key / present_value have the shape
 * of the past buffer they are written over */
static int infer_sparse(ox_ictx *c) {
  int64_t nh, kvh, H, v, blk = ix_attr_int(c, "sparse_block_size", 0);
  int rc = heads(c, &nh, &kvh);
  if (rc) return rc;
  if (blk <= 0 || blk > (1 << 20)) return ix_fail(c, "sparse_block_size must be positive");
  const ox_dim *pd, *rd;
  size_t pr, rr;
  ox_dim out[3];
  bool have_past;
  if ((rc = query_dims(c, nh, kvh, out, &H))) return rc;
  if (ix_shape(c, 5, &rd, &rr)) {
    if (rr != 2) return ix_fail(c, "block_row_indices must have rank 2, not %zu", rr);
    if (dim_val(&rd[0], &v) && (v <= 0 || nh % v))
      return ix_fail(c, "block_row_indices has %lld layouts, which do not divide num_heads %lld",
                     (long long)v, (long long)nh);
  }
  if (ix_shape(c, 6, &rd, &rr) && rr != 2)
    return ix_fail(c, "block_col_indices must have rank 2, not %zu", rr);
  ix_set_tensor(c, 0, ix_elem(c, 0), out, 3);
  ox_dim pres[4] = {ox_dim_unknown(), ox_dim_known(kvh), ox_dim_unknown(),
                    H > 0 ? ox_dim_known(H) : ox_dim_unknown()};
  if ((rc = past_dims(c, kvh, H, &pd, &pr, &have_past))) return rc;
  if (have_past) pres[0] = pd[0], pres[2] = pd[2];
  for (size_t i = 1; i < 3 && i < c->n_out; i++) ix_set_tensor(c, i, ix_elem(c, 0), pres, 4);
  return OX_OK;
}

const ox_infer_def ox_infer_defs_contrib_gqa[] = {
    {OX_CONTRIB_DOMAIN, "GroupQueryAttention", 1, 1, infer_gqa},
    {OX_CONTRIB_DOMAIN, "RotaryEmbedding", 1, 1, infer_rotary},
    {OX_CONTRIB_DOMAIN, "SparseAttention", 1, 1, infer_sparse},
    {NULL, NULL, 0, 0, NULL},
};
