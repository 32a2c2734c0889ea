/* ops_quant.c - C generators for the quantized operators and the integer
 * form of int8 QDQ models.
 *
 * The standard operators (QuantizeLinear, DequantizeLinear per tensor, per
 * axis and blocked; DynamicQuantizeLinear; MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv) are generated with the arithmetic of the
 * runtime's kernels (src/ops/onnx/quant.c, conv_int.c): a float32 quotient
 * rounded half to even, the zero point added, saturated; NaN gives 0.
 *
 * ox_cg_fold_qdq() rewrites, before generation, the units that quantizers
 * (onnxruntime's quantize_static, python3-onnx scripts) write around a
 * Conv, MatMul or Gemm:
 *
 *   DequantizeLinear(xq) -+
 *   DequantizeLinear(Wq) -+-> Conv|MatMul|Gemm [-> Relu|Clip] -> QuantizeLinear -> yq
 *   bias (float, or DequantizeLinear of int32) -+
 *
 * into one node "QdqConv" / "QdqMatMul" (and DequantizeLinear ->
 * MaxPool|Flatten|Reshape -> QuantizeLinear of one scale into the op on the
 * int8 values); QLinearConv and QLinearMatMul with constant scales take the
 * same kernel. The generator computes
 * int8 x int8 -> int32 sums plus an int32 bias, then requantizes each sum
 * by a fixed-point multiplier and shift computed here from the float scales
 * (TFLite's scheme: M = sx * sw / sy = m0 * 2^-s with m0 a Q31 integer),
 * rounds half away from zero, adds the output zero point and clamps (the
 * Relu is the clamp at the zero point). No float is left in these loops, so
 * a microcontroller without an FPU runs them at integer speed. The results
 * differ from the float path only where a value's rounding to the output's
 * quantum falls the other way (at most 1 in the last quantized unit). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* ---- shared pieces ---- */

/* Integer range of a quantized C type; false for the others. */
static bool q_range(int32_t dt, long *lo, long *hi) {
  switch (dt) {
    case OX_INT8:
      *lo = -128, *hi = 127;
      return true;
    case OX_UINT8:
      *lo = 0, *hi = 255;
      return true;
    case OX_INT16:
      *lo = -32768, *hi = 32767;
      return true;
    case OX_UINT16:
      *lo = 0, *hi = 65535;
      return true;
    default:
      return false;
  }
}

static bool is_q8(int32_t dt) { return dt == OX_INT8 || dt == OX_UINT8; }

static cg_val *lookup(cg_ctx *c, const char *name) {
  uintptr_t v;
  return name && *name && ox_map_get(&c->by_name, name, &v) ? c->vals[v] : NULL;
}

/* Element i of a constant as double (float, double and the integer types). */
static double cval(const cg_val *v, int64_t i) {
  const void *p = v->cv->data;
  switch (v->dtype) {
    case OX_FLOAT:
      return ((const float *)p)[i];
    case OX_DOUBLE:
      return ((const double *)p)[i];
    case OX_INT8:
      return ((const int8_t *)p)[i];
    case OX_UINT8:
      return ((const uint8_t *)p)[i];
    case OX_INT16:
      return ((const int16_t *)p)[i];
    case OX_UINT16:
      return ((const uint16_t *)p)[i];
    case OX_INT32:
      return ((const int32_t *)p)[i];
    case OX_INT64:
      return (double)((const int64_t *)p)[i];
    default:
      return 0.0;
  }
}

/* The scale layout of Q/DQ: element i = (o * D + d) * inner + k has its
 * scale at (o * SD + d / bs) * inner + k (blocked), d (per axis) or 0. */
typedef struct qlay {
  int64_t outer, D, inner, SD, bs;
  int mode; /* 0 per tensor, 1 per axis, 2 blocked */
} qlay;

static int q_layout(cg_ctx *c, const ox_node *n, const cg_val *x, const cg_val *s,
                    const cg_val *z, qlay *L) {
  memset(L, 0, sizeof *L);
  int64_t bs = ox_node_attr_int(n, "block_size", 0);
  if (z && z->numel != s->numel) return cg_fail(c, OX_EMODEL, "zero point and scale sizes differ");
  if (s->numel == 1 && s->rank <= 1 && !(bs > 0 && s->rank == x->rank && x->rank > 1)) {
    L->outer = L->D = 1;
    L->inner = x->numel;
    return OX_OK;
  }
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 1), x->rank, &ax))
    return cg_fail(c, OX_EMODEL, "axis out of range");
  cg_split(x, ax, &L->outer, &L->inner);
  L->D = x->dims[ax];
  if (s->rank == 1 && bs == 0) {
    if (s->dims[0] != L->D) return cg_fail(c, OX_EMODEL, "per-axis scale of the wrong length");
    L->mode = 1;
    return OX_OK;
  }
  if (bs <= 0 || s->rank != x->rank) return cg_fail(c, OX_EMODEL, "scale layout not understood");
  for (size_t k = 0; k < x->rank; k++)
    if (k != ax && s->dims[k] != x->dims[k])
      return cg_fail(c, OX_EMODEL, "blocked scale must match x except on the axis");
  L->SD = s->dims[ax];
  L->bs = bs;
  if (L->D > L->SD * bs || (L->SD - 1) * bs >= (L->D > 0 ? L->D : 1))
    return cg_fail(c, OX_EMODEL, "block_size does not fit the axis");
  L->mode = 2;
  return OX_OK;
}

/* Opens the loops of a layout: defines i (element) and si (scale index). */
static void q_loops(cg_ctx *c, const qlay *L) {
  cg_printf(c,
            "  for (size_t o = 0; o < %lld; o++)\n    for (size_t d = 0; d < %lld; d++)\n"
            "      for (size_t k = 0; k < %lld; k++) {\n"
            "        const size_t i = (o * %lld + d) * %lld + k;\n",
            (long long)L->outer, (long long)L->D, (long long)L->inner, (long long)L->D,
            (long long)L->inner);
  if (L->mode == 0)
    cg_printf(c, "        const size_t si = 0;\n");
  else if (L->mode == 1)
    cg_printf(c, "        const size_t si = d;\n");
  else
    cg_printf(c, "        const size_t si = (o * %lld + d / %lld) * %lld + k;\n", (long long)L->SD,
              (long long)L->bs, (long long)L->inner);
  cg_printf(c, "        (void)si;\n");
}

/* Stores the real-valued expression q (already rounded, zero point added)
 * into Y0[idx] saturated to [lo, hi]; NaN stores 0. */
static void q_store(cg_ctx *c, const char *ind, const char *T, const char *q, const char *idx,
                    long lo, long hi) {
  cg_printf(c, "%sY0[%s] = (%s)(%s < %ld ? %ld : %s > %ld ? %ld : %s == %s ? %s : 0);\n", ind, idx,
            T, q, lo, lo, q, hi, hi, q, q, q);
}

/* QLinearConv / QLinearMatMul with constant scales and zero points: the
 * integer-only kernel of the folded QDQ units (below). True when it was
 * generated (or failed: c->e says), false for the float requantization. */
static bool q_linear_int(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, const cg_val *y,
                         bool conv);

/* ---- QuantizeLinear / DequantizeLinear ----
 * The quantized types: the integer ones (8, 16 bits; 4 and 2 bits packed
 * two or four to a byte, element 0 in the low bits), the four float8 kinds
 * (uint8_t bits) and float4e2m1 (packed). The float arithmetic is the
 * runtime's (src/ops/onnx/quant.c) in float: its double products and
 * differences of such values are exact or rounded once either way, and a
 * float quotient rounded again to float16/bfloat16 is the quotient rounded
 * once (24 >= 2p + 2 bits). */

static bool q_packed_int(int32_t dt) {
  return dt == OX_INT4 || dt == OX_UINT4 || dt == OX_INT2 || dt == OX_UINT2;
}

/* Integer range of the packed integer types (q_range has the others). */
static bool q_range_any(int32_t dt, long *lo, long *hi) {
  if (q_range(dt, lo, hi)) return true;
  unsigned bits = cg_packed_bits(dt);
  if (!q_packed_int(dt)) return false;
  bool sgn = dt == OX_INT4 || dt == OX_INT2;
  *lo = sgn ? -(1L << (bits - 1)) : 0;
  *hi = sgn ? (1L << (bits - 1)) - 1 : (1L << bits) - 1;
  return true;
}

static bool q_is_f8(int32_t dt) { return dt >= OX_FLOAT8E4M3FN && dt <= OX_FLOAT8E5M2FNUZ; }

/* Element idx of arr (type dt) as a C expression: float for the float
 * kinds (float16, bfloat16, float8, float4 through the helpers), int for
 * the packed integers, the C type's value for the others. */
