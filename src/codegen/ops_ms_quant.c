/* ops_ms_quant.c - C generators of onnxruntime's com.microsoft QOperator
 * forms (QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
 * QLinearConcat, QLinearWhere, QLinearAveragePool, QLinearGlobalAveragePool,
 * QLinearSoftmax, QLinearConv, QuantizeLinear, DequantizeLinear) and of its
 * 8-bit products (QGemm, DynamicQuantizeMatMul, MatMulIntegerToFloat).
 *
 * The arithmetic is the runtime's kernels' (src/ops/contrib/quant.c,
 * quant_eltwise.c and src/ops/fused/qfused.c), so that the results agree
 * bit for bit with `onnxc run` (but QLinearAdd on uint8 tensors of one
 * shape, which the runtime's AVX-512 level computes with fused
 * multiply-adds; its portable and AVX2 levels agree):
 *  - Sigmoid, LeakyRelu, Concat and Where map each byte through a 256-entry
 *    table (dequantize, op, quantize rounding half to even). With constant
 *    scales and zero points the table is computed here and the node's code
 *    is integer-only (a load per byte); with scales given at run time the
 *    code builds it first, in float, as the runtime's kernel does.
 *  - Add and Mul, the pools and Softmax compute in float where the runtime
 *    does: its folded factors and Softmax's table of exponentials (computed
 *    here when the scales are constants), its rounding.
 *  - The products sum (a - za)(b - zb) exactly in int32, then the runtime's
 *    float epilogue (QGemm may requantize).
 *  - QLinearConv is ONNX's (ops_quant.c: the integer-only fixed-point
 *    requantization with constant scales), NHWC data transposed around it
 *    when channels_last; Quantize/DequantizeLinear are ONNX's generators
 *    (the contrib QuantizeLinear divides in float whatever the scale), and
 *    DynamicQuantizeMatMul quantizes A with DynamicQuantizeLinear's. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ops/nn_attrs.h"
#include "cg_impl.h"

static bool is_q8(int32_t dt) { return dt == OX_INT8 || dt == OX_UINT8; }

/* a per-tensor scale and zero point: their C expressions (literals when
 * constant, else X<i>[0]; "0" for an absent zero point) and, when both are
 * constants, their values */
typedef struct qpar {
  bool known;
  float sv;
  int32_t zv;
  char s[48], z[48];
} qpar;

/* what a byte table computes between its dequantization and quantization */
enum { QT_ID, QT_SIGMOID, QT_LEAKY };

static cg_val *in_at(cg_val **in, size_t n_in, size_t i) { return i < n_in ? in[i] : NULL; }

/* Reads scale input si and zero point zi (of type dt; required when
 * z_req) as the runtime's read_qparam: one float, one value of dt. */
static int q_par(cg_ctx *c, cg_val **in, size_t n_in, size_t si, size_t zi, int32_t dt, bool z_req,
                 const char *sname, const char *zname, qpar *p) {
  const cg_val *s = in_at(in, n_in, si), *z = in_at(in, n_in, zi);
  memset(p, 0, sizeof *p);
  if (!s || s->dtype != OX_FLOAT || s->numel != 1 || s->rank > 1)
    return cg_fail(c, OX_EMODEL, "%s must be one float", sname);
  if (z_req && !z) return cg_fail(c, OX_EMODEL, "%s is required", zname);
  if (z && (z->dtype != dt || z->numel != 1 || z->rank > 1))
    return cg_fail(c, OX_EMODEL, "%s must be one value of the data's type (%s)", zname,
                   dt == OX_INT8 ? "int8" : "uint8");
  p->known = s->cv && (!z || z->cv);
  if (s->cv) {
    p->sv = *(const float *)s->cv->data;
    cg_float_lit(p->s, sizeof p->s, p->sv, true);
  } else
    snprintf(p->s, sizeof p->s, "X%zu[0]", si);
  if (!z)
    snprintf(p->z, sizeof p->z, "0");
  else if (z->cv) {
    p->zv = dt == OX_INT8 ? *(const int8_t *)z->cv->data : *(const uint8_t *)z->cv->data;
    snprintf(p->z, sizeof p->z, "(%d)", (int)p->zv);
  } else
    snprintf(p->z, sizeof p->z, "(int32_t)X%zu[0]", zi);
  return OX_OK;
}

/* QuantizeLinear of one float as the runtime's kernels: v / s in float,
 * rounded half to even, the zero point added, saturated; NaN gives 0 */
