/* quant.c - kernels of onnxruntime's com.microsoft 8-bit products:
 * DynamicQuantizeMatMul, MatMulIntegerToFloat and QGemm (schemas in
 * src/schema/schema_contrib_quant.c; the elementwise QOperator forms are in
 * quant_eltwise.c). All three run on the exact integer GEMM of
 * src/kernels/qgemm.c, B packed once when it and its zero point are
 * constants; only the step from the int32 sums to the output differs:
 *  - MatMulIntegerToFloat: float(acc) * (a_scale * b_scale[n]) + bias[n],
 *    the GEMM's own epilogue;
 *  - DynamicQuantizeMatMul: the same after quantizing A to uint8 as
 *    DynamicQuantizeLinear does;
 *  - QGemm: acc + C (int32 values, summed in 64 bits), then scaled to
 *    float, or requantized (round half to even, saturate) when
 *    y_zero_point is given.
 * The family's one kernel table (ox_ops_contrib_quant, the one registry.c
 * knows) is here; it also lists the kernels of quant_eltwise.c and
 * quant_attn.c (quant_ops.h) and those qfused.c lends (qfused.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/q8.h"
#include "../../kernels/qgemm.h"
#include "../../schema/schema_hand.h"
#include "../fused/qfused.h"
#include "../onnx/conv_common.h"
#include "../opcore.h"
#include "quant_ops.h"

static bool is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

/* a per-tensor value: a scalar or a 1-D tensor of one element */
static bool one_value(const ox_value *v) { return v->rank == 0 || (v->rank == 1 && v->numel == 1); }

/* a scale or zero point per tensor or per column: one value, or 1-D of n */
static bool per_col(const ox_value *v, int64_t n) {
  return one_value(v) || (v->rank == 1 && v->numel == n);
}

typedef struct qp_state {
  int b_in, zb_in; /* where B and its zero point are among the inputs */
  bool trans_a, trans_b;
  float alpha;
  bool has_packed;
  ox_qgemm_b packed;
} qp_state;

static void qp_release(void *st) {
  qp_state *s = st;
  if (!s) return;
  if (s->has_packed) ox_qgemm_free_b(&s->packed);
  free(s);
}

/* B (K x N, or N x K when transposed) packed with its zero point; a
 * transposed B is first copied into K x N order. */
static int pack_b(const ox_value *B, bool trans, const ox_value *zb, ox_qgemm_b *out, ox_err *e) {
  int64_t K = trans ? B->dims[1] : B->dims[0], N = trans ? B->dims[0] : B->dims[1];
  const uint8_t *src = B->data;
  uint8_t *t = NULL;
  if (trans) {
    t = malloc((size_t)(K * N > 0 ? K * N : 1));
    if (!t) return ox_err_set(e, OX_ENOMEM, "out of memory");
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++) t[k * N + n] = src[n * K + k];
    src = t;
  }
  int rc = ox_qgemm_pack_b(src, B->dtype == OX_INT8, K, N, N, zb ? zb->data : NULL,
                           zb ? zb->numel : 0, out, e);
  free(t);
  return rc;
}

static bool input_given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

static int qp_prepare_at(const ox_kinfo *info, void **state, ox_err *e, int b_in, int zb_in) {
  qp_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->b_in = b_in;
  s->zb_in = zb_in;
  s->trans_a = ox_node_attr_int(info->node, "transA", 0) != 0;
  s->trans_b = ox_node_attr_int(info->node, "transB", 0) != 0;
  s->alpha = ox_node_attr_float(info->node, "alpha", 1.0f);
  ox_value *const *cin = info->const_inputs;
  const ox_value *B = cin && (size_t)b_in < info->n_inputs ? cin[b_in] : NULL;
  bool zb_given = input_given(info->node, (size_t)zb_in);
  const ox_value *zb = zb_given && cin && (size_t)zb_in < info->n_inputs ? cin[zb_in] : NULL;
  if (!B || B->kind != OX_VAL_TENSOR || B->rank != 2 || !is_q8(B->dtype) || (zb_given && !zb))
    return OX_OK; /* packed per run (and checked there) */
  int64_t N = s->trans_b ? B->dims[0] : B->dims[1];
  if (zb && (zb->dtype != B->dtype || !per_col(zb, N))) return OX_OK; /* reported at run time */
  if (pack_b(B, s->trans_b, zb, &s->packed, e)) return oc_prep_fail(info, e, "%s", e->msg);
  s->has_packed = true;
  return OX_OK;
}

static int dqmm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return qp_prepare_at(info, state, e, 1, 3);
}
static int mmitf_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return qp_prepare_at(info, state, e, 1, 5);
}
static int qgemm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return qp_prepare_at(info, state, e, 3, 5);
}

