/* test_generate_kv.c - Optimum's decoder-with-past with the KV cache in
 * place (the kv_cache pass, src/opt/kv_cache.c; src/api/generate_kv.c): on
 * a one-layer attention decoder written as exporters write it (and one
 * with grouped-query attention's repeat_kv), the loop takes the in-place
 * path, its buffers stay where they are and nothing is copied, and its
 * greedy tokens are those of the copying path (ONNXC_GENERATE_KV=copy); a
 * graph that reads the present otherwise stays on the copying path and
 * says why; concurrent and later generations share the caller's session
 * (no other session), whose listed inputs stay the model's and whose plain
 * runs give the bytes of a session without the pass. Then the two kernels
 * the pass adds, against plain ONNX operators: KVCacheAppend (a Concat,
 * or an append into a fixed buffer) and AttentionBHSDFused's kv_len (the
 * attention over the first rows of longer K and V). The
 * comparison with onnxruntime on make_decoders.py's model b is
 * tests/oracle/ort_generate.mjs. */
#include <math.h>
#include <onnxc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/api_check.h"
#include "api/generate_impl.h"

enum { VOCAB = 16, HID = 8, HEADS = 2, HD = 4, CTX = 48 };

static uint64_t lcg = 12345;
static double rnd(void) { /* uniform in [-1, 1) */
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(lcg >> 11) / (double)(1ull << 52) - 1.0;
}

