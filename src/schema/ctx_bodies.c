/* ctx_bodies.c - context-dependent function bodies (notes §4.2).
 *
 * For these operators the body is not one fixed function: it is built per
 * node from the node's attributes, which optional inputs and outputs are
 * present, and the input element types. Each builder writes the body as a
 * function in the text syntax (parsed by src/text), with the operator's own
 * formal inputs and outputs and the attribute values baked in. The content of
 * each body follows the operator's definition in Operators.md; the node
 * sequence matches the reference's expansion as seen in the backend tests'
 * *_expanded models. */
#include "ctx_bodies.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../text/text.h"

/* ------------------------------------------------------------ helpers */

bool ox_ctx_has_in(const bctx *c, size_t k) {
  return k < c->node->n_input && c->node->input[k] && c->node->input[k][0];
}

bool ox_ctx_has_out(const bctx *c, size_t k) {
  return k < c->node->n_output && c->node->output[k] && c->node->output[k][0];
}

int32_t ox_ctx_in_dtype(const bctx *c, size_t k) {
  return k < c->n_inputs && c->dtypes ? c->dtypes[k] : 0;
}

int64_t ox_ctx_int(const bctx *c, const char *name, int64_t dflt) {
  return ox_node_attr_int(c->node, name, dflt);
}

float ox_ctx_float(const bctx *c, const char *name, float dflt) {
  return ox_node_attr_float(c->node, name, dflt);
}

/* header: `<domain: "...", opset_import: [...]> Name (formal inputs) => (formal outputs) {` */
void ox_ctx_header(bctx *c, int64_t body_opset) {
  const ox_schema *s = c->s;
  ox_buf_printf(c->out, "<\n  domain: \"%s\",\n  opset_import: [\"%s\" : %" PRId64 "%s]\n>\n",
                s->domain, s->domain, body_opset,
                /* a preview op's body is made of ai.onnx ops of the opset it was written for */
                s->domain[0] ? ", \"\" : 26" : "");
  ox_buf_printf(c->out, "%s (", s->name);
  for (size_t k = 0; k < s->n_inputs; k++)
    ox_buf_printf(c->out, "%s%s", k ? ", " : "", s->inputs[k].name);
  ox_buf_puts(c->out, ") => (");
  for (size_t k = 0; k < s->n_outputs; k++)
    ox_buf_printf(c->out, "%s%s", k ? ", " : "", s->outputs[k].name);
  ox_buf_puts(c->out, ")\n{\n");
}

void ox_ctx_line(bctx *c, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  ox_buf_puts(c->out, "   ");
  /* the line, formatted in place, plus its newline */
  if (n < 0 || !ox_buf_reserve(c->out, (size_t)n + 2)) {
    c->out->failed = true;
  } else {
    vsnprintf((char *)c->out->data + c->out->size, (size_t)n + 1, fmt, ap2);
    c->out->size += (size_t)n;
    ox_buf_putc(c->out, '\n');
  }
  va_end(ap2);
}

/* a float literal the text parser reads back to the same float */
const char *ox_ctx_f(char *buf, size_t n, float v) {
  snprintf(buf, n, "%.9g", (double)v);
  if (!strpbrk(buf, ".eEn")) {
    size_t l = strlen(buf);
    if (l + 2 < n) memcpy(buf + l, ".0", 3);
  }
  return buf;
}

/* Appends the nodes of graph g (an attribute of the node), its initializers
 * first as Constant nodes, as lines of the body; the caller defines g's
 * inputs before and reads g's outputs after. Non-zero if g cannot be printed. */
