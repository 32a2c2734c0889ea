/* quant.h - what other families borrow from the linear quantization kernels (quant.c):
 * onnxruntime's com.microsoft QuantizeLinear / DequantizeLinear run on the standard ones. */
#ifndef OX_OPS_ONNX_QUANT_H
#define OX_OPS_ONNX_QUANT_H

#include "../../runtime/kernel.h"

/* prepare of the contrib forms: attribute axis (default 1), per-tensor and per-axis scales as
 * the standard operators take them from opset 13 (the contrib ones are opset 1) */
int ox_quant_prepare_contrib(const ox_kinfo *info, void **state, ox_err *e);
int ox_quantize_run(ox_kctx *ctx, void *state);
int ox_dequantize_run(ox_kctx *ctx, void *state);

#endif
