/* infer_ops2.c - shape functions of the less common operators: signal,
 * strings, image, ROI and sampling ops, losses, attention, Einsum, the
 * ai.onnx.ml domain and the training optimizers. */
#include <stdio.h>
#include <string.h>

#include "infer_impl.h"

static int32_t el0(ox_ictx *c) { return ix_elem(c, 0); }

static ox_dim *dims_new(ox_ictx *c, size_t n) { return ox_arena_calloc(c->a, n ? n : 1, sizeof(ox_dim)); }

/* scalar or 1-element integer input i, if known */
static bool scalar_int(ox_ictx *c, size_t i, int64_t *v) {
  int64_t *p;
  size_t n;
  if (!ix_const_ints(c, i, &p, &n) || n != 1) return false;
  *v = p[0];
  return true;
}

static ox_dim maybe(ox_ictx *c, size_t i) {
  int64_t v;
  return scalar_int(c, i, &v) ? ox_dim_known(v) : ox_dim_unknown();
}

static int same_shape_as(ox_ictx *c, size_t out, size_t in, int32_t el) {
  const ox_dim *d;
  size_t r;
  if (ix_shape(c, in, &d, &r)) ix_set_tensor(c, out, el, d, (int64_t)r);
  else ix_set_tensor(c, out, el, NULL, -1);
  return OX_OK;
}

/* ------------------------------------------------------------ signal */

static int window(ox_ictx *c) {
  ox_dim n = maybe(c, 0);
  ix_set_tensor(c, 0, (int32_t)ix_attr_int(c, "output_datatype", OX_FLOAT), &n, 1);
  return OX_OK;
}

static int mel_weight(ox_ictx *c) {
  ox_dim d[2] = {ox_dim_unknown(), maybe(c, 0)};
  int64_t n;
  if (scalar_int(c, 1, &n)) d[0] = ox_dim_known(n / 2 + 1);
  ix_set_tensor(c, 0, (int32_t)ix_attr_int(c, "output_datatype", OX_FLOAT), d, 2);
  return OX_OK;
}

static int dft(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r) || r < 2) return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  int64_t axis = 1;
  if (c->since >= 20) {
    if (ix_has_input(c, 2) && !scalar_int(c, 2, &axis)) return ix_set_tensor(c, 0, el0(c), NULL, (int64_t)r), OX_OK;
    if (!ix_has_input(c, 2)) axis = -2;
  } else {
    axis = ix_attr_int(c, "axis", 1);
  }
  size_t ax;
  if (!ix_axis(axis, r, &ax) || ax == r - 1) return ix_fail(c, "axis %lld out of range", (long long)axis);
  int64_t len;
  bool onesided = ix_attr_int(c, "onesided", 0) != 0, inverse = ix_attr_int(c, "inverse", 0) != 0;
  if (ix_has_input(c, 1) && c->n_in > 1) {
    o[ax] = scalar_int(c, 1, &len) ? ox_dim_known(len) : ox_dim_unknown();
  } else if (onesided && inverse) {
    /* a half spectrum of n bins comes back as 2*(n-1) samples */
    o[ax] = ox_dim_mul(c->a, ox_dim_addc(c->a, o[ax], -1), ox_dim_known(2));
  }
  if (onesided && !inverse) o[ax] = ox_dim_addc(c->a, ox_dim_div(c->a, o[ax], ox_dim_known(2)), 1);
  o[r - 1] = ox_dim_known(onesided && inverse ? 1 : 2); /* an inverse one-sided DFT is real */
  ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  return OX_OK;
}

static int stft(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  ox_dim o[4] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown(), ox_dim_known(2)};
  int64_t step, flen = -1;
  const ox_dim *w;
  size_t wr;
  if (ix_has_input(c, 3)) scalar_int(c, 3, &flen);
  if (flen < 0 && ix_has_input(c, 2) && ix_shape(c, 2, &w, &wr) && wr == 1 && w[0].has_value) flen = w[0].value;
  if (ix_shape(c, 0, &x, &r) && r == 3) {
    o[0] = x[0];
    if (flen > 0 && scalar_int(c, 1, &step) && step > 0)
      o[1] = ox_dim_addc(c->a, ox_dim_div(c->a, ox_dim_addc(c->a, x[1], -flen), ox_dim_known(step)), 1);
  }
  if (flen > 0) o[2] = ox_dim_known(ix_attr_int(c, "onesided", 1) ? flen / 2 + 1 : flen);
  ix_set_tensor(c, 0, el0(c), o, 4);
  return OX_OK;
}

/* ------------------------------------------------------------ strings, image */

static int regex(ox_ictx *c) { return same_shape_as(c, 0, 0, OX_BOOL); }

static int string_concat(ox_ictx *c) {
  ox_dim *d;
  size_t r;
  if (ix_broadcast(c, 0, 2, &d, &r)) ix_set_tensor(c, 0, OX_STRING, d, (int64_t)r);
  else ix_set_tensor(c, 0, OX_STRING, NULL, -1);
  return OX_OK;
}

