/* ops_attention.c - C generator for Attention (opsets 23 to 25): Q, K, V as
 * [B, H, S, D] or [B, S, H*D], grouped heads, past key/value and the present
 * outputs, a float or bool mask broadcast from rank 1..4, causal and window
 * masks, nonpad_kv_seqlen, scale, softcap and the four qk_matmul_output
 * modes, and RotaryEmbedding. One query row at a time: its scores live in a local array of the
 * total key length, so no scratch beyond the stack is needed. The
 * semantics are those of the runtime's kernel (src/ops/onnx/attention.c):
 * a fully masked row gives zeros. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* Element strides of batch, head and sequence position for Q, K or V given
 * as 4-D [B, H, S, D] or 3-D [B, S, H*D] (heads from the attribute); *Hd
 * and *S get the head count and sequence length, *D the head size. */
static bool bhsd(const cg_val *v, int64_t heads, int64_t st[3], int64_t *H, int64_t *S,
                 int64_t *D) {
  if (v->rank == 4) {
    *H = v->dims[1], *S = v->dims[2], *D = v->dims[3];
    st[0] = *H * *S * *D, st[1] = *S * *D, st[2] = *D;
    return true;
  }
  if (v->rank != 3 || heads <= 0 || v->dims[2] % heads) return false;
  *H = heads, *S = v->dims[1], *D = v->dims[2] / heads;
  st[0] = *S * v->dims[2], st[1] = *D, st[2] = v->dims[2];
  return true;
}

/* ---- one query row's attention, shared with ops_ms_attn.c (cg_impl.h) ---- */

/* `const T *k` (kv 0) or `*v` (kv 1): key or value row j of r, the past's
 * for j < P. */
static void kv_row(cg_ctx *c, const cg_attn_row *r, int kv) {
  const char *Tt = cg_ctype(r->dtype), *nm = kv ? "v" : "k";
  const char *cur = kv ? r->v : r->k, *past = kv ? r->pv : r->pk;
  long long st = kv ? r->vs : r->ks, pst = kv ? r->Dv : r->D, P = r->P;
  if (P)
    cg_printf(c,
              "          const %s *%s = j < %lld ? %s + j * %lld\n"
              "                                 : %s + (j - %lld) * %lld;\n",
              Tt, nm, P, past, pst, cur, P, st);
  else
    cg_printf(c, "          const %s *%s = %s + j * %lld;\n", Tt, nm, cur, st);
}

void cg_attn_scores(cg_ctx *c, const cg_attn_row *r, double scale) {
  const char *Tt = cg_ctype(r->dtype);
  char lit[64];
  cg_printf(c, "        %s row[%lld];\n", Tt, (long long)(r->Tmax ? r->Tmax : 1));
  cg_printf(c, "        for (long long j = 0; j < %s; j++) {\n", r->T);
  kv_row(c, r, 0);
  cg_printf(c,
            "          %s s = 0;\n          for (long long d = 0; d < %lld; d++) s += %s[d] * "
            "k[d];\n",
            Tt, (long long)r->D, r->q);
  cg_float_lit(lit, sizeof lit, scale, r->dtype == OX_FLOAT);
  cg_printf(c, "          row[j] = s * %s;\n        }\n", lit);
}

void cg_attn_softmax(cg_ctx *c, const cg_attn_row *r) {
  const char *Tt = cg_ctype(r->dtype), *T = r->T;
  cg_printf(c, "        %s mx = -INFINITY;\n", Tt);
  cg_printf(c,
            "        for (long long j = 0; j < %s; j++)\n          if (row[j] > mx) mx = row[j];\n",
            T);
  cg_printf(c, "        if (mx == -INFINITY || mx != mx) {\n");
  cg_printf(c, "          for (long long j = 0; j < %s; j++) row[j] = 0;\n        } else {\n", T);
  /* the softmax sum in double, or in the element type under --float-only */
  cg_printf(c, "          %s sum = 0;\n", c->o->float_only ? Tt : "double");
  cg_printf(c, "          for (long long j = 0; j < %s; j++) {\n", T);
  cg_printf(c, "            row[j] = %s(row[j] - mx);\n            sum += row[j];\n          }\n",
            cg_mathfn(c, r->dtype, "exp"));
  cg_printf(c, "          for (long long j = 0; j < %s; j++) row[j] = (%s)(row[j] / sum);\n", T,
            Tt);
  cg_printf(c, "        }\n");
}

