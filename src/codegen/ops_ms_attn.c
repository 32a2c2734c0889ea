/* ops_ms_attn.c - C generators of onnxruntime's com.microsoft Attention, MultiHeadAttention and
 * QAttention.
 *
 * Semantics as the runtime's kernels (src/ops/contrib/attn.c, quant_attn.c): the three reduce to
 * Q, K and V addressed per head (the past keys and values in front of the new ones), one
 * additive mask per query row made from the key mask (mask_index / key_padding_mask: end
 * positions [B], end and start [2B], raw 0/1 [B, T] or [B, S, T], GPT-2's [B, 1, M, M]),
 * causality and attention_bias, mask_filter_value where a key is masked (added, not -inf, as
 * onnxruntime does), then the query-row loop of ops_attention.c (cg_attn_scores / softmax /
 * values). Attention's input projection is cg_gemm.c's product with the bias; QAttention's the
 * exact integer sum scaled per column. float16 goes through cg_widen.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ops/contrib/attn_shape.h"
#include "cg_impl.h"

/* Element (b, h, row) of a head-split view: p + b * sb + h * sh + row * si. */
typedef struct ms_src {
  const char *p;
  int64_t sb, sh, si;
} ms_src;

/* The head loop of one node. */
typedef struct ms_heads {
  int32_t dt;
  int64_t B, N, S, Hq, Hv;
  const char *T; /* total key count (C expression) */
  int64_t Tmax;  /* its bound */
  int64_t P;     /* past rows read from pk / pv (0: k and v hold every key) */
  int64_t past;  /* the past length (where query row i sits among the keys: past + i) */
  ms_src q, k, v;
  const char *pk, *pv; /* past [B, N, P, H] */
  double scale;
  /* the mask */
  const cg_val *keys; /* key mask, input keys_in; NULL: none */
  int keys_in;
  const cg_val *ab; /* attention_bias [B or 1, N or 1, S, T], input ab_in; NULL: none */
  int ab_in;
  bool causal;
  bool q8; /* QAttention's: a raw key value <= 0 is masked, a future key gets mask_filter_value */
  double filter;
  int qk; /* output index of the scores plus mask [B, N, S, T]; 0: none */
} ms_heads;

/* "<prefix><v>" in the arena (NULL when out of memory). */
static const char *str(cg_ctx *c, const char *prefix, long long v) {
  return ox_arena_printf(c->a, "%s%lld", prefix, v);
}

/* The additive mask of query row i (b, h known) added to row[j]. */
static void emit_mask(cg_ctx *c, const ms_heads *a) {
  bool causal = a->causal && (a->q8 || a->S > 1);
  if (!a->keys && !a->ab && !causal) return;
  const char *Tt = cg_ctype(a->dt);
  bool f32 = a->dt == OX_FLOAT;
  char f[64], lo[64];
  cg_float_lit(f, sizeof f, a->filter, f32);
  cg_float_lit(lo, sizeof lo, -FLT_MAX, f32);
  long long B = a->B, S = a->S, T = a->Tmax, P = a->past;
  cg_printf(c, "        for (long long j = 0; j < %s; j++) {\n          int off = 0;\n", a->T);
  const cg_val *k = a->keys;
  const char *eq = a->q8 ? "<= 0" : "== 0";
  if (k && k->rank == 1) {
    cg_printf(c, "          off = j >= X%d[b];\n", a->keys_in);
    if (k->dims[0] == 2 * B)
      cg_printf(c, "          if (j < X%d[%lld + b]) off = 1;\n", a->keys_in, B);
  } else if (k && k->rank == 2) {
    cg_printf(c, "          off = X%d[b * %lld + j] %s;\n", a->keys_in, T, eq);
  } else if (k && k->rank == 3) {
    cg_printf(c, "          off = X%d[(b * %lld + i) * %lld + j] %s;\n", a->keys_in, S, T, eq);
  } else if (k) { /* [B, 1, M, M]: row past + i */
    long long M = k->dims[2];
    cg_printf(c, "          off = X%d[(b * %lld + %lld + i) * %lld + j] == 0;\n", a->keys_in, M, P,
              M);
  }
  cg_printf(c, "          %s m = off ? %s : 0;\n", Tt, f);
  /* a future key: dropped (the lowest float) by Attention and MultiHeadAttention, except on
   * the last query row as onnxruntime's kernel; QAttention's gets the filter value */
  if (causal && a->q8)
    cg_printf(c, "          if (j > %lld + i) m = %s;\n", P, f);
  else if (causal)
    cg_printf(c, "          if (i < %lld && j > %lld + i) m = %s;\n", S - 1, P, lo);
  if (a->ab) {
    const cg_val *ab = a->ab;
    cg_printf(c, "          m += X%d[((%s) * %lld + %s) * %lld + i * %lld + j];\n", a->ab_in,
              ab->dims[0] == 1 ? "0" : "b", (long long)ab->dims[1], ab->dims[1] == 1 ? "0" : "h",
              S * T, T);
  }
  cg_printf(c, "          row[j] += m;\n        }\n");
}

