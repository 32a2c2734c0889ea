/* conv_int.h - what conv_int.c lends com.microsoft's QLinearConv
 * (src/ops/contrib/quant_eltwise.c): QLinearConv's prepare (release:
 * ox_conv_release of conv_common.h), its run over NCHW, and a run over NHWC
 * x and y (channels_last) that moves the data around the same kernel. */
#ifndef OX_OPS_CONV_INT_H
#define OX_OPS_CONV_INT_H

#include "../../runtime/kernel.h"

int ox_qlinearconv_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_qlinearconv_run(ox_kctx *ctx, void *state);
int ox_qlinearconv_nhwc_run(ox_kctx *ctx, void *state);

#endif
