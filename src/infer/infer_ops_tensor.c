/* infer_ops_tensor.c - shape functions of the operators that move or
 * reshape tensors (Shape, Reshape, Transpose, Squeeze, Concat, Gather, Slice,
 * Expand, Tile, Range, Split, Pad, DepthToSpace, OneHot, Compress, GatherND,
 * CenterCropPad, Unique, BitCast, ...), with data propagation for the
 * small integer tensors that carry shapes. */
#include <stdio.h>
#include <string.h>

#include "infer_impl.h"

/* a 1-D input whose length is known: its values are unknown symbols */
static ox_dim *shape_input(ox_ictx *c, size_t i, size_t *rank, bool *known_rank) {
  const ox_dimv *d = ix_dimv_of(c, i);
  if (d) {
    *rank = d->n;
    *known_rank = true;
    return d->d;
  }
  const ox_dim *dims;
  size_t r;
  *known_rank = false;
  if (ix_shape(c, i, &dims, &r) && r == 1 && dims[0].has_value && dims[0].value >= 0 &&
      dims[0].value <= IX_MAXV) {
    *rank = (size_t)dims[0].value;
    *known_rank = true;
    return ox_arena_calloc(c->a, *rank ? *rank : 1, sizeof(ox_dim));
  }
  return NULL;
}

/* The concrete shape of input i (all dims known) and its element count. */
static bool concrete(ox_ictx *c, size_t i, int64_t *dims, size_t *rank, int64_t *numel) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, i, &d, &r) || r > 16) return false;
  int64_t n = 1;
  for (size_t k = 0; k < r; k++) {
    if (!d[k].has_value || !ox_mul_i64(n, d[k].value, &n)) return false;
    dims[k] = d[k].value;
  }
  *rank = r;
  *numel = n;
  return true;
}

static int shape_op(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) {
    ix_set_tensor(c, 0, OX_INT64, NULL, 1);
    return OX_OK;
  }
  int64_t start = ix_attr_int(c, "start", 0), end = ix_attr_int(c, "end", (int64_t)r);
  int64_t R = (int64_t)r;
  if (start < 0) start += R;
  if (end < 0) end += R;
  if (start < 0) start = 0;
  if (end > R) end = R;
  if (start > R) start = R;
  int64_t n = end > start ? end - start : 0;
  ox_dim len = ox_dim_known(n);
  ix_set_tensor(c, 0, OX_INT64, &len, 1);
  ox_dimv *v = ix_dimv_new(c, (size_t)n);
  if (v) {
    for (int64_t k = 0; k < n; k++) v->d[k] = d[start + k];
    c->out_data[0] = v;
  }
  return OX_OK;
}

static int size_op(ox_ictx *c) {
  ix_set_tensor(c, 0, OX_INT64, NULL, 0);
  const ox_dim *d;
  size_t r;
  if (ix_shape(c, 0, &d, &r)) {
    ox_dim acc = ox_dim_known(1);
    for (size_t k = 0; k < r; k++) acc = ox_dim_mul(c->a, acc, d[k]);
    ox_dimv *v = ix_dimv_new(c, 1);
    if (v) {
      v->d[0] = acc;
      v->is_scalar = true;
      c->out_data[0] = v;
    }
  }
  return OX_OK;
}

