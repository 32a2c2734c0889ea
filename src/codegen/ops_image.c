/* ops_image.c - C generators for the operators that sample or place image
 * pixels: GridSample (nearest, linear, cubic; zeros, border, reflection
 * padding; 1-D to 3-D), AffineGrid, Col2Im, RoiAlign and MaxUnpool. The
 * arithmetic is the runtime's (src/ops/onnx/roi.c, conv.c, pool.c):
 * coordinates and weights in double, the output stored in X's type. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* ---------------------------------------------------------------- GridSample */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GP_ZEROS, GP_BORDER, GP_REFLECTION };

/* Writes code that reflects double variable v into [lo, hi] (the runtime's
 * reflect(): the distance beyond a bound folds back, every other span
 * mirrored). */
static void emit_reflect(cg_ctx *c, const char *ind, const char *v, double lo, double hi) {
  char L[48], H[48], S[48];
  cg_float_lit(L, sizeof L, lo, false);
  cg_float_lit(H, sizeof H, hi, false);
  if (hi - lo <= 0.0) {
    cg_printf(c, "%s%s = %s;\n", ind, v, L);
    return;
  }
  cg_float_lit(S, sizeof S, hi - lo, false);
  cg_printf(c,
            "%sif (%s < %s) {\n"
            "%s  const double dd = %s - %s, kk = floor(dd / %s), r = dd - kk * %s;\n"
            "%s  %s = fmod(kk, 2.0) == 0.0 ? %s + r : %s - r;\n"
            "%s} else if (%s > %s) {\n"
            "%s  const double dd = %s - %s, kk = floor(dd / %s), r = dd - kk * %s;\n"
            "%s  %s = fmod(kk, 2.0) == 0.0 ? %s - r : %s + r;\n"
            "%s}\n",
            ind, v, L, ind, L, v, S, S, ind, v, L, H, ind, v, H, ind, v, H, S, S, ind, v, H, L,
            ind);
}

/* The padding of a coordinate (the runtime's gs_pad_coord). */
static void emit_pad_coord(cg_ctx *c, const char *ind, const char *v, int pad, bool align,
                           int64_t len) {
  char top[48];
  cg_float_lit(top, sizeof top, (double)(len - 1), false);
  if (pad == GP_ZEROS) return;
  if (pad == GP_REFLECTION) {
    if (align)
      emit_reflect(c, ind, v, 0.0, (double)(len - 1));
    else
      emit_reflect(c, ind, v, -0.5, (double)len - 0.5);
  }
  cg_printf(c, "%s%s = fmin(fmax(%s, 0.0), %s);\n", ind, v, v, top);
}

