/* gradient.c - ai.onnx.preview.training.Gradient by graph rewriting.
 *
 * At session creation every Gradient node of the main graph is replaced by a
 * backward graph: starting from dY/dY = 1 (ones of y's shape and type), the
 * nodes between the `xs` and `y` are visited in reverse order and each one
 * contributes the gradients of its inputs through a derivative rule made of
 * ordinary operators; contributions to one value are added. A gradient is
 * brought back to the shape of a broadcast input by ReduceSum over the
 * broadcast axes and a Reshape (computed at run time from the shapes). The
 * generated nodes use ai.onnx opset 18 whatever the model imports. Values
 * that do not depend on `xs` (such as the `zs`) are constants for the
 * derivative. No gradient flows through integer, boolean or piecewise-constant
 * operators (Shape, Size, comparisons, Floor, ...).
 *
 * Rules: Add, Sub, Mul, Div, Sum, Where, Expand, Identity, Neg, Abs, Relu,
 * LeakyRelu, Sigmoid, Tanh, Exp, Log, Sqrt, Reciprocal, Pow (constant
 * exponent), MatMul (1-D operands when declared), Gemm, ReduceSum,
 * ReduceMean, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Cast,
 * Softmax and LogSoftmax (opset 13+). Only the first output of a node can be
 * differentiated. Any other operator on the path gives an error naming it. */
#include <string.h>

#include "rt.h"
#include "training.h"

#define GEN_OPSET 18

typedef struct gb {
  ox_arena *a;
  ox_graph *g;  /* the new graph */
  int64_t *ops; /* opset per node of g */
  size_t n_ops;
  const char *prefix;
  unsigned long counter;
  const ox_graph *src; /* the graph being rewritten (for declared shapes) */
  const char *where;   /* "Gradient node 'x'" */
  ox_err *e;
  bool failed;
} gb;

static void gb_oom(gb *b) {
  if (!b->failed) ox_err_set(b->e, OX_ENOMEM, "out of memory");
  b->failed = true;
}

static const char *fresh(gb *b) {
  const char *s = ox_arena_printf(b->a, "%s/%lu", b->prefix, b->counter++);
  if (!s) gb_oom(b);
  return s;
}

/* Appends node `op` (ai.onnx) reading in[0..nin) and writing `out` (a fresh
 * name when NULL). NULL once anything failed, so calls can be chained. */
static ox_node *emit(gb *b, const char *op, const char *out, size_t nin, const char *const *in) {
  if (b->failed) return NULL;
  for (size_t i = 0; i < nin; i++)
    if (!in[i]) {
      gb_oom(b);
      return NULL;
    }
  if (!out) out = fresh(b);
  int64_t *ov = out ? OX_VEC_PUSH(b->a, b->ops, b->n_ops) : NULL;
  ox_node *n = ov ? ox_graph_add_node(b->a, b->g, op, "", out) : NULL;
  if (!n) {
    gb_oom(b);
    return NULL;
  }
  *ov = GEN_OPSET;
  for (size_t i = 0; i < nin; i++)
    if (ox_node_add_input(b->a, n, in[i])) n = NULL;
  if (!n || ox_node_add_output(b->a, n, out)) {
    gb_oom(b);
    return NULL;
  }
  return n;
}

static const char *o0(ox_node *n) { return n ? n->output[0] : NULL; }

static const char *op1(gb *b, const char *op, const char *x) {
  const char *in[1] = {x};
  return o0(emit(b, op, NULL, 1, in));
}

static const char *op2(gb *b, const char *op, const char *x, const char *y) {
  const char *in[2] = {x, y};
  return o0(emit(b, op, NULL, 2, in));
}

static const char *op3(gb *b, const char *op, const char *x, const char *y, const char *z) {
  const char *in[3] = {x, y, z};
  return o0(emit(b, op, NULL, 3, in));
}

static void at_int(gb *b, ox_node *n, const char *name, int64_t v) {
  if (!n) return;
  ox_attr *at = ox_node_add_attr(b->a, n, name, OX_ATTR_INT);
  if (!at) return gb_oom(b);
  at->i = v;
  at->has_i = true;
}

static void at_float(gb *b, ox_node *n, const char *name, float v) {
  if (!n) return;
  ox_attr *at = ox_node_add_attr(b->a, n, name, OX_ATTR_FLOAT);
  if (!at) return gb_oom(b);
  at->f = v;
  at->has_f = true;
}

