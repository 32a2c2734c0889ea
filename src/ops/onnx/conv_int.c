/* conv_int.c - ConvInteger, QLinearConv, and QLinearConvFused (domain
 * ai.onnxc, made by src/opt/qdq_conv.c). A constant 8-bit W is packed per
 * group for the integer kernel of src/kernels/qconv.c; other cases, and
 * scales giving non-finite factors, take the exact path: im2col of
 * zero-point-shifted values accumulated in int64, then requantised. */
#include "conv_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/qconv_dw.h"
#include "../fused.h"
#include "../nn_stage.h"
#include "conv_common.h"

static int convint_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  conv_state *s = ox_conv_state_new(info, e);
  if (!s) return e ? e->code : OX_ENOMEM;
  *state = s;
  return OX_OK;
}

static bool is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

static int32_t q8_at(const ox_value *v, int64_t i) {
  return v->dtype == OX_UINT8 ? ((const uint8_t *)v->data)[i] : ((const int8_t *)v->data)[i];
}

/* acc[n][m][p] = sum_k (x - zx)(w - zw[m]) over the im2col of shifted x
 * (integers held exactly in float32, accumulated in int64). */
static int qconv_acc(ox_kctx *ctx, const conv_state *s, const ox_value *x, const ox_value *w,
                     int32_t zx, const ox_value *zw, ox_nn_geom *g, int64_t *ydims,
                     int64_t **acc_out) {
  if (ox_conv_shapes(ctx, s, x, w, g, ydims)) return OX_ERUNTIME;
  int64_t N = x->dims[0], G = s->a.group, Cg = w->dims[1], M = w->dims[0], Mg = M / G;
  int64_t Kg = Cg * g->k_size, P = g->out_size, outer = ox_nn_outer(g);
  if (zw && zw->numel != 1 && zw->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "w_zero_point has %lld elements (1 or %lld expected)",
                        (long long)zw->numel, (long long)M);
  float *xs = malloc((size_t)(x->numel > 0 ? x->numel : 1) * sizeof(float));
  float *col = malloc((size_t)(Kg * P > 0 ? Kg * P : 1) * sizeof(float));
  int64_t *acc = calloc((size_t)(N * M * P > 0 ? N * M * P : 1), sizeof(int64_t));
  int32_t *wv = malloc((size_t)(Kg > 0 ? Kg : 1) * sizeof(int32_t));
  if (!xs || !col || !acc || !wv) {
    free(xs);
    free(col);
    free(acc);
    free(wv);
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  for (int64_t i = 0; i < x->numel; i++) xs[i] = (float)(q8_at(x, i) - zx);
  for (int64_t n = 0; n < N; n++)
    for (int64_t gi = 0; gi < G; gi++) {
      ox_nn_im2col(g, Cg, xs + (n * G + gi) * Cg * g->in_size, 0, outer, col, P, 0.0f);
      for (int64_t m = gi * Mg; m < (gi + 1) * Mg; m++) {
        int32_t z = zw ? q8_at(zw, zw->numel == 1 ? 0 : m) : 0;
        for (int64_t k = 0; k < Kg; k++) wv[k] = q8_at(w, m * Kg + k) - z;
        int64_t *am = acc + (n * M + m) * P;
        for (int64_t k = 0; k < Kg; k++) {
          int64_t wk = wv[k];
          if (!wk) continue;
          const float *cr = col + k * P;
          for (int64_t p = 0; p < P; p++) am[p] += wk * (int64_t)cr[p];
        }
      }
    }
  free(xs);
  free(col);
  free(wv);
  *acc_out = acc;
  return OX_OK;
}

static int convint_run(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *w = ox_kctx_input(ctx, 1);
  ox_value *zx = ox_kctx_input(ctx, 2), *zw = ox_kctx_input(ctx, 3);
  if (!x || !w) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input x or w");
  if (!is_q8(x->dtype) || !is_q8(w->dtype) || (zx && zx->dtype != x->dtype) ||
      (zw && zw->dtype != w->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x, w and their zero points must be int8/uint8");
  if (zx && zx->numel != 1) return ox_kctx_fail(ctx, OX_ERUNTIME, "x_zero_point must be a scalar");
  ox_nn_geom g;
  int64_t ydims[OX_NN_MAXD + 2], *acc = NULL;
  if (qconv_acc(ctx, s, x, w, zx ? q8_at(zx, 0) : 0, zw, &g, ydims, &acc)) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, OX_INT32, ydims, x->rank);
  if (!y) {
    free(acc);
    return OX_ERUNTIME;
  }
  for (int64_t i = 0; i < y->numel; i++) ((int32_t *)y->data)[i] = (int32_t)acc[i];
  free(acc);
  return OX_OK;
}

static float scalar_f32(const ox_value *v, int64_t i) {
  return ox_nn_is_float_type(v->dtype) && v->dtype == OX_FLOAT ? ((const float *)v->data)[i] : 0.0f;
}

/* An input given on the node (not "" nor beyond its inputs). */
static bool input_given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

/* QLinearConv, and QLinearConvFused (domain ai.onnxc, made by the session
 * from DequantizeLinear -> Conv -> [Relu] -> QuantizeLinear units): the same
 * inputs, except that B is the float bias of the Conv, and attribute relu.
 * A constant 8-bit W (with a constant or absent zero point) is packed per
 * group for the integer kernel (src/kernels/qconv.c). */
static int qlinearconv_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  conv_state *s = ox_conv_state_new(info, e);
  if (!s) return e ? e->code : OX_ENOMEM;
  *state = s;
  s->relu = ox_node_attr_int(info->node, "relu", 0) != 0;
  s->clip = ox_node_attr(info->node, "clip_lo") || ox_node_attr(info->node, "clip_hi");
  s->clip_lo = ox_node_attr_float(info->node, "clip_lo", -INFINITY);
  s->clip_hi = ox_node_attr_float(info->node, "clip_hi", INFINITY);
  if (s->clip && !(s->clip_lo <= s->clip_hi))
    return ox_err_set(e, OX_EINVAL, "clip_lo must not exceed clip_hi"), ox_conv_prep_err(info, e);
  const ox_value *w = info->const_inputs && info->n_inputs > 3 ? info->const_inputs[3] : NULL;
  const ox_value *zw = info->const_inputs && info->n_inputs > 5 ? info->const_inputs[5] : NULL;
  int64_t G = s->a.group;
  if (!w || w->kind != OX_VAL_TENSOR || !is_q8(w->dtype) || w->rank < 3 || w->dims[0] < 1 ||
      w->numel < 1 || G < 1 || w->dims[0] % G != 0)
    return OX_OK;
  if (input_given(info->node, 5) &&
      (!zw || zw->dtype != w->dtype || (zw->numel != 1 && zw->numel != w->dims[0])))
    return OX_OK; /* checked (and reported) at run time */
  int64_t Mg = w->dims[0] / G, K = w->numel / w->dims[0];
  s->qw = calloc((size_t)G, sizeof *s->qw);
  if (!s->qw) return ox_err_set(e, OX_ENOMEM, "out of memory"), ox_conv_prep_err(info, e);
  s->n_qw = G;
  for (int64_t gi = 0; gi < G; gi++) {
    const uint8_t *wg = (const uint8_t *)w->data + gi * Mg * K;
    const void *zg = NULL;
    int64_t zn = 0;
    if (zw) {
      zn = zw->numel == 1 ? 1 : Mg;
      zg = (const uint8_t *)zw->data + (zw->numel == 1 ? 0 : gi * Mg);
    }
    if (ox_qconv_pack_w(wg, w->dtype == OX_INT8, Mg, K, K, zg, zn, &s->qw[gi], e))
      return ox_conv_prep_err(info, e);
  }
  s->qw_src = w;
  return OX_OK;
}

/* QLinearConv's output: output 0 of the node, or (own: the NHWC form of
 * com.microsoft's QLinearConv, which transposes it after) a tensor of its
 * own; NULL with the node's error set */
static ox_value *qconv_output(ox_kctx *ctx, bool own, int32_t t, const int64_t *dims, size_t rank) {
  if (!own) return ox_kctx_output(ctx, 0, t, dims, rank);
  ox_err e = {0};
  ox_value *y = ox_tensor_new_uninit(t, dims, rank, &e);
  if (!y) ox_kctx_fail(ctx, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
  return y;
}

/* The integer kernel when W was packed and the scales give finite factors;
 * OX_EUNSUPPORTED (nothing written) sends the caller to the exact path. */
static int qlinearconv_fast(ox_kctx *ctx, conv_state *s, ox_value *const *in, bool float_bias,
                            const ox_nn_geom *g, const int64_t *ydims, bool own, ox_value **yout) {
  ox_value *x = in[0], *xs = in[1], *zx = in[2], *w = in[3], *ws = in[4], *ys = in[6], *zy = in[7],
           *b = in[8];
  int64_t G = s->a.group, M = ydims[1], Mg = M / G, P = g->out_size;
  int64_t Cg = w->dims[1], N = x->dims[0];
  if (!s->qw || s->qw_src != w || s->n_qw != G || x->numel == 0) return OX_EUNSUPPORTED;
  double sx = scalar_f32(xs, 0), sy = scalar_f32(ys, 0);
  if (!(sy > 0) || !isfinite(sy) || !isfinite(sx)) return OX_EUNSUPPORTED;
  float *f = malloc((size_t)M * 2 * sizeof *f);
  if (!f) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  float *mult = f, *bias = b ? f + M : NULL;
  bool ok = true;
  for (int64_t m = 0; m < M && ok; m++) {
    double sc = sx * (double)scalar_f32(ws, ws->numel == 1 ? 0 : m);
    double bv = !b           ? 0.0
                : float_bias ? (double)((const float *)b->data)[m]
                             : (double)(float)((double)((const int32_t *)b->data)[m] * sc);
    mult[m] = (float)(sc / sy);
    if (bias) bias[m] = (float)(bv / sy);
    ok = isfinite(mult[m]) && (!bias || isfinite(bias[m]));
  }
  if (!ok) {
    free(f);
    return OX_EUNSUPPORTED;
  }
  int32_t ytype = zy ? zy->dtype : OX_UINT8;
  ox_value *y = qconv_output(ctx, own, ytype, ydims, x->rank);
  if (!y) {
    free(f);
    return OX_ERUNTIME;
  }
  *yout = y;
  /* signed X goes in shifted to unsigned, as does its zero point */
  bool xsig = x->dtype == OX_INT8;
  uint8_t *xu = NULL;
  const uint8_t *xb = x->data;
  if (xsig) {
    xu = malloc((size_t)x->numel);
    if (!xu) {
      free(f);
      return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < x->numel; i++) xu[i] = (uint8_t)(xb[i] ^ 0x80);
    xb = xu;
  }
  int32_t zxu = (zx ? q8_at(zx, 0) : 0) + (xsig ? 128 : 0);
  int32_t zyv = zy ? q8_at(zy, 0) : 0;
  ox_qconv_req rq = {0};
  rq.zy = zyv;
  rq.y_signed = ytype == OX_INT8;
  rq.lo = rq.y_signed ? -128 : 0;
  rq.hi = rq.y_signed ? 127 : 255;
  if (s->relu && zyv > rq.lo) rq.lo = zyv;
  if (s->clip) { /* Q(Clip(v)) = the quantized v clamped to the quantized bounds (sy > 0) */
    float ys0 = scalar_f32(ys, 0);
    double ql = (double)nearbyintf(s->clip_lo / ys0) + zyv,
           qh = (double)nearbyintf(s->clip_hi / ys0) + zyv;
    if (ql > rq.lo) rq.lo = ql > rq.hi ? rq.hi : (int32_t)ql; /* -inf: no bound */
    if (qh < rq.hi) rq.hi = qh < rq.lo ? rq.lo : (int32_t)qh;
  }
  ox_err e = {0};
  int rc = OX_OK;
  /* depthwise: whole channels per task (qconv_dw.c) instead of one
   * single-row product per channel */
  if (Cg == 1 && Mg == 1 && G > 1 && ox_qconv_dw_supported(g)) {
    rq.mult = mult;
    rq.bias = bias;
    ox_value *zw = in[5];
    for (int64_t n = 0; n < N && !rc; n++)
      rc = ox_qconv_dw_run(g, xb + n * G * g->in_size, G, zxu, w->data, w->dtype == OX_INT8,
                           zw ? zw->data : NULL, zw ? zw->numel : 0, &rq,
                           (uint8_t *)y->data + n * M * P, ox_kctx_pool(ctx), &e);
    if (rc != OX_EUNSUPPORTED) {
      free(xu);
      free(f);
      *yout = y;
      if (rc) return ox_kctx_fail(ctx, rc, "%s", e.msg);
      return OX_OK;
    }
    rc = OX_OK;
  }
  for (int64_t n = 0; n < N && !rc; n++)
    for (int64_t gi = 0; gi < G && !rc; gi++) {
      rq.mult = mult + gi * Mg;
      rq.bias = bias ? bias + gi * Mg : NULL;
      rc = ox_qconv_run(g, xb + (n * G + gi) * Cg * g->in_size, Cg, zxu, &s->qw[gi], &rq,
                        (uint8_t *)y->data + (n * M + gi * Mg) * P, ox_kctx_pool(ctx), &e);
    }
  free(xu);
  free(f);
  *yout = y;
  if (rc) return ox_kctx_fail(ctx, rc, "%s", e.msg);
  return OX_OK;
}

/* QLinearConv of in[0..8] into *yout: output 0 of the node, or a tensor
 * of its own (own; set also on failure, NULL or to be released) */
static int qlinearconv_compute(ox_kctx *ctx, conv_state *s, ox_value *const *in, bool own,
                               ox_value **yout) {
  ox_value *x = in[0], *xs = in[1], *zx = in[2], *w = in[3], *ws = in[4], *zw = in[5], *ys = in[6],
           *zy = in[7], *b = in[8];
  /* the fused node's bias is the Conv's float bias, not QLinearConv's int32 */
  bool float_bias =
      b && b->dtype == OX_FLOAT && strcmp(ox_kctx_node(ctx)->op_type, "QLinearConvFused") == 0;
  if (!x || !xs || !w || !ws || !ys)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "missing required input");
  if (!is_q8(x->dtype) || !is_q8(w->dtype) || (zx && zx->dtype != x->dtype) ||
      (zw && zw->dtype != w->dtype) || (zy && !is_q8(zy->dtype)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x, w, y and their zero points must be int8/uint8");
  if (xs->dtype != OX_FLOAT || ws->dtype != OX_FLOAT || ys->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "scales must be float");
  if (xs->numel != 1 || ys->numel != 1 || (zx && zx->numel != 1) || (zy && zy->numel != 1))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x/y scales and zero points must be scalars");
  if (b && b->dtype != (float_bias ? OX_FLOAT : OX_INT32))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B must be %s", float_bias ? "float" : "int32");
  ox_nn_geom g;
  int64_t ydims[OX_NN_MAXD + 2];
  if (ox_conv_shapes(ctx, s, x, w, &g, ydims)) return OX_ERUNTIME;
  int64_t M = ydims[1], P = g.out_size;
  if (ws->numel != 1 && ws->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "w_scale has %lld elements (1 or %lld expected)",
                        (long long)ws->numel, (long long)M);
  if (b && b->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B has %lld elements, expected %lld", (long long)b->numel,
                        (long long)M);
  if (zw && zw->numel != 1 && zw->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "w_zero_point has %lld elements (1 or %lld expected)",
                        (long long)zw->numel, (long long)M);
  ox_value *y = NULL;
  int rc = qlinearconv_fast(ctx, s, in, float_bias, &g, ydims, own, &y);
  *yout = y;
  if (rc != OX_EUNSUPPORTED) return rc;
  int64_t *acc = NULL;
  if (qconv_acc(ctx, s, x, w, zx ? q8_at(zx, 0) : 0, zw, &g, ydims, &acc)) return OX_ERUNTIME;
  int32_t ytype = zy ? zy->dtype : OX_UINT8;
  *yout = y = qconv_output(ctx, own, ytype, ydims, x->rank);
  if (!y) {
    free(acc);
    return OX_ERUNTIME;
  }
  double yscale = (double)scalar_f32(ys, 0);
  int32_t yz = zy ? q8_at(zy, 0) : 0;
  int32_t lo = ytype == OX_UINT8 ? 0 : -128, hi = ytype == OX_UINT8 ? 255 : 127;
  for (int64_t n = 0; n < ydims[0]; n++)
    for (int64_t m = 0; m < M; m++) {
      double sc = (double)scalar_f32(xs, 0) * (double)scalar_f32(ws, ws->numel == 1 ? 0 : m);
      int64_t bias = b && !float_bias ? ((const int32_t *)b->data)[m] : 0;
      float fb = float_bias ? ((const float *)b->data)[m] : 0.0f;
      for (int64_t p = 0; p < P; p++) {
        int64_t i = (n * M + m) * P + p;
        /* the real value is (acc + bias) * sx * sw (+ the float bias); requantise to y */
        float real = (float)((double)(acc[i] + bias) * sc) + fb;
        if (s->relu && real < 0) real = 0;
        if (s->clip) real = real < s->clip_lo ? s->clip_lo : real > s->clip_hi ? s->clip_hi : real;
        double q = nearbyint((double)real / yscale) + yz;
        /* a NaN (0 / 0 with a zero y_scale) quantizes to 0, as in QuantizeLinear */
        int32_t v = q != q ? 0 : q < lo ? lo : q > hi ? hi : (int32_t)q;
        if (ytype == OX_UINT8)
          ((uint8_t *)y->data)[i] = (uint8_t)v;
        else
          ((int8_t *)y->data)[i] = (int8_t)v;
      }
    }
  free(acc);
  return OX_OK;
}

static int qlinearconv_run(ox_kctx *ctx, void *st) {
  ox_value *in[9], *y;
  for (size_t i = 0; i < 9; i++) in[i] = ox_kctx_input(ctx, i);
  return qlinearconv_compute(ctx, st, in, false, &y);
}

/* ---- what com.microsoft's QLinearConv (src/ops/contrib/quant_eltwise.c) borrows ---- */
int ox_qlinearconv_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return qlinearconv_prepare(info, state, e);
}
int ox_qlinearconv_run(ox_kctx *ctx, void *state) { return qlinearconv_run(ctx, state); }

/* channels_last: x [N, spatial..., C] is moved to NCHW, convolved, and the
 * result moved back to [N, spatial..., M] */
static void nhwc_move(const uint8_t *src, uint8_t *dst, int64_t N, int64_t C, int64_t P,
                      bool to_nchw) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t p = 0; p < P; p++)
      for (int64_t ch = 0; ch < C; ch++) {
        int64_t last = (n * P + p) * C + ch, first = (n * C + ch) * P + p;
        if (to_nchw)
          dst[first] = src[last];
        else
          dst[last] = src[first];
      }
}