static int string_normalizer(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, OX_STRING, NULL, -1), OX_OK;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  const ox_attr *sw = ix_attr(c, "stopwords");
  if (r >= 1 && sw && sw->n_strings) o[r - 1] = ox_dim_unknown();
  ix_set_tensor(c, 0, OX_STRING, o, (int64_t)r);
  return OX_OK;
}

static int string_split(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) {
    ix_set_tensor(c, 0, OX_STRING, NULL, -1);
    ix_set_tensor(c, 1, OX_INT64, NULL, -1);
    return OX_OK;
  }
  ox_dim *o = dims_new(c, r + 1);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  o[r] = ox_dim_unknown();
  ix_set_tensor(c, 0, OX_STRING, o, (int64_t)r + 1);
  ix_set_tensor(c, 1, OX_INT64, x, (int64_t)r);
  return OX_OK;
}

static int tfidf(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const int64_t *idx;
  size_t n;
  ox_dim len = ox_dim_unknown();
  if (ix_attr_ints(c, "ngram_indexes", &idx, &n)) {
    int64_t mx = -1;
    for (size_t k = 0; k < n; k++) mx = idx[k] > mx ? idx[k] : mx;
    len = ox_dim_known(mx + 1);
  }
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  if (r == 1) ix_set_tensor(c, 0, OX_FLOAT, &len, 1);
  else if (r == 2) {
    ox_dim o[2] = {x[0], len};
    ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  } else {
    return ix_fail(c, "input must be 1-D or 2-D, got rank %zu", r);
  }
  return OX_OK;
}

static int image_decoder(ox_ictx *c) {
  const ox_attr *pf = ix_attr(c, "pixel_format");
  const char *f = pf && pf->s.data ? (const char *)pf->s.data : "RGB";
  ox_dim o[3] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_known(strcmp(f, "Grayscale") == 0 ? 1 : 3)};
  ix_set_tensor(c, 0, OX_UINT8, o, 3);
  return OX_OK;
}

/* ------------------------------------------------------------ sampling, ROI */

static int affine_grid(ox_ictx *c) {
  const ox_dim *th;
  size_t tr;
  size_t n;
  bool kr;
  const ox_dimv *sz = c->in_data[1];
  int64_t *sv = NULL;
  bool have = ix_const_ints(c, 1, &sv, &n);
  (void)sz;
  (void)kr;
  int32_t el = el0(c);
  if (!have) {
    const ox_dim *s;
    size_t sr;
    if (ix_shape(c, 1, &s, &sr) && sr == 1 && s[0].has_value && (s[0].value == 4 || s[0].value == 5)) {
      size_t nd = (size_t)s[0].value - 2;
      ox_dim *o = dims_new(c, nd + 2);
      if (!o) return OX_ENOMEM;
      if (ix_shape(c, 0, &th, &tr) && tr == 3) o[0] = th[0];
      o[nd + 1] = ox_dim_known((int64_t)nd);
      ix_set_tensor(c, 0, el, o, (int64_t)nd + 2);
    } else {
      ix_set_tensor(c, 0, el, NULL, -1);
    }
    return OX_OK;
  }
  if (n != 4 && n != 5) return ix_fail(c, "size must have 4 or 5 values, got %zu", n);
  size_t nd = n - 2;
  ox_dim *o = dims_new(c, nd + 2);
  if (!o) return OX_ENOMEM;
  o[0] = ox_dim_known(sv[0]);
  for (size_t k = 0; k < nd; k++) o[1 + k] = ox_dim_known(sv[2 + k]);
  o[nd + 1] = ox_dim_known((int64_t)nd);
  ix_set_tensor(c, 0, el, o, (int64_t)nd + 2);
  return OX_OK;
}

static int grid_sample(ox_ictx *c) {
  const ox_dim *x, *g;
  size_t r, gr;
  if (!ix_shape(c, 0, &x, &r) || !ix_shape(c, 1, &g, &gr) || r < 3 || gr != r)
    return ix_set_tensor(c, 0, el0(c), NULL, ix_shape(c, 0, &x, &r) ? (int64_t)r : -1), OX_OK;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = x[1];
  for (size_t k = 2; k < r; k++) o[k] = g[k - 1];
  ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  return OX_OK;
}

static int roi_align(ox_ictx *c) {
  const ox_dim *x, *rois;
  size_t r, rr;
  ox_dim o[4] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_known(ix_attr_int(c, "output_height", 1)),
                 ox_dim_known(ix_attr_int(c, "output_width", 1))};
  if (ix_shape(c, 1, &rois, &rr) && rr == 2) o[0] = rois[0];
  if (ix_shape(c, 0, &x, &r) && r == 4) o[1] = x[1];
  ix_set_tensor(c, 0, el0(c), o, 4);
  return OX_OK;
}

