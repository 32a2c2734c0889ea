/* ops_stateful.c - C generators for the opset-27 operators that carry a
 * state from one call to the next: LinearAttention (a d_k x d_v state per
 * batch entry and key/value head, updated by the linear, gated, delta or
 * gated-delta rule) and CausalConvWithState (a depthwise causal 1-D
 * convolution whose last k-1 inputs are the next call's past). The
 * arithmetic is the runtime's (src/ops/onnx/attention.c): element type
 * arithmetic with the dot products summed in double. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

enum { LIN_LINEAR, LIN_GATED, LIN_DELTA, LIN_GATED_DELTA };

static int gen_linattn(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  const cg_val *Q = in[0], *K = in[1], *V = in[2];
  const cg_val *PS = n_in > 3 ? in[3] : NULL, *G = n_in > 4 ? in[4] : NULL;
  const cg_val *BT = n_in > 5 ? in[5] : NULL;
  cg_val *Y1 = n_out > 1 ? out[1] : NULL;
  if (cg_need_float(c, Q)) return c->e->code;
  const char *r = ox_node_attr_str(n, "update_rule", "gated_delta");
  int rule;
  if (strcmp(r, "linear") == 0)
    rule = LIN_LINEAR;
  else if (strcmp(r, "gated") == 0)
    rule = LIN_GATED;
  else if (strcmp(r, "delta") == 0)
    rule = LIN_DELTA;
  else if (strcmp(r, "gated_delta") == 0)
    rule = LIN_GATED_DELTA;
  else
    return cg_fail(c, OX_EMODEL, "unknown update_rule '%s'", r);
  long long Hq = (long long)ox_node_attr_int(n, "q_num_heads", 0);
  long long Hk = (long long)ox_node_attr_int(n, "kv_num_heads", 0);
  if (Hq <= 0 || Hk <= 0 || Hq % Hk)
    return cg_fail(c, OX_EMODEL, "q_num_heads must be a positive multiple of kv_num_heads");
  if (Q->rank != 3 || K->rank != 3 || V->rank != 3 || K->dtype != Q->dtype || V->dtype != Q->dtype)
    return cg_fail(c, OX_EMODEL, "query, key, value must be 3-D tensors of one type");
  long long B = (long long)Q->dims[0], T = (long long)Q->dims[1];
  if (Q->dims[2] % Hq || K->dims[2] % Hk || V->dims[2] % Hk)
    return cg_fail(c, OX_EMODEL, "hidden sizes are not divisible by the head counts");
  long long dk = (long long)Q->dims[2] / Hq, dv = (long long)V->dims[2] / Hk;
  if (K->dims[2] / Hk != dk || K->dims[0] != B || V->dims[0] != B || K->dims[1] != T ||
      V->dims[1] != T)
    return cg_fail(c, OX_EMODEL, "query, key, value shapes are inconsistent");
  bool gated = rule == LIN_GATED || rule == LIN_GATED_DELTA;
  bool delta = rule == LIN_DELTA || rule == LIN_GATED_DELTA;
  if (gated && !G) return cg_fail(c, OX_EMODEL, "decay is required by this update_rule");
  if (delta && !BT) return cg_fail(c, OX_EMODEL, "beta is required by this update_rule");
  long long gper = 0, bper = 0;
  if (gated) {
    if (G->rank != 3 || G->dims[0] != B || G->dims[1] != T ||
        (G->dims[2] != Hk * dk && G->dims[2] != Hk) || G->dtype != Q->dtype)
      return cg_fail(c, OX_EMODEL, "decay must be (B, T, H_kv*d_k) or (B, T, H_kv)");
    gper = (long long)G->dims[2] / Hk;
  }
  if (delta) {
    if (BT->rank != 3 || BT->dims[0] != B || BT->dims[1] != T ||
        (BT->dims[2] != Hk && BT->dims[2] != 1) || BT->dtype != Q->dtype)
      return cg_fail(c, OX_EMODEL, "beta must be (B, T, H_kv) or (B, T, 1)");
    bper = (long long)BT->dims[2];
  }
  if (PS && (PS->rank != 4 || PS->dims[0] != B || PS->dims[1] != Hk || PS->dims[2] != dk ||
             PS->dims[3] != dv || PS->dtype != Q->dtype))
    return cg_fail(c, OX_EMODEL, "past_state must be (B, H_kv, d_k, d_v) of the query's type");
  if (Y1 && Y1->dtype != Q->dtype)
    return cg_fail(c, OX_EUNSUPPORTED, "present_state of another type than the query");
  /* the state: present_state itself when it is asked for, else scratch */
  const char *S = "Y1";
  if (!Y1) {
    cg_val *sv = cg_scratch(c, Q->dtype, B * Hk * dk * dv);
    S = sv ? cg_ref(c, sv) : NULL;
    if (!S)
      return c->e->code
                 ? c->e->code
                 : cg_fail(c, OX_EUNSUPPORTED, "no scratch state inside a control-flow body");
  }
  const ox_attr *sa = ox_node_attr(n, "scale");
  float scale = sa && sa->f != 0.0f ? sa->f : (float)(1.0 / sqrt((double)dk));
  char sc[48];
  cg_float_lit(sc, sizeof sc, (double)scale, false);
  const char *Tq = cg_ctype(Q->dtype), *ex = cg_mathfn(c, Q->dtype, "exp");
  size_t sbytes = (size_t)(B * Hk * dk * dv) * (Q->dtype == OX_FLOAT ? 4u : 8u);
  cg_printf(c, "  %s *S = %s;\n  %s u[%lld];\n", Tq, S, Tq, dv);
  if (PS)
    cg_printf(c, "  memcpy(S, X3, %zu);\n", sbytes);
  else
    cg_printf(c, "  memset(S, 0, %zu);\n", sbytes);
  cg_printf(c,
            "  for (long long b = 0; b < %lld; b++)\n    for (long long t = 0; t < %lld; t++) {\n",
            B, T);
  cg_printf(c, "      const long long bt = b * %lld + t;\n", T);
  cg_printf(c, "      for (long long h = 0; h < %lld; h++) {\n", Hk);
  cg_printf(c, "        %s *s = S + (b * %lld + h) * %lld;\n", Tq, Hk, dk * dv);
  cg_printf(
      c, "        const %s *k = X1 + (bt * %lld + h) * %lld, *v = X2 + (bt * %lld + h) * %lld;\n",
      Tq, Hk, dk, Hk, dv);
  if (gated) {
    cg_printf(c, "        for (long long i = 0; i < %lld; i++) {\n", dk);
    cg_printf(c, "          const %s g = %s(X4[(bt * %lld + h) * %lld%s]);\n", Tq, ex, Hk, gper,
              gper == 1 ? "" : " + i");
    cg_printf(c,
              "          for (long long j = 0; j < %lld; j++) s[i * %lld + j] *= g;\n        }\n",
              dv, dv);
  }
  if (delta) {
    cg_printf(c, "        const %s beta = X5[bt * %lld%s];\n", Tq, bper, bper == 1 ? "" : " + h");
    cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n          double acc = 0.0;\n",
              dv);
    cg_printf(
        c,
        "          for (long long i = 0; i < %lld; i++) acc += (double)s[i * %lld + j] * k[i];\n",
        dk, dv);
    cg_printf(c, "          u[j] = beta * (v[j] - (%s)acc);\n        }\n", Tq);
  } else {
    cg_printf(c, "        memcpy(u, v, sizeof u);\n");
  }
  cg_printf(c, "        for (long long i = 0; i < %lld; i++)\n", dk);
  cg_printf(c, "          for (long long j = 0; j < %lld; j++) s[i * %lld + j] += k[i] * u[j];\n",
            dv, dv);
  cg_printf(c, "      }\n");
  cg_printf(c, "      for (long long h = 0; h < %lld; h++) {\n", Hq);
  cg_printf(c, "        const %s *s = S + (b * %lld + h / %lld) * %lld;\n", Tq, Hk, Hq / Hk,
            dk * dv);
  cg_printf(c, "        const %s *q = X0 + (bt * %lld + h) * %lld;\n", Tq, Hq, dk);
  cg_printf(c, "        %s *o = Y0 + (bt * %lld + h) * %lld;\n", Tq, Hq, dv);
  cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n          double acc = 0.0;\n", dv);
  cg_printf(
      c, "          for (long long i = 0; i < %lld; i++) acc += (double)q[i] * s[i * %lld + j];\n",
      dk, dv);
  cg_printf(c, "          o[j] = (%s)(acc * %s);\n        }\n      }\n    }\n", Tq, sc);
  return OX_OK;
}

