/* ops_flex.c - the C generator of FlexAttention (ai.onnx.preview): scores =
 * scale * Q K^T, the score_mod graph on them, a softmax over the keys, the
 * prob_mod graph on the probabilities, then times V, with the KV heads
 * shared by groups of query heads. The two modifier graphs are compiled as
 * the control-flow bodies are (codegen.c's subgraph walk): their nodes get
 * functions of their own, called from the node's function between the
 * stages, their input a value of the arena that the scores are copied into
 * (in softmax_precision, the type shape inference gave the graph), their
 * output copied back.
 *
 * The arithmetic follows the runtime's flex_run (src/ops/onnx/attention.c):
 * float for float, float16 and bfloat16 inputs (each element loaded as
 * float, the output rounded once), the softmax's sum in double (float with
 * --float-only), a row whose scores are all -inf giving zeros; double
 * inputs are computed in double (the runtime stages them as float: the
 * generated code is the more precise of the two). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static bool flex_type(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* Runs modifier graph g (score_mod or prob_mod) on the n values of scratch
 * array `buf` (C type ct) in place: copied into g's input (of type sp),
 * g's nodes called, its output copied back. */
static int run_mod(cg_ctx *c, const ox_graph *g, const char *what, const char *buf,
                   const char *ct, int32_t sp, int64_t n) {
  if (g->n_input != 1 || g->n_output != 1)
    return cg_fail(c, OX_EMODEL, "%s must have one input and one output", what);
  cg_val *x = cg_body_input(c, &g->input[0]);
  if (!x) return c->e->code ? c->e->code : ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  if (x->dtype != sp || x->numel != n)
    return cg_fail(c, OX_EUNSUPPORTED, "%s: its input '%s' is %s, not the %lld scores in %s", what,
                   x->name, cg_type_str(c, x), (long long)n, ox_dtype_get(sp)->name);
  const char *xr = cg_ref(c, x);
  if (!xr) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "  /* %s */\n", what);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) %s[i] = (%s)%s[i];\n", (long long)n, xr,
            cg_ctype(sp), buf);
  int rc = cg_body_run(c, g, "  ");
  if (rc) return ox_err_prefix(c->e, "in %s", what);
  cg_val *y = cg_find(c, g->output[0].name);
  if (!y) return cg_fail(c, OX_EMODEL, "%s: its output '%s' is produced by no node", what,
                         g->output[0].name);
  if ((y->dtype != OX_FLOAT && y->dtype != OX_DOUBLE) || y->numel != n)
    return cg_fail(c, OX_EUNSUPPORTED, "%s must return a float tensor of the input's shape, not %s",
                   what, cg_type_str(c, y));
  const char *yr = cg_ref(c, y);
  if (!yr) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) %s[i] = (%s)%s[i];\n", (long long)n, buf, ct,
            yr);
  return OX_OK;
}

