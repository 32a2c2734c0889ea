/* ops_reduce.c - C generators for reductions (Reduce*, ArgMax/ArgMin),
 * the softmax family and the normalisations over part of a tensor
 * (LayerNormalization, InstanceNormalization). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* The reduced axes (a flag per axis) from the attribute or the constant
 * second input; *noop when the op is the identity (empty axes and
 * noop_with_empty_axes). */
static int reduce_axes(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, bool *red,
                       bool *noop) {
  const cg_val *X = in[0];
  int64_t axes[CG_MAX_RANK];
  size_t na = 0;
  bool from_input = c->opset >= 18 || (c->opset >= 13 && strcmp(n->op_type, "ReduceSum") == 0);
  if (from_input) {
    if (n_in > 1 && in[1] && in[1]->numel && !cg_const_ints(in[1], axes, CG_MAX_RANK, &na))
      return cg_fail(c, OX_EUNSUPPORTED, "axes must be a constant");
  } else {
    cg_attr_ints(n, "axes", axes, CG_MAX_RANK, &na);
  }
  *noop = false;
  if (na == 0 && from_input && ox_node_attr_int(n, "noop_with_empty_axes", 0)) *noop = true;
  for (size_t d = 0; d < X->rank; d++) red[d] = na == 0;
  for (size_t i = 0; i < na; i++) {
    size_t ax;
    if (!cg_axis(axes[i], X->rank, &ax)) return cg_fail(c, OX_EMODEL, "axis out of range");
    red[ax] = true;
  }
  return OX_OK;
}

static const char *min_lit(int32_t dt, bool lowest) {
  switch (dt) {
    case OX_FLOAT:
    case OX_DOUBLE:
      return lowest ? "-INFINITY" : "INFINITY";
    case OX_INT64:
      return lowest ? "INT64_MIN" : "INT64_MAX";
    case OX_INT32:
      return lowest ? "INT32_MIN" : "INT32_MAX";
    case OX_INT8:
      return lowest ? "INT8_MIN" : "INT8_MAX";
    case OX_INT16:
      return lowest ? "INT16_MIN" : "INT16_MAX";
    case OX_UINT8:
      return lowest ? "0" : "UINT8_MAX";
    case OX_UINT16:
      return lowest ? "0" : "UINT16_MAX";
    case OX_UINT32:
      return lowest ? "0" : "UINT32_MAX";
    case OX_UINT64:
      return lowest ? "0" : "UINT64_MAX";
    case OX_BOOL: /* 0 or 1: Max is any, Min is all */
      return lowest ? "0" : "1";
    default:
      return NULL;
  }
}

