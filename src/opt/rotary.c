/* rotary.c - the rotate-half rotary embedding written out, to one node.
 *
 * Hugging Face's apply_rotary_pos_emb (Llama, Mistral, Qwen, GPT-NeoX ...)
 * turns the queries and keys by the position's angles as
 *
 *   x1 = Slice(x, 0, h)      x2 = Slice(x, h, end)    (last axis)
 *   r = Concat(Neg(x2), x1)  (last axis: rotate_half)
 *   y = Add(Mul(x, cos), Mul(r, sin))
 *
 * seven nodes, five passes over the heads. With the Slices' bounds
 * constants (end: to the end of the axis, or 2h), steps 1, the axis of the
 * Slices and of the Concat the last one (written -1, or a positive axis of x
 * whose rank its producer shows: a Transpose or a Reshape to a constant
 * shape), either operand order of the Muls and the Add, and every
 * intermediate read only by the next node, they become one ai.onnxc
 * RotaryFused(x, cos, sin) with split = h, whose kernel computes each row in
 * one pass (src/ops/fused/rotary.c). cos and sin are whatever the model
 * computes (Gather of constant tables by position ids, or the angles
 * themselves): the pass leaves their computation alone. Runs before the
 * attention pass, which then sees the turned Q and K as one node each. */
#include <stdint.h>
#include <string.h>

#include "pass.h"

static bool live(const ox_pass_view *v, int64_t j) { return j >= 0 && !v->drop[j] && !v->repl[j]; }

/* the live node that alone reads `name` after `after`, when it is `op` */
static int64_t next(const ox_pass_view *v, const char *name, int64_t after, const char *op,
                    int64_t min) {
  int64_t j = ox_opt_next_op(v, name, after, op, min);
  return live(v, j) ? j : -1;
}

/* one value of a constant int64 (or int32) tensor of one element */
static bool const_one(const ox_pass_view *v, const char *name, int64_t *out) {
  if (!name || !*name) return false;
  if (ox_opt_const_ints(v, name, out, 1)) return true;
  const ox_tensor *t = v->constant_any(v, name);
  if (!t || t->data_type != OX_INT32 || ox_opt_elems(t) != 1) return false;
  if (t->n_int32_data == 1) {
    *out = t->int32_data[0];
    return true;
  }
  ox_bytes pl = ox_tensor_payload(t);
  if (!pl.data || pl.size != 4) return false;
  *out = (int32_t)((uint32_t)pl.data[0] | (uint32_t)pl.data[1] << 8 | (uint32_t)pl.data[2] << 16 |
                   (uint32_t)pl.data[3] << 24);
  return true;
}

/* A Slice of one axis with step 1 (inputs from opset 10, attributes
 * before): its data, start, end and axis */
typedef struct slice1 {
  const char *data;
  int64_t start, end, axis;
} slice1;

static bool slice_of(const ox_pass_view *v, int64_t j, slice1 *s) {
  const ox_node *n = &v->nodes[j];
  if (!ox_opt_is_node(v, j, "Slice", 1) || !live(v, j) || n->n_input < 1) return false;
  s->data = n->input[0];
  s->axis = 0; /* without axes: the starts' axes from 0 */
  if (v->opsets[j] < 10) {
    const ox_attr *st = ox_node_attr(n, "starts"), *en = ox_node_attr(n, "ends"),
                  *ax = ox_node_attr(n, "axes");
    if (n->n_input != 1 || !st || !en || st->n_ints != 1 || en->n_ints != 1 ||
        (ax && ax->n_ints != 1))
      return false;
    s->start = st->ints[0];
    s->end = en->ints[0];
    if (ax) s->axis = ax->ints[0];
    return true;
  }
  if (n->n_input < 3 || !const_one(v, n->input[1], &s->start) ||
      !const_one(v, n->input[2], &s->end))
    return false;
  if (ox_opt_given(n, 3) && !const_one(v, n->input[3], &s->axis)) return false;
  int64_t step = 1;
  return !ox_opt_given(n, 4) || (const_one(v, n->input[4], &step) && step == 1);
}

