/* attention.c - Attention (23, 24, 25), RotaryEmbedding, LinearAttention,
 * CausalConvWithState. Computation in float32; the score matrix of one
 * (batch, head) is one GEMM, so is its product with V. */
#include <stdatomic.h>

#include "../../kernels/gemm.h"
#include "../nn_common.h"
#include "attention_core.h"

typedef struct attn_attrs {
  int version;
  bool is_causal, has_scale;
  int64_t q_heads, kv_heads, mode, left_win, right_win;
  float scale, softcap;
  /* RotaryEmbedding */
  bool interleaved;
  int64_t num_heads, rot_dim;
  /* LinearAttention */
  int update_rule;
  /* CausalConvWithState */
  nn_act act;
} attn_attrs;

static int attn_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  attn_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->version = (int)info->since_version;
  a->is_causal = ox_node_attr_int(n, "is_causal", 0) != 0;
  a->q_heads = ox_node_attr_int(n, "q_num_heads", 0);
  a->kv_heads = ox_node_attr_int(n, "kv_num_heads", 0);
  a->mode = ox_node_attr_int(n, "qk_matmul_output_mode", 0);
  a->left_win = ox_node_attr_int(n, "left_window_size", -1);
  a->right_win = ox_node_attr_int(n, "right_window_size", -1);
  const ox_attr *sc = ox_node_attr(n, "scale");
  a->has_scale = sc != NULL;
  a->scale = sc ? sc->f : 0.0f;
  a->softcap = ox_node_attr_float(n, "softcap", 0.0f);
  a->interleaved = ox_node_attr_int(n, "interleaved", 0) != 0;
  a->num_heads = ox_node_attr_int(n, "num_heads", 0);
  a->rot_dim = ox_node_attr_int(n, "rotary_embedding_dim", 0);
  if (a->mode < 0 || a->mode > 3)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): qk_matmul_output_mode must be 0..3",
                      n->name ? n->name : "", n->op_type);
  *state = a;
  return OX_OK;
}

/* ---- Attention ---- */

