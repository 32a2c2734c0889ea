/* kv_append.c - KVCacheAppend (domain ai.onnxc), which the kv_cache pass
 * (src/opt/kv_cache.c) puts in place of Optimum's Concat(past, new, axis 2).
 *
 * Without its cache input (any ordinary run) it is that Concat: present
 * [B, H, P + n, D] is past's P rows then new's n rows per (batch, head).
 * With a cache [B, H, M, D] (the generation loop's buffer of fixed length,
 * src/api/generate.c), present is the cache with rows [P, P + n) of each
 * head replaced by new; past gives only P, its data is not read (the loop
 * feeds it as a view of the buffer at its logical shape). The kernel may
 * write present over the cache (alias_outputs): when the runtime gives
 * present the cache's own buffer, only the n new rows per head are
 * written; otherwise the cache is copied first, so the result is the same.
 * Outputs 1 and 2 are what the Concat's result would tell its readers
 * either way: its length P + n (AttentionBHSDFused's kv_len) and its
 * shape (for Shape nodes). */
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

/* [p, p + n) meets value v's bytes */
static bool meets(const ox_value *v, const void *p, size_t n) {
  const char *a = v->data, *b = p;
  return n && v->nbytes && a < b + n && b < a + v->nbytes;
}

/* Concat(past, new) along axis 2 into y (its own memory) */
static void concat(char *y, const ox_value *past, const ox_value *nw, int64_t bh) {
  size_t rp = (size_t)past->dims[2] * (size_t)past->dims[3] * sizeof(float);
  size_t rn = (size_t)nw->dims[2] * (size_t)nw->dims[3] * sizeof(float);
  for (int64_t i = 0; i < bh; i++) {
    if (rp) memcpy(y, (const char *)past->data + (size_t)i * rp, rp);
    if (rn) memcpy(y + rp, (const char *)nw->data + (size_t)i * rn, rn);
    y += rp + rn;
  }
}

int ox_kv_append_run(ox_kctx *ctx, void *state) {
  (void)state;
  ox_value *past = ox_kctx_input(ctx, 0), *nw = ox_kctx_input(ctx, 1);
  ox_value *cache = ox_kctx_input(ctx, 2);
  if (cache && cache->kind == OX_VAL_OPTIONAL) cache = cache->elem; /* an empty optional: none */
  if (!past || !nw || past->kind != OX_VAL_TENSOR || nw->kind != OX_VAL_TENSOR ||
      past->dtype != OX_FLOAT || nw->dtype != OX_FLOAT ||
      (cache && (cache->kind != OX_VAL_TENSOR || cache->dtype != OX_FLOAT)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "past, new and the cache must be float tensors");
  if (past->rank != 4 || nw->rank != 4 || (cache && cache->rank != 4))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "past, new and the cache must have rank 4 ([B, H, T, D])");
  const int64_t *p = past->dims, *n = nw->dims;
  if (p[0] != n[0] || p[1] != n[1] || p[3] != n[3])
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "new [%lld, %lld, %lld, %lld] does not fit past [%lld, %lld, %lld, %lld]",
                        (long long)n[0], (long long)n[1], (long long)n[2], (long long)n[3],
                        (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3]);
  int64_t total = p[2] + n[2], bh = p[0] * p[1];
  if (!cache) {
    const int64_t d[4] = {p[0], p[1], total, p[3]};
    ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, d, 4);
    if (!y) return OX_ERUNTIME;
    if (meets(past, y->data, y->nbytes) || meets(nw, y->data, y->nbytes)) {
      /* a caller's output buffer over an input (alias_outputs lets the
       * runtime give it): a buffer of the kernel's own instead */
      ox_err e2 = {0};
      ox_value *own = ox_tensor_new_uninit(OX_FLOAT, d, 4, &e2);
      if (!own) return ox_kctx_fail(ctx, e2.code ? e2.code : OX_ENOMEM, "%s", e2.msg);
      concat(own->data, past, nw, bh);
      int rc = ox_kctx_set_output(ctx, 0, own);
      if (rc) return rc;
    } else {
      concat(y->data, past, nw, bh);
    }
  } else {
    const int64_t *c = cache->dims;
    if (c[0] != p[0] || c[1] != p[1] || c[3] != p[3])
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "the cache [%lld, %lld, %lld, %lld] does not fit past [%lld, %lld, "
                          "%lld, %lld]",
                          (long long)c[0], (long long)c[1], (long long)c[2], (long long)c[3],
                          (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3]);
    if (n[2] > c[2] - p[2])
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "past_len %lld and %lld new rows do not fit a cache of %lld rows",
                          (long long)p[2], (long long)n[2], (long long)c[2]);
    ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, c, 4);
    if (!y) return OX_ERUNTIME;
    /* a buffer of its own (no caller's buffer, or another one): the cache first */
    if (y->data != cache->data && y->nbytes) memmove(y->data, cache->data, y->nbytes);
    size_t row = (size_t)c[3] * sizeof(float), rows_new = (size_t)n[2] * row;
    for (int64_t i = 0; rows_new && i < bh; i++)
      memcpy((char *)y->data + ((size_t)i * (size_t)c[2] + (size_t)p[2]) * row,
             (const char *)nw->data + (size_t)i * rows_new, rows_new);
  }
  if (ox_kctx_output_wanted(ctx, 1)) {
    ox_value *t = ox_kctx_output(ctx, 1, OX_INT64, NULL, 0);
    if (!t) return OX_ERUNTIME;
    *(int64_t *)t->data = total;
  }
  if (ox_kctx_output_wanted(ctx, 2)) {
    const int64_t four = 4;
    ox_value *s = ox_kctx_output(ctx, 2, OX_INT64, &four, 1);
    if (!s) return OX_ERUNTIME;
    int64_t *d = s->data;
    d[0] = p[0], d[1] = p[1], d[2] = total, d[3] = p[3];
  }
  return OX_OK;
}
