/* tensor.c - kernels of the tensor family: shape manipulation and data
 * movement (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split,
 * Slice, Expand, Tile, Shape, Size, Identity, Constant, ConstantOfShape,
 * Range, EyeLike, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence,
 * BitCast, CenterCropPad). Everything works on any element size; strings
 * are duplicated. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/floatconv.h"
#include "../datamove.h"

#define MAXR OX_DM_MAX_RANK

/* Prepared state shared by the kernels of this file (arena-allocated,
 * except `val`, released by release_val). */
typedef struct tstate {
  int64_t axis, flag, k;
  bool has_axis, has_ints;
  int64_t *ints; /* an ints attribute (axes, perm, shape, split, ...) */
  size_t n_ints;
  int64_t *ints2, *ints3; /* a second and third ints attribute (Slice-1 ends, axes) */
  size_t n_ints2, n_ints3;
  bool has_ints3;
  int mode;
  int32_t dtype;
  ox_value *val; /* Constant's value, ConstantOfShape's element */
  ox_value *pre; /* ConstantOfShape's output when its shape is a constant */
} tstate;

static tstate *new_state(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) {
    ox_err_set(e, OX_ENOMEM, "out of memory");
    return NULL;
  }
  *state = s;
  return s;
}

static bool get_ints(const ox_kinfo *info, const char *name, int64_t **out, size_t *n) {
  const ox_attr *a = ox_node_attr(info->node, name);
  if (!a) return false;
  *out = a->ints;
  *n = a->n_ints;
  return true;
}

static void release_val(void *state) {
  tstate *s = state;
  if (s && s->val) ox_value_unref(s->val);
  if (s && s->pre) ox_value_unref(s->pre);
}

/* ---------------------------------------------------------------- Reshape */
static int reshape_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->flag = ox_node_attr_int(info->node, "allowzero", 0);
  if (info->since_version < 5) {
    s->has_ints = get_ints(info, "shape", &s->ints, &s->n_ints);
    if (!s->has_ints) return oc_prep_fail(info, e, "attribute 'shape' is required");
  }
  return OX_OK;
}

static int reshape_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t shape[MAXR];
  size_t n;
  if (s->has_ints) {
    if (s->n_ints > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
    n = s->n_ints;
    memcpy(shape, s->ints, n * sizeof *shape);
  } else if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "shape", shape, MAXR, &n)) {
    return OX_ERUNTIME;
  }
  int64_t known = 1;
  int neg = -1;
  for (size_t k = 0; k < n; k++) {
    if (shape[k] == 0 && !s->flag) {
      if (k >= x->rank)
        return ox_kctx_fail(c, OX_ERUNTIME, "shape[%zu] = 0 copies a dim the input lacks", k);
      shape[k] = x->dims[k];
    }
    if (shape[k] == -1) {
      if (neg >= 0) return ox_kctx_fail(c, OX_ERUNTIME, "more than one -1 in the shape");
      neg = (int)k;
    } else if (shape[k] < 0) {
      return ox_kctx_fail(c, OX_ERUNTIME, "invalid shape value %lld", (long long)shape[k]);
    } else if (!ox_mul_i64(known, shape[k], &known)) {
      return ox_kctx_fail(c, OX_ERUNTIME, "shape overflows");
    }
  }
  if (neg >= 0) {
    if (known == 0 || x->numel % known)
      return ox_kctx_fail(c, OX_ERUNTIME, "cannot infer the -1 dim: %lld elements into %lld",
                          (long long)x->numel, (long long)known);
    shape[neg] = x->numel / known;
  } else if (known != x->numel) {
    return ox_kctx_fail(c, OX_ERUNTIME, "cannot reshape %lld elements into %lld",
                        (long long)x->numel, (long long)known);
  }
  return ox_dm_view_out(c, 0, x, shape, n);
}

/* ---------------------------------------------------------------- Flatten */
static int flatten_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->axis = ox_node_attr_int(info->node, "axis", 1);
  return OX_OK;
}

static int flatten_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t r = (int64_t)x->rank, axis = s->axis;
  if (axis < -r || axis > r)
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld out of range for rank %lld", (long long)axis,
                        (long long)r);
  if (axis < 0) axis += r;
  int64_t d[2] = {1, 1};
  for (int64_t k = 0; k < r; k++) d[k < axis ? 0 : 1] *= x->dims[k];
  return ox_dm_view_out(c, 0, x, d, 2);
}

/* ------------------------------------------------------ Squeeze/Unsqueeze */
static int axes_attr_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  if (info->since_version < 13) s->has_ints = get_ints(info, "axes", &s->ints, &s->n_ints);
  return OX_OK;
}

/* Reads the axes (attribute or input 1); *n = SIZE_MAX when absent. */
static int read_axes(ox_kctx *c, tstate *s, int64_t *axes, size_t *n) {
  if (s->has_ints) {
    if (s->n_ints > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "too many axes");
    if (s->n_ints) memcpy(axes, s->ints, s->n_ints * sizeof *axes);
    *n = s->n_ints;
    return OX_OK;
  }
  ox_value *a = ox_kctx_input(c, 1);
  if (!a) {
    *n = SIZE_MAX;
    return OX_OK;
  }
  return ox_dm_read_ints(c, a, "axes", axes, MAXR, n) ? OX_ERUNTIME : OX_OK;
}

