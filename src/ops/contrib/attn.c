/* attn.c - kernels of onnxruntime's com.microsoft Attention and MultiHeadAttention
 * (schemas in src/schema/schema_contrib_attn.c).
 *
 * Both reduce to the same three steps: Q, K, V laid out per head ([B, N, S, H]; past keys and
 * values put in front of K and V), one additive mask [B, 1 or N, S, T] made from the key masks,
 * causality and attention_bias (mask_filter_value where a position is masked, as onnxruntime
 * adds it rather than dropping the position), and the head loop of src/ops/onnx/attention.c
 * (attention_core.h). Attention's input projection is one GEMM against weights packed once at
 * prepare when they are constant. */
#include <float.h>

#include "../../kernels/gemm.h"
#include "../../schema/schema_hand.h"
#include "../fused/attn_fused.h"
#include "../nn_common.h"
#include "../onnx/attention_core.h"
#include "../opcore.h"
#include "attn_shape.h"

typedef struct ca_state {
  int64_t heads;
  int64_t hq, hk, hv; /* q, k, v hidden sizes; 0 until the weights are seen */
  bool causal;
  float filter, scale;
  /* Attention: constant weights packed once [din, hq + hk + hv], constant bias */
  ox_sgemm_bpack *wpack;
  int64_t din;
  float *bias;
} ca_state;

static void ca_release(void *st) {
  ca_state *s = st;
  if (!s) return;
  ox_sgemm_bpack_free(s->wpack);
  free(s->bias);
}

/* A float copy of a float / float16 value (the caller frees it). */
static float *to_f32(const ox_value *v) {
  float *p = malloc(((size_t)v->numel + 1) * sizeof(float));
  if (!p) return NULL;
  if (v->dtype == OX_FLOAT)
    memcpy(p, v->data, (size_t)v->numel * sizeof(float));
  else
    oc_to_f32(v->data, v->dtype, p, v->numel);
  return p;
}

static int common_prepare(const ox_kinfo *info, ca_state **out, ox_err *e) {
  const ox_node *n = info->node;
  ca_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  ox_attn_attrs at;
  char why[96];
  const char *bad = ox_attn_attrs_read(n, &at, why, sizeof why);
  s->heads = at.heads, s->causal = at.causal, s->filter = at.filter, s->scale = at.scale;
  *out = s;
  return *bad ? oc_prep_fail(info, e, "%s", bad) : OX_OK;
}

/* ---- the additive mask ---- */

typedef struct mask_spec {
  const ox_value *keys; /* int32 key mask (mask_index / key_padding_mask), NULL: none */
  const ox_value *bias; /* attention_bias, NULL: none */
  bool causal;
  float filter;
  int64_t B, N, S, T, P;
  const char *keys_name; /* for errors */
} mask_spec;

/* Checks the key mask's shape (attn_shape.h); "" when it fits, else why not. */
static const char *key_mask_problem(const ox_value *m, int64_t B, int64_t S, int64_t T, int64_t P,
                                    bool causal) {
  return ox_attn_key_mask_problem(m->dtype, m->dims, m->rank, B, S, T, P, causal);
}

