/* gqa.c - kernels of onnxruntime's com.microsoft GroupQueryAttention, RotaryEmbedding and
 * SparseAttention (schemas in src/schema/schema_contrib_gqa.c). */
#include "../../schema/schema_hand.h"
#include "../opcore.h"

const ox_kernel_def ox_ops_contrib_gqa[] = {
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
