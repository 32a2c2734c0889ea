/* attn_kv.c - the pieces GroupQueryAttention and SparseAttention share
 * (attn_kv.h). */
#include "attn_kv.h"

#include <string.h>

#include "../../kernels/attn_decode.h"
#include "../nn_common.h"

#define FAIL(...) ox_kctx_fail(c, OX_ERUNTIME, __VA_ARGS__)

int akv_heads(const ox_kinfo *info, ox_err *e, int64_t *nh, int64_t *kvh) {
  *nh = ox_node_attr_int(info->node, "num_heads", 0);
  *kvh = ox_node_attr_int(info->node, "kv_num_heads", 0);
  if (*nh <= 0 || *kvh <= 0 || *nh > (1 << 20) || *kvh > (1 << 20))
    return oc_prep_fail(info, e, "num_heads and kv_num_heads must be positive");
  if (*nh % *kvh)
    return oc_prep_fail(info, e, "num_heads %lld is not a multiple of kv_num_heads %lld",
                        (long long)*nh, (long long)*kvh);
  return OX_OK;
}

int akv_check_qkv(ox_kctx *c, const ox_value *Q, const ox_value *K, const ox_value *V, int64_t nh,
                  int64_t kvh, bool packed, int64_t *B, int64_t *S, int64_t *H) {
  if (!nn_is_real(Q->dtype)) return FAIL("query must be a float tensor");
  if (Q->rank != 3) return FAIL("query must have rank 3 [B, S, hidden], not %zu", Q->rank);
  *B = Q->dims[0], *S = Q->dims[1];
  int64_t parts = packed ? nh + 2 * kvh : nh;
  if (Q->dims[2] % parts || Q->dims[2] == 0)
    return FAIL("query's last dimension %lld is not a multiple of %lld heads",
                (long long)Q->dims[2], (long long)parts);
  *H = Q->dims[2] / parts;
  if (*S < 1) return FAIL("query has no rows");
  if (packed) {
    if (V) return FAIL("key and value must be given together (or both absent: packed QKV)");
    return OX_OK;
  }
  if (!V) return FAIL("key and value must be given together (or both absent: packed QKV)");
  for (int i = 0; i < 2; i++) {
    const ox_value *x = i ? V : K;
    if (x->dtype != Q->dtype) return FAIL("key and value must have the query's type");
    if (x->rank != 3 || x->dims[0] != *B || x->dims[1] != *S || x->dims[2] != *H * kvh)
      return FAIL("%s must be [%lld, %lld, %lld] (kv_num_heads * head size %lld)",
                  i ? "value" : "key", (long long)*B, (long long)*S, (long long)(*H * kvh),
                  (long long)*H);
  }
  return OX_OK;
}

void akv_split_qkv(const akv_split *sp) {
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t H = sp->H, S = sp->S, half = sp->R / 2;
  size_t row = (size_t)H * sizeof(float);
  bool packed = !sp->k;
  int64_t qw = (sp->N + (packed ? 2 * sp->Nk : 0)) * H, kw = packed ? qw : sp->Nk * H;
  const float *k = packed ? sp->q + sp->N * H : sp->k;
  const float *v = packed ? sp->q + (sp->N + sp->Nk) * H : sp->v;
  for (int64_t b = 0; b < sp->B; b++)
    for (int64_t s = 0; s < S; s++) {
      const float *qr = sp->q + (b * S + s) * qw;
      const float *kr = k + (b * S + s) * kw, *vr = v + (b * S + s) * kw;
      const float *cs = sp->cs ? sp->cs + sp->pos[b * S + s] * half : NULL;
      const float *sn = sp->cs ? sp->sn + sp->pos[b * S + s] * half : NULL;
      int64_t at = (sp->row0 ? sp->row0[b] : 0) + s;
      for (int64_t h = 0; h < sp->N; h++) {
        float *d = sp->qo + ((b * S + s) * sp->N + h) * H;
        memcpy(d, qr + h * H, row);
        if (cs) kd->rotary(d, d, sp->R, cs, sn, sp->interleaved);
      }
      for (int64_t h = 0; h < sp->Nk; h++) {
        float *dk = sp->ko + ((b * sp->Nk + h) * sp->rows + at) * H;
        memcpy(dk, kr + h * H, row);
        memcpy(sp->vo + ((b * sp->Nk + h) * sp->rows + at) * H, vr + h * H, row);
        if (cs) kd->rotary(dk, dk, sp->R, cs, sn, sp->interleaved);
      }
    }
}

int akv_check_crossed(ox_kctx *c, const float *prk, const float *prv, const float *pk,
                      const float *pv, size_t present_bytes, size_t past_bytes) {
  const char *o[2] = {(const char *)prk, (const char *)prv};
  const char *i[2] = {(const char *)pk, (const char *)pv};
  for (int x = 0; x < 2; x++)
    for (int y = 0; y < 2; y++)
      if (o[x] < i[y] + past_bytes && i[y] < o[x] + present_bytes)
        return FAIL("present_%s is given the buffer of past_%s: it may only be its own past's",
                    x ? "value" : "key", y ? "value" : "key");
  return OX_OK;
}

int akv_outputs(ox_kctx *c, int32_t dt, const int64_t *yd, const int64_t *pd, ox_value **outs) {
  outs[1] = outs[2] = NULL;
  if (!(outs[0] = ox_kctx_output(c, 0, dt, yd, 3))) return OX_ERUNTIME;
  for (size_t i = 1; i < 3; i++)
    if (ox_kctx_n_outputs(c) > i && ox_kctx_output_wanted(c, i) &&
        !(outs[i] = ox_kctx_output(c, i, dt, pd, 4)))
      return OX_ERUNTIME;
  return OX_OK;
}

bool akv_place(ox_value *const *outs, float **w, int64_t n_y, int64_t n_p, float **y, float **prk,
               float **prv) {
  bool f32 = outs[0]->dtype == OX_FLOAT, own = f32 && outs[1] && outs[2];
  if (f32) {
    *y = outs[0]->data;
  } else {
    *y = *w;
    *w += n_y;
  }
  if (own) {
    *prk = outs[1]->data, *prv = outs[2]->data;
  } else {
    *prk = *w, *w += n_p;
    *prv = *w, *w += n_p;
  }
  return own;
}
