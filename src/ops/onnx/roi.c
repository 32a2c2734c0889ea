/* roi.c - RoiAlign, MaxRoiPool, GridSample, AffineGrid (NonMaxSuppression: nms.c).
 * Floating-point values are staged in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/nn.h"
#include "../nn_stage.h"
#include "../../runtime/kernel.h"

static const char *node_name(const ox_kinfo *info) {
  return info->node->name ? info->node->name : "";
}

/* Loads a tensor into a malloc'd double array: float types, and with
 * `any_numeric` also integers and bool. NULL on OOM or an unsupported type
 * (*bad set for the type). */
static double *load_num(const ox_value *v, bool any_numeric, bool *bad) {
  *bad = !any_numeric && !ox_nn_is_float_type(v->dtype);
  if (*bad) return NULL;
  double *d = malloc((size_t)(v->numel > 0 ? v->numel : 1) * sizeof(double));
  if (!d) return NULL;
  if (!ox_nn_load_f64(v->data, v->dtype, v->numel, d)) {
    *bad = true;
    free(d);
    return NULL;
  }
  return d;
}

static double *load_f64(const ox_value *v, bool *bad) { return load_num(v, false, bad); }

static void store_f64(const double *d, ox_value *v) {
  ox_nn_store_f64(d, v->dtype, v->numel, v->data);
}

static int load_fail(ox_kctx *ctx, bool bad, const char *what) {
  return bad ? ox_kctx_fail(ctx, OX_ERUNTIME, "%s has an unsupported element type", what)
             : ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
}

/* ---------------- RoiAlign ---------------- */

/* the most samples along one side of a bin with the adaptive grid */
#define RA_MAX_GRID 65536.0

typedef struct roialign_state {
  bool max_mode, half_pixel;
  int64_t oh, ow, sampling;
  double spatial_scale;
} roialign_state;

static int roialign_prepare_v(const ox_kinfo *info, void **state, ox_err *e, bool v16) {
  const ox_node *n = info->node;
  roialign_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  const char *mode = ox_node_attr_str(n, "mode", "avg");
  const char *ctm = v16 ? ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel")
                        : "output_half_pixel";
  if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
    return ox_err_set(e, OX_EINVAL, "node '%s' (RoiAlign): mode '%s' is not avg or max",
                      node_name(info), mode);
  if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0)
    return ox_err_set(e, OX_EINVAL,
                      "node '%s' (RoiAlign): coordinate_transformation_mode '%s' is not "
                      "half_pixel or output_half_pixel",
                      node_name(info), ctm);
  s->max_mode = strcmp(mode, "max") == 0;
  s->half_pixel = strcmp(ctm, "half_pixel") == 0;
  s->oh = ox_node_attr_int(n, "output_height", 1);
  s->ow = ox_node_attr_int(n, "output_width", 1);
  s->sampling = ox_node_attr_int(n, "sampling_ratio", 0);
  s->spatial_scale = ox_node_attr_float(n, "spatial_scale", 1.0f);
  if (s->oh <= 0 || s->ow <= 0 || s->sampling < 0)
    return ox_err_set(e, OX_EINVAL, "node '%s' (RoiAlign): invalid output size or sampling_ratio",
                      node_name(info));
  return OX_OK;
}

static int roialign10_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return roialign_prepare_v(i, s, e, false);
}
static int roialign16_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return roialign_prepare_v(i, s, e, true);
}

