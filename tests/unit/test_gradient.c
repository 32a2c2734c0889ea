/* test_gradient.c - the Gradient operator's derivative rules checked
 * numerically.
 *
 * Each case is a small forward graph in ONNX text computing t from inputs
 * filled with seeded pseudo-random values; the loss is y = sum(t * t), so the
 * gradient flowing into the rule under test varies from element to element.
 * The Gradient node's outputs for every input are compared with central
 * finite differences of y, computed by running the forward graph alone
 * (operators conformance-tested elsewhere) in double precision. Operators
 * whose kernels compute in float32 (Conv, ConvTranspose, the pools' Conv
 * formulation, BatchNormalization, LayerNormalization) get a wider step (0.1
 * for the linear ones, where the quadratic loss makes central differences
 * exact) and a wider tolerance. The error of one element is
 * |grad - fd| / max(|fd|, 0.01 m), m the largest |fd| of that input. Every
 * rule of gradient.c is covered, several attribute settings each, plus a
 * small CNN; a last table checks that configurations without a rule fail
 * with a message naming the operator and the reason. */
#include <math.h>
#include <onnxc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/ops/registry.h"
#include "../../src/runtime/session.h"
#include "../../src/text/text.h"

typedef struct gcase {
  const char *label;
  int opset;          /* 0: 18 */
  const char *inputs; /* "double[2,3] a|double[3] b@0.5:2" ('@lo:hi': value range) */
  const char *body;   /* nodes computing t from the inputs */
  double eps, tol;    /* 0: 1e-6 and 1e-6 */
} gcase;

static int failures, checked_cases, checked_values;
/* worst error of the cases in double precision (default step) and of those
 * whose kernels compute in float32 (wider step and tolerance) */
static double worst[2];
static const char *worst_label[2] = {"", ""};

#define MAXIN 8

typedef struct input {
  char decl[128], name[32];
  double lo, hi;
} input;

static size_t split_inputs(const char *spec, input *in) {
  size_t n = 0;
  const char *p = spec;
  while (*p && n < MAXIN) {
    const char *e = strchr(p, '|');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    input *x = &in[n++];
    snprintf(x->decl, sizeof x->decl, "%.*s", (int)len, p);
    x->lo = -1;
    x->hi = 1;
    char *at = strchr(x->decl, '@');
    if (at) {
      *at = 0;
      sscanf(at + 1, "%lf:%lf", &x->lo, &x->hi);
    }
    const char *sp = strrchr(x->decl, ' ');
    snprintf(x->name, sizeof x->name, "%s", sp ? sp + 1 : x->decl);
    p = e ? e + 1 : p + len;
  }
  return n;
}

static ox_model *parse(const char *text, const char *label) {
  ox_model *m = ox_model_new();
  ox_err e = {0};
  if (!m) abort();
  if (ox_text_parse_model(text, strlen(text), label, m->arena, &m->proto, &e)) {
    fprintf(stderr, "%s: parse: %s\n", label, e.msg);
    failures++;
    ox_model_free(m);
    return NULL;
  }
  return m;
}

/* The model text: forward only, or with the Gradient node. */
static char *model_text(const gcase *c, const input *in, size_t n, bool grad) {
  size_t cap = 8192 + strlen(c->body);
  char *s = malloc(cap);
  if (!s) abort();
  const char *et = strstr(in[0].decl, "float") == in[0].decl ? "float" : "double";
  size_t k = (size_t)snprintf(s, cap,
                              "<ir_version: 8, opset_import: [\"\" : %d, "
                              "\"ai.onnx.preview.training\" : 1]>\ng (",
                              c->opset ? c->opset : 18);
  for (size_t i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k, "%s%s", i ? ", " : "", in[i].decl);
  k += (size_t)snprintf(s + k, cap - k, ") => (%s y", et);
  for (size_t i = 0; grad && i < n; i++) {
    size_t tl = strlen(in[i].decl) - strlen(in[i].name);
    k += (size_t)snprintf(s + k, cap - k, ", %.*sd_%s", (int)tl, in[i].decl, in[i].name);
  }
  k += (size_t)snprintf(s + k, cap - k,
                        ") {\n%s\n  sq = Mul(t, t)\n  y = ReduceSum<keepdims = 0>(sq)\n", c->body);
  if (grad) {
    for (size_t i = 0; i < n; i++)
      k += (size_t)snprintf(s + k, cap - k, "%sd_%s", i ? ", " : "  ", in[i].name);
    k += (size_t)snprintf(s + k, cap - k, " = ai.onnx.preview.training.Gradient<xs = [");
    for (size_t i = 0; i < n; i++)
      k += (size_t)snprintf(s + k, cap - k, "%s\"%s\"", i ? ", " : "", in[i].name);
    k += (size_t)snprintf(s + k, cap - k, "], y = \"y\">(");
    for (size_t i = 0; i < n; i++)
      k += (size_t)snprintf(s + k, cap - k, "%s%s", i ? ", " : "", in[i].name);
    k += (size_t)snprintf(s + k, cap - k, ")\n");
  }
  snprintf(s + k, cap - k, "}\n");
  return s;
}

