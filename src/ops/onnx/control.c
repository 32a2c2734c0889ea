/* control.c - control flow: If, Loop, Scan (8 with a batch axis, 9+ with
 * axes and directions). Subgraphs run through ox_kctx_run_subgraph, which
 * resolves outer-scope names; the cancellation callback is polled at every
 * loop iteration. */
#include <stdlib.h>
#include <string.h>

#include "../datamove.h"

typedef struct cstate {
  const ox_graph *g1, *g2; /* If: then/else; Loop/Scan: body */
  int64_t n_scan_in;
  int64_t *in_axes, *in_dirs, *out_axes, *out_dirs; /* Scan; NULL = zeros */
  size_t n_in_axes, n_in_dirs, n_out_axes, n_out_dirs;
} cstate;

static int prep_fail(const ox_kinfo *info, ox_err *e, const char *what) {
  const ox_node *n = info->node;
  return ox_err_set(e, OX_EMODEL, "node '%s' (%s): %s", n->name ? n->name : "", n->op_type, what);
}

static const ox_graph *graph_attr(const ox_kinfo *info, const char *name) {
  const ox_attr *a = ox_node_attr(info->node, name);
  return a && a->g ? a->g : NULL;
}

static cstate *new_state(const ox_kinfo *info, void **state, ox_err *e) {
  cstate *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  return s;
}

/* ------------------------------------------------------------------ If */

static int if_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  cstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->g1 = graph_attr(info, "then_branch");
  s->g2 = graph_attr(info, "else_branch");
  if (!s->g1 || !s->g2) return prep_fail(info, e, "needs then_branch and else_branch graphs");
  if (s->g1->n_output != info->n_outputs || s->g2->n_output != info->n_outputs)
    return prep_fail(info, e, "the branches must have as many outputs as the node");
  if (s->g1->n_input || s->g2->n_input)
    return prep_fail(info, e, "the branches must have no inputs");
  return OX_OK;
}

static int read_bool(ox_kctx *c, const ox_value *v, const char *what, bool *out) {
  if (!v || v->kind != OX_VAL_TENSOR || v->numel != 1 || v->dtype == OX_STRING)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be a tensor of one element", what);
  *out = ox_dm_nonzero(v->dtype, v->data, 0);
  return OX_OK;
}

static int if_run(ox_kctx *c, void *state) {
  cstate *s = state;
  bool cond = false;
  if (read_bool(c, ox_kctx_input(c, 0), "cond", &cond)) return OX_ERUNTIME;
  const ox_graph *g = cond ? s->g1 : s->g2;
  size_t n = g->n_output;
  ox_value *stack[16] = {0}, **outs = n <= 16 ? stack : calloc(n, sizeof *outs);
  if (!outs) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  /* NULL until the run fills them: a run that fails early leaves them so
   * (found by fuzz_session) */
  int rc = ox_kctx_run_subgraph(c, g, NULL, 0, outs, n);
  for (size_t i = 0; i < n && !rc; i++) {
    rc = ox_kctx_set_output(c, i, outs[i]);
    outs[i] = NULL;
  }
  if (rc)
    for (size_t i = 0; i < n; i++) ox_value_unref(outs[i]);
  if (outs != stack) free(outs);
  return rc;
}

/* ------------------------------------------------------------- stacking */

/* Stacks T tensors of equal type and shape into output `oi` along `axis`
 * of the result (rank = elem rank + 1); reverse puts item T-1 first. With
 * T == 0, the shape comes from `proto_dims` (NULL: [0]). */
