/* generate_kv.c - the in-place KV cache of Optimum's decoder-with-past
 * layout: a rewrite of the decoder's optimised graph, for the generation
 * loop's own session, after which each cache input is one buffer of fixed
 * length that every step appends to (no copy of the cache per token).
 *
 * The layout's graph writes present = Concat(past, new, axis 2): a new
 * [1, H, past + n, D] tensor each step, the whole past copied into it. The
 * past is [1, H, past, D] contiguous, so no fixed buffer can hold step t's
 * past and step t + 1's as views. The rewrite changes the graph's contract
 * for the cache instead (as onnxruntime-genai's shared buffer does):
 *
 *   Concat(past, new)  ->  KVCacheAppend(cache, new, past_len)
 *                            -> present, total_len, present_shape
 *   AttentionBHSDFused(q, present_k, present_v, ...)
 *                      ->  the same with kv_len = total_len (input 8)
 *   Shape(present)     ->  Identity(present_shape)
 *
 * with new graph inputs "<past name>.onnxc_cache" (the buffer, [1, H, max,
 * D]) and "onnxc_kv_past_len" (int64 scalar). The past inputs stay, fed at
 * their logical shape [1, H, past, D]: after the rewrite only Shape nodes
 * read them, so their data is never read. present becomes the buffer
 * itself, which the loop gives as the output's buffer: KVCacheAppend writes
 * its new rows there in place.
 *
 * The graph rewritten is the one a temporary session made with the
 * caller's session's options runs (functions inlined, passes applied),
 * cloned into a model that shares the caller's weights. The attention must
 * be fused: the graph is optimised with matmul_transb also off, since that
 * pass takes Q K^T first and attention_bhsd then leaves a K that is also a
 * graph output (every present is) unfused. Anything that does not match (a
 * reader of past or present other than those, a Concat on another axis, a
 * float16 cache, subgraphs, a failure to optimise, a session made at
 * optimization_level 0 or with custom operators) leaves the loop on its
 * copying path, with the reason kept for the caller. The generator's
 * session is made with the caller's session's options too, once per
 * caller session (ox_gen_kv_shared): kept in its handle and shared by all
 * its generations. */
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"
#include "../schema/onnxc_ops.h"
#include "api_impl.h"
#include "generate_impl.h"

#define PAST_LEN_NAME "onnxc_kv_past_len"

static bool is_op(const ox_node *n, const char *domain, const char *op) {
  const char *d = n->domain ? n->domain : "";
  bool dom = *domain ? strcmp(d, domain) == 0 : ox_is_default_domain(d);
  return dom && n->op_type && strcmp(n->op_type, op) == 0;
}

static bool has_subgraph(const ox_graph *g) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t a = 0; a < g->node[i].n_attribute; a++)
      if (g->node[i].attribute[a].g || g->node[i].attribute[a].n_graphs) return true;
  return false;
}

static bool reads(const ox_node *n, const char *name, size_t *at) {
  for (size_t k = 0; k < n->n_input; k++)
    if (n->input[k] && strcmp(n->input[k], name) == 0) {
      if (at) *at = k;
      return true;
    }
  return false;
}

/* the node whose output `name` is, or -1 */
static long producer(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t o = 0; o < g->node[i].n_output; o++)
      if (g->node[i].output[o] && strcmp(g->node[i].output[o], name) == 0) return (long)i;
  return -1;
}

/* AttentionBHSDFused reading its K (input 1) and V (input 2) at their
 * rows as kv_len allows: [B, Hk, T, D] (grouped or not), no other layout */
static bool attention_takes_len(const ox_node *n) {
  return ox_node_attr_int(n, "k_transposed", 0) == 0 && ox_node_attr_int(n, "k_bshd", 0) == 0 &&
         ox_node_attr_int(n, "v_bshd", 0) == 0 && n->n_input >= 3 && n->n_input <= 8;
}

/* Checks that the cache pair k (past[k] -> present[k]) matches; sets
 * concat[k]. Also the attention nodes: each reads K and V from caches of
 * one layer. why: the first mismatch. */