static int squeeze_run(ox_kctx *c, void *state) {
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t axes[MAXR], dims[MAXR];
  size_t n, r = 0;
  bool drop[MAXR] = {false};
  if (x->rank > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  if (read_axes(c, state, axes, &n)) return OX_ERUNTIME;
  if (n == SIZE_MAX) {
    for (size_t k = 0; k < x->rank; k++) drop[k] = x->dims[k] == 1;
  } else {
    for (size_t i = 0; i < n; i++) {
      size_t a;
      if (oc_axis(c, axes[i], x->rank, &a, "axis")) return OX_ERUNTIME;
      if (x->dims[a] != 1)
        return ox_kctx_fail(c, OX_ERUNTIME, "cannot squeeze axis %zu of size %lld", a,
                            (long long)x->dims[a]);
      drop[a] = true;
    }
  }
  for (size_t k = 0; k < x->rank; k++)
    if (!drop[k]) dims[r++] = x->dims[k];
  return ox_dm_view_out(c, 0, x, dims, r);
}

static int unsqueeze_run(ox_kctx *c, void *state) {
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t axes[MAXR], dims[MAXR];
  size_t n;
  bool ins[MAXR] = {false};
  if (read_axes(c, state, axes, &n)) return OX_ERUNTIME;
  if (n == SIZE_MAX) return ox_kctx_fail(c, OX_ERUNTIME, "axes are required");
  size_t r = x->rank + n;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  for (size_t i = 0; i < n; i++) {
    size_t a;
    if (oc_axis(c, axes[i], r, &a, "axis")) return OX_ERUNTIME;
    if (ins[a]) return ox_kctx_fail(c, OX_ERUNTIME, "axis %zu repeated", a);
    ins[a] = true;
  }
  for (size_t k = 0, j = 0; k < r; k++) dims[k] = ins[k] ? 1 : x->dims[j++];
  return ox_dm_view_out(c, 0, x, dims, r);
}

/* -------------------------------------------------------------- Transpose */
static int transpose_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->has_ints = get_ints(info, "perm", &s->ints, &s->n_ints);
  return OX_OK;
}

static int transpose_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t perm[MAXR], dims[MAXR], st[MAXR], ist[MAXR];
  bool seen[MAXR] = {false};
  if (s->has_ints && s->n_ints != r)
    return ox_kctx_fail(c, OX_ERUNTIME, "perm has %zu entries for rank %zu", s->n_ints, r);
  for (size_t k = 0; k < r; k++) {
    perm[k] = s->has_ints ? s->ints[k] : (int64_t)(r - 1 - k);
    if (perm[k] < 0) perm[k] += (int64_t)r;
    if (perm[k] < 0 || perm[k] >= (int64_t)r || seen[perm[k]])
      return ox_kctx_fail(c, OX_ERUNTIME, "invalid perm");
    seen[perm[k]] = true;
  }
  ox_dm_strides(x->dims, r, ist);
  for (size_t k = 0; k < r; k++) {
    dims[k] = x->dims[perm[k]];
    st[k] = ist[perm[k]];
  }
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (ox_dm_strided(o->data, x->data, x->dtype, r, dims, st, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ----------------------------------------------------------------- Concat */
static int concat_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const ox_attr *a = ox_node_attr(info->node, "axis");
  if (!a && info->since_version >= 4) return oc_prep_fail(info, e, "attribute 'axis' is required");
  s->axis = a ? a->i : 1;
  return OX_OK;
}

static int concat_run(ox_kctx *c, void *state) {
  tstate *s = state;
  size_t n = ox_kctx_n_inputs(c);
  ox_value *x0 = NULL;
  for (size_t i = 0; i < n && !x0; i++) x0 = ox_kctx_input(c, i);
  if (!x0 || x0->kind != OX_VAL_TENSOR) return ox_kctx_fail(c, OX_ERUNTIME, "no tensor input");
  size_t r = x0->rank, axis;
  if (r == 0) return ox_kctx_fail(c, OX_ERUNTIME, "cannot concatenate scalars");
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  int64_t dims[MAXR];
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  memcpy(dims, x0->dims, r * sizeof *dims);
  dims[axis] = 0;
  for (size_t i = 0; i < n; i++) {
    ox_value *x = ox_kctx_input(c, i);
    if (!x) continue;
    if (x->kind != OX_VAL_TENSOR || x->rank != r || x->dtype != x0->dtype)
      return ox_kctx_fail(c, OX_ERUNTIME, "input %zu: rank or type differs from input 0", i);
    for (size_t k = 0; k < r; k++)
      if (k != axis && x->dims[k] != x0->dims[k])
        return ox_kctx_fail(c, OX_ERUNTIME, "input %zu: dim %zu is %lld, expected %lld", i, k,
                            (long long)x->dims[k], (long long)x0->dims[k]);
    dims[axis] += x->dims[axis];
  }
  ox_value *o = ox_dm_output(c, 0, x0->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; k++) outer *= dims[k];
  for (size_t k = axis + 1; k < r; k++) inner *= dims[k];
  size_t es = ox_value_elem_size(x0->dtype);
  int64_t orow = dims[axis] * inner, off = 0;
  for (size_t i = 0; i < n; i++) {
    ox_value *x = ox_kctx_input(c, i);
    if (!x) continue;
    int64_t row = x->dims[axis] * inner;
    /* an input its producer wrote in place (src/runtime/concat_place.c) */
    bool in_place = outer == 1 && x->data == (uint8_t *)o->data + (size_t)off * es;
    if (!in_place && ox_dm_copy2d(ox_kctx_pool(c), (uint8_t *)o->data + (size_t)off * es, orow,
                                  x->data, row, outer, row, x->dtype))
      return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    off += row;
  }
  return OX_OK;
}

/* ------------------------------------------------------------------ Split */
static int split_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->axis = ox_node_attr_int(info->node, "axis", 0);
  if (info->since_version < 13) s->has_ints = get_ints(info, "split", &s->ints, &s->n_ints);
  s->k = ox_node_attr_int(info->node, "num_outputs", 0);
  s->has_axis = ox_node_attr(info->node, "num_outputs") != NULL && info->since_version >= 18;
  return OX_OK;
}