static int roialign_run(ox_kctx *ctx, void *st) {
  const roialign_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *rois = ox_kctx_input(ctx, 1), *bi = ox_kctx_input(ctx, 2);
  if (!x || !rois || !bi) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input");
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->numel != rois->dims[0] ||
      (bi->dtype != OX_INT64 && bi->dtype != OX_INT32))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "expected X [N,C,H,W], rois [R,4] and batch_indices [R] (int64)");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
  if (R > 0 && C > 0 && (H == 0 || W == 0))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X has no pixels to sample (H %lld, W %lld)",
                        (long long)H, (long long)W);
  int64_t ydims[4] = {R, C, s->oh, s->ow};
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, 4);
  if (!y) return OX_ERUNTIME;
  bool bad = false, bad2 = false;
  double *xd = load_f64(x, &bad), *rd = load_f64(rois, &bad2);
  double *yd = malloc((size_t)(y->numel > 0 ? y->numel : 1) * sizeof(double));
  int rc = OX_OK;
  if (!xd || !rd || !yd) {
    rc = load_fail(ctx, bad || bad2, "X or rois");
    goto done;
  }
  double off = s->half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; r++) {
    int64_t b =
        bi->dtype == OX_INT64 ? ((const int64_t *)bi->data)[r] : ((const int32_t *)bi->data)[r];
    if (b < 0 || b >= N) {
      rc = ox_kctx_fail(ctx, OX_ERUNTIME, "batch index %lld out of range", (long long)b);
      goto done;
    }
    const double *box = rd + r * 4;
    double x1 = box[0] * s->spatial_scale - off, y1 = box[1] * s->spatial_scale - off;
    double x2 = box[2] * s->spatial_scale - off, y2 = box[3] * s->spatial_scale - off;
    if (!(isfinite(x1) && isfinite(y1) && isfinite(x2) && isfinite(y2))) {
      rc = ox_kctx_fail(ctx, OX_ERUNTIME, "roi %lld has a coordinate that is not finite",
                        (long long)r);
      goto done;
    }
    double rw = x2 - x1, rh = y2 - y1;
    if (!s->half_pixel) {
      rw = fmax(rw, 1.0);
      rh = fmax(rh, 1.0);
    }
    double bh = rh / (double)s->oh, bw = rw / (double)s->ow;
    int64_t gh = s->sampling, gw = s->sampling;
    if (s->sampling <= 0) {
      /* the adaptive grid: ceil(bin size) samples; a negative bin takes none,
       * an absurd one (rw - rw overflowing, a grid that would never finish)
       * is an error */
      double qh = ceil(rh / (double)s->oh), qw = ceil(rw / (double)s->ow);
      if (!(qh <= RA_MAX_GRID && qw <= RA_MAX_GRID)) {
        rc = ox_kctx_fail(ctx, OX_ERUNTIME,
                          "roi %lld needs a sampling grid of %g x %g per bin (at most %g)",
                          (long long)r, qh, qw, RA_MAX_GRID);
        goto done;
      }
      gh = qh > 0 ? (int64_t)qh : 0;
      gw = qw > 0 ? (int64_t)qw : 0;
    }
    double count = (double)(gh * gw > 1 ? gh * gw : 1);
    for (int64_t c = 0; c < C; c++) {
      const double *xc = xd + (b * C + c) * H * W;
      for (int64_t ph = 0; ph < s->oh; ph++)
        for (int64_t pw = 0; pw < s->ow; pw++) {
          double acc = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; iy++) {
            double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              double v = 0.0;
              /* outside the map, or NaN: the sample is 0 */
              if (yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W) {
                double py = fmax(yy, 0.0), px = fmax(xx, 0.0);
                int64_t y0 = (int64_t)py, x0 = (int64_t)px, y1i, x1i;
                if (y0 >= H - 1) {
                  y0 = y1i = H - 1;
                  py = (double)y0;
                } else {
                  y1i = y0 + 1;
                }
                if (x0 >= W - 1) {
                  x0 = x1i = W - 1;
                  px = (double)x0;
                } else {
                  x1i = x0 + 1;
                }
                double ly = py - (double)y0, lx = px - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
                double w1 = hy * hx * xc[y0 * W + x0], w2 = hy * lx * xc[y0 * W + x1i];
                double w3 = ly * hx * xc[y1i * W + x0], w4 = ly * lx * xc[y1i * W + x1i];
                v = s->max_mode ? fmax(fmax(w1, w2), fmax(w3, w4)) : w1 + w2 + w3 + w4;
              }
              if (s->max_mode)
                acc = first ? v : fmax(acc, v);
              else
                acc += v;
              first = false;
            }
          }
          yd[((r * C + c) * s->oh + ph) * s->ow + pw] = s->max_mode ? acc : acc / count;
        }
    }
  }
  store_f64(yd, y);
