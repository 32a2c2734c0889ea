/* sequence.c - sequence kernels: SequenceEmpty, SequenceConstruct,
 * SequenceAt, SequenceInsert, SequenceErase, SequenceLength,
 * SplitToSequence, ConcatFromSequence, SequenceMap. Values are immutable, so
 * sequences share their tensors by reference. */
#include <stdlib.h>
#include <string.h>

#include "../datamove.h"

typedef struct sstate {
  int64_t axis, flag;
  int32_t dtype;
  const ox_graph *body;
} sstate;

static sstate *new_state(const ox_kinfo *info, void **state, ox_err *e) {
  sstate *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  return s;
}

static ox_value *seq_input(ox_kctx *c, size_t i) {
  ox_value *v = ox_kctx_input(c, i);
  if (v && v->kind == OX_VAL_OPTIONAL) v = v->elem;
  if (!v || v->kind != OX_VAL_SEQUENCE) {
    ox_kctx_fail(c, OX_ERUNTIME, "input %zu must be a sequence", i);
    return NULL;
  }
  return v;
}

/* A new sequence holding references to items [0, n) of src. */
static ox_value *seq_copy(ox_kctx *c, const ox_value *src) {
  ox_err e2;
  ox_value *s = ox_sequence_new(&e2);
  if (!s) {
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  s->elem_type = src->elem_type;
  for (size_t i = 0; i < src->n_items; i++)
    if (ox_sequence_push(s, ox_value_ref(src->items[i]), &e2)) {
      ox_value_unref(s);
      ox_kctx_fail(c, OX_ENOMEM, "%s", e2.msg);
      return NULL;
    }
  return s;
}

/* Position input (scalar int32/int64), normalised to [0, n] (n allowed
 * when `end_ok`). */
static int position(ox_kctx *c, const ox_value *p, size_t n, bool end_ok, size_t *out) {
  if (p->kind != OX_VAL_TENSOR || p->numel != 1 || (p->dtype != OX_INT64 && p->dtype != OX_INT32))
    return ox_kctx_fail(c, OX_ERUNTIME, "position must be an int32 or int64 scalar");
  int64_t k = oc_get_i64(p->data, p->dtype, 0), sn = (int64_t)n;
  if (k < 0) k += sn;
  if (k < 0 || k > sn || (!end_ok && k == sn))
    return ox_kctx_fail(c, OX_ERUNTIME, "position %lld is out of range for a sequence of %zu",
                        (long long)oc_get_i64(p->data, p->dtype, 0), n);
  *out = (size_t)k;
  return OX_OK;
}

static int empty_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  sstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->dtype = (int32_t)ox_node_attr_int(info->node, "dtype", OX_FLOAT);
  return OX_OK;
}

static int empty_run(ox_kctx *c, void *state) {
  (void)state;
  ox_err e2;
  ox_value *s = ox_sequence_new(&e2);
  if (!s) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return ox_kctx_set_output(c, 0, s);
}

static int construct_run(ox_kctx *c, void *state) {
  (void)state;
  ox_err e2;
  ox_value *s = ox_sequence_new(&e2);
  if (!s) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < ox_kctx_n_inputs(c); i++) {
    ox_value *x = ox_kctx_input(c, i);
    if (!x || x->kind != OX_VAL_TENSOR) {
      ox_value_unref(s);
      return ox_kctx_fail(c, OX_ERUNTIME, "input %zu must be a tensor", i);
    }
    if (i && x->dtype != s->items[0]->dtype) {
      ox_value_unref(s);
      return ox_kctx_fail(c, OX_ERUNTIME, "inputs must share one element type");
    }
    if (ox_sequence_push(s, ox_value_ref(x), &e2)) {
      ox_value_unref(s);
      return ox_kctx_fail(c, OX_ENOMEM, "%s", e2.msg);
    }
  }
  return ox_kctx_set_output(c, 0, s);
}

static int at_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *s = seq_input(c, 0), *p = ox_kctx_input(c, 1);
  size_t k;
  if (!s) return OX_ERUNTIME;
  if (!p) return ox_kctx_fail(c, OX_ERUNTIME, "position is missing");
  if (position(c, p, s->n_items, false, &k)) return OX_ERUNTIME;
  return ox_kctx_set_output(c, 0, ox_value_ref(s->items[k]));
}

