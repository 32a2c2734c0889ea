/* tied_gather.c - the token embedding read out of the head's packed matrix.
 *
 * Language models tie their input embedding to their output head: one
 * [vocabulary, hidden] constant W is read by
 *
 *   Gather<axis = 0>(W, token_ids)        the embedding of the tokens
 *   MatMulTransBFused(h, W)               the logits, h times W^T
 *
 * The head packs W^T once at preparation (src/ops/matmul.c); the Gather
 * would keep W itself alive beside it, a second copy of the largest matrix
 * of the model (154 MB for GPT-2 small). The Gather becomes an ai.onnxc
 * GatherTiedFused(W, token_ids), which reads its rows (columns of W^T) out
 * of the same packed matrix, shared through the session
 * (ox_kinfo_share), so W is freed once both are prepared. Runs after
 * matmul_transb.c, whose MatMulTransBFused replacements it looks for. */
#include <string.h>

#include "pass.h"

/* W is the B of a MatMulTransBFused that will pack it: float, 2-D, not empty */
static bool packed_by_head(const ox_pass_view *v, const char *w) {
  const ox_tensor *t = v->constant(v, w);
  if (!t || t->data_type != OX_FLOAT || t->n_dims != 2 || ox_opt_elems(t) < 1) return false;
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *n = v->repl[i];
    if (!v->drop[i] && n && n->op_type && strcmp(n->op_type, "MatMulTransBFused") == 0 &&
        n->n_input == 2 && n->input[1] && strcmp(n->input[1], w) == 0)
      return true;
  }
  return false;
}

int ox_opt_tied_gather(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *g = &v->nodes[i];
    if (v->drop[i] || v->repl[i] || !ox_opt_op_is(g, "Gather") || g->n_input != 2 ||
        g->n_output != 1 || !ox_opt_given(g, 0) || !ox_opt_given(g, 1))
      continue;
    int64_t axis = ox_node_attr_int(g, "axis", 0);
    if ((axis != 0 && axis != -2) || !packed_by_head(v, g->input[0])) continue;
    ox_node *fn = ox_opt_new_node(v, g, "GatherTiedFused", 2, 0);
    if (!fn) return v->e->code;
    fn->n_attribute = 0; /* axis 0 is the op's only form */
    fn->input[0] = g->input[0];
    fn->input[1] = g->input[1];
    fn->output[0] = g->output[0];
    v->repl[i] = fn;
  }
  return OX_OK;
}
