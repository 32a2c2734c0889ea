/* attn_kv.h - what the com.microsoft attentions over a key/value cache
 * (GroupQueryAttention in gqa.c, SparseAttention in sparse_attn.c) share
 * besides the vector kernels of kernels/attn_decode.h: the checks of query,
 * key and value, the split of Q, K and V into head-major rows with the
 * rotary embedding applied, and the refusal of present buffers that cross
 * the past's. */
#ifndef OX_OPS_CONTRIB_ATTN_KV_H
#define OX_OPS_CONTRIB_ATTN_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../opcore.h"

/* the node's num_heads and kv_num_heads: both positive, the first a
 * multiple of the second, or the prepare fails */
int akv_heads(const ox_kinfo *info, ox_err *e, int64_t *nh, int64_t *kvh);

/* query [B, S, nh * H] (or Q, K, V packed in it when packed) and key /
 * value [B, S, kvh * H] of query's type: fills B, S and H, or fails naming
 * what is wrong */
int akv_check_qkv(ox_kctx *c, const ox_value *Q, const ox_value *K, const ox_value *V, int64_t nh,
                  int64_t kvh, bool packed, int64_t *B, int64_t *S, int64_t *H);

/* The split: row s of batch b of the inputs (query [B, S, N * H] and key /
 * value [B, S, Nk * H], or all three packed in q when k is NULL) goes to
 * qo [B, S, N, H] and to row row0[b] + s (row0 NULL: s) of (b, kv head h)
 * in ko / vo [B, Nk, rows, H]; Q and K rotated in their first R values by
 * cos / sin row pos[b * S + s] when cs is given. */
typedef struct akv_split {
  int64_t B, S, N, Nk, H, R;
  bool interleaved;
  const float *q, *k, *v;
  const float *cs, *sn;
  const int64_t *pos;
  float *qo, *ko, *vo;
  int64_t rows;
  const int64_t *row0;
} akv_split;

void akv_split_qkv(const akv_split *sp);

/* fails when present_key / present_value (present_bytes each) overlap
 * past_key / past_value (past_bytes each): the copy would garble them */
int akv_check_crossed(ox_kctx *c, const float *prk, const float *prv, const float *pk,
                      const float *pv, size_t present_bytes, size_t past_bytes);

/* output 0 [yd, 3 dims] and the wanted presents (outputs 1 and 2, [pd, 4
 * dims]) of type dt into outs[0..2] (NULL where not wanted) */
int akv_outputs(ox_kctx *c, int32_t dt, const int64_t *yd, const int64_t *pd, ox_value **outs);

/* Where the output (n_y floats) and the presents (n_p each) are written: a
 * float32 output's own storage, else the scratch at *w, which advances.
 * Returns whether the presents are the outputs' own storage. */
bool akv_place(ox_value *const *outs, float **w, int64_t n_y, int64_t n_p, float **y, float **prk,
               float **prv);

#endif