static bool matches(const ox_graph *g, const char *const *past, const char *const *present,
                    size_t n_cache, long *concat, char *why, size_t why_size) {
  for (size_t k = 0; k < n_cache; k++) {
    long c = producer(g, present[k]);
    const ox_node *cn = c >= 0 ? &g->node[c] : NULL;
    int64_t axis = cn ? ox_node_attr_int(cn, "axis", 0) : 0;
    if (!cn || !is_op(cn, "", "Concat") || cn->n_input != 2 || cn->n_output != 1 ||
        strcmp(cn->input[0], past[k]) != 0 || (axis != 2 && axis != -2)) {
      snprintf(why, why_size, "'%s' is not made by Concat('%s', new, axis 2)", present[k], past[k]);
      return false;
    }
    concat[k] = c;
    for (size_t i = 0; i < g->n_node; i++) {
      const ox_node *n = &g->node[i];
      size_t at;
      if ((long)i != c && reads(n, past[k], NULL) && !is_op(n, "", "Shape")) {
        snprintf(why, why_size, "'%s' is read by %s '%s'", past[k], n->op_type,
                 n->name ? n->name : "");
        return false;
      }
      if (!reads(n, present[k], &at)) continue;
      bool shape = is_op(n, "", "Shape") && !ox_node_attr(n, "start") && !ox_node_attr(n, "end");
      bool attn = is_op(n, OX_ONNXC_DOMAIN, OX_ONNXC_ATTN_BHSD) && attention_takes_len(n) &&
                  (at == 1 || at == 2);
      if (!shape && !attn) {
        snprintf(why, why_size, "'%s' is read by %s '%s' (not a fused attention)", present[k],
                 n->op_type, n->name ? n->name : "");
        return false;
      }
    }
    for (size_t o = 0; o < g->n_output; o++)
      if (g->output[o].name && strcmp(g->output[o].name, past[k]) == 0) {
        snprintf(why, why_size, "'%s' is a graph output", past[k]);
        return false;
      }
  }
  /* an attention reading a cache reads both K and V from caches */
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    if (!is_op(n, OX_ONNXC_DOMAIN, OX_ONNXC_ATTN_BHSD)) continue;
    int from_cache = 0;
    for (size_t k = 0; k < n_cache; k++)
      from_cache += (n->n_input > 1 && strcmp(n->input[1], present[k]) == 0) +
                    (n->n_input > 2 && strcmp(n->input[2], present[k]) == 0);
    if (from_cache == 1) {
      snprintf(why, why_size, "attention '%s' reads only one of K and V from the cache",
               n->name ? n->name : "");
      return false;
    }
  }
  return true;
}

/* an all-unknown float tensor type of rank 4 (the cache's length is not
 * the past's or the present's symbol any more) */
static ox_type *cache_type(ox_arena *a) {
  const int64_t d[4] = {-1, -1, -1, -1};
  return ox_type_new_tensor(a, OX_FLOAT, d, 4);
}

/* The rewrite on g (allocating in a); false on OOM. */
static bool rewrite(ox_arena *a, ox_graph *g, const char *const *past, const char *const *present,
                    size_t n_cache, const long *concat) {
  for (size_t k = 0; k < n_cache; k++) {
    ox_node *cn = &g->node[concat[k]];
    char *cache = ox_arena_printf(a, "%s.onnxc_cache", past[k]);
    char *len = ox_arena_printf(a, "%s.onnxc_len", present[k]);
    char *shape = ox_arena_printf(a, "%s.onnxc_shape", present[k]);
    char **in = ox_arena_calloc(a, 3, sizeof *in), **out = ox_arena_calloc(a, 3, sizeof *out);
    char *dom = ox_arena_strdup(a, OX_ONNXC_DOMAIN), *op = ox_arena_strdup(a, OX_ONNXC_KV_APPEND);
    char *pl = ox_arena_strdup(a, PAST_LEN_NAME);
    if (!cache || !len || !shape || !in || !out || !dom || !op || !pl) return false;
    in[0] = cache, in[1] = cn->input[1], in[2] = pl;
    out[0] = cn->output[0], out[1] = len, out[2] = shape;
    cn->input = in, cn->n_input = 3, cn->output = out, cn->n_output = 3;
    cn->op_type = op, cn->domain = dom, cn->n_attribute = 0;
    for (size_t i = 0; i < g->n_node; i++) {
      ox_node *n = &g->node[i];
      size_t at;
      if ((long)i == concat[k] || !reads(n, present[k], &at)) continue;
      if (is_op(n, "", "Shape")) {
        char **si = ox_arena_calloc(a, 1, sizeof *si);
        char *id = ox_arena_strdup(a, "Identity");
        if (!si || !id) return false;
        si[0] = shape;
        n->input = si, n->n_input = 1, n->op_type = id, n->domain = NULL, n->n_attribute = 0;
      } else if (at == 1) { /* the attention's K: kv_len from its layer */
        char **ai = ox_arena_calloc(a, 9, sizeof *ai);
        char *none = ox_arena_strdup(a, "");
        if (!ai || !none) return false;
        for (size_t j = 0; j < 9; j++) ai[j] = j < n->n_input ? n->input[j] : none;
        ai[8] = len;
        n->input = ai, n->n_input = 9;
      }
    }
    /* the graph's input for the buffer; present's type is the buffer's */
    ox_value_info *vi = ox_value_info_push(a, &g->input, &g->n_input, cache);
    if (!vi || !(vi->type = cache_type(a))) return false;
    for (size_t o = 0; o < g->n_output; o++)
      if (g->output[o].name && strcmp(g->output[o].name, present[k]) == 0 &&
          !(g->output[o].type = cache_type(a)))
        return false;
  }
  ox_value_info *vi = ox_value_info_push(a, &g->input, &g->n_input, PAST_LEN_NAME);
  if (!vi || !(vi->type = ox_type_new_tensor(a, OX_INT64, NULL, 0))) return false;
  /* value_info of the presents told the Concat's shape: dropped */
  size_t kept = 0;
  for (size_t i = 0; i < g->n_value_info; i++) {
    bool stale = false;
    for (size_t k = 0; k < n_cache && !stale; k++)
      stale = g->value_info[i].name && strcmp(g->value_info[i].name, present[k]) == 0;
    if (!stale) g->value_info[kept++] = g->value_info[i];
  }
  g->n_value_info = kept;
  return true;
}

