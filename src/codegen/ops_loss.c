/* ops_loss.c - C generators for the loss operators: NegativeLogLikelihoodLoss
 * and SoftmaxCrossEntropyLoss (reductions none, sum and mean; class weights;
 * ignore_index). Both read the input as [N, C, D] with D the product of the
 * dims after the class axis, and the target as [N, D]. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* loss[n,d] = -w[t] * x[n,t,d] with t = target[n,d] (0 where t is
 * ignore_index); SoftmaxCrossEntropyLoss first takes the log-softmax over
 * the classes (and writes it as its second output when asked). mean divides
 * by the sum of the weights taken, or by N*D without weights and without
 * ignore_index, as the ONNX reference does. */
static int gen_loss(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  bool sce = strcmp(n->op_type, "SoftmaxCrossEntropyLoss") == 0;
  const cg_val *X = in[0], *T = n_in > 1 ? in[1] : NULL, *W = n_in > 2 ? in[2] : NULL;
  if (cg_need_float(c, X)) return c->e->code;
  if (!T || (T->dtype != OX_INT32 && T->dtype != OX_INT64))
    return cg_fail(c, OX_EMODEL, "the target must be an int32 or int64 tensor");
  if (X->rank < 2) return cg_fail(c, OX_EMODEL, "the input needs a class axis (rank >= 2)");
  if (W && (W->rank != 1 || W->dims[0] != X->dims[1] || W->dtype != X->dtype))
    return cg_fail(c, OX_EMODEL, "the weights must be [C] of the input's type");
  const char *red = ox_node_attr_str(n, "reduction", "mean");
  bool mean = strcmp(red, "mean") == 0, sum = strcmp(red, "sum") == 0;
  if (!mean && !sum && strcmp(red, "none") != 0)
    return cg_fail(c, OX_EMODEL, "reduction '%s' is not none, sum or mean", red);
  bool has_ii = ox_node_attr(n, "ignore_index") != NULL;
  long long ii = (long long)ox_node_attr_int(n, "ignore_index", 0);
  long long N = (long long)X->dims[0], C = (long long)X->dims[1], D = 1;
  for (size_t d = 2; d < X->rank; d++) D *= (long long)X->dims[d];
  if (T->numel != N * D) return cg_fail(c, OX_EMODEL, "the target is not [N, d1, ...]");
  const char *Tx = cg_ctype(X->dtype);
  bool with_lp = sce && n_out > 1 && out[1];
  if (mean || sum) cg_printf(c, "  double num = 0, den = 0;\n");
  cg_printf(c, "  for (long long n = 0; n < %lld; n++)\n    for (long long d = 0; d < %lld; d++) {\n",
            N, D);
  cg_printf(c, "      const %s *x = X0 + n * %lld + d; /* class k at x[k * %lld] */\n", Tx, C * D,
            D);
  cg_printf(c, "      long long t = (long long)X1[n * %lld + d];\n", D);
  if (sce) {
    /* log-softmax over the classes, in double */
    cg_printf(c, "      double mx = -INFINITY, s = 0;\n");
    cg_printf(c, "      for (long long k = 0; k < %lld; k++)\n", C);
    cg_printf(c, "        if ((double)x[k * %lld] > mx) mx = (double)x[k * %lld];\n", D, D);
    cg_printf(c, "      for (long long k = 0; k < %lld; k++) s += exp((double)x[k * %lld] - mx);\n",
              C, D);
    cg_printf(c, "      const double ls = log(s);\n");
    if (with_lp)
      cg_printf(c,
                "      for (long long k = 0; k < %lld; k++)\n"
                "        Y1[n * %lld + k * %lld + d] = (%s)((double)x[k * %lld] - mx - ls);\n",
                C, C * D, D, Tx, D);
  }
  cg_printf(c, "      double l = 0, w = 0;\n");
  if (has_ii) cg_printf(c, "      if (t != %lldLL) {\n", ii);
  else cg_printf(c, "      {\n");
  /* a target out of range reads the nearest class (numpy's take(mode=clip)), never past x */
  cg_printf(c, "        t = t < 0 ? 0 : t >= %lld ? %lld : t;\n", C, C - 1);
  cg_printf(c, "        w = %s;\n", W ? "(double)X2[t]" : "1.0");
  if (sce)
    cg_printf(c, "        l = -w * ((double)x[t * %lld] - mx - ls);\n", D);
  else
    cg_printf(c, "        l = -w * (double)x[t * %lld];\n", D);
  cg_printf(c, "      }\n");
  if (mean || sum)
    cg_printf(c, "      num += l;\n      den += w;\n");
  else
    cg_printf(c, "      (void)w;\n      Y0[n * %lld + d] = (%s)l;\n", D, Tx);
  cg_printf(c, "    }\n");
  if (sum)
    cg_printf(c, "  Y0[0] = (%s)num;\n", Tx);
  else if (mean && (W || has_ii))
    cg_printf(c, "  Y0[0] = (%s)(num / den);\n", Tx);
  else if (mean)
    cg_printf(c, "  Y0[0] = (%s)(num / %lld.0);\n", Tx, N * D);
  return OX_OK;
}

const cg_op ox_cg_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", gen_loss},
    {"SoftmaxCrossEntropyLoss", gen_loss},
    {NULL, NULL},
};
