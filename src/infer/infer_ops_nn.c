/* infer_ops_nn.c - shape functions of the neural-network operators:
 * MatMul, Gemm, Einsum, convolution and pooling, normalisation, reductions, Resize,
 * TopK, recurrent layers, quantization, random generators, sampling and ROI
 * operators, losses and attention. */
#include <string.h>

#include "infer_impl.h"

static int matmul(ox_ictx *c) {
  int32_t el = ix_elem(c, 0);
  if (strcmp(c->node->op_type, "MatMulInteger") == 0 ||
      strcmp(c->node->op_type, "QLinearMatMul") == 0)
    el = strcmp(c->node->op_type, "MatMulInteger") == 0 ? OX_INT32 : ix_elem(c, 7);
  return ix_matmul_shape(c, 0, strcmp(c->node->op_type, "QLinearMatMul") == 0 ? 3 : 1, el);
}

int ix_matmul_shape(ox_ictx *c, size_t ia, size_t ib, int32_t el) {
  const ox_dim *a, *b;
  size_t ra, rb;
  if (!ix_shape(c, ia, &a, &ra) || !ix_shape(c, ib, &b, &rb) || ra == 0 || rb == 0)
    return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, bo = ba > bb ? ba : bb;
  size_t R = bo + (ra >= 2) + (rb >= 2);
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < bo; k++) {
    const ox_dim *x = k + ba >= bo ? &a[k + ba - bo] : NULL,
                 *y = k + bb >= bo ? &b[k + bb - bo] : NULL;
    o[k] = !x ? *y : !y ? *x : ox_dim_is(x, 1) ? *y : ox_dim_is(y, 1) ? *x : x->has_value ? *x : *y;
  }
  size_t j = bo;
  if (ra >= 2) o[j++] = a[ra - 2];
  if (rb >= 2) o[j++] = b[rb - 1];
  ix_set_tensor(c, 0, el, o, (int64_t)R);
  return OX_OK;
}

static int gemm(ox_ictx *c) {
  const ox_dim *a, *b;
  size_t ra, rb;
  if (!ix_shape(c, 0, &a, &ra) || !ix_shape(c, 1, &b, &rb) || ra != 2 || rb != 2)
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, 2), OX_OK;
  bool ta = ix_attr_int(c, "transA", 0) != 0, tb = ix_attr_int(c, "transB", 0) != 0;
  ox_dim o[2] = {ta ? a[1] : a[0], tb ? b[0] : b[1]};
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 2);
  return OX_OK;
}

/* spatial output of conv/pool: floor or ceil((in + pads - dil*(k-1) - 1)/stride) + 1;
 * W (conv) is input wi, the output's element type el */
