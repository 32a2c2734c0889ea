/* ops_movement.c - C generators for data-movement operators that the
 * runtime has in src/ops/onnx/tensor.c and gather.c: BitCast (the bytes
 * kept, the type changed), TensorScatter (a key/value cache written at
 * per-batch positions) and ReverseSequence. They copy elements of any
 * fixed-size type. Where the runtime fails on a bad run-time index, the
 * generated function (which cannot fail) leaves that part alone, saying so
 * in a comment of the generated code. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* Element size in bytes of a byte-addressable type (0 for the packed ones
 * and strings). */
static size_t elem_size(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i && i->bits >= 8 && i->bits % 8 == 0 && cg_ctype(dt) ? i->bits / 8u : 0;
}

static int gen_bitcast(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n, (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  size_t xs = elem_size(X->dtype), ys = elem_size(Y->dtype);
  if (!xs || !ys || xs != ys || X->numel != Y->numel)
    return cg_fail(c, OX_EUNSUPPORTED, "bitcast between %s and %s is not compiled",
                   ox_dtype_get(X->dtype) ? ox_dtype_get(X->dtype)->name : "?",
                   ox_dtype_get(Y->dtype) ? ox_dtype_get(Y->dtype)->name : "?");
  if (Y->dtype == OX_BOOL && X->dtype != OX_BOOL) /* a bool is 0 or 1 */
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = X0[i] != 0;\n", (long long)Y->numel);
  else
    cg_printf(c, "  memcpy(Y0, X0, %zu);\n", Y->nbytes);
  return OX_OK;
}

/* present = past with update's rows written at write_indices[b] + t along
 * axis (linear), or modulo the axis length (circular). A linear write past
 * the axis is an error in the runtime; here it is skipped. */
static int gen_tensorscatter(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *U = in[1], *WI = n_in > 2 ? in[2] : NULL, *Y = out[0];
  size_t es = elem_size(X->dtype), r = X->rank, axis;
  if (!es) return cg_fail(c, OX_EUNSUPPORTED, "element type is not compiled for this operator");
  if (!cg_axis(ox_node_attr_int(n, "axis", -2), r, &axis) || axis == 0)
    return cg_fail(c, OX_EMODEL, "axis out of range (it cannot be the batch axis)");
  const char *mode = ox_node_attr_str(n, "mode", "linear");
  bool circ = strcmp(mode, "circular") == 0;
  if (!circ && strcmp(mode, "linear") != 0) return cg_fail(c, OX_EMODEL, "unknown mode '%s'", mode);
  bool ok = U->rank == r && U->dtype == X->dtype && Y->numel == X->numel;
  for (size_t k = 0; ok && k < r; k++) ok = k == axis || U->dims[k] == X->dims[k];
  if (!ok) return cg_fail(c, OX_EMODEL, "update shape or type does not match the cache");
  if (WI && (WI->dtype != OX_INT64 || WI->numel != X->dims[0]))
    return cg_fail(c, OX_EMODEL, "write_indices must be int64 of shape [batch]");
  long long maxs = (long long)X->dims[axis], seq = (long long)U->dims[axis], inner = 1, prefix = 1;
  for (size_t k = axis + 1; k < r; k++) inner *= (long long)X->dims[k];
  for (size_t k = 0; k < axis; k++) prefix *= (long long)X->dims[k];
  long long batch = (long long)X->dims[0], per = batch ? prefix / batch : 0;
  cg_printf(c, "  memcpy(Y0, X0, %zu);\n", Y->nbytes);
  if (!prefix || !seq || !inner || !maxs) return OX_OK;
  cg_printf(c, "  for (long long p = 0; p < %lld; p++) {\n", prefix);
  if (WI) /* the batch entry's write index */
    cg_printf(c, "    const long long w = X2[p / %lld];\n", per ? per : 1);
  else
    cg_printf(c, "    const long long w = 0;\n");
  cg_printf(c, "    for (long long t = 0; t < %lld; t++) {\n", seq);
  if (circ) {
    cg_printf(c, "      const long long ci = (((w %% %lld) + %lld) %% %lld + t) %% %lld;\n", maxs,
              maxs, maxs, maxs);
  } else {
    cg_printf(c, "      if (w < 0 || w >= %lld || t >= %lld - w) continue; /* out of range */\n",
              maxs, maxs);
    cg_printf(c, "      const long long ci = w + t;\n");
  }
  cg_printf(c, "      memcpy(Y0 + (p * %lld + ci) * %lld, X1 + (p * %lld + t) * %lld, %zu);\n",
            maxs, inner, seq, inner, (size_t)inner * es);
  cg_printf(c, "    }\n  }\n");
  return OX_OK;
}

/* Y = X with the first sequence_lens[b] steps of batch entry b reversed
 * along the time axis (the others copied). A length outside [0, T] is an
 * error in the runtime; here it is clamped. */
static int gen_revseq(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0], *Ls = in[1];
  size_t es = elem_size(X->dtype);
  if (!es) return cg_fail(c, OX_EUNSUPPORTED, "element type is not compiled for this operator");
  int64_t ta = ox_node_attr_int(n, "time_axis", 0), ba = ox_node_attr_int(n, "batch_axis", 1);
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
    return cg_fail(c, OX_EMODEL, "time_axis and batch_axis must be 0 and 1");
  if (X->rank < 2) return cg_fail(c, OX_EMODEL, "input must have rank >= 2");
  long long T = (long long)X->dims[ta], B = (long long)X->dims[ba], inner = 1;
  for (size_t k = 2; k < X->rank; k++) inner *= (long long)X->dims[k];
  if (Ls->numel != B || (Ls->dtype != OX_INT32 && Ls->dtype != OX_INT64))
    return cg_fail(c, OX_EMODEL, "sequence_lens must hold %lld int32 or int64 values", B);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", B);
  cg_printf(c, "    long long len = (long long)X1[b];\n");
  cg_printf(c, "    if (len < 0) len = 0; /* out of range: clamped */\n");
  cg_printf(c, "    if (len > %lld) len = %lld;\n", T, T);
  cg_printf(c, "    for (long long t = 0; t < %lld; t++) {\n", T);
  cg_printf(c, "      const long long st = t < len ? len - 1 - t : t;\n");
  if (ta == 0)
    cg_printf(c, "      memcpy(Y0 + (t * %lld + b) * %lld, X0 + (st * %lld + b) * %lld, %zu);\n", B,
              inner, B, inner, (size_t)inner * es);
  else
    cg_printf(c, "      memcpy(Y0 + (b * %lld + t) * %lld, X0 + (b * %lld + st) * %lld, %zu);\n", T,
              inner, T, inner, (size_t)inner * es);
  cg_printf(c, "    }\n  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_movement[] = {
    {"BitCast", gen_bitcast},
    {"TensorScatter", gen_tensorscatter},
    {"ReverseSequence", gen_revseq},
    {NULL, NULL},
};