static int max_roi_pool(ox_ictx *c) {
  const ox_dim *x, *rois;
  size_t r, rr;
  const int64_t *ps;
  size_t np;
  ox_dim o[4] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown()};
  if (ix_shape(c, 1, &rois, &rr) && rr == 2) o[0] = rois[0];
  if (ix_shape(c, 0, &x, &r) && r == 4) o[1] = x[1];
  if (ix_attr_ints(c, "pooled_shape", &ps, &np) && np == 2) o[2] = ox_dim_known(ps[0]), o[3] = ox_dim_known(ps[1]);
  ix_set_tensor(c, 0, el0(c), o, 4);
  return OX_OK;
}

static int nms(ox_ictx *c) {
  ox_dim o[2] = {ox_dim_unknown(), ox_dim_known(3)};
  ix_set_tensor(c, 0, OX_INT64, o, 2);
  return OX_OK;
}

static int max_unpool(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = el0(c);
  if (ix_has_input(c, 2)) {
    int64_t *v;
    size_t n;
    if (ix_const_ints(c, 2, &v, &n)) {
      ox_dim *o = dims_new(c, n);
      if (!o) return OX_ENOMEM;
      for (size_t k = 0; k < n; k++) o[k] = ox_dim_known(v[k]);
      ix_set_tensor(c, 0, el, o, (int64_t)n);
    } else {
      ix_set_tensor(c, 0, el, NULL, ix_shape(c, 0, &x, &r) ? (int64_t)r : -1);
    }
    return OX_OK;
  }
  if (!ix_shape(c, 0, &x, &r) || r < 3) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  const int64_t *ks, *st = NULL, *pd = NULL;
  size_t nk, nst = 0, npd = 0;
  if (!ix_attr_ints(c, "kernel_shape", &ks, &nk)) return ix_fail(c, "kernel_shape is required");
  ix_attr_ints(c, "strides", &st, &nst);
  ix_attr_ints(c, "pads", &pd, &npd);
  size_t ns = r - 2;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = x[1];
  for (size_t k = 0; k < ns; k++) {
    int64_t s = st && k < nst ? st[k] : 1, p = pd && npd == 2 * ns ? pd[k] + pd[k + ns] : 0;
    int64_t kk = k < nk ? ks[k] : 1;
    o[2 + k] = ox_dim_addc(c->a, ox_dim_mul(c->a, ox_dim_addc(c->a, x[2 + k], -1), ox_dim_known(s)), kk - p);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

static int col2im(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t *img, *blk;
  size_t ni, nb;
  int32_t el = el0(c);
  if (!ix_const_ints(c, 1, &img, &ni) || !ix_const_ints(c, 2, &blk, &nb) || ni != nb) {
    ix_set_tensor(c, 0, el, NULL, -1);
    return OX_OK;
  }
  ox_dim *o = dims_new(c, ni + 2);
  if (!o) return OX_ENOMEM;
  o[0] = o[1] = ox_dim_unknown();
  if (ix_shape(c, 0, &x, &r) && r == 3) {
    int64_t prod = 1;
    for (size_t k = 0; k < nb; k++) prod *= blk[k];
    o[0] = x[0];
    o[1] = prod > 0 ? ox_dim_div(c->a, x[1], ox_dim_known(prod)) : ox_dim_unknown();
  }
  for (size_t k = 0; k < ni; k++) o[2 + k] = ox_dim_known(img[k]);
  ix_set_tensor(c, 0, el, o, (int64_t)ni + 2);
  return OX_OK;
}

static int deform_conv(ox_ictx *c) {
  const ox_dim *x, *w, *off;
  size_t r, wr, orank;
  if (!ix_shape(c, 0, &x, &r) || r < 3) return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = ix_shape(c, 1, &w, &wr) && wr == r ? w[0] : ox_dim_unknown();
  /* the offset input already has the output's spatial shape */
  bool have_off = ix_shape(c, 2, &off, &orank) && orank == r;
  for (size_t k = 2; k < r; k++) o[k] = have_off ? off[k] : ox_dim_unknown();
  ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  return OX_OK;
}

/* ------------------------------------------------------------ tensor ops */

static int compress(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *ax = ix_attr(c, "axis");
  if (!ax) {
    ox_dim d = ox_dim_unknown();
    ix_set_tensor(c, 0, el0(c), &d, 1);
    return OX_OK;
  }
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  size_t a;
  if (!ix_axis(ax->i, r, &a)) return ix_fail(c, "axis out of range");
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  o[a] = ox_dim_unknown();
  ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  return OX_OK;
}

static int gather_nd(ox_ictx *c) {
  const ox_dim *x, *ind;
  size_t r, q;
  if (!ix_shape(c, 0, &x, &r) || !ix_shape(c, 1, &ind, &q) || q == 0 || !ind[q - 1].has_value)
    return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  int64_t b = ix_attr_int(c, "batch_dims", 0), k = ind[q - 1].value;
  if (b < 0 || (size_t)(b + k) > r) return ix_fail(c, "indices last dim %lld too large", (long long)k);
  size_t R = q - 1 + r - (size_t)(b + k);
  ox_dim *o = dims_new(c, R);
  if (!o) return OX_ENOMEM;
  size_t j = 0;
  for (size_t i = 0; i + 1 < q; i++) o[j++] = ind[i];
  for (size_t i = (size_t)(b + k); i < r; i++) o[j++] = x[i];
  ix_set_tensor(c, 0, el0(c), o, (int64_t)R);
  return OX_OK;
}

static int center_crop_pad(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t *sv;
  size_t n;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  ox_dim *o = dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  const int64_t *axes = NULL;
  size_t na = 0;
  ix_attr_ints(c, "axes", &axes, &na);
  if (!ix_const_ints(c, 1, &sv, &n)) {
    for (size_t k = 0; k < r; k++)
      if (!axes) o[k] = ox_dim_unknown();
    if (axes)
      for (size_t k = 0; k < na; k++) {
        size_t a;
        if (ix_axis(axes[k], r, &a)) o[a] = ox_dim_unknown();
      }
  } else {
    size_t cnt = axes ? na : r;
    if (n != cnt) return ix_fail(c, "shape has %zu values for %zu axes", n, cnt);
    for (size_t k = 0; k < cnt; k++) {
      size_t a = k;
      if (axes && !ix_axis(axes[k], r, &a)) return ix_fail(c, "axis out of range");
      o[a] = ox_dim_known(sv[k]);
    }
  }
  ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  return OX_OK;
}

static int unique(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *ax = ix_attr(c, "axis");
  ox_dim u = ox_dim_unknown();
  if (!ax) ix_set_tensor(c, 0, el0(c), &u, 1);
  else if (ix_shape(c, 0, &x, &r)) {
    size_t a;
    if (!ix_axis(ax->i, r, &a)) return ix_fail(c, "axis out of range");
    ox_dim *o = dims_new(c, r);
    if (!o) return OX_ENOMEM;
    if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
    o[a] = u;
    ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  } else {
    ix_set_tensor(c, 0, el0(c), NULL, -1);
  }
  ix_set_tensor(c, 1, OX_INT64, &u, 1);
  ox_dim inv = ox_dim_unknown();
  if (ix_shape(c, 0, &x, &r)) {
    if (!ax) {
      inv = ox_dim_known(1);
      for (size_t k = 0; k < r; k++) inv = ox_dim_mul(c->a, inv, x[k]);
    } else {
      size_t a;
      if (ix_axis(ax->i, r, &a)) inv = x[a];
    }
  }
  ix_set_tensor(c, 2, OX_INT64, &inv, 1);
  ix_set_tensor(c, 3, OX_INT64, &u, 1);
  return OX_OK;
}

static int bitcast(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t to = (int32_t)ix_attr_int(c, "to", 0);
  const ox_dtype_info *a = ox_dtype_get(el0(c)), *b = ox_dtype_get(to);
  if (!ix_shape(c, 0, &x, &r) || !a || !b || !a->bits || !b->bits) return ix_set_tensor(c, 0, to, NULL, -1), OX_OK;
  if (a->bits == b->bits) return ix_set_tensor(c, 0, to, x, (int64_t)r), OX_OK;
  if (a->bits > b->bits) {
    ox_dim *o = dims_new(c, r + 1);
    if (!o) return OX_ENOMEM;
    if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
    o[r] = ox_dim_known(a->bits / b->bits);
    ix_set_tensor(c, 0, to, o, (int64_t)r + 1);
  } else {
    if (r == 0) return ix_fail(c, "cannot cast a scalar to a wider type");
    ix_set_tensor(c, 0, to, x, (int64_t)r - 1);
  }
  return OX_OK;
}

static int tensor_scatter(ox_ictx *c) { return same_shape_as(c, 0, 0, el0(c)); }

static int swiglu(ox_ictx *c) { return same_shape_as(c, 0, 0, el0(c)); }

static int multinomial(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  ox_dim o[2] = {ox_dim_unknown(), ox_dim_known(ix_attr_int(c, "sample_size", 1))};
  if (ix_shape(c, 0, &x, &r) && r == 2) o[0] = x[0];
  ix_set_tensor(c, 0, (int32_t)ix_attr_int(c, "dtype", OX_INT32), o, 2);
  return OX_OK;
}

/* Einsum: output letters from the equation (explicit "->" or the implicit
 * alphabetical order of letters that appear once), with "..." broadcast. */
static int einsum(ox_ictx *c) {
  const ox_attr *eq = ix_attr(c, "equation");
  if (!eq || !eq->s.data) return ix_fail(c, "equation is required");
  const char *s = (const char *)eq->s.data;
  ox_dim letter[128];
  bool seen[128] = {false};
  int count[128] = {0};
  size_t ell_rank = 0;
  ox_dim *ell = NULL;
  const char *arrow = strstr(s, "->");
  size_t term = 0;
  const char *p = s;
  for (;;) {
    const char *end = p;
    while (*end && *end != ',' && (arrow ? end < arrow : true)) end++;
    const ox_dim *d = NULL;
    size_t r = 0;
    bool known = term < c->n_in && ix_shape(c, term, &d, &r);
    size_t nlet = 0;
    bool has_ell = false;
    for (const char *q = p; q < end; q++) {
      if (*q == '.') {
        has_ell = true;
        q += 2;
      } else if (*q != ' ') {
        nlet++;
      }
    }
    size_t er = known && r >= nlet ? r - nlet : 0;
    size_t pos = 0;
    for (const char *q = p; q < end; q++) {
      if (*q == ' ') continue;
      if (*q == '.') {
        if (known && has_ell) {
          if (er > ell_rank) {
            ox_dim *ne = dims_new(c, er);
            if (!ne) return OX_ENOMEM;
            for (size_t k = 0; k < er; k++) ne[k] = ox_dim_known(1);
            for (size_t k = 0; k < ell_rank; k++) ne[er - ell_rank + k] = ell[k];
            ell = ne;
            ell_rank = er;
          }
          for (size_t k = 0; k < er; k++) {
            ox_dim *t = &ell[ell_rank - er + k];
            if (ox_dim_is(t, 1)) *t = d[pos + k];
          }
        }
        pos += er;
        q += 2;
        continue;
      }
      unsigned char L = (unsigned char)*q;
      if (L >= 128) return ix_fail(c, "bad character in equation");
      count[L]++;
      if (known && pos < r && (!seen[L] || !letter[L].has_value)) letter[L] = d[pos];
      else if (!seen[L]) letter[L] = ox_dim_unknown();
      seen[L] = true;
      pos++;
    }
    term++;
    if (!*end || (arrow && end >= arrow)) break;
    p = end + 1;
  }
  ox_dim out[64];
  size_t n = 0;
  if (arrow) {
    for (const char *q = arrow + 2; *q && n < 64; q++) {
      if (*q == ' ') continue;
      if (*q == '.') {
        for (size_t k = 0; k < ell_rank && n < 64; k++) out[n++] = ell[k];
        q += 2;
        continue;
      }
      unsigned char L = (unsigned char)*q;
      out[n++] = L < 128 && seen[L] ? letter[L] : ox_dim_unknown();
    }
  } else {
    for (size_t k = 0; k < ell_rank && n < 64; k++) out[n++] = ell[k];
    for (int L = 0; L < 128 && n < 64; L++)
      if (seen[L] && count[L] == 1) out[n++] = letter[L];
  }
  ix_set_tensor(c, 0, el0(c), out, (int64_t)n);
  return OX_OK;
}

/* ------------------------------------------------------------ losses, attention */

static int nll_like(ox_ictx *c, size_t target) {
  const ox_attr *red = ix_attr(c, "reduction");
  const char *rd = red && red->s.data ? (const char *)red->s.data : "mean";
  const ox_dim *t;
  size_t r;
  if (strcmp(rd, "none") != 0) ix_set_tensor(c, 0, el0(c), NULL, 0);
  else if (ix_shape(c, target, &t, &r)) ix_set_tensor(c, 0, el0(c), t, (int64_t)r);
  else ix_set_tensor(c, 0, el0(c), NULL, -1);
  return OX_OK;
}

static int nll(ox_ictx *c) { return nll_like(c, 1); }

static int sce(ox_ictx *c) {
  nll_like(c, 1);
  if (c->n_out > 1) same_shape_as(c, 1, 0, el0(c));
  return OX_OK;
}

static int attention(ox_ictx *c) {
  const ox_dim *q, *k, *v;
  size_t qr, kr, vr;
  int32_t el = el0(c);
  bool hq = ix_shape(c, 0, &q, &qr), hk = ix_shape(c, 1, &k, &kr), hv = ix_shape(c, 2, &v, &vr);
  int64_t qh = ix_attr_int(c, "q_num_heads", 0), kvh = ix_attr_int(c, "kv_num_heads", 0);
  if (!hq || (qr != 3 && qr != 4)) {
    for (size_t o = 0; o < c->n_out; o++) ix_set_tensor(c, o, el, NULL, -1);
    return OX_OK;
  }
  ox_dim B = q[0], Sq = qr == 4 ? q[2] : q[1];
  ox_dim vhead = ox_dim_unknown(), khead = ox_dim_unknown(), Skv = ox_dim_unknown(), KH = ox_dim_unknown();
  if (hv) {
    if (vr == 4) vhead = v[3];
    else if (vr == 3 && kvh > 0) vhead = ox_dim_div(c->a, v[2], ox_dim_known(kvh));
  }
  if (hk) {
    if (kr == 4) khead = k[3], Skv = k[2], KH = k[1];
    else if (kr == 3) {
      Skv = k[1];
      if (kvh > 0) khead = ox_dim_div(c->a, k[2], ox_dim_known(kvh)), KH = ox_dim_known(kvh);
    }
  }
  ox_dim total = Skv;
  const ox_dim *pk;
  size_t pr;
  if (ix_has_input(c, 4) && ix_shape(c, 4, &pk, &pr) && pr == 4) total = ox_dim_add(c->a, pk[2], Skv);
  if (qr == 4) {
    ox_dim y[4] = {B, q[1], Sq, vhead};
    ix_set_tensor(c, 0, el, y, 4);
  } else {
    ox_dim y[3] = {B, Sq, qh > 0 ? ox_dim_mul(c->a, ox_dim_known(qh), vhead) : ox_dim_unknown()};
    ix_set_tensor(c, 0, el, y, 3);
  }
  if (c->n_out > 1) {
    ox_dim pkd[4] = {B, KH, total, khead};
    ix_set_tensor(c, 1, el, pkd, 4);
  }
  if (c->n_out > 2) {
    ox_dim pvd[4] = {B, KH, total, vhead};
    ix_set_tensor(c, 2, el, pvd, 4);
  }
  if (c->n_out > 3) {
    ox_dim qk[4] = {B, qr == 4 ? q[1] : (qh > 0 ? ox_dim_known(qh) : ox_dim_unknown()), Sq, total};
    ix_set_tensor(c, 3, el, qk, 4);
  }
  return OX_OK;
}

static int causal_conv_with_state(ox_ictx *c) {
  const ox_dim *x, *w;
  size_t r, wr;
  same_shape_as(c, 0, 0, el0(c));
  ox_dim st[3] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown()};
  if (ix_shape(c, 0, &x, &r) && r == 3) st[0] = x[0], st[1] = x[1];
  if (ix_shape(c, 1, &w, &wr) && wr == 3) st[2] = ox_dim_addc(c->a, w[2], -1);
  if (c->n_out > 1) ix_set_tensor(c, 1, el0(c), st, 3);
  return OX_OK;
}

static int linear_attention(ox_ictx *c) {
  const ox_dim *q, *k, *v;
  size_t qr, kr, vr;
  int64_t qh = ix_attr_int(c, "q_num_heads", 0), kvh = ix_attr_int(c, "kv_num_heads", 0);
  ox_dim B = ox_dim_unknown(), T = ox_dim_unknown(), dk = ox_dim_unknown(), dv = ox_dim_unknown();
  if (ix_shape(c, 0, &q, &qr) && qr == 3) B = q[0], T = q[1];
  if (kvh > 0 && ix_shape(c, 1, &k, &kr) && kr == 3) dk = ox_dim_div(c->a, k[2], ox_dim_known(kvh));
  if (kvh > 0 && ix_shape(c, 2, &v, &vr) && vr == 3) dv = ox_dim_div(c->a, v[2], ox_dim_known(kvh));
  ox_dim y[3] = {B, T, qh > 0 ? ox_dim_mul(c->a, ox_dim_known(qh), dv) : ox_dim_unknown()};
  ix_set_tensor(c, 0, el0(c), y, 3);
  if (c->n_out > 1) {
    ox_dim s[4] = {B, kvh > 0 ? ox_dim_known(kvh) : ox_dim_unknown(), dk, dv};
    int32_t sel = ix_has_input(c, 3) && ix_elem(c, 3) ? ix_elem(c, 3) : el0(c);
    ix_set_tensor(c, 1, sel, s, 4);
  }
  return OX_OK;
}

/* ------------------------------------------------------------ ai.onnx.ml */

static ox_dim batch_dim(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r) && r >= 1) return r == 1 ? ox_dim_known(1) : x[0];
  return ox_dim_unknown();
}