static int stack_output(ox_kctx *c, size_t oi, ox_value **items, int64_t T, int64_t axis,
                        bool reverse, const ox_type *declared) {
  if (T == 0) {
    int64_t dims[OX_DM_MAX_RANK] = {0};
    size_t rank = 1;
    int32_t dt = OX_FLOAT;
    if (declared && declared->kind == OX_TYPE_TENSOR) {
      if (declared->has_elem_type && declared->elem_type) dt = declared->elem_type;
      if (declared->shape && declared->shape->n_dim >= 1 &&
          declared->shape->n_dim <= OX_DM_MAX_RANK) {
        rank = declared->shape->n_dim;
        for (size_t k = 0; k < rank; k++)
          dims[k] = declared->shape->dim[k].has_value ? declared->shape->dim[k].value : 0;
        dims[0] = 0;
      }
    }
    return ox_kctx_output_zero(c, oi, dt, dims, rank) ? OX_OK : OX_ENOMEM;
  }
  const ox_value *f = items[0];
  for (int64_t t = 0; t < T; t++) {
    const ox_value *x = items[t];
    if (!x || x->kind != OX_VAL_TENSOR)
      return ox_kctx_fail(c, OX_ERUNTIME, "scan output %zu: iteration %lld gave no tensor", oi,
                          (long long)t);
    if (x->dtype != f->dtype || !ox_shape_equal(x->dims, x->rank, f->dims, f->rank))
      return ox_kctx_fail(c, OX_ERUNTIME,
                          "scan output %zu: iteration %lld changed the shape or type", oi,
                          (long long)t);
  }
  size_t r = f->rank + 1;
  if (r > OX_DM_MAX_RANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  if (axis < 0) axis += (int64_t)r;
  if (axis < 0 || axis >= (int64_t)r)
    return ox_kctx_fail(c, OX_ERUNTIME, "scan output axis %lld out of range", (long long)axis);
  int64_t dims[OX_DM_MAX_RANK];
  for (size_t k = 0, j = 0; k < r; k++) dims[k] = (int64_t)k == axis ? T : f->dims[j++];
  ox_value *o = ox_dm_output(c, oi, f->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  size_t es = ox_value_elem_size(f->dtype);
  int64_t inner = f->numel; /* elements per item */
  if (axis == 0) {
    for (int64_t t = 0; t < T; t++) {
      const ox_value *x = items[reverse ? T - 1 - t : t];
      if (ox_dm_copy((char *)o->data + (size_t)(t * inner) * es, x->data, inner, f->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
    return OX_OK;
  }
  /* items are [outer, rest] split at axis; output [outer, T, rest] */
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; k++) outer *= f->dims[k];
  int64_t rest = outer ? inner / outer : 0;
  for (int64_t t = 0; t < T; t++) {
    const ox_value *x = items[reverse ? T - 1 - t : t];
    for (int64_t a = 0; a < outer; a++)
      if (ox_dm_copy((char *)o->data + (size_t)((a * T + t) * rest) * es,
                     (const char *)x->data + (size_t)(a * rest) * es, rest, f->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  return OX_OK;
}

static const ox_type *out_type(const ox_graph *g, size_t i) {
  return i < g->n_output ? g->output[i].type : NULL;
}

/* ------------------------------------------------------------------ Loop */

static int loop_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  cstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->g1 = graph_attr(info, "body");
  if (!s->g1) return prep_fail(info, e, "needs a body graph");
  if (info->n_inputs < 2) return prep_fail(info, e, "needs inputs M and cond (may be empty)");
  size_t n_carried = info->n_inputs - 2;
  if (s->g1->n_input != n_carried + 2)
    return prep_fail(info, e, "the body must take iteration_num, cond and the carried values");
  if (s->g1->n_output < n_carried + 1 || info->n_outputs > s->g1->n_output - 1)
    return prep_fail(info, e, "the body outputs do not match the node's");
  return OX_OK;
}

typedef struct scan_acc {
  ox_value **v;
  int64_t n, cap;
} scan_acc;

static int acc_push(scan_acc *a, ox_value *v) {
  if (a->n == a->cap) {
    int64_t cap = a->cap ? a->cap * 2 : 16;
    ox_value **nv = realloc(a->v, (size_t)cap * sizeof *nv);
    if (!nv) return OX_ENOMEM;
    a->v = nv;
    a->cap = cap;
  }
  a->v[a->n++] = v;
  return OX_OK;
}

static void acc_free(scan_acc *a, size_t n) {
  for (size_t k = 0; k < n; k++) {
    for (int64_t t = 0; t < a[k].n; t++) ox_value_unref(a[k].v[t]);
    free(a[k].v);
  }
}

static int loop_run(ox_kctx *c, void *state) {
  cstate *s = state;
  const ox_graph *body = s->g1;
  ox_value *m = ox_kctx_input(c, 0), *cond_in = ox_kctx_input(c, 1);
  int64_t trip = INT64_MAX;
  bool cond = true;
  if (m) {
    if (m->kind != OX_VAL_TENSOR || m->numel != 1 || (m->dtype != OX_INT64 && m->dtype != OX_INT32))
      return ox_kctx_fail(c, OX_ERUNTIME, "M must be an int64 tensor of one element");
    trip = oc_get_i64(m->data, m->dtype, 0);
  }
  if (cond_in && read_bool(c, cond_in, "cond", &cond)) return OX_ERUNTIME;
  size_t n_carried = ox_kctx_n_inputs(c) - 2;
  size_t n_body_out = body->n_output, n_scan = n_body_out - 1 - n_carried;
  size_t n_out = ox_kctx_n_outputs(c);
  ox_value **bin = calloc(n_carried + 2, sizeof *bin);
  ox_value **bout = calloc(n_body_out + 1, sizeof *bout);
  scan_acc *acc = calloc(n_scan + 1, sizeof *acc);
  int rc = OX_OK;
  if (!bin || !bout || !acc) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < n_carried; k++) bin[2 + k] = ox_value_ref(ox_kctx_input(c, 2 + k));
  int64_t it = 0;
  for (; it < trip && cond; it++) {
    if ((rc = ox_kctx_check_cancel(c))) goto done;
    ox_err e2;
    ox_value_unref(bin[0]);
    ox_value_unref(bin[1]);
    bin[0] = ox_tensor_scalar_i64(it, &e2);
    bin[1] = ox_tensor_new_uninit(OX_BOOL, NULL, 0, &e2);
    if (!bin[0] || !bin[1]) {
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
    *(uint8_t *)bin[1]->data = cond;
    if ((rc = ox_kctx_run_subgraph(c, body, bin, n_carried + 2, bout, n_body_out))) goto done;
    rc = read_bool(c, bout[0], "the body's cond output", &cond);
    ox_value_unref(bout[0]);
    bout[0] = NULL;
    if (rc) goto done;
    for (size_t k = 0; k < n_carried; k++) {
      ox_value_unref(bin[2 + k]);
      bin[2 + k] = bout[1 + k];
      bout[1 + k] = NULL;
    }
    for (size_t k = 0; k < n_scan; k++) {
      if (acc_push(&acc[k], bout[1 + n_carried + k])) {
        ox_value_unref(bout[1 + n_carried + k]);
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        goto done;
      }
      bout[1 + n_carried + k] = NULL;
    }
  }
  for (size_t k = 0; k < n_carried && k < n_out; k++) {
    if ((rc = ox_kctx_set_output(c, k, bin[2 + k]))) {
      bin[2 + k] = NULL;
      goto done;
    }
    bin[2 + k] = NULL;
  }
  for (size_t k = 0; k < n_scan && n_carried + k < n_out; k++) {
    if (!ox_kctx_output_wanted(c, n_carried + k)) continue;
    const ox_value *f = acc[k].n ? acc[k].v[0] : NULL;
    if (f && f->kind != OX_VAL_TENSOR) {
      rc = ox_kctx_fail(c, OX_EUNSUPPORTED, "scan output %zu is not a tensor", k);
      goto done;
    }
    if ((rc = stack_output(c, n_carried + k, acc[k].v, acc[k].n, 0, false,
                           out_type(body, 1 + n_carried + k))))
      goto done;
  }
done:
  if (bin)
    for (size_t k = 0; k < n_carried + 2; k++) ox_value_unref(bin[k]);
  if (bout)
    for (size_t k = 0; k < n_body_out; k++) ox_value_unref(bout[k]);
  if (acc) acc_free(acc, n_scan);
  free(bin);
  free(bout);
  free(acc);
  return rc;
}

/* ------------------------------------------------------------------ Scan */

static bool ints_attr(const ox_kinfo *info, const char *name, int64_t **v, size_t *n) {
  const ox_attr *a = ox_node_attr(info->node, name);
  if (!a) return false;
  *v = a->ints;
  *n = a->n_ints;
  return true;
}

static int scan_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  cstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->g1 = graph_attr(info, "body");
  if (!s->g1) return prep_fail(info, e, "needs a body graph");
  const ox_attr *a = ox_node_attr(info->node, "num_scan_inputs");
  if (!a || a->i < 1) return prep_fail(info, e, "needs num_scan_inputs >= 1");
  s->n_scan_in = a->i;
  bool v8 = info->since_version < 9;
  size_t n_in = info->n_inputs - (v8 ? 1 : 0);
  if ((size_t)s->n_scan_in > n_in) return prep_fail(info, e, "num_scan_inputs exceeds the inputs");
  size_t n_state = n_in - (size_t)s->n_scan_in;
  if (s->g1->n_input != n_in)
    return prep_fail(info, e, "the body's inputs do not match the node's");
  if (s->g1->n_output < n_state || s->g1->n_output != info->n_outputs)
    return prep_fail(info, e, "the body's outputs do not match the node's");
  if (v8) {
    ints_attr(info, "directions", &s->in_dirs, &s->n_in_dirs);
  } else {
    ints_attr(info, "scan_input_axes", &s->in_axes, &s->n_in_axes);
    ints_attr(info, "scan_input_directions", &s->in_dirs, &s->n_in_dirs);
    ints_attr(info, "scan_output_axes", &s->out_axes, &s->n_out_axes);
    ints_attr(info, "scan_output_directions", &s->out_dirs, &s->n_out_dirs);
  }
  size_t n_scan_out = s->g1->n_output - n_state;
  if ((s->in_axes && s->n_in_axes != (size_t)s->n_scan_in) ||
      (s->in_dirs && s->n_in_dirs != (size_t)s->n_scan_in) ||
      (s->out_axes && s->n_out_axes != n_scan_out) || (s->out_dirs && s->n_out_dirs != n_scan_out))
    return prep_fail(info, e, "scan axes/directions attributes have the wrong length");
  return OX_OK;
}

static int64_t attr_at(const int64_t *v, size_t n, size_t i) { return v && i < n ? v[i] : 0; }

/* Slice t of x along axis (the axis removed). */
static ox_value *take_slice(ox_kctx *c, const ox_value *x, size_t axis, int64_t t) {
  int64_t dims[OX_DM_MAX_RANK], st[OX_DM_MAX_RANK], sst[OX_DM_MAX_RANK];
  ox_dm_strides(x->dims, x->rank, st);
  size_t r = 0;
  for (size_t k = 0; k < x->rank; k++)
    if (k != axis) {
      dims[r] = x->dims[k];
      sst[r++] = st[k];
    }
  ox_err e2;
  ox_value *o = ox_tensor_new(x->dtype, dims, r, &e2);
  if (!o) {
    ox_kctx_fail(c, e2.code, "%s", e2.msg);
    return NULL;
  }
  size_t es = ox_value_elem_size(x->dtype);
  if (ox_dm_strided(o->data, (const char *)x->data + (size_t)(t * st[axis]) * es, x->dtype, r, dims,
                    sst, NULL)) {
    ox_value_unref(o);
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  return o;
}

/* One scan over T steps: states in/out (n_state), scan inputs sliced on
 * their axes, scan outputs accumulated. */
static int scan_core(ox_kctx *c, cstate *s, ox_value **states, size_t n_state, ox_value *const *xs,
                     const size_t *axes, int64_t T, scan_acc *acc, size_t n_scan_out) {
  const ox_graph *body = s->g1;
  size_t m = (size_t)s->n_scan_in, n_body_in = n_state + m, n_body_out = body->n_output;
  ox_value **bin = calloc(n_body_in + 1, sizeof *bin),
           **bout = calloc(n_body_out + 1, sizeof *bout);
  int rc = OX_OK;
  if (!bin || !bout) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  for (int64_t t = 0; t < T; t++) {
    if ((rc = ox_kctx_check_cancel(c))) goto done;
    for (size_t k = 0; k < n_state; k++) bin[k] = states[k];
    for (size_t j = 0; j < m; j++) {
      int64_t idx = attr_at(s->in_dirs, s->n_in_dirs, j) ? T - 1 - t : t;
      bin[n_state + j] = take_slice(c, xs[j], axes[j], idx);
      if (!bin[n_state + j]) {
        rc = OX_ERUNTIME;
        for (size_t q = 0; q < j; q++) ox_value_unref(bin[n_state + q]);
        goto done;
      }
    }
    rc = ox_kctx_run_subgraph(c, body, bin, n_body_in, bout, n_body_out);
    for (size_t j = 0; j < m; j++) ox_value_unref(bin[n_state + j]);
    if (rc) goto done;
    for (size_t k = 0; k < n_state; k++) {
      ox_value_unref(states[k]);
      states[k] = bout[k];
      bout[k] = NULL;
    }
    for (size_t k = 0; k < n_scan_out; k++) {
      if (acc_push(&acc[k], bout[n_state + k])) {
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        goto done;
      }
      bout[n_state + k] = NULL;
    }
  }
done:
  if (bout)
    for (size_t k = 0; k < n_body_out; k++) ox_value_unref(bout[k]);
  free(bin);
  free(bout);
  return rc;
}

static int scan_run(ox_kctx *c, void *state) {
  cstate *s = state;
  const ox_kinfo *info = ox_kctx_info(c);
  bool v8 = info->since_version < 9;
  size_t off = v8 ? 1 : 0, n_in = ox_kctx_n_inputs(c) - off, m = (size_t)s->n_scan_in;
  size_t n_state = n_in - m, n_scan_out = s->g1->n_output - n_state;
  ox_value *xs[64];
  size_t axes[64];
  if (m > 64) return ox_kctx_fail(c, OX_EUNSUPPORTED, "more than 64 scan inputs");
  int64_t T = -1;
  for (size_t j = 0; j < m; j++) {
    xs[j] = ox_kctx_input(c, off + n_state + j);
    if (!xs[j] || xs[j]->kind != OX_VAL_TENSOR)
      return ox_kctx_fail(c, OX_ERUNTIME, "scan input %zu must be a tensor", j);
    int64_t ax = v8 ? 1 : attr_at(s->in_axes, s->n_in_axes, j);
    if (ax < 0) ax += (int64_t)xs[j]->rank;
    if (ax < 0 || ax >= (int64_t)xs[j]->rank)
      return ox_kctx_fail(c, OX_ERUNTIME, "scan input %zu: axis out of range", j);
    axes[j] = (size_t)ax;
    if (T >= 0 && xs[j]->dims[ax] != T)
      return ox_kctx_fail(c, OX_ERUNTIME, "scan inputs differ in sequence length");
    T = xs[j]->dims[ax];
  }
  ox_value **states = calloc(n_state + 1, sizeof *states);
  scan_acc *acc = calloc(n_scan_out + 1, sizeof *acc);
  int rc = OX_OK;
  if (!states || !acc) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (!v8) {
    for (size_t k = 0; k < n_state; k++) states[k] = ox_value_ref(ox_kctx_input(c, k));
    if ((rc = scan_core(c, s, states, n_state, xs, axes, T, acc, n_scan_out))) goto done;
    for (size_t k = 0; k < n_state; k++) {
      rc = ox_kctx_set_output(c, k, states[k]);
      states[k] = NULL;
      if (rc) goto done;
    }
    for (size_t k = 0; k < n_scan_out; k++)
      if ((rc = stack_output(
               c, n_state + k, acc[k].v, acc[k].n, attr_at(s->out_axes, s->n_out_axes, k),
               attr_at(s->out_dirs, s->n_out_dirs, k) != 0, out_type(s->g1, n_state + k))))
        goto done;
    goto done;
  }
  /* Scan-8: axis 0 is a batch; every batch runs its own scan */
  {
    const ox_value *lens = ox_kctx_input(c, 0);
    int64_t B = m ? xs[0]->dims[0] : 0;
    for (size_t j = 0; j < m; j++)
      if (xs[j]->dims[0] != B) {
        rc = ox_kctx_fail(c, OX_ERUNTIME, "scan inputs differ in batch size");
        goto done;
      }
    ox_value **fin = calloc((size_t)B * (n_state + 1) + 1, sizeof *fin);
    ox_value **outs = calloc((size_t)B * (n_scan_out + 1) + 1, sizeof *outs);
    if (!fin || !outs) {
      free(fin);
      free(outs);
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      goto done;
    }
    for (int64_t b = 0; b < B && !rc; b++) {
      int64_t Tb = T;
      if (lens && lens->numel > b) Tb = oc_get_i64(lens->data, lens->dtype, b);
      if (Tb != T) {
        rc = ox_kctx_fail(c, OX_EUNSUPPORTED, "Scan-8 with sequence_lens shorter than the input");
        break;
      }
      ox_value *bx[64];
      size_t bax[64];
      for (size_t j = 0; j < m && !rc; j++) {
        bx[j] = take_slice(c, xs[j], 0, b);
        bax[j] = 0;
        if (!bx[j]) rc = OX_ERUNTIME;
      }
      for (size_t k = 0; k < n_state && !rc; k++) {
        states[k] = take_slice(c, ox_kctx_input(c, off + k), 0, b);
        if (!states[k]) rc = OX_ERUNTIME;
      }
      scan_acc *bacc = calloc(n_scan_out + 1, sizeof *bacc);
      if (!rc && !bacc) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      if (!rc) rc = scan_core(c, s, states, n_state, bx, bax, Tb, bacc, n_scan_out);
      for (size_t j = 0; j < m; j++) ox_value_unref(bx[j]);
      for (size_t k = 0; k < n_state; k++) {
        fin[(size_t)b * n_state + k] = states[k];
        states[k] = NULL;
      }
      /* stack this batch's scan outputs into a temporary [T, ...] tensor */
      for (size_t k = 0; k < n_scan_out && !rc && bacc; k++) {
        ox_value *first = bacc[k].n ? bacc[k].v[0] : NULL;
        int64_t dims[OX_DM_MAX_RANK];
        if (!first || first->rank + 1 > OX_DM_MAX_RANK) {
          rc = ox_kctx_fail(c, OX_EUNSUPPORTED, "empty scan in Scan-8");
          break;
        }
        dims[0] = bacc[k].n;
        memcpy(dims + 1, first->dims, first->rank * sizeof *dims);
        ox_err e2;
        ox_value *st = ox_tensor_new(first->dtype, dims, first->rank + 1, &e2);
        if (!st) {
          rc = ox_kctx_fail(c, e2.code, "%s", e2.msg);
          break;
        }
        bool rev = attr_at(s->out_dirs, s->n_out_dirs, k) != 0;
        for (int64_t t = 0; t < bacc[k].n && !rc; t++) {
          ox_value *x = bacc[k].v[rev ? bacc[k].n - 1 - t : t];
          if (x->numel != first->numel || x->dtype != first->dtype)
            rc = ox_kctx_fail(c, OX_ERUNTIME, "scan output changed shape");
          else if (ox_dm_copy((char *)st->data +
                                  (size_t)(t * first->numel) * ox_value_elem_size(first->dtype),
                              x->data, x->numel, x->dtype))
            rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        }
        outs[(size_t)b * n_scan_out + k] = st;
      }
      if (bacc) acc_free(bacc, n_scan_out);
      free(bacc);
    }
    for (size_t k = 0; k < n_state && !rc; k++) {
      ox_value **col = calloc((size_t)B + 1, sizeof *col);
      if (!col) {
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        break;
      }
      for (int64_t b = 0; b < B; b++) col[b] = fin[(size_t)b * n_state + k];
      rc = stack_output(c, k, col, B, 0, false, out_type(s->g1, k));
      free(col);
    }
    for (size_t k = 0; k < n_scan_out && !rc; k++) {
      ox_value **col = calloc((size_t)B + 1, sizeof *col);
      if (!col) {
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        break;
      }
      for (int64_t b = 0; b < B; b++) col[b] = outs[(size_t)b * n_scan_out + k];
      rc = stack_output(c, n_state + k, col, B, 0, false, NULL);
      free(col);
    }
    for (size_t q = 0; q < (size_t)B * n_state; q++) ox_value_unref(fin[q]);
    for (size_t q = 0; q < (size_t)B * n_scan_out; q++) ox_value_unref(outs[q]);
    free(fin);
    free(outs);
  }
done:
  if (states)
    for (size_t k = 0; k < n_state; k++) ox_value_unref(states[k]);
  if (acc) acc_free(acc, n_scan_out);
  free(states);
  free(acc);
  return rc;
}

const ox_kernel_def ox_ops_control[] = {
    {"", "If", 1, 1000, if_prepare, if_run, NULL},
    {"", "Loop", 1, 1000, loop_prepare, loop_run, NULL},
    {"", "Scan", 8, 8, scan_prepare, scan_run, NULL},
    {"", "Scan", 9, 1000, scan_prepare, scan_run, NULL},
    {0},
};
