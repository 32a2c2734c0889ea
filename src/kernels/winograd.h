/* winograd.h - 3 x 3, stride-1 float convolutions by Winograd's minimal
 * filtering F(4 x 4, 3 x 3): each 6 x 6 input tile and each kernel are
 * transformed, 36 independent products (output channels x input channels
 * by input channels x tiles) replace the 9 taps, and each product tile
 * gives a 4 x 4 output tile: 36 multiply-adds per input channel for 16
 * outputs instead of 144. The transforms round differently from the direct
 * sum (docs/numerics.md). AVX-512 (the GEMM's 12 x 32 tiles), and the
 * WebAssembly SIMD128 build (winograd_wasm.c: the 4 x 8 tiles). */
#ifndef OX_KERNELS_WINOGRAD_H
#define OX_KERNELS_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"
#include "nn.h"

/* The transformed kernels of one convolution (M outputs, C inputs). */
typedef struct ox_wino ox_wino;

/* Whether a 2-D convolution with this geometry, one group, C input and M
 * output channels runs faster this way on this CPU (kernel 3 x 3, strides
 * and dilations 1, pads at most 2, images and channel counts large enough
 * for the tiles to pay). */
bool ox_wino_fits(const ox_nn_geom *g, int64_t C, int64_t M);

/* Transforms and packs W (M x C x 3 x 3, row-major). NULL with *e set on
 * OOM. */
ox_wino *ox_wino_pack(int64_t M, int64_t C, const float *w, ox_err *e);
void ox_wino_free(ox_wino *wp);

/* Y (N x M x OH x OW) = the convolution of X (N x C x IH x IW) + bias[m]
 * (NULL: none), then the epilogue ep (NULL: none; its residual laid out
 * like Y). Returns OX_OK, or OX_ENOMEM when the threads' buffers could not
 * be had (Y then incomplete). */
int ox_wino_conv(const ox_wino *wp, const ox_nn_geom *g, int64_t N, const float *x,
                 const float *bias, const ox_sgemm_epi *ep, float *y, ox_thread_pool *pool);

#endif