static int gen_ccws(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  const cg_val *X = in[0], *W = in[1], *Bv = n_in > 2 ? in[2] : NULL;
  const cg_val *PS = n_in > 3 ? in[3] : NULL;
  cg_val *Y1 = n_out > 1 ? out[1] : NULL;
  if (cg_need_float(c, X)) return c->e->code;
  const char *act = ox_node_attr_str(n, "activation", "none");
  bool silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
  if (!silu && strcmp(act, "none") != 0)
    return cg_fail(c, OX_EMODEL, "unknown activation '%s'", act);
  if (X->rank != 3 || W->rank != 3 || W->dtype != X->dtype)
    return cg_fail(c, OX_EMODEL, "input and weight must be 3-D tensors of one type");
  long long B = (long long)X->dims[0], C = (long long)X->dims[1], L = (long long)X->dims[2];
  long long k = (long long)W->dims[2];
  if (W->dims[0] != C || W->dims[1] != 1 || k < 1)
    return cg_fail(c, OX_EMODEL, "weight must be (channels, 1, k)");
  if (Bv && (Bv->numel != C || Bv->dtype != X->dtype))
    return cg_fail(c, OX_EMODEL, "bias must be (channels)");
  if (PS && (PS->rank != 3 || PS->dims[0] != B || PS->dims[1] != C || PS->dims[2] != k - 1 ||
             PS->dtype != X->dtype))
    return cg_fail(c, OX_EMODEL, "past_state must be (batch, channels, k - 1)");
  if (Y1 && (Y1->dtype != X->dtype || Y1->numel != B * C * (k - 1)))
    return cg_fail(c, OX_EMODEL, "present_state must be (batch, channels, k - 1)");
  const char *T = cg_ctype(X->dtype);
  size_t es = X->dtype == OX_FLOAT ? 4u : 8u;
  /* the window: k-1 past values then the L inputs of one (batch, channel) */
  cg_printf(c, "  %s pad[%lld];\n", T, L + k);
  cg_printf(c, "  for (long long bc = 0; bc < %lld; bc++) {\n", B * C);
  cg_printf(c, "    const long long ch = bc %% %lld;\n", C);
  if (k > 1) {
    if (PS)
      cg_printf(c, "    memcpy(pad, X3 + bc * %lld, %lld * sizeof pad[0]);\n", k - 1, k - 1);
    else
      cg_printf(c, "    for (long long j = 0; j < %lld; j++) pad[j] = 0;\n", k - 1);
  }
  cg_printf(c, "    memcpy(pad + %lld, X0 + bc * %lld, %zu);\n", k - 1, L, (size_t)L * es);
  cg_printf(c, "    const %s *w = X1 + ch * %lld;\n", T, k);
  cg_printf(c, "    for (long long t = 0; t < %lld; t++) {\n", L);
  cg_printf(c, "      %s s = %s;\n", T, Bv ? "X2[ch]" : "0");
  cg_printf(c, "      for (long long j = 0; j < %lld; j++) s += w[j] * pad[t + j];\n", k);
  if (silu)
    cg_printf(c, "      Y0[bc * %lld + t] = s / (1 + %s(-s));\n", L, cg_mathfn(c, X->dtype, "exp"));
  else
    cg_printf(c, "      Y0[bc * %lld + t] = s;\n", L);
  cg_printf(c, "    }\n");
  if (Y1 && k > 1)
    cg_printf(c, "    memcpy(Y1 + bc * %lld, pad + %lld, %zu);\n", k - 1, L, (size_t)(k - 1) * es);
  cg_printf(c, "  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_stateful[] = {
    {"LinearAttention", gen_linattn},
    {"CausalConvWithState", gen_ccws},
    {NULL, NULL},
};
