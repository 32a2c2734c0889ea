/* qconv_dw.h - depthwise 8-bit convolution (one input and one output
 * channel per group, 2-D, kernels up to 7 x 7, strides 1 and 2, no
 * dilation) with the requantisation of qconv.h, on AVX-512 (qconv_dw.c). */
#ifndef OX_QCONV_DW_H
#define OX_QCONV_DW_H

#include <stdbool.h>
#include <stdint.h>

#include "nn.h"
#include "qconv.h"

/* whether ox_qconv_dw_run takes this geometry */
bool ox_qconv_dw_supported(const ox_nn_geom *g);
/* One image: x is C planes of g->in_size unsigned bytes (zero point zx), w
 * C x k_size weight bytes (signed or not) with zero points zw (NULL: 0;
 * zw_n 1 or C values of w's type), y C planes of g->out_size bytes of the
 * output type (q: per-channel mult and bias, zy, lo, hi).
 * OX_EUNSUPPORTED when the geometry or the CPU is not one it takes. */
int ox_qconv_dw_run(const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx, const void *w,
                    bool w_signed, const void *zw, int64_t zw_n, const ox_qconv_req *q, void *y,
                    ox_thread_pool *pool, ox_err *e);

#endif
