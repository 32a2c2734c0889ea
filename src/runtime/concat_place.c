/* concat_place.c - Concat in place: the producers of a Concat's inputs write
 * their outputs straight into the Concat's output, which then copies
 * nothing (SqueezeNet's fire modules, Inception's branches, DenseNet's
 * growing feature maps).
 *
 * Preparation marks, per Concat, the inputs that may be placed: values made
 * by an earlier node of the same graph, read once by that Concat, not graph
 * inputs, outputs or constants. A run learns each Concat's layout when it
 * runs (output shape, each input's offset and shape; only when the
 * dimensions before the axis are all 1, so each input is one contiguous
 * range of the output). On the next run, when a producer asks for an output
 * of the shape learned, the Concat's output is made then (its slot holds it
 * until the Concat runs) and the producer gets a view of its range. Anything
 * that differs (another shape, a producer that returns a view of its input)
 * simply is not placed: the Concat compares addresses and copies what is not
 * already where it belongs, so a stale layout costs a copy, never a wrong
 * value. Ranges start and end on OX_DATA_ALIGN bytes, as separately
 * allocated tensors do, so kernels see the same alignment and never write
 * into a neighbour's range. A Concat output that is itself placed in a later
 * Concat is made as a view of that one (DenseNet's chains of Concats end up
 * in the last one's buffer). */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define CAT_MAX_DEPTH 256

static bool is_concat(const ox_node *n) {
  return n->op_type && strcmp(n->op_type, "Concat") == 0 &&
         (!n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0);
}

int ox_rt_plan_concats(ox_session *s, rt_graph *g, ox_err *e) {
  for (size_t k = 0; k < g->n_slots; k++) g->slots[k].cat = -1;
  if (s->opts.optimization_level <= 0) return OX_OK;
  for (size_t i = 0; i < g->n_nodes; i++) {
    rt_node *rn = &g->nodes[i];
    const ox_node *n = rn->node;
    if (rn->folded || !is_concat(n) || n->n_output < 1 || rn->out[0] < 0 || !rn->wanted[0])
      continue;
    const ox_attr *a = ox_node_attr(n, "axis");
    int32_t ci = (int32_t)g->n_cats;
    bool any = false;
    for (size_t j = 0; j < n->n_input; j++) {
      int32_t k = rn->in[j];
      if (k < 0) continue;
      rt_slot *sl = &g->slots[k];
      if (sl->producer < 0 || sl->producer >= (int64_t)i || sl->is_input || sl->cst ||
          sl->pending || sl->import >= 0 || sl->last_use == INT64_MAX || sl->cat >= 0 ||
          g->nodes[sl->producer].folded)
        continue;
      bool twice = false; /* concat(x, x): one of them must be a copy */
      for (size_t j2 = 0; j2 < n->n_input && !twice; j2++) twice = j2 != j && rn->in[j2] == k;
      if (twice) continue;
      sl->cat = ci;
      sl->cat_pos = (int32_t)j;
      any = true;
    }
    if (!any) continue;
    rt_cat *ct = OX_VEC_PUSH(s->arena, g->cats, g->n_cats);
    if (!ct) return ox_err_set(e, OX_ENOMEM, "out of memory planning Concats");
    ct->node = i;
    ct->out = rn->out[0];
    ct->axis = a ? a->i : 1;
    ct->n_in = n->n_input;
    rn->cat1 = ci + 1;
  }
  return OX_OK;
}

void ox_rt_cat_lays_free(rt_cat_lay *lays, size_t n) {
  if (!lays) return;
  for (size_t i = 0; i < n; i++) {
    free(lays[i].off);
    free(lays[i].in_rank);
    free(lays[i].in_dims);
  }
  free(lays);
}

