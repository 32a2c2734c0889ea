/* identity.c - Identity nodes removed: their readers read the input.
 *
 * Exporters write Identity where a value gets a second name: PyTorch's
 * exporter, for one, stores identical weights once and hands each module
 * its copy through an Identity (a model with seeded or tied weights can
 * have dozens). Patterns that want "a MatMul by a constant weight" or "an
 * Add of a constant bias" then see an Identity's output, not the
 * initializer, and do not fire. Left alone: an Identity whose output the
 * graph exposes or a subgraph reads (the name must stay), and one of
 * another domain. */
#include "pass.h"

int ox_opt_identity(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *n = &v->nodes[i];
    if (v->drop[i] || v->repl[i] || !ox_opt_op_is(n, "Identity") || n->n_input != 1 ||
        n->n_output != 1 || !n->input[0] || !*n->input[0] || !n->output[0] || !*n->output[0] ||
        v->pinned(v, n->output[0]))
      continue;
    int rc = ox_opt_rename_reads(v, i, n->output[0], n->input[0]);
    if (rc) return rc;
    v->drop[i] = true;
  }
  return OX_OK;
}
