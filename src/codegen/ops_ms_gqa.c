/* ops_ms_gqa.c - C generators of onnxruntime's com.microsoft GroupQueryAttention,
 * SparseAttention and RotaryEmbedding. Semantics as the runtime's kernels
 * (src/ops/contrib/gqa.c, sparse_attn.c, attn_kv.c), in float (float16 and bfloat16
 * through cg_widen.c, as the runtime widens them too); the rotation itself is
 * ops_attention.c's (cg_emit_rotate).
 *
 * GroupQueryAttention reads seqlens_k and total_sequence_length at run time: each
 * sequence's past length is seqlens_k[b] + 1 - S (0 on a first prompt), the keys a query
 * row sees end at its causal position (cut at the sequence's length) and start
 * local_window_size before it. The new K and V rows, rotated, are written after the past
 * rows into scratch caches of P + S rows (P: past_key's length), enough for any valid
 * seqlens_k; the output is computed from them, and present_key / present_value are the
 * valid rows, then zeros, over their static length max(P, total_sequence_length). That
 * length, and qk_output's column count, follow total_sequence_length's value: they compile
 * when it is a constant (or folded to one from shapes), and are declined naming the node
 * otherwise (the output's dim is not a fixed number). Values the runtime rejects (a
 * seqlens_k beyond the caches, a position outside the cos/sin caches, a block layout that
 * points outside its tensors) are clamped here: the generated code has no error path and
 * never reads or writes outside a tensor. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* ---- RotaryEmbedding (com.microsoft): input, position_ids, cos_cache, sin_cache ---- */
static int gen_ms_rotary_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)out, (void)n_out;
  const cg_val *X = in[0], *PI = n_in > 1 ? in[1] : NULL, *CS = n_in > 2 ? in[2] : NULL;
  const cg_val *SN = n_in > 3 ? in[3] : NULL;
  if (!PI || !CS || !SN)
    return cg_fail(c, OX_EMODEL, "input, position_ids, cos_cache and sin_cache are required");
  if (X->dtype != OX_FLOAT || CS->dtype != OX_FLOAT || SN->dtype != OX_FLOAT)
    return cg_fail(c, OX_EUNSUPPORTED, "input and caches must be float, float16 or bfloat16");
  int64_t nh = ox_node_attr_int(n, "num_heads", 0),
          rd = ox_node_attr_int(n, "rotary_embedding_dim", 0);
  bool il = ox_node_attr_int(n, "interleaved", 0) != 0;
  if (ox_node_attr_int(n, "is_packed_batching", 0) != 0)
    return cg_fail(c, OX_EUNSUPPORTED, "is_packed_batching = 1 is not supported");
  if ((X->rank != 3 && X->rank != 4) || CS->rank != 2 || SN->numel != CS->numel || nh < 0 ||
      rd < 0 || rd % 2 || (rd > 0 && nh == 0))
    return cg_fail(c, OX_EMODEL,
                   "input must have rank 3 or 4, the caches two [positions, "
                   "rotary / 2] matrices, rotary_embedding_dim even with num_heads");
  bool four = X->rank == 4;
  int64_t B = X->dims[0], S = four ? X->dims[2] : X->dims[1];
  int64_t hidden = four ? X->dims[1] * X->dims[3] : X->dims[2];
  int64_t H = rd == 0 ? 2 * CS->dims[1] : (nh ? hidden / nh : 0);
  if (H <= 0 || hidden % H)
    return cg_fail(c, OX_EMODEL, "the head size does not divide the hidden size");
  int64_t N = nh > 0 ? nh : hidden / H, R = rd > 0 ? rd : H, rows = CS->dims[0];
  if ((four && X->dims[1] != N) || N * H != hidden || R > H || CS->dims[1] != R / 2)
    return cg_fail(c, OX_EMODEL, "num_heads, rotary_embedding_dim and the caches do not fit");
  bool one = PI->numel == 1;
  if (!one && PI->numel != B * S)
    return cg_fail(c, OX_EMODEL, "position_ids must be one value or [batch, sequence]");
  cg_printf(c, "  memcpy(Y0, X0, %zu); /* the values past the rotary part stay */\n", X->nbytes);
  cg_printf(c,
            "  for (long long b = 0; b < %lld; b++)\n    for (long long s = 0; s < %lld; s++) {\n",
            (long long)B, (long long)S);
  if (one) /* one offset: the positions of row s follow it */
    cg_printf(c, "      long long row = (long long)X1[0] + s;\n");
  else
    cg_printf(c, "      long long row = (long long)X1[b * %lld + s];\n", (long long)S);
  cg_printf(c, "      if (row < 0 || row >= %lld) row = 0; /* outside the caches */\n",
            (long long)rows);
  cg_printf(c, "      const float *cs = X2 + row * %lld, *sn = X3 + row * %lld;\n",
            (long long)(R / 2), (long long)(R / 2));
  cg_emit_rotate_heads(c, "float", N, S, H, four, R / 2, il);
  cg_printf(c, "    }\n");
  return OX_OK;
}