/* Y0 [B, S, N * Hv] (and the scores output) from the heads of a. */
static int emit_heads(cg_ctx *c, const ms_heads *a) {
  long long N = a->N, S = a->S, Hq = a->Hq, Hv = a->Hv;
  cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n", (long long)a->B);
  cg_printf(c, "    for (long long h = 0; h < %lld; h++) {\n", N);
  cg_printf(c, "      for (long long i = 0; i < %lld; i++) {\n", S);
  cg_printf(c, "        const %s *q = %s + b * %lld + h * %lld + i * %lld;\n", cg_ctype(a->dt),
            a->q.p, (long long)a->q.sb, (long long)a->q.sh, (long long)a->q.si);
  cg_attn_row r = {
      .dtype = a->dt,
      .T = a->T,
      .Tmax = a->Tmax,
      .D = Hq,
      .Dv = Hv,
      .P = a->P,
      .q = "q",
      .k = ox_arena_printf(c->a, "%s + b * %lld + h * %lld", a->k.p, (long long)a->k.sb,
                           (long long)a->k.sh),
      .ks = a->k.si,
      .v = ox_arena_printf(c->a, "%s + b * %lld + h * %lld", a->v.p, (long long)a->v.sb,
                           (long long)a->v.sh),
      .vs = a->v.si,
      .pk =
          a->P ? ox_arena_printf(c->a, "%s + (b * %lld + h) * %lld", a->pk, N, (long long)a->P * Hq)
               : "",
      .pv =
          a->P ? ox_arena_printf(c->a, "%s + (b * %lld + h) * %lld", a->pv, N, (long long)a->P * Hv)
               : "",
      .y = ox_arena_printf(c->a, "Y0 + (b * %lld + i) * %lld + h * %lld", S, N * Hv, Hv)};
  if (!r.k || !r.v || !r.pk || !r.pv || !r.y)
    return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_attn_scores(c, &r, a->scale);
  emit_mask(c, a);
  if (a->qk)
    cg_printf(c, "        memcpy(Y%d + ((b * %lld + h) * %lld + i) * %lld, row, %zu);\n", a->qk, N,
              S, (long long)a->Tmax, (size_t)a->Tmax * (a->dt == OX_FLOAT ? 4 : 8));
  cg_attn_softmax(c, &r);
  cg_attn_values(c, &r);
  cg_printf(c, "      }\n    }\n");
  return OX_OK;
}

/* dst [B, N, rows, H] at rows off.. from rows 0..L of src, plus bias[h * H + e] when given. */
static void put_rows(cg_ctx *c, int32_t dt, const char *dst, int64_t rows, int64_t off,
                     const ms_src *s, int64_t B, int64_t N, int64_t L, int64_t H,
                     const char *bias) {
  cg_printf(c,
            "  for (long long b = 0; b < %lld; b++)\n    for (long long h = 0; h < %lld; h++)\n"
            "      for (long long i = 0; i < %lld; i++) {\n",
            (long long)B, (long long)N, (long long)L);
  cg_printf(c, "        %s *d = %s + ((b * %lld + h) * %lld + %lld + i) * %lld;\n", cg_ctype(dt),
            dst, (long long)N, (long long)rows, (long long)off, (long long)H);
  cg_printf(c, "        const %s *x = %s + b * %lld + h * %lld + i * %lld;\n", cg_ctype(dt), s->p,
            (long long)s->sb, (long long)s->sh, (long long)s->si);
  if (bias)
    cg_printf(c, "        for (long long e = 0; e < %lld; e++) d[e] = x[e] + (%s)[h * %lld + e];\n",
              (long long)H, bias, (long long)H);
  else
    cg_printf(c, "        for (long long e = 0; e < %lld; e++) d[e] = x[e];\n", (long long)H);
  cg_printf(c, "      }\n");
}