done:
  free(xd);
  free(rd);
  free(yd);
  return rc;
}

/* ---------------- MaxRoiPool ---------------- */

/* round(v) as a pixel coordinate; |v| is at most 2^52 (beyond, pixels are
 * not told apart anyway), so sums of two stay exact */
static int64_t roi_coord(double v) {
  v = round(v);
  return v < -4.5e15 ? (int64_t)-4.5e15 : v > 4.5e15 ? (int64_t)4.5e15 : (int64_t)v;
}

typedef struct maxroi_state {
  int64_t ph, pw;
  double scale;
} maxroi_state;

static int maxroi_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  maxroi_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  const ox_attr *ps = ox_node_attr(info->node, "pooled_shape");
  if (!ps || ps->n_ints != 2 || ps->ints[0] <= 0 || ps->ints[1] <= 0)
    return ox_err_set(e, OX_EINVAL,
                      "node '%s' (MaxRoiPool): pooled_shape must be two positive ints",
                      node_name(info));
  s->ph = ps->ints[0];
  s->pw = ps->ints[1];
  s->scale = ox_node_attr_float(info->node, "spatial_scale", 1.0f);
  return OX_OK;
}

static int maxroi_run(ox_kctx *ctx, void *st) {
  const maxroi_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *rois = ox_kctx_input(ctx, 1);
  if (!x || !rois) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input");
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 5)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "expected X [N,C,H,W] and rois [R,5]");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
  int64_t ydims[4] = {R, C, s->ph, s->pw};
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, 4);
  if (!y) return OX_ERUNTIME;
  bool bad = false, bad2 = false;
  double *xd = load_f64(x, &bad), *rd = load_f64(rois, &bad2);
  double *yd = malloc((size_t)(y->numel > 0 ? y->numel : 1) * sizeof(double));
  int rc = OX_OK;
  if (!xd || !rd || !yd) {
    rc = load_fail(ctx, bad || bad2, "X or rois");
    goto done;
  }
  for (int64_t r = 0; r < R; r++) {
    const double *box = rd + r * 5;
    if (!(box[0] >= 0.0 && box[0] < (double)N)) {
      rc = ox_kctx_fail(ctx, OX_ERUNTIME, "batch index %g out of range", box[0]);
      goto done;
    }
    int64_t b = (int64_t)box[0];
    bool finite = true;
    for (int k = 1; k < 5; k++) finite = finite && isfinite(box[k] * s->scale);
    if (!finite) {
      rc = ox_kctx_fail(ctx, OX_ERUNTIME, "roi %lld has a coordinate that is not finite",
                        (long long)r);
      goto done;
    }
    int64_t sw = roi_coord(box[1] * s->scale), sh = roi_coord(box[2] * s->scale);
    int64_t ew = roi_coord(box[3] * s->scale), eh = roi_coord(box[4] * s->scale);
    int64_t rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1, rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1;
    double bh = (double)rh / (double)s->ph, bw = (double)rw / (double)s->pw;
    for (int64_t c = 0; c < C; c++) {
      const double *xc = xd + (b * C + c) * H * W;
      for (int64_t ph = 0; ph < s->ph; ph++)
        for (int64_t pw = 0; pw < s->pw; pw++) {
          int64_t hs = (int64_t)floor((double)ph * bh) + sh,
                  he = (int64_t)ceil((double)(ph + 1) * bh) + sh;
          int64_t ws = (int64_t)floor((double)pw * bw) + sw,
                  we = (int64_t)ceil((double)(pw + 1) * bw) + sw;
          hs = hs < 0 ? 0 : hs > H ? H : hs;
          he = he < 0 ? 0 : he > H ? H : he;
          ws = ws < 0 ? 0 : ws > W ? W : ws;
          we = we < 0 ? 0 : we > W ? W : we;
          double m = (he <= hs || we <= ws) ? 0.0 : -INFINITY;
          for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++) m = fmax(m, xc[h * W + w]);
          yd[((r * C + c) * s->ph + ph) * s->pw + pw] = m;
        }
    }
  }
  store_f64(yd, y);
