/* ops_ms_gqa.c - C generators of onnxruntime's com.microsoft GroupQueryAttention, SparseAttention,
 * RotaryEmbedding, MatMulNBits and GatherBlockQuantized.
 * Semantics as the runtime's kernels in src/ops/contrib/. */
#include "cg_impl.h"

const cg_op ox_cg_ops_ms_gqa[] = {
    {NULL, NULL},
};