static double get(const ox_value *v, int64_t i) {
  return v->dtype == OX_DOUBLE ? ((const double *)v->data)[i] : ((const float *)v->data)[i];
}

static void set(ox_value *v, int64_t i, double x) {
  if (v->dtype == OX_DOUBLE)
    ((double *)v->data)[i] = x;
  else
    ((float *)v->data)[i] = (float)x;
}

static uint64_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

static bool forward(ox_session *s, const input *in, ox_value **vals, size_t n, double *y,
                    const char *label) {
  const char *names[MAXIN], *yn = "y";
  for (size_t i = 0; i < n; i++) names[i] = in[i].name;
  ox_value *out = NULL;
  ox_err e = {0};
  if (ox_session_run(s, names, vals, n, &yn, &out, 1, &e)) {
    fprintf(stderr, "%s: forward: %s\n", label, e.msg);
    failures++;
    return false;
  }
  *y = get(out, 0);
  ox_value_unref(out);
  return true;
}

static void check_case(const gcase *c) {
  input in[MAXIN];
  size_t n = split_inputs(c->inputs, in);
  char *ft = model_text(c, in, n, false), *gt = model_text(c, in, n, true);
  ox_model *fm = parse(ft, c->label), *gm = parse(gt, c->label);
  ox_session *fs = NULL, *gs = NULL;
  ox_value *vals[MAXIN] = {0}, *grads[MAXIN] = {0};
  ox_err e = {0};
  ox_session_opts o = {.threads = 1, .kernels = &ox_registry_builtin};
  if (!fm || !gm) goto done;
  if (ox_session_create(fm, &o, &fs, &e) || ox_session_create(gm, &o, &gs, &e)) {
    fprintf(stderr, "%s: session: %s\n", c->label, e.msg);
    failures++;
    goto done;
  }
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  for (const char *p = c->label; *p; p++) seed = (seed ^ (uint8_t)*p) * 0x100000001b3ULL;
  const ox_graph *g = fm->proto->graph;
  for (size_t i = 0; i < n; i++) {
    const ox_type *ty = g->input[i].type;
    int64_t dims[8];
    size_t r = ty->shape ? ty->shape->n_dim : 0;
    for (size_t k = 0; k < r && k < 8; k++) dims[k] = ty->shape->dim[k].value;
    vals[i] = ox_tensor_new(ty->elem_type, dims, r, &e);
    if (!vals[i]) abort();
    for (int64_t k = 0; k < vals[i]->numel; k++)
      set(vals[i], k,
          in[i].lo + (in[i].hi - in[i].lo) * (double)rng_next(&seed) / 9007199254740992.0);
  }
  const char *in_names[MAXIN], *out_names[MAXIN];
  char dn[MAXIN][40];
  for (size_t i = 0; i < n; i++) {
    in_names[i] = in[i].name;
    snprintf(dn[i], sizeof dn[i], "d_%s", in[i].name);
    out_names[i] = dn[i];
  }
  if (ox_session_run(gs, in_names, vals, n, out_names, grads, n, &e)) {
    fprintf(stderr, "%s: gradient: %s\n", c->label, e.msg);
    failures++;
    goto done;
  }
  double eps = c->eps != 0 ? c->eps : 1e-6, tol = c->tol != 0 ? c->tol : 1e-6;
  for (size_t i = 0; i < n; i++) {
    ox_value *v = vals[i];
    if (grads[i]->numel != v->numel) {
      fprintf(stderr, "%s: d_%s has %lld elements, want %lld\n", c->label, in[i].name,
              (long long)grads[i]->numel, (long long)v->numel);
      failures++;
      continue;
    }
    double *fd = calloc((size_t)v->numel + 1, sizeof *fd), m = 0;
    if (!fd) abort();
    for (int64_t k = 0; k < v->numel; k++) {
      double x0 = get(v, k), yp, ym;
      set(v, k, x0 + eps);
      bool ok = forward(fs, in, vals, n, &yp, c->label);
      set(v, k, x0 - eps);
      ok = ok && forward(fs, in, vals, n, &ym, c->label);
      set(v, k, x0);
      if (!ok) {
        free(fd);
        goto done;
      }
      fd[k] = (yp - ym) / (2 * eps);
      if (fabs(fd[k]) > m) m = fabs(fd[k]);
    }
    double scale = m > 0 ? 0.01 * m : 1;
    for (int64_t k = 0; k < v->numel; k++) {
      double got = get(grads[i], k);
      double err = fabs(got - fd[k]) / fmax(fabs(fd[k]), scale);
      if (!(err <= tol)) {
        fprintf(stderr, "%s: d_%s[%lld] = %.9g, finite difference %.9g (error %.3g)\n", c->label,
                in[i].name, (long long)k, got, fd[k], err);
        failures++;
        break;
      }
      int cls = c->eps != 0;
      if (err > worst[cls]) worst[cls] = err, worst_label[cls] = c->label;
      checked_values++;
    }
    free(fd);
  }
  checked_cases++;
done:
  for (size_t i = 0; i < n; i++) ox_value_unref(vals[i]), ox_value_unref(grads[i]);
  ox_session_free(fs);
  ox_session_free(gs);
  if (fm) ox_model_free(fm);
  if (gm) ox_model_free(gm);
  free(ft);
  free(gt);
}