static int32_t quant_one(float v, float s, int32_t z, bool sign) {
  float q = v / s;
  if (q != q) return 0;
  double r = nearbyint((double)q) + z, lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

static float table_op(int op, float r, float alpha) {
  if (op == QT_SIGMOID) return 1.0f / (1.0f + expf(-r));
  if (op == QT_LEAKY) return r < 0 ? alpha * r : r;
  return r;
}

/* Writes the definition of `name`, the 256 values (of ydt) that byte b of
 * x's type gives: dequantized with x, through op, quantized with y. */
static void q_table(cg_ctx *c, const char *name, int op, float alpha, int32_t xdt, const qpar *x,
                    int32_t ydt, const qpar *y) {
  const char *T = cg_ctype(ydt);
  bool xs = xdt == OX_INT8, ys = ydt == OX_INT8;
  int lo = ys ? -128 : 0, hi = ys ? 127 : 255;
  if (x->known && y->known) {
    cg_printf(c, "  static const %s %s[256] = {", T, name);
    for (int b = 0; b < 256; b++) {
      int32_t xv = xs && b >= 128 ? b - 256 : b;
      float v = table_op(op, (float)(xv - x->zv) * x->sv, alpha);
      cg_printf(c, "%s%d",
                b == 0   ? ""
                : b % 16 ? ", "
                         : ",\n      ",
                (int)quant_one(v, y->sv, y->zv, ys));
    }
    cg_printf(c, "};\n");
    return;
  }
  /* the scales are known at run time only: the table built there, in float */
  char al[48];
  cg_float_lit(al, sizeof al, alpha, true);
  cg_printf(c, "  %s %s[256];\n  for (int b = 0; b < 256; b++) {\n", T, name);
  cg_printf(c, "    const float r = (float)(%s - %s) * %s;\n", xs ? "(b < 128 ? b : b - 256)" : "b",
            x->z, x->s);
  if (op == QT_SIGMOID)
    cg_printf(c, "    const float v = 1.0f / (1.0f + expf(-r));\n");
  else if (op == QT_LEAKY)
    cg_printf(c, "    const float v = r < 0 ? %s * r : r;\n", al);
  else
    cg_printf(c, "    const float v = r;\n");
  cg_printf(c,
            "    const float q = v / %s;\n    const float t = nearbyintf(q) + (float)%s;\n"
            "    %s[b] = (%s)(q != q ? 0 : t < %d ? %d : t > %d ? %d : t);\n  }\n",
            y->s, y->z, name, T, lo, lo, hi, hi);
}

/* ---- QLinearSigmoid, QLinearLeakyRelu: y = table[x] ---- */

static int gen_lookup(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const cg_val *x = in[0];
  if (!x || !is_q8(x->dtype)) return cg_fail(c, OX_EMODEL, "X must be int8 or uint8");
  int32_t ydt = out[0]->dtype;
  if (ydt != x->dtype) return cg_fail(c, OX_EMODEL, "Y must have X's type");
  qpar xp, yp;
  if (q_par(c, in, n_in, 1, 2, x->dtype, false, "X_scale", "X_zero_point", &xp) ||
      q_par(c, in, n_in, 3, 4, ydt, false, "Y_scale", "Y_zero_point", &yp))
    return c->e->code;
  bool sig = strcmp(n->op_type, "QLinearSigmoid") == 0;
  q_table(c, "tab", sig ? QT_SIGMOID : QT_LEAKY, ox_node_attr_float(n, "alpha", 0.01f), x->dtype,
          &xp, ydt, &yp);
  cg_printf(c, "  for (long i = 0; i < %lld; i++) Y0[i] = tab[(uint8_t)X0[i]];\n",
            (long long)x->numel);
  return OX_OK;
}

/* ---- QLinearAdd, QLinearMul ---- */

/* The runtime's forms (qfused.c): Add rounds a x ka + b x kb + k with its
 * factors folded (ka = a_scale / y_scale in double, rounded to float), or,
 * when a factor is not finite, dequantizes, adds and quantizes element by
 * element; Mul rounds (a - za)(b - zb) x (a_scale b_scale / y_scale). */
static int gen_qadd(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  const cg_val *a = in[0], *b = in_at(in, n_in, 3), *y = out[0];
  if (!a || !b || !is_q8(a->dtype) || b->dtype != a->dtype || y->dtype != a->dtype)
    return cg_fail(c, OX_EMODEL, "A, B and C must be int8 or uint8, of one type");
  qpar pa, pb, py;
  if (q_par(c, in, n_in, 1, 2, a->dtype, false, "a_scale", "a_zero_point", &pa) ||
      q_par(c, in, n_in, 4, 5, a->dtype, false, "b_scale", "b_zero_point", &pb) ||
      q_par(c, in, n_in, 6, 7, a->dtype, false, "y_scale", "y_zero_point", &py))
    return c->e->code;
  bool mul = strcmp(n->op_type, "QLinearMul") == 0, sign = a->dtype == OX_INT8;
  int lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  const char *T = cg_ctype(y->dtype);
  char body[1024];
  if (mul) {
    cg_printf(c, "  const float ka = %s * %s / %s;\n", pa.s, pb.s, py.s);
    snprintf(body, sizeof body,
             "const float av = (float)((int32_t)X0[i0] - %s), bv = (float)((int32_t)X3[i1] - %s);\n"
             "    const float p = av * bv;\n"
             "    const float v = nearbyintf(p * ka) + (float)%s;\n"
             "    Y0[o] = (%s)(v != v ? 0 : v < %d ? %d : v > %d ? %d : v);",
             pa.z, pb.z, py.z, T, lo, lo, hi, hi);
  } else {
    /* the runtime's folded form, or (a factor not finite) its exact one */
    char fast[1024], exact[1024], la[48] = "ka", lb[48] = "kb", lc[48] = "kc";
    bool finite = true;
    if (pa.known && pb.known && py.known) {
      double ka = (double)pa.sv / py.sv, kb = (double)pb.sv / py.sv;
      float fa = (float)ka, fb = (float)kb, fc = (float)(py.zv - pa.zv * ka - pb.zv * kb);
      finite = isfinite(fa) && isfinite(fb) && isfinite(fc);
      cg_float_lit(la, sizeof la, fa, true);
      cg_float_lit(lb, sizeof lb, fb, true);
      cg_float_lit(lc, sizeof lc, fc, true);
    }
    /* one rounding per operation, as the runtime's loop (no fused
     * multiply-add); the rounding half to even of 1.5 x 2^23 */
    snprintf(fast, sizeof fast,
             "const float pa = (float)X0[i0] * %s, pb = (float)X3[i1] * %s;\n"
             "    float v = pa + pb;\n    v = v + %s;\n"
             "    v = v < %d.0f ? %d.0f : v > %d.0f ? %d.0f : v;\n"
             "    Y0[o] = (%s)(int32_t)((v + 12582912.0f) - 12582912.0f);",
             la, lb, lc, lo, lo, hi, hi, T);
    snprintf(exact, sizeof exact,
             "const float av = (float)((int32_t)X0[i0] - %s) * %s;\n"
             "    const float bv = (float)((int32_t)X3[i1] - %s) * %s;\n"
             "    const float q = (av + bv) / %s;\n"
             "    const float t = nearbyintf(q) + (float)%s;\n"
             "    Y0[o] = (%s)(q != q ? 0 : t < %d ? %d : t > %d ? %d : t);",
             pa.z, pa.s, pb.z, pb.s, py.s, py.z, T, lo, lo, hi, hi);
    cg_val *ops[2] = {in[0], in[3]};
    if (pa.known && pb.known && py.known) {
      cg_bcast_loop(c, y->dims, y->rank, ops, 2, finite ? fast : exact);
      return OX_OK;
    }
    /* scales given at run time: the factors folded there, in double as
     * the runtime */
    cg_printf(c,
              "  const double kad = (double)%s / (double)%s, kbd = (double)%s / (double)%s;\n"
              "  const float ka = (float)kad, kb = (float)kbd;\n"
              "  const float kc = (float)((double)%s - (double)%s * kad - (double)%s * kbd);\n"
              "  if (isfinite(ka) && isfinite(kb) && isfinite(kc)) {\n",
              pa.s, py.s, pb.s, py.s, py.z, pa.z, pb.z);
    cg_bcast_loop(c, y->dims, y->rank, ops, 2, fast);
    cg_printf(c, "  } else {\n");
    cg_bcast_loop(c, y->dims, y->rank, ops, 2, exact);
    cg_printf(c, "  }\n");
    return OX_OK;
  }
  cg_val *ops[2] = {in[0], in[3]};
  cg_bcast_loop(c, y->dims, y->rank, ops, 2, body);
  return OX_OK;
}

/* ---- QLinearConcat: each input through its table to Y's quantization
 * (copied when it has Y's scale and zero point already) ---- */

static int gen_qconcat(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)n_out;
  if (!ox_node_attr(n, "axis")) return cg_fail(c, OX_EMODEL, "attribute axis is required");
  if (n_in < 5 || (n_in - 2) % 3 != 0)
    return cg_fail(c, OX_EMODEL,
                   "inputs must be Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) "
                   "triples; %zu inputs do not make whole triples",
                   n_in);
  const cg_val *y = out[0], *yz = in[1];
  if (!yz || !is_q8(yz->dtype) || y->dtype != yz->dtype)
    return cg_fail(c, OX_EMODEL, "Y_zero_point must be int8 or uint8, Y's type");
  qpar yp;
  if (q_par(c, in, n_in, 0, 1, y->dtype, false, "Y_scale", "Y_zero_point", &yp)) return c->e->code;
  size_t axis;
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), y->rank, &axis))
    return cg_fail(c, OX_EMODEL, "axis out of range");
  int64_t outer, inner, off = 0;
  cg_split(y, axis, &outer, &inner);
  int64_t row = y->dims[axis] * inner;
  for (size_t k = 0; k < (n_in - 2) / 3; k++) {
    size_t xi = 2 + 3 * k;
    const cg_val *x = in[xi];
    if (!x || x->dtype != y->dtype || x->rank != y->rank)
      return cg_fail(c, OX_EMODEL, "tensor %zu must be of Y's type and rank", k);
    char sn[96], zn[96];
    snprintf(sn, sizeof sn, "X_scale of tensor %zu (input %zu)", k, xi + 1);
    snprintf(zn, sizeof zn, "X_zero_point of tensor %zu (input %zu)", k, xi + 2);
    qpar xp;
    if (q_par(c, in, n_in, xi + 1, xi + 2, y->dtype, false, sn, zn, &xp)) return c->e->code;
    int64_t len = x->dims[axis] * inner;
    if (x->numel == 0) continue;
    bool same = xp.known && yp.known && xp.sv == yp.sv && xp.zv == yp.zv;
    char tn[32];
    snprintf(tn, sizeof tn, "t%zu", k);
    if (!same) q_table(c, tn, QT_ID, 0.0f, y->dtype, &xp, y->dtype, &yp);
    cg_printf(c,
              "  for (long o = 0; o < %lld; o++)\n    for (long j = 0; j < %lld; j++)\n"
              "      Y0[o * %lld + %lld + j] = ",
              (long long)outer, (long long)len, (long long)row, (long long)off);
    if (same)
      cg_printf(c, "X%zu[o * %lld + j];\n", xi, (long long)len);
    else
      cg_printf(c, "%s[(uint8_t)X%zu[o * %lld + j]];\n", tn, xi, (long long)len);
    off += len;
  }
  return OX_OK;
}