static int reshape(ox_ictx *c) {
  int32_t el = ix_elem(c, 0);
  const int64_t *sv = NULL;
  size_t sn = 0;
  ox_dim *target;
  size_t tr = 0;
  bool known_rank = false;
  if (c->since < 5) {
    if (!ix_attr_ints(c, "shape", &sv, &sn)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
    target = ox_arena_calloc(c->a, sn ? sn : 1, sizeof(ox_dim));
    if (!target) return OX_ENOMEM;
    for (size_t k = 0; k < sn; k++) target[k] = ox_dim_known(sv[k]);
    tr = sn;
    known_rank = true;
  } else {
    target = shape_input(c, 1, &tr, &known_rank);
  }
  if (!known_rank) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  ox_dim *out = ox_arena_calloc(c->a, tr ? tr : 1, sizeof(ox_dim));
  if (!out) return OX_ENOMEM;
  bool allowzero = ix_attr_int(c, "allowzero", 0) != 0;
  const ox_dim *in;
  size_t ir;
  bool have_in = ix_shape(c, 0, &in, &ir);
  int64_t neg = -1;
  ox_dim prod = ox_dim_known(1);
  for (size_t k = 0; k < tr; k++) {
    const ox_dim *t = target ? &target[k] : NULL;
    if (t && t->has_value && t->value == -1) {
      if (neg >= 0) return ix_fail(c, "more than one -1 in the target shape");
      neg = (int64_t)k;
      continue;
    }
    if (t && t->has_value && t->value == 0 && !allowzero) {
      if (have_in && k < ir)
        out[k] = in[k];
      else
        out[k] = ox_dim_unknown();
    } else if (t) {
      out[k] = *t;
    }
    prod = ox_dim_mul(c->a, prod, out[k]);
  }
  if (neg >= 0) {
    ox_dim total = ox_dim_known(1);
    bool ok = have_in;
    if (have_in)
      for (size_t k = 0; k < ir; k++) total = ox_dim_mul(c->a, total, in[k]);
    if (ok && total.has_value && prod.has_value && prod.value > 0)
      out[neg] = ox_dim_known(total.value / prod.value);
    else if (ok && (total.has_value || total.param) && (prod.has_value || prod.param)) {
      /* cancel a common symbolic factor: total = prod * rest */
      out[neg] = ox_dim_div(c->a, total, prod);
      if (ox_dim_same(&total, &prod)) out[neg] = ox_dim_known(1);
      /* A*B*C / (A*B) style: if total's text starts with prod's text + '*', keep the rest */
      if (total.param && prod.param) {
        size_t L = strlen(prod.param);
        if (strncmp(total.param, prod.param, L) == 0 && total.param[L] == '*')
          out[neg] = ox_dim_sym(c->a, total.param + L + 1);
      } else if (total.param && prod.has_value) {
        /* symbolic total divided by a number: try to cancel a trailing "*k" factor */
        char suf[32];
        int sl = snprintf(suf, sizeof suf, "*%lld", (long long)prod.value);
        size_t TL = strlen(total.param);
        if (sl > 0 && TL > (size_t)sl && strcmp(total.param + TL - (size_t)sl, suf) == 0)
          out[neg] = ox_dim_sym(c->a, ox_arena_strndup(c->a, total.param, TL - (size_t)sl));
      }
    } else
      out[neg] = ox_dim_unknown();
  }
  ix_set_tensor(c, 0, el, out, (int64_t)tr);
  ix_pass_values(c);
  return OX_OK;
}

static int flatten(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, 2), OX_OK;
  int64_t axis = ix_attr_int(c, "axis", 1);
  if (axis < 0) axis += (int64_t)r;
  if (axis < 0 || axis > (int64_t)r) return ix_fail(c, "axis %lld out of range", (long long)axis);
  ox_dim o[2] = {ox_dim_known(1), ox_dim_known(1)};
  for (size_t k = 0; k < r; k++)
    o[(int64_t)k < axis ? 0 : 1] = ox_dim_mul(c->a, o[(int64_t)k < axis ? 0 : 1], d[k]);
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 2);
  ix_pass_values(c);
  return OX_OK;
}

