/* attn_shape.c - the shape rules of the com.microsoft attentions (attn_shape.h). */
#include "attn_shape.h"

#include <stdio.h>

#include "../../ir/ir.h"

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

const char *ox_mha_shape_of(const int64_t *q, size_t qr, const int64_t *k, size_t kr,
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

bool ox_mha_past_fits(const int64_t *pk, size_t pkr, const int64_t *pv, size_t pvr,
                      const ox_mha_shape *s, int64_t N) {
  return pkr == 4 && pvr == 4 && pk[0] == s->B && pk[1] == N && pk[3] == s->Hq && pv[0] == s->B &&
         pv[1] == N && pv[2] == pk[2] && pv[3] == s->Hv;
}

const char *ox_mha_beam_problem(int32_t psl_dt, int64_t psl_n, int32_t ci_dt, const int64_t *ci,
                                size_t cir, int64_t B, int64_t M, char *why, size_t why_size) {
  if (psl_n != 1 || psl_dt != OX_INT32) return "past_sequence_length must be one int32";
  if (ci_dt != OX_INT32 || cir != 3 || ci[1] <= 0 || ci[2] != M || ci[0] * ci[1] != B) {
    snprintf(why, why_size, "cache_indirection must be int32 (batch / beams, beams, %lld)",
             (long long)M);
    return why;
  }
  return "";
}
