/* gather.c - kernels of the gather family: indexed reads and writes
 * (Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
 * TensorScatter, OneHot, Compress, NonZero). Any element size; strings are
 * duplicated. */
#include <stdlib.h>
#include <string.h>

#include "../../base/floatconv.h"
#include "../datamove.h"

#define MAXR OX_DM_MAX_RANK

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

typedef struct gstate {
  int64_t axis, batch_dims;
  int red;
  int mode;
} gstate;

static gstate *new_state(const ox_kinfo *info, void **state, ox_err *e) {
  gstate *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) {
    ox_err_set(e, OX_ENOMEM, "out of memory");
    return NULL;
  }
  *state = s;
  return s;
}

static int axis_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  gstate *s = new_state(info, state, e);
  if (!s) return e->code;
  const char *op = info->node->op_type ? info->node->op_type : "";
  int64_t dflt = strcmp(op, "OneHot") == 0 ? -1 : strcmp(op, "TensorScatter") == 0 ? -2 : 0;
  s->axis = ox_node_attr_int(info->node, "axis", dflt);
  s->batch_dims = ox_node_attr_int(info->node, "batch_dims", 0);
  const char *red = ox_node_attr_str(info->node, "reduction", "none");
  if (strcmp(red, "none") == 0)
    s->red = RED_NONE;
  else if (strcmp(red, "add") == 0)
    s->red = RED_ADD;
  else if (strcmp(red, "mul") == 0)
    s->red = RED_MUL;
  else if (strcmp(red, "max") == 0 && info->since_version >= 18)
    s->red = RED_MAX;
  else if (strcmp(red, "min") == 0 && info->since_version >= 18)
    s->red = RED_MIN;
  else
    return oc_prep_fail(info, e, "unknown reduction '%s'", red);
  const char *mode = ox_node_attr_str(info->node, "mode", "linear");
  if (strcmp(mode, "linear") == 0)
    s->mode = 0;
  else if (strcmp(mode, "circular") == 0)
    s->mode = 1;
  else
    return oc_prep_fail(info, e, "unknown mode '%s'", mode);
  return OX_OK;
}

/* Index i of an int32/int64 indices tensor, normalised against dim;
 * false when out of range. */
static bool get_index(const ox_value *ind, int64_t i, int64_t dim, int64_t *out) {
  int64_t v =
      ind->dtype == OX_INT64 ? ((const int64_t *)ind->data)[i] : ((const int32_t *)ind->data)[i];
  if (v < 0) v += dim;
  if (v < 0 || v >= dim) return false;
  *out = v;
  return true;
}

static int check_indices(ox_kctx *c, const ox_value *ind) {
  if (ind->dtype != OX_INT64 && ind->dtype != OX_INT32)
    return ox_kctx_fail(c, OX_ERUNTIME, "indices must be int32 or int64");
  return OX_OK;
}

/* ----------------------------------------------------------------- Gather */
typedef struct gather_job {
  uint8_t *dst;
  const uint8_t *src;
  const int64_t *rows; /* normalised index per position of `indices` */
  int64_t ni, dim, inner;
  size_t es;
  int32_t dt;
  int err;
  int64_t pieces; /* each row copied in this many pieces (not strings) */
} gather_job;

/* Output rows [b, e): row t copies source row (t / ni) * dim + rows[t % ni]. */
static void gather_rows(void *arg, int64_t b, int64_t e) {
  gather_job *j = arg;
  size_t rb = (size_t)j->inner * j->es;
  for (int64_t t = b; t < e; t++) {
    int64_t sr = (t / j->ni) * j->dim + j->rows[t % j->ni];
    if (j->dt == OX_STRING) {
      if (ox_dm_copy(j->dst + (size_t)t * rb, j->src + (size_t)sr * rb, j->inner, j->dt))
        j->err = OX_ENOMEM;
    } else {
      memcpy(j->dst + (size_t)t * rb, j->src + (size_t)sr * rb, rb);
    }
  }
}

