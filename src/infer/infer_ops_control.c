/* infer_ops_control.c - shape functions of Constant, the control-flow
 * operators (If, Loop, Scan: their bodies are inferred as subgraphs), and
 * the sequence and optional operators. */
#include <string.h>

#include "infer_impl.h"

static int constant(ox_ictx *c) {
  const ox_node *n = c->node;
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *a = ix_attr(c, n->attribute[i].name);
    const char *nm = n->attribute[i].name;
    if (!a) continue;
    if (strcmp(nm, "value") == 0 && a->t) {
      ox_dim *d = ox_arena_calloc(c->a, a->t->n_dims ? a->t->n_dims : 1, sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      for (size_t k = 0; k < a->t->n_dims; k++) d[k] = ox_dim_known(a->t->dims[k]);
      ix_set_tensor(c, 0, a->t->data_type, d, (int64_t)a->t->n_dims);
    } else if (strcmp(nm, "sparse_value") == 0 && a->sparse_tensor && a->sparse_tensor->values) {
      ox_dim *d = ox_arena_calloc(c->a, a->sparse_tensor->n_dims ? a->sparse_tensor->n_dims : 1,
                                  sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      for (size_t k = 0; k < a->sparse_tensor->n_dims; k++)
        d[k] = ox_dim_known(a->sparse_tensor->dims[k]);
      ix_set_tensor(c, 0, a->sparse_tensor->values->data_type, d,
                    (int64_t)a->sparse_tensor->n_dims);
    } else if (strcmp(nm, "value_int") == 0) {
      ix_set_tensor(c, 0, OX_INT64, NULL, 0);
    } else if (strcmp(nm, "value_float") == 0) {
      ix_set_tensor(c, 0, OX_FLOAT, NULL, 0);
    } else if (strcmp(nm, "value_string") == 0) {
      ix_set_tensor(c, 0, OX_STRING, NULL, 0);
    } else if (strcmp(nm, "value_ints") == 0 || strcmp(nm, "value_floats") == 0 ||
               strcmp(nm, "value_strings") == 0) {
      size_t cnt = nm[6] == 'i' ? a->n_ints : nm[6] == 'f' ? a->n_floats : a->n_strings;
      ox_dim d = ox_dim_known((int64_t)cnt);
      ix_set_tensor(c, 0, nm[6] == 'i' ? OX_INT64 : nm[6] == 'f' ? OX_FLOAT : OX_STRING, &d, 1);
    }
  }
  return OX_OK;
}

static int if_op(ox_ictx *c) {
  const ox_attr *tb = ix_attr(c, "then_branch"), *eb = ix_attr(c, "else_branch");
  if (!tb || !tb->g || !eb || !eb->g) return ix_fail(c, "missing then_branch/else_branch");
  size_t nt, ne;
  ox_type **tt = ix_subgraph(c, tb->g, NULL, 0, &nt);
  ox_type **et = ix_subgraph(c, eb->g, NULL, 0, &ne);
  if (!tt || !et) return OX_OK;
  const ox_dimv *cond = ix_dimv_of(c, 0);
  if (cond && cond->n == 1 && cond->d[0].has_value) {
    /* the condition is known from shapes alone: the taken branch decides */
    ox_type **taken = cond->d[0].value ? tt : et;
    size_t nk = cond->d[0].value ? nt : ne;
    for (size_t o = 0; o < c->n_out && o < nk; o++)
      if (taken[o]) c->out[o] = ox_type_clone(c->a, taken[o]);
    return OX_OK;
  }
  if (nt != c->n_out || ne != c->n_out)
    return ix_fail(c, "branches have %zu and %zu outputs, the node %zu", nt, ne, c->n_out);
  for (size_t o = 0; o < c->n_out; o++) {
    const ox_type *a = tt[o], *b = et[o];
    if (a && a->kind == OX_TYPE_NONE) a = NULL; /* declared without a type */
    if (b && b->kind == OX_TYPE_NONE) b = NULL;
    if (!a && !b) continue;
    if (!a || !b) {
      /* one branch's type is unknown (a custom op, say): the output still
       * has the other's type, but no shape, since that branch may differ */
      ox_type *u = ox_type_clone(c->a, a ? a : b);
      if (!u) return OX_ENOMEM;
      if (u->kind == OX_TYPE_TENSOR || u->kind == OX_TYPE_SPARSE_TENSOR) u->shape = NULL;
      c->out[o] = u;
      continue;
    }
    if (a->kind != b->kind)
      return ix_fail(c, "branches give different kinds of value for output %zu", o);
    ox_type *u = ox_type_clone(c->a, a);
    if (!u) return OX_ENOMEM;
    if (u->kind == OX_TYPE_TENSOR && b->kind == OX_TYPE_TENSOR) {
      if (a->elem_type != b->elem_type)
        return ix_fail(c, "branches give different element types for output %zu", o);
      if (!a->shape || !b->shape || a->shape->n_dim != b->shape->n_dim)
        u->shape = NULL;
      else
        for (size_t k = 0; k < u->shape->n_dim; k++)
          if (!ox_dim_same(&a->shape->dim[k], &b->shape->dim[k]))
            u->shape->dim[k] = ox_dim_unknown();
    }
    c->out[o] = u;
  }
  return OX_OK;
}

static int loop_op(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_graph *body = ba->g;
  size_t nc = c->n_in >= 2 ? c->n_in - 2 : 0; /* loop-carried */
  size_t nin = 2 + nc;
  /* body: (iteration, cond, carried...) -> (cond, carried..., scan outputs...) */
  if (body->n_input != nin)
    return ix_fail(c,
                   "body has %zu inputs; expected %zu (iteration number, condition and %zu "
                   "loop-carried values)",
                   body->n_input, nin, nc);
  if (body->n_output < 1 + nc || body->n_output != 1 + c->n_out)
    return ix_fail(c,
                   "body has %zu outputs; expected %zu (condition, %zu loop-carried values and "
                   "one per scan output of the node)",
                   body->n_output, 1 + (c->n_out > nc ? c->n_out : nc), nc);
  const ox_type **it = ox_arena_calloc(c->a, nin, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  it[0] = ox_type_new_tensor(c->a, OX_INT64, NULL, 0);
  it[1] = ox_type_new_tensor(c->a, OX_BOOL, NULL, 0);
  for (size_t k = 0; k < nc; k++) {
    const ox_type *t = c->in[2 + k];
    if (t && t->kind == OX_TYPE_TENSOR && t->shape) {
      /* carried shapes may change between iterations: keep the rank only */
      ox_type *u = ox_type_clone(c->a, t);
      if (u)
        for (size_t d = 0; d < u->shape->n_dim; d++)
          if (!u->shape->dim[d].has_value) u->shape->dim[d] = ox_dim_unknown();
      it[2 + k] = u;
    } else {
      it[2 + k] = t;
    }
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, body, it, body->n_input < nin ? body->n_input : nin, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out; o++) {
    if (o < nc) {
      if (1 + o < no && ot[1 + o]) {
        ox_type *u = ox_type_clone(c->a, ot[1 + o]);
        const ox_type *init = c->in[2 + o];
        if (u && u->kind == OX_TYPE_TENSOR && u->shape && init && init->shape &&
            init->shape->n_dim == u->shape->n_dim) {
          for (size_t k = 0; k < u->shape->n_dim; k++)
            if (!ox_dim_same(&u->shape->dim[k], &init->shape->dim[k]))
              u->shape->dim[k] = ox_dim_unknown();
        } else if (u && u->kind == OX_TYPE_TENSOR && u->shape && !(init && init->shape)) {
          u->shape = NULL;
        }
        c->out[o] = u;
      }
    } else if (1 + o < no && ot[1 + o]) {
      const ox_type *s = ot[1 + o];
      if (s->kind != OX_TYPE_TENSOR) continue;
      size_t r = s->shape ? s->shape->n_dim : 0;
      ox_dim *d = ox_arena_calloc(c->a, r + 1, sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      d[0] = ox_dim_unknown();
      const ox_dimv *mt = ix_dimv_of(c, 0);
      if (mt && mt->n == 1 && mt->d[0].has_value && !ix_has_input(c, 1)) d[0] = mt->d[0];
      for (size_t k = 0; k < r; k++) d[k + 1] = s->shape->dim[k];
      ix_set_tensor(c, o, s->elem_type, d, s->shape ? (int64_t)r + 1 : -1);
    }
  }
  return OX_OK;
}

static int scan_op(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_graph *body = ba->g;
  if (c->since < 9) return OX_OK; /* opset 8 has a batch dimension; types only via schema */
  int64_t nsi = ix_attr_int(c, "num_scan_inputs", 0);
  if (nsi < 1 || (size_t)nsi > c->n_in)
    return ix_fail(c, "num_scan_inputs is %lld; the node has %zu inputs", (long long)nsi, c->n_in);
  size_t nstate = c->n_in - (size_t)nsi;
  /* body: (state..., scan input elements...) -> (state..., scan output elements...) */
  if (body->n_input != c->n_in)
    return ix_fail(c,
                   "body has %zu inputs; expected %zu (%zu state variables and %lld scan inputs)",
                   body->n_input, c->n_in, nstate, (long long)nsi);
  if (body->n_output != c->n_out || c->n_out < nstate)
    return ix_fail(c,
                   "body has %zu outputs and the node %zu; both must be %zu state variables "
                   "plus the scan outputs",
                   body->n_output, c->n_out, nstate);
  const int64_t *in_axes = NULL, *out_axes = NULL;
  size_t nia = 0, noa = 0;
  ix_attr_ints(c, "scan_input_axes", &in_axes, &nia);
  ix_attr_ints(c, "scan_output_axes", &out_axes, &noa);
  const ox_type **it = ox_arena_calloc(c->a, c->n_in ? c->n_in : 1, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  ox_dim seq = ox_dim_unknown();
  for (size_t i = 0; i < c->n_in; i++) {
    if (i < nstate) {
      it[i] = c->in[i];
      continue;
    }
    const ox_dim *x;
    size_t r;
    if (!ix_shape(c, i, &x, &r) || r == 0) continue;
    size_t ax = 0;
    if (in_axes && i - nstate < nia && !ix_axis(in_axes[i - nstate], r, &ax))
      return ix_fail(c, "bad scan axis");
    ox_dim *d = ox_arena_calloc(c->a, r, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k < r; k++)
      if (k != ax) d[j++] = x[k];
    seq = x[ax];
    ox_type *t = ox_type_new_tensor(c->a, ix_elem(c, i), NULL, 0);
    if (!t) return OX_ENOMEM;
    t->shape->dim = d;
    t->shape->n_dim = r - 1;
    it[i] = t;
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, body, it, c->n_in, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < no; o++) {
    if (!ot[o]) continue;
    if (o < nstate) {
      c->out[o] = ox_type_clone(c->a, ot[o]);
      continue;
    }
    const ox_type *s = ot[o];
    if (s->kind != OX_TYPE_TENSOR || !s->shape) continue;
    size_t r = s->shape->n_dim;
    size_t ax = 0;
    if (out_axes && o - nstate < noa && !ix_axis(out_axes[o - nstate], r + 1, &ax))
      return ix_fail(c, "bad scan output axis");
    ox_dim *d = ox_arena_calloc(c->a, r + 1, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k <= r; k++) d[k] = k == ax ? seq : s->shape->dim[j++];
    ix_set_tensor(c, o, s->elem_type, d, (int64_t)r + 1);
  }
  return OX_OK;
}

static ox_type *wrap_type(ox_ictx *c, ox_type_kind kind, const ox_type *elem) {
  ox_type *t = ox_arena_alloc(c->a, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->elem = elem ? ox_type_clone(c->a, elem) : NULL;
  return t;
}

/* a tensor type with the same element type and rank, dims unknown where
 * they differ (sequence elements may differ in shape) */
static ox_type *union_tensor(ox_ictx *c, ox_type *acc, const ox_type *t) {
  if (!t) return acc;
  if (!acc) return ox_type_clone(c->a, t);
  if (acc->kind != OX_TYPE_TENSOR || t->kind != OX_TYPE_TENSOR) return acc;
  if (!acc->shape || !t->shape || acc->shape->n_dim != t->shape->n_dim) {
    acc->shape = NULL;
    return acc;
  }
  for (size_t k = 0; k < acc->shape->n_dim; k++)
    if (!ox_dim_same(&acc->shape->dim[k], &t->shape->dim[k])) acc->shape->dim[k] = ox_dim_unknown();
  return acc;
}

static int seq_construct(ox_ictx *c) {
  ox_type *u = NULL;
  for (size_t i = 0; i < c->n_in; i++) u = union_tensor(c, u, c->in[i]);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, u);
  return OX_OK;
}

static int seq_empty(ox_ictx *c) {
  int32_t el = (int32_t)ix_attr_int(c, "dtype", OX_FLOAT);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, ox_type_new_tensor(c->a, el, NULL, 0));
  if (c->out[0] && c->out[0]->elem) c->out[0]->elem->shape = NULL;
  return OX_OK;
}

static int seq_same(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (!s || s->kind != OX_TYPE_SEQUENCE) return OX_OK;
  ox_type *u = s->elem ? ox_type_clone(c->a, s->elem) : NULL;
  if (strcmp(c->node->op_type, "SequenceInsert") == 0) u = union_tensor(c, u, c->in[1]);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, u);
  return OX_OK;
}

static int seq_at(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (s && s->kind == OX_TYPE_SEQUENCE && s->elem) c->out[0] = ox_type_clone(c->a, s->elem);
  return OX_OK;
}

static int seq_length(ox_ictx *c) {
  ix_set_tensor(c, 0, OX_INT64, NULL, 0);
  return OX_OK;
}

static int split_to_seq(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  ox_type *el = NULL;
  if (ix_shape(c, 0, &x, &r)) {
    size_t ax;
    if (!ix_axis(ix_attr_int(c, "axis", 0), r, &ax)) return ix_fail(c, "axis out of range");
    bool keep = ix_attr_int(c, "keepdims", 1) != 0 || ix_has_input(c, 1);
    el = ox_type_new_tensor(c->a, ix_elem(c, 0), NULL, 0);
    if (!el) return OX_ENOMEM;
    ox_dim *d = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k < r; k++) {
      if (k == ax) {
        if (keep) d[j++] = ox_dim_unknown();
      } else {
        d[j++] = x[k];
      }
    }
    el->shape->dim = d;
    el->shape->n_dim = j;
  } else if (ix_elem(c, 0)) {
    el = ox_type_new_tensor(c->a, ix_elem(c, 0), NULL, 0);
    if (el) el->shape = NULL;
  }
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, el);
  return OX_OK;
}