static int conv_pool_el(ox_ictx *c, bool is_conv, bool is_global, size_t wi, int32_t el) {
  const ox_dim *x;
  size_t r;
  const char *op = c->node->op_type;
  if (!ix_shape(c, 0, &x, &r) || r < 2) {
    ix_set_tensor(c, 0, el, NULL, -1);
    return OX_OK;
  }
  size_t ns = r - 2;
  ox_dim *o = ox_arena_calloc(c->a, r, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = x[1];
  if (is_global) {
    for (size_t k = 0; k < ns; k++) o[2 + k] = ox_dim_known(1);
    ix_set_tensor(c, 0, el, o, (int64_t)r);
    return OX_OK;
  }
  const ox_dim *w = NULL;
  size_t wr = 0;
  if (is_conv) {
    if (ix_shape(c, wi, &w, &wr) && wr == r)
      o[1] = w[0];
    else
      o[1] = ox_dim_unknown();
  }
  const int64_t *ks = NULL, *st = NULL, *pd = NULL, *dl = NULL;
  size_t nk = 0, nst = 0, npd = 0, ndl = 0;
  if (!ix_attr_ints(c, "kernel_shape", &ks, &nk)) {
    if (is_conv && w && wr == r)
      nk = 0;
    else {
      for (size_t k = 0; k < ns; k++) o[2 + k] = ox_dim_unknown();
      ix_set_tensor(c, 0, el, o, (int64_t)r); /* (no output slot: nothing is set) */
      return OX_OK;
    }
  }
  ix_attr_ints(c, "strides", &st, &nst);
  ix_attr_ints(c, "pads", &pd, &npd);
  ix_attr_ints(c, "dilations", &dl, &ndl);
  const ox_attr *ap = ix_attr(c, "auto_pad");
  const char *auto_pad = ap && ap->s.data ? (const char *)ap->s.data : "NOTSET";
  bool ceil_mode = ix_attr_int(c, "ceil_mode", 0) != 0;
  for (size_t k = 0; k < ns; k++) {
    ox_dim in = x[2 + k];
    int64_t kk;
    if (nk)
      kk = k < nk ? ks[k] : 1;
    else if (w && wr == r && w[2 + k].has_value)
      kk = w[2 + k].value; /* fuzz_check: an empty
                              kernel_shape, no W */
    else {
      o[2 + k] = ox_dim_unknown();
      continue;
    }
    int64_t s = st && k < nst ? st[k] : 1, di = dl && k < ndl ? dl[k] : 1;
    if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
      o[2 + k] = ox_dim_ceildiv(c->a, in, ox_dim_known(s));
      continue;
    }
    /* in + pads - (di * (kk - 1) + 1), each step checked: huge kernels,
     * dilations or pads give an unknown dim */
    int64_t ek, pads = 0, off;
    bool ok = ix_sub_i64(kk, 1, &ek) && ox_mul_i64(di, ek, &ek) && ox_add_i64(ek, 1, &ek);
    if (ok && strcmp(auto_pad, "VALID") != 0 && pd && npd == 2 * ns)
      ok = ox_add_i64(pd[k], pd[k + ns], &pads);
    if (!ok || !ix_sub_i64(pads, ek, &off)) {
      o[2 + k] = ox_dim_unknown();
      continue;
    }
    ox_dim num = ox_dim_addc(c->a, in, off);
    ox_dim q = ceil_mode ? ox_dim_ceildiv(c->a, num, ox_dim_known(s))
                         : ox_dim_div(c->a, num, ox_dim_known(s));
    ox_dim res = ox_dim_addc(c->a, q, 1);
    if (ceil_mode && res.has_value && in.has_value) {
      /* the last window must start inside the input or left padding */
      int64_t pl = pd && npd == 2 * ns ? pd[k] : 0, start, end;
      if (!ox_mul_i64(res.value - 1, s, &start) || !ox_add_i64(in.value, pl, &end))
        res = ox_dim_unknown();
      else if (start >= end)
        res.value--;
    }
    o[2 + k] = res;
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  if (c->n_out > 1 && strcmp(op, "MaxPool") == 0) ix_set_tensor(c, 1, OX_INT64, o, (int64_t)r);
  return OX_OK;
}

static int conv_pool(ox_ictx *c, bool is_conv, bool is_global) {
  int32_t el = ix_elem(c, 0);
  const char *op = c->node->op_type;
  if (strcmp(op, "ConvInteger") == 0) el = OX_INT32;
  if (strcmp(op, "QLinearConv") == 0) el = ix_elem(c, 7);
  return conv_pool_el(c, is_conv, is_global, strcmp(op, "QLinearConv") == 0 ? 3 : 1, el);
}

int ix_conv_shape(ox_ictx *c, size_t wi, int32_t el) {
  return conv_pool_el(c, true, false, wi, el);
}

static int conv(ox_ictx *c) { return conv_pool(c, true, false); }

static int pool(ox_ictx *c) { return conv_pool(c, false, false); }

static int global_pool(ox_ictx *c) { return conv_pool(c, false, true); }

static int conv_transpose(ox_ictx *c) {
  const ox_dim *x, *w;
  size_t r, wr;
  int32_t el = ix_elem(c, 0);
  if (!ix_shape(c, 0, &x, &r) || r < 2 || !ix_shape(c, 1, &w, &wr) || wr != r)
    return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t ns = r - 2;
  ox_dim *o = ox_arena_calloc(c->a, r, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  int64_t group = ix_attr_int(c, "group", 1);
  o[0] = x[0];
  o[1] = ox_dim_mul(c->a, w[1], ox_dim_known(group));
  const int64_t *ks = NULL, *st = NULL, *pd = NULL, *dl = NULL, *op = NULL, *os = NULL;
  size_t nk = 0, nst = 0, npd = 0, ndl = 0, nop = 0, nos = 0;
  ix_attr_ints(c, "kernel_shape", &ks, &nk);
  ix_attr_ints(c, "strides", &st, &nst);
  ix_attr_ints(c, "pads", &pd, &npd);
  ix_attr_ints(c, "dilations", &dl, &ndl);
  ix_attr_ints(c, "output_padding", &op, &nop);
  bool has_os = ix_attr_ints(c, "output_shape", &os, &nos);
  const ox_attr *ap = ix_attr(c, "auto_pad");
  const char *auto_pad = ap && ap->s.data ? (const char *)ap->s.data : "NOTSET";
  for (size_t k = 0; k < ns; k++) {
    if (has_os) { /* output_shape lists the spatial dims, or all of them */
      o[2 + k] = nos >= ns ? ox_dim_nonneg(os[nos - ns + k]) : ox_dim_unknown();
      continue;
    }
    int64_t kk = ks && k < nk ? ks[k] : (w[2 + k].has_value ? w[2 + k].value : -1);
    if (kk < 0) {
      o[2 + k] = ox_dim_unknown();
      continue;
    }
    int64_t s = st && k < nst ? st[k] : 1, di = dl && k < ndl ? dl[k] : 1;
    int64_t opad = op && k < nop ? op[k] : 0;
    if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
      o[2 + k] = ox_dim_mul(c->a, x[2 + k], ox_dim_known(s));
      continue;
    }
    /* (x - 1) * s + opad + (kk - 1) * di + 1 - pads, each step checked */
    int64_t pads = 0, ext;
    bool ok = true;
    if (pd && npd == 2 * ns && strcmp(auto_pad, "VALID") != 0)
      ok = ox_add_i64(pd[k], pd[k + ns], &pads);
    ok = ok && ox_mul_i64(kk - 1, di, &ext) && ox_add_i64(ext, opad, &ext) &&
         ox_add_i64(ext, 1, &ext) && ix_sub_i64(ext, pads, &ext);
    ox_dim t = ox_dim_mul(c->a, ox_dim_addc(c->a, x[2 + k], -1), ox_dim_known(s));
    o[2 + k] = ok ? ox_dim_addc(c->a, t, ext) : ox_dim_unknown();
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

static int batchnorm(ox_ictx *c) {
  ix_same_as_input0(c);
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r) && r >= 2)
    for (size_t o = 1; o < c->n_out; o++)
      ix_set_tensor(c, o, ix_elem(c, o + 2 < c->n_in ? o + 2 : 1), &x[1], 1);
  return OX_OK;
}

static int layernorm(ox_ictx *c) {
  ix_same_as_input0(c);
  const ox_dim *x;
  size_t r;
  if (c->n_out > 1 && ix_shape(c, 0, &x, &r)) {
    size_t ax;
    if (!ix_axis(ix_attr_int(c, "axis", -1), r, &ax)) return ix_fail(c, "axis out of range");
    ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
    if (!o) return OX_ENOMEM;
    for (size_t k = 0; k < r; k++) o[k] = k < ax ? x[k] : ox_dim_known(1);
    int32_t st = (int32_t)ix_attr_int(c, "stash_type", OX_FLOAT);
    for (size_t i = 1; i < c->n_out; i++) ix_set_tensor(c, i, st, o, (int64_t)r);
  }
  return OX_OK;
}

static int dropout(ox_ictx *c) {
  ix_same_as_input0(c);
  if (c->n_out > 1) {
    const ox_dim *x;
    size_t r;
    if (ix_shape(c, 0, &x, &r))
      ix_set_tensor(c, 1, c->since < 12 ? ix_elem(c, 0) : OX_BOOL, x, (int64_t)r);
    else
      ix_set_tensor(c, 1, c->since < 12 ? ix_elem(c, 0) : OX_BOOL, NULL, -1);
    if (c->since >= 10 && c->since < 12 && c->out[1]) c->out[1]->elem_type = OX_BOOL;
  }
  return OX_OK;
}

static int reduce(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = ix_elem(c, 0);
  const char *op = c->node->op_type;
  bool arg = strncmp(op, "Arg", 3) == 0;
  if (arg) el = OX_INT64;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  bool keep = ix_attr_int(c, "keepdims", 1) != 0;
  int64_t *axes = NULL;
  size_t na = 0;
  bool axes_input = !arg && (c->since >= 18 || (strcmp(op, "ReduceSum") == 0 && c->since >= 13));
  bool have;
  if (arg) {
    const ox_attr *a = ix_attr(c, "axis");
    int64_t *one = ox_arena_alloc(c->a, sizeof(int64_t));
    if (!one) return OX_ENOMEM;
    *one = a ? a->i : 0;
    axes = one;
    na = 1;
    have = true;
  } else if (axes_input) {
    have = ix_has_input(c, 1) ? ix_const_ints(c, 1, &axes, &na) : true;
    if (ix_has_input(c, 1) && !have)
      return ix_set_tensor(c, 0, el, NULL, keep ? (int64_t)r : -1), OX_OK;
  } else {
    const int64_t *a;
    have = true;
    if (ix_attr_ints(c, "axes", &a, &na)) axes = (int64_t *)a;
  }
  (void)have;
  bool *red = ox_arena_calloc(c->a, r ? r : 1, sizeof(bool));
  if (!red) return OX_ENOMEM;
  if (na == 0) {
    if (axes_input && ix_attr_int(c, "noop_with_empty_axes", 0)) return ix_same_as_input0(c);
    for (size_t k = 0; k < r; k++) red[k] = true;
  }
  for (size_t k = 0; k < na; k++) {
    size_t ax;
    if (!ix_axis(axes[k], r, &ax)) return ix_fail(c, "axis %lld out of range", (long long)axes[k]);
    red[ax] = true;
  }
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  size_t on = 0;
  for (size_t k = 0; k < r; k++) {
    if (!red[k])
      o[on++] = x[k];
    else if (keep)
      o[on++] = ox_dim_known(1);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)on);
  return OX_OK;
}

