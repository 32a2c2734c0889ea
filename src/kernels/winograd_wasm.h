/* winograd_wasm.h - the WebAssembly SIMD128 level of the Winograd
 * F(4 x 4, 3 x 3) convolution (winograd.h): the same transformed kernels
 * (U, packed for the GEMM's 4 x 8 SIMD128 tiles), the input and output
 * transforms four tiles per f32x4 vector, and the 36 products through the
 * GEMM's micro-kernel on the transformed input written straight in its
 * panel layout. winograd.c hands convolutions here when the module was
 * built with -msimd128 and ONNXC_ISA does not cap it to portable. */
#ifndef OX_KERNELS_WINOGRAD_WASM_H
#define OX_KERNELS_WINOGRAD_WASM_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"
#include "nn.h"

/* Whether this level can run (a -msimd128 build, SIMD128 in use, the GEMM's
 * 4 x 8 tiles): false elsewhere. */
bool ox_wino_wasm_ok(void);

/* Y (N x M x OH x OW) = the convolution of X (N x C x IH x IW) by the 36
 * transformed kernels u[xi] (M x C each, packed by ox_sgemm_packed_fill) +
 * bias[m] (NULL: none), then the epilogue ep (NULL: none; its residual laid
 * out like Y). OX_OK, OX_ENOMEM (no scratch: Y incomplete), or OX_ERUNTIME
 * where the level is not there. */
int ox_wino_wasm_conv(ox_sgemm_packed *const *u, int64_t M, int64_t C, const ox_nn_geom *g,
                      int64_t N, const float *x, const float *bias, const ox_sgemm_epi *ep,
                      float *y, ox_thread_pool *pool);

#endif
