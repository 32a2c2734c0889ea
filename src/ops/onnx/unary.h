/* unary.h - what other families borrow from the elementwise unary kernels
 * (unary.c): the contrib activations that are a standard one with other
 * attribute defaults run on the same kernel. */
#ifndef OX_OPS_ONNX_UNARY_H
#define OX_OPS_ONNX_UNARY_H

#include "../../runtime/kernel.h"

/* the run of every kernel of unary.c */
int ox_unary_run(ox_kctx *ctx, void *state);
/* QuickGelu: Swish's kernel with alpha 1.702 unless the node gives one */
int ox_unary_prepare_quick_gelu(const ox_kinfo *info, void **state, ox_err *e);
/* Gelu's kernel in its erf form, or its tanh form when tanh_form (the
 * node's attributes are not read) */
int ox_unary_prepare_gelu_form(const ox_kinfo *info, void **state, ox_err *e, bool tanh_form);
/* a prepared kernel's function on n elements of x into y (x may be y) of a
 * float type dt, spread over the pool */
void ox_unary_apply(const void *state, ox_thread_pool *pool, int32_t dt, const void *x, void *y,
                    int64_t n);

#endif