int ox_ctx_graph_nodes(bctx *c, const ox_graph *g) {
  ox_arena *a = ox_arena_new();
  ox_graph *tmp = a ? ox_arena_alloc(a, sizeof *tmp) : NULL;
  int rc = tmp ? 0 : -1;
  if (tmp) {
    tmp->name = (char *)"g";
    for (size_t i = 0; i < g->n_initializer && !rc; i++) {
      ox_node *n = ox_graph_add_node(a, tmp, "Constant", "", NULL);
      ox_attr *v = n ? ox_node_add_attr(a, n, "value", OX_ATTR_TENSOR) : NULL;
      if (!v || ox_node_add_output(a, n, g->initializer[i].name)) {
        rc = -1;
        break;
      }
      v->t = &g->initializer[i];
    }
    for (size_t i = 0; i < g->n_node && !rc; i++) {
      ox_node *n = OX_VEC_PUSH(a, tmp->node, tmp->n_node);
      if (!n)
        rc = -1;
      else
        *n = g->node[i];
    }
  }
  ox_buf txt = {0};
  ox_err e = {0};
  if (!rc && ox_text_print_graph(tmp, &txt, &e)) rc = -1;
  ox_buf_putc(&txt, '\0');
  const char *t = txt.failed || rc ? NULL : (const char *)txt.data;
  const char *open = t ? strstr(t, "\n{\n") : NULL, *close = open ? strrchr(t, '}') : NULL;
  if (!open || !close || close < open + 3)
    rc = -1;
  else
    ox_buf_append(c->out, open + 3, (size_t)(close - (open + 3)));
  ox_buf_free(&txt);
  ox_arena_free(a);
  return rc;
}

/* ------------------------------------------------------------ Softmax, LogSoftmax */