static int concat_from_seq(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (!s || s->kind != OX_TYPE_SEQUENCE || !s->elem) return OX_OK;
  const ox_type *e = s->elem;
  if (e->kind != OX_TYPE_TENSOR) return OX_OK;
  if (!e->shape) return ix_set_tensor(c, 0, e->elem_type, NULL, -1), OX_OK;
  size_t r = e->shape->n_dim;
  bool nw = ix_attr_int(c, "new_axis", 0) != 0;
  size_t R = r + (nw ? 1 : 0);
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", 0), R, &ax)) return ix_fail(c, "axis out of range");
  ox_dim *d = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!d) return OX_ENOMEM;
  size_t j = 0;
  for (size_t k = 0; k < R; k++) {
    if (k == ax) {
      d[k] = ox_dim_unknown();
      if (!nw) j++;
    } else {
      d[k] = e->shape->dim[j++];
    }
  }
  ix_set_tensor(c, 0, e->elem_type, d, (int64_t)R);
  return OX_OK;
}

static int optional_op(ox_ictx *c) {
  const ox_attr *tp = ix_attr(c, "type");
  if (ix_has_input(c, 0))
    c->out[0] = wrap_type(c, OX_TYPE_OPTIONAL, c->in[0]);
  else if (tp && tp->tp)
    c->out[0] = wrap_type(c, OX_TYPE_OPTIONAL, tp->tp);
  return OX_OK;
}