done:
  free(xd);
  free(rd);
  free(yd);
  return rc;
}

/* ---------------- GridSample ---------------- */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GP_ZEROS, GP_BORDER, GP_REFLECTION };

typedef struct gs_state {
  int mode, pad;
  bool align;
  bool only_2d;
} gs_state;

static int gs_prepare_v(const ox_kinfo *info, void **state, ox_err *e, bool v16) {
  gs_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  const ox_node *n = info->node;
  const char *m = ox_node_attr_str(n, "mode", v16 ? "bilinear" : "linear");
  const char *p = ox_node_attr_str(n, "padding_mode", "zeros");
  if (strcmp(m, v16 ? "bilinear" : "linear") == 0)
    s->mode = GS_LINEAR;
  else if (strcmp(m, "nearest") == 0)
    s->mode = GS_NEAREST;
  else if (strcmp(m, v16 ? "bicubic" : "cubic") == 0)
    s->mode = GS_CUBIC;
  else
    return ox_err_set(e, OX_EINVAL, "node '%s' (GridSample): unsupported mode '%s'",
                      node_name(info), m);
  if (strcmp(p, "zeros") == 0)
    s->pad = GP_ZEROS;
  else if (strcmp(p, "border") == 0)
    s->pad = GP_BORDER;
  else if (strcmp(p, "reflection") == 0)
    s->pad = GP_REFLECTION;
  else
    return ox_err_set(e, OX_EINVAL, "node '%s' (GridSample): unsupported padding_mode '%s'",
                      node_name(info), p);
  s->align = ox_node_attr_int(n, "align_corners", 0) != 0;
  s->only_2d = v16;
  return OX_OK;
}

static int gs16_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return gs_prepare_v(i, s, e, true);
}
static int gs20_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return gs_prepare_v(i, s, e, false);
}

/* Reflects x into [lo, hi]. */
static double reflect(double x, double lo, double hi) {
  double span = hi - lo;
  if (span <= 0.0) return lo;
  if (x < lo) {
    double d = lo - x, k = floor(d / span), r = d - k * span;
    return fmod(k, 2.0) == 0.0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double d = x - hi, k = floor(d / span), r = d - k * span;
    return fmod(k, 2.0) == 0.0 ? hi - r : lo + r;
  }
  return x;
}

static double gs_pad_coord(const gs_state *s, double x, int64_t len) {
  if (s->pad == GP_BORDER) return fmin(fmax(x, 0.0), (double)(len - 1));
  if (s->pad == GP_REFLECTION) {
    x = s->align ? reflect(x, 0.0, (double)(len - 1)) : reflect(x, -0.5, (double)len - 0.5);
    return fmin(fmax(x, 0.0), (double)(len - 1));
  }
  return x;
}

