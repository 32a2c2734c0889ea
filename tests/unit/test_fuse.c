/* test_fuse.c - graph fusion at session creation (the passes of src/opt/,
 * src/ops/fused.c). Every model runs with optimization_level 0 (no fusion)
 * and 1 (fusion), with one and two threads, on inputs that include NaN,
 * infinities, signed zeros and the hardswish break points. Elementwise
 * chains must give bit-identical outputs (the same float32 operations in
 * the same order); Conv folding changes rounding and is compared with a
 * tolerance. The profiler's node count shows what was fused. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct result {
  float *y;
  int64_t numel;
  size_t rank;
  int64_t dims[8];
  size_t nodes; /* nodes run, from the profile */
  bool ok;
} result;

/* deterministic input: special values first, then a spread over [-9, 9] */
static void fill(float *x, int64_t n) {
  static const float special[] = {NAN,  -NAN,  INFINITY, -INFINITY, 0.0f, -0.0f, -3.0f, 3.0f,
                                  6.0f, -6.0f, 1e-40f,   -1e-40f,   0.5f, -0.5f, 1e30f, -1e30f};
  uint32_t st = 12345;
  for (int64_t i = 0; i < n; i++) {
    st = st * 1664525u + 1013904223u;
    x[i] = i < 16 ? special[i] : ((float)(st >> 8) / 16777216.0f - 0.5f) * 18.0f;
  }
}

/* finite input for convolutions (a NaN or infinity would spread over the
 * output): multiples of 1/64 in [-8, 8], with exact zeros */
static void fill_finite(float *x, int64_t n) {
  uint32_t st = 777;
  for (int64_t i = 0; i < n; i++) {
    st = st * 1664525u + 1013904223u;
    x[i] = i % 7 == 3 ? 0.0f : (float)((int)((st >> 12) % 1025u) - 512) / 64.0f;
  }
}

static bool finite_input; /* test setting: the input filler of run */

static result run(const char *text, int level, int threads, const int64_t *xd, size_t xr) {
  result r = {0};
  onnxc_error e;
  onnxc_model *m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "test", &m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", e.msg);
    return r;
  }
  onnxc_session_options o = {threads, level, NULL, NULL, 1};
  onnxc_session *s = NULL;
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "session (level %d): %s\n", level, e.msg);
    onnxc_model_free(m);
    return r;
  }
  int64_t n = 1;
  for (size_t d = 0; d < xr; d++) n *= xd[d];
  float *x = malloc((size_t)n * sizeof *x);
  if (finite_input)
    fill_finite(x, n);
  else
    fill(x, n);
  onnxc_value *in = onnxc_tensor_wrap(1, xd, xr, x, &e);
  const char *names[1] = {"X"}, *outs[1] = {"Y"};
  onnxc_value *out = NULL;
  if (onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "run (level %d): %s\n", level, e.msg);
  } else {
    r.rank = onnxc_tensor_rank(out);
    r.numel = 1;
    for (size_t d = 0; d < r.rank && d < 8; d++) {
      r.dims[d] = onnxc_tensor_dims(out)[d];
      r.numel *= r.dims[d];
    }
    r.y = malloc((size_t)r.numel * sizeof *r.y + 1);
    memcpy(r.y, onnxc_tensor_data(out), (size_t)r.numel * sizeof *r.y);
    r.nodes = profiled_nodes(s);
    r.ok = true;
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  free(x);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return r;
}

/* Runs at level 0 and 1 (one and two threads); returns the node counts.
 * tol < 0: bit for bit; else |a - b| <= tol * (1 + |a|). */
static void compare(const char *what, const char *text, const int64_t *xd, size_t xr, double tol,
                    size_t *nodes0, size_t *nodes1) {
  result a = run(text, 0, 1, xd, xr);
  CHECK(a.ok);
  for (int threads = 1; threads <= 2 && a.ok; threads++) {
    result b = run(text, 1, threads, xd, xr);
    CHECK(b.ok);
    if (b.ok) {
      CHECK(a.rank == b.rank && a.numel == b.numel);
      for (size_t d = 0; d < a.rank && d < 8; d++) CHECK(a.dims[d] == b.dims[d]);
      int64_t bad = 0;
      for (int64_t i = 0; i < a.numel && a.numel == b.numel; i++) {
        bool same;
        if (tol < 0)
          same = memcmp(&a.y[i], &b.y[i], sizeof(float)) == 0;
        else
          same = (isnan(a.y[i]) && isnan(b.y[i])) || a.y[i] == b.y[i] ||
                 fabs((double)a.y[i] - b.y[i]) <= tol * (1 + fabs((double)a.y[i]));
        if (!same && bad++ < 3)
          fprintf(stderr, "%s: element %lld: %.9g (unfused) vs %.9g (fused, %d threads)\n", what,
                  (long long)i, a.y[i], b.y[i], threads);
      }
      CHECK(bad == 0);
      if (nodes1) *nodes1 = b.nodes;
    }
    free(b.y);
  }
  if (nodes0) *nodes0 = a.nodes;
  free(a.y);
}

#define HEAD "<ir_version: 8, opset_import: [\"\" : 18]>\n"

/* the PaddleOCR detector's pattern after each Conv */
static const char *hardswish_chain = HEAD
    "G (float[1,4,16,16] X) => (float[1,4,16,16] Y)\n"
    "<float s = {1.25}, float b = {-0.5}, float three = {3}, float zero = {0}, float six = {6},"
    " float w = {0.75}, float w1 = {0.125}>\n"
    "{ A = Mul(s, X)\n B = Add(A, b)\n C = Add(B, three)\n D = Clip(C, zero, six)\n"
    "  E = Mul(B, D)\n F = Div(E, six)\n H = Mul(w, F)\n Y = Add(H, w1) }\n";

/* every op, constants on either side */
static const char *all_ops =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "G (float[2,3,8,8] X) => (float[2,3,8,8] Y)\n"
    "<float two = {2}, float half = {0.5}, float m1 = {-1}, float lo = {-2.5}>\n"
    "{ A = Relu(X)\n B = Sub(two, A)\n C = LeakyRelu <alpha = 0.1> (B)\n"
    "  D = HardSigmoid <alpha = 0.3, beta = 0.4> (X)\n E = Add(C, D)\n"
    "  F = HardSwish(E)\n G1 = Neg(F)\n H = Abs(G1)\n I = Sqrt(H)\n J = Tanh(I)\n"
    "  K = Erf(J)\n L = Div(half, K)\n M = Max(L, m1)\n N = Min(two, M)\n"
    "  O = Clip(N, lo)\n P = Mul(O, X)\n Q = Max(P, X)\n R = Min(X, Q)\n S = Sqrt(X)\n"
    "  T = Add(R, S)\n U = Clip(T)\n Y = Div(U, X) }\n";

/* per-channel constants, [C,1,1] and [1,C,1,1], left and right */
static const char *per_channel = HEAD
    "G (float[2,3,5,7] X) => (float[2,3,5,7] Y)\n"
    "<float[3,1,1] s = {0.5, -2, 3.25}, float[1,3,1,1] b = {1, -1, 0.1},"
    " float[3,1,1] c = {-1, 0, 1}, float three = {3}>\n"
    "{ A = Mul(X, s)\n B = Add(b, A)\n C = Sub(B, c)\n D = Div(s, C)\n E = Max(D, c)\n"
    "  F = Min(b, E)\n H = Sub(c, F)\n Y = Add(H, three) }\n";

/* a graph output in the middle: the group ends there */
static const char *mid_output = HEAD
    "G (float[4,8] X) => (float[4,8] Y, float[4,8] B)\n"
    "<float two = {2}, float one = {1}>\n"
    "{ A = Relu(X)\n B = Mul(A, two)\n C = Add(B, one)\n Y = Neg(C) }\n";

/* an intermediate also read by a node outside the group */
static const char *used_outside = HEAD
    "G (float[4,8] X) => (float[4,8] Y)\n"
    "<float two = {2}, float one = {1}>\n"
    "{ A = Mul(X, two)\n B = Add(A, one)\n C = Exp(A)\n D = Relu(B)\n Y = Add(C, D) }\n";

static const char *single = HEAD
    "G (float[4,8] X) => (float[4,8] Y)\n<float two = {2}>\n{ A = Softmax(X)\n Y = Mul(A, two) }\n";

/* a [1,1,1,1,1] constant raises the rank */
static const char *rank_raise = HEAD
    "G (float[4,8] X) => (float[1,1,1,4,8] Y)\n"
    "<float[1,1,1,1,1] k = {1.5}, float one = {1}>\n"
    "{ A = Mul(X, k)\n B = Add(A, one)\n Y = Relu(B) }\n";

/* the root is broadcast against a per-channel constant */
static const char *root_broadcast = HEAD
    "G (float[1,1,6,6] X) => (float[1,4,6,6] Y)\n"
    "<float[1,4,1,1] k = {1, 2, 3, 4}, float one = {1}>\n"
    "{ A = Mul(X, k)\n B = Add(A, one)\n Y = Relu(B) }\n";

/* reuse inside a group: x * x, and a value read three times */
static const char *reuse = HEAD
    "G (float[3,40] X) => (float[3,40] Y)\n<float one = {1}>\n"
    "{ A = Mul(X, X)\n B = Add(A, one)\n C = Mul(B, A)\n D = Sub(C, B)\n Y = Div(D, B) }\n";

/* Clip-6 (attributes) and a Constant node's value as an operand */
static const char *old_clip =
    "<ir_version: 7, opset_import: [\"\" : 10]>\n"
    "G (float[4,8] X) => (float[4,8] Y)\n"
    "{ k = Constant <value = float {0.25}> ()\n A = Mul(X, k)\n"
    "  B = Clip <min = -1.0, max = 2.0> (A)\n Y = Relu(B) }\n";