static int gen_ms_rotary(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  return cg_gen_maybe_widened(c, gen_ms_rotary_f, n, in, n_in, out, n_out);
}

/* ---- GroupQueryAttention ---- */

/* The shapes of one node, checked as the runtime's gqa_check does where they are static. */
typedef struct gqa_geo {
  int64_t B, S, N, Nk, G, H, P, L, R, rows, Pl, total;
  bool packed, rotary, il, sink, smooth, pos;
  int cs_in; /* the input index of cos_cache (sin_cache follows) */
  int64_t lws, qk;
  int64_t bst[3]; /* attention_bias strides of batch, head, row (0: broadcast) */
  double scale, cap;
} gqa_geo;

static int gqa_shapes(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out, gqa_geo *g) {
  const cg_val *Q = in[0], *K = n_in > 1 ? in[1] : NULL, *V = n_in > 2 ? in[2] : NULL;
  const cg_val *PK = n_in > 3 ? in[3] : NULL, *PV = n_in > 4 ? in[4] : NULL;
  const cg_val *SL = n_in > 5 ? in[5] : NULL, *TS = n_in > 6 ? in[6] : NULL;
  const cg_val *CS = n_in > 7 ? in[7] : NULL, *SN = n_in > 8 ? in[8] : NULL;
  const cg_val *PI = n_in > 9 ? in[9] : NULL, *AB = n_in > 10 ? in[10] : NULL;
  const cg_val *HS = n_in > 11 ? in[11] : NULL;
  memset(g, 0, sizeof *g);
  g->N = ox_node_attr_int(n, "num_heads", 0), g->Nk = ox_node_attr_int(n, "kv_num_heads", 0);
  g->lws = ox_node_attr_int(n, "local_window_size", -1);
  g->qk = ox_node_attr_int(n, "qk_output", 0);
  g->scale = ox_node_attr_float(n, "scale", 0.0f);
  g->cap = ox_node_attr_float(n, "softcap", 0.0f);
  g->rotary = ox_node_attr_int(n, "do_rotary", 0) != 0;
  g->il = ox_node_attr_int(n, "rotary_interleaved", 0) != 0;
  g->smooth = ox_node_attr_int(n, "smooth_softmax", -1) == 1;
  if (g->N <= 0 || g->Nk <= 0 || g->N % g->Nk)
    return cg_fail(c, OX_EMODEL, "num_heads must be a positive multiple of kv_num_heads");
  if (g->lws == 0 || g->lws < -1 || g->qk < 0 || g->qk > 2 || g->cap < 0 || g->cap != g->cap ||
      ox_node_attr_int(n, "causal", 1) != 1)
    return cg_fail(c, OX_EMODEL, "local_window_size, qk_output, softcap or causal is invalid");
  if (!SL || !TS || SL->dtype != OX_INT32 || TS->dtype != OX_INT32 || TS->numel != 1)
    return cg_fail(c, OX_EMODEL, "seqlens_k and total_sequence_length (int32) are required");
  for (size_t i = 0; i < n_in && i < 12; i++)
    if (in[i] && (i < 5 || (i >= 7 && i <= 8) || i >= 10) && in[i]->dtype != OX_FLOAT)
      return cg_fail(c, OX_EUNSUPPORTED, "input %zu must be float, float16 or bfloat16", i);
  g->packed = !K;
  if ((K == NULL) != (V == NULL) || (PK == NULL) != (PV == NULL) || Q->rank != 3)
    return cg_fail(c, OX_EMODEL, "query must be 3-D, key / value and the pasts given in pairs");
  g->B = Q->dims[0], g->S = Q->dims[1], g->G = g->N / g->Nk;
  int64_t parts = g->packed ? g->N + 2 * g->Nk : g->N;
  if (Q->dims[2] % parts || Q->dims[2] == 0 || g->S < 1)
    return cg_fail(c, OX_EMODEL, "query's last dimension is not a multiple of %lld heads",
                   (long long)parts);
  g->H = Q->dims[2] / parts;
  if (!g->packed)
    for (int i = 0; i < 2; i++) {
      const cg_val *x = i ? V : K;
      if (x->rank != 3 || x->dims[0] != g->B || x->dims[1] != g->S || x->dims[2] != g->H * g->Nk)
        return cg_fail(c, OX_EMODEL, "%s must be [B, S, kv_num_heads * head size]",
                       i ? "value" : "key");
    }
  if (PK)
    for (int i = 0; i < 2; i++) {
      const cg_val *x = i ? PV : PK;
      if (x->rank != 4 || x->dims[0] != g->B || x->dims[1] != g->Nk || x->dims[3] != g->H ||
          x->dims[2] != PK->dims[2])
        return cg_fail(c, OX_EMODEL,
                       "past_key and past_value must be [B, kv_num_heads, past, head size]");
    }
  g->P = PK ? PK->dims[2] : 0;
  g->L = g->P + g->S;
  if (SL->numel != g->B) return cg_fail(c, OX_EMODEL, "seqlens_k must hold batch values");
  int64_t tv[1];
  size_t nt = 0;
  g->total = cg_const_ints(TS, tv, 1, &nt) && nt == 1 ? tv[0] : -1;
  if ((CS == NULL) != (SN == NULL) || (g->rotary && !CS))
    return cg_fail(c, OX_EMODEL, "do_rotary needs cos_cache and sin_cache, given together");
  if (g->rotary) {
    if (CS->rank != 2 || SN->numel != CS->numel || CS->dims[1] < 1 || 2 * CS->dims[1] > g->H)
      return cg_fail(c, OX_EMODEL, "cos_cache width must be in [1, head size / 2]");
    g->R = 2 * CS->dims[1], g->rows = CS->dims[0], g->cs_in = 7;
    if (PI && PI->numel != g->B * g->S)
      return cg_fail(c, OX_EMODEL, "position_ids must be [batch, sequence]");
    g->pos = PI != NULL;
  }
  if (AB) {
    if (AB->rank != 4 || (AB->dims[0] != 1 && AB->dims[0] != g->B) ||
        (AB->dims[1] != 1 && AB->dims[1] != g->N) || AB->dims[2] != g->S || AB->dims[3] < 1)
      return cg_fail(c, OX_EMODEL, "attention_bias must be [1 or B, 1 or num_heads, S, total]");
    int64_t cols = AB->dims[3];
    g->bst[2] = cols;
    g->bst[1] = AB->dims[1] == 1 ? 0 : g->S * cols;
    g->bst[0] = AB->dims[0] == 1 ? 0 : AB->dims[1] * g->S * cols;
  }
  if (HS && HS->numel != g->N) return cg_fail(c, OX_EMODEL, "head_sink must hold num_heads values");
  g->sink = HS != NULL;
  g->Pl = 0;
  for (size_t j = 1; j < 3 && j < n_out; j++)
    if (out[j]) {
      if (out[j]->rank != 4 || out[j]->dims[2] < 1)
        return cg_fail(c, OX_EMODEL, "present_key and present_value must be 4-D");
      g->Pl = out[j]->dims[2];
    }
  if (n_out > 3 && out[3] && (out[3]->rank != 4 || out[3]->dims[3] < 1))
    return cg_fail(c, OX_EMODEL, "output_qk must be [B, num_heads, S, total]");
  return OX_OK;
}

