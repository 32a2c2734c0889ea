/* kv_cache.c - the kv_cache pass: Optimum's decoder-with-past cache made
 * appendable in place, without changing what a plain run computes.
 *
 * The layout's graph writes present = Concat(past, new, axis 2): each step
 * a new [B, H, past + n, D] tensor with the whole past copied into it. No
 * fixed buffer can hold step t's past and step t + 1's as views (the past
 * is contiguous per head), so the generation loop (src/api/generate.c)
 * needs another contract for the cache. The pass gives it one that a run
 * takes only when asked:
 *
 *   Concat(past, new)  ->  KVCacheAppend(past, new, cache?)
 *                            -> present, total_len, present_shape
 *   AttentionBHSDFused(q, present_k, present_v, ...)
 *                      ->  the same with kv_len = total_len (input 8)
 *   Shape(present)     ->  Identity(present_shape)
 *
 * with a new graph input "<past>.onnxc_cache" per cache, of type
 * optional(tensor(float)). A run that does not feed it (every caller but
 * the loop; the session does not list it) gets Concat's result, its length
 * and shape: the attention reads all of K and V (kv_len is their length),
 * so the outputs are the same bits as before. The loop feeds one buffer of
 * fixed length per cache as both the cache input and present's output
 * buffer: KVCacheAppend then writes only the new rows, at past's length,
 * and the attention reads the first total_len rows (src/ops/fused/
 * kv_append.c).
 *
 * A Concat matches when past is a float graph input of rank 4 with no
 * default, read only by it and by Shape nodes; present is a graph output
 * read only by Shape nodes (no start/end) and as K or V of fused attentions
 * that can take kv_len; an attention reading one of K and V from such a
 * cache reads the other from one too (their rows are the same count); the
 * graph has no subgraphs. Runs after attention_bhsd, which makes the fused
 * attention. ox_opt_kv_cache_of says, for the generation loop, why a past
 * input did not match. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "pass.h"

#define CACHE_SUFFIX ".onnxc_cache"

static bool is_attention(const ox_node *n) {
  return n->op_type && strcmp(n->op_type, OX_ONNXC_ATTN_BHSD) == 0 && n->domain &&
         strcmp(n->domain, OX_ONNXC_DOMAIN) == 0;
}

/* an attention reading K and V as [B, Hk, T, D] rows, without kv_len yet */
static bool takes_len(const ox_node *n) {
  return ox_node_attr_int(n, "k_transposed", 0) == 0 && ox_node_attr_int(n, "k_bshd", 0) == 0 &&
         ox_node_attr_int(n, "v_bshd", 0) == 0 && n->n_input >= 3 &&
         (n->n_input <= 8 || (n->n_input == 9 && !ox_opt_given(n, 8)));
}

static bool plain_shape(const ox_node *n) {
  return ox_opt_op_is(n, "Shape") && !ox_node_attr(n, "start") && !ox_node_attr(n, "end");
}

static bool same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static bool reads_at(const ox_node *n, const char *name, size_t at) {
  return at < n->n_input && same(n->input[at], name);
}

static bool reads(const ox_node *n, const char *name) {
  for (size_t k = 0; k < n->n_input; k++)
    if (same(n->input[k], name)) return true;
  return false;
}

static const ox_value_info *graph_input(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_input; i++)
    if (same(g->input[i].name, name)) return &g->input[i];
  return NULL;
}

static bool graph_output(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_output; i++)
    if (same(g->output[i].name, name)) return true;
  return false;
}

static bool initializer(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (same(g->initializer[i].name, name)) return true;
  return false;
}

/* `name` is already a value of the graph (an input, initializer or output
 * of a live node) */
static bool name_taken(const ox_graph *g, const ox_node *const *live, size_t n, const char *name) {
  if (graph_input(g, name) || initializer(g, name)) return true;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < live[i]->n_output; k++)
      if (same(live[i]->output[k], name)) return true;
  return false;
}

static bool axis2_concat(const ox_node *n) {
  int64_t axis = ox_node_attr_int(n, "axis", 0);
  return ox_opt_op_is(n, "Concat") && n->n_input == 2 && n->n_output == 1 &&
         ox_opt_given(n, 0) && ox_opt_given(n, 1) && n->output[0] && *n->output[0] &&
         (axis == 2 || axis == -2);
}

static const char *label(const ox_node *n) { return n->name ? n->name : ""; }

/* Whether Concat live[c] matches on its own (the pairing of K and V aside);
 * why says what does not. */