/* x's rank when its producer (before node `before`) shows it, else -1 */
static int64_t rank_of(const ox_pass_view *v, const char *x, size_t before) {
  int64_t p = ox_opt_producer(v, x, before);
  if (p < 0) return -1;
  const ox_node *n = &v->nodes[p];
  if (ox_opt_op_is(n, "Transpose")) {
    const ox_attr *perm = ox_node_attr(n, "perm");
    return perm && perm->n_ints ? (int64_t)perm->n_ints : -1;
  }
  if (ox_opt_op_is(n, "Reshape") && v->opsets[p] >= 5 && n->n_input == 2) {
    const ox_tensor *t = v->constant_any(v, n->input[1]);
    return t && t->data_type == OX_INT64 && t->n_dims == 1 ? ox_opt_elems(t) : -1;
  }
  return -1;
}

/* axis a of x (rank r, -1 unknown) is its last one */
static bool last_axis(int64_t a, int64_t r) { return a == -1 || (r > 0 && a == r - 1); }

static int fuse_at(ox_pass_view *v, size_t i) {
  const ox_node *cat = &v->nodes[i];
  if (!ox_opt_is_node(v, (int64_t)i, "Concat", 4) || cat->n_input != 2) return OX_OK;
  /* Concat(Neg(Slice(x, h, end)), Slice(x, 0, h)) */
  int64_t ng = ox_opt_producer(v, cat->input[0], i), s1 = ox_opt_producer(v, cat->input[1], i);
  if (ng < 0 || s1 < 0 || !live(v, ng) || !ox_opt_is_node(v, ng, "Neg", 6) ||
      v->nodes[ng].n_input != 1 || v->sole_reader(v, cat->input[0]) != (int64_t)i ||
      v->sole_reader(v, cat->input[1]) != (int64_t)i)
    return OX_OK;
  int64_t s2 = ox_opt_producer(v, v->nodes[ng].input[0], (size_t)ng);
  slice1 a, b;
  if (s2 < 0 || v->sole_reader(v, v->nodes[ng].input[0]) != ng || !slice_of(v, s1, &a) ||
      !slice_of(v, s2, &b) || strcmp(a.data, b.data) != 0)
    return OX_OK;
  const char *x = a.data;
  int64_t h = a.end;
  if (a.start != 0 || h <= 0 || h >= INT32_MAX || b.start != h ||
      !(b.end >= INT32_MAX || b.end == 2 * h))
    return OX_OK;
  int64_t r = rank_of(v, x, s1 < s2 ? (size_t)s1 : (size_t)s2);
  if (a.axis != b.axis || !last_axis(a.axis, r) || !last_axis(ox_node_attr_int(cat, "axis", 0), r))
    return OX_OK;
  /* y = Add(Mul(x, cos), Mul(r, sin)) */
  const char *rot = cat->output[0];
  int64_t ms = next(v, rot, (int64_t)i, "Mul", 7);
  const char *sn = ms >= 0 ? ox_opt_other_of(&v->nodes[ms], rot) : NULL;
  if (!sn || strcmp(sn, rot) == 0) return OX_OK;
  int64_t add = next(v, v->nodes[ms].output[0], ms, "Add", 7);
  const char *xc = add >= 0 ? ox_opt_other_of(&v->nodes[add], v->nodes[ms].output[0]) : NULL;
  if (!xc || strcmp(xc, v->nodes[ms].output[0]) == 0) return OX_OK;
  int64_t mc = ox_opt_producer(v, xc, (size_t)add);
  if (mc < 0 || !live(v, mc) || !ox_opt_is_node(v, mc, "Mul", 7) || v->sole_reader(v, xc) != add)
    return OX_OK;
  const char *cs = ox_opt_other_of(&v->nodes[mc], x);
  if (!cs) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, &v->nodes[add], OX_ONNXC_ROTARY, 3, 1);
  if (!fn) return v->e->code;
  fn->n_attribute = 0;
  fn->name = ox_opt_fused_name(v, (size_t)(mc < s1 ? mc : s1), (size_t)add);
  if (!fn->name) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  fn->input[0] = (char *)x;
  fn->input[1] = (char *)cs;
  fn->input[2] = (char *)sn;
  fn->output[0] = v->nodes[add].output[0];
  ox_opt_add_int_attr(fn, "split", h);
  /* in the Add's place: x, cos and sin are all computed before it */
  const int64_t gone[] = {s1, s2, ng, (int64_t)i, ms, mc};
  for (size_t k = 0; k < sizeof gone / sizeof *gone; k++) v->drop[gone[k]] = true;
  v->repl[add] = fn;
  return OX_OK;
}

int ox_opt_rotary(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    if (v->drop[i] || v->repl[i]) continue;
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
