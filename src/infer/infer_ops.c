/* infer_ops.c - type and shape functions of the operators, and data
 * propagation for the small integer tensors that carry shapes. */
#include <stdio.h>
#include <string.h>

#include "infer_impl.h"

#define MAXV 1000

/* ------------------------------------------------------------ helpers */

static int32_t elem0(ox_ictx *c) { return ix_elem(c, 0); }

static int same_as_input0(ox_ictx *c) {
  ix_copy_type(c, 0, 0);
  return OX_OK;
}

static const ox_dimv *dimv_of(ox_ictx *c, size_t i) {
  if (!ix_has_input(c, i)) return NULL;
  if (c->in_data[i]) return c->in_data[i];
  int64_t *v;
  size_t n;
  if (c->in_const[i] && ix_const_ints(c, i, &v, &n)) {
    ox_dimv *d = ix_dimv_new(c, n);
    if (!d) return NULL;
    for (size_t k = 0; k < n; k++) d->d[k] = ox_dim_known(v[k]);
    d->is_scalar = c->in_const[i]->n_dims == 0;
    c->in_data[i] = d;
    return d;
  }
  return NULL;
}

/* a 1-D input whose length is known: its values are unknown symbols */
static ox_dim *shape_input(ox_ictx *c, size_t i, size_t *rank, bool *known_rank) {
  const ox_dimv *d = dimv_of(c, i);
  if (d) {
    *rank = d->n;
    *known_rank = true;
    return d->d;
  }
  const ox_dim *dims;
  size_t r;
  *known_rank = false;
  if (ix_shape(c, i, &dims, &r) && r == 1 && dims[0].has_value && dims[0].value <= MAXV) {
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

/* Output 0 carries input 0's values in the same flat order (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity). */
static void pass_values(ox_ictx *c) {
  const ox_dimv *v = dimv_of(c, 0);
  if (!v || c->out_data[0]) return;
  ox_dimv *r = ix_dimv_new(c, v->n);
  if (!r) return;
  if (v->n) memcpy(r->d, v->d, v->n * sizeof(ox_dim));
  r->is_scalar = c->out[0] && c->out[0]->shape && c->out[0]->shape->n_dim == 0;
  c->out_data[0] = r;
}

/* ------------------------------------------------------------ elementwise */

static int unary(ox_ictx *c) { return same_as_input0(c); }

static int identity(ox_ictx *c) {
  same_as_input0(c);
  pass_values(c);
  return OX_OK;
}

static int to_bool_same(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (ix_shape(c, 0, &d, &r))
    ix_set_tensor(c, 0, OX_BOOL, d, (int64_t)r);
  else
    ix_set_tensor(c, 0, OX_BOOL, NULL, -1);
  return OX_OK;
}

static int propagate_arith(ox_ictx *c, char op) {
  const ox_dimv *x = dimv_of(c, 0), *y = dimv_of(c, 1);
  if (!x || !y) return OX_OK;
  size_t n = x->n > y->n ? x->n : y->n;
  if ((x->n != n && x->n != 1) || (y->n != n && y->n != 1) || n > MAXV) return OX_OK;
  ox_dimv *r = ix_dimv_new(c, n);
  if (!r) return OX_OK;
  for (size_t k = 0; k < n; k++) {
    ox_dim a = x->d[x->n == 1 ? 0 : k], b = y->d[y->n == 1 ? 0 : k];
    r->d[k] = op == '+'   ? ox_dim_add(c->a, a, b)
              : op == '-' ? ox_dim_sub(c->a, a, b)
              : op == '*' ? ox_dim_mul(c->a, a, b)
                          : ox_dim_div(c->a, a, b);
  }
  r->is_scalar = x->is_scalar && y->is_scalar;
  c->out_data[0] = r;
  return OX_OK;
}

static int broadcast_to(ox_ictx *c, int32_t elem, size_t first, size_t n) {
  ox_dim *d;
  size_t r;
  if (ix_broadcast(c, first, n, &d, &r))
    ix_set_tensor(c, 0, elem, d, (int64_t)r);
  else if (!c->failed)
    ix_set_tensor(c, 0, elem, NULL, -1);
  return OX_OK;
}

static int det(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r) || r < 2) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  ix_set_tensor(c, 0, elem0(c), d, (int64_t)r - 2);
  return OX_OK;
}

static int binary_arith(ox_ictx *c) {
  /* opset < 7: legacy broadcast attribute means B is broadcast into A */
  if (c->since < 7) return same_as_input0(c);
  broadcast_to(c, elem0(c), 0, c->n_in);
  const char *op = c->node->op_type;
  char k = strcmp(op, "Add") == 0 ? '+' : strcmp(op, "Sub") == 0 ? '-' : strcmp(op, "Mul") == 0 ? '*'
                                      : strcmp(op, "Div") == 0                      ? '/'
                                                                                    : 0;
  if (k && (elem0(c) == OX_INT64 || elem0(c) == OX_INT32)) propagate_arith(c, k);
  return OX_OK;
}

/* comparisons and logic on propagated integer values give 0/1 values, so an
 * If whose condition depends only on shapes can be resolved */
static void propagate_compare(ox_ictx *c) {
  const char *op = c->node->op_type;
  const ox_dimv *x = dimv_of(c, 0), *y = c->n_in > 1 ? dimv_of(c, 1) : NULL;
  bool unary_not = strcmp(op, "Not") == 0;
  if (!x || (!unary_not && !y)) return;
  size_t n = unary_not ? x->n : (x->n > y->n ? x->n : y->n);
  if (n > MAXV || (x->n != n && x->n != 1) || (!unary_not && y->n != n && y->n != 1)) return;
  ox_dimv *r = ix_dimv_new(c, n);
  if (!r) return;
  for (size_t k = 0; k < n; k++) {
    const ox_dim *a = &x->d[x->n == 1 ? 0 : k], *b = unary_not ? NULL : &y->d[y->n == 1 ? 0 : k];
    int v;
    if (unary_not) {
      if (!a->has_value) return;
      v = a->value == 0;
    } else if (a->has_value && b->has_value) {
      int64_t p = a->value, q = b->value;
      v = strcmp(op, "Equal") == 0            ? p == q
          : strcmp(op, "Greater") == 0        ? p > q
          : strcmp(op, "Less") == 0           ? p < q
          : strcmp(op, "GreaterOrEqual") == 0 ? p >= q
          : strcmp(op, "LessOrEqual") == 0    ? p <= q
          : strcmp(op, "And") == 0            ? (p && q)
          : strcmp(op, "Or") == 0             ? (p || q)
                                              : ((p != 0) != (q != 0));
    } else if (strcmp(op, "Equal") == 0 && ox_dim_same(a, b)) {
      v = 1;
    } else {
      return;
    }
    r->d[k] = ox_dim_known(v);
  }
  r->is_scalar = x->is_scalar && (unary_not || y->is_scalar);
  c->out_data[0] = r;
}

