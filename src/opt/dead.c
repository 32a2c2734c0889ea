/* dead.c - dropping nodes that a rewrite left without readers: the
 * DequantizeLinear nodes quantized fusions read through (ox_opt_drop_unread)
 * and, as the last pass, Constant and ConstantOfShape nodes. */
#include <stdlib.h>
#include <string.h>

#include "pass.h"

static bool read_by_live(const ox_pass_view *v, const char *name) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i]) continue;
    const ox_node *n = v->repl[i] ? v->repl[i] : &v->nodes[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && strcmp(n->input[k], name) == 0) return true;
  }
  return false;
}

void ox_opt_drop_unread(ox_pass_view *v, const char *op) {
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *n = &v->nodes[i];
    if (v->drop[i] || v->repl[i] || !n->op_type || strcmp(n->op_type, op) != 0 ||
        (n->domain && !ox_is_default_domain(n->domain)))
      continue;
    bool used = false;
    for (size_t k = 0; k < n->n_output && !used; k++)
      used = n->output[k] && *n->output[k] &&
             (v->pinned(v, n->output[k]) || read_by_live(v, n->output[k]));
    if (!used) v->drop[i] = true;
  }
}

/* Constant and ConstantOfShape nodes whose every reader was folded or fused
 * away. Left alone when a live node holds a subgraph (its reads of outer
 * names are not counted here). */
int ox_opt_dead_constants(ox_pass_view *v) {
  ox_map live;
  ox_map_init(&live);
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i]) continue;
    const ox_node *n = v->repl[i] ? v->repl[i] : &v->nodes[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && *n->input[k] && ox_map_put(&live, n->input[k], 1)) goto out;
    if (ox_opt_has_subgraph(n)) goto out;
  }
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *n = &v->nodes[i];
    uintptr_t seen;
    if (v->drop[i] || v->repl[i] ||
        !(ox_opt_op_is(n, "Constant") || ox_opt_op_is(n, "ConstantOfShape")) ||
        n->n_output != 1 || !n->output[0])
      continue;
    if (!ox_map_get(&live, n->output[0], &seen) && !v->pinned(v, n->output[0])) v->drop[i] = true;
  }
out:
  ox_map_free(&live);
  return OX_OK;
}