static size_t floats(char *buf, size_t size, size_t n, double scale) {
  size_t k = 0;
  for (size_t i = 0; i < n && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%.6f", i ? ", " : "", rnd() * scale);
  return k;
}

/* grouped-query attention's repeat_kv as Llama's exports write it: the one
 * K/V head's present [1, 1, T, 4] repeated to the 2 query heads,
 * Reshape(Expand(Unsqueeze(x, 2), [1, 1, 2, T, 4]), [1, 2, T, 4]), the
 * shapes computed from Shape(present) */
static const char *repeat_kv =
    "  tsl = Slice(ts, s2, s4)\n  tgt = Concat <axis = 0> (rep3, tsl)\n"
    "  rsh = Concat <axis = 0> (rep2, tsl)\n"
    "  ku = Unsqueeze(\"present.0.key\", ax2)\n  ke = Expand(ku, tgt)\n  kr = Reshape(ke, rsh)\n"
    "  vu = Unsqueeze(\"present.0.value\", ax2)\n  ve = Expand(vu, tgt)\n"
    "  vr = Reshape(ve, rsh)\n";

/* The decoder: x = emb[ids] + pos[position_ids]; one attention layer with
 * the causal mask computed from Shape(past) and Shape(present), as
 * exporters do; logits = (x + attention) lm. gqa: one K/V head for the two
 * query heads (repeat_kv). extra: more nodes (and outputs, in sig_extra). */
static onnxc_model *decoder(int gqa, const char *sig_extra, const char *extra) {
  static char w[6][8192], text[65536];
  int kvh = gqa ? 1 : HEADS;
  lcg = 12345;
  floats(w[0], sizeof w[0], VOCAB * HID, 1.0);
  floats(w[1], sizeof w[1], CTX * HID, 0.5);
  floats(w[2], sizeof w[2], HID * HID, 0.6);
  floats(w[3], sizeof w[3], (size_t)HID * kvh * HD, 0.6);
  floats(w[4], sizeof w[4], (size_t)HID * kvh * HD, 0.6);
  floats(w[5], sizeof w[5], HID * VOCAB, 0.8);
  snprintf(
      text, sizeof text,
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (int64[1,S] input_ids, int64[1,T] attention_mask, int64[1,S] position_ids, "
      "float[1,%d,P,%d] \"past_key_values.0.key\", float[1,%d,P,%d] \"past_key_values.0.value\")"
      " => (float[1,S,%d] logits, float[1,%d,T,%d] \"present.0.key\", "
      "float[1,%d,T,%d] \"present.0.value\"%s)\n"
      "<float[%d,%d] emb = {%s}, float[%d,%d] pos = {%s}, float[%d,%d] wq = {%s}, "
      "float[%d,%d] wk = {%s}, float[%d,%d] wv = {%s}, float[%d,%d] lm = {%s}, "
      "int64[4] split = {0, -1, %d, %d}, int64[4] kvsplit = {0, -1, %d, %d}, "
      "int64[3] merge = {0, -1, %d}, int64 two = {2}, int64 one = {1}, int64 zero = {0}, "
      "int64[1] ax0 = {0}, int64[1] ax1 = {1}, int64[1] ax2 = {2}, int64[1] s2 = {2}, "
      "int64[1] s4 = {4}, int64[3] rep3 = {1, 1, 2}, int64[2] rep2 = {1, 2}, "
      "float scale = {0.5}, float neg = {-1e9}, float nil = {0}>\n"
      "{\n"
      "  e = Gather(emb, input_ids)\n"
      "  p = Gather(pos, position_ids)\n"
      "  x = Add(e, p)\n"
      "  q0 = MatMul(x, wq)\n  q1 = Reshape(q0, split)\n"
      "  q = Transpose <perm = [0, 2, 1, 3]> (q1)\n"
      "  k0 = MatMul(x, wk)\n  k1 = Reshape(k0, kvsplit)\n"
      "  k = Transpose <perm = [0, 2, 1, 3]> (k1)\n"
      "  v0 = MatMul(x, wv)\n  v1 = Reshape(v0, kvsplit)\n"
      "  v = Transpose <perm = [0, 2, 1, 3]> (v1)\n"
      "  \"present.0.key\" = Concat <axis = 2> (\"past_key_values.0.key\", k)\n"
      "  \"present.0.value\" = Concat <axis = -2> (\"past_key_values.0.value\", v)\n"
      "  ps = Shape(\"past_key_values.0.key\")\n  past_len = Gather(ps, two)\n"
      "  ts = Shape(\"present.0.key\")\n  total = Gather(ts, two)\n"
      "  qpos = Range(past_len, total, one)\n  kpos = Range(zero, total, one)\n"
      "  kq = Unsqueeze(kpos, ax0)\n  qq = Unsqueeze(qpos, ax1)\n"
      "  future = Greater(kq, qq)\n  bias = Where(future, neg, nil)\n%s"
      "  kt = Transpose <perm = [0, 1, 3, 2]> (%s)\n"
      "  sc0 = MatMul(q, kt)\n  sc1 = Mul(sc0, scale)\n  sc2 = Add(sc1, bias)\n"
      "  a = Softmax <axis = -1> (sc2)\n"
      "  y0 = MatMul(a, %s)\n"
      "  y1 = Transpose <perm = [0, 2, 1, 3]> (y0)\n  y = Reshape(y1, merge)\n"
      "  h = Add(x, y)\n  logits = MatMul(h, lm)\n%s"
      "}\n",
      kvh, HD, kvh, HD, VOCAB, kvh, HD, kvh, HD, sig_extra, VOCAB, HID, w[0], CTX, HID, w[1], HID,
      HID, w[2], HID, kvh * HD, w[3], HID, kvh * HD, w[4], HID, VOCAB, w[5], HEADS, HD, kvh, HD,
      HID, gqa ? repeat_kv : "", gqa ? "kr" : "\"present.0.key\"",
      gqa ? "vr" : "\"present.0.value\"", extra);
  return parse(text);
}

static onnxc_session *session_of(onnxc_model *m, int level) {
  onnxc_session *s = NULL;
  onnxc_error e = {0};
  onnxc_session_options o = {0};
  o.optimization_level = level;
  o.threads = 1;
  if (m && onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", e.msg);
    failures++;
  }
  return s;
}

enum { STEPS = 30 };

/* Greedy steps on s: the tokens, and whether the cache stayed in place
 * (in_place, its buffers' addresses the same at every step); the layout's
 * copying path when copy. */
static void run(onnxc_session *s, int copy, int64_t *toks, int *in_place, int *fixed,
                uint64_t *copied, char *why) {
  why[0] = 0;
  if (copy)
    setenv("ONNXC_GENERATE_KV", "copy", 1);
  else
    unsetenv("ONNXC_GENERATE_KV");
  int64_t prompt[] = {3, 9, 1};
  onnxc_generate_options o = {0};
  o.max_new_tokens = STEPS;
  onnxc_generator *g = NULL;
  onnxc_error e = {0};
  *fixed = 1;
  if (onnxc_generate_start(s, prompt, 3, &o, &g, &e) != ONNXC_OK) {
    fprintf(stderr, "start: %s\n", e.msg);
    CHECK(0);
    return;
  }
  CHECK(strcmp(onnxc_generate_layout(g), "decoder-with-past") == 0);
  const char *reason = "";
  *in_place = ox_gen_cache_in_place(g, &reason);
  snprintf(why, 256, "%s", reason); /* the generator's, freed with it */
  /* the public word for it */
  const char *path = onnxc_generate_cache_path(g);
  CHECK(*in_place ? strcmp(path, "in place") == 0
                  : strncmp(path, "copied each step (", 18) == 0 && strstr(path, reason));
  const void *k0 = ox_gen_cache_buffer(g, 0), *v0 = ox_gen_cache_buffer(g, 1);
  for (int i = 0; i < STEPS; i++) {
    int done = 0;
    CHECK(onnxc_generate_next(g, &toks[i], &done, &e) == ONNXC_OK && !done);
    *fixed = *fixed && ox_gen_cache_buffer(g, 0) == k0 && ox_gen_cache_buffer(g, 1) == v0;
  }
  onnxc_generate_stats st;
  onnxc_generate_get_stats(g, &st);
  *copied = st.cache_copied_bytes;
  CHECK(st.new_tokens == STEPS);
  onnxc_generate_free(g);
  unsetenv("ONNXC_GENERATE_KV");
}

/* s keeps the copying path, for a reason that says `reason`, and gives the
 * tokens want */
static void falls_back(onnxc_session *s, const int64_t *want, const char *reason) {
  if (!s) return;
  int64_t c[STEPS];
  int in_c = 1, fixed_c;
  uint64_t cp_c;
  char why[256];
  run(s, 0, c, &in_c, &fixed_c, &cp_c, why);
  CHECK(!in_c && strstr(why, reason) && memcmp(want, c, sizeof c) == 0);
}

static void test_in_place(int gqa) {
  onnxc_model *m = decoder(gqa, "", "");
  onnxc_session *s = session_of(m, 1);
  if (!s) goto done;
  int64_t a[STEPS] = {0}, b[STEPS] = {0};
  int in_a = 0, in_b = 0, fixed_a = 0, fixed_b = 0;
  uint64_t cp_a = 1, cp_b = 1;
  char why[256];
  run(s, 0, a, &in_a, &fixed_a, &cp_a, why);
  if (!in_a) fprintf(stderr, "not in place: %s\n", why);
  CHECK(in_a && fixed_a && cp_a == 0);
  run(s, 1, b, &in_b, &fixed_b, &cp_b, why);
  CHECK(!in_b && strstr(why, "ONNXC_GENERATE_KV") && !fixed_b); /* two buffers swapped */
  CHECK(memcmp(a, b, sizeof a) == 0);
  /* the tokens are not a fixed point: the model says something */
  int distinct = 0;
  for (int i = 1; i < STEPS; i++) distinct += a[i] != a[i - 1];
  CHECK(distinct > 5);
  /* a present read by another node: the copying path, which says why */
  onnxc_model *m2 = decoder(gqa, ", float dbg", "  dbg = ReduceSum(\"present.0.key\")\n");
  onnxc_session *s2 = session_of(m2, 1);
  falls_back(s2, a, "ReduceSum");
  onnxc_session_free(s2);
  onnxc_model_free(m2);
  /* a session made without optimisation: no fused attention, the copying path */
  onnxc_session *s0 = session_of(m, 0);
  falls_back(s0, a, "optimization_level is 0");
  onnxc_session_free(s0);
done:
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* Greedy steps of one generator on s (the in-place path unless the graph
 * does not allow it; ONNXC_GENERATE_KV unset by the caller): whether it
 * was in place; the tokens in toks. For threads: no setenv here. */
static int greedy(onnxc_session *s, int64_t *toks) {
  int64_t prompt[] = {3, 9, 1};
  onnxc_generate_options o = {0};
  o.max_new_tokens = STEPS;
  onnxc_generator *g = NULL;
  onnxc_error e = {0};
  if (onnxc_generate_start(s, prompt, 3, &o, &g, &e) != ONNXC_OK) return -1;
  int in_place = ox_gen_cache_in_place(g, NULL);
  for (int i = 0; i < STEPS; i++) {
    int done = 0;
    if (onnxc_generate_next(g, &toks[i], &done, &e) != ONNXC_OK || done) in_place = -1;
  }
  onnxc_generate_free(g);
  return in_place;
}

typedef struct worker {
  onnxc_session *s;
  int64_t toks[STEPS];
  int in_place;
} worker;

static void *work(void *p) {
  worker *w = p;
  w->in_place = greedy(w->s, w->toks);
  return NULL;
}

/* One caller session serves every generation: ones that start at once on
 * several threads, two generators alive together stepping in turn (each
 * its own buffers), and a later one; all give the copying path's tokens. */
static void test_shared(void) {
  onnxc_model *m = decoder(0, "", "");
  onnxc_session *s = session_of(m, 1), *sc = session_of(m, 1);
  if (!s || !sc) goto done;
  int64_t want[STEPS];
  int in_c = 1, fixed_c;
  uint64_t cp_c;
  char why[256];
  run(sc, 1, want, &in_c, &fixed_c, &cp_c, why);
  CHECK(!in_c);
  unsetenv("ONNXC_GENERATE_KV");
  enum { N = 4 };
  worker w[N];
  pthread_t th[N];
  int started[N];
  for (int i = 0; i < N; i++) {
    w[i] = (worker){.s = s, .in_place = -1};
    started[i] = pthread_create(&th[i], NULL, work, &w[i]) == 0;
  }
  for (int i = 0; i < N; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    CHECK(started[i] && w[i].in_place == 1 && memcmp(w[i].toks, want, sizeof want) == 0);
  }
  /* two alive at once, stepping in turn */
  int64_t prompt[] = {3, 9, 1}, t1[STEPS], t2[STEPS];
  onnxc_generate_options o = {0};
  o.max_new_tokens = STEPS;
  onnxc_generator *g1 = NULL, *g2 = NULL;
  onnxc_error e = {0};
  CHECK(onnxc_generate_start(s, prompt, 3, &o, &g1, &e) == ONNXC_OK);
  CHECK(onnxc_generate_start(s, prompt, 3, &o, &g2, &e) == ONNXC_OK);
  if (g1 && g2) {
    CHECK(ox_gen_cache_in_place(g1, NULL) && ox_gen_cache_in_place(g2, NULL));
    for (int i = 0; i < STEPS; i++) {
      int d1 = 0, d2 = 0;
      CHECK(onnxc_generate_next(g1, &t1[i], &d1, &e) == ONNXC_OK && !d1);
      CHECK(onnxc_generate_next(g2, &t2[i], &d2, &e) == ONNXC_OK && !d2);
      CHECK(ox_gen_cache_buffer(g1, 0) != ox_gen_cache_buffer(g2, 0));
    }
    CHECK(memcmp(t1, want, sizeof want) == 0 && memcmp(t2, want, sizeof want) == 0);
  }
  onnxc_generate_free(g1);
  onnxc_generate_free(g2);
  int64_t t3[STEPS];
  CHECK(greedy(s, t3) == 1 && memcmp(t3, want, sizeof want) == 0);
done:
  onnxc_session_free(s);
  onnxc_session_free(sc);
  onnxc_model_free(m);
}

/* A graph that does not match: the reason, on every generation. */
static void test_shared_fallback(void) {
  onnxc_model *m = decoder(0, ", float dbg", "  dbg = ReduceSum(\"present.0.key\")\n");
  onnxc_session *s = session_of(m, 1);
  if (!s) goto done;
  int64_t t[STEPS];
  unsetenv("ONNXC_GENERATE_KV");
  CHECK(greedy(s, t) == 0);
  CHECK(greedy(s, t) == 0);
  int64_t prompt[] = {3, 9, 1};
  onnxc_generate_options o = {0};
  o.max_new_tokens = 2;
  onnxc_generator *g = NULL;
  onnxc_error e = {0};
  CHECK(onnxc_generate_start(s, prompt, 3, &o, &g, &e) == ONNXC_OK);
  const char *why = "";
  CHECK(g && !ox_gen_cache_in_place(g, &why) && strstr(why, "ReduceSum"));
  onnxc_generate_free(g);
done:
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* The session the pass rewrote lists the model's inputs only (names,
 * count, the graph-input listing too), takes positional inputs as the
 * model's, and its plain runs give the bytes of a session made without
 * the pass (Concat, attention without kv_len) at a few past lengths. */
static void test_plain_session(void) {
  onnxc_model *m = decoder(0, "", "");
  onnxc_session *s = session_of(m, 1), *off = NULL;
  onnxc_error e = {0};
  onnxc_session_options o = {0};
  const char *no_kv[] = {"kv_cache"};
  o.optimization_level = 1;
  o.threads = 1;
  o.disabled_passes = no_kv;
  o.n_disabled_passes = 1;
  if (!s || onnxc_session_create(m, &o, &off, &e) != ONNXC_OK) {
    CHECK(0);
    goto done;
  }
  const char *names[] = {"input_ids", "attention_mask", "position_ids", "past_key_values.0.key",
                         "past_key_values.0.value"};
  CHECK(onnxc_session_input_count(s) == 5 && onnxc_session_graph_input_count(s) == 5);
  for (size_t i = 0; i < 5; i++)
    CHECK(strcmp(onnxc_session_input_name(s, i), names[i]) == 0 &&
          strcmp(onnxc_session_graph_input_name(s, i), names[i]) == 0);
  CHECK(onnxc_session_input_name(s, 5) == NULL && onnxc_session_graph_input_name(s, 5) == NULL);
  for (int64_t past = 0; past <= 5; past += 5) {
    int64_t ids[2] = {3, 7}, mask[7], pos[2] = {past, past + 1};
    for (int i = 0; i < 7; i++) mask[i] = 1;
    float pk[HEADS * 5 * HD], pv[HEADS * 5 * HD];
    for (int i = 0; i < HEADS * 5 * HD; i++) pk[i] = (float)rnd(), pv[i] = (float)rnd();
    int64_t di[2] = {1, 2}, dm[2] = {1, past + 2}, dp[4] = {1, HEADS, past, HD};
    onnxc_value *in[5] = {onnxc_tensor_wrap(7, di, 2, ids, &e), onnxc_tensor_wrap(7, dm, 2, mask, &e),
                          onnxc_tensor_wrap(7, di, 2, pos, &e), onnxc_tensor_wrap(1, dp, 4, pk, &e),
                          onnxc_tensor_wrap(1, dp, 4, pv, &e)};
    onnxc_value *a[3] = {NULL}, *b[3] = {NULL};
    CHECK(onnxc_session_run(s, NULL, in, 5, NULL, a, 3, &e) == ONNXC_OK);
    CHECK(onnxc_session_run(off, NULL, in, 5, NULL, b, 3, &e) == ONNXC_OK);
    for (int k = 0; k < 3; k++)
      CHECK(a[k] && b[k] && onnxc_tensor_nbytes(a[k]) == onnxc_tensor_nbytes(b[k]) &&
            memcmp(onnxc_tensor_data_const(a[k]), onnxc_tensor_data_const(b[k]),
                   onnxc_tensor_nbytes(a[k])) == 0);
    for (int k = 0; k < 3; k++) onnxc_value_free(a[k]), onnxc_value_free(b[k]);
    /* one positional input more than the model has: refused */
    onnxc_value *six[6] = {in[0], in[1], in[2], in[3], in[4], in[4]};
    CHECK(onnxc_session_run(s, NULL, six, 6, NULL, a, 3, &e) != ONNXC_OK);
    for (int k = 0; k < 5; k++) onnxc_value_free(in[k]);
  }
done:
  onnxc_session_free(s);
  onnxc_session_free(off);
  onnxc_model_free(m);
}

/* KVCacheAppend without its cache against Concat (ONNX's, at level 0),
 * then with a cache of 5 rows (no buffer given: the cache copied, then the
 * rows at past's length); past's length and the new rows beyond the cache
 * fail. */
static void test_append_kernel(void) {
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnxc\" : 1]>\n"
      "g (float[1,2,P,3] past, float[1,2,2,3] nw, optional(float[]) cache) => (float[1,2,T,3] y,"
      " int64 len, int64[4] shape) {\n"
      "  y, len, shape = ai.onnxc.KVCacheAppend(past, nw, cache)\n}\n");
  onnxc_model *cm = parse(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[1,2,P,3] past, float[1,2,2,3] nw) => (float[1,2,T,3] y) {\n"
      "  y = Concat <axis = 2> (past, nw)\n}\n");
  onnxc_session *s = session_of(m, 1), *sc = session_of(cm, 0);
  if (!s || !sc) goto done;
  CHECK(onnxc_session_input_count(s) == 3); /* a model's own optional input is listed */
  float cache[30], nw[12], past[6];
  for (int i = 0; i < 30; i++) cache[i] = (float)i;
  for (int i = 0; i < 12; i++) nw[i] = 100.0f + (float)i;
  for (int i = 0; i < 6; i++) past[i] = -1.0f - (float)i;
  int64_t dc[4] = {1, 2, 5, 3}, dn[4] = {1, 2, 2, 3}, dp[4] = {1, 2, 1, 3};
  onnxc_error e = {0};
  onnxc_value *in[3] = {onnxc_tensor_wrap(1, dp, 4, past, &e), onnxc_tensor_wrap(1, dn, 4, nw, &e),
                        onnxc_tensor_wrap(1, dc, 4, cache, &e)};
  onnxc_value *out[3] = {NULL}, *want = NULL;
  /* no cache: Concat's bytes, its length and shape */
  CHECK(onnxc_session_run(s, NULL, in, 2, NULL, out, 3, &e) == ONNXC_OK);
  CHECK(onnxc_session_run(sc, NULL, in, 2, NULL, &want, 1, &e) == ONNXC_OK);
  if (out[0] && out[1] && out[2] && want) {
    CHECK(onnxc_tensor_nbytes(out[0]) == 4 * 18 && onnxc_tensor_nbytes(want) == 4 * 18 &&
          memcmp(onnxc_tensor_data_const(out[0]), onnxc_tensor_data_const(want), 4 * 18) == 0);
    CHECK(*(const int64_t *)onnxc_tensor_data_const(out[1]) == 3);
    const int64_t *sh = onnxc_tensor_data_const(out[2]);
    CHECK(sh[0] == 1 && sh[1] == 2 && sh[2] == 3 && sh[3] == 3);
  }
  onnxc_value_free(want);
  for (int i = 0; i < 3; i++) onnxc_value_free(out[i]), out[i] = NULL;
  /* a cache: rows [1, 3) of each head are new's, the rest the cache's */
  CHECK(onnxc_session_run(s, NULL, in, 3, NULL, out, 3, &e) == ONNXC_OK);
  if (out[0] && out[1] && out[2]) {
    const float *y = onnxc_tensor_data_const(out[0]);
    int ok = onnxc_tensor_nbytes(out[0]) == sizeof cache;
    for (int h = 0; ok && h < 2; h++)
      for (int r = 0; r < 5; r++)
        for (int c = 0; c < 3; c++) {
          float w = r >= 1 && r < 3 ? nw[(h * 2 + r - 1) * 3 + c] : cache[(h * 5 + r) * 3 + c];
          ok = ok && y[(h * 5 + r) * 3 + c] == w;
        }
    CHECK(ok);
    CHECK(*(const int64_t *)onnxc_tensor_data_const(out[1]) == 3);
    const int64_t *sh = onnxc_tensor_data_const(out[2]);
    CHECK(sh[0] == 1 && sh[1] == 2 && sh[2] == 3 && sh[3] == 3);
  }
  for (int i = 0; i < 3; i++) onnxc_value_free(out[i]), out[i] = NULL;
  onnxc_value_free(in[0]);
  int64_t dp4[4] = {1, 2, 4, 3}; /* 4 + 2 rows in a cache of 5 */
  float past4[24] = {0};
  in[0] = onnxc_tensor_wrap(1, dp4, 4, past4, &e);
  CHECK(onnxc_session_run(s, NULL, in, 3, NULL, out, 3, &e) != ONNXC_OK);
  CHECK(strstr(e.msg, "past_len 4") && strstr(e.msg, "cache of 5 rows"));
  for (int i = 0; i < 3; i++) onnxc_value_free(in[i]), onnxc_value_free(out[i]);
done:
  onnxc_session_free(s);
  onnxc_session_free(sc);
  onnxc_model_free(m);
  onnxc_model_free(cm);
}

/* Runs the fused session on fi and the plain one on pi; checks that their
 * outputs agree to 1e-5 */
static void same_attention(onnxc_session *sf, onnxc_value **fi, size_t nf, onnxc_session *sp,
                           onnxc_value **pi, size_t np) {
  onnxc_error e = {0};
  onnxc_value *yf = NULL, *yp = NULL;
  CHECK(onnxc_session_run(sf, NULL, fi, nf, NULL, &yf, 1, &e) == ONNXC_OK);
  if (e.code) fprintf(stderr, "%s\n", e.msg);
  CHECK(onnxc_session_run(sp, NULL, pi, np, NULL, &yp, 1, &e) == ONNXC_OK);
  if (yf && yp && onnxc_tensor_nbytes(yf) == onnxc_tensor_nbytes(yp)) {
    const float *a = onnxc_tensor_data_const(yf), *b = onnxc_tensor_data_const(yp);
    double worst = 0;
    for (size_t i = 0; i < onnxc_tensor_nbytes(yf) / sizeof(float); i++)
      worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
    CHECK(worst < 1e-5);
  } else {
    CHECK(0);
  }
  onnxc_value_free(yf);
  onnxc_value_free(yp);
}

/* AttentionBHSDFused with kv_len over K and V buffers of 7 rows, against
 * the plain operators (MatMul, Mul, Add, Softmax, MatMul; optimisation
 * level 0) on the first 5 rows; kv_len beyond the rows fails. */
static void test_attention_kv_len(void) {
  onnxc_model *fused = parse(
      "<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnxc\" : 1]>\n"
      "g (float[1,2,3,4] q, float[1,2,7,4] k, float[1,2,7,4] v, float[1,1,3,5] mask, int64 n)"
      " => (float[1,2,3,4] y) {\n"
      "  y = ai.onnxc.AttentionBHSDFused <scale = 0.5> (q, k, v, mask, \"\", \"\", \"\", \"\", n)\n"
      "}\n");
  onnxc_model *plain = parse(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[1,2,3,4] q, float[1,2,5,4] k, float[1,2,5,4] v, float[1,1,3,5] mask)"
      " => (float[1,2,3,4] y) <float c = {0.5}> {\n"
      "  kt = Transpose <perm = [0, 1, 3, 2]> (k)\n  s = MatMul(q, kt)\n  s1 = Mul(s, c)\n"
      "  s2 = Add(s1, mask)\n  p = Softmax <axis = -1> (s2)\n  y = MatMul(p, v)\n}\n");
  onnxc_session *sf = session_of(fused, 1), *sp = session_of(plain, 0);
  if (!sf || !sp) goto done;
  float q[24], k[56], v[56], k5[40], v5[40], mask[15];
  lcg = 99;
  for (int i = 0; i < 24; i++) q[i] = (float)rnd();
  for (int i = 0; i < 56; i++) k[i] = (float)rnd(), v[i] = (float)rnd();
  for (int i = 0; i < 15; i++) mask[i] = i % 4 == 3 ? -1e9f : 0.0f;
  for (int h = 0; h < 2; h++) /* the first 5 of each head's 7 rows */
    memcpy(k5 + h * 20, k + h * 28, 20 * sizeof(float)),
        memcpy(v5 + h * 20, v + h * 28, 20 * sizeof(float));
  int64_t dq[4] = {1, 2, 3, 4}, d7[4] = {1, 2, 7, 4}, d5[4] = {1, 2, 5, 4}, dm[4] = {1, 1, 3, 5};
  int64_t n = 5;
  onnxc_error e = {0};
  onnxc_value *fi[5] = {onnxc_tensor_wrap(1, dq, 4, q, &e), onnxc_tensor_wrap(1, d7, 4, k, &e),
                        onnxc_tensor_wrap(1, d7, 4, v, &e), onnxc_tensor_wrap(1, dm, 4, mask, &e),
                        onnxc_tensor_wrap(7, NULL, 0, &n, &e)};
  onnxc_value *pi[4] = {onnxc_tensor_wrap(1, dq, 4, q, &e), onnxc_tensor_wrap(1, d5, 4, k5, &e),
                        onnxc_tensor_wrap(1, d5, 4, v5, &e), onnxc_tensor_wrap(1, dm, 4, mask, &e)};
  same_attention(sf, fi, 5, sp, pi, 4);
  onnxc_value *yf = NULL;
  n = 8;
  CHECK(onnxc_session_run(sf, NULL, fi, 5, NULL, &yf, 1, &e) != ONNXC_OK);
  CHECK(strstr(e.msg, "kv_len 8") != NULL);
  onnxc_value_free(yf);
  for (int i = 0; i < 5; i++) onnxc_value_free(fi[i]);
  for (int i = 0; i < 4; i++) onnxc_value_free(pi[i]);
done:
  onnxc_session_free(sf);
  onnxc_session_free(sp);
  onnxc_model_free(fused);
  onnxc_model_free(plain);
}

/* the same with grouped-query attention: 4 query heads over the 2 K/V heads
 * (repeat_kv folded, kv_expand), against plain operators on K and V whose
 * heads were repeated by hand */
static void test_attention_kv_len_groups(void) {
  onnxc_model *fused = parse(
      "<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnxc\" : 1]>\n"
      "g (float[1,4,3,4] q, float[1,2,7,4] k, float[1,2,7,4] v, int64 n) => (float[1,4,3,4] y) {\n"
      "  y = ai.onnxc.AttentionBHSDFused <scale = 0.5, kv_groups = 1, kv_expand = [1, 2, 2, 5, 4]>"
      " (q, k, v, \"\", \"\", \"\", \"\", \"\", n)\n}\n");
  onnxc_model *plain = parse(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[1,4,3,4] q, float[1,4,5,4] k, float[1,4,5,4] v) => (float[1,4,3,4] y)"
      " <float c = {0.5}> {\n"
      "  kt = Transpose <perm = [0, 1, 3, 2]> (k)\n  s = MatMul(q, kt)\n  s1 = Mul(s, c)\n"
      "  p = Softmax <axis = -1> (s1)\n  y = MatMul(p, v)\n}\n");
  onnxc_session *sf = session_of(fused, 1), *sp = session_of(plain, 0);
  if (!sf || !sp) goto done;
  float q[48], k[56], v[56], k4[80], v4[80];
  lcg = 7;
  for (int i = 0; i < 48; i++) q[i] = (float)rnd();
  for (int i = 0; i < 56; i++) k[i] = (float)rnd(), v[i] = (float)rnd();
  for (int h = 0; h < 4; h++) /* query head h reads K/V head h / 2, its first 5 rows */
    memcpy(k4 + h * 20, k + h / 2 * 28, 20 * sizeof(float)),
        memcpy(v4 + h * 20, v + h / 2 * 28, 20 * sizeof(float));
  int64_t dq[4] = {1, 4, 3, 4}, d7[4] = {1, 2, 7, 4}, d5[4] = {1, 4, 5, 4}, n = 5;
  onnxc_error e = {0};
  onnxc_value *fi[4] = {onnxc_tensor_wrap(1, dq, 4, q, &e), onnxc_tensor_wrap(1, d7, 4, k, &e),
                        onnxc_tensor_wrap(1, d7, 4, v, &e), onnxc_tensor_wrap(7, NULL, 0, &n, &e)};
  onnxc_value *pi[3] = {onnxc_tensor_wrap(1, dq, 4, q, &e), onnxc_tensor_wrap(1, d5, 4, k4, &e),
                        onnxc_tensor_wrap(1, d5, 4, v4, &e)};
  same_attention(sf, fi, 4, sp, pi, 3);
  for (int i = 0; i < 4; i++) onnxc_value_free(fi[i]);
  for (int i = 0; i < 3; i++) onnxc_value_free(pi[i]);
done:
  onnxc_session_free(sf);
  onnxc_session_free(sp);
  onnxc_model_free(fused);
  onnxc_model_free(plain);
}

int main(void) {
  test_in_place(0);
  test_in_place(1);
  test_shared();
  test_shared_fallback();
  test_plain_session();
  test_append_kernel();
  test_attention_kv_len();
  test_attention_kv_len_groups();
  return finish("test_generate_kv");
}
