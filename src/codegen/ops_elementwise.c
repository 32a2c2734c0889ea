/* ops_elementwise.c - C generators for the element-wise operators: unary
 * math and activations (an expression over `x` per table row), binary and
 * variadic arithmetic, comparisons and logic under numpy broadcasting,
 * Where, Clip, PRelu. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* An expression template: `@fn(` becomes fn's float or double name, `#`
 * after a literal its float suffix, `$A`/`$B` the attributes' exact values. */
typedef struct unary_row {
  const char *op;
  const char *expr;
  bool ints;     /* also for integer types (otherwise float and double only) */
  const char *a; /* attribute names and defaults for $A and $B */
  float a_dflt;
  const char *b;
  float b_dflt;
} unary_row;

static const unary_row unary_rows[] = {
    {"Relu", "x > 0 ? x : 0", true, NULL, 0, NULL, 0},
    {"Neg", "-x", true, NULL, 0, NULL, 0},
    {"Abs", "x < 0 ? -x : x", true, NULL, 0, NULL, 0},
    {"Sign", "(x > 0) - (x < 0)", true, NULL, 0, NULL, 0},
    {"Sigmoid", "1 / (1 + @exp(-x))", false, NULL, 0, NULL, 0},
    {"Tanh", "@tanh(x)", false, NULL, 0, NULL, 0},
    {"Exp", "@exp(x)", false, NULL, 0, NULL, 0},
    {"Log", "@log(x)", false, NULL, 0, NULL, 0},
    {"Sqrt", "@sqrt(x)", false, NULL, 0, NULL, 0},
    {"Erf", "@erf(x)", false, NULL, 0, NULL, 0},
    {"Floor", "@floor(x)", false, NULL, 0, NULL, 0},
    {"Ceil", "@ceil(x)", false, NULL, 0, NULL, 0},
    {"Round", "@rint(x)", false, NULL, 0, NULL, 0}, /* half to even in the default mode */
    {"Reciprocal", "1 / x", false, NULL, 0, NULL, 0},
    {"Sin", "@sin(x)", false, NULL, 0, NULL, 0},
    {"Cos", "@cos(x)", false, NULL, 0, NULL, 0},
    {"Tan", "@tan(x)", false, NULL, 0, NULL, 0},
    {"Asin", "@asin(x)", false, NULL, 0, NULL, 0},
    {"Acos", "@acos(x)", false, NULL, 0, NULL, 0},
    {"Atan", "@atan(x)", false, NULL, 0, NULL, 0},
    {"Sinh", "@sinh(x)", false, NULL, 0, NULL, 0},
    {"Cosh", "@cosh(x)", false, NULL, 0, NULL, 0},
    {"Asinh", "@asinh(x)", false, NULL, 0, NULL, 0},
    {"Acosh", "@acosh(x)", false, NULL, 0, NULL, 0},
    {"Atanh", "@atanh(x)", false, NULL, 0, NULL, 0},
    {"Softplus", "@log(@exp(x) + 1)", false, NULL, 0, NULL, 0},
    {"Softsign", "x / (1 + @fabs(x))", false, NULL, 0, NULL, 0},
    {"Mish", "x * @tanh(@log1p(@exp(x)))", false, NULL, 0, NULL, 0},
    {"LeakyRelu", "x < 0 ? $A * x : x", false, "alpha", 0.01f, NULL, 0},
    {"Elu", "x < 0 ? $A * (@exp(x) - 1) : x", false, "alpha", 1.0f, NULL, 0},
    {"Selu", "x <= 0 ? $B * ($A * @exp(x) - $A) : $B * x", false, "alpha",
     1.67326319217681884765625f, "gamma", 1.05070102214813232421875f},
    {"Celu", "(x > 0 ? x : 0) + (x < 0 ? $A * (@exp(x / $A) - 1) : 0)", false, "alpha", 1.0f, NULL,
     0},
    {"HardSigmoid", "@fmax(0, @fmin(1, $A * x + $B))", false, "alpha", 0.2f, "beta", 0.5f},
    {"HardSwish", "x * @fmax(0, @fmin(1, x / 6 + 0.5#))", false, NULL, 0, NULL, 0},
    {"ThresholdedRelu", "x > $A ? x : 0", false, "alpha", 1.0f, NULL, 0},
    {"Shrink", "x < -$B ? x + $A : (x > $B ? x - $A : 0)", false, "bias", 0.0f, "lambd", 0.5f},
    {"IsNaN", "x != x", false, NULL, 0, NULL, 0},
    {"Swish", "x / (1 + @exp(-$A * x))", false, "alpha", 1.0f, NULL, 0},
    {"BitwiseNot", "~x", true, NULL, 0, NULL, 0},
    {NULL, NULL, false, NULL, 0, NULL, 0},
};