void cg_attn_values(cg_ctx *c, const cg_attn_row *r) {
  const char *Tt = cg_ctype(r->dtype);
  cg_printf(c, "        %s *y = %s;\n", Tt, r->y);
  cg_printf(c, "        for (long long e = 0; e < %lld; e++) y[e] = 0;\n", (long long)r->Dv);
  cg_printf(c, "        for (long long j = 0; j < %s; j++) {\n", r->T);
  kv_row(c, r, 1);
  cg_printf(c, "          for (long long e = 0; e < %lld; e++) y[e] += row[j] * v[e];\n",
            (long long)r->Dv);
  cg_printf(c, "        }\n");
}

static int gen_attention(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  const cg_val *Q = in[0], *K = n_in > 1 ? in[1] : NULL, *V = n_in > 2 ? in[2] : NULL;
  const cg_val *M = n_in > 3 ? in[3] : NULL, *PK = n_in > 4 ? in[4] : NULL,
               *PV = n_in > 5 ? in[5] : NULL, *NP = n_in > 6 ? in[6] : NULL;
  if (!K || !V) return cg_fail(c, OX_EMODEL, "Q, K and V are required");
  if (cg_need_float(c, Q)) return c->e->code;
  if (K->dtype != Q->dtype || V->dtype != Q->dtype || (PK && PK->dtype != Q->dtype) ||
      (PV && PV->dtype != Q->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "Q, K, V and the past must share one element type");
  if ((PK == NULL) != (PV == NULL))
    return cg_fail(c, OX_EMODEL, "past_key and past_value must be given together");
  int64_t qs[3], ks[3], vs[3], B = Q->dims[0], Hq, Sq, D, Hk, Skv, Dk, Hv, Sv, Dv;
  if (!bhsd(Q, ox_node_attr_int(n, "q_num_heads", 0), qs, &Hq, &Sq, &D) ||
      !bhsd(K, ox_node_attr_int(n, "kv_num_heads", 0), ks, &Hk, &Skv, &Dk) ||
      !bhsd(V, ox_node_attr_int(n, "kv_num_heads", 0), vs, &Hv, &Sv, &Dv))
    return cg_fail(c, OX_EMODEL, "Q, K, V must be 4-D, or 3-D with the heads attributes");
  if (K->dims[0] != B || V->dims[0] != B || Dk != D || Hv != Hk || Sv != Skv || Hk <= 0 ||
      Hq % Hk)
    return cg_fail(c, OX_EMODEL, "Q, K, V shapes are inconsistent");
  int64_t P = 0;
  if (PK) {
    if (PK->rank != 4 || PV->rank != 4 || PK->dims[0] != B || PK->dims[1] != Hk ||
        PK->dims[3] != D || PV->dims[0] != B || PV->dims[1] != Hk || PV->dims[3] != Dv ||
        PV->dims[2] != PK->dims[2])
      return cg_fail(c, OX_EMODEL, "past_key/past_value shapes are inconsistent");
    P = PK->dims[2];
  }
  int64_t T = P + Skv;
  if (NP && (NP->numel != B || NP->dtype != OX_INT64))
    return cg_fail(c, OX_EMODEL, "nonpad_kv_seqlen must be int64 [batch_size]");
  if (c->opset < 24) NP = NULL;
  int64_t mode = ox_node_attr_int(n, "qk_matmul_output_mode", 0);
  int64_t lw = ox_node_attr_int(n, "left_window_size", -1);
  int64_t rw = ox_node_attr_int(n, "right_window_size", -1);
  bool causal = ox_node_attr_int(n, "is_causal", 0) != 0;
  const ox_attr *sa = ox_node_attr(n, "scale");
  double scale = sa ? (double)sa->f : 1.0 / sqrt((double)D);
  double cap = ox_node_attr_float(n, "softcap", 0.0f);
  if (mode < 0 || mode > 3) return cg_fail(c, OX_EMODEL, "qk_matmul_output_mode must be 0..3");
  /* the mask: broadcast from its rank to (B, Hq, Sq, Lm); keys past Lm are off */
  int64_t md[4] = {1, 1, 1, 1}, mst[4] = {0, 0, 0, 0}, Lm = T;
  if (M) {
    if (M->rank < 1 || M->rank > 4) return cg_fail(c, OX_EMODEL, "attn_mask must have rank 1..4");
    if (M->dtype != OX_BOOL && M->dtype != Q->dtype)
      return cg_fail(c, OX_EUNSUPPORTED, "attn_mask must be bool or of Q's type");
    int64_t want[3] = {B, Hq, Sq}, s = 1;
    for (size_t i = 0; i < M->rank; i++) md[4 - M->rank + i] = M->dims[i];
    Lm = md[3];
    for (int i = 3; i >= 0; i--) {
      if (i < 3 && md[i] != 1 && md[i] != want[i])
        return cg_fail(c, OX_EMODEL, "attn_mask does not broadcast to (B, heads, Sq, T)");
      mst[i] = md[i] == 1 && i < 3 ? 0 : s;
      s *= md[i];
    }
    if (Lm > T) return cg_fail(c, OX_EMODEL, "attn_mask is longer than the keys");
  }
  const char *Tt = cg_ctype(Q->dtype);
  bool f32 = Q->dtype == OX_FLOAT;
  char lit[64];
  /* present_key / present_value: past then current, as [B, Hk, T, D] */
  for (int kv = 0; kv < 2; kv++) {
    size_t o = 1 + (size_t)kv;
    if (n_out <= o || !out[o]) continue;
    int64_t Dx = kv ? Dv : D;
    const int64_t *st = kv ? vs : ks;
    cg_printf(c, "  /* present_%s: past then current */\n", kv ? "value" : "key");
    cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n    for (long long h = 0; h < %lld; h++) {\n",
              (long long)B, (long long)Hk);
    if (P)
      cg_printf(c, "      memcpy(Y%zu + (b * %lld + h) * %lld, X%d + (b * %lld + h) * %lld, %zu);\n",
                o, (long long)Hk, (long long)(T * Dx), kv ? 5 : 4, (long long)Hk,
                (long long)(P * Dx), (size_t)(P * Dx) * (f32 ? 4 : 8));
    cg_printf(c, "      for (long long s = 0; s < %lld; s++)\n", (long long)Skv);
    cg_printf(c,
              "        memcpy(Y%zu + ((b * %lld + h) * %lld + %lld + s) * %lld, X%d + b * %lld + h * "
              "%lld + s * %lld, %zu);\n    }\n",
              o, (long long)Hk, (long long)T, (long long)P, (long long)Dx, kv ? 2 : 1,
              (long long)st[0], (long long)st[1], (long long)st[2],
              (size_t)Dx * (f32 ? 4 : 8));
  }
  bool qk = n_out > 3 && out[3];
  int64_t ys[3];
  if (Q->rank == 4)
    ys[0] = Hq * Sq * Dv, ys[1] = Sq * Dv, ys[2] = Dv;
  else
    ys[0] = Sq * Hq * Dv, ys[1] = Dv, ys[2] = Hq * Dv;
  cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n", (long long)B);
  cg_printf(c, "    for (long long h = 0; h < %lld; h++) {\n", (long long)Hq);
  cg_printf(c, "      const long long hk = h / %lld; /* the K/V head of this query head */\n",
            (long long)(Hq / Hk));
  if (NP)
    cg_printf(c, "      const long long np = (long long)X6[b], off = %s;\n",
              PK ? ox_arena_printf(c->a, "%lld", (long long)P)
                 : ox_arena_printf(c->a, "np - %lld", (long long)Sq));
  else
    cg_printf(c, "      const long long off = %lld;\n", (long long)P);
  cg_printf(c, "      for (long long i = 0; i < %lld; i++) {\n", (long long)Sq);
  cg_printf(c, "        const %s *q = X0 + b * %lld + h * %lld + i * %lld;\n", Tt, (long long)qs[0],
            (long long)qs[1], (long long)qs[2]);
  cg_printf(c, "        const long long p = off + i;\n        (void)p;\n");
  if (M)
    cg_printf(c, "        const %s *m = X3 + b * %lld + h * %lld + i * %lld;\n",
              cg_ctype(M->dtype), (long long)mst[0], (long long)mst[1], (long long)mst[2]);
  cg_attn_row r = {.dtype = Q->dtype,
                   .T = ox_arena_printf(c->a, "%lld", (long long)T),
                   .Tmax = T,
                   .D = D,
                   .Dv = Dv,
                   .P = P,
                   .q = "q",
                   .k = ox_arena_printf(c->a, "X1 + b * %lld + hk * %lld", (long long)ks[0],
                                        (long long)ks[1]),
                   .ks = ks[2],
                   .v = ox_arena_printf(c->a, "X2 + b * %lld + hk * %lld", (long long)vs[0],
                                        (long long)vs[1]),
                   .vs = vs[2],
                   .pk = ox_arena_printf(c->a, "X4 + (b * %lld + hk) * %lld", (long long)Hk,
                                         (long long)(P * D)),
                   .pv = ox_arena_printf(c->a, "X5 + (b * %lld + hk) * %lld", (long long)Hk,
                                         (long long)(P * Dv)),
                   .y = ox_arena_printf(c->a, "Y0 + b * %lld + h * %lld + i * %lld",
                                        (long long)ys[0], (long long)ys[1], (long long)ys[2])};
  if (!r.T || !r.k || !r.v || !r.pk || !r.pv || !r.y)
    return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_attn_scores(c, &r, scale);
  const char *QK = ox_arena_printf(c->a, "Y3 + ((b * %lld + h) * %lld + i) * %lld", (long long)Hq,
                                   (long long)Sq, (long long)T);
  size_t QKB = (size_t)T * (f32 ? 4 : 8);
  if (qk && mode == 0) cg_printf(c, "        memcpy(%s, row, %zu);\n", QK, QKB);
  if (cap > 0) {
    cg_float_lit(lit, sizeof lit, cap, f32);
    cg_printf(c, "        for (long long j = 0; j < %lld; j++) row[j] = %s * %s(row[j] / %s);\n",
              (long long)T, lit, cg_mathfn(c, Q->dtype, "tanh"), lit);
  }
  if (qk && mode == 1) cg_printf(c, "        memcpy(%s, row, %zu);\n", QK, QKB);
  /* the masks: a key is off (-inf) when any of them says so */
  cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n          int on = 1;\n",
            (long long)T);
  if (causal) cg_printf(c, "          if (j > p) on = 0;\n");
  if (NP) cg_printf(c, "          if (j >= np) on = 0;\n");
  if (lw >= 0) cg_printf(c, "          if (j < p - %lld) on = 0;\n", (long long)lw);
  if (rw >= 0) cg_printf(c, "          if (j > p + %lld) on = 0;\n", (long long)rw);
  if (M) {
    cg_printf(c, "          if (j >= %lld) on = 0;\n", (long long)Lm);
    if (M->dtype == OX_BOOL)
      cg_printf(c, "          else if (!m[j * %lld]) on = 0;\n", (long long)mst[3]);
    else
      cg_printf(c, "          else row[j] += m[j * %lld];\n", (long long)mst[3]);
  }
  cg_printf(c, "          if (!on) row[j] = -INFINITY;\n        }\n");
  if (qk && mode == 2) cg_printf(c, "        memcpy(%s, row, %zu);\n", QK, QKB);
  cg_attn_softmax(c, &r);
  if (qk && mode == 3) cg_printf(c, "        memcpy(%s, row, %zu);\n", QK, QKB);
  cg_attn_values(c, &r);
  cg_printf(c, "      }\n    }\n");
  return OX_OK;
}

