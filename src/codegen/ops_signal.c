/* ops_signal.c - C generators for the window functions HannWindow,
 * HammingWindow and BlackmanWindow: the length is fixed by the (static)
 * output shape, the values follow the ONNX definitions (periodic: the
 * denominator is N, symmetric: N - 1). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static int gen_window(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)in, (void)n_in, (void)n_out;
  const cg_val *Y = out[0];
  if (Y->rank != 1) return cg_fail(c, OX_EMODEL, "the output must be 1-D");
  long long N = (long long)Y->dims[0];
  bool periodic = ox_node_attr_int(n, "periodic", 1) != 0;
  long long den = periodic ? N : N - 1;
  const char *T = cg_ctype(Y->dtype), *op = n->op_type;
  /* the cosine terms a0 - a1 cos(2 pi k / den) + a2 cos(4 pi k / den) */
  const char *expr = strcmp(op, "HannWindow") == 0 ? "0.5 - 0.5 * cos(w)"
                     : strcmp(op, "HammingWindow") == 0
                         ? "25.0 / 46.0 - (1.0 - 25.0 / 46.0) * cos(w)"
                         : "0.42 - 0.5 * cos(w) + 0.08 * cos(2.0 * w)";
  cg_printf(c, "  for (long long k = 0; k < %lld; k++) {\n", N);
  if (den > 0)
    cg_printf(c, "    const double w = 6.283185307179586476925 * (double)k / %lld.0;\n", den);
  else
    cg_printf(c, "    const double w = 0.0; /* one point, symmetric */\n");
  cg_printf(c, "    Y0[k] = (%s)(%s);\n  }\n", T, expr);
  return OX_OK;
}

const cg_op ox_cg_ops_signal[] = {
    {"HannWindow", gen_window},
    {"HammingWindow", gen_window},
    {"BlackmanWindow", gen_window},
    {NULL, NULL},
};