/* Expands a template for element type dt into buf. */
static void expand(cg_ctx *c, const char *t, int32_t dt, const char *A, const char *B,
                   ox_buf *out) {
  bool f = dt == OX_FLOAT;
  for (const char *p = t; *p; p++) {
    if (*p == '@') {
      const char *q = p + 1;
      while (*q && *q != '(') q++;
      ox_buf_append(out, p + 1, (size_t)(q - p - 1));
      if (f) ox_buf_putc(out, 'f');
      p = q - 1;
    } else if (*p == '#') {
      if (f) ox_buf_putc(out, 'f');
    } else if (*p == '$' && (p[1] == 'A' || p[1] == 'B')) {
      ox_buf_puts(out, p[1] == 'A' ? A : B);
      p++;
    } else {
      ox_buf_putc(out, *p);
    }
  }
  (void)c;
}

static int gen_unary(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  const unary_row *r = unary_rows;
  while (strcmp(r->op, n->op_type) != 0) r++;
  if (n_in < 1 || !in[0] || n_out < 1 || !out[0]) return cg_fail(c, OX_EMODEL, "expects one input");
  int32_t dt = in[0]->dtype;
  /* float16/bfloat16/float8: loaded as float, the float expression stored back */
  bool sf = cg_is_small_float(dt);
  if (sf && strcmp(n->op_type, "BitwiseNot") == 0)
    return cg_fail(c, OX_EMODEL, "expects integers");
  if (!sf && !r->ints && cg_need_float(c, in[0])) return c->e->code;
  if (r->ints && dt == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool input");
  int32_t et = sf ? OX_FLOAT : dt; /* the type computed in */
  bool isf = et == OX_FLOAT || et == OX_DOUBLE;
  if (!isf && strcmp(n->op_type, "Abs") == 0 &&
      (dt == OX_UINT8 || dt == OX_UINT16 || dt == OX_UINT32 || dt == OX_UINT64)) {
    cg_printf(c, "  memcpy(Y0, X0, %zu);\n", out[0]->nbytes);
    return OX_OK;
  }
  char A[64] = "", B[64] = "";
  if (r->a) cg_float_lit(A, sizeof A, ox_node_attr_float(n, r->a, r->a_dflt), et == OX_FLOAT);
  if (r->b) cg_float_lit(B, sizeof B, ox_node_attr_float(n, r->b, r->b_dflt), et == OX_FLOAT);
  ox_buf ex = {0};
  const char *t = r->expr;
  bool uns = dt == OX_UINT8 || dt == OX_UINT16 || dt == OX_UINT32 || dt == OX_UINT64;
  if (strcmp(n->op_type, "Abs") == 0 && isf) t = "@fabs(x)";
  if (strcmp(n->op_type, "Sign") == 0 && uns) t = "x > 0"; /* x < 0 would warn */
  expand(c, t, et, A, B, &ex);
  ox_buf_putc(&ex, 0);
  const char *e = ex.data ? (const char *)ex.data : "";
  int32_t ot = out[0]->dtype;
  const char *x = sf ? cg_load(c, dt, "X0[i]") : "X0[i]";
  const char *y = cg_is_small_float(ot) ? cg_store(c, ot, ox_arena_printf(c->a, "(float)(%s)", e), true)
                                        : ox_arena_printf(c->a, "(%s)(%s)", cg_ctype(ot), e);
  if (!x || !y) {
    ox_buf_free(&ex);
    return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  }
  cg_printf(c,
            "  for (size_t i = 0; i < %lld; i++) {\n    const %s x = %s;\n    Y0[i] = %s;\n  }\n",
            (long long)in[0]->numel, cg_ctype(et), x, y);
  ox_buf_free(&ex);
  return OX_OK;
}

static int gen_gelu(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  if (n_in < 1 || !in[0]) return cg_fail(c, OX_EMODEL, "expects one input");
  bool sf = cg_is_small_float(in[0]->dtype);
  if (!sf && cg_need_float(c, in[0])) return c->e->code;
  const char *ap = ox_node_attr_str(n, "approximate", "none");
  const char *t = strcmp(ap, "tanh") == 0
                      ? "0.5# * x * (1 + @tanh(0.7978845608028654# * (x + 0.044715# * x * x * x)))"
                      : "0.5# * x * (1 + @erf(x * 0.7071067811865476#))";
  ox_buf ex = {0};
  int32_t et = sf ? OX_FLOAT : in[0]->dtype;
  expand(c, t, et, "", "", &ex);
  ox_buf_putc(&ex, 0);
  const char *x = sf ? cg_load(c, in[0]->dtype, "X0[i]") : "X0[i]";
  const char *y = sf ? cg_store(c, in[0]->dtype, (const char *)ex.data, true) : (const char *)ex.data;
  cg_printf(
      c, "  for (size_t i = 0; i < %lld; i++) {\n    const %s x = %s;\n    Y0[i] = %s;\n  }\n",
      (long long)in[0]->numel, cg_ctype(et), x ? x : "0", y ? y : "0");
  ox_buf_free(&ex);
  (void)out;
  return OX_OK;
}

static int gen_isinf(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_in, (void)out, (void)n_out;
  bool sf = cg_is_small_float(in[0]->dtype);
  if (!sf && cg_need_float(c, in[0])) return c->e->code;
  bool neg = ox_node_attr_int(n, "detect_negative", 1) != 0,
       pos = ox_node_attr_int(n, "detect_positive", 1) != 0;
  const char *x = sf ? cg_load(c, in[0]->dtype, "X0[i]") : "X0[i]";
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n    const %s x = %s;\n",
            (long long)in[0]->numel, sf ? "float" : cg_ctype(in[0]->dtype), x ? x : "0");
  cg_printf(c, "    Y0[i] = %s%s%s%s;\n  }\n", pos ? "x == INFINITY" : "", pos && neg ? " || " : "",
            neg ? "x == -INFINITY" : "", pos || neg ? "" : "0 * x");
  return OX_OK;
}