static void at_ints(gb *b, ox_node *n, const char *name, const int64_t *v, size_t k) {
  if (!n) return;
  ox_attr *at = ox_node_add_attr(b->a, n, name, OX_ATTR_INTS);
  int64_t *c = at ? ox_arena_calloc(b->a, k + 1, sizeof *c) : NULL;
  if (!c) return gb_oom(b);
  if (k) memcpy(c, v, k * sizeof *c);
  at->ints = c;
  at->n_ints = k;
}

/* A tensor attribute "value": float scalar, or int64 (1-D of k, or a scalar
 * when k is SIZE_MAX meaning one element of rank 0). */
static void at_value(gb *b, ox_node *n, int32_t dt, double f, const int64_t *iv, size_t k,
                     bool scalar) {
  if (!n) return;
  ox_attr *at = ox_node_add_attr(b->a, n, "value", OX_ATTR_TENSOR);
  ox_tensor *t = at ? ox_arena_calloc(b->a, 1, sizeof *t) : NULL;
  if (!t) return gb_oom(b);
  at->t = t;
  t->data_type = dt;
  t->has_data_type = true;
  if (!scalar) {
    t->dims = ox_arena_calloc(b->a, 1, sizeof *t->dims);
    if (!t->dims) return gb_oom(b);
    t->dims[0] = (int64_t)k;
    t->n_dims = 1;
  }
  if (dt == OX_FLOAT) {
    t->float_data = ox_arena_calloc(b->a, 1, sizeof(float));
    if (!t->float_data) return gb_oom(b);
    t->float_data[0] = (float)f;
    t->n_float_data = 1;
  } else {
    t->int64_data = ox_arena_calloc(b->a, k + 1, sizeof(int64_t));
    if (!t->int64_data) return gb_oom(b);
    if (k) memcpy(t->int64_data, iv, k * sizeof(int64_t));
    t->n_int64_data = k;
  }
}

/* A scalar constant v of the element type of `like`. */
static const char *cst_like(gb *b, double v, const char *like) {
  ox_node *n = emit(b, "Constant", NULL, 0, NULL);
  at_value(b, n, OX_FLOAT, v, NULL, 0, true);
  return op2(b, "CastLike", o0(n), like);
}

static const char *cst_ints(gb *b, const int64_t *v, size_t k) {
  ox_node *n = emit(b, "Constant", NULL, 0, NULL);
  at_value(b, n, OX_INT64, 0, v, k, false);
  return o0(n);
}

/* Ones (or zeros) of x's shape and type. */
static const char *fill_like(gb *b, double v, const char *x) {
  ox_node *n = emit(b, "ConstantOfShape", NULL, 1, (const char *[]){op1(b, "Shape", x)});
  at_value(b, n, OX_FLOAT, v, NULL, 0, true);
  return op2(b, "CastLike", o0(n), x);
}

/* The declared shape of a value of the source graph: an initializer's dims,
 * or the shape of a graph input, output or value_info. */
static bool find_shape(const gb *b, const char *name, size_t *rank, const ox_shape **shape,
                       const int64_t **dims) {
  const ox_graph *g = b->src;
  *shape = NULL;
  *dims = NULL;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && !strcmp(g->initializer[i].name, name)) {
      *rank = g->initializer[i].n_dims;
      *dims = g->initializer[i].dims;
      return true;
    }
  const ox_value_info *lists[3] = {g->input, g->output, g->value_info};
  size_t counts[3] = {g->n_input, g->n_output, g->n_value_info};
  for (size_t l = 0; l < 3; l++)
    for (size_t i = 0; i < counts[l]; i++) {
      const ox_type *t = lists[l][i].type;
      if (!lists[l][i].name || strcmp(lists[l][i].name, name)) continue;
      if (!t || t->kind != OX_TYPE_TENSOR || !t->shape) return false;
      *rank = t->shape->n_dim;
      *shape = t->shape;
      return true;
    }
  return false;
}

/* true when x and y are declared with the same shape (equal dim values or
 * equal dim names everywhere). */