static int ml_same_float(ox_ictx *c) { return same_shape_as(c, 0, 0, OX_FLOAT); }
static int ml_same(ox_ictx *c) { return same_shape_as(c, 0, 0, el0(c)); }

static int array_feature_extractor(ox_ictx *c) {
  const ox_dim *x, *y;
  size_t r, yr;
  if (!ix_shape(c, 0, &x, &r) || r == 0) return ix_set_tensor(c, 0, el0(c), NULL, -1), OX_OK;
  ox_dim n = ox_dim_known(1);
  if (ix_shape(c, 1, &y, &yr))
    for (size_t k = 0; k < yr; k++) n = ox_dim_mul(c->a, n, y[k]);
  else
    n = ox_dim_unknown();
  ox_dim *o = dims_new(c, r == 1 ? 2 : r);
  if (!o) return OX_ENOMEM;
  if (r == 1) {
    o[0] = ox_dim_known(1);
    o[1] = n;
    ix_set_tensor(c, 0, el0(c), o, 2);
  } else {
    if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
    o[r - 1] = n;
    ix_set_tensor(c, 0, el0(c), o, (int64_t)r);
  }
  return OX_OK;
}

static int category_mapper(ox_ictx *c) {
  return same_shape_as(c, 0, 0, el0(c) == OX_STRING ? OX_INT64 : OX_STRING);
}