static const char *conv_bn = HEAD
    "G (float[1,2,6,6] X) => (float[1,3,6,6] Y)\n"
    "<float[3,2,3,3] W = {0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,-0.8,0.9,1,-1.1,1.2,0.1,0.2,0.3,-0.4,"
    "0.5,0.6,-0.7,0.8,0.9,-1,1.1,1.2,0.3,0.2,-0.1,0.4,0.5,-0.6,0.7,0.8,-0.9,1,1.1,-1.2,"
    "0.2,0.1,0.3,-0.4,0.6,0.5,-0.7,0.9,0.8,1,-1.1,0.3,0.2,0.1,-0.3,0.4,0.6,-0.5},"
    " float[3] Bc = {0.1, -0.2, 0.3}, float[3] sc = {1.5, 0.5, -2}, float[3] bb = {0.2, 0.3, -0.4},"
    " float[3] mu = {0.05, -0.1, 0.2}, float[3] var = {0.9, 1.5, 0.25},"
    " float[3,1,1] s2 = {2, -1, 0.5}, float three = {3}>\n"
    "{ C = Conv <pads = [1, 1, 1, 1]> (X, W, Bc)\n"
    "  D = BatchNormalization <epsilon = 0.001> (C, sc, bb, mu, var)\n"
    "  E = Mul(s2, D)\n F = Add(E, three)\n Y = Relu(F) }\n";

/* Inception v2 as exported: the scale and shift after BatchNormalization
 * are [C] constants raised to [C, 1, 1] by Unsqueeze (axes an attribute
 * before opset 13, an input after) or Reshape: known constants at fusion,
 * so the Mul and Add fold into the Conv as well */
static const char *conv_unsq_old =
    "<ir_version: 7, opset_import: [\"\" : 11]>\n"
    "G (float[1,2,6,6] X) => (float[1,3,6,6] Y)\n"
    "<float[3,2,1,1] W = {0.1,-0.2,0.3,0.4,-0.5,0.6}, float[3] sw = {2, -1, 0.5},"
    " float[3] sb = {0.25, -0.5, 1}>\n"
    "{ C = Conv (X, W)\n u = Unsqueeze <axes = [1, 2]> (sw)\n A = Mul(C, u)\n"
    "  v = Unsqueeze <axes = [-1, -2]> (sb)\n B = Add(A, v)\n Y = Relu(B) }\n";

static const char *conv_unsq_new =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,2,6,6] X) => (float[1,3,6,6] Y)\n"
    "<float[3,2,1,1] W = {0.1,-0.2,0.3,0.4,-0.5,0.6}, float[3] sw = {2, -1, 0.5},"
    " float[3] sb = {0.25, -0.5, 1}, int64[2] ax = {1, 2}, int64[3] shp = {-1, 1, 1}>\n"
    "{ C = Conv (X, W)\n u = Unsqueeze (sw, ax)\n A = Mul(u, C)\n"
    "  v = Reshape (sb, shp)\n B = Add(A, v)\n Y = Relu(B) }\n";

static const char *conv_scalar = HEAD
    "G (float[1,2,5,5] X) => (float[1,1,5,5] Y)\n"
    "<float[1,2,1,1] W = {0.5, -1.5}, float s = {1.25}, float b = {-0.5}, float three = {3},"
    " float zero = {0}, float six = {6}>\n"
    "{ C = Conv (X, W)\n A = Mul(s, C)\n B = Add(A, b)\n H = Add(B, three)\n"
    "  D = Clip(H, zero, six)\n E = Mul(B, D)\n Y = Div(E, six) }\n";

/* ---- Conv epilogues (FusedConv) ---- */

static const char *resnet_block = HEAD
    "G (float[1,3,6,6] X) => (float[1,3,6,6] Y)\n"
    "<float[3,3,3,3] W = {0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,-0.8,0.9,1,-1.1,1.2,0.1,0.2,0.3,-0.4,"
    "0.5,0.6,-0.7,0.8,0.9,-1,1.1,1.2,0.3,0.2,-0.1,0.4,0.5,-0.6,0.7,0.8,-0.9,1,1.1,-1.2,"
    "0.2,0.1,0.3,-0.4,0.6,0.5,-0.7,0.9,0.8,1,-1.1,0.3,0.2,0.1,-0.3,0.4,0.6,-0.5,"
    "0.1,0.2,-0.3,0.4,0.5,0.6,-0.7,0.8,0.9,-0.1,0.2,0.3,-0.4,0.5,0.6,0.7,-0.8,0.9,0.1,0.2,0.3,"
    "-0.4,0.5,0.6,0.7,-0.8,0.9},"
    " float[3] sc = {1.5, 0.5, -2}, float[3] bb = {0.2, 0.3, -0.4},"
    " float[3] mu = {0.05, -0.1, 0.2}, float[3] var = {0.9, 1.5, 0.25}>\n"
    "{ C = Conv <pads = [1, 1, 1, 1]> (X, W)\n"
    "  D = BatchNormalization <epsilon = 0.001> (C, sc, bb, mu, var)\n"
    "  A = Add(D, X)\n Y = Relu(A) }\n";

/* ---- Conv prologues (src/opt/conv_prologue.c) ---- */

/* DenseNet as converted from Caffe: BatchNormalization, a per-channel Mul
 * and Add (raised by Unsqueeze), Relu, then a 1x1 convolution; X is also
 * concatenated (read twice), as the dense blocks do */
static const char *dense_layer =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,6,5,7] X) => (float[1,10,5,7] Y)\n"
    "<float[6] sc = {1.5, 0.5, -2, 1, 0.25, 3}, float[6] bb = {0.2, 0.3, -0.4, 0, 1, -1},"
    " float[6] mu = {0.05, -0.1, 0.2, 0, 1, -2}, float[6] var = {0.9, 1.5, 0.25, 1, 4, 0.5},"
    " float[6,1,1] m = {2, -1, 0.5, 1, 3, -0.25}, float[6] ad = {0.25, -0.5, 1, 0, 2, -3},"
    " int64[2] ax = {1, 2},"
    " float[4,6,1,1] W = {0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,-0.8,0.9,1,-1.1,1.2,"
    "0.1,0.2,0.3,-0.4,0.5,0.6,-0.7,0.8,0.9,-1,1.1,1.2}, float[4] B = {0.5, -0.5, 0.25, 0}>\n"
    "{ n = BatchNormalization <epsilon = 0.001> (X, sc, bb, mu, var)\n"
    "  s = Mul(n, m)\n u = Unsqueeze(ad, ax)\n a = Add(u, s)\n r = Relu(a)\n"
    "  c = Conv (r, W, B)\n Y = Concat <axis = 1> (X, c) }\n";

/* torchvision's order: BatchNormalization, Relu, 1x1 Conv (then its own
 * BatchNormalization and Relu: a prologue and an epilogue) */
static const char *bn_relu_conv_bn =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,3,4,6] X) => (float[1,2,4,6] Y)\n"
    "<float[3] sc = {1.5, 0.5, -2}, float[3] bb = {0.2, 0.3, -0.4},"
    " float[3] mu = {0.05, -0.1, 0.2}, float[3] var = {0.9, 1.5, 0.25},"
    " float[2,3,1,1] W = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6},"
    " float[2] s2 = {1, 2}, float[2] b2 = {0.5, -1}, float[2] m2 = {0, 0.5}, float[2] v2 = {1, "
    "2}>\n"
    "{ n = BatchNormalization (X, sc, bb, mu, var)\n r = Relu(n)\n c = Conv (r, W)\n"
    "  d = BatchNormalization (c, s2, b2, m2, v2)\n Y = Relu(d) }\n";

/* the same on a 2x2 image (the prologue applied before the product), and
 * without Relu; two that stay apart: Relu's output read twice, a 3x3
 * kernel */
static const char *small_prologue =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[2,3,2,2] X) => (float[2,2,2,2] Y)\n"
    "<float[3,1,1] m = {2, -1, 0.5}, float[1] ad = {0.75},"
    " float[2,3,1,1] W = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}>\n"
    "{ s = Mul(m, X)\n a = Add(s, ad)\n r = Relu(a)\n Y = Conv (r, W) }\n";

static const char *affine_only =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,3,6,6] X) => (float[1,2,6,6] Y)\n"
    "<float[3,1,1] m = {2, -1, 0.5}, float[1] ad = {0.75},"
    " float[2,3,1,1] W = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}>\n"
    "{ s = Mul(m, X)\n a = Add(s, ad)\n Y = Conv (a, W) }\n";

static const char *relu_shared =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,3,4,4] X) => (float[1,5,4,4] Y)\n"
    "<float[2,3,1,1] W = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6}>\n"
    "{ r = Relu(X)\n c = Conv (r, W)\n Y = Concat <axis = 1> (r, c) }\n";

static const char *relu_3x3 =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "G (float[1,2,5,5] X) => (float[1,1,5,5] Y)\n"
    "<float[1,2,3,3] W = "
    "{0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,-0.8,0.9,1,-1.1,1.2,0.1,0.2,0.3,-0.4,0.5,0.6}>\n"
    "{ r = Relu(X)\n Y = Conv <pads = [1, 1, 1, 1]> (r, W) }\n";

static void test_conv_prologues(void) {
  size_t n0 = 0, n1 = 0;
  const int64_t d_dl[4] = {1, 6, 5, 7};
  compare("dense layer prologue", dense_layer, d_dl, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 7 && n1 == 2); /* FusedConv (BN, Mul, Add, Relu in its prologue) and Concat */
  const int64_t d_br[4] = {1, 3, 4, 6};
  compare("bn relu conv bn relu", bn_relu_conv_bn, d_br, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 5 && n1 == 1);
  const int64_t d_sm[4] = {2, 3, 2, 2};
  compare("prologue on a small image", small_prologue, d_sm, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 4 && n1 == 1);
  const int64_t d_ao[4] = {1, 3, 6, 6};
  compare("prologue without relu", affine_only, d_ao, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 3 && n1 == 1);
  const int64_t d_rs[4] = {1, 3, 4, 4};
  compare("relu read twice", relu_shared, d_rs, 4, -1, &n0, &n1);
  CHECK(n1 == n0);
  const int64_t d_r3[4] = {1, 2, 5, 5};
  compare("relu before a 3x3", relu_3x3, d_r3, 4, -1, &n0, &n1);
  CHECK(n1 == n0);
}

typedef struct conv_case {
  const char *what;
  int64_t n, cin, cout, h, w, k, stride, group, dil;
  bool bias;
  const char *act; /* node text, e.g. "Relu" or "LeakyRelu <alpha = 0.1>"; NULL: none */
  int res;         /* 0: none, 1: a 1x1 shortcut conv before, 2: X itself, 3: Relu(X) after
                      (not fusable), 4: Sum of two, 5: [1,cout,1,1] broadcast before */
  bool runtime_w;  /* W = Wc + 0 * sum(X): computed at run time, not packed */
  int bound;       /* then 1: Max(., -0.4), 2: Min(0.25, .) (scalar constants) */
} conv_case;

