/* lowbit_gather.c - com.microsoft GatherBlockQuantized: Gather of a block-quantized table
 * (the tied embedding of int4 language models), dequantizing only the rows it gathers.
 *
 * data is int4 / uint4 (one element per byte, as the runtime holds them) or uint8 with
 * 8 / bits fields per byte along its last axis, low field first; the "logical" shape below is
 * data's with that axis counted in fields. The checks run at prepare on whatever inputs are
 * constants (so a bad model fails at session creation) and again at run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/floatconv.h"
#include "../opcore.h"
#include "lowbit.h"

typedef struct gbq_attrs {
  int64_t gather_axis, quantize_axis, bs, bits;
} gbq_attrs;

/* what the inputs make of the attributes */
typedef struct gbq_geo {
  size_t rank, ga, qa;
  int comp;               /* fields per byte of uint8 data, else 1 */
  int64_t ld[OC_MAXRANK]; /* data's logical dims */
  int64_t nb;             /* blocks along quantize_axis */
} gbq_geo;

static bool gbq_is_real(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* Checks data (NULL: unknown), scales and zero points (NULL: unknown or absent) and the
 * indices' values (NULL: unknown); false with msg set when they are wrong. */
static bool gbq_validate(const gbq_attrs *a, const ox_value *d, const ox_value *s,
                         const ox_value *z, const ox_value *idx, gbq_geo *g, char *msg, size_t mn) {
  if (!d) return true;
  bool u8 = d->dtype == OX_UINT8;
  if (!u8 && d->dtype != OX_INT4 && d->dtype != OX_UINT4)
    return snprintf(msg, mn, "data must be uint8, int4 or uint4"), false;
  if (u8 ? a->bits != 2 && a->bits != 4 && a->bits != 8 : a->bits != 4)
    return snprintf(msg, mn, "bits must be %s with %s data, not %lld", u8 ? "2, 4 or 8" : "4",
                    u8 ? "uint8" : "int4 / uint4", (long long)a->bits),
           false;
  int64_t r = (int64_t)d->rank;
  if (r < 1 || r > OC_MAXRANK) return snprintf(msg, mn, "data must have rank 1 or more"), false;
  int64_t ga = a->gather_axis < 0 ? a->gather_axis + r : a->gather_axis;
  int64_t qa = a->quantize_axis < 0 ? a->quantize_axis + r : a->quantize_axis;
  if (ga < 0 || ga >= r || qa < 0 || qa >= r)
    return snprintf(msg, mn, "gather_axis %lld or quantize_axis %lld is out of range for rank %lld",
                    (long long)a->gather_axis, (long long)a->quantize_axis, (long long)r),
           false;
  if (u8 && (ga != 0 || qa != r - 1 || ga == qa))
    return snprintf(msg, mn,
                    "with uint8 data gather_axis must be 0 and quantize_axis the last axis, "
                    "another than gather_axis"),
           false;
  g->rank = (size_t)r, g->ga = (size_t)ga, g->qa = (size_t)qa;
  g->comp = u8 ? 8 / (int)a->bits : 1;
  for (size_t i = 0; i < g->rank; i++) g->ld[i] = d->dims[i];
  g->ld[r - 1] *= qa == r - 1 ? g->comp : 1;
  g->nb = (g->ld[qa] + a->bs - 1) / a->bs;
  if (s) {
    bool ok = gbq_is_real(s->dtype) && s->rank == g->rank;
    for (size_t i = 0; ok && i < g->rank; i++) ok = s->dims[i] == (i == g->qa ? g->nb : g->ld[i]);
    if (!ok)
      return snprintf(msg, mn,
                      "scales must be float, float16 or bfloat16 of data's shape with "
                      "quantize_axis %lld holding %lld blocks of %lld",
                      (long long)qa, (long long)g->nb, (long long)a->bs),
             false;
  }
  if (z) {
    bool ok = z->dtype == d->dtype && z->rank == g->rank;
    for (size_t i = 0; ok && i < g->rank; i++)
      ok = z->dims[i] == (i == g->qa ? (g->nb + g->comp - 1) / g->comp : s ? s->dims[i] : g->ld[i]);
    if (!ok)
      return snprintf(msg, mn, "zero_points must be of data's type and the scales' shape%s",
                      g->comp > 1 ? " (packed like data along the last axis)" : ""),
             false;
  }
  if (idx) {
    if (idx->dtype != OX_INT64 && idx->dtype != OX_INT32)
      return snprintf(msg, mn, "indices must be int32 or int64"), false;
    int64_t n = g->ld[g->ga];
    for (int64_t i = 0; i < idx->numel; i++) {
      int64_t v = oc_get_i64(idx->data, idx->dtype, i);
      if (v < -n || v >= n)
        return snprintf(msg, mn, "indices[%lld] = %lld is out of range [-%lld, %lld)", (long long)i,
                        (long long)v, (long long)n, (long long)n),
               false;
    }
  }
  return true;
}

int ox_gbq_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *nd = info->node;
  gbq_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->gather_axis = ox_node_attr_int(nd, "gather_axis", 0);
  a->quantize_axis = ox_node_attr_int(nd, "quantize_axis", 1);
  a->bs = ox_node_attr_int(nd, "block_size", 128);
  a->bits = ox_node_attr_int(nd, "bits", 4);
  if (a->bs < 16 || (a->bs & (a->bs - 1)))
    return oc_prep_fail(info, e, "block_size must be a power of two of at least 16, not %lld",
                        (long long)a->bs);
  if (a->bits != 2 && a->bits != 4 && a->bits != 8)
    return oc_prep_fail(info, e, "bits must be 2, 4 or 8, not %lld", (long long)a->bits);
  ox_value *const *ci = info->const_inputs;
  const ox_value *d = ci ? ci[0] : NULL, *idx = ci && info->n_inputs > 1 ? ci[1] : NULL;
  const ox_value *s = ci && info->n_inputs > 2 ? ci[2] : NULL;
  const ox_value *z = ci && info->n_inputs > 3 ? ci[3] : NULL;
  gbq_geo g;
  char msg[400];
  if (!gbq_validate(a, d, s, z, idx, &g, msg, sizeof msg)) return oc_prep_fail(info, e, "%s", msg);
  *state = a;
  return OX_OK;
}