static int compare(ox_ictx *c) {
  if (c->since < 7) to_bool_same(c);
  else broadcast_to(c, OX_BOOL, 0, 2);
  propagate_compare(c);
  return OX_OK;
}

static int not_op(ox_ictx *c) {
  same_as_input0(c);
  propagate_compare(c);
  return OX_OK;
}

static int variadic(ox_ictx *c) {
  if (c->since < 8) return same_as_input0(c);
  return broadcast_to(c, elem0(c), 0, c->n_in);
}

static int where(ox_ictx *c) { return broadcast_to(c, ix_elem(c, 1), 0, 3); }

static int prelu(ox_ictx *c) {
  if (c->since < 7) return same_as_input0(c);
  return broadcast_to(c, elem0(c), 0, 2);
}

static int cast(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int32_t to = (int32_t)ix_attr_int(c, "to", 0);
  if (c->since < 6) {
    const ox_attr *a = ix_attr(c, "to");
    if (a && a->s.data) {
      char low[32] = {0};
      for (size_t i = 0; i < a->s.size && i < 31; i++) {
        char ch = (char)a->s.data[i];
        low[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
      }
      to = ox_dtype_from_name(low);
    }
  }
  if (ix_shape(c, 0, &d, &r))
    ix_set_tensor(c, 0, to, d, (int64_t)r);
  else
    ix_set_tensor(c, 0, to, NULL, -1);
  const ox_dimv *v = dimv_of(c, 0);
  if (v && (to == OX_INT64 || to == OX_INT32)) c->out_data[0] = (ox_dimv *)v;
  if (v && to == OX_BOOL) {
    ox_dimv *b = ix_dimv_new(c, v->n);
    if (!b) return OX_OK;
    for (size_t k = 0; k < v->n; k++) {
      if (!v->d[k].has_value) return OX_OK;
      b->d[k] = ox_dim_known(v->d[k].value != 0);
    }
    b->is_scalar = v->is_scalar;
    c->out_data[0] = b;
  }
  return OX_OK;
}

static int castlike(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int32_t to = ix_elem(c, 1);
  if (ix_shape(c, 0, &d, &r))
    ix_set_tensor(c, 0, to, d, (int64_t)r);
  else
    ix_set_tensor(c, 0, to, NULL, -1);
  return OX_OK;
}

/* ------------------------------------------------------------ shape ops */

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
  int32_t el = elem0(c);
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
  pass_values(c);
  return OX_OK;
}

static int flatten(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, elem0(c), NULL, 2), OX_OK;
  int64_t axis = ix_attr_int(c, "axis", 1);
  if (axis < 0) axis += (int64_t)r;
  if (axis < 0 || axis > (int64_t)r) return ix_fail(c, "axis %lld out of range", (long long)axis);
  ox_dim o[2] = {ox_dim_known(1), ox_dim_known(1)};
  for (size_t k = 0; k < r; k++) o[(int64_t)k < axis ? 0 : 1] = ox_dim_mul(c->a, o[(int64_t)k < axis ? 0 : 1], d[k]);
  ix_set_tensor(c, 0, elem0(c), o, 2);
  pass_values(c);
  return OX_OK;
}

static int transpose(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  const int64_t *perm = NULL;
  size_t np;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  if (ix_attr_ints(c, "perm", &perm, &np)) {
    if (np != r) return ix_fail(c, "perm has %zu entries for rank %zu", np, r);
    for (size_t k = 0; k < r; k++) {
      size_t p;
      if (!ix_axis(perm[k], r, &p)) return ix_fail(c, "perm entry %lld out of range", (long long)perm[k]);
      o[k] = d[p];
    }
  } else {
    for (size_t k = 0; k < r; k++) o[k] = d[r - 1 - k];
  }
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)r);
  const ox_dimv *v = dimv_of(c, 0);
  int64_t idims[16], numel;
  size_t cr;
  if (v && concrete(c, 0, idims, &cr, &numel) && (size_t)numel == v->n && cr >= 1) {
    size_t p[16];
    int64_t istr[16], odims[16], idx[16] = {0};
    for (size_t k = 0; k < r; k++) {
      if (perm) ix_axis(perm[k], r, &p[k]);
      else p[k] = r - 1 - k;
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
    return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  bool *drop = ox_arena_calloc(c->a, r ? r : 1, sizeof(bool));
  if (!drop) return OX_ENOMEM;
  if (have_axes) {
    for (size_t k = 0; k < na; k++) {
      size_t ax;
      if (!ix_axis(axes[k], r, &ax)) return ix_fail(c, "axis %lld out of range", (long long)axes[k]);
      if (d[ax].has_value && d[ax].value != 1) return ix_fail(c, "cannot squeeze dim %zu of size %lld", ax, (long long)d[ax].value);
      drop[ax] = true;
    }
  } else {
    for (size_t k = 0; k < r; k++) {
      if (!d[k].has_value) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
      drop[k] = d[k].value == 1;
    }
  }
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  size_t on = 0;
  for (size_t k = 0; k < r; k++)
    if (!drop[k]) o[on++] = d[k];
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)on);
  pass_values(c);
  return OX_OK;
}

static int unsqueeze(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  int64_t *axes = NULL;
  size_t na = 0;
  if (!get_axes(c, c->since >= 13 ? 1 : 0, &axes, &na) || !ix_shape(c, 0, &d, &r))
    return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  size_t R = r + na;
  bool *ins = ox_arena_calloc(c->a, R ? R : 1, sizeof(bool));
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!ins || !o) return OX_ENOMEM;
  for (size_t k = 0; k < na; k++) {
    size_t ax;
    if (!ix_axis(axes[k], R, &ax) || ins[ax]) return ix_fail(c, "bad axis %lld", (long long)axes[k]);
    ins[ax] = true;
  }
  size_t j = 0;
  for (size_t k = 0; k < R; k++) o[k] = ins[k] ? ox_dim_known(1) : d[j++];
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)R);
  pass_values(c);
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
  if (!ix_axis(axis, r, &ax)) return ix_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
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
      const ox_dimv *v = dimv_of(c, i);
      if (!v) return OX_OK;
      tot += v->n;
    }
    if (tot > MAXV) return OX_OK;
    ox_dimv *v = ix_dimv_new(c, tot);
    if (!v) return OX_OK;
    size_t j = 0;
    for (size_t i = 0; i < c->n_in; i++) {
      const ox_dimv *x = dimv_of(c, i);
      for (size_t k = 0; k < x->n; k++) v->d[j++] = x->d[k];
    }
    c->out_data[0] = v;
  }
  return OX_OK;
}