void ox_rt_cat_learn(rt_run *r, rt_graph *g, size_t ci, ox_value **vals) {
  rt_frame *f = &r->frames[g->id];
  if (!f->lays) {
    f->lays = calloc(g->n_cats, sizeof *f->lays);
    if (!f->lays) return;
    f->n_lays = g->n_cats;
  }
  const rt_cat *ct = &g->cats[ci];
  const rt_node *rn = &g->nodes[ct->node];
  rt_cat_lay *L = &f->lays[ci];
  L->known = false;
  if (!L->off) {
    L->off = malloc(ct->n_in * sizeof *L->off);
    L->in_rank = malloc(ct->n_in * sizeof *L->in_rank);
    L->in_dims = malloc(ct->n_in * 8 * sizeof *L->in_dims);
    if (!L->off || !L->in_rank || !L->in_dims) {
      free(L->off);
      free(L->in_rank);
      free(L->in_dims);
      L->off = NULL;
      L->in_rank = NULL;
      L->in_dims = NULL;
      return;
    }
  }
  const ox_value *o = vals[ct->out];
  if (!o || o->kind != OX_VAL_TENSOR || o->dtype == OX_STRING || o->rank == 0 || o->rank > 8)
    return;
  if (r->s->opts.profile) { /* inputs, and those found where they belong */
    uint64_t n_in = 0, n_placed = 0;
    size_t at = 0;
    for (size_t j = 0; j < ct->n_in; j++) {
      const ox_value *x = rn->in[j] >= 0 ? vals[rn->in[j]] : NULL;
      if (!x || x->kind != OX_VAL_TENSOR) continue;
      n_in++;
      n_placed += at + x->nbytes <= o->nbytes && x->data == (const uint8_t *)o->data + at;
      at += x->nbytes;
    }
    rt_node *pn = &g->nodes[ct->node];
    __atomic_fetch_add(&pn->prof_cat_in, n_in, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pn->prof_cat_placed, n_placed, __ATOMIC_RELAXED);
  }
  int64_t axis = ct->axis < 0 ? ct->axis + (int64_t)o->rank : ct->axis;
  if (axis < 0 || axis >= (int64_t)o->rank) return;
  for (int64_t d = 0; d < axis; d++)
    if (o->dims[d] != 1) return; /* each input would be several ranges */
  size_t off = 0;
  for (size_t j = 0; j < ct->n_in; j++) {
    L->off[j] = SIZE_MAX;
    int32_t k = rn->in[j];
    const ox_value *x = k >= 0 ? vals[k] : NULL;
    if (!x) continue;
    if (x->kind != OX_VAL_TENSOR) return;
    if (g->slots[k].cat == (int32_t)ci && g->slots[k].cat_pos == (int32_t)j &&
        off % OX_DATA_ALIGN == 0 && x->nbytes % OX_DATA_ALIGN == 0 && x->nbytes > 0 &&
        x->rank == o->rank) {
      L->off[j] = off;
      L->in_rank[j] = x->rank;
      memcpy(L->in_dims + 8 * j, x->dims, x->rank * sizeof *x->dims);
    }
    off += x->nbytes;
  }
  if (off != o->nbytes) return;
  L->dtype = o->dtype;
  L->rank = o->rank;
  memcpy(L->dims, o->dims, o->rank * sizeof *o->dims);
  L->known = true;
}

static bool shape_is(const ox_value *v, int32_t dtype, const int64_t *dims, size_t rank) {
  return v->kind == OX_VAL_TENSOR && v->dtype == dtype &&
         ox_shape_equal(v->dims, v->rank, dims, rank);
}

static ox_value *take(ox_kctx *c, int32_t k, int32_t dtype, const int64_t *dims, size_t rank,
                      int depth) {
  ox_value **vals = c->vals;
  rt_graph *g = c->g;
  /* a Concat's output made ahead by the first of its inputs' producers */
  ox_value *ahead = vals[k];
  if (ahead) {
    vals[k] = NULL;
    if (shape_is(ahead, dtype, dims, rank)) return ahead;
    ox_rt_release(c->run, ahead); /* shapes changed: the Concat copies */
  }
  const rt_slot *sl = &g->slots[k];
  const rt_frame *f = &c->run->frames[g->id];
  if (sl->cat < 0 || !f->lays || depth > CAT_MAX_DEPTH) return NULL;
  const rt_cat_lay *L = &f->lays[sl->cat];
  size_t j = (size_t)sl->cat_pos;
  if (!L->known || L->off[j] == SIZE_MAX || L->dtype != dtype || L->in_rank[j] != rank ||
      memcmp(L->in_dims + 8 * j, dims, rank * sizeof *dims) != 0)
    return NULL;
  const rt_cat *ct = &g->cats[sl->cat];
  ox_value *whole = vals[ct->out];
  if (!whole) {
    whole = ox_rt_out_take(c, ct->out, L->dtype, L->dims, L->rank, false);
    if (!whole) whole = take(c, ct->out, L->dtype, L->dims, L->rank, depth + 1);
    if (!whole) {
      ox_err e2 = {0};
      whole = ox_rt_tensor_take(c->run, L->dtype, L->dims, L->rank, &e2);
      if (!whole) return NULL; /* the producer's own allocation reports it */
    }
    vals[ct->out] = whole;
  } else if (!shape_is(whole, L->dtype, L->dims, L->rank)) {
    return NULL;
  }
  ox_err e2 = {0};
  ox_value *v = ox_tensor_wrap(dtype, dims, rank, (uint8_t *)whole->data + L->off[j], &e2);
  if (!v) return NULL;
  v->base = ox_value_ref(whole);
  return v;
}

ox_value *ox_rt_cat_take(ox_kctx *c, int32_t k, int32_t dtype, const int64_t *dims, size_t rank) {
  if (!c->run || !c->kept_frame || k < 0 || dtype == OX_STRING || rank > 8) return NULL;
  return take(c, k, dtype, dims, rank, 0);
}
