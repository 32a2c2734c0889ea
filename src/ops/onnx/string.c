/* string.c - StringNormalizer, StringConcat, StringSplit, RegexFullMatch and
 * TfIdfVectorizer.
 *
 * Strings are UTF-8; every input string is validated (overlong forms,
 * surrogates and code points above U+10FFFF are rejected) and an invalid one
 * is an error naming the node and the element. Case mapping uses utf8proc's
 * simple Unicode mappings when the build has it (ONNXC_HAVE_UTF8PROC), else
 * ASCII only; the `locale` attribute is accepted but the mapping is the
 * locale-independent Unicode default. RegexFullMatch compiles the pattern
 * with PCRE2 (ONNXC_HAVE_PCRE2) in UTF mode, anchored at both ends; RE2
 * syntax is, for the constructs RE2 accepts, read the same way by PCRE2. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../opcore.h"

#ifdef ONNXC_HAVE_UTF8PROC
#include <utf8proc.h>
#endif
#ifdef ONNXC_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

static const char *str_at(const ox_value *v, int64_t i) {
  const char *s = ((char *const *)v->data)[i];
  return s ? s : "";
}

/* Decodes one code point at s[0..n); returns its length, or 0 if the bytes
 * there are not valid UTF-8. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) {
    len = 2, v = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, v = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t k = 1; k < len; k++) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[k] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

static size_t utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Byte offset of the first invalid sequence, or -1 when s is valid UTF-8. */
static int64_t utf8_invalid_at(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t l = utf8_decode(p + i, n - i, &cp);
    if (!l) return (int64_t)i;
    i += l;
  }
  return -1;
}

/* Fails unless every element of string tensor v is valid UTF-8. */
static int check_utf8(ox_kctx *ctx, const ox_value *v, const char *what) {
  for (int64_t i = 0; i < v->numel; i++) {
    int64_t at = utf8_invalid_at(str_at(v, i));
    if (at >= 0)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "%s element %lld is not valid UTF-8 (byte %lld)", what,
                          (long long)i, (long long)at);
  }
  return OX_OK;
}

static int need_strings(ox_kctx *ctx, const ox_value *v, const char *what) {
  if (!v || v->kind != OX_VAL_TENSOR || v->dtype != OX_STRING)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be a string tensor", what);
  return check_utf8(ctx, v, what);
}

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

static uint32_t map_case(uint32_t cp, int mode) {
#ifdef ONNXC_HAVE_UTF8PROC
  return (uint32_t)(mode == CASE_UPPER ? utf8proc_toupper((utf8proc_int32_t)cp)
                                       : utf8proc_tolower((utf8proc_int32_t)cp));
#else
  if (mode == CASE_UPPER && cp >= 'a' && cp <= 'z') return cp - 32;
  if (mode == CASE_LOWER && cp >= 'A' && cp <= 'Z') return cp + 32;
  return cp;
#endif
}

/* Case-mapped copy of valid UTF-8 s (malloc'd; NULL on OOM). */
static char *case_copy(const char *s, int mode) {
  size_t n = strlen(s);
  /* a simple case mapping changes a code point's length by at most 1 byte
   * per code point (e.g. U+0131 <-> 'I'); 2x is a safe bound */
  char *out = malloc(2 * n + 1);
  if (!out) return NULL;
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t l = utf8_decode(p + i, n - i, &cp);
    if (!l) { /* validated before; copy through defensively */
      out[o++] = (char)p[i++];
      continue;
    }
    o += utf8_encode(mode == CASE_NONE ? cp : map_case(cp, mode), out + o);
    i += l;
  }
  out[o] = 0;
  return out;
}

/* ------------------------------------------------------------------ */
/* StringNormalizer                                                     */

typedef struct norm_state {
  int mode;
  bool case_sensitive;
  char **stop; /* stopwords, lowercased when not case sensitive */
  size_t n_stop;
} norm_state;

static void norm_release(void *state) {
  norm_state *s = state;
  if (!s) return;
  for (size_t i = 0; i < s->n_stop; i++) free(s->stop[i]);
  free(s->stop);
  free(s);
}