static int gather(ox_ictx *c) {
  const ox_dim *d, *id;
  size_t r, ir;
  if (!ix_shape(c, 0, &d, &r) || !ix_shape(c, 1, &id, &ir)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", 0), r, &ax)) return ix_fail(c, "axis out of range");
  size_t R = r - 1 + ir;
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  size_t j = 0;
  for (size_t k = 0; k < ax; k++) o[j++] = d[k];
  for (size_t k = 0; k < ir; k++) o[j++] = id[k];
  for (size_t k = ax + 1; k < r; k++) o[j++] = d[k];
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)R);
  const ox_dimv *v = dimv_of(c, 0);
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
  int32_t el = elem0(c);
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
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = clamp64(s, 0, n);
      e = clamp64(e, 0, n);
      o[ax] = ox_dim_known(e > s ? (e - s + step - 1) / step : 0);
    } else {
      s = clamp64(s, 0, n - 1);
      e = clamp64(e, -1, n - 1);
      o[ax] = ox_dim_known(s > e ? (s - e + (-step) - 1) / (-step) : 0);
    }
    lo[ax] = s;
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  const ox_dimv *v = dimv_of(c, 0);
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
    if (!d[k].has_value || !ox_mul_i64(n, d[k].value, &n) || n > MAXV) return OX_OK;
  }
  int64_t val = 0;
  if (v && v->t) {
    ox_bytes raw = ox_tensor_payload(v->t);
    if (el == OX_INT64 && raw.data && raw.size == 8) memcpy(&val, raw.data, 8);
    else if (el == OX_INT64 && v->t->n_int64_data == 1) val = v->t->int64_data[0];
    else if (el == OX_INT32 && raw.data && raw.size == 4) {
      int32_t x;
      memcpy(&x, raw.data, 4);
      val = x;
    } else if (el == OX_INT32 && v->t->n_int32_data == 1) val = v->t->int32_data[0];
    else return OX_OK;
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
  if (!kr || !ix_shape(c, 0, &d, &ir)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  size_t R = r > ir ? r : ir;
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < R; k++) {
    const ox_dim *a = k + ir >= R ? &d[k + ir - R] : NULL;
    const ox_dim *b = k + r >= R ? &t[k + r - R] : NULL;
    if (!a) o[k] = *b;
    else if (!b) o[k] = *a;
    else if (ox_dim_is(a, 1)) o[k] = *b;
    else if (ox_dim_is(b, 1)) o[k] = *a;
    else if (a->has_value) o[k] = *a;
    else if (b->has_value) o[k] = *b;
    else o[k] = ox_dim_same(a, b) ? *a : ox_dim_unknown();
  }
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)R);
  return OX_OK;
}

static int tile(ox_ictx *c) {
  const ox_dim *d;
  size_t r;
  if (!ix_shape(c, 0, &d, &r)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
  int64_t *rep;
  size_t nr;
  ox_dim *o = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  if (ix_const_ints(c, 1, &rep, &nr) && nr == r) {
    for (size_t k = 0; k < r; k++) o[k] = ox_dim_mul(c->a, d[k], ox_dim_known(rep[k]));
  }
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)r);
  return OX_OK;
}

static int range_op(ox_ictx *c) {
  int32_t el = elem0(c);
  const ox_dimv *s = dimv_of(c, 0), *l = dimv_of(c, 1), *dl = dimv_of(c, 2);
  ox_dim n = ox_dim_unknown();
  if (s && l && dl && s->n == 1 && l->n == 1 && dl->n == 1 && s->d[0].has_value &&
      l->d[0].has_value && dl->d[0].has_value && dl->d[0].value != 0) {
    int64_t a = s->d[0].value, b = l->d[0].value, st = dl->d[0].value;
    int64_t cnt = st > 0 ? (b - a + st - 1) / st : (a - b + (-st) - 1) / (-st);
    n = ox_dim_known(cnt > 0 ? cnt : 0);
    /* small integer ranges carry their values (shape vectors, axes lists) */
    if ((el == OX_INT64 || el == OX_INT32) && n.value <= MAXV) {
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
  int32_t el = elem0(c);
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
  if (c->since < 13 && !have && c->n_in > 1 && ix_has_input(c, 1)) have = ix_const_ints(c, 1, &sp, &ns);
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
      int64_t chunk = (n + k - 1) / k;
      if (c->since >= 18 && ix_attr(c, "num_outputs")) {
        int64_t last = n - chunk * (k - 1);
        od[ax] = ox_dim_known((int64_t)o == k - 1 ? last : chunk);
      } else {
        od[ax] = n % k == 0 ? ox_dim_known(n / k) : ox_dim_unknown();
      }
    } else {
      od[ax] = ox_dim_unknown();
    }
  }
  return OX_OK;
}

/* ------------------------------------------------------------ NN */

static int matmul(ox_ictx *c) {
  const ox_dim *a, *b;
  size_t ra, rb;
  int32_t el = elem0(c);
  if (strcmp(c->node->op_type, "MatMulInteger") == 0 || strcmp(c->node->op_type, "QLinearMatMul") == 0)
    el = strcmp(c->node->op_type, "MatMulInteger") == 0 ? OX_INT32 : ix_elem(c, 7);
  const size_t ia = 0, ib = strcmp(c->node->op_type, "QLinearMatMul") == 0 ? 3 : 1;
  if (!ix_shape(c, ia, &a, &ra) || !ix_shape(c, ib, &b, &rb) || ra == 0 || rb == 0)
    return ix_set_tensor(c, 0, el, NULL, -1), OX_OK;
  size_t ba = ra >= 2 ? ra - 2 : 0, bb = rb >= 2 ? rb - 2 : 0, bo = ba > bb ? ba : bb;
  size_t R = bo + (ra >= 2) + (rb >= 2);
  ox_dim *o = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!o) return OX_ENOMEM;
  for (size_t k = 0; k < bo; k++) {
    const ox_dim *x = k + ba >= bo ? &a[k + ba - bo] : NULL, *y = k + bb >= bo ? &b[k + bb - bo] : NULL;
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
    return ix_set_tensor(c, 0, elem0(c), NULL, 2), OX_OK;
  bool ta = ix_attr_int(c, "transA", 0) != 0, tb = ix_attr_int(c, "transB", 0) != 0;
  ox_dim o[2] = {ta ? a[1] : a[0], tb ? b[0] : b[1]};
  ix_set_tensor(c, 0, elem0(c), o, 2);
  return OX_OK;
}