/* The mask [B, nb, S, T] (*nb 1 or N) the spec asks for, or NULL with OX_OK when none. */
static int mask_build(ox_kctx *c, const mask_spec *m, float **out, int64_t *nb) {
  *out = NULL;
  *nb = 1;
  int64_t B = m->B, N = m->N, S = m->S, T = m->T;
  bool causal = m->causal && S > 1;
  if (!m->keys && !m->bias && !causal) return OX_OK;
  int64_t bd[4] = {1, 1, S, T};
  if (m->bias) {
    const ox_value *ab = m->bias;
    if (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
        (ab->dims[1] != 1 && ab->dims[1] != N) || ab->dims[2] != S || ab->dims[3] != T)
      return ox_kctx_fail(c, OX_ERUNTIME,
                          "attention_bias must be (batch or 1, num_heads or 1, %lld, %lld)",
                          (long long)S, (long long)T);
    memcpy(bd, ab->dims, sizeof bd);
    *nb = bd[1];
  }
  if (m->keys && m->keys->rank == 1)
    for (int64_t b = 0; b < B; b++)
      if (((const int32_t *)m->keys->data)[b] < 0)
        return ox_kctx_fail(c, OX_ERUNTIME, "%s position %d (index %lld) is negative", m->keys_name,
                            ((const int32_t *)m->keys->data)[b], (long long)b);
  float *mk = nn_falloc(B, *nb, S, T);
  if (!mk) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  float f = m->filter;
  /* the first head of each batch: key mask and causality */
  for (int64_t b = 0; b < B; b++) {
    float *base = mk + b * *nb * S * T;
    const ox_value *k = m->keys;
    const int32_t *kd = k ? (const int32_t *)k->data : NULL;
    for (int64_t i = 0; i < S; i++) {
      float *row = base + i * T;
      for (int64_t j = 0; j < T; j++) {
        bool off = false;
        if (k && k->rank == 1) {
          off = j >= kd[b];
          if (k->dims[0] == 2 * B && j < kd[B + b]) off = true;
        } else if (k && k->rank == 2) {
          off = kd[b * T + j] == 0;
        } else if (k && k->rank == 3) {
          off = kd[(b * S + i) * T + j] == 0;
        } else if (k) { /* [B, 1, M, M]: row past + i of batch b */
          int64_t M = k->dims[2];
          off = kd[(b * M + m->P + i) * M + j] == 0;
        }
        /* a future key is dropped outright (the lowest float, as onnxruntime does), a
         * masked one only pushed down: a row whose keys are all masked still averages.
         * The last query row is left unmasked, as onnxruntime's does: with T = P + S
         * nothing follows it anyway, and for cross-attention with more keys than
         * queries that is its result. */
        row[j] = causal && i < S - 1 && j > m->P + i ? -FLT_MAX : off ? f : 0.0f;
      }
    }
    for (int64_t h = 1; h < *nb; h++)
      memcpy(base + h * S * T, base, (size_t)(S * T) * sizeof(float));
  }
  if (m->bias) {
    nn_fbuf fb;
    int rc = nn_fload(c, m->bias, &fb);
    if (rc) {
      free(mk);
      return rc;
    }
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < *nb; h++) {
        float *dst = mk + (b * *nb + h) * S * T;
        const float *src = fb.p + ((bd[0] == 1 ? 0 : b) * bd[1] + h) * S * T;
        for (int64_t i = 0; i < S * T; i++) dst[i] += src[i];
      }
    nn_ffree(&fb);
  }
  *out = mk;
  return OX_OK;
}

/* Writes a float buffer as output idx (dims, rank) in element type dt. */
static int put_out(ox_kctx *c, size_t idx, int32_t dt, const int64_t *dims, size_t rank,
                   const float *src) {
  ox_value *o = ox_kctx_output(c, idx, dt, dims, rank);
  nn_fbuf fo;
  if (!o) return OX_ERUNTIME;
  int rc = nn_fout(c, o, &fo);
  if (rc) return rc;
  memcpy(fo.p, src, (size_t)o->numel * sizeof(float));
  nn_fstore(o, &fo);
  return OX_OK;
}

static bool wanted(ox_kctx *c, size_t i) {
  return ox_kctx_n_outputs(c) > i && ox_kctx_output_wanted(c, i);
}

/* The element type of the qk output: as the model declares it, else the query's. */
static int32_t qk_type(ox_kctx *c, size_t idx, int32_t dt) {
  const ox_kinfo *info = ox_kctx_info(c);
  int32_t t = info->output_dtypes ? info->output_dtypes[idx] : OX_UNDEFINED;
  return t == OX_FLOAT || t == OX_FLOAT16 ? t : dt;
}

/* Runs the heads over q [B, N, S, Hq], k [B, N, T, Hq], v [B, N, T, Hv] with the mask of ms and
 * writes output idx as [B, S, N * Hv] in element type dt. */
