/* quant_eltwise.c - kernels of onnxruntime's com.microsoft QOperator forms
 * beyond the products (schemas in src/schema/schema_contrib_quant.c):
 *  - QLinearSigmoid, QLinearLeakyRelu, QLinearAdd, QLinearMul: the integer
 *    elementwise kernels of src/ops/fused/qfused.c (byte tables, the folded
 *    add), whose inputs these share;
 *  - QLinearConcat, QLinearWhere: each input brought to the output's scale
 *    and zero point through a 256-byte table (dequantize, then quantize
 *    rounding half to even), then copied or selected;
 *  - QLinearGlobalAveragePool, QLinearAveragePool: integer window sums
 *    requantized once per output, over NCHW or (channels_last) NHWC;
 *  - QLinearSoftmax: onnxruntime's table of scaled exponentials, with its
 *    float sums and its requantization by floor(1 / y_scale);
 *  - QLinearConv: ONNX's QLinearConv kernel (src/ops/onnx/conv_int.c), NHWC
 *    data transposed around it when channels_last. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/nn.h"
#include "../../schema/schema_hand.h"
#include "../fused/qfused.h"
#include "../nn_attrs.h"
#include "../onnx/conv_int.h"
#include "../opcore.h"
#include "quant_ops.h"

static bool is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

static int32_t q8_at(const void *d, bool sign, int64_t i) {
  return sign ? ((const int8_t *)d)[i] : ((const uint8_t *)d)[i];
}

/* ---------------------------------------------------- on qfused.c's kernels */

int ox_q_sigmoid_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ox_qlookup_prepare_op(info, state, e, "Sigmoid");
}
int ox_q_leaky_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ox_qlookup_prepare_op(info, state, e, "LeakyRelu");
}

/* --------------------------------------------- scale and zero point checks */

/* a per-tensor quantization: one float scale, one 8-bit zero point of the
 * data's type (absent: 0); false with the message set */
typedef struct qparam {
  float s;
  int32_t z;
} qparam;

