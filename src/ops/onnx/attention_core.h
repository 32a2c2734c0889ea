/* attention_core.h - the per-(batch, head) attention loop of attention.c
 * (scores GEMM, additive mask, softmax, product with V, heads over the
 * pool) for other operators that bring their own projections and masks
 * (com.microsoft Attention and MultiHeadAttention). */
#ifndef OX_ATTENTION_CORE_H
#define OX_ATTENTION_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../base/threadpool.h"

typedef struct ox_attn_core {
  /* q [B, Hq, Sq, D], multiplied by sqrt(scale) in place; k [B, Hk, T, D];
   * v [B, Hk, T, Dv]; Hq a multiple of Hk */
  float *q;
  const float *k, *v;
  /* additive mask read at mask[b * mstride[0] + h * mstride[1] + i * mstride[2] + j]
   * (a stride 0 broadcasts), NULL: none */
  const float *mask;
  int64_t mstride[3];
  float scale;
  int64_t B, Hq, Hk, Sq, T, D, Dv;
  float *y;  /* [B, Hq, Sq, Dv] */
  float *qk; /* NULL, or [B, Hq, Sq, T]: the scaled scores plus the mask */
} ox_attn_core;

/* Runs the attention of c. OX_OK, or OX_ENOMEM when scratch room failed. */
int ox_attn_core_run(ox_thread_pool *pool, const ox_attn_core *c);

#endif