static bool tensor_floats(const ox_tensor *t, float **v, size_t *n, ox_arena *a) {
  int64_t cnt;
  if (!t || t->data_type != OX_FLOAT || !ox_numel(t->dims, t->n_dims, &cnt) || cnt > IX_MAXV)
    return false;
  float *out = ox_arena_calloc(a, (size_t)(cnt ? cnt : 1), sizeof(float));
  if (!out) return false;
  ox_bytes raw = ox_tensor_payload(t);
  if (raw.data) {
    if (raw.size != (size_t)cnt * 4) return false;
    memcpy(out, raw.data, raw.size);
  } else {
    if (t->n_float_data != (size_t)cnt) return false;
    if (cnt) memcpy(out, t->float_data, (size_t)cnt * 4);
  }
  *v = out;
  *n = (size_t)cnt;
  return true;
}

/* the axis of the k-th size or scale; false for an axis outside the rank */
static bool resize_axis(const int64_t *axes, size_t na, size_t k, size_t r, size_t *ax) {
  if (!na) return (*ax = k) < r;
  return ix_axis(axes[k], r, ax);
}

static int resize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = ix_elem(c, 0);
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  bool upsample = strcmp(c->node->op_type, "Upsample") == 0;
  size_t si = upsample ? 1 : (c->since >= 11 ? 2 : 1), zi = 3;
  float *sc = NULL;
  size_t ns = 0;
  int64_t *sz = NULL;
  size_t nz = 0;
  const int64_t *axes = NULL;
  size_t na = 0;
  ix_attr_ints(c, "axes", &axes, &na);
  if (upsample && c->since < 9) {
    const ox_attr *a = ix_attr(c, "scales");
    if (a) sc = a->floats, ns = a->n_floats;
  } else if (ix_has_input(c, si) && c->in_const[si]) {
    tensor_floats(c->in_const[si], &sc, &ns, c->a);
  }
  if (!upsample && c->since >= 11 && ix_has_input(c, zi)) ix_const_ints(c, zi, &sz, &nz);
  size_t n = na ? na : r;
  if (sz && nz == n) {
    for (size_t k = 0; k < r; k++) o[k] = x[k];
    const ox_attr *kp = ix_attr(c, "keep_aspect_ratio_policy");
    const char *pol = kp && kp->s.data ? (const char *)kp->s.data : "stretch";
    if (strcmp(pol, "stretch") != 0) {
      double scale = strcmp(pol, "not_larger") == 0 ? 1e300 : 0;
      for (size_t k = 0; k < n; k++) {
        size_t ax;
        if (!resize_axis(axes, na, k, r, &ax)) continue;
        if (!x[ax].has_value) return ix_set_tensor(c, 0, el, o, (int64_t)r), OX_OK;
        double s = (double)sz[k] / (double)x[ax].value;
        scale = strcmp(pol, "not_larger") == 0 ? (s < scale ? s : scale) : (s > scale ? s : scale);
      }
      for (size_t k = 0; k < n; k++) {
        size_t ax;
        if (resize_axis(axes, na, k, r, &ax))
          o[ax] = ox_dim_floor_f64((double)x[ax].value * scale + 0.5);
      }
    } else {
      for (size_t k = 0; k < n; k++) {
        size_t ax;
        if (resize_axis(axes, na, k, r, &ax)) o[ax] = ox_dim_nonneg(sz[k]);
      }
    }
  } else if (sc && ns == n) {
    for (size_t k = 0; k < r; k++) o[k] = x[k];
    for (size_t k = 0; k < n; k++) {
      size_t ax;
      if (!resize_axis(axes, na, k, r, &ax)) continue;
      /* a NaN, infinite, negative or huge scale gives no dim */
      o[ax] = x[ax].has_value ? ox_dim_floor_f64((double)x[ax].value * (double)sc[k])
                              : (sc[k] == 1.0f ? x[ax] : ox_dim_unknown());
    }
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

static int topk(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) {
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1);
    ix_set_tensor(c, 1, OX_INT64, NULL, -1);
    return OX_OK;
  }
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", -1), r, &ax)) return ix_fail(c, "axis out of range");
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < r; k++) o[k] = x[k];
  int64_t *kv;
  size_t nk;
  if (c->since < 10)
    o[ax] = ox_dim_nonneg(ix_attr_int(c, "k", 0));
  else if (ix_const_ints(c, 1, &kv, &nk) && nk == 1)
    o[ax] = ox_dim_nonneg(kv[0]);
  else
    o[ax] = ox_dim_unknown();
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  ix_set_tensor(c, 1, OX_INT64, o, (int64_t)r);
  return OX_OK;
}