/* A [B, H, S, D] float view of Q, K or V given as 4-D or 3-D [B, S, H*D]. */
static int to_bhsd(ox_kctx *c, const ox_value *v, int64_t heads, const char *what, int64_t d[4],
                   float **out) {
  *out = NULL;
  if (v->rank == 4) {
    memcpy(d, v->dims, 4 * sizeof(int64_t));
  } else if (v->rank == 3) {
    if (heads <= 0 || v->dims[2] % heads != 0)
      return ox_kctx_fail(c, OX_ERUNTIME, "%s: 3-D input needs num_heads dividing %lld", what,
                          (long long)v->dims[2]);
    d[0] = v->dims[0], d[1] = heads, d[2] = v->dims[1], d[3] = v->dims[2] / heads;
  } else {
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must have rank 3 or 4", what);
  }
  nn_fbuf f;
  int rc = nn_fload(c, v, &f);
  if (rc) return rc;
  float *p = malloc(((size_t)v->numel + 1) * sizeof(float));
  if (!p) {
    nn_ffree(&f);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  if (v->rank == 4) {
    memcpy(p, f.p, (size_t)v->numel * sizeof(float));
  } else {
    for (int64_t b = 0; b < d[0]; b++)
      for (int64_t s = 0; s < d[2]; s++)
        for (int64_t h = 0; h < d[1]; h++)
          memcpy(p + ((b * d[1] + h) * d[2] + s) * d[3], f.p + ((b * d[2] + s) * d[1] + h) * d[3],
                 (size_t)d[3] * sizeof(float));
  }
  nn_ffree(&f);
  *out = p;
  return OX_OK;
}

/* Concatenates past [B, H, P, D] and cur [B, H, S, D] along the sequence. */
static float *concat_seq(const float *past, int64_t P, const float *cur, int64_t S, int64_t BH,
                         int64_t D) {
  float *o = nn_falloc(BH, P + S, D, 1);
  if (!o) return NULL;
  for (int64_t i = 0; i < BH; i++) {
    if (P) memcpy(o + i * (P + S) * D, past + i * P * D, (size_t)(P * D) * sizeof(float));
    memcpy(o + (i * (P + S) + P) * D, cur + i * S * D, (size_t)(S * D) * sizeof(float));
  }
  return o;
}

static int write_out(ox_kctx *c, size_t idx, int32_t dt, const int64_t *dims, size_t rank,
                     const float *src) {
  ox_value *o = ox_kctx_output(c, idx, dt, dims, rank);
  if (!o) return OX_ERUNTIME;
  if (dt == OX_FLOAT)
    memcpy(o->data, src, (size_t)o->numel * sizeof(float));
  else
    for (int64_t i = 0; i < o->numel; i++) nn_set_real(o->data, dt, i, src[i]);
  return OX_OK;
}

/* One (batch, head) of Attention: scores, softcap, bias, softmax, times V. */
typedef struct attn_job {
  const attn_attrs *a;
  const float *q, *k, *v, *mask;
  const int64_t *mstride, *nonpad;
  float *y, *qk;
  float sq;
  int64_t Hq, Hk, Sq, T, D, Dv, Lm, past; /* past < 0: no past_key */
  bool mbool;
  atomic_int failed;
} attn_job;

static void attn_heads(void *arg, int64_t bh0, int64_t bh1) {
  attn_job *jb = arg;
  const attn_attrs *a = jb->a;
  int64_t Hq = jb->Hq, Hk = jb->Hk, Sq = jb->Sq, T = jb->T, D = jb->D, Dv = jb->Dv;
  float *sc = nn_falloc(Sq, T, 1, 1);
  if (!sc) {
    atomic_store(&jb->failed, 1);
    return;
  }
  for (int64_t bh = bh0; bh < bh1; bh++) {
    int64_t b = bh / Hq, h = bh % Hq, hk = h / (Hq / Hk);
    int64_t np = jb->nonpad ? jb->nonpad[b] : T;
    int64_t offset = jb->past >= 0 ? jb->past : jb->nonpad ? np - Sq : 0;
    const float *qs = jb->q + bh * Sq * D;
    const float *ks = jb->k + (b * Hk + hk) * T * D, *vs = jb->v + (b * Hk + hk) * T * Dv;
    /* scores = (Q sqrt(s)) (K sqrt(s))^T = s Q K^T */
    ox_gemm(&(ox_gemm_desc){.M = Sq, .N = T, .K = D, .A = qs, .lda = D, .B = ks, .ldb = D,
                            .trans_b = true, .alpha = jb->sq, .C = sc, .ldc = T});
    float *qko = jb->qk ? jb->qk + bh * Sq * T : NULL;
    if (qko && a->mode == 0) memcpy(qko, sc, (size_t)(Sq * T) * sizeof(float));
    if (a->softcap > 0)
      for (int64_t i = 0; i < Sq * T; i++) sc[i] = a->softcap * tanhf(sc[i] / a->softcap);
    if (qko && a->mode == 1) memcpy(qko, sc, (size_t)(Sq * T) * sizeof(float));
    const int64_t *ms = jb->mstride;
    for (int64_t i = 0; i < Sq; i++) {
      float *row = sc + i * T;
      int64_t p = offset + i;
      const float *mrow = jb->mask ? jb->mask + b * ms[0] + h * ms[1] + i * ms[2] : NULL;
      for (int64_t j = 0; j < T; j++) {
        bool off = false;
        if (a->is_causal && j > p) off = true;
        if (jb->nonpad && j >= np) off = true;
        if (a->left_win >= 0 && j < p - a->left_win) off = true;
        if (a->right_win >= 0 && j > p + a->right_win) off = true;
        if (mrow) {
          if (j >= jb->Lm)
            off = true;
          else if (jb->mbool) {
            if (mrow[j] == 0.0f) off = true;
          } else {
            row[j] += mrow[j];
          }
        }
        if (off) row[j] = -INFINITY;
      }
    }
    if (qko && a->mode == 2) memcpy(qko, sc, (size_t)(Sq * T) * sizeof(float));
    for (int64_t i = 0; i < Sq; i++) {
      float *row = sc + i * T, mx = -INFINITY;
      for (int64_t j = 0; j < T; j++)
        if (row[j] > mx) mx = row[j];
      if (mx == -INFINITY || mx != mx) { /* fully masked: zero row */
        memset(row, 0, (size_t)T * sizeof(float));
        continue;
      }
      double s = 0.0;
      for (int64_t j = 0; j < T; j++) {
        row[j] = expf(row[j] - mx);
        s += row[j];
      }
      for (int64_t j = 0; j < T; j++) row[j] = (float)(row[j] / s);
    }
    if (qko && a->mode == 3) memcpy(qko, sc, (size_t)(Sq * T) * sizeof(float));
    ox_gemm(&(ox_gemm_desc){.M = Sq, .N = Dv, .K = T, .A = sc, .lda = T, .B = vs, .ldb = Dv,
                            .alpha = 1.0f, .C = jb->y + bh * Sq * Dv, .ldc = Dv});
  }
  free(sc);
}

static int attention_run(ox_kctx *c, void *st) {
  const attn_attrs *a = st;
  ox_value *Q = ox_kctx_input(c, 0), *K = ox_kctx_input(c, 1), *V = ox_kctx_input(c, 2);
  ox_value *M = ox_kctx_input(c, 3), *PK = ox_kctx_input(c, 4), *PV = ox_kctx_input(c, 5);
  ox_value *NP = a->version >= 24 ? ox_kctx_input(c, 6) : NULL;
  if (!Q || !K || !V || !nn_is_real(Q->dtype) || !nn_is_real(K->dtype) || !nn_is_real(V->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "Q, K and V must be float tensors");
  if ((PK == NULL) != (PV == NULL))
    return ox_kctx_fail(c, OX_ERUNTIME, "past_key and past_value must be given together");
  int64_t qd[4], kd[4], vd[4];
  float *q = NULL, *k = NULL, *v = NULL, *kall = NULL, *vall = NULL, *mask = NULL;
  float *y = NULL, *qk = NULL;
  int64_t *mstride = NULL;
  int rc;
  if ((rc = to_bhsd(c, Q, a->q_heads, "Q", qd, &q)) ||
      (rc = to_bhsd(c, K, a->kv_heads, "K", kd, &k)) ||
      (rc = to_bhsd(c, V, a->kv_heads, "V", vd, &v)))
    goto done;
  int64_t B = qd[0], Hq = qd[1], Sq = qd[2], D = qd[3], Hk = kd[1], Skv = kd[2], Dv = vd[3];
  if (kd[0] != B || vd[0] != B || kd[3] != D || vd[1] != Hk || vd[2] != Skv) {
    rc = ox_kctx_fail(c, OX_ERUNTIME, "Q, K, V shapes are inconsistent");
    goto done;
  }
  if (Hk <= 0 || Hq % Hk != 0) {
    rc = ox_kctx_fail(c, OX_ERUNTIME, "q heads (%lld) must be a multiple of kv heads (%lld)",
                      (long long)Hq, (long long)Hk);
    goto done;
  }
  int64_t P = 0;
  if (PK) {
    if (PK->rank != 4 || PV->rank != 4 || PK->dims[0] != B || PK->dims[1] != Hk ||
        PK->dims[3] != D || PV->dims[0] != B || PV->dims[1] != Hk || PV->dims[3] != Dv ||
        PV->dims[2] != PK->dims[2]) {
      rc = ox_kctx_fail(c, OX_ERUNTIME, "past_key/past_value shapes are inconsistent");
      goto done;
    }
    P = PK->dims[2];
    nn_fbuf fk, fv;
    if ((rc = nn_fload(c, PK, &fk))) goto done;
    if ((rc = nn_fload(c, PV, &fv))) {
      nn_ffree(&fk);
      goto done;
    }
    kall = concat_seq(fk.p, P, k, Skv, B * Hk, D);
    vall = concat_seq(fv.p, P, v, Skv, B * Hk, Dv);
    nn_ffree(&fk);
    nn_ffree(&fv);
    if (!kall || !vall) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
  } else {
    kall = k, vall = v, k = v = NULL;
  }
  int64_t T = P + Skv;
  if (NP && (NP->numel != B || NP->dtype != OX_INT64)) {
    rc = ox_kctx_fail(c, OX_ERUNTIME, "nonpad_kv_seqlen must be int64 [batch_size]");
    goto done;
  }
  /* mask: broadcast (.., Sq, Lm) to (B, Hq, Sq, Lm); positions >= Lm are -inf */
  int64_t Lm = T;
  bool mbool = false;
  if (M) {
    if (M->rank < 1 || M->rank > 4) {
      rc = ox_kctx_fail(c, OX_ERUNTIME, "attn_mask must have rank 1..4");
      goto done;
    }
    int64_t md[4] = {1, 1, 1, 1}, want[4] = {B, Hq, Sq, 0};
    for (size_t i = 0; i < M->rank; i++) md[4 - M->rank + i] = M->dims[i];
    Lm = md[3];
    mstride = calloc(4, sizeof(int64_t));
    if (!mstride) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
    int64_t s = 1;
    for (int i = 3; i >= 0; i--) {
      if (i < 3 && md[i] != 1 && md[i] != want[i]) {
        rc = ox_kctx_fail(c, OX_ERUNTIME, "attn_mask does not broadcast to (B, heads, Sq, T)");
        goto done;
      }
      mstride[i] = md[i] == 1 && i < 3 ? 0 : s;
      s *= md[i];
    }
    if (Lm > T) {
      rc = ox_kctx_fail(c, OX_ERUNTIME, "attn_mask last dimension %lld exceeds %lld", (long long)Lm,
                        (long long)T);
      goto done;
    }
    mbool = M->dtype == OX_BOOL;
    nn_fbuf fm;
    if ((rc = nn_fload(c, M, &fm))) goto done;
    mask = fm.p;
    if (!fm.owned) {
      mask = malloc(((size_t)M->numel + 1) * sizeof(float));
      if (mask) memcpy(mask, fm.p, (size_t)M->numel * sizeof(float));
    }
    if (!mask) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
  }
  float scale = a->has_scale ? a->scale : (float)(1.0 / sqrt((double)D));
  bool want_qk = ox_kctx_n_outputs(c) > 3 && ox_kctx_output_wanted(c, 3);
  y = nn_falloc(B, Hq, Sq, Dv);
  if (want_qk) qk = nn_falloc(B, Hq, Sq, T);
  if (!y || (want_qk && !qk)) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  float sq = sqrtf(scale);
  for (int64_t i = 0; i < B * Hq * Sq * D; i++) q[i] *= sq;
  attn_job job = {a, q,  kall, vall,        mask,  mstride, NP ? (const int64_t *)NP->data : NULL,
                  y, qk, sq,   Hq,          Hk,    Sq,      T,
                  D, Dv, Lm,   PK ? P : -1, mbool, 0};
  /* heads in parallel; each GEMM then runs single-threaded */
  ox_parallel_for(ox_kctx_pool(c), B * Hq, 1, attn_heads, &job);
  if (atomic_load(&job.failed)) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory for attention scores");
    goto done;
  }
  /* outputs */
  if (Q->rank == 4) {
    int64_t yd[4] = {B, Hq, Sq, Dv};
    if ((rc = write_out(c, 0, Q->dtype, yd, 4, y))) goto done;
  } else {
    int64_t yd[3] = {B, Sq, Hq * Dv};
    float *t = nn_falloc(B, Sq, Hq, Dv);
    if (!t) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
    for (int64_t b = 0; b < B; b++)
      for (int64_t h = 0; h < Hq; h++)
        for (int64_t s = 0; s < Sq; s++)
          memcpy(t + ((b * Sq + s) * Hq + h) * Dv, y + ((b * Hq + h) * Sq + s) * Dv,
                 (size_t)Dv * sizeof(float));
    rc = write_out(c, 0, Q->dtype, yd, 3, t);
    free(t);
    if (rc) goto done;
  }
  if (ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1)) {
    int64_t d4[4] = {B, Hk, T, D};
    if ((rc = write_out(c, 1, K->dtype, d4, 4, kall))) goto done;
  }
  if (ox_kctx_n_outputs(c) > 2 && ox_kctx_output_wanted(c, 2)) {
    int64_t d4[4] = {B, Hk, T, Dv};
    if ((rc = write_out(c, 2, V->dtype, d4, 4, vall))) goto done;
  }
  if (qk) {
    int64_t d4[4] = {B, Hq, Sq, T};
    if ((rc = write_out(c, 3, Q->dtype, d4, 4, qk))) goto done;
  }
done:
  free(q), free(k), free(v), free(kall), free(vall), free(mask), free(y), free(qk);
  free(mstride);
  return rc;
}

