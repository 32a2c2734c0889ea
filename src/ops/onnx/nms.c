/* nms.c - NonMaxSuppression.
 *
 * Per batch and class: candidates above score_threshold in descending score
 * (ties by index), each kept unless its IoU with a box kept before it
 * exceeds iou_threshold, up to max_output_boxes_per_class. Coordinates are
 * staged in double.
 *
 * Detectors exported from torchvision run one "batched" NMS over all
 * classes, offsetting each class's boxes so that classes never overlap:
 * SSDlite's 27,000 candidates keep 5,760 boxes, and checking each candidate
 * against every kept box is 78 million IoUs (0.9 s at 11 ns each, one at a
 * time). So the kept boxes are stored one array per coordinate, checked in
 * branch-free blocks the compiler vectorises, and bucketed by their top
 * edge: with a threshold >= 0 only boxes that overlap a candidate can
 * suppress it, and those have a top edge within the tallest box's height
 * above the candidate's, so only a few buckets are looked at. Whether a
 * candidate is kept depends only on whether any kept box suppresses it, so
 * the order boxes are checked in does not change the result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernel.h"
#include "../nn_stage.h"

typedef struct nms_state {
  bool center;
} nms_state;

static int nms_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  nms_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  int64_t c = ox_node_attr_int(info->node, "center_point_box", 0);
  if (c != 0 && c != 1)
    return ox_err_set(e, OX_EINVAL,
                      "node '%s' (NonMaxSuppression): center_point_box must be 0 or 1",
                      info->node->name ? info->node->name : "");
  s->center = c == 1;
  return OX_OK;
}

typedef struct nms_cand {
  double score;
  int64_t idx;
} nms_cand;

/* descending score, NaN scores last (a total order for qsort), then index */
static int cand_cmp(const void *a, const void *b) {
  const nms_cand *x = a, *y = b;
  bool nx = isnan(x->score), ny = isnan(y->score);
  if (nx != ny) return nx ? 1 : -1;
  if (!nx && x->score != y->score) return x->score > y->score ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Box as [ymin, xmin, ymax, xmax]. */
static void nms_box(const double *b, bool center, double *o) {
  if (center) {
    o[0] = b[1] - b[3] / 2.0;
    o[2] = b[1] + b[3] / 2.0;
    o[1] = b[0] - b[2] / 2.0;
    o[3] = b[0] + b[2] / 2.0;
  } else {
    o[0] = fmin(b[0], b[2]);
    o[2] = fmax(b[0], b[2]);
    o[1] = fmin(b[1], b[3]);
    o[3] = fmax(b[1], b[3]);
  }
}

static double iou(const double *a, const double *b) {
  double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
  if (ih <= 0.0 || iw <= 0.0) return 0.0;
  double inter = ih * iw;
  double ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return ua <= 0.0 ? 0.0 : inter / ua;
}

/* Kept boxes of one bucket: one array per coordinate, and the areas. */
typedef struct kept {
  double *y0, *x0, *y1, *x1, *area;
  int64_t n, cap;
} kept;

static bool kept_push(kept *k, const double *b) {
  if (k->n == k->cap) {
    int64_t cap = k->cap ? k->cap * 2 : 16;
    double *d = malloc((size_t)cap * 5 * sizeof *d);
    if (!d) return false;
    double *cols[5] = {k->y0, k->x0, k->y1, k->x1, k->area};
    for (int c = 0; c < 5; c++)
      if (k->n) memcpy(d + c * cap, cols[c], (size_t)k->n * sizeof *d);
    free(k->y0);
    k->y0 = d, k->x0 = d + cap, k->y1 = d + 2 * cap, k->x1 = d + 3 * cap, k->area = d + 4 * cap;
    k->cap = cap;
  }
  int64_t i = k->n++;
  k->y0[i] = b[0], k->x0[i] = b[1], k->y1[i] = b[2], k->x1[i] = b[3];
  k->area[i] = (b[2] - b[0]) * (b[3] - b[1]);
  return true;
}

/* iou(b, some box of k) > t, in blocks of 64: iou()'s arithmetic (the
 * areas summed in the same order), for boxes without NaN */
static bool kept_suppresses(const kept *k, const double *b, double t) {
  double ab = (b[2] - b[0]) * (b[3] - b[1]);
  for (int64_t q0 = 0; q0 < k->n; q0 += 64) {
    int64_t q1 = k->n - q0 < 64 ? k->n : q0 + 64;
    int hit = 0;
    for (int64_t q = q0; q < q1; q++) {
      double y1 = b[2] < k->y1[q] ? b[2] : k->y1[q], y0 = b[0] > k->y0[q] ? b[0] : k->y0[q];
      double x1 = b[3] < k->x1[q] ? b[3] : k->x1[q], x0 = b[1] > k->x0[q] ? b[1] : k->x0[q];
      double ih = y1 - y0, iw = x1 - x0, inter = ih * iw, ua = ab + k->area[q] - inter;
      double v = ih <= 0.0 || iw <= 0.0 || ua <= 0.0 ? 0.0 : inter / ua;
      hit |= v > t;
    }
    if (hit) return true;
  }
  return false;
}

/* The kept boxes of one (batch, class), bucketed by top edge: bucket i
 * holds tops in [lo + i * size, lo + (i + 1) * size). One bucket when the
 * boxes are not all finite or the threshold is below 0 (every kept box
 * then suppresses, overlapping or not). */
typedef struct kept_index {
  kept *bk;
  int64_t nb;
  double lo, size, hmax;
} kept_index;

enum { MAX_BUCKETS = 4096 };

/* Buckets for the n boxes of `norm` (all finite) and threshold t. */
static bool index_init(kept_index *x, const double *norm, int64_t n, double t) {
  double lo = INFINITY, hi = -INFINITY, hmax = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double *b = norm + i * 4;
    lo = b[0] < lo ? b[0] : lo;
    hi = b[0] > hi ? b[0] : hi;
    hmax = b[2] - b[0] > hmax ? b[2] - b[0] : hmax;
  }
  double size = hmax > (hi - lo) / MAX_BUCKETS ? hmax : (hi - lo) / MAX_BUCKETS;
  int64_t nb = 1;
  if (t >= 0.0 && n > 0 && size > 0.0 && isfinite(size) && isfinite(hi - lo))
    nb = (int64_t)((hi - lo) / size) + 1;
  if (nb > MAX_BUCKETS + 1) nb = MAX_BUCKETS + 1;
  x->bk = calloc((size_t)nb, sizeof *x->bk);
  x->nb = nb;
  x->lo = lo;
  x->size = size;
  x->hmax = hmax;
  return x->bk != NULL;
}

