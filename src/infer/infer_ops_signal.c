/* infer_ops_signal.c - shape functions of the signal operators (windows,
 * MelWeightMatrix, DFT, STFT), the string operators and ImageDecoder. */
#include <string.h>

#include "infer_impl.h"

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
  if (!ix_shape(c, 0, &x, &r) || r < 2) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  int64_t axis = 1;
  if (c->since >= 20) {
    if (ix_has_input(c, 2) && !scalar_int(c, 2, &axis))
      return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, (int64_t)r), OX_OK;
    if (!ix_has_input(c, 2)) axis = -2;
  } else {
    axis = ix_attr_int(c, "axis", 1);
  }
  size_t ax;
  if (!ix_axis(axis, r, &ax) || ax == r - 1)
    return ix_fail(c, "axis %lld out of range", (long long)axis);
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
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
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
  if (flen < 0 && ix_has_input(c, 2) && ix_shape(c, 2, &w, &wr) && wr == 1 && w[0].has_value)
    flen = w[0].value;
  if (ix_shape(c, 0, &x, &r) && r == 3) {
    o[0] = x[0];
    if (flen > 0 && scalar_int(c, 1, &step) && step > 0)
      o[1] = ox_dim_addc(c->a, ox_dim_div(c->a, ox_dim_addc(c->a, x[1], -flen), ox_dim_known(step)),
                         1);
  }
  if (flen > 0) o[2] = ox_dim_known(ix_attr_int(c, "onesided", 1) ? flen / 2 + 1 : flen);
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 4);
  return OX_OK;
}

static int regex(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, OX_BOOL); }

static int string_concat(ox_ictx *c) {
  ox_dim *d;
  size_t r;
  if (ix_broadcast(c, 0, 2, &d, &r))
    ix_set_tensor(c, 0, OX_STRING, d, (int64_t)r);
  else
    ix_set_tensor(c, 0, OX_STRING, NULL, -1);
  return OX_OK;
}

static int string_normalizer(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, OX_STRING, NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, r);
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
  ox_dim *o = ix_dims_new(c, r + 1);
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
  if (r == 1)
    ix_set_tensor(c, 0, OX_FLOAT, &len, 1);
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
  ox_dim o[3] = {ox_dim_unknown(), ox_dim_unknown(),
                 ox_dim_known(strcmp(f, "Grayscale") == 0 ? 1 : 3)};
  ix_set_tensor(c, 0, OX_UINT8, o, 3);
  return OX_OK;
}

const ox_infer_def ox_infer_defs_signal[] = {
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
    {NULL, NULL, 0, 0, NULL},
};