static int gen_reduce(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0];
  const char *op = n->op_type + 6; /* after "Reduce" */
  bool red[CG_MAX_RANK], noop = false;
  /* computed axes: which dims reduce is worked out at run time (the output
   * shape is static, so only the output strides depend on it) */
  bool rt_axes = (c->opset >= 18 || (c->opset >= 13 && strcmp(n->op_type, "ReduceSum") == 0)) &&
                 n_in > 1 && in[1] && in[1]->numel && in[1]->kind != CG_CONST;
  int rc = rt_axes ? OX_OK : reduce_axes(c, n, in, n_in, red, &noop);
  if (rc) return rc;
  if (noop) {
    cg_printf(c, "  memcpy(Y0, X0, %zu);\n", out[0]->nbytes);
    return OX_OK;
  }
  int32_t dt = X->dtype;
  bool isf = dt == OX_FLOAT || dt == OX_DOUBLE;
  bool mx = strcmp(op, "Max") == 0, mn = strcmp(op, "Min") == 0;
  if (!isf &&
      !(mx || mn || strcmp(op, "Sum") == 0 || strcmp(op, "Prod") == 0 || strcmp(op, "Mean") == 0))
    return cg_fail(c, OX_EUNSUPPORTED, "integer input");
  if (dt == OX_BOOL && !mx && !mn) return cg_fail(c, OX_EUNSUPPORTED, "bool input");
  const char *init = "0", *acc, *post = NULL;
  const char *T = cg_ctype(dt);
  if (mx || mn) {
    init = min_lit(dt, mx);
    if (!init) return cg_fail(c, OX_EUNSUPPORTED, "this element type");
    acc = mx ? "if (X0[i0] > Y0[i1]) Y0[i1] = X0[i0];" : "if (X0[i0] < Y0[i1]) Y0[i1] = X0[i0];";
  } else if (strcmp(op, "Prod") == 0) {
    init = "1", acc = "Y0[i1] *= X0[i0];";
  } else if (strcmp(op, "SumSquare") == 0 || strcmp(op, "L2") == 0) {
    acc = "Y0[i1] += X0[i0] * X0[i0];";
    if (op[0] == 'L') post = "sqrt";
  } else if (strcmp(op, "L1") == 0) {
    acc = dt == OX_FLOAT ? "Y0[i1] += fabsf(X0[i0]);" : "Y0[i1] += fabs(X0[i0]);";
  } else if (strcmp(op, "LogSumExp") == 0) {
    acc = dt == OX_FLOAT ? "Y0[i1] += expf(X0[i0]);" : "Y0[i1] += exp(X0[i0]);";
    post = "log";
  } else {
    acc = "Y0[i1] += X0[i0];";
    if (strcmp(op, "LogSum") == 0) post = "log";
  }
  if (rt_axes) {
    size_t R = X->rank;
    if (!R) return cg_fail(c, OX_EUNSUPPORTED, "computed axes of a scalar");
    cg_printf(c, "  static const size_t dims[%zu] = {", R);
    for (size_t d = 0; d < R; d++) cg_printf(c, "%s%lld", d ? ", " : "", (long long)X->dims[d]);
    cg_printf(c, "};\n  unsigned char red[%zu] = {0};\n  size_t ostr[%zu], span = 1, count = 1;\n",
              R, R);
    cg_printf(c, "  for (size_t a = 0; a < %lld; a++) {\n    long long ax = (long long)X1[a];\n",
              (long long)in[1]->numel);
    cg_printf(c, "    if (ax < 0) ax += %zu;\n    if (ax >= 0 && ax < %zu) red[ax] = 1;\n  }\n", R,
              R);
    cg_printf(c, "  for (size_t d = %zu; d-- > 0;) {\n    ostr[d] = red[d] ? 0 : span;\n", R);
    cg_printf(c,
              "    if (red[d]) count *= dims[d]; else span *= dims[d];\n  }\n  (void)count;\n  "
              "(void)ostr;\n");
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s;\n", (long long)out[0]->numel,
              init);
    if (X->numel) {
      cg_printf(c, "  size_t i0 = 0;\n");
      for (size_t d = 0; d < R; d++)
        cg_printf(c, "%*sfor (size_t d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
                  (long long)X->dims[d], d);
      int ind = (int)(2 + 2 * R);
      cg_printf(c, "%*s{\n%*s  const size_t i1 = 0", ind, "", ind, "");
      for (size_t d = 0; d < R; d++) cg_printf(c, " + d%zu * ostr[%zu]", d, d);
      cg_printf(c, ";\n%*s  %s\n%*s  i0++;\n%*s}\n", ind, "", acc, ind, "", ind, "");
    }
    if (strcmp(op, "Mean") == 0)
      cg_printf(c, "  if (count)\n    for (size_t i = 0; i < %lld; i++) Y0[i] /= (%s)count;\n",
                (long long)out[0]->numel, T);
    if (post)
      cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s(Y0[i]);\n",
                (long long)out[0]->numel, cg_mathfn(c, dt, post));
    return OX_OK;
  }
  int64_t count = 1;
  cg_val yk = *X; /* the output with kept dims, as a broadcast operand */
  for (size_t d = 0; d < X->rank; d++)
    if (red[d]) {
      count *= X->dims[d];
      yk.dims[d] = 1;
    }
  ox_numel(yk.dims, yk.rank, &yk.numel);
  cg_val *ops[2] = {in[0], &yk};
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s;\n", (long long)out[0]->numel, init);
  if (X->numel) cg_bcast_loop(c, X->dims, X->rank, ops, 2, acc);
  if (strcmp(op, "Mean") == 0 && count)
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] /= %lld;\n", (long long)out[0]->numel,
              (long long)count);
  if (post)
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s(Y0[i]);\n",
              (long long)out[0]->numel, cg_mathfn(c, dt, post));
  (void)T;
  return OX_OK;
}