static int label_encoder(ox_ictx *c) {
  int32_t el = OX_UNDEFINED;
  const ox_attr *a;
  if ((a = ix_attr(c, "values_tensor")) && a->t) el = a->t->data_type;
  else if (ix_attr(c, "values_strings")) el = OX_STRING;
  else if (ix_attr(c, "values_int64s")) el = OX_INT64;
  else if (ix_attr(c, "values_floats")) el = OX_FLOAT;
  else if (c->since < 2) el = el0(c) == OX_STRING ? OX_INT64 : OX_STRING;
  return same_shape_as(c, 0, 0, el);
}

static int classifier(ox_ictx *c, ox_dim classes) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings");
  ox_dim n = batch_dim(c);
  ix_set_tensor(c, 0, ls && ls->n_strings ? OX_STRING : OX_INT64, &n, 1);
  ox_dim z[2] = {n, classes};
  ix_set_tensor(c, 1, OX_FLOAT, z, 2);
  return OX_OK;
}

static ox_dim n_labels(ox_ictx *c) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings"), *li = ix_attr(c, "classlabels_ints");
  if (ls && ls->n_strings) return ox_dim_known((int64_t)ls->n_strings);
  if (li && li->n_ints) return ox_dim_known((int64_t)li->n_ints);
  return ox_dim_unknown();
}