/* past [B * N heads, P, H] into rows 0..P of dst [B * N, rows, H]. */
static void put_past(cg_ctx *c, int32_t dt, const char *dst, int64_t rows, const char *past,
                     int64_t BN, int64_t P, int64_t H) {
  if (!P) return;
  cg_printf(c, "  for (long long bh = 0; bh < %lld; bh++)\n", (long long)BN);
  cg_printf(c, "    memcpy(%s + bh * %lld, %s + bh * %lld, %zu);\n", dst, (long long)(rows * H),
            past, (long long)(P * H), (size_t)(P * H) * (dt == OX_FLOAT ? 4 : 8));
}

/* A scratch array's C expression (NULL when out of memory: the error is set). */
static const char *scratch(cg_ctx *c, int32_t dt, int64_t n) {
  cg_val *s = cg_scratch(c, dt, n > 0 ? n : 1);
  const char *r = s ? cg_ref(c, s) : NULL;
  if (!r) ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  return r;
}

/* float16 / bfloat16 anywhere on the node: it runs as float between conversions. */
static bool any_half(cg_val **in, size_t n_in, cg_val **out, size_t n_out) {
  for (size_t i = 0; i < n_in + n_out; i++) {
    const cg_val *v = i < n_in ? in[i] : out[i - n_in];
    if (v && (v->dtype == OX_FLOAT16 || v->dtype == OX_BFLOAT16)) return true;
  }
  return false;
}

/* The key mask's shape (attn_shape.h), ranks up to max_rank ("" when it fits). */
static const char *key_mask_problem(const cg_val *m, int64_t B, int64_t S, int64_t T, int64_t P,
                                    bool causal, int max_rank) {
  if (m->rank == 4 && max_rank < 4) return "must have rank 1, 2 or 3";
  return ox_attn_key_mask_problem(m->dtype, m->dims, m->rank, B, S, T, P, causal);
}

/* The attributes of the family: heads, causality, filter value, scale. */
static int common_attrs(cg_ctx *c, const ox_node *n, ms_heads *a) {
  ox_attn_attrs at;
  char why[96];
  const char *bad = ox_attn_attrs_read(n, &at, why, sizeof why);
  a->N = at.heads, a->causal = at.causal, a->filter = at.filter, a->scale = at.scale;
  if (*bad) return cg_fail(c, OX_EUNSUPPORTED, "%s", bad);
  return OX_OK;
}

/* ==== Attention and QAttention: after the projection qkv [B * S, hq + hk + hv] ==== */

/* a: attributes, B, S, N, Hq, Hv, mask and dt set; past: input index of past [2, B, N, P, Hq]
 * (-1: none); present: whether output 1 is wanted. */