static int b_softmax(bctx *c) {
  if (c->opset < 13) return OX_CTX_NONE;
  bool v18 = c->opset >= 18, log = strcmp(c->s->name, "LogSoftmax") == 0;
  int64_t axis = ox_ctx_int(c, "axis", -1);
  ox_ctx_header(c, v18 ? 18 : 13);
  ox_ctx_line(c, "axes = Constant <value = int64[1] {%" PRId64 "}> ()", axis);
  if (v18)
    ox_ctx_line(c, "X_ReduceMax = ReduceMax <keepdims = 1> (input, axes)");
  else
    ox_ctx_line(c, "X_ReduceMax = ReduceMax <keepdims = 1, axes = [%" PRId64 "]> (input)", axis);
  ox_ctx_line(c, "X_Sub = Sub (input, X_ReduceMax)");
  ox_ctx_line(c, "X_Exp = Exp (X_Sub)");
  ox_ctx_line(c, "X_ReduceSum = ReduceSum <keepdims = 1> (X_Exp, axes)");
  if (log) {
    ox_ctx_line(c, "X_Log = Log (X_ReduceSum)");
    ox_ctx_line(c, "output = Sub (X_Sub, X_Log)");
  } else {
    ox_ctx_line(c, "output = Div (X_Exp, X_ReduceSum)");
  }
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ CastLike */

static int b_castlike(bctx *c) {
  int32_t to = ox_ctx_in_dtype(c, 1);
  if (!to) return OX_CTX_NEED_TYPES;
  ox_ctx_header(c, c->s->since_version);
  char attrs[256];
  int n = snprintf(attrs, sizeof attrs, "to = %d", (int)to);
  if (ox_schema_find_attr(c->s, "saturate"))
    n += snprintf(attrs + n, sizeof attrs - (size_t)n, ", saturate = %" PRId64,
                  ox_ctx_int(c, "saturate", 1));
  const char *rm = ox_node_attr_str(c->node, "round_mode", NULL);
  if (rm && ox_schema_find_attr(c->s, "round_mode"))
    snprintf(attrs + n, sizeof attrs - (size_t)n, ", round_mode = \"%s\"", rm);
  ox_ctx_line(c, "output = Cast <%s> (input)", attrs);
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ Clip */

static int b_clip(bctx *c) {
  if (c->opset < 13) return OX_CTX_NONE;
  ox_ctx_header(c, 13);
  bool lo = ox_ctx_has_in(c, 1), hi = ox_ctx_has_in(c, 2);
  const char *cur = "input";
  if (lo) {
    ox_ctx_line(c, "input_less_than_min = Less (input, min)");
    ox_ctx_line(c, "%s = Where (input_less_than_min, min, input)", hi ? "tmp" : "output");
    cur = "tmp";
  }
  if (hi) {
    ox_ctx_line(c, "output_large_than_max = Less (max, %s)", cur);
    ox_ctx_line(c, "output = Where (output_large_than_max, max, %s)", cur);
  }
  if (!lo && !hi) ox_ctx_line(c, "output = Identity (input)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ Range */

static int b_range(bctx *c) {
  if (c->opset < 27) return OX_CTX_NONE;
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  ox_ctx_header(c, 27);
  if (t == OX_FLOAT16 || t == OX_BFLOAT16) {
    /* 16-bit floats: everything in stash_type, the output cast back */
    int64_t st = ox_ctx_int(c, "stash_type", OX_FLOAT);
    ox_ctx_line(c, "start_s = Cast <to = %" PRId64 "> (start)", st);
    ox_ctx_line(c, "limit_s = Cast <to = %" PRId64 "> (limit)", st);
    ox_ctx_line(c, "delta_s = Cast <to = %" PRId64 "> (delta)", st);
    ox_ctx_line(c, "sub_result = Sub (limit_s, start_s)");
    ox_ctx_line(c, "div_result = Div (sub_result, delta_s)");
    ox_ctx_line(c, "ceil_result = Ceil (div_result)");
    ox_ctx_line(c, "ceil_relu = Relu (ceil_result)");
    ox_ctx_line(c, "n = Cast <to = 7> (ceil_relu)");
    ox_ctx_line(c, "loop_cond = Cast <to = 9> (ceil_relu)");
    ox_ctx_line(c,
                "variadic_output, output_s = Loop (n, loop_cond, start_s) <body = loop_body "
                "(int64 i, bool cond_in, prev) => (cond_out, current, range) {");
    ox_ctx_line(c, "   cond_out = Identity (cond_in)");
    ox_ctx_line(c, "   current = Add (prev, delta_s)");
    ox_ctx_line(c, "   range = Identity (prev)");
    ox_ctx_line(c, "}>");
    ox_ctx_line(c, "output = Cast <to = %d> (output_s)", (int)t);
    return OX_CTX_OK;
  }
  /* the trip count is computed in float, or in double for double and int64 */
  int wide = t == OX_DOUBLE || t == OX_INT64 ? OX_DOUBLE : OX_FLOAT;
  ox_ctx_line(c, "sub_result = Sub (limit, start)");
  ox_ctx_line(c, "sub_result_casted = Cast <to = %d> (sub_result)", wide);
  ox_ctx_line(c, "delta_casted = Cast <to = %d> (delta)", wide);
  ox_ctx_line(c, "div_result = Div (sub_result_casted, delta_casted)");
  ox_ctx_line(c, "ceil_result = Ceil (div_result)");
  ox_ctx_line(c, "ceil_result_relu = Relu (ceil_result)");
  ox_ctx_line(c, "ceil_result_relu_int = Cast <to = 7> (ceil_result_relu)");
  ox_ctx_line(c, "ceil_result_relu_bool = Cast <to = 9> (ceil_result_relu)");
  ox_ctx_line(c,
              "variadic_output, output = Loop (ceil_result_relu_int, ceil_result_relu_bool, "
              "start) <body = loop_body_attribute (int64 i, bool cond, prev) => (cond_out, "
              "current, range) {");
  ox_ctx_line(c, "   cond_out = Identity (cond)");
  ox_ctx_line(c, "   current = Add (prev, delta)");
  ox_ctx_line(c, "   range = Identity (prev)");
  ox_ctx_line(c, "}>");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ Gelu */

static int b_gelu(bctx *c) {
  const char *approx = ox_node_attr_str(c->node, "approximate", "none");
  ox_ctx_header(c, 20);
  ox_ctx_line(c, "Half = Constant <value = float {0.5}> ()");
  ox_ctx_line(c, "HalfCast = CastLike (Half, X)");
  ox_ctx_line(c, "One = Constant <value = float {1.0}> ()");
  ox_ctx_line(c, "OneCast = CastLike (One, X)");
  if (strcmp(approx, "tanh") == 0) {
    ox_ctx_line(c, "TwoOverPi = Constant <value = float {0.63661975}> ()");
    ox_ctx_line(c, "TwoOverPiCast = CastLike (TwoOverPi, X)");
    ox_ctx_line(c, "C0 = Constant <value = float {0.044715}> ()");
    ox_ctx_line(c, "C0Cast = CastLike (C0, X)");
    ox_ctx_line(c, "SqrtTwoOverPi = Sqrt (TwoOverPiCast)");
    ox_ctx_line(c, "Three = Constant <value = float {3.0}> ()");
    ox_ctx_line(c, "ThreeCast = CastLike (Three, X)");
    ox_ctx_line(c, "XCubed = Pow (X, ThreeCast)");
    ox_ctx_line(c, "XCubedC0 = Mul (C0Cast, XCubed)");
    ox_ctx_line(c, "XC0XCubed = Sum (X, XCubedC0)");
    ox_ctx_line(c, "TanhInput = Mul (SqrtTwoOverPi, XC0XCubed)");
    ox_ctx_line(c, "ErfApprox = Tanh (TanhInput)");
    ox_ctx_line(c, "PhiApprox = Sum (OneCast, ErfApprox)");
    ox_ctx_line(c, "MultX = Mul (HalfCast, X)");
    ox_ctx_line(c, "Y = Mul (MultX, PhiApprox)");
  } else {
    ox_ctx_line(c, "Two = Constant <value = float {2.0}> ()");
    ox_ctx_line(c, "TwoCast = CastLike (Two, X)");
    ox_ctx_line(c, "SqrtTwo = Sqrt (TwoCast)");
    ox_ctx_line(c, "XSqrt = Div (X, SqrtTwo)");
    ox_ctx_line(c, "ErfXSqrt = Erf (XSqrt)");
    ox_ctx_line(c, "Phi = Sum (OneCast, ErfXSqrt)");
    ox_ctx_line(c, "MultX = Mul (HalfCast, X)");
    ox_ctx_line(c, "Y = Mul (MultX, Phi)");
  }
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ LayerNormalization */

/* StdDev = sqrt(E[x^2] - E[x]^2 + epsilon) and Deviation = x - E[x], given
 * mean = E[x] and MeanOfSquare = E[x^2] */
static void std_dev(bctx *c, const char *x, const char *mean) {
  ox_ctx_line(c, "SquareOfMean = Mul (%s, %s)", mean, mean);
  ox_ctx_line(c, "Var = Sub (MeanOfSquare, SquareOfMean)");
  ox_ctx_line(c, "VarPlusEpsilon = Add (Var, Epsilon)");
  ox_ctx_line(c, "StdDev = Sqrt (VarPlusEpsilon)");
  ox_ctx_line(c, "Deviation = Sub (%s, %s)", x, mean);
}

static int b_layernorm(bctx *c) {
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  bool v18 = c->opset >= 18;
  int64_t axis = ox_ctx_int(c, "axis", -1), stash = ox_ctx_int(c, "stash_type", 1);
  char fb[40];
  ox_ctx_header(c, v18 ? 18 : 17);
  ox_ctx_line(c, "FloatEpsilon = Constant <value = float {%s}> ()",
              ox_ctx_f(fb, sizeof fb, ox_ctx_float(c, "epsilon", 1e-5f)));
  ox_ctx_line(c, "Epsilon = Cast <to = %" PRId64 "> (FloatEpsilon)", stash);
  ox_ctx_line(c, "XShape = Shape (X)");
  ox_ctx_line(c, "Rank = Size (XShape)");
  ox_ctx_line(c, "Zero1D = Constant <value = int64[1] {0}> ()");
  ox_ctx_line(c, "Axis1D = Constant <value = int64[1] {%" PRId64 "}> ()", axis);
  ox_ctx_line(c, "PrefixShape = Slice (XShape, Zero1D, Axis1D)");
  if (axis >= 0)
    ox_ctx_line(c, "NumReducedAxes = Sub (Rank, Axis1D)");
  else
    ox_ctx_line(c, "NumReducedAxes = Neg (Axis1D)");
  ox_ctx_line(c, "SuffixShape = ConstantOfShape <value = int64[1] {1}> (NumReducedAxes)");
  ox_ctx_line(c, "ReducedShape = Concat <axis = 0> (PrefixShape, SuffixShape)");
  ox_ctx_line(c, "X2D = Flatten <axis = %" PRId64 "> (X)", axis);
  ox_ctx_line(c, "XU = Cast <to = %" PRId64 "> (X2D)", stash);
  if (v18) {
    ox_ctx_line(c, "Axes_1 = Constant <value = int64[1] {1}> ()");
    ox_ctx_line(c, "Mean2D = ReduceMean (XU, Axes_1)");
    ox_ctx_line(c, "Square = Mul (XU, XU)");
    ox_ctx_line(c, "MeanOfSquare = ReduceMean (Square, Axes_1)");
  } else {
    ox_ctx_line(c, "Mean2D = ReduceMean <axes = [1]> (XU)");
    ox_ctx_line(c, "Square = Mul (XU, XU)");
    ox_ctx_line(c, "MeanOfSquare = ReduceMean <axes = [1]> (Square)");
  }
  std_dev(c, "XU", "Mean2D");
  ox_ctx_line(c, "Normalized = Div (Deviation, StdDev)");
  ox_ctx_line(c, "NormalizedT = Cast <to = %d> (Normalized)", (int)t);
  ox_ctx_line(c, "Scale2D = Flatten <axis = 0> (Scale)");
  ox_ctx_line(c, "Scaled = Mul (NormalizedT, Scale2D)");
  if (ox_ctx_has_in(c, 2)) {
    ox_ctx_line(c, "B2D = Flatten <axis = 0> (B)");
    ox_ctx_line(c, "Biased = Add (Scaled, B2D)");
    ox_ctx_line(c, "Y = Reshape (Biased, XShape)");
  } else {
    ox_ctx_line(c, "Y = Reshape (Scaled, XShape)");
  }
  if (ox_ctx_has_out(c, 2)) ox_ctx_line(c, "InvStdDev2D = Reciprocal (StdDev)");
  if (ox_ctx_has_out(c, 1)) ox_ctx_line(c, "Mean = Reshape (Mean2D, ReducedShape)");
  if (ox_ctx_has_out(c, 2)) ox_ctx_line(c, "InvStdDev = Reshape (InvStdDev2D, ReducedShape)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ GroupNormalization */

static int b_groupnorm(bctx *c) {
  if (c->opset < 21) return OX_CTX_NONE;
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  int64_t stash = ox_ctx_int(c, "stash_type", 1), groups = ox_ctx_int(c, "num_groups", 1);
  char fb[40];
  ox_ctx_header(c, 21);
  ox_ctx_line(c, "FloatEpsilon = Constant <value = float[1] {%s}> ()",
              ox_ctx_f(fb, sizeof fb, ox_ctx_float(c, "epsilon", 1e-5f)));
  ox_ctx_line(c, "Epsilon = Cast <to = %" PRId64 "> (FloatEpsilon)", stash);
  ox_ctx_line(c, "XU = Cast <to = %" PRId64 "> (X)", stash);
  ox_ctx_line(c, "XShape = Shape (XU)");
  ox_ctx_line(c, "C = Shape <start = 1, end = 2> (X)");
  ox_ctx_line(c, "NumGroups = Constant <value = int64[1] {%" PRId64 "}> ()", groups);
  ox_ctx_line(c, "GroupSize = Div (C, NumGroups)");
  ox_ctx_line(c, "N = Shape <start = 0, end = 1> (X)");
  ox_ctx_line(c, "InstanceShape = Shape <start = 2> (X)");
  ox_ctx_line(c, "NewShape = Concat <axis = 0> (N, NumGroups, GroupSize, InstanceShape)");
  ox_ctx_line(c, "XReshaped = Reshape (XU, NewShape)");
  ox_ctx_line(c, "Shape3D = Constant <value_ints = [0, 0, -1]> ()");
  ox_ctx_line(c, "X3D = Reshape (XReshaped, Shape3D)");
  ox_ctx_line(c, "Axes2 = Constant <value = int64[1] {2}> ()");
  ox_ctx_line(c, "Mean = ReduceMean (X3D, Axes2)");
  ox_ctx_line(c, "Square = Mul (X3D, X3D)");
  ox_ctx_line(c, "MeanOfSquare = ReduceMean (Square, Axes2)");
  std_dev(c, "X3D", "Mean");
  ox_ctx_line(c, "NormalizedU = Div (Deviation, StdDev)");
  ox_ctx_line(c, "NormalizedOriginalShape = Reshape (NormalizedU, XShape)");
  ox_ctx_line(c, "NormalizedNC = Reshape (NormalizedOriginalShape, Shape3D)");
  ox_ctx_line(c, "NormalizedT = Cast <to = %d> (NormalizedNC)", (int)t);
  ox_ctx_line(c, "ScaleShape = Constant <value_ints = [1, -1, 1]> ()");
  ox_ctx_line(c, "ScaleT = Cast <to = %d> (scale)", (int)t);
  ox_ctx_line(c, "BiasT = Cast <to = %d> (bias)", (int)t);
  ox_ctx_line(c, "ScaleReshaped = Reshape (ScaleT, ScaleShape)");
  ox_ctx_line(c, "BiasReshaped = Reshape (BiasT, ScaleShape)");
  ox_ctx_line(c, "Scaled = Mul (ScaleReshaped, NormalizedT)");
  ox_ctx_line(c, "Biased = Add (Scaled, BiasReshaped)");
  ox_ctx_line(c, "Y = Reshape (Biased, XShape)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ RMSNormalization */

static int b_rmsnorm(bctx *c) {
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  int64_t axis = ox_ctx_int(c, "axis", -1), stash = ox_ctx_int(c, "stash_type", 1);
  char fb[40];
  ox_ctx_header(c, 23);
  ox_ctx_line(c, "FloatEpsilon = Constant <value = float {%s}> ()",
              ox_ctx_f(fb, sizeof fb, ox_ctx_float(c, "epsilon", 1e-5f)));
  ox_ctx_line(c, "Epsilon = Cast <to = %" PRId64 "> (FloatEpsilon)", stash);
  ox_ctx_line(c, "XShape = Shape (X)");
  ox_ctx_line(c, "Rank = Size (XShape)");
  if (axis < 0) {
    ox_ctx_line(c, "Axis = Constant <value = int64 {%" PRId64 "}> ()", axis);
    ox_ctx_line(c, "PosAxis = Add (Rank, Axis)");
  } else {
    ox_ctx_line(c, "PosAxis = Constant <value = int64 {%" PRId64 "}> ()", axis);
  }
  ox_ctx_line(c, "One = Constant <value = int64 {1}> ()");
  ox_ctx_line(c, "ReduceAxes = Range (PosAxis, Rank, One)");
  ox_ctx_line(c, "XU = Cast <to = %" PRId64 "> (X)", stash);
  ox_ctx_line(c, "XSquared = Mul (XU, XU)");
  ox_ctx_line(c, "XSquaredMean = ReduceMean (XSquared, ReduceAxes)");
  ox_ctx_line(c, "MeanSquareEpsilon = Add (XSquaredMean, Epsilon)");
  ox_ctx_line(c, "RMS = Sqrt (MeanSquareEpsilon)");
  ox_ctx_line(c, "Normalized = Div (XU, RMS)");
  ox_ctx_line(c, "NormalizedT = Cast <to = %d> (Normalized)", (int)t);
  ox_ctx_line(c, "Y = Mul (NormalizedT, scale)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ table */

/* min_since: the first schema version with a body (earlier versions have none) */
typedef struct builder {
  const char *domain, *name;
  int min_since;
  int (*fn)(bctx *c);
} builder;

static const builder builders[] = {
    {"", "Attention", 23, ox_ctx_attention},
    {"", "Bernoulli", 15, ox_ctx_bernoulli},
    {"", "CastLike", 15, b_castlike},
    {"", "CausalConvWithState", 27, ox_ctx_causalconv},
    {"", "CenterCropPad", 18, ox_ctx_centercroppad},
    {"", "Clip", 13, b_clip},
    {"", "Gelu", 20, b_gelu},
    {"", "GroupNormalization", 21, b_groupnorm},
    {"", "LayerNormalization", 17, b_layernorm},
    {"", "LinearAttention", 27, ox_ctx_linearattention},
    {"", "LogSoftmax", 13, b_softmax},
    {"", "NegativeLogLikelihoodLoss", 13, ox_ctx_nllloss},
    {"", "RMSNormalization", 23, b_rmsnorm},
    {"", "Range", 27, b_range},
    {"", "RotaryEmbedding", 23, ox_ctx_rotary},
    {"", "SequenceMap", 17, ox_ctx_sequencemap},
    {"", "Softmax", 13, b_softmax},
    {"", "SoftmaxCrossEntropyLoss", 13, ox_ctx_sceloss},
    {"ai.onnx.preview", "FlexAttention", 1, ox_ctx_flexattention},
};

static const builder *find_builder(const ox_schema *s) {
  if (!s) return NULL;
  const char *d = s->domain && strcmp(s->domain, "ai.onnx") ? s->domain : "";
  for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
    if (strcmp(builders[i].domain, d) == 0 && strcmp(builders[i].name, s->name) == 0)
      return s->since_version >= builders[i].min_since ? &builders[i] : NULL;
  return NULL;
}

bool ox_schema_has_ctx_body(const ox_schema *s) { return find_builder(s) != NULL; }

int ox_schema_build_body(const ox_schema *s, int64_t opset, const ox_node *node,
                         const int32_t *input_dtypes, size_t n_inputs, ox_buf *text_out,
                         ox_err *e) {
  return ox_schema_build_body_typed(s, opset, node, input_dtypes, NULL, n_inputs, text_out, e);
}

int ox_schema_build_body_typed(const ox_schema *s, int64_t opset, const ox_node *node,
                               const int32_t *input_dtypes, const ox_type *const *input_types,
                               size_t n_inputs, ox_buf *text_out, ox_err *e) {
  const builder *b = find_builder(s);
  if (!b)
    return ox_err_set(e, OX_EINVAL, "%s has no context-dependent function body",
                      s ? s->name : "(null)");
  if (!b->fn)
    return ox_err_set(e, OX_EUNSUPPORTED,
                      "the context-dependent function body of %s is not implemented", s->name);
  ox_node empty = {0};
  bctx c = {s, opset, node ? node : &empty, input_dtypes, input_types, n_inputs, text_out};
  size_t start = text_out->size;
  int rc = b->fn(&c);
  if (rc == OX_CTX_OK) ox_buf_puts(text_out, "}\n");
  if (rc != OX_CTX_OK) text_out->size = start;
  if (rc == OX_CTX_NONE)
    return ox_err_set(e, OX_EINVAL, "%s has no function body at opset %" PRId64, s->name, opset);
  if (rc == OX_CTX_NEED_TYPES)
    return ox_err_set(e, OX_EINVAL,
                      "the function body of %s depends on input types that are not known", s->name);
  if (rc == OX_CTX_BAD_NODE)
    return ox_err_set(e, OX_EMODEL,
                      "%s: the node cannot be expanded (a required attribute is "
                      "missing or malformed)",
                      s->name);
  if (text_out->failed) return ox_err_set(e, OX_ENOMEM, "out of memory building %s", s->name);
  return OX_OK;
}