/* Tasks [b, e) of rows cut in j->pieces: task u copies piece u % pieces
 * of row u / pieces (a [3, 197, 768] Gather of one index was one memcpy
 * of 600 KB on one thread at 16) */
static void gather_pieces(void *arg, int64_t b, int64_t e) {
  gather_job *j = arg;
  size_t rb = (size_t)j->inner * j->es, pb = (rb / (size_t)j->pieces + 63) / 64 * 64;
  for (int64_t u = b; u < e; u++) {
    int64_t t = u / j->pieces, sr = (t / j->ni) * j->dim + j->rows[t % j->ni];
    size_t p0 = (size_t)(u % j->pieces) * pb;
    if (p0 >= rb) continue;
    size_t len = rb - p0 < pb ? rb - p0 : pb;
    memcpy(j->dst + (size_t)t * rb + p0, j->src + (size_t)sr * rb + p0, len);
  }
}

static int gather_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *ind = ox_dm_tensor_in(c, 1);
  if (!x || !ind) return OX_ERUNTIME;
  if (check_indices(c, ind)) return OX_ERUNTIME;
  size_t r = x->rank, axis, q = ind->rank;
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (r + q > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dims[MAXR], outer = 1, inner = 1, dim = x->dims[axis];
  size_t ro = 0;
  for (size_t k = 0; k < axis; k++) outer *= (dims[ro++] = x->dims[k]);
  for (size_t k = 0; k < q; k++) dims[ro++] = ind->dims[k];
  for (size_t k = axis + 1; k < r; k++) inner *= (dims[ro++] = x->dims[k]);
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, ro);
  if (!o) return OX_ENOMEM;
  int64_t ni = ind->numel;
  int64_t *rows = malloc((size_t)(ni ? ni : 1) * sizeof *rows);
  if (!rows) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < ni; i++)
    if (!get_index(ind, i, dim, &rows[i])) {
      long long bad =
          ind->dtype == OX_INT64 ? ((int64_t *)ind->data)[i] : ((int32_t *)ind->data)[i];
      free(rows);
      return ox_kctx_fail(c, OX_ERUNTIME, "index %lld out of range [-%lld, %lld)", bad,
                          (long long)dim, (long long)dim);
    }
  gather_job j = {o->data,  x->data, rows, ni, dim, inner, ox_value_elem_size(x->dtype),
                  x->dtype, OX_OK, 1};
  int64_t n = outer * ni;
  ox_thread_pool *pool = ox_kctx_pool(c);
  int nt = ox_thread_pool_size(pool);
  bool par = x->dtype != OX_STRING && o->nbytes >= (size_t)ox_thread_pool_floor(pool, 1 << 16);
  int64_t rb = j.inner * (int64_t)j.es;
  if (par && nt > 1 && n < 2 * nt && rb >= 2 * 32768) {
    /* fewer rows than threads: rows cut in pieces of at least 32 KB */
    int64_t want = (4 * nt + n - 1) / n, most = rb / 32768;
    j.pieces = want < most ? want : most;
    ox_parallel_for(pool, n * j.pieces, 1, gather_pieces, &j);
  } else if (par && n > 1) {
    int64_t grain = (int64_t)((1 << 15) / (j.inner * (int64_t)j.es + 1)) + 1;
    ox_parallel_for(pool, n, grain, gather_rows, &j);
  } else {
    gather_rows(&j, 0, n);
  }
  free(rows);
  if (j.err) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* --------------------------------------------------------- GatherElements */