static int transpose(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  const int64_t *perm = NULL;
  size_t np;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  if (ix_attr_ints(c, "perm", &perm, &np)) {
    if (np != r) return ix_fail(c, "perm has %zu entries for rank %zu", np, r);
    for (size_t k = 0; k < r; k++) {
      size_t p;
      if (!ix_axis(perm[k], r, &p))
        return ix_fail(c, "perm entry %lld out of range", (long long)perm[k]);
      o[k] = d[p];
    }
  } else {
    for (size_t k = 0; k < r; k++) o[k] = d[r - 1 - k];
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  const ox_dimv *v = ix_dimv_of(c, 0);
  int64_t idims[16], numel;
  size_t cr;
  if (v && concrete(c, 0, idims, &cr, &numel) && (size_t)numel == v->n && cr >= 1) {
    size_t p[16];
    int64_t istr[16], odims[16], idx[16] = {0};
    for (size_t k = 0; k < r; k++) {
      if (perm)
        ix_axis(perm[k], r, &p[k]);
      else
        p[k] = r - 1 - k;
      odims[k] = idims[p[k]];
    }
    istr[r - 1] = 1;
    for (size_t k = r - 1; k > 0; k--) istr[k - 1] = istr[k] * idims[k];
    ox_dimv *res = ix_dimv_new(c, v->n);
    if (!res) return OX_OK;
    for (int64_t f = 0; f < numel; f++) {
      int64_t src = 0;
      for (size_t k = 0; k < r; k++) src += idx[k] * istr[p[k]];
      res->d[f] = v->d[src];
      for (size_t k = r; k-- > 0;) {
        if (++idx[k] < odims[k]) break;
        idx[k] = 0;
      }
    }
    c->out_data[0] = res;
  }
  return OX_OK;
}

static bool get_axes(ox_ictx *c, size_t input, int64_t **axes, size_t *n) {
  const int64_t *av;
  if ((c->since < 13 || input == 0) && ix_attr_ints(c, "axes", &av, n)) {
    *axes = (int64_t *)av;
    return true;
  }
  if (input && ix_has_input(c, input)) return ix_const_ints(c, input, axes, n);
  return false;
}

static int squeeze(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int64_t *axes = NULL;
  size_t na = 0;
  bool have_axes = get_axes(c, c->since >= 13 ? 1 : 0, &axes, &na);
  if (c->since >= 13 && ix_has_input(c, 1) && !have_axes)
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  bool *drop = ox_arena_calloc(c->a, r ? r : 1, sizeof(bool));
  if (!drop) return OX_ENOMEM;
  if (have_axes) {
    for (size_t k = 0; k < na; k++) {
      size_t ax;
      if (!ix_axis(axes[k], r, &ax))
        return ix_fail(c, "axis %lld out of range", (long long)axes[k]);
      if (d[ax].has_value && d[ax].value != 1)
        return ix_fail(c, "cannot squeeze dim %zu of size %lld", ax, (long long)d[ax].value);
      drop[ax] = true;
    }
  } else {
    for (size_t k = 0; k < r; k++) {
      if (!d[k].has_value) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
      drop[k] = d[k].value == 1;
    }
  }
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  size_t on = 0;
  for (size_t k = 0; k < r; k++)
    if (!drop[k]) o[on++] = d[k];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)on);
  ix_pass_values(c);
  return OX_OK;
}

static int unsqueeze(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int64_t *axes = NULL;
  size_t na = 0;
  if (!get_axes(c, c->since >= 13 ? 1 : 0, &axes, &na) || !ix_shape(c, 0, &d, &r))
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  size_t R = r + na;
  bool *ins = ox_arena_calloc(c->a, R ? R : 1, sizeof(bool));
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!ins || !o) return OX_ENOMEM;
  for (size_t k = 0; k < na; k++) {
    size_t ax;
    if (!ix_axis(axes[k], R, &ax) || ins[ax])
      return ix_fail(c, "bad axis %lld", (long long)axes[k]);
    ins[ax] = true;
  }
  size_t j = 0;
  for (size_t k = 0; k < R; k++) o[k] = ins[k] ? ox_dim_known(1) : d[j++];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)R);
  ix_pass_values(c);
  return OX_OK;
}

static int concat(ox_ictx *c) {
  int32_t el = OX_UNDEFINED;
  size_t r = 0;
  bool known = true;
  for (size_t i = 0; i < c->n_in; i++) {
    const ox_dim *d;
    size_t ri;
    if (el == OX_UNDEFINED) el = ix_elem(c, i);
    if (!ix_shape(c, i, &d, &ri)) {
      known = false;
      continue;
    }
    r = ri;
  }
  if (!known && r == 0) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  int64_t axis = ix_attr_int(c, "axis", c->since < 4 ? 1 : 0);
  size_t ax;
  if (!ix_axis(axis, r, &ax))
    return ix_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < r; k++) {
    ox_dim acc = ox_dim_known(0);
    bool first = true;
    for (size_t i = 0; i < c->n_in; i++) {
      const ox_dim *d;
      size_t ri;
      if (!ix_shape(c, i, &d, &ri) || ri != r) {
        if (k == ax) acc = ox_dim_unknown();
        continue;
      }
      if (k == ax) {
        if (acc.has_value || acc.param) acc = ox_dim_add(c->a, acc, d[k]);
      } else if (first || (!o[k].has_value && d[k].has_value)) {
        o[k] = d[k];
      }
      first = false;
    }
    if (k == ax) o[k] = known ? acc : ox_dim_unknown();
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  /* propagate 1-D concatenations of shape vectors */
  if (r == 1) {
    size_t tot = 0;
    for (size_t i = 0; i < c->n_in; i++) {
      const ox_dimv *v = ix_dimv_of(c, i);
      if (!v) return OX_OK;
      tot += v->n;
    }
    if (tot > IX_MAXV) return OX_OK;
    ox_dimv *v = ix_dimv_new(c, tot);
    if (!v) return OX_OK;
    size_t j = 0;
    for (size_t i = 0; i < c->n_in; i++) {
      const ox_dimv *x = ix_dimv_of(c, i);
      for (size_t k = 0; k < x->n; k++) v->d[j++] = x->d[k];
    }
    c->out_data[0] = v;
  }
  return OX_OK;
}