static int packed_heads(cg_ctx *c, ms_heads *a, const char *qkv, int64_t hq, int64_t hk,
                        int64_t width, cg_val **in, int past, bool present) {
  int64_t B = a->B, S = a->S, N = a->N, Hq = a->Hq, P = 0;
  if (past >= 0) {
    const cg_val *PA = in[past];
    if (PA->rank != 5 || PA->dims[0] != 2 || PA->dims[1] != B || PA->dims[2] != N ||
        PA->dims[4] != Hq || a->Hv != Hq)
      return cg_fail(c, OX_EMODEL, "past must be (2, %lld, %lld, past_length, %lld)", (long long)B,
                     (long long)N, (long long)Hq);
    P = PA->dims[3];
  }
  int64_t T = P + S;
  a->past = P;
  if (present && hk != width - hq - hk)
    return cg_fail(c, OX_EMODEL, "present needs the same k and v hidden sizes");
  if (a->keys) {
    const char *why = key_mask_problem(a->keys, B, S, T, P, a->causal, a->q8 ? 3 : 4);
    if (*why) return cg_fail(c, OX_EMODEL, "mask_index %s", why);
  }
  if (a->ab &&
      (a->ab->rank != 4 || (a->ab->dims[0] != 1 && a->ab->dims[0] != B) ||
       (a->ab->dims[1] != 1 && a->ab->dims[1] != N) || a->ab->dims[2] != S || a->ab->dims[3] != T))
    return cg_fail(c, OX_EMODEL, "attention_bias must be (batch or 1, num_heads or 1, %lld, %lld)",
                   (long long)S, (long long)T);
  a->T = str(c, "", (long long)T);
  a->Tmax = T;
  a->q = (ms_src){qkv, S * width, Hq, width};
  ms_src k = {NULL, S * width, Hq, width}, v = {NULL, S * width, a->Hv, width};
  k.p = ox_arena_printf(c->a, "%s + %lld", qkv, (long long)hq);
  v.p = ox_arena_printf(c->a, "%s + %lld", qkv, (long long)(hq + hk));
  if (!a->T || !k.p || !v.p) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  const char *pv = ox_arena_printf(c->a, "X%d + %lld", past, (long long)(B * N * P * Hq));
  if (present) { /* present [2, B, N, T, H]: past then new; the heads read it */
    const char *yv = ox_arena_printf(c->a, "Y1 + %lld", (long long)(B * N * T * Hq));
    if (!pv || !yv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    if (P) {
      put_past(c, a->dt, "Y1", T, ox_arena_printf(c->a, "X%d", past), B * N, P, Hq);
      put_past(c, a->dt, yv, T, pv, B * N, P, Hq);
    }
    put_rows(c, a->dt, "Y1", T, P, &k, B, N, S, Hq, NULL);
    put_rows(c, a->dt, yv, T, P, &v, B, N, S, Hq, NULL);
    a->k = (ms_src){"Y1", N * T * Hq, T * Hq, Hq};
    a->v = (ms_src){yv, N * T * Hq, T * Hq, Hq};
    a->P = 0;
  } else {
    a->k = k, a->v = v, a->P = P;
    a->pk = ox_arena_printf(c->a, "X%d", past);
    a->pv = pv;
  }
  return emit_heads(c, a);
}

static int gen_attention(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  if (any_half(in, n_in, out, n_out))
    return cg_gen_widened(c, gen_attention, n, in, n_in, out, n_out);
  cg_val *X = in[0], *W = n_in > 1 ? in[1] : NULL, *Bi = n_in > 2 ? in[2] : NULL;
  ms_heads a = {0};
  int rc = common_attrs(c, n, &a);
  if (rc) return rc;
  if (n_in > 6 && in[6])
    return cg_fail(c, OX_EMODEL,
                   "past_sequence_length is only used with past_present_share_buffer");
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank != 3 || !W || W->rank != 2 || W->dtype != X->dtype)
    return cg_fail(c, OX_EMODEL,
                   "input (batch, seq, hidden) and 2-D weights of its type are required");
  int64_t B = X->dims[0], S = X->dims[1], din = X->dims[2], width = W->dims[1], hq, hk, hv;
  int64_t qkv[3];
  size_t nq;
  if (cg_attr_ints(n, "qkv_hidden_sizes", qkv, 3, &nq)) {
    if (nq != 3 || qkv[0] <= 0 || qkv[1] <= 0 || qkv[2] <= 0 || qkv[0] != qkv[1])
      return cg_fail(c, OX_EMODEL, "qkv_hidden_sizes must be 3 positive values with q equal to k");
    if (qkv[0] + qkv[1] + qkv[2] != width)
      return cg_fail(c, OX_EMODEL, "qkv_hidden_sizes do not sum to the weights width %lld",
                     (long long)width);
    hq = qkv[0], hk = qkv[1], hv = qkv[2];
  } else {
    if (width % 3)
      return cg_fail(c, OX_EMODEL, "weights width %lld is not 3 * hidden size", (long long)width);
    hq = hk = hv = width / 3;
  }
  if (hq % a.N || hv % a.N)
    return cg_fail(c, OX_EMODEL, "num_heads %lld does not divide the hidden sizes (%lld, %lld)",
                   (long long)a.N, (long long)hq, (long long)hv);
  if (W->dims[0] != din)
    return cg_fail(c, OX_EMODEL, "input hidden size %lld does not match weights rows %lld",
                   (long long)din, (long long)W->dims[0]);
  if (Bi && (Bi->rank != 1 || Bi->dims[0] != width || Bi->dtype != X->dtype))
    return cg_fail(c, OX_EMODEL, "bias must be 1-D of length %lld", (long long)width);
  a.dt = X->dtype, a.B = B, a.S = S, a.Hq = hq / a.N, a.Hv = hv / a.N;
  if (a.scale == 0.0) a.scale = 1.0 / sqrt((double)a.Hq);
  a.keys = n_in > 3 ? in[3] : NULL, a.keys_in = 3;
  a.ab = n_in > 5 ? in[5] : NULL, a.ab_in = 5;
  /* the projection [B * S, width] with the bias */
  const char *gemm = cg_gemm_fn(c, X->dtype), *p = scratch(c, X->dtype, B * S * width);
  if (!gemm || !p) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "  %s(%lld, %lld, %lld, X0, %lld, 1, X1, %lld, %s, %lld, 1, %s, %d);\n", gemm,
            (long long)(B * S), (long long)width, (long long)din, (long long)din, (long long)width,
            p, (long long)width, Bi ? "X2" : "X0", Bi ? 2 : 0);
  bool present = n_out > 1 && out[1];
  return packed_heads(c, &a, p, hq, hk, width, in, n_in > 4 && in[4] ? 4 : -1, present);
}

