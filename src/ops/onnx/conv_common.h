/* conv_common.h - what the float (conv.c) and integer (conv_int.c)
 * convolution kernels share: the per-node state, its creation and release,
 * and the shape check of X and W. */
#ifndef OX_OPS_CONV_COMMON_H
#define OX_OPS_CONV_COMMON_H

#include <pthread.h>
#include <stdatomic.h>

#include "../../kernels/conv_direct.h"
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
  /* com.microsoft FusedConv's activations the epilogue has not: applied to
   * Y after it (OX_CONV_POST_*) */
  int post;
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
  /* FusedConv followed by its MaxPool (attribute max_pool, src/opt/conv_maxpool.c): Y is the
   * 3 x 3 stride-2 unpadded max pool of the convolution's result */
  bool max_pool;
  /* the Winograd kernels of a constant 3 x 3 W, made on the first run whose
   * image qualifies (a 7 x 7 map never does: no memory spent on it); a
   * failed attempt is not repeated */
  _Atomic(ox_wino *) wino;
  atomic_bool wino_failed;
  pthread_mutex_t wino_mu;
} conv_state;

enum { OX_CONV_POST_NONE, OX_CONV_POST_TANH, OX_CONV_POST_SIGMOID };

/* Prefixes the error with the node: "node 'name' (Op): ..." */
int ox_conv_prep_err(const ox_kinfo *info, ox_err *e);
/* A state with the node's convolution attributes read (NULL with *e set). */
conv_state *ox_conv_state_new(const ox_kinfo *info, ox_err *e);
void ox_conv_release(void *st);
/* Checks X and W (ranks, channels per group) and fills the geometry and Y's
 * dims; fails naming the node. */
int ox_conv_shapes(ox_kctx *ctx, const conv_state *s, const ox_value *x, const ox_value *w,
                   ox_nn_geom *g, int64_t *ydims);

/* com.microsoft FusedConv (contrib/nn.c's table): prepare and run */
int ox_conv_prepare_ms_fused(const ox_kinfo *info, void **state, ox_err *e);
int ox_conv_run_ms_fused(ox_kctx *ctx, void *st);

/* Float32 views of a convolution's X, W, B and Y (other float types
 * widened into owned buffers): conv.c's staging, shared with
 * conv_transpose.c */
typedef struct fstage {
  const float *xf, *wf, *bf;
  float *yf;
  float *own[4];
} fstage;
int ox_conv_stage_in(ox_kctx *ctx, fstage *st, const ox_value *x, const ox_value *w,
                     const ox_value *b, ox_value *y);
int ox_conv_stage_out(fstage *st, int rc, ox_value *y);
/* A float tensor of the wanted type (want 0: any float type), else an error naming `what` */
int ox_conv_check_float(ox_kctx *ctx, const ox_value *v, const char *what, int32_t want);
/* Packs constant weights per group (ConvTranspose's transposed) */
int ox_conv_pack_groups(const ox_kinfo *info, conv_state *s, const ox_value *w, bool transposed,
                        ox_err *e);

#endif