static int attend(ox_kctx *c, const ca_state *s, const mask_spec *ms, float *q, const float *k,
                  const float *v, int64_t Hq, int64_t Hv, int32_t dt, size_t qk_idx) {
  int64_t B = ms->B, N = ms->N, S = ms->S, T = ms->T;
  float *mk = NULL, *y = NULL;
  int64_t nb = 1;
  int rc = mask_build(c, ms, &mk, &nb);
  if (rc) return rc;
  y = nn_falloc(B, N, S, Hv);
  float *qk = qk_idx && wanted(c, qk_idx) ? nn_falloc(B, N, S, T) : NULL;
  if (!y || (qk_idx && wanted(c, qk_idx) && !qk)) {
    free(mk), free(y), free(qk);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  ox_attn_core core = {.q = q, .k = k, .v = v, .mask = mk, .y = y, .qk = qk};
  core.mstride[0] = nb * S * T, core.mstride[1] = nb > 1 ? S * T : 0, core.mstride[2] = T;
  core.scale = s->scale != 0.0f ? s->scale : (float)(1.0 / sqrt((double)Hq));
  core.B = B, core.Hq = core.Hk = N, core.Sq = S, core.T = T, core.D = Hq, core.Dv = Hv;
  int64_t od[3] = {B, S, N * Hv};
  ox_value *o;
  nn_fbuf fo = {0};
  if (ox_attn_core_run(ox_kctx_pool(c), &core)) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory for attention scores");
  } else if (!(o = ox_kctx_output(c, 0, dt, od, 3))) {
    rc = OX_ERUNTIME;
  } else if (!(rc = nn_fout(c, o, &fo))) {
    /* [B, N, S, Hv] -> [B, S, N * Hv] */
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < N; h++)
        for (int64_t i = 0; i < S; i++)
          memcpy(fo.p + ((b * S + i) * N + h) * Hv, y + ((b * N + h) * S + i) * Hv,
                 (size_t)Hv * sizeof(float));
    nn_fstore(o, &fo);
    int64_t qd[4] = {B, N, S, T};
    if (qk) rc = put_out(c, qk_idx, qk_type(c, qk_idx, dt), qd, 4, qk);
  }
  free(mk), free(y), free(qk);
  return rc;
}

/* ==== Attention ==== */

/* mask_index absent, [B] end positions (none negative) or [B, T] 0/1: a key
 * mask the fused attention core takes as one row per batch */
static bool key_mask_fast(const ox_value *mi, int64_t B) {
  if (!mi) return true;
  if (mi->dtype != OX_INT32) return false;
  if (mi->rank == 2) return true;
  if (mi->rank != 1 || mi->dims[0] != B) return false;
  for (int64_t b = 0; b < B; b++)
    if (((const int32_t *)mi->data)[b] < 0) return false;
  return true;
}

/* The common encoder case: no past, no causality, no attention_bias, a key
 * mask at most, float32. The heads are read where the projection wrote
 * them ([B, S, 3 * hidden], bias added in place) and written straight into
 * the output by the fused attention core (src/ops/fused/attn_fused.h). */
static int attend_packed(ox_kctx *c, const ca_state *s, float *qkv, const float *bias,
                         const ox_value *mi, int64_t B, int64_t S, int64_t N, int64_t Hq) {
  int64_t hid = N * Hq, width = 3 * hid;
  if (bias)
    for (int64_t r = 0; r < B * S; r++)
      for (int64_t d = 0; d < width; d++) qkv[r * width + d] += bias[d];
  float *mk = NULL;
  if (mi) {
    mk = nn_falloc(B, S, 1, 1);
    if (!mk) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    const int32_t *kd = mi->data;
    for (int64_t b = 0; b < B; b++)
      for (int64_t j = 0; j < S; j++)
        mk[b * S + j] = (mi->rank == 1 ? j >= kd[b] : kd[b * S + j] == 0) ? s->filter : 0.0f;
  }
  int64_t od[3] = {B, S, hid};
  ox_value *o = ox_kctx_output(c, 0, OX_FLOAT, od, 3);
  if (!o) {
    free(mk);
    return OX_ERUNTIME;
  }
  ox_mha_args a = {.q = qkv,
                   .k = qkv + hid,
                   .v = qkv + 2 * hid,
                   .q_ld = width,
                   .kv_ld = width,
                   .y = o->data,
                   .y_ld = hid,
                   .B = B,
                   .heads = N,
                   .dim = Hq,
                   .Sq = S,
                   .Sk = S,
                   .mask = mk,
                   .mst = {S, 0, 0, 1},
                   .scale = s->scale != 0.0f ? s->scale : (float)(1.0 / sqrt((double)Hq))};
  int rc = ox_mha_run(ox_kctx_pool(c), &a);
  free(mk);
  return rc ? ox_kctx_fail(c, OX_ENOMEM, "out of memory for attention scores") : OX_OK;
}

