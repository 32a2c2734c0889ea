/* sort.c - kernels of the sort family: TopK (k as attribute or input,
 * largest/smallest, ties broken by the lower index) and Unique (flattened
 * or along an axis, sorted or in order of first occurrence, all four
 * outputs). Both rest on a stable merge sort of index arrays. */
#include <stdlib.h>
#include <string.h>

#include "../datamove.h"

#define MAXR OX_DM_MAX_RANK

typedef int (*cmp_fn)(const void *ctx, int64_t a, int64_t b);

/* Stable merge sort of idx[0..n) by cmp; tmp holds n entries. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, cmp_fn cmp, const void *ctx) {
  if (n < 16) {
    for (int64_t i = 1; i < n; i++) {
      int64_t v = idx[i], j = i;
      while (j > 0 && cmp(ctx, idx[j - 1], v) > 0) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
    return;
  }
  int64_t h = n / 2;
  merge_sort(idx, tmp, h, cmp, ctx);
  merge_sort(idx + h, tmp, n - h, cmp, ctx);
  if (cmp(ctx, idx[h - 1], idx[h]) <= 0) return;
  memcpy(tmp, idx, (size_t)h * sizeof *tmp);
  int64_t i = 0, j = h, w = 0;
  while (i < h && j < n) idx[w++] = cmp(ctx, idx[j], tmp[i]) < 0 ? idx[j++] : tmp[i++];
  while (i < h) idx[w++] = tmp[i++];
}

/* ------------------------------------------------------------------- TopK */
typedef struct topk_state {
  int64_t axis, k;
  bool k_attr, largest;
} topk_state;

static int topk_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  topk_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->axis = ox_node_attr_int(info->node, "axis", -1);
  s->largest = ox_node_attr_int(info->node, "largest", 1) != 0;
  if (info->since_version < 10) {
    const ox_attr *a = ox_node_attr(info->node, "k");
    if (!a) return oc_prep_fail(info, e, "attribute 'k' is required");
    s->k_attr = true;
    s->k = a->i;
  }
  return OX_OK;
}

typedef struct slice_ctx {
  const ox_value *x;
  int64_t base, stride; /* element of index i is base + i*stride */
  bool desc;
} slice_ctx;

static int cmp_slice(const void *vctx, int64_t a, int64_t b) {
  const slice_ctx *c = vctx;
  int r = ox_dm_cmp(c->x->dtype, c->x->data, c->base + a * c->stride, c->base + b * c->stride);
  return c->desc ? -r : r;
}

static int cmp_f32_desc(const void *vctx, int64_t a, int64_t b) {
  const float *v = vctx;
  float x = v[a], y = v[b];
  if (x != x || y != y) return (x != x) == (y != y) ? 0 : (x != x) ? -1 : 1;
  return x > y ? -1 : x < y;
}

static int cmp_f32_asc(const void *vctx, int64_t a, int64_t b) {
  const float *v = vctx;
  float x = v[a], y = v[b];
  if (x != x || y != y) return (x != x) == (y != y) ? 0 : (x != x) ? 1 : -1;
  return x < y ? -1 : x > y;
}

/* a before b in TopK order: by value, then by the lower index */
static bool before(cmp_fn cmp, const void *ctx, int64_t a, int64_t b) {
  int r = cmp(ctx, a, b);
  return r < 0 || (r == 0 && a < b);
}

