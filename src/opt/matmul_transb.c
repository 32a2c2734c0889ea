/* matmul_transb.c - MatMul by a transposed constant, without the copy.
 *
 * Exporters write a product with a weight stored the other way round (a
 * language model's head reuses the [vocabulary, hidden] embedding) as
 *
 *   logits = MatMul(h, Transpose<perm = [1, 0]>(W))
 *
 * Folding the Transpose at creation would hold a second copy of W (154 MB
 * for GPT-2 small) and give the product a layout that reads it column-wise
 * when h is one token. With W a constant 2-D float tensor, the MatMul
 * becomes ai.onnxc MatMulTransBFused(h, W): h times W transposed, W read in
 * place (for a single row: one dot product per row of W). The Transpose goes
 * when nothing else reads it. */
#include <string.h>

#include "pass.h"

static bool transpose_2d(const ox_node *t) {
  const ox_attr *p = ox_node_attr(t, "perm");
  return !p || (p->n_ints == 2 && p->ints[0] == 1 && p->ints[1] == 0);
}

int ox_opt_matmul_transb(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    const ox_node *mm = &v->nodes[i];
    if (v->drop[i] || v->repl[i] || !ox_opt_op_is(mm, "MatMul") || mm->n_input != 2 ||
        mm->n_output != 1)
      continue;
    int64_t t = ox_opt_producer(v, mm->input[1], i);
    if (t < 0) continue;
    const ox_node *tr = &v->nodes[t];
    if (!ox_opt_op_is(tr, "Transpose") || tr->n_input != 1 || tr->n_output != 1 ||
        !transpose_2d(tr))
      continue;
    const ox_tensor *w = v->constant(v, tr->input[0]);
    if (!w || w->data_type != OX_FLOAT || w->n_dims != 2) continue;
    ox_node *fn = ox_opt_new_node(v, mm, "MatMulTransBFused", 2, 0);
    if (!fn) return v->e->code;
    fn->input[0] = mm->input[0];
    fn->input[1] = tr->input[0];
    fn->output[0] = mm->output[0];
    v->repl[i] = fn;
    if (v->sole_reader(v, tr->output[0]) == (int64_t)i) v->drop[t] = true;
  }
  return OX_OK;
}