static int linear_classifier(ox_ictx *c) {
  ox_dim k = n_labels(c);
  if (k.has_value && k.value == 1) k = ox_dim_known(ix_attr_int(c, "multi_class", 0) ? 1 : 2);
  return classifier(c, k);
}

static int svm_classifier(ox_ictx *c) { return classifier(c, n_labels(c)); }
static int tree_classifier(ox_ictx *c) {
  ox_dim k = n_labels(c);
  if (k.has_value && k.value == 1) k = ox_dim_known(2);
  return classifier(c, k);
}

static int regressor(ox_ictx *c, const char *attr, int64_t dflt) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(ix_attr_int(c, attr, dflt))};
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int linear_regressor(ox_ictx *c) { return regressor(c, "targets", 1); }
static int tree_regressor(ox_ictx *c) { return regressor(c, "n_targets", 1); }
static int svm_regressor(ox_ictx *c) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(1)};
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int tree_ensemble(ox_ictx *c) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(ix_attr_int(c, "n_targets", 1))};
  ix_set_tensor(c, 0, el0(c), o, 2);
  return OX_OK;
}

static int one_hot_encoder(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *cs = ix_attr(c, "cats_strings"), *ci = ix_attr(c, "cats_int64s");
  ox_dim n = cs && cs->n_strings ? ox_dim_known((int64_t)cs->n_strings)
             : ci && ci->n_ints  ? ox_dim_known((int64_t)ci->n_ints)
                                 : ox_dim_unknown();
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  ox_dim *o = dims_new(c, r + 1);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  o[r] = n;
  ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)r + 1);
  return OX_OK;
}