static int optional_get(ox_ictx *c) {
  const ox_type *t = c->in[0];
  if (!t) return OX_OK;
  if (t->kind == OX_TYPE_OPTIONAL) {
    if (t->elem) c->out[0] = ox_type_clone(c->a, t->elem);
  } else {
    c->out[0] = ox_type_clone(c->a, t);
  }
  return OX_OK;
}

static int optional_has(ox_ictx *c) {
  ix_set_tensor(c, 0, OX_BOOL, NULL, 0);
  return OX_OK;
}

static int sequence_map(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_type **it = ox_arena_calloc(c->a, c->n_in ? c->n_in : 1, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  for (size_t i = 0; i < c->n_in; i++) {
    const ox_type *t = c->in[i];
    it[i] = t && t->kind == OX_TYPE_SEQUENCE ? t->elem : t;
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, ba->g, it, c->n_in, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < no; o++) {
    ox_type *e = ot[o] ? ox_type_clone(c->a, ot[o]) : NULL;
    if (e && e->shape)
      for (size_t k = 0; k < e->shape->n_dim; k++)
        if (!e->shape->dim[k].has_value) e->shape->dim[k] = ox_dim_unknown();
    c->out[o] = wrap_type(c, OX_TYPE_SEQUENCE, e);
  }
  return OX_OK;
}

const ox_infer_def ox_infer_defs_control[] = {
    {"", "SequenceConstruct", 1, 1000, seq_construct},
    {"", "SequenceEmpty", 1, 1000, seq_empty},
    {"", "SequenceInsert", 1, 1000, seq_same},
    {"", "SequenceErase", 1, 1000, seq_same},
    {"", "SequenceAt", 1, 1000, seq_at},
    {"", "SequenceLength", 1, 1000, seq_length},
    {"", "SplitToSequence", 1, 1000, split_to_seq},
    {"", "ConcatFromSequence", 1, 1000, concat_from_seq},
    {"", "Optional", 1, 1000, optional_op},
    {"", "OptionalGetElement", 1, 1000, optional_get},
    {"", "OptionalHasElement", 1, 1000, optional_has},
    {"", "SequenceMap", 1, 1000, sequence_map},
    {"", "Constant", 1, 1000, constant},
    {"", "If", 1, 1000, if_op},
    {"", "Loop", 1, 1000, loop_op},
    {"", "Scan", 1, 1000, scan_op},
    {NULL, NULL, 0, 0, NULL},
};