static void sift_down(int64_t *h, int64_t k, int64_t i, cmp_fn cmp, const void *ctx) {
  for (;;) {
    int64_t l = 2 * i + 1, w = i;
    if (l < k && before(cmp, ctx, h[w], h[l])) w = l;
    if (l + 1 < k && before(cmp, ctx, h[w], h[l + 1])) w = l + 1;
    if (w == i) return;
    int64_t t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

/* The first k of n indices in TopK order, in idx[0..k), for k much smaller
 * than n: a heap of the k best whose root is the worst of them, then a
 * sort of those k. idx holds 2n entries (the upper half is scratch). */
static void select_k(int64_t *idx, int64_t n, int64_t k, cmp_fn cmp, const void *ctx) {
  for (int64_t t = 0; t < k; t++) idx[t] = t;
  for (int64_t i = k / 2; i-- > 0;) sift_down(idx, k, i, cmp, ctx);
  for (int64_t t = k; t < n; t++)
    if (before(cmp, ctx, t, idx[0])) {
      idx[0] = t;
      sift_down(idx, k, 0, cmp, ctx);
    }
  /* heap order to TopK order: pop the worst to the end */
  for (int64_t m = k; m > 1; m--) {
    int64_t t = idx[0];
    idx[0] = idx[m - 1];
    idx[m - 1] = t;
    sift_down(idx, m - 1, 0, cmp, ctx);
  }
}

static int topk_run(ox_kctx *c, void *state) {
  topk_state *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, axis;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
  int64_t k = s->k;
  if (!s->k_attr) {
    int64_t kv[1];
    size_t nk;
    if (ox_dm_read_ints(c, ox_kctx_input(c, 1), "K", kv, 1, &nk)) return OX_ERUNTIME;
    if (nk != 1) return ox_kctx_fail(c, OX_ERUNTIME, "K must hold one value");
    k = kv[0];
  }
  int64_t n = x->dims[axis];
  if (k < 0 || k > n)
    return ox_kctx_fail(c, OX_ERUNTIME, "k = %lld out of range [0, %lld]", (long long)k,
                        (long long)n);
  if (!ox_dm_is_real(x->dtype)) return ox_kctx_fail(c, OX_ERUNTIME, "unsupported element type");
  int64_t dims[MAXR], outer = 1, inner = 1;
  memcpy(dims, x->dims, r * sizeof *dims);
  dims[axis] = k;
  for (size_t q = 0; q < axis; q++) outer *= x->dims[q];
  for (size_t q = axis + 1; q < r; q++) inner *= x->dims[q];
  ox_value *ov = ox_kctx_output(c, 0, x->dtype, dims, r);
  ox_value *oi = ox_kctx_output(c, 1, OX_INT64, dims, r);
  if (!ov || !oi) return OX_ENOMEM;
  if (k == 0 || outer * inner == 0) return OX_OK;
  int64_t *idx = malloc((size_t)n * 2 * sizeof *idx);
  float *fv = x->dtype == OX_FLOAT && inner > 1 ? malloc((size_t)n * sizeof *fv) : NULL;
  if (!idx || (x->dtype == OX_FLOAT && inner > 1 && !fv)) {
    free(idx);
    free(fv);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = a * n * inner + i;
      cmp_fn cmp;
      const void *ctx;
      slice_ctx sc = {x, base, inner, s->largest};
      if (x->dtype == OX_FLOAT) {
        const float *v = (const float *)x->data + base;
        if (inner > 1) {
          for (int64_t t = 0; t < n; t++) fv[t] = v[t * inner];
          v = fv;
        }
        cmp = s->largest ? cmp_f32_desc : cmp_f32_asc;
        ctx = v;
      } else {
        cmp = cmp_slice;
        ctx = &sc;
      }
      if (k * 8 < n) {
        select_k(idx, n, k, cmp, ctx);
      } else {
        for (int64_t t = 0; t < n; t++) idx[t] = t;
        merge_sort(idx, idx + n, n, cmp, ctx);
      }
      for (int64_t t = 0; t < k; t++) {
        int64_t o = a * k * inner + t * inner + i;
        memcpy((uint8_t *)ov->data + (size_t)o * es,
               (const uint8_t *)x->data + (size_t)(base + idx[t] * inner) * es, es);
        ((int64_t *)oi->data)[o] = idx[t];
      }
    }
  free(idx);
  free(fv);
  return OX_OK;
}

/* ----------------------------------------------------------------- Unique */
typedef struct unique_state {
  int64_t axis;
  bool has_axis, sorted;
} unique_state;

static int unique_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  unique_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  const ox_attr *a = ox_node_attr(info->node, "axis");
  s->has_axis = a != NULL;
  s->axis = a ? a->i : 0;
  s->sorted = ox_node_attr_int(info->node, "sorted", 1) != 0;
  return OX_OK;
}

/* slice k is the elements at (a, k, i) for a < outer, i < inner */
typedef struct uctx {
  const ox_value *x;
  int64_t outer, n, inner;
} uctx;

static int cmp_uslice(const void *vctx, int64_t p, int64_t q) {
  const uctx *u = vctx;
  for (int64_t a = 0; a < u->outer; a++)
    for (int64_t i = 0; i < u->inner; i++) {
      int64_t base = a * u->n * u->inner + i;
      int r = ox_dm_cmp(u->x->dtype, u->x->data, base + p * u->inner, base + q * u->inner);
      if (r) return r;
    }
  return 0;
}

static int cmp_first(const void *vctx, int64_t a, int64_t b) {
  const int64_t *first = vctx;
  return first[a] < first[b] ? -1 : first[a] > first[b];
}

static int unique_run(ox_kctx *c, void *state) {
  unique_state *s = state;
  ox_value *x = ox_dm_tensor_in(c, 0);
  if (!x) return OX_ERUNTIME;
  size_t r = x->rank, axis = 0;
  if (r > MAXR) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  uctx u = {x, 1, x->numel, 1};
  if (s->has_axis) {
    if (oc_axis(c, s->axis, r, &axis, "axis")) return OX_ERUNTIME;
    u.n = x->dims[axis];
    for (size_t q = 0; q < axis; q++) u.outer *= x->dims[q];
    for (size_t q = axis + 1; q < r; q++) u.inner *= x->dims[q];
  }
  int64_t n = u.n;
  /* idx: sorted order; grp: group of each slice; first: first index of each
   * group; cnt: counts; ord: output order of the groups */
  int64_t *buf = malloc((size_t)(n ? n : 1) * 7 * sizeof *buf);
  if (!buf) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  int64_t *idx = buf, *tmp = buf + n, *grp = buf + 2 * n, *first = buf + 3 * n, *cnt = buf + 4 * n,
          *ord = buf + 5 * n, *pos = buf + 6 * n;
  for (int64_t t = 0; t < n; t++) idx[t] = t;
  merge_sort(idx, tmp, n, cmp_uslice, &u);
  int64_t ng = 0;
  for (int64_t t = 0; t < n; t++) {
    if (t == 0 || cmp_uslice(&u, idx[t - 1], idx[t]) != 0) {
      first[ng] = idx[t];
      cnt[ng] = 0;
      ng++;
    }
    grp[idx[t]] = ng - 1;
    cnt[ng - 1]++;
  }
  for (int64_t g = 0; g < ng; g++) ord[g] = g;
  if (!s->sorted) merge_sort(ord, tmp, ng, cmp_first, first);
  for (int64_t g = 0; g < ng; g++) pos[ord[g]] = g;
  int64_t dims[MAXR];
  size_t ry = 1;
  if (s->has_axis) {
    memcpy(dims, x->dims, r * sizeof *dims);
    dims[axis] = ng;
    ry = r;
  } else {
    dims[0] = ng;
  }
  int rc = OX_OK;
  ox_value *y = ox_dm_output(c, 0, x->dtype, dims, ry);
  if (!y) rc = OX_ENOMEM;
  size_t es = ox_value_elem_size(x->dtype);
  for (int64_t a = 0; a < u.outer && !rc; a++)
    for (int64_t g = 0; g < ng && !rc; g++)
      if (ox_dm_copy((uint8_t *)y->data + (size_t)((a * ng + g) * u.inner) * es,
                     (const uint8_t *)x->data + (size_t)((a * n + first[ord[g]]) * u.inner) * es,
                     u.inner, x->dtype))
        rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  ox_value *o;
  if (!rc && ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1)) {
    if (!(o = ox_kctx_output(c, 1, OX_INT64, &ng, 1))) rc = OX_ENOMEM;
    for (int64_t g = 0; !rc && g < ng; g++) ((int64_t *)o->data)[g] = first[ord[g]];
  }
  if (!rc && ox_kctx_n_outputs(c) > 2 && ox_kctx_output_wanted(c, 2)) {
    if (!(o = ox_kctx_output(c, 2, OX_INT64, &n, 1))) rc = OX_ENOMEM;
    for (int64_t t = 0; !rc && t < n; t++) ((int64_t *)o->data)[t] = pos[grp[t]];
  }
  if (!rc && ox_kctx_n_outputs(c) > 3 && ox_kctx_output_wanted(c, 3)) {
    if (!(o = ox_kctx_output(c, 3, OX_INT64, &ng, 1))) rc = OX_ENOMEM;
    for (int64_t g = 0; !rc && g < ng; g++) ((int64_t *)o->data)[g] = cnt[ord[g]];
  }
  free(buf);
  return rc;
}

const ox_kernel_def ox_ops_sort[] = {
    {"", "TopK", 1, 1000, topk_prepare, topk_run, NULL},
    {"", "Unique", 11, 1000, unique_prepare, unique_run, NULL},
    {0},
};
