/* infer_ops_contrib_gqa.c - shape functions of onnxruntime's com.microsoft
 * GroupQueryAttention, RotaryEmbedding and SparseAttention (schemas in
 * src/schema/schema_contrib_gqa.c). */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

const ox_infer_def ox_infer_defs_contrib_gqa[] = {
    {NULL, NULL, 0, 0, NULL},
};
