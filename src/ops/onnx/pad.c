/* pad.c - Pad in every version: pads as attribute (1: "paddings", 2:
 * "pads") or input (11+), optional axes input (18+), modes constant,
 * reflect, edge and wrap (19+). Negative pads crop. Any element type. */
#include <stdlib.h>
#include <string.h>

#include "../datamove.h"

#define MAXR OX_DM_MAX_RANK

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pstate {
  int mode;
  bool pads_attr;
  const int64_t *pads;
  size_t n_pads;
  double value; /* attribute value of versions 1 and 2 */
} pstate;

static int pad_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  pstate *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  const char *m = ox_node_attr_str(info->node, "mode", "constant");
  if (strcmp(m, "constant") == 0)
    s->mode = PAD_CONSTANT;
  else if (strcmp(m, "reflect") == 0)
    s->mode = PAD_REFLECT;
  else if (strcmp(m, "edge") == 0)
    s->mode = PAD_EDGE;
  else if (strcmp(m, "wrap") == 0 && info->since_version >= 19)
    s->mode = PAD_WRAP;
  else
    return oc_prep_fail(info, e, "unknown mode '%s'", m);
  if (info->since_version < 11) {
    const ox_attr *a = ox_node_attr(info->node, info->since_version < 2 ? "paddings" : "pads");
    if (!a) return oc_prep_fail(info, e, "attribute 'pads' is required");
    s->pads_attr = true;
    s->pads = a->ints;
    s->n_pads = a->n_ints;
    s->value = ox_node_attr_float(info->node, "value", 0.0f);
  }
  return OX_OK;
}

/* Source index along one axis for output index o (-1: the constant). */
static int64_t map_index(int mode, int64_t o, int64_t begin, int64_t in) {
  int64_t i = o - begin;
  if (i >= 0 && i < in) return i;
  switch (mode) {
    case PAD_EDGE:
      return i < 0 ? 0 : in - 1;
    case PAD_WRAP:
      return ((i % in) + in) % in;
    case PAD_REFLECT: {
      if (in == 1) return 0;
      int64_t period = 2 * (in - 1), m = ((i % period) + period) % period;
      return m >= in ? period - m : m;
    }
    default:
      return -1;
  }
}

typedef struct pad_job {
  uint8_t *dst;
  const uint8_t *src;
  const void *cval;
  int32_t dt;
  size_t es, rank;
  int64_t ist[MAXR], dims[MAXR]; /* input strides, output dims */
  const int64_t *map[MAXR];      /* per axis: output index -> input index or -1 */
  int64_t n;                     /* output row length (last dim) */
  int err;
} pad_job;

/* Output rows [b, e) (all dims but the last). */
static void pad_rows(void *arg, int64_t b, int64_t e) {
  pad_job *j = arg;
  size_t r = j->rank, es = j->es;
  int64_t idx[MAXR], rest = b, n = j->n;
  for (size_t k = r - 1; k-- > 0;) {
    idx[k] = rest % j->dims[k];
    rest /= j->dims[k];
  }
  const int64_t *last = j->map[r - 1];
  for (int64_t row = b; row < e; row++) {
    int64_t soff = 0;
    bool constant = false;
    for (size_t k = 0; k + 1 < r; k++) {
      int64_t m = j->map[k][idx[k]];
      if (m < 0) constant = true;
      soff += m * j->ist[k];
    }
    uint8_t *d = j->dst + (size_t)(row * n) * es;
    int rc = OX_OK;
    if (constant) {
      rc = ox_dm_fill(d, n, j->cval, j->dt);
    } else {
      for (int64_t i = 0; i < n && !rc;) {
        int64_t m = last[i];
        if (m < 0) {
          rc = ox_dm_copy(d + (size_t)i * es, j->cval, 1, j->dt);
          i++;
          continue;
        }
        int64_t q = i + 1;
        while (q < n && last[q] == m + (q - i)) q++;
        rc = ox_dm_copy(d + (size_t)i * es, j->src + (size_t)(soff + m) * es, q - i, j->dt);
        i = q;
      }
    }
    if (rc) j->err = rc;
    for (size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < j->dims[k]) break;
      idx[k] = 0;
    }
  }
}

