/* convt_wasm.h - the WebAssembly SIMD128 ConvTranspose of 2 x 2 kernels at
 * stride 2 (a decoder's upsampling: PP-OCR's DBNet head, U-Nets): every
 * output pixel takes exactly one tap, so each input pixel's Cg channels
 * make its 2 x 2 outputs directly, without conv_transpose.c's GEMM into
 * columns and the pass that scatters them.
 *
 * Why: with one or a few output channels (DBNet's last layer, 24 -> 1) the
 * GEMM's product has 4 rows: its tiles are mostly the packing of X, and the
 * columns make a second pass over the output. Here the four taps of four
 * (or eight) input pixels stay in registers while the channels pass, and
 * the outputs are interleaved by shuffles as they are stored. */
#ifndef OX_KERNELS_CONVT_WASM_H
#define OX_KERNELS_CONVT_WASM_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/threadpool.h"
#include "nn.h"

/* Whether this level takes the layer: a -msimd128 build with SIMD128 in
 * use (ONNXC_ISA=portable clears it), g 2-D with kernels equal to the
 * strides of 2 and neither dilation nor padding (g->in: Y's spatial dims,
 * g->out: X's, as conv_transpose.c fills it), and Cg input channels per
 * group at most 128 (the input rows read once per output channel stay in
 * L1 / L2). */
bool ox_convt2_wasm_fits(const ox_nn_geom *g, int64_t Cg);

/* Y (N x G*Mg x 2H x 2W) = bias[m] + sum over c of X (N x G*Cg x H x W)
 * times W (G*Cg x Mg x 2 x 2), per group; bias NULL: none. Each output
 * is 0 plus the products in channel order, then the bias added: the sums
 * of conv_transpose.c's GEMM and tiles, in their order. */
void ox_convt2_wasm(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Cg,
                    int64_t Mg, const float *x, const float *w, const float *bias, float *y);

#endif
