/* attn.c - kernels of onnxruntime's com.microsoft Attention and MultiHeadAttention
 * (schemas in src/schema/schema_contrib_attn.c). */
#include "../../schema/schema_hand.h"
#include "../opcore.h"

const ox_kernel_def ox_ops_contrib_attn[] = {
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