/* RotaryEmbedding (23): x as [B, H, S, D] or [B, S, H*D]; the first
 * rotary_embedding_dim values of each head rotate by the cached cos/sin of
 * the position (position_ids, or the row b*S+s of [B, S, D/2] caches),
 * halves or interleaved pairs; the rest are copied. */
static int gen_rotary(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)out, (void)n_out;
  const cg_val *X = in[0], *CS = n_in > 1 ? in[1] : NULL, *SN = n_in > 2 ? in[2] : NULL;
  const cg_val *PI = n_in > 3 ? in[3] : NULL;
  if (cg_need_float(c, X)) return c->e->code;
  if (!CS || !SN || CS->dtype != X->dtype || SN->dtype != X->dtype)
    return cg_fail(c, OX_EMODEL, "cos_cache and sin_cache of the input's type are required");
  int64_t B, S, H, D;
  bool four = X->rank == 4;
  int64_t nh = ox_node_attr_int(n, "num_heads", 0);
  if (four) {
    B = X->dims[0], H = X->dims[1], S = X->dims[2], D = X->dims[3];
  } else if (X->rank == 3 && nh > 0 && X->dims[2] % nh == 0) {
    B = X->dims[0], S = X->dims[1], H = nh, D = X->dims[2] / nh;
  } else {
    return cg_fail(c, OX_EMODEL, "the input must be 4-D, or 3-D with num_heads");
  }
  int64_t rd = ox_node_attr_int(n, "rotary_embedding_dim", 0), R = rd > 0 ? rd : D, half = R / 2;
  bool il = ox_node_attr_int(n, "interleaved", 0) != 0;
  if (R > D || R % 2 || CS->rank < 1 || CS->dims[CS->rank - 1] != half || SN->numel != CS->numel)
    return cg_fail(c, OX_EMODEL, "rotary_embedding_dim or the caches do not fit the head size");
  int64_t rows = CS->numel / (half ? half : 1);
  if (PI ? (PI->numel != B * S || CS->rank != 2) : CS->numel != B * S * half)
    return cg_fail(c, OX_EMODEL, "position_ids must be [B, S] (caches 2-D), or caches [B, S, D/2]");
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  memcpy(Y0, X0, %zu); /* the values past the rotary part stay */\n", X->nbytes);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n    for (long long s = 0; s < %lld; s++) {\n",
            (long long)B, (long long)S);
  if (PI) {
    cg_printf(c, "      long long row = (long long)X3[b * %lld + s];\n", (long long)S);
    cg_printf(c, "      if (row < 0 || row >= %lld) row = 0; /* outside the cache */\n",
              (long long)rows);
  } else {
    cg_printf(c, "      const long long row = b * %lld + s;\n", (long long)S);
  }
  cg_printf(c, "      const %s *cs = X1 + row * %lld, *sn = X2 + row * %lld;\n", T,
            (long long)half, (long long)half);
  cg_emit_rotate_heads(c, T, H, S, D, four, half, il);
  cg_printf(c, "    }\n");
  return OX_OK;
}