static int gather_elements_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *ind = ox_dm_tensor_in(c, 1);
  if (!x || !ind) return OX_ERUNTIME;
  if (check_indices(c, ind)) return OX_ERUNTIME;
  size_t r = x->rank, axis;
  if (r == 0 || ind->rank != r)
    return ox_kctx_fail(c, OX_ERUNTIME, "data and indices must have the same rank >= 1");
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  ox_value *o = ox_dm_output(c, 0, x->dtype, ind->dims, r);
  if (!o) return OX_ENOMEM;
  int64_t xs[MAXR], idx[MAXR] = {0}, dim = x->dims[axis], off = 0;
  ox_dm_strides(x->dims, r, xs);
  for (size_t k = 0; k < r; k++)
    if (k != axis && ind->dims[k] > x->dims[k])
      return ox_kctx_fail(c, OX_ERUNTIME, "indices dim %zu exceeds the data dim", k);
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t i = 0; i < ind->numel; i++) {
    int64_t v;
    if (!get_index(ind, i, dim, &v)) return ox_kctx_fail(c, OX_ERUNTIME, "index out of range");
    int64_t so = off + v * xs[axis];
    if (ox_dm_copy((uint8_t *)o->data + (size_t)i * es, (const uint8_t *)x->data + (size_t)so * es,
                   1, x->dtype))
      return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    for (size_t k = r; k-- > 0;) {
      if (k != axis) off += xs[k];
      if (++idx[k] < ind->dims[k]) break;
      if (k != axis) off -= idx[k] * xs[k];
      idx[k] = 0;
    }
  }
  return OX_OK;
}