static char *cat(char *p, const char *end, const char *fmt, double v) {
  int k = snprintf(p, (size_t)(end - p), fmt, v);
  return k > 0 && p + k < end ? p + k : p;
}

static char *weights(char *p, const char *end, const char *name, const int64_t *dims, size_t r,
                     uint32_t seed) {
  int64_t n = 1;
  p += snprintf(p, (size_t)(end - p), "float[");
  for (size_t d = 0; d < r; d++) {
    p += snprintf(p, (size_t)(end - p), "%s%lld", d ? "," : "", (long long)dims[d]);
    n *= dims[d];
  }
  p += snprintf(p, (size_t)(end - p), "] %s = {", name);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p = cat(p, end, i ? ",%.9g" : "%.9g", (double)((int)((seed >> 12) % 257u) - 128) / 512.0);
  }
  return p + snprintf(p, (size_t)(end - p), "}");
}

/* The model text of a case; *nodes: node count without fusion. */
static char *conv_model(const conv_case *c, size_t *nodes) {
  size_t cap =
      (size_t)(c->cout * c->cin / c->group * c->k * c->k + 2 * c->cout * c->cin) * 16 + 4096;
  char *buf = malloc(cap), *p = buf, *end = buf + cap;
  int64_t pad = c->dil * (c->k - 1) / 2;
  int64_t oh = (c->h + 2 * pad - c->dil * (c->k - 1) - 1) / c->stride + 1;
  int64_t ow = (c->w + 2 * pad - c->dil * (c->k - 1) - 1) / c->stride + 1;
  p += snprintf(p, (size_t)(end - p),
                "<ir_version: 8, opset_import: [\"\" : 18]>\nG (float[%lld,%lld,%lld,%lld] X) => "
                "(float[%lld,%lld,%lld,%lld] Y)\n<",
                (long long)c->n, (long long)c->cin, (long long)c->h, (long long)c->w,
                (long long)c->n, (long long)c->cout, (long long)oh, (long long)ow);
  if (c->runtime_w) p += snprintf(p, (size_t)(end - p), "float zero = {0}, ");
  if (c->bound)
    p += snprintf(p, (size_t)(end - p), "float[1,1,1,1] bc = {-0.4}, float bd = {0.25}, ");
  int64_t wd[4] = {c->cout, c->cin / c->group, c->k, c->k};
  p = weights(p, end, "Wc", wd, 4, 11);
  if (c->bias) {
    *p++ = ',';
    p = weights(p, end, "B", wd, 1, 22);
  }
  if (c->res == 1) {
    int64_t sd[4] = {c->cout, c->cin, 1, 1};
    *p++ = ',';
    p = weights(p, end, "Ws", sd, 4, 33);
  }
  if (c->res == 5) {
    int64_t bd[4] = {1, c->cout, 1, 1};
    *p++ = ',';
    p = weights(p, end, "Rb", bd, 4, 44);
  }
  p += snprintf(p, (size_t)(end - p), ">\n{ ");
  *nodes = 1;
  if (c->runtime_w) {
    p += snprintf(p, (size_t)(end - p),
                  "S = ReduceSum <keepdims = 0> (X)\n Z = Mul(S, zero)\n W = Add(Wc, Z)\n ");
    *nodes += 3;
  }
  if (c->res == 1) {
    p += snprintf(p, (size_t)(end - p), "R = Conv <strides = [%lld, %lld]> (X, Ws)\n ",
                  (long long)c->stride, (long long)c->stride);
    ++*nodes;
  }
  p += snprintf(p, (size_t)(end - p),
                "C = Conv <pads = [%lld, %lld, %lld, %lld], strides = [%lld, %lld], group = %lld, "
                "dilations = [%lld, %lld]> (X, %s%s)\n ",
                (long long)pad, (long long)pad, (long long)pad, (long long)pad,
                (long long)c->stride, (long long)c->stride, (long long)c->group, (long long)c->dil,
                (long long)c->dil, c->runtime_w ? "W" : "Wc", c->bias ? ", B" : "");
  if (c->res == 3) {
    p += snprintf(p, (size_t)(end - p), "R = Relu(X)\n ");
    ++*nodes;
  }
  const char *r = c->res == 2 ? "X" : c->res == 5 ? "Rb" : "R";
  const char *last = "C";
  if (c->res) {
    p += snprintf(p, (size_t)(end - p), "%s = %s(%s, C)\n ", c->act ? "A" : "Y",
                  c->res == 4 ? "Sum" : "Add", r);
    last = "A";
    ++*nodes;
  }
  if (c->act && strcmp(c->act, "SiLU") == 0) { /* x * Sigmoid(x), as exporters write it */
    /* (the operands in both orders) */
    p += snprintf(
        p, (size_t)(end - p),
        c->bound ? "S = Sigmoid(%s)\n V = Mul(%s, S)\n " : "S = Sigmoid(%s)\n Y = Mul(S, %s)\n ",
        last, last);
    *nodes += 2;
  } else if (c->act) {
    p += snprintf(p, (size_t)(end - p), "%s = %s(%s)\n ", c->bound ? "V" : "Y", c->act, last);
    ++*nodes;
  }
  if (c->bound) { /* after the activation */
    p += snprintf(p, (size_t)(end - p), c->bound == 1 ? "Y = Max(V, bc)\n " : "Y = Min(bd, V)\n ");
    ++*nodes;
  }
  if (!c->res && !c->act) p += snprintf(p, (size_t)(end - p), "Y = Identity(C)\n ");
  snprintf(p, (size_t)(end - p), "}\n");
  return buf;
}

/* nodes an activation of conv_model takes */
static size_t act_nodes(const char *act) { return !act ? 0 : strcmp(act, "SiLU") == 0 ? 2 : 1; }

static void test_conv_epilogues(void) {
  static const char *acts[] = {"Relu",      "LeakyRelu <alpha = 0.1>",
                               "Clip",      "HardSigmoid <alpha = 0.3, beta = 0.4>",
                               "HardSwish", "SiLU",
                               NULL};
  /* what, n, cin, cout, h, w, k, stride, group, dil */
  static const conv_case shapes[] = {
      {"1x1", 1, 8, 20, 9, 11, 1, 1, 1, 1, false, NULL, 0, false},
      {"1x1 deep", 1, 300, 14, 6, 7, 1, 1, 1, 1, false, NULL, 0, false},
      {"3x3", 2, 6, 13, 10, 37, 3, 1, 1, 1, false, NULL, 0, false},
      {"3x3 deep", 1, 40, 16, 8, 9, 3, 1, 1, 1, false, NULL, 0, false},
      /* large enough for the Winograd kernel: its output transform applies
       * bias, residual and activation */
      {"3x3 winograd", 2, 24, 24, 13, 18, 3, 1, 1, 1, false, NULL, 0, false},
      {"3x3 stride 2", 1, 5, 12, 13, 15, 3, 2, 1, 1, false, NULL, 0, false},
      {"1x1 stride 2", 1, 6, 10, 12, 12, 1, 2, 1, 1, false, NULL, 0, false},
      {"depthwise", 2, 6, 6, 9, 10, 3, 1, 6, 1, false, NULL, 0, false},
      {"depthwise stride 2", 1, 4, 8, 11, 11, 3, 2, 4, 1, false, NULL, 0, false},
      /* rows of 12 outputs or more: the bordered-plane kernel, its epilogue
       * in registers */
      {"depthwise wide", 1, 5, 5, 7, 30, 3, 1, 5, 1, false, NULL, 0, false},
      {"depthwise wide stride 2", 2, 3, 6, 9, 35, 3, 2, 3, 1, false, NULL, 0, false},
      /* 16 channels on a small map: channels in the vector lanes
       * (conv_dw_blk.c), the activation in registers */
      {"depthwise blocked", 2, 16, 16, 7, 6, 3, 2, 16, 1, false, NULL, 0, false},
      {"grouped", 1, 8, 6, 7, 9, 3, 1, 2, 1, false, NULL, 0, false},
      {"dilated", 1, 4, 5, 9, 9, 3, 1, 1, 2, false, NULL, 0, false},
  };
  finite_input = true;
  size_t n0 = 0, n1 = 0;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (int bias = 0; bias < 2; bias++)
      for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
        for (int res = 0; res < 3; res++) {
          conv_case c = shapes[si];
          c.bias = bias;
          c.act = acts[ai];
          c.res = res;
          if (!c.act && !c.res) continue;
          if (c.res == 2 && (c.cin != c.cout || c.stride != 1)) c.res = 1;
          size_t want0;
          char *text = conv_model(&c, &want0);
          char what[160];
          snprintf(what, sizeof what, "conv %s%s, %s, residual %d", c.what, bias ? " + bias" : "",
                   c.act ? c.act : "no activation", c.res);
          /* bit for bit, except HardSigmoid: alpha * x + beta may be contracted
           * (FMA) differently by the HardSigmoid kernel's clones */
          bool hs = c.act && strncmp(c.act, "HardSigmoid", 11) == 0;
          compare(what, text, (int64_t[]){c.n, c.cin, c.h, c.w}, 4, hs ? 1e-6 : -1, &n0, &n1);
          /* the activation, the Add and the conv become one node */
          size_t want1 = want0 - act_nodes(c.act) - (c.res ? 1 : 0);
          if (n0 != want0 || n1 != want1)
            fprintf(stderr, "%s: %zu -> %zu nodes (expected %zu -> %zu)\n", what, n0, n1, want0,
                    want1);
          CHECK(n0 == want0 && n1 == want1);
          free(text);
        }
  /* W computed at run time; Sum of two; a broadcast residual; a residual
   * computed after the conv (not fused: only the activation is) */
  static const conv_case more[] = {
      {"runtime W", 1, 6, 13, 8, 9, 3, 1, 1, 1, true, "Relu", 1, true},
      {"runtime W 1x1", 1, 6, 13, 8, 9, 1, 1, 1, 1, true, "HardSwish", 1, true},
      {"sum", 1, 6, 6, 8, 9, 3, 1, 1, 1, true, "Relu", 4, false},
      {"broadcast residual", 1, 6, 7, 8, 9, 3, 1, 1, 1, true, "Relu", 5, false},
      {"leaky + max", 1, 6, 13, 8, 9, 3, 1, 1, 1, true, "LeakyRelu <alpha = 0.2>", 1, false, 1},
      {"hardswish + min", 1, 6, 6, 8, 9, 3, 1, 6, 1, true, "HardSwish", 4, false, 2},
      {"1x1 relu + max", 1, 16, 20, 8, 9, 1, 1, 1, 1, false, "Relu", 1, false, 1},
      {"silu + min", 1, 6, 13, 8, 9, 3, 1, 1, 1, true, "SiLU", 1, false, 2},
      {"1x1 silu + sum", 1, 16, 16, 8, 9, 1, 1, 1, 1, true, "SiLU", 4, false},
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    conv_case c = more[i];
    size_t want0;
    char *text = conv_model(&c, &want0);
    if (c.res == 4) { /* Sum(R, C) needs R: use X as the residual */
      char *at = strstr(text, "Sum(R, C)");
      if (at) memcpy(at, "Sum(X, C)", 9);
    }
    compare(c.what, text, (int64_t[]){c.n, c.cin, c.h, c.w}, 4, -1, &n0, &n1);
    size_t want1 = want0 - 1 - act_nodes(c.act) - (c.bound ? 1 : 0);
    if (n0 != want0 || n1 != want1)
      fprintf(stderr, "%s: %zu -> %zu nodes (expected %zu -> %zu)\n", c.what, n0, n1, want0, want1);
    CHECK(n0 == want0 && n1 == want1);
    free(text);
  }
  conv_case late = {"late residual", 1, 6, 6, 8, 9, 3, 1, 1, 1, true, "Relu", 3, false};
  size_t want0;
  char *text = conv_model(&late, &want0);
  compare(late.what, text, (int64_t[]){1, 6, 8, 9}, 4, -1, &n0, &n1);
  CHECK(n0 == 4 && n1 == 4);
  free(text);
  /* Conv -> BN (folded) -> Add(shortcut) -> Relu, as in ResNet: folding
   * rounds differently (tolerance), then the epilogue applies */
  compare("resnet block", resnet_block, (int64_t[]){1, 3, 6, 6}, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 4 && n1 == 1);
  finite_input = false;
}

