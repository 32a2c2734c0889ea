/* resize.c - Resize (10, 11..19+) and Upsample (1, 7, 9..10).
 *
 * The N-D interpolation (nearest, N-linear, N-cubic, with or without the
 * antialiasing filter) is a product of per-axis weights, so it is applied
 * one axis at a time: for each resized axis a table of taps (input index,
 * weight) per output index is built from the coordinate transformation, then
 * the data [outer, in, inner] becomes [outer, out, inner]. Values are staged
 * in double. tf_crop_and_resize positions outside the input take
 * extrapolation_value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/floatconv.h"
#include "../../kernels/levels.h"
#include "../../kernels/nn.h"
#include "../nn_stage.h"
#include "../../runtime/kernel.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP };
enum { NM_FLOOR_HALF, NM_CEIL_HALF, NM_FLOOR, NM_CEIL };
enum { KA_STRETCH, KA_NOT_LARGER, KA_NOT_SMALLER };
enum { V_UPS1, V_UPS7, V_UPS9, V_RS10, V_RS11 };

#define RS_MAXR 16

typedef struct rs_state {
  int ver, mode, ctm, nearest, keep;
  double cubic_a, extrap;
  bool exclude_outside, antialias;
  int64_t axes[RS_MAXR];
  size_t n_axes;
  double attr_scales[RS_MAXR];
  size_t n_attr_scales;
} rs_state;

static int pick(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  return -1;
}

static int rs_prepare_ver(const ox_kinfo *info, void **state, ox_err *e, int ver) {
  const ox_node *n = info->node;
  const char *nm = n->name ? n->name : "";
  rs_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->ver = ver;
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  const char *m = ox_node_attr_str(n, "mode", "nearest");
  s->mode = pick(m, modes, 3);
  if (s->mode < 0 && ver == V_UPS1 && strcmp(m, "bilinear") == 0) s->mode = RS_LINEAR;
  if (s->mode < 0 || (ver != V_RS11 && s->mode == RS_CUBIC))
    return ox_err_set(e, OX_EINVAL, "node '%s' (%s): unsupported mode '%s'", nm, n->op_type, m);
  s->ctm = CT_ASYM;
  s->nearest = NM_FLOOR;
  s->cubic_a = -0.75;
  if (ver == V_RS11) {
    static const char *const ctms[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const kas[] = {"stretch", "not_larger", "not_smaller"};
    const char *c = ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel");
    const char *nmode = ox_node_attr_str(n, "nearest_mode", "round_prefer_floor");
    const char *ka = ox_node_attr_str(n, "keep_aspect_ratio_policy", "stretch");
    s->ctm = pick(c, ctms, 7);
    s->nearest = pick(nmode, nms, 4);
    s->keep = pick(ka, kas, 3);
    if (s->ctm < 0 || s->nearest < 0 || s->keep < 0)
      return ox_err_set(e, OX_EINVAL,
                        "node '%s' (%s): unsupported coordinate_transformation_mode '%s', "
                        "nearest_mode '%s' or keep_aspect_ratio_policy '%s'",
                        nm, n->op_type, c, nmode, ka);
    s->cubic_a = ox_node_attr_float(n, "cubic_coeff_a", -0.75f);
    s->exclude_outside = ox_node_attr_int(n, "exclude_outside", 0) != 0;
    s->extrap = ox_node_attr_float(n, "extrapolation_value", 0.0f);
    s->antialias = ox_node_attr_int(n, "antialias", 0) != 0;
    const ox_attr *ax = ox_node_attr(n, "axes");
    if (ax) {
      if (ax->n_ints > RS_MAXR)
        return ox_err_set(e, OX_EINVAL, "node '%s' (%s): too many axes", nm, n->op_type);
      s->n_axes = ax->n_ints;
      if (ax->n_ints) /* an empty list has no array to copy from */
        memcpy(s->axes, ax->ints, ax->n_ints * sizeof(int64_t));
    }
  } else if (ver == V_UPS1) {
    s->n_attr_scales = 4;
    s->attr_scales[0] = s->attr_scales[1] = 1.0;
    s->attr_scales[2] = ox_node_attr_float(n, "height_scale", 1.0f);
    s->attr_scales[3] = ox_node_attr_float(n, "width_scale", 1.0f);
  } else if (ver == V_UPS7) {
    const ox_attr *sc = ox_node_attr(n, "scales");
    if (!sc || sc->n_floats > RS_MAXR)
      return ox_err_set(e, OX_EINVAL, "node '%s' (%s): attribute scales is required", nm,
                        n->op_type);
    s->n_attr_scales = sc->n_floats;
    for (size_t i = 0; i < sc->n_floats; i++) s->attr_scales[i] = sc->floats[i];
  }
  return OX_OK;
}