static int gen_not(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n, (void)n_in, (void)out, (void)n_out;
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = !X0[i];\n", (long long)in[0]->numel);
  return OX_OK;
}

/* Clip: bounds from attributes (opset < 11) or from inputs 1 and 2, read
 * at run time, so they need not be constants. */
static int gen_clip(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out, (void)out;
  int32_t dt = in[0]->dtype;
  if (dt == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool input");
  const char *T = cg_ctype(dt);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n    %s v = X0[i];\n",
            (long long)in[0]->numel, T);
  if (c->opset < 11) {
    char lo[64], hi[64];
    cg_float_lit(lo, sizeof lo, ox_node_attr_float(n, "min", -3.402823466e38f), dt == OX_FLOAT);
    cg_float_lit(hi, sizeof hi, ox_node_attr_float(n, "max", 3.402823466e38f), dt == OX_FLOAT);
    cg_printf(c, "    if (v < %s) v = %s;\n    if (v > %s) v = %s;\n", lo, lo, hi, hi);
  } else {
    if (n_in > 1 && in[1]) cg_printf(c, "    if (v < X1[0]) v = X1[0];\n");
    if (n_in > 2 && in[2]) cg_printf(c, "    if (v > X2[0]) v = X2[0];\n");
  }
  cg_printf(c, "    Y0[i] = v;\n  }\n");
  return OX_OK;
}

typedef struct binary_row {
  const char *op;
  const char *expr; /* over a and b */
  int kind;         /* 0 any numeric, 1 float only, 2 bool only, 3 not bool, 4 integers */
} binary_row;

