/* ops_resize.c - C generator for Resize (10, 11 on) and Upsample (9). The
 * shapes are static but the scales, sizes and roi may be inputs, so the
 * generated function first works out each axis's scale, then the taps of
 * every output index of every axis (input index and weight: nearest,
 * linear, cubic, antialiased, tf_crop_and_resize's outside positions) into
 * local tables, then sums for each output element the products of its
 * axes' weights over their taps (in double). Nearest without a crop is a
 * plain gather (any element type). The coordinate rules are those of the
 * ONNX specification, as the runtime's kernel (src/ops/onnx/resize.c)
 * applies them. Antialiasing's tap count follows the scale: a run-time
 * scale gets the most taps its static output length allows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_impl.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP };
enum { NM_FLOOR_HALF, NM_CEIL_HALF, NM_FLOOR, NM_CEIL };
enum { KA_STRETCH, KA_NOT_LARGER, KA_NOT_SMALLER };

typedef struct rs_opts {
  int mode, ctm, nearest, keep;
  double cubic_a, extrap;
  bool exclude_outside, antialias;
} rs_opts;

static int pick(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  return -1;
}

static bool given(const cg_val *v) { return v && v->numel > 0; }

static int gen_resize(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  bool up = strcmp(n->op_type, "Upsample") == 0, v10 = up || c->opset < 11;
  size_t r = X->rank;
  rs_opts s = {RS_NEAREST, CT_ASYM, NM_FLOOR, KA_STRETCH, -0.75, 0.0, false, false};
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  s.mode = pick(ox_node_attr_str(n, "mode", "nearest"), modes, 3);
  if (s.mode < 0 || (v10 && s.mode == RS_CUBIC))
    return cg_fail(c, OX_EUNSUPPORTED, "mode '%s'", ox_node_attr_str(n, "mode", ""));
  if (!v10) {
    static const char *const ctms[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const kas[] = {"stretch", "not_larger", "not_smaller"};
    s.ctm = pick(ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel"), ctms, 7);
    s.nearest = pick(ox_node_attr_str(n, "nearest_mode", "round_prefer_floor"), nms, 4);
    s.keep = pick(ox_node_attr_str(n, "keep_aspect_ratio_policy", "stretch"), kas, 3);
    if (s.ctm < 0 || s.nearest < 0 || s.keep < 0)
      return cg_fail(c, OX_EUNSUPPORTED, "a coordinate, nearest or aspect mode it does not know");
    s.cubic_a = ox_node_attr_float(n, "cubic_coeff_a", -0.75f);
    s.exclude_outside = ox_node_attr_int(n, "exclude_outside", 0) != 0;
    s.extrap = ox_node_attr_float(n, "extrapolation_value", 0.0f);
    s.antialias = ox_node_attr_int(n, "antialias", 0) != 0;
  }
  if (r == 0 || r > CG_MAX_RANK) return cg_fail(c, OX_EUNSUPPORTED, "rank %zu", r);
  const cg_val *roi = v10 ? NULL : n_in > 1 ? in[1] : NULL;
  size_t sci = v10 ? 1 : 2, szi = 3;
  const cg_val *scales = n_in > sci ? in[sci] : NULL;
  const cg_val *sizes = !v10 && n_in > szi ? in[szi] : NULL;
  int64_t axes[CG_MAX_RANK];
  size_t na = r, nax = 0;
  if (!v10 && cg_attr_ints(n, "axes", axes, CG_MAX_RANK, &nax) && nax) {
    na = nax;
    for (size_t i = 0; i < na; i++) {
      size_t a;
      if (!cg_axis(axes[i], r, &a)) return cg_fail(c, OX_EMODEL, "axis out of range");
      axes[i] = (int64_t)a;
    }
  } else {
    for (size_t i = 0; i < r; i++) axes[i] = (int64_t)i;
  }
  bool crop = s.ctm == CT_CROP && given(roi);
  if (crop && roi->numel != 2 * (int64_t)na) return cg_fail(c, OX_EMODEL, "roi has the wrong length");
  if (given(scales) && scales->numel != (int64_t)na)
    return cg_fail(c, OX_EMODEL, "scales has the wrong length");
  if (!given(scales) && (!given(sizes) || sizes->numel != (int64_t)na))
    return cg_fail(c, OX_EMODEL, "one of scales and sizes (one value per axis) is required");
  for (size_t d = 0; d < r; d++)
    if (X->dims[d] == 0) return cg_fail(c, OX_EMODEL, "axis %zu of the input is empty", d);
  bool isf = X->dtype == OX_FLOAT || X->dtype == OX_DOUBLE;
  if (s.mode != RS_NEAREST && !isf)
    return cg_fail(c, OX_EUNSUPPORTED, "interpolation of a non-float element type");
  /* the taps per output index: 1 (nearest), 2 (linear), 4 (cubic); with
   * antialiasing on an axis whose scale is below 1 their count follows the
   * scale. A constant scale fixes it; a run-time one (scales or sizes an
   * input) is bounded by the static output length (a scale gives
   * floor(I * s) or round(I * s) output indices, so s >= (O - 0.5) / I):
   * the tables get the bound's taps, the code the run-time scale's (aa_lo:
   * the lowest tap offset the tables allow, per antialiased axis). */
  int64_t lo[CG_MAX_RANK], nt[CG_MAX_RANK];
  bool aa_ax[CG_MAX_RANK] = {false};
  for (size_t d = 0; d < r; d++) {
    lo[d] = s.mode == RS_CUBIC ? -1 : 0;
    nt[d] = s.mode == RS_NEAREST ? 1 : s.mode == RS_LINEAR ? 2 : 4;
  }
  if (s.antialias && s.mode != RS_NEAREST) {
    bool fixed = given(scales) && scales->kind == CG_CONST;
    if (!fixed && crop)
      return cg_fail(c, OX_EUNSUPPORTED,
                     "antialias with tf_crop_and_resize and scales that are not constants");
    for (size_t i = 0; i < na; i++) {
      size_t d = (size_t)axes[i];
      double sc = (double)(Y->dims[d] > 1 ? Y->dims[d] : 1) - 0.5;
      sc /= (double)X->dims[d];
      if (fixed) {
        sc = scales->dtype == OX_DOUBLE ? ((const double *)scales->cv->data)[i]
                                        : ((const float *)scales->cv->data)[i];
        if (!(sc > 0.0)) return cg_fail(c, OX_EMODEL, "scales must be positive");
        if (sc >= 1.0) continue;
      }
      aa_ax[d] = true;
      if (sc >= 1.0) continue; /* a run-time scale below 1 gets no more taps than these */
      lo[d] = (int64_t)floor((s.mode == RS_LINEAR ? -1.0 : -2.0) / sc) + 1;
      nt[d] = 2 - 2 * lo[d];
    }
  }
  const char *T = cg_ctype(X->dtype);
  char lit[64];
  /* the scale (and crop window) of every axis, from the inputs at run time */
  cg_printf(c, "  double scale[%zu], rs[%zu], re[%zu];\n", r, r, r);
  cg_printf(c, "  for (int d = 0; d < %zu; d++) scale[d] = 1, rs[d] = 0, re[d] = 1;\n", r);
  cg_printf(c, "  (void)rs, (void)re;\n");
  for (size_t i = 0; i < na; i++) {
    size_t d = (size_t)axes[i];
    if (crop)
      cg_printf(c, "  rs[%zu] = (double)X1[%zu];\n  re[%zu] = (double)X1[%zu];\n", d, i, d, na + i);
    if (given(scales)) cg_printf(c, "  scale[%zu] = (double)X%zu[%zu];\n", d, sci, i);
  }
  if (!given(scales)) {
    cg_printf(c, "  double q = %s;\n", s.keep == KA_NOT_LARGER ? "INFINITY" : "0");
    for (size_t i = 0; i < na; i++) {
      size_t d = (size_t)axes[i];
      cg_printf(c, "  scale[%zu] = (double)X%zu[%zu] / %lld.0;\n", d, szi, i,
                (long long)X->dims[d]);
      if (s.keep == KA_NOT_LARGER) cg_printf(c, "  if (scale[%zu] < q) q = scale[%zu];\n", d, d);
      if (s.keep == KA_NOT_SMALLER) cg_printf(c, "  if (scale[%zu] > q) q = scale[%zu];\n", d, d);
    }
    if (s.keep != KA_STRETCH)
      for (size_t i = 0; i < na; i++) cg_printf(c, "  scale[%zu] = q;\n", (size_t)axes[i]);
    else
      cg_printf(c, "  (void)q;\n");
  }
  /* the taps of each axis, from the coordinate transformation */
  for (size_t d = 0; d < r; d++) {
    long long I = (long long)X->dims[d], O = (long long)Y->dims[d], K = (long long)nt[d];
    cg_printf(c, "  /* axis %zu: %lld -> %lld, %lld tap(s) per output index */\n", d, I, O, K);
    cg_printf(c, "  int64_t ix%zu[%lld];\n  double w%zu[%lld];\n", d, O * K > 0 ? O * K : 1, d,
              O * K > 0 ? O * K : 1);
    if (crop) cg_printf(c, "  uint8_t ex%zu[%lld];\n", d, O ? O : 1);
    cg_printf(c, "  for (long long o = 0; o < %lld; o++) {\n    const double sc = scale[%zu];\n",
              O, d);
    cg_printf(c, "    (void)sc;\n");
    switch (s.ctm) {
      case CT_HALF_PIXEL:
        cg_printf(c, "    const double x = (o + 0.5) / sc - 0.5;\n");
        break;
      case CT_HALF_PIXEL_SYM:
        cg_printf(c,
                  "    const double adj = %lld.0 / (sc * %lld.0), ctr = %lld.0 / 2.0;\n"
                  "    const double x = ctr * (1.0 - adj) + (o + 0.5) / sc - 0.5;\n",
                  O, I, I);
        break;
      case CT_PYTORCH:
        cg_printf(c, "    const double x = %s;\n", O > 1 ? "(o + 0.5) / sc - 0.5" : "0.0");
        break;
      case CT_ALIGN:
        if (O == 1)
          cg_printf(c, "    const double x = 0.0;\n");
        else
          cg_printf(c, "    const double x = o * %lld.0 / (sc * %lld.0 - 1.0);\n", I - 1, I);
        break;
      case CT_TF_NN:
        cg_printf(c, "    const double x = (o + 0.5) / sc;\n");
        break;
      case CT_CROP:
        if (O > 1)
          cg_printf(c,
                    "    const double x = rs[%zu] * %lld.0 + o * (re[%zu] - rs[%zu]) * %lld.0 / "
                    "%lld.0;\n",
                    d, I - 1, d, d, I - 1, O - 1);
        else
          cg_printf(c, "    const double x = 0.5 * (rs[%zu] + re[%zu]) * %lld.0;\n", d, d, I - 1);
        break;
      default:
        cg_printf(c, "    const double x = o / sc;\n");
    }
    cg_printf(c, "    int64_t *ix = ix%zu + o * %lld;\n    double *w = w%zu + o * %lld;\n", d, K, d,
              K);
    if (crop) {
      cg_printf(c, "    ex%zu[o] = !(x >= 0.0 && x <= %lld.0);\n", d, I - 1);
      cg_printf(c, "    if (ex%zu[o]) {\n      for (int k = 0; k < %lld; k++) ix[k] = 0, w[k] = 0;\n"
                   "      continue;\n    }\n", d, K);
    }
    if (s.mode == RS_NEAREST) {
      const char *e = s.nearest == NM_FLOOR_HALF  ? "ceil(x - 0.5)"
                      : s.nearest == NM_CEIL_HALF ? "floor(x + 0.5)"
                      : s.nearest == NM_FLOOR     ? "floor(x)"
                                                  : "ceil(x)";
      cg_printf(c, "    const int64_t i = (int64_t)%s;\n", e);
      cg_printf(c, "    ix[0] = i < 0 ? 0 : i >= %lld ? %lld : i;\n    w[0] = 1;\n  }\n", I, I - 1);
      continue;
    }
    bool aa = aa_ax[d];
    long long lo0 = s.mode == RS_CUBIC ? -1 : 0;
    cg_printf(c, "    const double x0 = floor(x), fr = x - x0;\n    double sum = 0;\n");
    if (aa) {
      /* this call's taps: the runtime's rule (antialiased when the scale is
       * below 1), kept within the tables (a scale the static shape does not
       * allow gets the bound's taps, never more) */
      cg_printf(c, "    const int aa = sc > 0.0 && sc < 1.0;\n");
      cg_printf(c, "    double lo_d = aa ? floor(%s / sc) + 1.0 : %lld.0;\n",
                s.mode == RS_LINEAR ? "-1.0" : "-2.0", lo0);
      cg_printf(c, "    if (!(lo_d >= %lld.0)) lo_d = %lld.0;\n", (long long)lo[d],
                (long long)lo[d]);
      cg_printf(c, "    const int64_t lo = (int64_t)lo_d, nt = aa ? 2 - 2 * lo : %lld;\n",
                s.mode == RS_LINEAR ? 2LL : 4LL);
    }
    cg_printf(c, "    for (int k = 0; k < %lld; k++) {\n", K);
    if (aa) {
      cg_printf(c, "      if (k >= nt) {\n        ix[k] = 0;\n        w[k] = 0;\n        continue;\n"
                   "      }\n");
      cg_printf(c, "      const int64_t off = lo + k;\n      const double arg = off - fr;\n");
    } else {
      cg_printf(c, "      const int64_t off = %lld + k;\n      const double arg = off - fr;\n",
                (long long)lo[d]);
    }
    cg_printf(c, "      (void)arg;\n");
    if (s.mode == RS_LINEAR) {
      if (aa)
        cg_printf(c, "      double wk = aa ? 1.0 - fabs(arg * sc) : off == 0 ? 1.0 - fr : fr;\n"
                     "      if (wk < 0) wk = 0;\n");
      else
        cg_printf(c, "      double wk = off == 0 ? 1.0 - fr : fr;\n");
    } else {
      cg_float_lit(lit, sizeof lit, s.cubic_a, false);
      cg_printf(c, "      const double a = %s, t = fabs(%s);\n", lit, aa ? "aa ? arg * sc : arg" : "arg");
      cg_printf(c, "      double wk = t <= 1.0   ? ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0\n"
                   "                  : t < 2.0 ? ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a\n"
                   "                            : 0.0;\n");
    }
    cg_printf(c, "      int64_t i = (int64_t)x0 + off;\n");
    cg_printf(c, "      if (i < 0 || i >= %lld) {\n%s        i = i < 0 ? 0 : %lld;\n      }\n", I,
              s.exclude_outside ? "        wk = 0;\n" : "", I - 1);
    cg_printf(c, "      ix[k] = i;\n      w[k] = wk;\n      sum += wk;\n    }\n");
    if (aa || s.exclude_outside)
      cg_printf(c, "    if (%ssum != 0)\n      for (int k = 0; k < %lld; k++) w[k] /= sum;\n",
                aa && !s.exclude_outside ? "aa && " : "", K);
    else
      cg_printf(c, "    (void)sum;\n");
    cg_printf(c, "  }\n");
  }
  /* each output element: the sum over its axes' taps of the weights' product */
  int64_t xs[CG_MAX_RANK];
  cg_strides(X, xs);
  bool gather = s.mode == RS_NEAREST && !crop;
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < r; d++)
    cg_printf(c, "%*sfor (long long i%zu = 0; i%zu < %lld; i%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)Y->dims[d], d);
  int ind = (int)(2 + 2 * r);
  cg_printf(c, "%*s{\n", ind, "");
  if (gather) {
    cg_printf(c, "%*s  Y0[o++] = X0[0", ind, "");
    for (size_t d = 0; d < r; d++) cg_printf(c, " + ix%zu[i%zu] * %lld", d, d, (long long)xs[d]);
    cg_printf(c, "];\n%*s}\n", ind, "");
    return OX_OK;
  }
  if (crop) {
    cg_float_lit(lit, sizeof lit, s.extrap, X->dtype == OX_FLOAT);
    cg_printf(c, "%*s  if (0", ind, "");
    for (size_t d = 0; d < r; d++) cg_printf(c, " || ex%zu[i%zu]", d, d);
    cg_printf(c, ") {\n%*s    Y0[o++] = %s; /* outside the crop */\n%*s    continue;\n%*s  }\n",
              ind, "", lit, ind, "", ind, "");
  }
  cg_printf(c, "%*s  double acc = 0;\n", ind, "");
  int kind = ind + 2;
  for (size_t d = 0; d < r; d++) {
    cg_printf(c, "%*sfor (int k%zu = 0; k%zu < %lld; k%zu++)\n", kind, "", d, d, (long long)nt[d],
              d);
    kind += 2;
  }
  cg_printf(c, "%*sacc += ", kind, "");
  for (size_t d = 0; d < r; d++)
    cg_printf(c, "w%zu[i%zu * %lld + k%zu] * ", d, d, (long long)nt[d], d);
  cg_printf(c, "(double)X0[0");
  for (size_t d = 0; d < r; d++)
    cg_printf(c, " + ix%zu[i%zu * %lld + k%zu] * %lld", d, d, (long long)nt[d], d,
              (long long)xs[d]);
  cg_printf(c, "];\n%*s  Y0[o++] = (%s)acc;\n%*s}\n", ind, "", T, ind, "");
  return OX_OK;
}

const cg_op ox_cg_ops_resize[] = {
    {"Resize", gen_resize},
    {"Upsample", gen_resize},
    {NULL, NULL},
};