/* Squeeze-and-excitation gates into the next 1 x 1 convolution
 * (src/opt/conv_gate.c): a per-channel Sigmoid gate (the GEMM reads Y
 * scaled), HardSigmoid gates (folded into the gate's convolution by the
 * host) as Mul's first operand, a full-shape gate
 * (the product made first), each with one image and two (per-image gates:
 * the product made first); the Mul gone. */
static void test_conv_gates(void) {
  for (int kind = 0; kind < 6; kind++)
    for (int64_t n = 1; n <= 2; n++) {
      char *buf = malloc(65536), *p = buf, *end = buf + 65536;
      p += snprintf(p, (size_t)(end - p),
                    HEAD "G (float[%lld,8,5,6] X) => (float[%lld,12,5,6] Y)\n<", (long long)n,
                    (long long)n);
      const int64_t wa[4] = {8, 8, 1, 1}, wr[4] = {2, 8, 1, 1}, we[4] = {8, 2, 1, 1},
                    wp[4] = {12, 8, 1, 1};
      p = weights(p, end, "Wa", wa, 4, 5);
      *p++ = ',';
      p = weights(p, end, "Ba", wa, 1, 6);
      *p++ = ',';
      p = weights(p, end, "Wr", wr, 4, 7);
      *p++ = ',';
      p = weights(p, end, "We", we, 4, 8);
      *p++ = ',';
      p = weights(p, end, "Wp", wp, 4, 9);
      *p++ = ',';
      p = weights(p, end, "Bp", wp, 1, 10);
      *p++ = ',';
      p = weights(p, end, "Wg", wa, 4, 11);
      p += snprintf(p, (size_t)(end - p), ">\n{ A = Conv(X, Wa, Ba)\n ");
      if (kind == 1)
        p += snprintf(p, (size_t)(end - p), "H = Conv(X, Wg)\n G = Sigmoid(H)\n M = Mul(A, G)\n ");
      else
        p += snprintf(p, (size_t)(end - p),
                      "P = GlobalAveragePool(A)\n R = Conv(P, Wr)\n E = Conv(R, We)\n %s\n %s\n ",
                      kind == 0   ? "G = Sigmoid(E)"
                      : kind == 2 ? "G = HardSigmoid <alpha = 0.25>(E)"
                                  : "G = HardSigmoid(E)",
                      kind == 0 ? "M = Mul(A, G)" : "M = Mul(G, A)");
      snprintf(p, (size_t)(end - p), "Y = Conv(M, Wp, Bp)\n}\n");
      size_t n0 = 0, n1 = 0;
      char what[64];
      snprintf(what, sizeof what, "gate %d, %lld image(s)", kind, (long long)n);
      /* bit for bit on finite inputs; with NaN and infinities in X, the same
       * values (a NaN's sign is the arithmetic's choice) */
      finite_input = true;
      compare(what, buf, (int64_t[]){n, 8, 5, 6}, 4, -1, &n0, &n1);
      finite_input = false;
      compare(what, buf, (int64_t[]){n, 8, 5, 6}, 4, 0, NULL, NULL);
      /* (kind 2's gate convolution takes its HardSigmoid as an epilogue: a
       * node fewer; kind 3, the same with the defaults, as MobileNet-v3
       * exports them) */
      size_t want0 = kind == 1 ? 5 : 7, want1 = want0 - (kind >= 2 ? 2 : 1);
      if (n0 != want0 || n1 != want1)
        fprintf(stderr, "%s: %zu -> %zu nodes (expected %zu -> %zu)\n", what, n0, n1, want0, want1);
      CHECK(n0 == want0 && n1 == want1);
      free(buf);
    }
}

/* A gated FusedConv whose X is the per-channel operand and whose gate is
 * the full tensor (Mul commutes; a graph can reach the kernel that way):
 * the kernel swaps them and gives Conv(Mul(A, G)) bit for bit, at one and
 * two threads. */
static void test_conv_gate_swapped(void) {
  static const char *const fused =
      "<ir_version: 8, opset_import: [\"\" : 18, \"ai.onnxc\" : 1]>\n"
      "G (float[1,8,5,6] X) => (float[1,3,5,6] Y)\n"
      "<float[3,8,1,1] W = {0.5, -1, 0.25, 2, -0.75, 1.5, 0.125, -2, 1, 0.5, -0.5, 0.25, -1.25,"
      " 2, 0.375, -0.625, 1.75, -1.5, 0.5, 0.25, -2, 1, 0.625, -0.125}, float[3] B = {0.5, -1, 2}>\n"
      "{ A = Relu(X)\n P = GlobalAveragePool(X)\n G = Sigmoid(P)\n"
      " Y = ai.onnxc.FusedConv <in_scale = 1>(G, W, B, \"\", A) }\n";
  static const char *const plain =
      "<ir_version: 8, opset_import: [\"\" : 18]>\n"
      "G (float[1,8,5,6] X) => (float[1,3,5,6] Y)\n"
      "<float[3,8,1,1] W = {0.5, -1, 0.25, 2, -0.75, 1.5, 0.125, -2, 1, 0.5, -0.5, 0.25, -1.25,"
      " 2, 0.375, -0.625, 1.75, -1.5, 0.5, 0.25, -2, 1, 0.625, -0.125}, float[3] B = {0.5, -1, 2}>\n"
      "{ A = Relu(X)\n P = GlobalAveragePool(X)\n G = Sigmoid(P)\n M = Mul(A, G)\n"
      " Y = Conv(M, W, B) }\n";
  const int64_t xd[4] = {1, 8, 5, 6};
  finite_input = true;
  result want = run(plain, 0, 1, xd, 4);
  CHECK(want.ok && want.numel == 90);
  for (int threads = 1; threads <= 2 && want.ok; threads++) {
    result got = run(fused, 0, threads, xd, 4);
    CHECK(got.ok && got.numel == want.numel);
    if (got.ok && got.numel == want.numel)
      CHECK(memcmp(got.y, want.y, (size_t)want.numel * sizeof *want.y) == 0);
    free(got.y);
  }
  free(want.y);
  finite_input = false;
}

/* an initializer that backs a graph input is a constant only while no run
 * overrides it: an overriding run must see the given value */
static const char *overridable =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "G (float[2,8] X, float s) => (float[2,8] Y)\n<float s = {2}, float one = {1}>\n"
    "{ A = Mul(X, s)\n B = Add(A, one)\n Y = Relu(B) }\n";

static void test_overridable(void) {
  float got[2][3][16];
  for (int level = 0; level <= 1; level++) {
    onnxc_error e;
    onnxc_model *m = NULL;
    CHECK(onnxc_model_parse_text(overridable, strlen(overridable), "t", &m, &e) == ONNXC_OK);
    onnxc_session_options o = {1, level, NULL, NULL, 0};
    onnxc_session *s = NULL;
    CHECK(m && onnxc_session_create(m, &o, &s, &e) == ONNXC_OK);
    float x[16], sv = -3;
    fill(x, 16);
    int64_t xd[2] = {2, 8};
    onnxc_value *in[2] = {onnxc_tensor_wrap(1, xd, 2, x, &e),
                          onnxc_tensor_wrap(1, NULL, 0, &sv, &e)};
    const char *names[2] = {"X", "s"};
    /* default s, overridden s, default s again */
    for (int r = 0; r < 3 && s; r++) {
      onnxc_value *out = NULL;
      CHECK(onnxc_session_run(s, names, in, r == 1 ? 2 : 1, NULL, &out, 1, &e) == ONNXC_OK);
      if (out) memcpy(got[level][r], onnxc_tensor_data(out), sizeof got[level][r]);
      onnxc_value_free(out);
    }
    onnxc_value_free(in[0]);
    onnxc_value_free(in[1]);
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
  CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0);
  /* X[6] = -3: Relu(-3 * 2 + 1) = 0 by default, Relu(-3 * -3 + 1) = 10 overridden */
  CHECK(got[1][0][6] == 0.0f && got[1][1][6] == 10.0f && got[1][2][6] == 0.0f);
}

/* BERT's feed-forward activation: a bias along the last axis, then GELU
 * written out with Erf; rows of 1100 span two blocks of the fused chain,
 * and the scale (also along the last axis) is the first operand once */