/* The caller's session's options with matmul_transb also left out (into
 * names, of cap entries); false when they do not fit. */
static bool without_transb(const ox_session_opts *so, const char **names, size_t cap, size_t *n) {
  *n = 0;
  bool have = false;
  for (size_t i = 0; i < so->n_disabled_passes; i++) {
    if (*n == cap) return false;
    names[(*n)++] = so->disabled_passes[i];
    have = have || strcmp(so->disabled_passes[i], "matmul_transb") == 0;
  }
  if (!have && *n == cap) return false;
  if (!have) names[(*n)++] = "matmul_transb";
  return true;
}

/* t's payload bytes p copied into a (t then points at the copy) */
static bool copy_payload(ox_arena *a, ox_tensor *t, ox_bytes p) {
  void *copy = ox_arena_memdup(a, p.data, p.size);
  if (!copy) return false;
  if (t->data_location == 1 && t->external.data)
    t->external.data = copy;
  else
    t->raw_data.data = copy;
  return true;
}

/* Payload bytes of the session's graph that are not the caller's model's
 * (a constant the passes made, in the temporary session's memory) copied
 * into the new model's arena; the model's own weights stay shared. */
static bool own_payloads(ox_arena *a, ox_graph *g, const ox_model *orig) {
  ox_map ours;
  ox_map_init(&ours);
  const ox_graph *og = orig->proto->graph;
  bool ok = true;
  for (size_t i = 0; ok && og && i < og->n_initializer; i++) {
    ox_bytes p = ox_tensor_payload(&og->initializer[i]);
    if (p.data && og->initializer[i].name)
      ok = ox_map_put(&ours, og->initializer[i].name, (uintptr_t)p.data) == OX_OK;
  }
  for (size_t i = 0; ok && i < g->n_initializer; i++) {
    ox_tensor *t = &g->initializer[i];
    ox_bytes p = ox_tensor_payload(t);
    uintptr_t v = 0;
    if (!p.data || (t->name && ox_map_get(&ours, t->name, &v) && v == (uintptr_t)p.data)) continue;
    ok = copy_payload(a, t, p);
  }
  /* tensors of attributes (Constant nodes): copied alike, they are small */
  for (size_t i = 0; ok && i < g->n_node; i++)
    for (size_t k = 0; ok && k < g->node[i].n_attribute; k++) {
      ox_tensor *t = g->node[i].attribute[k].t;
      ox_bytes p = t ? ox_tensor_payload(t) : (ox_bytes){NULL, 0};
      if (p.data) ok = copy_payload(a, t, p);
    }
  ox_map_free(&ours);
  return ok;
}

/* The caller's model as a session with options o runs it (functions
 * inlined, passes applied, constants folded), as a new model sharing the
 * caller's weights (which outlive it, as they outlive the caller's
 * session). NULL with why set when that session cannot be made; *oom on
 * OOM. */