/* Writes the new rows of batch b into the caches of g->L rows (rotated, at row past + s)
 * and the query rows (rotated) into qb [B, S, N, H]; `past` is defined by the caller. */
static void gqa_emit_rows(cg_ctx *c, const gqa_geo *g, const char *qb, const char *kb,
                          const char *vb) {
  int64_t H = g->H, S = g->S, qw = (g->N + (g->packed ? 2 * g->Nk : 0)) * H;
  int64_t kw = g->packed ? qw : g->Nk * H;
  const char *K = g->packed ? ox_arena_printf(c->a, "X0 + %lld", (long long)(g->N * H)) : "X1";
  const char *V =
      g->packed ? ox_arena_printf(c->a, "X0 + %lld", (long long)((g->N + g->Nk) * H)) : "X2";
  cg_printf(c, "    for (long long s = 0; s < %lld; s++) {\n", (long long)S);
  cg_printf(c, "      const float *qr = X0 + (b * %lld + s) * %lld;\n", (long long)S,
            (long long)qw);
  cg_printf(
      c, "      const float *kr = %s + (b * %lld + s) * %lld, *vr = %s + (b * %lld + s) * %lld;\n",
      K, (long long)S, (long long)kw, V, (long long)S, (long long)kw);
  if (g->rotary) {
    if (g->pos)
      cg_printf(c, "      long long row = (long long)X9[b * %lld + s];\n", (long long)S);
    else
      cg_printf(c, "      long long row = past + s;\n");
    cg_printf(c, "      if (row < 0 || row >= %lld) row = 0; /* outside the caches */\n",
              (long long)g->rows);
    cg_printf(c, "      const float *cs = X%d + row * %lld, *sn = X%d + row * %lld;\n", g->cs_in,
              (long long)(g->R / 2), g->cs_in + 1, (long long)(g->R / 2));
  }
  cg_printf(c, "      for (long long h = 0; h < %lld; h++) {\n", (long long)g->N);
  cg_printf(c, "        float *d = %s + ((b * %lld + s) * %lld + h) * %lld;\n", qb, (long long)S,
            (long long)g->N, (long long)H);
  cg_printf(c, "        memcpy(d, qr + h * %lld, %zu);\n", (long long)H, (size_t)H * sizeof(float));
  if (g->rotary) cg_emit_rotate(c, "        ", "float", "d", "d", g->R / 2, g->il);
  cg_printf(c, "      }\n      for (long long h = 0; h < %lld; h++) {\n", (long long)g->Nk);
  cg_printf(c, "        const long long at = ((b * %lld + h) * %lld + past + s) * %lld;\n",
            (long long)g->Nk, (long long)g->L, (long long)H);
  cg_printf(c, "        float *d = %s + at;\n", kb);
  cg_printf(c, "        memcpy(d, kr + h * %lld, %zu);\n", (long long)H, (size_t)H * sizeof(float));
  cg_printf(c, "        memcpy(%s + at, vr + h * %lld, %zu);\n", vb, (long long)H,
            (size_t)H * sizeof(float));
  if (g->rotary) cg_emit_rotate(c, "        ", "float", "d", "d", g->R / 2, g->il);
  cg_printf(c, "      }\n    }\n");
}