static int split_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, axis, nout = ox_kctx_n_outputs(c);
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dim = x->dims[axis];
  int64_t *sizes = calloc(nout ? nout : 1, sizeof *sizes);
  if (!sizes) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  int rc = OX_OK;
  ox_value *sp = s->has_ints ? NULL : ox_kctx_input(c, 1);
  if (sp && sp->kind == OX_VAL_TENSOR && sp->numel == 0) sp = NULL; /* empty: not given */
  if (s->has_ints || sp) {
    size_t n;
    if (s->has_ints) {
      n = s->n_ints;
      if (n == nout) memcpy(sizes, s->ints, n * sizeof *sizes);
    } else {
      if (sp->kind != OX_VAL_TENSOR || (sp->dtype != OX_INT64 && sp->dtype != OX_INT32)) {
        free(sizes);
        return ox_kctx_fail(c, OX_ERUNTIME, "'split' must be an int64 tensor");
      }
      n = (size_t)sp->numel;
      if (n == nout)
        for (size_t i = 0; i < n; i++) sizes[i] = oc_get_i64(sp->data, sp->dtype, (int64_t)i);
    }
    if (n != nout) {
      free(sizes);
      return ox_kctx_fail(c, OX_ERUNTIME, "'split' has %zu entries for %zu outputs", n, nout);
    }
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
      if (sizes[i] < 0) rc = 1;
      sum += sizes[i];
    }
    if (rc || sum != dim) {
      free(sizes);
      return ox_kctx_fail(c, OX_ERUNTIME, "'split' sums to %lld, axis has %lld", (long long)sum,
                          (long long)dim);
    }
  } else if (s->has_axis) {
    if (s->k <= 0 || (size_t)s->k != nout) {
      free(sizes);
      return ox_kctx_fail(c, OX_ERUNTIME, "num_outputs %lld does not match %zu outputs",
                          (long long)s->k, nout);
    }
    int64_t chunk = (dim + s->k - 1) / s->k;
    for (size_t i = 0; i < nout; i++) {
      int64_t left = dim - chunk * (int64_t)i;
      sizes[i] = left < chunk ? (left > 0 ? left : 0) : chunk;
    }
  } else {
    if (nout == 0 || dim % (int64_t)nout) {
      free(sizes);
      return ox_kctx_fail(c, OX_ERUNTIME, "axis of size %lld cannot be split evenly in %zu",
                          (long long)dim, nout);
    }
    for (size_t i = 0; i < nout; i++) sizes[i] = dim / (int64_t)nout;
  }
  int64_t outer = 1, inner = 1, dims[MAXR];
  for (size_t k = 0; k < axis; k++) outer *= x->dims[k];
  for (size_t k = axis + 1; k < r; k++) inner *= x->dims[k];
  memcpy(dims, x->dims, r * sizeof *dims);
  size_t es = ox_value_elem_size(x->dtype);
  int64_t irow = dim * inner, off = 0;
  for (size_t i = 0; i < nout && !rc; i++) {
    dims[axis] = sizes[i];
    int64_t row = sizes[i] * inner;
    if (ox_kctx_output_wanted(c, i)) {
      ox_value *o = ox_dm_output(c, i, x->dtype, dims, r);
      if (!o) {
        rc = OX_ENOMEM;
        break;
      }
      if (ox_dm_copy2d(ox_kctx_pool(c), o->data, row, (const uint8_t *)x->data + (size_t)off * es,
                       irow, outer, row, x->dtype))
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
    off += row;
  }
  free(sizes);
  return rc;
}

/* ------------------------------------------------------------------ Slice */
static int slice1_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  if (!get_ints(info, "starts", &s->ints, &s->n_ints) ||
      !get_ints(info, "ends", &s->ints2, &s->n_ints2))
    return oc_prep_fail(info, e, "attributes 'starts' and 'ends' are required");
  s->has_ints3 = get_ints(info, "axes", &s->ints3, &s->n_ints3);
  if (s->n_ints != s->n_ints2 || (s->has_ints3 && s->n_ints3 != s->n_ints))
    return oc_prep_fail(info, e, "'starts', 'ends' and 'axes' differ in length");
  s->has_ints = true;
  return OX_OK;
}