static int gen_gridsample(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *G = in[1], *Y = out[0];
  if (cg_need_float(c, X) || cg_need_float(c, G)) return c->e->code;
  bool v16 = c->opset < 20;
  const char *m = ox_node_attr_str(n, "mode", v16 ? "bilinear" : "linear");
  const char *p = ox_node_attr_str(n, "padding_mode", "zeros");
  int mode, pad;
  if (strcmp(m, v16 ? "bilinear" : "linear") == 0)
    mode = GS_LINEAR;
  else if (strcmp(m, "nearest") == 0)
    mode = GS_NEAREST;
  else if (strcmp(m, v16 ? "bicubic" : "cubic") == 0)
    mode = GS_CUBIC;
  else
    return cg_fail(c, OX_EMODEL, "unsupported mode '%s'", m);
  if (strcmp(p, "zeros") == 0)
    pad = GP_ZEROS;
  else if (strcmp(p, "border") == 0)
    pad = GP_BORDER;
  else if (strcmp(p, "reflection") == 0)
    pad = GP_REFLECTION;
  else
    return cg_fail(c, OX_EMODEL, "unsupported padding_mode '%s'", p);
  bool align = ox_node_attr_int(n, "align_corners", 0) != 0;
  size_t nd = X->rank >= 2 ? X->rank - 2 : 0;
  if (nd < 1 || nd > 3 || (v16 && nd != 2) || G->rank != nd + 2 || G->dims[0] != X->dims[0] ||
      G->dims[nd + 1] != (int64_t)nd || Y->rank != X->rank)
    return cg_fail(c, OX_EMODEL, "X of rank %zu does not match grid of rank %zu (1 to 3 axes)",
                   X->rank, G->rank);
  if (mode == GS_CUBIC && nd != 2) return cg_fail(c, OX_EMODEL, "cubic mode needs a 4-D input");
  long long N = (long long)X->dims[0], C = (long long)X->dims[1], insz = 1, osz = 1;
  for (size_t d = 0; d < nd; d++) {
    insz *= (long long)X->dims[2 + d];
    osz *= (long long)G->dims[1 + d];
    if (Y->dims[2 + d] != G->dims[1 + d]) return cg_fail(c, OX_EMODEL, "output shape");
  }
  int nt = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4;
  const char *Tx = cg_ctype(X->dtype), *Tg = cg_ctype(G->dtype);
  cg_printf(c,
            "  for (long long n = 0; n < %lld; n++)\n    for (long long o = 0; o < %lld; o++) {\n",
            N, osz);
  cg_printf(c, "      const %s *g = X1 + (n * %lld + o) * %zu; /* (x, y, z): last axis first */\n",
            Tg, osz, nd);
  cg_printf(c, "      long long ti[%zu][%d]; /* taps per axis: index (-1 reads zero), weight */\n",
            nd, nt);
  cg_printf(c, "      double tw[%zu][%d];\n", nd, nt);
  for (size_t d = 0; d < nd; d++) {
    int64_t len = X->dims[2 + d];
    char lenm1[48], lenl[48];
    cg_float_lit(lenm1, sizeof lenm1, (double)(len - 1), false);
    cg_float_lit(lenl, sizeof lenl, (double)len, false);
    cg_printf(c, "      {\n        const double gv = (double)g[%zu];\n", nd - 1 - d);
    if (align)
      cg_printf(c, "        double x = (gv + 1.0) / 2.0 * %s;\n", lenm1);
    else
      cg_printf(c, "        double x = ((gv + 1.0) * %s - 1.0) / 2.0;\n", lenl);
    if (mode != GS_CUBIC) emit_pad_coord(c, "        ", "x", pad, align, len);
    /* far outside, every mode reads the same taps; bounded, the conversions
     * to integers stay defined (NaN reads as far to the left) */
    cg_printf(c, "        if (!(x > -1e15)) x = -1e15;\n        else if (x > 1e15) x = 1e15;\n");
    if (mode == GS_NEAREST) {
      cg_printf(c, "        ti[%zu][0] = (long long)nearbyint(x);\n        tw[%zu][0] = 1.0;\n", d,
                d);
    } else if (mode == GS_LINEAR) {
      cg_printf(c,
                "        const double f = floor(x);\n"
                "        ti[%zu][0] = (long long)f;\n        ti[%zu][1] = (long long)f + 1;\n"
                "        tw[%zu][0] = 1.0 - (x - f);\n        tw[%zu][1] = x - f;\n",
                d, d, d, d);
    } else {
      /* Keys' cubic kernel with a = -0.75 (the constants folded) */
      cg_printf(c,
                "        const double f = floor(x), t = x - f;\n"
                "        for (int k = 0; k < 4; k++) {\n"
                "          const double a = fabs(t - (double)(k - 1));\n"
                "          ti[%zu][k] = (long long)f - 1 + k;\n"
                "          tw[%zu][k] = a <= 1.0 ? (1.25 * a - 2.25) * a * a + 1.0\n"
                "                     : a < 2.0 ? ((-0.75 * a + 3.75) * a - 6.0) * a + 3.0 : 0.0;\n"
                "        }\n",
                d, d);
    }
    cg_printf(c, "        for (int k = 0; k < %d; k++) {\n", nt);
    cg_printf(c, "          const long long i = ti[%zu][k];\n", d);
    cg_printf(c, "          if (i >= 0 && i < %lld) continue;\n", (long long)len);
    if (pad == GP_ZEROS) {
      cg_printf(c, "          ti[%zu][k] = -1;\n", d);
    } else if (mode != GS_CUBIC) {
      cg_printf(c, "          ti[%zu][k] = i < 0 ? 0 : %lld;\n", d, (long long)(len - 1));
    } else {
      cg_printf(c, "          double r = (double)i;\n");
      emit_pad_coord(c, "          ", "r", pad, align, len);
      cg_printf(c, "          ti[%zu][k] = (long long)r;\n", d);
    }
    cg_printf(c, "        }\n      }\n");
  }
  cg_printf(c, "      for (long long ch = 0; ch < %lld; ch++) {\n", C);
  cg_printf(c, "        const %s *xc = X0 + (n * %lld + ch) * %lld;\n", Tx, C, insz);
  cg_printf(c, "        double acc = 0.0;\n");
  for (size_t d = 0; d < nd; d++)
    cg_printf(c, "%*sfor (int k%zu = 0; k%zu < %d; k%zu++)\n", (int)(8 + 2 * d), "", d, d, nt, d);
  int ind = (int)(8 + 2 * nd);
  cg_printf(c, "%*s{\n%*s  if (", ind, "", ind, "");
  for (size_t d = 0; d < nd; d++) cg_printf(c, "%sti[%zu][k%zu] < 0", d ? " || " : "", d, d);
  cg_printf(c, ") continue;\n%*s  const double w = 1.0", ind, "");
  for (size_t d = 0; d < nd; d++) cg_printf(c, " * tw[%zu][k%zu]", d, d);
  cg_printf(c, ";\n%*s  if (w != 0.0) acc += w * (double)xc[", ind, "");
  /* row-major index of the tap: ((i0 * d1 + i1) * d2 + i2) */
  for (size_t d = 0; d < nd; d++) {
    long long stride = 1;
    for (size_t e = d + 1; e < nd; e++) stride *= (long long)X->dims[2 + e];
    cg_printf(c, "%sti[%zu][k%zu] * %lld", d ? " + " : "", d, d, stride);
  }
  cg_printf(c, "];\n%*s}\n", ind, "");
  cg_printf(c, "        Y0[(n * %lld + ch) * %lld + o] = (%s)acc;\n      }\n    }\n", C, osz, Tx);
  return OX_OK;
}