static int feature_vectorizer(ox_ictx *c) {
  const int64_t *d;
  size_t n;
  ox_dim o[2] = {batch_dim(c), ox_dim_unknown()};
  if (ix_attr_ints(c, "inputdimensions", &d, &n)) {
    int64_t s = 0;
    for (size_t k = 0; k < n; k++) s += d[k];
    o[1] = ox_dim_known(s);
  }
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int dict_vectorizer(ox_ictx *c) {
  const ox_attr *s = ix_attr(c, "string_vocabulary"), *i = ix_attr(c, "int64_vocabulary");
  ox_dim o[2] = {ox_dim_known(1), s && s->n_strings ? ox_dim_known((int64_t)s->n_strings)
                                   : i && i->n_ints ? ox_dim_known((int64_t)i->n_ints)
                                                    : ox_dim_unknown()};
  int32_t el = OX_UNDEFINED;
  if (c->in[0] && c->in[0]->kind == OX_TYPE_MAP && c->in[0]->elem) el = c->in[0]->elem->elem_type;
  ix_set_tensor(c, 0, el, o, 2);
  return OX_OK;
}

static int cast_map(ox_ictx *c) {
  const ox_attr *ct = ix_attr(c, "cast_to");
  const char *to = ct && ct->s.data ? (const char *)ct->s.data : "TO_FLOAT";
  int32_t el = strcmp(to, "TO_STRING") == 0 ? OX_STRING : strcmp(to, "TO_INT64") == 0 ? OX_INT64 : OX_FLOAT;
  const ox_attr *mv = ix_attr(c, "map_form");
  const char *form = mv && mv->s.data ? (const char *)mv->s.data : "DENSE";
  ox_dim o[2] = {ox_dim_known(1), ox_dim_unknown()};
  if (strcmp(form, "SPARSE") == 0) o[1] = ox_dim_known(ix_attr_int(c, "max_map", 1));
  ix_set_tensor(c, 0, el, o, 2);
  return OX_OK;
}

static int zipmap(ox_ictx *c) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings");
  ox_type *v = ox_type_new_tensor(c->a, OX_FLOAT, NULL, 0);
  ox_type *m = ox_arena_alloc(c->a, sizeof *m), *s = ox_arena_alloc(c->a, sizeof *s);
  if (!v || !m || !s) return OX_ENOMEM;
  m->kind = OX_TYPE_MAP;
  m->elem_type = ls && ls->n_strings ? OX_STRING : OX_INT64;
  m->has_elem_type = true;
  m->elem = v;
  s->kind = OX_TYPE_SEQUENCE;
  s->elem = m;
  c->out[0] = s;
  return OX_OK;
}

/* ------------------------------------------------------------ training */