static int gen_argmax(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0];
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  if (X->dtype == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool input");
  bool mx = strcmp(n->op_type, "ArgMax") == 0, last = ox_node_attr_int(n, "select_last_index", 0);
  int64_t outer, inner, A = X->dims[ax];
  cg_split(X, ax, &outer, &inner);
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)outer, (long long)inner);
  cg_printf(c, "      const %s *x = X0 + o * %lld + j;\n      size_t best = 0;\n",
            cg_ctype(X->dtype), (long long)(A * inner));
  cg_printf(c,
            "      for (size_t a = 1; a < %lld; a++)\n        if (x[a * %lld] %s x[best * %lld]) "
            "best = a;\n",
            (long long)A, (long long)inner, mx ? (last ? ">=" : ">") : (last ? "<=" : "<"),
            (long long)inner);
  cg_printf(c, "      Y0[o * %lld + j] = (int64_t)best;\n    }\n", (long long)inner);
  return OX_OK;
}

static int gen_softmax(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  size_t ax;
  bool old = c->opset < 13;
  if (!cg_axis(ox_node_attr_int(n, "axis", old ? 1 : -1), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t outer = 1, A = 1, inner = 1;
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax; d < X->rank; d++) {
    if (old || d == ax)
      A *= X->dims[d];
    else
      inner *= X->dims[d];
  }
  const char *T = cg_ctype(X->dtype), *op = n->op_type;
  bool lg = strcmp(op, "LogSoftmax") == 0, hard = strcmp(op, "Hardmax") == 0;
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)outer, (long long)inner);
  cg_printf(c, "      const %s *x = X0 + o * %lld + j;\n      %s *y = Y0 + o * %lld + j;\n", T,
            (long long)(A * inner), T, (long long)(A * inner));
  cg_printf(c, "      %s mx = x[0], sum = 0;\n      size_t arg = 0;\n", T);
  cg_printf(c,
            "      for (size_t a = 1; a < %lld; a++)\n        if (x[a * %lld] > mx) {\n"
            "          mx = x[a * %lld];\n          arg = a;\n        }\n",
            (long long)A, (long long)inner, (long long)inner);
  if (hard) {
    cg_printf(c,
              "      (void)sum;\n      for (size_t a = 0; a < %lld; a++) y[a * %lld] = a == arg;\n "
              "   }\n",
              (long long)A, (long long)inner);
    return OX_OK;
  }
  cg_printf(c, "      (void)arg;\n");
  cg_printf(c, "      for (size_t a = 0; a < %lld; a++) {\n", (long long)A);
  cg_printf(c, "        const %s e = %s(x[a * %lld] - mx);\n", T, cg_mathfn(c, X->dtype, "exp"),
            (long long)inner);
  if (!lg) cg_printf(c, "        y[a * %lld] = e;\n", (long long)inner);
  cg_printf(c, "        sum += e;\n      }\n");
  if (lg) {
    cg_printf(c, "      const %s ls = %s(sum);\n", T, cg_mathfn(c, X->dtype, "log"));
    cg_printf(
        c, "      for (size_t a = 0; a < %lld; a++) y[a * %lld] = x[a * %lld] - mx - ls;\n    }\n",
        (long long)A, (long long)inner, (long long)inner);
  } else {
    cg_printf(c, "      for (size_t a = 0; a < %lld; a++) y[a * %lld] /= sum;\n    }\n",
              (long long)A, (long long)inner);
  }
  return OX_OK;
}

static int gen_layernorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t outer = 1, D = 1;
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax; d < X->rank; d++) D *= X->dims[d];
  if (n_in < 2 || !in[1]) return cg_fail(c, OX_EMODEL, "no Scale");
  if ((in[1]->numel != D && in[1]->numel != 1) ||
      (n_in > 2 && in[2] && in[2]->numel != D && in[2]->numel != 1))
    return cg_fail(c, OX_EUNSUPPORTED, "Scale and B must have the normalised size or one element");
  char eps[64];
  cg_float_lit(eps, sizeof eps, ox_node_attr_float(n, "epsilon", 1e-5f), X->dtype == OX_FLOAT);
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++) {\n    const %s *x = X0 + o * %lld;\n",
            (long long)outer, T, (long long)D);
  cg_printf(c, "    %s mean = 0, var = 0;\n    for (size_t i = 0; i < %lld; i++) mean += x[i];\n",
            T, (long long)D);
  cg_printf(c,
            "    mean /= %lld;\n    for (size_t i = 0; i < %lld; i++) var += (x[i] - mean) * (x[i] "
            "- mean);\n",
            (long long)D, (long long)D);
  cg_printf(c, "    const %s inv = 1 / %s(var / %lld + %s);\n", T, cg_mathfn(c, X->dtype, "sqrt"),
            (long long)D, eps);
  cg_printf(c,
            "    for (size_t i = 0; i < %lld; i++)\n      Y0[o * %lld + i] = (x[i] - mean) * inv * "
            "X1[%s]%s;\n",
            (long long)D, (long long)D, in[1]->numel == 1 ? "0" : "i",
            n_in > 2 && in[2] ? (in[2]->numel == 1 ? " + X2[0]" : " + X2[i]") : "");
  if (n_out > 1 && out[1]) cg_printf(c, "    Y1[o] = mean;\n");
  if (n_out > 2 && out[2]) cg_printf(c, "    Y2[o] = inv;\n");
  cg_printf(c, "  }\n");
  return OX_OK;
}

