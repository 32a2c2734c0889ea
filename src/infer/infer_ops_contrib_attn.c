/* infer_ops_contrib_attn.c - shape functions of onnxruntime's com.microsoft
 * Attention and MultiHeadAttention (schemas in src/schema/schema_contrib_attn.c). */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

const ox_infer_def ox_infer_defs_contrib_attn[] = {
    {NULL, NULL, 0, 0, NULL},
};