/* ---- QLinearWhere: X and Y through their tables to Z's quantization ---- */

static int gen_qwhere(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n, (void)n_out;
  const cg_val *cond = in[0], *x = in_at(in, n_in, 1), *y = in_at(in, n_in, 4), *z = out[0];
  if (!cond || cond->dtype != OX_BOOL) return cg_fail(c, OX_EMODEL, "condition must be bool");
  if (!x || !y || !is_q8(x->dtype) || y->dtype != x->dtype || z->dtype != x->dtype)
    return cg_fail(c, OX_EMODEL, "X and Y must be int8 or uint8, of one type");
  qpar xp, yp, zp;
  if (q_par(c, in, n_in, 2, 3, x->dtype, true, "x_scale", "x_zero_point", &xp) ||
      q_par(c, in, n_in, 5, 6, x->dtype, true, "y_scale", "y_zero_point", &yp) ||
      q_par(c, in, n_in, 7, 8, x->dtype, true, "z_scale", "z_zero_point", &zp))
    return c->e->code;
  q_table(c, "tx", QT_ID, 0.0f, x->dtype, &xp, z->dtype, &zp);
  q_table(c, "ty", QT_ID, 0.0f, x->dtype, &yp, z->dtype, &zp);
  cg_val *ops[3] = {in[0], in[1], in[4]};
  cg_bcast_loop(c, z->dims, z->rank, ops, 3,
                "Y0[o] = X0[i0] ? tx[(uint8_t)X1[i1]] : ty[(uint8_t)X4[i2]];");
  return OX_OK;
}

/* ---- QLinearGlobalAveragePool, QLinearAveragePool (NCHW or, with
 * channels_last, NHWC) ---- */

/* The flat index of position <v>0, <v>1, ... of spatial dims `dims` of
 * image b, channel ch into buf: "((b * 3 + ch) * 7 + p0) * 8 + p1" (NCHW)
 * or "((b * 7 + p0) * 8 + p1) * 3 + ch" (NHWC) */