/* ---- RotaryEmbedding ---- */
static int rotary_run(ox_kctx *c, void *st) {
  const attn_attrs *a = st;
  ox_value *X = ox_kctx_input(c, 0), *CS = ox_kctx_input(c, 1), *SN = ox_kctx_input(c, 2);
  ox_value *PI = ox_kctx_input(c, 3);
  if (!X || !CS || !SN || !nn_is_real(X->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "input, cos_cache and sin_cache are required");
  int64_t B, S, H, D;
  bool four = X->rank == 4;
  if (four) {
    B = X->dims[0], H = X->dims[1], S = X->dims[2], D = X->dims[3];
  } else if (X->rank == 3) {
    if (a->num_heads <= 0 || X->dims[2] % a->num_heads)
      return ox_kctx_fail(c, OX_ERUNTIME, "3-D input needs num_heads dividing the hidden size");
    B = X->dims[0], S = X->dims[1], H = a->num_heads, D = X->dims[2] / H;
  } else {
    return ox_kctx_fail(c, OX_ERUNTIME, "input must have rank 3 or 4");
  }
  int64_t R = a->rot_dim > 0 ? a->rot_dim : D, half = R / 2;
  if (R > D || R % 2)
    return ox_kctx_fail(c, OX_ERUNTIME, "rotary_embedding_dim %lld is invalid for head size %lld",
                        (long long)R, (long long)D);
  int64_t cl = CS->dims[CS->rank - 1];
  if (cl != half || SN->numel != CS->numel)
    return ox_kctx_fail(c, OX_ERUNTIME, "cos/sin caches must end with %lld", (long long)half);
  if (PI) {
    if (PI->numel != B * S || CS->rank != 2)
      return ox_kctx_fail(c, OX_ERUNTIME, "position_ids must be [B, S] and caches 2-D");
  } else if (CS->numel != B * S * half) {
    return ox_kctx_fail(c, OX_ERUNTIME, "without position_ids the caches must be [B, S, %lld]",
                        (long long)half);
  }
  ox_value *Y = ox_kctx_output(c, 0, X->dtype, X->dims, X->rank);
  if (!Y) return OX_ERUNTIME;
  nn_fbuf fx = {0}, fc = {0}, fs = {0}, fy = {0};
  int rc;
  if (!(rc = nn_fload(c, X, &fx)) && !(rc = nn_fload(c, CS, &fc)) && !(rc = nn_fload(c, SN, &fs)) &&
      !(rc = nn_fout(c, Y, &fy))) {
    memcpy(fy.p, fx.p, (size_t)X->numel * sizeof(float));
    for (int64_t b = 0; b < B && !rc; b++)
      for (int64_t s = 0; s < S && !rc; s++) {
        int64_t row = b * S + s;
        if (PI) {
          row = nn_get_int(PI->data, PI->dtype, b * S + s);
          if (row < 0 || row >= CS->dims[0]) {
            rc = ox_kctx_fail(c, OX_ERUNTIME, "position id %lld is out of the cache",
                              (long long)row);
            break;
          }
        }
        const float *cs = fc.p + row * half, *sn = fs.p + row * half;
        for (int64_t h = 0; h < H; h++) {
          int64_t off = four ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D;
          const float *x = fx.p + off;
          float *yy = fy.p + off;
          for (int64_t i = 0; i < half; i++) {
            int64_t i1 = a->interleaved ? 2 * i : i, i2 = a->interleaved ? 2 * i + 1 : i + half;
            float x1 = x[i1], x2 = x[i2];
            yy[i1] = x1 * cs[i] - x2 * sn[i];
            yy[i2] = x2 * cs[i] + x1 * sn[i];
          }
        }
      }
    if (rc)
      nn_ffree(&fy);
    else
      nn_fstore(Y, &fy);
  }
  nn_ffree(&fx), nn_ffree(&fc), nn_ffree(&fs);
  return rc;
}

/* ---- LinearAttention: a recurrent state S (d_k x d_v) per (batch, kv head) ---- */
enum { LIN_LINEAR, LIN_GATED, LIN_DELTA, LIN_GATED_DELTA };

static int linattn_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = attn_prepare(info, state, e);
  if (rc) return rc;
  attn_attrs *a = *state;
  const ox_node *n = info->node;
  const char *r = ox_node_attr_str(n, "update_rule", "gated_delta");
  if (strcmp(r, "linear") == 0)
    a->update_rule = LIN_LINEAR;
  else if (strcmp(r, "gated") == 0)
    a->update_rule = LIN_GATED;
  else if (strcmp(r, "delta") == 0)
    a->update_rule = LIN_DELTA;
  else if (strcmp(r, "gated_delta") == 0)
    a->update_rule = LIN_GATED_DELTA;
  else
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): unknown update_rule '%s'",
                      n->name ? n->name : "", n->op_type, r);
  if (a->q_heads <= 0 || a->kv_heads <= 0 || a->q_heads % a->kv_heads)
    return ox_err_set(e, OX_EMODEL,
                      "node '%s' (%s): q_num_heads must be a positive multiple of kv_num_heads",
                      n->name ? n->name : "", n->op_type);
  return OX_OK;
}

