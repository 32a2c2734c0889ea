/* attn_decode.h - the vector loops of grouped-query attention over a key /
 * value cache (com.microsoft GroupQueryAttention, src/ops/contrib/gqa.c):
 * the decode step's block pass, which folds a block of cached keys and
 * values into the running softmax of every query head of one key/value
 * group (so each cached row is read once per group, not once per head),
 * the merge of the partial softmaxes of several blocks (split-K, "flash
 * decoding"), and the rotary embedding of one head. Each entry is compiled
 * for every level of levels.h (the block pass written with intrinsics for
 * AVX2 and AVX-512) and picked once from the CPU probe. */
#ifndef OX_KERNELS_ATTN_DECODE_H
#define OX_KERNELS_ATTN_DECODE_H

#include <stdbool.h>
#include <stdint.h>

/* What the block pass needs besides the keys: G query rows of H values
 * (row stride H), the score scale, the soft cap (0: none) and the additive
 * bias (NULL, or G rows of stride bias_ld, column 0 being the block's first
 * key). */
typedef struct ox_attn_dec {
  const float *q;
  int64_t G, H;
  float scale, softcap;
  const float *bias;
  int64_t bias_ld;
} ox_attn_dec;

/* The running state of G softmaxes: m[G] the largest score so far (start
 * at -INFINITY), l[G] the sum of e^(score - m), acc[G * H] the sum of
 * e^(score - m) v. */
typedef struct ox_attn_part {
  float *m, *l, *acc;
} ox_attn_part;

typedef struct ox_attn_decode_kernels {
  /* folds keys k[0..n) and values v[0..n) (row stride H) into st; scratch
   * holds G * n floats */
  void (*block)(const ox_attn_dec *d, const float *k, const float *v, int64_t n, ox_attn_part *st,
                float *scratch);
  /* y[H] = the softmax-weighted mean of np partial states of one query row
   * (m[i * ld], l[i * ld], acc + i * acc_ld), with e^sink in the
   * denominator when has_sink; zeros when every state is empty */
  void (*merge)(const float *m, const float *l, int64_t ld, const float *acc, int64_t acc_ld,
                int64_t np, int64_t H, bool has_sink, float sink, float *y);
  /* rotary embedding of one head's first R values (R even): pairs (i, i +
   * R/2), or (2i, 2i + 1) when interleaved, turned by cos/sin[R/2]; y may
   * be x */
  void (*rotary)(const float *x, float *y, int64_t R, const float *cs, const float *sn,
                 bool interleaved);
} ox_attn_decode_kernels;

/* the entries of the level in use (never NULL) */
const ox_attn_decode_kernels *ox_attn_decode_kernels_get(void);

#endif