static int gather(ox_ictx *c) {
  const ox_dim *d, *id;
  size_t r, ir;
  if (!ix_shape(c, 0, &d, &r) || !ix_shape(c, 1, &id, &ir))
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", 0), r, &ax)) return ix_fail(c, "axis out of range");
  size_t R = r - 1 + ir;
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  size_t j = 0;
  for (size_t k = 0; k < ax; k++) o[j++] = d[k];
  for (size_t k = 0; k < ir; k++) o[j++] = id[k];
  for (size_t k = ax + 1; k < r; k++) o[j++] = d[k];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)R);
  const ox_dimv *v = ix_dimv_of(c, 0);
  int64_t *idx;
  size_t ni;
  if (v && r == 1 && ix_const_ints(c, 1, &idx, &ni)) {
    ox_dimv *res = ix_dimv_new(c, ni);
    if (!res) return OX_OK;
    for (size_t k = 0; k < ni; k++) {
      int64_t q = idx[k] < 0 ? idx[k] + (int64_t)v->n : idx[k];
      if (q < 0 || q >= (int64_t)v->n) return OX_OK;
      res->d[k] = v->d[q];
    }
    res->is_scalar = ir == 0;
    c->out_data[0] = res;
  }
  return OX_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int slice(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int32_t el = ix_elem(c, 0);
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  int64_t *starts, *ends, *axes = NULL, *steps = NULL;
  size_t ns, ne, na = 0, nst = 0;
  bool ok;
  if (c->since < 10) {
    const int64_t *s1 = NULL, *e1 = NULL, *a1 = NULL;
    ok = ix_attr_ints(c, "starts", &s1, &ns) && ix_attr_ints(c, "ends", &e1, &ne);
    starts = (int64_t *)s1;
    ends = (int64_t *)e1;
    if (ix_attr_ints(c, "axes", &a1, &na)) axes = (int64_t *)a1;
  } else {
    ok = ix_const_ints(c, 1, &starts, &ns) && ix_const_ints(c, 2, &ends, &ne);
    if (ok && ix_has_input(c, 3)) ok = ix_const_ints(c, 3, &axes, &na);
    if (ok && ix_has_input(c, 4)) ok = ix_const_ints(c, 4, &steps, &nst);
  }
  if (!ok || ns != ne) return ix_set_tensor(c, 0, el, NULL, (int64_t)r), OX_OK;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  int64_t *lo = ox_arena_calloc(c->a, r ? r : 1, sizeof(int64_t));
  int64_t *st = ox_arena_calloc(c->a, r ? r : 1, sizeof(int64_t));
  if (!o || !lo || !st) return OX_ENOMEM;
  for (size_t k = 0; k < r; k++) o[k] = d[k], st[k] = 1;
  for (size_t k = 0; k < ns; k++) {
    size_t ax = k;
    if (axes && (na != ns || !ix_axis(axes[k], r, &ax))) return ix_fail(c, "bad axes");
    int64_t step = steps && k < nst ? steps[k] : 1;
    if (step == 0) return ix_fail(c, "step is 0");
    st[ax] = step;
    if (!d[ax].has_value) {
      o[ax] = ox_dim_unknown();
      /* starts 0, ends huge, step 1 keeps the symbol */
      if (starts[k] == 0 && step == 1 && ends[k] >= INT32_MAX) o[ax] = d[ax];
      continue;
    }
    int64_t n = d[ax].value, s = starts[k], e = ends[k];
    if (n < 0) { /* not a dim: s + n could overflow */
      o[ax] = ox_dim_unknown();
      continue;
    }
    if (s < 0) s += n;
    if (e < 0) e += n;
    /* ceil(len / |step|) as (len - 1) / |step| + 1: len + |step| - 1 may
     * overflow (steps near INT64_MAX), and -INT64_MIN does */
    if (step > 0) {
      s = clamp64(s, 0, n);
      e = clamp64(e, 0, n);
      o[ax] = ox_dim_known(e > s ? (e - s - 1) / step + 1 : 0);
    } else {
      s = clamp64(s, 0, n - 1);
      e = clamp64(e, -1, n - 1);
      int64_t mag = step == INT64_MIN ? INT64_MAX : -step;
      o[ax] = ox_dim_known(s > e ? (s - e - 1) / mag + 1 : 0);
    }
    lo[ax] = s;
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  const ox_dimv *v = ix_dimv_of(c, 0);
  int64_t idims[16], numel, on = 1;
  size_t cr;
  if (v && r >= 1 && concrete(c, 0, idims, &cr, &numel) && (size_t)numel == v->n) {
    int64_t istr[16], idx[16] = {0};
    for (size_t k = 0; k < r; k++) {
      if (!o[k].has_value) return OX_OK;
      on *= o[k].value;
    }
    istr[r - 1] = 1;
    for (size_t k = r - 1; k > 0; k--) istr[k - 1] = istr[k] * idims[k];
    ox_dimv *res = ix_dimv_new(c, (size_t)on);
    if (!res) return OX_OK;
    for (int64_t f = 0; f < on; f++) {
      int64_t src = 0;
      for (size_t k = 0; k < r; k++) src += (lo[k] + idx[k] * st[k]) * istr[k];
      if (src < 0 || src >= numel) return OX_OK;
      res->d[f] = v->d[src];
      for (size_t k = r; k-- > 0;) {
        if (++idx[k] < o[k].value) break;
        idx[k] = 0;
      }
    }
    c->out_data[0] = res;
  }
  return OX_OK;
}

static int constant_of_shape(ox_ictx *c) {
  const ox_attr *v = ix_attr(c, "value");
  int32_t el = v && v->t ? v->t->data_type : OX_FLOAT;
  size_t r;
  bool kr;
  ox_dim *d = shape_input(c, 0, &r, &kr);
  ix_set_tensor(c, 0, el, kr ? d : NULL, kr ? (int64_t)r : -1);
  if (!kr || (el != OX_INT64 && el != OX_INT32)) return OX_OK;
  int64_t n = 1;
  for (size_t k = 0; k < r; k++) {
    if (!d[k].has_value || d[k].value < 0 || !ox_mul_i64(n, d[k].value, &n) || n > IX_MAXV)
      return OX_OK;
  }
  int64_t val = 0;
  if (v && v->t) {
    ox_bytes raw = ox_tensor_payload(v->t);
    if (el == OX_INT64 && raw.data && raw.size == 8)
      memcpy(&val, raw.data, 8);
    else if (el == OX_INT64 && v->t->n_int64_data == 1)
      val = v->t->int64_data[0];
    else if (el == OX_INT32 && raw.data && raw.size == 4) {
      int32_t x;
      memcpy(&x, raw.data, 4);
      val = x;
    } else if (el == OX_INT32 && v->t->n_int32_data == 1)
      val = v->t->int32_data[0];
    else
      return OX_OK;
  }
  ox_dimv *res = ix_dimv_new(c, (size_t)n);
  if (!res) return OX_OK;
  for (int64_t k = 0; k < n; k++) res->d[k] = ox_dim_known(val);
  res->is_scalar = r == 0;
  c->out_data[0] = res;
  return OX_OK;
}

static int expand(ox_ictx *c) {
  size_t r;
  bool kr;
  ox_dim *t = shape_input(c, 1, &r, &kr);
  const ox_dim *d;
  size_t ir;
  if (!kr || !ix_shape(c, 0, &d, &ir)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  size_t R = r > ir ? r : ir;
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < R; k++) {
    const ox_dim *a = k + ir >= R ? &d[k + ir - R] : NULL;
    const ox_dim *b = k + r >= R ? &t[k + r - R] : NULL;
    if (!a)
      o[k] = *b;
    else if (!b)
      o[k] = *a;
    else if (ox_dim_is(a, 1))
      o[k] = *b;
    else if (ox_dim_is(b, 1))
      o[k] = *a;
    else if (a->has_value)
      o[k] = *a;
    else if (b->has_value)
      o[k] = *b;
    else
      o[k] = ox_dim_same(a, b) ? *a : ox_dim_unknown();
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)R);
  return OX_OK;
}