static int linattn_run(ox_kctx *c, void *st) {
  const attn_attrs *a = st;
  ox_value *Q = ox_kctx_input(c, 0), *K = ox_kctx_input(c, 1), *V = ox_kctx_input(c, 2);
  ox_value *PS = ox_kctx_input(c, 3), *G = ox_kctx_input(c, 4), *BT = ox_kctx_input(c, 5);
  if (!Q || !K || !V || Q->rank != 3 || K->rank != 3 || V->rank != 3 || !nn_is_real(Q->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "query, key, value must be 3-D float tensors");
  int64_t B = Q->dims[0], T = Q->dims[1], Hq = a->q_heads, Hk = a->kv_heads;
  if (Q->dims[2] % Hq || K->dims[2] % Hk || V->dims[2] % Hk)
    return ox_kctx_fail(c, OX_ERUNTIME, "hidden sizes are not divisible by the head counts");
  int64_t dk = Q->dims[2] / Hq, dv = V->dims[2] / Hk;
  if (K->dims[2] / Hk != dk || K->dims[0] != B || V->dims[0] != B || K->dims[1] != T ||
      V->dims[1] != T)
    return ox_kctx_fail(c, OX_ERUNTIME, "query, key, value shapes are inconsistent");
  bool gated = a->update_rule == LIN_GATED || a->update_rule == LIN_GATED_DELTA;
  bool delta = a->update_rule == LIN_DELTA || a->update_rule == LIN_GATED_DELTA;
  if (gated && !G) return ox_kctx_fail(c, OX_ERUNTIME, "decay is required by this update_rule");
  if (delta && !BT) return ox_kctx_fail(c, OX_ERUNTIME, "beta is required by this update_rule");
  int64_t gper = 0, bper = 0; /* decay values per (b, t) per kv head; beta values per (b, t) */
  if (gated) {
    if (G->rank != 3 || G->dims[0] != B || G->dims[1] != T ||
        (G->dims[2] != Hk * dk && G->dims[2] != Hk))
      return ox_kctx_fail(c, OX_ERUNTIME, "decay must be (B, T, H_kv*d_k) or (B, T, H_kv)");
    gper = G->dims[2] / Hk;
  }
  if (delta) {
    if (BT->rank != 3 || BT->dims[0] != B || BT->dims[1] != T ||
        (BT->dims[2] != Hk && BT->dims[2] != 1))
      return ox_kctx_fail(c, OX_ERUNTIME, "beta must be (B, T, H_kv) or (B, T, 1)");
    bper = BT->dims[2];
  }
  if (PS && (PS->rank != 4 || PS->dims[0] != B || PS->dims[1] != Hk || PS->dims[2] != dk ||
             PS->dims[3] != dv))
    return ox_kctx_fail(c, OX_ERUNTIME, "past_state must be (B, H_kv, d_k, d_v)");
  float scale = a->scale != 0.0f ? a->scale : (float)(1.0 / sqrt((double)dk));
  nn_fbuf fq = {0}, fk = {0}, fv = {0}, fp = {0}, fg = {0}, fb = {0};
  float *S = NULL, *y = NULL, *u = NULL;
  int rc;
  if ((rc = nn_fload(c, Q, &fq)) || (rc = nn_fload(c, K, &fk)) || (rc = nn_fload(c, V, &fv)) ||
      (PS && (rc = nn_fload(c, PS, &fp))) || (gated && (rc = nn_fload(c, G, &fg))) ||
      (delta && (rc = nn_fload(c, BT, &fb))))
    goto done;
  S = nn_falloc(B, Hk, dk, dv);
  y = nn_falloc(B, T, Hq, dv);
  u = calloc((size_t)dv + 1, sizeof(float));
  if (!S || !y || !u) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (PS) memcpy(S, fp.p, (size_t)(B * Hk * dk * dv) * sizeof(float));
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) {
      int64_t bt = b * T + t;
      for (int64_t h = 0; h < Hk; h++) {
        float *s = S + (b * Hk + h) * dk * dv;
        const float *k = fk.p + (bt * Hk + h) * dk, *v = fv.p + (bt * Hk + h) * dv;
        if (gated)
          for (int64_t i = 0; i < dk; i++) {
            float g = expf(fg.p[(bt * Hk + h) * gper + (gper == 1 ? 0 : i)]);
            for (int64_t j = 0; j < dv; j++) s[i * dv + j] *= g;
          }
        if (delta) {
          float beta = fb.p[bt * bper + (bper == 1 ? 0 : h)];
          for (int64_t j = 0; j < dv; j++) {
            double acc = 0.0;
            for (int64_t i = 0; i < dk; i++) acc += (double)s[i * dv + j] * k[i];
            u[j] = beta * (v[j] - (float)acc);
          }
        } else {
          memcpy(u, v, (size_t)dv * sizeof(float));
        }
        for (int64_t i = 0; i < dk; i++)
          for (int64_t j = 0; j < dv; j++) s[i * dv + j] += k[i] * u[j];
      }
      for (int64_t h = 0; h < Hq; h++) {
        const float *s = S + (b * Hk + h / (Hq / Hk)) * dk * dv;
        const float *q = fq.p + (bt * Hq + h) * dk;
        float *o = y + (bt * Hq + h) * dv;
        for (int64_t j = 0; j < dv; j++) {
          double acc = 0.0;
          for (int64_t i = 0; i < dk; i++) acc += (double)q[i] * s[i * dv + j];
          o[j] = (float)(acc * scale);
        }
      }
    }
  int64_t yd[3] = {B, T, Hq * dv}, sd[4] = {B, Hk, dk, dv};
  if ((rc = write_out(c, 0, Q->dtype, yd, 3, y))) goto done;
  if (ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1)) {
    const ox_kinfo *info = ox_kctx_info(c);
    int32_t dt = PS ? PS->dtype
                 : info->output_dtypes && nn_is_real(info->output_dtypes[1])
                     ? info->output_dtypes[1]
                     : Q->dtype;
    rc = write_out(c, 1, dt, sd, 4, S);
  }
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv), nn_ffree(&fp), nn_ffree(&fg), nn_ffree(&fb);
  free(S), free(y), free(u);
  return rc;
}