/* ---------------------------------------------------------------- AffineGrid */

/* grid[n, i..., :] = theta[n] (x, y[, z], 1): the base coordinates of each
 * output position, last axis first, in [-1, 1] (pixel centres, or the
 * corners with align_corners); the size comes from the static output shape
 * (a constant size input is checked against it). */
static int gen_affinegrid(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_out;
  const cg_val *T = in[0], *Y = out[0];
  if (cg_need_float(c, T)) return c->e->code;
  if (Y->rank != 4 && Y->rank != 5) return cg_fail(c, OX_EMODEL, "the grid must be 4-D or 5-D");
  size_t nd = Y->rank - 2;
  if (T->rank != 3 || T->dims[0] != Y->dims[0] || T->dims[1] != (int64_t)nd ||
      T->dims[2] != (int64_t)nd + 1 || Y->dims[nd + 1] != (int64_t)nd)
    return cg_fail(c, OX_EMODEL, "theta must be [N, %zu, %zu]", nd, nd + 1);
  int64_t sz[5];
  size_t ns = 0;
  if (n_in > 1 && in[1] && cg_const_ints(in[1], sz, 5, &ns)) {
    bool ok = ns == nd + 2 && sz[0] == Y->dims[0];
    for (size_t d = 0; ok && d < nd; d++) ok = sz[2 + d] == Y->dims[1 + d];
    if (!ok) return cg_fail(c, OX_EMODEL, "size does not match the output shape");
  }
  bool align = ox_node_attr_int(n, "align_corners", 0) != 0;
  const char *Tt = cg_ctype(T->dtype);
  long long npts = 1;
  for (size_t d = 0; d < nd; d++) npts *= (long long)Y->dims[1 + d];
  cg_printf(c, "  for (long long n = 0; n < %lld; n++) {\n", (long long)Y->dims[0]);
  cg_printf(c, "    const %s *t = X0 + n * %zu;\n    %s *y = Y0 + n * %lld;\n", Tt, nd * (nd + 1),
            Tt, npts * (long long)nd);
  for (size_t d = 0; d < nd; d++)
    cg_printf(c, "%*sfor (long long i%zu = 0; i%zu < %lld; i%zu++)\n", (int)(4 + 2 * d), "", d, d,
              (long long)Y->dims[1 + d], d);
  int ind = (int)(4 + 2 * nd);
  cg_printf(c, "%*s{\n%*s  double base[%zu];\n", ind, "", ind, "", nd + 1);
  for (size_t d = 0; d < nd; d++) {
    long long len = (long long)Y->dims[1 + d];
    if (align && len > 1)
      cg_printf(c, "%*s  base[%zu] = -1.0 + 2.0 * (double)i%zu / %lld.0;\n", ind, "", nd - 1 - d, d,
                len - 1);
    else if (align)
      cg_printf(c, "%*s  base[%zu] = 0.0;\n%*s  (void)i%zu;\n", ind, "", nd - 1 - d, ind, "", d);
    else
      cg_printf(c, "%*s  base[%zu] = (2.0 * (double)i%zu + 1.0) / %lld.0 - 1.0;\n", ind, "",
                nd - 1 - d, d, len);
  }
  cg_printf(c, "%*s  base[%zu] = 1.0;\n", ind, "", nd);
  cg_printf(c, "%*s  for (int i = 0; i < %zu; i++) {\n", ind, "", nd);
  cg_printf(c, "%*s    double v = 0.0;\n", ind, "");
  cg_printf(c, "%*s    for (int j = 0; j < %zu; j++) v += (double)t[i * %zu + j] * base[j];\n", ind,
            "", nd + 1, nd + 1);
  cg_printf(c, "%*s    *y++ = (%s)v;\n%*s  }\n%*s}\n  }\n", ind, "", Tt, ind, "", ind, "");
  return OX_OK;
}