static void pool_index(char *buf, size_t size, bool cl, int64_t C, const int64_t *dims, size_t nd,
                       const char *v) {
  char tmp[320];
  if (cl)
    snprintf(buf, size, "b");
  else
    snprintf(buf, size, "(b * %lld + ch)", (long long)C);
  for (size_t d = 0; d < nd; d++) {
    snprintf(tmp, sizeof tmp, "(%s * %lld + %s%zu)", buf, (long long)dims[d], v, d);
    snprintf(buf, size, "%s", tmp);
  }
  if (cl) {
    snprintf(tmp, sizeof tmp, "%s * %lld + ch", buf, (long long)C);
    snprintf(buf, size, "%s", tmp);
  }
}

static int gen_qpool(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_out;
  const cg_val *x = in[0], *y = out[0];
  if (!x || !is_q8(x->dtype) || y->dtype != x->dtype)
    return cg_fail(c, OX_EMODEL, "X must be int8 or uint8 (Y of its type)");
  if (x->rank < 3 || x->rank > 2 + OX_NN_MAXD)
    return cg_fail(c, OX_EMODEL, "X must have rank 3 to %d", 2 + OX_NN_MAXD);
  qpar xp, yp;
  if (q_par(c, in, n_in, 1, 2, x->dtype, false, "x_scale", "x_zero_point", &xp) ||
      q_par(c, in, n_in, 3, 4, x->dtype, false, "y_scale", "y_zero_point", &yp))
    return c->e->code;
  bool cl = ox_node_attr_int(n, "channels_last", 0) != 0;
  bool global = strcmp(n->op_type, "QLinearGlobalAveragePool") == 0;
  bool sign = x->dtype == OX_INT8;
  int lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  size_t nd = x->rank - 2;
  int64_t C = cl ? x->dims[x->rank - 1] : x->dims[1], in_d[OX_NN_MAXD], size = 1;
  for (size_t d = 0; d < nd; d++) size *= (in_d[d] = x->dims[(cl ? 1 : 2) + d]);
  const char *T = cg_ctype(x->dtype);
  char xi[320], yi[320];
  cg_printf(c, "  for (long b = 0; b < %lld; b++)\n    for (long ch = 0; ch < %lld; ch++) {\n",
            (long long)x->dims[0], (long long)C);
  if (global) {
    if (size == 0) return cg_fail(c, OX_EMODEL, "X has no spatial elements");
    /* onnxruntime: the sum less its zero points, times one float factor */
    cg_printf(c, "      int64_t sum = 0;\n      for (long p = 0; p < %lld; p++) sum += X0[",
              (long long)size);
    if (cl)
      cg_printf(c, "(b * %lld + p) * %lld + ch];\n", (long long)size, (long long)C);
    else
      cg_printf(c, "(b * %lld + ch) * %lld + p];\n", (long long)C, (long long)size);
    cg_printf(
        c,
        "      const float f = %s / (%s * %lld.0f);\n"
        "      const float v = (float)(sum - (int64_t)%s * %lld) * f;\n"
        "      const float t = nearbyintf(v) + (float)%s;\n"
        "      Y0[b * %lld + ch] = (%s)(t != t ? 0 : t < %d ? %d : t > %d ? %d : t);\n    }\n",
        xp.s, yp.s, (long long)size, xp.z, (long long)size, yp.z, (long long)C, T, lo, lo, hi, hi);
    return OX_OK;
  }
  /* the runtime's geometry (kernels/nn.c), so that pads, auto_pad and
   * ceil_mode give its windows */
  ox_nn_attrs a;
  ox_nn_geom g;
  ox_err e = {0};
  if (ox_nn_attrs_read(n, &a, &e)) return cg_fail(c, OX_EMODEL, "%s", e.msg);
  if (a.n_kernel != nd) return cg_fail(c, OX_EMODEL, "kernel_shape must have %zu values", nd);
  if (a.n_dils) return cg_fail(c, OX_EMODEL, "dilations are not an attribute of this pool");
  if (ox_nn_geom_make(&a, nd, in_d, a.kernel, true, &g, &e))
    return cg_fail(c, OX_EMODEL, "%s", e.msg);
  for (size_t d = 0; d < nd; d++)
    if (g.out[d] != y->dims[(cl ? 1 : 2) + d])
      return cg_fail(c, OX_EMODEL, "the inferred output shape differs from the window's");
  bool incl = ox_node_attr_int(n, "count_include_pad", 0) != 0;
  pool_index(xi, sizeof xi, cl, C, g.in, nd, "p");
  pool_index(yi, sizeof yi, cl, C, g.out, nd, "o");
  int ind = 6;
  for (size_t d = 0; d < nd; d++, ind += 2)
    cg_printf(c, "%*sfor (long o%zu = 0; o%zu < %lld; o%zu++)\n", ind, "", d, d,
              (long long)g.out[d], d);
  cg_printf(c, "%*s{\n%*s  long cp = 1, cnt = 1;\n", ind, "", ind, "");
  /* the window [lo, hi) clipped to the image; count_include_pad counts the
   * taps inside the padding too (not those past it) */
  for (size_t d = 0; d < nd; d++)
    cg_printf(c,
              "%*s  long lo%zu = o%zu * %lld - %lld, hi%zu = lo%zu + %lld;\n"
              "%*s  cp *= (hi%zu < %lld ? hi%zu : %lld) - lo%zu;\n"
              "%*s  if (lo%zu < 0) lo%zu = 0;\n%*s  if (hi%zu > %lld) hi%zu = %lld;\n"
              "%*s  cnt *= hi%zu > lo%zu ? hi%zu - lo%zu : 0;\n",
              ind, "", d, d, (long long)g.stride[d], (long long)g.pb[d], d, d, (long long)g.k[d],
              ind, "", d, (long long)(g.in[d] + g.pe[d]), d, (long long)(g.in[d] + g.pe[d]), d, ind,
              "", d, d, ind, "", d, (long long)g.in[d], d, (long long)g.in[d], ind, "", d, d, d, d);
  cg_printf(c, "%*s  int64_t sum = 0;\n", ind, "");
  int in2 = ind + 2;
  for (size_t d = 0; d < nd; d++, in2 += 2)
    cg_printf(c, "%*sfor (long p%zu = lo%zu; p%zu < hi%zu; p%zu++)\n", in2, "", d, d, d, d, d);
  cg_printf(c, "%*ssum += (int32_t)X0[%s] - %s;\n", in2, "", xi, xp.z);
  cg_printf(c,
            "%*s  const long dv = %s;\n"
            "%*s  const float v = dv > 0 ? (float)sum * %s / (float)dv : 0.0f;\n"
            "%*s  const float q = v / %s;\n%*s  const float t = nearbyintf(q) + (float)%s;\n"
            "%*s  Y0[%s] = (%s)(q != q ? 0 : t < %d ? %d : t > %d ? %d : t);\n%*s  (void)cp, "
            "(void)cnt;\n%*s}\n    }\n",
            ind, "", incl ? "cp" : "cnt", ind, "", xp.s, ind, "", yp.s, ind, "", yp.z, ind, "", yi,
            T, lo, lo, hi, hi, ind, "", ind, "");
  return OX_OK;
}