/* ---- CausalConvWithState: depthwise causal 1-D convolution with a carry ---- */
static int ccws_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = attn_prepare(info, state, e);
  if (rc) return rc;
  attn_attrs *a = *state;
  const char *act = ox_node_attr_str(info->node, "activation", "none");
  if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
    a->act.kind = NN_ACT_SILU;
  else if (strcmp(act, "none") == 0)
    a->act.kind = NN_ACT_NONE;
  else
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): unknown activation '%s'",
                      info->node->name ? info->node->name : "", info->node->op_type, act);
  return OX_OK;
}

static int ccws_run(ox_kctx *c, void *st) {
  const attn_attrs *a = st;
  ox_value *X = ox_kctx_input(c, 0), *W = ox_kctx_input(c, 1), *Bv = ox_kctx_input(c, 2);
  ox_value *PS = ox_kctx_input(c, 3);
  if (!X || !W || X->rank != 3 || W->rank != 3 || !nn_is_real(X->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "input and weight must be 3-D float tensors");
  int64_t B = X->dims[0], C = X->dims[1], L = X->dims[2], k = W->dims[2];
  if (W->dims[0] != C || W->dims[1] != 1 || k < 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "weight must be (channels, 1, k)");
  if (Bv && Bv->numel != C) return ox_kctx_fail(c, OX_ERUNTIME, "bias must be (channels)");
  if (PS && (PS->rank != 3 || PS->dims[0] != B || PS->dims[1] != C || PS->dims[2] != k - 1))
    return ox_kctx_fail(c, OX_ERUNTIME, "past_state must be (batch, channels, k - 1)");
  nn_fbuf fx = {0}, fw = {0}, fb = {0}, fp = {0};
  float *pad = NULL, *y = NULL, *ps = NULL;
  int rc;
  if ((rc = nn_fload(c, X, &fx)) || (rc = nn_fload(c, W, &fw)) ||
      (Bv && (rc = nn_fload(c, Bv, &fb))) || (PS && (rc = nn_fload(c, PS, &fp))))
    goto done;
  int64_t PL = L + k - 1;
  pad = malloc(((size_t)PL + 1) * sizeof(float));
  y = malloc(((size_t)X->numel + 1) * sizeof(float));
  ps = nn_falloc(B, C, k - 1, 1);
  if (!pad || !y || !ps) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t bc = b * C + ch;
      if (PS)
        memcpy(pad, fp.p + bc * (k - 1), (size_t)(k - 1) * sizeof(float));
      else
        memset(pad, 0, (size_t)(k - 1) * sizeof(float));
      memcpy(pad + k - 1, fx.p + bc * L, (size_t)L * sizeof(float));
      const float *w = fw.p + ch * k;
      float bias = Bv ? fb.p[ch] : 0.0f;
      for (int64_t t = 0; t < L; t++) {
        float s = bias;
        for (int64_t j = 0; j < k; j++) s += w[j] * pad[t + j];
        y[bc * L + t] = nn_act_apply(&a->act, s);
      }
      memcpy(ps + bc * (k - 1), pad + L, (size_t)(k - 1) * sizeof(float));
    }
  int64_t sd[3] = {B, C, k - 1};
  if ((rc = write_out(c, 0, X->dtype, X->dims, 3, y))) goto done;
  if (ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1))
    rc = write_out(c, 1, X->dtype, sd, 3, ps);
