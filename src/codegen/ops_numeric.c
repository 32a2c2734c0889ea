/* ops_numeric.c - C generators for three small math operators the runtime
 * has as kernels: SwiGLU (opset 28: Swish_alpha(A) * B), Det (Gaussian
 * elimination with partial pivoting, in double, as src/ops/onnx/matmul.c)
 * and MeanVarianceNormalization ((X - E[X]) / (sqrt(Var X) + 1e-9) over the
 * axes, statistics in double, as src/ops/onnx/norm.c). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static int gen_swiglu(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *A = in[0], *B = in[1];
  if (cg_need_float(c, A)) return c->e->code;
  if (B->dtype != A->dtype || B->numel != A->numel || out[0]->numel != A->numel)
    return cg_fail(c, OX_EMODEL, "A and B must have the same type and shape");
  char al[48];
  bool f = A->dtype == OX_FLOAT;
  cg_float_lit(al, sizeof al, (double)ox_node_attr_float(n, "alpha", 1.0f), f);
  const char *T = cg_ctype(A->dtype);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n", (long long)A->numel);
  cg_printf(c, "    const %s a = X0[i];\n", T);
  cg_printf(c, "    Y0[i] = a / (%s + %s(-(%s * a))) * X1[i];\n  }\n", f ? "1.0f" : "1.0",
            cg_mathfn(c, A->dtype, "exp"), al);
  return OX_OK;
}

static int gen_det(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n, (void)n_in, (void)n_out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank < 2 || X->dims[X->rank - 1] != X->dims[X->rank - 2])
    return cg_fail(c, OX_EMODEL, "input must be [*, M, M]");
  long long m = (long long)X->dims[X->rank - 1], nb = (long long)out[0]->numel;
  if (nb * m * m != X->numel) return cg_fail(c, OX_EMODEL, "output shape");
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  double m[%lld];\n", m * m > 0 ? m * m : 1);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", nb);
  cg_printf(c, "    for (long long i = 0; i < %lld; i++) m[i] = (double)X0[b * %lld + i];\n", m * m,
            m * m);
  cg_printf(c, "    double det = 1;\n");
  cg_printf(c, "    for (long long c = 0; c < %lld; c++) {\n", m);
  cg_printf(c, "      long long piv = c;\n");
  cg_printf(c, "      for (long long r = c + 1; r < %lld; r++)\n", m);
  cg_printf(c, "        if (fabs(m[r * %lld + c]) > fabs(m[piv * %lld + c])) piv = r;\n", m, m);
  cg_printf(c, "      if (m[piv * %lld + c] == 0) {\n        det = 0;\n        break;\n      }\n",
            m);
  cg_printf(c, "      if (piv != c) {\n");
  cg_printf(c, "        for (long long k = 0; k < %lld; k++) {\n", m);
  cg_printf(c, "          const double t = m[c * %lld + k];\n", m);
  cg_printf(c, "          m[c * %lld + k] = m[piv * %lld + k];\n          m[piv * %lld + k] = t;\n",
            m, m, m);
  cg_printf(c, "        }\n        det = -det;\n      }\n");
  cg_printf(c, "      const double d = m[c * %lld + c];\n      det *= d;\n", m);
  cg_printf(c, "      for (long long r = c + 1; r < %lld; r++) {\n", m);
  cg_printf(c, "        const double f = m[r * %lld + c] / d;\n", m);
  cg_printf(
      c, "        for (long long k = c; k < %lld; k++) m[r * %lld + k] -= f * m[c * %lld + k];\n",
      m, m, m);
  cg_printf(c, "      }\n    }\n    Y0[b] = (%s)det;\n  }\n", T);
  return OX_OK;
}

/* The mean and variance over the axes of each kept index: the reduced
 * tensor's index of every element is a sum of per-axis strides (zero on
 * the reduced axes), so two passes over X in order, with two double arrays
 * of the kept size as scratch in the arena. */
static int gen_mvn(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0];
  if (cg_need_float(c, X)) return c->e->code;
  int64_t axes[CG_MAX_RANK];
  size_t na;
  if (!cg_attr_ints(n, "axes", axes, CG_MAX_RANK, &na)) {
    axes[0] = 0, axes[1] = 2, axes[2] = 3;
    na = 3;
  }
  bool red[CG_MAX_RANK] = {false};
  for (size_t i = 0; i < na; i++) {
    size_t a;
    if (!cg_axis(axes[i], X->rank, &a))
      return cg_fail(c, OX_EMODEL, "axis %lld is out of range for rank %zu", (long long)axes[i],
                     X->rank);
    red[a] = true;
  }
  int64_t rst[CG_MAX_RANK], s = 1, cnt = 1;
  for (size_t k = X->rank; k-- > 0;) {
    rst[k] = red[k] ? 0 : s;
    if (red[k])
      cnt *= X->dims[k];
    else
      s *= X->dims[k];
  }
  cg_val *sv = cg_scratch(c, OX_DOUBLE, 2 * s);
  const char *S = sv ? cg_ref(c, sv) : NULL;
  if (!S)
    return c->e->code
               ? c->e->code
               : cg_fail(c, OX_EUNSUPPORTED, "no scratch statistics inside a control-flow body");
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  double *m1 = %s, *m2 = m1 + %lld;\n", S, (long long)s);
  cg_printf(c, "  memset(m1, 0, %zu);\n", (size_t)(2 * s) * sizeof(double));
  /* the element loop with its reduced index r, run twice */
  for (int pass = 0; pass < 2; pass++) {
    cg_printf(c, "  {\n    size_t i = 0;\n");
    for (size_t d = 0; d < X->rank; d++)
      cg_printf(c, "%*sfor (long long d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(4 + 2 * d), "", d, d,
                (long long)X->dims[d], d);
    int ind = (int)(4 + 2 * X->rank);
    cg_printf(c, "%*s{\n%*s  const long long r = 0", ind, "", ind, "");
    for (size_t d = 0; d < X->rank; d++)
      if (rst[d]) cg_printf(c, " + d%zu * %lld", d, (long long)rst[d]);
    cg_printf(c, ";\n");
    for (size_t d = 0; d < X->rank; d++)
      if (!rst[d]) cg_printf(c, "%*s  (void)d%zu;\n", ind, "", d);
    if (pass == 0)
      cg_printf(c,
                "%*s  const double x = (double)X0[i++];\n"
                "%*s  m1[r] += x;\n%*s  m2[r] += x * x;\n",
                ind, "", ind, "", ind, "");
    else
      cg_printf(c, "%*s  Y0[i] = (%s)(((double)X0[i] - m1[r]) / m2[r]);\n%*s  i++;\n", ind, "", T,
                ind, "");
    cg_printf(c, "%*s}\n  }\n", ind, "");
    if (pass == 0) {
      cg_printf(c, "  for (long long k = 0; k < %lld; k++) {\n", (long long)s);
      cg_printf(c, "    m1[k] /= %lld.0;\n    m2[k] /= %lld.0;\n", (long long)cnt, (long long)cnt);
      cg_printf(c, "    const double v = m2[k] - m1[k] * m1[k];\n");
      cg_printf(c, "    m2[k] = sqrt(v > 0 ? v : 0.0) + 1e-9;\n  }\n");
    }
  }
  return OX_OK;
}

const cg_op ox_cg_ops_numeric[] = {
    {"SwiGLU", gen_swiglu},
    {"Det", gen_det},
    {"MeanVarianceNormalization", gen_mvn},
    {NULL, NULL},
};