static int read_qparam(ox_kctx *c, const ox_value *s, const ox_value *z, int32_t dtype,
                       const char *sname, const char *zname, qparam *p) {
  if (!s || s->dtype != OX_FLOAT || s->numel != 1 || s->rank > 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be one float", sname);
  p->s = *(const float *)s->data;
  p->z = 0;
  if (!z) return OX_OK;
  if (z->dtype != dtype || z->numel != 1 || z->rank > 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be one value of the data's type (%s)", zname,
                        dtype == OX_INT8 ? "int8" : "uint8");
  p->z = q8_at(z->data, dtype == OX_INT8, 0);
  return OX_OK;
}

/* QuantizeLinear of one float: round half to even, saturate; NaN gives 0 */
static int32_t quant1(float v, const qparam *y, bool sign) {
  float q = v / y->s;
  if (q != q) return 0;
  double r = nearbyint((double)q) + y->z, lo = sign ? -128 : 0, hi = sign ? 127 : 255;
  return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

/* t[b] = the byte b of x's quantization requantized to y's */
static void requant_table(const qparam *x, const qparam *y, bool sign, uint8_t *t) {
  for (int b = 0; b < 256; b++) {
    int32_t v = sign ? (int8_t)b : b;
    t[b] = (uint8_t)quant1((float)(v - x->z) * x->s, y, sign);
  }
}

/* ------------------------------------------------------------ QLinearConcat */

typedef struct concat_state {
  int64_t axis;
} concat_state;

int ox_q_concat_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  if (!ox_node_attr(n, "axis")) return oc_prep_fail(info, e, "attribute axis is required");
  if (n->n_input < 5 || (n->n_input - 2) % 3 != 0)
    return oc_prep_fail(info, e,
                        "inputs must be Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) "
                        "triples; %zu inputs do not make whole triples",
                        n->n_input);
  concat_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->axis = ox_node_attr_int(n, "axis", 0);
  *state = s;
  return OX_OK;
}

int ox_q_concat_run(ox_kctx *c, void *st) {
  const concat_state *s = st;
  size_t n_in = ox_kctx_n_inputs(c), k = (n_in - 2) / 3;
  ox_value *ys = ox_kctx_input(c, 0), *yz = ox_kctx_input(c, 1), *x0 = ox_kctx_input(c, 2);
  if (!yz || !is_q8(yz->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "Y_zero_point must be int8 or uint8");
  int32_t dt = yz->dtype;
  bool sign = dt == OX_INT8;
  qparam yp;
  if (read_qparam(c, ys, yz, dt, "Y_scale", "Y_zero_point", &yp)) return OX_ERUNTIME;
  if (!x0) return ox_kctx_fail(c, OX_ERUNTIME, "input 2 (the first tensor) is missing");
  size_t axis;
  if (oc_axis(c, s->axis, x0->rank, &axis, "axis")) return OX_ERUNTIME;
  int64_t dims[OC_MAXRANK];
  if (x0->rank > OC_MAXRANK) return ox_kctx_fail(c, OX_ERUNTIME, "rank too large");
  memcpy(dims, x0->dims, x0->rank * sizeof *dims);
  dims[axis] = 0;
  for (size_t i = 0; i < k; i++) {
    ox_value *x = ox_kctx_input(c, 2 + 3 * i);
    if (!x || x->dtype != dt)
      return ox_kctx_fail(c, OX_ERUNTIME, "tensor %zu must be of Y_zero_point's type", i);
    if (x->rank != x0->rank)
      return ox_kctx_fail(c, OX_ERUNTIME, "tensor %zu has rank %zu, not %zu", i, x->rank, x0->rank);
    for (size_t d = 0; d < x->rank; d++)
      if (d != axis && x->dims[d] != x0->dims[d])
        return ox_kctx_fail(c, OX_ERUNTIME, "tensor %zu differs in dimension %zu", i, d);
    dims[axis] += x->dims[axis];
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; d++) outer *= dims[d];
  for (size_t d = axis + 1; d < x0->rank; d++) inner *= dims[d];
  ox_value *y = ox_kctx_output(c, 0, dt, dims, x0->rank);
  if (!y) return OX_ERUNTIME;
  uint8_t *yd = y->data, t[256];
  int64_t off = 0, row = dims[axis] * inner;
  for (size_t i = 0; i < k; i++) {
    ox_value *x = ox_kctx_input(c, 2 + 3 * i);
    qparam xp;
    char sn[96], zn[96];
    snprintf(sn, sizeof sn, "X_scale of tensor %zu (input %zu)", i, 3 + 3 * i);
    snprintf(zn, sizeof zn, "X_zero_point of tensor %zu (input %zu)", i, 4 + 3 * i);
    if (read_qparam(c, ox_kctx_input(c, 3 + 3 * i), ox_kctx_input(c, 4 + 3 * i), dt, sn, zn, &xp))
      return OX_ERUNTIME;
    bool same = xp.s == yp.s && xp.z == yp.z;
    if (!same) requant_table(&xp, &yp, sign, t);
    int64_t len = x->dims[axis] * inner;
    const uint8_t *xd = x->data;
    for (int64_t o = 0; o < outer; o++) {
      uint8_t *dst = yd + o * row + off;
      const uint8_t *src = xd + o * len;
      if (same)
        memcpy(dst, src, (size_t)len);
      else
        for (int64_t j = 0; j < len; j++) dst[j] = t[src[j]];
    }
    off += len;
  }
  return OX_OK;
}

/* ------------------------------------------------------------- QLinearWhere */

typedef struct where_job {
  const bool *cond;
  const uint8_t *x, *y;
  uint8_t *z;
  uint8_t tx[256], ty[256];
} where_job;

static void where_fn(void *arg, const int64_t *off, const int64_t *step, int64_t out_off,
                     int64_t n) {
  const where_job *j = arg;
  const bool *cd = j->cond + off[0];
  const uint8_t *x = j->x + off[1], *y = j->y + off[2];
  uint8_t *z = j->z + out_off;
  for (int64_t i = 0; i < n; i++)
    z[i] = cd[i * step[0]] ? j->tx[x[i * step[1]]] : j->ty[y[i * step[2]]];
}

int ox_q_where_run(ox_kctx *c, void *st) {
  (void)st;
  ox_value *in[9];
  for (size_t i = 0; i < 9; i++) in[i] = ox_kctx_input(c, i);
  ox_value *cond = in[0], *x = in[1], *y = in[4];
  if (!cond || cond->dtype != OX_BOOL)
    return ox_kctx_fail(c, OX_ERUNTIME, "condition must be bool");
  if (!x || !y || !is_q8(x->dtype) || x->dtype != y->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "X and Y must be int8 or uint8, of one type");
  qparam xp, yp, zp;
  int32_t dt = x->dtype;
  if (!in[3] || !in[6] || !in[8])
    return ox_kctx_fail(c, OX_ERUNTIME, "x_zero_point, y_zero_point and z_zero_point are required");
  if (read_qparam(c, in[2], in[3], dt, "x_scale", "x_zero_point", &xp) ||
      read_qparam(c, in[5], in[6], dt, "y_scale", "y_zero_point", &yp) ||
      read_qparam(c, in[7], in[8], dt, "z_scale", "z_zero_point", &zp))
    return OX_ERUNTIME;
  oc_bcast bc;
  ox_value *v[3] = {cond, x, y};
  if (oc_bcast_values(&bc, c, v, 3)) return OX_ERUNTIME;
  ox_value *z = ox_kctx_output(c, 0, dt, bc.out_dims, bc.out_rank);
  if (!z) return OX_ERUNTIME;
  where_job *j = malloc(sizeof *j);
  if (!j) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  j->cond = cond->data;
  j->x = x->data;
  j->y = y->data;
  j->z = z->data;
  requant_table(&xp, &zp, dt == OX_INT8, j->tx);
  requant_table(&yp, &zp, dt == OX_INT8, j->ty);
  oc_bcast_each(&bc, ox_kctx_pool(c), where_fn, j);
  free(j);
  return OX_OK;
}

/* ------------------------------------------------------------------ pooling */

typedef struct pool_state {
  bool channels_last, global, count_pad;
  ox_nn_attrs a;
} pool_state;

int ox_q_pool_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  pool_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const ox_node *n = info->node;
  s->channels_last = ox_node_attr_int(n, "channels_last", 0) != 0;
  s->global = strcmp(n->op_type, "QLinearGlobalAveragePool") == 0;
  s->count_pad = ox_node_attr_int(n, "count_include_pad", 0) != 0;
  if (!s->global) {
    if (ox_nn_attrs_read(n, &s->a, e)) return oc_prep_fail(info, e, "%s", e->msg);
    if (s->a.n_kernel == 0) return oc_prep_fail(info, e, "attribute kernel_shape is required");
    if (s->a.n_dils) return oc_prep_fail(info, e, "dilations are not an attribute of this pool");
  }
  *state = s;
  return OX_OK;
}

typedef struct pool_job {
  const pool_state *s;
  const ox_nn_geom *g;
  const uint8_t *x;
  uint8_t *y;
  bool sign;
  int64_t C;
  qparam xp, yp;
} pool_job;

/* the offset of spatial position p (of `size` positions) of channel c of
 * image n: NCHW or NHWC */
static int64_t at(const pool_job *j, int64_t n, int64_t c, int64_t p, int64_t size) {
  return j->s->channels_last ? (n * size + p) * j->C + c : (n * j->C + c) * size + p;
}

/* one plane (n, c) per task index */
static void pool_task(void *arg, int64_t t0, int64_t t1) {
  const pool_job *j = arg;
  const ox_nn_geom *g = j->g;
  size_t nd = g->nd;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / j->C, c = t % j->C;
    if (j->s->global) {
      int64_t sum = 0;
      for (int64_t p = 0; p < g->in_size; p++)
        sum += q8_at(j->x, j->sign, at(j, n, c, p, g->in_size));
      /* onnxruntime: the sum's offset by zero point, then one float factor */
      float f = j->xp.s / (j->yp.s * (float)g->in_size);
      float v = (float)(sum - (int64_t)j->xp.z * g->in_size) * f;
      double r = nearbyint((double)v) + j->yp.z, lo = j->sign ? -128 : 0, hi = j->sign ? 127 : 255;
      r = r != r ? 0 : r < lo ? lo : r > hi ? hi : r;
      j->y[at(j, n, c, 0, 1)] = (uint8_t)(int32_t)r;
      continue;
    }
    int64_t idx[OX_NN_MAXD] = {0};
    for (int64_t o = 0; o < g->out_size; o++) {
      /* the window of output position idx: [start, end) per dimension,
       * clipped to the image; count_include_pad counts the padded taps too
       * (those inside the padding, not past it) */
      int64_t lo[OX_NN_MAXD], hi[OX_NN_MAXD], count_pad = 1, count = 1;
      for (size_t d = 0; d < nd; d++) {
        int64_t s0 = idx[d] * g->stride[d] - g->pb[d], e0 = s0 + g->k[d];
        int64_t pe = e0 < g->in[d] + g->pe[d] ? e0 : g->in[d] + g->pe[d];
        count_pad *= pe - s0;
        lo[d] = s0 < 0 ? 0 : s0;
        hi[d] = e0 > g->in[d] ? g->in[d] : e0;
        count *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
      }
      int64_t sum = 0, cur[OX_NN_MAXD];
      for (size_t d = 0; d < nd; d++) cur[d] = lo[d];
      while (count > 0) {
        int64_t p = 0;
        for (size_t d = 0; d < nd; d++) p = p * g->in[d] + cur[d];
        sum += q8_at(j->x, j->sign, at(j, n, c, p, g->in_size)) - j->xp.z;
        size_t d = nd;
        while (d-- > 0) {
          if (++cur[d] < hi[d]) break;
          cur[d] = lo[d];
        }
        if (d == (size_t)-1) break;
      }
      int64_t div = j->s->count_pad ? count_pad : count;
      float v = div > 0 ? (float)sum * j->xp.s / (float)div : 0.0f;
      j->y[at(j, n, c, o, g->out_size)] = (uint8_t)quant1(v, &j->yp, j->sign);
      for (size_t d = nd; d-- > 0;) {
        if (++idx[d] < g->out[d]) break;
        idx[d] = 0;
      }
    }
  }
}