static int pad_run(ox_kctx *c, void *state) {
  pstate *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, np, na = 0;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t pads[2 * MAXR], axes[MAXR], begin[MAXR] = {0}, end[MAXR] = {0}, dims[MAXR];
  if (s->pads_attr) {
    if (s->n_pads > 2 * MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "too many pads");
    np = s->n_pads;
    memcpy(pads, s->pads, np * sizeof *pads);
  } else if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "pads", pads, 2 * MAXR, &np)) {
    return OX_ERUNTIME;
  }
  ox_value *av = ox_kctx_input(c, 3);
  if (av) {
    if (ox_dm_read_ints(c, av, "axes", axes, MAXR, &na)) return OX_ERUNTIME;
  } else {
    na = r;
    for (size_t k = 0; k < r; k++) axes[k] = (int64_t)k;
  }
  if (np != 2 * na)
    return ox_kctx_fail(c, OX_ERUNTIME, "pads has %zu values, expected %zu", np, 2 * na);
  for (size_t i = 0; i < na; i++) {
    size_t a;
    if (oc_axis(c, axes[i], r, &a, "axis")) return OX_ERUNTIME;
    begin[a] = pads[i];
    end[a] = pads[na + i];
  }
  for (size_t k = 0; k < r; k++) {
    if (!ox_add_i64(x->dims[k], begin[k], &dims[k]) || !ox_add_i64(dims[k], end[k], &dims[k]))
      return ox_kctx_fail(c, OX_ERUNTIME, "pads overflow on axis %zu", k);
    if (dims[k] < 0) return ox_kctx_fail(c, OX_ERUNTIME, "pads make axis %zu negative", k);
    if (s->mode != PAD_CONSTANT && x->dims[k] == 0 && dims[k] > 0)
      return ox_kctx_fail(c, OX_ERUNTIME, "cannot pad an empty axis in this mode");
  }
  ox_value *o = ox_kctx_output_zero(c, 0, x->dtype, dims, r);
  if (!o) return OX_ENOMEM;
  if (o->numel == 0) return OX_OK;
  size_t es = ox_value_elem_size(x->dtype);
  /* the constant, one element of the output type */
  uint8_t cval[16] = {0};
  const void *cptr = cval;
  ox_value *cv = ox_kctx_input(c, 2);
  if (s->pads_attr) {
    if (x->dtype != OX_STRING) oc_set(cval, x->dtype, 0, s->value);
  } else if (cv) {
    if (cv->kind != OX_VAL_TENSOR || cv->dtype != x->dtype || cv->numel != 1)
      return ox_kctx_fail(c, OX_ERUNTIME, "constant_value must be one element of the input type");
    cptr = cv->data;
  }
  static const char *const empty = "";
  if (x->dtype == OX_STRING && cptr == cval) cptr = &empty;
  if (r == 0) return ox_dm_copy(o->data, x->data, 1, x->dtype);
  /* per-axis index maps */
  int64_t total = 0, *mapbase, *map[MAXR];
  for (size_t k = 0; k < r; k++) total += dims[k];
  mapbase = malloc((size_t)total * sizeof *mapbase);
  if (!mapbase) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  int64_t *p = mapbase;
  for (size_t k = 0; k < r; k++) {
    map[k] = p;
    for (int64_t i = 0; i < dims[k]; i++) p[i] = map_index(s->mode, i, begin[k], x->dims[k]);
    p += dims[k];
  }
  pad_job j = {o->data, x->data, cptr, x->dtype, es, r, {0}, {0}, {0}, dims[r - 1], OX_OK};
  ox_dm_strides(x->dims, r, j.ist);
  memcpy(j.dims, dims, r * sizeof *dims);
  memcpy(j.map, map, r * sizeof *map);
  int64_t rows = o->numel / dims[r - 1];
  if (x->dtype != OX_STRING && o->nbytes >= (size_t)ox_thread_pool_floor(ox_kctx_pool(c), 1 << 16) &&
      rows > 1)
    ox_parallel_for(ox_kctx_pool(c), rows,
                    (int64_t)((1 << 15) / (o->nbytes / (size_t)rows + 1)) + 1, pad_rows, &j);
  else
    pad_rows(&j, 0, rows);
  int rc = j.err;
  free(mapbase);
  if (rc) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return OX_OK;
}

const ox_kernel_def ox_ops_pad[] = {
    {"", "Pad", 1, 1000, pad_prepare, pad_run, NULL},
    {0},
};