static int attention_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  ca_state *s = NULL;
  int rc = common_prepare(info, &s, e);
  *state = s;
  if (rc) return rc;
  const ox_node *n = info->node;
  const ox_attr *qkv = ox_node_attr(n, "qkv_hidden_sizes");
  if (qkv) {
    if (qkv->n_ints != 3)
      return oc_prep_fail(info, e, "qkv_hidden_sizes must have 3 values, got %zu", qkv->n_ints);
    s->hq = qkv->ints[0], s->hk = qkv->ints[1], s->hv = qkv->ints[2];
    if (s->hq <= 0 || s->hk <= 0 || s->hv <= 0 || s->hq != s->hk)
      return oc_prep_fail(info, e, "qkv_hidden_sizes must be positive with q equal to k");
  }
  const ox_value *W = info->const_inputs ? info->const_inputs[1] : NULL;
  if (W) {
    if (W->rank != 2 || (W->dtype != OX_FLOAT && W->dtype != OX_FLOAT16))
      return oc_prep_fail(info, e, "weights must be a 2-D float or float16 tensor");
    int64_t width = W->dims[1];
    if (!qkv) {
      if (width % 3)
        return oc_prep_fail(info, e, "weights width %lld is not 3 * hidden size", (long long)width);
      s->hq = s->hk = s->hv = width / 3;
    } else if (s->hq + s->hk + s->hv != width) {
      return oc_prep_fail(info, e,
                          "qkv_hidden_sizes (%lld, %lld, %lld) do not sum to the weights width "
                          "%lld",
                          (long long)s->hq, (long long)s->hk, (long long)s->hv, (long long)width);
    }
  }
  if (s->hq && (s->hq % s->heads || s->hv % s->heads))
    return oc_prep_fail(info, e, "num_heads %lld does not divide the hidden sizes (%lld, %lld)",
                        (long long)s->heads, (long long)s->hq, (long long)s->hv);
  if (W) {
    float *w = to_f32(W);
    if (!w) return ox_err_set(e, OX_ENOMEM, "out of memory");
    s->wpack = ox_sgemm_pack_b(false, W->dims[0], W->dims[1], w, W->dims[1], e);
    free(w);
    if (!s->wpack) return oc_prep_fail(info, e, "cannot pack the weights: %s", e->msg);
    s->din = W->dims[0];
    info->consumed[1] = true;
  }
  const ox_value *Bv = info->n_inputs > 2 && info->const_inputs ? info->const_inputs[2] : NULL;
  if (Bv && s->hq) {
    if (Bv->rank != 1 || Bv->dims[0] != s->hq + s->hk + s->hv)
      return oc_prep_fail(info, e, "bias must be 1-D of length %lld",
                          (long long)(s->hq + s->hk + s->hv));
    if (!(s->bias = to_f32(Bv))) return ox_err_set(e, OX_ENOMEM, "out of memory");
    info->consumed[2] = true;
  }
  return OX_OK;
}