static int rnn_common(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t hidden = ix_attr_int(c, "hidden_size", -1);
  const ox_attr *dirattr = ix_attr(c, "direction");
  const char *dir = dirattr && dirattr->s.data ? (const char *)dirattr->s.data : "forward";
  int64_t nd = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
  int64_t layout = ix_attr_int(c, "layout", 0);
  int32_t el = ix_elem(c, 0);
  ox_dim seq = ox_dim_unknown(), batch = ox_dim_unknown();
  if (ix_shape(c, 0, &x, &r) && r == 3) {
    seq = layout ? x[1] : x[0];
    batch = layout ? x[0] : x[1];
  }
  ox_dim hd = hidden > 0 ? ox_dim_known(hidden) : ox_dim_unknown();
  ox_dim y[4], h[3];
  if (layout) {
    y[0] = batch, y[1] = seq, y[2] = ox_dim_known(nd), y[3] = hd;
    h[0] = batch, h[1] = ox_dim_known(nd), h[2] = hd;
  } else {
    y[0] = seq, y[1] = ox_dim_known(nd), y[2] = batch, y[3] = hd;
    h[0] = ox_dim_known(nd), h[1] = batch, h[2] = hd;
  }
  if (c->n_out > 0) ix_set_tensor(c, 0, el, y, 4);
  for (size_t o = 1; o < c->n_out; o++) ix_set_tensor(c, o, el, h, 3);
  return OX_OK;
}