/* --------------------------------------------------------------- GatherND */
static int gather_nd_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *ind = ox_dm_tensor_in(c, 1);
  if (!x || !ind) return OX_ERUNTIME;
  if (ind->dtype != OX_INT64) return ox_kctx_fail(c, OX_ERUNTIME, "indices must be int64");
  size_t r = x->rank, q = ind->rank, b = (size_t)s->batch_dims;
  if (s->batch_dims < 0 || q < 1 || b >= q || b >= r)
    return ox_kctx_fail(c, OX_ERUNTIME, "bad batch_dims or ranks");
  int64_t m = ind->dims[q - 1];
  if (m < 1 || (size_t)m + b > r) return ox_kctx_fail(c, OX_ERUNTIME, "bad indices last dim");
  if (q + r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dims[MAXR], batch = 1, inner = 1, xs[MAXR];
  size_t ro = 0;
  for (size_t k = 0; k < b; k++) {
    if (ind->dims[k] != x->dims[k]) return ox_kctx_fail(c, OX_ERUNTIME, "batch dims differ");
    batch *= x->dims[k];
  }
  for (size_t k = 0; k + 1 < q; k++) dims[ro++] = ind->dims[k];
  for (size_t k = b + (size_t)m; k < r; k++) inner *= (dims[ro++] = x->dims[k]);
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, ro);
  if (!o) return OX_ENOMEM;
  ox_dm_strides(x->dims, r, xs);
  int64_t nper = 1; /* index tuples per batch */
  for (size_t k = b; k + 1 < q; k++) nper *= ind->dims[k];
  int64_t bstride = b ? xs[b - 1] : 0;
  size_t es = ox_value_elem_size(x->dtype);
  const int64_t *iv = ind->data;
  for (int64_t bi = 0; bi < batch; bi++)
    for (int64_t t = 0; t < nper; t++) {
      const int64_t *tup = iv + (bi * nper + t) * m;
      int64_t off = bi * bstride;
      for (int64_t j = 0; j < m; j++) {
        int64_t d = x->dims[b + (size_t)j], v = tup[j] < 0 ? tup[j] + d : tup[j];
        if (v < 0 || v >= d) return ox_kctx_fail(c, OX_ERUNTIME, "index out of range");
        off += v * xs[b + (size_t)j];
      }
      if (ox_dm_copy((uint8_t *)o->data + (size_t)((bi * nper + t) * inner) * es,
                     (const uint8_t *)x->data + (size_t)off * es, inner, x->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
  return OX_OK;
}

/* ------------------------------------------------------------- reductions */
#define RED_NATIVE(T)           \
  {                             \
    T *a = (T *)dst + di;       \
    T b = ((const T *)src)[si]; \
    switch (red) {              \
      case RED_ADD:             \
        *a = (T)(*a + b);       \
        break;                  \
      case RED_MUL:             \
        *a = (T)(*a * b);       \
        break;                  \
      case RED_MAX:             \
        *a = *a > b ? *a : b;   \
        break;                  \
      case RED_MIN:             \
        *a = *a < b ? *a : b;   \
        break;                  \
    }                           \
    return OX_OK;               \
  }

/* dst[di] = dst[di] (op) src[si] */
static int reduce_elem(int32_t dt, void *dst, int64_t di, const void *src, int64_t si, int red) {
  if (red == RED_NONE) {
    size_t es = ox_value_elem_size(dt);
    return ox_dm_copy((uint8_t *)dst + (size_t)di * es, (const uint8_t *)src + (size_t)si * es, 1,
                      dt);
  }
  switch (dt) {
    case OX_FLOAT:
      RED_NATIVE(float)
    case OX_DOUBLE:
      RED_NATIVE(double)
    case OX_INT8:
      RED_NATIVE(int8_t)
    case OX_UINT8:
      RED_NATIVE(uint8_t)
    case OX_INT16:
      RED_NATIVE(int16_t)
    case OX_UINT16:
      RED_NATIVE(uint16_t)
    case OX_INT32:
      RED_NATIVE(int32_t)
    case OX_UINT32:
      RED_NATIVE(uint32_t)
    case OX_INT64:
      RED_NATIVE(int64_t)
    case OX_UINT64:
      RED_NATIVE(uint64_t)
    case OX_BOOL: {
      uint8_t *a = (uint8_t *)dst + di, b = ((const uint8_t *)src)[si];
      *a = red == RED_ADD || red == RED_MAX ? (*a || b) : (*a && b);
      return OX_OK;
    }
    case OX_STRING:
    case OX_COMPLEX64:
    case OX_COMPLEX128:
      return OX_EUNSUPPORTED;
    default: {
      double a = oc_get(dst, dt, di), b = oc_get(src, dt, si), v = a;
      switch (red) {
        case RED_ADD:
          v = (float)a + (float)b;
          break;
        case RED_MUL:
          v = (float)a * (float)b;
          break;
        case RED_MAX:
          v = a > b ? a : b;
          break;
        case RED_MIN:
          v = a < b ? a : b;
          break;
      }
      oc_set(dst, dt, di, v);
      return OX_OK;
    }
  }
}

static int copy_input_to_output(ox_kctx *c, const ox_value *x, ox_value **out) {
  ox_value *o = ox_dm_output(c, 0, x->dtype, x->dims, x->rank);
  if (!o) return OX_ENOMEM;
  if (ox_dm_copy(o->data, x->data, x->numel, x->dtype))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  *out = o;
  return OX_OK;
}

/* ------------------------------------------------ Scatter/ScatterElements */
static int scatter_elements_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *ind = ox_dm_tensor_in(c, 1), *upd = ox_dm_tensor_in(c, 2);
  if (!x || !ind || !upd) return OX_ERUNTIME;
  if (check_indices(c, ind)) return OX_ERUNTIME;
  size_t r = x->rank, axis;
  if (r == 0 || ind->rank != r || !ox_shape_equal(ind->dims, ind->rank, upd->dims, upd->rank) ||
      upd->dtype != x->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "indices and updates must match, with the data's rank");
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  for (size_t k = 0; k < r; k++)
    if (k != axis && ind->dims[k] > x->dims[k])
      return ox_kctx_fail(c, OX_ERUNTIME, "indices dim %zu exceeds the data dim", k);
  ox_value *o = NULL;
  if (copy_input_to_output(c, x, &o)) return OX_ERUNTIME;
  int64_t xs[MAXR], idx[MAXR] = {0}, dim = x->dims[axis], off = 0;
  ox_dm_strides(x->dims, r, xs);
  for (int64_t i = 0; i < ind->numel; i++) {
    int64_t v;
    if (!get_index(ind, i, dim, &v)) return ox_kctx_fail(c, OX_ERUNTIME, "index out of range");
    int rc = reduce_elem(x->dtype, o->data, off + v * xs[axis], upd->data, i, s->red);
    if (rc) return ox_kctx_fail(c, rc, "reduction not supported for this type or out of memory");
    for (size_t k = r; k-- > 0;) {
      if (k != axis) off += xs[k];
      if (++idx[k] < ind->dims[k]) break;
      if (k != axis) off -= idx[k] * xs[k];
      idx[k] = 0;
    }
  }
  return OX_OK;
}

/* -------------------------------------------------------------- ScatterND */
static int scatter_nd_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *ind = ox_dm_tensor_in(c, 1), *upd = ox_dm_tensor_in(c, 2);
  if (!x || !ind || !upd) return OX_ERUNTIME;
  if (ind->dtype != OX_INT64) return ox_kctx_fail(c, OX_ERUNTIME, "indices must be int64");
  size_t r = x->rank, q = ind->rank;
  if (q < 1 || r < 1) return ox_kctx_fail(c, OX_ERUNTIME, "bad ranks");
  int64_t m = ind->dims[q - 1];
  if (m < 1 || (size_t)m > r) return ox_kctx_fail(c, OX_ERUNTIME, "bad indices last dim");
  /* updates shape = indices.shape[:-1] + data.shape[m:] */
  bool ok = upd->rank == q - 1 + r - (size_t)m && upd->dtype == x->dtype;
  for (size_t k = 0; ok && k + 1 < q; k++) ok = upd->dims[k] == ind->dims[k];
  for (size_t k = (size_t)m; ok && k < r; k++) ok = upd->dims[q - 1 + k - (size_t)m] == x->dims[k];
  if (!ok) return ox_kctx_fail(c, OX_ERUNTIME, "updates have the wrong shape or type");
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  ox_value *o = NULL;
  if (copy_input_to_output(c, x, &o)) return OX_ERUNTIME;
  int64_t xs[MAXR], inner = 1, n = ind->numel / m;
  ox_dm_strides(x->dims, r, xs);
  for (size_t k = (size_t)m; k < r; k++) inner *= x->dims[k];
  const int64_t *iv = ind->data;
  for (int64_t t = 0; t < n; t++) {
    int64_t off = 0;
    for (int64_t j = 0; j < m; j++) {
      int64_t d = x->dims[j], v = iv[t * m + j] < 0 ? iv[t * m + j] + d : iv[t * m + j];
      if (v < 0 || v >= d) return ox_kctx_fail(c, OX_ERUNTIME, "index out of range");
      off += v * xs[j];
    }
    for (int64_t e = 0; e < inner; e++) {
      int rc = reduce_elem(x->dtype, o->data, off + e, upd->data, t * inner + e, s->red);
      if (rc) return ox_kctx_fail(c, rc, "reduction not supported for this type or out of memory");
    }
  }
  return OX_OK;
}

