/* dims.c - arithmetic on dims that may be symbolic. A symbolic result is kept
 * as an expression string ("N*3", "(H-1)/2+1"), parenthesised by precedence,
 * so that equal computations give equal names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_impl.h"

ox_dim ox_dim_known(int64_t v) {
  ox_dim d = {0};
  d.value = v;
  d.has_value = true;
  return d;
}

ox_dim ox_dim_unknown(void) {
  ox_dim d = {0};
  return d;
}

ox_dim ox_dim_sym(ox_arena *a, const char *s) {
  ox_dim d = {0};
  d.param = s ? ox_arena_strdup(a, s) : NULL;
  return d;
}

bool ox_dim_is(const ox_dim *d, int64_t v) { return d->has_value && d->value == v; }

bool ox_dim_same(const ox_dim *x, const ox_dim *y) {
  if (x->has_value || y->has_value) return x->has_value && y->has_value && x->value == y->value;
  return x->param && y->param && strcmp(x->param, y->param) == 0;
}

/* precedence of an expression: 1 sum, 2 product, 3 atom */
static int prec(const char *s) {
  int depth = 0, p = 3;
  for (const char *q = s; *q; q++) {
    if (*q == '(')
      depth++;
    else if (*q == ')')
      depth--;
    else if (depth == 0) {
      if ((*q == '+' || *q == '-') && q != s) return 1;
      if (*q == '*' || *q == '/') p = 2;
    }
  }
  return p;
}

static void fmt(char *buf, size_t n, const ox_dim *d) {
  if (d->has_value)
    snprintf(buf, n, "%lld", (long long)d->value);
  else
    snprintf(buf, n, "%s", d->param);
}

/* Builds "x op y", wrapping an operand in parentheses when its precedence is
 * below need_l / need_r. */
static ox_dim binop(ox_arena *a, const ox_dim *x, const ox_dim *y, const char *op, int need_l,
                    int need_r) {
  char xs[256], ys[256];
  fmt(xs, sizeof xs, x);
  fmt(ys, sizeof ys, y);
  bool px = !x->has_value && prec(xs) < need_l, py = !y->has_value && prec(ys) < need_r;
  if (!y->has_value && y->param[0] == '-') py = true;
  if (strlen(xs) + strlen(ys) > 200) return ox_dim_unknown(); /* keep names short */
  ox_dim d = {0};
  d.param = ox_arena_printf(a, "%s%s%s%s%s%s%s", px ? "(" : "", xs, px ? ")" : "", op,
                            py ? "(" : "", ys, py ? ")" : "");
  return d;
}

static bool known2(const ox_dim *x, const ox_dim *y) { return x->has_value && y->has_value; }
static bool usable(const ox_dim *d) { return d->has_value || (d->param && *d->param); }

ox_dim ox_dim_mul(ox_arena *a, ox_dim x, ox_dim y) {
  if (known2(&x, &y)) {
    int64_t r;
    return ox_mul_i64(x.value, y.value, &r) ? ox_dim_known(r) : ox_dim_unknown();
  }
  if (ox_dim_is(&x, 1)) return y;
  if (ox_dim_is(&y, 1)) return x;
  if (ox_dim_is(&x, 0) || ox_dim_is(&y, 0)) return ox_dim_known(0);
  if (!usable(&x) || !usable(&y)) return ox_dim_unknown();
  return binop(a, &x, &y, "*", 2, 3);
}

/* Splits "E+k" / "E-k" (k a number at the top level) into E and k, so that
 * constants fold: (E+1)-1 -> E. */
static bool split_const(ox_arena *a, const char *s, char **e, int64_t *k) {
  size_t n = strlen(s);
  size_t i = n;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') i--;
  if (i == n || i < 2 || (s[i - 1] != '+' && s[i - 1] != '-')) return false;
  /* the operator must be at depth 0 (it is the last char before the digits) */
  long long v = strtoll(s + i, NULL, 10);
  *k = s[i - 1] == '-' ? -v : v;
  *e = ox_arena_strndup(a, s, i - 1);
  return *e != NULL;
}

