/* matmul_transb.c - MatMul by a transposed operand, without the copy.
 *
 * Exporters write a product with a weight stored the other way round (a
 * language model's head reuses the [vocabulary, hidden] embedding), and
 * attention's scores q k^T, as
 *
 *   MatMul(A, Transpose<perm = [..., r - 1, r - 2]>(B))
 *
 * a Transpose that swaps the last two axes of B and keeps the others. The
 * MatMul becomes ai.onnxc MatMulTransBFused(A, B): A times B with its last
 * two axes swapped, read in place by a GEMM that takes B transposed. A
 * constant 2-D float B is packed once as B^T (for a head of 50,000 rows:
 * no second copy to fold at creation, and one-token products stream the
 * panels). With no perm the Transpose reverses the axes, the same swap only
 * for rank 2: taken for a constant 2-D B only. The Transpose goes when
 * nothing else reads it. */
#include <string.h>

#include "pass.h"

/* the Transpose's perm swaps the last two axes only (rank >= 2) */
static bool swaps_last_two(const ox_node *t) {
  const ox_attr *p = ox_node_attr(t, "perm");
  if (!p) return false;
  size_t r = p->n_ints;
  if (r < 2 || p->ints[r - 1] != (int64_t)r - 2 || p->ints[r - 2] != (int64_t)r - 1) return false;
  for (size_t k = 0; k + 2 < r; k++)
    if (p->ints[k] != (int64_t)k) return false;
  return true;
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
    if (!ox_opt_op_is(tr, "Transpose") || tr->n_input != 1 || tr->n_output != 1) continue;
    const ox_tensor *w = v->constant(v, tr->input[0]);
    bool const_2d = w && w->data_type == OX_FLOAT && w->n_dims == 2 && !ox_node_attr(tr, "perm");
    if (!const_2d && !swaps_last_two(tr)) continue;
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