/* ---- QLinearSoftmax: onnxruntime's table of scaled exponentials, float
 * sums in order, y = round(e floor(1 / y_scale) / sum) + zero point ---- */

static int gen_qsoftmax(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_out;
  const cg_val *x = in[0], *y = out[0];
  if (!x || !is_q8(x->dtype) || y->dtype != x->dtype)
    return cg_fail(c, OX_EMODEL, "X must be int8 or uint8 (Y of its type)");
  if (!ox_node_attr(n, "opset")) return cg_fail(c, OX_EMODEL, "attribute opset is required");
  qpar xp, yp;
  if (q_par(c, in, n_in, 1, 2, x->dtype, false, "X_scale", "x_zero_point", &xp) ||
      q_par(c, in, n_in, 3, 4, x->dtype, false, "y_scale", "y_zero_point", &yp))
    return c->e->code;
  if (x->rank < 1) return cg_fail(c, OX_EMODEL, "X must have rank 1 or more");
  size_t axis;
  /* -1 at every opset: onnxruntime's schema default, which its kernel reads */
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), x->rank, &axis))
    return cg_fail(c, OX_EMODEL, "axis out of range");
  /* below opset 13 the rows are everything from axis on; from 13 the axis
   * alone, its elements inner apart */
  int64_t D = 1, inner = 1;
  if (ox_node_attr_int(n, "opset", 13) < 13)
    for (size_t d = axis; d < x->rank; d++) D *= x->dims[d];
  else {
    D = x->dims[axis];
    for (size_t d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
  }
  bool sign = x->dtype == OX_INT8;
  /* e^((i - 255 + shift) x_scale), shift keeping the row sums finite:
   * log(FLT_MAX / D) less 5, in steps of x_scale */
  double shift = log((double)FLT_MAX / (double)D) - 5.0;
  shift = shift > 0 ? shift : 0.0;
  char ys[48];
  if (xp.known && yp.known) {
    float tab[256];
    double sh = shift / (double)xp.sv;
    for (int i = 0; i < 256; i++)
      tab[(uint8_t)(sign ? i - 128 : i)] = (float)exp(((double)i - 255.0 + sh) * (double)xp.sv);
    cg_printf(c, "  static const float tab[256] = {");
    for (int i = 0; i < 256; i++) {
      char lit[48];
      cg_float_lit(lit, sizeof lit, tab[i], true);
      cg_printf(c, "%s%s", i == 0 ? "" : i % 6 ? ", " : ",\n      ", lit);
    }
    cg_printf(c, "};\n");
    cg_float_lit(ys, sizeof ys, floorf(1.0f / yp.sv), true);
  } else {
    /* the scales at run time: the table built there, as the runtime does */
    char sh[48];
    cg_float_lit(sh, sizeof sh, shift, false);
    cg_printf(c,
              "  float tab[256];\n  const double sh = %s / (double)%s;\n"
              "  for (int i = 0; i < 256; i++)\n"
              "    tab[(uint8_t)(%s)] = (float)exp(((double)i - 255.0 + sh) * (double)%s);\n"
              "  const float ysf = floorf(1.0f / %s);\n",
              sh, xp.s, sign ? "i - 128" : "i", xp.s, yp.s);
    snprintf(ys, sizeof ys, "ysf");
  }
  int lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  const char *T = cg_ctype(x->dtype);
  cg_printf(c, "  for (long r = 0; r < %lld; r++) {\n", (long long)(x->numel / D));
  cg_printf(c,
            "    const long base = (r / %lld) * %lld + r %% %lld;\n"
            "    const %s *x = X0 + base;\n    %s *y = Y0 + base;\n"
            "    int32_t mx = x[0];\n"
            "    for (long i = 1; i < %lld; i++) if (x[i * %lld] > mx) mx = x[i * %lld];\n"
            "    const int32_t adj = %d - mx;\n    float sum = 0.0f;\n"
            "    for (long i = 0; i < %lld; i++) sum += tab[(uint8_t)(x[i * %lld] + adj)];\n"
            "    if (sum == 0.0f) continue;\n"
            "    for (long i = 0; i < %lld; i++) {\n"
            "      const float e = tab[(uint8_t)(x[i * %lld] + adj)] * %s;\n"
            "      const float q = nearbyintf(e / sum) + (float)%s;\n"
            "      y[i * %lld] = (%s)(q != q ? %s : q < %d ? %d : q > %d ? %d : q);\n    }\n  }\n",
            (long long)inner, (long long)(D * inner), (long long)inner, T, T, (long long)D,
            (long long)inner, (long long)inner, hi, (long long)D, (long long)inner, (long long)D,
            (long long)inner, ys, yp.z, (long long)inner, T, yp.z, lo, lo, hi, hi);
  return OX_OK;
}

/* ---- QLinearConv: ONNX's generator, on NCHW copies when channels_last ---- */

/* v's twin in NCHW order (a plain array of the arena: no constant data) */
static cg_val *nchw_twin(cg_ctx *c, const cg_val *v) {
  cg_val *t = ox_arena_calloc(c->a, 1, sizeof *t);
  if (!t) return NULL;
  *t = *v;
  t->kind = CG_TEMP;
  t->cv = NULL;
  t->alias = NULL;
  t->dims[1] = v->dims[v->rank - 1];
  for (size_t d = 2; d < v->rank; d++) t->dims[d] = v->dims[d - 1];
  return t;
}