static double cubic_a(double x) {
  const double a = -0.75;
  x = fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

#define GS_MAXD 8

static int gs_run(ox_kctx *ctx, void *st) {
  const gs_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *grid = ox_kctx_input(ctx, 1);
  if (!x || !grid) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing X or grid");
  size_t nd = x->rank >= 2 ? x->rank - 2 : 0;
  if (nd < 1 || nd > GS_MAXD || (s->only_2d && nd != 2) || grid->rank != nd + 2 ||
      grid->dims[0] != x->dims[0] || grid->dims[nd + 1] != (int64_t)nd)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X of rank %zu does not match grid of rank %zu", x->rank,
                        grid->rank);
  if (s->mode == GS_CUBIC && nd != 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "cubic mode needs a 4-D input");
  int64_t N = x->dims[0], C = x->dims[1], ydims[GS_MAXD + 2];
  ydims[0] = N;
  ydims[1] = C;
  int64_t in_size = 1, out_size = 1;
  for (size_t d = 0; d < nd; d++) {
    ydims[2 + d] = grid->dims[1 + d];
    in_size *= x->dims[2 + d];
    out_size *= grid->dims[1 + d];
  }
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  bool bad = false, bad2 = false;
  double *xd = load_num(x, !s->only_2d, &bad), *gd = load_f64(grid, &bad2);
  double *yd = malloc((size_t)(y->numel > 0 ? y->numel : 1) * sizeof(double));
  int rc = OX_OK;
  if (!xd || !gd || !yd) {
    rc = load_fail(ctx, bad || bad2, "X or grid");
    goto done;
  }
  const int64_t *dims = x->dims + 2;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < out_size; o++) {
      const double *g = gd + (n * out_size + o) * (int64_t)nd;
      /* taps per spatial axis: index and weight (index -1: reads zero) */
      int64_t tix[GS_MAXD][4];
      double tw[GS_MAXD][4];
      int nt[GS_MAXD];
      for (size_t d = 0; d < nd; d++) {
        int64_t len = dims[d];
        double gv = g[nd - 1 - d]; /* grid holds (x, y, z...) = last axis first */
        double c = s->align ? (gv + 1.0) / 2.0 * (double)(len - 1)
                            : ((gv + 1.0) * (double)len - 1.0) / 2.0;
        if (s->mode != GS_CUBIC) c = gs_pad_coord(s, c, len);
        /* far outside the image every mode reads the same taps: bounding the
         * coordinate keeps the conversions to integers defined (a NaN reads
         * as far to the left) */
        if (!(c > -1e15))
          c = -1e15;
        else if (c > 1e15)
          c = 1e15;
        if (s->mode == GS_NEAREST) {
          nt[d] = 1;
          tix[d][0] = (int64_t)nearbyint(c);
          tw[d][0] = 1.0;
        } else if (s->mode == GS_LINEAR) {
          double f = floor(c);
          nt[d] = 2;
          tix[d][0] = (int64_t)f;
          tix[d][1] = (int64_t)f + 1;
          tw[d][0] = 1.0 - (c - f);
          tw[d][1] = c - f;
        } else {
          double f = floor(c), t = c - f;
          nt[d] = 4;
          for (int k = 0; k < 4; k++) {
            tix[d][k] = (int64_t)f - 1 + k;
            tw[d][k] = cubic_a(t - (double)(k - 1));
          }
        }
        for (int k = 0; k < nt[d]; k++) { /* padding of the tap index */
          int64_t i = tix[d][k];
          if (i >= 0 && i < len) continue;
          if (s->pad == GP_ZEROS || s->mode != GS_CUBIC) {
            if (s->pad == GP_ZEROS)
              tix[d][k] = -1;
            else
              tix[d][k] = i < 0 ? 0 : len - 1;
          } else {
            double r = gs_pad_coord(s, (double)i, len);
            tix[d][k] = (int64_t)r;
          }
        }
      }
      for (int64_t c = 0; c < C; c++) {
        const double *xc = xd + (n * C + c) * in_size;
        double acc = 0.0;
        int k[GS_MAXD] = {0};
        for (;;) {
          double w = 1.0;
          int64_t lin = 0;
          bool zero = false;
          for (size_t d = 0; d < nd; d++) {
            int64_t i = tix[d][k[d]];
            if (i < 0) zero = true;
            lin = lin * dims[d] + (i < 0 ? 0 : i);
            w *= tw[d][k[d]];
          }
          if (!zero && w != 0.0) acc += w * xc[lin];
          size_t d = nd;
          while (d-- > 0) {
            if (++k[d] < nt[d]) break;
            k[d] = 0;
          }
          if (d == (size_t)-1) break;
        }
        yd[(n * C + c) * out_size + o] = acc;
      }
    }
  store_f64(yd, y);
