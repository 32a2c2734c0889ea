/* conv_direct.h - convolutions computed directly rather than by GEMM:
 * 2-D depthwise (one input channel per group) and layers with a few output
 * positions per image. One dispatch table filled from the CPU probe
 * (base/cpu.h, capped by ONNXC_ISA); its entries per level in
 * conv_direct_avx512.c (hand-written AVX-512 planes, conv_dw_blk_avx512.c's
 * channel-blocked small maps), conv_direct_avx2.c and conv_direct_ref.c,
 * all compiled from conv_direct_body.h. Every path takes each output's
 * taps in order from the bias. */
#ifndef OX_KERNELS_CONV_DIRECT_H
#define OX_KERNELS_CONV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/cpu.h"
#include "../base/threadpool.h"
#include "gemm.h"
#include "nn.h"

/* y[m, p] = bias[m] + sum_k w[m, k] colt[p, k] for m in [m0, m1), p < P
 * (P small: the positions' columns transposed, one row of K each) */
typedef struct ox_few_job {
  const float *colt, *w, *bias; /* colt P x K, w M x K, bias M or NULL */
  float *y;                     /* M x P */
  int64_t P, K;
} ox_few_job;

/* 2-D depthwise convolution: Y (N x G*Mg x OH x OW) from X (N x G x IH x
 * IW) and W (G*Mg x 1 x KH x KW), + bias (NULL: none), then the epilogue
 * (NULL: none; residual laid out like Y). shuffle > 0 (dividing G): group
 * c reads X's channel (c mod shuffle) * G / shuffle + c div shuffle (a
 * channel shuffle before the layer); 0: channel c. */
typedef void (*ox_depthwise_fn)(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G,
                                int64_t Mg, const float *x, const float *w, const float *bias,
                                const ox_sgemm_epi *epi, int64_t shuffle, float *y);

/* 2-D convolution of few input channels (a network's stem: ox_conv_stem_fits):
 * Y (N x M x OH x OW) from X (N x C x IH x IW) and W (M x C x KH x KW), one
 * group, + bias (NULL: none), then the epilogue (NULL: none; residual laid
 * out like Y). The rows of the output are shared by the threads. Returns
 * OX_ENOMEM when its scratch could not be had (nothing written). */
typedef int (*ox_stem_fn)(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C,
                          int64_t M, const float *x, const float *w, const float *bias,
                          const ox_sgemm_epi *epi, float *y);

typedef struct ox_conv_direct_kernels {
  ox_isa isa; /* the level these entries were compiled for */
  ox_depthwise_fn depthwise;
  /* a parallel-for task over rows [m0, m1) of an ox_few_job */
  void (*few_task)(void *job, int64_t m0, int64_t m1);
  ox_stem_fn stem;
  /* the stem, then a MaxPool of 3 x 3 windows at stride 2 (unpadded) of
   * its result: y is N x M x ((OH - 3) / 2 + 1) x ((OW - 3) / 2 + 1); the
   * epilogue without residual. NULL where the level has none (SIMD128). */
  ox_stem_fn stem_pool;
} ox_conv_direct_kernels;

/* The entries for the probed (capped) level; never NULL. */
const ox_conv_direct_kernels *ox_conv_direct_kernels_get(void);
/* One level's entries (above the CPU's: the CPU's). */
const ox_conv_direct_kernels *ox_conv_direct_kernels_at(ox_isa isa);

/* The depthwise convolution at the probed level. */
void ox_conv_depthwise(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Mg,
                       const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                       int64_t shuffle, float *y);

/* Whether the stem kernel takes a layer of C input channels per group in G
 * groups: 2-D, one group, C <= 4, no dilation, strides 1 or 2, kernels up
 * to 11 x 11, output rows up to a few thousand, and a depth C * KH * KW of
 * at least 45 (below AVX-512: 100). At such depths (K_gemm = 75 or 147)
 * the GEMM's blocks are short and its im2col of a whole image is large. */
bool ox_conv_stem_fits(const ox_nn_geom *g, int64_t C, int64_t G);
/* The stem convolution at the probed level. */
int ox_conv_stem(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                 const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                 float *y);

/* Whether the stem-and-pool kernel takes the layer: as ox_conv_stem_fits
 * but at any depth (the fused pool keeps the output in cache, which the
 * GEMM's tiles gained nothing from), an output of at least 3 x 3, and a
 * level that has the kernel. */
bool ox_conv_stem_pool_fits(const ox_nn_geom *g, int64_t C, int64_t G);
/* The stem convolution and its 3 x 3 stride-2 max pool (stem_pool above). */
int ox_conv_stem_pool(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                      const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                      float *y);

#endif