static bool same_shape(const gb *b, const char *x, const char *y) {
  size_t rx, ry;
  const ox_shape *sx, *sy;
  const int64_t *dx, *dy;
  if (!x || !y || !find_shape(b, x, &rx, &sx, &dx) || !find_shape(b, y, &ry, &sy, &dy) || rx != ry)
    return false;
  for (size_t k = 0; k < rx; k++) {
    const ox_dim *ax = sx ? &sx->dim[k] : NULL, *ay = sy ? &sy->dim[k] : NULL;
    bool vx = !ax || ax->has_value, vy = !ay || ay->has_value;
    if (vx && vy) {
      if ((ax ? ax->value : dx[k]) != (ay ? ay->value : dy[k])) return false;
    } else if (vx || vy || !ax->param || !ay->param || !ax->param[0] ||
               strcmp(ax->param, ay->param)) {
      return false;
    }
  }
  return true;
}

/* g (the gradient of a broadcast result) summed back to the shape of a.
 * like: a value of g's shape, or NULL; when it is declared with a's shape
 * there is nothing to sum. */
static const char *unbroadcast(gb *b, const char *g, const char *a, const char *like) {
  if (same_shape(b, a, like)) return g;
  const char *sg = op1(b, "Shape", g), *sa = op1(b, "Shape", a);
  const char *extra = op2(b, "Sub", op1(b, "Shape", sg), op1(b, "Shape", sa));
  ox_node *ones = emit(b, "ConstantOfShape", NULL, 1, &extra);
  int64_t one = 1, minus1 = -1;
  at_value(b, ones, OX_INT64, 0, &one, 1, false);
  ox_node *pad = emit(b, "Concat", NULL, 2, (const char *[]){o0(ones), sa});
  at_int(b, pad, "axis", 0);
  const char *mask = op2(b, "Equal", o0(pad), cst_ints(b, &one, 1));
  const char *axes = op2(b, "Reshape", op1(b, "NonZero", mask), cst_ints(b, &minus1, 1));
  ox_node *rs = emit(b, "ReduceSum", NULL, 2, (const char *[]){g, axes});
  at_int(b, rs, "keepdims", 1);
  at_int(b, rs, "noop_with_empty_axes", 1);
  return op2(b, "Reshape", o0(rs), sa);
}

static const char *einsum(gb *b, const char *eq, const char *x, const char *y) {
  ox_node *m = emit(b, "Einsum", NULL, 2, (const char *[]){x, y});
  if (!m) return NULL;
  ox_attr *at = ox_node_add_attr(b->a, m, "equation", OX_ATTR_STRING);
  if (!at) return gb_oom(b), NULL;
  at->s = (ox_bytes){(const uint8_t *)eq, strlen(eq)};
  return o0(m);
}

static int no_rule(gb *b, const ox_node *n, const char *why) {
  b->failed = true;
  return ox_err_set(b->e, OX_EUNSUPPORTED, "%s: cannot differentiate through node '%s' (%s)%s%s",
                    b->where, n->name ? n->name : "", n->op_type, why ? ": " : "",
                    why ? why : ": no derivative rule for this operator");
}

/* Axes of a Reduce* node as a name of an int64 1-D tensor, or NULL for
 * "all axes". *bad set when unsupported. */
static const char *reduce_axes(gb *b, const ox_node *n, bool from_input, bool *bad) {
  if (from_input) {
    if (ox_node_attr_int(n, "noop_with_empty_axes", 0)) *bad = true;
    return n->n_input > 1 && n->input[1][0] ? n->input[1] : NULL;
  }
  const ox_attr *ax = ox_node_attr(n, "axes");
  if (!ax || ax->n_ints == 0) return NULL;
  return cst_ints(b, ax->ints, ax->n_ints);
}

/* Writes the gradients of the inputs of n (gx[j] for need[j]) from the
 * gradient g of its first output. */