static int attention_run(ox_kctx *c, void *st) {
  const ca_state *s = st;
  ox_value *X = ox_kctx_input(c, 0), *W = ox_kctx_input(c, 1), *Bi = ox_kctx_input(c, 2);
  ox_value *MI = ox_kctx_input(c, 3), *PA = ox_kctx_input(c, 4), *AB = ox_kctx_input(c, 5);
  if (!X || !nn_is_real(X->dtype) || X->rank != 3)
    return ox_kctx_fail(c, OX_ERUNTIME, "input must be a 3-D float tensor (batch, seq, hidden)");
  if (ox_kctx_input(c, 6))
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "past_sequence_length is only used with past_present_share_buffer");
  int64_t B = X->dims[0], S = X->dims[1], din = X->dims[2], N = s->heads;
  int64_t hq = s->hq, hk = s->hk, hv = s->hv;
  if (!s->wpack) {
    if (!W || W->rank != 2 || !nn_is_real(W->dtype))
      return ox_kctx_fail(c, OX_ERUNTIME, "weights must be a 2-D float tensor");
    if (!hq) {
      if (W->dims[1] % 3)
        return ox_kctx_fail(c, OX_ERUNTIME, "weights width %lld is not 3 * hidden size",
                            (long long)W->dims[1]);
      hq = hk = hv = W->dims[1] / 3;
      if (hq % N)
        return ox_kctx_fail(c, OX_ERUNTIME, "num_heads %lld does not divide the hidden size %lld",
                            (long long)N, (long long)hq);
    } else if (hq + hk + hv != W->dims[1]) {
      return ox_kctx_fail(c, OX_ERUNTIME, "qkv_hidden_sizes do not sum to the weights width %lld",
                          (long long)W->dims[1]);
    }
  }
  int64_t wd = s->wpack ? s->din : W->dims[0], width = hq + hk + hv;
  if (din != wd)
    return ox_kctx_fail(c, OX_ERUNTIME, "input hidden size %lld does not match weights rows %lld",
                        (long long)din, (long long)wd);
  if (!s->bias && Bi && (Bi->rank != 1 || Bi->dims[0] != width))
    return ox_kctx_fail(c, OX_ERUNTIME, "bias must be 1-D of length %lld", (long long)width);
  int64_t Hq = hq / N, Hv = hv / N, P = 0;
  if (PA) {
    if (PA->rank != 5 || PA->dims[0] != 2 || PA->dims[1] != B || PA->dims[2] != N ||
        PA->dims[4] != Hq || Hq != Hv)
      return ox_kctx_fail(c, OX_ERUNTIME, "past must be (2, %lld, %lld, past_length, %lld)",
                          (long long)B, (long long)N, (long long)Hq);
    P = PA->dims[3];
  }
  if (wanted(c, 1) && hk != hv)
    return ox_kctx_fail(c, OX_ERUNTIME, "present needs the same k and v hidden sizes");
  int64_t T = P + S;
  if (MI) {
    const char *why = key_mask_problem(MI, B, S, T, P, s->causal);
    if (*why) return ox_kctx_fail(c, OX_ERUNTIME, "mask_index %s", why);
  }
  nn_fbuf fx = {0}, fw = {0}, fb = {0}, fp = {0};
  float *qkv = NULL, *q = NULL, *k = NULL, *v = NULL;
  int rc;
  if ((rc = nn_fload(c, X, &fx)) || (!s->wpack && (rc = nn_fload(c, W, &fw))) ||
      (!s->bias && Bi && (rc = nn_fload(c, Bi, &fb))) || (PA && (rc = nn_fload(c, PA, &fp))))
    goto done;
  bool fast = X->dtype == OX_FLOAT && !PA && !AB && !s->causal && !wanted(c, 1) && hq == hk &&
              hk == hv && key_mask_fast(MI, B);
  qkv = nn_falloc(B, S, width, 1);
  if (!fast) {
    q = nn_falloc(B, N, S, Hq);
    k = nn_falloc(B, N, T, Hq + Hv);
    v = k ? k + B * N * T * Hq : NULL;
  }
  if (!qkv || (!fast && (!q || !k))) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  ox_thread_pool *pool = ox_kctx_pool(c);
  if (s->wpack)
    ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_WHOLE,
                            .M = B * S,
                            .N = width,
                            .A = fx.p,
                            .lda = din,
                            .bp = s->wpack,
                            .C = qkv,
                            .ldc = width,
                            .pool = pool});
  else
    ox_gemm(&(ox_gemm_desc){.M = B * S,
                            .N = width,
                            .K = din,
                            .A = fx.p,
                            .lda = din,
                            .B = fw.p,
                            .ldb = width,
                            .alpha = 1.0f,
                            .C = qkv,
                            .ldc = width,
                            .pool = pool});
  const float *bias = s->bias ? s->bias : Bi ? fb.p : NULL;
  if (fast) {
    rc = attend_packed(c, s, qkv, bias, MI, B, S, N, Hq);
    goto done;
  }
  /* per head, past rows first */
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < N; h++) {
      int64_t bh = b * N + h;
      if (P) {
        memcpy(k + bh * T * Hq, fp.p + bh * P * Hq, (size_t)(P * Hq) * sizeof(float));
        memcpy(v + bh * T * Hv, fp.p + (B * N + bh) * P * Hv, (size_t)(P * Hv) * sizeof(float));
      }
      for (int64_t i = 0; i < S; i++) {
        const float *row = qkv + (b * S + i) * width;
        float *qd = q + (bh * S + i) * Hq, *kd = k + (bh * T + P + i) * Hq,
              *vd = v + (bh * T + P + i) * Hv;
        for (int64_t d = 0; d < Hq; d++) {
          qd[d] = row[h * Hq + d] + (bias ? bias[h * Hq + d] : 0.0f);
          kd[d] = row[hq + h * Hq + d] + (bias ? bias[hq + h * Hq + d] : 0.0f);
        }
        for (int64_t d = 0; d < Hv; d++)
          vd[d] = row[2 * hq + h * Hv + d] + (bias ? bias[2 * hq + h * Hv + d] : 0.0f);
      }
    }
  if (wanted(c, 1)) { /* k and v are one buffer: present as it stands */
    int64_t pd[5] = {2, B, N, T, Hq};
    if ((rc = put_out(c, 1, X->dtype, pd, 5, k))) goto done;
  }
  mask_spec ms = {MI, AB, s->causal, s->filter, B, N, S, T, P, "mask_index"};
  rc = attend(c, s, &ms, q, k, v, Hq, Hv, X->dtype, 0);