/* spatial output of conv/pool: floor or ceil((in + pads - dil*(k-1) - 1)/stride) + 1 */
static int conv_pool(ox_ictx *c, bool is_conv, bool is_global) {
  const ox_dim *x;
  size_t r;
  int32_t el = elem0(c);
  const char *op = c->node->op_type;
  if (strcmp(op, "ConvInteger") == 0) el = OX_INT32;
  if (strcmp(op, "QLinearConv") == 0) el = ix_elem(c, 7);
  size_t wi = strcmp(op, "QLinearConv") == 0 ? 3 : 1;
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
    if (ix_shape(c, wi, &w, &wr) && wr == r) o[1] = w[0];
    else o[1] = ox_dim_unknown();
  }
  const int64_t *ks = NULL, *st = NULL, *pd = NULL, *dl = NULL;
  size_t nk = 0, nst = 0, npd = 0, ndl = 0;
  if (!ix_attr_ints(c, "kernel_shape", &ks, &nk)) {
    if (is_conv && w && wr == r) nk = 0;
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
    if (nk) kk = k < nk ? ks[k] : 1;
    else if (w && wr == r && w[2 + k].has_value) kk = w[2 + k].value; /* fuzz_check: an empty
                                                                         kernel_shape, no W */
    else {
      o[2 + k] = ox_dim_unknown();
      continue;
    }
    int64_t s = st && k < nst ? st[k] : 1, di = dl && k < ndl ? dl[k] : 1;
    int64_t ek = di * (kk - 1) + 1;
    if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
      o[2 + k] = ox_dim_ceildiv(c->a, in, ox_dim_known(s));
      continue;
    }
    int64_t pads = 0;
    if (strcmp(auto_pad, "VALID") != 0 && pd && npd == 2 * ns) pads = pd[k] + pd[k + ns];
    ox_dim num = ox_dim_addc(c->a, in, pads - ek);
    ox_dim q = ceil_mode ? ox_dim_ceildiv(c->a, num, ox_dim_known(s)) : ox_dim_div(c->a, num, ox_dim_known(s));
    ox_dim res = ox_dim_addc(c->a, q, 1);
    if (ceil_mode && res.has_value && in.has_value) {
      /* the last window must start inside the input or left padding */
      int64_t pl = pd && npd == 2 * ns ? pd[k] : 0;
      if ((res.value - 1) * s >= in.value + pl) res.value--;
    }
    o[2 + k] = res;
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  if (c->n_out > 1 && strcmp(op, "MaxPool") == 0) ix_set_tensor(c, 1, OX_INT64, o, (int64_t)r);
  return OX_OK;
}

static int conv(ox_ictx *c) { return conv_pool(c, true, false); }
static int pool(ox_ictx *c) { return conv_pool(c, false, false); }
static int global_pool(ox_ictx *c) { return conv_pool(c, false, true); }

static int conv_transpose(ox_ictx *c) {
  const ox_dim *x, *w;
  size_t r, wr;
  int32_t el = elem0(c);
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
      o[2 + k] = nos >= ns ? ox_dim_known(os[nos - ns + k]) : ox_dim_unknown();
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
    int64_t pads = pd && npd == 2 * ns && strcmp(auto_pad, "VALID") != 0 ? pd[k] + pd[k + ns] : 0;
    ox_dim t = ox_dim_mul(c->a, ox_dim_addc(c->a, x[2 + k], -1), ox_dim_known(s));
    o[2 + k] = ox_dim_addc(c->a, t, opad + (kk - 1) * di + 1 - pads);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)r);
  return OX_OK;
}

static int batchnorm(ox_ictx *c) {
  same_as_input0(c);
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r) && r >= 2)
    for (size_t o = 1; o < c->n_out; o++) ix_set_tensor(c, o, ix_elem(c, o + 2 < c->n_in ? o + 2 : 1), &x[1], 1);
  return OX_OK;
}

static int layernorm(ox_ictx *c) {
  same_as_input0(c);
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
  same_as_input0(c);
  if (c->n_out > 1) {
    const ox_dim *x;
    size_t r;
    if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 1, c->since < 12 ? elem0(c) : OX_BOOL, x, (int64_t)r);
    else ix_set_tensor(c, 1, c->since < 12 ? elem0(c) : OX_BOOL, NULL, -1);
    if (c->since >= 10 && c->since < 12 && c->out[1]) c->out[1]->elem_type = OX_BOOL;
  }
  return OX_OK;
}

static int reduce(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = elem0(c);
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
    if (ix_has_input(c, 1) && !have) return ix_set_tensor(c, 0, el, NULL, keep ? (int64_t)r : -1), OX_OK;
  } else {
    const int64_t *a;
    have = true;
    if (ix_attr_ints(c, "axes", &a, &na)) axes = (int64_t *)a;
  }
  (void)have;
  bool *red = ox_arena_calloc(c->a, r ? r : 1, sizeof(bool));
  if (!red) return OX_ENOMEM;
  if (na == 0) {
    if (axes_input && ix_attr_int(c, "noop_with_empty_axes", 0)) return same_as_input0(c);
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
    if (!red[k]) o[on++] = x[k];
    else if (keep) o[on++] = ox_dim_known(1);
  }
  ix_set_tensor(c, 0, el, o, (int64_t)on);
  return OX_OK;
}

static int pad_op(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, elem0(c), NULL, -1), OX_OK;
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
  if (!ok) return ix_set_tensor(c, 0, elem0(c), o, (int64_t)r), OX_OK;
  size_t n = axes ? na : r;
  if (np != 2 * n) return ix_fail(c, "pads has %zu values for %zu axes", np, n);
  for (size_t k = 0; k < r; k++) o[k] = x[k];
  for (size_t k = 0; k < n; k++) {
    size_t ax = k;
    if (axes && !ix_axis(axes[k], r, &ax)) return ix_fail(c, "axis out of range");
    o[ax] = ox_dim_addc(c->a, x[ax], pads[k] + pads[k + n]);
  }
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)r);
  return OX_OK;
}