static int gen_flex(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  if (n_in < 3 || !in[0] || !in[1] || !in[2])
    return cg_fail(c, OX_EMODEL, "Q, K and V are required");
  const cg_val *Q = in[0], *K = in[1], *V = in[2], *Y = out[0];
  if (Q->rank != 4 || K->rank != 4 || V->rank != 4)
    return cg_fail(c, OX_EMODEL, "Q, K and V must be rank-4 tensors");
  int32_t dt = Q->dtype;
  if (!flex_type(dt) || K->dtype != dt || V->dtype != dt || Y->dtype != dt)
    return cg_fail(c, OX_EUNSUPPORTED,
                   "Q, K, V and Y must have one type of float, double, float16 or bfloat16");
  int64_t B = Q->dims[0], Hq = Q->dims[1], L = Q->dims[2], D = Q->dims[3];
  int64_t Hk = K->dims[1], S = K->dims[2], Dv = V->dims[3];
  if (K->dims[0] != B || V->dims[0] != B || K->dims[3] != D || V->dims[1] != Hk ||
      V->dims[2] != S || Hk <= 0 || Hq % Hk)
    return cg_fail(c, OX_EMODEL, "Q, K, V shapes are inconsistent");
  if (Y->numel != B * Hq * L * Dv) return cg_fail(c, OX_EMODEL, "Y is not [B, Hq, L, Dv]");
  int64_t sp = ox_node_attr_int(n, "softmax_precision", dt == OX_DOUBLE ? OX_DOUBLE : OX_FLOAT);
  if (sp != OX_FLOAT && sp != OX_DOUBLE)
    return cg_fail(c, OX_EUNSUPPORTED, "softmax_precision %lld is not compiled (float or double)",
                   (long long)sp);
  const ox_attr *sa = ox_node_attr(n, "scale");
  const ox_attr *sm = ox_node_attr(n, "score_mod"), *pm = ox_node_attr(n, "prob_mod");
  float scale = sa ? sa->f : (float)(1.0 / sqrt((double)D));
  bool dbl = dt == OX_DOUBLE;
  int32_t cdt = dbl ? OX_DOUBLE : OX_FLOAT;
  const char *ct = dbl ? "double" : "float", *acc = dbl || !c->o->float_only ? "double" : "float";
  int64_t nsc = B * Hq * L * S, rep = Hq / Hk;
  /* the scores (inside a control-flow body too: passed down as an extra
   * operand of the enclosing functions, alive through the top-level node) */
  cg_val *scr = cg_scratch_in_body(c, cdt, nsc ? nsc : 1);
  const char *sc = scr ? cg_ref(c, scr) : NULL;
  if (!sc) return c->e->code ? c->e->code : ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  char sl[48], zero[48];
  cg_float_lit(sl, sizeof sl, scale, !dbl);
  cg_float_lit(zero, sizeof zero, 0.0, !dbl);
  /* float16 and bfloat16 load through float; float and double as they are */
  bool small = cg_is_small_float(dt);
  const char *lq = ox_arena_printf(c->a, "X0[qo + d]");
  const char *lk = ox_arena_printf(c->a, "X1[ko + d]");
  const char *lv = ox_arena_printf(c->a, "X2[vo + j * %lld]", (long long)Dv);
  if (small && lq && lk && lv) {
    lq = cg_load(c, dt, lq);
    lk = cg_load(c, dt, lk);
    lv = cg_load(c, dt, lv);
  }
  const char *st = cg_store(c, dt, "a", false);
  if (!lq || !lk || !lv || !st) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  /* scores: scale * Q K^T, KV head h / (Hq / Hk) */
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n", (long long)B);
  cg_printf(c, "    for (size_t h = 0; h < %lld; h++)\n", (long long)Hq);
  cg_printf(c, "      for (size_t i = 0; i < %lld; i++)\n", (long long)L);
  cg_printf(c, "        for (size_t j = 0; j < %lld; j++) {\n", (long long)S);
  cg_printf(c, "          const size_t qo = ((b * %lld + h) * %lld + i) * %lld;\n", (long long)Hq,
            (long long)L, (long long)D);
  cg_printf(c, "          const size_t ko = ((b * %lld + h / %lld) * %lld + j) * %lld;\n",
            (long long)Hk, (long long)rep, (long long)S, (long long)D);
  cg_printf(c, "          %s a = %s;\n", ct, zero);
  cg_printf(c, "          for (size_t d = 0; d < %lld; d++) a += (%s)%s * (%s)%s;\n", (long long)D,
            ct, lq, ct, lk);
  cg_printf(c, "          %s[((b * %lld + h) * %lld + i) * %lld + j] = %s * a;\n", sc,
            (long long)Hq, (long long)L, (long long)S, sl);
  cg_printf(c, "        }\n");
  int rc;
  if (sm && sm->g && (rc = run_mod(c, sm->g, "score_mod", sc, ct, (int32_t)sp, nsc))) return rc;
  /* softmax over the keys; a row of -inf gives zeros */
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)(B * Hq * L));
  cg_printf(c, "    %s *row = %s + r * %lld, mx = -INFINITY;\n", ct, sc, (long long)S);
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++)\n      if (row[j] > mx) mx = row[j];\n",
            (long long)S);
  cg_printf(c, "    if (mx == -INFINITY) {\n");
  cg_printf(c, "      for (size_t j = 0; j < %lld; j++) row[j] = %s;\n      continue;\n    }\n",
            (long long)S, zero);
  cg_printf(c, "    %s s = 0;\n", acc);
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) s += row[j] = %s(row[j] - mx);\n",
            (long long)S, cg_mathfn(c, cdt, "exp"));
  cg_printf(c, "    for (size_t j = 0; j < %lld; j++) row[j] = (%s)(row[j] / s);\n", (long long)S,
            ct);
  cg_printf(c, "  }\n");
  if (pm && pm->g && (rc = run_mod(c, pm->g, "prob_mod", sc, ct, (int32_t)sp, nsc))) return rc;
  /* Y = P V */
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n", (long long)B);
  cg_printf(c, "    for (size_t h = 0; h < %lld; h++)\n", (long long)Hq);
  cg_printf(c, "      for (size_t i = 0; i < %lld; i++)\n", (long long)L);
  cg_printf(c, "        for (size_t e = 0; e < %lld; e++) {\n", (long long)Dv);
  cg_printf(c, "          const %s *p = %s + ((b * %lld + h) * %lld + i) * %lld;\n", ct, sc,
            (long long)Hq, (long long)L, (long long)S);
  cg_printf(c, "          const size_t vo = (b * %lld + h / %lld) * %lld + e;\n", (long long)Hk,
            (long long)rep, (long long)(S * Dv));
  cg_printf(c, "          %s a = %s;\n", ct, zero);
  cg_printf(c, "          for (size_t j = 0; j < %lld; j++) a += p[j] * (%s)%s;\n", (long long)S,
            ct, lv);
  cg_printf(c, "          Y0[((b * %lld + h) * %lld + i) * %lld + e] = %s;\n", (long long)Hq,
            (long long)L, (long long)Dv, st);
  cg_printf(c, "        }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_flex[] = {
    {CG_DOMAIN_PREVIEW ":FlexAttention", gen_flex},
    {NULL, NULL},
};