done:
  nn_ffree(&fx), nn_ffree(&fw), nn_ffree(&fb), nn_ffree(&fp);
  free(qkv), free(q), free(k);
  return rc;
}

/* ==== MultiHeadAttention ==== */

static int mha_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  ca_state *s = NULL;
  int rc = common_prepare(info, &s, e);
  *state = s;
  return rc;
}

/* x [B, L, N * H] (+ bias) into dst [B, N, T, H] at rows off.. of each head */
static void split_heads(const float *x, const float *bias, int64_t B, int64_t L, int64_t N,
                        int64_t H, int64_t T, int64_t off, float *dst) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < L; i++)
      for (int64_t h = 0; h < N; h++) {
        const float *src = x + ((b * L + i) * N + h) * H;
        float *d = dst + ((b * N + h) * T + off + i) * H;
        for (int64_t j = 0; j < H; j++) d[j] = src[j] + (bias ? bias[h * H + j] : 0.0f);
      }
}

/* x [B, L, N, parts, H], part p (+ bias) into dst [B, N, T, H] at rows off.. */
static void split_packed(const float *x, const float *bias, int64_t B, int64_t L, int64_t N,
                         int64_t parts, int64_t p, int64_t H, int64_t T, int64_t off, float *dst) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < L; i++)
      for (int64_t h = 0; h < N; h++) {
        const float *src = x + (((b * L + i) * N + h) * parts + p) * H;
        float *d = dst + ((b * N + h) * T + off + i) * H;
        for (int64_t j = 0; j < H; j++) d[j] = src[j] + (bias ? bias[h * H + j] : 0.0f);
      }
}

/* past [B, N, P, H] into dst [B, N, T, H] rows 0..P */
static void put_past(const float *past, int64_t BN, int64_t P, int64_t H, int64_t T, float *dst) {
  for (int64_t i = 0; i < BN; i++)
    memcpy(dst + i * T * H, past + i * P * H, (size_t)(P * H) * sizeof(float));
}

/* ---- MultiHeadAttention's beam-search step: past_key / past_value are buffers [B, N, M, H]
 * of which the first past_sequence_length positions are filled; the new key and value go to
 * that position of present_key / present_value (the buffers again), and beam j of batch i
 * reads past position t from the beam cache_indirection[i, j, t] names. ---- */
typedef struct beam_step {
  ox_value *Q, *K, *V, *Bi, *PK, *PV, *PSL, *CI;
  int64_t B, Hq, Hv;
} beam_step;