static int gen_qconv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  int64_t cl = ox_node_attr_int(n, "channels_last", 0);
  if (cl != 0 && cl != 1) return cg_fail(c, OX_EMODEL, "channels_last must be 0 or 1");
  if (!cl) return cg_gen_qlinearconv(c, n, in, n_in, out, n_out);
  const cg_val *x = in[0], *y = out[0];
  if (!x || x->rank < 3 || y->rank != x->rank || !is_q8(x->dtype))
    return cg_fail(c, OX_EMODEL, "x must be int8 or uint8 of rank 3 or more");
  cg_val *sx = cg_scratch(c, x->dtype, x->numel), *sy = cg_scratch(c, y->dtype, y->numel);
  const char *rx = sx ? cg_ref(c, sx) : NULL, *ry = sy ? cg_ref(c, sy) : NULL;
  if (c->depth) return cg_fail(c, OX_EUNSUPPORTED, "channels_last is not compiled in a body");
  cg_val *tx = nchw_twin(c, x), *ty = nchw_twin(c, y);
  cg_val **tin = ox_arena_calloc(c->a, n_in, sizeof *tin);
  if (!rx || !ry || !tx || !ty || !tin)
    return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  memcpy(tin, in, n_in * sizeof *tin);
  tin[0] = tx;
  int64_t C = x->dims[x->rank - 1], M = y->dims[y->rank - 1], sx_n = x->numel / (x->dims[0] * C),
          sy_n = y->numel / (y->dims[0] * M);
  const char *T = cg_ctype(x->dtype), *TY = cg_ctype(y->dtype);
  cg_printf(c,
            "  for (long b = 0; b < %lld; b++)\n    for (long p = 0; p < %lld; p++)\n"
            "      for (long ch = 0; ch < %lld; ch++)\n"
            "        %s[(b * %lld + ch) * %lld + p] = X0[(b * %lld + p) * %lld + ch];\n",
            (long long)x->dims[0], (long long)sx_n, (long long)C, rx, (long long)C, (long long)sx_n,
            (long long)sx_n, (long long)C);
  cg_printf(c, "  {\n    const %s *restrict X0 = %s;\n    %s *restrict Y0 = %s;\n", T, rx, TY, ry);
  int rc = cg_gen_qlinearconv(c, n, tin, n_in, &ty, 1);
  cg_printf(c, "  }\n");
  if (rc) return rc;
  cg_printf(c,
            "  for (long b = 0; b < %lld; b++)\n    for (long p = 0; p < %lld; p++)\n"
            "      for (long m = 0; m < %lld; m++)\n"
            "        Y0[(b * %lld + p) * %lld + m] = %s[(b * %lld + m) * %lld + p];\n",
            (long long)y->dims[0], (long long)sy_n, (long long)M, (long long)sy_n, (long long)M, ry,
            (long long)M, (long long)sy_n);
  return OX_OK;
}

/* ---- the 8-bit products: QGemm, MatMulIntegerToFloat,
 * DynamicQuantizeMatMul (the runtime's quant.c): exact int32 sums, then
 * its float epilogue ---- */

/* one value, or 1-D of n values */
static bool per_col(const cg_val *v, int64_t n) {
  return (v->numel == 1 && v->rank <= 1) || (v->rank == 1 && v->numel == n);
}

/* A (M x K rows, or K x M when ta; nb batches one after the other) by B
 * (K x N, or N x K when tb; batched as A) with their zero points (C
 * expressions; zb may read n) */
typedef struct qprod {
  const char *a, *b, *za, *zb;
  int64_t nb, M, K, N;
  bool ta, tb;
} qprod;

/* Writes the loops: for each output element an int32 `acc` of (a - za)(b -
 * zb) over k, then `epi`, which sees acc, m, n and yi (the element). */
static void q_product(cg_ctx *c, const qprod *p, const char *epi) {
  long long M = p->M, K = p->K, N = p->N;
  cg_printf(c,
            "  for (long bt = 0; bt < %lld; bt++)\n    for (long m = 0; m < %lld; m++)\n"
            "      for (long n = 0; n < %lld; n++) {\n        int32_t acc = 0;\n",
            (long long)p->nb, M, N);
  char ai[96], bi[96];
  if (p->ta)
    snprintf(ai, sizeof ai, "k * %lld + m", M);
  else
    snprintf(ai, sizeof ai, "(bt * %lld + m) * %lld + k", M, K);
  if (p->tb)
    snprintf(bi, sizeof bi, "n * %lld + k", K);
  else
    snprintf(bi, sizeof bi, "(bt * %lld + k) * %lld + n", K, N);
  if (K > 0)
    cg_printf(c,
              "        for (long k = 0; k < %lld; k++)\n"
              "          acc += ((int32_t)%s[%s] - %s) * ((int32_t)%s[%s] - %s);\n",
              K, p->a, ai, p->za, p->b, bi, p->zb);
  cg_printf(c, "        const long yi = (bt * %lld + m) * %lld + n;\n        %s\n      }\n", M, N,
            epi);
}

/* QGemm: y = float(acc + C) x alpha a_scale b_scale[n] (/ y_scale), or with
 * y_zero_point that rounded half to even, the zero point added, saturated */