static int norm_setup(const ox_kinfo *info, void **state, ox_err *e) {
  const char *act = ox_node_attr_str(info->node, "case_change_action", "NONE");
  int mode;
  if (!strcmp(act, "NONE"))
    mode = CASE_NONE;
  else if (!strcmp(act, "LOWER"))
    mode = CASE_LOWER;
  else if (!strcmp(act, "UPPER"))
    mode = CASE_UPPER;
  else
    return oc_prep_fail(info, e, "case_change_action '%s' must be LOWER, UPPER or NONE", act);
  norm_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->mode = mode;
  s->case_sensitive = ox_node_attr_int(info->node, "is_case_sensitive", 0) != 0;
  const ox_attr *sw = ox_node_attr(info->node, "stopwords");
  if (sw && sw->n_strings) {
    s->stop = calloc(sw->n_strings, sizeof *s->stop);
    if (!s->stop) return ox_err_set(e, OX_ENOMEM, "out of memory");
    for (size_t i = 0; i < sw->n_strings; i++) {
      char *w = malloc(sw->strings[i].size + 1);
      if (!w) return ox_err_set(e, OX_ENOMEM, "out of memory");
      if (sw->strings[i].size) memcpy(w, sw->strings[i].data, sw->strings[i].size);
      w[sw->strings[i].size] = 0;
      s->stop[s->n_stop++] = w;
      if (strlen(w) != sw->strings[i].size || utf8_invalid_at(w) >= 0)
        return oc_prep_fail(info, e, "stopword %zu is not valid UTF-8 text", i);
      if (!s->case_sensitive) {
        char *l = case_copy(w, CASE_LOWER);
        if (!l) return ox_err_set(e, OX_ENOMEM, "out of memory");
        free(w);
        s->stop[i] = l;
      }
    }
  }
  return OX_OK;
}

/* A malloc'd state is released by the runtime only after a successful
 * prepare: free it here on failure. */
static int norm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  int rc = norm_setup(info, state, e);
  if (rc) {
    norm_release(*state);
    *state = NULL;
  }
  return rc;
}

static bool is_stopword(const norm_state *s, const char *w) {
  if (!s->n_stop) return false;
  char *l = NULL;
  if (!s->case_sensitive) {
    l = case_copy(w, CASE_LOWER);
    if (!l) return false;
    w = l;
  }
  bool hit = false;
  for (size_t i = 0; i < s->n_stop && !hit; i++) hit = !strcmp(s->stop[i], w);
  free(l);
  return hit;
}