/* Writes, for query row s of head h in batch b, the softmax of row[lo, hi) (keys left out
 * hold -INFINITY; e^sink joins the denominator when sink is not NULL), then `after` (C text
 * or NULL), then y = Y0's row = the probabilities times the values vc (rows of H). A row
 * without keys, or all of whose keys are -INFINITY, gives zeros. The sum is in double (in
 * float under --float-only), as the runtime's exp_sum. */
static void attn_emit_softmax_av(cg_ctx *c, const char *sink, const char *after, int64_t S,
                                 int64_t N, int64_t H) {
  const char *acc = c->o->float_only ? "float" : "double";
  cg_printf(c, "        float mx = %s;\n", sink ? sink : "-INFINITY");
  cg_printf(c, "        for (long long j = lo; j < hi; j++)\n");
  cg_printf(c, "          if (row[j] > mx || row[j] != row[j]) mx = row[j];\n");
  cg_printf(c, "        float *y = Y0 + ((b * %lld + s) * %lld + h) * %lld;\n", (long long)S,
            (long long)N, (long long)H);
  cg_printf(c, "        for (long long e = 0; e < %lld; e++) y[e] = 0.0f;\n", (long long)H);
  cg_printf(c, "        if (hi <= lo || mx == -INFINITY) continue;\n");
  cg_printf(c, "        %s sum = 0;\n", acc);
  cg_printf(c, "        for (long long j = lo; j < hi; j++) {\n");
  cg_printf(c, "          row[j] = expf(row[j] - mx);\n          sum += row[j];\n        }\n");
  if (sink)
    cg_printf(c, "        sum += %s((%s)%s - mx);\n", c->o->float_only ? "expf" : "exp", acc, sink);
  cg_printf(c, "        const float inv = (float)(1.0%s / sum);\n", c->o->float_only ? "f" : "");
  cg_printf(c, "        for (long long j = lo; j < hi; j++) row[j] *= inv;\n");
  if (after) cg_printf(c, "%s", after);
  cg_printf(c, "        for (long long j = lo; j < hi; j++)\n");
  cg_printf(c,
            "          for (long long e = 0; e < %lld; e++) y[e] += row[j] * vc[j * %lld + e];\n",
            (long long)H, (long long)H);
}