static bool fits(const ox_graph *g, const ox_node *const *live, size_t n, size_t c, char *why,
                 size_t size) {
  const ox_node *cn = live[c];
  const char *past = cn->input[0], *present = cn->output[0];
  const ox_value_info *vi = graph_input(g, past);
  const ox_type *t = vi ? vi->type : NULL;
  if (!t || t->kind != OX_TYPE_TENSOR || !t->has_elem_type || t->elem_type != OX_FLOAT ||
      !t->shape || t->shape->n_dim != 4 || initializer(g, past)) {
    snprintf(why, size, "'%s' is not a float32 graph input of rank 4 without a default", past);
    return false;
  }
  if (!graph_output(g, present) || graph_output(g, past)) {
    snprintf(why, size, "'%s' is not a graph output, or '%s' is one", present, past);
    return false;
  }
  char *cache = malloc(strlen(past) + sizeof CACHE_SUFFIX);
  if (!cache) {
    snprintf(why, size, "out of memory");
    return false;
  }
  sprintf(cache, "%s" CACHE_SUFFIX, past);
  bool taken = name_taken(g, live, n, cache);
  free(cache);
  if (taken) {
    snprintf(why, size, "'%s" CACHE_SUFFIX "' is already a name of the graph", past);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    const ox_node *r = live[i];
    if (i != c && reads(r, past) && !plain_shape(r)) {
      snprintf(why, size, "'%s' is read by %s '%s'", past, r->op_type, label(r));
      return false;
    }
    if (i == c || !reads(r, present) || plain_shape(r)) continue;
    bool kv = is_attention(r) && takes_len(r) && !reads_at(r, present, 0);
    for (size_t k = 3; kv && k < r->n_input; k++) kv = !same(r->input[k], present);
    if (!kv) {
      snprintf(why, size, "'%s' is read by %s '%s' (not a fused attention's K or V)", present,
               r->op_type, label(r));
      return false;
    }
  }
  return true;
}

/* the index of the candidate Concat whose output is `name`, or -1 */
static long cand_of(const ox_node *const *live, const bool *ok, size_t n, const char *name) {
  for (size_t i = 0; name && i < n; i++)
    if (ok[i] && same(live[i]->output[0], name)) return (long)i;
  return -1;
}

/* ok[i]: live[i] is a Concat the pass rewrites. When `past` is given, why
 * says why its Concat is not one (or that there is none). */
static void match(const ox_graph *g, const ox_node *const *live, size_t n, bool *ok,
                  const char *past, char *why, size_t size) {
  bool sub = false;
  for (size_t i = 0; i < n; i++) sub = sub || ox_opt_has_subgraph(live[i]);
  char buf[300];
  bool found = false;
  for (size_t i = 0; i < n; i++) {
    ok[i] = false;
    if (!axis2_concat(live[i])) continue;
    bool mine = past && same(live[i]->input[0], past);
    found = found || mine;
    if (sub) {
      if (mine) snprintf(why, size, "the graph has subgraphs (If, Loop)");
      continue;
    }
    ok[i] = fits(g, live, n, i, mine ? why : buf, mine ? size : sizeof buf);
  }
  if (past && !found)
    snprintf(why, size, "'%s' is not read by a Concat(past, new, axis 2)", past);
  /* an attention reading K or V from a cache reads both from caches:
   * dropping a pair may break another, so until nothing changes */
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; i++) {
      const ox_node *r = live[i];
      if (!is_attention(r) || r->n_input < 3) continue;
      long kc = cand_of(live, ok, n, r->input[1]), vc = cand_of(live, ok, n, r->input[2]);
      if ((kc < 0) == (vc < 0)) continue;
      long drop = kc >= 0 ? kc : vc;
      ok[drop] = false;
      changed = true;
      if (past && same(live[drop]->input[0], past))
        snprintf(why, size, "attention '%s' reads only one of K and V from a cache", label(r));
    }
  }
}

/* live nodes of the view (replacements in their nodes' places) into out;
 * idx[k]: the view index of out[k] */
static size_t live_nodes(const ox_pass_view *v, const ox_node **out, size_t *idx) {
  size_t n = 0;
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i]) continue;
    idx[n] = i;
    out[n++] = v->repl[i] ? v->repl[i] : &v->nodes[i];
  }
  return n;
}