/* field e (logical, row-major) of data */
static inline int gbq_field(const ox_value *d, int comp, int bits, int64_t e) {
  if (d->dtype == OX_INT4) return ((const int8_t *)d->data)[e];
  if (comp == 1) return ((const uint8_t *)d->data)[e];
  uint8_t byte = ((const uint8_t *)d->data)[e / comp];
  return (byte >> ((e % comp) * bits)) & ((1 << bits) - 1);
}

/* zero point of scale si (packed like data's fields along the last axis for uint8) */
static inline int gbq_zero(const ox_value *z, const gbq_geo *g, int bits, int dflt, int64_t si) {
  if (!z) return dflt;
  if (z->dtype == OX_INT4) return ((const int8_t *)z->data)[si];
  if (g->comp == 1) return ((const uint8_t *)z->data)[si];
  int64_t row = si / g->nb, b = si % g->nb, per = (g->nb + g->comp - 1) / g->comp;
  uint8_t byte = ((const uint8_t *)z->data)[row * per + b / g->comp];
  return (byte >> ((b % g->comp) * bits)) & ((1 << bits) - 1);
}

int ox_gbq_run(ox_kctx *c, void *state) {
  const gbq_attrs *a = state;
  ox_value *d = ox_kctx_input(c, 0), *idx = ox_kctx_input(c, 1), *s = ox_kctx_input(c, 2);
  ox_value *z = ox_kctx_input(c, 3);
  if (!a || !d || !idx || !s)
    return ox_kctx_fail(c, OX_ERUNTIME, "data, indices and scales are required");
  gbq_geo g;
  char msg[400];
  if (!gbq_validate(a, d, s, z, idx, &g, msg, sizeof msg))
    return ox_kctx_fail(c, OX_ERUNTIME, "%s", msg);
  int64_t dims[OC_MAXRANK];
  size_t rank = 0;
  for (size_t i = 0; i < g.ga; i++) dims[rank++] = g.ld[i];
  if (g.rank - 1 + idx->rank > OC_MAXRANK)
    return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  for (size_t i = 0; i < idx->rank; i++) dims[rank++] = idx->dims[i];
  for (size_t i = g.ga + 1; i < g.rank; i++) dims[rank++] = g.ld[i];
  ox_value *y = ox_kctx_output(c, 0, s->dtype, dims, rank);
  if (!y) return OX_ERUNTIME;
  int64_t outer = 1, inner = 1, qstride = 1;
  for (size_t i = 0; i < g.ga; i++) outer *= g.ld[i];
  for (size_t i = g.ga + 1; i < g.rank; i++) inner *= g.ld[i];
  for (size_t i = g.qa + 1; i < g.rank; i++) qstride *= g.ld[i];
  int64_t G = g.ld[g.ga], Dq = g.ld[g.qa], ni = idx->numel;
  int bits = (int)a->bits, dflt = d->dtype == OX_UINT8 ? 1 << (bits - 1) : 0;
  float *row = y->dtype == OX_FLOAT ? NULL : malloc((size_t)(inner ? inner : 1) * sizeof *row);
  if (y->dtype != OX_FLOAT && !row) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < ni; j++) {
      int64_t v = oc_get_i64(idx->data, idx->dtype, j);
      v += v < 0 ? G : 0;
      int64_t src = (o * G + v) * inner, dst = (o * ni + j) * inner;
      float *out = row ? row : (float *)y->data + dst;
      for (int64_t t = 0; t < inner; t++) {
        int64_t el = src + t, blk = (el / qstride) % Dq / a->bs;
        int64_t si = ((el / (qstride * Dq)) * g.nb + blk) * qstride + el % qstride;
        float sc = s->dtype == OX_FLOAT ? ((const float *)s->data)[si]
                                        : (float)oc_get(s->data, s->dtype, si);
        int q = gbq_field(d, g.comp, bits, el) - gbq_zero(z, &g, bits, dflt, si);
        out[t] = (float)q * sc;
      }
      if (row) oc_from_f32(row, y->dtype, (char *)y->data + dst * 2, inner);
    }
  free(row);
  return OX_OK;
}
