/* schema_contrib_gqa.c - schemas of onnxruntime's com.microsoft
 * GroupQueryAttention, RotaryEmbedding and SparseAttention, as onnxruntime's
 * docs/ContribOperators.md and its CPU kernels define them. Shape functions:
 * src/infer/infer_ops_contrib_gqa.c; kernels: src/ops/contrib/gqa.c. */
#include "schema_hand.h"

const ox_schema *const ox_schema_contrib_gqa[] = {NULL};
const size_t ox_schema_contrib_gqa_n = 0;