/* a copy of node `at` (in the arena) with room for n_in inputs, in repl */
static ox_node *edit(ox_pass_view *v, size_t at, const ox_node *cur, size_t n_in) {
  ox_node *c = ox_arena_alloc(v->a, sizeof *c);
  char **in = ox_arena_calloc(v->a, n_in + 1, sizeof *in);
  if (!c || !in) return NULL;
  *c = *cur;
  for (size_t k = 0; k < n_in; k++) in[k] = k < cur->n_input ? cur->input[k] : (char *)"";
  c->input = in;
  c->n_input = n_in;
  v->repl[at] = c;
  return c;
}

static int oom(ox_pass_view *v) {
  return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
}

/* Concat live[c] (view index at) and its readers rewritten */
static int rewrite(ox_pass_view *v, const ox_node **live, const size_t *idx, size_t n, size_t c) {
  const ox_node *cn = live[c];
  const char *past = cn->input[0], *present = cn->output[0];
  char *cache = ox_arena_printf(v->a, "%s" CACHE_SUFFIX, past);
  char *len = ox_arena_printf(v->a, "%s.onnxc_len", present);
  char *shape = ox_arena_printf(v->a, "%s.onnxc_shape", present);
  ox_type *elem = ox_type_new_tensor(v->a, OX_FLOAT, NULL, 0);
  ox_type *opt = ox_arena_calloc(v->a, 1, sizeof *opt);
  if (!cache || !len || !shape || !elem || !opt) return oom(v);
  elem->shape = NULL; /* no shape: the buffer's length is the loop's */
  opt->kind = OX_TYPE_OPTIONAL;
  opt->elem = elem;
  bool need_len = false, need_shape = false;
  for (size_t i = 0; i < n; i++) {
    const ox_node *r = live[i];
    if (i == c || !reads(r, present)) continue;
    if (plain_shape(r)) {
      ox_node *s = edit(v, idx[i], r, 1);
      if (!s) return oom(v);
      s->input[0] = shape;
      s->op_type = (char *)"Identity";
      s->n_attribute = 0;
      v->reads(v, shape, idx[i]);
      live[i] = s;
      need_shape = true;
    } else if (reads_at(r, present, 1)) { /* K: kv_len from its layer */
      ox_node *a = edit(v, idx[i], r, 9);
      if (!a) return oom(v);
      a->input[8] = len;
      v->reads(v, len, idx[i]);
      live[i] = a;
      need_len = true;
    }
  }
  ox_node *kv = ox_opt_new_node(v, cn, OX_ONNXC_KV_APPEND, 3, 0);
  char **outs = ox_arena_calloc(v->a, 3, sizeof *outs);
  if (!kv || !outs) return oom(v);
  kv->n_attribute = 0;
  kv->input[0] = (char *)past;
  kv->input[1] = cn->input[1];
  kv->input[2] = cache;
  outs[0] = (char *)present;
  outs[1] = need_len ? len : (char *)"";
  outs[2] = need_shape ? shape : (char *)"";
  kv->output = outs;
  kv->n_output = need_shape ? 3 : need_len ? 2 : 1;
  v->repl[idx[c]] = kv;
  live[c] = kv;
  return v->new_input(v, cache, opt);
}

int ox_opt_kv_cache(ox_pass_view *v) {
  const ox_node **live = ox_arena_calloc(v->a, v->n_node + 1, sizeof *live);
  size_t *idx = ox_arena_calloc(v->a, v->n_node + 1, sizeof *idx);
  bool *ok = ox_arena_calloc(v->a, v->n_node + 1, sizeof *ok);
  if (!live || !idx || !ok) return oom(v);
  size_t n = live_nodes(v, live, idx);
  match(v->graph, live, n, ok, NULL, NULL, 0);
  for (size_t i = 0; i < n; i++)
    if (ok[i]) {
      int rc = rewrite(v, live, idx, n, i);
      if (rc) return rc;
    }
  return OX_OK;
}

bool ox_opt_kv_cache_of(const ox_graph *g, const char *past, char *why, size_t size) {
  char *cache = malloc(strlen(past) + sizeof CACHE_SUFFIX);
  const ox_node **live = calloc(g->n_node + 1, sizeof *live);
  bool *ok = calloc(g->n_node + 1, sizeof *ok), have = false;
  if (!cache || !live || !ok) {
    snprintf(why, size, "out of memory");
  } else {
    sprintf(cache, "%s" CACHE_SUFFIX, past);
    have = graph_input(g, cache) != NULL;
    if (!have) {
      for (size_t i = 0; i < g->n_node; i++) live[i] = &g->node[i];
      snprintf(why, size, "'%s' did not match the kv_cache pass", past);
      match(g, live, g->n_node, ok, past, why, size);
    }
  }
  free(cache);
  free(live);
  free(ok);
  return have;
}
