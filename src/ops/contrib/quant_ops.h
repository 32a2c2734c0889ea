/* quant_ops.h - the kernels of quant_eltwise.c and quant_attn.c, listed in quant.c's table
 * (ox_ops_contrib_quant, the one table of the family registry.c knows). */
#ifndef OX_OPS_CONTRIB_QUANT_OPS_H
#define OX_OPS_CONTRIB_QUANT_OPS_H

#include "../../runtime/kernel.h"

int ox_q_sigmoid_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_leaky_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_concat_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_concat_run(ox_kctx *c, void *state);
int ox_q_where_run(ox_kctx *c, void *state);
/* QLinearGlobalAveragePool and QLinearAveragePool */
int ox_q_pool_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_pool_run(ox_kctx *c, void *state);
int ox_q_softmax_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_softmax_run(ox_kctx *c, void *state);
/* com.microsoft's QLinearConv (release: ox_conv_release) */
int ox_q_conv_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_conv_run(ox_kctx *c, void *state);
/* QAttention (quant_attn.c) */
int ox_q_attn_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_q_attn_run(ox_kctx *c, void *state);
void ox_q_attn_release(void *state);

#endif
