/* ops_recurrent.c - C generators for the recurrent layers RNN, GRU and LSTM:
 * forward, reverse and bidirectional; layout 0 ([S, B, I]) and 1 ([B, S, I]);
 * sequence_lens; initial states; LSTM peepholes and input_forget; GRU
 * linear_before_reset; clip; every activation of the spec with its alpha
 * and beta. The semantics are those of the runtime's kernel
 * (src/ops/onnx/rnn.c): a step past a batch entry's sequence length leaves
 * its state as it was and its Y rows zero; a reverse direction runs from
 * that entry's last valid step down to 0.
 *
 * The generated function runs each direction and each batch entry on its
 * own (the recurrence never mixes batch entries): the state and the gate
 * pre-activations of one entry live in local arrays of H and G*H elements,
 * so the node needs no scratch in the arena. Each gate row is a dot product
 * with the step's input and one with the previous state, written as plain
 * loops over contiguous rows of W and R. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cg_impl.h"

enum { RC_RNN, RC_GRU, RC_LSTM };

/* An activation of the spec, with its alpha and beta. */
typedef struct rc_act {
  int kind;
  double alpha, beta;
} rc_act;

enum {
  RA_RELU,
  RA_TANH,
  RA_SIGMOID,
  RA_AFFINE,
  RA_LEAKYRELU,
  RA_THRESHOLDEDRELU,
  RA_SCALEDTANH,
  RA_HARDSIGMOID,
  RA_ELU,
  RA_SOFTSIGN,
  RA_SOFTPLUS
};

static const struct {
  const char *name;
  int kind;
  double alpha, beta;
  bool uses_alpha, uses_beta;
} act_tab[] = {
    {"Relu", RA_RELU, 0, 0, false, false},
    {"Tanh", RA_TANH, 0, 0, false, false},
    {"Sigmoid", RA_SIGMOID, 0, 0, false, false},
    {"Affine", RA_AFFINE, 1.0, 0.0, true, true},
    {"LeakyRelu", RA_LEAKYRELU, 0.01f, 0, true, false},
    {"ThresholdedRelu", RA_THRESHOLDEDRELU, 1.0, 0, true, false},
    {"ScaledTanh", RA_SCALEDTANH, 1.0, 1.0, true, true},
    {"HardSigmoid", RA_HARDSIGMOID, 0.2f, 0.5f, true, true},
    {"Elu", RA_ELU, 1.0, 0, true, false},
    {"Softsign", RA_SOFTSIGN, 0, 0, false, false},
    {"Softplus", RA_SOFTPLUS, 0, 0, false, false},
};

static int act_find(const char *s, size_t len) {
  for (size_t i = 0; i < sizeof act_tab / sizeof act_tab[0]; i++)
    if (strlen(act_tab[i].name) == len && strncasecmp(act_tab[i].name, s, len) == 0) return (int)i;
  return -1;
}

typedef struct rc_attrs {
  int kind, gates, n_act, dirs;
  bool reverse_only, lbr, input_forget, has_clip;
  double clip;
  int64_t layout;
  rc_act act[2][3];
} rc_attrs;

/* Reads the attributes as the runtime does: default activations per kind;
 * a list of n_act names is used by both directions; alpha and beta are
 * taken in order by the activations that use them. */
