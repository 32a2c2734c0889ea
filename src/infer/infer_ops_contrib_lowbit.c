/* infer_ops_contrib_lowbit.c - shape functions of onnxruntime's com.microsoft
 * MatMulNBits, GatherBlockQuantized and the contrib QuantizeLinear / DequantizeLinear (schemas in
 * src/schema/schema_contrib_lowbit.c). They reject what the kernels (src/ops/contrib/lowbit.c,
 * lowbit_gather.c) reject where the shapes are known. */
#include <string.h>

#include "../schema/schema_hand.h"
#include "infer_impl.h"

/* dim j is known and not v */
static bool dim_differs(const ox_dim *d, size_t j, int64_t v) {
  return d[j].has_value && d[j].value != v;
}

/* numel of a fully known shape, or -1 */
static int64_t known_numel(const ox_dim *d, size_t r) {
  int64_t n = 1;
  for (size_t i = 0; i < r; i++) {
    if (!d[i].has_value) return -1;
    n *= d[i].value;
  }
  return n;
}

/* a 1-D [N * per] or 2-D [N, per] input (scales, zero points) */
static bool nk_shape_ok(const ox_dim *d, size_t r, int64_t N, int64_t per) {
  if (r == 1) return !dim_differs(d, 0, N * per);
  if (r == 2) return !dim_differs(d, 0, N) && !dim_differs(d, 1, per);
  return false;
}

/* ---- MatMulNBits: A's shape with N last, A's type ---- */
static int matmul_nbits(ox_ictx *c) {
  int64_t K = ix_attr_int(c, "K", -1), N = ix_attr_int(c, "N", -1);
  int64_t bits = ix_attr_int(c, "bits", 4), bs = ix_attr_int(c, "block_size", -1);
  if (K < 1 || N < 1) return ix_fail(c, "attributes K and N must be positive");
  if (bits != 2 && bits != 4 && bits != 8)
    return ix_fail(c, "bits must be 2, 4 or 8, not %lld", (long long)bits);
  if (bs < 16 || (bs & (bs - 1)))
    return ix_fail(c, "block_size must be a power of two of at least 16, not %lld", (long long)bs);
  int64_t kblk = (K + bs - 1) / bs;
  const ox_dim *d;
  size_t r;
  if (ix_shape(c, 1, &d, &r) && (r != 3 || dim_differs(d, 0, N) || dim_differs(d, 1, kblk) ||
                                 dim_differs(d, 2, bs * bits / 8)))
    return ix_fail(c,
                   "B must be [N, ceil(K / block_size), block_size * bits / 8] = [%lld, %lld, "
                   "%lld]",
                   (long long)N, (long long)kblk, (long long)(bs * bits / 8));
  if (ix_shape(c, 2, &d, &r) && !nk_shape_ok(d, r, N, kblk))
    return ix_fail(c, "scales must be [N * k_blocks] or [N, k_blocks] = [%lld, %lld]", (long long)N,
                   (long long)kblk);
  if (ix_has_input(c, 3) && ix_shape(c, 3, &d, &r)) {
    int32_t zt = ix_elem(c, 3);
    int64_t per = zt == OX_UINT8 ? (kblk * bits + 7) / 8 : kblk;
    if (zt != OX_UNDEFINED && !nk_shape_ok(d, r, N, per))
      return ix_fail(c, "zero_points must be [N * %lld] or [N, %lld]", (long long)per,
                     (long long)per);
  }
  if (ix_has_input(c, 4) && ix_shape(c, 4, &d, &r) &&
      (r != 1 || (d[0].has_value && d[0].value != K && d[0].value != kblk * bs)))
    return ix_fail(c, "g_idx must be [K] or [k_blocks * block_size] = [%lld]", (long long)K);
  if (ix_has_input(c, 5) && ix_shape(c, 5, &d, &r) && known_numel(d, r) >= 0 &&
      known_numel(d, r) != N)
    return ix_fail(c, "bias must have N = %lld values", (long long)N);
  int32_t el = ix_elem(c, 0);
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  if (r == 0) return ix_fail(c, "A must have rank 1 or more");
  if (dim_differs(d, r - 1, K))
    return ix_fail(c, "A's last dimension is %lld, K is %lld", (long long)d[r - 1].value,
                   (long long)K);
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  memcpy(o, d, r * sizeof *o);
  o[r - 1] = ox_dim_known(N);
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

/* ---- GatherBlockQuantized: Gather's shape over data's fields, the scales' type ---- */
static int gather_block_quantized(ox_ictx *c) {
  int64_t bs = ix_attr_int(c, "block_size", 128), bits = ix_attr_int(c, "bits", 4);
  int64_t gax = ix_attr_int(c, "gather_axis", 0), qax = ix_attr_int(c, "quantize_axis", 1);
  if (bs < 16 || (bs & (bs - 1)))
    return ix_fail(c, "block_size must be a power of two of at least 16, not %lld", (long long)bs);
  int32_t dt = ix_elem(c, 0);
  bool u8 = dt == OX_UINT8;
  if (dt != OX_UNDEFINED && (u8 ? bits != 2 && bits != 4 && bits != 8 : bits != 4))
    return ix_fail(c, "bits must be %s, not %lld", u8 ? "2, 4 or 8" : "4", (long long)bits);
  int32_t el = ix_elem(c, 2);
  const ox_dim *d, *id;
  size_t r, ri;
  if (!ix_shape(c, 0, &d, &r) || !ix_shape(c, 1, &id, &ri))
    return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t ga, qa;
  if (r == 0 || !ix_axis(gax, r, &ga) || !ix_axis(qax, r, &qa))
    return ix_fail(c, "gather_axis %lld or quantize_axis %lld is out of range for rank %zu",
                   (long long)gax, (long long)qax, r);
  if (u8 && (ga != 0 || qa != r - 1 || ga == qa))
    return ix_fail(c,
                   "with uint8 data gather_axis must be 0 and quantize_axis the last axis, "
                   "another than gather_axis");
  int comp = u8 ? 8 / (int)bits : 1;
  ox_dim *o = ix_dims_new(c, r - 1 + ri);
  if (!o) return OX_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < ga; i++) o[k++] = d[i];
  for (size_t i = 0; i < ri; i++) o[k++] = id[i];
  for (size_t i = ga + 1; i < r; i++) o[k++] = d[i];
  if (comp > 1) o[k - 1] = ox_dim_mul(c->a, d[r - 1], ox_dim_known(comp));
  ix_set_tensor(c, 0, el, o, (int64_t)k);
  return OX_OK;
}

/* ---- QuantizeLinear: x's shape, the zero point's type (uint8 without one) ---- */
static int ms_quantize(ox_ictx *c) {
  int32_t el = ix_has_input(c, 2) ? ix_elem(c, 2) : OX_UINT8;
  return ix_same_shape_as(c, 0, 0, el);
}

/* ---- DequantizeLinear: x's shape, the scale's type ---- */
static int ms_dequantize(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, ix_elem(c, 1)); }

const ox_infer_def ox_infer_defs_contrib_lowbit[] = {
    {OX_CONTRIB_DOMAIN, "MatMulNBits", 1, 1, matmul_nbits},
    {OX_CONTRIB_DOMAIN, "GatherBlockQuantized", 1, 1, gather_block_quantized},
    {OX_CONTRIB_DOMAIN, "QuantizeLinear", 1, 1, ms_quantize},
    {OX_CONTRIB_DOMAIN, "DequantizeLinear", 1, 1, ms_dequantize},
    {NULL, NULL, 0, 0, NULL},
};