static int beam_run(ox_kctx *c, const ca_state *s, const beam_step *st) {
  int64_t B = st->B, N = s->heads, Hq = st->Hq, Hv = st->Hv;
  const ox_value *PK = st->PK, *PV = st->PV, *CI = st->CI; /* shapes checked by mha_run */
  int64_t M = PK->dims[2];
  int64_t P = ((const int32_t *)st->PSL->data)[0];
  if (P < 0 || P >= M)
    return ox_kctx_fail(c, OX_ERUNTIME, "past_sequence_length %lld is outside [0, %lld)",
                        (long long)P, (long long)M);
  int64_t beams = CI->dims[1], T = P + 1;
  const int32_t *ci = CI->data;
  for (int64_t i = 0; i < B * M; i++)
    if (i % M < P && (ci[i] < 0 || ci[i] >= beams))
      return ox_kctx_fail(c, OX_ERUNTIME, "cache_indirection value %d is not a beam of %lld", ci[i],
                          (long long)beams);
  nn_fbuf fq = {0}, fk = {0}, fv = {0}, fb = {0}, fpk = {0}, fpv = {0};
  float *q = NULL, *k = NULL, *v = NULL, *nk = NULL, *nv = NULL;
  int rc;
  if ((rc = nn_fload(c, st->Q, &fq)) || (rc = nn_fload(c, st->K, &fk)) ||
      (rc = nn_fload(c, st->V, &fv)) || (st->Bi && (rc = nn_fload(c, st->Bi, &fb))) ||
      (rc = nn_fload(c, PK, &fpk)) || (rc = nn_fload(c, PV, &fpv)))
    goto done;
  q = nn_falloc(B, N, 1, Hq);
  nk = nn_falloc(B, N, 1, Hq);
  nv = nn_falloc(B, N, 1, Hv);
  k = nn_falloc(B, N, T, Hq);
  v = nn_falloc(B, N, T, Hv);
  if (!q || !nk || !nv || !k || !v) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  const float *bias = st->Bi ? fb.p : NULL;
  split_heads(fq.p, bias, B, 1, N, Hq, 1, 0, q);
  split_heads(fk.p, bias ? bias + N * Hq : NULL, B, 1, N, Hq, 1, 0, nk);
  split_heads(fv.p, bias ? bias + 2 * N * Hq : NULL, B, 1, N, Hv, 1, 0, nv);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < N; h++) {
      int64_t bh = b * N + h;
      for (int64_t t = 0; t < P; t++) {
        int64_t src = (b / beams) * beams + ci[b * M + t];
        memcpy(k + (bh * T + t) * Hq, fpk.p + ((src * N + h) * M + t) * Hq,
               (size_t)Hq * sizeof(float));
        memcpy(v + (bh * T + t) * Hv, fpv.p + ((src * N + h) * M + t) * Hv,
               (size_t)Hv * sizeof(float));
      }
      memcpy(k + (bh * T + P) * Hq, nk + bh * Hq, (size_t)Hq * sizeof(float));
      memcpy(v + (bh * T + P) * Hv, nv + bh * Hv, (size_t)Hv * sizeof(float));
    }
  /* the presents: the buffers with this step's key and value at position P */
  int32_t dt = st->Q->dtype;
  for (int pass = 0; pass < 2 && !rc; pass++) {
    int64_t hd = pass ? Hv : Hq;
    const ox_value *past = pass ? PV : PK;
    if (!wanted(c, 1 + (size_t)pass)) continue;
    float *pres = nn_falloc(B * N, M, hd, 1);
    if (!pres) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      break;
    }
    memcpy(pres, (pass ? fpv.p : fpk.p), (size_t)(B * N * M * hd) * sizeof(float));
    for (int64_t bh = 0; bh < B * N; bh++)
      memcpy(pres + (bh * M + P) * hd, (pass ? nv : nk) + bh * hd, (size_t)hd * sizeof(float));
    rc = put_out(c, 1 + (size_t)pass, dt, past->dims, 4, pres);
    free(pres);
  }
  if (rc) goto done;
  mask_spec ms = {NULL, NULL, false, s->filter, B, N, 1, T, P, "key_padding_mask"};
  rc = attend(c, s, &ms, q, k, v, Hq, Hv, dt, 3);
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv), nn_ffree(&fb), nn_ffree(&fpk), nn_ffree(&fpv);
  free(q), free(k), free(v), free(nk), free(nv);
  return rc;
}