static int norm_run(ox_kctx *ctx, void *state) {
  const norm_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (need_strings(ctx, x, "input X")) return OX_ERUNTIME;
  bool two = x->rank == 2;
  if (!(x->rank == 1 || (two && x->dims[0] == 1)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must have shape [C] or [1, C]");
  int64_t c = x->dims[x->rank - 1];
  bool *keep = malloc((size_t)(c ? c : 1) * sizeof *keep);
  if (!keep) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  int64_t kept = 0;
  for (int64_t i = 0; i < c; i++) {
    keep[i] = !is_stopword(s, str_at(x, i));
    kept += keep[i];
  }
  int64_t od[2] = {1, kept ? kept : 1};
  ox_value *y =
      two ? ox_kctx_output(ctx, 0, OX_STRING, od, 2) : ox_kctx_output(ctx, 0, OX_STRING, od + 1, 1);
  if (!y) {
    free(keep);
    return OX_ENOMEM;
  }
  char **out = y->data;
  int64_t o = 0;
  int rc = OX_OK;
  if (!kept) {
    out[0] = calloc(1, 1);
    if (!out[0]) rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  for (int64_t i = 0; i < c && rc == OX_OK; i++) {
    if (!keep[i]) continue;
    out[o] = case_copy(str_at(x, i), s->mode);
    if (!out[o++]) rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  free(keep);
  return rc;
}

/* ------------------------------------------------------------------ */
/* StringConcat                                                         */

typedef struct concat_job {
  const ox_value *a, *b;
  char **out;
  atomic_bool oom;
} concat_job;

static void concat_span(void *arg, const int64_t *off, const int64_t *step, int64_t out_off,
                        int64_t n) {
  concat_job *j = arg;
  for (int64_t k = 0; k < n; k++) {
    const char *p = str_at(j->a, off[0] + k * step[0]);
    const char *q = str_at(j->b, off[1] + k * step[1]);
    size_t lp = strlen(p), lq = strlen(q);
    char *r = malloc(lp + lq + 1);
    if (!r) {
      atomic_store(&j->oom, true);
      return;
    }
    memcpy(r, p, lp);
    memcpy(r + lp, q, lq + 1);
    j->out[out_off + k] = r;
  }
}

static int concat_run(ox_kctx *ctx, void *state) {
  (void)state;
  ox_value *v[2] = {ox_kctx_input(ctx, 0), ox_kctx_input(ctx, 1)};
  if (need_strings(ctx, v[0], "input X") || need_strings(ctx, v[1], "input Y")) return OX_ERUNTIME;
  oc_bcast b;
  if (oc_bcast_values(&b, ctx, v, 2)) return OX_ERUNTIME;
  ox_value *z = ox_kctx_output(ctx, 0, OX_STRING, b.out_dims, b.out_rank);
  if (!z) return OX_ENOMEM;
  concat_job j = {v[0], v[1], z->data, false};
  oc_bcast_each(&b, ox_kctx_pool(ctx), concat_span, &j);
  if (atomic_load(&j.oom)) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* StringSplit                                                          */

typedef struct split_state {
  const char *delim; /* NULL: split on runs of whitespace */
  size_t dlen;
  int64_t maxsplit; /* < 0: unlimited */
} split_state;

static int split_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  split_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const char *d = ox_node_attr_str(info->node, "delimiter", "");
  if (*d) {
    if (utf8_invalid_at(d) >= 0) return oc_prep_fail(info, e, "delimiter is not valid UTF-8");
    s->delim = d;
    s->dlen = strlen(d);
  }
  const ox_attr *m = ox_node_attr(info->node, "maxsplit");
  s->maxsplit = m ? m->i : -1;
  if (m && m->i < 0) s->maxsplit = -1;
  *state = s;
  return OX_OK;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Splits s like Python's str.split(delim, maxsplit); calls emit for each
 * piece (start, length) when emit is not NULL; returns the piece count. */
typedef struct piece {
  const char *p;
  size_t n;
} piece;

static int64_t split_one(const split_state *s, const char *str, piece *out) {
  int64_t count = 0, splits = 0;
  if (s->delim) {
    const char *p = str;
    for (;;) {
      const char *hit = (s->maxsplit < 0 || splits < s->maxsplit) ? strstr(p, s->delim) : NULL;
      if (!hit) {
        if (out) out[count] = (piece){p, strlen(p)};
        return count + 1;
      }
      if (out) out[count] = (piece){p, (size_t)(hit - p)};
      count++;
      splits++;
      p = hit + s->dlen;
    }
  }
  const char *p = str;
  for (;;) {
    while (*p && is_space(*p)) p++;
    if (!*p) return count;
    if (s->maxsplit >= 0 && splits >= s->maxsplit) {
      if (out) out[count] = (piece){p, strlen(p)};
      return count + 1;
    }
    const char *q = p;
    while (*q && !is_space(*q)) q++;
    if (out) out[count] = (piece){p, (size_t)(q - p)};
    count++;
    if (!*q) return count;
    splits++;
    p = q;
  }
}

static int split_run(ox_kctx *ctx, void *state) {
  const split_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (need_strings(ctx, x, "input X")) return OX_ERUNTIME;
  if (x->rank + 1 > OC_MAXRANK) return ox_kctx_fail(ctx, OX_ERUNTIME, "input rank too large");
  ox_value *z = ox_kctx_output(ctx, 1, OX_INT64, x->dims, x->rank);
  if (!z) return OX_ENOMEM;
  int64_t *cnt = z->data, most = 0;
  for (int64_t i = 0; i < x->numel; i++) {
    cnt[i] = split_one(s, str_at(x, i), NULL);
    if (cnt[i] > most) most = cnt[i];
  }
  int64_t yd[OC_MAXRANK];
  memcpy(yd, x->dims, x->rank * sizeof(int64_t));
  yd[x->rank] = most;
  ox_value *y = ox_kctx_output(ctx, 0, OX_STRING, yd, x->rank + 1);
  if (!y) return OX_ENOMEM;
  piece *pc = malloc((size_t)(most ? most : 1) * sizeof *pc);
  if (!pc) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  char **out = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t n = split_one(s, str_at(x, i), pc);
    for (int64_t k = 0; k < most; k++) {
      size_t len = k < n ? pc[k].n : 0;
      char *r = malloc(len + 1);
      if (!r) {
        free(pc);
        return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
      }
      if (len) memcpy(r, pc[k].p, len);
      r[len] = 0;
      out[i * most + k] = r;
    }
  }
  free(pc);
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* RegexFullMatch                                                       */

#ifdef ONNXC_HAVE_PCRE2
static void regex_release(void *state) { pcre2_code_free((pcre2_code *)state); }

static int regex_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_attr *a = ox_node_attr(info->node, "pattern");
  if (!a || !a->s.data) return oc_prep_fail(info, e, "attribute 'pattern' is required");
  if (strlen((const char *)a->s.data) != a->s.size || utf8_invalid_at((const char *)a->s.data) >= 0)
    return oc_prep_fail(info, e, "pattern is not valid UTF-8 text");
  int err;
  PCRE2_SIZE off;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)a->s.data, a->s.size, PCRE2_UTF | PCRE2_NO_UTF_CHECK,
                                 &err, &off, NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return oc_prep_fail(info, e, "pattern does not compile at offset %zu: %s", (size_t)off,
                        (const char *)msg);
  }
  *state = re;
  return OX_OK;
}

static int regex_run(ox_kctx *ctx, void *state) {
  const pcre2_code *re = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (need_strings(ctx, x, "input X")) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, OX_BOOL, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  if (!md) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  uint8_t *out = y->data;
  int rc = OX_OK;
  for (int64_t i = 0; i < x->numel; i++) {
    const char *s = str_at(x, i);
    int r = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0,
                        PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NO_UTF_CHECK, md, NULL);
    if (r >= 0 || r == PCRE2_ERROR_NOMATCH) {
      out[i] = r >= 0;
      continue;
    }
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(r, msg, sizeof msg);
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "matching element %lld failed: %s", (long long)i,
                      (const char *)msg);
    break;
  }
  pcre2_match_data_free(md);
  return rc;
}
#else
static int regex_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)state;
  oc_prep_fail(info, e, "this build has no regular expression library (PCRE2 was not found)");
  e->code = OX_EUNSUPPORTED;
  return e->code;
}
static int regex_run(ox_kctx *ctx, void *state) {
  (void)state;
  return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "no regular expression library in this build");
}
static void regex_release(void *state) { (void)state; }
#endif