/* ---------------------------------------------------------- TensorScatter */
static int tensor_scatter_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *upd = ox_dm_tensor_in(c, 1), *wi = ox_kctx_input(c, 2);
  if (!x || !upd) return OX_ERUNTIME;
  size_t r = x->rank, axis;
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (axis == 0) return ox_kctx_fail(c, OX_ERUNTIME, "axis cannot be the batch dim");
  bool ok = upd->rank == r && upd->dtype == x->dtype;
  for (size_t k = 0; ok && k < r; k++) ok = k == axis || upd->dims[k] == x->dims[k];
  if (!ok) return ox_kctx_fail(c, OX_ERUNTIME, "update shape or type does not match the cache");
  if (wi && (wi->kind != OX_VAL_TENSOR || wi->dtype != OX_INT64 || wi->numel != x->dims[0]))
    return ox_kctx_fail(c, OX_ERUNTIME, "write_indices must be int64 of shape [batch]");
  ox_value *o = NULL;
  if (copy_input_to_output(c, x, &o)) return OX_ERUNTIME;
  int64_t maxs = x->dims[axis], seq = upd->dims[axis], inner = 1, prefix = 1, batch = x->dims[0];
  for (size_t k = axis + 1; k < r; k++) inner *= x->dims[k];
  for (size_t k = 0; k < axis; k++) prefix *= x->dims[k];
  int64_t per_batch = prefix / (batch ? batch : 1);
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t p = 0; p < prefix; p++) {
    int64_t b = per_batch ? p / per_batch : 0;
    int64_t w = wi ? ((const int64_t *)wi->data)[b] : 0;
    for (int64_t t = 0; t < seq; t++) {
      /* w + t without overflow: circular reduces w first; linear checks
       * w against what is left of the axis */
      int64_t ci;
      if (s->mode == 1)
        ci = maxs ? (((w % maxs) + maxs) % maxs + t) % maxs : 0;
      else if (w < 0 || w >= maxs || t >= maxs - w)
        return ox_kctx_fail(c, OX_ERUNTIME, "write index %lld + %lld out of range [0, %lld)",
                            (long long)w, (long long)t, (long long)maxs);
      else
        ci = w + t;
      if (ci < 0 || ci >= maxs)
        return ox_kctx_fail(c, OX_ERUNTIME, "write index %lld out of range", (long long)ci);
      if (ox_dm_copy((uint8_t *)o->data + (size_t)((p * maxs + ci) * inner) * es,
                     (const uint8_t *)upd->data + (size_t)((p * seq + t) * inner) * es, inner,
                     x->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
  }
  return OX_OK;
}

/* ----------------------------------------------------------------- OneHot */
/* Element i of a numeric tensor truncated to an integer; NaN and values
 * beyond the int64 range give INT64_MIN (never a valid index). */
static int64_t to_index(int32_t dt, const void *p, int64_t i) {
  if (!oc_is_float(dt)) return oc_get_i64(p, dt, i);
  double v = oc_get(p, dt, i);
  return v > -9.0e18 && v < 9.0e18 ? (int64_t)v : INT64_MIN;
}

static int onehot_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *ind = ox_dm_tensor_in(c, 0), *dep = ox_dm_tensor_in(c, 1), *val = ox_dm_tensor_in(c, 2);
  if (!ind || !dep || !val) return OX_ERUNTIME;
  if (dep->numel != 1 || val->numel != 2 || !ox_dm_is_real(ind->dtype) ||
      !ox_dm_is_real(dep->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "depth must be a scalar and values hold 2 elements");
  int64_t depth = to_index(dep->dtype, dep->data, 0);
  if (depth <= 0) return ox_kctx_fail(c, OX_ERUNTIME, "depth must be positive");
  size_t r = ind->rank + 1, axis;
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dims[MAXR], outer = 1, inner = 1;
  for (size_t k = 0, j = 0; k < r; k++) {
    dims[k] = k == axis ? depth : ind->dims[j++];
    if (k < axis) outer *= dims[k];
    if (k > axis) inner *= dims[k];
  }
  ox_value *o = ox_dm_output(c, 0, val->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  size_t es = ox_value_elem_size(val->dtype);
  const uint8_t *off_v = val->data, *on_v = off_v + es;
  if (ox_dm_fill(o->data, o->numel, off_v, val->dtype))
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t v = to_index(ind->dtype, ind->data, a * inner + i);
      if (v < 0 && v != INT64_MIN) v += depth;
      if (v < 0 || v >= depth) continue;
      if (ox_dm_copy((uint8_t *)o->data + (size_t)((a * depth + v) * inner + i) * es, on_v, 1,
                     val->dtype))
        return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    }
  return OX_OK;
}

/* --------------------------------------------------------------- Compress */
static int compress_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = axis_prepare(info, state, e);
  if (rc) return rc;
  gstate *s = *state;
  s->batch_dims = ox_node_attr(info->node, "axis") != NULL; /* has axis */
  return OX_OK;
}

static int compress_run(ox_kctx *c, void *state) {
  gstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0), *cond = ox_dm_tensor_in(c, 1);
  if (!x || !cond) return OX_ERUNTIME;
  if (cond->dtype != OX_BOOL || cond->rank != 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "condition must be a 1-D bool tensor");
  size_t r = x->rank, axis = 0;
  int64_t outer = 1, dim = x->numel, inner = 1, dims[MAXR];
  if (s->batch_dims) {
    if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
    if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
    dim = x->dims[axis];
    for (size_t k = 0; k < axis; k++) outer *= x->dims[k];
    for (size_t k = axis + 1; k < r; k++) inner *= x->dims[k];
    memcpy(dims, x->dims, r * sizeof *dims);
  } else {
    r = 1;
  }
  const uint8_t *cv = cond->data;
  int64_t sel = 0;
  for (int64_t i = 0; i < cond->numel; i++)
    if (cv[i]) {
      if (i >= dim) return ox_kctx_fail(c, OX_ERUNTIME, "condition selects beyond the axis");
      sel++;
    }
  dims[s->batch_dims ? axis : 0] = sel;
  ox_value *o = ox_dm_output(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  size_t es = ox_value_elem_size(x->dtype);
  int64_t n = cond->numel < dim ? cond->numel : dim, w = 0;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < n; i++)
      if (cv[i]) {
        if (ox_dm_copy((uint8_t *)o->data + (size_t)(w * inner) * es,
                       (const uint8_t *)x->data + (size_t)((a * dim + i) * inner) * es, inner,
                       x->dtype))
          return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
        w++;
      }
  return OX_OK;
}