static int slice_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, n, n2, n3 = 0, n4 = 0;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t starts[MAXR], ends[MAXR], axes[MAXR], steps[MAXR];
  bool has_axes, has_steps = false;
  if (s && s->has_ints) {
    n = s->n_ints;
    n2 = s->n_ints2;
    if (n > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "too many axes");
    memcpy(starts, s->ints, n * sizeof *starts);
    memcpy(ends, s->ints2, n * sizeof *ends);
    has_axes = s->has_ints3;
    if (has_axes) memcpy(axes, s->ints3, n * sizeof *axes);
    n3 = n;
  } else {
    if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "starts", starts, MAXR, &n) ||
        ox_dm_read_ints(c, ox_kctx_input(c, 2), "ends", ends, MAXR, &n2))
      return OX_ERUNTIME;
    ox_value *a = ox_kctx_input(c, 3), *st = ox_kctx_input(c, 4);
    has_axes = a != NULL;
    if (a && ox_dm_read_ints(c, a, "axes", axes, MAXR, &n3)) return OX_ERUNTIME;
    has_steps = st != NULL;
    if (st && ox_dm_read_ints(c, st, "steps", steps, MAXR, &n4)) return OX_ERUNTIME;
    if (n != n2 || (has_axes && n3 != n) || (has_steps && n4 != n))
      return ox_kctx_fail(c, OX_ERUNTIME, "starts, ends, axes and steps differ in length");
  }
  if (n != n2) return ox_kctx_fail(c, OX_ERUNTIME, "starts and ends differ in length");
  int64_t dims[MAXR], ist[MAXR], st[MAXR], off = 0;
  bool seen[MAXR] = {false};
  ox_dm_strides(x->dims, r, ist);
  memcpy(dims, x->dims, r * sizeof *dims);
  memcpy(st, ist, r * sizeof *st);
  for (size_t i = 0; i < n; i++) {
    size_t a;
    if (oc_axis(c, has_axes ? axes[i] : (int64_t)i, r, &a, "axis")) return OX_ERUNTIME;
    if (seen[a]) return ox_kctx_fail(c, OX_ERUNTIME, "axis %zu repeated", a);
    seen[a] = true;
    int64_t d = x->dims[a], step = has_steps ? steps[i] : 1, b = starts[i], en = ends[i], cnt;
    if (step == 0) return ox_kctx_fail(c, OX_ERUNTIME, "step 0 on axis %zu", a);
    if (b < 0) b += d;
    if (en < 0) en += d;
    if (step > 0) {
      b = b < 0 ? 0 : b > d ? d : b;
      en = en < 0 ? 0 : en > d ? d : en;
      cnt = en > b ? (en - b + step - 1) / step : 0;
    } else {
      b = b < 0 ? -1 : b > d - 1 ? d - 1 : b;
      en = en < -1 ? -1 : en > d - 1 ? d - 1 : en;
      cnt = b > en ? (b - en + (-step) - 1) / (-step) : 0;
    }
    dims[a] = cnt;
    if (cnt > 0) off += b * ist[a];
    st[a] = cnt > 1 ? step * ist[a] : ist[a]; /* cnt > 1 bounds |step| by the dim */
  }
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (o->numel == 0) return OX_OK;
  if (ox_dm_strided(o->data, (const uint8_t *)x->data + (size_t)off * ox_value_elem_size(x->dtype),
                    x->dtype, r, dims, st, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ----------------------------------------------------------------- Expand */
static int expand_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t shape[MAXR], dims[MAXR], ist[MAXR], st[MAXR];
  size_t n, r;
  if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "shape", shape, MAXR, &n)) return OX_ERUNTIME;
  if (x->rank > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  ox_err e = {0};
  if (ox_broadcast_shape(x->dims, x->rank, shape, n, dims, &r, &e))
    return ox_kctx_fail(c, OX_ERUNTIME, "%s", e.msg);
  ox_dm_strides(x->dims, x->rank, ist);
  for (size_t k = 0; k < r; k++) {
    size_t lead = r - x->rank;
    st[k] = k < lead || x->dims[k - lead] == 1 ? 0 : ist[k - lead];
  }
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (ox_dm_strided(o->data, x->data, x->dtype, r, dims, st, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------------- Tile */
static int tile_run(ox_kctx *c, void *state) {
  (void)state;
  const ox_kinfo *info = ox_kctx_info(c);
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, n;
  if (2 * r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t rep[MAXR];
  if (info->since_version < 6) {
    /* Tile-1: scalar inputs `tiles` and `axis`, typed T (the float types of
     * the data) by the schema; integer tensors are read as well */
    int64_t t[1], a[1];
    size_t ax;
    for (size_t k = 1; k <= 2; k++) {
      const ox_value *v = ox_kctx_input(c, k);
      if (!v || v->kind != OX_VAL_TENSOR || v->numel != 1 || !ox_dm_is_real(v->dtype))
        return ox_kctx_fail(c, OX_ERUNTIME, "%s must be a numeric scalar",
                            k == 1 ? "tiles" : "axis");
      (k == 1 ? t : a)[0] = oc_get_i64(v->data, v->dtype, 0);
    }
    if (oc_axis(c, a[0], r, &ax, "axis")) return OX_ERUNTIME;
    for (size_t k = 0; k < r; k++) rep[k] = k == ax ? t[0] : 1;
  } else {
    if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "repeats", rep, MAXR, &n)) return OX_ERUNTIME;
    if (n != r) return ox_kctx_fail(c, OX_ERUNTIME, "repeats has %zu entries for rank %zu", n, r);
  }
  int64_t vd[MAXR], vs[MAXR], ist[MAXR], dims[MAXR];
  ox_dm_strides(x->dims, r, ist);
  for (size_t k = 0; k < r; k++) {
    if (rep[k] < 0) return ox_kctx_fail(c, OX_ERUNTIME, "negative repeat");
    vd[2 * k] = rep[k];
    vs[2 * k] = 0;
    vd[2 * k + 1] = x->dims[k];
    vs[2 * k + 1] = ist[k];
    if (!ox_mul_i64(rep[k], x->dims[k], &dims[k]))
      return ox_kctx_fail(c, OX_ERUNTIME, "output size overflows");
  }
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (ox_dm_strided(o->data, x->data, x->dtype, 2 * r, vd, vs, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------ Shape, Size */
static int shape_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->axis = ox_node_attr_int(info->node, "start", 0);
  const ox_attr *a = ox_node_attr(info->node, "end");
  s->has_axis = a != NULL;
  s->k = a ? a->i : 0;
  return OX_OK;
}

static int shape_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x || (x->kind != OX_VAL_TENSOR && x->kind != OX_VAL_SPARSE))
    return ox_kctx_fail(c, OX_ERUNTIME, "input must be a tensor");
  int64_t r = (int64_t)x->rank, b = s->axis, en = s->has_axis ? s->k : r;
  if (b < 0) b += r;
  if (en < 0) en += r;
  b = b < 0 ? 0 : b > r ? r : b;
  en = en < 0 ? 0 : en > r ? r : en;
  int64_t n = en > b ? en - b : 0;
  ox_value *o = ox_kctx_output(c, 0, OX_INT64, &n, 1);
  if (!o) return OX_ENOMEM;
  for (int64_t i = 0; i < n; i++) ((int64_t *)o->data)[i] = x->dims[b + i];
  return OX_OK;
}

static int size_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x || (x->kind != OX_VAL_TENSOR && x->kind != OX_VAL_SPARSE))
    return ox_kctx_fail(c, OX_ERUNTIME, "input must be a tensor");
  int64_t n = 1;
  for (size_t k = 0; k < x->rank; k++) n *= x->dims[k];
  ox_value *o = ox_kctx_output(c, 0, OX_INT64, NULL, 0);
  if (!o) return OX_ENOMEM;
  *(int64_t *)o->data = n;
  return OX_OK;
}

/* --------------------------------------------------------------- Identity */
static int identity_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x) return ox_kctx_fail(c, OX_ERUNTIME, "input is missing");
  if (x->kind == OX_VAL_TENSOR) return ox_dm_view_out(c, 0, x, x->dims, x->rank);
  /* sequences, maps and optionals are immutable: share them */
  return ox_kctx_set_output(c, 0, ox_value_ref(x));
}