#define I64(name, ...) "  " name " = Constant<value = int64" __VA_ARGS__ ">()\n"

static const gcase cases[] = {
    /* ---- the first rules, checked the same way */
    {"Sub, Div with broadcasting", 0, "double[2,3] a|double[3] b@0.5:2",
     "  s = Sub(a, b)\n  t = Div(s, b)", 0, 0},
    {"Sqrt, Log, Exp, Reciprocal, Abs, Neg", 0, "double[2,3] x@0.5:2",
     "  a = Sqrt(x)\n  l = Log(x)\n  e = Exp(x)\n  r = Reciprocal(x)\n  n = Neg(x)\n"
     "  b = Abs(n)\n  t = Sum(a, l, e, r, b)",
     0, 0},
    {"Relu, LeakyRelu, Sigmoid, Tanh, Pow", 0, "double[2,4] x",
     "  r = Relu(x)\n  l = LeakyRelu<alpha = 0.2>(x)\n  s = Sigmoid(x)\n  h = Tanh(x)\n"
     "  p3 = Constant<value = double {3.0}>()\n  c = Pow(x, p3)\n  t = Sum(r, l, s, h, c)",
     0, 0},
    {"Softmax axis 0, LogSoftmax axis 1", 0, "double[3,4] x",
     "  s = Softmax<axis = 0>(x)\n  l = LogSoftmax<axis = 1>(x)\n  t = Add(s, l)", 0, 0},
    {"ReduceMean axes [1] keepdims 0, ReduceSum keepdims 1", 0, "double[2,3,2] x",
     I64("a", "[1] {1}") "  m = ReduceMean<keepdims = 0>(x, a)\n  s = ReduceSum(x, a)\n"
                         "  q = Squeeze(s, a)\n  t = Mul(m, q)",
     0, 0},
    {"MatMul with batch broadcast", 0, "double[2,2,3] a|double[3,4] b", "  t = MatMul(a, b)", 0, 0},
    {"Gemm transA, alpha, beta, row bias", 0, "double[3,2] a|double[3,4] b|double[4] c",
     "  t = Gemm<transA = 1, alpha = 0.5, beta = 2.0>(a, b, c)", 0, 0},
    {"Where, Expand, Transpose, Unsqueeze, Reshape", 0, "double[2,3] x|double[1,3] e",
     I64("sh", "[2] {2, 3}") "  z = Constant<value = double {0.0}>()\n  c = Greater(x, z)\n"
                             "  ex = Expand(e, sh)\n  w = Where(c, x, ex)\n  tr = Transpose<perm = "
                             "[1, 0]>(w)\n" I64("ax", "[1] {0}") "  u = Unsqueeze(tr, ax)\n" I64(
                                 "rs", "[2] {2, 3}") "  t = Reshape(u, rs)",
     0, 0},
    /* ---- moving elements */
    {"Concat axis 1", 0, "double[2,3] a|double[2,2] b", "  t = Concat<axis = 1>(a, b)", 0, 0},
    {"Concat axis -1, three inputs with one repeated", 0, "double[2,1,3] a|double[2,1,2] b",
     "  t = Concat<axis = -1>(a, b, a)", 0, 0},
    {"Split with sizes, middle output unused", 0, "double[2,6] x",
     I64("sp", "[3] {1, 2, 3}") "  p, q, r = Split<axis = 1>(x, sp)\n  t = Mul(p, r)", 0, 0},
    {"Split num_outputs (opset 18), all used", 0, "double[4,3] x",
     "  p, q = Split<axis = 0, num_outputs = 2>(x)\n  t = Mul(p, q)", 0, 0},
    {"Split attribute sizes (opset 11)", 11, "double[5,2] x",
     "  p, q = Split<axis = 0, split = [2, 3]>(x)\n  t = Concat<axis = 0>(q, p)", 0, 0},
    {"Slice constant starts/ends/axes/steps", 0, "double[5,6] x",
     I64("s", "[2] {1, 0}") I64("e", "[2] {5, 6}") I64("a", "[2] {0, 1}")
         I64("k", "[2] {2, 2}") "  t = Slice(x, s, e, a, k)",
     0, 0},
    {"Slice negative step", 0, "double[7,2] x",
     I64("s", "[1] {-1}") I64("e", "[1] {-100}") I64("a", "[1] {0}")
         I64("k", "[1] {-3}") "  t = Slice(x, s, e, a, k)",
     0, 0},
    {"Slice runtime ends from Shape", 0, "double[3,5] x",
     "  sh = Shape(x)\n" I64("one", "[1] {1}") "  e = Sub(sh, one)\n" I64(
         "s", "[2] {0, 1}") "  t = Slice(x, s, e)",
     0, 0},
    {"Slice attributes (opset 9)", 9, "double[4,4] x",
     "  t = Slice<starts = [1, -3], ends = [3, 100], axes = [0, 1]>(x)", 0, 0},
    {"Gather axis 0, repeated and negative indices", 0, "double[4,3] x",
     I64("i", "[5] {0, 2, 2, -1, 1}") "  t = Gather<axis = 0>(x, i)", 0, 0},
    {"Gather axis 1, 2-D indices", 0, "double[2,4] x",
     I64("i", "[2,2] {0, 3, 1, 1}") "  t = Gather<axis = 1>(x, i)", 0, 0},
    {"GatherElements axis 1", 0, "double[3,3] x",
     I64("i", "[3,2] {0, 0, 2, 1, 1, 1}") "  t = GatherElements<axis = 1>(x, i)", 0, 0},
    {"GatherND", 0, "double[2,3,2] x", I64("i", "[2,2] {0, 1, 1, 2}") "  t = GatherND(x, i)", 0, 0},
    {"Tile", 0, "double[2,3] x", I64("r", "[2] {2, 3}") "  t = Tile(x, r)", 0, 0},
    {"DepthToSpace CRD", 0, "double[1,8,2,3] x",
     "  t = DepthToSpace<blocksize = 2, mode = \"CRD\">(x)", 0, 0},
    {"SpaceToDepth", 0, "double[1,2,4,2] x", "  t = SpaceToDepth<blocksize = 2>(x)", 0, 0},
    {"Pad constant, pads input with negative (crop) entries", 0, "double[3,4] x",
     I64("p", "[4] {1, -1, 2, 0}") "  v = Constant<value = double {0.5}>()\n  t = Pad(x, p, v)", 0,
     0},
    {"Pad constant with axes (opset 18)", 0, "double[2,3,2] x",
     I64("p", "[4] {1, 0, 2, 1}") I64("a", "[2] {2, 0}") "  t = Pad(x, p, \"\", a)", 0, 0},
    {"Pad reflect", 0, "double[3,4] x",
     I64("p", "[4] {2, 1, 1, 3}") "  t = Pad<mode = \"reflect\">(x, p)", 0, 0},
    {"Pad edge attributes (opset 2)", 2, "double[3,2] x",
     "  t = Pad<mode = \"edge\", pads = [0, 2, 3, 1]>(x)", 0, 0},
    {"Einsum matrix product", 0, "double[2,3] a|double[3,4] b",
     "  t = Einsum<equation = \"ij,jk->ik\">(a, b)", 0, 0},
    {"Einsum batched, transposed output, ellipsis broadcast", 0, "double[2,3,4] a|double[1,4,5] b",
     "  t = Einsum<equation = \"...ij, ...jk -> ...ki\">(a, b)", 0, 0},
    {"Einsum three operands with an outer product", 0, "double[2,3] a|double[3] b|double[4] c",
     "  t = Einsum<equation = \"ij,j,k->ik\">(a, b, c)", 0, 0},
    /* ---- elementwise */
    {"Max of three, broadcast", 0, "double[2,3] a|double[3] b|double[2,1] c", "  t = Max(a, b, c)",
     0, 0},
    {"Min of two", 0, "double[2,3] a|double[2,3] b", "  t = Min(a, b)", 0, 0},
    {"Clip with min input and max constant", 0, "double[3,4] x@-2:2|double lo",
     "  hi = Constant<value = double {1.5}>()\n  t = Clip(x, lo, hi)", 0, 0},
    {"Clip max only", 0, "double[3,4] x@-2:2|double hi", "  t = Clip(x, \"\", hi)", 0, 0},
    {"Clip attributes (opset 6)", 6, "double[3,4] x@-2:2", "  t = Clip<min = -0.5, max = 0.8>(x)",
     0, 0},
    {"Erf", 0, "double[2,5] x@-2:2", "  t = Erf(x)", 0, 0},
    {"Gelu (opset 20)", 20, "double[2,5] x@-3:3", "  t = Gelu(x)", 0, 0},
    {"Gelu tanh (opset 20)", 20, "double[2,5] x@-3:3", "  t = Gelu<approximate = \"tanh\">(x)", 0,
     0},
    {"Softplus", 0, "double[2,5] x@-3:3", "  t = Softplus(x)", 0, 0},
    {"Elu alpha 0.7", 0, "double[2,5] x@-2:2", "  t = Elu<alpha = 0.7>(x)", 0, 0},
    {"Selu", 0, "double[2,5] x@-2:2", "  t = Selu(x)", 0, 0},
    {"Celu alpha 1.3 (float)", 0, "float[2,5] x@-2:2", "  t = Celu<alpha = 1.3>(x)", 1e-2, 2e-3},
    {"HardSigmoid alpha 0.3 beta 0.4", 0, "double[2,6] x@-4:4",
     "  t = HardSigmoid<alpha = 0.3, beta = 0.4>(x)", 0, 0},
    {"HardSwish", 0, "double[2,6] x@-5:5", "  t = HardSwish(x)", 0, 0},
    {"Mish", 0, "double[2,5] x@-3:3", "  t = Mish(x)", 0, 0},
    {"Sin and Cos", 0, "double[2,5] x@-3:3", "  s = Sin(x)\n  c = Cos(x)\n  t = Add(s, c)", 0, 0},
    {"PRelu, slope broadcast", 0, "double[2,3] x|double[3] s", "  t = PRelu(x, s)", 0, 0},
    {"Dropout in inference mode", 0, "double[2,3] x",
     "  r = Constant<value = float {0.3}>()\n  t = Dropout(x, r)", 0, 0},
    /* ---- reductions */
    {"ReduceMax axes input, keepdims 0", 0, "double[3,4] x",
     I64("a", "[1] {1}") "  t = ReduceMax<keepdims = 0>(x, a)", 0, 0},
    {"ReduceMax all axes", 0, "double[2,3,2] x",
     "  r = ReduceMax<keepdims = 0>(x)\n  t = Mul(r, x)", 0, 0},
    {"ReduceMin axes attribute (opset 13)", 13, "double[3,4] x",
     "  t = ReduceMin<axes = [0], keepdims = 1>(x)", 0, 0},
    {"ReduceL2 axes [0, 2]", 0, "double[2,3,2] x",
     I64("a", "[2] {0, 2}") "  t = ReduceL2<keepdims = 0>(x, a)", 0, 0},
    {"ReduceL1", 0, "double[3,4] x", I64("a", "[1] {-1}") "  t = ReduceL1(x, a)", 0, 0},
    {"ReduceSumSquare", 0, "double[3,4] x", I64("a", "[1] {0}") "  t = ReduceSumSquare(x, a)", 0,
     0},
    {"ReduceLogSumExp axis 0", 0, "double[3,4] x@-2:2",
     I64("a", "[1] {0}") "  t = ReduceLogSumExp<keepdims = 0>(x, a)", 0, 0},
    {"ReduceLogSum", 0, "double[3,4] x@0.5:2", I64("a", "[1] {1}") "  t = ReduceLogSum(x, a)", 0,
     0},
    /* ---- convolution and pooling (Conv computes in float32: wider step) */
    {"Conv 2-D default", 0, "double[2,2,5,5] x|double[3,2,3,3] w|double[3] b",
     "  t = Conv(x, w, b)", 1e-1, 1e-3},
    {"Conv stride 2, pads 1", 0, "double[1,2,6,5] x|double[2,2,3,3] w",
     "  t = Conv<strides = [2, 2], pads = [1, 1, 1, 1]>(x, w)", 1e-1, 1e-3},
    {"Conv dilation 2, asymmetric pads", 0, "double[1,1,7,6] x|double[2,1,2,3] w",
     "  t = Conv<dilations = [2, 2], pads = [0, 1, 2, 0]>(x, w)", 1e-1, 1e-3},
    {"Conv group 2, strides [2, 1], bias", 0, "double[2,4,6,5] x|double[4,2,3,3] w|double[4] b",
     "  t = Conv<group = 2, strides = [2, 1], pads = [1, 0, 0, 2], kernel_shape = [3, 3]>(x, w, b)",
     1e-1, 1e-3},
    {"Conv depthwise (group 3), stride 2, dilation 2", 0, "double[1,3,7,7] x|double[3,1,2,2] w",
     "  t = Conv<group = 3, strides = [2, 2], dilations = [2, 2], pads = [1, 1, 1, 1]>(x, w)", 1e-1,
     1e-3},
    {"Conv 1-D stride 2 dilation 2 pads [1, 2]", 0, "double[2,3,9] x|double[2,3,3] w|double[2] b",
     "  t = Conv<strides = [2], dilations = [2], pads = [1, 2]>(x, w, b)", 1e-1, 1e-3},
    {"Conv auto_pad VALID, stride 3 (rows left over)", 0, "double[1,2,8,7] x|double[2,2,2,2] w",
     "  t = Conv<auto_pad = \"VALID\", strides = [3, 3]>(x, w)", 1e-1, 1e-3},
    {"Conv 3-D", 0, "double[1,2,4,4,3] x|double[2,2,2,2,2] w",
     "  t = Conv<pads = [1, 0, 1, 0, 1, 0]>(x, w)", 1e-1, 1e-3},
    {"Conv SAME_UPPER stride 2 (odd total padding)", 0, "double[1,2,6,5] x|double[2,2,2,3] w",
     "  t = Conv<auto_pad = \"SAME_UPPER\", strides = [2, 2]>(x, w)", 1e-1, 1e-3},
    {"Conv SAME_LOWER dilation 2, group 2", 0, "double[1,2,5,5] x|double[2,1,2,2] w",
     "  t = Conv<auto_pad = \"SAME_LOWER\", dilations = [2, 2], group = 2>(x, w)", 1e-1, 1e-3},
    {"AveragePool SAME_UPPER stride 2, count_include_pad 0", 0, "double[1,2,5,4] x",
     "  t = AveragePool<auto_pad = \"SAME_UPPER\", kernel_shape = [2, 3], strides = [2, 2]>(x)",
     1e-1, 1e-3},
    {"MaxPool SAME_LOWER", 0, "double[1,2,5,4] x",
     "  t = MaxPool<auto_pad = \"SAME_LOWER\", kernel_shape = [2, 2]>(x)", 0, 0},
    {"ConvTranspose default, bias", 0, "double[2,2,3,3] x|double[2,3,2,2] w|double[3] b",
     "  t = ConvTranspose(x, w, b)", 1e-1, 1e-3},
    {"ConvTranspose stride 2, pads, output_padding", 0, "double[1,2,3,4] x|double[2,1,3,3] w",
     "  t = ConvTranspose<strides = [2, 2], pads = [1, 0, 0, 1], output_padding = [1, 1]>(x, w)",
     1e-1, 1e-3},
    {"ConvTranspose group 2, dilation 2, stride [1, 2]", 0, "double[1,4,3,3] x|double[4,1,2,2] w",
     "  t = ConvTranspose<group = 2, dilations = [2, 2], strides = [1, 2], pads = [1, 1, 0, 0]>(x, "
     "w)",
     1e-1, 1e-3},
    {"ConvTranspose 1-D, output_padding beyond the end pad", 0, "double[2,2,4] x|double[2,2,3] w",
     "  t = ConvTranspose<strides = [3], pads = [1, 0], output_padding = [2]>(x, w)", 1e-1, 1e-3},
    {"MaxPool 2x2 stride 2", 0, "double[2,2,4,5] x",
     "  t = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)", 0, 0},
    {"MaxPool 3x3 stride 1 pads 1 (overlapping)", 0, "double[1,2,4,4] x",
     "  t = MaxPool<kernel_shape = [3, 3], pads = [1, 1, 1, 1]>(x)", 0, 0},
    {"MaxPool dilation 2 with its Indices output", 0, "double[1,1,6,6] x",
     "  t, i = MaxPool<kernel_shape = [2, 2], dilations = [2, 2], strides = [1, 2]>(x)", 0, 0},
    {"MaxPool 1-D", 0, "double[2,2,7] x", "  t = MaxPool<kernel_shape = [3], strides = [2]>(x)", 0,
     0},
    {"AveragePool 3x3 stride 2 pads 1, count_include_pad 0", 0, "double[1,2,5,6] x",
     "  t = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]>(x)", 1e-1,
     1e-3},
    {"AveragePool pads [0, 1, 1, 0], count_include_pad 1", 0, "double[2,1,5,4] x",
     "  t = AveragePool<kernel_shape = [2, 3], pads = [0, 1, 1, 0], count_include_pad = 1>(x)",
     1e-1, 1e-3},
    {"AveragePool 2x2 stride 2, no padding", 0, "double[1,3,4,5] x",
     "  t = AveragePool<kernel_shape = [2, 2], strides = [2, 2]>(x)", 1e-1, 1e-3},
    {"AveragePool 1-D dilation 2 (opset 19)", 19, "double[2,2,8] x",
     "  t = AveragePool<kernel_shape = [3], dilations = [2], pads = [1, 1]>(x)", 1e-1, 1e-3},
    {"GlobalAveragePool", 0, "double[2,3,3,2] x", "  t = GlobalAveragePool(x)", 0, 0},
    {"GlobalMaxPool", 0, "double[2,3,3,2] x", "  t = GlobalMaxPool(x)", 0, 0},
    /* ---- normalization */
    {"BatchNormalization inference, all inputs", 0,
     "double[2,3,2,2] x|double[3] s|double[3] b|double[3] m|double[3] v@0.5:1.5",
     "  t = BatchNormalization<epsilon = 0.01>(x, s, b, m, v)", 1e-2, 3e-3},
    {"BatchNormalization rank 2 (opset 9)", 9,
     "double[4,3] x|double[3] s|double[3] b|double[3] m|double[3] v@0.5:1.5",
     "  t = BatchNormalization(x, s, b, m, v)", 1e-2, 3e-3},
    {"LayerNormalization axis -1", 17, "double[3,5] x|double[5] s|double[5] b",
     "  t = LayerNormalization(x, s, b)", 1e-2, 3e-3},
    {"LayerNormalization axis 1 of 3, no bias", 17, "double[2,3,4] x|double[3,4] s",
     "  t = LayerNormalization<axis = 1, epsilon = 0.1>(x, s)", 1e-2, 3e-3},
    {"InstanceNormalization", 0, "double[2,3,2,3] x|double[3] s|double[3] b",
     "  t = InstanceNormalization<epsilon = 0.05>(x, s, b)", 1e-2, 3e-3},
    /* ---- a small CNN */
    {"Conv-Relu-MaxPool-Flatten-Gemm-LogSoftmax", 0,
     "double[2,1,6,6] x|double[2,1,3,3] w|double[2] c|double[3,8] f|double[3] fb",
     "  z = Conv<pads = [1, 1, 1, 1]>(x, w, c)\n  r = Relu(z)\n"
     "  p = MaxPool<kernel_shape = [2, 2], strides = [3, 3]>(r)\n  q = Flatten(p)\n"
     "  h = Gemm<transB = 1>(q, f, fb)\n  t = LogSoftmax(h)",
     1e-3, 1e-2},
};