static char *last_axis_gelu(void) {
  enum { W = 1100 };
  size_t cap = 64 * W + 1024, len = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  len += (size_t)snprintf(t + len, cap - len,
                          HEAD "G (float[3,%d] X) => (float[3,%d] Y)\n<float[%d] b = {", W, W, W);
  for (int i = 0; i < W; i++)
    len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "", (i % 13 - 6) * 0.25);
  len += (size_t)snprintf(t + len, cap - len, "}, float[1,%d] s = {", W);
  for (int i = 0; i < W; i++)
    len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "", 0.5 + (i % 7) * 0.125);
  snprintf(t + len, cap - len,
           "}, float r2 = {1.4142135}, float one = {1}, float half = {0.5}>\n"
           "{ A = Add(X, b)\n S = Mul(s, A)\n D = Div(S, r2)\n E = Erf(D)\n F = Add(E, one)\n"
           "  M = Mul(S, F)\n Y = Mul(M, half) }\n");
  return t;
}

/* MatMul by a constant W [K, N], its bias and an activation
 * (src/opt/matmul_epi.c): X [rows..., K]; act 0 none, 1 Relu, 2 GELU
 * (x / sqrt 2), 3 GELU (x * 1/sqrt 2, the bias Add written bias first and a
 * scalar bias), 4 GELU whose input is also read by a third node (the
 * activation is not fused), 5 Relu without a bias (T5), 6 Sigmoid without
 * a bias (no activation of the pass: left alone) */
static char *matmul_epi_text(const int64_t *xd, size_t xr, int64_t N, int act) {
  int64_t K = xd[xr - 1];
  size_t cap = (size_t)(K * N + N) * 16 + 4096, len = 0;
  char *t = malloc(cap), dims[128] = "", odims[128] = "";
  if (!t) return NULL;
  for (size_t d = 0; d < xr; d++) {
    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? "," : "",
             (long long)xd[d]);
    snprintf(odims + strlen(odims), sizeof odims - strlen(odims), "%s%lld", d ? "," : "",
             (long long)(d + 1 == xr ? N : xd[d]));
  }
  len += (size_t)snprintf(t + len, cap - len,
                          HEAD "G (float[%s] X) => (float[%s] Y%s)\n<float[%lld,%lld] W = {", dims,
                          odims, act == 4 ? ", float[?] H" : "", (long long)K, (long long)N);
  for (int64_t i = 0; i < K * N; i++)
    len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "",
                            (double)((i * 7 + i / N * 13) % 23 - 11) * 0.0625);
  if (act == 3) {
    len += (size_t)snprintf(t + len, cap - len, "}, float b = {0.375");
  } else {
    len += (size_t)snprintf(t + len, cap - len, "}, float[%lld] b = {", (long long)N);
    for (int64_t i = 0; i < N; i++)
      len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "", (double)(i % 9 - 4) * 0.25);
  }
  len += (size_t)snprintf(t + len, cap - len,
                          "}, float r2 = {1.4142135}, float ir2 = {0.70710678}, float one = {1}, "
                          "float half = {0.5}>\n{ P = MatMul(X, W)\n");
  static const char *const tails[] = {
      " Y = Add(P, b) }\n", " A = Add(P, b)\n Y = Relu(A) }\n",
      " A = Add(P, b)\n D = Div(A, r2)\n E = Erf(D)\n F = Add(E, one)\n M = Mul(A, F)\n"
      " Y = Mul(M, half) }\n",
      " A = Add(b, P)\n D = Mul(ir2, A)\n E = Erf(D)\n F = Add(one, E)\n M = Mul(F, A)\n"
      " Y = Mul(half, M) }\n",
      " A = Add(P, b)\n D = Div(A, r2)\n E = Erf(D)\n F = Add(E, one)\n M = Mul(A, F)\n"
      " Y = Mul(M, half)\n H = Neg(A) }\n",
      " Y = Relu(P) }\n", " Y = Sigmoid(P) }\n"};
  snprintf(t + len, cap - len, "%s", tails[act]);
  return t;
}

/* layer normalisation written out over the last axis (src/opt/layernorm.c);
 * skip 1: its input is X + 0.37 X (a residual Add of one shape), 2: X + a
 * constant row (broadcast), 3: as 1 with the sum also read by a Neg (H) */
static char *layernorm_text_skip(bool with_beta, int skip) {
  static const char *const pre[] = {"", "  r = Mul (X, k)\n  X1 = Add (X, r)\n",
                                    "  X1 = Add (g, X)\n", "  r = Mul (X, k)\n  X1 = Add (r, X)\n"};
  char *t = malloc(8192);
  size_t at =
      (size_t)snprintf(t, 8192,
                       "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                       "ln (float[3,40] X) => (float[3,40] Y%s)\n"
                       "<float k = {0.37}, float two = {2.0}, float eps = {1e-5}, float[40] g = {",
                       skip == 3 ? ", float[3,40] H" : "");
  for (int i = 0; i < 40; i++)
    at += (size_t)snprintf(t + at, 8192 - at, "%s%g", i ? "," : "", 0.5 + i * 0.03);
  at += (size_t)snprintf(t + at, 8192 - at, "}, float[40] b = {");
  for (int i = 0; i < 40; i++)
    at += (size_t)snprintf(t + at, 8192 - at, "%s%g", i ? "," : "", i * 0.1 - 2);
  snprintf(t + at, 8192 - at,
           "}>\n{ %s  m = ReduceMean <axes = [-1]> (%s)\n  d = Sub (%s, m)\n  p = Pow (d, two)\n"
           "  v = ReduceMean <axes = [-1]> (p)\n  ve = Add (v, eps)\n  s = Sqrt (ve)\n"
           "  n = Div (d, s)\n  %s%s }\n",
           pre[skip], skip ? "X1" : "X", skip ? "X1" : "X",
           with_beta ? "gn = Mul (n, g)\n  Y = Add (gn, b)" : "Y = Mul (g, n)",
           skip == 3 ? "\n  H = Neg (X1)" : "");
  return t;
}

static char *layernorm_text(bool with_beta) { return layernorm_text_skip(with_beta, 0); }

/* duplicates (src/opt/cse.c): the second Sigmoid goes; with its output a
 * graph output it stays */
static const char *dup_nodes =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "dup (float[4,8] X) => (float[4,8] Y) {\n"
    "  a = Sigmoid (X)\n  b = Sigmoid (X)\n"
    "  c = Mul (a, b)\n  d = Cast <to = 1> (c)\n  e = Cast <to = 1> (c)\n"
    "  Y = Sub (d, e) }\n";
static const char *dup_exposed =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "dupx (float[4,8] X) => (float[4,8] Y, float[4,8] b) {\n"
    "  a = Sigmoid (X)\n  b = Sigmoid (X)\n  Y = Mul (a, b) }\n";

/* exported multi-head attention (src/opt/attention.c): 2 heads of 4 */
static const char *attention_text =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "attn (float[2,5,8] X) => (float[2,5,8] Y)\n"
    "<int64[4] shp = {0, 0, 2, 4}, int64[3] back = {0, 0, 8}, float c = {2.0}, float half = "
    "{0.5},\n"
    " float one = {1.0}, float[2,1,1,5] mask = {0, 0, -10000, 0, 0, 0, 0, 0, 0, -10000}> {\n"
    "  xk = Mul (X, half)\n  xv = Add (X, one)\n"
    "  q0 = Reshape (X, shp)\n  q = Transpose <perm = [0, 2, 1, 3]> (q0)\n"
    "  k0 = Reshape (xk, shp)\n  k = Transpose <perm = [0, 2, 3, 1]> (k0)\n"
    "  v0 = Reshape (xv, shp)\n  v = Transpose <perm = [0, 2, 1, 3]> (v0)\n"
    "  s = MatMul (q, k)\n  sd = Div (s, c)\n  sm = Add (sd, mask)\n"
    "  p = Softmax <axis = -1> (sm)\n  o = MatMul (p, v)\n"
    "  t = Transpose <perm = [0, 2, 1, 3]> (o)\n  Y = Reshape (t, back) }\n";

/* attention as PyTorch exports HF Whisper's encoder: Q scaled before the
 * head split, Q's head count left to the Reshape (-1), shapes and scalars as
 * Constant nodes, weights behind Identity nodes, a Mul by 1.0 on the
 * scores. S positions; Q's projection has QW columns: 8 (2 heads of 4) or
 * 4 (one head that both K and V heads share, as MatMul broadcasts it). */
static char *whisper_attention(int S, int QW) {
  char *t = malloc(4096);
  if (!t) return NULL;
  char wq[600] = "";
  size_t k = 0;
  for (int i = 0; i < 8 * QW; i++)
    k += (size_t)snprintf(wq + k, sizeof wq - k, "%s%g", i ? ", " : "", (i % 7 - 3) * 0.125);
  snprintf(t, 4096,
           "<ir_version: 8, opset_import: [\"\" : 17]>\n"
           "attn (float[1,%d,8] X) => (float[1,%d,8] Y)\n"
           "<float[8,%d] Wq = {%s}> {\n"
           "  W = Identity (Wq)\n  xq = MatMul (X, W)\n"
           "  qs = Constant <value = float {0.125}> ()\n  q_ = Mul (xq, qs)\n"
           "  qshp = Constant <value = int64[4] {1, %d, -1, 4}> ()\n"
           "  q0 = Reshape (q_, qshp)\n  q = Transpose <perm = [0, 2, 1, 3]> (q0)\n"
           "  half = Constant <value = float {0.5}> ()\n  xk = Mul (X, half)\n"
           "  kshp = Constant <value = int64[4] {1, -1, 2, 4}> ()\n  k0 = Reshape (xk, kshp)\n"
           "  one1 = Constant <value = float {1.0}> ()\n  xv = Add (X, one1)\n"
           "  vshp = Constant <value = int64[4] {1, -1, 2, 4}> ()\n  v0 = Reshape (xv, vshp)\n"
           "  v = Transpose <perm = [0, 2, 1, 3]> (v0)\n  k = Transpose <perm = [0, 2, 3, 1]> (k0)\n"
           "  s = MatMul (q, k)\n  one = Constant <value = float {1.0}> ()\n  s1 = Mul (s, one)\n"
           "  p = Softmax <axis = -1> (s1)\n  o = MatMul (p, v)\n"
           "  t = Transpose <perm = [0, 2, 1, 3]> (o)\n"
           "  back = Constant <value = int64[3] {1, %d, -1}> ()\n  Y = Reshape (t, back) }\n",
           S, S, QW, wq, S, S);
  return t;
}