static int tile(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  int64_t *rep;
  size_t nr;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  if (ix_const_ints(c, 1, &rep, &nr) && nr == r) {
    for (size_t k = 0; k < r; k++) o[k] = ox_dim_mul(c->a, d[k], ox_dim_known(rep[k]));
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

static int range_op(ox_ictx *c) {
  int32_t el = ix_elem(c, 0);
  const ox_dimv *s = ix_dimv_of(c, 0), *l = ix_dimv_of(c, 1), *dl = ix_dimv_of(c, 2);
  ox_dim n = ox_dim_unknown();
  if (s && l && dl && s->n == 1 && l->n == 1 && dl->n == 1 && s->d[0].has_value &&
      l->d[0].has_value && dl->d[0].has_value && dl->d[0].value != 0) {
    int64_t a = s->d[0].value, b = l->d[0].value, st = dl->d[0].value;
    /* max(ceil((b - a) / st), 0); b - a beyond int64 (a count that big is no
     * dim anyway) leaves the count unknown */
    int64_t len, cnt = 0;
    if (!ix_sub_i64(st > 0 ? b : a, st > 0 ? a : b, &len)) {
      ix_set_tensor(c, 0, el, &n, 1);
      return OX_OK;
    }
    int64_t mag = st > 0 ? st : st == INT64_MIN ? INT64_MAX : -st;
    if (len > 0) cnt = (len - 1) / mag + 1;
    n = ox_dim_known(cnt);
    /* small integer ranges carry their values (shape vectors, axes lists) */
    if ((el == OX_INT64 || el == OX_INT32) && n.value <= IX_MAXV) {
      ox_dimv *v = ix_dimv_new(c, (size_t)n.value);
      if (v) {
        for (int64_t k = 0; k < n.value; k++) v->d[k] = ox_dim_known(a + k * st);
        c->out_data[0] = v;
      }
    }
  }
  ix_set_tensor(c, 0, el, &n, 1);
  return OX_OK;
}

static int split(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int32_t el = ix_elem(c, 0);
  if (!ix_shape(c, 0, &d, &r)) {
    for (size_t o = 0; o < c->n_out; o++) ix_set_tensor(c, o, el, NULL, -1);
    return OX_OK;
  }
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", 0), r, &ax)) return ix_fail(c, "axis out of range");
  int64_t *sp = NULL;
  size_t ns = 0;
  const int64_t *sa;
  bool have = false;
  if (c->since < 13 && ix_attr_ints(c, "split", &sa, &ns)) sp = (int64_t *)sa, have = true;
  if (c->since < 13 && !have && c->n_in > 1 && ix_has_input(c, 1))
    have = ix_const_ints(c, 1, &sp, &ns);
  bool split_unknown = false;
  if (c->since >= 13 && ix_has_input(c, 1)) split_unknown = !(have = ix_const_ints(c, 1, &sp, &ns));
  if (c->since < 13 && !have && c->n_in > 1 && ix_has_input(c, 1)) split_unknown = !have;
  for (size_t o = 0; o < c->n_out; o++) {
    ox_type *t = ix_set_tensor(c, o, el, d, (int64_t)r);
    if (!t) return OX_ENOMEM;
    ox_dim *od = t->shape->dim;
    if (split_unknown) {
      od[ax] = ox_dim_unknown();
    } else if (have) {
      od[ax] = o < ns ? ox_dim_known(sp[o]) : ox_dim_unknown();
    } else if (d[ax].has_value) {
      int64_t n = d[ax].value, k = (int64_t)c->n_out;
      int64_t chunk = n / k + (n % k > 0), used; /* ceil(n / k) without n + k - 1 */
      if (c->since >= 18 && ix_attr(c, "num_outputs")) {
        od[ax] = (int64_t)o != k - 1                            ? ox_dim_known(chunk)
                 : ox_mul_i64(chunk, k - 1, &used) && used <= n ? ox_dim_known(n - used)
                                                                : ox_dim_unknown();
      } else {
        od[ax] = n % k == 0 ? ox_dim_known(n / k) : ox_dim_unknown();
      }
    } else {
      od[ax] = ox_dim_unknown();
    }
  }
  return OX_OK;
}

static int pad_op(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  int64_t *pads = NULL, *axes = NULL;
  size_t np = 0, na = 0;
  bool ok;
  if (c->since < 11) {
    const int64_t *p;
    ok = ix_attr_ints(c, "pads", &p, &np) || ix_attr_ints(c, "paddings", &p, &np);
    pads = (int64_t *)p;
  } else {
    ok = ix_const_ints(c, 1, &pads, &np);
    if (ok && ix_has_input(c, 3)) ok = ix_const_ints(c, 3, &axes, &na);
  }
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  if (!ok) return ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r), OX_OK;
  size_t n = axes ? na : r;
  if (np != 2 * n) return ix_fail(c, "pads has %zu values for %zu axes", np, n);
  for (size_t k = 0; k < r; k++) o[k] = x[k];
  for (size_t k = 0; k < n; k++) {
    size_t ax = k;
    if (axes && !ix_axis(axes[k], r, &ax)) return ix_fail(c, "axis out of range");
    int64_t both;
    o[ax] =
        ox_add_i64(pads[k], pads[k + n], &both) ? ox_dim_addc(c->a, x[ax], both) : ox_dim_unknown();
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

static int depth_space(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r) || r != 4) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, 4), OX_OK;
  int64_t b = ix_attr_int(c, "blocksize", 1), bb;
  ox_dim o[4];
  if (!ox_mul_i64(b, b, &bb)) bb = 0; /* too large a block: ox_dim_div(x, 0) is unknown */
  o[0] = x[0];
  if (strcmp(c->node->op_type, "DepthToSpace") == 0) {
    o[1] = ox_dim_div(c->a, x[1], ox_dim_known(bb));
    o[2] = ox_dim_mul(c->a, x[2], ox_dim_known(b));
    o[3] = ox_dim_mul(c->a, x[3], ox_dim_known(b));
  } else {
    o[1] = bb ? ox_dim_mul(c->a, x[1], ox_dim_known(bb)) : ox_dim_unknown();
    o[2] = ox_dim_div(c->a, x[2], ox_dim_known(b));
    o[3] = ox_dim_div(c->a, x[3], ox_dim_known(b));
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 4);
  return OX_OK;
}