static ox_model *optimised(const ox_model *orig, const ox_session_opts *o, char *why,
                           size_t why_size, bool *oom) {
  ox_session *tmp = NULL;
  ox_err e = {0};
  *oom = false;
  if (ox_session_create(orig, o, &tmp, &e)) {
    snprintf(why, why_size, "the graph could not be optimised: %s", e.msg);
    *oom = e.code == OX_ENOMEM;
    return NULL;
  }
  ox_model *m = ox_model_new();
  const ox_model_proto *op = orig->proto;
  ox_opset *imp = m ? ox_arena_calloc(m->arena, op->n_opset_import + 1, sizeof *imp) : NULL;
  bool ok = imp != NULL;
  if (ok) {
    *m->proto = *op; /* the names and metadata stay the caller's model's */
    m->proto->n_training_info = 0;
    m->proto->n_functions = 0; /* inlined in the session's graph */
    m->dir = orig->dir;
    bool has = false;
    for (size_t i = 0; i < op->n_opset_import; i++) {
      imp[i] = op->opset_import[i];
      has = has || (imp[i].domain && strcmp(imp[i].domain, OX_ONNXC_DOMAIN) == 0);
    }
    m->proto->opset_import = imp;
    if (!has)
      imp[m->proto->n_opset_import++] = (ox_opset){
          .domain = (char *)OX_ONNXC_DOMAIN, .version = OX_ONNXC_OPSET, .has_version = true};
    /* the session's folded weights are not graph inputs: IR 4 and up */
    if (m->proto->has_ir_version && m->proto->ir_version < 4) m->proto->ir_version = 4;
    m->proto->graph = ox_graph_clone(m->arena, ox_session_graph(tmp));
    ok = m->proto->graph && own_payloads(m->arena, m->proto->graph, orig);
  }
  ox_session_free(tmp);
  if (!ok) {
    ox_model_free(m);
    *oom = true;
    return NULL;
  }
  return m;
}

int ox_gen_kv_inplace(onnxc_session *s, const char *const *past, const char *const *present,
                      size_t n_cache, onnxc_session **out_s, onnxc_model **out_m, char *why,
                      size_t why_size) {
  *out_s = NULL;
  *out_m = NULL;
  /* the caller's session as it was made: its threads (or pool), limits,
   * cancel callback, log, numerics (low_bit_int8, quantized units) and
   * passes, so that the generator's session computes what the caller's
   * would have */
  const ox_session_opts *so = ox_session_options(ox_api_session(s));
  const char *names[64];
  size_t n_names = 0;
  if (so->optimization_level < 1) {
    snprintf(why, why_size, "the session's optimization_level is 0 (no fused attention)");
    return OX_OK;
  }
  if (so->custom_ops) {
    snprintf(why, why_size, "the session has custom operators");
    return OX_OK;
  }
  if (!without_transb(so, names, sizeof names / sizeof *names, &n_names)) {
    snprintf(why, why_size, "too many passes left out");
    return OX_OK;
  }
  ox_session_opts o = *so;
  o.disabled_passes = names;
  o.n_disabled_passes = n_names;
  o.profile = false;
  bool oom = false;
  ox_model *m = optimised((const ox_model *)onnxc_session_model(s), &o, why, why_size, &oom);
  if (!m) return oom ? OX_ENOMEM : OX_OK;
  onnxc_model *nm = (onnxc_model *)m;
  ox_graph *g = m->proto->graph;
  long *concat = calloc(n_cache ? n_cache : 1, sizeof *concat);
  int rc = OX_OK;
  if (!concat) {
    rc = OX_ENOMEM;
  } else if (has_subgraph(g) || g->n_sparse_initializer) {
    snprintf(why, why_size, "the graph has subgraphs (If, Loop) or sparse initializers");
  } else if (matches(g, past, present, n_cache, concat, why, why_size)) {
    ox_session *rs = NULL;
    ox_err e = {0};
    if (!rewrite(m->arena, g, past, present, n_cache, concat)) {
      rc = OX_ENOMEM;
    } else if (ox_session_create(m, so, &rs, &e)) {
      snprintf(why, why_size, "the rewritten graph does not load: %s", e.msg);
      rc = e.code == OX_ENOMEM ? OX_ENOMEM : OX_OK;
    } else if (!(*out_s = ox_api_session_wrap(rs))) {
      rc = OX_ENOMEM;
    }
  }
  free(concat);
  if (*out_s)
    *out_m = nm;
  else
    onnxc_model_free(nm);
  return rc;
}

int ox_gen_kv_shared(onnxc_session *s, const char *const *past, const char *const *present,
                     size_t n_cache, onnxc_session **out_s, char *why, size_t why_size) {
  *out_s = NULL;
  /* under the caller's session's lock: one rewrite per session, however
   * many generations start at once; the others wait for it and share it */
  ox_api_kv *kv = ox_api_kv_lock(s);
  if (!kv) return OX_OK;
  int rc = OX_OK;
  if (!kv->tried) {
    rc = ox_gen_kv_inplace(s, past, present, n_cache, &kv->s, &kv->m, kv->why, sizeof kv->why);
    kv->tried = rc == OX_OK; /* after OOM a later generation may try again */
  }
  *out_s = kv->s;
  snprintf(why, why_size, "%s", rc ? "" : kv->why);
  ox_api_kv_unlock(s);
  return rc;
}