/* Configurations without a rule: session creation fails with a message
 * naming the operator and the reason. */
static const struct {
  const char *inputs, *body, *op, *why;
  int opset;
} unsupported[] = {
    {"double[2,3,2,2] x|double[3] s|double[3] b|double[3] m|double[3] v",
     "  t, rm, rv = BatchNormalization<training_mode = 1>(x, s, b, m, v)", "BatchNormalization",
     "inference mode", 15},
    {"double[2,3] x",
     "  r = Constant<value = float {0.5}>()\n  tm = Constant<value = bool {1}>()\n"
     "  t = Dropout(x, r, tm)",
     "Dropout", "inference mode", 18},
    {"double[1,1,5,5] x",
     "  t = AveragePool<kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1>(x)", "AveragePool",
     "ceil_mode", 18},
    {"double[2,3] a|double[3,4] b", "  t = Einsum<equation = \"ij,jk\">(a, b)", "Einsum",
     "explicit output", 18},
    {"double[2,3] a", "  t = Einsum<equation = \"ij->i\">(a)", "Einsum",
     "only in the differentiated", 18},
    {"double[2,3] x|double[3] s", "  n, t, r = LayerNormalization(x, s)", "LayerNormalization",
     "first output", 18},
    {"double[2,3] x", "  t = Pow(x, x)", "Pow", "exponent", 18},
};