done:
  free(xd);
  free(gd);
  free(yd);
  return rc;
}

/* ---------------- AffineGrid ---------------- */

typedef struct affine_state {
  bool align;
} affine_state;

static int affine_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  affine_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->align = ox_node_attr_int(info->node, "align_corners", 0) != 0;
  return OX_OK;
}

static double base_coord(int64_t i, int64_t len, bool align) {
  if (align) return len > 1 ? -1.0 + 2.0 * (double)i / (double)(len - 1) : 0.0;
  return (2.0 * (double)i + 1.0) / (double)len - 1.0;
}

static int affine_run(ox_kctx *ctx, void *st) {
  const affine_state *s = st;
  ox_value *theta = ox_kctx_input(ctx, 0), *size = ox_kctx_input(ctx, 1);
  if (!theta || !size) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing theta or size");
  if (size->dtype != OX_INT64 || (size->numel != 4 && size->numel != 5))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "size must be int64 [N,C,H,W] or [N,C,D,H,W]");
  const int64_t *sz = size->data;
  size_t nd = (size_t)size->numel - 2;
  if (theta->rank != 3 || theta->dims[0] != sz[0] || theta->dims[1] != (int64_t)nd ||
      theta->dims[2] != (int64_t)nd + 1)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "theta must be [N, %zu, %zu]", nd, nd + 1);
  int64_t ydims[5] = {sz[0]};
  int64_t npts = 1;
  for (size_t d = 0; d < nd; d++) {
    ydims[1 + d] = sz[2 + d];
    npts *= sz[2 + d];
  }
  ydims[1 + nd] = (int64_t)nd;
  ox_value *y = ox_kctx_output(ctx, 0, theta->dtype, ydims, nd + 2);
  if (!y) return OX_ERUNTIME;
  bool bad = false;
  double *td = load_f64(theta, &bad);
  double *yd = malloc((size_t)(y->numel > 0 ? y->numel : 1) * sizeof(double));
  if (!td || !yd) {
    free(td);
    free(yd);
    return load_fail(ctx, bad, "theta");
  }
  for (int64_t n = 0; n < sz[0]; n++) {
    const double *t = td + n * (int64_t)(nd * (nd + 1));
    for (int64_t p = 0; p < npts; p++) {
      /* spatial index -> base coords in (x, y, z) order */
      double base[4];
      int64_t r = p;
      for (size_t d = nd; d-- > 0;) {
        int64_t len = sz[2 + d], i = r % len;
        r /= len;
        base[nd - 1 - d] = base_coord(i, len, s->align);
      }
      base[nd] = 1.0;
      double *out = yd + (n * npts + p) * (int64_t)nd;
      for (size_t i = 0; i < nd; i++) {
        double v = 0.0;
        for (size_t j = 0; j <= nd; j++) v += t[i * (nd + 1) + j] * base[j];
        out[i] = v;
      }
    }
  }
  store_f64(yd, y);
  free(td);
  free(yd);
  return OX_OK;
}

const ox_kernel_def ox_ops_roi[] = {
    {"", "RoiAlign", 10, 15, roialign10_prepare, roialign_run, free},
    {"", "RoiAlign", 16, 1000, roialign16_prepare, roialign_run, free},
    {"", "MaxRoiPool", 1, 1000, maxroi_prepare, maxroi_run, free},
    {"", "GridSample", 16, 19, gs16_prepare, gs_run, free},
    {"", "GridSample", 20, 1000, gs20_prepare, gs_run, free},
    {"", "AffineGrid", 20, 1000, affine_prepare, affine_run, free},
    {0},
};