static const char *q_elem(cg_ctx *c, int32_t dt, const char *arr, const char *idx) {
  if (cg_packed_bits(dt)) return cg_load_packed(c, dt, arr, idx);
  const char *e = ox_arena_printf(c->a, "%s[%s]", arr, idx);
  if (!e || !cg_is_small_float(dt)) return e;
  return cg_load(c, dt, e);
}

/* Float expression e rounded to the precision of prec (float16 or
 * bfloat16 through their bits; float: as is). */
static const char *q_round_to(cg_ctx *c, int32_t prec, const char *e) {
  if (prec != OX_FLOAT16 && prec != OX_BFLOAT16) return e;
  const char *s = cg_store(c, prec, e, true);
  return s ? cg_load(c, prec, s) : NULL;
}

/* Element idx of arr (type dt) rounded to prec's precision: as loaded when
 * dt's values are all of that precision already. */
static const char *q_elem_in(cg_ctx *c, int32_t dt, const char *arr, const char *idx,
                             int32_t prec) {
  const char *e = q_elem(c, dt, arr, idx);
  bool exact = dt == prec || (prec == OX_FLOAT && (dt == OX_FLOAT16 || dt == OX_BFLOAT16));
  return exact ? e : q_round_to(c, prec, e);
}

static bool q_float_kind(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* A packed output is filled by or-ing each element's bits into bytes
 * cleared first; the loops then store `v` (unsigned) at element i. */
static void q_clear_packed(cg_ctx *c, const cg_val *y) {
  if (cg_packed_bits(y->dtype))
    cg_printf(c, "  for (size_t b = 0; b < %lld; b++) Y0[b] = 0;\n", (long long)y->nbytes);
}

static void q_put_packed(cg_ctx *c, int32_t dt, const char *v) {
  unsigned bits = cg_packed_bits(dt), per = 8 / bits, mask = (1u << bits) - 1u;
  cg_printf(c, "        Y0[i / %u] = (uint8_t)(Y0[i / %u] | (%s & %uu) << (i %% %u * %u));\n", per,
            per, v, mask, per, bits);
}

/* prec0: the precision of the quotient when the node has no `precision`
 * attribute (0: the scale's type) */
static int quantize_in(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       int32_t prec0) {
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "x and y_scale are required");
  const cg_val *x = in[0], *s = in[1], *z = n_in > 2 ? in[2] : NULL;
  int32_t odt = out[0]->dtype;
  long lo = 0, hi = 0;
  bool is_int = q_range_any(odt, &lo, &hi);
  if (!is_int && !q_is_f8(odt) && odt != OX_FLOAT4E2M1)
    return cg_fail(c, OX_EUNSUPPORTED, "output type %s is not compiled",
                   ox_dtype_get(odt) ? ox_dtype_get(odt)->name : "?");
  /* the type the operator gives (a declared output of another type is an error) */
  int64_t want = z ? z->dtype : ox_node_attr_int(n, "output_dtype", 0);
  if ((want ? want : OX_UINT8) != odt)
    return cg_fail(c, OX_EMODEL, "y is declared %s, the zero point or output_dtype give %s",
                   ox_dtype_get(odt) ? ox_dtype_get(odt)->name : "?",
                   ox_dtype_get((int32_t)(want ? want : OX_UINT8))
                       ? ox_dtype_get((int32_t)(want ? want : OX_UINT8))->name
                       : "?");
  int64_t prec = ox_node_attr_int(n, "precision", prec0);
  if (!prec) prec = s->dtype;
  bool dbl = prec == OX_DOUBLE;
  bool x_ok = q_float_kind(x->dtype) || x->dtype == OX_DOUBLE || x->dtype == OX_INT32;
  if (!x_ok || (dbl ? s->dtype != OX_DOUBLE || (x->dtype != OX_DOUBLE && x->dtype != OX_INT32)
                    : !q_float_kind(s->dtype) || !q_float_kind((int32_t)prec)))
    return cg_fail(c, OX_EUNSUPPORTED,
                   "x (float, float16, bfloat16, double or int32) and y_scale (float, float16 or "
                   "bfloat16, or double with a double x) not compiled as given");
  qlay L;
  int rc = q_layout(c, n, x, s, z, &L);
  if (rc) return rc;
  q_clear_packed(c, out[0]);
  q_loops(c, &L);
  const char *T = dbl ? "double" : "float";
  /* the quotient in the precision (x and the scale rounded to it first) */
  const char *xv;
  if (x->dtype == OX_DOUBLE || x->dtype == OX_INT32) { /* to the precision, through float */
    xv = ox_arena_printf(c->a, "(%s)X0[i]", dbl ? "double" : "float");
    if (!dbl) xv = q_round_to(c, (int32_t)prec, xv);
  } else
    xv = q_elem_in(c, x->dtype, "X0", "i", (int32_t)prec);
  const char *sv = q_elem_in(c, s->dtype, "X1", "si", (int32_t)prec);
  const char *quot = ox_arena_printf(c->a, "%s / %s", xv, sv);
  const char *zv = z ? q_elem(c, z->dtype, "X2", "si") : NULL;
  cg_printf(c, "        const %s qq = %s;\n", T, q_round_to(c, (int32_t)prec, quot));
  if (is_int) {
    /* rounded half to even (the current rounding mode), the zero point
     * added, saturated; NaN gives 0 */
    cg_printf(c, "        const %s q = %s(qq)%s%s;\n", T, dbl ? "nearbyint" : "nearbyintf",
              zv ? " + " : "", zv ? zv : "");
    if (!cg_packed_bits(odt)) {
      q_store(c, "        ", cg_ctype(odt), "q", "i", lo, hi);
    } else {
      cg_printf(c, "        const int v = (int)(q < %ld ? %ld : q > %ld ? %ld : q == q ? q : 0);\n",
                lo, lo, hi, hi);
      q_put_packed(c, odt, "(unsigned)v");
    }
  } else {
    /* float8 / float4: the zero point's value added (0 when absent, as the
     * runtime: -0 becomes +0), then converted (float8 saturating as the
     * attribute says; float4 always saturates) */
    const char *sum =
        ox_arena_printf(c->a, "(float)(qq + %s)", zv ? zv : dbl ? "0.0" : "0.0f");
    if (odt == OX_FLOAT4E2M1) {
      c->conv_used |= (CG_CONV_F4 | CG_CONV_F8) << 8;
      q_put_packed(c, odt, ox_arena_printf(c->a, "(unsigned)%s_f32_f4(%s)", c->prefix, sum));
    } else {
      bool sat = ox_node_attr_int(n, "saturate", 1) != 0;
      cg_printf(c, "        Y0[i] = %s;\n", cg_store(c, odt, sum, sat));
    }
  }
  cg_printf(c, "      }\n");
  return OX_OK;
}

static int gen_quantize(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_out;
  return quantize_in(c, n, in, n_in, out, 0);
}

/* com.microsoft's QuantizeLinear divides in float whatever the scale's
 * type (the runtime's ox_quant_prepare_contrib) */
int cg_gen_quantize_ms(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n_out;
  return quantize_in(c, n, in, n_in, out, OX_FLOAT);
}

int cg_gen_dequantize(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "x and x_scale are required");
  const cg_val *x = in[0], *s = in[1], *z = n_in > 2 ? in[2] : NULL;
  int32_t xt = x->dtype, odt = out[0]->dtype;
  long lo, hi;
  if (!q_range_any(xt, &lo, &hi) && xt != OX_INT32 && !q_is_f8(xt) && xt != OX_FLOAT4E2M1)
    return cg_fail(c, OX_EUNSUPPORTED, "input type %s is not compiled",
                   ox_dtype_get(xt) ? ox_dtype_get(xt)->name : "?");
  if (!q_float_kind(odt) || !q_float_kind(s->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "scales and outputs of float, float16 or bfloat16 only");
  if (z && z->dtype != xt) return cg_fail(c, OX_EMODEL, "x and zero point types differ");
  int64_t want = ox_node_attr_int(n, "output_dtype", 0);
  if (want && want != odt)
    return cg_fail(c, OX_EMODEL, "y is declared of another type than output_dtype");
  qlay L;
  int rc = q_layout(c, n, x, s, z, &L);
  if (rc) return rc;
  q_loops(c, &L);
  const char *d;
  if (xt == OX_INT32) /* through double as the runtime does */
    d = z ? "(float)((double)X0[i] - (double)X2[si])" : "(float)X0[i]";
  else {
    /* up to 16 bits the integer difference is exact in int; the float
     * kinds' difference in float is the runtime's exact one rounded once */
    const char *xv = q_elem(c, xt, "X0", "i"), *zv = z ? q_elem(c, xt, "X2", "si") : NULL;
    d = ox_arena_printf(c->a, "(float)(%s%s%s)", xv, zv ? " - " : "", zv ? zv : "");
  }
  /* both factors rounded to the output's precision, their product (exact
   * in float for float16 and bfloat16) rounded to it */
  const char *prod = ox_arena_printf(c->a, "%s * %s", q_round_to(c, odt, d),
                                     q_elem_in(c, s->dtype, "X1", "si", odt));
  cg_printf(c, "        Y0[i] = %s;\n", odt == OX_FLOAT ? prod : cg_store(c, odt, prod, true));
  cg_printf(c, "      }\n");
  return OX_OK;
}