/* --------------------------------------------------------------- Constant */
/* Dense tensor from a SparseTensorProto (indices [NNZ, rank] or linear [NNZ]). */
static ox_value *densify(const ox_kinfo *info, const ox_sparse_tensor *sp, ox_err *e) {
  if (!sp->values || !sp->indices) {
    oc_prep_fail(info, e, "sparse_value lacks values or indices");
    return NULL;
  }
  ox_value *vals = ox_value_from_tensor_proto(sp->values, false, e);
  if (!vals) return NULL;
  ox_value *idx = ox_value_from_tensor_proto(sp->indices, false, e);
  ox_value *out = NULL;
  if (!idx) goto done;
  out = ox_tensor_new(vals->dtype, sp->dims, sp->n_dims, e);
  if (!out) goto done;
  size_t r = sp->n_dims;
  int64_t nnz = vals->numel, st[MAXR];
  if (r > MAXR) {
    oc_prep_fail(info, e, "sparse rank too large");
    goto fail;
  }
  ox_dm_strides(sp->dims, r, st);
  bool linear = idx->rank == 1;
  if ((linear && idx->numel != nnz) ||
      (!linear && (idx->rank != 2 || idx->dims[0] != nnz || idx->dims[1] != (int64_t)r))) {
    oc_prep_fail(info, e, "sparse indices have a bad shape");
    goto fail;
  }
  size_t es = ox_value_elem_size(vals->dtype);
  for (int64_t i = 0; i < nnz; i++) {
    int64_t pos = 0;
    if (linear) {
      pos = oc_get_i64(idx->data, idx->dtype, i);
    } else {
      for (size_t k = 0; k < r; k++) {
        int64_t v = oc_get_i64(idx->data, idx->dtype, i * (int64_t)r + (int64_t)k);
        if (v < 0 || v >= sp->dims[k]) pos = -1 - out->numel;
        pos += v * st[k];
      }
    }
    if (pos < 0 || pos >= out->numel) {
      oc_prep_fail(info, e, "sparse index %lld out of range", (long long)i);
      goto fail;
    }
    if (ox_dm_copy((uint8_t *)out->data + (size_t)pos * es, (uint8_t *)vals->data + (size_t)i * es,
                   1, vals->dtype)) {
      ox_err_set(e, OX_ENOMEM, "out of memory");
      goto fail;
    }
  }
  goto done;
fail:
  ox_value_unref(out);
  out = NULL;
done:
  ox_value_unref(vals);
  if (idx) ox_value_unref(idx);
  return out;
}

static int constant_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const ox_node *nd = info->node;
  const ox_attr *a;
  ox_value *v = NULL;
  int64_t n;
  if ((a = ox_node_attr(nd, "value")) && a->t) {
    v = ox_value_from_tensor_proto(a->t, false, e);
  } else if ((a = ox_node_attr(nd, "sparse_value")) && a->sparse_tensor) {
    v = densify(info, a->sparse_tensor, e);
  } else if ((a = ox_node_attr(nd, "value_float"))) {
    v = ox_tensor_scalar_f32(a->f, e);
  } else if ((a = ox_node_attr(nd, "value_int"))) {
    v = ox_tensor_scalar_i64(a->i, e);
  } else if ((a = ox_node_attr(nd, "value_floats"))) {
    n = (int64_t)a->n_floats;
    if ((v = ox_tensor_new(OX_FLOAT, &n, 1, e)) && n)
      memcpy(v->data, a->floats, a->n_floats * sizeof(float));
  } else if ((a = ox_node_attr(nd, "value_ints"))) {
    n = (int64_t)a->n_ints;
    if ((v = ox_tensor_new(OX_INT64, &n, 1, e)) && n)
      memcpy(v->data, a->ints, a->n_ints * sizeof(int64_t));
  } else if ((a = ox_node_attr(nd, "value_string")) || (a = ox_node_attr(nd, "value_strings"))) {
    bool many = strcmp(a->name, "value_strings") == 0;
    size_t cnt = many ? a->n_strings : 1;
    n = (int64_t)cnt;
    if ((v = ox_tensor_new(OX_STRING, &n, many ? 1 : 0, e))) {
      for (size_t i = 0; i < cnt; i++) {
        const ox_bytes *b = many ? &a->strings[i] : &a->s;
        char *p = malloc(b->size + 1);
        if (!p) {
          ox_value_unref(v);
          return ox_err_set(e, OX_ENOMEM, "out of memory");
        }
        if (b->size) memcpy(p, b->data, b->size);
        p[b->size] = 0;
        ((char **)v->data)[i] = p;
      }
    }
  } else {
    return oc_prep_fail(info, e, "no value attribute");
  }
  if (!v) return e->code ? e->code : OX_ENOMEM;
  s->val = v;
  return OX_OK;
}

/* The value is shared, not copied: like initializers, a value held by more
 * than one reference is read-only for kernels and never pooled. */
static int constant_run(ox_kctx *c, void *state) {
  tstate *s = state;
  return ox_kctx_set_output(c, 0, ox_value_ref(s->val));
}

/* -------------------------------------------------------- ConstantOfShape */
static int cos_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const ox_attr *a = ox_node_attr(info->node, "value");
  ox_value *v = a && a->t ? ox_value_from_tensor_proto(a->t, false, e) : ox_tensor_scalar_f32(0, e);
  if (!v) return e->code ? e->code : OX_ENOMEM;
  s->val = v;
  if (v->numel != 1) return oc_prep_fail(info, e, "'value' must hold one element");
  /* a constant shape: build the output once, share it on every run */
  const ox_value *sh = info->const_inputs ? info->const_inputs[0] : NULL;
  if (sh && sh->kind == OX_VAL_TENSOR && sh->dtype == OX_INT64 && sh->rank == 1 &&
      sh->numel <= MAXR) {
    const int64_t *d = sh->data;
    for (int64_t k = 0; k < sh->numel; k++)
      if (d[k] < 0) return oc_prep_fail(info, e, "negative dim in the shape");
    s->pre = ox_tensor_new(v->dtype, d, (size_t)sh->numel, e);
    if (!s->pre) return e->code ? e->code : OX_ENOMEM;
    if (ox_dm_fill(s->pre->data, s->pre->numel, v->data, v->dtype))
      return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  return OX_OK;
}