/* The checks every product makes of B and its zero point; *K and *N out.
 * batched: B may also be [batch..., K, N] (MatMulIntegerToFloat). */
static int check_b_of(ox_kctx *c, const ox_value *B, bool trans, const ox_value *zb, int64_t *K,
                      int64_t *N, bool batched) {
  if (!B || !is_q8(B->dtype)) return ox_kctx_fail(c, OX_ERUNTIME, "B must be int8 or uint8");
  if (B->rank != 2 && !(batched && B->rank > 2))
    return ox_kctx_fail(c, OX_ERUNTIME, "B must be 2-D, not of rank %zu", B->rank);
  *K = trans ? B->dims[1] : B->dims[B->rank - 2];
  *N = trans ? B->dims[0] : B->dims[B->rank - 1];
  if (zb && zb->dtype != B->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "b_zero_point must have B's type");
  if (zb && !per_col(zb, *N))
    return ox_kctx_fail(c, OX_ERUNTIME, "b_zero_point must be one value or 1-D of N = %lld values",
                        (long long)*N);
  return OX_OK;
}

static int check_b(ox_kctx *c, const ox_value *B, bool trans, const ox_value *zb, int64_t *K,
                   int64_t *N) {
  return check_b_of(c, B, trans, zb, K, N, false);
}

/* element i of a float or float16 tensor */
static float fval(const ox_value *v, int64_t i) {
  float f;
  if (v->dtype == OX_FLOAT) return ((const float *)v->data)[i];
  oc_to_f32((const uint16_t *)v->data + i, v->dtype, &f, 1);
  return f;
}

static int check_scale_of(ox_kctx *c, const ox_value *v, int64_t n, const char *what, int32_t ft) {
  if (!v || v->dtype != ft)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be %s", what,
                        ft == OX_FLOAT ? "float" : "float16 (the type of a_scale)");
  if (n == 1 ? !one_value(v) : !per_col(v, n)) {
    if (n == 1) return ox_kctx_fail(c, OX_ERUNTIME, "%s must be one value", what);
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be one value or 1-D of N = %lld values", what,
                        (long long)n);
  }
  return OX_OK;
}

static int check_scale(ox_kctx *c, const ox_value *v, int64_t n, const char *what) {
  return check_scale_of(c, v, n, what, OX_FLOAT);
}

/* The packed B of this run: the prepared one, or *local packed now. */
static const ox_qgemm_b *run_b(ox_kctx *c, const qp_state *s, const ox_value *B, const ox_value *zb,
                               ox_qgemm_b *local) {
  if (s->has_packed) return &s->packed;
  ox_err e = {0};
  if (pack_b(B, s->trans_b, zb, local, &e)) {
    ox_kctx_fail(c, e.code, "%s", e.msg);
    return NULL;
  }
  return local;
}

/* ---- MatMulIntegerToFloat and DynamicQuantizeMatMul ---- */

/* Y[..., N] = float(acc) * a_scale * b_scale[n] + bias[n] for A (M x K
 * rows of 8-bit values, zero point za) times B; scales, bias and Y of type
 * ft (float, or float16: computed in float, Y rounded once at the end).
 * A B of [batch..., K, N] (MatMulIntegerToFloat's batched product) needs an
 * A of the same batch dimensions; each batch is then one product. */