int cg_gen_dynq(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n;
  if (n_in < 1 || !in[0] || in[0]->dtype != OX_FLOAT)
    return cg_fail(c, OX_EUNSUPPORTED, "x must be float");
  int64_t N = in[0]->numel;
  /* the range with 0 in it (NaN fails both tests and is skipped) */
  cg_printf(c, "  float mn = 0.0f, mx = 0.0f;\n  for (size_t i = 0; i < %lld; i++) {\n"
               "    if (X0[i] < mn) mn = X0[i];\n    if (X0[i] > mx) mx = X0[i];\n  }\n",
            (long long)N);
  cg_printf(c, "  const float sc = (mx - mn) / 255.0f;\n"
               "  float z = sc != 0.0f ? nearbyintf((0.0f - mn) / sc) : 0.0f;\n"
               "  z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z == z ? z : 0.0f;\n");
  if (out[0]) {
    cg_printf(c, "  if (sc != 0.0f && sc == sc) {\n    for (size_t i = 0; i < %lld; i++) {\n"
                 "      const float q = nearbyintf(X0[i] / sc) + z;\n",
              (long long)N);
    q_store(c, "      ", "uint8_t", "q", "i", 0, 255);
    cg_printf(c, "    }\n  } else {\n    for (size_t i = 0; i < %lld; i++) Y0[i] = (uint8_t)z;\n"
                 "  }\n",
              (long long)N);
  }
  if (n_out > 1 && out[1]) cg_printf(c, "  Y1[0] = sc;\n");
  if (n_out > 2 && out[2]) cg_printf(c, "  Y2[0] = (uint8_t)z;\n");
  return OX_OK;
}

/* ---- integer matrix products ---- */

/* The batched loops of a product A[..., M, K] x B[..., K, N] (numpy
 * broadcasting of the batch dims, 1-D rules), A being X0 and B X<bk>:
 * `body` sees a and b (the operands of one batch element) and o, the
 * batch element's index in the output. */
static int mm_loops(cg_ctx *c, const cg_val *A, const cg_val *B, int bk, const char *body) {
  int64_t M = A->rank == 1 ? 1 : A->dims[A->rank - 2], K = A->dims[A->rank - 1];
  int64_t N = B->rank == 1 ? 1 : B->dims[B->rank - 1];
  cg_val ba = {0}, bb = {0}, *ops[2] = {&ba, &bb};
  ba.rank = A->rank > 2 ? A->rank - 2 : 0;
  bb.rank = B->rank > 2 ? B->rank - 2 : 0;
  memcpy(ba.dims, A->dims, ba.rank * sizeof(int64_t));
  memcpy(bb.dims, B->dims, bb.rank * sizeof(int64_t));
  ox_numel(ba.dims, ba.rank, &ba.numel);
  ox_numel(bb.dims, bb.rank, &bb.numel);
  size_t orank = ba.rank > bb.rank ? ba.rank : bb.rank;
  int64_t od[CG_MAX_RANK];
  for (size_t d = 0; d < orank; d++) {
    int64_t p = d + ba.rank >= orank ? ba.dims[d + ba.rank - orank] : 1;
    int64_t q = d + bb.rank >= orank ? bb.dims[d + bb.rank - orank] : 1;
    od[d] = p == 1 ? q : p;
  }
  char full[3072];
  snprintf(full, sizeof full, "const %s *a = X0 + i0 * %lld;\n    const %s *b = X%d + i1 * %lld;\n    %s",
           cg_ctype(A->dtype), (long long)(M * K), cg_ctype(B->dtype), bk, (long long)(K * N),
           body);
  cg_bcast_loop(c, od, orank, ops, 2, full);
  return OX_OK;
}

/* M, K, N of a product; false when the inner dims differ or an operand is a scalar */
static bool mm_dims(const cg_val *A, const cg_val *B, int64_t *M, int64_t *K, int64_t *N) {
  if (A->rank == 0 || B->rank == 0) return false;
  *M = A->rank == 1 ? 1 : A->dims[A->rank - 2];
  *K = A->dims[A->rank - 1];
  *N = B->rank == 1 ? 1 : B->dims[B->rank - 1];
  return (B->rank == 1 ? B->dims[0] : B->dims[B->rank - 2]) == *K;
}

/* "X2[0]" or "X2[i]" for a zero point of one or per-row values; "0" if absent */
static const char *zp_expr(cg_ctx *c, const cg_val *z, int k, const char *idx) {
  if (!z) return "0";
  return ox_arena_printf(c->a, "X%d[%s]", k, z->numel == 1 ? "0" : idx);
}

