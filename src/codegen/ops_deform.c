/* ops_deform.c - the C generator of DeformConv (opset 19): a convolution
 * whose every kernel tap reads the input at its regular position moved by a
 * learned offset (and scaled by an optional mask), the input sampled
 * N-linearly there (zero outside). The runtime's kernel
 * (src/ops/onnx/conv.c) samples into a column matrix and multiplies it by W;
 * the generated code adds each sample times its weights straight into the
 * output (no scratch), in the same order over channels and taps. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static int gen_deformconv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *W = in[1], *O = n_in > 2 ? in[2] : NULL, *Y = out[0];
  const cg_val *B = n_in > 3 ? in[3] : NULL, *Mk = n_in > 4 ? in[4] : NULL;
  if (!O) return cg_fail(c, OX_EMODEL, "missing input offset");
  if (cg_need_float(c, X)) return c->e->code;
  if (W->dtype != X->dtype || O->dtype != X->dtype || (B && B->dtype != X->dtype) ||
      (Mk && Mk->dtype != X->dtype))
    return cg_fail(c, OX_EMODEL, "X, W, offset, B and mask must have one element type");
  if (X->rank < 3 || X->rank > 5 || W->rank != X->rank || Y->rank != X->rank)
    return cg_fail(c, OX_EMODEL, "X and W must have rank 3 to 5");
  const char *ap = ox_node_attr_str(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") != 0) return cg_fail(c, OX_EUNSUPPORTED, "auto_pad '%s'", ap);
  size_t nd = X->rank - 2;
  int64_t dil[3] = {1, 1, 1}, str[3] = {1, 1, 1}, pads[6] = {0}, v[6];
  size_t cnt;
  if (cg_attr_ints(n, "dilations", v, 6, &cnt)) {
    if (cnt != nd) return cg_fail(c, OX_EMODEL, "dilations need %zu values", nd);
    memcpy(dil, v, nd * sizeof *v);
  }
  if (cg_attr_ints(n, "strides", v, 6, &cnt)) {
    if (cnt != nd) return cg_fail(c, OX_EMODEL, "strides need %zu values", nd);
    memcpy(str, v, nd * sizeof *v);
  }
  if (cg_attr_ints(n, "pads", v, 6, &cnt)) {
    if (cnt != 2 * nd) return cg_fail(c, OX_EMODEL, "pads need %zu values", 2 * nd);
    memcpy(pads, v, 2 * nd * sizeof *v);
  }
  long long N = (long long)X->dims[0], C = (long long)X->dims[1], M = (long long)W->dims[0];
  long long Cg = (long long)W->dims[1], G = (long long)ox_node_attr_int(n, "group", 1);
  long long OG = (long long)ox_node_attr_int(n, "offset_group", 1);
  if (G <= 0 || M % G || Cg * G != C || Y->dims[0] != N || Y->dims[1] != M)
    return cg_fail(c, OX_EMODEL, "group %lld does not fit %lld input and %lld output channels", G,
                   C, M);
  if (OG <= 0 || C % OG)
    return cg_fail(c, OX_EMODEL, "offset_group %lld does not divide %lld channels", OG, C);
  long long ks = 1, P = 1, isz = 1;
  for (size_t d = 0; d < nd; d++) {
    int64_t k = W->dims[2 + d];
    int64_t o = (X->dims[2 + d] + pads[d] + pads[nd + d] - dil[d] * (k - 1) - 1) / str[d] + 1;
    if (k < 1 || dil[d] < 1 || str[d] < 1 || o != Y->dims[2 + d])
      return cg_fail(c, OX_EMODEL, "output shape does not follow the convolution's geometry");
    ks *= (long long)k;
    P *= (long long)o;
    isz *= (long long)X->dims[2 + d];
  }
  if (O->numel != N * OG * ks * (long long)nd * P || (Mk && Mk->numel != N * OG * ks * P))
    return cg_fail(c, OX_EMODEL, "offset or mask has the wrong number of elements");
  if (B && B->numel != M) return cg_fail(c, OX_EMODEL, "B must have %lld elements", M);
  const char *T = cg_ctype(X->dtype);
  long long Mg = M / G, cpo = C / OG;
  cg_printf(c, "  for (long long n = 0; n < %lld; n++) {\n", N);
  cg_printf(c, "    for (long long m = 0; m < %lld; m++)\n", M);
  cg_printf(c, "      for (long long p = 0; p < %lld; p++) Y0[(n * %lld + m) * %lld + p] = %s;\n",
            P, M, P, B ? "X3[m]" : "0");
  cg_printf(c, "    for (long long ch = 0; ch < %lld; ch++) {\n", C);
  cg_printf(c, "      const long long gi = ch / %lld, cl = ch %% %lld, og = ch / %lld;\n", Cg, Cg,
            cpo);
  cg_printf(c, "      const %s *xc = X0 + (n * %lld + ch) * %lld;\n", T, C, isz);
  cg_printf(c, "      for (long long kidx = 0; kidx < %lld; kidx++) {\n", ks);
  /* the kernel tap's index per axis, last axis fastest */
  long long kstride = ks;
  for (size_t d = 0; d < nd; d++) {
    kstride /= (long long)W->dims[2 + d];
    cg_printf(c, "        const long long k%zu = kidx / %lld %% %lld;\n", d, kstride,
              (long long)W->dims[2 + d]);
  }
  cg_printf(c, "        const %s *offk = X2 + ((n * %lld + og) * %lld + kidx) * %lld;\n", T, OG, ks,
            (long long)nd * P);
  if (Mk)
    cg_printf(c, "        const %s *mk = X4 + ((n * %lld + og) * %lld + kidx) * %lld;\n", T, OG, ks,
              P);
  cg_printf(c, "        long long p = 0;\n");
  for (size_t d = 0; d < nd; d++)
    cg_printf(c, "%*sfor (long long o%zu = 0; o%zu < %lld; o%zu++)\n", (int)(8 + 2 * d), "", d, d,
              (long long)Y->dims[2 + d], d);
  int ind = (int)(8 + 2 * nd);
  cg_printf(c, "%*s{\n", ind, "");
  for (size_t d = 0; d < nd; d++)
    cg_printf(c,
              "%*s  const double q%zu = (double)(o%zu * %lld - %lld + k%zu * %lld) + "
              "(double)offk[%lld + p];\n",
              ind, "", d, d, (long long)str[d], (long long)pads[d], d, (long long)dil[d],
              (long long)d * P);
  cg_printf(c, "%*s  %s v = 0;\n%*s  if (", ind, "", T, ind, "");
  for (size_t d = 0; d < nd; d++)
    cg_printf(c, "%sq%zu > -1.0 && q%zu < %lld.0", d ? " && " : "", d, d,
              (long long)X->dims[2 + d]);
  cg_printf(c, ") {\n");
  for (size_t d = 0; d < nd; d++)
    cg_printf(c,
              "%*s    const double f%zu = floor(q%zu), r%zu = q%zu - f%zu;\n"
              "%*s    const long long b%zu = (long long)f%zu;\n",
              ind, "", d, d, d, d, d, ind, "", d, d);
  cg_printf(c, "%*s    double acc = 0.0;\n", ind, "");
  /* the 2^nd corners, each inside the input or skipped (the runtime's
   * deform_sample: corner bits with axis 0 the highest) */
  for (unsigned corner = 0; corner < (1u << nd); corner++) {
    cg_printf(c, "%*s    if (", ind, "");
    for (size_t d = 0; d < nd; d++) {
      if ((corner >> (nd - 1 - d)) & 1u)
        cg_printf(c, "%sb%zu + 1 < %lld", d ? " && " : "", d, (long long)X->dims[2 + d]);
      else
        cg_printf(c, "%sb%zu >= 0", d ? " && " : "", d);
    }
    cg_printf(c, ") {\n%*s      const double w = 1.0", ind, "");
    for (size_t d = 0; d < nd; d++)
      cg_printf(c, ((corner >> (nd - 1 - d)) & 1u) ? " * r%zu" : " * (1.0 - r%zu)", d);
    cg_printf(c, ";\n%*s      if (w != 0.0) acc += w * (double)xc[", ind, "");
    for (size_t d = 0; d < nd; d++) {
      long long stride = 1;
      for (size_t e = d + 1; e < nd; e++) stride *= (long long)X->dims[2 + e];
      cg_printf(c, "%s(b%zu%s) * %lld", d ? " + " : "", d,
                ((corner >> (nd - 1 - d)) & 1u) ? " + 1" : "", stride);
    }
    cg_printf(c, "];\n%*s    }\n", ind, "");
  }
  cg_printf(c, "%*s    v = (%s)acc;\n%*s  }\n", ind, "", T, ind, "");
  if (Mk) cg_printf(c, "%*s  v = v * mk[p];\n", ind, "");
  cg_printf(c, "%*s  for (long long m = 0; m < %lld; m++)\n", ind, "", Mg);
  cg_printf(c,
            "%*s    Y0[(n * %lld + gi * %lld + m) * %lld + p] += X1[((gi * %lld + m) * %lld + cl) "
            "* %lld + kidx] * v;\n",
            ind, "", M, Mg, P, Mg, Cg, ks);
  cg_printf(c, "%*s  p++;\n%*s}\n", ind, "", ind, "");
  cg_printf(c, "      }\n    }\n  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_deform[] = {
    {"DeformConv", gen_deformconv},
    {NULL, NULL},
};