static const binary_row binary_rows[] = {
    {"Add", "a + b", 3},          {"Sub", "a - b", 3},
    {"Mul", "a * b", 3},          {"Div", "a / b", 3},
    {"Pow", "@pow(a, b)", 1},     {"Equal", "a == b", 0},
    {"Less", "a < b", 0},         {"Greater", "a > b", 0},
    {"LessOrEqual", "a <= b", 0}, {"GreaterOrEqual", "a >= b", 0},
    {"And", "a && b", 2},         {"Or", "a || b", 2},
    {"Xor", "!a != !b", 2},       {"PRelu", "a < 0 ? a * b : a", 3},
    {"BitwiseAnd", "a & b", 4},   {"BitwiseOr", "a | b", 4},
    {"BitwiseXor", "a ^ b", 4},   {NULL, NULL, 0},
};

/* Pow of an integer base, as the runtime computes it: with an exponent of
 * the same type, by squaring in 64-bit unsigned arithmetic (the low bits,
 * so it wraps as the type does; a negative exponent gives 0 except for the
 * bases 1 and -1); with an exponent of another type, through double, the
 * result truncated (0 when not finite). */
static int gen_int_pow(cg_ctx *c, cg_val **in, cg_val **out) {
  int32_t dt = in[0]->dtype;
  const char *T = cg_ctype(out[0]->dtype);
  bool sgn = dt == OX_INT8 || dt == OX_INT16 || dt == OX_INT32 || dt == OX_INT64;
  char body[640];
  if (in[1]->dtype == dt)
    snprintf(body, sizeof body,
             "const %s a = X0[i0], b = X1[i1]; uint64_t r = 1, bx = (uint64_t)a; %s"
             "for (uint64_t e = (uint64_t)b; e; e >>= 1) { if (e & 1) r *= bx; bx *= bx; } "
             "Y0[o] = (%s)r;",
             cg_ctype(dt),
             sgn ? "if (b < 0) r = a == 1 ? 1u : a == -1 ? ((b & 1) ? (uint64_t)-1 : 1u) : 0u; else "
                 : "",
             T);
  else
    snprintf(body, sizeof body,
             "const double p = pow((double)X0[i0], (double)X1[i1]); "
             "Y0[o] = (%s)(isfinite(p) ? trunc(p) : 0.0);",
             T);
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 2, body);
  return OX_OK;
}