static int quantize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = OX_UINT8;
  if (ix_has_input(c, 2) && ix_elem(c, 2)) el = ix_elem(c, 2);
  int64_t od = ix_attr_int(c, "output_dtype", 0);
  if (od) el = (int32_t)od;
  if (ix_shape(c, 0, &x, &r))
    ix_set_tensor(c, 0, el, x, (int64_t)r);
  else
    ix_set_tensor(c, 0, el, NULL, -1);
  return OX_OK;
}

static int dequantize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = c->since >= 19 ? ix_elem(c, 1) : OX_FLOAT;
  int64_t od = ix_attr_int(c, "output_dtype", 0);
  if (od) el = (int32_t)od;
  if (ix_shape(c, 0, &x, &r))
    ix_set_tensor(c, 0, el, x, (int64_t)r);
  else
    ix_set_tensor(c, 0, el, NULL, -1);
  return OX_OK;
}

static int dyn_quant(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r))
    ix_set_tensor(c, 0, OX_UINT8, x, (int64_t)r);
  else
    ix_set_tensor(c, 0, OX_UINT8, NULL, -1);
  ix_set_tensor(c, 1, OX_FLOAT, NULL, 0);
  ix_set_tensor(c, 2, OX_UINT8, NULL, 0);
  return OX_OK;
}

static int like_random(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = (int32_t)ix_attr_int(c, "dtype", ix_elem(c, 0));
  if (ix_shape(c, 0, &x, &r))
    ix_set_tensor(c, 0, el, x, (int64_t)r);
  else
    ix_set_tensor(c, 0, el, NULL, -1);
  return OX_OK;
}