done:
  nn_ffree(&fx), nn_ffree(&fw), nn_ffree(&fb), nn_ffree(&fp);
  free(pad), free(y), free(ps);
  return rc;
}

/* ---- ai.onnx.preview FlexAttention: scores -> score_mod -> softmax -> prob_mod ---- */

/* Runs a one-input, one-output modifier subgraph on buf (numel floats, shape
 * d[4]) in element type dt, replacing buf's content with the result. */
static int run_mod(ox_kctx *c, const ox_graph *g, int32_t dt, const int64_t d[4], float *buf,
                   const char *what) {
  ox_err e = {0};
  ox_value *in = ox_tensor_new(dt, d, 4, &e);
  if (!in) return ox_kctx_fail(c, OX_ENOMEM, "%s: %s", what, e.msg);
  for (int64_t i = 0; i < in->numel; i++) nn_set_real(in->data, dt, i, buf[i]);
  ox_value *out = NULL;
  int rc = ox_kctx_run_subgraph(c, g, &in, 1, &out, 1);
  ox_value_unref(in);
  if (rc) return rc;
  if (!out || out->kind != OX_VAL_TENSOR || !nn_is_real(out->dtype) ||
      !ox_shape_equal(out->dims, out->rank, d, 4))
    rc = ox_kctx_fail(c, OX_ERUNTIME, "%s must return a float tensor of the input's shape", what);
  else
    for (int64_t i = 0; i < out->numel; i++) buf[i] = (float)nn_get(out->data, out->dtype, i);
  if (out) ox_value_unref(out);
  return rc;
}