/* ---------------------------------------------------------------- Col2Im */

/* Y[n, c, image] += X[n, c * K + kernel offset, block position] over every
 * block position and kernel offset that lands inside the image (padding is
 * dropped). The image shape is the static output's; the block shape may be
 * a run-time input: the code reads it and, when it does not fit the input
 * (its product must be X's dim 1 / C and the block count X's dim 2), writes
 * zeros, the function having no way to fail. */
static int gen_col2im(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (n_in < 3 || !in[1] || !in[2]) return cg_fail(c, OX_EMODEL, "missing image or block shape");
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank != 3 || Y->rank < 3 || Y->rank > 2 + 6 || Y->dims[0] != X->dims[0] ||
      in[2]->rank != 1 || in[2]->dims[0] != (int64_t)Y->rank - 2 || in[2]->dtype != OX_INT64)
    return cg_fail(c, OX_EMODEL, "input must be [N, C*prod(block), L], block_shape int64[%zu]",
                   Y->rank - 2);
  size_t nd = Y->rank - 2;
  int64_t img[6], v[12];
  size_t cnt;
  if (cg_const_ints(in[1], img, 6, &cnt)) {
    bool ok = cnt == nd;
    for (size_t d = 0; ok && d < nd; d++) ok = img[d] == Y->dims[2 + d];
    if (!ok) return cg_fail(c, OX_EMODEL, "image_shape does not match the output shape");
  }
  int64_t dil[6], str[6], pb[6], pe[6];
  for (size_t d = 0; d < nd; d++) dil[d] = str[d] = 1, pb[d] = pe[d] = 0;
  if (cg_attr_ints(n, "dilations", v, 12, &cnt)) {
    if (cnt != nd) return cg_fail(c, OX_EMODEL, "dilations need %zu values", nd);
    memcpy(dil, v, nd * sizeof *v);
  }
  if (cg_attr_ints(n, "strides", v, 12, &cnt)) {
    if (cnt != nd) return cg_fail(c, OX_EMODEL, "strides need %zu values", nd);
    memcpy(str, v, nd * sizeof *v);
  }
  if (cg_attr_ints(n, "pads", v, 12, &cnt)) {
    if (cnt != 2 * nd) return cg_fail(c, OX_EMODEL, "pads need %zu values", 2 * nd);
    memcpy(pb, v, nd * sizeof *v);
    memcpy(pe, v + nd, nd * sizeof *v);
  }
  for (size_t d = 0; d < nd; d++)
    if (dil[d] < 1 || str[d] < 1 || pb[d] < 0 || pe[d] < 0)
      return cg_fail(c, OX_EMODEL, "invalid dilations, strides or pads");
  long long N = (long long)X->dims[0], C = (long long)Y->dims[1], L = (long long)X->dims[2];
  if (C < 1 || X->dims[1] % C) return cg_fail(c, OX_EMODEL, "X's dim 1 is not a multiple of C");
  long long K = (long long)X->dims[1] / C, isz = 1;
  for (size_t d = 0; d < nd; d++) isz *= (long long)Y->dims[2 + d];
  const char *Tx = cg_ctype(X->dtype);
  cg_printf(c, "  memset(Y0, 0, %zu);\n", Y->nbytes);
  cg_printf(c, "  long long bk[%zu], nb[%zu], kp = 1, np = 1;\n", nd, nd);
  for (size_t d = 0; d < nd; d++) {
    cg_printf(c, "  bk[%zu] = (long long)X2[%zu];\n", d, d);
    cg_printf(c, "  if (bk[%zu] < 1 || bk[%zu] > %lld) return; /* no block fits */\n", d, d,
              (long long)K);
    cg_printf(c, "  nb[%zu] = (%lld - %lld * (bk[%zu] - 1) - 1) / %lld + 1;\n", d,
              (long long)(Y->dims[2 + d] + pb[d] + pe[d]), (long long)dil[d], d, (long long)str[d]);
    cg_printf(c, "  if (nb[%zu] < 1) return;\n  kp *= bk[%zu];\n  np *= nb[%zu];\n", d, d, d);
  }
  cg_printf(c, "  if (kp != %lldLL || np != %lldLL) return;\n", K, L);
  cg_printf(c, "  for (long long n = 0; n < %lld; n++)\n", N);
  cg_printf(c, "    for (long long ch = 0; ch < %lld; ch++) {\n", C);
  cg_printf(c, "      %s *y = Y0 + (n * %lld + ch) * %lld;\n", Tx, C, isz);
  cg_printf(c, "      for (long long k = 0; k < %lld; k++) {\n", K);
  cg_printf(c, "        const %s *x = X0 + ((n * %lld + ch) * %lld + k) * %lld;\n", Tx, C, K, L);
  cg_printf(c, "        long long ko[%zu], r = k;\n", nd);
  cg_printf(c, "        for (int d = %d; d >= 0; d--) {\n", (int)nd - 1);
  cg_printf(c, "          ko[d] = r %% bk[d];\n          r /= bk[d];\n        }\n");
  cg_printf(c, "        for (long long l = 0; l < %lld; l++) {\n", L);
  cg_printf(c, "          long long q = l, at = 0, p;\n          int inside = 1;\n");
  /* the block position of l, last axis first; its image index */
  cg_printf(c, "          long long bp[%zu];\n", nd);
  cg_printf(c, "          for (int d = %d; d >= 0; d--) {\n", (int)nd - 1);
  cg_printf(c, "            bp[d] = q %% nb[d];\n            q /= nb[d];\n          }\n");
  for (size_t d = 0; d < nd; d++) {
    cg_printf(c, "          p = bp[%zu] * %lld - %lld + ko[%zu] * %lld;\n", d, (long long)str[d],
              (long long)pb[d], d, (long long)dil[d]);
    cg_printf(c, "          if (p < 0 || p >= %lld) inside = 0;\n", (long long)Y->dims[2 + d]);
    cg_printf(c, "          at = at * %lld + p;\n", (long long)Y->dims[2 + d]);
  }
  cg_printf(c, "          if (inside) y[at] += x[l];\n        }\n      }\n    }\n");
  return OX_OK;
}