static int gen_gqa_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  gqa_geo g;
  int rc = gqa_shapes(c, n, in, n_in, out, n_out, &g);
  if (rc) return rc;
  int64_t B = g.B, S = g.S, N = g.N, Nk = g.Nk, H = g.H, L = g.L, P = g.P;
  cg_val *qs = cg_scratch(c, OX_FLOAT, B * S * N * H);
  cg_val *ks = cg_scratch(c, OX_FLOAT, B * Nk * L * H);
  cg_val *vs = cg_scratch(c, OX_FLOAT, B * Nk * L * H);
  const char *qb = qs ? cg_ref(c, qs) : NULL, *kb = ks ? cg_ref(c, ks) : NULL;
  const char *vb = vs ? cg_ref(c, vs) : NULL;
  if (!qb || !kb || !vb)
    return cg_fail(c, OX_EUNSUPPORTED, "no scratch for the caches (inside a control-flow body?)");
  bool qk = n_out > 3 && out[3] && g.qk > 0;
  int64_t QT = qk ? out[3]->dims[3] : 0;
  char lit[64];
  if (n_out > 3 && out[3] && !qk) /* output_qk asked for without qk_output: zeros */
    cg_printf(c, "  memset(Y3, 0, %zu);\n", out[3]->nbytes);
  /* which rows are past: seqlens_k and total_sequence_length at run time */
  cg_printf(c, "  const long long total = (long long)X6[0];\n");
  cg_printf(c, "  const int first = !(%lld > 1 && total != %lld) && total == %lld;\n", (long long)S,
            (long long)S, (long long)S);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", (long long)B);
  cg_printf(c, "    long long past = first ? 0 : (long long)X5[b] + 1 - %lld;\n", (long long)S);
  cg_printf(c,
            "    if (past < 0) past = 0;\n    if (past > %lld) past = %lld; /* beyond the past "
            "buffer */\n",
            (long long)P, (long long)P);
  if (P) {
    cg_printf(c, "    for (long long h = 0; h < %lld; h++) {\n", (long long)Nk);
    cg_printf(c,
              "      memcpy(%s + (b * %lld + h) * %lld, X3 + (b * %lld + h) * %lld, (size_t)past * "
              "%zu);\n",
              kb, (long long)Nk, (long long)(L * H), (long long)Nk, (long long)(P * H),
              (size_t)H * sizeof(float));
    cg_printf(c,
              "      memcpy(%s + (b * %lld + h) * %lld, X4 + (b * %lld + h) * %lld, (size_t)past * "
              "%zu);\n",
              vb, (long long)Nk, (long long)(L * H), (long long)Nk, (long long)(P * H),
              (size_t)H * sizeof(float));
    cg_printf(c, "    }\n");
  }
  gqa_emit_rows(c, &g, qb, kb, vb);
  /* present: the valid rows (past, then new), zeros after */
  for (size_t j = 1; j < 3 && j < n_out; j++) {
    if (!out[j]) continue;
    cg_printf(c, "    for (long long h = 0; h < %lld; h++)\n", (long long)Nk);
    cg_printf(c, "      for (long long r = 0; r < %lld; r++) {\n", (long long)g.Pl);
    cg_printf(c, "        float *d = Y%zu + ((b * %lld + h) * %lld + r) * %lld;\n", j,
              (long long)Nk, (long long)g.Pl, (long long)H);
    cg_printf(c, "        if (r < past + %lld && r < %lld)\n", (long long)S, (long long)L);
    cg_printf(c, "          memcpy(d, %s + ((b * %lld + h) * %lld + r) * %lld, %zu);\n",
              j == 1 ? kb : vb, (long long)Nk, (long long)L, (long long)H,
              (size_t)H * sizeof(float));
    cg_printf(c, "        else\n          memset(d, 0, %zu);\n      }\n",
              (size_t)H * sizeof(float));
  }
  /* one query row at a time: its scores over the keys it sees, [lo, hi) */
  cg_printf(c, "    const long long tot0 = (long long)X5[b] + 1;\n");
  cg_printf(c, "    long long tot = tot0 < past + %lld ? tot0 : past + %lld;\n", (long long)S,
            (long long)S);
  if (g.bst[2]) /* attention_bias's columns bound the keys read (the runtime fails beyond) */
    cg_printf(c, "    if (tot > %lld) tot = %lld;\n", (long long)g.bst[2], (long long)g.bst[2]);
  cg_printf(c, "    for (long long h = 0; h < %lld; h++) {\n", (long long)N);
  cg_printf(c, "      const long long hk = h / %lld;\n", (long long)g.G);
  cg_printf(
      c,
      "      const float *kc = %s + (b * %lld + hk) * %lld, *vc = %s + (b * %lld + hk) * %lld;\n",
      kb, (long long)Nk, (long long)(L * H), vb, (long long)Nk, (long long)(L * H));
  cg_printf(c, "      for (long long s = 0; s < %lld; s++) {\n", (long long)S);
  cg_printf(c, "        long long hi = past + s + 1, lo = 0;\n        if (hi > tot) hi = tot;\n");
  if (g.lws > 0)
    cg_printf(c, "        if (hi > %lld) lo = hi - %lld;\n", (long long)g.lws, (long long)g.lws);
  cg_printf(c, "        const float *q = %s + ((b * %lld + s) * %lld + h) * %lld;\n", qb,
            (long long)S, (long long)N, (long long)H);
  cg_printf(c, "        float row[%lld];\n", (long long)L);
  double scale = g.scale != 0.0 ? g.scale : 1.0 / sqrt((double)H);
  cg_float_lit(lit, sizeof lit, (double)(float)scale, true);
  cg_printf(c, "        for (long long j = lo; j < hi; j++) {\n          float d = 0.0f;\n");
  cg_printf(c, "          for (long long e = 0; e < %lld; e++) d += q[e] * kc[j * %lld + e];\n",
            (long long)H, (long long)H);
  cg_printf(c, "          row[j] = %s * d;\n", lit);
  if (g.cap > 0) {
    cg_float_lit(lit, sizeof lit, g.cap, true);
    cg_printf(c, "          row[j] = tanhf(row[j] / %s) * %s;\n", lit, lit);
  }
  if (n_in > 10 && in[10])
    cg_printf(c, "          row[j] += X10[b * %lld + h * %lld + s * %lld + j];\n",
              (long long)g.bst[0], (long long)g.bst[1], (long long)g.bst[2]);
  cg_printf(c, "        }\n");
  const char *qo = ox_arena_printf(c->a, "Y3 + ((b * %lld + h) * %lld + s) * %lld", (long long)N,
                                   (long long)S, (long long)QT);
  if (qk) {
    cg_printf(c, "        float *qo = %s;\n", qo);
    cg_printf(c, "        for (long long j = 0; j < %lld; j++) qo[j] = 0.0f;\n", (long long)QT);
    if (g.qk == 1)
      cg_printf(c, "        for (long long j = lo; j < hi && j < %lld; j++) qo[j] = row[j];\n",
                (long long)QT);
  }
  const char *qk2 =
      qk && g.qk == 2
          ? ox_arena_printf(
                c->a, "        for (long long j = lo; j < hi && j < %lld; j++) qo[j] = row[j];\n",
                (long long)QT)
          : NULL;
  attn_emit_softmax_av(c, g.sink ? "X11[h]" : g.smooth ? "0.0f" : NULL, qk2, S, N, H);
  cg_printf(c, "      }\n    }\n  }\n");
  return OX_OK;
}