static int flex_run(ox_kctx *c, void *st) {
  const attn_attrs *a = st;
  const ox_node *node = ox_kctx_node(c);
  const ox_attr *sm = ox_node_attr(node, "score_mod"), *pm = ox_node_attr(node, "prob_mod");
  ox_value *Q = ox_kctx_input(c, 0), *K = ox_kctx_input(c, 1), *V = ox_kctx_input(c, 2);
  if (!Q || !K || !V || Q->rank != 4 || K->rank != 4 || V->rank != 4 || !nn_is_real(Q->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "Q, K and V must be rank-4 float tensors");
  int64_t B = Q->dims[0], Hq = Q->dims[1], L = Q->dims[2], D = Q->dims[3];
  int64_t Hk = K->dims[1], S = K->dims[2], Dv = V->dims[3];
  if (K->dims[0] != B || V->dims[0] != B || K->dims[3] != D || V->dims[1] != Hk ||
      V->dims[2] != S || Hk <= 0 || Hq % Hk)
    return ox_kctx_fail(c, OX_ERUNTIME, "Q, K, V shapes are inconsistent");
  int64_t sp =
      ox_node_attr_int(node, "softmax_precision", Q->dtype == OX_DOUBLE ? OX_DOUBLE : OX_FLOAT);
  if (!nn_is_real((int32_t)sp)) return ox_kctx_fail(c, OX_ERUNTIME, "bad softmax_precision");
  float scale = a->has_scale ? a->scale : (float)(1.0 / sqrt((double)D));
  nn_fbuf fq = {0}, fk = {0}, fv = {0};
  float *sc = NULL, *y = NULL;
  int rc;
  if ((rc = nn_fload(c, Q, &fq)) || (rc = nn_fload(c, K, &fk)) || (rc = nn_fload(c, V, &fv)))
    goto done;
  sc = nn_falloc(B, Hq, L, S);
  y = nn_falloc(B, Hq, L, Dv);
  if (!sc || !y) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  ox_thread_pool *pool = ox_kctx_pool(c);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++) {
      int64_t hk = h / (Hq / Hk);
      ox_gemm(&(ox_gemm_desc){.M = L, .N = S, .K = D, .A = fq.p + (b * Hq + h) * L * D, .lda = D,
                              .B = fk.p + (b * Hk + hk) * S * D, .ldb = D, .trans_b = true,
                              .alpha = scale, .C = sc + (b * Hq + h) * L * S, .ldc = S,
                              .pool = pool});
    }
  int64_t sd[4] = {B, Hq, L, S};
  if (sm && sm->g && (rc = run_mod(c, sm->g, (int32_t)sp, sd, sc, "score_mod"))) goto done;
  for (int64_t r = 0; r < B * Hq * L; r++) {
    float *row = sc + r * S, mx = -INFINITY;
    for (int64_t j = 0; j < S; j++)
      if (row[j] > mx) mx = row[j];
    if (mx == -INFINITY) {
      memset(row, 0, (size_t)S * sizeof(float));
      continue;
    }
    double s = 0.0;
    for (int64_t j = 0; j < S; j++) s += row[j] = expf(row[j] - mx);
    for (int64_t j = 0; j < S; j++) row[j] = (float)(row[j] / s);
  }
  if (pm && pm->g && (rc = run_mod(c, pm->g, (int32_t)sp, sd, sc, "prob_mod"))) goto done;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++) {
      int64_t hk = h / (Hq / Hk);
      ox_gemm(&(ox_gemm_desc){.M = L, .N = Dv, .K = S, .A = sc + (b * Hq + h) * L * S, .lda = S,
                              .B = fv.p + (b * Hk + hk) * S * Dv, .ldb = Dv, .alpha = 1.0f,
                              .C = y + (b * Hq + h) * L * Dv, .ldc = Dv, .pool = pool});
    }
  int64_t yd[4] = {B, Hq, L, Dv};
  rc = write_out(c, 0, Q->dtype, yd, 4, y);
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv);
  free(sc), free(y);
  return rc;
}

