/* gradient.c - ai.onnx.preview.training.Gradient by graph rewriting.
 *
 * At session creation every Gradient node of the main graph is replaced by a
 * backward graph: starting from dY/dY = 1 (ones of y's shape and type), the
 * nodes between the `xs` and `y` are visited in reverse order and each one
 * contributes the gradients of its inputs through a derivative rule made of
 * ordinary operators; contributions to one value are added. A gradient is
 * brought back to the shape of a broadcast input by ReduceSum over the
 * broadcast axes and a Reshape (computed at run time from the shapes). The
 * generated nodes use ai.onnx opset 18 whatever the model imports (copies of
 * a node that a rule makes keep the node's opset). Values that do not depend
 * on `xs` (such as the `zs`) are constants for the derivative. No gradient
 * flows through integer, boolean or piecewise-constant operators (Shape,
 * Size, comparisons, Floor, ...).
 *
 * Rules (compared with central finite differences of the forward graph in
 * tests/unit/test_gradient.c, and with derivatives worked out by hand in
 * tests/unit/test_training.c):
 *  - arithmetic and shape: Add, Sub, Mul, Div, Sum, Where, Expand, Identity,
 *    Neg, Abs, Reciprocal, Pow (constant exponent), MatMul (1-D operands when
 *    declared), Gemm, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Cast,
 *    Concat (a Split of g), Split (every output; outputs without a gradient
 *    count as zeros), Max and Min (variadic, broadcasting; tied inputs share
 *    the gradient equally), Clip (min/max as inputs or attributes; the
 *    gradient of x passes where min <= x <= max, that of min/max where x is
 *    below/above them), Dropout (inference mode only: identity), Einsum
 *    (explicit output; each letter of a differentiated operand must appear
 *    once in it and also in the output or another operand), Pad (constant
 *    mode: a Pad by the negated pads; other modes as below);
 *  - moving elements: Slice, Gather, GatherElements, GatherND, Tile,
 *    DepthToSpace, SpaceToDepth: the node is applied again to the flat
 *    positions 0..n-1 of its input, and g is added up at the positions it
 *    yields (ScatterElements, reduction add) -- so any constant or run-time
 *    starts/ends/axes/steps, indices or repeats;
 *  - activations: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Exp, Log, Sqrt,
 *    Erf, Gelu (none and tanh), Softplus, Elu, Selu, Celu, HardSigmoid,
 *    HardSwish, Mish, Sin, Cos, Softmax and LogSoftmax (opset 13+);
 *  - reductions: ReduceSum, ReduceMean, ReduceMax and ReduceMin (ties share
 *    the gradient equally), ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
 *    ReduceLogSumExp (not noop_with_empty_axes);
 *  - CNN: Conv (any number of spatial axes, group, strides, pads,
 *    dilations, any auto_pad: SAME pads computed at run time): dX is a
 *    ConvTranspose with the same weights followed by a Pad that crops or
 *    extends it to X's shape, dW a Conv of X (channels as the batch, per
 *    group) with g (batch and channels swapped), strides and dilations
 *    exchanged, cropped to W's shape, dB a ReduceSum; ConvTranspose
 *    (explicit pads and output_padding; group, strides, dilations): g padded
 *    to the full extent, then a Conv with the same weights for dX and the dW
 *    above with X and g exchanged; MaxPool (g scattered to the Indices of a
 *    MaxPool with the same attributes, or to the node's own Indices output);
 *    AveragePool (as a convolution with a kernel of ones, count_include_pad
 *    0 or 1, any auto_pad, not ceil_mode); GlobalAveragePool; GlobalMaxPool
 *    (ties share); BatchNormalization in inference mode (all five inputs);
 *    LayerNormalization (any axis; X, Scale, B); InstanceNormalization.
 * Only the outputs a rule names can be differentiated (the first one, or any
 * output of Split). Any other operator on the path gives an error naming
 * it. */
#include <stdio.h>
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

static const char *einsum_n(gb *b, const char *eq, size_t k, const char *const *in) {
  ox_node *m = emit(b, "Einsum", NULL, k, in);
  if (!m) return NULL;
  ox_attr *at = ox_node_add_attr(b->a, m, "equation", OX_ATTR_STRING);
  if (!at) return gb_oom(b), NULL;
  at->s = (ox_bytes){(const uint8_t *)eq, strlen(eq)};
  return o0(m);
}

static const char *einsum(gb *b, const char *eq, const char *x, const char *y) {
  ox_node *m = emit(b, "Einsum", NULL, 2, (const char *[]){x, y});
  if (!m) return NULL;
  ox_attr *at = ox_node_add_attr(b->a, m, "equation", OX_ATTR_STRING);
  if (!at) return gb_oom(b), NULL;
  at->s = (ox_bytes){(const uint8_t *)eq, strlen(eq)};
  return o0(m);
}

/* Adds a fresh output to n (for nodes with several outputs). */
static const char *add_out(gb *b, ox_node *n) {
  if (!n) return NULL;
  const char *s = fresh(b);
  if (!s || ox_node_add_output(b->a, n, s)) {
    gb_oom(b);
    return NULL;
  }
  return s;
}

static ox_node *emit_n(gb *b, const char *op, size_t n_out, size_t nin, const char *const *in) {
  ox_node *n = emit(b, op, NULL, nin, in);
  for (size_t k = 1; k < n_out; k++) add_out(b, n);
  return b->failed ? NULL : n;
}

/* A copy of n (same operator, opset and attributes but `drop`) reading x in
 * place of its first input, with n_out fresh outputs. */
static ox_node *clone_node(gb *b, const ox_node *n, int64_t opset, const char *x, size_t n_out,
                           const char *drop) {
  const char **in = ox_arena_calloc(b->a, n->n_input + 1, sizeof *in);
  if (!in) return gb_oom(b), NULL;
  for (size_t j = 0; j < n->n_input; j++) in[j] = j ? n->input[j] : x;
  ox_node *c = emit_n(b, n->op_type, n_out, n->n_input, in);
  ox_attr *at = c ? ox_arena_calloc(b->a, n->n_attribute + 1, sizeof *at) : NULL;
  if (!at) return gb_oom(b), NULL;
  b->ops[b->n_ops - 1] = opset;
  c->attribute = at;
  c->n_attribute = 0;
  for (size_t k = 0; k < n->n_attribute; k++)
    if (!drop || !n->attribute[k].name || strcmp(n->attribute[k].name, drop))
      at[c->n_attribute++] = n->attribute[k];
  return c;
}