static int gen_matmulint(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n, (void)n_out, (void)out;
  if (n_in < 2 || !in[0] || !in[1] || !is_q8(in[0]->dtype) || !is_q8(in[1]->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "A and B must be int8 or uint8");
  const cg_val *za = n_in > 2 ? in[2] : NULL, *zb = n_in > 3 ? in[3] : NULL;
  int64_t M, K, N;
  if (!mm_dims(in[0], in[1], &M, &K, &N)) return cg_fail(c, OX_EMODEL, "operand shapes do not fit");
  if ((za && za->numel != 1 && za->numel != M) || (zb && zb->numel != 1 && zb->numel != N))
    return cg_fail(c, OX_EUNSUPPORTED, "zero points must be one value or one per row/column");
  char body[1536];
  snprintf(body, sizeof body,
           "int32_t *y = Y0 + o * %lld;\n"
           "    for (size_t i = 0; i < %lld; i++) {\n"
           "      int32_t *yr = y + i * %lld;\n"
           "      const int32_t za = %s;\n"
           "      for (size_t j = 0; j < %lld; j++) yr[j] = 0;\n"
           "      for (size_t k = 0; k < %lld; k++) {\n"
           "        const int32_t av = (int32_t)a[i * %lld + k] - za;\n"
           "        for (size_t j = 0; j < %lld; j++)\n"
           "          yr[j] += av * ((int32_t)b[k * %lld + j] - %s);\n"
           "      }\n"
           "    }",
           (long long)(M * N), (long long)M, (long long)N, zp_expr(c, za, 2, "i"), (long long)N,
           (long long)K, (long long)K, (long long)N, (long long)N, zp_expr(c, zb, 3, "j"));
  return mm_loops(c, in[0], in[1], 1, body);
}

static int gen_qlinearmatmul(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  (void)n, (void)n_out;
  for (size_t i = 0; i < 8; i++)
    if (i >= n_in || !in[i]) return cg_fail(c, OX_EMODEL, "input %zu is required", i);
  if (!is_q8(in[0]->dtype) || !is_q8(in[3]->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "a and b must be int8 or uint8");
  if (in[1]->dtype != OX_FLOAT || in[4]->dtype != OX_FLOAT || in[6]->dtype != OX_FLOAT)
    return cg_fail(c, OX_EUNSUPPORTED, "only float scales are compiled");
  long lo, hi;
  if (!q_range(out[0]->dtype, &lo, &hi))
    return cg_fail(c, OX_EUNSUPPORTED, "output type not compiled");
  int64_t M, K, N;
  if (!mm_dims(in[0], in[3], &M, &K, &N)) return cg_fail(c, OX_EMODEL, "operand shapes do not fit");
  if ((in[1]->numel != 1 && in[1]->numel != M) || (in[4]->numel != 1 && in[4]->numel != N) ||
      in[6]->numel != 1 || (in[2]->numel != 1 && in[2]->numel != M) ||
      (in[5]->numel != 1 && in[5]->numel != N) || in[7]->numel != 1)
    return cg_fail(c, OX_EUNSUPPORTED, "scales and zero points must be scalars or per row/column");
  if (q_linear_int(c, n, in, n_in, out[0], false)) return c->e->code;
  /* as the runtime: the exact integer sum times (float)(sa * sb / sy),
   * product in double, rounded half to even, zero point, saturated */
  const char *T = cg_ctype(out[0]->dtype);
  char body[2048];
  snprintf(body, sizeof body,
           "%s *y = Y0 + o * %lld;\n"
           "    for (size_t i = 0; i < %lld; i++)\n"
           "      for (size_t j = 0; j < %lld; j++) {\n"
           "        int32_t acc = 0;\n"
           "        for (size_t k = 0; k < %lld; k++)\n"
           "          acc += ((int32_t)a[i * %lld + k] - X2[%s]) *\n"
           "                 ((int32_t)b[k * %lld + j] - X5[%s]);\n"
           "        const float m = (float)((double)X1[%s] * (double)X4[%s] / (double)X6[0]);\n"
           "        const double q = nearbyint((double)acc * (double)m) + X7[0];\n"
           "        y[i * %lld + j] = (%s)(q < %ld ? %ld : q > %ld ? %ld : q == q ? q : 0);\n"
           "      }",
           T, (long long)(M * N), (long long)M, (long long)N, (long long)K, (long long)K,
           in[2]->numel == 1 ? "0" : "i", (long long)N, in[5]->numel == 1 ? "0" : "j",
           in[1]->numel == 1 ? "0" : "i", in[4]->numel == 1 ? "0" : "j", (long long)N, T, lo, lo,
           hi, hi);
  return mm_loops(c, in[0], in[3], 3, body);
}

/* ---- integer convolutions ---- */

typedef struct qwin {
  size_t r; /* spatial rank, 1 to 3 */
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3];
} qwin;

/* The window of a convolution of X by W into Y: strides, dilations and the
 * begin pads (explicit or from auto_pad; the output dims are inferred). */
static int q_window(cg_ctx *c, const ox_node *n, const cg_val *X, const cg_val *W, const cg_val *Y,
                    qwin *w) {
  if (X->rank < 3 || X->rank > 5 || W->rank != X->rank || Y->rank != X->rank)
    return cg_fail(c, OX_EUNSUPPORTED, "only 1 to 3 spatial dims");
  w->r = X->rank - 2;
  int64_t v[6];
  size_t cnt;
  bool has_s = cg_attr_ints(n, "strides", v, 3, &cnt) && cnt == w->r;
  for (size_t i = 0; i < w->r; i++) {
    w->in[i] = X->dims[2 + i];
    w->out[i] = Y->dims[2 + i];
    w->k[i] = W->dims[2 + i];
    w->s[i] = has_s ? v[i] : 1;
    w->d[i] = 1;
    w->pb[i] = 0;
  }
  if (cg_attr_ints(n, "dilations", v, 3, &cnt) && cnt == w->r)
    for (size_t i = 0; i < w->r; i++) w->d[i] = v[i];
  const char *ap = ox_node_attr_str(n, "auto_pad", "NOTSET");
  bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
  for (size_t i = 0; i < w->r && same; i++) {
    int64_t t = (w->out[i] - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - w->in[i];
    t = t < 0 ? 0 : t;
    w->pb[i] = ap[5] == 'U' ? t / 2 : t - t / 2; /* the odd pad goes at the end for UPPER */
  }
  if (!same && strcmp(ap, "VALID") != 0 && cg_attr_ints(n, "pads", v, 6, &cnt)) {
    if (cnt != 2 * w->r) return cg_fail(c, OX_EMODEL, "pads has %zu values", cnt);
    for (size_t i = 0; i < w->r; i++) w->pb[i] = v[i];
  }
  return OX_OK;
}

/* The flat index strings of a window ("p0 * 28 + p1" of the input, "k0 * 3
 * + k1" of the kernel, "o0 * 14 + o1" of the output), each of cap bytes. */
typedef struct qidx {
  char x[160], k[160], o[160];
} qidx;

/* Opens the output loops o<i> at indent ind (returns the body's indent). */
static int q_open_out(cg_ctx *c, const qwin *w, int ind) {
  for (size_t i = 0; i < w->r; i++)
    cg_printf(c, "%*sfor (long o%zu = 0; o%zu < %lld; o%zu++)\n", ind + 2 * (int)i, "", i, i,
              (long long)w->out[i], i);
  return ind + 2 * (int)w->r;
}

/* Opens the window loops k<i> at indent ind, with p<i> the input position,
 * and fills the index strings; returns the body's indent. The loops run
 * only over the window's positions inside the input (the padding's
 * shifted values are 0, and a max pool skips them), their bounds computed
 * once per output position rather than tested per tap. q_close_win closes
 * them. */
static int q_open_win(cg_ctx *c, const qwin *w, int ind, qidx *ix) {
  size_t lx = 0, lk = 0, lo = 0;
  for (size_t i = 0; i < w->r; i++) {
    int in2 = ind + 2 * (int)i;
    long long d = (long long)w->d[i];
    /* p = base + k * d within [0, in): k from ceil(-base / d) to ceil((in - base) / d) */
    cg_printf(c, "%*sconst long b%zu = o%zu * %lld - %lld;\n", in2, "", i, i, (long long)w->s[i],
              (long long)w->pb[i]);
    cg_printf(c, "%*sconst long kh%zu = (%lld - b%zu + %lld) / %lld;\n", in2, "", i,
              (long long)w->in[i], i, d - 1, d);
    cg_printf(c, "%*sfor (long k%zu = b%zu < 0 ? (%lld - b%zu) / %lld : 0; k%zu < (kh%zu < %lld ? kh%zu : %lld); k%zu++) {\n",
              in2, "", i, i, d - 1, i, d, i, i, (long long)w->k[i], i, (long long)w->k[i], i);
    cg_printf(c, "%*s  const long p%zu = b%zu + k%zu * %lld;\n", in2, "", i, i, i, d);
    int64_t si = 1, sk = 1, so = 1;
    for (size_t j = i + 1; j < w->r; j++) si *= w->in[j], sk *= w->k[j], so *= w->out[j];
    const char *sep = i ? " + " : "";
    lx += (size_t)snprintf(ix->x + lx, sizeof ix->x - lx, "%sp%zu * %lld", sep, i, (long long)si);
    lk += (size_t)snprintf(ix->k + lk, sizeof ix->k - lk, "%sk%zu * %lld", sep, i, (long long)sk);
    lo += (size_t)snprintf(ix->o + lo, sizeof ix->o - lo, "%so%zu * %lld", sep, i, (long long)so);
  }
  return ind + 2 * (int)w->r;
}

static void q_close_win(cg_ctx *c, const qwin *w, int ind) {
  for (size_t i = w->r; i-- > 0;) cg_printf(c, "%*s}\n", ind + 2 * (int)i, "");
}

/* Emits the integer convolution of X0 by X<wk> into Y0: for each output
 * element an int32 `acc` of (x - zx)(w - zw) over the window (positions in
 * the padding are skipped: their shifted value is 0), then `epi`, which
 * sees acc, m (the output channel) and yi (the output element). */
static int q_conv(cg_ctx *c, const ox_node *n, const cg_val *X, const cg_val *W, int wk,
                  const cg_val *Y, const char *zx, const char *zw, const char *epi) {
  qwin w = {0};
  int rc = q_window(c, n, X, W, Y, &w);
  if (rc) return rc;
  int64_t G = ox_node_attr_int(n, "group", 1), C = X->dims[1], M = W->dims[0], Cg = W->dims[1];
  if (G < 1 || C != Cg * G || M % G)
    return cg_fail(c, OX_EMODEL, "group %lld does not fit the channels", (long long)G);
  int64_t isz = 1, ksz = 1, osz = 1;
  for (size_t i = 0; i < w.r; i++) isz *= w.in[i], ksz *= w.k[i], osz *= w.out[i];
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t m = 0; m < %lld; m++) {\n",
            (long long)X->dims[0], (long long)M);
  cg_printf(c, "      const size_t g = m / %lld;\n      (void)g;\n", (long long)(M / G));
  int ind = q_open_out(c, &w, 6);
  cg_printf(c, "%*s{\n%*s  int32_t acc = 0;\n", ind, "", ind, "");
  cg_printf(c, "%*s  for (size_t ci = 0; ci < %lld; ci++) {\n", ind, "", (long long)Cg);
  cg_printf(c, "%*s    const %s *x = X0 + (b * %lld + g * %lld + ci) * %lld;\n", ind, "",
            cg_ctype(X->dtype), (long long)C, (long long)Cg, (long long)isz);
  cg_printf(c, "%*s    const %s *wt = X%d + (m * %lld + ci) * %lld;\n", ind, "", cg_ctype(W->dtype),
            wk, (long long)Cg, (long long)ksz);
  qidx ix;
  int in2 = q_open_win(c, &w, ind + 4, &ix);
  cg_printf(c, "%*sacc += ((int32_t)x[%s] - %s) * ((int32_t)wt[%s] - %s);\n", in2, "", ix.x, zx,
            ix.k, zw);
  q_close_win(c, &w, ind + 4);
  cg_printf(c, "%*s  }\n%*s  const size_t yi = (b * %lld + m) * %lld + %s;\n", ind, "", ind, "",
            (long long)M, (long long)osz, ix.o);
  cg_printf(c, "%*s  %s\n%*s}\n    }\n", ind, "", epi, ind, "");
  return OX_OK;
}

static int gen_convint(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1] || !is_q8(in[0]->dtype) || !is_q8(in[1]->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "x and w must be int8 or uint8");
  const cg_val *zx = n_in > 2 ? in[2] : NULL, *zw = n_in > 3 ? in[3] : NULL;
  if ((zx && zx->numel != 1) || (zw && zw->numel != 1 && zw->numel != in[1]->dims[0]))
    return cg_fail(c, OX_EUNSUPPORTED, "zero points must be scalars (w: or one per channel)");
  return q_conv(c, n, in[0], in[1], 1, out[0], zp_expr(c, zx, 2, "0"), zp_expr(c, zw, 3, "m"),
                "Y0[yi] = acc;");
}