static int gen_qgemm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_out;
  const cg_val *A = in[0], *as = in_at(in, n_in, 1), *za = in_at(in, n_in, 2),
               *B = in_at(in, n_in, 3), *bs = in_at(in, n_in, 4), *zb = in_at(in, n_in, 5),
               *C = in_at(in, n_in, 6), *ys = in_at(in, n_in, 7), *zy = in_at(in, n_in, 8),
               *y = out[0];
  if (!A || !is_q8(A->dtype) || A->rank != 2)
    return cg_fail(c, OX_EMODEL, "A must be a 2-D int8 or uint8 tensor");
  if (!B || !is_q8(B->dtype) || B->rank != 2)
    return cg_fail(c, OX_EMODEL, "B must be a 2-D int8 or uint8 tensor");
  if (!za || !zb) return cg_fail(c, OX_EMODEL, "a_zero_point and b_zero_point are required");
  if (zy && !ys) return cg_fail(c, OX_EMODEL, "y_zero_point is given without y_scale");
  bool ta = ox_node_attr_int(n, "transA", 0) != 0, tb = ox_node_attr_int(n, "transB", 0) != 0;
  int64_t M = A->dims[ta], Ka = A->dims[!ta], K = B->dims[tb], N = B->dims[!tb];
  if (Ka != K)
    return cg_fail(c, OX_EMODEL, "A's K (%lld) differs from B's K (%lld)", (long long)Ka,
                   (long long)K);
  if (!as || as->dtype != OX_FLOAT || !per_col(as, 1) || !bs || bs->dtype != OX_FLOAT ||
      !per_col(bs, N) || (ys && (ys->dtype != OX_FLOAT || !per_col(ys, 1))))
    return cg_fail(c, OX_EMODEL, "a_scale and y_scale must be one float, b_scale one or N");
  if (za->dtype != A->dtype || !per_col(za, 1))
    return cg_fail(c, OX_EMODEL, "a_zero_point must be one value of A's type");
  if (zb->dtype != B->dtype || !per_col(zb, N) || zb->numel != bs->numel)
    return cg_fail(c, OX_EMODEL, "b_zero_point must be of B's type and b_scale's shape");
  if (zy && (!is_q8(zy->dtype) || !per_col(zy, 1)))
    return cg_fail(c, OX_EMODEL, "y_zero_point must be one int8 or uint8 value");
  if (y->dtype != (zy ? zy->dtype : OX_FLOAT))
    return cg_fail(c, OX_EMODEL, "Y must be float, or y_zero_point's type");
  /* C broadcast to M x N: (), (1), (N), (1, N), (M, 1) or (M, N) */
  int64_t cm = 0, cn = 0;
  if (C) {
    int64_t d0 = C->rank == 2 ? C->dims[0] : 1, d1 = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
    if (C->dtype != OX_INT32 || C->rank > 2 || (d0 != 1 && d0 != M) || (d1 != 1 && d1 != N))
      return cg_fail(c, OX_EMODEL, "C must be int32 of shape (), (N), (1, N), (M, 1) or (M, N)");
    cm = d0 == 1 ? 0 : d1;
    cn = d1 == 1 ? 0 : 1;
  }
  /* onnxruntime's factor: alpha * a_scale * b_scale (/ y_scale), in float */
  char al[48];
  cg_float_lit(al, sizeof al, ox_node_attr_float(n, "alpha", 1.0f), true);
  cg_printf(c,
            "  float fs[%lld];\n  for (long j = 0; j < %lld; j++) {\n"
            "    float s = %s * X1[0] * X4[j];\n%s    fs[j] = s;\n  }\n",
            (long long)bs->numel, (long long)bs->numel, al, ys ? "    s = s / X7[0];\n" : "");
  char epi[768], cterm[96] = "";
  if (C) snprintf(cterm, sizeof cterm, " + X6[m * %lld + n * %lld]", (long long)cm, (long long)cn);
  int k = snprintf(epi, sizeof epi, "const float v = (float)((int64_t)acc%s) * fs[%s];\n        ",
                   cterm, bs->numel == 1 ? "0" : "n");
  if (!zy)
    snprintf(epi + k, sizeof epi - (size_t)k, "Y0[yi] = v;");
  else {
    int lo = zy->dtype == OX_INT8 ? -128 : 0, hi = zy->dtype == OX_INT8 ? 127 : 255;
    snprintf(epi + k, sizeof epi - (size_t)k,
             "const float r = nearbyintf(v) + (float)X8[0];\n"
             "        Y0[yi] = (%s)(r != r ? X8[0] : r < %d ? %d : r > %d ? %d : r);",
             cg_ctype(zy->dtype), lo, lo, hi, hi);
  }
  qprod p = {"X0",
             "X3",
             "(int32_t)X2[0]",
             zb->numel == 1 ? "(int32_t)X5[0]" : "(int32_t)X5[n]",
             1,
             M,
             K,
             N,
             ta,
             tb};
  q_product(c, &p, epi);
  return OX_OK;
}

/* MatMulIntegerToFloat's and DynamicQuantizeMatMul's product into `yname`:
 * y[..., n] = float(acc) x (a_scale b_scale[n]) + bias[n], two roundings
 * (no fused multiply-add) as the runtime's epilogue; scales, bias and y of
 * a_scale's type (float, or float16 computed in float). A is `aname` (of
 * A's shape) with zero point za, a_scale the float expression as_e; B, its
 * scale, zero point and the bias are inputs bi, bi + 1 ... as listed. */