static int gen_binary(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const binary_row *r = binary_rows;
  while (strcmp(r->op, n->op_type) != 0) r++;
  if (n_in != 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects two inputs");
  int32_t dt = in[0]->dtype;
  bool sf = cg_is_small_float(dt);
  if (sf && (r->kind == 2 || r->kind == 4)) return cg_fail(c, OX_EMODEL, "expects integers or bool");
  if (sf) { /* float16/bfloat16/float8: computed in float */
    ox_buf ex = {0};
    expand(c, r->expr, OX_FLOAT, "", "", &ex);
    ox_buf_putc(&ex, 0);
    int32_t ot = out[0]->dtype, bt = in[1]->dtype;
    const char *a = cg_load(c, dt, "X0[i0]");
    const char *b = cg_is_small_float(bt) ? cg_load(c, bt, "X1[i1]") : "(float)X1[i1]";
    const char *y = cg_is_small_float(ot) ? cg_store(c, ot, (const char *)ex.data, true)
                                          : ox_arena_printf(c->a, "(%s)(%s)", cg_ctype(ot),
                                                            (const char *)ex.data);
    const char *body = ox_arena_printf(c->a, "const float a = %s, b = %s; Y0[o] = %s;", a, b, y);
    ox_buf_free(&ex);
    if (!a || !b || !y || !body) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 2, body);
    return OX_OK;
  }
  if (strcmp(r->op, "Pow") == 0 && dt != OX_BOOL && dt != OX_FLOAT && dt != OX_DOUBLE &&
      cg_ctype(dt) && cg_ctype(in[1]->dtype) && in[1]->dtype != OX_BOOL)
    return gen_int_pow(c, in, out);
  if (r->kind == 1 && cg_need_float(c, in[0])) return c->e->code;
  if (r->kind == 2 && dt != OX_BOOL) return cg_fail(c, OX_EMODEL, "expects bool inputs");
  if (r->kind == 3 && dt == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool inputs");
  if (r->kind == 4 && (dt == OX_BOOL || dt == OX_FLOAT || dt == OX_DOUBLE))
    return cg_fail(c, OX_EMODEL, "expects integers");
  if (r->kind == 1 && in[1]->dtype != dt && !cg_ctype(in[1]->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "exponent type");
  ox_buf ex = {0};
  expand(c, r->expr, dt, "", "", &ex);
  ox_buf_putc(&ex, 0);
  char body[512];
  snprintf(body, sizeof body, "const %s a = X0[i0], b = (%s)X1[i1]; Y0[o] = (%s)(%s);",
           cg_ctype(dt), cg_ctype(dt), cg_ctype(out[0]->dtype), (const char *)ex.data);
  ox_buf_free(&ex);
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 2, body);
  return OX_OK;
}

static int gen_mod(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n_out, (void)n_in;
  int32_t dt = in[0]->dtype;
  const char *T = cg_ctype(dt);
  char body[512];
  if (cg_is_small_float(dt)) {
    const char *y = cg_store(c, dt,
                             ox_arena_printf(c->a, "fmodf(%s, %s)", cg_load(c, dt, "X0[i0]"),
                                             cg_load(c, dt, "X1[i1]")),
                             true);
    snprintf(body, sizeof body, "Y0[o] = %s;", y ? y : "0");
  } else if (dt == OX_FLOAT || dt == OX_DOUBLE) {
    snprintf(body, sizeof body, "Y0[o] = %s(X0[i0], X1[i1]);", cg_mathfn(c, dt, "fmod"));
  } else if (ox_node_attr_int(n, "fmod", 0) || dt == OX_UINT8 || dt == OX_UINT16 ||
             dt == OX_UINT32 || dt == OX_UINT64) {
    snprintf(body, sizeof body, "Y0[o] = (%s)(X0[i0] %% X1[i1]);", T);
  } else {
    /* the sign of the divisor, as Python's % */
    snprintf(body, sizeof body,
             "%s r = (%s)(X0[i0] %% X1[i1]); if (r != 0 && ((r < 0) != (X1[i1] < 0))) r = (%s)(r + "
             "X1[i1]); Y0[o] = r;",
             T, T, T);
  }
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 2, body);
  return OX_OK;
}

/* Sum, Mean, Max, Min over any number of broadcast inputs. */
static int gen_variadic(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_out;
  if (n_in < 1 || n_in > 8)
    return cg_fail(c, OX_EUNSUPPORTED, "%zu inputs (1 to 8 compiled)", n_in);
  for (size_t i = 0; i < n_in; i++)
    if (!in[i]) return cg_fail(c, OX_EMODEL, "missing input");
  int32_t dt = in[0]->dtype;
  if (dt == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool inputs");
  const char *op = n->op_type;
  bool mean = strcmp(op, "Mean") == 0, sum = mean || strcmp(op, "Sum") == 0;
  bool mx = strcmp(op, "Max") == 0;
  bool sf = cg_is_small_float(dt); /* float16/bfloat16/float8: in float */
  if (mean && !sf && cg_need_float(c, in[0])) return c->e->code;
  for (size_t i = 1; i < n_in; i++)
    if (in[i]->dtype != dt) return cg_fail(c, OX_EMODEL, "inputs of different types");
  ox_buf b = {0};
  ox_buf_printf(&b, "%s v = %s;", sf ? "float" : cg_ctype(dt), sf ? cg_load(c, dt, "X0[i0]") : "X0[i0]");
  for (size_t i = 1; i < n_in; i++) {
    char xi[32];
    snprintf(xi, sizeof xi, "X%zu[i%zu]", i, i);
    const char *x = sf ? cg_load(c, dt, xi) : xi;
    if (sf) {
      ox_buf_printf(&b, " { const float x = %s;", x);
      x = "x";
    }
    if (sum)
      ox_buf_printf(&b, " v += %s;", x);
    else if (sf || dt == OX_FLOAT || dt == OX_DOUBLE) /* NaN wins, as in numpy */
      ox_buf_printf(&b, " if (%s %s v || %s != %s) v = %s;", x, mx ? ">" : "<", x, x, x);
    else
      ox_buf_printf(&b, " if (%s %s v) v = %s;", x, mx ? ">" : "<", x);
    if (sf) ox_buf_puts(&b, " }");
  }
  if (mean) ox_buf_printf(&b, " v /= %zu;", n_in);
  ox_buf_printf(&b, " Y0[o] = %s;", sf ? cg_store(c, dt, "v", true) : "v");
  ox_buf_putc(&b, 0);
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, n_in, (const char *)b.data);
  ox_buf_free(&b);
  return OX_OK;
}