static void check_unsupported(void) {
  for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++) {
    gcase c = {
        unsupported[k].op, unsupported[k].opset, unsupported[k].inputs, unsupported[k].body, 0, 0};
    input in[MAXIN];
    size_t n = split_inputs(c.inputs, in);
    char *text = model_text(&c, in, n, true);
    ox_model *m = parse(text, c.label);
    ox_session *s = NULL;
    ox_err e = {0};
    if (m && (ox_session_create(m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) != OX_EUNSUPPORTED ||
              !strstr(e.msg, unsupported[k].op) || !strstr(e.msg, unsupported[k].why))) {
      fprintf(stderr, "unsupported %s: got '%s'\n", unsupported[k].op, e.msg);
      failures++;
    }
    ox_session_free(s);
    if (m) ox_model_free(m);
    free(text);
  }
}

int main(void) {
  clock_t t0 = clock();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
  check_unsupported();
  printf(
      "test_gradient: %d of %zu cases, %d gradient values checked; worst error %.3g (%s) in "
      "double, %.3g (%s) with float32 kernels; %.2f s\n",
      checked_cases, sizeof cases / sizeof *cases, checked_values, worst[0], worst_label[0],
      worst[1], worst_label[1], (double)(clock() - t0) / CLOCKS_PER_SEC);
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  return 0;
}