static int to_float_product(cg_ctx *c, cg_val **in, size_t n_in, const cg_val *A, const char *aname,
                            const char *za, const char *as_e, int32_t ft, size_t bi, size_t bsi,
                            size_t zbi, size_t biasi, const cg_val *y, const char *yname) {
  const cg_val *B = in_at(in, n_in, bi), *bs = in_at(in, n_in, bsi), *zb = in_at(in, n_in, zbi),
               *bias = in_at(in, n_in, biasi);
  if (!B || !is_q8(B->dtype) || B->rank < 2)
    return cg_fail(c, OX_EMODEL, "B must be int8 or uint8 of rank 2 or more");
  int64_t K = B->dims[B->rank - 2], N = B->dims[B->rank - 1], nb = 1, M = 1;
  if (zb && (zb->dtype != B->dtype || !per_col(zb, N)))
    return cg_fail(c, OX_EMODEL, "b_zero_point must be of B's type, one value or N");
  if (!bs || bs->dtype != ft || !per_col(bs, N))
    return cg_fail(c, OX_EMODEL, "b_scale must be of a_scale's type, one value or N");
  if (A->rank < 1 || A->dims[A->rank - 1] != K)
    return cg_fail(c, OX_EMODEL, "A's last dimension differs from B's K (%lld)", (long long)K);
  if (B->rank > 2) {
    bool same = A->rank == B->rank;
    for (size_t i = 0; same && i + 2 < B->rank; i++) {
      same = A->dims[i] == B->dims[i];
      nb *= B->dims[i];
    }
    if (!same)
      return cg_fail(c, OX_EMODEL, "a B of rank %zu needs an A of the same batch dimensions",
                     B->rank);
  }
  if (bias && (bias->dtype != ft || bias->rank != 1 || bias->numel != N))
    return cg_fail(c, OX_EMODEL, "bias must be of a_scale's type, N values");
  if (y->dtype != ft) return cg_fail(c, OX_EMODEL, "Y must be of a_scale's type");
  for (size_t i = 0; i + 1 < A->rank; i++) M *= A->dims[i];
  char bsn[32], bsl[64];
  snprintf(bsn, sizeof bsn, "X%zu[j]", bsi);
  snprintf(bsl, sizeof bsl, "%s", ft == OX_FLOAT ? bsn : cg_load(c, ft, bsn));
  cg_printf(c, "  float fs[%lld];\n  for (long j = 0; j < %lld; j++) fs[j] = %s * %s;\n",
            (long long)bs->numel, (long long)bs->numel, as_e, bsl);
  char epi[512], bn[32], zbe[32];
  snprintf(bn, sizeof bn, "X%zu[n]", biasi);
  int k = snprintf(epi, sizeof epi, "float f = (float)acc * fs[%s];\n        ",
                   bs->numel == 1 ? "0" : "n");
  if (bias)
    k += snprintf(epi + k, sizeof epi - (size_t)k, "f = f + %s;\n        ",
                  ft == OX_FLOAT ? bn : cg_load(c, ft, bn));
  snprintf(epi + k, sizeof epi - (size_t)k, "%s[yi] = %s;", yname,
           ft == OX_FLOAT ? "f" : cg_store(c, ft, "f", true));
  if (!zb)
    snprintf(zbe, sizeof zbe, "0");
  else
    snprintf(zbe, sizeof zbe, "(int32_t)X%zu[%s]", zbi, zb->numel == 1 ? "0" : "n");
  char bname[16];
  snprintf(bname, sizeof bname, "X%zu", bi);
  qprod p = {aname, bname, za, zbe, nb, M / (nb ? nb : 1), K, N, false, false};
  q_product(c, &p, epi);
  return OX_OK;
}

static int gen_mmitf(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n, (void)n_out;
  const cg_val *A = in[0], *as = in_at(in, n_in, 2), *za = in_at(in, n_in, 4);
  if (!A || !is_q8(A->dtype)) return cg_fail(c, OX_EMODEL, "A must be int8 or uint8");
  int32_t ft = as && as->dtype == OX_FLOAT16 ? OX_FLOAT16 : OX_FLOAT;
  if (!as || as->dtype != ft || !per_col(as, 1))
    return cg_fail(c, OX_EMODEL, "a_scale must be one float or float16");
  if (za && (za->dtype != A->dtype || !per_col(za, 1)))
    return cg_fail(c, OX_EMODEL, "a_zero_point must be one value of A's type");
  const char *as_e = ft == OX_FLOAT ? "X2[0]" : cg_load(c, ft, "X2[0]");
  return to_float_product(c, in, n_in, A, "X0", za ? "(int32_t)X4[0]" : "0", as_e, ft, 1, 3, 5, 6,
                          out[0], "Y0");
}

/* DynamicQuantizeMatMul: A quantized to uint8 as DynamicQuantizeLinear
 * (ops_quant.c's generator, into a scratch array), then the product */
static int gen_dqmm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  const cg_val *A = in[0];
  if (!A || A->dtype != OX_FLOAT) return cg_fail(c, OX_EMODEL, "A must be float");
  cg_val *q = cg_scratch(c, OX_UINT8, A->numel > 0 ? A->numel : 1);
  const char *rq = q ? cg_ref(c, q) : NULL;
  if (c->depth) return cg_fail(c, OX_EUNSUPPORTED, "not compiled inside a control-flow body");
  if (!rq) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "  float *const Yout = Y0;\n  {\n    uint8_t *restrict Y0 = %s;\n    (void)Y0;\n",
            rq);
  int rc = OX_OK;
  if (A->numel > 0) {
    cg_val *qo = q;
    rc = cg_gen_dynq(c, n, in, n_in, &qo, 1);
  } else
    cg_printf(c, "  const float sc = 0.0f, z = 0.0f;\n  (void)z;\n");
  if (!rc)
    rc = to_float_product(c, in, n_in, A, rq, "(int32_t)z", "sc", OX_FLOAT, 1, 2, 3, 4, out[0],
                          "Yout");
  cg_printf(c, "  }\n");
  return rc;
}

const cg_op ox_cg_ops_ms_quant[] = {
    {CG_DOMAIN_MS ":QLinearAdd", gen_qadd},
    {CG_DOMAIN_MS ":QLinearMul", gen_qadd},
    {CG_DOMAIN_MS ":QLinearSigmoid", gen_lookup},
    {CG_DOMAIN_MS ":QLinearLeakyRelu", gen_lookup},
    {CG_DOMAIN_MS ":QLinearConcat", gen_qconcat},
    {CG_DOMAIN_MS ":QLinearWhere", gen_qwhere},
    {CG_DOMAIN_MS ":QLinearGlobalAveragePool", gen_qpool},
    {CG_DOMAIN_MS ":QLinearAveragePool", gen_qpool},
    {CG_DOMAIN_MS ":QLinearSoftmax", gen_qsoftmax},
    {CG_DOMAIN_MS ":QLinearConv", gen_qconv},
    {CG_DOMAIN_MS ":QuantizeLinear", cg_gen_quantize_ms},
    {CG_DOMAIN_MS ":DequantizeLinear", cg_gen_dequantize},
    {CG_DOMAIN_MS ":QGemm", gen_qgemm},
    {CG_DOMAIN_MS ":MatMulIntegerToFloat", gen_mmitf},
    {CG_DOMAIN_MS ":DynamicQuantizeMatMul", gen_dqmm},
    {NULL, NULL},
};
