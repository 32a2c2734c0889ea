/* quant_attn.c - onnxruntime's com.microsoft QAttention (schema in
 * src/schema/schema_contrib_quant.c): the int8 form of Attention.
 *
 *   QKV = float((input - input_zero_point) x (weight - weight_zero_point))
 *         * input_scale * weight_scale[col] + bias[col]
 *
 * on the integer GEMM (src/kernels/qgemm.c, the weight packed once when it
 * is a constant), then the float attention of attention.c's head loop
 * (attention_core.h) over Q, K and V split into heads, K and V after the
 * past ones. The mask follows onnxruntime's CPU Attention: mask_index as key
 * lengths [B], end and start positions [2B], a raw 0/1 mask [B, T] or
 * [B, S, T], each masked key adding mask_filter_value to its score (not
 * -inf), and unidirectional masking the keys after a query's position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/qgemm.h"
#include "../onnx/attention_core.h"
#include "../opcore.h"
#include "attn_shape.h"
#include "quant_ops.h"

typedef struct qattn_state {
  int64_t heads;
  bool causal;
  float mask_filter, scale; /* scale 0: 1 / sqrt(head size) */
  bool has_packed;
  ox_qgemm_b packed;
} qattn_state;

static bool input_given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

/* a zero point or scale per tensor, or (n > 0) per column */
static bool one_or(const ox_value *v, int64_t n) {
  return v->rank == 0 || (v->rank == 1 && (v->numel == 1 || v->numel == n));
}

void ox_q_attn_release(void *st) {
  qattn_state *s = st;
  if (!s) return;
  if (s->has_packed) ox_qgemm_free_b(&s->packed);
  free(s);
}

int ox_q_attn_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  qattn_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  ox_attn_attrs at;
  char why[96];
  const char *bad = ox_attn_attrs_read(n, &at, why, sizeof why);
  s->heads = at.heads, s->causal = at.causal, s->mask_filter = at.filter, s->scale = at.scale;
  if (*bad) return oc_prep_fail(info, e, "%s", bad);
  /* the weight packed now when it and its zero point are constants */
  ox_value *const *cin = info->const_inputs;
  const ox_value *w = cin && info->n_inputs > 1 ? cin[1] : NULL;
  bool zw_given = input_given(n, 7);
  const ox_value *zw = zw_given && cin && info->n_inputs > 7 ? cin[7] : NULL;
  if (!w || w->kind != OX_VAL_TENSOR || w->rank != 2 ||
      (w->dtype != OX_UINT8 && w->dtype != OX_INT8) || (zw_given && !zw) ||
      (zw && (zw->dtype != w->dtype || !one_or(zw, w->dims[1]))))
    return OX_OK; /* packed (and checked) per run */
  if (ox_qgemm_pack_b(w->data, w->dtype == OX_INT8, w->dims[0], w->dims[1], w->dims[1],
                      zw ? zw->data : NULL, zw ? zw->numel : 0, &s->packed, e))
    return oc_prep_fail(info, e, "%s", e->msg);
  s->has_packed = true;
  return OX_OK;
}

/* The additive mask [B, S, T] of onnxruntime's CPU Attention (0 or
 * mask_filter_value); NULL with the error set, or *none when there is no
 * mask at all. */
static float *make_mask(ox_kctx *c, const qattn_state *s, const ox_value *mi, int64_t B, int64_t S,
                        int64_t P, bool *none) {
  int64_t T = P + S;
  *none = !mi && !s->causal;
  if (*none) return NULL;
  if (mi) {
    bool ok = mi->dtype == OX_INT32 &&
              ((mi->rank == 1 && (mi->dims[0] == B || mi->dims[0] == 2 * B)) ||
               (mi->rank == 2 && mi->dims[0] == B && mi->dims[1] == T) ||
               (mi->rank == 3 && mi->dims[0] == B && mi->dims[1] == S && mi->dims[2] == T));
    if (!ok) {
      ox_kctx_fail(c, OX_ERUNTIME,
                   "mask_index must be int32 of shape (B), (2 B), (B, T) or (B, S, T) with B = "
                   "%lld, S = %lld, T = %lld",
                   (long long)B, (long long)S, (long long)T);
      return NULL;
    }
  }
  float *m = calloc((size_t)(B * S * T > 0 ? B * S * T : 1), sizeof(float));
  if (!m) {
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  const int32_t *mv = mi ? mi->data : NULL;
  float f = s->mask_filter;
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < S; i++) {
      float *row = m + (b * S + i) * T;
      for (int64_t j = 0; j < T && mi; j++) {
        bool off;
        if (mi->rank == 3)
          off = mv[(b * S + i) * T + j] <= 0;
        else if (mi->rank == 2)
          off = mv[b * T + j] <= 0;
        else
          off = j >= mv[b] || (mi->dims[0] == 2 * B && j < mv[B + b]);
        if (off) row[j] = f;
      }
      if (s->causal)
        for (int64_t j = P + i + 1; j < T; j++) row[j] = f;
    }
  return m;
}