static int read_attrs(cg_ctx *c, const ox_node *n, rc_attrs *a) {
  memset(a, 0, sizeof *a);
  a->kind = strcmp(n->op_type, "GRU") == 0    ? RC_GRU
            : strcmp(n->op_type, "LSTM") == 0 ? RC_LSTM
                                              : RC_RNN;
  a->gates = a->kind == RC_GRU ? 3 : a->kind == RC_LSTM ? 4 : 1;
  a->n_act = a->kind == RC_GRU ? 2 : a->kind == RC_LSTM ? 3 : 1;
  a->layout = ox_node_attr_int(n, "layout", 0);
  a->lbr = ox_node_attr_int(n, "linear_before_reset", 0) != 0;
  a->input_forget = ox_node_attr_int(n, "input_forget", 0) != 0;
  const ox_attr *cl = ox_node_attr(n, "clip");
  a->has_clip = cl != NULL;
  a->clip = cl ? (double)cl->f : 0.0;
  const char *dir = ox_node_attr_str(n, "direction", "forward");
  if (strcmp(dir, "forward") == 0)
    a->dirs = 1;
  else if (strcmp(dir, "reverse") == 0)
    a->dirs = 1, a->reverse_only = true;
  else if (strcmp(dir, "bidirectional") == 0)
    a->dirs = 2;
  else
    return cg_fail(c, OX_EMODEL, "unknown direction '%s'", dir);
  if (a->layout != 0 && a->layout != 1) return cg_fail(c, OX_EMODEL, "layout must be 0 or 1");
  static const char *const defaults[3][3] = {
      {"Tanh", NULL, NULL}, {"Sigmoid", "Tanh", NULL}, {"Sigmoid", "Tanh", "Tanh"}};
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < a->n_act; k++) {
      const char *nm = defaults[a->kind][k];
      int t = act_find(nm, strlen(nm));
      a->act[d][k] = (rc_act){act_tab[t].kind, act_tab[t].alpha, act_tab[t].beta};
    }
  const ox_attr *acts = ox_node_attr(n, "activations");
  if (!acts || !acts->n_strings) return OX_OK;
  const ox_attr *al = ox_node_attr(n, "activation_alpha"), *be = ox_node_attr(n, "activation_beta");
  size_t ia = 0, ib = 0, need = (size_t)(a->n_act * a->dirs);
  if (acts->n_strings != need && acts->n_strings != (size_t)a->n_act)
    return cg_fail(c, OX_EMODEL, "%zu activations given, expected %zu", acts->n_strings, need);
  for (size_t i = 0; i < need; i++) {
    const ox_bytes *s = &acts->strings[i % acts->n_strings];
    int t = act_find((const char *)s->data, s->size);
    if (t < 0)
      return cg_fail(c, OX_EUNSUPPORTED, "unknown activation '%.*s'", (int)s->size,
                     (const char *)s->data);
    rc_act *ac = &a->act[i / (size_t)a->n_act][i % (size_t)a->n_act];
    *ac = (rc_act){act_tab[t].kind, act_tab[t].alpha, act_tab[t].beta};
    if (i >= acts->n_strings) continue; /* a repeated list: its alpha/beta were taken */
    if (act_tab[t].uses_alpha && al && ia < al->n_floats) ac->alpha = al->floats[ia++];
    if (act_tab[t].uses_beta && be && ib < be->n_floats) ac->beta = be->floats[ib++];
  }
  return OX_OK;
}

/* The C expression of activation ac applied to the expression x (a plain
 * variable name, read more than once by some activations). */