int cg_gen_qlinearconv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)n_out;
  for (size_t i = 0; i < 8; i++)
    if (i >= n_in || !in[i]) return cg_fail(c, OX_EMODEL, "input %zu is required", i);
  if (!is_q8(in[0]->dtype) || !is_q8(in[3]->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "x and w must be int8 or uint8");
  if (in[1]->dtype != OX_FLOAT || in[4]->dtype != OX_FLOAT || in[6]->dtype != OX_FLOAT)
    return cg_fail(c, OX_EUNSUPPORTED, "only float scales are compiled");
  int64_t M = in[3]->rank ? in[3]->dims[0] : 0;
  if (in[1]->numel != 1 || in[2]->numel != 1 || in[6]->numel != 1 || in[7]->numel != 1 ||
      (in[4]->numel != 1 && in[4]->numel != M) ||
      (in[5]->numel != 1 && in[5]->numel != in[4]->numel))
    return cg_fail(c, OX_EUNSUPPORTED, "x and y quantized per tensor, w per tensor or channel");
  bool bias = n_in > 8 && in[8];
  if (bias && (in[8]->dtype != OX_INT32 || in[8]->numel != M))
    return cg_fail(c, OX_EMODEL, "B must be int32 with one value per output channel");
  long lo, hi;
  if (!q_range(out[0]->dtype, &lo, &hi)) return cg_fail(c, OX_EUNSUPPORTED, "output type");
  /* as the runtime's exact path: the real value (acc + B) * sx * sw in
   * float, divided by sy in double, rounded half to even */
  if (q_linear_int(c, n, in, n_in, out[0], true)) return c->e->code;
  char epi[1024];
  const char *wsi = in[4]->numel == 1 ? "0" : "m", *T = cg_ctype(out[0]->dtype);
  snprintf(epi, sizeof epi,
           "const double sc = (double)X1[0] * (double)X4[%s];\n"
           "        const float real = (float)((double)((int64_t)acc%s) * sc);\n"
           "        const double q = nearbyint((double)real / (double)X6[0]) + X7[0];\n"
           "        Y0[yi] = (%s)(q < %ld ? %ld : q > %ld ? %ld : q == q ? q : 0);",
           wsi, bias ? " + X8[m]" : "", T, lo, lo, hi, hi);
  return q_conv(c, n, in[0], in[3], 3, out[0], "X2[0]", in[5]->numel == 1 ? "X5[0]" : "X5[m]",
                epi);
}

/* ---- integer-only QDQ units ---- */

/* the constants a folded unit reads, by their order in attribute qdq_names */
enum { QN_XS, QN_XZ, QN_WS, QN_WZ, QN_B, QN_BS, QN_BZ, QN_YS, QN_YZ, QN_COUNT };

/* The fixed-point form of a positive real multiplier: v = mult * 2^-shift
 * with mult a Q31 integer in [2^30, 2^31) and 1 <= shift <= 62; false when
 * v is outside what that holds (or not finite). */
static bool q_fixed(double v, int32_t *mult, int *shift) {
  if (!(v > 0) || !isfinite(v)) return false;
  int e;
  double m0 = frexp(v, &e); /* v = m0 * 2^e, m0 in [0.5, 1) */
  long long q = llround(m0 * 2147483648.0);
  if (q == 2147483648LL) q /= 2, e++;
  int s = 31 - e;
  if (s < 1 || s > 62) return false;
  *mult = (int32_t)q;
  *shift = s;
  return true;
}

typedef struct qunit {
  const cg_val *v[QN_COUNT];
  float act_lo, act_hi; /* a Relu's or Clip's bounds before the quantization */
} qunit;

static int q_unit(cg_ctx *c, const ox_node *n, qunit *u) {
  memset(u, 0, sizeof *u);
  const ox_attr *a = ox_node_attr(n, "qdq_names");
  if (!a || a->n_strings != QN_COUNT) return cg_fail(c, OX_EMODEL, "malformed folded unit");
  for (size_t i = 0; i < QN_COUNT; i++) u->v[i] = lookup(c, (const char *)a->strings[i].data);
  u->act_lo = ox_node_attr_float(n, "qdq_lo", -INFINITY);
  u->act_hi = ox_node_attr_float(n, "qdq_hi", INFINITY);
  return OX_OK;
}

/* Writes the unit's tables (int32 bias, Q31 multiplier, shift, w zero
 * point per output channel; channel count Mc) and returns the epilogue
 * that requantizes `acc` of channel m into Y0[yi]. */
static const char *q_requant(cg_ctx *c, const qunit *u, int64_t Mc, int32_t ydt) {
  const cg_val *const *v = u->v;
  double sx = cval(v[QN_XS], 0), sy = cval(v[QN_YS], 0);
  long zy = v[QN_YZ] ? (long)cval(v[QN_YZ], 0) : 0, lo = 0, hi = 255;
  q_range(ydt, &lo, &hi);
  /* a Relu or Clip before the quantization clamps at its bounds' quantized
   * values (quantizing is monotonic); a Relu's 0 is zy */
  if (u->act_lo > -INFINITY) {
    double b = (double)nearbyintf(u->act_lo / (float)sy) + (double)zy;
    if (b > (double)lo) lo = b > (double)hi ? hi : (long)b;
  }
  if (u->act_hi < INFINITY) {
    double b = (double)nearbyintf(u->act_hi / (float)sy) + (double)zy;
    if (b < (double)hi) hi = b < (double)lo ? lo : (long)b;
  }
  cg_printf(c, "  /* requantization per output channel: (acc + qb) * qm / 2^qs, rounded half\n"
               "   * away from zero (x scale %.9g, y scale %.9g, y zero point %ld) */\n",
            sx, sy, zy);
  ox_buf tb = {0}, tm = {0}, ts = {0};
  bool ok = true;
  for (int64_t m = 0; m < Mc; m++) {
    double sw = cval(v[QN_WS], v[QN_WS]->numel == 1 ? 0 : m), sa = sx * sw;
    int32_t mult = 0;
    int sh = 1;
    if (!q_fixed(sa / sy, &mult, &sh)) ok = false;
    double bias = 0;
    if (v[QN_B]) {
      int64_t bi = v[QN_B]->numel == 1 ? 0 : m;
      if (v[QN_B]->dtype == OX_INT32) {
        double bq = cval(v[QN_B], bi) - (v[QN_BZ] ? cval(v[QN_BZ], v[QN_BZ]->numel == 1 ? 0 : bi) : 0);
        /* QLinearConv's B has no scale of its own: it is sx * sw */
        double bs = v[QN_BS] ? cval(v[QN_BS], v[QN_BS]->numel == 1 ? 0 : bi) : sa;
        /* the quantizers' bias scale is sx * sw: then the int32 is taken as is */
        bias = fabs(bs - sa) <= 1e-6 * sa ? bq : nearbyint((double)(float)(bq * bs) / sa);
      } else {
        bias = nearbyint(cval(v[QN_B], bi) / sa);
      }
      if (!(fabs(bias) < 2147483647.0)) ok = false;
    }
    const char *sep = m ? (m % 8 ? ", " : ",\n    ") : "";
    ox_buf_printf(&tb, "%s%ld", sep, (long)bias);
    ox_buf_printf(&tm, "%s%ld", sep, (long)mult);
    ox_buf_printf(&ts, "%s%d", sep, sh);
  }
  ox_buf_putc(&tb, 0);
  ox_buf_putc(&tm, 0);
  ox_buf_putc(&ts, 0);
  if (ok && !tb.failed && !tm.failed && !ts.failed) {
    cg_printf(c, "  static const int32_t qb[%lld] = {\n    %s};\n", (long long)Mc, (char *)tb.data);
    cg_printf(c, "  static const int32_t qm[%lld] = {\n    %s};\n", (long long)Mc, (char *)tm.data);
    cg_printf(c, "  static const uint8_t qs[%lld] = {\n    %s};\n", (long long)Mc, (char *)ts.data);
  }
  ox_buf_free(&tb);
  ox_buf_free(&tm);
  ox_buf_free(&ts);
  if (!ok) {
    cg_fail(c, OX_EUNSUPPORTED, "scales or bias outside the fixed-point requantization's range");
    return NULL;
  }
  return ox_arena_printf(
      c->a,
      "const int64_t p = ((int64_t)acc + qb[m]) * qm[m], h = (int64_t)1 << (qs[m] - 1);\n"
      "        const int64_t q = (p >= 0 ? (p + h) >> qs[m] : -((-p + h) >> qs[m])) + %ld;\n"
      "        Y0[yi] = (%s)(q < %ld ? %ld : q > %ld ? %ld : q);",
      zy, cg_ctype(ydt), lo, lo, hi, hi);
}