static int backward(gb *b, const ox_node *n, int64_t opset, const char *g, const bool *need,
                    const char **gx) {
  const char *op = n->op_type, *x = n->n_input > 0 ? n->input[0] : NULL;
  const char *x1 = n->n_input > 1 ? n->input[1] : NULL, *y = n->output[0];
  bool n0 = n->n_input > 0 && need[0], n1 = n->n_input > 1 && need[1];
  if (n->domain && !ox_is_default_domain(n->domain)) return no_rule(b, n, NULL);
  if (!strcmp(op, "Add") || !strcmp(op, "Sum")) {
    for (size_t j = 0; j < n->n_input; j++)
      if (need[j]) gx[j] = unbroadcast(b, g, n->input[j], y);
  } else if (!strcmp(op, "Sub")) {
    if (n0) gx[0] = unbroadcast(b, g, x, y);
    if (n1) gx[1] = unbroadcast(b, op1(b, "Neg", g), x1, y);
  } else if (!strcmp(op, "Mul")) {
    if (n0) gx[0] = unbroadcast(b, op2(b, "Mul", g, x1), x, y);
    if (n1) gx[1] = unbroadcast(b, op2(b, "Mul", g, x), x1, y);
  } else if (!strcmp(op, "Div")) {
    if (n0) gx[0] = unbroadcast(b, op2(b, "Div", g, x1), x, y);
    if (n1) gx[1] = unbroadcast(b, op1(b, "Neg", op2(b, "Div", op2(b, "Mul", g, y), x1)), x1, y);
  } else if (!strcmp(op, "Where")) {
    const char *zero = cst_like(b, 0, g);
    if (n1) gx[1] = unbroadcast(b, op3(b, "Where", x, g, zero), x1, y);
    if (n->n_input > 2 && need[2])
      gx[2] = unbroadcast(b, op3(b, "Where", x, zero, g), n->input[2], y);
  } else if (!strcmp(op, "Expand")) {
    gx[0] = unbroadcast(b, g, x, NULL);
  } else if (!strcmp(op, "LeakyRelu")) {
    float alpha = ox_node_attr_float(n, "alpha", 0.01f);
    const char *pos = op2(b, "Greater", x, cst_like(b, 0, x));
    gx[0] = op2(b, "Mul", g, op3(b, "Where", pos, cst_like(b, 1, x), cst_like(b, alpha, x)));
  } else if (!strcmp(op, "Reciprocal")) {
    gx[0] = op1(b, "Neg", op2(b, "Mul", g, op2(b, "Mul", y, y)));
  } else if (!strcmp(op, "Identity")) {
    gx[0] = g;
  } else if (!strcmp(op, "Neg")) {
    gx[0] = op1(b, "Neg", g);
  } else if (!strcmp(op, "Relu")) {
    gx[0] = op2(b, "Mul", g, op1(b, "Sign", y));
  } else if (!strcmp(op, "Abs")) {
    gx[0] = op2(b, "Mul", g, op1(b, "Sign", x));
  } else if (!strcmp(op, "Sigmoid")) {
    gx[0] = op2(b, "Mul", g, op2(b, "Mul", y, op2(b, "Sub", cst_like(b, 1, y), y)));
  } else if (!strcmp(op, "Tanh")) {
    gx[0] = op2(b, "Mul", g, op2(b, "Sub", cst_like(b, 1, y), op2(b, "Mul", y, y)));
  } else if (!strcmp(op, "Exp")) {
    gx[0] = op2(b, "Mul", g, y);
  } else if (!strcmp(op, "Log")) {
    gx[0] = op2(b, "Div", g, x);
  } else if (!strcmp(op, "Sqrt")) {
    gx[0] = op2(b, "Div", g, op2(b, "Mul", cst_like(b, 2, y), y));
  } else if (!strcmp(op, "Pow")) {
    if (n1)
      return no_rule(b, n, "the exponent depends on xs (only a constant exponent is supported)");
    const char *e = op2(b, "CastLike", x1, x);
    const char *d = op2(b, "Mul", e, op2(b, "Pow", x, op2(b, "Sub", e, cst_like(b, 1, e))));
    gx[0] = unbroadcast(b, op2(b, "Mul", g, d), x, y);
  } else if (!strcmp(op, "MatMul")) {
    /* 1-D operands (known from declared shapes) are promoted and squeezed
     * again; the equations below sum over those axes directly. */
    size_t ra = 0, rb = 0;
    const ox_shape *sh;
    const int64_t *dd;
    bool a1 = find_shape(b, x, &ra, &sh, &dd) && ra == 1;
    bool b1 = find_shape(b, x1, &rb, &sh, &dd) && rb == 1;
    if (a1 && b1) {
      if (n0) gx[0] = op2(b, "Mul", g, x1);
      if (n1) gx[1] = op2(b, "Mul", g, x);
    } else {
      const char *ea = a1 ? "...j,...kj->...k" : b1 ? "...i,k->...ik" : "...ik,...jk->...ij";
      const char *eb = a1 ? "k,...j->...kj" : b1 ? "...ik,...i->...k" : "...ik,...ij->...kj";
      if (n0) gx[0] = unbroadcast(b, einsum(b, ea, g, x1), x, NULL);
      if (n1) gx[1] = unbroadcast(b, einsum(b, eb, x, g), x1, NULL);
    }
  } else if (!strcmp(op, "Gemm")) {
    float alpha = ox_node_attr_float(n, "alpha", 1.0f), beta = ox_node_attr_float(n, "beta", 1.0f);
    int64_t ta = ox_node_attr_int(n, "transA", 0) != 0, tb = ox_node_attr_int(n, "transB", 0) != 0;
    if (n0) {
      ox_node *m = ta ? emit(b, "Gemm", NULL, 2, (const char *[]){x1, g})
                      : emit(b, "Gemm", NULL, 2, (const char *[]){g, x1});
      at_float(b, m, "alpha", alpha);
      at_int(b, m, "transA", ta ? tb : 0);
      at_int(b, m, "transB", ta ? 1 : !tb);
      gx[0] = o0(m);
    }
    if (n1) {
      ox_node *m = tb ? emit(b, "Gemm", NULL, 2, (const char *[]){g, x})
                      : emit(b, "Gemm", NULL, 2, (const char *[]){x, g});
      at_float(b, m, "alpha", alpha);
      at_int(b, m, "transA", tb ? 1 : !ta);
      at_int(b, m, "transB", tb ? ta : 0);
      gx[1] = o0(m);
    }
    if (n->n_input > 2 && need[2]) {
      const char *gc = beta == 1.0f ? g : op2(b, "Mul", g, cst_like(b, beta, g));
      gx[2] = unbroadcast(b, gc, n->input[2], y);
    }
  } else if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMean")) {
    bool mean = op[6] == 'M', bad = false;
    const char *axes = reduce_axes(b, n, opset >= (mean ? 18 : 13), &bad);
    if (bad) return no_rule(b, n, "noop_with_empty_axes is not supported");
    const char *g2 = g;
    if (!ox_node_attr_int(n, "keepdims", 1) && axes) g2 = op2(b, "Unsqueeze", g, axes);
    const char *full = op2(b, "Expand", g2, op1(b, "Shape", x));
    if (mean) {
      const char *ratio = op2(b, "Div", op1(b, "Size", x), op1(b, "Size", y));
      full = op2(b, "Div", full, op2(b, "CastLike", ratio, g));
    }
    gx[0] = full;
  } else if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") ||
             !strcmp(op, "Unsqueeze")) {
    gx[0] = op2(b, "Reshape", g, op1(b, "Shape", x));
  } else if (!strcmp(op, "Transpose")) {
    const ox_attr *p = ox_node_attr(n, "perm");
    ox_node *t = emit(b, "Transpose", NULL, 1, &g);
    if (p && p->n_ints) {
      int64_t *inv = ox_arena_calloc(b->a, p->n_ints, sizeof *inv);
      if (!inv) return gb_oom(b), OX_ENOMEM;
      for (size_t k = 0; k < p->n_ints; k++) {
        if (p->ints[k] < 0 || (size_t)p->ints[k] >= p->n_ints) return no_rule(b, n, "invalid perm");
        inv[p->ints[k]] = (int64_t)k;
      }
      at_ints(b, t, "perm", inv, p->n_ints);
    }
    gx[0] = o0(t);
  } else if (!strcmp(op, "Cast")) {
    gx[0] = op2(b, "CastLike", g, x);
  } else if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) {
    if (opset < 13) return no_rule(b, n, "only opset 13 or later (single-axis) semantics");
    int64_t axis = ox_node_attr_int(n, "axis", -1);
    bool log = op[0] == 'L';
    ox_node *rs = emit(b, "ReduceSum", NULL, 2,
                       (const char *[]){log ? g : op2(b, "Mul", g, y), cst_ints(b, &axis, 1)});
    at_int(b, rs, "keepdims", 1);
    gx[0] = log ? op2(b, "Sub", g, op2(b, "Mul", op1(b, "Exp", y), o0(rs)))
                : op2(b, "Mul", y, op2(b, "Sub", g, o0(rs)));
  } else {
    return no_rule(b, n, NULL);
  }
  return b->failed ? b->e->code : OX_OK;
}