static const char *act_expr(cg_ctx *c, const rc_act *ac, int32_t dt, const char *x) {
  bool f = dt == OX_FLOAT;
  char al[64], be[64];
  cg_float_lit(al, sizeof al, f ? (double)(float)ac->alpha : ac->alpha, f);
  cg_float_lit(be, sizeof be, f ? (double)(float)ac->beta : ac->beta, f);
  const char *one = f ? "1.0f" : "1.0", *zero = f ? "0.0f" : "0.0";
  switch (ac->kind) {
    case RA_RELU:
      return ox_arena_printf(c->a, "(%s > 0 ? %s : %s)", x, x, zero);
    case RA_TANH:
      return ox_arena_printf(c->a, "%s(%s)", cg_mathfn(c, dt, "tanh"), x);
    case RA_SIGMOID:
      return ox_arena_printf(c->a, "(%s / (%s + %s(-%s)))", one, one, cg_mathfn(c, dt, "exp"), x);
    case RA_AFFINE:
      return ox_arena_printf(c->a, "(%s * %s + %s)", al, x, be);
    case RA_LEAKYRELU:
      return ox_arena_printf(c->a, "(%s >= 0 ? %s : %s * %s)", x, x, al, x);
    case RA_THRESHOLDEDRELU:
      return ox_arena_printf(c->a, "(%s > %s ? %s : %s)", x, al, x, zero);
    case RA_SCALEDTANH:
      return ox_arena_printf(c->a, "(%s * %s(%s * %s))", al, cg_mathfn(c, dt, "tanh"), be, x);
    case RA_HARDSIGMOID: /* max(0, min(1, alpha x + beta)) */
      return ox_arena_printf(c->a,
                             "(%s * %s + %s < 0 ? %s : %s * %s + %s > %s ? %s : %s * %s + %s)", al,
                             x, be, zero, al, x, be, one, one, al, x, be);
    case RA_ELU:
      return ox_arena_printf(c->a, "(%s >= 0 ? %s : %s * (%s(%s) - %s))", x, x, al,
                             cg_mathfn(c, dt, "exp"), x, one);
    case RA_SOFTSIGN:
      return ox_arena_printf(c->a, "(%s / (%s + %s(%s)))", x, one, cg_mathfn(c, dt, "fabs"), x);
    default: /* Softplus, as the runtime: linear past 20 */
      return ox_arena_printf(c->a, "(%s > %s ? %s : %s(%s(%s)))", x, f ? "20.0f" : "20.0", x,
                             cg_mathfn(c, dt, "log1p"), cg_mathfn(c, dt, "exp"), x);
  }
}

/* Applies clip (if any) to variable v in place. */
static void put_clip(cg_ctx *c, const rc_attrs *a, int32_t dt, const char *v, const char *ind) {
  if (!a->has_clip) return;
  char lit[64];
  cg_float_lit(lit, sizeof lit, a->clip, dt == OX_FLOAT);
  cg_printf(c, "%s%s = %s < -%s ? -%s : %s > %s ? %s : %s;\n", ind, v, v, lit, lit, v, lit, lit, v);
}

/* The dot products of gate rows [r0, r0 + nr) of W (with the step's input
 * x) and of R (with the state hvec) into gx[r - r0] and gh[r - r0] (or,
 * with sum, their sum plus both biases into g[r]). */
static void put_rows(cg_ctx *c, const char *T, int64_t r0, int64_t nr, int64_t I, int64_t H,
                     bool bias, bool sum, const char *hvec) {
  cg_printf(c, "        for (long long r = 0; r < %lld; r++) {\n", (long long)nr);
  cg_printf(c, "          const %s *w = W + (%lld + r) * %lld, *u = R + (%lld + r) * %lld;\n", T,
            (long long)r0, (long long)I, (long long)r0, (long long)H);
  cg_printf(c, "          %s ax = 0, ah = 0;\n", T);
  cg_printf(c, "          for (long long i = 0; i < %lld; i++) ax += x[i] * w[i];\n", (long long)I);
  cg_printf(c, "          for (long long i = 0; i < %lld; i++) ah += %s[i] * u[i];\n", (long long)H,
            hvec);
  if (sum)
    cg_printf(c, "          g[r] = ax + ah%s;\n", bias ? " + (wb[r] + rb[r])" : "");
  else
    cg_printf(c, "          gx[r] = ax;\n          gh[r] = ah;\n");
  cg_printf(c, "        }\n");
}

/* RNN / GRU / LSTM: X [S, B, I] (layout 1: [B, S, I]), W [D, G*H, I],
 * R [D, G*H, H], B [D, 2*G*H], sequence_lens [B], initial_h (and LSTM
 * initial_c) [D, B, H] (layout 1: [B, D, H]), LSTM P [D, 3*H]; outputs
 * Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h (and LSTM Y_c) as initial_h. */