static int cos_run(ox_kctx *c, void *state) {
  tstate *s = state;
  if (s->pre) return ox_kctx_set_output(c, 0, ox_value_ref(s->pre));
  int64_t shape[MAXR];
  size_t n;
  if (ox_dm_read_ints(c, ox_kctx_input(c, 0), "input", shape, MAXR, &n)) return OX_ERUNTIME;
  for (size_t k = 0; k < n; k++)
    if (shape[k] < 0) return ox_kctx_fail(c, OX_ERUNTIME, "negative dim in the shape");
  ox_value *o = ox_dm_output(c, 0, s->val->dtype, shape, n);
  if (!o) return OX_ENOMEM;
  if (ox_dm_fill(o->data, o->numel, s->val->data, s->val->dtype))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------------ Range */
static int range_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->k = info->since_version >= 27 ? ox_node_attr_int(info->node, "stash_type", 1) : 1;
  return OX_OK;
}

static int range_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *in[3];
  for (size_t i = 0; i < 3; i++) {
    in[i] = ox_dm_tensor_in(c, i);
    if (!in[i]) return OX_ERUNTIME;
    if (in[i]->numel != 1 || in[i]->dtype != in[0]->dtype)
      return ox_kctx_fail(c, OX_ERUNTIME, "inputs must be scalars of one type");
  }
  int32_t dt = in[0]->dtype;
  int64_t n;
  bool is_int = dt == OX_INT16 || dt == OX_INT32 || dt == OX_INT64;
  if (!is_int && dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_FLOAT16 && dt != OX_BFLOAT16)
    return ox_kctx_fail(c, OX_ERUNTIME, "unsupported type %d", (int)dt);
  if (is_int) {
    int64_t a = oc_get_i64(in[0]->data, dt, 0), l = oc_get_i64(in[1]->data, dt, 0),
            d = oc_get_i64(in[2]->data, dt, 0);
    if (d == 0) return ox_kctx_fail(c, OX_ERUNTIME, "delta is 0");
    /* exact ceil division of magnitudes in uint64: limit - start may not fit
     * int64 (start INT64_MIN, limit INT64_MAX) */
    n = 0;
    if (l != a && (l > a) == (d > 0)) {
      uint64_t span = l > a ? (uint64_t)l - (uint64_t)a : (uint64_t)a - (uint64_t)l;
      uint64_t step = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
      uint64_t q = span / step + (span % step != 0);
      if (q > (uint64_t)1e12) return ox_kctx_fail(c, OX_ERUNTIME, "range too large");
      n = (int64_t)q;
    }
    ox_value *o = ox_kctx_output(c, 0, dt, &n, 1);
    if (!o) return OX_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
      /* between start and limit, so the wrapped sum is exact */
      int64_t v = (int64_t)((uint64_t)a + (uint64_t)i * (uint64_t)d);
      if (dt == OX_INT64)
        ((int64_t *)o->data)[i] = v;
      else if (dt == OX_INT32)
        ((int32_t *)o->data)[i] = (int32_t)v;
      else
        ((int16_t *)o->data)[i] = (int16_t)v;
    }
    return OX_OK;
  }
  double a = oc_get(in[0]->data, dt, 0), l = oc_get(in[1]->data, dt, 0),
         d = oc_get(in[2]->data, dt, 0);
  if (d == 0 || isnan(a) || isnan(l) || isnan(d))
    return ox_kctx_fail(c, OX_ERUNTIME, "delta is 0 or a value is NaN");
  double cnt = ceil((l - a) / d);
  if (cnt > 1e12) return ox_kctx_fail(c, OX_ERUNTIME, "range too large");
  n = cnt > 0 ? (int64_t)cnt : 0;
  ox_value *o = ox_kctx_output(c, 0, dt, &n, 1);
  if (!o) return OX_ENOMEM;
  if (dt == OX_DOUBLE) {
    for (int64_t i = 0; i < n; i++) ((double *)o->data)[i] = a + (double)i * d;
  } else if (dt == OX_FLOAT || s->k == 1) {
    float fa = (float)a, fd = (float)d;
    for (int64_t i = 0; i < n; i++) oc_set(o->data, dt, i, fa + (float)i * fd);
  } else {
    /* accumulate in the type itself */
    uint16_t acc;
    oc_set(&acc, dt, 0, a);
    for (int64_t i = 0; i < n; i++) {
      ((uint16_t *)o->data)[i] = acc;
      oc_set(&acc, dt, 0, (float)oc_get(&acc, dt, 0) + (float)d);
    }
  }
  return OX_OK;
}

/* ---------------------------------------------------------------- EyeLike */
static int eyelike_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->dtype = (int32_t)ox_node_attr_int(info->node, "dtype", 0);
  s->k = ox_node_attr_int(info->node, "k", 0);
  if (s->dtype == OX_STRING || (s->dtype && !ox_dtype_get(s->dtype)))
    return oc_prep_fail(info, e, "invalid dtype %d", (int)s->dtype);
  return OX_OK;
}

static int eyelike_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  if (x->rank != 2) return ox_kctx_fail(c, OX_ERUNTIME, "input must be 2-D");
  int32_t dt = s->dtype ? s->dtype : x->dtype;
  ox_value *o = ox_kctx_output_zero(c, 0, dt, x->dims, 2);
  if (!o) return OX_ENOMEM;
  int64_t R = x->dims[0], C = x->dims[1];
  for (int64_t i = 0; i < R; i++) /* j = i + k in [0, C), without overflow for any k */
    if (s->k >= -i && s->k < C - i) oc_set(o->data, dt, i * C + i + s->k, 1.0);
  return OX_OK;
}

