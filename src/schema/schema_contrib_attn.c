/* schema_contrib_attn.c - schemas of onnxruntime's com.microsoft
 * Attention and MultiHeadAttention, as onnxruntime's docs/ContribOperators.md and its CPU kernels
 * define them. Shape functions: src/infer/infer_ops_contrib_attn.c; kernels:
 * src/ops/contrib/attn.c. */
#include "schema_hand.h"

const ox_schema *const ox_schema_contrib_attn[] = {NULL};
const size_t ox_schema_contrib_attn_n = 0;