static const char *cst_int(gb *b, int64_t v) {
  ox_node *n = emit(b, "Constant", NULL, 0, NULL);
  at_value(b, n, OX_INT64, 0, &v, 1, true);
  return o0(n);
}

/* Shape(x)[start:end] (end 0: to the end). */
static const char *shape_part(gb *b, const char *x, int64_t start, int64_t end) {
  ox_node *n = emit(b, "Shape", NULL, 1, &x);
  at_int(b, n, "start", start);
  if (end) at_int(b, n, "end", end);
  return o0(n);
}

static const char *concat(gb *b, int64_t axis, size_t k, const char *const *in) {
  ox_node *n = emit(b, "Concat", NULL, k, in);
  at_int(b, n, "axis", axis);
  return o0(n);
}

static const char *flat(gb *b, const char *x) {
  int64_t m1 = -1;
  return op2(b, "Reshape", x, cst_ints(b, &m1, 1));
}

/* ReduceSum of x over the constant axes ax[0..k). */
static const char *reduce_sum(gb *b, const char *x, const int64_t *ax, size_t k, bool keep) {
  ox_node *n = emit(b, "ReduceSum", NULL, 2, (const char *[]){x, cst_ints(b, ax, k)});
  at_int(b, n, "keepdims", keep);
  return o0(n);
}

/* Sum over every axis but 1 of x ([N, C, ...] -> [C]). */
static const char *sum_but_channel(gb *b, const char *x) {
  const int64_t s3[3] = {0, 0, -1}, ax[2] = {0, 2};
  return reduce_sum(b, op2(b, "Reshape", x, cst_ints(b, s3, 3)), ax, 2, false);
}

/* Flat positions 0..n-1 of x's elements, int64 of x's shape. */
static const char *iota_like(gb *b, const char *x) {
  const char *r = op3(b, "Range", cst_int(b, 0), op1(b, "Size", x), cst_int(b, 1));
  return op2(b, "Reshape", r, op1(b, "Shape", x));
}

/* The gradient of x from g, the gradient of a value whose elements are the
 * elements of x at the flat positions pos (same shape as g): the values of g
 * added up at pos. */