static bool tensor_floats(const ox_tensor *t, float **v, size_t *n, ox_arena *a) {
  int64_t cnt;
  if (!t || t->data_type != OX_FLOAT || !ox_numel(t->dims, t->n_dims, &cnt) || cnt > MAXV) return false;
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

static int resize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = elem0(c);
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
        size_t ax = na ? (size_t)(axes[k] < 0 ? axes[k] + (int64_t)r : axes[k]) : k;
        if (!x[ax].has_value) return ix_set_tensor(c, 0, el, o, (int64_t)r), OX_OK;
        double s = (double)sz[k] / (double)x[ax].value;
        scale = strcmp(pol, "not_larger") == 0 ? (s < scale ? s : scale) : (s > scale ? s : scale);
      }
      for (size_t k = 0; k < n; k++) {
        size_t ax = na ? (size_t)(axes[k] < 0 ? axes[k] + (int64_t)r : axes[k]) : k;
        o[ax] = ox_dim_known((int64_t)((double)x[ax].value * scale + 0.5));
      }
    } else {
      for (size_t k = 0; k < n; k++) {
        size_t ax = na ? (size_t)(axes[k] < 0 ? axes[k] + (int64_t)r : axes[k]) : k;
        if (ax < r) o[ax] = ox_dim_known(sz[k]);
      }
    }
  } else if (sc && ns == n) {
    for (size_t k = 0; k < r; k++) o[k] = x[k];
    for (size_t k = 0; k < n; k++) {
      size_t ax = na ? (size_t)(axes[k] < 0 ? axes[k] + (int64_t)r : axes[k]) : k;
      if (ax >= r) continue;
      o[ax] = x[ax].has_value ? ox_dim_known((int64_t)((double)x[ax].value * (double)sc[k]))
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
    ix_set_tensor(c, 0, elem0(c), NULL, -1);
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
  if (c->since < 10) o[ax] = ox_dim_known(ix_attr_int(c, "k", 0));
  else if (ix_const_ints(c, 1, &kv, &nk) && nk == 1) o[ax] = ox_dim_known(kv[0]);
  else o[ax] = ox_dim_unknown();
  ix_set_tensor(c, 0, elem0(c), o, (int64_t)r);
  ix_set_tensor(c, 1, OX_INT64, o, (int64_t)r);
  return OX_OK;
}

static int constant(ox_ictx *c) {
  const ox_node *n = c->node;
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *a = ix_attr(c, n->attribute[i].name);
    const char *nm = n->attribute[i].name;
    if (!a) continue;
    if (strcmp(nm, "value") == 0 && a->t) {
      ox_dim *d = ox_arena_calloc(c->a, a->t->n_dims ? a->t->n_dims : 1, sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      for (size_t k = 0; k < a->t->n_dims; k++) d[k] = ox_dim_known(a->t->dims[k]);
      ix_set_tensor(c, 0, a->t->data_type, d, (int64_t)a->t->n_dims);
    } else if (strcmp(nm, "sparse_value") == 0 && a->sparse_tensor && a->sparse_tensor->values) {
      ox_dim *d = ox_arena_calloc(c->a, a->sparse_tensor->n_dims ? a->sparse_tensor->n_dims : 1, sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      for (size_t k = 0; k < a->sparse_tensor->n_dims; k++) d[k] = ox_dim_known(a->sparse_tensor->dims[k]);
      ix_set_tensor(c, 0, a->sparse_tensor->values->data_type, d, (int64_t)a->sparse_tensor->n_dims);
    } else if (strcmp(nm, "value_int") == 0) {
      ix_set_tensor(c, 0, OX_INT64, NULL, 0);
    } else if (strcmp(nm, "value_float") == 0) {
      ix_set_tensor(c, 0, OX_FLOAT, NULL, 0);
    } else if (strcmp(nm, "value_string") == 0) {
      ix_set_tensor(c, 0, OX_STRING, NULL, 0);
    } else if (strcmp(nm, "value_ints") == 0 || strcmp(nm, "value_floats") == 0 ||
               strcmp(nm, "value_strings") == 0) {
      size_t cnt = nm[6] == 'i' ? a->n_ints : nm[6] == 'f' ? a->n_floats : a->n_strings;
      ox_dim d = ox_dim_known((int64_t)cnt);
      ix_set_tensor(c, 0, nm[6] == 'i' ? OX_INT64 : nm[6] == 'f' ? OX_FLOAT : OX_STRING, &d, 1);
    }
  }
  return OX_OK;
}

static int if_op(ox_ictx *c) {
  const ox_attr *tb = ix_attr(c, "then_branch"), *eb = ix_attr(c, "else_branch");
  if (!tb || !tb->g || !eb || !eb->g) return ix_fail(c, "missing then_branch/else_branch");
  size_t nt, ne;
  ox_type **tt = ix_subgraph(c, tb->g, NULL, 0, &nt);
  ox_type **et = ix_subgraph(c, eb->g, NULL, 0, &ne);
  if (!tt || !et) return OX_OK;
  const ox_dimv *cond = dimv_of(c, 0);
  if (cond && cond->n == 1 && cond->d[0].has_value) {
    /* the condition is known from shapes alone: the taken branch decides */
    ox_type **taken = cond->d[0].value ? tt : et;
    size_t nk = cond->d[0].value ? nt : ne;
    for (size_t o = 0; o < c->n_out && o < nk; o++)
      if (taken[o]) c->out[o] = ox_type_clone(c->a, taken[o]);
    return OX_OK;
  }
  if (nt != c->n_out || ne != c->n_out)
    return ix_fail(c, "branches have %zu and %zu outputs, the node %zu", nt, ne, c->n_out);
  for (size_t o = 0; o < c->n_out; o++) {
    const ox_type *a = tt[o], *b = et[o];
    if (a && a->kind == OX_TYPE_NONE) a = NULL; /* declared without a type */
    if (b && b->kind == OX_TYPE_NONE) b = NULL;
    if (!a && !b) continue;
    if (!a || !b) {
      /* one branch's type is unknown (a custom op, say): the output still
       * has the other's type, but no shape, since that branch may differ */
      ox_type *u = ox_type_clone(c->a, a ? a : b);
      if (!u) return OX_ENOMEM;
      if (u->kind == OX_TYPE_TENSOR || u->kind == OX_TYPE_SPARSE_TENSOR) u->shape = NULL;
      c->out[o] = u;
      continue;
    }
    if (a->kind != b->kind)
      return ix_fail(c, "branches give different kinds of value for output %zu", o);
    ox_type *u = ox_type_clone(c->a, a);
    if (!u) return OX_ENOMEM;
    if (u->kind == OX_TYPE_TENSOR && b->kind == OX_TYPE_TENSOR) {
      if (a->elem_type != b->elem_type) return ix_fail(c, "branches give different element types for output %zu", o);
      if (!a->shape || !b->shape || a->shape->n_dim != b->shape->n_dim) u->shape = NULL;
      else
        for (size_t k = 0; k < u->shape->n_dim; k++)
          if (!ox_dim_same(&a->shape->dim[k], &b->shape->dim[k])) u->shape->dim[k] = ox_dim_unknown();
    }
    c->out[o] = u;
  }
  return OX_OK;
}

static int loop_op(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_graph *body = ba->g;
  size_t nc = c->n_in >= 2 ? c->n_in - 2 : 0; /* loop-carried */
  size_t nin = 2 + nc;
  /* body: (iteration, cond, carried...) -> (cond, carried..., scan outputs...) */
  if (body->n_input != nin)
    return ix_fail(c, "body has %zu inputs; expected %zu (iteration number, condition and %zu "
                      "loop-carried values)",
                   body->n_input, nin, nc);
  if (body->n_output < 1 + nc || body->n_output != 1 + c->n_out)
    return ix_fail(c, "body has %zu outputs; expected %zu (condition, %zu loop-carried values and "
                      "one per scan output of the node)",
                   body->n_output, 1 + (c->n_out > nc ? c->n_out : nc), nc);
  const ox_type **it = ox_arena_calloc(c->a, nin, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  it[0] = ox_type_new_tensor(c->a, OX_INT64, NULL, 0);
  it[1] = ox_type_new_tensor(c->a, OX_BOOL, NULL, 0);
  for (size_t k = 0; k < nc; k++) {
    const ox_type *t = c->in[2 + k];
    if (t && t->kind == OX_TYPE_TENSOR && t->shape) {
      /* carried shapes may change between iterations: keep the rank only */
      ox_type *u = ox_type_clone(c->a, t);
      if (u)
        for (size_t d = 0; d < u->shape->n_dim; d++)
          if (!u->shape->dim[d].has_value) u->shape->dim[d] = ox_dim_unknown();
      it[2 + k] = u;
    } else {
      it[2 + k] = t;
    }
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, body, it, body->n_input < nin ? body->n_input : nin, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out; o++) {
    if (o < nc) {
      if (1 + o < no && ot[1 + o]) {
        ox_type *u = ox_type_clone(c->a, ot[1 + o]);
        const ox_type *init = c->in[2 + o];
        if (u && u->kind == OX_TYPE_TENSOR && u->shape && init && init->shape &&
            init->shape->n_dim == u->shape->n_dim) {
          for (size_t k = 0; k < u->shape->n_dim; k++)
            if (!ox_dim_same(&u->shape->dim[k], &init->shape->dim[k])) u->shape->dim[k] = ox_dim_unknown();
        } else if (u && u->kind == OX_TYPE_TENSOR && u->shape && !(init && init->shape)) {
          u->shape = NULL;
        }
        c->out[o] = u;
      }
    } else if (1 + o < no && ot[1 + o]) {
      const ox_type *s = ot[1 + o];
      if (s->kind != OX_TYPE_TENSOR) continue;
      size_t r = s->shape ? s->shape->n_dim : 0;
      ox_dim *d = ox_arena_calloc(c->a, r + 1, sizeof(ox_dim));
      if (!d) return OX_ENOMEM;
      d[0] = ox_dim_unknown();
      const ox_dimv *mt = dimv_of(c, 0);
      if (mt && mt->n == 1 && mt->d[0].has_value && !ix_has_input(c, 1)) d[0] = mt->d[0];
      for (size_t k = 0; k < r; k++) d[k + 1] = s->shape->dim[k];
      ix_set_tensor(c, o, s->elem_type, d, s->shape ? (int64_t)r + 1 : -1);
    }
  }
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
  int32_t el = elem0(c);
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

static int depth_space(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (!ix_shape(c, 0, &x, &r) || r != 4) return ix_set_tensor(c, 0, elem0(c), NULL, 4), OX_OK;
  int64_t b = ix_attr_int(c, "blocksize", 1);
  ox_dim o[4];
  o[0] = x[0];
  if (strcmp(c->node->op_type, "DepthToSpace") == 0) {
    o[1] = ox_dim_div(c->a, x[1], ox_dim_known(b * b));
    o[2] = ox_dim_mul(c->a, x[2], ox_dim_known(b));
    o[3] = ox_dim_mul(c->a, x[3], ox_dim_known(b));
  } else {
    o[1] = ox_dim_mul(c->a, x[1], ox_dim_known(b * b));
    o[2] = ox_dim_div(c->a, x[2], ox_dim_known(b));
    o[3] = ox_dim_div(c->a, x[3], ox_dim_known(b));
  }
  ix_set_tensor(c, 0, elem0(c), o, 4);
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

static int quantize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = OX_UINT8;
  if (ix_has_input(c, 2) && ix_elem(c, 2)) el = ix_elem(c, 2);
  int64_t od = ix_attr_int(c, "output_dtype", 0);
  if (od) el = (int32_t)od;
  if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 0, el, x, (int64_t)r);
  else ix_set_tensor(c, 0, el, NULL, -1);
  return OX_OK;
}

static int dequantize(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = c->since >= 19 ? ix_elem(c, 1) : OX_FLOAT;
  int64_t od = ix_attr_int(c, "output_dtype", 0);
  if (od) el = (int32_t)od;
  if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 0, el, x, (int64_t)r);
  else ix_set_tensor(c, 0, el, NULL, -1);
  return OX_OK;
}

static int dyn_quant(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 0, OX_UINT8, x, (int64_t)r);
  else ix_set_tensor(c, 0, OX_UINT8, NULL, -1);
  ix_set_tensor(c, 1, OX_FLOAT, NULL, 0);
  ix_set_tensor(c, 2, OX_UINT8, NULL, 0);
  return OX_OK;
}

static int eyelike(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = (int32_t)ix_attr_int(c, "dtype", elem0(c));
  if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 0, el, x, (int64_t)r);
  else ix_set_tensor(c, 0, el, NULL, 2);
  return OX_OK;
}