static int gen_gqa(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  return cg_gen_maybe_widened(c, gen_gqa_f, n, in, n_in, out, n_out);
}

/* ---- SparseAttention ----
 * present_key / present_value are past's buffers of M rows (their static shape, as
 * onnxruntime requires present to be past's own buffer) with the new rows written at each
 * sequence's past length key_total_sequence_lengths[b] - S (0 on a prompt,
 * total_sequence_length == S); query row s sees, of the keys up to its position p, those
 * in the blocks of block row p / sparse_block_size its layout (h % layouts, a CSR of
 * block_row_indices and block_col_indices, read at run time) keeps. */
static int gen_sparse_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  const cg_val *Q = in[0], *K = n_in > 1 ? in[1] : NULL, *V = n_in > 2 ? in[2] : NULL;
  const cg_val *PK = n_in > 3 ? in[3] : NULL, *PV = n_in > 4 ? in[4] : NULL;
  const cg_val *RI = n_in > 5 ? in[5] : NULL, *CI = n_in > 6 ? in[6] : NULL;
  const cg_val *TS = n_in > 7 ? in[7] : NULL, *KL = n_in > 8 ? in[8] : NULL;
  const cg_val *CS = n_in > 9 ? in[9] : NULL, *SN = n_in > 10 ? in[10] : NULL;
  gqa_geo g;
  memset(&g, 0, sizeof g);
  int64_t blk = ox_node_attr_int(n, "sparse_block_size", 0);
  g.N = ox_node_attr_int(n, "num_heads", 0), g.Nk = ox_node_attr_int(n, "kv_num_heads", 0);
  g.scale = ox_node_attr_float(n, "scale", 0.0f);
  g.rotary = ox_node_attr_int(n, "do_rotary", 0) != 0;
  g.il = ox_node_attr_int(n, "rotary_interleaved", 0) != 0;
  if (g.N <= 0 || g.Nk <= 0 || g.N % g.Nk || blk <= 0)
    return cg_fail(c, OX_EMODEL,
                   "num_heads (a multiple of kv_num_heads) and "
                   "sparse_block_size must be positive");
  if (!PK || !PV || !RI || !CI || !TS || !KL)
    return cg_fail(c, OX_EMODEL,
                   "past_key, past_value, block_row_indices, block_col_indices, "
                   "total_sequence_length and key_total_sequence_lengths are required");
  if (RI->dtype != OX_INT32 || CI->dtype != OX_INT32 || TS->dtype != OX_INT32 ||
      KL->dtype != OX_INT32 || RI->rank != 2 || CI->rank != 2 || TS->numel != 1)
    return cg_fail(c, OX_EMODEL, "the block indices and lengths must be int32");
  for (size_t i = 0; i < n_in && i < 11; i++)
    if (in[i] && (i < 5 || i >= 9) && in[i]->dtype != OX_FLOAT)
      return cg_fail(c, OX_EUNSUPPORTED, "input %zu must be float, float16 or bfloat16", i);
  g.packed = !K;
  if ((K == NULL) != (V == NULL) || Q->rank != 3)
    return cg_fail(c, OX_EMODEL, "query must be 3-D, key and value given together");
  g.B = Q->dims[0], g.S = Q->dims[1], g.G = g.N / g.Nk;
  int64_t parts = g.packed ? g.N + 2 * g.Nk : g.N;
  if (Q->dims[2] % parts || Q->dims[2] == 0 || g.S < 1)
    return cg_fail(c, OX_EMODEL, "query's last dimension is not a multiple of %lld heads",
                   (long long)parts);
  g.H = Q->dims[2] / parts;
  if (!g.packed &&
      (K->rank != 3 || V->rank != 3 || K->numel != g.B * g.S * g.Nk * g.H || V->numel != K->numel))
    return cg_fail(c, OX_EMODEL, "key and value must be [B, S, kv_num_heads * head size]");
  for (int i = 0; i < 2; i++) {
    const cg_val *x = i ? PV : PK;
    if (x->rank != 4 || x->dims[0] != g.B || x->dims[1] != g.Nk || x->dims[3] != g.H ||
        x->dims[2] != PK->dims[2])
      return cg_fail(c, OX_EMODEL,
                     "past_key and past_value must be [B, kv_num_heads, buffer, head size]");
  }
  int64_t B = g.B, S = g.S, N = g.N, Nk = g.Nk, H = g.H, M = PK->dims[2];
  int64_t nl = RI->dims[0], nb = RI->dims[1] - 1, ncol = CI->dims[1];
  if (M < S || nl < 1 || N % nl || nb < 1 || CI->dims[0] != nl || KL->numel != B)
    return cg_fail(c, OX_EMODEL, "the layouts, lengths or past buffer do not fit the query");
  g.L = M;
  if (g.rotary) {
    if (!CS || !SN || CS->rank != 2 || SN->numel != CS->numel || CS->dims[1] < 1 ||
        2 * CS->dims[1] > H)
      return cg_fail(c, OX_EMODEL, "do_rotary needs [positions, rotary / 2] caches");
    g.R = 2 * CS->dims[1], g.rows = CS->dims[0], g.cs_in = 9;
  }
  /* the presents: the outputs, else scratch (the attention reads the keys from them) */
  const char *pk = "Y1", *pv = "Y2";
  for (int i = 0; i < 2; i++) {
    if (n_out > (size_t)(1 + i) && out[1 + i]) continue;
    cg_val *t = cg_scratch(c, OX_FLOAT, B * Nk * M * H);
    const char *r = t ? cg_ref(c, t) : NULL;
    if (!r)
      return cg_fail(c, OX_EUNSUPPORTED, "no scratch for the caches (inside a control-flow body?)");
    if (i)
      pv = r;
    else
      pk = r;
  }
  cg_val *qs = cg_scratch(c, OX_FLOAT, B * S * N * H);
  const char *qb = qs ? cg_ref(c, qs) : NULL;
  if (!qb)
    return cg_fail(c, OX_EUNSUPPORTED, "no scratch for the query (inside a control-flow body?)");
  size_t pbytes = (size_t)(B * Nk * M * H) * sizeof(float);
  cg_printf(c, "  memcpy(%s, X3, %zu);\n  memcpy(%s, X4, %zu);\n", pk, pbytes, pv, pbytes);
  cg_printf(c, "  const int prompt = (long long)X7[0] == %lld;\n", (long long)S);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", (long long)B);
  cg_printf(c, "    long long past = prompt ? 0 : (long long)X8[b] - %lld;\n", (long long)S);
  cg_printf(
      c, "    if (past < 0) past = 0;\n    if (past > %lld) past = %lld; /* beyond the buffer */\n",
      (long long)(M - S), (long long)(M - S));
  gqa_emit_rows(c, &g, qb, pk, pv);
  char lit[64];
  double scale = g.scale != 0.0 ? g.scale : 1.0 / sqrt((double)H);
  cg_float_lit(lit, sizeof lit, (double)(float)scale, true);
  cg_printf(c, "    for (long long h = 0; h < %lld; h++) {\n", (long long)N);
  cg_printf(c, "      const long long hk = h / %lld;\n", (long long)g.G);
  cg_printf(
      c,
      "      const float *kc = %s + (b * %lld + hk) * %lld, *vc = %s + (b * %lld + hk) * %lld;\n",
      pk, (long long)Nk, (long long)(M * H), pv, (long long)Nk, (long long)(M * H));
  cg_printf(c,
            "      const int32_t *rows = X5 + h %% %lld * %lld, *cols = X6 + h %% %lld * %lld;\n",
            (long long)nl, (long long)(nb + 1), (long long)nl, (long long)ncol);
  cg_printf(c, "      for (long long s = 0; s < %lld; s++) {\n", (long long)S);
  cg_printf(c, "        const long long p = past + s, lo = 0, hi = p + 1;\n");
  cg_printf(c, "        long long br = p / %lld;\n        if (br >= %lld) br = %lld;\n",
            (long long)blk, (long long)nb, (long long)(nb - 1));
  cg_printf(c, "        long long j0 = rows[br], j1 = rows[br + 1];\n");
  cg_printf(c, "        if (j0 < 0) j0 = 0;\n        if (j1 > %lld) j1 = %lld;\n", (long long)ncol,
            (long long)ncol);
  cg_printf(c, "        const float *q = %s + ((b * %lld + s) * %lld + h) * %lld;\n", qb,
            (long long)S, (long long)N, (long long)H);
  cg_printf(c, "        float row[%lld];\n", (long long)M);
  cg_printf(c, "        for (long long j = 0; j < hi; j++) row[j] = -INFINITY;\n");
  cg_printf(c, "        for (long long t = j0; t < j1; t++) {\n");
  cg_printf(c, "          long long k0 = (long long)cols[t] * %lld, k1 = k0 + %lld;\n",
            (long long)blk, (long long)blk);
  cg_printf(c, "          if (k0 < 0) k0 = 0;\n          if (k1 > hi) k1 = hi;\n");
  cg_printf(c, "          for (long long j = k0; j < k1; j++) {\n            float d = 0.0f;\n");
  cg_printf(c, "            for (long long e = 0; e < %lld; e++) d += q[e] * kc[j * %lld + e];\n",
            (long long)H, (long long)H);
  cg_printf(c, "            row[j] = %s * d;\n          }\n        }\n", lit);
  attn_emit_softmax_av(c, NULL, NULL, S, N, H);
  cg_printf(c, "      }\n    }\n  }\n");
  return OX_OK;
}

static int gen_sparse(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  return cg_gen_maybe_widened(c, gen_sparse_f, n, in, n_in, out, n_out);
}

const cg_op ox_cg_ops_ms_gqa[] = {
    {CG_DOMAIN_MS ":SparseAttention", gen_sparse},
    {CG_DOMAIN_MS ":GroupQueryAttention", gen_gqa},
    {CG_DOMAIN_MS ":RotaryEmbedding", gen_ms_rotary},
    {NULL, NULL},
};