/* w's zero point for channel m: a literal when one value serves all */
static const char *q_wzp(cg_ctx *c, const cg_val *z, int64_t Mc) {
  if (!z) return "0";
  bool same = true;
  for (int64_t m = 1; m < z->numel; m++) same &= cval(z, m) == cval(z, 0);
  if (same) return ox_arena_printf(c->a, "%ld", (long)cval(z, 0));
  cg_printf(c, "  static const int32_t qz[%lld] = {", (long long)Mc);
  for (int64_t m = 0; m < Mc; m++) cg_printf(c, "%s%ld", m ? ", " : "", (long)cval(z, m));
  cg_printf(c, "};\n");
  return "qz[m]";
}

static int gen_qdq_conv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_out;
  qunit u;
  int rc = q_unit(c, n, &u);
  if (rc) return rc;
  if (n_in != 2 || !in[0] || !in[1] || !is_q8(in[0]->dtype))
    return cg_fail(c, OX_EMODEL, "malformed folded unit");
  int64_t M = in[1]->dims[0];
  const char *epi = q_requant(c, &u, M, out[0]->dtype);
  if (!epi) return c->e->code;
  const char *zw = q_wzp(c, u.v[QN_WZ], M);
  char zx[32];
  snprintf(zx, sizeof zx, "%ld", u.v[QN_XZ] ? (long)cval(u.v[QN_XZ], 0) : 0L);
  return q_conv(c, n, in[0], in[1], 1, out[0], zx, zw, epi);
}

/* The integer product of A (X0, [..., K]) by the 2-D W (X<wk>, [K, N], or
 * [N, K] when tb) requantized into Y0 as the unit u says. */
static int q_matmul(cg_ctx *c, const qunit *u, const cg_val *A, const cg_val *W, int wk, bool tb,
                    const cg_val *Y) {
  if (!is_q8(A->dtype) || !is_q8(W->dtype) || A->rank < 1 || W->rank != 2)
    return cg_fail(c, OX_EUNSUPPORTED, "operands not int8/uint8 of the kernel's shapes");
  int64_t K = A->dims[A->rank - 1], N = W->dims[tb ? 0 : 1];
  int64_t R = K ? A->numel / K : 0;
  if (W->dims[tb ? 1 : 0] != K) return cg_fail(c, OX_EMODEL, "inner dims differ");
  const char *epi = q_requant(c, u, N, Y->dtype);
  if (!epi) return c->e->code;
  const char *zw = q_wzp(c, u->v[QN_WZ], N);
  long zx = u->v[QN_XZ] ? (long)cval(u->v[QN_XZ], 0) : 0L;
  const char *TA = cg_ctype(A->dtype), *TW = cg_ctype(W->dtype);
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n    const %s *a = X0 + r * %lld;\n",
            (long long)R, TA, (long long)K);
  if (tb) {
    /* W is [N, K]: one contiguous dot product per output */
    cg_printf(c, "    for (size_t m = 0; m < %lld; m++) {\n      const %s *wt = X%d + m * %lld;\n"
                 "      int32_t acc = 0;\n      for (size_t k = 0; k < %lld; k++)\n"
                 "        acc += ((int32_t)a[k] - %ld) * ((int32_t)wt[k] - %s);\n"
                 "      const size_t yi = r * %lld + m;\n      {\n        %s\n      }\n    }\n",
              (long long)N, TW, wk, (long long)K, (long long)K, zx, zw, (long long)N, epi);
  } else {
    /* W is [K, N]: rows of W into a block of int32 sums on the stack */
    int64_t NB = N < 64 ? N : 64;
    cg_printf(c, "    for (size_t j0 = 0; j0 < %lld; j0 += %lld) {\n"
                 "      const size_t nb = %lld - j0 < %lld ? %lld - j0 : %lld;\n"
                 "      int32_t s[%lld];\n      for (size_t j = 0; j < nb; j++) s[j] = 0;\n"
                 "      for (size_t k = 0; k < %lld; k++) {\n"
                 "        const int32_t av = (int32_t)a[k] - %ld;\n"
                 "        const %s *wr = X%d + k * %lld + j0;\n"
                 "        for (size_t j = 0; j < nb; j++) {\n"
                 "          const size_t m = j0 + j;\n          (void)m;\n"
                 "          s[j] += av * ((int32_t)wr[j] - %s);\n        }\n      }\n"
                 "      for (size_t j = 0; j < nb; j++) {\n"
                 "        const size_t m = j0 + j, yi = r * %lld + m;\n"
                 "        const int32_t acc = s[j];\n        %s\n      }\n    }\n",
              (long long)N, (long long)NB, (long long)N, (long long)NB, (long long)N,
              (long long)NB, (long long)NB, (long long)K, zx, TW, wk, (long long)N, zw, (long long)N,
              epi);
  }
  cg_printf(c, "  }\n");
  return OX_OK;
}

static bool q_linear_int(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, const cg_val *y,
                         bool conv) {
  static const int idx[] = {1, 2, 4, 5, 6, 7};
  for (size_t i = 0; i < 6; i++)
    if (in[idx[i]]->kind != CG_CONST) return false;
  const cg_val *b = conv && n_in > 8 ? in[8] : NULL;
  if ((b && b->kind != CG_CONST) || in[1]->numel != 1 || in[2]->numel != 1 || in[3]->rank < 2)
    return false;
  int64_t Mc = conv ? in[3]->dims[0] : in[3]->dims[in[3]->rank - 1];
  if (!conv && in[3]->rank != 2) return false;
  for (int64_t m = 0; m < Mc; m++) {
    int32_t mult;
    int sh;
    if (!q_fixed(cval(in[1], 0) * cval(in[4], in[4]->numel == 1 ? 0 : m) / cval(in[6], 0), &mult,
                 &sh))
      return false;
  }
  qunit u = {{in[1], in[2], in[4], in[5], b, NULL, NULL, in[6], in[7]}, -INFINITY, INFINITY};
  int rc;
  if (conv) {
    const char *epi = q_requant(c, &u, Mc, y->dtype);
    if (!epi) return true;
    const char *zw = q_wzp(c, in[5], Mc);
    rc = q_conv(c, n, in[0], in[3], 3, y, ox_arena_printf(c->a, "%ld", (long)cval(in[2], 0)), zw,
                epi);
  } else {
    rc = q_matmul(c, &u, in[0], in[3], 3, false, y);
  }
  (void)rc;
  return true;
}

static int gen_qdq_matmul(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_out;
  qunit u;
  int rc = q_unit(c, n, &u);
  if (rc) return rc;
  if (n_in != 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "malformed folded unit");
  return q_matmul(c, &u, in[0], in[1], 1, ox_node_attr_int(n, "transB", 0) != 0, out[0]);
}

/* MaxPool on quantized values (a folded DequantizeLinear -> MaxPool ->
 * QuantizeLinear of one scale and zero point: the maximum commutes with
 * the monotonic quantization, so the result is exact) */
static int gen_qdq_maxpool(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0];
  long lo, hi;
  if (!q_range(X->dtype, &lo, &hi)) return cg_fail(c, OX_EMODEL, "malformed folded unit");
  cg_val W = {0};
  int64_t ks[3];
  size_t cnt;
  if (!cg_attr_ints(n, "kernel_shape", ks, 3, &cnt) || cnt + 2 != X->rank)
    return cg_fail(c, OX_EMODEL, "kernel_shape missing or of the wrong length");
  W.rank = X->rank;
  W.dims[0] = W.dims[1] = 1;
  memcpy(W.dims + 2, ks, cnt * sizeof(int64_t));
  qwin w = {0};
  int rc = q_window(c, n, X, &W, out[0], &w);
  if (rc) return rc;
  int64_t isz = 1, osz = 1;
  for (size_t i = 0; i < w.r; i++) isz *= w.in[i], osz *= w.out[i];
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t bc = 0; bc < %lld; bc++) {\n    const %s *x = X0 + bc * %lld;\n",
            (long long)(X->dims[0] * X->dims[1]), T, (long long)isz);
  int ind = q_open_out(c, &w, 4);
  cg_printf(c, "%*s{\n%*s  %s acc = %ld;\n", ind, "", ind, "", T, lo);
  qidx ix;
  int in2 = q_open_win(c, &w, ind + 2, &ix);
  cg_printf(c, "%*sif (x[%s] > acc) acc = x[%s];\n", in2, "", ix.x, ix.x);
  q_close_win(c, &w, ind + 2);
  cg_printf(c, "%*s  Y0[bc * %lld + %s] = acc;\n%*s}\n  }\n", ind, "", (long long)osz, ix.o, ind,
            "");
  return OX_OK;
}