int ox_q_attn_run(ox_kctx *c, void *st) {
  const qattn_state *s = st;
  ox_value *in[9];
  for (size_t i = 0; i < 9; i++) in[i] = ox_kctx_input(c, i);
  ox_value *x = in[0], *w = in[1], *bias = in[2], *xs = in[3], *ws = in[4], *mi = in[5],
           *zx = in[6], *zw = in[7], *past = in[8];
  ox_attn_in qi[8];
  for (size_t i = 0; i < 8; i++)
    qi[i] = in[i] ? (ox_attn_in){in[i]->dtype, in[i]->rank, in[i]->numel, in[i]->dims}
                  : (ox_attn_in){0};
  char why[160];
  const char *bad = ox_qattn_problem(qi, s->heads, why, sizeof why);
  if (*bad) return ox_kctx_fail(c, OX_ERUNTIME, "%s", bad);
  int64_t B = x->dims[0], S = x->dims[1], D = x->dims[2], N3 = w->dims[1], hidden = N3 / 3;
  int64_t H = hidden / s->heads;
  int64_t P = 0;
  if (past) {
    if (past->dtype != OX_FLOAT || past->rank != 5 || past->dims[0] != 2 || past->dims[1] != B ||
        past->dims[2] != s->heads || past->dims[4] != H)
      return ox_kctx_fail(c, OX_ERUNTIME,
                          "past must be float [2, B, num_heads, P, head size] = [2, %lld, %lld, "
                          "P, %lld]",
                          (long long)B, (long long)s->heads, (long long)H);
    P = past->dims[3];
  }
  int64_t T = P + S, NH = s->heads;
  int64_t odims[3] = {B, S, hidden}, pdims[5] = {2, B, NH, T, H};
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, odims, 3);
  if (!y) return OX_ERUNTIME;
  ox_value *present = ox_kctx_output_wanted(c, 1) ? ox_kctx_output(c, 1, OX_FLOAT, pdims, 5) : NULL;
  if (ox_kctx_output_wanted(c, 1) && !present) return OX_ERUNTIME;
  if (y->numel == 0) { /* no new tokens (S = 0): present is past */
    if (present && present->numel)
      memcpy(present->data, past->data, (size_t)present->numel * sizeof(float));
    return OX_OK;
  }
  bool no_mask;
  float *mask = make_mask(c, s, mi, B, S, P, &no_mask);
  if (!mask && !no_mask) return OX_ERUNTIME;
  /* scratch: the projection [B S, 3 hidden], Q [B, N, S, H], K and V
   * [B, N, T, H] each (in present when it is wanted), the heads' output */
  size_t kv = (size_t)(2 * B * NH * T * H);
  float *qkv = malloc((size_t)(B * S * N3) * sizeof(float));
  float *q = malloc((size_t)(B * S * hidden) * sizeof(float));
  float *kvbuf = present ? present->data : malloc((kv ? kv : 1) * sizeof(float));
  float *yh = malloc((size_t)(B * S * hidden) * sizeof(float));
  float *scale = malloc((size_t)N3 * sizeof(float));
  int rc = OX_OK;
  if (!qkv || !q || !kvbuf || !yh || !scale) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  ox_qgemm_b local;
  const ox_qgemm_b *pb = &s->packed;
  ox_err e = {0};
  if (!rc && !s->has_packed) {
    if (ox_qgemm_pack_b(w->data, w->dtype == OX_INT8, D, N3, N3, zw ? zw->data : NULL,
                        zw ? zw->numel : 0, &local, &e))
      rc = ox_kctx_fail(c, e.code, "%s", e.msg);
    pb = &local;
  }
  if (!rc) {
    /* onnxruntime's factors: weight_scale * input_scale, in float */
    float xsv = *(const float *)xs->data;
    for (int64_t n = 0; n < N3; n++)
      scale[n] = ((const float *)ws->data)[ws->numel == 1 ? 0 : n] * xsv;
    uint8_t zxv = zx ? *(const uint8_t *)zx->data : 0;
    ox_qgemm_epi epi = {scale, bias->data, N3, N3, NULL, NULL};
    if (ox_qgemm_scaled_on(NULL, x->data, false, B * S, D, &zxv, 1, pb, &epi, qkv, N3,
                           ox_kctx_pool(c), &e))
      rc = ox_kctx_fail(c, e.code, "%s", e.msg);
  }
  if (!s->has_packed && pb == &local) ox_qgemm_free_b(&local);
  if (!rc) {
    /* split into heads; K and V after the past ones */
    float *kd = kvbuf, *vd = kvbuf + B * NH * T * H;
    const float *pk = past ? past->data : NULL, *pv = past ? pk + B * NH * P * H : NULL;
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < NH; h++) {
        int64_t bh = b * NH + h;
        if (P) {
          memcpy(kd + bh * T * H, pk + bh * P * H, (size_t)(P * H) * sizeof(float));
          memcpy(vd + bh * T * H, pv + bh * P * H, (size_t)(P * H) * sizeof(float));
        }
        for (int64_t i = 0; i < S; i++) {
          const float *row = qkv + (b * S + i) * N3 + h * H;
          memcpy(q + (bh * S + i) * H, row, (size_t)H * sizeof(float));
          memcpy(kd + (bh * T + P + i) * H, row + hidden, (size_t)H * sizeof(float));
          memcpy(vd + (bh * T + P + i) * H, row + 2 * hidden, (size_t)H * sizeof(float));
        }
      }
    ox_attn_core core = {.q = q,
                         .k = kd,
                         .v = vd,
                         .mask = mask,
                         .mstride = {S * T, 0, T},
                         .scale = s->scale != 0.0f ? s->scale : 1.0f / sqrtf((float)H),
                         .B = B,
                         .Hq = NH,
                         .Hk = NH,
                         .Sq = S,
                         .T = T,
                         .D = H,
                         .Dv = H,
                         .y = yh};
    if (ox_attn_core_run(ox_kctx_pool(c), &core)) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  if (!rc) { /* [B, N, S, H] -> [B, S, N H] */
    float *yd = y->data;
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < NH; h++)
        for (int64_t i = 0; i < S; i++)
          memcpy(yd + (b * S + i) * hidden + h * H, yh + ((b * NH + h) * S + i) * H,
                 (size_t)H * sizeof(float));
  }
  free(mask);
  free(qkv);
  free(q);
  if (!present) free(kvbuf);
  free(yh);
  free(scale);
  return rc;
}