static int64_t orig_opset(const ox_session *s, const int64_t *noted, size_t i, const char *dom) {
  if (noted) return noted[i];
  const ox_model_proto *mp = s->model->proto;
  int64_t v = ox_opset_version(mp->opset_import, mp->n_opset_import, dom ? dom : "");
  if (v < 0 && !(dom && *dom) && mp->n_opset_import == 0) v = 1;
  return v;
}

/* Operators whose outputs are integers, booleans or piecewise constant
 * (zero derivative almost everywhere): no gradient flows through them. */
static bool stops_gradient(const ox_node *n) {
  static const char *const ops[] = {"Shape",
                                    "Size",
                                    "NonZero",
                                    "ArgMax",
                                    "ArgMin",
                                    "Equal",
                                    "Greater",
                                    "GreaterOrEqual",
                                    "Less",
                                    "LessOrEqual",
                                    "Not",
                                    "And",
                                    "Or",
                                    "Xor",
                                    "IsNaN",
                                    "IsInf",
                                    "Sign",
                                    "Floor",
                                    "Ceil",
                                    "Round",
                                    "EyeLike",
                                    "ConstantOfShape",
                                    "RandomNormalLike",
                                    "RandomUniformLike",
                                    "BitShift"};
  if (n->domain && !ox_is_default_domain(n->domain)) return false;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(n->op_type, ops[i])) return true;
  return false;
}