/* ---- the fold: QDQ units to QdqConv / QdqMatMul nodes ---- */

typedef struct qfold {
  cg_ctx *c;
  const ox_graph *g;
  ox_map prod;  /* value -> 1 + producing node */
  ox_map reads; /* value -> times read (graph outputs count many) */
} qfold;

static long q_producer(const qfold *f, const char *name, const char *op) {
  uintptr_t k;
  if (!name || !*name || !ox_map_get(&f->prod, name, &k)) return -1;
  const ox_node *n = &f->g->node[k - 1];
  return ox_is_default_domain(n->domain) && strcmp(n->op_type, op) == 0 ? (long)k - 1 : -1;
}

static size_t q_reads(const qfold *f, const char *name) {
  uintptr_t k;
  return ox_map_get(&f->reads, name, &k) ? (size_t)k : 0;
}

/* a constant initializer of the given element type (0: any) and count (0: any) */
static const cg_val *q_const(const qfold *f, const char *name, int32_t dt, int64_t numel) {
  const cg_val *v = lookup(f->c, name);
  if (!v || v->kind != CG_CONST) return NULL;
  if ((dt && v->dtype != dt) || (numel && v->numel != numel)) return NULL;
  return v;
}

static const char *q_in(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i] ? n->input[i] : "";
}

/* A Relu ([0, inf)) or a Clip with constant float bounds (attributes
 * before opset 11, then inputs); its bounds in b[0], b[1]. */
static bool q_activation(const qfold *f, const ox_node *n, float *b) {
  if (!ox_is_default_domain(n->domain) || n->n_output != 1) return false;
  if (strcmp(n->op_type, "Relu") == 0) {
    b[0] = 0.0f;
    return true;
  }
  if (strcmp(n->op_type, "Clip") != 0) return false;
  if (f->c->opset < 11) {
    b[0] = ox_node_attr_float(n, "min", -INFINITY);
    b[1] = ox_node_attr_float(n, "max", INFINITY);
  } else {
    for (size_t k = 1; k < 3; k++) {
      if (!*q_in(n, k)) continue;
      const cg_val *v = q_const(f, q_in(n, k), OX_FLOAT, 1);
      if (!v) return false;
      b[k - 1] = (float)cval(v, 0);
    }
  }
  return b[0] == b[0] && b[1] == b[1] && b[0] <= b[1];
}

/* Node i as the head of a unit: fills the new node's names and the nodes
 * it absorbs (relu, q). */
static bool q_match(qfold *f, size_t i, bool *conv, const char **xq, const char **wq,
                    const char **names, float *act, long *relu_at, long *q_at) {
  const ox_node *n = &f->g->node[i];
  if (!ox_is_default_domain(n->domain) || n->n_output != 1) return false;
  *conv = strcmp(n->op_type, "Conv") == 0;
  bool gemm = strcmp(n->op_type, "Gemm") == 0, mm = strcmp(n->op_type, "MatMul") == 0;
  if (!*conv && !gemm && !mm) return false;
  if (gemm && (ox_node_attr_int(n, "transA", 0) || ox_node_attr_float(n, "alpha", 1) != 1 ||
               ox_node_attr_float(n, "beta", 1) != 1))
    return false;
  long dx = q_producer(f, q_in(n, 0), "DequantizeLinear");
  long dw = q_producer(f, q_in(n, 1), "DequantizeLinear");
  if (dx < 0 || dw < 0) return false;
  const ox_node *X = &f->g->node[dx], *W = &f->g->node[dw];
  if (ox_node_attr_int(X, "block_size", 0) || ox_node_attr_int(W, "block_size", 0)) return false;
  const cg_val *xs = q_const(f, q_in(X, 1), OX_FLOAT, 1), *w = q_const(f, q_in(W, 0), 0, 0);
  if (!xs || !w || !is_q8(w->dtype)) return false;
  const cg_val *xz = *q_in(X, 2) ? q_const(f, q_in(X, 2), 0, 1) : NULL;
  if (*q_in(X, 2) && (!xz || !is_q8(xz->dtype))) return false;
  /* W's channel axis: Conv's output channels, MatMul's and Gemm's columns */
  bool tb = gemm && ox_node_attr_int(n, "transB", 0);
  if (*conv ? w->rank < 3 : w->rank != 2) return false;
  size_t cax = *conv || tb ? 0 : 1;
  int64_t Mc = w->dims[cax];
  const cg_val *ws = q_const(f, q_in(W, 1), OX_FLOAT, 0);
  if (!ws || (ws->numel != 1 && ws->numel != Mc)) return false;
  size_t wax;
  if (ws->numel != 1 && (!cg_axis(ox_node_attr_int(W, "axis", 1), w->rank, &wax) || wax != cax))
    return false;
  if (*q_in(W, 2) && !q_const(f, q_in(W, 2), w->dtype, ws->numel)) return false;
  /* the bias: a float constant, or the DequantizeLinear of an int32 one */
  const char *b = q_in(n, 2);
  names[QN_B] = names[QN_BS] = names[QN_BZ] = "";
  if (*b && !mm) {
    const cg_val *bf = q_const(f, b, OX_FLOAT, 0);
    long db = q_producer(f, b, "DequantizeLinear");
    if (bf && (bf->numel == Mc || bf->numel == 1)) {
      names[QN_B] = b;
    } else if (db >= 0) {
      const ox_node *B = &f->g->node[db];
      const cg_val *bq = q_const(f, q_in(B, 0), OX_INT32, 0);
      const cg_val *bs = q_const(f, q_in(B, 1), OX_FLOAT, 0);
      if (!bq || !bs || (bq->numel != Mc && bq->numel != 1) || (bs->numel != 1 && bs->numel != bq->numel))
        return false;
      if (*q_in(B, 2) && !q_const(f, q_in(B, 2), OX_INT32, bs->numel)) return false;
      names[QN_B] = q_in(B, 0);
      names[QN_BS] = q_in(B, 1);
      names[QN_BZ] = q_in(B, 2);
    } else {
      return false;
    }
  }
  /* then [Relu or Clip ->] QuantizeLinear, each the only reader of what it reads */
  const char *y = n->output[0];
  *relu_at = -1;
  if (q_reads(f, y) != 1) return false;
  long j;
  for (j = (long)i + 1; j < (long)f->g->n_node; j++)
    if (strcmp(q_in(&f->g->node[j], 0), y) == 0) break;
  if (j >= (long)f->g->n_node) return false;
  const ox_node *J = &f->g->node[j];
  act[0] = -INFINITY;
  act[1] = INFINITY;
  if (q_activation(f, J, act)) {
    *relu_at = j;
    y = J->output[0];
    if (q_reads(f, y) != 1) return false;
    for (j = j + 1; j < (long)f->g->n_node; j++)
      if (strcmp(q_in(&f->g->node[j], 0), y) == 0) break;
    if (j >= (long)f->g->n_node) return false;
    J = &f->g->node[j];
  }
  if (!ox_is_default_domain(J->domain) || strcmp(J->op_type, "QuantizeLinear") != 0 ||
      J->n_output != 1 || ox_node_attr_int(J, "block_size", 0))
    return false;
  const cg_val *ys = q_const(f, q_in(J, 1), OX_FLOAT, 1);
  const cg_val *yz = *q_in(J, 2) ? q_const(f, q_in(J, 2), 0, 1) : NULL;
  if (!ys || (*q_in(J, 2) && (!yz || !is_q8(yz->dtype)))) return false;
  if (!*q_in(J, 2) && ox_node_attr_int(J, "output_dtype", OX_UINT8) != OX_UINT8) return false;
  /* every requantization factor must have a fixed-point form */
  for (int64_t m = 0; m < Mc; m++) {
    int32_t mult;
    int sh;
    if (!q_fixed(cval(xs, 0) * cval(ws, ws->numel == 1 ? 0 : m) / cval(ys, 0), &mult, &sh))
      return false;
  }
  *q_at = j;
  *xq = q_in(X, 0);
  *wq = q_in(W, 0);
  names[QN_XS] = q_in(X, 1);
  names[QN_XZ] = q_in(X, 2);
  names[QN_WS] = q_in(W, 1);
  names[QN_WZ] = q_in(W, 2);
  names[QN_YS] = q_in(J, 1);
  names[QN_YZ] = q_in(J, 2);
  return true;
}