/* ------------------------------------------------------------------ */
/* TfIdfVectorizer                                                      */

enum { TF_TF, TF_IDF, TF_TFIDF };

/* The pool as n-grams: gram g has length len[g] and items starting at
 * pool offset start[g]; a hash table maps an n-gram to its ordinal g. */
typedef struct tfidf_state {
  int mode;
  int64_t min_n, max_n, max_skip;
  bool strings;
  const int64_t *ipool;
  const ox_bytes *spool;
  size_t n_grams;
  int64_t *start, *len, *index;
  float *weight;
  int64_t out_size;
  int64_t *table; /* open addressing: gram ordinal + 1, 0 = empty */
  size_t table_size;
} tfidf_state;

static void tfidf_release(void *state) {
  tfidf_state *s = state;
  if (!s) return;
  free(s->start);
  free(s->len);
  free(s->index);
  free(s->weight);
  free(s->table);
  free(s);
}

static uint64_t hash_step(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull; /* FNV-1a */
  return (h ^ 0xFF) * 0x100000001B3ull;                             /* item separator */
}

static uint64_t hash_pool_gram(const tfidf_state *s, size_t g) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (int64_t k = 0; k < s->len[g]; k++) {
    int64_t at = s->start[g] + k;
    if (s->strings)
      h = hash_step(h, s->spool[at].data, s->spool[at].size);
    else
      h = hash_step(h, &s->ipool[at], sizeof(int64_t));
  }
  return h;
}