static int gen_instnorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_in, (void)out, (void)n_out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank < 2) return cg_fail(c, OX_EMODEL, "rank under 2");
  int64_t C = X->dims[1], sp = 1;
  for (size_t d = 2; d < X->rank; d++) sp *= X->dims[d];
  char eps[64];
  cg_float_lit(eps, sizeof eps, ox_node_attr_float(n, "epsilon", 1e-5f), X->dtype == OX_FLOAT);
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t bc = 0; bc < %lld; bc++) {\n    const size_t ch = bc %% %lld;\n",
            (long long)(X->dims[0] * C), (long long)C);
  cg_printf(c, "    const %s *x = X0 + bc * %lld;\n    %s mean = 0, var = 0;\n", T, (long long)sp,
            T);
  cg_printf(c, "    for (size_t i = 0; i < %lld; i++) mean += x[i];\n    mean /= %lld;\n",
            (long long)sp, (long long)sp);
  cg_printf(c, "    for (size_t i = 0; i < %lld; i++) var += (x[i] - mean) * (x[i] - mean);\n",
            (long long)sp);
  cg_printf(c, "    const %s inv = 1 / %s(var / %lld + %s);\n", T, cg_mathfn(c, X->dtype, "sqrt"),
            (long long)sp, eps);
  cg_printf(c,
            "    for (size_t i = 0; i < %lld; i++) Y0[bc * %lld + i] = (x[i] - mean) * inv * "
            "X1[ch] + X2[ch];\n  }\n",
            (long long)sp, (long long)sp);
  return OX_OK;
}

/* GroupNormalization (18, 21): the channels in num_groups groups, each
 * group of a sample normalised over its channels and positions; scale and
 * bias per channel ([C], opset 21) or per group ([num_groups], opset 18). */
static int gen_groupnorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)out, (void)n_out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank < 2 || n_in < 3 || !in[1] || !in[2])
    return cg_fail(c, OX_EMODEL, "needs X of rank >= 2, scale and bias");
  int64_t N = X->dims[0], C = X->dims[1], G = ox_node_attr_int(n, "num_groups", 0), sp = 1;
  for (size_t d = 2; d < X->rank; d++) sp *= X->dims[d];
  if (G <= 0 || C % G) return cg_fail(c, OX_EMODEL, "num_groups must divide the channels");
  bool per_ch = in[1]->numel == C && in[2]->numel == C;
  if (!per_ch && (in[1]->numel != G || in[2]->numel != G))
    return cg_fail(c, OX_EMODEL, "scale and bias must be [C] or [num_groups]");
  int64_t cg = C / G, L = cg * sp;
  /* the statistics in double, or in the element type under --float-only */
  const char *T = cg_ctype(X->dtype);
  int32_t at = c->o->float_only ? X->dtype : OX_DOUBLE;
  const char *A = cg_ctype(at);
  char eps[64];
  cg_float_lit(eps, sizeof eps, ox_node_attr_float(n, "epsilon", 1e-5f), at == OX_FLOAT);
  cg_printf(c, "  for (long long ng = 0; ng < %lld; ng++) { /* sample, group */\n",
            (long long)(N * G));
  cg_printf(c, "    const %s *x = X0 + ng * %lld;\n    %s mean = 0, var = 0;\n", T,
            (long long)L, A);
  cg_printf(c, "    for (long long i = 0; i < %lld; i++) mean += x[i];\n    mean /= %lld;\n",
            (long long)L, (long long)L);
  cg_printf(c, "    for (long long i = 0; i < %lld; i++) var += (x[i] - mean) * (x[i] - mean);\n",
            (long long)L);
  cg_printf(c, "    const %s inv = 1 / %s(var / %lld + %s);\n", A, cg_mathfn(c, at, "sqrt"),
            (long long)L, eps);
  cg_printf(c, "    for (long long i = 0; i < %lld; i++) {\n", (long long)L);
  if (per_ch)
    cg_printf(c, "      const long long ch = ng %% %lld * %lld + i / %lld;\n", (long long)G,
              (long long)cg, (long long)sp);
  else
    cg_printf(c, "      const long long ch = ng %% %lld;\n", (long long)G);
  cg_printf(c, "      Y0[ng * %lld + i] = (%s)((x[i] - mean) * inv * X1[ch] + X2[ch]);\n    }\n  }\n",
            (long long)L, T);
  return OX_OK;
}

