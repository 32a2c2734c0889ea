/* attn_shape.c - the shape rules of the com.microsoft attentions (attn_shape.h). */
#include "attn_shape.h"

#include <stdio.h>

const char *ox_attn_attrs_read(const ox_node *n, ox_attn_attrs *a, char *why, size_t why_size) {
  a->heads = ox_node_attr_int(n, "num_heads", 0);
  a->causal = ox_node_attr_int(n, "unidirectional", 0) != 0;
  a->filter = ox_node_attr_float(n, "mask_filter_value", -10000.0f);
  a->scale = ox_node_attr_float(n, "scale", 0.0f);
  if (a->heads <= 0 || a->heads > ((int64_t)1 << 24)) {
    snprintf(why, why_size, "num_heads must be positive (got %lld)", (long long)a->heads);
    return why;
  }
  if (ox_node_attr_int(n, "do_rotary", 0) != 0)
    return "do_rotary is not supported (as in onnxruntime's CPU kernel)";
  if (ox_node_attr_int(n, "past_present_share_buffer", 0) != 0)
    return "past_present_share_buffer is not supported (as in onnxruntime's CPU kernel)";
  return "";
}

const char *ox_attn_key_mask_problem(int32_t dt, const int64_t *d, size_t rank, int64_t B,
                                     int64_t S, int64_t T, int64_t P, bool causal) {
  if (dt != OX_INT32) return "must be int32";
  switch (rank) {
    case 1:
      return d[0] == B || d[0] == 2 * B ? "" : "1-D must have length batch or 2 * batch";
    case 2:
      return d[0] == B && d[1] == T ? "" : "2-D must be (batch, total_sequence_length)";
    case 3:
      return d[0] == B && d[1] == S && d[2] == T
                 ? ""
                 : "3-D must be (batch, sequence_length, total_sequence_length)";
    case 4:
      if (causal) return "4-D is not allowed with unidirectional";
      return d[0] == B && d[1] == 1 && d[2] == d[3] && d[2] >= P + S && d[3] >= T
                 ? ""
                 : "4-D must be (batch, 1, max_sequence_length, max_sequence_length) covering "
                   "past + sequence";
    default:
      return "must have rank 1, 2, 3 or 4";
  }
}

static const char *mha_shape_of(const int64_t *q, size_t qr, const int64_t *k, size_t kr,
                                const int64_t *v, size_t vr, bool bias, int64_t N, ox_mha_shape *o,
                                char *why, size_t why_size) {
  o->B = q[0], o->S = qr > 1 ? q[1] : 0;
  if (qr == 5) {
    if (k || v) return "packed query (rank 5) takes no key and value";
    if (q[2] != N || q[3] != 3)
      return "packed query must be (batch, sequence, num_heads, 3, head_size)";
    o->form = OX_MHA_PACKED_QKV, o->L = o->S, o->Hq = o->Hv = q[4];
    return "";
  }
  if (qr != 3) return "query must have rank 3 or 5";
  if (q[2] % N) {
    snprintf(why, why_size, "num_heads %lld does not divide the query hidden size %lld",
             (long long)N, (long long)q[2]);
    return why;
  }
  o->Hq = q[2] / N;
  if (!k) return "key is required unless the query is packed";
  if (kr == 5) {
    if (v) return "packed key (rank 5) takes no value";
    if (k[0] != o->B || k[2] != N || k[3] != 2 || k[4] != o->Hq)
      return "packed key must be (batch, kv_sequence, num_heads, 2, head_size)";
    if (bias) return "bias is not allowed with packed key and value";
    o->form = OX_MHA_PACKED_KV, o->L = k[1], o->Hv = o->Hq;
  } else if (kr == 3) {
    if (!v || vr != 3 || k[0] != o->B || v[0] != o->B || k[1] != v[1] || k[2] != q[2] || v[2] % N)
      return "key must be (batch, kv_sequence, hidden) and value (batch, kv_sequence, v_hidden) "
             "with v_hidden divisible by num_heads";
    o->form = OX_MHA_SEPARATE, o->L = k[1], o->Hv = v[2] / N;
  } else if (kr == 4) {
    if (!v || vr != 4 || k[0] != o->B || k[1] != N || k[3] != o->Hq || v[0] != o->B || v[1] != N ||
        v[2] != k[2])
      return "key and value in heads must be (batch, num_heads, kv_sequence, head_size)";
    o->form = OX_MHA_BNSH, o->L = k[2], o->Hv = v[3];
  } else {
    return "key must have rank 3, 4 or 5";
  }
  return "";
}

static const char *mha_past_problem(const int64_t *pk, size_t pkr, const int64_t *pv, size_t pvr,
                                    const ox_mha_shape *s, int64_t N, bool beam, char *why,
                                    size_t why_size) {
  if (pkr == 4 && pvr == 4 && pk[0] == s->B && pk[1] == N && pk[3] == s->Hq && pv[0] == s->B &&
      pv[1] == N && pv[2] == pk[2] && pv[3] == s->Hv)
    return "";
  snprintf(why, why_size, "past_key and past_value must be (%lld, %lld, %s, head_size)",
           (long long)s->B, (long long)N, beam ? "max_sequence_length" : "past_length");
  return why;
}