const ox_kernel_def ox_ops_attention[] = {
    {"", "Attention", 23, 1000, attn_prepare, attention_run, NULL},
    {"", "RotaryEmbedding", 23, 1000, attn_prepare, rotary_run, NULL},
    {"", "LinearAttention", 27, 1000, linattn_prepare, linattn_run, NULL},
    {"", "CausalConvWithState", 27, 1000, ccws_prepare, ccws_run, NULL},
    {"ai.onnx.preview", "FlexAttention", 1, 1000, attn_prepare, flex_run, NULL},
    {0},
};

/* ---- the head loop for other operators (attention_core.h) ---- */
int ox_attn_core_run(ox_thread_pool *pool, const ox_attn_core *c) {
  /* no causal flag, window or softcap: the caller folds those into its mask; qk is
   * taken after the mask (mode 2) */
  static const attn_attrs plain = {.left_win = -1, .right_win = -1, .mode = 2};
  float sq = sqrtf(c->scale);
  for (int64_t i = 0; i < c->B * c->Hq * c->Sq * c->D; i++) c->q[i] *= sq;
  attn_job job = {.a = &plain, .q = c->q, .k = c->k, .v = c->v, .mask = c->mask,
                  .mstride = c->mstride, .y = c->y, .sq = sq, .Hq = c->Hq, .Hk = c->Hk,
                  .Sq = c->Sq, .T = c->T, .D = c->D, .Dv = c->Dv, .Lm = c->T, .past = -1,
                  .qk = c->qk};
  atomic_init(&job.failed, 0);
  ox_parallel_for(pool, c->B * c->Hq, 1, attn_heads, &job);
  return atomic_load(&job.failed) ? OX_ENOMEM : OX_OK;
}