/* LRN: each value divided by (bias + alpha/size * the sum of the squares of
 * the size channels around it)^beta. */
static int gen_lrn(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n_in, (void)out, (void)n_out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  int64_t size = ox_node_attr_int(n, "size", 0);
  if (X->rank < 2 || size <= 0) return cg_fail(c, OX_EMODEL, "needs rank >= 2 and size > 0");
  int64_t N = X->dims[0], C = X->dims[1], sp = 1;
  for (size_t d = 2; d < X->rank; d++) sp *= X->dims[d];
  /* the sum of squares in double, or in the element type under --float-only */
  int32_t at = c->o->float_only ? X->dtype : OX_DOUBLE;
  bool af = at == OX_FLOAT;
  const char *A = cg_ctype(at);
  char al[64], be[64], bi[64];
  double alpha = (double)ox_node_attr_float(n, "alpha", 1e-4f) / (double)size;
  cg_float_lit(al, sizeof al, af ? (double)(float)alpha : alpha, af);
  cg_float_lit(be, sizeof be, ox_node_attr_float(n, "beta", 0.75f), af);
  cg_float_lit(bi, sizeof bi, ox_node_attr_float(n, "bias", 1.0f), af);
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n", (long long)N);
  cg_printf(c, "    for (long long ch = 0; ch < %lld; ch++)\n", (long long)C);
  cg_printf(c, "      for (long long i = 0; i < %lld; i++) {\n", (long long)sp);
  cg_printf(c, "        long long lo = ch - %lld, hi = ch + %lld;\n", (long long)((size - 1) / 2),
            (long long)(size / 2));
  cg_printf(c, "        if (lo < 0) lo = 0;\n        if (hi > %lld) hi = %lld;\n        %s sq = 0;\n",
            (long long)(C - 1), (long long)(C - 1), A);
  cg_printf(c, "        for (long long k = lo; k <= hi; k++) {\n");
  cg_printf(c, "          const %s v = X0[(b * %lld + k) * %lld + i];\n          sq += v * v;\n        }\n",
            A, (long long)C, (long long)sp);
  cg_printf(c, "        const long long at = (b * %lld + ch) * %lld + i;\n", (long long)C,
            (long long)sp);
  cg_printf(c, "        Y0[at] = (%s)(X0[at] / %s(%s + %s * sq, %s));\n      }\n", T,
            cg_mathfn(c, at, "pow"), bi, al, be);
  return OX_OK;
}

static int gen_rmsnorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t outer = 1, D = 1;
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax; d < X->rank; d++) D *= X->dims[d];
  if (n_in < 2 || !in[1] || (in[1]->numel != D && in[1]->numel != 1))
    return cg_fail(c, OX_EUNSUPPORTED, "scale must have the normalised size or one element");
  char eps[64];
  cg_float_lit(eps, sizeof eps, ox_node_attr_float(n, "epsilon", 1e-5f), X->dtype == OX_FLOAT);
  const char *T = cg_ctype(X->dtype);
  cg_printf(
      c,
      "  for (size_t o = 0; o < %lld; o++) {\n    const %s *x = X0 + o * %lld;\n    %s ss = 0;\n",
      (long long)outer, T, (long long)D, T);
  cg_printf(c, "    for (size_t i = 0; i < %lld; i++) ss += x[i] * x[i];\n", (long long)D);
  cg_printf(c, "    const %s inv = 1 / %s(ss / %lld + %s);\n", T, cg_mathfn(c, X->dtype, "sqrt"),
            (long long)D, eps);
  cg_printf(c,
            "    for (size_t i = 0; i < %lld; i++) Y0[o * %lld + i] = x[i] * inv * X1[%s];\n",
            (long long)D, (long long)D, in[1]->numel == 1 ? "0" : "i");
  /* inv_std_var: onnxruntime's SimplifiedLayerNormalization's second output (ops_ms_nn.c) */
  if (n_out > 1 && out[1]) cg_printf(c, "    Y1[o] = (%s)inv;\n", cg_ctype(out[1]->dtype));
  cg_printf(c, "  }\n");
  return OX_OK;
}