static int tfidf_setup(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  const char *mode = ox_node_attr_str(n, "mode", NULL);
  if (!mode) return oc_prep_fail(info, e, "attribute 'mode' is required");
  int m = !strcmp(mode, "TF")      ? TF_TF
          : !strcmp(mode, "IDF")   ? TF_IDF
          : !strcmp(mode, "TFIDF") ? TF_TFIDF
                                   : -1;
  if (m < 0) return oc_prep_fail(info, e, "mode '%s' must be TF, IDF or TFIDF", mode);
  const ox_attr *amin = ox_node_attr(n, "min_gram_length"),
                *amax = ox_node_attr(n, "max_gram_length");
  const ox_attr *askip = ox_node_attr(n, "max_skip_count"), *acnt = ox_node_attr(n, "ngram_counts");
  const ox_attr *aidx = ox_node_attr(n, "ngram_indexes"), *aw = ox_node_attr(n, "weights");
  const ox_attr *pi = ox_node_attr(n, "pool_int64s"), *ps = ox_node_attr(n, "pool_strings");
  if (!amin || !amax || !askip || !acnt || !aidx)
    return oc_prep_fail(info, e,
                        "attributes min_gram_length, max_gram_length, max_skip_count, "
                        "ngram_counts and ngram_indexes are required");
  bool has_i = pi && pi->n_ints, has_s = ps && ps->n_strings;
  if (has_i == has_s)
    return oc_prep_fail(info, e, "exactly one of pool_int64s and pool_strings must be set");
  tfidf_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->mode = m;
  s->min_n = amin->i;
  s->max_n = amax->i;
  s->max_skip = askip->i;
  if (s->min_n < 1 || s->max_n < s->min_n || s->max_skip < 0)
    return oc_prep_fail(info, e,
                        "need 1 <= min_gram_length (%lld) <= max_gram_length (%lld) and "
                        "max_skip_count (%lld) >= 0",
                        (long long)s->min_n, (long long)s->max_n, (long long)s->max_skip);
  s->strings = has_s;
  s->ipool = has_i ? pi->ints : NULL;
  s->spool = has_s ? ps->strings : NULL;
  int64_t pool_n = (int64_t)(has_i ? pi->n_ints : ps->n_strings);
  /* count the n-grams level by level: level k (k-grams) spans
   * [ngram_counts[k-1], ngram_counts[k]) or to the pool's end */
  size_t levels = acnt->n_ints;
  size_t total = 0;
  for (size_t k = 0; k < levels; k++) {
    int64_t b = acnt->ints[k], en = k + 1 < levels ? acnt->ints[k + 1] : pool_n;
    if (b < 0 || en < b || en > pool_n)
      return oc_prep_fail(info, e, "ngram_counts[%zu] = %lld is out of order or beyond the pool", k,
                          (long long)b);
    if ((en - b) % (int64_t)(k + 1))
      return oc_prep_fail(info, e,
                          "pool level %zu (%zu-grams) has %lld items, not a multiple of %zu", k,
                          k + 1, (long long)(en - b), k + 1);
    total += (size_t)((en - b) / (int64_t)(k + 1));
  }
  if (aidx->n_ints != total)
    return oc_prep_fail(info, e, "ngram_indexes has %zu entries, the pool holds %zu n-grams",
                        aidx->n_ints, total);
  if (aw && aw->n_floats && aw->n_floats != total)
    return oc_prep_fail(info, e, "weights has %zu entries, the pool holds %zu n-grams",
                        aw->n_floats, total);
  s->n_grams = total;
  size_t cap = total ? total : 1;
  s->start = malloc(cap * sizeof(int64_t));
  s->len = malloc(cap * sizeof(int64_t));
  s->index = malloc(cap * sizeof(int64_t));
  s->weight = malloc(cap * sizeof(float));
  s->table_size = 16;
  while (s->table_size < 2 * cap) s->table_size <<= 1;
  s->table = calloc(s->table_size, sizeof(int64_t));
  if (!s->start || !s->len || !s->index || !s->weight || !s->table)
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t g = 0;
  for (size_t k = 0; k < levels; k++) {
    int64_t b = acnt->ints[k], en = k + 1 < levels ? acnt->ints[k + 1] : pool_n;
    for (int64_t at = b; at < en; at += (int64_t)(k + 1), g++) {
      s->start[g] = at;
      s->len[g] = (int64_t)(k + 1);
    }
  }
  s->out_size = 0;
  for (size_t i = 0; i < total; i++) {
    s->index[i] = aidx->ints[i];
    if (s->index[i] < 0)
      return oc_prep_fail(info, e, "ngram_indexes[%zu] = %lld is negative", i,
                          (long long)s->index[i]);
    if (s->index[i] + 1 > s->out_size) s->out_size = s->index[i] + 1;
    s->weight[i] = aw && aw->n_floats ? aw->floats[i] : 1.0f;
    size_t h = (size_t)hash_pool_gram(s, i) & (s->table_size - 1);
    while (s->table[h]) h = (h + 1) & (s->table_size - 1);
    s->table[h] = (int64_t)i + 1;
  }
  return OX_OK;
}

static int tfidf_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  int rc = tfidf_setup(info, state, e);
  if (rc) {
    tfidf_release(*state);
    *state = NULL;
  }
  return rc;
}