static int64_t bucket_of(const kept_index *x, double y) {
  if (x->nb == 1) return 0;
  double f = floor((y - x->lo) / x->size);
  return f < 0 ? 0 : f >= (double)x->nb ? x->nb - 1 : (int64_t)f;
}

static bool index_suppresses(const kept_index *x, const double *b, double t) {
  /* a kept box overlapping b has its top above b's bottom and below b's top
   * by at most hmax; a bucket of margin either side covers rounding */
  int64_t from = bucket_of(x, b[0] - x->hmax - x->size), to = bucket_of(x, b[2] + x->size);
  for (int64_t i = from; i <= to; i++)
    if (x->bk[i].n && kept_suppresses(&x->bk[i], b, t)) return true;
  return false;
}

static void index_clear(kept_index *x) {
  for (int64_t i = 0; i < x->nb; i++) x->bk[i].n = 0;
}

static void index_free(kept_index *x) {
  for (int64_t i = 0; x->bk && i < x->nb; i++) free(x->bk[i].y0);
  free(x->bk);
  x->bk = NULL;
}

static int load_fail(ox_kctx *ctx, bool bad, const char *what) {
  return bad ? ox_kctx_fail(ctx, OX_ERUNTIME, "%s has an unsupported element type", what)
             : ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
}

/* a float input as a malloc'd double array (*bad: not a float type) */
static double *load_f64(const ox_value *v, bool *bad) {
  *bad = !ox_nn_is_float_type(v->dtype);
  if (*bad) return NULL;
  double *d = malloc((size_t)(v->numel > 0 ? v->numel : 1) * sizeof(double));
  if (d && !ox_nn_load_f64(v->data, v->dtype, v->numel, d)) {
    *bad = true;
    free(d);
    d = NULL;
  }
  return d;
}

/* appends (b, c, i) to the selected triples */
static bool select_push(int64_t **sel, int64_t *n, int64_t *cap, int64_t b, int64_t c,
                        int64_t i) {
  if (*n == *cap) {
    int64_t nc = *cap ? *cap * 2 : 64;
    int64_t *ns = realloc(*sel, (size_t)nc * 3 * sizeof **sel);
    if (!ns) return false;
    *sel = ns;
    *cap = nc;
  }
  int64_t *t = *sel + *n * 3;
  t[0] = b, t[1] = c, t[2] = i;
  (*n)++;
  return true;
}