/* attention on split heads as real exporters write it (src/opt/
 * attention_bhsd.c), X [1, S, 8] projected by constant weights: kind 0 HF
 * eager (2 heads of 4; K^T by its own Transpose, Div, an additive causal
 * mask made by Trilu, the heads merged back), 1 grouped-query (4 query
 * heads, 2 K/V heads repeated by Unsqueeze/Expand/Reshape, Mul scale,
 * causal mask), 2 SDPA (q and K^T each times sqrt(scale), no mask), 3
 * GPT-2 (Div, Where(causal, Cast(scores), finfo.min), a padding mask), 4
 * as 1 with repeat_kv's targets computed from K's shape (a dynamic export),
 * 5 TorchScript's SDPA (sqrt(1 / sqrt(D)) computed from Q's shape, q and
 * K^T multiplied by it, the causal mask). */
static char *bhsd_attention(int kind, int S) {
  int qh = kind == 1 || kind == 4 ? 4 : 2, qw = qh * 4;
  size_t cap = 65536, k = 0;
  char *t = malloc(cap);
  char w[3][3000];
  if (!t) return NULL;
  /* GPT-2's padding mask: some keys off (-1), others slightly weighted */
  k += (size_t)snprintf(t, cap,
                        "<ir_version: 8, opset_import: [\"\" : 18]>\n"
                        "attn (float[1,%d,8] X) => (float[1,%d,%d] Y)\n<float[1,1,1,%d] pad = {",
                        S, S, qw, S);
  for (int j = 0; j < S; j++)
    k += (size_t)snprintf(t + k, cap - k, "%s%g", j ? ", " : "", j % 5 == 4 ? -1.0 : 0.1 * (j % 3));
  k += (size_t)snprintf(t + k, cap - k, "},\n");
  for (int m = 0; m < 3; m++) {
    int cols = m == 0 ? qw : 8;
    size_t o = 0;
    for (int i = 0; i < 8 * cols; i++)
      o += (size_t)snprintf(w[m] + o, sizeof w[m] - o, "%s%g", i ? ", " : "",
                            ((i * (5 + m) + m) % 11 - 5) * 0.02);
  }
  k += (size_t)snprintf(
      t + k, cap - k,
      " float[8,%d] Wq = {%s}, float[8,8] Wk = {%s}, float[8,8] Wv = {%s},\n"
      " int64[4] qshp = {1, %d, %d, 4}, int64[4] kshp = {1, %d, 2, 4}, int64[3] back = {1, %d, "
      "%d},\n"
      " int64[2] ss = {%d, %d}, int64 one = {1}, float half = {0.5}, float two = {2.0},\n"
      " float sq = {0.70710677}, float lo = {-3.4028235e38}, float zero = {0.0},\n"
      " int64[1] ax = {2}, int64[5] ec = {1, 2, 2, %d, 4}, int64[4] rc = {1, 4, %d, 4},\n"
      " int64[1] i1 = {1}, int64[1] i2 = {2}, int64[1] i4 = {4}, int64[1] m1 = {-1},\n"
      " int64[1] endi = {9223372036854775807}, float onef = {1.0}> {\n"
      "  xq = MatMul (X, Wq)\n  xk = MatMul (X, Wk)\n  xv = MatMul (X, Wv)\n"
      "  q0 = Reshape (xq, qshp)\n  q = Transpose <perm = [0, 2, 1, 3]> (q0)\n"
      "  k0 = Reshape (xk, kshp)\n  kh = Transpose <perm = [0, 2, 1, 3]> (k0)\n"
      "  v0 = Reshape (xv, kshp)\n  vh = Transpose <perm = [0, 2, 1, 3]> (v0)\n"
      "  big = ConstantOfShape <value = float[1] {-10000}> (ss)\n"
      "  causal = Trilu <upper = 1> (big, one)\n",
      qw, w[0], w[1], w[2], S, qh, S, S, qw, S, S, S, S);
  if (kind == 0)
    k += (size_t)snprintf(t + k, cap - k,
                          "  kt = Transpose <perm = [0, 1, 3, 2]> (kh)\n  s = MatMul (q, kt)\n"
                          "  sd = Div (s, two)\n  sm = Add (sd, causal)\n"
                          "  p = Softmax <axis = -1> (sm)\n  o = MatMul (p, vh)\n");
  else if (kind == 1 || kind == 4) {
    /* kind 4: repeat_kv's targets computed from K's shape */
    const char *dyn = kind == 4 ? "  tt = Shape <start = 2, end = 3> (kh)\n"
                                  "  e = Concat <axis = 0> (i1, i2, i2, tt, i4)\n"
                                  "  r = Concat <axis = 0> (i1, i4, tt, i4)\n"
                                : "";
    k += (size_t)snprintf(
        t + k, cap - k,
        "%s  ku = Unsqueeze (kh, ax)\n  ke = Expand (ku, %s)\n  k4 = Reshape (ke, %s)\n"
        "  vu = Unsqueeze (vh, ax)\n  ve = Expand (vu, %s)\n  v4 = Reshape (ve, %s)\n"
        "  kt = Transpose <perm = [0, 1, 3, 2]> (k4)\n  s = MatMul (q, kt)\n"
        "  sd = Mul (s, half)\n  sm = Add (sd, causal)\n"
        "  p = Softmax <axis = -1> (sm)\n  o = MatMul (p, v4)\n",
        dyn, kind == 4 ? "e" : "ec", kind == 4 ? "r" : "rc", kind == 4 ? "e" : "ec",
        kind == 4 ? "r" : "rc");
  } else if (kind == 5)
    k += (size_t)snprintf(t + k, cap - k,
                          "  qsh = Shape (q)\n  last = Slice (qsh, m1, endi)\n"
                          "  dd = Cast <to = 1> (last)\n  sdd = Sqrt (dd)\n"
                          "  scl = Div (onef, sdd)\n  f = Sqrt (scl)\n  qs = Mul (q, f)\n"
                          "  kt = Transpose <perm = [0, 1, 3, 2]> (kh)\n  ks = Mul (kt, f)\n"
                          "  s = MatMul (qs, ks)\n  sm = Add (s, causal)\n"
                          "  p = Softmax <axis = -1> (sm)\n  o = MatMul (p, vh)\n");
  else if (kind == 2)
    k += (size_t)snprintf(t + k, cap - k,
                          "  qs = Mul (q, sq)\n  kt = Transpose <perm = [0, 1, 3, 2]> (kh)\n"
                          "  ks = Mul (kt, sq)\n  s = MatMul (qs, ks)\n"
                          "  p = Softmax <axis = -1> (s)\n  o = MatMul (p, vh)\n");
  else
    k += (size_t)snprintf(t + k, cap - k,
                          "  cond = Equal (causal, zero)\n"
                          "  kt = Transpose <perm = [0, 1, 3, 2]> (kh)\n  s = MatMul (q, kt)\n"
                          "  sd = Div (s, two)\n  sf = Cast <to = 1> (sd)\n"
                          "  w = Where (cond, sf, lo)\n  sm = Add (w, pad)\n"
                          "  p = Softmax <axis = -1> (sm)\n  o = MatMul (p, vh)\n");
  snprintf(t + k, cap - k,
           "  ot = Transpose <perm = [0, 2, 1, 3]> (o)\n  Y = Reshape (ot, back) }\n");
  return t;
}


/* Optimum's decoder-with-past block (src/opt/attention_bhsd.c): X [1, S, 8]
 * the new positions projected by constant weights into 2 heads of 4, a
 * constant past of P positions, present_key = Concat(past_key, k) and
 * present_value likewise graph outputs, present_key also read by a Shape
 * (an output too), the scores Div by 2 over all P + S keys, the heads
 * merged back. At level 1 matmul_transb makes the scores
 * MatMulTransBFused(q, present_key), which the attention must still fuse.
 * leak: the probabilities are a graph output too (an intermediate read
 * outside the pattern: nothing fuses). */
static char *past_attention(int S, int P, bool leak) {
  char pout[64] = "";
  if (leak) snprintf(pout, sizeof pout, ", float[1,2,%d,%d] p", S, P + S);
  size_t cap = (size_t)P * 8 * 2 * 24 + 8192, k = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  k += (size_t)snprintf(t, cap,
                        "<ir_version: 8, opset_import: [\"\" : 18]>\n"
                        "attn (float[1,%d,8] X) => (float[1,%d,8] Y, float[1,2,%d,4] present_key,"
                        " float[1,2,%d,4] present_value, int64[1] T%s)\n<",
                        S, S, P + S, P + S, pout);
  for (int m = 0; m < 3; m++) {
    k += (size_t)snprintf(t + k, cap - k, "float[8,8] W%c = {", "qkv"[m]);
    for (int i = 0; i < 64; i++)
      k += (size_t)snprintf(t + k, cap - k, "%s%g", i ? ", " : "",
                            ((i * (5 + m) + m) % 11 - 5) * 0.02);
    k += (size_t)snprintf(t + k, cap - k, "},\n");
  }
  for (int m = 0; m < 2; m++) {
    k += (size_t)snprintf(t + k, cap - k, "float[1,2,%d,4] past_%c = {", P, "kv"[m]);
    for (int i = 0; i < 8 * P; i++)
      k += (size_t)snprintf(t + k, cap - k, "%s%g", i ? ", " : "",
                            ((i * (7 + m) + 3) % 13 - 6) * 0.25);
    k += (size_t)snprintf(t + k, cap - k, "},\n");
  }
  snprintf(t + k, cap - k,
           " int64[4] shp = {1, %d, 2, 4}, int64[3] back = {1, %d, 8}, float two = {2.0}> {\n"
           "  xq = MatMul (X, Wq)\n  xk = MatMul (X, Wk)\n  xv = MatMul (X, Wv)\n"
           "  q0 = Reshape (xq, shp)\n  q = Transpose <perm = [0, 2, 1, 3]> (q0)\n"
           "  k0 = Reshape (xk, shp)\n  kh = Transpose <perm = [0, 2, 1, 3]> (k0)\n"
           "  v0 = Reshape (xv, shp)\n  vh = Transpose <perm = [0, 2, 1, 3]> (v0)\n"
           "  present_key = Concat <axis = 2> (past_k, kh)\n"
           "  present_value = Concat <axis = 2> (past_v, vh)\n"
           "  T = Shape <start = 2, end = 3> (present_key)\n"
           "  kt = Transpose <perm = [0, 1, 3, 2]> (present_key)\n  s = MatMul (q, kt)\n"
           "  sd = Div (s, two)\n  p = Softmax <axis = -1> (sd)\n"
           "  o = MatMul (p, present_value)\n"
           "  ot = Transpose <perm = [0, 2, 1, 3]> (o)\n  Y = Reshape (ot, back) }\n",
           S, S);
  return t;
}