/* ==== QAttention: the integer projection, then Attention's float heads ==== */

static int gen_qattention(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  cg_val *w = n_in > 1 ? in[1] : NULL, *ws = n_in > 4 ? in[4] : NULL;
  cg_val *zx = n_in > 6 ? in[6] : NULL, *zw = n_in > 7 ? in[7] : NULL;
  ms_heads a = {0};
  int rc = common_attrs(c, n, &a);
  if (rc) return rc;
  ox_attn_in qi[8];
  for (size_t i = 0; i < 8; i++)
    qi[i] = i < n_in && in[i] ? (ox_attn_in){in[i]->dtype, in[i]->rank, in[i]->numel, in[i]->dims}
                              : (ox_attn_in){0};
  char why[160];
  const char *bad = ox_qattn_problem(qi, a.N, why, sizeof why);
  if (*bad) return cg_fail(c, OX_EMODEL, "%s", bad);
  int64_t B = in[0]->dims[0], S = in[0]->dims[1], D = in[0]->dims[2], N3 = w->dims[1];
  int64_t hidden = N3 / 3;
  a.dt = OX_FLOAT, a.B = B, a.S = S, a.Hq = a.Hv = hidden / a.N, a.q8 = true;
  if (a.scale == 0.0) a.scale = 1.0f / sqrtf((float)a.Hq);
  a.keys = n_in > 5 ? in[5] : NULL, a.keys_in = 5;
  const cg_val *past = n_in > 8 ? in[8] : NULL;
  if (past && past->dtype != OX_FLOAT) return cg_fail(c, OX_EMODEL, "past must be float");
  const char *p = scratch(c, OX_FLOAT, B * S * N3);
  if (!p) return c->e->code;
  /* the exact integer sum of (x - zx)(w - zw) per element, then onnxruntime's epilogue:
   * acc * (weight_scale * input_scale, in float) + bias, one fused multiply-add as MLAS's
   * vector kernels do (the scores reach thousands here, so one rounding more in Q or K moves
   * the softmax by more than the tolerance: measured 3e-4 against onnxruntime without it) */
  cg_printf(c, "  for (long long r = 0; r < %lld; r++)\n", (long long)(B * S));
  cg_printf(c, "    for (long long j = 0; j < %lld; j++) {\n      int32_t acc = 0;\n",
            (long long)N3);
  cg_printf(c, "      for (long long k = 0; k < %lld; k++)\n", (long long)D);
  cg_printf(c,
            "        acc += ((int32_t)X0[r * %lld + k] - %s) * ((int32_t)X1[k * %lld + j] - %s);\n",
            (long long)D, zx ? "(int32_t)X6[0]" : "0", (long long)N3,
            zw ? (zw->numel == 1 ? "(int32_t)X7[0]" : "(int32_t)X7[j]") : "0");
  cg_printf(c, "      const float s = X4[%s] * X3[0];\n", ws->numel == 1 ? "0" : "j");
  cg_printf(c, "      %s[r * %lld + j] = fmaf((float)acc, s, X2[j]);\n    }\n", p, (long long)N3);
  bool present = n_out > 1 && out[1];
  return packed_heads(c, &a, p, hidden, hidden, N3, in, past ? 8 : -1, present);
}