static int gen_where(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n, (void)n_out;
  if (n_in != 3 || !in[0] || !in[1] || !in[2]) return cg_fail(c, OX_EMODEL, "expects 3 inputs");
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 3, "Y0[o] = X0[i0] ? X1[i1] : X2[i2];");
  return OX_OK;
}

/* The generators above that take float16/bfloat16/float8 (computed in
 * float): the unary rows (not BitwiseNot), Gelu, IsInf, the arithmetic and
 * comparison rows of gen_binary, Mod, Sum/Mean/Max/Min. */
bool cg_small_float_op(const char *op) {
  for (const unary_row *r = unary_rows; r->op; r++)
    if (strcmp(r->op, op) == 0) return strcmp(op, "BitwiseNot") != 0;
  for (const binary_row *r = binary_rows; r->op; r++)
    if (strcmp(r->op, op) == 0) return r->kind != 2 && r->kind != 4;
  static const char *const more[] = {"Gelu", "IsInf", "Mod", "Sum", "Mean", "Max", "Min"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
    if (strcmp(more[i], op) == 0) return true;
  return false;
}

const cg_op ox_cg_ops_elementwise[] = {
    {"Relu", gen_unary},
    {"Neg", gen_unary},
    {"Abs", gen_unary},
    {"Sign", gen_unary},
    {"Sigmoid", gen_unary},
    {"Tanh", gen_unary},
    {"Exp", gen_unary},
    {"Log", gen_unary},
    {"Sqrt", gen_unary},
    {"Erf", gen_unary},
    {"Floor", gen_unary},
    {"Ceil", gen_unary},
    {"Round", gen_unary},
    {"Reciprocal", gen_unary},
    {"Sin", gen_unary},
    {"Cos", gen_unary},
    {"Tan", gen_unary},
    {"Asin", gen_unary},
    {"Acos", gen_unary},
    {"Atan", gen_unary},
    {"Sinh", gen_unary},
    {"Cosh", gen_unary},
    {"Asinh", gen_unary},
    {"Acosh", gen_unary},
    {"Atanh", gen_unary},
    {"Softplus", gen_unary},
    {"Softsign", gen_unary},
    {"Mish", gen_unary},
    {"LeakyRelu", gen_unary},
    {"Elu", gen_unary},
    {"Selu", gen_unary},
    {"Celu", gen_unary},
    {"HardSigmoid", gen_unary},
    {"HardSwish", gen_unary},
    {"ThresholdedRelu", gen_unary},
    {"Shrink", gen_unary},
    {"IsNaN", gen_unary},
    {"Gelu", gen_gelu},
    {"Not", gen_not},
    {"IsInf", gen_isinf},
    {"Swish", gen_unary},
    {"BitwiseNot", gen_unary},
    {"BitwiseAnd", gen_binary},
    {"BitwiseOr", gen_binary},
    {"BitwiseXor", gen_binary},
    {"Clip", gen_clip},
    {"Add", gen_binary},
    {"Sub", gen_binary},
    {"Mul", gen_binary},
    {"Div", gen_binary},
    {"Pow", gen_binary},
    {"Equal", gen_binary},
    {"Less", gen_binary},
    {"Greater", gen_binary},
    {"LessOrEqual", gen_binary},
    {"GreaterOrEqual", gen_binary},
    {"And", gen_binary},
    {"Or", gen_binary},
    {"Xor", gen_binary},
    {"PRelu", gen_binary},
    {"Mod", gen_mod},
    {"Sum", gen_variadic},
    {"Mean", gen_variadic},
    {"Max", gen_variadic},
    {"Min", gen_variadic},
    {"Where", gen_where},
    {NULL, NULL},
};
