/* quant.c - kernels of onnxruntime's com.microsoft the QOperator forms (QLinear*, QGemm,
 * QAttention), DynamicQuantizeMatMul and MatMulIntegerToFloat (schemas in
 * src/schema/schema_contrib_quant.c). */
#include "../../schema/schema_hand.h"
#include "../opcore.h"

const ox_kernel_def ox_ops_contrib_quant[] = {
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