static bool is_gradient(const ox_node *n) {
  return n->domain && !strcmp(n->domain, OX_TRAINING_DOMAIN) && !strcmp(n->op_type, "Gradient");
}

static char *attr_string(ox_arena *a, const ox_bytes *s) {
  return s->data ? ox_arena_strndup(a, (const char *)s->data, s->size) : NULL;
}

/* Emits the backward graph of the Gradient node src->node[gi]. */
static int expand_one(gb *b, const ox_graph *src, size_t gi, const int64_t *opsets) {
  const ox_node *gn = &src->node[gi];
  const ox_attr *axs = ox_node_attr(gn, "xs");
  const char *y = ox_node_attr_str(gn, "y", NULL);
  if (!axs || axs->n_strings == 0 || !y)
    return ox_err_set(b->e, OX_EMODEL, "%s: attributes 'xs' and 'y' are required", b->where);
  if (gn->n_output != axs->n_strings)
    return ox_err_set(b->e, OX_EMODEL, "%s: %zu outputs for %zu names in 'xs'", b->where,
                      gn->n_output, axs->n_strings);
  ox_map dep, grads;
  ox_map_init(&dep);
  ox_map_init(&grads);
  int rc = OX_OK;
  const char **xs = ox_arena_calloc(b->a, axs->n_strings, sizeof *xs);
  if (!xs) rc = ox_err_set(b->e, OX_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k < axs->n_strings; k++) {
    xs[k] = attr_string(b->a, &axs->strings[k]);
    if (!xs[k] || ox_map_put(&dep, xs[k], 1)) rc = ox_err_set(b->e, OX_ENOMEM, "out of memory");
  }
  /* values that depend on xs; the producer of y */
  int64_t py = -1;
  for (size_t i = 0; !rc && i < src->n_node; i++) {
    const ox_node *n = &src->node[i];
    if (is_gradient(n)) continue;
    bool d = false, stop = stops_gradient(n);
    for (size_t j = 0; j < n->n_input && !d && !stop; j++)
      d = n->input[j][0] && ox_map_get(&dep, n->input[j], NULL);
    for (size_t j = 0; j < n->n_output; j++) {
      if (d && n->output[j][0] && ox_map_put(&dep, n->output[j], 1))
        rc = ox_err_set(b->e, OX_ENOMEM, "out of memory");
      if (!strcmp(n->output[j], y)) py = (int64_t)i;
    }
  }
  if (!rc && py > (int64_t)gi)
    rc = ox_err_set(b->e, OX_EMODEL, "%s: y '%s' is computed after the Gradient node", b->where, y);
  if (!rc && ox_map_get(&dep, y, NULL)) {
    const char *seed = fill_like(b, 1.0, y);
    if (!seed || ox_map_put(&grads, y, (uintptr_t)seed)) rc = b->e->code ? b->e->code : OX_ENOMEM;
    for (int64_t i = py; !rc && i >= 0; i--) {
      const ox_node *n = &src->node[i];
      if (is_gradient(n) || n->n_output == 0) continue;
      uintptr_t gy = 0;
      if (!ox_map_get(&grads, n->output[0], &gy)) {
        for (size_t j = 1; j < n->n_output; j++)
          if (n->output[j][0] && ox_map_get(&grads, n->output[j], NULL)) {
            rc = no_rule(b, n, "only the first output of a node can be differentiated");
            break;
          }
        continue;
      }
      bool *need = ox_arena_calloc(b->a, n->n_input + 1, sizeof *need);
      const char **gx = ox_arena_calloc(b->a, n->n_input + 1, sizeof *gx);
      if (!need || !gx) {
        rc = ox_err_set(b->e, OX_ENOMEM, "out of memory");
        break;
      }
      bool any = false;
      for (size_t j = 0; j < n->n_input; j++)
        any |= need[j] = n->input[j][0] && ox_map_get(&dep, n->input[j], NULL);
      if (!any) continue;
      rc = backward(b, n, opsets[i], (const char *)gy, need, gx);
      for (size_t j = 0; !rc && j < n->n_input; j++) {
        if (!need[j] || !gx[j]) continue;
        uintptr_t prev = 0;
        const char *acc = gx[j];
        if (ox_map_get(&grads, n->input[j], &prev)) acc = op2(b, "Add", (const char *)prev, gx[j]);
        if (!acc || ox_map_put(&grads, n->input[j], (uintptr_t)acc))
          rc = b->e->code ? b->e->code : ox_err_set(b->e, OX_ENOMEM, "out of memory");
      }
    }
  }
  for (size_t k = 0; !rc && k < axs->n_strings; k++) {
    if (!gn->output[k][0]) continue;
    uintptr_t gk = 0;
    const char *src_name =
        ox_map_get(&grads, xs[k], &gk) ? (const char *)gk : fill_like(b, 0.0, xs[k]);
    if (!emit(b, "Identity", gn->output[k], 1, &src_name)) rc = b->e->code ? b->e->code : OX_ENOMEM;
  }
  ox_map_free(&dep);
  ox_map_free(&grads);
  if (!rc && b->failed) rc = b->e->code ? b->e->code : OX_ENOMEM;
  return rc;
}