static int nonzero(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  ox_dim o[2] = {ox_dim_unknown(), ox_dim_unknown()};
  if (ix_shape(c, 0, &x, &r)) o[0] = ox_dim_known((int64_t)r);
  ix_set_tensor(c, 0, OX_INT64, o, 2);
  return OX_OK;
}

static int eyelike(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = (int32_t)ix_attr_int(c, "dtype", ix_elem(c, 0));
  if (ix_shape(c, 0, &x, &r))
    ix_set_tensor(c, 0, el, x, (int64_t)r);
  else
    ix_set_tensor(c, 0, el, NULL, 2);
  return OX_OK;
}

static int onehot(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = ix_elem(c, 2);
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", -1), r + 1, &ax)) return ix_fail(c, "axis out of range");
  ox_dim *o = ox_arena_calloc(c->a, r + 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  int64_t *dv;
  size_t nd;
  ox_dim depth = ox_dim_unknown();
  if (ix_const_ints(c, 1, &dv, &nd) && nd == 1) depth = ox_dim_nonneg(dv[0]);
  size_t j = 0;
  for (size_t k = 0; k <= r; k++) o[k] = k == ax ? depth : x[j++];
  ix_set_tensor(c, 0, el, o, (int64_t)r + 1);
  return OX_OK;
}

static int gather_elements(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 1, &x, &r))
    ix_set_tensor(c, 0, ix_elem(c, 0), x, (int64_t)r);
  else
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1);
  return OX_OK;
}