static int to_float_product(ox_kctx *c, const qp_state *s, const ox_value *A_shape, const void *A,
                            bool a_signed, const void *za, float a_scale, const ox_value *B,
                            const ox_value *bs, const ox_value *zb, const ox_value *bias,
                            int32_t ft) {
  int64_t K = 0, N = 0, nb = 1;
  if (check_b_of(c, B, false, zb, &K, &N, true) || check_scale_of(c, bs, N, "b_scale", ft))
    return OX_ERUNTIME;
  if (A_shape->rank < 1) return ox_kctx_fail(c, OX_ERUNTIME, "A must have rank 1 or more");
  if (B->rank > 2) {
    bool same = A_shape->rank == B->rank;
    for (size_t i = 0; same && i + 2 < B->rank; i++) {
      same = A_shape->dims[i] == B->dims[i];
      nb *= B->dims[i];
    }
    if (!same)
      return ox_kctx_fail(c, OX_ERUNTIME, "a B of rank %zu needs an A of the same batch dimensions",
                          B->rank);
  }
  if (A_shape->dims[A_shape->rank - 1] != K)
    return ox_kctx_fail(c, OX_ERUNTIME, "A's last dimension (%lld) differs from B's K (%lld)",
                        (long long)A_shape->dims[A_shape->rank - 1], (long long)K);
  if (bias && (bias->dtype != ft || bias->rank != 1 || bias->numel != N))
    return ox_kctx_fail(c, OX_ERUNTIME, "bias must be %s of N = %lld values",
                        ft == OX_FLOAT ? "float" : "float16", (long long)N);
  if (A_shape->rank >= OC_MAXRANK) return ox_kctx_fail(c, OX_ERUNTIME, "A's rank is too large");
  int64_t M = 1, dims[OC_MAXRANK];
  size_t rank = 0;
  for (size_t i = 0; i + 1 < A_shape->rank; i++) M *= (dims[rank++] = A_shape->dims[i]);
  dims[rank++] = N;
  ox_value *y = ox_kctx_output(c, 0, ft, dims, rank);
  if (!y) return OX_ERUNTIME;
  if (M * N == 0) return OX_OK;
  bool half = ft != OX_FLOAT;
  /* the factors per column, then (float16) the bias and the result in float */
  float *scale = malloc((size_t)N * (half ? 2 : 1) * sizeof(float));
  float *yf = half ? malloc((size_t)(M * N) * sizeof(float)) : y->data;
  if (!scale || !yf) {
    free(scale);
    if (half) free(yf);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  for (int64_t n = 0; n < N; n++) scale[n] = a_scale * fval(bs, bs->numel == 1 ? 0 : n);
  const float *bf = bias ? bias->data : NULL;
  if (bias && half) {
    oc_to_f32(bias->data, ft, scale + N, N);
    bf = scale + N;
  }
  ox_qgemm_epi epi = {scale, bf, N, bias ? N : 0, NULL, NULL};
  int rc = OX_OK;
  int64_t Mb = M / nb; /* rows per batch */
  for (int64_t b = 0; b < nb && !rc; b++) {
    ox_qgemm_b local;
    const ox_qgemm_b *pb = &s->packed;
    ox_err e = {0};
    if (!s->has_packed) {
      if (ox_qgemm_pack_b((const uint8_t *)B->data + b * K * N, B->dtype == OX_INT8, K, N, N,
                          zb ? zb->data : NULL, zb ? zb->numel : 0, &local, &e)) {
        rc = ox_kctx_fail(c, e.code, "%s", e.msg);
        break;
      }
      pb = &local;
    }
    if (ox_qgemm_scaled_on(NULL, (const uint8_t *)A + b * Mb * K, a_signed, Mb, K, za, za ? 1 : 0,
                           pb, &epi, yf + b * Mb * N, N, ox_kctx_pool(c), &e))
      rc = ox_kctx_fail(c, e.code, "%s", e.msg);
    if (pb == &local) ox_qgemm_free_b(&local);
  }
  if (!rc && half) oc_from_f32(yf, ft, y->data, M * N);
  if (half) free(yf);
  free(scale);
  return rc;
}

static int mmitf_run(ox_kctx *c, void *st) {
  ox_value *A = ox_kctx_input(c, 0), *B = ox_kctx_input(c, 1), *as = ox_kctx_input(c, 2),
           *bs = ox_kctx_input(c, 3), *za = ox_kctx_input(c, 4), *zb = ox_kctx_input(c, 5),
           *bias = ox_kctx_input(c, 6);
  if (!A || !is_q8(A->dtype)) return ox_kctx_fail(c, OX_ERUNTIME, "A must be int8 or uint8");
  int32_t ft = as && as->dtype == OX_FLOAT16 ? OX_FLOAT16 : OX_FLOAT;
  if (check_scale_of(c, as, 1, "a_scale", ft)) return OX_ERUNTIME;
  if (za && (za->dtype != A->dtype || !one_value(za)))
    return ox_kctx_fail(c, OX_ERUNTIME, "a_zero_point must be one value of A's type");
  return to_float_product(c, st, A, A->data, A->dtype == OX_INT8, za ? za->data : NULL, fval(as, 0),
                          B, bs, zb, bias, ft);
}

static int dqmm_run(ox_kctx *c, void *st) {
  ox_value *A = ox_kctx_input(c, 0), *B = ox_kctx_input(c, 1), *bs = ox_kctx_input(c, 2),
           *zb = ox_kctx_input(c, 3), *bias = ox_kctx_input(c, 4);
  if (!A || A->dtype != OX_FLOAT) return ox_kctx_fail(c, OX_ERUNTIME, "A must be float");
  /* A to uint8 as DynamicQuantizeLinear: the range with 0 in it, scale
   * (max - min) / 255, the zero point rounded half to even */
  const ox_q8_kernels *q = ox_q8_kernels_get();
  float lo = 0, hi = 0;
  if (A->numel) q->range(A->data, A->numel, &lo, &hi);
  float scale = (hi - lo) / 255.0f;
  float zp = scale != 0.0f ? nearbyintf((0.0f - lo) / scale) : 0.0f;
  zp = zp < 0 ? 0 : zp > 255 ? 255 : zp == zp ? zp : 0;
  uint8_t *aq = malloc((size_t)(A->numel > 0 ? A->numel : 1));
  if (!aq) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  if (scale != 0.0f && scale == scale)
    q->from_f32(A->data, A->numel, scale, zp, false, aq);
  else
    memset(aq, (int)zp, (size_t)A->numel);
  uint8_t za = (uint8_t)zp;
  int rc = to_float_product(c, st, A, aq, false, &za, scale, B, bs, zb, bias, OX_FLOAT);
  free(aq);
  return rc;
}

/* ---- QGemm ---- */

/* C's broadcast to M x N: (), (1), (N), (1, N), (M, 1) or (M, N); its
 * strides per row and column, or false */
static bool c_strides(const ox_value *C, int64_t M, int64_t N, int64_t *sm, int64_t *sn) {
  int64_t d0 = C->rank == 2 ? C->dims[0] : 1, d1 = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
  if (C->rank > 2 || (d0 != 1 && d0 != M) || (d1 != 1 && d1 != N)) return false;
  *sm = d0 == 1 ? 0 : d1;
  *sn = d1 == 1 ? 0 : 1;
  return true;
}

typedef struct qgemm_out {
  const int32_t *acc, *C;
  int64_t N, cm, cn;
  const float *scale; /* per column, or one */
  bool per_col, quant, y_signed;
  int32_t zy;
  void *y;
} qgemm_out;

static void qgemm_rows(void *arg, int64_t m0, int64_t m1) {
  const qgemm_out *o = arg;
  for (int64_t m = m0; m < m1; m++)
    for (int64_t n = 0; n < o->N; n++) {
      /* in 64 bits: the sum of two int32 may not fit one */
      int64_t a = (int64_t)o->acc[m * o->N + n] + (o->C ? o->C[m * o->cm + n * o->cn] : 0);
      float v = (float)a * o->scale[o->per_col ? n : 0];
      if (!o->quant) {
        ((float *)o->y)[m * o->N + n] = v;
        continue;
      }
      float lo = o->y_signed ? -128.0f : 0.0f, hi = o->y_signed ? 127.0f : 255.0f;
      float r = nearbyintf(v) + (float)o->zy;
      r = r != r ? (float)o->zy : r < lo ? lo : r > hi ? hi : r;
      if (o->y_signed)
        ((int8_t *)o->y)[m * o->N + n] = (int8_t)r;
      else
        ((uint8_t *)o->y)[m * o->N + n] = (uint8_t)r;
    }
}

static int qgemm_run(ox_kctx *c, void *st) {
  const qp_state *s = st;
  ox_value *in[9];
  for (size_t i = 0; i < 9; i++) in[i] = ox_kctx_input(c, i);
  ox_value *A = in[0], *as = in[1], *za = in[2], *B = in[3], *bs = in[4], *zb = in[5], *C = in[6],
           *ys = in[7], *zy = in[8];
  if (!A || !is_q8(A->dtype) || A->rank != 2)
    return ox_kctx_fail(c, OX_ERUNTIME, "A must be a 2-D int8 or uint8 tensor");
  if (!za || !zb) return ox_kctx_fail(c, OX_ERUNTIME, "a_zero_point and b_zero_point are required");
  if (zy && !ys) return ox_kctx_fail(c, OX_ERUNTIME, "y_zero_point is given without y_scale");
  int64_t K = 0, N = 0, M = s->trans_a ? A->dims[1] : A->dims[0];
  int64_t Ka = s->trans_a ? A->dims[0] : A->dims[1];
  if (check_b(c, B, s->trans_b, zb, &K, &N)) return OX_ERUNTIME;
  if (Ka != K)
    return ox_kctx_fail(c, OX_ERUNTIME, "A's K (%lld) differs from B's K (%lld)", (long long)Ka,
                        (long long)K);
  if (check_scale(c, as, 1, "a_scale") || check_scale(c, bs, N, "b_scale") ||
      (ys && check_scale(c, ys, 1, "y_scale")))
    return OX_ERUNTIME;
  if (za->dtype != A->dtype || !one_value(za))
    return ox_kctx_fail(c, OX_ERUNTIME, "a_zero_point must be one value of A's type");
  if (bs->numel != zb->numel)
    return ox_kctx_fail(c, OX_ERUNTIME, "b_scale and b_zero_point must have the same shape");
  if (zy && (!is_q8(zy->dtype) || !one_value(zy)))
    return ox_kctx_fail(c, OX_ERUNTIME, "y_zero_point must be one int8 or uint8 value");
  int64_t cm = 0, cn = 0;
  if (C && (C->dtype != OX_INT32 || !c_strides(C, M, N, &cm, &cn)))
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "C must be int32 of shape (), (N), (1, N), (M, 1) or (M, N)");
  int64_t dims[2] = {M, N};
  ox_value *y = ox_kctx_output(c, 0, zy ? zy->dtype : OX_FLOAT, dims, 2);
  if (!y) return OX_ERUNTIME;
  if (M * N == 0) return OX_OK;
  int32_t *acc = calloc((size_t)(M * N), sizeof(int32_t));
  uint8_t *at = s->trans_a ? malloc((size_t)(M * K > 0 ? M * K : 1)) : NULL;
  float *scale = malloc((size_t)N * sizeof(float));
  if (!acc || !scale || (s->trans_a && !at)) {
    free(acc);
    free(at);
    free(scale);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  const uint8_t *ad = A->data;
  if (at) {
    for (int64_t m = 0; m < M; m++)
      for (int64_t k = 0; k < K; k++) at[m * K + k] = ad[k * M + m];
    ad = at;
  }
  /* onnxruntime's factor: alpha * a_scale * b_scale (/ y_scale), in float */
  float a_s = *(const float *)as->data;
  for (int64_t n = 0; n < bs->numel; n++) {
    scale[n] = s->alpha * a_s * ((const float *)bs->data)[n];
    if (ys) scale[n] /= *(const float *)ys->data;
  }
  int rc = OX_OK;
  if (K > 0) {
    ox_qgemm_b local;
    const ox_qgemm_b *pb = run_b(c, s, B, zb, &local);
    ox_err e = {0};
    if (!pb)
      rc = OX_ERUNTIME;
    else if (ox_qgemm(ad, A->dtype == OX_INT8, M, K, za->data, 1, pb, acc, N, ox_kctx_pool(c), &e))
      rc = ox_kctx_fail(c, e.code, "%s", e.msg);
    if (pb == &local) ox_qgemm_free_b(&local);
  }
  if (!rc) {
    qgemm_out o = {acc,
                   C ? C->data : NULL,
                   N,
                   cm,
                   cn,
                   scale,
                   bs->numel > 1,
                   zy != NULL,
                   zy && zy->dtype == OX_INT8,
                   !zy                    ? 0
                   : zy->dtype == OX_INT8 ? *(const int8_t *)zy->data
                                          : *(const uint8_t *)zy->data,
                   y->data};
    ox_parallel_for(ox_kctx_pool(c), M, 1 + 16384 / N, qgemm_rows, &o);
  }
  free(acc);
  free(at);
  free(scale);
  return rc;
}

const ox_kernel_def ox_ops_contrib_quant[] = {
    {OX_CONTRIB_DOMAIN, "DynamicQuantizeMatMul", 1, 1, dqmm_prepare, dqmm_run, qp_release},
    {OX_CONTRIB_DOMAIN, "MatMulIntegerToFloat", 1, 1, mmitf_prepare, mmitf_run, qp_release},
    {OX_CONTRIB_DOMAIN, "QGemm", 1, 1, qgemm_prepare, qgemm_run, qp_release},
    /* quant_eltwise.c, and qfused.c's kernels */
    {OX_CONTRIB_DOMAIN, "QLinearSigmoid", 1, 1, ox_q_sigmoid_prepare, ox_qlookup_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearLeakyRelu", 1, 1, ox_q_leaky_prepare, ox_qlookup_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearAdd", 1, 1, NULL, ox_qlinear_add_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearMul", 1, 1, NULL, ox_qlinear_mul_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearConcat", 1, 1, ox_q_concat_prepare, ox_q_concat_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearWhere", 1, 1, NULL, ox_q_where_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearGlobalAveragePool", 1, 1, ox_q_pool_prepare, ox_q_pool_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearAveragePool", 1, 1, ox_q_pool_prepare, ox_q_pool_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearSoftmax", 1, 1, ox_q_softmax_prepare, ox_q_softmax_run, NULL},
    {OX_CONTRIB_DOMAIN, "QLinearConv", 1, 1, ox_q_conv_prepare, ox_q_conv_run, ox_conv_release},
    {OX_CONTRIB_DOMAIN, "QAttention", 1, 1, ox_q_attn_prepare, ox_q_attn_run, ox_q_attn_release},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