static const char *scatter_add(gb *b, const char *g, const char *pos, const char *x) {
  int64_t one = 1;
  const char *n = op2(b, "Reshape", op1(b, "Size", x), cst_ints(b, &one, 1));
  ox_node *z = emit(b, "ConstantOfShape", NULL, 1, &n);
  at_value(b, z, OX_FLOAT, 0, NULL, 0, true);
  ox_node *s = emit(b, "ScatterElements", NULL, 3,
                    (const char *[]){op2(b, "CastLike", o0(z), g), flat(b, pos), flat(b, g)});
  at_int(b, s, "axis", 0);
  if (s) {
    ox_attr *at = ox_node_add_attr(b->a, s, "reduction", OX_ATTR_STRING);
    if (!at) return gb_oom(b), NULL;
    at->s = (ox_bytes){(const uint8_t *)"add", 3};
  }
  return op2(b, "Reshape", o0(s), op1(b, "Shape", x));
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

/* Number of spatial axes of a Conv/pool node: from its attributes or the
 * declared ranks of its inputs; 0 when unknown. */
static size_t spatial_rank(const gb *b, const ox_node *n) {
  const ox_attr *a;
  if ((a = ox_node_attr(n, "kernel_shape")) && a->n_ints) return a->n_ints;
  if ((a = ox_node_attr(n, "strides")) && a->n_ints) return a->n_ints;
  if ((a = ox_node_attr(n, "dilations")) && a->n_ints) return a->n_ints;
  if ((a = ox_node_attr(n, "pads")) && a->n_ints) return a->n_ints / 2;
  size_t r;
  const ox_shape *sh;
  const int64_t *d;
  for (size_t j = 0; j < 2 && j < n->n_input; j++)
    if (find_shape(b, n->input[j], &r, &sh, &d) && r > 2) return r - 2;
  return 0;
}

/* Attribute ints `name` of n into v[0..k) (default dflt). */
static void ints_or(const ox_node *n, const char *name, int64_t *v, size_t k, int64_t dflt) {
  const ox_attr *a = ox_node_attr(n, name);
  for (size_t i = 0; i < k; i++) v[i] = a && i < a->n_ints ? a->ints[i] : dflt;
}

#define MAXSP 8

typedef struct conv_geom {
  size_t nd;
  int64_t strides[MAXSP], dils[MAXSP], pads[2 * MAXSP];
  int same;            /* auto_pad SAME_UPPER 1, SAME_LOWER 2 */
  const char *pb, *pe; /* then: begin and end pads computed at run time */
} conv_geom;

static int conv_geom_read(gb *b, const ox_node *n, conv_geom *c) {
  c->nd = spatial_rank(b, n);
  if (!c->nd || c->nd > MAXSP)
    return no_rule(b, n, "the number of spatial axes is unknown (give kernel_shape)");
  const char *ap = ox_node_attr_str(n, "auto_pad", "NOTSET");
  c->same = !strcmp(ap, "SAME_UPPER") ? 1 : !strcmp(ap, "SAME_LOWER") ? 2 : 0;
  c->pb = c->pe = NULL;
  if (*ap && !c->same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
    return no_rule(b, n, "unknown auto_pad");
  if (ox_node_attr_int(n, "ceil_mode", 0)) return no_rule(b, n, "ceil_mode is not supported");
  ints_or(n, "strides", c->strides, c->nd, 1);
  ints_or(n, "dilations", c->dils, c->nd, 1);
  ints_or(n, "pads", c->pads, 2 * c->nd, 0);
  if (!strcmp(ap, "VALID")) memset(c->pads, 0, sizeof c->pads);
  return OX_OK;
}

/* auto_pad SAME_*: the pads from the spatial shapes of x and y and the
 * kernel's k: total = max(0, (y - 1) s + (k - 1) d + 1 - x), the begin half
 * rounded down (UPPER) or up (LOWER). */
static void same_pads(gb *b, conv_geom *c, const char *x, const char *y, const char *k) {
  const char *s = cst_ints(b, c->strides, c->nd), *d = cst_ints(b, c->dils, c->nd);
  const char *one = cst_int(b, 1), *zero = cst_int(b, 0), *two = cst_int(b, 2);
  const char *ym1 = op2(b, "Sub", shape_part(b, y, 2, 0), one);
  const char *eff = op2(b, "Add", op2(b, "Mul", op2(b, "Sub", k, one), d), one);
  const char *tot =
      op2(b, "Sub", op2(b, "Add", op2(b, "Mul", ym1, s), eff), shape_part(b, x, 2, 0));
  tot = op2(b, "Max", tot, zero);
  const char *half = op2(b, "Div", tot, two);
  c->pb = c->same == 1 ? half : op2(b, "Sub", tot, half);
  c->pe = op2(b, "Sub", tot, c->pb);
}

/* x padded by c's run-time pads (spatial axes; zeros). */
static const char *pad_same(gb *b, const conv_geom *c, const char *x) {
  int64_t z2[2] = {0, 0};
  const char *z = cst_ints(b, z2, 2);
  return op2(b, "Pad", x, concat(b, 0, 4, (const char *[]){z, c->pb, z, c->pe}));
}

/* The gradient of the input (shape xshape, an int64 1-D value) of a
 * convolution with weights w from the gradient g of its output: a
 * ConvTranspose without padding, whose result covers every input position a
 * window reached, then a Pad that crops the begin padding and crops or
 * zero-extends the end to the input's size. */
static const char *conv_data_grad(gb *b, const conv_geom *c, const char *g, const char *w,
                                  const char *xshape, int64_t group) {
  ox_node *t = emit(b, "ConvTranspose", NULL, 2, (const char *[]){g, w});
  at_ints(b, t, "strides", c->strides, c->nd);
  at_ints(b, t, "dilations", c->dils, c->nd);
  at_int(b, t, "group", group);
  int64_t beg[MAXSP + 2] = {0};
  for (size_t k = 0; k < c->nd; k++) beg[k + 2] = -c->pads[k];
  const char *begin = cst_ints(b, beg, c->pb ? 2 : c->nd + 2);
  if (c->pb) begin = concat(b, 0, 2, (const char *[]){begin, op1(b, "Neg", c->pb)});
  const char *end = op2(b, "Sub", op2(b, "Sub", xshape, op1(b, "Shape", o0(t))), begin);
  return op2(b, "Pad", o0(t), concat(b, 0, 2, (const char *[]){begin, end}));
}

/* Perm swapping axes 0 and 1 of a rank nd+2 tensor. */
static void swap01(gb *b, ox_node *t, size_t nd) {
  int64_t p[MAXSP + 2];
  for (size_t k = 0; k < nd + 2; k++) p[k] = (int64_t)k;
  p[0] = 1;
  p[1] = 0;
  at_ints(b, t, "perm", p, nd + 2);
}

static const char *transpose01(gb *b, const char *x, size_t nd) {
  ox_node *t = emit(b, "Transpose", NULL, 1, &x);
  swap01(b, t, nd);
  return o0(t);
}

/* dW[m, c, k] = sum over n and o of g[n, m, o] x[n, c', o s + k d - p] (c'
 * the channel c of m's group): a Conv whose batch is the input channel (per
 * group) and whose weights are g with batch and channel swapped, strides and
 * dilations exchanged, cropped to W's shape. pads: use c's pads (else x is
 * already padded). */
static const char *weight_grad(gb *b, const conv_geom *c, const char *x, const char *g,
                               const char *w, int64_t group, bool pads) {
  const char *sp = shape_part(b, x, 2, 0), *in = x;
  if (group == 1) {
    in = transpose01(b, x, c->nd);
  } else {
    const int64_t gm[2] = {group, -1}, zm[2] = {0, -1};
    const char *s5 =
        concat(b, 0, 3, (const char *[]){shape_part(b, x, 0, 1), cst_ints(b, gm, 2), sp});
    ox_node *t = emit(b, "Transpose", NULL, 1, (const char *[]){op2(b, "Reshape", x, s5)});
    int64_t p[MAXSP + 3] = {2, 1, 0};
    for (size_t k = 0; k < c->nd; k++) p[k + 3] = (int64_t)k + 3;
    at_ints(b, t, "perm", p, c->nd + 3);
    in = op2(b, "Reshape", o0(t), concat(b, 0, 2, (const char *[]){cst_ints(b, zm, 2), sp}));
  }
  ox_node *cv = emit(b, "Conv", NULL, 2, (const char *[]){in, transpose01(b, g, c->nd)});
  at_ints(b, cv, "strides", c->dils, c->nd);
  at_ints(b, cv, "dilations", c->strides, c->nd);
  if (pads) at_ints(b, cv, "pads", c->pads, 2 * c->nd);
  at_int(b, cv, "group", group);
  int64_t zero[MAXSP + 2] = {0};
  return op3(b, "Slice", transpose01(b, o0(cv), c->nd), cst_ints(b, zero, c->nd + 2),
             op1(b, "Shape", w));
}

/* Conv: Y = X * W + B. dX by conv_data_grad, dW by weight_grad, dB sums g
 * over all axes but the channel. */
static int conv_rule(gb *b, const ox_node *n, const char *g, const bool *need, const char **gx) {
  conv_geom c;
  if (conv_geom_read(b, n, &c)) return b->e->code;
  int64_t group = ox_node_attr_int(n, "group", 1);
  const char *x = n->input[0], *w = n->input[1];
  if (c.same) same_pads(b, &c, x, g, shape_part(b, w, 2, 0));
  if (need[0]) gx[0] = conv_data_grad(b, &c, g, w, op1(b, "Shape", x), group);
  if (need[1]) gx[1] = weight_grad(b, &c, c.pb ? pad_same(b, &c, x) : x, g, w, group, !c.pb);
  if (n->n_input > 2 && need[2]) gx[2] = sum_but_channel(b, g);
  return b->failed ? b->e->code : OX_OK;
}

/* ConvTranspose (explicit pads and output_padding): the adjoint of a Conv.
 * g padded back to the full col2im extent (pads at the begin, pads minus
 * output_padding at the end; negative crops) gives dX as a Conv with the same
 * weights and dW as weight_grad with the roles of x and g exchanged. */
static int convt_rule(gb *b, const ox_node *n, const char *g, const bool *need, const char **gx) {
  conv_geom c;
  if (conv_geom_read(b, n, &c)) return b->e->code;
  if (c.same || ox_node_attr(n, "output_shape"))
    return no_rule(b, n, "only explicit pads are supported (no output_shape or SAME)");
  int64_t group = ox_node_attr_int(n, "group", 1), op[MAXSP], pp[2 * MAXSP + 4] = {0};
  ints_or(n, "output_padding", op, c.nd, 0);
  for (size_t k = 0; k < c.nd; k++) {
    pp[k + 2] = c.pads[k];
    pp[c.nd + 4 + k] = c.pads[c.nd + k] - op[k];
  }
  const char *x = n->input[0], *w = n->input[1];
  const char *gp = op2(b, "Pad", g, cst_ints(b, pp, 2 * c.nd + 4));
  if (need[0]) {
    ox_node *cv = emit(b, "Conv", NULL, 2, (const char *[]){gp, w});
    at_ints(b, cv, "strides", c.strides, c.nd);
    at_ints(b, cv, "dilations", c.dils, c.nd);
    at_int(b, cv, "group", group);
    gx[0] = o0(cv);
  }
  if (need[1]) gx[1] = weight_grad(b, &c, gp, x, w, group, false);
  if (n->n_input > 2 && need[2]) gx[2] = sum_but_channel(b, g);
  return b->failed ? b->e->code : OX_OK;
}

/* AveragePool: the average over a window is a convolution with a kernel of
 * ones, divided by the window's size (count_include_pad, or no padding) or by
 * the number of input positions it covers (itself a Conv of ones). Channels
 * become the batch so that one [1, 1, k...] kernel serves all. */
static int avgpool_rule(gb *b, const ox_node *n, const char *g, const char **gx) {
  conv_geom c;
  if (conv_geom_read(b, n, &c)) return b->e->code;
  const ox_attr *ks = ox_node_attr(n, "kernel_shape");
  if (!ks || ks->n_ints != c.nd) return no_rule(b, n, "kernel_shape is required");
  const char *x = n->input[0];
  int64_t kd[MAXSP + 2] = {1, 1}, size = 1, m11[2] = {-1, 1};
  bool padded = false;
  for (size_t k = 0; k < c.nd; k++) kd[k + 2] = ks->ints[k], size *= ks->ints[k];
  for (size_t k = 0; k < 2 * c.nd; k++) padded |= c.pads[k] != 0;
  if (c.same) {
    same_pads(b, &c, x, g, cst_ints(b, ks->ints, c.nd));
    padded = true;
  }
  ox_node *wn = emit(b, "ConstantOfShape", NULL, 1, (const char *[]){cst_ints(b, kd, c.nd + 2)});
  at_value(b, wn, OX_FLOAT, 1, NULL, 0, true);
  const char *w = op2(b, "CastLike", o0(wn), g), *sp = shape_part(b, x, 2, 0);
  const char *g2 =
      op2(b, "Reshape", g,
          concat(b, 0, 2, (const char *[]){cst_ints(b, m11, 2), shape_part(b, g, 2, 0)}));
  const char *div;
  if (!padded || ox_node_attr_int(n, "count_include_pad", 0)) {
    div = cst_like(b, (double)size, g);
  } else {
    const int64_t one2[2] = {1, 1};
    ox_node *on =
        emit(b, "ConstantOfShape", NULL, 1,
             (const char *[]){concat(b, 0, 2, (const char *[]){cst_ints(b, one2, 2), sp})});
    at_value(b, on, OX_FLOAT, 1, NULL, 0, true);
    const char *ones = op2(b, "CastLike", o0(on), g);
    ox_node *cv =
        emit(b, "Conv", NULL, 2, (const char *[]){c.pb ? pad_same(b, &c, ones) : ones, w});
    at_ints(b, cv, "strides", c.strides, c.nd);
    at_ints(b, cv, "dilations", c.dils, c.nd);
    if (!c.pb) at_ints(b, cv, "pads", c.pads, 2 * c.nd);
    div = o0(cv);
  }
  const char *xs2 = concat(b, 0, 2, (const char *[]){shape_part(b, g2, 0, 2), sp});
  const char *d = conv_data_grad(b, &c, op2(b, "Div", g2, div), w, xs2, 1);
  gx[0] = op2(b, "Reshape", d, op1(b, "Shape", x));
  return b->failed ? b->e->code : OX_OK;
}

/* BatchNormalization in inference mode: y = (x - mean) k + B per channel,
 * k = scale / sqrt(var + epsilon). */
static int batchnorm_rule(gb *b, const ox_node *n, int64_t opset, const char *g, const bool *need,
                          const char **gx) {
  bool train = ox_node_attr_int(n, "training_mode", 0) != 0;
  for (size_t j = 1; opset < 14 && j < n->n_output; j++) train |= n->output[j][0] != 0;
  if (train || n->n_input < 5) return no_rule(b, n, "only inference mode is supported");
  const char *x = n->input[0], *scale = n->input[1], *mean = n->input[3], *var = n->input[4];
  int64_t m1 = -1, two = 2, one = 1;
  ox_node *ones = emit(
      b, "ConstantOfShape", NULL, 1,
      (const char *[]){op2(b, "Sub", op1(b, "Shape", op1(b, "Shape", x)), cst_ints(b, &two, 1))});
  at_value(b, ones, OX_INT64, 0, &one, 1, false);
  const char *cs = concat(b, 0, 2, (const char *[]){cst_ints(b, &m1, 1), o0(ones)});
  float eps = ox_node_attr_float(n, "epsilon", 1e-5f);
  const char *rs = op1(b, "Reciprocal", op1(b, "Sqrt", op2(b, "Add", var, cst_like(b, eps, var))));
  const char *k = op2(b, "Mul", scale, rs);
  if (need[0]) gx[0] = op2(b, "Mul", g, op2(b, "Reshape", k, cs));
  const char *gs = need[2] || need[3] ? sum_but_channel(b, g) : NULL, *gxm = NULL;
  if (need[1] || need[4])
    gxm = sum_but_channel(b, op2(b, "Mul", g, op2(b, "Sub", x, op2(b, "Reshape", mean, cs))));
  if (need[1]) gx[1] = op2(b, "Mul", gxm, rs);
  if (need[2]) gx[2] = gs;
  if (need[3]) gx[3] = op1(b, "Neg", op2(b, "Mul", gs, k));
  if (need[4])
    gx[4] = op2(b, "Mul", op2(b, "Mul", gxm, k),
                op2(b, "Mul", op2(b, "Mul", rs, rs), cst_like(b, -0.5, var)));
  return b->failed ? b->e->code : OX_OK;
}

/* LayerNormalization over the axes from `axis` on, done on x flattened to 2-D
 * [outer, inner]: with h = (x - mean) r and d = g scale,
 * dx = r (d - mean(d) - h mean(d h)). */
static int layernorm_rule(gb *b, const ox_node *n, const char *g, const bool *need,
                          const char **gx) {
  int64_t axis = ox_node_attr_int(n, "axis", -1), one = 1;
  float eps = ox_node_attr_float(n, "epsilon", 1e-5f);
  const char *x = n->input[0], *scale = n->input[1], *shape = op1(b, "Shape", x);
  ox_node *f = emit(b, "Flatten", NULL, 1, &x);
  at_int(b, f, "axis", axis);
  const char *x2 = o0(f), *ax = cst_ints(b, &one, 1);
  ox_node *mu = emit(b, "ReduceMean", NULL, 2, (const char *[]){x2, ax});
  const char *xc = op2(b, "Sub", x2, o0(mu));
  ox_node *var = emit(b, "ReduceMean", NULL, 2, (const char *[]){op2(b, "Mul", xc, xc), ax});
  const char *r = op1(b, "Reciprocal", op1(b, "Sqrt", op2(b, "Add", o0(var), cst_like(b, eps, x))));
  const char *h2 = op2(b, "Mul", xc, r), *h = op2(b, "Reshape", h2, shape);
  if (need[0]) {
    ox_node *d = emit(b, "Flatten", NULL, 1, (const char *[]){op2(b, "Mul", g, scale)});
    at_int(b, d, "axis", axis);
    ox_node *md = emit(b, "ReduceMean", NULL, 2, (const char *[]){o0(d), ax});
    ox_node *mdh = emit(b, "ReduceMean", NULL, 2, (const char *[]){op2(b, "Mul", o0(d), h2), ax});
    const char *in = op2(b, "Sub", op2(b, "Sub", o0(d), o0(md)), op2(b, "Mul", h2, o0(mdh)));
    gx[0] = op2(b, "Reshape", op2(b, "Mul", r, in), shape);
  }
  if (need[1]) gx[1] = unbroadcast(b, op2(b, "Mul", g, h), scale, NULL);
  if (n->n_input > 2 && need[2]) gx[2] = unbroadcast(b, g, n->input[2], NULL);
  return b->failed ? b->e->code : OX_OK;
}

/* InstanceNormalization: per sample and channel over the spatial axes, on x
 * reshaped to [N, C, S]; with h the normalized x and d = g scale[c],
 * dx = r (d - mean(d) - h mean(d h)). */
static int instnorm_rule(gb *b, const ox_node *n, const char *g, const bool *need,
                         const char **gx) {
  const int64_t s3[3] = {0, 0, -1}, c3[3] = {1, -1, 1}, two = 2, ax[2] = {0, 2};
  float eps = ox_node_attr_float(n, "epsilon", 1e-5f);
  const char *x = n->input[0], *scale = n->input[1], *shp = cst_ints(b, s3, 3);
  const char *x3 = op2(b, "Reshape", x, shp), *g3 = op2(b, "Reshape", g, shp);
  const char *a2 = cst_ints(b, &two, 1);
  const char *xc = op2(b, "Sub", x3, op2(b, "ReduceMean", x3, a2));
  const char *var = op2(b, "ReduceMean", op2(b, "Mul", xc, xc), a2);
  const char *r = op1(b, "Reciprocal", op1(b, "Sqrt", op2(b, "Add", var, cst_like(b, eps, x))));
  const char *h3 = op2(b, "Mul", xc, r);
  if (need[0]) {
    const char *d = op2(b, "Mul", g3, op2(b, "Reshape", scale, cst_ints(b, c3, 3)));
    const char *md = op2(b, "ReduceMean", d, a2);
    const char *mdh = op2(b, "ReduceMean", op2(b, "Mul", d, h3), a2);
    const char *in = op2(b, "Sub", op2(b, "Sub", d, md), op2(b, "Mul", h3, mdh));
    gx[0] = op2(b, "Reshape", op2(b, "Mul", r, in), op1(b, "Shape", x));
  }
  if (need[1]) gx[1] = reduce_sum(b, op2(b, "Mul", g3, h3), ax, 2, false);
  if (n->n_input > 2 && need[2]) gx[2] = sum_but_channel(b, g);
  return b->failed ? b->e->code : OX_OK;
}

/* Gradient of the first input of a node that only moves or repeats elements
 * (Slice, Gather, Tile, ...): the same node applied to the flat positions of
 * x tells where each output element comes from; g is added up there. */
static const char *index_rule(gb *b, const ox_node *n, int64_t opset, const char *g) {
  const char *x = n->input[0];
  return scatter_add(b, g, o0(clone_node(b, n, opset, iota_like(b, x), 1, NULL)), x);
}

/* Reductions other than ReduceSum/ReduceMean: g and y with the reduced axes
 * kept (size 1), to broadcast against x. */
static int reduce_kept(gb *b, const ox_node *n, int64_t opset, const char *g, const char **g2,
                       const char **y2, const char **axes) {
  bool bad = false;
  *axes = reduce_axes(b, n, opset >= 18, &bad);
  if (bad) return no_rule(b, n, "noop_with_empty_axes is not supported");
  *g2 = g;
  *y2 = n->output[0];
  if (!ox_node_attr_int(n, "keepdims", 1) && *axes) {
    *g2 = op2(b, "Unsqueeze", g, *axes);
    *y2 = op2(b, "Unsqueeze", *y2, *axes);
  }
  return b->failed ? b->e->code : OX_OK;
}

static bool is_op(const char *op, const char *const *list) {
  for (; *list; list++)
    if (!strcmp(op, *list)) return true;
  return false;
}

/* Elementwise activations: gx = g * f'(x), f' from x and y. */
static const char *activation(gb *b, const ox_node *n, int64_t opset, const char *g) {
  const char *op = n->op_type, *x = n->input[0], *y = n->output[0];
  const char *zero = NULL, *d = NULL;
  if (!strcmp(op, "Erf")) {
    d = op2(b, "Mul", cst_like(b, 1.1283791670955126, x),
            op1(b, "Exp", op1(b, "Neg", op2(b, "Mul", x, x))));
  } else if (!strcmp(op, "Gelu")) {
    if (!strcmp(ox_node_attr_str(n, "approximate", "none"), "tanh")) {
      /* y = x/2 (1 + tanh(u)), u = c (x + 0.044715 x^3) */
      const char *x2 = op2(b, "Mul", x, x), *c = cst_like(b, 0.7978845608028654, x);
      const char *u =
          op2(b, "Mul", c,
              op2(b, "Mul", x,
                  op2(b, "Add", cst_like(b, 1, x), op2(b, "Mul", cst_like(b, 0.044715, x), x2))));
      const char *t = op1(b, "Tanh", u), *half = cst_like(b, 0.5, x);
      const char *du =
          op2(b, "Mul", c,
              op2(b, "Add", cst_like(b, 1, x), op2(b, "Mul", cst_like(b, 3 * 0.044715, x), x2)));
      const char *sech2 = op2(b, "Sub", cst_like(b, 1, x), op2(b, "Mul", t, t));
      d = op2(b, "Mul", half,
              op2(b, "Add", op2(b, "Add", cst_like(b, 1, x), t),
                  op2(b, "Mul", x, op2(b, "Mul", sech2, du))));
    } else {
      /* y = x Phi(x): dy = Phi(x) + x phi(x) */
      const char *phi_cdf =
          op2(b, "Mul", cst_like(b, 0.5, x),
              op2(b, "Add", cst_like(b, 1, x),
                  op1(b, "Erf", op2(b, "Mul", x, cst_like(b, 0.7071067811865476, x)))));
      const char *pdf =
          op2(b, "Mul", cst_like(b, 0.3989422804014327, x),
              op1(b, "Exp", op2(b, "Mul", cst_like(b, -0.5, x), op2(b, "Mul", x, x))));
      d = op2(b, "Add", phi_cdf, op2(b, "Mul", x, pdf));
    }
  } else if (!strcmp(op, "Softplus")) {
    d = op1(b, "Sigmoid", x);
  } else if (!strcmp(op, "Elu") || !strcmp(op, "Selu") || !strcmp(op, "Celu")) {
    /* negative side: y = s a (e^(x/c) - 1), dy = (y + s a) / c */
    bool selu = op[0] == 'S', celu = op[0] == 'C';
    double alpha = ox_node_attr_float(n, "alpha", selu ? 1.67326319217681884765625f : 1.0f);
    double gamma = selu ? ox_node_attr_float(n, "gamma", 1.05070102214813232421875f) : 1.0;
    zero = cst_like(b, 0, x);
    const char *neg = op2(b, "Add", y, cst_like(b, gamma * alpha, x));
    if (celu) neg = op2(b, "Div", neg, cst_like(b, alpha, x));
    d = op3(b, "Where", op2(b, "Greater", x, zero), cst_like(b, gamma, x), neg);
  } else if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
    bool swish = !strcmp(op, "HardSwish");
    double alpha = swish ? 1.0 / 6 : ox_node_attr_float(n, "alpha", 0.2f);
    double beta = swish ? 0.5 : ox_node_attr_float(n, "beta", 0.5f);
    const char *t = op2(b, "Add", op2(b, "Mul", x, cst_like(b, alpha, x)), cst_like(b, beta, x));
    const char *in = op2(b, "And", op2(b, "Greater", t, cst_like(b, 0, x)),
                         op2(b, "Less", t, cst_like(b, 1, x)));
    if (swish) /* y = x t: dy = t + alpha x inside, 1 above, 0 below */
      d = op3(b, "Where", in, op2(b, "Add", t, op2(b, "Mul", x, cst_like(b, alpha, x))),
              op3(b, "Where", op2(b, "GreaterOrEqual", t, cst_like(b, 1, x)), cst_like(b, 1, x),
                  cst_like(b, 0, x)));
    else
      d = op3(b, "Where", in, cst_like(b, alpha, x), cst_like(b, 0, x));
  } else if (!strcmp(op, "Mish")) {
    /* y = x tanh(softplus(x)): dy = t + x (1 - t^2) sigmoid(x) */
    const char *t = op1(b, "Tanh", op1(b, "Softplus", x));
    d = op2(b, "Add", t,
            op2(b, "Mul", x,
                op2(b, "Mul", op2(b, "Sub", cst_like(b, 1, x), op2(b, "Mul", t, t)),
                    op1(b, "Sigmoid", x))));
  } else if (!strcmp(op, "Sin")) {
    d = op1(b, "Cos", x);
  } else if (!strcmp(op, "Cos")) {
    d = op1(b, "Neg", op1(b, "Sin", x));
  } else {
    (void)opset;
    return NULL;
  }
  return op2(b, "Mul", g, d);
}

/* Einsum with an explicit output: the gradient of operand i is the Einsum
 * of g and the other operands giving operand i's subscripts, summed back to
 * its shape when its ellipsis broadcast. Needs every letter of operand i to
 * appear in the output or another operand, and no letter repeated in it. */
static int einsum_rule(gb *b, const ox_node *n, const char *g, const bool *need, const char **gx) {
  const ox_attr *at = ox_node_attr(n, "equation");
  char eq[512], *terms[64];
  size_t len = 0, nt = 0;
  for (size_t k = 0; at && k < at->s.size && len + 1 < sizeof eq; k++)
    if (at->s.data[k] != ' ') eq[len++] = (char)at->s.data[k];
  eq[len] = 0;
  char *arrow = strstr(eq, "->");
  if (!at || !arrow || len + 1 >= sizeof eq)
    return no_rule(b, n, "only an equation with an explicit output ('->') is supported");
  *arrow = 0;
  const char *out = arrow + 2;
  for (char *p = eq; nt < 64; p++) {
    terms[nt++] = p;
    if (!(p = strchr(p, ','))) break;
    *p = 0;
  }
  if (nt != n->n_input) return no_rule(b, n, "the equation does not match the inputs");
  const char **in = ox_arena_calloc(b->a, nt + 1, sizeof *in);
  if (!in) return gb_oom(b), OX_ENOMEM;
  for (size_t i = 0; i < nt; i++) {
    if (!need[i]) continue;
    char *e2 = ox_arena_calloc(b->a, len + 8, 1);
    if (!e2) return gb_oom(b), OX_ENOMEM;
    size_t k = (size_t)snprintf(e2, len + 8, "%s", out), m = 0;
    in[m++] = g;
    for (size_t j = 0; j < nt; j++)
      if (j != i) {
        k += (size_t)snprintf(e2 + k, len + 8 - k, ",%s", terms[j]);
        in[m++] = n->input[j];
      }
    snprintf(e2 + k, len + 8 - k, "->%s", terms[i]);
    for (const char *c = terms[i]; *c; c++) {
      if (*c == '.') continue;
      bool seen = strchr(out, *c) != NULL;
      for (size_t j = 0; j < nt && !seen; j++) seen = j != i && strchr(terms[j], *c);
      if (!seen || strchr(c + 1, *c))
        return no_rule(b, n,
                       "a subscript appears only in the differentiated operand, or twice in it");
    }
    if (strstr(terms[i], "...") && !strstr(out, "..."))
      return no_rule(b, n, "an ellipsis summed away is not supported");
    gx[i] = unbroadcast(b, einsum_n(b, e2, m, in), n->input[i], NULL);
  }
  return b->failed ? b->e->code : OX_OK;
}

/* Pad: constant mode crops g with the negated pads; other modes go through
 * index_rule (with no constant value). */
static int pad_rule(gb *b, const ox_node *n, int64_t opset, const char *g, const char **gx) {
  const char *mode = ox_node_attr_str(n, "mode", "constant");
  if (strcmp(mode, "constant")) {
    const char *x = n->input[0];
    ox_node *c = clone_node(b, n, opset, iota_like(b, x), 1, "value");
    if (c && c->n_input > 2) c->input[2] = ox_arena_strdup(b->a, "");
    if (c && c->n_input > 2 && !c->input[2]) return gb_oom(b), OX_ENOMEM;
    gx[0] = scatter_add(b, g, o0(c), x);
  } else if (opset < 11) {
    const ox_attr *p = ox_node_attr(n, opset < 2 ? "paddings" : "pads");
    int64_t neg[2 * MAXSP + 2 * 8];
    if (!p || p->n_ints > sizeof neg / sizeof *neg) return no_rule(b, n, "bad pads");
    for (size_t k = 0; k < p->n_ints; k++) neg[k] = -p->ints[k];
    gx[0] = op2(b, "Pad", g, cst_ints(b, neg, p->n_ints));
  } else {
    const char *axes = n->n_input > 3 && n->input[3][0] ? n->input[3] : NULL;
    ox_node *pn = emit(b, "Pad", NULL, axes ? 4 : 2,
                       (const char *[]){g, op1(b, "Neg", n->input[1]), "", axes});
    gx[0] = o0(pn);
  }
  return b->failed ? b->e->code : OX_OK;
}

/* Rules added for MLPs and CNNs (see the header). 1 when op has none. */
static int backward_more(gb *b, const ox_node *n, int64_t opset, const char *g, const bool *need,
                         const char **gx) {
  static const char *const index_ops[] = {"Slice", "Gather",       "GatherElements", "GatherND",
                                          "Tile",  "DepthToSpace", "SpaceToDepth",   NULL};
  static const char *const acts[] = {"Erf",         "Gelu",      "Softplus", "Elu", "Selu", "Celu",
                                     "HardSigmoid", "HardSwish", "Mish",     "Sin", "Cos",  NULL};
  const char *op = n->op_type, *x = n->input[0], *y = n->output[0];
  if (is_op(op, index_ops)) {
    if (need[0]) gx[0] = index_rule(b, n, opset, g);
  } else if (is_op(op, acts)) {
    gx[0] = activation(b, n, opset, g);
  } else if (!strcmp(op, "Concat")) {
    int64_t axis = ox_node_attr_int(n, "axis", opset < 4 ? 1 : 0);
    const char **sizes = ox_arena_calloc(b->a, n->n_input + 1, sizeof *sizes);
    if (!sizes) return gb_oom(b), OX_ENOMEM;
    for (size_t j = 0; j < n->n_input; j++)
      sizes[j] = op2(b, "Gather", op1(b, "Shape", n->input[j]), cst_ints(b, &axis, 1));
    ox_node *s =
        emit_n(b, "Split", n->n_input, 2, (const char *[]){g, concat(b, 0, n->n_input, sizes)});
    at_int(b, s, "axis", axis);
    for (size_t j = 0; s && j < n->n_input; j++)
      if (need[j]) gx[j] = s->output[j];
  } else if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
    /* ties share the gradient equally */
    const char **m = ox_arena_calloc(b->a, n->n_input + 1, sizeof *m);
    if (!m) return gb_oom(b), OX_ENOMEM;
    for (size_t j = 0; j < n->n_input; j++)
      m[j] = op2(b, "CastLike", op2(b, "Equal", n->input[j], y), g);
    const char *share = op2(b, "Div", g, o0(emit(b, "Sum", NULL, n->n_input, m)));
    for (size_t j = 0; j < n->n_input; j++)
      if (need[j]) gx[j] = unbroadcast(b, op2(b, "Mul", share, m[j]), n->input[j], y);
  } else if (!strcmp(op, "Clip")) {
    const char *lo = NULL, *hi = NULL, *zero = cst_like(b, 0, g);
    if (opset >= 11) {
      lo = n->n_input > 1 && n->input[1][0] ? n->input[1] : NULL;
      hi = n->n_input > 2 && n->input[2][0] ? n->input[2] : NULL;
    } else {
      if (ox_node_attr(n, "min")) lo = cst_like(b, ox_node_attr_float(n, "min", 0), x);
      if (ox_node_attr(n, "max")) hi = cst_like(b, ox_node_attr_float(n, "max", 0), x);
    }
    const char *below = lo ? op2(b, "Less", x, lo) : NULL,
               *above = hi ? op2(b, "Greater", x, hi) : NULL;
    const char *out = below && above ? op2(b, "Or", below, above) : below ? below : above;
    if (need[0]) gx[0] = out ? op3(b, "Where", out, zero, g) : g;
    if (opset >= 11 && n->n_input > 1 && need[1] && lo)
      gx[1] = unbroadcast(b, op3(b, "Where", below, g, zero), lo, NULL);
    if (opset >= 11 && n->n_input > 2 && need[2] && hi)
      gx[2] = unbroadcast(b, op3(b, "Where", above, g, zero), hi, NULL);
  } else if (!strcmp(op, "PRelu")) {
    const char *pos = op2(b, "Greater", x, cst_like(b, 0, x)), *zero = cst_like(b, 0, g);
    if (need[0])
      gx[0] = unbroadcast(b, op3(b, "Where", pos, g, op2(b, "Mul", g, n->input[1])), x, y);
    if (need[1])
      gx[1] = unbroadcast(b, op3(b, "Where", pos, zero, op2(b, "Mul", g, x)), n->input[1], y);
  } else if (!strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin") || !strcmp(op, "ReduceL2") ||
             !strcmp(op, "ReduceL1") || !strcmp(op, "ReduceSumSquare") ||
             !strcmp(op, "ReduceLogSumExp") || !strcmp(op, "ReduceLogSum")) {
    const char *g2 = NULL, *y2 = NULL, *axes = NULL;
    if (reduce_kept(b, n, opset, g, &g2, &y2, &axes)) return b->e->code;
    if (!strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin")) {
      /* ties share the gradient equally */
      const char *m = op2(b, "CastLike", op2(b, "Equal", x, y2), g);
      ox_node *cnt = emit(b, "ReduceSum", NULL, axes ? 2 : 1, (const char *[]){m, axes});
      at_int(b, cnt, "keepdims", 1);
      gx[0] = op2(b, "Mul", m, op2(b, "Div", g2, o0(cnt)));
    } else if (!strcmp(op, "ReduceL2")) {
      gx[0] = op2(b, "Mul", x, op2(b, "Div", g2, y2));
    } else if (!strcmp(op, "ReduceL1")) {
      gx[0] = op2(b, "Mul", op1(b, "Sign", x), g2);
    } else if (!strcmp(op, "ReduceSumSquare")) {
      gx[0] = op2(b, "Mul", x, op2(b, "Mul", g2, cst_like(b, 2, g)));
    } else if (!strcmp(op, "ReduceLogSumExp")) {
      gx[0] = op2(b, "Mul", g2, op1(b, "Exp", op2(b, "Sub", x, y2)));
    } else {
      gx[0] =
          op2(b, "Expand", op2(b, "Mul", g2, op1(b, "Exp", op1(b, "Neg", y2))), op1(b, "Shape", x));
    }
  } else if (!strcmp(op, "Dropout")) {
    if ((opset >= 12 && n->n_input > 2 && n->input[2][0]) ||
        (opset < 7 && !ox_node_attr_int(n, "is_test", 0)))
      return no_rule(b, n, "only inference mode (no training_mode input) is supported");
    gx[0] = g;
  } else if (!strcmp(op, "Conv")) {
    return conv_rule(b, n, g, need, gx);
  } else if (!strcmp(op, "ConvTranspose")) {
    return convt_rule(b, n, g, need, gx);
  } else if (!strcmp(op, "MaxPool")) {
    const char *idx = n->n_output > 1 && n->output[1][0] && !ox_node_attr_int(n, "storage_order", 0)
                          ? n->output[1]
                          : NULL;
    if (!idx) {
      ox_node *c = clone_node(b, n, opset < 8 ? 8 : opset, x, 2, "storage_order");
      idx = c ? c->output[1] : NULL;
    }
    gx[0] = scatter_add(b, g, idx, x);
  } else if (!strcmp(op, "AveragePool")) {
    return avgpool_rule(b, n, g, gx);
  } else if (!strcmp(op, "GlobalAveragePool")) {
    const char *ratio = op2(b, "Div", op1(b, "Size", x), op1(b, "Size", y));
    gx[0] = op2(b, "Div", op2(b, "Expand", g, op1(b, "Shape", x)), op2(b, "CastLike", ratio, g));
  } else if (!strcmp(op, "GlobalMaxPool")) {
    const int64_t s3[3] = {0, 0, -1}, ax = 2;
    const char *m = op2(b, "CastLike", op2(b, "Equal", x, y), g);
    const char *cnt = reduce_sum(b, op2(b, "Reshape", m, cst_ints(b, s3, 3)), &ax, 1, true);
    gx[0] = op2(b, "Mul", m, op2(b, "Div", g, op2(b, "Reshape", cnt, op1(b, "Shape", y))));
  } else if (!strcmp(op, "BatchNormalization")) {
    return batchnorm_rule(b, n, opset, g, need, gx);
  } else if (!strcmp(op, "LayerNormalization")) {
    return layernorm_rule(b, n, g, need, gx);
  } else if (!strcmp(op, "InstanceNormalization")) {
    return instnorm_rule(b, n, g, need, gx);
  } else if (!strcmp(op, "Einsum")) {
    return einsum_rule(b, n, g, need, gx);
  } else if (!strcmp(op, "Pad")) {
    return pad_rule(b, n, opset, g, gx);
  } else {
    return 1;
  }
  return b->failed ? b->e->code : OX_OK;
}