/* Ordinal of the n-gram of input row items at pos[0..n), or -1. */
static int64_t tfidf_find(const tfidf_state *s, const ox_value *x, const int64_t *pos, int64_t n) {
  uint64_t h0 = 0xCBF29CE484222325ull;
  for (int64_t k = 0; k < n; k++) {
    if (s->strings) {
      const char *t = str_at(x, pos[k]);
      h0 = hash_step(h0, t, strlen(t));
    } else {
      int64_t v = oc_get_i64(x->data, x->dtype, pos[k]);
      h0 = hash_step(h0, &v, sizeof v);
    }
  }
  for (size_t h = (size_t)h0 & (s->table_size - 1); s->table[h];
       h = (h + 1) & (s->table_size - 1)) {
    int64_t g = s->table[h] - 1;
    if (s->len[g] != n) continue;
    bool eq = true;
    for (int64_t k = 0; k < n && eq; k++) {
      int64_t at = s->start[g] + k;
      if (s->strings) {
        const char *t = str_at(x, pos[k]);
        eq = strlen(t) == s->spool[at].size && !memcmp(t, s->spool[at].data, s->spool[at].size);
      } else {
        eq = oc_get_i64(x->data, x->dtype, pos[k]) == s->ipool[at];
      }
    }
    if (eq) return g;
  }
  return -1;
}

static int tfidf_run(ox_kctx *ctx, void *state) {
  const tfidf_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  if (s->strings) {
    if (need_strings(ctx, x, "input X")) return OX_ERUNTIME;
  } else if (x->dtype != OX_INT32 && x->dtype != OX_INT64) {
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be int32 or int64 (pool_int64s is set)");
  }
  if (x->rank != 1 && x->rank != 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be 1-D or 2-D, got rank %zu", x->rank);
  int64_t rows = x->rank == 2 ? x->dims[0] : 1, cols = x->dims[x->rank - 1];
  int64_t od[2] = {rows, s->out_size};
  ox_value *y = x->rank == 2 ? ox_kctx_output_zero(ctx, 0, OX_FLOAT, od, 2)
                             : ox_kctx_output_zero(ctx, 0, OX_FLOAT, od + 1, 1);
  if (!y) return OX_ENOMEM;
  float *out = y->data;
  uint32_t *count = calloc(s->n_grams ? s->n_grams : 1, sizeof *count);
  int64_t *pos = malloc((size_t)s->max_n * sizeof *pos);
  if (!count || !pos) {
    free(count);
    free(pos);
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  for (int64_t r = 0; r < rows; r++) {
    memset(count, 0, (s->n_grams ? s->n_grams : 1) * sizeof *count);
    int64_t base = r * cols;
    /* 1-grams once; longer n-grams for every skip 0..max_skip_count */
    if (s->min_n <= 1)
      for (int64_t i = 0; i < cols; i++) {
        pos[0] = base + i;
        int64_t g = tfidf_find(s, x, pos, 1);
        if (g >= 0) count[g]++;
      }
    int64_t n0 = s->min_n > 2 ? s->min_n : 2;
    for (int64_t n = n0; n <= s->max_n; n++)
      for (int64_t skip = 0; skip <= s->max_skip; skip++) {
        int64_t span = (n - 1) * (skip + 1);
        for (int64_t i = 0; i + span < cols; i++) {
          for (int64_t k = 0; k < n; k++) pos[k] = base + i + k * (skip + 1);
          int64_t g = tfidf_find(s, x, pos, n);
          if (g >= 0) count[g]++;
        }
      }
    float *row = out + r * s->out_size;
    for (size_t g = 0; g < s->n_grams; g++) {
      if (!count[g]) continue;
      float v = s->mode == TF_TF    ? (float)count[g]
                : s->mode == TF_IDF ? s->weight[g]
                                    : (float)count[g] * s->weight[g];
      row[s->index[g]] = v;
    }
  }
  free(count);
  free(pos);
  return OX_OK;
}

static int no_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)info;
  (void)e;
  *state = NULL;
  return OX_OK;
}

const ox_kernel_def ox_ops_string[] = {
    {"", "StringNormalizer", 10, 1000, norm_prepare, norm_run, norm_release},
    {"", "StringConcat", 20, 1000, no_prepare, concat_run, NULL},
    {"", "StringSplit", 20, 1000, split_prepare, split_run, NULL},
    {"", "RegexFullMatch", 20, 1000, regex_prepare, regex_run, regex_release},
    {"", "TfIdfVectorizer", 9, 1000, tfidf_prepare, tfidf_run, tfidf_release},
    {0},
};