int ox_q_pool_run(ox_kctx *c, void *st) {
  const pool_state *s = st;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x || !is_q8(x->dtype)) return ox_kctx_fail(c, OX_ERUNTIME, "X must be int8 or uint8");
  if (x->rank < 3 || x->rank > 2 + OX_NN_MAXD)
    return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank 3 to %d, not %zu", 2 + OX_NN_MAXD,
                        x->rank);
  pool_job j = {s, NULL, x->data, NULL, x->dtype == OX_INT8, 0, {0}, {0}};
  ox_value *zy = ox_kctx_input(c, 4);
  if (read_qparam(c, ox_kctx_input(c, 1), ox_kctx_input(c, 2), x->dtype, "x_scale", "x_zero_point",
                  &j.xp) ||
      read_qparam(c, ox_kctx_input(c, 3), zy, x->dtype, "y_scale", "y_zero_point", &j.yp))
    return OX_ERUNTIME;
  size_t nd = x->rank - 2;
  int64_t in[OX_NN_MAXD], ydims[2 + OX_NN_MAXD];
  j.C = s->channels_last ? x->dims[x->rank - 1] : x->dims[1];
  for (size_t d = 0; d < nd; d++) in[d] = x->dims[(s->channels_last ? 1 : 2) + d];
  ox_nn_geom g;
  memset(&g, 0, sizeof g);
  if (s->global) {
    g.nd = nd;
    g.in_size = 1;
    for (size_t d = 0; d < nd; d++) g.in_size *= in[d];
    g.out_size = 1;
    if (g.in_size == 0) return ox_kctx_fail(c, OX_ERUNTIME, "X has no spatial elements");
  } else {
    ox_err e = {0};
    if (s->a.n_kernel != nd)
      return ox_kctx_fail(c, OX_ERUNTIME, "kernel_shape has %zu values for %zu spatial dimensions",
                          s->a.n_kernel, nd);
    if (ox_nn_geom_make(&s->a, nd, in, s->a.kernel, true, &g, &e))
      return ox_kctx_fail(c, OX_ERUNTIME, "%s", e.msg);
  }
  ydims[0] = x->dims[0];
  for (size_t d = 0; d < nd; d++) ydims[(s->channels_last ? 1 : 2) + d] = s->global ? 1 : g.out[d];
  ydims[s->channels_last ? x->rank - 1 : 1] = j.C;
  ox_value *y = ox_kctx_output(c, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  j.g = &g;
  j.y = y->data;
  int64_t planes = x->dims[0] * j.C;
  ox_parallel_for(ox_kctx_pool(c), planes, 1 + 16384 / (g.in_size + 1), pool_task, &j);
  return OX_OK;
}