/* ------------------------------------------------------------------ Trilu */
static int trilu_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->flag = ox_node_attr_int(info->node, "upper", 1);
  return OX_OK;
}

static int trilu_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "input must have rank >= 2");
  int64_t k = 0;
  ox_value *kv = ox_kctx_input(c, 1);
  if (kv) {
    if (kv->kind != OX_VAL_TENSOR || kv->numel != 1 || kv->dtype != OX_INT64)
      return ox_kctx_fail(c, OX_ERUNTIME, "k must be an int64 scalar");
    k = *(const int64_t *)kv->data;
  }
  ox_value *o = ox_kctx_output_zero(c, 0, x->dtype, x->dims, x->rank);
  if (!o) return OX_ENOMEM;
  int64_t R = x->dims[x->rank - 2], C = x->dims[x->rank - 1];
  if (R * C == 0) return OX_OK;
  /* any k beyond [-R, C] keeps all or nothing: clamped, i + k cannot overflow */
  k = k < -R ? -R : k > C ? C : k;
  int64_t batch = x->numel / (R * C);
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < R; i++) {
      /* kept columns: upper j >= i + k, lower j <= i + k */
      int64_t j0, j1;
      if (s->flag) {
        j0 = i + k < 0 ? 0 : i + k;
        j1 = C;
      } else {
        j0 = 0;
        j1 = i + k + 1 > C ? C : i + k + 1;
      }
      if (j1 <= j0) continue;
      size_t off = (size_t)((b * R + i) * C + j0) * es;
      if (ox_dm_copy((uint8_t *)o->data + off, (const uint8_t *)x->data + off, j1 - j0, x->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
  return OX_OK;
}

/* ----------------------------------------------- DepthToSpace/SpaceToDepth */
static int d2s_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->k = ox_node_attr_int(info->node, "blocksize", 0);
  if (s->k <= 0) return oc_prep_fail(info, e, "attribute 'blocksize' must be positive");
  const char *m = ox_node_attr_str(info->node, "mode", "DCR");
  if (strcmp(m, "DCR") == 0)
    s->mode = 0;
  else if (strcmp(m, "CRD") == 0)
    s->mode = 1;
  else
    return oc_prep_fail(info, e, "unknown mode '%s'", m);
  return OX_OK;
}

static int d2s_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  if (x->rank != 4) return ox_kctx_fail(c, OX_ERUNTIME, "input must be 4-D");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], b = s->k;
  if (C % (b * b)) return ox_kctx_fail(c, OX_ERUNTIME, "channels not divisible by blocksize^2");
  int64_t Co = C / (b * b), sN = C * H * W, sC, sb1, sb2;
  if (s->mode == 0) {
    sb1 = b * Co * H * W;
    sb2 = Co * H * W;
    sC = H * W;
  } else {
    sC = b * b * H * W;
    sb1 = b * H * W;
    sb2 = H * W;
  }
  int64_t vd[6] = {N, Co, H, b, W, b}, vs[6] = {sN, sC, W, sb1, 1, sb2};
  int64_t dims[4] = {N, Co, H * b, W * b};
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, 4);
  if (!o) return OX_ENOMEM;
  if (ox_dm_strided(o->data, x->data, x->dtype, 6, vd, vs, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

static int s2d_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  if (x->rank != 4) return ox_kctx_fail(c, OX_ERUNTIME, "input must be 4-D");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], b = s->k;
  if (H % b || W % b) return ox_kctx_fail(c, OX_ERUNTIME, "H and W not divisible by blocksize");
  int64_t vd[6] = {N, b, b, C, H / b, W / b};
  int64_t vs[6] = {C * H * W, W, 1, H * W, b * W, b};
  int64_t dims[4] = {N, C * b * b, H / b, W / b};
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, 4);
  if (!o) return OX_ENOMEM;
  if (ox_dm_strided(o->data, x->data, x->dtype, 6, vd, vs, ox_kctx_pool(c)))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

static int s2d_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->k = ox_node_attr_int(info->node, "blocksize", 0);
  if (s->k <= 0) return oc_prep_fail(info, e, "attribute 'blocksize' must be positive");
  return OX_OK;
}

/* -------------------------------------------------------- ReverseSequence */
static int revseq_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->axis = ox_node_attr_int(info->node, "time_axis", 0);
  s->k = ox_node_attr_int(info->node, "batch_axis", 1);
  if (!((s->axis == 0 && s->k == 1) || (s->axis == 1 && s->k == 0)))
    return oc_prep_fail(info, e, "time_axis and batch_axis must be 0 and 1");
  return OX_OK;
}