/* ==== MultiHeadAttention ==== */

/* The beam-search step: past_key / past_value are buffers [B, N, M, H] filled up to
 * past_sequence_length (read at run time: the key count is that plus one), beam j of batch i
 * reading past position t from the beam cache_indirection[i, j, t] names. */
static int mha_beam(cg_ctx *c, ms_heads *a, cg_val **in, size_t n_in, cg_val **out, size_t n_out) {
  int64_t B = a->B, N = a->N, Hq = a->Hq, Hv = a->Hv;
  const cg_val *PK = in[6], *CI = in[9]; /* shapes checked by gen_mha */
  int64_t M = PK->dims[2];
  if (n_out > 3 && out[3])
    return cg_fail(c, OX_EUNSUPPORTED,
                   "the qk output's length is past_sequence_length + 1, a value known only at "
                   "run time");
  if (M < 1) return cg_fail(c, OX_EMODEL, "past_key has no room for the new key");
  long long beams = CI->dims[1];
  const char *bias = n_in > 3 && in[3] ? "X3" : NULL;
  const char *kb = scratch(c, a->dt, B * N * M * Hq), *vb = scratch(c, a->dt, B * N * M * Hv);
  if (!kb || !vb) return c->e->code;
  size_t es = a->dt == OX_FLOAT ? 4 : 8;
  /* onnxruntime refuses a past length outside [0, M) and a beam out of range: clamped here so
   * that no read leaves the buffers */
  cg_printf(c, "  long long P = (long long)X8[0];\n  if (P < 0) P = 0;\n");
  cg_printf(c, "  if (P > %lld) P = %lld;\n  const long long T = P + 1;\n", (long long)(M - 1),
            (long long)(M - 1));
  cg_printf(c,
            "  for (long long b = 0; b < %lld; b++)\n    for (long long h = 0; h < %lld; h++) {\n",
            (long long)B, (long long)N);
  cg_printf(c, "      const long long bh = b * %lld + h;\n", (long long)N);
  cg_printf(c, "      for (long long t = 0; t < P; t++) {\n");
  cg_printf(c, "        long long src = X9[b * %lld + t];\n", (long long)M);
  cg_printf(c, "        if (src < 0 || src >= %lld) src = 0;\n", beams);
  cg_printf(c, "        src = (b / %lld) * %lld + src;\n", beams, beams);
  cg_printf(c,
            "        memcpy(%s + (bh * %lld + t) * %lld, X6 + ((src * %lld + h) * %lld + t) * "
            "%lld, %zu);\n",
            kb, (long long)M, (long long)Hq, (long long)N, (long long)M, (long long)Hq,
            (size_t)Hq * es);
  cg_printf(c,
            "        memcpy(%s + (bh * %lld + t) * %lld, X7 + ((src * %lld + h) * %lld + t) * "
            "%lld, %zu);\n",
            vb, (long long)M, (long long)Hv, (long long)N, (long long)M, (long long)Hv,
            (size_t)Hv * es);
  cg_printf(c, "      }\n");
  /* this step's key and value (with their bias) at position P */
  for (int kv = 0; kv < 2; kv++) {
    long long H = kv ? Hv : Hq, boff = kv ? 2 * N * Hq : N * Hq;
    cg_printf(c, "      for (long long e = 0; e < %lld; e++)\n", H);
    cg_printf(c, "        %s[(bh * %lld + P) * %lld + e] = X%d[b * %lld + h * %lld + e]",
              kv ? vb : kb, (long long)M, H, kv ? 2 : 1, (long long)(N * H), H);
    if (bias) cg_printf(c, " + %s[%lld + h * %lld + e]", bias, boff, H);
    cg_printf(c, ";\n");
  }
  for (int kv = 0; kv < 2; kv++) {
    size_t o = 1 + (size_t)kv;
    long long H = kv ? Hv : Hq;
    if (n_out <= o || !out[o]) continue;
    cg_printf(c, "      memcpy(Y%zu + bh * %lld, X%d + bh * %lld, %zu);\n", o, (long long)M * H,
              kv ? 7 : 6, (long long)M * H, (size_t)(M * H) * es);
    cg_printf(c, "      memcpy(Y%zu + (bh * %lld + P) * %lld, %s + (bh * %lld + P) * %lld, %zu);\n",
              o, (long long)M, H, kv ? vb : kb, (long long)M, H, (size_t)H * es);
  }
  cg_printf(c, "    }\n");
  if (bias) {
    const char *q = scratch(c, a->dt, B * N * Hq);
    if (!q) return c->e->code;
    ms_src qs = {"X0", N * Hq, Hq, N * Hq};
    put_rows(c, a->dt, q, 1, 0, &qs, B, N, 1, Hq, bias);
    a->q = (ms_src){q, N * Hq, Hq, Hq};
  } else {
    a->q = (ms_src){"X0", N * Hq, Hq, N * Hq};
  }
  a->S = 1, a->T = "T", a->Tmax = M, a->P = 0;
  a->k = (ms_src){kb, N * M * Hq, M * Hq, Hq};
  a->v = (ms_src){vb, N * M * Hv, M * Hv, Hv};
  a->keys = a->ab = NULL, a->causal = false;
  return emit_heads(c, a);
}

