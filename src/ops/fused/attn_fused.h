/* attn_fused.h - the attention core of MultiHeadAttentionFused
 * (attn_fused.c), for the operators that have Q, K and V with their heads
 * side by side in rows (com.microsoft Attention's packed QKV projection). */
#ifndef OX_OPS_FUSED_ATTN_FUSED_H
#define OX_OPS_FUSED_ATTN_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "../../base/threadpool.h"

typedef struct ox_mha_args {
  /* Q [B, Sq, .], K and V [B, Sk, .] float32: head h is columns
   * [h * dim, (h + 1) * dim) of each row; rows q_ld and kv_ld floats apart */
  const float *q, *k, *v;
  int64_t q_ld, kv_ld;
  /* Y [B, Sq, .]: head h written at columns h * dim of rows y_ld apart */
  float *y;
  int64_t y_ld;
  int64_t B, heads, dim, Sq, Sk;
  /* additive mask (NULL: none) and its strides over [B, heads, Sq, Sk], 0 broadcast */
  const float *mask;
  int64_t mst[4];
  /* scores Q K^T / scale (div) or * scale, + mask, softmax per row */
  float scale;
  bool div;
} ox_mha_args;

/* Runs every (batch, head) over the pool: OX_OK, or OX_ENOMEM. */
int ox_mha_run(ox_thread_pool *pool, const ox_mha_args *a);

/* One row of n scores: / scale (div) or * scale, + m[c * mstep] (m NULL:
 * none), softmax — the roundings of the Div/Mul, Add and Softmax nodes
 * fused attention replaces; the function of the vector level in use. */
typedef void (*ox_attn_row_fn)(float *row, int64_t n, float scale, bool div, const float *m,
                               int64_t mstep);
ox_attn_row_fn ox_attn_score_row(void);

#endif
