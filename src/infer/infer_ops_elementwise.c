/* infer_ops_elementwise.c - shape functions of the elementwise operators
 * (unary, arithmetic with propagation of shape values, comparisons, variadic,
 * Where, Cast) and SwiGLU. */
#include <string.h>

#include "infer_impl.h"

static int unary(ox_ictx *c) { return ix_same_as_input0(c); }

static int identity(ox_ictx *c) {
  ix_same_as_input0(c);
  ix_pass_values(c);
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
  const ox_dimv *x = ix_dimv_of(c, 0), *y = ix_dimv_of(c, 1);
  if (!x || !y) return OX_OK;
  size_t n = x->n > y->n ? x->n : y->n;
  if ((x->n != n && x->n != 1) || (y->n != n && y->n != 1) || n > IX_MAXV) return OX_OK;
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
  if (!ix_shape(c, 0, &d, &r) || r < 2) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  ix_set_tensor(c, 0, ix_elem(c, 0), d, (int64_t)r - 2);
  return OX_OK;
}

static int binary_arith(ox_ictx *c) {
  /* opset < 7: legacy broadcast attribute means B is broadcast into A */
  if (c->since < 7) return ix_same_as_input0(c);
  broadcast_to(c, ix_elem(c, 0), 0, c->n_in);
  const char *op = c->node->op_type;
  char k = strcmp(op, "Add") == 0   ? '+'
           : strcmp(op, "Sub") == 0 ? '-'
           : strcmp(op, "Mul") == 0 ? '*'
           : strcmp(op, "Div") == 0 ? '/'
                                    : 0;
  if (k && (ix_elem(c, 0) == OX_INT64 || ix_elem(c, 0) == OX_INT32)) propagate_arith(c, k);
  return OX_OK;
}

/* comparisons and logic on propagated integer values give 0/1 values, so an
 * If whose condition depends only on shapes can be resolved */
static void propagate_compare(ox_ictx *c) {
  const char *op = c->node->op_type;
  const ox_dimv *x = ix_dimv_of(c, 0), *y = c->n_in > 1 ? ix_dimv_of(c, 1) : NULL;
  bool unary_not = strcmp(op, "Not") == 0;
  if (!x || (!unary_not && !y)) return;
  size_t n = unary_not ? x->n : (x->n > y->n ? x->n : y->n);
  if (n > IX_MAXV || (x->n != n && x->n != 1) || (!unary_not && y->n != n && y->n != 1)) return;
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
  if (c->since < 7)
    to_bool_same(c);
  else
    broadcast_to(c, OX_BOOL, 0, 2);
  propagate_compare(c);
  return OX_OK;
}

static int not_op(ox_ictx *c) {
  ix_same_as_input0(c);
  propagate_compare(c);
  return OX_OK;
}

static int variadic(ox_ictx *c) {
  if (c->since < 8) return ix_same_as_input0(c);
  return broadcast_to(c, ix_elem(c, 0), 0, c->n_in);
}

static int where(ox_ictx *c) { return broadcast_to(c, ix_elem(c, 1), 0, 3); }

static int prelu(ox_ictx *c) {
  if (c->since < 7) return ix_same_as_input0(c);
  return broadcast_to(c, ix_elem(c, 0), 0, 2);
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
  const ox_dimv *v = ix_dimv_of(c, 0);
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

static int swiglu(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, ix_elem(c, 0)); }

#define U(op) \
  { "", op, 1, 1000, unary }
const ox_infer_def ox_infer_defs_elementwise[] = {
    U("Abs"),
    U("Neg"),
    U("Reciprocal"),
    U("Floor"),
    U("Ceil"),
    U("Round"),
    U("Sqrt"),
    U("Exp"),
    U("Log"),
    U("Sin"),
    U("Cos"),
    U("Tan"),
    U("Asin"),
    U("Acos"),
    U("Atan"),
    U("Sinh"),
    U("Cosh"),
    U("Asinh"),
    U("Acosh"),
    U("Atanh"),
    U("Erf"),
    U("Sign"),
    U("Relu"),
    U("LeakyRelu"),
    U("Elu"),
    U("Selu"),
    U("Celu"),
    U("Sigmoid"),
    U("HardSigmoid"),
    U("HardSwish"),
    U("Softplus"),
    U("Softsign"),
    U("Gelu"),
    U("Mish"),
    U("ThresholdedRelu"),
    U("Shrink"),
    U("Clip"),
    U("Tanh"),
    U("Softmax"),
    U("LogSoftmax"),
    U("Hardmax"),
    U("LRN"),
    U("BitwiseNot"),
    U("InstanceNormalization"),
    U("GroupNormalization"),
    U("RMSNormalization"),
    U("LpNormalization"),
    U("MeanVarianceNormalization"),
    U("CumSum"),
    U("CumProd"),
    U("Trilu"),
    U("ReverseSequence"),
    U("Swish"),
    U("ScatterElements"),
    U("ScatterND"),
    U("Scatter"),
    U("RotaryEmbedding"),
    {"", "IsNaN", 1, 1000, to_bool_same},
    {"", "Not", 1, 1000, not_op},
    {"", "Identity", 1, 1000, identity},
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
    {"", "SwiGLU", 1, 1000, swiglu},
    {NULL, NULL, 0, 0, NULL},
};