static const char *mha_beam_problem(int32_t psl_dt, int64_t psl_n, int32_t ci_dt, const int64_t *ci,
                                    size_t cir, int64_t B, int64_t M, char *why, size_t why_size) {
  if (psl_n != 1 || psl_dt != OX_INT32) return "past_sequence_length must be one int32";
  if (ci_dt != OX_INT32 || cir != 3 || ci[1] <= 0 || ci[2] != M || ci[0] * ci[1] != B) {
    snprintf(why, why_size, "cache_indirection must be int32 (batch / beams, beams, %lld)",
             (long long)M);
    return why;
  }
  return "";
}

const char *ox_mha_inputs_problem(const ox_attn_in *in, size_t n, int64_t N, bool causal,
                                  ox_mha_shape *s, bool *beam, int64_t *P, char *why,
                                  size_t why_size) {
  bool has[10];
  for (size_t i = 0; i < 10; i++) has[i] = i < n && in[i].dt != OX_UNDEFINED;
  if (has[6] != has[7]) return "past_key and past_value must be given together";
  const char *bad = mha_shape_of(in[0].d, in[0].rank, has[1] ? in[1].d : NULL, in[1].rank,
                                 has[2] ? in[2].d : NULL, in[2].rank, has[3], N, s, why, why_size);
  if (*bad) return bad;
  *beam = has[8] || has[9];
  *P = 0;
  if (*beam) {
    if (!has[8] || !has[9] || !has[6] || s->form != OX_MHA_SEPARATE || s->S != 1 || s->L != 1 ||
        has[4] || has[5])
      return "past_sequence_length and cache_indirection go together, with past_key and "
             "past_value, one query and one key of separate Q, K, V and no key_padding_mask or "
             "attention_bias (beam-search decoding)";
    bad = mha_past_problem(in[6].d, in[6].rank, in[7].d, in[7].rank, s, N, true, why, why_size);
    if (*bad) return bad;
    bad = mha_beam_problem(in[8].dt, in[8].numel, in[9].dt, in[9].d, in[9].rank, s->B, in[6].d[2],
                           why, why_size);
    if (*bad) return bad;
  } else if (has[6]) {
    bad = mha_past_problem(in[6].d, in[6].rank, in[7].d, in[7].rank, s, N, false, why, why_size);
    if (*bad) return bad;
    *P = in[6].d[2];
  }
  int64_t nbias = N * (2 * s->Hq + s->Hv);
  if (has[3] && (in[3].rank != 1 || in[3].d[0] != nbias)) {
    snprintf(why, why_size, "bias must be 1-D of length %lld", (long long)nbias);
    return why;
  }
  if (!*beam && has[4]) {
    const ox_attn_in *m = &in[4];
    const char *km = m->rank == 4 ? "must have rank 1, 2 or 3"
                                  : ox_attn_key_mask_problem(m->dt, m->d, m->rank, s->B, s->S,
                                                             *P + s->L, *P, causal);
    if (*km) {
      snprintf(why, why_size, "key_padding_mask %s", km);
      return why;
    }
  }
  return "";
}

/* a zero point or scale per tensor, or (n > 0) per column */
static bool one_or(const ox_attn_in *v, int64_t n) {
  return v->rank == 0 || (v->rank == 1 && (v->numel == 1 || v->numel == n));
}

const char *ox_qattn_problem(const ox_attn_in *in, int64_t heads, char *why, size_t why_size) {
  const ox_attn_in *x = &in[0], *w = &in[1], *bias = &in[2], *xs = &in[3], *ws = &in[4];
  const ox_attn_in *zx = &in[6], *zw = &in[7];
  if (x->dt != OX_UINT8 || x->rank != 3) return "input must be a 3-D uint8 tensor [B, S, D]";
  if ((w->dt != OX_UINT8 && w->dt != OX_INT8) || w->rank != 2)
    return "weight must be a 2-D int8 or uint8 tensor [D, 3 hidden]";
  int64_t D = x->d[2], N3 = w->d[1], hidden = N3 / 3;
  if (w->d[0] != D)
    snprintf(why, why_size, "weight's first dimension (%lld) differs from input's D (%lld)",
             (long long)w->d[0], (long long)D);
  else if (N3 % 3 || hidden == 0 || hidden % heads)
    snprintf(why, why_size,
             "weight's second dimension (%lld) must be 3 hidden, hidden a multiple of num_heads "
             "(%lld)",
             (long long)N3, (long long)heads);
  else if (bias->dt != OX_FLOAT || bias->rank != 1 || bias->numel != N3)
    snprintf(why, why_size, "bias must be float of 3 hidden = %lld values", (long long)N3);
  else if (xs->dt != OX_FLOAT || !one_or(xs, 1))
    return "input_scale must be one float";
  else if (ws->dt != OX_FLOAT || !one_or(ws, N3))
    snprintf(why, why_size, "weight_scale must be one float or 3 hidden = %lld", (long long)N3);
  else if (zx->dt && (zx->dt != OX_UINT8 || !one_or(zx, 1)))
    return "input_zero_point must be one uint8 value";
  else if (zw->dt && (zw->dt != w->dt || !one_or(zw, N3)))
    snprintf(why, why_size,
             "weight_zero_point must have weight's type, one value or 3 hidden = %lld",
             (long long)N3);
  else
    return "";
  return why;
}