int ox_rt_expand_gradients(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e) {
  *out = g;
  size_t count = 0;
  for (size_t i = 0; i < g->n_node; i++) count += is_gradient(&g->node[i]);
  if (!count) return OX_OK;
  const int64_t *noted = NULL;
  for (size_t i = 0; i < s->n_notes; i++)
    if (s->notes[i].g == g) noted = s->notes[i].opsets;
  int64_t *opsets = ox_arena_calloc(s->arena, g->n_node, sizeof *opsets);
  ox_graph *ng = ox_arena_calloc(s->arena, 1, sizeof *ng);
  if (!opsets || !ng) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *ng = *g;
  ng->node = NULL;
  ng->n_node = 0;
  gb b = {.a = s->arena, .g = ng, .src = g, .e = e};
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    opsets[i] = orig_opset(s, noted, i, n->domain);
    if (!is_gradient(n)) {
      ox_node *c = OX_VEC_PUSH(s->arena, ng->node, ng->n_node);
      int64_t *ov = c ? OX_VEC_PUSH(s->arena, b.ops, b.n_ops) : NULL;
      if (!ov) return ox_err_set(e, OX_ENOMEM, "out of memory");
      *c = *n;
      *ov = opsets[i];
      continue;
    }
    b.where = ox_arena_printf(s->arena, "node '%s' (Gradient)", n->name ? n->name : "");
    b.prefix = ox_arena_printf(s->arena, "%s/grad%zu", n->n_output ? n->output[0] : "", i);
    if (!b.where || !b.prefix) return ox_err_set(e, OX_ENOMEM, "out of memory");
    int rc = expand_one(&b, g, i, opsets);
    if (rc) return rc;
  }
  rt_opset_note *note = OX_VEC_PUSH(s->arena, s->notes, s->n_notes);
  if (!note) return ox_err_set(e, OX_ENOMEM, "out of memory");
  note->g = ng;
  note->opsets = b.ops;
  *out = ng;
  return OX_OK;
}