void cg_emit_rotate_heads(cg_ctx *c, const char *T, int64_t N, int64_t S, int64_t D, bool four,
                          int64_t half, bool il) {
  cg_printf(c, "      for (long long h = 0; h < %lld; h++) {\n", (long long)N);
  if (four)
    cg_printf(c, "        const long long off = ((b * %lld + h) * %lld + s) * %lld;\n",
              (long long)N, (long long)S, (long long)D);
  else
    cg_printf(c, "        const long long off = ((b * %lld + s) * %lld + h) * %lld;\n",
              (long long)S, (long long)N, (long long)D);
  cg_emit_rotate(c, "        ", T, "X0 + off", "Y0 + off", half, il);
  cg_printf(c, "      }\n");
}

void cg_emit_rotate(cg_ctx *c, const char *ind, const char *T, const char *src, const char *dst,
                    int64_t half, bool il) {
  cg_printf(c, "%sfor (long long i = 0; i < %lld; i++) {\n", ind, (long long)half);
  if (il)
    cg_printf(c, "%s  const long long i1 = 2 * i, i2 = i1 + 1;\n", ind);
  else
    cg_printf(c, "%s  const long long i1 = i, i2 = i + %lld;\n", ind, (long long)half);
  cg_printf(c, "%s  const %s x1 = (%s)[i1], x2 = (%s)[i2];\n", ind, T, src, src);
  cg_printf(c, "%s  (%s)[i1] = x1 * cs[i] - x2 * sn[i];\n", ind, dst);
  cg_printf(c, "%s  (%s)[i2] = x2 * cs[i] + x1 * sn[i];\n%s}\n", ind, dst, ind);
}

const cg_op ox_cg_ops_attention[] = {
    {"Attention", gen_attention},
    {"RotaryEmbedding", gen_rotary},
    {NULL, NULL},
};