static int gen_lpnorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t p = ox_node_attr_int(n, "p", 2), outer = 1, A = X->dims[ax], inner = 1;
  if (p != 1 && p != 2) return cg_fail(c, OX_EMODEL, "p must be 1 or 2");
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax + 1; d < X->rank; d++) inner *= X->dims[d];
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)outer, (long long)inner);
  cg_printf(c, "      const size_t base = o * %lld + j;\n      %s nrm = 0;\n",
            (long long)(A * inner), T);
  cg_printf(
      c, "      for (size_t a = 0; a < %lld; a++) {\n        const %s v = X0[base + a * %lld];\n",
      (long long)A, T, (long long)inner);
  cg_printf(c, "        nrm += %s;\n      }\n",
            p == 1 ? (X->dtype == OX_FLOAT ? "fabsf(v)" : "fabs(v)") : "v * v");
  if (p == 2) cg_printf(c, "      nrm = %s(nrm);\n", cg_mathfn(c, X->dtype, "sqrt"));
  cg_printf(c,
            "      for (size_t a = 0; a < %lld; a++)\n        Y0[base + a * %lld] = nrm == 0 ? 0 : "
            "X0[base + a * %lld] / nrm;\n    }\n",
            (long long)A, (long long)inner, (long long)inner);
  return OX_OK;
}

/* TopK: k is the output's static length along the axis; selection by k
 * passes over the axis (ties: the lower index first, as the reference). */
static int gen_topk(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_in;
  const cg_val *X = in[0];
  if (X->dtype == OX_BOOL || n_out != 2 || !out[0] || !out[1])
    return cg_fail(c, OX_EUNSUPPORTED, "bool input or missing outputs");
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  bool largest = ox_node_attr_int(n, "largest", 1) != 0;
  int64_t outer = 1, A = X->dims[ax], K = out[0]->dims[ax], inner = 1;
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax + 1; d < X->rank; d++) inner *= X->dims[d];
  if (!A) return OX_OK;
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)outer, (long long)inner);
  cg_printf(c, "      unsigned char taken[%lld] = {0};\n", (long long)A);
  cg_printf(c, "      const %s *x = X0 + o * %lld + j;\n", cg_ctype(X->dtype),
            (long long)(A * inner));
  cg_printf(c, "      for (size_t t = 0; t < %lld; t++) {\n        size_t best = %lld;\n",
            (long long)K, (long long)A);
  cg_printf(c, "        for (size_t a = 0; a < %lld; a++)\n", (long long)A);
  cg_printf(
      c, "          if (!taken[a] && (best == %lld || x[a * %lld] %s x[best * %lld])) best = a;\n",
      (long long)A, (long long)inner, largest ? ">" : "<", (long long)inner);
  cg_printf(c, "        taken[best] = 1;\n");
  cg_printf(c, "        Y0[(o * %lld + t) * %lld + j] = x[best * %lld];\n", (long long)K,
            (long long)inner, (long long)inner);
  cg_printf(c, "        Y1[(o * %lld + t) * %lld + j] = (int64_t)best;\n      }\n    }\n",
            (long long)K, (long long)inner);
  return OX_OK;
}

const cg_op ox_cg_ops_reduce[] = {
    {"TopK", gen_topk},
    {"LpNormalization", gen_lpnorm},
    {"RMSNormalization", gen_rmsnorm},
    {"ReduceSum", gen_reduce},
    {"ReduceMean", gen_reduce},
    {"ReduceMax", gen_reduce},
    {"ReduceMin", gen_reduce},
    {"ReduceProd", gen_reduce},
    {"ReduceSumSquare", gen_reduce},
    {"ReduceL1", gen_reduce},
    {"ReduceL2", gen_reduce},
    {"ReduceLogSum", gen_reduce},
    {"ReduceLogSumExp", gen_reduce},
    {"ArgMax", gen_argmax},
    {"ArgMin", gen_argmax},
    {"Softmax", gen_softmax},
    {"LogSoftmax", gen_softmax},
    {"Hardmax", gen_softmax},
    {"LayerNormalization", gen_layernorm},
    {"InstanceNormalization", gen_instnorm},
    {"GroupNormalization", gen_groupnorm},
    {"LRN", gen_lrn},
    {NULL, NULL},
};