static int insert_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *s = seq_input(c, 0), *x = ox_kctx_input(c, 1), *p = ox_kctx_input(c, 2);
  if (!s) return OX_ERUNTIME;
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(c, OX_ERUNTIME, "tensor is missing");
  if (s->n_items && s->items[0]->kind == OX_VAL_TENSOR && s->items[0]->dtype != x->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "the tensor's type differs from the sequence's");
  size_t k = s->n_items;
  if (p && position(c, p, s->n_items, true, &k)) return OX_ERUNTIME;
  ox_value *o = seq_copy(c, s);
  ox_err e2;
  if (!o) return OX_ENOMEM;
  if (ox_sequence_push(o, ox_value_ref(x), &e2)) {
    ox_value_unref(o);
    return ox_kctx_fail(c, OX_ENOMEM, "%s", e2.msg);
  }
  memmove(o->items + k + 1, o->items + k, (o->n_items - 1 - k) * sizeof *o->items);
  o->items[k] = x;
  return ox_kctx_set_output(c, 0, o);
}

static int erase_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *s = seq_input(c, 0), *p = ox_kctx_input(c, 1);
  if (!s) return OX_ERUNTIME;
  if (!s->n_items) return ox_kctx_fail(c, OX_ERUNTIME, "cannot erase from an empty sequence");
  size_t k = s->n_items - 1;
  if (p && position(c, p, s->n_items, false, &k)) return OX_ERUNTIME;
  ox_value *o = seq_copy(c, s);
  if (!o) return OX_ENOMEM;
  ox_value_unref(o->items[k]);
  memmove(o->items + k, o->items + k + 1, (o->n_items - 1 - k) * sizeof *o->items);
  o->n_items--;
  return ox_kctx_set_output(c, 0, o);
}

static int length_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *s = seq_input(c, 0);
  if (!s) return OX_ERUNTIME;
  ox_value *o = ox_kctx_output(c, 0, OX_INT64, NULL, 0);
  if (!o) return OX_ENOMEM;
  *(int64_t *)o->data = (int64_t)s->n_items;
  return OX_OK;
}

/* ------------------------------------------------------- SplitToSequence */

static int axis_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  sstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->axis = ox_node_attr_int(info->node, "axis", 0);
  s->flag = ox_node_attr_int(
      info->node, !strcmp(info->node->op_type, "SplitToSequence") ? "keepdims" : "new_axis",
      !strcmp(info->node->op_type, "SplitToSequence") ? 1 : 0);
  return OX_OK;
}

/* Copies the part [start, start+len) of x along axis into a new tensor
 * (without the axis when squeeze). */