/* A linear layer as PyTorch's dynamo exporter writes it (src/opt/
 * matmul_epi.c): Gemm(X, W, C) with W [K, N] or [N, K] (trans_b), alpha,
 * beta, C [N] (bias 0), [1, N] (1), a scalar (2) or none (3), then an
 * activation: 0 none, 1 Relu, 2 Gelu (opset 20), 3 GELU's tanh form
 * spelled out, 4 SiLU, 5 Gelu approximate = tanh. The nodes the fused one
 * replaces (unfused count) in *nodes. */
static char *gemm_text(int64_t M, int64_t K, int64_t N, bool trans_b, float alpha, float beta,
                       int bias, int act, size_t *nodes) {
  size_t cap = (size_t)(K * N + N) * 16 + 4096, len = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  len += (size_t)snprintf(t + len, cap - len,
                          "<ir_version: 9, opset_import: [\"\" : 20]>\n"
                          "G (float[%lld,%lld] X) => (float[%lld,%lld] Y)\n<float[%lld,%lld] W = {",
                          (long long)M, (long long)K, (long long)M, (long long)N,
                          (long long)(trans_b ? N : K), (long long)(trans_b ? K : N));
  for (int64_t i = 0; i < K * N; i++)
    len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "",
                            (double)((i * 7 + i / N * 13) % 23 - 11) * 0.0625);
  len += (size_t)snprintf(t + len, cap - len, "}");
  int64_t nb = bias == 2 ? 1 : N;
  if (bias < 3) {
    len += (size_t)snprintf(t + len, cap - len, ", float%s C = {",
                            bias == 0   ? "[70]"
                            : bias == 1 ? "[1,70]"
                                        : "");
    for (int64_t i = 0; i < nb; i++)
      len += (size_t)snprintf(t + len, cap - len, "%s%g", i ? "," : "", (double)(i % 9 - 4) * 0.25);
    len += (size_t)snprintf(t + len, cap - len, "}");
  }
  len += (size_t)snprintf(t + len, cap - len,
                          ", float half = {0.5}, float three = {3}, float k = {0.044715}, "
                          "float c = {0.7978846}, float one = {1}>\n"
                          "{ %s = Gemm <transB = %d, alpha = %g, beta = %g> (X, W%s)\n",
                          act ? "H" : "Y", trans_b, (double)alpha, (double)beta,
                          bias < 3 ? ", C" : "");
  static const char *const tails[] = {
      "}\n",
      " Y = Relu(H) }\n",
      " Y = Gelu(H) }\n",
      " A = Mul(H, half)\n P = Pow(H, three)\n Q = Mul(P, k)\n S = Add(H, Q)\n R = Mul(S, c)\n"
      " T = Tanh(R)\n U = Add(T, one)\n Y = Mul(A, U) }\n",
      " S = Sigmoid(H)\n Y = Mul(H, S) }\n",
      " Y = Gelu <approximate = \"tanh\"> (H) }\n"};
  static const size_t tail_nodes[] = {0, 1, 1, 8, 2, 1};
  snprintf(t + len, cap - len, "%s", tails[act]);
  *nodes = 1 + tail_nodes[act];
  return t;
}