static int like_random(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int32_t el = (int32_t)ix_attr_int(c, "dtype", elem0(c));
  if (ix_shape(c, 0, &x, &r)) ix_set_tensor(c, 0, el, x, (int64_t)r);
  else ix_set_tensor(c, 0, el, NULL, -1);
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
  if (ix_const_ints(c, 1, &dv, &nd) && nd == 1) depth = ox_dim_known(dv[0]);
  size_t j = 0;
  for (size_t k = 0; k <= r; k++) o[k] = k == ax ? depth : x[j++];
  ix_set_tensor(c, 0, el, o, (int64_t)r + 1);
  return OX_OK;
}

static int gather_elements(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 1, &x, &r)) ix_set_tensor(c, 0, elem0(c), x, (int64_t)r);
  else ix_set_tensor(c, 0, elem0(c), NULL, -1);
  return OX_OK;
}

static int lp_like_identity(ox_ictx *c) { return same_as_input0(c); }

static int scan_op(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_graph *body = ba->g;
  if (c->since < 9) return OX_OK; /* opset 8 has a batch dimension; types only via schema */
  int64_t nsi = ix_attr_int(c, "num_scan_inputs", 0);
  if (nsi < 1 || (size_t)nsi > c->n_in)
    return ix_fail(c, "num_scan_inputs is %lld; the node has %zu inputs", (long long)nsi, c->n_in);
  size_t nstate = c->n_in - (size_t)nsi;
  /* body: (state..., scan input elements...) -> (state..., scan output elements...) */
  if (body->n_input != c->n_in)
    return ix_fail(c, "body has %zu inputs; expected %zu (%zu state variables and %lld scan inputs)",
                   body->n_input, c->n_in, nstate, (long long)nsi);
  if (body->n_output != c->n_out || c->n_out < nstate)
    return ix_fail(c, "body has %zu outputs and the node %zu; both must be %zu state variables "
                      "plus the scan outputs",
                   body->n_output, c->n_out, nstate);
  const int64_t *in_axes = NULL, *out_axes = NULL;
  size_t nia = 0, noa = 0;
  ix_attr_ints(c, "scan_input_axes", &in_axes, &nia);
  ix_attr_ints(c, "scan_output_axes", &out_axes, &noa);
  const ox_type **it = ox_arena_calloc(c->a, c->n_in ? c->n_in : 1, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  ox_dim seq = ox_dim_unknown();
  for (size_t i = 0; i < c->n_in; i++) {
    if (i < nstate) {
      it[i] = c->in[i];
      continue;
    }
    const ox_dim *x;
    size_t r;
    if (!ix_shape(c, i, &x, &r) || r == 0) continue;
    size_t ax = 0;
    if (in_axes && i - nstate < nia && !ix_axis(in_axes[i - nstate], r, &ax)) return ix_fail(c, "bad scan axis");
    ox_dim *d = ox_arena_calloc(c->a, r, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k < r; k++)
      if (k != ax) d[j++] = x[k];
    seq = x[ax];
    ox_type *t = ox_type_new_tensor(c->a, ix_elem(c, i), NULL, 0);
    if (!t) return OX_ENOMEM;
    t->shape->dim = d;
    t->shape->n_dim = r - 1;
    it[i] = t;
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, body, it, c->n_in, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < no; o++) {
    if (!ot[o]) continue;
    if (o < nstate) {
      c->out[o] = ox_type_clone(c->a, ot[o]);
      continue;
    }
    const ox_type *s = ot[o];
    if (s->kind != OX_TYPE_TENSOR || !s->shape) continue;
    size_t r = s->shape->n_dim;
    size_t ax = 0;
    if (out_axes && o - nstate < noa && !ix_axis(out_axes[o - nstate], r + 1, &ax)) return ix_fail(c, "bad scan output axis");
    ox_dim *d = ox_arena_calloc(c->a, r + 1, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k <= r; k++) d[k] = k == ax ? seq : s->shape->dim[j++];
    ix_set_tensor(c, o, s->elem_type, d, (int64_t)r + 1);
  }
  return OX_OK;
}

/* ------------------------------------------------------------ sequences, optionals */

static ox_type *wrap_type(ox_ictx *c, ox_type_kind kind, const ox_type *elem) {
  ox_type *t = ox_arena_alloc(c->a, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->elem = elem ? ox_type_clone(c->a, elem) : NULL;
  return t;
}

/* a tensor type with the same element type and rank, dims unknown where
 * they differ (sequence elements may differ in shape) */
static ox_type *union_tensor(ox_ictx *c, ox_type *acc, const ox_type *t) {
  if (!t) return acc;
  if (!acc) return ox_type_clone(c->a, t);
  if (acc->kind != OX_TYPE_TENSOR || t->kind != OX_TYPE_TENSOR) return acc;
  if (!acc->shape || !t->shape || acc->shape->n_dim != t->shape->n_dim) {
    acc->shape = NULL;
    return acc;
  }
  for (size_t k = 0; k < acc->shape->n_dim; k++)
    if (!ox_dim_same(&acc->shape->dim[k], &t->shape->dim[k])) acc->shape->dim[k] = ox_dim_unknown();
  return acc;
}

static int seq_construct(ox_ictx *c) {
  ox_type *u = NULL;
  for (size_t i = 0; i < c->n_in; i++) u = union_tensor(c, u, c->in[i]);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, u);
  return OX_OK;
}

static int seq_empty(ox_ictx *c) {
  int32_t el = (int32_t)ix_attr_int(c, "dtype", OX_FLOAT);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, ox_type_new_tensor(c->a, el, NULL, 0));
  if (c->out[0] && c->out[0]->elem) c->out[0]->elem->shape = NULL;
  return OX_OK;
}

