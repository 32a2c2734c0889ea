/* conv_common.h - what the float (conv.c) and integer (conv_int.c)
 * convolution kernels share: the per-node state, its creation and release,
 * and the shape check of X and W. */
#ifndef OX_OPS_CONV_COMMON_H
#define OX_OPS_CONV_COMMON_H

#include <pthread.h>
#include <stdatomic.h>

#include "../../kernels/gemm.h"
#include "../../kernels/nn.h"
#include "../../kernels/qconv.h"
#include "../../kernels/winograd.h"
#include "../../runtime/kernel.h"

typedef struct conv_state {
  ox_nn_attrs a;
  ox_sgemm_packed **packed; /* one per group when W is a constant float tensor */
  int64_t n_packed;
  const ox_value *packed_w; /* the constant W the packs were made from */
  int64_t out_padding[OX_NN_MAXD], out_shape[OX_NN_MAXD];
  size_t n_out_padding, n_out_shape;
  ox_sgemm_epi epi; /* FusedConv: activation (residual set per run) */
  /* QLinearConv / QLinearConvFused: integer weights packed per group */
  ox_qconv_w *qw;
  int64_t n_qw;
  const ox_value *qw_src; /* the constant W they were packed from */
  bool relu;              /* QLinearConvFused: a Relu before the requantisation */
  bool clip;              /* QLinearConvFused: a Clip to [clip_lo, clip_hi] there */
  float clip_lo, clip_hi;
  /* FusedConv prologue on X's channels (attributes pre_scale, pre_bias,
   * pre_relu): X[c] -> max(fma(X[c], pre_scale[c], pre_bias[c]), 0) */
  float *pre_scale, *pre_bias;
  int64_t n_pre;
  bool pre_relu;
  /* FusedConv with a gate (attribute in_scale, src/opt/conv_gate.c): X
   * multiplied by input 4 first, as the Mul it replaces (per channel: in
   * the GEMM's strips; any other broadcast: a product made first) */
  bool in_scale;
  /* FusedConv reading a channel shuffle's input (src/opt/channel_shuffle.c):
   * X's elements taken as shape shuffle_shape, channel c read from channel
   * (c mod shuffle) * C / shuffle + c div shuffle; 0: none */
  int64_t shuffle, shuffle_shape[4];
  /* the Winograd kernels of a constant 3 x 3 W, made on the first run whose
   * image qualifies (a 7 x 7 map never does: no memory spent on it); a
   * failed attempt is not repeated */
  _Atomic(ox_wino *) wino;
  atomic_bool wino_failed;
  pthread_mutex_t wino_mu;
} conv_state;

/* Prefixes the error with the node: "node 'name' (Op): ..." */
int ox_conv_prep_err(const ox_kinfo *info, ox_err *e);
/* A state with the node's convolution attributes read (NULL with *e set). */
conv_state *ox_conv_state_new(const ox_kinfo *info, ox_err *e);
void ox_conv_release(void *st);
/* Checks X and W (ranks, channels per group) and fills the geometry and Y's
 * dims; fails naming the node. */
int ox_conv_shapes(ox_kctx *ctx, const conv_state *s, const ox_value *x, const ox_value *w,
                   ox_nn_geom *g, int64_t *ydims);

/* 2-D depthwise convolution (conv_dw.c): Y (N x G*Mg x OH x OW) from X (N
 * x G x IH x IW) and W (G*Mg x 1 x KH x KW), + bias (NULL: none), then the
 * epilogue (NULL: none; residual laid out like Y). shuffle > 0 (dividing
 * G): group c reads X's channel (c mod shuffle) * G / shuffle + c div
 * shuffle (a channel shuffle before the layer); 0: channel c. */
void ox_conv_depthwise(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Mg,
                       const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                       int64_t shuffle, float *y);

/* conv_dw_blk.c: small maps (at most 256 or 1024 outputs) of 3 x 3 or 5 x 5
 * kernels, strides 1 or 2, with 16 channels in the vector lanes. blocks:
 * the number of 16-channel blocks when the geometry (and this CPU) takes
 * that path, else 0. blocked: those blocks of N images, done[n * blocks +
 * b] set for each one computed (a thread without scratch memory leaves
 * its blocks to the caller); the epilogue without residual. */
int64_t ox_conv_depthwise_blocks(const ox_nn_geom *g, int64_t C);
void ox_conv_depthwise_blocked(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C,
                               const float *x, const float *w, const float *bias,
                               const ox_sgemm_epi *epi, float *y, uint8_t *done);

#endif