/* DequantizeLinear -> MaxPool|Flatten|Reshape -> QuantizeLinear with one
 * scale and zero point: the op on the quantized values (exact). Returns
 * the QuantizeLinear's index, or -1. */
static long q_match_move(qfold *f, size_t i) {
  const ox_node *n = &f->g->node[i];
  if (!ox_is_default_domain(n->domain) || n->n_output < 1 || !*n->output[0]) return -1;
  bool pool = strcmp(n->op_type, "MaxPool") == 0;
  if (!pool && strcmp(n->op_type, "Flatten") != 0 && strcmp(n->op_type, "Reshape") != 0) return -1;
  if (pool && n->n_output > 1 && *n->output[1]) return -1;
  long d = q_producer(f, q_in(n, 0), "DequantizeLinear");
  if (d < 0 || q_reads(f, n->output[0]) != 1) return -1;
  long j;
  for (j = (long)i + 1; j < (long)f->g->n_node; j++)
    if (strcmp(q_in(&f->g->node[j], 0), n->output[0]) == 0) break;
  if (j >= (long)f->g->n_node) return -1;
  const ox_node *D = &f->g->node[d], *Q = &f->g->node[j];
  if (!ox_is_default_domain(Q->domain) || strcmp(Q->op_type, "QuantizeLinear") != 0 ||
      Q->n_output != 1)
    return -1;
  const cg_val *ds = q_const(f, q_in(D, 1), OX_FLOAT, 1), *qs = q_const(f, q_in(Q, 1), OX_FLOAT, 1);
  const cg_val *dz = q_const(f, q_in(D, 2), 0, 1), *qz = q_const(f, q_in(Q, 2), 0, 1);
  if (!ds || !qs || !dz || !qz || !is_q8(dz->dtype) || dz->dtype != qz->dtype ||
      cval(ds, 0) != cval(qs, 0) || cval(dz, 0) != cval(qz, 0))
    return -1;
  return j;
}

/* the new node: n's attributes plus qdq_lo, qdq_hi and qdq_names */
static ox_node *q_new_node(cg_ctx *c, const ox_node *n, bool conv, const char *xq, const char *wq,
                           const char *const *names, const float *act, const char *y) {
  ox_node *u = ox_arena_calloc(c->a, 1, sizeof *u);
  char **io = ox_arena_calloc(c->a, 3, sizeof *io);
  ox_attr *at = ox_arena_calloc(c->a, n->n_attribute + 3, sizeof *at);
  ox_bytes *s = ox_arena_calloc(c->a, QN_COUNT, sizeof *s);
  if (!u || !io || !at || !s) return NULL;
  *u = *n;
  u->op_type = conv ? "QdqConv" : "QdqMatMul";
  io[0] = (char *)xq;
  io[1] = (char *)wq;
  io[2] = (char *)y;
  u->input = io;
  u->n_input = 2;
  u->output = io + 2;
  u->n_output = 1;
  if (n->n_attribute) memcpy(at, n->attribute, n->n_attribute * sizeof *at);
  ox_attr *r = &at[n->n_attribute], *nm = r + 2;
  r[0].name = "qdq_lo";
  r[1].name = "qdq_hi";
  for (size_t k = 0; k < 2; k++) {
    r[k].type = OX_ATTR_FLOAT;
    r[k].has_type = r[k].has_f = true;
    r[k].f = act[k];
  }
  for (size_t i = 0; i < QN_COUNT; i++) {
    s[i].data = (const uint8_t *)names[i];
    s[i].size = strlen(names[i]);
  }
  nm->name = "qdq_names";
  nm->strings = s;
  nm->n_strings = QN_COUNT;
  u->attribute = at;
  u->n_attribute = n->n_attribute + 3;
  return u;
}

int ox_cg_fold_qdq(cg_ctx *c) {
  const ox_graph *g = c->g;
  qfold f = {c, g, {0}, {0}};
  ox_map_init(&f.prod);
  ox_map_init(&f.reads);
  int rc = OX_OK;
  ox_node *nodes = ox_arena_calloc(c->a, g->n_node + 1, sizeof *nodes);
  bool *drop = ox_arena_calloc(c->a, g->n_node + 1, sizeof *drop);
  ox_graph *ng = ox_arena_calloc(c->a, 1, sizeof *ng);
  if (!nodes || !drop || !ng) {
    rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    goto done;
  }
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    nodes[i] = *n;
    for (size_t k = 0; k < n->n_output; k++)
      if (*n->output[k]) ox_map_put(&f.prod, n->output[k], i + 1);
    for (size_t k = 0; k < n->n_input; k++)
      if (*n->input[k]) ox_map_put(&f.reads, n->input[k], q_reads(&f, n->input[k]) + 1);
  }
  for (size_t i = 0; i < g->n_output; i++)
    ox_map_put(&f.reads, g->output[i].name, q_reads(&f, g->output[i].name) + 1000);
  size_t folded = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    bool conv;
    float act[2];
    const char *xq, *wq, *names[QN_COUNT];
    long relu_at, q_at;
    if (drop[i]) continue;
    long mv = q_match_move(&f, i);
    if (mv >= 0) {
      const ox_node *n = &g->node[i];
      char **io = ox_arena_calloc(c->a, n->n_input + 1, sizeof *io);
      if (!io) {
        rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
        goto done;
      }
      memcpy(io, n->input, n->n_input * sizeof *io);
      io[0] = (char *)q_in(&g->node[q_producer(&f, n->input[0], "DequantizeLinear")], 0);
      io[n->n_input] = g->node[mv].output[0];
      nodes[i].input = io;
      nodes[i].output = io + n->n_input;
      nodes[i].n_output = 1;
      if (strcmp(n->op_type, "MaxPool") == 0) nodes[i].op_type = "QdqMaxPool";
      drop[mv] = true;
      folded++;
      continue;
    }
    if (!q_match(&f, i, &conv, &xq, &wq, names, act, &relu_at, &q_at)) continue;
    ox_node *u = q_new_node(c, &g->node[i], conv, xq, wq, names, act, g->node[q_at].output[0]);
    if (!u) {
      rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
      goto done;
    }
    nodes[i] = *u;
    drop[q_at] = true;
    if (relu_at >= 0) drop[relu_at] = true;
    folded++;
  }
  if (!folded) goto done;
  /* DequantizeLinear nodes that nothing reads any more go (their readers
   * were folded); counted again over what is left, until none changes */
  for (bool again = true; again;) {
    again = false;
    ox_map_free(&f.reads);
    ox_map_init(&f.reads);
    for (size_t i = 0; i < g->n_node; i++)
      for (size_t k = 0; !drop[i] && k < nodes[i].n_input; k++)
        if (*nodes[i].input[k]) ox_map_put(&f.reads, nodes[i].input[k], q_reads(&f, nodes[i].input[k]) + 1);
    for (size_t i = 0; i < g->n_output; i++)
      ox_map_put(&f.reads, g->output[i].name, q_reads(&f, g->output[i].name) + 1000);
    for (size_t i = 0; i < g->n_node; i++)
      if (!drop[i] && ox_is_default_domain(nodes[i].domain) &&
          strcmp(nodes[i].op_type, "DequantizeLinear") == 0 && nodes[i].n_output == 1 &&
          q_reads(&f, nodes[i].output[0]) == 0)
        drop[i] = again = true;
  }
  *ng = *g;
  ng->node = nodes;
  ng->n_node = 0;
  for (size_t i = 0; i < g->n_node; i++)
    if (!drop[i]) nodes[ng->n_node++] = nodes[i];
  c->g = ng;
done:
  ox_map_free(&f.prod);
  ox_map_free(&f.reads);
  return rc;
}

const cg_op ox_cg_ops_quant[] = {
    {"QuantizeLinear", gen_quantize},
    {"DequantizeLinear", cg_gen_dequantize},
    {"DynamicQuantizeLinear", cg_gen_dynq},
    {"MatMulInteger", gen_matmulint},
    {"ConvInteger", gen_convint},
    {"QLinearMatMul", gen_qlinearmatmul},
    {"QLinearConv", cg_gen_qlinearconv},
    {NULL, NULL},
};

/* the nodes ox_cg_fold_qdq makes: generated, not listed as operators */
const cg_op ox_cg_ops_quant_folded[] = {
    {"QdqConv", gen_qdq_conv},
    {"QdqMatMul", gen_qdq_matmul},
    {"QdqMaxPool", gen_qdq_maxpool},
    {NULL, NULL},
};