/* ------------------------------------------------------------ QLinearSoftmax */

typedef struct softmax_state {
  int64_t axis, opset;
} softmax_state;

int ox_q_softmax_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  if (!ox_node_attr(n, "opset")) return oc_prep_fail(info, e, "attribute opset is required");
  softmax_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->opset = ox_node_attr_int(n, "opset", 13);
  /* -1 at every opset: onnxruntime's schema default, which its kernel reads
   * even below opset 13 */
  s->axis = ox_node_attr_int(n, "axis", -1);
  *state = s;
  return OX_OK;
}

typedef struct softmax_job {
  const uint8_t *x;
  uint8_t *y;
  int64_t D, inner; /* the reduced length; the stride between its elements */
  bool sign;
  float table[256], ys;
  int32_t zy;
} softmax_job;

/* One row per task index (outer x inner rows of D elements, stride inner):
 * onnxruntime's form: the exponentials from a table aligned so that the
 * row's largest byte reads e^(shift * x_scale), a float sum in order, and
 * y = round(e * floor(1 / y_scale) / sum) + zero point, saturated. */
static void softmax_task(void *arg, int64_t r0, int64_t r1) {
  const softmax_job *j = arg;
  for (int64_t r = r0; r < r1; r++) {
    int64_t base = (r / j->inner) * j->D * j->inner + r % j->inner, st = j->inner;
    const uint8_t *x = j->x + base;
    uint8_t *y = j->y + base;
    int32_t mx = q8_at(x, j->sign, 0);
    for (int64_t i = 1; i < j->D; i++) {
      int32_t v = q8_at(x, j->sign, i * st);
      mx = v > mx ? v : mx;
    }
    /* the table index of byte v: v + (the top of the type - max) */
    int32_t adj = (j->sign ? 127 : 255) - mx;
    float sum = 0.0f;
    for (int64_t i = 0; i < j->D; i++) sum += j->table[(uint8_t)(q8_at(x, j->sign, i * st) + adj)];
    if (sum == 0.0f) continue;
    int32_t lo = j->sign ? -128 : 0, hi = j->sign ? 127 : 255;
    for (int64_t i = 0; i < j->D; i++) {
      float e = j->table[(uint8_t)(q8_at(x, j->sign, i * st) + adj)];
      /* clamped in float first: a tiny y_scale makes the quotient huge */
      float q = nearbyintf(e * j->ys / sum) + (float)j->zy;
      q = q != q ? (float)j->zy : q < (float)lo ? (float)lo : q > (float)hi ? (float)hi : q;
      y[i * st] = (uint8_t)(int32_t)q;
    }
  }
}