static void test_gemm_linear(void) {
  /* one row (streamed panels) and 50 (the blocked GEMM); N = 70 leaves
   * partial panels; every bias form, both layouts of W, alpha and beta */
  static const struct {
    int64_t M;
    bool tb;
    float alpha, beta;
    int bias, act;
  } cases[] = {{1, false, 1, 1, 0, 0},       {50, true, 1, 1, 0, 0}, {50, false, 0.5f, 2, 1, 1},
               {1, true, 1.5f, 0.25f, 2, 2}, {50, true, 1, 1, 1, 3}, {50, false, 1, 1, 3, 4},
               {7, true, 0.75f, 1, 0, 5},    {50, true, 2, 0, 0, 1}, {3, false, 1, -1, 2, 3},
               {50, true, 1, 1, 2, 4}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    size_t want0 = 0;
    char *t = gemm_text(cases[k].M, 40, 70, cases[k].tb, cases[k].alpha, cases[k].beta,
                        cases[k].bias, cases[k].act, &want0);
    CHECK(t != NULL);
    if (!t) continue;
    size_t m0 = 0, m1 = 0;
    char what[64];
    snprintf(what, sizeof what, "gemm linear %zu", k);
    const int64_t xd[2] = {cases[k].M, 40};
    finite_input = true;
    compare(what, t, xd, 2, 1e-5, &m0, &m1);
    finite_input = false;
    if (m0 != want0 || m1 != 1) fprintf(stderr, "%s: %zu nodes unfused, %zu fused\n", what, m0, m1);
    CHECK(m0 == want0 && m1 == 1);
    free(t);
  }
  /* a Gemm refuses an A that is not a matrix, fused or not */
  static const char bad[] = "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                            "g (float[2,3,4] X) => (float[2,3,2] Y)\n"
                            "<float[4,2] W = {1, 2, 3, 4, 5, 6, 7, 8}> { Y = Gemm (X, W) }\n";
  for (int level = 0; level < 2; level++) {
    onnxc_error e = {0};
    onnxc_model *m = NULL;
    onnxc_session *s = NULL;
    onnxc_value *x = NULL, *y = NULL;
    float xs[24] = {0};
    const int64_t xd[3] = {2, 3, 4};
    onnxc_session_options o = {.threads = 1, .optimization_level = level};
    CHECK(onnxc_model_parse_text(bad, strlen(bad), "gemm3d", &m, &e) == ONNXC_OK);
    CHECK(m && onnxc_session_create(m, &o, &s, &e) == ONNXC_OK);
    x = onnxc_tensor_wrap(1, xd, 3, xs, &e);
    CHECK(s && x && onnxc_session_run(s, NULL, &x, 1, NULL, &y, 1, &e) != ONNXC_OK);
    CHECK(y == NULL && strstr(e.msg, "2-D") != NULL);
    if (!strstr(e.msg, "2-D")) fprintf(stderr, "gemm of a 3-D A, level %d: %s\n", level, e.msg);
    onnxc_value_free(x);
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
}

int main(void) {
  test_gemm_linear();
  test_overridable();
  /* Whisper's attention: fused (MultiHeadAttentionFused) within 1e-5 of the
   * nodes it replaces, two heads or one shared head, and at 1,200
   * positions (the rows split over 2 threads) */
  for (int c = 0; c < 3; c++) {
    int S = c == 2 ? 1200 : 6, QW = c == 1 ? 4 : 8;
    char *w = whisper_attention(S, QW);
    size_t w0 = 0, w1 = 0;
    const int64_t d_w[3] = {1, S, 8};
    finite_input = true;
    if (w) compare(c == 1 ? "whisper attention, one Q head" : "whisper attention", w, d_w, 3,
                   1e-5, &w0, &w1);
    finite_input = false;
    /* 17 nodes run unfused (the Constants folded); fused: Q's MatMul, the
     * scalings of Q, K and V, the attention, the last Reshape */
    CHECK(w && w0 == 17 && w1 <= 6);
    free(w);
  }
  /* attention on split heads (AttentionBHSDFused) within 1e-5 of the
   * nodes it replaces, at 1 and 2 threads: short, and 700 positions (the
   * query rows in blocks, the scores never all held) */
  for (int kind = 0; kind < 6; kind++)
    for (int big = 0; big < 2; big++) {
      int S = big ? 700 : 5;
      char *w = bhsd_attention(kind, S);
      size_t b0 = 0, b1 = 0;
      const int64_t d_b[3] = {1, S, 8};
      char what[64];
      snprintf(what, sizeof what, "split-head attention %d, %d positions", kind, S);
      finite_input = true;
      if (w) compare(what, w, d_b, 3, 1e-5, &b0, &b1);
      finite_input = false;
      /* fused: the three projections, the mask's nodes, the attention, the Reshape */
      CHECK(w && b1 + 8 <= b0);
      free(w);
    }
  /* the decoder-with-past block: present K and V (graph outputs, K read by
   * a Shape) are the fused attention's K and V; one new position over a
   * short and a long past, and a prompt of 5 over a past of 3. The last
   * case also outputs the probabilities: left unfused */
  {
    static const int sp[4][3] = {{1, 6, 0}, {5, 3, 0}, {1, 700, 0}, {1, 6, 1}};
    for (int c = 0; c < 4; c++) {
      int S = sp[c][0], P = sp[c][1];
      bool leak = sp[c][2] != 0;
      char *w = past_attention(S, P, leak), what[64];
      size_t b0 = 0, b1 = 0;
      const int64_t d_b[3] = {1, S, 8};
      snprintf(what, sizeof what, "attention over a past of %d, %d new%s", P, S,
               leak ? ", p an output" : "");
      finite_input = true;
      if (w) compare(what, w, d_b, 3, 1e-5, &b0, &b1);
      finite_input = false;
      /* fused: K^T, the scores, Div, Softmax, the product, Q's and Y's
       * head Transposes become one node (19 run unfused); with p an
       * output, only matmul_transb's K^T goes */
      CHECK(w && b0 == 19 && (leak ? b1 + 1 == b0 : b1 + 6 <= b0));
      if (leak ? b1 + 1 != b0 : b1 + 6 > b0)
        fprintf(stderr, "%s: %zu nodes unfused, %zu fused\n", what, b0, b1);
      free(w);
    }
  }
  test_conv_gates();
  test_conv_gate_swapped();
  {
    size_t a0 = 0, a1 = 0;
    const int64_t d_at[3] = {2, 5, 8};
    finite_input = true;
    compare("attention", attention_text, d_at, 3, 1e-5, &a0, &a1);
    finite_input = false;
    CHECK(a0 == 15 && a1 <= 4); /* K and V inputs, the fused attention, the last Reshape */
  }
  {
    size_t c0 = 0, c1 = 0;
    const int64_t d_dup[2] = {4, 8};
    compare("duplicate nodes", dup_nodes, d_dup, 2, -1, &c0, &c1);
    CHECK(c0 == 6 && c1 == 3); /* one Sigmoid (a chain with the Mul), one Cast */
    compare("duplicate exposed", dup_exposed, d_dup, 2, -1, &c0, &c1);
    CHECK(c0 == 3 && c1 >= 2);
  }
  for (int beta = 0; beta < 2; beta++) {
    char *ln = layernorm_text(beta);
    size_t l0 = 0, l1 = 0;
    const int64_t d_ln[2] = {3, 40};
    finite_input = true;
    compare(beta ? "layernorm" : "layernorm without beta", ln, d_ln, 2, 1e-5, &l0, &l1);
    finite_input = false;
    CHECK(l0 == (beta ? 9u : 8u) && l1 == 1);
    free(ln);
  }
  /* MatMul epilogues: one row (streamed panels), three, 50 (the blocked
   * GEMM, two depth blocks of K = 400), batched rows; N = 70 leaves partial
   * panels */
  {
    static const struct {
      int64_t xd[3];
      size_t xr;
      int act;
      size_t nodes0, nodes1;
    } cases[] = {{{1, 400}, 2, 2, 7, 1},   {{3, 400}, 2, 2, 7, 1},  {{50, 400}, 2, 2, 7, 1},
                 {{2, 5, 40}, 3, 1, 3, 1}, {{50, 400}, 2, 0, 2, 1}, {{4, 9, 40}, 3, 3, 7, 1},
                 {{3, 40}, 2, 3, 7, 1},    {{20, 40}, 2, 4, 8, 3},  {{2, 7, 40}, 3, 5, 2, 1},
                 {{50, 400}, 2, 5, 2, 1},  {{6, 40}, 2, 6, 2, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      char *t = matmul_epi_text(cases[k].xd, cases[k].xr, 70, cases[k].act);
      CHECK(t != NULL);
      if (!t) continue;
      size_t m0 = 0, m1 = 0;
      char what[64];
      snprintf(what, sizeof what, "matmul epilogue %zu", k);
      finite_input = k % 2 == 0;
      compare(what, t, cases[k].xd, cases[k].xr, -1, &m0, &m1);
      finite_input = false;
      if (m0 != cases[k].nodes0 || m1 != cases[k].nodes1)
        fprintf(stderr, "%s: %zu nodes unfused, %zu fused\n", what, m0, m1);
      CHECK(m0 == cases[k].nodes0 && m1 == cases[k].nodes1);
      free(t);
    }
  }
  /* skip layer norm: the residual Add joins the normalisation (one shape:
   * row by row; a broadcast row: summed first), not when the sum is read
   * elsewhere */
  for (int skip = 1; skip <= 3; skip++) {
    char *ln = layernorm_text_skip(true, skip);
    size_t l0 = 0, l1 = 0;
    const int64_t d_ln[2] = {3, 40};
    char what[48];
    snprintf(what, sizeof what, "skip layernorm %d", skip);
    finite_input = true;
    compare(what, ln, d_ln, 2, 1e-5, &l0, &l1);
    finite_input = false;
    static const size_t want0[] = {0, 11, 10, 12},
                        want1[] = {0, 2, 1, 3}; /* 3: Mul and Add as one chain */
    if (l0 != want0[skip] || l1 != want1[skip])
      fprintf(stderr, "%s: %zu nodes unfused, %zu fused\n", what, l0, l1);
    CHECK(l0 == want0[skip] && l1 == want1[skip]);
    free(ln);
  }
  /* LayerNormalization (opset 17) after a residual Add: the same kernel
   * either way, so bit for bit; the Add feeding two normalisations stays */
  {
    char ln17[2048];
    size_t at = (size_t)snprintf(ln17, sizeof ln17,
                                 "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                                 "ln (float[3,40] X) => (float[3,40] Y)\n<float k = {0.37}, "
                                 "float[40] g = {");
    for (int i = 0; i < 40; i++)
      at += (size_t)snprintf(ln17 + at, sizeof ln17 - at, "%s%g", i ? "," : "", 0.5 + i * 0.03);
    snprintf(ln17 + at, sizeof ln17 - at,
             "}>\n{ r = Mul (X, k)\n  s = Add (X, r)\n"
             "  Y = LayerNormalization <epsilon = 1e-5> (s, g) }\n");
    size_t l0 = 0, l1 = 0;
    const int64_t d_ln[2] = {3, 40};
    compare("LayerNormalization after Add", ln17, d_ln, 2, -1, &l0, &l1);
    CHECK(l0 == 3 && l1 == 2);
    char *two = strstr(ln17, "  Y = LayerNormalization");
    if (two)
      snprintf(two, sizeof ln17 - (size_t)(two - ln17),
               "  a = LayerNormalization <epsilon = 1e-5> (s, g)\n"
               "  c = LayerNormalization <epsilon = 1e-3> (s, g)\n  Y = Sub (a, c) }\n");
    compare("Add read by two LayerNormalizations", ln17, d_ln, 2, -1, &l0, &l1);
    CHECK(l0 == 5 && l1 == 4); /* Mul and Add as one chain, both norms kept */
  }
  /* GPT-2's tanh GELU: Pow by 3 joins the chain (x * x * x, as the Pow
   * kernel), Pow by 2 too; Pow by 2.5 or by an integer exponent does not */
  {
    static const char *const pows[] = {
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<float three = {3}, float k = {0.044715}, "
        "float c = {0.7978846}, float half = {0.5}, float one = {1}>\n"
        "{ p = Pow (X, three)\n  q = Mul (p, k)\n  r = Add (X, q)\n  s = Mul (r, c)\n"
        "  t = Tanh (s)\n  h = Mul (X, half)\n  u = Add (t, one)\n  Y = Mul (h, u) }\n",
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<float two = {2}, float k = {0.5}>\n"
        "{ p = Pow (X, two)\n  Y = Mul (p, k) }\n",
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<float e = {2.5}, float k = {0.5}>\n"
        "{ a = Abs (X)\n  p = Pow (a, e)\n  Y = Mul (p, k) }\n",
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<int64 e = {3}, float k = {0.5}>\n"
        "{ p = Pow (X, e)\n  Y = Mul (p, k) }\n",
        /* SiLU and QuickGELU: Sigmoid joins chains too (the Sigmoid kernel's function) */
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<float one = {1}>\n"
        "{ s = Sigmoid (X)\n  t = Mul (X, s)\n  Y = Mul (t, one) }\n",
        HEAD
        "g (float[4,37] X) => (float[4,37] Y)\n<float a = {1.702}>\n"
        "{ m = Mul (X, a)\n  s = Sigmoid (m)\n  Y = Mul (s, X) }\n"};
    static const size_t want0[] = {8, 2, 3, 2, 3, 3}, want1[] = {1, 1, 3, 2, 1, 1};
    const int64_t dp[2] = {4, 37};
    for (size_t k = 0; k < sizeof pows / sizeof *pows; k++) {
      size_t p0 = 0, p1 = 0;
      char what[32];
      snprintf(what, sizeof what, "pow chain %zu", k);
      compare(what, pows[k], dp, 2, -1, &p0, &p1);
      if (p0 != want0[k] || p1 != want1[k]) fprintf(stderr, "%s: %zu -> %zu nodes\n", what, p0, p1);
      CHECK(p0 == want0[k] && p1 == want1[k]);
    }
  }
  char *gelu = last_axis_gelu();
  CHECK(gelu != NULL);
  if (gelu) {
    size_t g0 = 0, g1 = 0;
    const int64_t d_gelu[2] = {3, 1100};
    compare("last-axis bias + gelu", gelu, d_gelu, 2, -1, &g0, &g1);
    CHECK(g0 == 7 && g1 == 1);
    free(gelu);
  }
  size_t n0 = 0, n1 = 0;
  const int64_t d4[4] = {1, 4, 16, 16};
  compare("hardswish chain", hardswish_chain, d4, 4, -1, &n0, &n1);
  CHECK(n0 == 8 && n1 == 1);

  const int64_t d_all[4] = {2, 3, 8, 8};
  compare("all ops", all_ops, d_all, 4, -1, &n0, &n1);
  CHECK(n0 == 22 && n1 == 1);

  const int64_t d_pc[4] = {2, 3, 5, 7};
  compare("per channel", per_channel, d_pc, 4, -1, &n0, &n1);
  CHECK(n0 == 8 && n1 == 1);

  const int64_t d2[2] = {4, 8};
  compare("graph output inside", mid_output, d2, 2, -1, &n0, &n1);
  CHECK(n0 == 4 && n1 == 2);
  compare("used outside", used_outside, d2, 2, -1, &n0, &n1);
  CHECK(n0 == 5 && n1 == 4);
  compare("single node", single, d2, 2, -1, &n0, &n1);
  CHECK(n0 == 2 && n1 == 2);
  compare("rank raising", rank_raise, d2, 2, -1, &n0, &n1);
  CHECK(n0 == 3 && n1 == 1);
  compare("old clip", old_clip, d2, 2, -1, &n0, &n1);
  CHECK(n1 == 1);

  const int64_t d_rb[4] = {1, 1, 6, 6};
  compare("root broadcast", root_broadcast, d_rb, 4, -1, &n0, &n1);
  CHECK(n0 == 3 && n1 == 1);

  const int64_t d_re[2] = {3, 40};
  compare("reuse", reuse, d_re, 2, -1, &n0, &n1);
  CHECK(n0 == 5 && n1 == 1);

  const int64_t d_cb[4] = {1, 2, 6, 6};
  compare("conv + batchnorm + mul", conv_bn, d_cb, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 5 && n1 == 1); /* folded, then the Relu applied by the conv */
  const int64_t d_cs[4] = {1, 2, 5, 5};
  compare("conv + scalar mul/add", conv_scalar, d_cs, 4, 1e-5, &n0, &n1);
  CHECK(n0 == 7 && n1 == 2);
  const int64_t d_cu[4] = {1, 2, 6, 6};
  compare("conv + unsqueezed scale (attribute axes)", conv_unsq_old, d_cu, 4, 1e-5, &n0, &n1);
  CHECK(n1 == 1); /* Mul and Add folded, Relu applied by the conv */
  compare("conv + unsqueezed / reshaped scale (input axes)", conv_unsq_new, d_cu, 4, 1e-5, &n0,
          &n1);
  CHECK(n1 == 1);

  test_conv_epilogues();
  test_conv_prologues();

  if (fails) return 1;
  printf("test_fuse: ok\n");
  return 0;
}
