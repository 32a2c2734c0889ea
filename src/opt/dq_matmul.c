/* dq_matmul.c - weight-only quantized matrix products to one node.
 *
 * Weight-only quantization (int8, and the int4/int2 blockwise form of
 * DequantizeLinear-21 that LLM quantizers write) leaves the activations in
 * float:
 *
 *   W = DequantizeLinear(Wq, scale [, zero_point])     Wq constant [K, N]
 *   Y = MatMul(A, W)
 *
 * Each such MatMul becomes an ai.onnxc MatMulDQFused(A, Wq, scale [, zp])
 * with attribute block_size (0: one scale, or one per column; and
 * int8_decode = 1 when the session asks for int8 decode products), whose
 * kernel packs Wq once at its own width and never makes the float W
 * (src/ops/matmul_dq.c). The scale layouts taken are those whose blocks
 * run down the columns: one value; one per column (axis 1, no blocks);
 * blocks of block_size rows (axis 0), with the block a whole number of the
 * rows that share a byte. Other layouts, float16 scales or an output type
 * other than float stay as they are. A DequantizeLinear left without
 * readers is dropped. */
#include <string.h>

#include "pass.h"

static int weight_bits(int32_t dt) {
  if (dt == OX_INT8 || dt == OX_UINT8) return 8;
  if (dt == OX_INT4 || dt == OX_UINT4) return 4;
  if (dt == OX_INT2 || dt == OX_UINT2) return 2;
  return 0;
}

/* block_size of the fused node, or -1 when the DequantizeLinear at `d`
 * does not have a layout the kernel takes */
static int64_t dq_layout(const ox_pass_view *v, int64_t d) {
  const ox_node *dq = &v->nodes[d];
  if (!ox_opt_op_is(dq, "DequantizeLinear") || v->opsets[d] < 10 || dq->n_input < 2 ||
      dq->n_output != 1)
    return -1;
  if (v->opsets[d] >= 21 && ox_node_attr_int(dq, "output_dtype", 0) != 0 &&
      ox_node_attr_int(dq, "output_dtype", 0) != OX_FLOAT)
    return -1;
  const ox_tensor *q = v->constant(v, dq->input[0]), *s = v->constant(v, dq->input[1]);
  const ox_tensor *z = ox_opt_given(dq, 2) ? v->constant(v, dq->input[2]) : NULL;
  if (!q || !s || q->n_dims != 2 || q->dims[0] < 1 || q->dims[1] < 1 || s->data_type != OX_FLOAT)
    return -1;
  int bits = weight_bits(q->data_type);
  if (!bits || (ox_opt_given(dq, 2) && (!z || z->data_type != q->data_type))) return -1;
  int64_t K = q->dims[0], N = q->dims[1];
  int64_t axis = ox_node_attr_int(dq, "axis", 1);
  if (axis < 0) axis += 2;
  int64_t bs = v->opsets[d] >= 21 ? ox_node_attr_int(dq, "block_size", 0) : 0;
  int64_t ns = ox_opt_elems(s);
  if (z) {
    if (ox_opt_elems(z) != ns || z->n_dims != s->n_dims) return -1;
    for (size_t i = 0; i < s->n_dims; i++)
      if (z->dims[i] != s->dims[i]) return -1;
  }
  if (bs == 0) {
    if (ns == 1) return 0;
    return axis == 1 && s->n_dims == 1 && s->dims[0] == N ? 0 : -1;
  }
  if (bs < 0 || axis != 0 || s->n_dims != 2 || s->dims[0] != (K + bs - 1) / bs || s->dims[1] != N)
    return -1;
  /* a block of rows must not split the 32-bit units holding several rows */
  if (bs < K && bs % (32 / bits)) return -1;
  return bs;
}

int ox_opt_dq_matmul(ox_pass_view *v) {
  bool any = false;
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    const ox_node *mm = &v->nodes[i];
    if (!ox_opt_op_is(mm, "MatMul") || mm->n_input != 2 || mm->n_output != 1 || !mm->output[0] ||
        !*mm->output[0])
      continue;
    int64_t d = ox_opt_producer(v, mm->input[1], i);
    if (d < 0 || v->repl[d]) continue;
    int64_t bs = dq_layout(v, d);
    if (bs < 0) continue;
    const ox_node *dq = &v->nodes[d];
    bool zp = ox_opt_given(dq, 2);
    ox_node *fn = ox_opt_new_node(v, mm, "MatMulDQFused", zp ? 4 : 3, 2);
    if (!fn) return v->e->code;
    fn->n_attribute = 0;
    ox_opt_add_int_attr(fn, "block_size", bs);
    if (v->low_bit_int8) ox_opt_add_int_attr(fn, "int8_decode", 1);
    fn->input[0] = mm->input[0];
    fn->input[1] = dq->input[0];
    fn->input[2] = dq->input[1];
    if (zp) fn->input[3] = dq->input[2];
    fn->output[0] = mm->output[0];
    v->repl[i] = fn;
    any = true;
  }
  if (any) ox_opt_drop_unread(v, "DequantizeLinear");
  return OX_OK;
}
