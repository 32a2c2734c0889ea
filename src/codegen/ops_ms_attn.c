/* ops_ms_attn.c - C generators of onnxruntime's com.microsoft Attention, MultiHeadAttention and
 * QAttention.
 * Semantics as the runtime's kernels in src/ops/contrib/. */
#include "cg_impl.h"

const cg_op ox_cg_ops_ms_attn[] = {
    {NULL, NULL},
};
