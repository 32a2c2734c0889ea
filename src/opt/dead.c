/* dead.c - dropping nodes that a rewrite left without readers. */
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
