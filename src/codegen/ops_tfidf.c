/* ops_tfidf.c - the C generator of TfIdfVectorizer over an integer pool
 * (pool_int64s; a string pool is declined: the compiled code has no
 * strings). The n-grams of the pool become constant tables in the node's
 * function; each row of the input counts its 1-grams once and its longer
 * n-grams once per skip 0..max_skip_count, as the runtime's tfidf_run
 * (src/ops/onnx/string.c), matching each against the pool's n-grams of
 * that length in order (the runtime hashes; the first match is the same
 * n-gram). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static void int_table(cg_ctx *c, const char *type, const char *name, const int64_t *v, size_t n) {
  cg_printf(c, "  static const %s %s[%zu] = {", type, name, n);
  for (size_t i = 0; i < n; i++)
    cg_printf(c, "%s%lld", i ? (i % 16 ? ", " : ",\n      ") : "", (long long)v[i]);
  cg_printf(c, "};\n");
}

static int gen_tfidf(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  const char *mode = ox_node_attr_str(n, "mode", "");
  int m = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
  if (m < 0) return cg_fail(c, OX_EMODEL, "mode '%s' must be TF, IDF or TFIDF", mode);
  const ox_attr *amin = ox_node_attr(n, "min_gram_length"),
                *amax = ox_node_attr(n, "max_gram_length");
  const ox_attr *askip = ox_node_attr(n, "max_skip_count"), *acnt = ox_node_attr(n, "ngram_counts");
  const ox_attr *aidx = ox_node_attr(n, "ngram_indexes"), *aw = ox_node_attr(n, "weights");
  const ox_attr *pi = ox_node_attr(n, "pool_int64s"), *ps = ox_node_attr(n, "pool_strings");
  if (!amin || !amax || !askip || !acnt || !aidx)
    return cg_fail(c, OX_EMODEL,
                   "attributes min_gram_length, max_gram_length, max_skip_count, "
                   "ngram_counts and ngram_indexes are required");
  if (ps && ps->n_strings) return cg_fail(c, OX_EUNSUPPORTED, "a string pool is not compiled");
  if (!pi || !pi->n_ints) return cg_fail(c, OX_EMODEL, "pool_int64s must be set");
  if (X->dtype != OX_INT32 && X->dtype != OX_INT64)
    return cg_fail(c, OX_EMODEL, "input must be int32 or int64 (pool_int64s is set)");
  if ((X->rank != 1 && X->rank != 2) || Y->dtype != OX_FLOAT)
    return cg_fail(c, OX_EMODEL, "input must be 1-D or 2-D, the output float");
  long long minn = (long long)amin->i, maxn = (long long)amax->i, maxskip = (long long)askip->i;
  if (minn < 1 || maxn < minn || maxskip < 0)
    return cg_fail(c, OX_EMODEL,
                   "need 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0");
  size_t levels = acnt->n_ints, pool_n = pi->n_ints, total = 0;
  if (levels > 64) return cg_fail(c, OX_EUNSUPPORTED, "more than 64 n-gram levels");
  size_t gbeg[65];
  for (size_t k = 0; k < levels; k++) {
    int64_t b = acnt->ints[k], en = k + 1 < levels ? acnt->ints[k + 1] : (int64_t)pool_n;
    if (b < 0 || en < b || en > (int64_t)pool_n || (en - b) % (int64_t)(k + 1))
      return cg_fail(c, OX_EMODEL, "ngram_counts[%zu] does not fit the pool", k);
    gbeg[k] = total;
    total += (size_t)((en - b) / (int64_t)(k + 1));
  }
  gbeg[levels] = total;
  if (aidx->n_ints != total || (aw && aw->n_floats && aw->n_floats != total))
    return cg_fail(c, OX_EMODEL, "ngram_indexes or weights do not match the pool's %zu n-grams",
                   total);
  long long osz = 0;
  for (size_t i = 0; i < total; i++) {
    if (aidx->ints[i] < 0) return cg_fail(c, OX_EMODEL, "ngram_indexes[%zu] is negative", i);
    if (aidx->ints[i] + 1 > osz) osz = (long long)aidx->ints[i] + 1;
  }
  long long rows = X->rank == 2 ? (long long)X->dims[0] : 1, cols = (long long)X->dims[X->rank - 1];
  if (Y->numel != rows * osz) return cg_fail(c, OX_EMODEL, "output shape");
  cg_printf(c, "  memset(Y0, 0, %zu);\n", Y->nbytes);
  if (!total || !rows) return OX_OK;
  /* each n-gram's first item in the pool, level by level */
  int64_t *start = ox_arena_alloc(c->a, total * sizeof *start);
  if (!start) return ox_err_set(c->e, OX_ENOMEM, "out of memory");
  for (size_t k = 0, g = 0; k < levels; k++)
    for (int64_t at = acnt->ints[k]; g < gbeg[k + 1]; at += (int64_t)(k + 1), g++) start[g] = at;
  int_table(c, "long long", "pool", pi->ints, pool_n);
  int_table(c, "long long", "gstart", start, total);
  int_table(c, "long long", "gindex", aidx->ints, total);
  if (m != 0) {
    cg_printf(c, "  static const float gw[%zu] = {", total);
    for (size_t i = 0; i < total; i++) {
      char b[48];
      cg_float_lit(b, sizeof b, aw && aw->n_floats ? (double)aw->floats[i] : 1.0, true);
      cg_printf(c, "%s%s", i ? ", " : "", b);
    }
    cg_printf(c, "};\n");
  }
  cg_printf(c, "  unsigned cnt[%zu];\n", total);
  cg_printf(c, "  for (long long r = 0; r < %lld; r++) {\n", rows);
  cg_printf(c, "    const %s *x = X0 + r * %lld;\n", cg_ctype(X->dtype), cols);
  cg_printf(c, "    for (size_t g = 0; g < %zu; g++) cnt[g] = 0;\n", total);
  if (minn <= 1 && levels >= 1 && gbeg[1] > 0) {
    cg_printf(c, "    for (long long i = 0; i < %lld; i++)\n", cols);
    cg_printf(c, "      for (long long g = 0; g < %zu; g++)\n", gbeg[1]);
    cg_printf(c,
              "        if (pool[gstart[g]] == (long long)x[i]) {\n          cnt[g]++;\n"
              "          break;\n        }\n");
  }
  for (long long len = minn > 2 ? minn : 2; len <= maxn; len++) {
    if ((size_t)len > levels || gbeg[len] == gbeg[len - 1]) continue; /* no such n-grams */
    cg_printf(c, "    for (long long skip = 0; skip <= %lld; skip++) /* %lld-grams */\n", maxskip,
              len);
    cg_printf(c, "      for (long long i = 0; i + %lld * (skip + 1) < %lld; i++)\n", len - 1, cols);
    cg_printf(c, "        for (long long g = %zu; g < %zu; g++) {\n", gbeg[len - 1], gbeg[len]);
    cg_printf(c, "          long long k = 0;\n");
    cg_printf(c,
              "          while (k < %lld && pool[gstart[g] + k] == (long long)x[i + k * (skip + "
              "1)]) k++;\n",
              len);
    cg_printf(c,
              "          if (k == %lld) {\n            cnt[g]++;\n            break;\n          }\n"
              "        }\n",
              len);
  }
  cg_printf(c, "    for (size_t g = 0; g < %zu; g++)\n", total);
  cg_printf(c, "      if (cnt[g]) Y0[r * %lld + gindex[g]] = %s;\n  }\n", osz,
            m == 0   ? "(float)cnt[g]"
            : m == 1 ? "gw[g]"
                     : "(float)cnt[g] * gw[g]");
  return OX_OK;
}

const cg_op ox_cg_ops_tfidf[] = {
    {"TfIdfVectorizer", gen_tfidf},
    {NULL, NULL},
};