/* ---------------------------------------------------------------- RoiAlign */

/* Y[r, c] = the average (or max) of bilinear samples on a regular grid in
 * each bin of roi r, as the runtime's roialign_run: sampling_ratio samples
 * a side, or with 0 the adaptive ceil(bin size) computed per roi at run
 * time. A roi the runtime refuses (batch index out of range, a coordinate
 * that is not finite, an absurd adaptive grid) gets zeros. */
static int gen_roialign(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *R = n_in > 1 ? in[1] : NULL, *BI = n_in > 2 ? in[2] : NULL;
  if (!R || !BI) return cg_fail(c, OX_EMODEL, "missing rois or batch_indices");
  if (cg_need_float(c, X) || cg_need_float(c, R)) return c->e->code;
  bool v16 = c->opset >= 16;
  const char *mode = ox_node_attr_str(n, "mode", "avg");
  const char *ctm = v16 ? ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel")
                        : "output_half_pixel";
  bool mx = strcmp(mode, "max") == 0, half = strcmp(ctm, "half_pixel") == 0;
  if (!mx && strcmp(mode, "avg") != 0)
    return cg_fail(c, OX_EMODEL, "mode '%s' is not avg or max", mode);
  if (!half && strcmp(ctm, "output_half_pixel") != 0)
    return cg_fail(c, OX_EMODEL, "coordinate_transformation_mode '%s'", ctm);
  long long oh = (long long)ox_node_attr_int(n, "output_height", 1);
  long long ow = (long long)ox_node_attr_int(n, "output_width", 1);
  long long sr = (long long)ox_node_attr_int(n, "sampling_ratio", 0);
  if (oh <= 0 || ow <= 0 || sr < 0)
    return cg_fail(c, OX_EMODEL, "invalid output size or sampling_ratio");
  if (X->rank != 4 || R->rank != 2 || R->dims[1] != 4 || BI->numel != R->dims[0] ||
      (BI->dtype != OX_INT64 && BI->dtype != OX_INT32))
    return cg_fail(c, OX_EMODEL, "expected X [N,C,H,W], rois [R,4] and batch_indices [R]");
  long long N = (long long)X->dims[0], C = (long long)X->dims[1], H = (long long)X->dims[2];
  long long W = (long long)X->dims[3], NR = (long long)R->dims[0];
  if (out[0]->numel != NR * C * oh * ow) return cg_fail(c, OX_EMODEL, "output shape");
  if (NR > 0 && C > 0 && (H == 0 || W == 0)) return cg_fail(c, OX_EMODEL, "X has no pixels");
  char sc[48];
  cg_float_lit(sc, sizeof sc, (double)ox_node_attr_float(n, "spatial_scale", 1.0f), false);
  const char *T = cg_ctype(X->dtype), *off = half ? "0.5" : "0.0";
  size_t per = (size_t)(C * oh * ow) * (X->dtype == OX_FLOAT ? 4u : 8u);
  cg_printf(c, "  for (long long r = 0; r < %lld; r++) {\n", NR);
  cg_printf(c, "    const long long b = (long long)X2[r];\n");
  cg_printf(
      c,
      "    const double x1 = (double)X1[r * 4] * %s - %s, y1 = (double)X1[r * 4 + 1] * %s - %s;\n",
      sc, off, sc, off);
  cg_printf(c,
            "    const double x2 = (double)X1[r * 4 + 2] * %s - %s, y2 = (double)X1[r * 4 + 3] * "
            "%s - %s;\n",
            sc, off, sc, off);
  cg_printf(c,
            "    if (b < 0 || b >= %lld || !(isfinite(x1) && isfinite(y1) && isfinite(x2) && "
            "isfinite(y2))) {\n",
            N);
  cg_printf(
      c,
      "      memset(Y0 + r * %lld, 0, %zu); /* refused by the runtime */\n      continue;\n    }\n",
      C * oh * ow, per);
  cg_printf(c, "    double rw = x2 - x1, rh = y2 - y1;\n");
  if (!half) cg_printf(c, "    rw = fmax(rw, 1.0);\n    rh = fmax(rh, 1.0);\n");
  cg_printf(c, "    const double bh = rh / %lld.0, bw = rw / %lld.0;\n", oh, ow);
  if (sr > 0) {
    cg_printf(c, "    const long long gh = %lld, gw = %lld;\n", sr, sr);
  } else {
    cg_printf(c, "    const double qh = ceil(rh / %lld.0), qw = ceil(rw / %lld.0);\n", oh, ow);
    cg_printf(c, "    if (!(qh <= 65536.0 && qw <= 65536.0)) {\n");
    cg_printf(c,
              "      memset(Y0 + r * %lld, 0, %zu); /* refused by the runtime */\n      "
              "continue;\n    }\n",
              C * oh * ow, per);
    cg_printf(
        c,
        "    const long long gh = qh > 0 ? (long long)qh : 0, gw = qw > 0 ? (long long)qw : 0;\n");
  }
  if (!mx) cg_printf(c, "    const double count = (double)(gh * gw > 1 ? gh * gw : 1);\n");
  cg_printf(c, "    for (long long ch = 0; ch < %lld; ch++) {\n", C);
  cg_printf(c, "      const %s *xc = X0 + (b * %lld + ch) * %lld;\n", T, C, H * W);
  cg_printf(c, "      for (long long ph = 0; ph < %lld; ph++)\n", oh);
  cg_printf(c, "        for (long long pw = 0; pw < %lld; pw++) {\n", ow);
  cg_printf(c, "          double acc = 0.0;\n");
  if (mx) cg_printf(c, "          int first = 1;\n");
  cg_printf(c, "          for (long long iy = 0; iy < gh; iy++) {\n");
  cg_printf(c,
            "            const double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / "
            "(double)gh;\n");
  cg_printf(c, "            for (long long ix = 0; ix < gw; ix++) {\n");
  cg_printf(c,
            "              const double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / "
            "(double)gw;\n");
  cg_printf(c, "              double v = 0.0;\n");
  cg_printf(c, "              if (yy >= -1.0 && yy <= %lld.0 && xx >= -1.0 && xx <= %lld.0) {\n", H,
            W);
  cg_printf(c, "                double py = fmax(yy, 0.0), px = fmax(xx, 0.0);\n");
  cg_printf(c, "                long long y0 = (long long)py, x0 = (long long)px, y1i, x1i;\n");
  cg_printf(c,
            "                if (y0 >= %lld) {\n                  y0 = y1i = %lld;\n"
            "                  py = (double)y0;\n                } else {\n"
            "                  y1i = y0 + 1;\n                }\n",
            H - 1, H - 1);
  cg_printf(c,
            "                if (x0 >= %lld) {\n                  x0 = x1i = %lld;\n"
            "                  px = (double)x0;\n                } else {\n"
            "                  x1i = x0 + 1;\n                }\n",
            W - 1, W - 1);
  cg_printf(c,
            "                const double ly = py - (double)y0, lx = px - (double)x0, hy = 1.0 - "
            "ly, hx = 1.0 - lx;\n");
  cg_printf(c,
            "                const double w1 = hy * hx * (double)xc[y0 * %lld + x0], w2 = hy * lx "
            "* (double)xc[y0 * %lld + x1i];\n",
            W, W);
  cg_printf(c,
            "                const double w3 = ly * hx * (double)xc[y1i * %lld + x0], w4 = ly * lx "
            "* (double)xc[y1i * %lld + x1i];\n",
            W, W);
  if (mx)
    cg_printf(c, "                v = fmax(fmax(w1, w2), fmax(w3, w4));\n");
  else
    cg_printf(c, "                v = w1 + w2 + w3 + w4;\n");
  cg_printf(c, "              }\n");
  if (mx)
    cg_printf(c, "              acc = first ? v : fmax(acc, v);\n              first = 0;\n");
  else
    cg_printf(c, "              acc += v;\n");
  cg_printf(c, "            }\n          }\n");
  cg_printf(c, "          Y0[((r * %lld + ch) * %lld + ph) * %lld + pw] = (%s)(%s);\n", C, oh, ow,
            T, mx ? "acc" : "acc / count");
  cg_printf(c, "        }\n    }\n  }\n");
  return OX_OK;
}

