/* infer_ops_contrib_quant.c - shape functions of onnxruntime's com.microsoft
 * the QOperator forms (QLinear*, QGemm, QAttention), DynamicQuantizeMatMul and MatMulIntegerToFloat
 * (schemas in src/schema/schema_contrib_quant.c). */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

const ox_infer_def ox_infer_defs_contrib_quant[] = {
    {NULL, NULL, 0, 0, NULL},
};