ox_dim ox_dim_add(ox_arena *a, ox_dim x, ox_dim y) {
  if (x.param && y.has_value) {
    char *e;
    int64_t k;
    if (split_const(a, x.param, &e, &k)) {
      int64_t t;
      if (ox_add_i64(k, y.value, &t)) {
        ox_dim base = {0};
        base.param = e;
        return t == 0 ? base : ox_dim_add(a, base, ox_dim_known(t));
      }
    }
  }
  if (known2(&x, &y)) {
    int64_t r;
    return ox_add_i64(x.value, y.value, &r) ? ox_dim_known(r) : ox_dim_unknown();
  }
  if (ox_dim_is(&x, 0)) return y;
  if (ox_dim_is(&y, 0)) return x;
  if (!usable(&x) || !usable(&y)) return ox_dim_unknown();
  if (y.has_value && y.value < 0 && y.value != INT64_MIN) {
    ox_dim m = ox_dim_known(-y.value);
    return binop(a, &x, &m, "-", 1, 2);
  }
  return binop(a, &x, &y, "+", 1, 2);
}

ox_dim ox_dim_sub(ox_arena *a, ox_dim x, ox_dim y) {
  if (known2(&x, &y)) {
    int64_t r;
    return !__builtin_sub_overflow(x.value, y.value, &r) ? ox_dim_known(r) : ox_dim_unknown();
  }
  if (ox_dim_is(&y, 0)) return x;
  if (ox_dim_same(&x, &y)) return ox_dim_known(0);
  if (!usable(&x) || !usable(&y)) return ox_dim_unknown();
  if (y.has_value && y.value != INT64_MIN) return ox_dim_add(a, x, ox_dim_known(-y.value));
  return binop(a, &x, &y, "-", 1, 2);
}

ox_dim ox_dim_div(ox_arena *a, ox_dim x, ox_dim y) {
  if (known2(&x, &y)) {
    if (y.value == 0 || (x.value == INT64_MIN && y.value == -1)) return ox_dim_unknown();
    int64_t q = x.value / y.value;
    if ((x.value % y.value != 0) && ((x.value < 0) != (y.value < 0))) q--;
    return ox_dim_known(q);
  }
  if (ox_dim_is(&y, 1)) return x;
  if (!usable(&x) || !usable(&y)) return ox_dim_unknown();
  return binop(a, &x, &y, "/", 2, 3);
}

ox_dim ox_dim_ceildiv(ox_arena *a, ox_dim x, ox_dim y) {
  if (known2(&x, &y)) {
    if (y.value <= 0) return ox_dim_unknown();
    int64_t q = x.value / y.value;
    if (x.value % y.value > 0) q++;
    return ox_dim_known(q);
  }
  if (ox_dim_is(&y, 1)) return x;
  /* ceil(x/y) = (x+y-1)/y */
  return ox_dim_div(a, ox_dim_add(a, x, ox_dim_sub(a, y, ox_dim_known(1))), y);
}

ox_dim ox_dim_addc(ox_arena *a, ox_dim x, int64_t c) { return ox_dim_add(a, x, ox_dim_known(c)); }

/* ---- values that may not give a dim: unknown rather than undefined
 * behaviour (a float outside int64 converted, int64 arithmetic overflowing) */

bool ix_sub_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_sub_overflow(a, b, r); }

ox_dim ox_dim_nonneg(int64_t v) { return v >= 0 ? ox_dim_known(v) : ox_dim_unknown(); }

ox_dim ox_dim_floor_f64(double v) {
  /* !(v >= 0) also refuses NaN; 2^63 is the first double above INT64_MAX */
  if (!(v >= 0) || !(v < 9223372036854775808.0)) return ox_dim_unknown();
  return ox_dim_known((int64_t)v);
}