/* ---------------------------------------------------------------- NonZero */
static int nonzero_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  int64_t nz = 0;
  for (int64_t i = 0; i < x->numel; i++) nz += ox_dm_nonzero(x->dtype, x->data, i);
  size_t r = x->rank;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dims[2] = {(int64_t)(r ? r : 1), nz};
  ox_value *o = ox_kctx_output(c, 0, OX_INT64, dims, 2);
  if (!o) return OX_ENOMEM;
  int64_t *out = o->data, idx[MAXR] = {0}, w = 0;
  for (int64_t i = 0; i < x->numel; i++) {
    if (ox_dm_nonzero(x->dtype, x->data, i)) {
      if (r == 0) out[w] = 0;
      for (size_t k = 0; k < r; k++) out[(int64_t)k * nz + w] = idx[k];
      w++;
    }
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < x->dims[k]) break;
      idx[k] = 0;
    }
  }
  return OX_OK;
}

#define K(op, a, b, p, r) \
  { "", op, a, b, p, r, NULL }
const ox_kernel_def ox_ops_gather[] = {
    K("Gather", 1, 1000, axis_prepare, gather_run),
    K("GatherElements", 11, 1000, axis_prepare, gather_elements_run),
    K("GatherND", 11, 1000, axis_prepare, gather_nd_run),
    K("Scatter", 9, 1000, axis_prepare, scatter_elements_run),
    K("ScatterElements", 11, 1000, axis_prepare, scatter_elements_run),
    K("ScatterND", 11, 1000, axis_prepare, scatter_nd_run),
    K("TensorScatter", 24, 1000, axis_prepare, tensor_scatter_run),
    K("OneHot", 9, 1000, axis_prepare, onehot_run),
    K("Compress", 9, 1000, compress_prepare, compress_run),
    K("NonZero", 9, 1000, NULL, nonzero_run),
    {0},
};