static int seq_same(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (!s || s->kind != OX_TYPE_SEQUENCE) return OX_OK;
  ox_type *u = s->elem ? ox_type_clone(c->a, s->elem) : NULL;
  if (strcmp(c->node->op_type, "SequenceInsert") == 0) u = union_tensor(c, u, c->in[1]);
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, u);
  return OX_OK;
}

static int seq_at(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (s && s->kind == OX_TYPE_SEQUENCE && s->elem) c->out[0] = ox_type_clone(c->a, s->elem);
  return OX_OK;
}

static int seq_length(ox_ictx *c) {
  ix_set_tensor(c, 0, OX_INT64, NULL, 0);
  return OX_OK;
}

static int split_to_seq(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  ox_type *el = NULL;
  if (ix_shape(c, 0, &x, &r)) {
    size_t ax;
    if (!ix_axis(ix_attr_int(c, "axis", 0), r, &ax)) return ix_fail(c, "axis out of range");
    bool keep = ix_attr_int(c, "keepdims", 1) != 0 || ix_has_input(c, 1);
    el = ox_type_new_tensor(c->a, elem0(c), NULL, 0);
    if (!el) return OX_ENOMEM;
    ox_dim *d = ox_arena_calloc(c->a, r ? r : 1, sizeof(ox_dim));
    if (!d) return OX_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; k < r; k++) {
      if (k == ax) {
        if (keep) d[j++] = ox_dim_unknown();
      } else {
        d[j++] = x[k];
      }
    }
    el->shape->dim = d;
    el->shape->n_dim = j;
  } else if (elem0(c)) {
    el = ox_type_new_tensor(c->a, elem0(c), NULL, 0);
    if (el) el->shape = NULL;
  }
  c->out[0] = wrap_type(c, OX_TYPE_SEQUENCE, el);
  return OX_OK;
}

static int concat_from_seq(ox_ictx *c) {
  const ox_type *s = c->in[0];
  if (!s || s->kind != OX_TYPE_SEQUENCE || !s->elem) return OX_OK;
  const ox_type *e = s->elem;
  if (e->kind != OX_TYPE_TENSOR) return OX_OK;
  if (!e->shape) return ix_set_tensor(c, 0, e->elem_type, NULL, -1), OX_OK;
  size_t r = e->shape->n_dim;
  bool nw = ix_attr_int(c, "new_axis", 0) != 0;
  size_t R = r + (nw ? 1 : 0);
  size_t ax;
  if (!ix_axis(ix_attr_int(c, "axis", 0), R, &ax)) return ix_fail(c, "axis out of range");
  ox_dim *d = ox_arena_calloc(c->a, R ? R : 1, sizeof(ox_dim));
  if (!d) return OX_ENOMEM;
  size_t j = 0;
  for (size_t k = 0; k < R; k++) {
    if (k == ax) {
      d[k] = ox_dim_unknown();
      if (!nw) j++;
    } else {
      d[k] = e->shape->dim[j++];
    }
  }
  ix_set_tensor(c, 0, e->elem_type, d, (int64_t)R);
  return OX_OK;
}

static int optional_op(ox_ictx *c) {
  const ox_attr *tp = ix_attr(c, "type");
  if (ix_has_input(c, 0)) c->out[0] = wrap_type(c, OX_TYPE_OPTIONAL, c->in[0]);
  else if (tp && tp->tp) c->out[0] = wrap_type(c, OX_TYPE_OPTIONAL, tp->tp);
  return OX_OK;
}

static int optional_get(ox_ictx *c) {
  const ox_type *t = c->in[0];
  if (!t) return OX_OK;
  if (t->kind == OX_TYPE_OPTIONAL) {
    if (t->elem) c->out[0] = ox_type_clone(c->a, t->elem);
  } else {
    c->out[0] = ox_type_clone(c->a, t);
  }
  return OX_OK;
}

static int optional_has(ox_ictx *c) {
  ix_set_tensor(c, 0, OX_BOOL, NULL, 0);
  return OX_OK;
}