/* Writes the gradients of the inputs of n (gx[j] for need[j]) from the
 * gradient g of its first output. */
static int backward(gb *b, const ox_node *n, int64_t opset, const char *const *gy, const bool *need,
                    const char **gx) {
  const char *op = n->op_type, *x = n->n_input > 0 ? n->input[0] : NULL;
  const char *x1 = n->n_input > 1 ? n->input[1] : NULL, *y = n->output[0], *g = gy[0];
  bool n0 = n->n_input > 0 && need[0], n1 = n->n_input > 1 && need[1];
  if (n->domain && !ox_is_default_domain(n->domain)) return no_rule(b, n, NULL);
  if (!strcmp(op, "Split")) {
    /* outputs without a gradient contribute zeros */
    const char **parts = ox_arena_calloc(b->a, n->n_output + 1, sizeof *parts);
    if (!parts) return gb_oom(b), OX_ENOMEM;
    for (size_t j = 0; j < n->n_output; j++) {
      if (!gy[j] && !n->output[j][0]) return no_rule(b, n, "an output without a name");
      parts[j] = gy[j] ? gy[j] : fill_like(b, 0.0, n->output[j]);
    }
    gx[0] = concat(b, ox_node_attr_int(n, "axis", 0), n->n_output, parts);
    return b->failed ? b->e->code : OX_OK;
  }
  if (!g) return no_rule(b, n, "only its first output can be differentiated");
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
    int rc = backward_more(b, n, opset, g, need, gx);
    if (rc == 1) return no_rule(b, n, NULL);
    return rc;
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
      const char **gy = ox_arena_calloc(b->a, n->n_output, sizeof *gy);
      bool *need = ox_arena_calloc(b->a, n->n_input + 1, sizeof *need);
      const char **gx = ox_arena_calloc(b->a, n->n_input + 1, sizeof *gx);
      if (!gy || !need || !gx) {
        rc = ox_err_set(b->e, OX_ENOMEM, "out of memory");
        break;
      }
      bool any = false;
      for (size_t j = 0; j < n->n_output; j++) {
        uintptr_t v = 0;
        if (n->output[j][0] && ox_map_get(&grads, n->output[j], &v)) gy[j] = (const char *)v;
        any |= gy[j] != NULL;
      }
      if (!any) continue;
      any = false;
      for (size_t j = 0; j < n->n_input; j++)
        any |= need[j] = n->input[j][0] && ox_map_get(&dep, n->input[j], NULL);
      if (!any) continue;
      rc = backward(b, n, opsets[i], gy, need, gx);
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