static ox_value *chunk(ox_kctx *c, const ox_value *x, size_t axis, int64_t start, int64_t len,
                       bool squeeze) {
  int64_t dims[OX_DM_MAX_RANK], st[OX_DM_MAX_RANK], ost[OX_DM_MAX_RANK];
  ox_dm_strides(x->dims, x->rank, st);
  for (size_t k = 0; k < x->rank; k++) dims[k] = k == axis ? len : x->dims[k];
  ox_err e2;
  ox_value *o = ox_tensor_new(x->dtype, dims, x->rank, &e2);
  if (!o) {
    ox_kctx_fail(c, e2.code, "%s", e2.msg);
    return NULL;
  }
  memcpy(ost, st, x->rank * sizeof *st);
  size_t es = ox_value_elem_size(x->dtype);
  if (ox_dm_strided(o->data, (const char *)x->data + (size_t)(start * st[axis]) * es, x->dtype,
                    x->rank, dims, ost, NULL)) {
    ox_value_unref(o);
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  if (squeeze) {
    memmove(o->dims + axis, o->dims + axis + 1, (o->rank - axis - 1) * sizeof *o->dims);
    o->rank--;
  }
  return o;
}

static int split_run(ox_kctx *c, void *state) {
  sstate *s = state;
  ox_value *x = ox_kctx_input(c, 0), *sp = ox_kctx_input(c, 1);
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(c, OX_ERUNTIME, "input must be a tensor");
  size_t axis;
  if (oc_axis(c, s->axis, x->rank, &axis, "axis")) return OX_ERUNTIME;
  int64_t D = x->dims[axis];
  int64_t *sizes = NULL, n = 0;
  bool squeeze = false;
  if (!sp) {
    n = D;
    squeeze = s->flag == 0;
    sizes = malloc((size_t)(n ? n : 1) * sizeof *sizes);
    if (!sizes) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++) sizes[k] = 1;
  } else if (sp->rank == 0) {
    int64_t len = oc_get_i64(sp->data, sp->dtype, 0);
    if (len <= 0) return ox_kctx_fail(c, OX_ERUNTIME, "split must be positive");
    n = (D + len - 1) / len;
    sizes = malloc((size_t)(n ? n : 1) * sizeof *sizes);
    if (!sizes) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++) sizes[k] = k == n - 1 ? D - len * (n - 1) : len;
  } else {
    n = sp->numel;
    sizes = malloc((size_t)(n ? n : 1) * sizeof *sizes);
    if (!sizes) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    int64_t sum = 0;
    for (int64_t k = 0; k < n; k++) {
      sizes[k] = oc_get_i64(sp->data, sp->dtype, k);
      if (sizes[k] < 0) {
        free(sizes);
        return ox_kctx_fail(c, OX_ERUNTIME, "negative split size");
      }
      sum += sizes[k];
    }
    if (sum != D) {
      free(sizes);
      return ox_kctx_fail(c, OX_ERUNTIME, "split sizes add up to %lld, the axis has %lld",
                          (long long)sum, (long long)D);
    }
  }
  ox_err e2;
  ox_value *o = ox_sequence_new(&e2);
  int rc = o ? OX_OK : ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (int64_t k = 0, at = 0; k < n && !rc; at += sizes[k], k++) {
    ox_value *part = chunk(c, x, axis, at, sizes[k], squeeze);
    if (!part)
      rc = OX_ERUNTIME;
    else if (ox_sequence_push(o, part, &e2))
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  free(sizes);
  if (rc) {
    ox_value_unref(o);
    return rc;
  }
  return ox_kctx_set_output(c, 0, o);
}

/* ---------------------------------------------------- ConcatFromSequence */