static int sequence_map(ox_ictx *c) {
  const ox_attr *ba = ix_attr(c, "body");
  if (!ba || !ba->g) return ix_fail(c, "missing body");
  const ox_type **it = ox_arena_calloc(c->a, c->n_in ? c->n_in : 1, sizeof(ox_type *));
  if (!it) return OX_ENOMEM;
  for (size_t i = 0; i < c->n_in; i++) {
    const ox_type *t = c->in[i];
    it[i] = t && t->kind == OX_TYPE_SEQUENCE ? t->elem : t;
  }
  size_t no;
  ox_type **ot = ix_subgraph(c, ba->g, it, c->n_in, &no);
  if (!ot) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < no; o++) {
    ox_type *e = ot[o] ? ox_type_clone(c->a, ot[o]) : NULL;
    if (e && e->shape)
      for (size_t k = 0; k < e->shape->n_dim; k++)
        if (!e->shape->dim[k].has_value) e->shape->dim[k] = ox_dim_unknown();
    c->out[o] = wrap_type(c, OX_TYPE_SEQUENCE, e);
  }
  return OX_OK;
}

/* ------------------------------------------------------------ table */

#define U(op) {"", op, 1, 1000, unary}
static const ox_infer_def defs[] = {
    U("Abs"), U("Neg"), U("Reciprocal"), U("Floor"), U("Ceil"), U("Round"), U("Sqrt"), U("Exp"),
    U("Log"), U("Sin"), U("Cos"), U("Tan"), U("Asin"), U("Acos"), U("Atan"), U("Sinh"), U("Cosh"),
    U("Asinh"), U("Acosh"), U("Atanh"), U("Erf"), U("Sign"), U("Relu"), U("LeakyRelu"), U("Elu"),
    U("Selu"), U("Celu"), U("Sigmoid"), U("HardSigmoid"), U("HardSwish"), U("Softplus"),
    U("Softsign"), U("Gelu"), U("Mish"), U("ThresholdedRelu"), U("Shrink"), U("Clip"), U("Tanh"),
    U("Softmax"), U("LogSoftmax"), U("Hardmax"), U("LRN"), U("BitwiseNot"),
    U("InstanceNormalization"), U("GroupNormalization"), U("RMSNormalization"),
    U("LpNormalization"), U("MeanVarianceNormalization"), U("CumSum"), U("CumProd"), U("Trilu"),
    U("ReverseSequence"), U("Swish"), U("ScatterElements"), U("ScatterND"), U("Scatter"),
    U("RotaryEmbedding"),
    {"", "IsNaN", 1, 1000, to_bool_same},
    {"", "Not", 1, 1000, not_op},
    {"", "Identity", 1, 1000, identity},
    {"", "SequenceConstruct", 1, 1000, seq_construct},
    {"", "SequenceEmpty", 1, 1000, seq_empty},
    {"", "SequenceInsert", 1, 1000, seq_same},
    {"", "SequenceErase", 1, 1000, seq_same},
    {"", "SequenceAt", 1, 1000, seq_at},
    {"", "SequenceLength", 1, 1000, seq_length},
    {"", "SplitToSequence", 1, 1000, split_to_seq},
    {"", "ConcatFromSequence", 1, 1000, concat_from_seq},
    {"", "Optional", 1, 1000, optional_op},
    {"", "OptionalGetElement", 1, 1000, optional_get},
    {"", "OptionalHasElement", 1, 1000, optional_has},
    {"", "SequenceMap", 1, 1000, sequence_map},
    {"", "Det", 1, 1000, det},
    {"", "IsInf", 1, 1000, to_bool_same},
    {"", "Add", 1, 1000, binary_arith},
    {"", "Sub", 1, 1000, binary_arith},
    {"", "Mul", 1, 1000, binary_arith},
    {"", "Div", 1, 1000, binary_arith},
    {"", "Pow", 1, 1000, binary_arith},
    {"", "Mod", 1, 1000, binary_arith},
    {"", "BitShift", 1, 1000, binary_arith},
    {"", "BitwiseAnd", 1, 1000, binary_arith},
    {"", "BitwiseOr", 1, 1000, binary_arith},
    {"", "BitwiseXor", 1, 1000, binary_arith},
    {"", "And", 1, 1000, compare},
    {"", "Or", 1, 1000, compare},
    {"", "Xor", 1, 1000, compare},
    {"", "Equal", 1, 1000, compare},
    {"", "Greater", 1, 1000, compare},
    {"", "Less", 1, 1000, compare},
    {"", "GreaterOrEqual", 1, 1000, compare},
    {"", "LessOrEqual", 1, 1000, compare},
    {"", "Max", 1, 1000, variadic},
    {"", "Min", 1, 1000, variadic},
    {"", "Sum", 1, 1000, variadic},
    {"", "Mean", 1, 1000, variadic},
    {"", "Where", 1, 1000, where},
    {"", "PRelu", 1, 1000, prelu},
    {"", "Cast", 1, 1000, cast},
    {"", "CastLike", 1, 1000, castlike},
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
    {"", "Pad", 1, 1000, pad_op},
    {"", "Resize", 1, 1000, resize},
    {"", "Upsample", 1, 1000, resize},
    {"", "TopK", 1, 1000, topk},
    {"", "Constant", 1, 1000, constant},
    {"", "If", 1, 1000, if_op},
    {"", "Loop", 1, 1000, loop_op},
    {"", "Scan", 1, 1000, scan_op},
    {"", "LSTM", 1, 1000, rnn_common},
    {"", "GRU", 1, 1000, rnn_common},
    {"", "RNN", 1, 1000, rnn_common},
    {"", "DepthToSpace", 1, 1000, depth_space},
    {"", "SpaceToDepth", 1, 1000, depth_space},
    {"", "NonZero", 1, 1000, nonzero},
    {"", "QuantizeLinear", 1, 1000, quantize},
    {"", "DequantizeLinear", 1, 1000, dequantize},
    {"", "DynamicQuantizeLinear", 1, 1000, dyn_quant},
    {"", "EyeLike", 1, 1000, eyelike},
    {"", "RandomUniformLike", 1, 1000, like_random},
    {"", "RandomNormalLike", 1, 1000, like_random},
    {"", "RandomUniform", 1, 1000, random_shape},
    {"", "RandomNormal", 1, 1000, random_shape},
    {"", "OneHot", 1, 1000, onehot},
    {"", "Bernoulli", 1, 1000, like_random},
    {"ai.onnx.ml", "Binarizer", 1, 1000, lp_like_identity},
    {NULL, NULL, 0, 0, NULL},
};

extern const ox_infer_def ox_infer_defs2[];

const ox_infer_def *ox_infer_find(const char *domain, const char *op, int64_t since) {
  bool dflt = ox_is_default_domain(domain);
  const ox_infer_def *tables[2] = {defs, ox_infer_defs2};
  for (int t = 0; t < 2; t++)
    for (const ox_infer_def *d = tables[t]; d->op; d++) {
      bool dd = ox_is_default_domain(d->domain);
      if (dd != dflt || (!dd && strcmp(d->domain, domain) != 0)) continue;
      if (strcmp(d->op, op) == 0 && since >= d->since_min && since <= d->since_max) return d;
    }
  return NULL;
}