/* outputs are new values of inputs: optimizer inputs are R, T, then groups */
static int optimizer(ox_ictx *c) {
  size_t groups = strcmp(c->node->op_type, "Adam") == 0 ? 4 : 3; /* X, G, (V,) H */
  size_t n = c->n_in >= 2 ? (c->n_in - 2) / groups : 0;
  size_t out_groups = groups - 1; /* X_new, (V_new,) H_new */
  for (size_t o = 0; o < c->n_out; o++) {
    size_t g = o / (n ? n : 1), k = o % (n ? n : 1);
    size_t in_group = g == 0 ? 0 : g + 1; /* skip G */
    if (g >= out_groups) break;
    size_t in = 2 + in_group * n + k;
    if (in < c->n_in) ix_copy_type(c, o, in);
  }
  return OX_OK;
}

static int gradient(ox_ictx *c) {
  const ox_attr *xs = ix_attr(c, "xs");
  if (!xs) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < xs->n_strings; o++)
    for (size_t i = 0; i < c->n_in; i++)
      if (strcmp(c->node->input[i], (const char *)xs->strings[o].data) == 0) ix_copy_type(c, o, i);
  return OX_OK;
}

const ox_infer_def ox_infer_defs2[] = {
    {"", "HannWindow", 1, 1000, window},
    {"", "HammingWindow", 1, 1000, window},
    {"", "BlackmanWindow", 1, 1000, window},
    {"", "MelWeightMatrix", 1, 1000, mel_weight},
    {"", "DFT", 1, 1000, dft},
    {"", "STFT", 1, 1000, stft},
    {"", "RegexFullMatch", 1, 1000, regex},
    {"", "StringConcat", 1, 1000, string_concat},
    {"", "StringNormalizer", 1, 1000, string_normalizer},
    {"", "StringSplit", 1, 1000, string_split},
    {"", "TfIdfVectorizer", 1, 1000, tfidf},
    {"", "ImageDecoder", 1, 1000, image_decoder},
    {"", "AffineGrid", 1, 1000, affine_grid},
    {"", "GridSample", 1, 1000, grid_sample},
    {"", "RoiAlign", 1, 1000, roi_align},
    {"", "MaxRoiPool", 1, 1000, max_roi_pool},
    {"", "NonMaxSuppression", 1, 1000, nms},
    {"", "MaxUnpool", 1, 1000, max_unpool},
    {"", "Col2Im", 1, 1000, col2im},
    {"", "DeformConv", 1, 1000, deform_conv},
    {"", "Compress", 1, 1000, compress},
    {"", "GatherND", 1, 1000, gather_nd},
    {"", "CenterCropPad", 1, 1000, center_crop_pad},
    {"", "Unique", 1, 1000, unique},
    {"", "BitCast", 1, 1000, bitcast},
    {"", "TensorScatter", 1, 1000, tensor_scatter},
    {"", "SwiGLU", 1, 1000, swiglu},
    {"", "Multinomial", 1, 1000, multinomial},
    {"", "Einsum", 1, 1000, einsum},
    {"", "NegativeLogLikelihoodLoss", 1, 1000, nll},
    {"", "SoftmaxCrossEntropyLoss", 1, 1000, sce},
    {"", "Attention", 1, 1000, attention},
    {"", "CausalConvWithState", 1, 1000, causal_conv_with_state},
    {"", "LinearAttention", 1, 1000, linear_attention},
    {"ai.onnx.preview", "FlexAttention", 1, 1000, attention},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, 1000, array_feature_extractor},
    {"ai.onnx.ml", "CategoryMapper", 1, 1000, category_mapper},
    {"ai.onnx.ml", "LabelEncoder", 1, 1000, label_encoder},
    {"ai.onnx.ml", "Imputer", 1, 1000, ml_same},
    {"ai.onnx.ml", "Normalizer", 1, 1000, ml_same_float},
    {"ai.onnx.ml", "Scaler", 1, 1000, ml_same_float},
    {"ai.onnx.ml", "LinearClassifier", 1, 1000, linear_classifier},
    {"ai.onnx.ml", "SVMClassifier", 1, 1000, svm_classifier},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 1, 1000, tree_classifier},
    {"ai.onnx.ml", "LinearRegressor", 1, 1000, linear_regressor},
    {"ai.onnx.ml", "SVMRegressor", 1, 1000, svm_regressor},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 1, 1000, tree_regressor},
    {"ai.onnx.ml", "TreeEnsemble", 1, 1000, tree_ensemble},
    {"ai.onnx.ml", "OneHotEncoder", 1, 1000, one_hot_encoder},
    {"ai.onnx.ml", "FeatureVectorizer", 1, 1000, feature_vectorizer},
    {"ai.onnx.ml", "DictVectorizer", 1, 1000, dict_vectorizer},
    {"ai.onnx.ml", "CastMap", 1, 1000, cast_map},
    {"ai.onnx.ml", "ZipMap", 1, 1000, zipmap},
    {"ai.onnx.preview.training", "Adagrad", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Adam", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Momentum", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Gradient", 1, 1000, gradient},
    {NULL, NULL, 0, 0, NULL},
};