static int ups1_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return rs_prepare_ver(i, s, e, V_UPS1);
}
static int ups7_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return rs_prepare_ver(i, s, e, V_UPS7);
}
static int ups9_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return rs_prepare_ver(i, s, e, V_UPS9);
}
static int rs10_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return rs_prepare_ver(i, s, e, V_RS10);
}
static int rs11_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return rs_prepare_ver(i, s, e, V_RS11);
}

/* ---- per-axis taps ---- */
typedef struct axis_taps {
  int64_t ntaps;
  int64_t *idx; /* out x ntaps */
  double *w;
  bool *extrap; /* out */
} axis_taps;

static double cubic_w(double x, double a) {
  x = fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

static double transform(const rs_state *s, int64_t o, double scale, int64_t in, int64_t out,
                        double rs, double re) {
  double x = (double)o;
  switch (s->ctm) {
    case CT_HALF_PIXEL:
      return (x + 0.5) / scale - 0.5;
    case CT_HALF_PIXEL_SYM: {
      double adj = (double)out / (scale * (double)in), center = (double)in / 2.0;
      return center * (1.0 - adj) + (x + 0.5) / scale - 0.5;
    }
    case CT_PYTORCH:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CT_ALIGN: /* the fractional output length in scale * in */
      return out == 1 ? 0.0 : x * (double)(in - 1) / (scale * (double)in - 1.0);
    case CT_TF_NN:
      return (x + 0.5) / scale;
    case CT_CROP:
      return out > 1 ? rs * (double)(in - 1) + x * (re - rs) * (double)(in - 1) / (double)(out - 1)
                     : 0.5 * (rs + re) * (double)(in - 1);
    default:
      return x / scale;
  }
}

static int64_t nearest_idx(int mode, double x) {
  switch (mode) {
    case NM_FLOOR_HALF:
      return (int64_t)ceil(x - 0.5);
    case NM_CEIL_HALF:
      return (int64_t)floor(x + 0.5);
    case NM_FLOOR:
      return (int64_t)floor(x);
    default:
      return (int64_t)ceil(x);
  }
}

static int build_taps(const rs_state *s, int64_t in, int64_t out, double scale, double rs,
                      double re, axis_taps *t) {
  bool aa = s->antialias && scale < 1.0 && s->mode != RS_NEAREST;
  int64_t lo_off, nt;
  if (s->mode == RS_NEAREST) {
    lo_off = 0;
    nt = 1;
  } else if (s->mode == RS_LINEAR) {
    lo_off = aa ? (int64_t)floor(-1.0 / scale) + 1 : 0;
    nt = aa ? 2 - 2 * lo_off : 2;
  } else {
    lo_off = aa ? (int64_t)floor(-2.0 / scale) + 1 : -1;
    nt = aa ? 2 - 2 * lo_off : 4; /* taps x0 + i, i in [lo_off, 2 - lo_off) */
  }
  t->ntaps = nt;
  t->idx = malloc((size_t)(out * nt) * sizeof(int64_t));
  t->w = malloc((size_t)(out * nt) * sizeof(double));
  t->extrap = calloc((size_t)out, sizeof(bool));
  if (!t->idx || !t->w || !t->extrap) return OX_ENOMEM;
  for (int64_t o = 0; o < out; o++) {
    double x = transform(s, o, scale, in, out, rs, re);
    int64_t *ix = t->idx + o * nt;
    double *w = t->w + o * nt;
    if (s->ctm == CT_CROP && !(x >= 0.0 && x <= (double)(in - 1))) { /* NaN too */
      t->extrap[o] = true;
      for (int64_t k = 0; k < nt; k++) ix[k] = 0, w[k] = 0.0;
      continue;
    }
    if (s->mode == RS_NEAREST) {
      int64_t i = nearest_idx(s->nearest, x);
      ix[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
      w[0] = 1.0;
      continue;
    }
    double x0 = floor(x), r = x - x0, sum = 0.0;
    for (int64_t k = 0; k < nt; k++) {
      int64_t off = lo_off + k;
      double arg = (double)off - r; /* tap position relative to x */
      double wk;
      if (s->mode == RS_LINEAR)
        wk = aa ? fmax(0.0, 1.0 - fabs(arg * scale)) : (off == 0 ? 1.0 - r : r);
      else
        wk = cubic_w(aa ? arg * scale : arg, s->cubic_a);
      int64_t i = (int64_t)x0 + off;
      if (i < 0 || i >= in) {
        if (s->exclude_outside) wk = 0.0;
        i = i < 0 ? 0 : in - 1;
      }
      ix[k] = i;
      w[k] = wk;
      sum += wk;
    }
    if ((aa || s->exclude_outside) && sum != 0.0)
      for (int64_t k = 0; k < nt; k++) w[k] /= sum;
  }
  return OX_OK;
}

static void free_taps(axis_taps *t) {
  free(t->idx);
  free(t->w);
  free(t->extrap);
}

/* y[o, j, i] = sum_k w[j][k] x[o, idx[j][k], i] */
OX_LEVEL_BODY void apply_axis_c(const axis_taps *t, double extrap, const double *x, double *y,
                                int64_t outer, int64_t in, int64_t out, int64_t inner) {
  for (int64_t o = 0; o < outer; o++) {
    const double *xo = x + o * in * inner;
    double *yo = y + o * out * inner;
    for (int64_t j = 0; j < out; j++) {
      double *yj = yo + j * inner;
      if (t->extrap[j]) {
        for (int64_t i = 0; i < inner; i++) yj[i] = extrap;
        continue;
      }
      const int64_t *ix = t->idx + j * t->ntaps;
      const double *w = t->w + j * t->ntaps;
      const double *x0 = xo + ix[0] * inner;
      for (int64_t i = 0; i < inner; i++) yj[i] = w[0] * x0[i];
      for (int64_t k = 1; k < t->ntaps; k++) {
        const double *xk = xo + ix[k] * inner;
        double wk = w[k];
        if (wk == 0.0) continue;
        for (int64_t i = 0; i < inner; i++) yj[i] += wk * xk[i];
      }
    }
  }
}
OX_LEVELS_VOID(apply_axis,
               (const axis_taps *t, double extrap, const double *x, double *y, int64_t outer,
                int64_t in, int64_t out, int64_t inner),
               t, extrap, x, y, outer, in, out, inner)

/* One resized axis over the pool: blocks of `outer` when there are enough,
 * else blocks of output positions j (each task walks every o). Every
 * output element is computed by one task with the same operations. */
typedef struct axis_job {
  OX_LEVEL_PTR(apply_axis) fn;
  const axis_taps *t;
  double extrap;
  const double *x;
  double *y;
  int64_t outer, in, out, inner, per;
  bool by_outer;
} axis_job;

static void axis_task(void *arg, int64_t t0, int64_t t1) {
  const axis_job *j = arg;
  if (j->by_outer) {
    int64_t o0 = t0 * j->per, o1 = t1 * j->per < j->outer ? t1 * j->per : j->outer;
    j->fn(j->t, j->extrap, j->x + o0 * j->in * j->inner, j->y + o0 * j->out * j->inner, o1 - o0,
          j->in, j->out, j->inner);
    return;
  }
  int64_t j0 = t0 * j->per, j1 = t1 * j->per < j->out ? t1 * j->per : j->out;
  axis_taps sub = {j->t->ntaps, j->t->idx + j0 * j->t->ntaps, j->t->w + j0 * j->t->ntaps,
                   j->t->extrap + j0};
  for (int64_t o = 0; o < j->outer; o++)
    j->fn(&sub, j->extrap, j->x + o * j->in * j->inner, j->y + (o * j->out + j0) * j->inner, 1,
          j->in, j1 - j0, j->inner);
}

static void apply_axis_pool(ox_thread_pool *pool, const axis_taps *t, double extrap,
                            const double *x, double *y, int64_t outer, int64_t in, int64_t out,
                            int64_t inner) {
  /* a pick per resized axis (at most a few a run) */
  axis_job j = {OX_LEVEL_PICK(apply_axis), t, extrap, x, y, outer, in, out, inner, 1, true};
  int64_t nt = ox_thread_pool_size(pool), work = outer * out * inner * t->ntaps;
  if (nt < 2 || work < ((int64_t)1 << 16)) {
    j.fn(t, extrap, x, y, outer, in, out, inner);
    return;
  }
  j.by_outer = outer >= 2 * nt;
  int64_t n = j.by_outer ? outer : out;
  j.per = (n + 4 * nt - 1) / (4 * nt);
  ox_parallel_for(pool, (n + j.per - 1) / j.per, 1, axis_task, &j);
}

/* Nearest mode without extrapolation: a pure gather with one index table per
 * axis, in the tensor's own element size (no staging). */
static int nearest_gather(const rs_state *s, const ox_value *x, ox_value *y, const double *scale,
                          const double *rs, const double *re) {
  size_t r = x->rank, es = ox_value_elem_size(x->dtype);
  axis_taps t[RS_MAXR];
  memset(t, 0, sizeof t);
  int rc = OX_OK;
  for (size_t d = 0; d < r && rc == OX_OK; d++)
    rc = build_taps(s, x->dims[d], y->dims[d], scale[d], rs[d], re[d], &t[d]);
  if (rc == OX_OK) {
    int64_t L = (int64_t)r - 1, OWn = y->dims[L], outer = y->numel / (OWn ? OWn : 1);
    int64_t oi[RS_MAXR] = {0}, xstride[RS_MAXR];
    xstride[L] = 1;
    for (int64_t d = L; d-- > 0;) xstride[d] = xstride[d + 1] * x->dims[d + 1];
    const int64_t *last = t[L].idx;
    for (int64_t o = 0; o < outer; o++) {
      int64_t base = 0;
      for (int64_t d = 0; d < L; d++) base += t[d].idx[oi[d]] * xstride[d];
      const char *src = (const char *)x->data + (size_t)base * es;
      char *dst = (char *)y->data + (size_t)(o * OWn) * es;
      switch (es) {
        case 4:
          for (int64_t j = 0; j < OWn; j++) ((uint32_t *)dst)[j] = ((const uint32_t *)src)[last[j]];
          break;
        case 2:
          for (int64_t j = 0; j < OWn; j++) ((uint16_t *)dst)[j] = ((const uint16_t *)src)[last[j]];
          break;
        case 8:
          for (int64_t j = 0; j < OWn; j++) ((uint64_t *)dst)[j] = ((const uint64_t *)src)[last[j]];
          break;
        default:
          for (int64_t j = 0; j < OWn; j++)
            memcpy(dst + (size_t)j * es, src + (size_t)last[j] * es, es);
          break;
      }
      for (int64_t d = L; d-- > 0;) {
        if (++oi[d] < y->dims[d]) break;
        oi[d] = 0;
      }
    }
  }
  for (size_t d = 0; d < r; d++) free_taps(&t[d]);
  return rc;
}

static bool present(const ox_value *v) { return v && v->kind == OX_VAL_TENSOR && v->numel > 0; }

static double scalar_at(const ox_value *v, int64_t i) {
  switch (v->dtype) {
    case OX_FLOAT:
      return ((const float *)v->data)[i];
    case OX_DOUBLE:
      return ((const double *)v->data)[i];
    case OX_FLOAT16:
      return ox_f16_to_f32(((const uint16_t *)v->data)[i]);
    case OX_BFLOAT16:
      return ox_bf16_to_f32(((const uint16_t *)v->data)[i]);
    case OX_INT64:
      return (double)((const int64_t *)v->data)[i];
    default:
      return NAN;
  }
}

/* floor(v) as an output length: NaN, infinities and lengths beyond 2^62
 * (a scale of Inf or NaN, a NaN roi) are refused, not converted. */
static bool out_len(double v, int64_t *len) {
  v = floor(v);
  if (!(v > -4.6e18 && v < 4.6e18)) return false;
  *len = (int64_t)v;
  return true;
}

static int rs_run(ox_kctx *ctx, void *st) {
  const rs_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input X");
  size_t r = x->rank;
  if (r == 0 || r > RS_MAXR) return ox_kctx_fail(ctx, OX_ERUNTIME, "unsupported rank %zu", r);
  const ox_value *roi = NULL, *scales = NULL, *sizes = NULL;
  if (s->ver == V_RS10 || s->ver == V_UPS9)
    scales = ox_kctx_input(ctx, 1);
  else if (s->ver == V_RS11) {
    roi = ox_kctx_input(ctx, 1);
    scales = ox_kctx_input(ctx, 2);
    sizes = ox_kctx_n_inputs(ctx) > 3 ? ox_kctx_input(ctx, 3) : NULL;
  }
  /* axes the scales/sizes/roi refer to */
  int64_t axes[RS_MAXR];
  size_t na = s->n_axes ? s->n_axes : r;
  for (size_t i = 0; i < na; i++) {
    int64_t a = s->n_axes ? s->axes[i] : (int64_t)i;
    if (a < 0) a += (int64_t)r;
    if (a < 0 || a >= (int64_t)r)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "axis %lld out of range for rank %zu",
                          (long long)(s->n_axes ? s->axes[i] : (int64_t)i), r);
    axes[i] = a;
  }
  double scale[RS_MAXR], rs[RS_MAXR], re[RS_MAXR];
  int64_t ydims[RS_MAXR];
  for (size_t d = 0; d < r; d++) scale[d] = 1.0, rs[d] = 0.0, re[d] = 1.0, ydims[d] = x->dims[d];
  if (present(roi) && s->ctm == CT_CROP) {
    if (roi->numel != 2 * (int64_t)na)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "roi has %lld values, expected %zu",
                          (long long)roi->numel, 2 * na);
    for (size_t i = 0; i < na; i++) {
      rs[axes[i]] = scalar_at(roi, (int64_t)i);
      re[axes[i]] = scalar_at(roi, (int64_t)(na + i));
    }
  }
  if (s->n_attr_scales) {
    if (s->n_attr_scales != r)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "%zu scales for rank %zu", s->n_attr_scales, r);
    for (size_t d = 0; d < r; d++) scale[d] = s->attr_scales[d];
    for (size_t d = 0; d < r; d++)
      if (!(scale[d] > 0.0) || !out_len((double)x->dims[d] * scale[d], &ydims[d]))
        return ox_kctx_fail(ctx, OX_ERUNTIME, "scale %g is not a positive finite number", scale[d]);
  } else if (present(scales)) {
    if (present(sizes))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "only one of scales and sizes may be given");
    if (scales->numel != (int64_t)na)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "scales has %lld values, expected %zu",
                          (long long)scales->numel, na);
    for (size_t i = 0; i < na; i++) {
      int64_t d = axes[i];
      scale[d] = scalar_at(scales, (int64_t)i);
      if (!(scale[d] > 0.0)) return ox_kctx_fail(ctx, OX_ERUNTIME, "scales must be positive");
      double len = (double)x->dims[d] * (s->ctm == CT_CROP ? re[d] - rs[d] : 1.0);
      if (!out_len(len * scale[d], &ydims[d]))
        return ox_kctx_fail(ctx, OX_ERUNTIME, "scale %g (axis %lld) gives no finite output size",
                            scale[d], (long long)d);
    }
  } else if (present(sizes)) {
    if (sizes->dtype != OX_INT64 || sizes->numel != (int64_t)na)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "sizes must be int64 with %zu values", na);
    const int64_t *sz = sizes->data;
    if (s->keep == KA_STRETCH) {
      for (size_t i = 0; i < na; i++) {
        ydims[axes[i]] = sz[i];
        scale[axes[i]] = (double)sz[i] / (double)x->dims[axes[i]];
      }
    } else {
      double sc = s->keep == KA_NOT_LARGER ? INFINITY : 0.0;
      for (size_t i = 0; i < na; i++) {
        double q = (double)sz[i] / (double)x->dims[axes[i]];
        sc = s->keep == KA_NOT_LARGER ? fmin(sc, q) : fmax(sc, q);
      }
      for (size_t i = 0; i < na; i++) {
        scale[axes[i]] = sc;
        if (!out_len(sc * (double)x->dims[axes[i]] + 0.5, &ydims[axes[i]]))
          return ox_kctx_fail(ctx, OX_ERUNTIME, "sizes give no finite scale for an empty axis");
      }
    }
  } else {
    return ox_kctx_fail(ctx, OX_ERUNTIME, "one of scales and sizes is required");
  }
  bool y_empty = false;
  for (size_t d = 0; d < r; d++) {
    if (ydims[d] < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "negative output size");
    y_empty = y_empty || ydims[d] == 0;
  }
  /* a non-empty output has no value to interpolate from an empty input */
  for (size_t d = 0; d < r && !y_empty; d++)
    if (x->dims[d] == 0)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "axis %zu of the input is empty but its output is not",
                          d);
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, r);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  if (s->mode == RS_NEAREST && s->ctm != CT_CROP) {
    if (nearest_gather(s, x, y, scale, rs, re))
      return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    if (x->dtype == OX_STRING) {
      /* the gather copied pointers owned by x: give y its own strings */
      char **e = y->data;
      for (int64_t j = 0; j < y->numel; j++) {
        const char *src = e[j] ? e[j] : "";
        size_t n = strlen(src) + 1;
        e[j] = malloc(n);
        if (!e[j]) {
          for (int64_t k = j + 1; k < y->numel; k++) e[k] = NULL;
          return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
        }
        memcpy(e[j], src, n);
      }
    }
    return OX_OK;
  }
  if (x->dtype == OX_STRING)
    return ox_kctx_fail(
        ctx, OX_EUNSUPPORTED,
        "string tensors can only be resized in nearest mode without tf_crop_and_resize");
  /* stage and resample axis by axis */
  int64_t cur[RS_MAXR];
  memcpy(cur, x->dims, r * sizeof(int64_t));
  int64_t maxn = x->numel > y->numel ? x->numel : y->numel;
  for (size_t d = 0; d < r; d++) { /* intermediate sizes can exceed both ends */
    int64_t n = 1;
    for (size_t k = 0; k < r; k++) n *= k <= d ? ydims[k] : x->dims[k];
    if (n > maxn) maxn = n;
  }
  double *a = malloc((size_t)maxn * sizeof(double)), *b = malloc((size_t)maxn * sizeof(double));
  int rc = OX_OK;
  if (!a || !b) {
    rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (!ox_nn_load_f64(x->data, x->dtype, x->numel, a)) {
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "unsupported element type %d", (int)x->dtype);
    goto done;
  }
  for (size_t d = 0; d < r; d++) {
    bool identity = ydims[d] == x->dims[d] && scale[d] == 1.0 && s->ctm != CT_CROP;
    if (identity) continue;
    axis_taps t = {0};
    if (build_taps(s, x->dims[d], ydims[d], scale[d], rs[d], re[d], &t)) {
      free_taps(&t);
      rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
      goto done;
    }
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; k++) outer *= cur[k];
    for (size_t k = d + 1; k < r; k++) inner *= cur[k];
    apply_axis_pool(ox_kctx_pool(ctx), &t, s->extrap, a, b, outer, cur[d], ydims[d], inner);
    free_taps(&t);
    cur[d] = ydims[d];
    double *tmp = a;
    a = b;
    b = tmp;
  }
  ox_nn_store_f64(a, y->dtype, y->numel, y->data);
done:
  free(a);
  free(b);
  return rc;
}

const ox_kernel_def ox_ops_resize[] = {
    {"", "Resize", 10, 10, rs10_prepare, rs_run, free},
    {"", "Resize", 11, 1000, rs11_prepare, rs_run, free},
    {"", "Upsample", 1, 6, ups1_prepare, rs_run, free},
    {"", "Upsample", 7, 8, ups7_prepare, rs_run, free},
    {"", "Upsample", 9, 1000, ups9_prepare, rs_run, free},
    {0},
};