static int concat_run(ox_kctx *c, void *state) {
  sstate *s = state;
  ox_value *q = seq_input(c, 0);
  if (!q) return OX_ERUNTIME;
  if (!q->n_items) return ox_kctx_fail(c, OX_ERUNTIME, "the sequence is empty");
  const ox_value *f = q->items[0];
  size_t r = f->rank, orank = r + (s->flag ? 1 : 0);
  if (orank == 0) return ox_kctx_fail(c, OX_ERUNTIME, "cannot concatenate scalars");
  int64_t ax = s->axis;
  if (ax < 0) ax += (int64_t)orank;
  if (ax < 0 || ax >= (int64_t)orank)
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld out of range", (long long)s->axis);
  size_t axis = (size_t)ax;
  int64_t dims[OX_DM_MAX_RANK], total = 0;
  if (orank > OX_DM_MAX_RANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  for (size_t i = 0; i < q->n_items; i++) {
    const ox_value *x = q->items[i];
    if (x->kind != OX_VAL_TENSOR || x->dtype != f->dtype || x->rank != r)
      return ox_kctx_fail(c, OX_ERUNTIME, "item %zu differs in type or rank", i);
    for (size_t k = 0; k < r; k++)
      if ((s->flag || k != axis) && x->dims[k] != f->dims[k])
        return ox_kctx_fail(c, OX_ERUNTIME, "item %zu differs in shape", i);
    total += s->flag ? 1 : x->dims[axis];
  }
  for (size_t k = 0, j = 0; k < orank; k++) {
    if (k == axis) {
      dims[k] = total;
      if (!s->flag) j++;
    } else {
      dims[k] = f->dims[j++];
    }
  }
  ox_value *o = ox_dm_output(c, 0, f->dtype, dims, orank);
  if (!o) return OX_ENOMEM;
  int64_t outer = 1;
  for (size_t k = 0; k < axis; k++) outer *= dims[k];
  int64_t inner_out = outer ? o->numel / outer : 0, at = 0;
  size_t es = ox_value_elem_size(f->dtype);
  for (size_t i = 0; i < q->n_items; i++) {
    const ox_value *x = q->items[i];
    int64_t blk = outer ? x->numel / outer : 0;
    for (int64_t a = 0; a < outer; a++)
      if (ox_dm_copy((char *)o->data + (size_t)(a * inner_out + at) * es,
                     (const char *)x->data + (size_t)(a * blk) * es, blk, f->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    at += blk;
  }
  return OX_OK;
}

/* ----------------------------------------------------------- SequenceMap */

static int map_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  sstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const ox_attr *a = ox_node_attr(info->node, "body");
  if (!a || !a->g)
    return ox_err_set(e, OX_EMODEL, "node '%s' (SequenceMap): needs a body graph",
                      info->node->name ? info->node->name : "");
  s->body = a->g;
  if (s->body->n_input != info->n_inputs || s->body->n_output != info->n_outputs)
    return ox_err_set(e, OX_EMODEL,
                      "node '%s' (SequenceMap): the body's inputs/outputs do not match the node's",
                      info->node->name ? info->node->name : "");
  return OX_OK;
}

static int map_run(ox_kctx *c, void *state) {
  sstate *s = state;
  size_t n_in = ox_kctx_n_inputs(c), n_out = ox_kctx_n_outputs(c);
  ox_value *first = seq_input(c, 0);
  if (!first) return OX_ERUNTIME;
  size_t len = first->n_items;
  for (size_t i = 1; i < n_in; i++) {
    ox_value *x = ox_kctx_input(c, i);
    if (x && x->kind == OX_VAL_SEQUENCE && x->n_items != len)
      return ox_kctx_fail(c, OX_ERUNTIME, "input sequences differ in length");
  }
  ox_value **bin = calloc(n_in + 1, sizeof *bin), **bout = calloc(n_out + 1, sizeof *bout);
  ox_value **res = calloc(n_out + 1, sizeof *res);
  int rc = OX_OK;
  ox_err e2;
  if (!bin || !bout || !res) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < n_out && !rc; k++)
    if (!(res[k] = ox_sequence_new(&e2))) rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (size_t t = 0; t < len && !rc; t++) {
    if ((rc = ox_kctx_check_cancel(c))) break;
    for (size_t i = 0; i < n_in; i++) {
      ox_value *x = ox_kctx_input(c, i);
      bin[i] = x && x->kind == OX_VAL_SEQUENCE ? x->items[t] : x;
    }
    if ((rc = ox_kctx_run_subgraph(c, s->body, bin, n_in, bout, n_out))) break;
    for (size_t k = 0; k < n_out; k++) {
      if (!rc && ox_sequence_push(res[k], bout[k], &e2))
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
      else if (rc)
        ox_value_unref(bout[k]);
      bout[k] = NULL;
    }
  }
  for (size_t k = 0; k < n_out && !rc; k++) {
    rc = ox_kctx_set_output(c, k, res[k]);
    res[k] = NULL;
  }
done:
  if (res)
    for (size_t k = 0; k < n_out; k++) ox_value_unref(res[k]);
  free(bin);
  free(bout);
  free(res);
  return rc;
}

const ox_kernel_def ox_ops_sequence[] = {
    {"", "SequenceEmpty", 11, 1000, empty_prepare, empty_run, NULL},
    {"", "SequenceConstruct", 11, 1000, NULL, construct_run, NULL},
    {"", "SequenceAt", 11, 1000, NULL, at_run, NULL},
    {"", "SequenceInsert", 11, 1000, NULL, insert_run, NULL},
    {"", "SequenceErase", 11, 1000, NULL, erase_run, NULL},
    {"", "SequenceLength", 11, 1000, NULL, length_run, NULL},
    {"", "SplitToSequence", 11, 1000, axis_prepare, split_run, NULL},
    {"", "ConcatFromSequence", 11, 1000, axis_prepare, concat_run, NULL},
    {"", "SequenceMap", 17, 1000, map_prepare, map_run, NULL},
    {0},
};