static int mha_run(ox_kctx *c, void *st) {
  const ca_state *s = st;
  ox_value *Q = ox_kctx_input(c, 0), *K = ox_kctx_input(c, 1), *V = ox_kctx_input(c, 2);
  ox_value *Bi = ox_kctx_input(c, 3), *KM = ox_kctx_input(c, 4), *AB = ox_kctx_input(c, 5);
  ox_value *PK = ox_kctx_input(c, 6), *PV = ox_kctx_input(c, 7);
  int64_t N = s->heads;
  if (!Q || !nn_is_real(Q->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "query must be a float tensor");
  ox_attn_in ai[10];
  for (size_t i = 0; i < 10; i++) {
    const ox_value *x = ox_kctx_input(c, i);
    ai[i] = x ? (ox_attn_in){x->dtype, x->rank, x->numel, x->dims} : (ox_attn_in){0};
  }
  ox_mha_shape sh;
  bool beam;
  int64_t P;
  char why[160];
  const char *bad = ox_mha_inputs_problem(ai, 10, N, s->causal, &sh, &beam, &P, why, sizeof why);
  if (*bad) return ox_kctx_fail(c, OX_ERUNTIME, "%s", bad);
  int form = sh.form;
  int64_t B = sh.B, S = sh.S, L = sh.L, Hq = sh.Hq, Hv = sh.Hv;
  if (beam) {
    beam_step bs = {Q, K, V, Bi, PK, PV, ox_kctx_input(c, 8), ox_kctx_input(c, 9), B, Hq, Hv};
    return beam_run(c, s, &bs);
  }
  int64_t T = P + L;
  nn_fbuf fq = {0}, fk = {0}, fv = {0}, fb = {0}, fpk = {0}, fpv = {0};
  float *q = NULL, *k = NULL, *v = NULL;
  int rc;
  if ((rc = nn_fload(c, Q, &fq)) || (K && (rc = nn_fload(c, K, &fk))) ||
      (V && (rc = nn_fload(c, V, &fv))) || (Bi && (rc = nn_fload(c, Bi, &fb))) ||
      (P && ((rc = nn_fload(c, PK, &fpk)) || (rc = nn_fload(c, PV, &fpv)))))
    goto done;
  q = nn_falloc(B, N, S, Hq);
  k = nn_falloc(B, N, T, Hq);
  v = nn_falloc(B, N, T, Hv);
  if (!q || !k || !v) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  const float *bq = Bi ? fb.p : NULL, *bk = Bi ? fb.p + N * Hq : NULL,
              *bv = Bi ? fb.p + 2 * N * Hq : NULL;
  if (P) {
    put_past(fpk.p, B * N, P, Hq, T, k);
    put_past(fpv.p, B * N, P, Hv, T, v);
  }
  switch (form) {
    case OX_MHA_PACKED_QKV:
      split_packed(fq.p, bq, B, S, N, 3, 0, Hq, S, 0, q);
      split_packed(fq.p, bk, B, S, N, 3, 1, Hq, T, P, k);
      split_packed(fq.p, bv, B, S, N, 3, 2, Hv, T, P, v);
      break;
    case OX_MHA_PACKED_KV:
      split_heads(fq.p, bq, B, S, N, Hq, S, 0, q);
      split_packed(fk.p, NULL, B, L, N, 2, 0, Hq, T, P, k);
      split_packed(fk.p, NULL, B, L, N, 2, 1, Hv, T, P, v);
      break;
    case OX_MHA_SEPARATE:
      split_heads(fq.p, bq, B, S, N, Hq, S, 0, q);
      split_heads(fk.p, bk, B, L, N, Hq, T, P, k);
      split_heads(fv.p, bv, B, L, N, Hv, T, P, v);
      break;
    default: /* OX_MHA_BNSH: already in heads */
      split_heads(fq.p, bq, B, S, N, Hq, S, 0, q);
      for (int64_t i = 0; i < B * N; i++) {
        memcpy(k + (i * T + P) * Hq, fk.p + i * L * Hq, (size_t)(L * Hq) * sizeof(float));
        memcpy(v + (i * T + P) * Hv, fv.p + i * L * Hv, (size_t)(L * Hv) * sizeof(float));
      }
      break;
  }
  int32_t dt = Q->dtype;
  int64_t pk[4] = {B, N, T, Hq}, pv[4] = {B, N, T, Hv};
  if (wanted(c, 1) && (rc = put_out(c, 1, dt, pk, 4, k))) goto done;
  if (wanted(c, 2) && (rc = put_out(c, 2, dt, pv, 4, v))) goto done;
  mask_spec ms = {KM, AB, s->causal, s->filter, B, N, S, T, P, "key_padding_mask"};
  rc = attend(c, s, &ms, q, k, v, Hq, Hv, dt, 3);
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv), nn_ffree(&fb), nn_ffree(&fpk), nn_ffree(&fpv);
  free(q), free(k), free(v);
  return rc;
}

const ox_kernel_def ox_ops_contrib_attn[] = {
    {OX_CONTRIB_DOMAIN, "Attention", 1, 1, attention_prepare, attention_run, ca_release},
    {OX_CONTRIB_DOMAIN, "MultiHeadAttention", 1, 1, mha_prepare, mha_run, ca_release},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
