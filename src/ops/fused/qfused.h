/* qfused.h - qfused.c's integer elementwise kernels lent to onnxruntime's
 * com.microsoft QOperator forms (src/ops/contrib/quant_eltwise.c), whose
 * inputs are those of QLookupFused and QAddFused. In these forms an absent
 * output zero point gives the output the input's type. */
#ifndef OX_OPS_QFUSED_H
#define OX_OPS_QFUSED_H

#include "../../runtime/kernel.h"

/* QLookupFused's prepare for the lookup operator `op` ("Sigmoid",
 * "LeakyRelu" with attribute alpha, ...), and its run */
int ox_qlookup_prepare_op(const ox_kinfo *info, void **state, ox_err *e, const char *op);
int ox_qlookup_run(ox_kctx *ctx, void *state);
/* QLinearAdd and QLinearMul (inputs A, A_scale, A_zero_point, B, B_scale,
 * B_zero_point, C_scale, C_zero_point; numpy broadcasting); no state */
int ox_qlinear_add_run(ox_kctx *ctx, void *state);
int ox_qlinear_mul_run(ox_kctx *ctx, void *state);

#endif