/* ---------------------------------------------------------------- MaxUnpool */

/* Y = zeros with X[i] at the flat index I[i] of the shape the pooling input
 * had (from the attributes); the static output shape (output_shape's, when
 * given) crops or enlarges that placement. An index out of range, an error
 * in the runtime, is skipped. */
static int gen_maxunpool(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *I = in[1], *Y = out[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (I->dtype != OX_INT64 || I->numel != X->numel || X->rank < 3 || Y->rank != X->rank)
    return cg_fail(c, OX_EMODEL, "X must have rank >= 3 and I be int64 of X's shape");
  size_t nd = X->rank - 2;
  int64_t k[CG_MAX_RANK], st[CG_MAX_RANK], pads[2 * CG_MAX_RANK];
  size_t nk = 0, ns = 0, np = 0;
  if (!cg_attr_ints(n, "kernel_shape", k, CG_MAX_RANK, &nk) || nk != nd)
    return cg_fail(c, OX_EMODEL, "kernel_shape must have %zu values", nd);
  if (cg_attr_ints(n, "strides", st, CG_MAX_RANK, &ns) && ns != nd)
    return cg_fail(c, OX_EMODEL, "strides must have %zu values", nd);
  if (cg_attr_ints(n, "pads", pads, 2 * CG_MAX_RANK, &np) && np != 2 * nd)
    return cg_fail(c, OX_EMODEL, "pads must have %zu values", 2 * nd);
  int64_t idims[CG_MAX_RANK], itotal = 1;
  idims[0] = X->dims[0];
  idims[1] = X->dims[1];
  for (size_t d = 0; d < nd; d++)
    idims[2 + d] =
        (X->dims[2 + d] - 1) * (ns ? st[d] : 1) + k[d] - (np ? pads[d] + pads[nd + d] : 0);
  for (size_t d = 0; d < X->rank; d++) {
    if (idims[d] <= 0) return cg_fail(c, OX_EMODEL, "the unpooled shape is empty");
    itotal *= idims[d];
  }
  cg_printf(c, "  memset(Y0, 0, %zu);\n", Y->nbytes);
  if (!Y->numel) return OX_OK;
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", (long long)X->numel);
  cg_printf(c, "    long long t = X1[i], lin = 0, cd;\n");
  cg_printf(c, "    if (t < 0 || t >= %lldLL) continue; /* out of range */\n", (long long)itotal);
  cg_printf(c, "    int inside = 1;\n");
  long long mul = 1;
  for (size_t d = X->rank; d-- > 0;) {
    cg_printf(c, "    cd = t %% %lld;\n    t /= %lld;\n", (long long)idims[d], (long long)idims[d]);
    cg_printf(c, "    if (cd >= %lld) inside = 0;\n    lin += cd * %lld;\n", (long long)Y->dims[d],
              mul);
    mul *= (long long)Y->dims[d];
  }
  cg_printf(c, "    if (inside) Y0[lin] = X0[i];\n  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_image[] = {
    {"GridSample", gen_gridsample}, {"AffineGrid", gen_affinegrid}, {"Col2Im", gen_col2im},
    {"RoiAlign", gen_roialign},     {"MaxUnpool", gen_maxunpool},   {NULL, NULL},
};