static int gen_mha(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  if (any_half(in, n_in, out, n_out)) return cg_gen_widened(c, gen_mha, n, in, n_in, out, n_out);
  cg_val *Q = in[0], *Bi = n_in > 3 ? in[3] : NULL, *KM = n_in > 4 ? in[4] : NULL,
         *AB = n_in > 5 ? in[5] : NULL;
  ms_heads a = {0};
  int rc = common_attrs(c, n, &a);
  if (rc) return rc;
  if (cg_need_float(c, Q)) return c->e->code;
  int64_t N = a.N;
  ox_attn_in ai[10] = {{0}};
  for (size_t i = 0; i < n_in && i < 10; i++)
    if (in[i]) ai[i] = (ox_attn_in){in[i]->dtype, in[i]->rank, in[i]->numel, in[i]->dims};
  ox_mha_shape sh;
  bool beam;
  int64_t P;
  char why[160];
  const char *bad = ox_mha_inputs_problem(ai, 10, N, a.causal, &sh, &beam, &P, why, sizeof why);
  if (*bad) return cg_fail(c, OX_EMODEL, "%s", bad);
  if (Bi && Bi->dtype != Q->dtype) return cg_fail(c, OX_EMODEL, "bias must have the query's type");
  int form = sh.form;
  int64_t B = sh.B, S = sh.S, L = sh.L, Hq = sh.Hq, Hv = sh.Hv, Dq = N * Hq, Dv = N * Hv;
  a.dt = Q->dtype, a.B = B, a.S = S, a.Hq = Hq, a.Hv = Hv;
  if (a.scale == 0.0) a.scale = 1.0 / sqrt((double)Hq);
  a.qk = n_out > 3 && out[3] ? 3 : 0;
  if (beam) return mha_beam(c, &a, in, n_in, out, n_out);
  int64_t T = P + L;
  a.past = P;
  if (AB && (AB->rank != 4 || (AB->dims[0] != 1 && AB->dims[0] != B) ||
             (AB->dims[1] != 1 && AB->dims[1] != N) || AB->dims[2] != S || AB->dims[3] != T))
    return cg_fail(c, OX_EMODEL, "attention_bias must be (batch or 1, num_heads or 1, %lld, %lld)",
                   (long long)S, (long long)T);
  a.keys = KM, a.keys_in = 4, a.ab = AB, a.ab_in = 5;
  a.T = str(c, "", (long long)T), a.Tmax = T;
  /* where q, k and v rows are in the inputs */
  ms_src q, k, v;
  switch (form) {
    case OX_MHA_PACKED_QKV:
      q = (ms_src){"X0", S * N * 3 * Hq, 3 * Hq, N * 3 * Hq};
      k = q, v = q;
      k.p = str(c, "X0 + ", Hq), v.p = str(c, "X0 + ", 2 * Hq);
      break;
    case OX_MHA_PACKED_KV:
      q = (ms_src){"X0", S * Dq, Hq, Dq};
      k = (ms_src){"X1", L * N * 2 * Hq, 2 * Hq, N * 2 * Hq};
      v = k, v.p = str(c, "X1 + ", Hq);
      break;
    case OX_MHA_SEPARATE:
      q = (ms_src){"X0", S * Dq, Hq, Dq};
      k = (ms_src){"X1", L * Dq, Hq, Dq};
      v = (ms_src){"X2", L * Dv, Hv, Dv};
      break;
    default: /* BNSH: K and V already in heads */
      q = (ms_src){"X0", S * Dq, Hq, Dq};
      k = (ms_src){"X1", N * L * Hq, L * Hq, Hq};
      v = (ms_src){"X2", N * L * Hv, L * Hv, Hv};
      break;
  }
  if (!a.T || !k.p || !v.p) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  /* the bias: added to the query, and to the key and value except when those come in heads
   * (as onnxruntime's kernel) */
  const char *bq = Bi ? "X3" : NULL, *bk = NULL, *bv = NULL;
  if (Bi && form != OX_MHA_BNSH) {
    bk = str(c, "X3 + ", N * Hq), bv = str(c, "X3 + ", 2 * N * Hq);
    if (!bk || !bv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  }
  if (bq) {
    const char *qb = scratch(c, a.dt, B * N * S * Hq);
    if (!qb) return c->e->code;
    put_rows(c, a.dt, qb, S, 0, &q, B, N, S, Hq, bq);
    q = (ms_src){qb, N * S * Hq, S * Hq, Hq};
  }
  a.q = q;
  /* keys and values: in place when nothing is added to them, else gathered (past first) into
   * present_key / present_value or scratch arrays */
  bool pres[2] = {n_out > 1 && out[1], n_out > 2 && out[2]};
  for (int kv = 0; kv < 2; kv++) {
    const char *b = kv ? bv : bk;
    ms_src *s = kv ? &v : &k;
    int64_t H = kv ? Hv : Hq;
    if (!pres[kv] && !b) continue;
    const char *dst = pres[kv] ? (kv ? "Y2" : "Y1") : scratch(c, a.dt, B * N * T * H);
    if (!dst) return c->e->code;
    put_past(c, a.dt, dst, T, kv ? "X7" : "X6", B * N, P, H);
    put_rows(c, a.dt, dst, T, P, s, B, N, L, H, b);
    *s = (ms_src){dst, N * T * H, T * H, H};
  }
  /* both gathered (past included), or neither: the past is then read from the inputs */
  bool gathered = pres[0] || bk;
  if (P && gathered != (pres[1] || bv)) {
    /* one gathered and one not: gather the other too (one past layout for both) */
    int kv = gathered ? 1 : 0;
    int64_t H = kv ? Hv : Hq;
    ms_src *s = kv ? &v : &k;
    const char *dst = scratch(c, a.dt, B * N * T * H);
    if (!dst) return c->e->code;
    put_past(c, a.dt, dst, T, kv ? "X7" : "X6", B * N, P, H);
    put_rows(c, a.dt, dst, T, P, s, B, N, L, H, NULL);
    *s = (ms_src){dst, N * T * H, T * H, H};
    gathered = true;
  }
  a.k = k, a.v = v;
  a.P = gathered ? 0 : P;
  a.pk = "X6", a.pv = "X7";
  return emit_heads(c, &a);
}

const cg_op ox_cg_ops_ms_attn[] = {
    {CG_DOMAIN_MS ":Attention", gen_attention},
    {CG_DOMAIN_MS ":MultiHeadAttention", gen_mha},
    {CG_DOMAIN_MS ":QAttention", gen_qattention},
    {NULL, NULL},
};