static int revseq_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *lens = ox_dm_tensor_in(c, 1);
  if (!x || !lens) return OX_ERUNTIME;
  if (x->rank < 2) return ox_kctx_fail(c, OX_ERUNTIME, "input must have rank >= 2");
  int64_t T = x->dims[s->axis], B = x->dims[s->k], inner = 1;
  if (lens->numel != B)
    return ox_kctx_fail(c, OX_ERUNTIME, "sequence_lens must have %lld values", (long long)B);
  for (size_t k = 2; k < x->rank; k++) inner *= x->dims[k];
  ox_value *o = ox_dm_output(c, 0, x->dtype, x->dims, x->rank);
  if (!o) return OX_ENOMEM;
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t b = 0; b < B; b++) {
    int64_t len = oc_get_i64(lens->data, lens->dtype, b);
    if (len < 0 || len > T)
      return ox_kctx_fail(c, OX_ERUNTIME, "sequence length %lld out of range", (long long)len);
    for (int64_t t = 0; t < T; t++) {
      int64_t src_t = t < len ? len - 1 - t : t;
      int64_t d = s->axis == 0 ? t * B + b : b * T + t;
      int64_t sr = s->axis == 0 ? src_t * B + b : b * T + src_t;
      if (ox_dm_copy((uint8_t *)o->data + (size_t)(d * inner) * es,
                     (const uint8_t *)x->data + (size_t)(sr * inner) * es, inner, x->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
  }
  return OX_OK;
}

/* ---------------------------------------------------------------- BitCast */
static int bitcast_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const ox_attr *a = ox_node_attr(info->node, "to");
  if (!a) return oc_prep_fail(info, e, "attribute 'to' is required");
  s->dtype = (int32_t)a->i;
  if (s->dtype == OX_STRING || !ox_dtype_get(s->dtype) || s->dtype == OX_UNDEFINED)
    return oc_prep_fail(info, e, "invalid target type %d", (int)s->dtype);
  return OX_OK;
}

static int bitcast_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  const ox_dtype_info *fi = ox_dtype_get(x->dtype), *ti = ox_dtype_get(s->dtype);
  if (x->dtype == OX_STRING || !fi || fi->bits != ti->bits)
    return ox_kctx_fail(c, OX_ERUNTIME, "cannot bitcast %s to %s (bit widths differ)",
                        fi ? fi->name : "?", ti->name);
  ox_value *o = ox_kctx_output(c, 0, s->dtype, x->dims, x->rank);
  if (!o) return OX_ENOMEM;
  if (ti->bits >= 8 && s->dtype != OX_BOOL) {
    if (x->numel) memcpy(o->data, x->data, x->nbytes);
    return OX_OK;
  }
  /* sub-byte and bool: reinterpret the low bits of each unpacked byte */
  const uint8_t *src = x->data;
  uint8_t *dst = o->data;
  uint8_t mask = (uint8_t)((1u << ti->bits) - 1u);
  bool sext = s->dtype == OX_INT4 || s->dtype == OX_INT2;
  for (int64_t i = 0; i < x->numel; i++) {
    uint8_t v = (uint8_t)(src[i] & mask);
    if (s->dtype == OX_BOOL)
      v = src[i] != 0;
    else if (sext && ti->bits < 8 && (v >> (ti->bits - 1)))
      v = (uint8_t)(v | (uint8_t)~mask);
    dst[i] = v;
  }
  return OX_OK;
}

/* ---------------------------------------------------------- CenterCropPad */
static int ccp_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  tstate *s = new_state(info, state, e);
  if (!s) return e->code;
  s->has_ints = get_ints(info, "axes", &s->ints, &s->n_ints);
  return OX_OK;
}

static int ccp_run(ox_kctx *c, void *state) {
  tstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, n;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t shape[MAXR], dims[MAXR], ds[MAXR] = {0}, ss[MAXR] = {0}, cnt[MAXR];
  if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "shape", shape, MAXR, &n)) return OX_ERUNTIME;
  size_t na = s->has_ints ? s->n_ints : r;
  if (n != na) return ox_kctx_fail(c, OX_ERUNTIME, "shape has %zu values for %zu axes", n, na);
  memcpy(dims, x->dims, r * sizeof *dims);
  for (size_t i = 0; i < na; i++) {
    size_t a;
    if (oc_axis(c, s->has_ints ? s->ints[i] : (int64_t)i, r, &a, "axis")) return OX_ERUNTIME;
    if (shape[i] < 0) return ox_kctx_fail(c, OX_ERUNTIME, "negative target size");
    dims[a] = shape[i];
  }
  for (size_t k = 0; k < r; k++) {
    int64_t in = x->dims[k], out = dims[k];
    if (out <= in) {
      ss[k] = (in - out) / 2;
      cnt[k] = out;
    } else {
      ds[k] = (out - in) / 2;
      cnt[k] = in;
    }
  }
  ox_value *o = ox_kctx_output_zero(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (ox_dm_box(o->data, dims, ds, x->data, x->dims, ss, cnt, r, x->dtype))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------------ table */
#define K(op, a, b, p, r, rel) \
  { "", op, a, b, p, r, rel }
const ox_kernel_def ox_ops_tensor[] = {
    K("Reshape", 1, 4, reshape_prepare, reshape_run, NULL),
    K("Reshape", 5, 1000, reshape_prepare, reshape_run, NULL),
    K("Flatten", 1, 1000, flatten_prepare, flatten_run, NULL),
    K("Squeeze", 1, 1000, axes_attr_prepare, squeeze_run, NULL),
    K("Unsqueeze", 1, 1000, axes_attr_prepare, unsqueeze_run, NULL),
    K("Transpose", 1, 1000, transpose_prepare, transpose_run, NULL),
    K("Concat", 1, 1000, concat_prepare, concat_run, NULL),
    K("Split", 1, 1000, split_prepare, split_run, NULL),
    K("Slice", 1, 9, slice1_prepare, slice_run, NULL),
    K("Slice", 10, 1000, NULL, slice_run, NULL),
    K("Expand", 8, 1000, NULL, expand_run, NULL),
    K("Tile", 1, 1000, NULL, tile_run, NULL),
    K("Shape", 1, 1000, shape_prepare, shape_run, NULL),
    K("Size", 1, 1000, NULL, size_run, NULL),
    K("Identity", 1, 1000, NULL, identity_run, NULL),
    K("Constant", 1, 1000, constant_prepare, constant_run, release_val),
    K("ConstantOfShape", 9, 1000, cos_prepare, cos_run, release_val),
    K("Range", 11, 1000, range_prepare, range_run, NULL),
    K("EyeLike", 9, 1000, eyelike_prepare, eyelike_run, NULL),
    K("Trilu", 14, 1000, trilu_prepare, trilu_run, NULL),
    K("DepthToSpace", 1, 1000, d2s_prepare, d2s_run, NULL),
    K("SpaceToDepth", 1, 1000, s2d_prepare, s2d_run, NULL),
    K("ReverseSequence", 10, 1000, revseq_prepare, revseq_run, NULL),
    K("BitCast", 26, 1000, bitcast_prepare, bitcast_run, NULL),
    K("CenterCropPad", 18, 1000, ccp_prepare, ccp_run, NULL),
    {0},
};