static int nms_run(ox_kctx *ctx, void *st) {
  const nms_state *s = st;
  ox_value *boxes = ox_kctx_input(ctx, 0), *scores = ox_kctx_input(ctx, 1);
  ox_value *mo = ox_kctx_input(ctx, 2), *it = ox_kctx_input(ctx, 3), *stv = ox_kctx_input(ctx, 4);
  if (!boxes || !scores) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing boxes or scores");
  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return ox_kctx_fail(ctx, OX_ERUNTIME, "expected boxes [B,N,4] and scores [B,C,N]");
  int64_t max_out = 0;
  if (mo && mo->numel > 0) {
    if (mo->dtype != OX_INT64)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "max_output_boxes_per_class must be int64");
    max_out = ((const int64_t *)mo->data)[0];
  }
  double iou_t = 0.0, score_t = -INFINITY;
  bool has_st = false, bad = false;
  if (it && it->numel > 0) {
    double *v = load_f64(it, &bad);
    if (!v) return load_fail(ctx, bad, "iou_threshold");
    iou_t = v[0];
    free(v);
  }
  if (stv && stv->numel > 0) {
    double *v = load_f64(stv, &bad);
    if (!v) return load_fail(ctx, bad, "score_threshold");
    score_t = v[0];
    has_st = true;
    free(v);
  }
  int64_t B = boxes->dims[0], Nb = boxes->dims[1], C = scores->dims[1];
  size_t nb1 = (size_t)(Nb > 0 ? Nb : 1);
  bool bad2 = false;
  double *bd = load_f64(boxes, &bad), *sd = bd ? load_f64(scores, &bad2) : NULL;
  nms_cand *cand = malloc(nb1 * sizeof *cand);
  double *norm = malloc(nb1 * 4 * sizeof(double));
  int64_t *picked = malloc(nb1 * sizeof(int64_t)), *sel = NULL, nsel = 0, cap = 0;
  kept_index x = {0};
  int rc = OX_OK;
  if (!bd || !sd || !cand || !norm || !picked) {
    rc = load_fail(ctx, bad || bad2, "boxes or scores");
    goto done;
  }
  for (int64_t b = 0; b < B && max_out > 0; b++) {
    bool finite = true;
    for (int64_t i = 0; i < Nb; i++) {
      nms_box(bd + (b * Nb + i) * 4, s->center, norm + i * 4);
      for (int q = 0; q < 4; q++) finite &= isfinite(norm[i * 4 + q]) != 0;
    }
    /* boxes with NaN or infinities: fmin/fmax's rules, box by box */
    index_free(&x);
    if (finite && !index_init(&x, norm, Nb, iou_t)) {
      rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
      goto done;
    }
    for (int64_t c = 0; c < C; c++) {
      const double *sc = sd + (b * C + c) * Nb;
      int64_t nc = 0, np = 0;
      for (int64_t i = 0; i < Nb; i++)
        if (!has_st || sc[i] > score_t) cand[nc++] = (nms_cand){sc[i], i};
      qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
      if (finite) index_clear(&x);
      for (int64_t k = 0; k < nc && np < max_out; k++) {
        const double *cb = norm + cand[k].idx * 4;
        bool gone = false;
        if (finite)
          gone = index_suppresses(&x, cb, iou_t);
        else
          for (int64_t q = 0; q < np && !gone; q++) gone = iou(cb, norm + picked[q] * 4) > iou_t;
        if (gone) continue;
        if ((finite && !kept_push(&x.bk[bucket_of(&x, cb[0])], cb)) ||
            !select_push(&sel, &nsel, &cap, b, c, cand[k].idx)) {
          rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
          goto done;
        }
        picked[np++] = cand[k].idx;
      }
    }
  }
  {
    int64_t ydims[2] = {nsel, 3};
    ox_value *y = ox_kctx_output(ctx, 0, OX_INT64, ydims, 2);
    if (!y)
      rc = OX_ERUNTIME;
    else if (nsel)
      memcpy(y->data, sel, (size_t)nsel * 3 * sizeof(int64_t));
  }
done:
  index_free(&x);
  free(bd);
  free(sd);
  free(cand);
  free(norm);
  free(picked);
  free(sel);
  return rc;
}

const ox_kernel_def ox_ops_nms[] = {
    {"", "NonMaxSuppression", 10, 1000, nms_prepare, nms_run, free},
    {0},
};