static int compress(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *ax = ix_attr(c, "axis");
  if (!ax) {
    ox_dim d = ox_dim_unknown();
    ix_set_tensor(c, 0, ix_elem(c, 0), &d, 1);
    return OX_OK;
  }
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  size_t a;
  if (!ix_axis(ax->i, r, &a)) return ix_fail(c, "axis out of range");
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  o[a] = ox_dim_unknown();
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

static int gather_nd(ox_ictx *c) {
  const ox_dim *x, *ind;
  size_t r, q;
  if (!ix_shape(c, 0, &x, &r) || !ix_shape(c, 1, &ind, &q) || q == 0 || !ind[q - 1].has_value)
    return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  int64_t b = ix_attr_int(c, "batch_dims", 0), k = ind[q - 1].value;
  if (b < 0 || k < 0 || (uint64_t)b > r || (uint64_t)k > r - (size_t)b)
    return ix_fail(c, "indices last dim %lld too large", (long long)k);
  size_t R = q - 1 + r - (size_t)(b + k);
  ox_dim *o = ix_dims_new(c, R);
  if (!o) return OX_ENOMEM;
  size_t j = 0;
  for (size_t i = 0; i + 1 < q; i++) o[j++] = ind[i];
  for (size_t i = (size_t)(b + k); i < r; i++) o[j++] = x[i];
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)R);
  return OX_OK;
}

