/* cse.c - one node for identical computations.
 *
 * Exporters and quantization tools repeat work: onnxruntime's
 * quantize_dynamic gives each of the query, key and value projections its
 * own DynamicQuantizeLinear of the same tensor. Two nodes of the same
 * domain, op, inputs and attributes compute the same outputs, so the later
 * one goes and its readers read the earlier one's outputs. Left alone:
 * nodes with no inputs, random draws, nodes with graph, tensor or sparse
 * attributes, and nodes whose outputs the graph exposes or a subgraph
 * reads. The host is told of each renaming (its reader counts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"

static const char *const random_ops[] = {
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial",  "Bernoulli",     "Dropout"};

typedef struct keybuf {
  char *s;
  size_t n, cap;
  bool bad;
} keybuf;

/* bytes as hex: the key is a C string for the map */
static void put(keybuf *k, const void *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (k->bad) return;
  if (n > ((size_t)1 << 24)) {
    k->bad = true;
    return;
  }
  if (k->n + 2 * n + 1 > k->cap) {
    size_t cap = (k->n + 2 * n + 1) * 2;
    char *s = realloc(k->s, cap);
    if (!s) {
      k->bad = true;
      return;
    }
    k->s = s;
    k->cap = cap;
  }
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    k->s[k->n++] = hex[b[i] >> 4];
    k->s[k->n++] = hex[b[i] & 15];
  }
  k->s[k->n] = 0;
}

static void put_str(keybuf *k, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put(k, &n, sizeof n); /* length first: no separator can be faked */
  if (n) put(k, s, n);
}

/* The node's key, or false when it must not be merged. */
static bool node_key(const ox_node *n, keybuf *k) {
  if (n->n_input == 0 || n->n_output == 0) return false;
  for (size_t r = 0; r < sizeof random_ops / sizeof *random_ops; r++)
    if (n->op_type && strcmp(n->op_type, random_ops[r]) == 0) return false;
  k->n = 0;
  put_str(k, n->domain && !ox_is_default_domain(n->domain) ? n->domain : "");
  put_str(k, n->op_type);
  put_str(k, n->overload);
  put(k, &n->n_input, sizeof n->n_input);
  for (size_t i = 0; i < n->n_input; i++) put_str(k, n->input[i]);
  put(k, &n->n_output, sizeof n->n_output);
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *a = &n->attribute[i];
    if (a->t || a->g || a->sparse_tensor || a->tp || a->n_tensors || a->n_graphs ||
        a->ref_attr_name)
      return false;
    put_str(k, a->name);
    put(k, &a->type, sizeof a->type);
    put(k, &a->f, sizeof a->f);
    put(k, &a->i, sizeof a->i);
    put(k, &a->s.size, sizeof a->s.size);
    if (a->s.size) put(k, a->s.data, a->s.size);
    put(k, &a->n_floats, sizeof a->n_floats);
    if (a->n_floats) put(k, a->floats, a->n_floats * sizeof *a->floats);
    put(k, &a->n_ints, sizeof a->n_ints);
    if (a->n_ints) put(k, a->ints, a->n_ints * sizeof *a->ints);
    put(k, &a->n_strings, sizeof a->n_strings);
    for (size_t q = 0; q < a->n_strings; q++) {
      put(k, &a->strings[q].size, sizeof a->strings[q].size);
      if (a->strings[q].size) put(k, a->strings[q].data, a->strings[q].size);
    }
  }
  return !k->bad;
}

int ox_opt_cse(ox_pass_view *v) {
  ox_map seen;
  ox_map_init(&seen);
  keybuf k = {0};
  int rc = OX_OK;
  for (size_t i = 0; i < v->n_node && !rc; i++) {
    if (v->drop[i] || v->repl[i] || !node_key(&v->nodes[i], &k)) continue;
    uintptr_t at;
    if (!ox_map_get(&seen, k.s, &at)) {
      /* the map keeps the pointer: the key goes to the arena */
      char *key = ox_arena_alloc(v->a, k.n + 1);
      if (!key || (memcpy(key, k.s, k.n + 1), ox_map_put(&seen, key, i + 1)))
        rc = ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
      continue;
    }
    const ox_node *a = &v->nodes[at - 1], *b = &v->nodes[i];
    bool pinned = false;
    for (size_t o = 0; o < b->n_output && !pinned; o++)
      pinned = b->output[o] && *b->output[o] && v->pinned(v, b->output[o]);
    for (size_t o = 0; o < b->n_output && !pinned; o++) /* an output only b has */
      pinned = b->output[o] && *b->output[o] && (!a->output[o] || !*a->output[o]);
    if (pinned || v->drop[at - 1] || v->repl[at - 1]) continue;
    for (size_t o = 0; o < b->n_output && !rc; o++)
      if (b->output[o] && *b->output[o] && a->output[o] && *a->output[o])
        rc = ox_opt_rename_reads(v, i, b->output[o], a->output[o]);
    v->drop[i] = true;
  }
  free(k.s);
  ox_map_free(&seen);
  return rc;
}