int ox_q_softmax_run(ox_kctx *c, void *st) {
  const softmax_state *s = st;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x || !is_q8(x->dtype)) return ox_kctx_fail(c, OX_ERUNTIME, "X must be int8 or uint8");
  bool sign = x->dtype == OX_INT8;
  qparam xp, yp;
  if (read_qparam(c, ox_kctx_input(c, 1), ox_kctx_input(c, 2), x->dtype, "X_scale", "x_zero_point",
                  &xp) ||
      read_qparam(c, ox_kctx_input(c, 3), ox_kctx_input(c, 4), x->dtype, "y_scale", "y_zero_point",
                  &yp))
    return OX_ERUNTIME;
  if (x->rank < 1) return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank 1 or more");
  size_t axis;
  if (oc_axis(c, s->axis, x->rank, &axis, "axis")) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y || x->numel == 0) return y ? OX_OK : OX_ERUNTIME;
  softmax_job *j = malloc(sizeof *j);
  if (!j) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  /* below opset 13 the rows are everything from axis on; from 13 the axis
   * alone, its elements inner apart */
  int64_t D = 1, inner = 1;
  if (s->opset < 13)
    for (size_t d = axis; d < x->rank; d++) D *= x->dims[d];
  else {
    D = x->dims[axis];
    for (size_t d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
  }
  *j = (softmax_job){x->data, y->data, D, inner, sign, {0}, floorf(1.0f / yp.s), yp.z};
  /* e^((i - 255 + shift) x_scale), shift keeping the row sums finite:
   * log(FLT_MAX / D) less 5, in steps of x_scale */
  double shift = log((double)FLT_MAX / (double)D) - 5.0;
  shift = (shift > 0 ? shift : 0.0) / (double)xp.s;
  for (int i = 0; i < 256; i++)
    j->table[(uint8_t)(sign ? i - 128 : i)] =
        (float)exp(((double)i - 255.0 + shift) * (double)xp.s);
  ox_parallel_for(ox_kctx_pool(c), x->numel / D, 1 + 4096 / D, softmax_task, j);
  free(j);
  return OX_OK;
}

/* -------------------------------------------------------------- QLinearConv */

/* ONNX's QLinearConv kernel; channels_last picks its NHWC run */
int ox_q_conv_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int64_t cl = ox_node_attr_int(info->node, "channels_last", 0);
  if (cl != 0 && cl != 1) return oc_prep_fail(info, e, "channels_last must be 0 or 1");
  return ox_qlinearconv_prepare(info, state, e);
}

int ox_q_conv_run(ox_kctx *c, void *state) {
  if (ox_node_attr_int(ox_kctx_node(c), "channels_last", 0))
    return ox_qlinearconv_nhwc_run(c, state);
  return ox_qlinearconv_run(c, state);
}