static int center_crop_pad(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t *sv;
  size_t n;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, r);
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
      o[a] = ox_dim_nonneg(sv[k]);
    }
  }
  ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  return OX_OK;
}

static int unique(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *ax = ix_attr(c, "axis");
  ox_dim u = ox_dim_unknown();
  if (!ax)
    ix_set_tensor(c, 0, ix_elem(c, 0), &u, 1);
  else if (ix_shape(c, 0, &x, &r)) {
    size_t a;
    if (!ix_axis(ax->i, r, &a)) return ix_fail(c, "axis out of range");
    ox_dim *o = ix_dims_new(c, r);
    if (!o) return OX_ENOMEM;
    if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
    o[a] = u;
    ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  } else {
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1);
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
  const ox_dtype_info *a = ox_dtype_get(ix_elem(c, 0)), *b = ox_dtype_get(to);
  if (!ix_shape(c, 0, &x, &r) || !a || !b || !a->bits || !b->bits)
    return ix_set_tensor(c, 0, to, NULL, -1), OX_OK;
  if (a->bits == b->bits) return ix_set_tensor(c, 0, to, x, (int64_t)r), OX_OK;
  if (a->bits > b->bits) {
    ox_dim *o = ix_dims_new(c, r + 1);
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

static int tensor_scatter(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, ix_elem(c, 0)); }

const ox_infer_def ox_infer_defs_tensor[] = {
    {"", "Shape", 1, 1000, shape_op},
    {"", "Size", 1, 1000, size_op},
    {"", "Reshape", 1, 1000, reshape},
    {"", "Flatten", 1, 1000, flatten},
    {"", "Transpose", 1, 1000, transpose},
    {"", "Squeeze", 1, 1000, squeeze},
    {"", "Unsqueeze", 1, 1000, unsqueeze},
    {"", "Concat", 1, 1000, concat},
    {"", "Gather", 1, 1000, gather},
    {"", "GatherElements", 1, 1000, gather_elements},
    {"", "Slice", 1, 1000, slice},
    {"", "ConstantOfShape", 1, 1000, constant_of_shape},
    {"", "Expand", 1, 1000, expand},
    {"", "Tile", 1, 1000, tile},
    {"", "Range", 1, 1000, range_op},
    {"", "Split", 1, 1000, split},
    {"", "Pad", 1, 1000, pad_op},
    {"", "DepthToSpace", 1, 1000, depth_space},
    {"", "SpaceToDepth", 1, 1000, depth_space},
    {"", "NonZero", 1, 1000, nonzero},
    {"", "EyeLike", 1, 1000, eyelike},
    {"", "OneHot", 1, 1000, onehot},
    {"", "Compress", 1, 1000, compress},
    {"", "GatherND", 1, 1000, gather_nd},
    {"", "CenterCropPad", 1, 1000, center_crop_pad},
    {"", "Unique", 1, 1000, unique},
    {"", "BitCast", 1, 1000, bitcast},
    {"", "TensorScatter", 1, 1000, tensor_scatter},
    {NULL, NULL, 0, 0, NULL},
};
