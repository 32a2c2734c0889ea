/* matmul_dq.c - MatMulDQFused (domain ai.onnxc): MatMul(A, DequantizeLinear(
 * Wq, scale, zero_point)) with the weights constant, as src/opt/dq_matmul.c
 * makes it from weight-only quantized models.
 *
 * Inputs: A (float, [..., K]), Wq ([K, N], int8/uint8/int4/uint4/int2/
 * uint2), scale (float; one value, one per column [N], or one per block of
 * block_size rows [ceil(K / block_size), N]) and an optional zero point of
 * Wq's type and the scale's shape. Attribute block_size: 0 for one value or
 * one per column; int8_decode: 1 for one- and two-row products in int8
 * (see onnxc_session_options.low_bit_int8). Output: A's shape with K
 * replaced by N.
 *
 * The weights are packed once at their own width (src/kernels/wqgemm.c);
 * runs never make the float weights. */
#include <stdlib.h>

#include "../../kernels/wqgemm.h"
#include "../../schema/onnxc_ops.h"
#include "../opcore.h"

static int wq_bits(int32_t dt, bool *sgn) {
  *sgn = dt == OX_INT8 || dt == OX_INT4 || dt == OX_INT2;
  if (dt == OX_INT8 || dt == OX_UINT8) return 8;
  if (dt == OX_INT4 || dt == OX_UINT4) return 4;
  if (dt == OX_INT2 || dt == OX_UINT2) return 2;
  return 0;
}

typedef struct dq_state {
  ox_wq_matrix w;
  bool int8_decode;
} dq_state;

static void dq_release(void *state) {
  dq_state *s = state;
  if (!s) return;
  ox_wq_free(&s->w);
  free(s);
}

static int dq_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  const char *name = info->node->name ? info->node->name : "";
  const ox_value *q = info->n_inputs > 1 && info->const_inputs ? info->const_inputs[1] : NULL;
  const ox_value *s = info->n_inputs > 2 && info->const_inputs ? info->const_inputs[2] : NULL;
  const ox_value *z = info->n_inputs > 3 && info->const_inputs ? info->const_inputs[3] : NULL;
  bool zp_given = info->n_inputs > 3 && info->node->input[3] && *info->node->input[3];
  if (!q || !s || (zp_given && !z))
    return ox_err_set(
        e, OX_EMODEL,
        "node '%s' (MatMulDQFused): the weights, scale and zero point must be constants", name);
  bool sgn = false;
  int bits = wq_bits(q->dtype, &sgn);
  if (!bits || q->rank != 2 || q->numel < 1)
    return ox_err_set(
        e, OX_EMODEL,
        "node '%s' (MatMulDQFused): weights must be a non-empty 8-, 4- or 2-bit matrix", name);
  int64_t K = q->dims[0], N = q->dims[1];
  int64_t bs = ox_node_attr_int(info->node, "block_size", 0);
  int64_t n_blk = bs > 0 ? (K + bs - 1) / bs : 1;
  bool shape_ok = s->dtype == OX_FLOAT &&
                  (s->numel == 1 || (bs > 0 ? s->rank == 2 && s->dims[0] == n_blk && s->dims[1] == N
                                            : s->rank == 1 && s->dims[0] == N));
  if (bs < 0 || !shape_ok)
    return ox_err_set(e, OX_EMODEL,
                      "node '%s' (MatMulDQFused): scale must be float, one value or %s", name,
                      bs > 0 ? "[ceil(K / block_size), N]" : "[N]");
  if (z && (z->dtype != q->dtype || z->numel != s->numel))
    return ox_err_set(e, OX_EMODEL,
                      "node '%s' (MatMulDQFused): the zero point must have the weights' type and "
                      "the scale's shape",
                      name);
  dq_state *st = calloc(1, sizeof *st);
  if (!st) return ox_err_set(e, OX_ENOMEM, "out of memory");
  st->int8_decode = ox_node_attr_int(info->node, "int8_decode", 0) != 0;
  /* a per-column scale is one block of K rows */
  if (ox_wq_pack(bits, sgn, K, N, q->data, s->data, s->numel == 1 ? 1 : n_blk * N,
                 z ? z->data : NULL, bs > 0 ? bs : K, &st->w, e)) {
    free(st);
    return ox_err_prefix(e, "node '%s' (MatMulDQFused)", name);
  }
  *state = st;
  /* runs read only the packed copy: the quantized constants may go */
  for (size_t i = 1; i < info->n_inputs && i < 4; i++) info->consumed[i] = true;
  return OX_OK;
}

static int dq_run(ox_kctx *c, void *state) {
  const dq_state *st = state;
  const ox_wq_matrix *w = st ? &st->w : NULL;
  ox_value *a = ox_kctx_input(c, 0);
  if (!w) return ox_kctx_fail(c, OX_ERUNTIME, "weights were not prepared");
  if (!a || a->kind != OX_VAL_TENSOR || a->dtype != OX_FLOAT || a->rank < 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "A must be a float tensor");
  if (a->dims[a->rank - 1] != w->K)
    return ox_kctx_fail(c, OX_ERUNTIME, "inner dimensions differ: A has %lld, B has %lld",
                        (long long)a->dims[a->rank - 1], (long long)w->K);
  int64_t dims[OC_MAXRANK];
  size_t rank = a->rank == 1 ? 1 : a->rank;
  if (rank > OC_MAXRANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  for (size_t i = 0; i + 1 < a->rank; i++) dims[i] = a->dims[i];
  dims[rank - 1] = w->N;
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, dims, rank);
  if (!y) return OX_ERUNTIME;
  int64_t M = a->numel / w->K;
  if (M == 0) return OX_OK;
  ox_err e = {0};
  if (ox_wq_gemm(a->data, M, w->K, w, y->data, w->N, st->int8_decode, ox_kctx_pool(c), &e))
    return ox_kctx_fail(c, e.code, "%s", e.msg);
  return OX_OK;
}

const ox_kernel_def ox_ops_matmul_dq[] = {
    {OX_ONNXC_DOMAIN, "MatMulDQFused", 1, 1, dq_prepare, dq_run, dq_release},
    {0},
};