int ox_qlinearconv_nhwc_run(ox_kctx *ctx, void *state) {
  ox_value *in[9], *y = NULL;
  for (size_t i = 0; i < 9; i++) in[i] = ox_kctx_input(ctx, i);
  ox_value *x = in[0];
  if (!x || x->rank < 3 || x->rank > OX_NN_MAXD + 2 || !is_q8(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "x must be an int8 or uint8 tensor of rank 3 to %d",
                        OX_NN_MAXD + 2);
  int64_t dims[OX_NN_MAXD + 2], N = x->dims[0], C = x->dims[x->rank - 1];
  int64_t P = C && N ? x->numel / (N * C) : 0;
  dims[0] = N;
  dims[1] = C;
  for (size_t k = 1; k + 1 < x->rank; k++) dims[k + 1] = x->dims[k];
  ox_err e = {0};
  ox_value *xc = ox_tensor_new_uninit(x->dtype, dims, x->rank, &e);
  if (!xc) return ox_kctx_fail(ctx, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
  nhwc_move(x->data, xc->data, N, C, P, true);
  in[0] = xc;
  int rc = qlinearconv_compute(ctx, state, in, true, &y);
  ox_value_unref(xc);
  if (rc) {
    if (y) ox_value_unref(y);
    return rc;
  }
  int64_t M = y->dims[1], Q = N && M ? y->numel / (N * M) : 0;
  dims[0] = N;
  for (size_t k = 2; k < y->rank; k++) dims[k - 1] = y->dims[k];
  dims[y->rank - 1] = M;
  ox_value *out = ox_kctx_output(ctx, 0, y->dtype, dims, y->rank);
  if (out) nhwc_move(y->data, out->data, N, M, Q, false);
  ox_value_unref(y);
  return out ? OX_OK : OX_ERUNTIME;
}

const ox_kernel_def ox_ops_conv_int[] = {
    {"", "ConvInteger", 10, 1000, convint_prepare, convint_run, ox_conv_release},
    {"", "QLinearConv", 10, 1000, qlinearconv_prepare, qlinearconv_run, ox_conv_release},
    {OX_FUSED_DOMAIN, "QLinearConvFused", 1, 1, qlinearconv_prepare, qlinearconv_run,
     ox_conv_release},
    {0},
};