static int gen_recurrent(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  rc_attrs a;
  int rc = read_attrs(c, n, &a);
  if (rc) return rc;
  cg_val *X = in[0], *W = n_in > 1 ? in[1] : NULL, *R = n_in > 2 ? in[2] : NULL;
  cg_val *Bi = n_in > 3 ? in[3] : NULL, *L = n_in > 4 ? in[4] : NULL;
  cg_val *H0 = n_in > 5 ? in[5] : NULL, *C0 = a.kind == RC_LSTM && n_in > 6 ? in[6] : NULL;
  cg_val *P = a.kind == RC_LSTM && n_in > 7 ? in[7] : NULL;
  if (!X || !W || !R) return cg_fail(c, OX_EMODEL, "X, W and R are required");
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank != 3 || W->rank != 3 || R->rank != 3)
    return cg_fail(c, OX_EMODEL, "X, W and R must be 3-D");
  int64_t D = a.dirs, G = a.gates;
  int64_t S = a.layout ? X->dims[1] : X->dims[0], Bn = a.layout ? X->dims[0] : X->dims[1];
  int64_t I = X->dims[2], H = R->dims[2], GH = G * H;
  int64_t hs = ox_node_attr_int(n, "hidden_size", H);
  if (hs != H || W->dims[0] != D || W->dims[1] != GH || W->dims[2] != I || R->dims[0] != D ||
      R->dims[1] != GH)
    return cg_fail(
        c, OX_EMODEL, "W %s or R %s do not fit X %s, hidden_size %lld and %lld directions",
        cg_type_str(c, W), cg_type_str(c, R), cg_type_str(c, X), (long long)hs, (long long)D);
  const cg_val *same[] = {W, R, Bi, H0, C0, P};
  for (size_t k = 0; k < sizeof same / sizeof same[0]; k++)
    if (same[k] && same[k]->dtype != X->dtype)
      return cg_fail(c, OX_EUNSUPPORTED, "every float input must have X's element type");
  if (Bi && Bi->numel != D * 2 * GH)
    return cg_fail(c, OX_EMODEL, "B must be [%lld, %lld]", (long long)D, (long long)(2 * GH));
  if ((H0 && H0->numel != D * Bn * H) || (C0 && C0->numel != D * Bn * H))
    return cg_fail(c, OX_EMODEL, "initial_h / initial_c must hold %lld values",
                   (long long)(D * Bn * H));
  if (P && P->numel != D * 3 * H)
    return cg_fail(c, OX_EMODEL, "P must be [%lld, %lld]", (long long)D, (long long)(3 * H));
  if (L && (L->numel != Bn || (L->dtype != OX_INT32 && L->dtype != OX_INT64)))
    return cg_fail(c, OX_EMODEL, "sequence_lens must be int32 [batch_size]");
  cg_val *Y = n_out > 0 ? out[0] : NULL, *YH = n_out > 1 ? out[1] : NULL;
  cg_val *YC = a.kind == RC_LSTM && n_out > 2 ? out[2] : NULL;
  if ((Y && Y->numel != S * D * Bn * H) || (YH && YH->numel != D * Bn * H) ||
      (YC && YC->numel != D * Bn * H))
    return cg_fail(c, OX_EMODEL, "the outputs' shapes do not fit");
  const char *T = cg_ctype(X->dtype);
  int32_t dt = X->dtype;
  bool f = dt == OX_FLOAT;
  const char *one = f ? "1.0f" : "1.0";

  /* the strides of X, Y and the [D, B, H] states under the layout */
  int64_t xs_t = a.layout ? I : Bn * I, xs_b = a.layout ? S * I : I;
  int64_t ys_t = a.layout ? D * H : D * Bn * H, ys_d = a.layout ? H : Bn * H;
  int64_t ys_b = a.layout ? S * D * H : H;
  int64_t ss_d = a.layout ? H : Bn * H, ss_b = a.layout ? D * H : H;
  if (Y && Y->numel)
    cg_printf(c, "  memset(Y0, 0, %zu); /* steps past a sequence's end */\n", Y->nbytes);
  if (!Bn || !H) return OX_OK;
  for (int d = 0; d < a.dirs; d++) {
    bool back = a.reverse_only || d == 1;
    const rc_act *af = &a.act[d][0], *ag = &a.act[d][1], *ah = &a.act[d][2];
    cg_printf(c, "  { /* direction %d: %s */\n", d, back ? "reverse" : "forward");
    cg_printf(c, "    const %s *W = X1 + %lld, *R = X2 + %lld;\n", T, (long long)(d * GH * I),
              (long long)(d * GH * H));
    if (Bi)
      cg_printf(c, "    const %s *wb = X3 + %lld, *rb = X3 + %lld;\n", T, (long long)(d * 2 * GH),
                (long long)(d * 2 * GH + GH));
    if (P) cg_printf(c, "    const %s *P = X7 + %lld;\n", T, (long long)(d * 3 * H));
    cg_printf(c, "    for (long long b = 0; b < %lld; b++) {\n", (long long)Bn);
    cg_printf(c, "      %s h[%lld], g[%lld];\n", T, (long long)H, (long long)GH);
    if (a.kind == RC_LSTM) cg_printf(c, "      %s cs[%lld];\n", T, (long long)H);
    if (a.kind == RC_GRU)
      cg_printf(c, "      %s gx[%lld], gh[%lld];\n", T, (long long)H, (long long)H);
    const long long so = (long long)(d * ss_d);
    if (H0)
      cg_printf(c, "      memcpy(h, X5 + %lld + b * %lld, sizeof h);\n", so, (long long)ss_b);
    else
      cg_printf(c, "      memset(h, 0, sizeof h);\n");
    if (a.kind == RC_LSTM) {
      if (C0)
        cg_printf(c, "      memcpy(cs, X6 + %lld + b * %lld, sizeof cs);\n", so, (long long)ss_b);
      else
        cg_printf(c, "      memset(cs, 0, sizeof cs);\n");
    }
    if (L) {
      cg_printf(c, "      long long len = (long long)X4[b];\n");
      cg_printf(c, "      if (len < 0) len = 0; /* out of range: clamped */\n");
      cg_printf(c, "      if (len > %lld) len = %lld;\n", (long long)S, (long long)S);
    } else {
      cg_printf(c, "      const long long len = %lld;\n", (long long)S);
    }
    cg_printf(c, "      for (long long s = 0; s < len; s++) {\n");
    cg_printf(c, "        const long long t = %s;\n", back ? "len - 1 - s" : "s");
    cg_printf(c, "        const %s *x = X0 + t * %lld + b * %lld;\n", T, (long long)xs_t,
              (long long)xs_b);
    if (a.kind == RC_RNN) {
      put_rows(c, T, 0, GH, I, H, Bi != NULL, true, "h");
      cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n", (long long)H);
      cg_printf(c, "          %s v = g[j];\n", T);
      put_clip(c, &a, dt, "v", "          ");
      cg_printf(c, "          h[j] = %s;\n        }\n", act_expr(c, af, dt, "v"));
    } else if (a.kind == RC_GRU) {
      /* z and r (rows 0..2H), then the hidden gate's two products apart:
       * linear_before_reset scales H Rh^T + Rbh by r, otherwise Rh
       * multiplies r . H */
      put_rows(c, T, 0, 2 * H, I, H, Bi != NULL, true, "h");
      cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n", (long long)(2 * H));
      cg_printf(c, "          %s v = g[j];\n", T);
      put_clip(c, &a, dt, "v", "          ");
      cg_printf(c, "          g[j] = %s;\n        }\n", act_expr(c, af, dt, "v"));
      const char *hv = "h";
      if (!a.lbr) {
        cg_printf(c, "        %s rh[%lld];\n", T, (long long)H);
        cg_printf(c, "        for (long long j = 0; j < %lld; j++) rh[j] = g[%lld + j] * h[j];\n",
                  (long long)H, (long long)H);
        hv = "rh";
      }
      put_rows(c, T, 2 * H, H, I, H, false, false, hv);
      cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n", (long long)H);
      const char *wbh = Bi ? ox_arena_printf(c->a, "wb[%lld + j]", (long long)(2 * H)) : NULL;
      const char *rbh = Bi ? ox_arena_printf(c->a, "rb[%lld + j]", (long long)(2 * H)) : NULL;
      if (a.lbr)
        cg_printf(c, "          %s v = gx[j]%s%s + g[%lld + j] * (gh[j]%s%s);\n", T,
                  Bi ? " + " : "", Bi ? wbh : "", (long long)H, Bi ? " + " : "", Bi ? rbh : "");
      else
        cg_printf(c, "          %s v = gx[j] + gh[j]%s%s%s%s;\n", T, Bi ? " + " : "", Bi ? wbh : "",
                  Bi ? " + " : "", Bi ? rbh : "");
      put_clip(c, &a, dt, "v", "          ");
      cg_printf(c, "          const %s z = g[j];\n", T);
      cg_printf(c, "          h[j] = (%s - z) * %s + z * h[j];\n        }\n", one,
                act_expr(c, ag, dt, "v"));
    } else {
      /* gates i, o, f, c at rows 0, H, 2H, 3H; peepholes i, o, f */
      put_rows(c, T, 0, GH, I, H, Bi != NULL, true, "h");
      long long h1 = (long long)H, h2 = 2 * h1, h3 = 3 * h1;
      cg_printf(c, "        for (long long j = 0; j < %lld; j++) {\n", h1);
      cg_printf(c, "          const %s cp = cs[j];\n", T);
      cg_printf(c, "          %s ig = g[j]%s, cg = g[%lld + j];\n", T, P ? " + P[j] * cp" : "", h3);
      if (!a.input_forget)
        cg_printf(c, "          %s fg = g[%lld + j]%s;\n", T, h2,
                  P ? ox_arena_printf(c->a, " + P[%lld + j] * cp", h2) : "");
      put_clip(c, &a, dt, "ig", "          ");
      if (!a.input_forget) put_clip(c, &a, dt, "fg", "          ");
      put_clip(c, &a, dt, "cg", "          ");
      cg_printf(c, "          const %s iv = %s;\n", T, act_expr(c, af, dt, "ig"));
      if (a.input_forget)
        cg_printf(c, "          const %s fv = %s - iv; /* input_forget */\n", T, one);
      else
        cg_printf(c, "          const %s fv = %s;\n", T, act_expr(c, af, dt, "fg"));
      cg_printf(c, "          const %s cv = %s;\n", T, act_expr(c, ag, dt, "cg"));
      cg_printf(c, "          const %s cn = fv * cp + iv * cv;\n", T);
      cg_printf(c, "          %s og = g[%lld + j]%s;\n", T, h1,
                P ? ox_arena_printf(c->a, " + P[%lld + j] * cn", h1) : "");
      put_clip(c, &a, dt, "og", "          ");
      cg_printf(c, "          const %s ov = %s;\n", T, act_expr(c, af, dt, "og"));
      cg_printf(c, "          cs[j] = cn;\n");
      cg_printf(c, "          h[j] = ov * %s;\n        }\n", act_expr(c, ah, dt, "cn"));
    }
    if (Y)
      cg_printf(c, "        memcpy(Y0 + t * %lld + %lld + b * %lld, h, sizeof h);\n",
                (long long)ys_t, (long long)(d * ys_d), (long long)ys_b);
    cg_printf(c, "      }\n");
    if (YH) cg_printf(c, "      memcpy(Y1 + %lld + b * %lld, h, sizeof h);\n", so, (long long)ss_b);
    if (YC)
      cg_printf(c, "      memcpy(Y2 + %lld + b * %lld, cs, sizeof cs);\n", so, (long long)ss_b);
    cg_printf(c, "    }\n  }\n");
  }
  return OX_OK;
}

const cg_op ox_cg_ops_recurrent[] = {
    {"RNN", gen_recurrent},
    {"GRU", gen_recurrent},
    {"LSTM", gen_recurrent},
    {NULL, NULL},
};