static int random_shape(ox_ictx *c) {
  const int64_t *s;
  size_t n;
  int32_t el = (int32_t)ix_attr_int(c, "dtype", OX_FLOAT);
  if (!ix_attr_ints(c, "shape", &s, &n)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  ox_dim *d = ox_arena_calloc(c->a, n ? n : 1, sizeof(ox_dim));
  if (!d) return OX_ENOMEM;
  for (size_t k = 0; k < n; k++) d[k] = ox_dim_known(s[k]);
  ix_set_tensor(c, 0, el, d, (int64_t)n);
  return OX_OK;
}

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
  int32_t el = ix_elem(c, 0);
  if (!have) {
    const ox_dim *s;
    size_t sr;
    if (ix_shape(c, 1, &s, &sr) && sr == 1 && s[0].has_value &&
        (s[0].value == 4 || s[0].value == 5)) {
      size_t nd = (size_t)s[0].value - 2;
      ox_dim *o = ix_dims_new(c, nd + 2);
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
  ox_dim *o = ix_dims_new(c, nd + 2);
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
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, ix_shape(c, 0, &x, &r) ? (int64_t)r : -1),
           OX_OK;
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = x[1];
  for (size_t k = 2; k < r; k++) o[k] = g[k - 1];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

static int roi_align(ox_ictx *c) {
  const ox_dim *x, *rois;
  size_t r, rr;
  ox_dim o[4] = {ox_dim_unknown(), ox_dim_unknown(),
                 ox_dim_known(ix_attr_int(c, "output_height", 1)),
                 ox_dim_known(ix_attr_int(c, "output_width", 1))};
  if (ix_shape(c, 1, &rois, &rr) && rr == 2) o[0] = rois[0];
  if (ix_shape(c, 0, &x, &r) && r == 4) o[1] = x[1];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 4);
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
  if (ix_attr_ints(c, "pooled_shape", &ps, &np) && np == 2)
    o[2] = ox_dim_known(ps[0]), o[3] = ox_dim_known(ps[1]);
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 4);
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
  int32_t el = ix_elem(c, 0);
  if (ix_has_input(c, 2)) {
    int64_t *v;
    size_t n;
    if (ix_const_ints(c, 2, &v, &n)) {
      ox_dim *o = ix_dims_new(c, n);
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
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = x[1];
  for (size_t k = 0; k < ns; k++) {
    int64_t s = st && k < nst ? st[k] : 1, p = 0, kp;
    int64_t kk = k < nk ? ks[k] : 1;
    bool ok = !(pd && npd == 2 * ns) || ox_add_i64(pd[k], pd[k + ns], &p);
    if (!ok || !ix_sub_i64(kk, p, &kp)) { /* huge pads or kernel */
      o[2 + k] = ox_dim_unknown();
      continue;
    }
    o[2 + k] =
        ox_dim_addc(c->a, ox_dim_mul(c->a, ox_dim_addc(c->a, x[2 + k], -1), ox_dim_known(s)), kp);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

static int col2im(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t *img, *blk;
  size_t ni, nb;
  int32_t el = ix_elem(c, 0);
  if (!ix_const_ints(c, 1, &img, &ni) || !ix_const_ints(c, 2, &blk, &nb) || ni != nb) {
    ix_set_tensor(c, 0, el, NULL, -1);
    return OX_OK;
  }
  ox_dim *o = ix_dims_new(c, ni + 2);
  if (!o) return OX_ENOMEM;
  o[0] = o[1] = ox_dim_unknown();
  if (ix_shape(c, 0, &x, &r) && r == 3) {
    int64_t prod = 1;
    for (size_t k = 0; k < nb && prod > 0; k++)
      if (!ox_mul_i64(prod, blk[k], &prod)) prod = 0; /* too large: unknown below */
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
  if (!ix_shape(c, 0, &x, &r) || r < 3) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  o[0] = x[0];
  o[1] = ix_shape(c, 1, &w, &wr) && wr == r ? w[0] : ox_dim_unknown();
  /* the offset input already has the output's spatial shape */
  bool have_off = ix_shape(c, 2, &off, &orank) && orank == r;
  for (size_t k = 2; k < r; k++) o[k] = have_off ? off[k] : ox_dim_unknown();
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

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
            ox_dim *ne = ix_dims_new(c, er);
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
      if (known && pos < r && (!seen[L] || !letter[L].has_value))
        letter[L] = d[pos];
      else if (!seen[L])
        letter[L] = ox_dim_unknown();
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
  ix_set_tensor(c, 0, ix_elem(c, 0), out, (int64_t)n);
  return OX_OK;
}

static int nll_like(ox_ictx *c, size_t target) {
  const ox_attr *red = ix_attr(c, "reduction");
  const char *rd = red && red->s.data ? (const char *)red->s.data : "mean";
  const ox_dim *t;
  size_t r;
  if (strcmp(rd, "none") != 0)
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, 0);
  else if (ix_shape(c, target, &t, &r))
    ix_set_tensor(c, 0, ix_elem(c, 0), t, (int64_t)r);
  else
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1);
  return OX_OK;
}

static int nll(ox_ictx *c) { return nll_like(c, 1); }

static int sce(ox_ictx *c) {
  nll_like(c, 1);
  if (c->n_out > 1) ix_same_shape_as(c, 1, 0, ix_elem(c, 0));
  return OX_OK;
}

static int attention(ox_ictx *c) {
  const ox_dim *q, *k, *v;
  size_t qr, kr, vr;
  int32_t el = ix_elem(c, 0);
  bool hq = ix_shape(c, 0, &q, &qr), hk = ix_shape(c, 1, &k, &kr), hv = ix_shape(c, 2, &v, &vr);
  int64_t qh = ix_attr_int(c, "q_num_heads", 0), kvh = ix_attr_int(c, "kv_num_heads", 0);
  if (!hq || (qr != 3 && qr != 4)) {
    for (size_t o = 0; o < c->n_out; o++) ix_set_tensor(c, o, el, NULL, -1);
    return OX_OK;
  }
  ox_dim B = q[0], Sq = qr == 4 ? q[2] : q[1];
  ox_dim vhead = ox_dim_unknown(), khead = ox_dim_unknown(), Skv = ox_dim_unknown(),
         KH = ox_dim_unknown();
  if (hv) {
    if (vr == 4)
      vhead = v[3];
    else if (vr == 3 && kvh > 0)
      vhead = ox_dim_div(c->a, v[2], ox_dim_known(kvh));
  }
  if (hk) {
    if (kr == 4)
      khead = k[3], Skv = k[2], KH = k[1];
    else if (kr == 3) {
      Skv = k[1];
      if (kvh > 0) khead = ox_dim_div(c->a, k[2], ox_dim_known(kvh)), KH = ox_dim_known(kvh);
    }
  }
  ox_dim total = Skv;
  const ox_dim *pk;
  size_t pr;
  if (ix_has_input(c, 4) && ix_shape(c, 4, &pk, &pr) && pr == 4)
    total = ox_dim_add(c->a, pk[2], Skv);
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

/* FlexAttention: Attention's output, and its score_mod and prob_mod graphs
 * inferred with their input, the scores [B, Hq, L, S] in softmax_precision
 * (float for float16/bfloat16 and float, else Q's type), so that their
 * values get shapes (onnxc compile needs them static). */
static int flex_attention(ox_ictx *c) {
  int rc = attention(c);
  const ox_dim *q, *k;
  size_t qr, kr;
  int32_t el = ix_elem(c, 0);
  if (rc || !el || !ix_shape(c, 0, &q, &qr) || !ix_shape(c, 1, &k, &kr) || qr != 4 || kr != 4)
    return rc;
  int64_t sp = ix_attr_int(c, "softmax_precision", el == OX_DOUBLE ? OX_DOUBLE : OX_FLOAT);
  static const char *const mods[] = {"score_mod", "prob_mod"};
  for (size_t m = 0; m < 2; m++) {
    const ox_attr *a = ix_attr(c, mods[m]);
    if (!a || !a->g || a->g->n_input != 1) continue;
    ox_type *t = ox_type_new_tensor(c->a, (int32_t)sp, NULL, 4);
    if (!t) return OX_ENOMEM;
    t->shape->dim[0] = q[0], t->shape->dim[1] = q[1], t->shape->dim[2] = q[2];
    t->shape->dim[3] = k[2];
    const ox_type *it[1] = {t};
    size_t no;
    ix_subgraph(c, a->g, it, 1, &no);
  }
  return OX_OK;
}

static int causal_conv_with_state(ox_ictx *c) {
  const ox_dim *x, *w;
  size_t r, wr;
  ix_same_shape_as(c, 0, 0, ix_elem(c, 0));
  ox_dim st[3] = {ox_dim_unknown(), ox_dim_unknown(), ox_dim_unknown()};
  if (ix_shape(c, 0, &x, &r) && r == 3) st[0] = x[0], st[1] = x[1];
  if (ix_shape(c, 1, &w, &wr) && wr == 3) st[2] = ox_dim_addc(c->a, w[2], -1);
  if (c->n_out > 1) ix_set_tensor(c, 1, ix_elem(c, 0), st, 3);
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
  ix_set_tensor(c, 0, ix_elem(c, 0), y, 3);
  if (c->n_out > 1) {
    ox_dim s[4] = {B, kvh > 0 ? ox_dim_known(kvh) : ox_dim_unknown(), dk, dv};
    int32_t sel = ix_has_input(c, 3) && ix_elem(c, 3) ? ix_elem(c, 3) : ix_elem(c, 0);
    ix_set_tensor(c, 1, sel, s, 4);
  }
  return OX_OK;
}

const ox_infer_def ox_infer_defs_nn[] = {
    {"", "MatMul", 1, 1000, matmul},
    {"", "MatMulInteger", 1, 1000, matmul},
    {"", "QLinearMatMul", 1, 1000, matmul},
    {"", "Gemm", 1, 1000, gemm},
    {"", "Conv", 1, 1000, conv},
    {"", "ConvInteger", 1, 1000, conv},
    {"", "QLinearConv", 1, 1000, conv},
    {"", "ConvTranspose", 1, 1000, conv_transpose},
    {"", "MaxPool", 1, 1000, pool},
    {"", "AveragePool", 1, 1000, pool},
    {"", "LpPool", 1, 1000, pool},
    {"", "GlobalMaxPool", 1, 1000, global_pool},
    {"", "GlobalAveragePool", 1, 1000, global_pool},
    {"", "GlobalLpPool", 1, 1000, global_pool},
    {"", "BatchNormalization", 1, 1000, batchnorm},
    {"", "LayerNormalization", 1, 1000, layernorm},
    {"", "Dropout", 1, 1000, dropout},
    {"", "ReduceSum", 1, 1000, reduce},
    {"", "ReduceMean", 1, 1000, reduce},
    {"", "ReduceMax", 1, 1000, reduce},
    {"", "ReduceMin", 1, 1000, reduce},
    {"", "ReduceProd", 1, 1000, reduce},
    {"", "ReduceL1", 1, 1000, reduce},
    {"", "ReduceL2", 1, 1000, reduce},
    {"", "ReduceLogSum", 1, 1000, reduce},
    {"", "ReduceLogSumExp", 1, 1000, reduce},
    {"", "ReduceSumSquare", 1, 1000, reduce},
    {"", "ArgMax", 1, 1000, reduce},
    {"", "ArgMin", 1, 1000, reduce},
    {"", "Resize", 1, 1000, resize},
    {"", "Upsample", 1, 1000, resize},
    {"", "TopK", 1, 1000, topk},
    {"", "LSTM", 1, 1000, rnn_common},
    {"", "GRU", 1, 1000, rnn_common},
    {"", "RNN", 1, 1000, rnn_common},
    {"", "QuantizeLinear", 1, 1000, quantize},
    {"", "DequantizeLinear", 1, 1000, dequantize},
    {"", "DynamicQuantizeLinear", 1, 1000, dyn_quant},
    {"", "RandomUniformLike", 1, 1000, like_random},
    {"", "RandomNormalLike", 1, 1000, like_random},
    {"", "RandomUniform", 1, 1000, random_shape},
    {"", "RandomNormal", 1, 1000, random_shape},
    {"", "Bernoulli", 1, 1000, like_random},
    {"", "AffineGrid", 1, 1000, affine_grid},
    {"", "GridSample", 1, 1000, grid_sample},
    {"", "RoiAlign", 1, 1000, roi_align},
    {"", "MaxRoiPool", 1, 1000, max_roi_pool},
    {"", "NonMaxSuppression", 1, 1000, nms},
    {"", "MaxUnpool", 1, 1000, max_unpool},
    {"", "Col2Im", 1, 1000, col2im},
    {"", "DeformConv", 1, 1000, deform_conv},
    {"", "Multinomial", 1, 1000, multinomial},
    {"", "Einsum", 1, 1000, einsum},
    {"", "NegativeLogLikelihoodLoss", 1, 1000, nll},
    {"", "SoftmaxCrossEntropyLoss", 1, 1000, sce},
    {"", "Attention", 1, 1000, attention},
    {"", "CausalConvWithState", 1, 1000, causal_conv_with_state},
    {"", "LinearAttention", 1, 1000, linear_attention},
    {"ai.onnx.preview", "FlexAttention", 1, 1000, flex_attention},
    {NULL, NULL, 0, 0, NULL},
};
