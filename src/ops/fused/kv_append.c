/* kv_append.c - KVCacheAppend (domain ai.onnxc), which the generation loop
 * (src/api/generate_kv.c) puts in place of Optimum's Concat(past, new,
 * axis 2) so that the KV cache is one buffer of fixed length appended in
 * place instead of a new present made each step.
 *
 * present = cache [B, H, M, D] with rows [past_len, past_len + n) of each
 * (batch, head) replaced by new [B, H, n, D]. The kernel may write present
 * over its cache input (alias_outputs): when the runtime gives present the
 * cache's own buffer, only the n new rows per head are written; otherwise
 * (a plain run) the cache is copied first, so the result is the same either
 * way. Outputs 1 and 2 are what the replaced Concat's result would have
 * told its readers: its length past_len + n (AttentionBHSDFused's kv_len)
 * and its shape (for Shape nodes). */
#include <string.h>

#include "../../runtime/kernel.h"
#include "../fused.h"
#include "../opcore.h"

int ox_kv_append_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)info;
  (void)e;
  *state = NULL;
  return OX_OK;
}

int ox_kv_append_run(ox_kctx *ctx, void *state) {
  (void)state;
  ox_value *cache = ox_kctx_input(ctx, 0), *nw = ox_kctx_input(ctx, 1), *pl = ox_kctx_input(ctx, 2);
  if (!cache || !nw || !pl || cache->dtype != OX_FLOAT || nw->dtype != OX_FLOAT ||
      pl->dtype != OX_INT64 || pl->numel != 1)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "cache and new must be float tensors, past_len one int64 value");
  if (cache->rank != 4 || nw->rank != 4)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "cache and new must have rank 4 ([B, H, T, D])");
  const int64_t *c = cache->dims, *n = nw->dims;
  if (c[0] != n[0] || c[1] != n[1] || c[3] != n[3])
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "new [%lld, %lld, %lld, %lld] does not fit cache [%lld, %lld, %lld, %lld]",
                        (long long)n[0], (long long)n[1], (long long)n[2], (long long)n[3],
                        (long long)c[0], (long long)c[1], (long long)c[2], (long long)c[3]);
  int64_t past = *(const int64_t *)pl->data;
  if (past < 0 || past > c[2] || n[2] > c[2] - past)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "past_len %lld and %lld new rows do not fit a cache of %lld rows",
                        (long long)past, (long long)n[2], (long long)c[2]);
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, c, 4);
  if (!y) return OX_ERUNTIME;
  /* a buffer of its own (no caller's buffer, or another one): the cache first */
  if (y->data != cache->data && y->nbytes) memcpy(y->data, cache->data, y->nbytes);
  size_t row = (size_t)c[3] * sizeof(float), rows_new = (size_t)n[2] * row;
  for (int64_t bh = 0; bh < c[0] * c[1]; bh++)
    if (rows_new)
      memcpy((char *)y->data + ((size_t)bh * (size_t)c[2] + (size_t)past) * row,
             (const char *)nw->data + (size_t)bh * rows_new, rows_new);
  if (ox_kctx_output_wanted(ctx, 1)) {
    ox_value *t = ox_kctx_output(ctx, 1, OX_INT64, NULL, 0);
    if (!t) return OX_ERUNTIME;
    *(int64_t *)t->data = past + n[2];
  }
  if (ox_kctx_output_wanted(ctx, 2)) {
    const int64_t four = 4;
    ox_value *s = ox_kctx_output(ctx, 2, OX_INT64, &four, 1);
    if (!s) return OX_ERUNTIME;
    int64_t *d = s->data;
    d[0] = c[0], d[1] = c[1], d[2] = past + n[2], d[3] = c[3];
  }
  return OX_OK;
}
