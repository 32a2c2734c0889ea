/* test_fuse_llama.c - the Llama-style decoder passes (src/opt/rmsnorm.c,
 * rotary.c, swiglu.c) against the nodes they replace.
 *
 * Each model runs in a session with the three passes switched off
 * (disabled_passes: the nodes as the exporter wrote them, the other passes
 * as usual) and with them on, at one and two threads, on seeded random
 * inputs in [-3, 3]. The fused outputs must agree within 1e-5 relative:
 * |fused - unfused| <= 1e-5 (1 + |unfused|) for RMSNormFused (it sums the
 * squares in double); the rotary and SwiGLU kernels repeat the float
 * operations of the nodes and must give the same numbers (the inputs hold
 * no NaN). The profile's node count shows the fusion happened. */
#include <math.h>
#include <stdint.h>

#include "session_check.h"

#define MAX_IN 3

typedef struct io {
  const char *name;
  int64_t dims[4];
  size_t rank;
} io;

typedef struct out {
  float *y;
  int64_t numel;
  size_t nodes;
  bool ok;
} out;

static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 6.0f;
  }
}

static int64_t numel_of(const io *v) {
  int64_t n = 1;
  for (size_t d = 0; d < v->rank; d++) n *= v->dims[d];
  return n;
}

/* runs the model once; fused: the three passes on */
static out run(const char *text, const io *in, size_t n_in, bool fused, int threads) {
  static const char *const mine[] = {"rmsnorm", "rotary", "swiglu"};
  out r = {0};
  onnxc_error e;
  onnxc_model *m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "llama", &m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", e.msg);
    return r;
  }
  onnxc_session_options o = {.threads = threads, .optimization_level = 1, .profile = 1};
  if (!fused) {
    o.disabled_passes = mine;
    o.n_disabled_passes = 3;
  }
  onnxc_session *s = NULL;
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", e.msg);
    onnxc_model_free(m);
    return r;
  }
  onnxc_value *vals[MAX_IN] = {NULL};
  float *data[MAX_IN] = {NULL};
  const char *names[MAX_IN], *outs[1] = {"Y"};
  for (size_t k = 0; k < n_in; k++) {
    int64_t n = numel_of(&in[k]);
    data[k] = malloc((size_t)n * sizeof(float));
    fill(data[k], n, 1000u + (uint32_t)k * 77u);
    vals[k] = onnxc_tensor_wrap(1, in[k].dims, in[k].rank, data[k], &e);
    names[k] = in[k].name;
  }
  onnxc_value *y = NULL;
  if (onnxc_session_run(s, names, vals, n_in, outs, &y, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", e.msg);
  } else {
    r.numel = 1;
    for (size_t d = 0; d < onnxc_tensor_rank(y); d++) r.numel *= onnxc_tensor_dims(y)[d];
    r.y = malloc((size_t)r.numel * sizeof(float) + 1);
    memcpy(r.y, onnxc_tensor_data(y), (size_t)r.numel * sizeof(float));
    r.nodes = profiled_nodes(s);
    r.ok = true;
  }
  onnxc_value_free(y);
  for (size_t k = 0; k < n_in; k++) {
    onnxc_value_free(vals[k]);
    free(data[k]);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  return r;
}

/* unfused against fused at 1 and 2 threads; the fused node count must be
 * nodes1 (the unfused one nodes0) */
static void compare(const char *what, const char *text, const io *in, size_t n_in, size_t nodes0,
                    size_t nodes1, bool exact) {
  out a = run(text, in, n_in, false, 1);
  CHECK(a.ok);
  for (int threads = 1; threads <= 2 && a.ok; threads++) {
    out b = run(text, in, n_in, true, threads);
    CHECK(b.ok && b.numel == a.numel);
    if (!b.ok || b.numel != a.numel) continue;
    int64_t bad = 0;
    for (int64_t i = 0; i < a.numel; i++) {
      double d = fabs((double)a.y[i] - b.y[i]);
      if (!(exact ? a.y[i] == b.y[i] : d <= 1e-5 * (1.0 + fabs((double)a.y[i]))) && bad++ < 3)
        fprintf(stderr, "%s: element %lld: %.9g unfused, %.9g fused (%d threads)\n", what,
                (long long)i, a.y[i], b.y[i], threads);
    }
    CHECK(bad == 0);
    if (a.nodes != nodes0 || b.nodes != nodes1)
      fprintf(stderr, "%s: %zu nodes unfused, %zu fused (want %zu, %zu)\n", what, a.nodes, b.nodes,
              nodes0, nodes1);
    CHECK(a.nodes == nodes0 && b.nodes == nodes1);
    free(b.y);
  }
  free(a.y);
}

/* RMSNorm: form 0 HF's (opset 18, Pow 2, Reciprocal(Sqrt), Mul(gamma, .)),
 * 1 Mul(x, x) and Div(x, Sqrt) without gamma, 2 Pow(., -0.5) and one
 * gamma value; D values per row */
static char *rms_text(int form, int D, int rows) {
  char *t = malloc(65536);
  size_t at = (size_t)snprintf(
      t, 65536,
      "<ir_version: 10, opset_import: [\"\" : %d]>\n"
      "rms (float[%d,%d] X) => (float[%d,%d] Y)\n"
      "<float two = {2.0}, int64[1] ax = {-1}, float eps = {1e-6}, float mh = {-0.5}, "
      "float g1 = {1.5}, float[%d] g = {",
      form == 0 ? 18 : 13, rows, D, rows, D, D);
  for (int i = 0; i < D; i++)
    at += (size_t)snprintf(t + at, 65536 - at, "%s%g", i ? "," : "", 0.5 + (i % 17) * 0.0625);
  static const char *const body[] = {
      "  p = Pow (X, two)\n  v = ReduceMean <keepdims = 1> (p, ax)\n  ve = Add (v, eps)\n"
      "  s = Sqrt (ve)\n  r = Reciprocal (s)\n  n = Mul (X, r)\n  Y = Mul (g, n)\n",
      "  p = Mul (X, X)\n  v = ReduceMean <axes = [-1]> (p)\n  ve = Add (eps, v)\n"
      "  s = Sqrt (ve)\n  Y = Div (X, s)\n",
      "  p = Pow (X, two)\n  v = ReduceMean <axes = [-1]> (p)\n  ve = Add (v, eps)\n"
      "  r = Pow (ve, mh)\n  n = Mul (r, X)\n  Y = Mul (n, g1)\n"};
  snprintf(t + at, 65536 - at, "}>\n{\n%s}\n", body[form]);
  return t;
}

/* rotary: X [B, S, H, D] turned by cos / sin [S, D'] (inputs, D' = D or 1)
 * after the Transpose to [B, H, S, D]; Slice axis 3 (form 0) or -1 with the
 * Muls' and Add's operands swapped (form 1); split h */
static char *rot_text(int form, int B, int S, int H, int D, int Dc, int h) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "rot (float[%d,%d,%d,%d] X, float[%d,%d] C, float[%d,%d] N) => (float[%d,%d,%d,%d] Y)\n"
           "<int64[1] zero = {0}, int64[1] h = {%d}, int64[1] big = {9223372036854775807}, "
           "int64[1] ax = {%d}, int64[1] one = {1}>\n"
           "{\n  x = Transpose <perm = [0, 2, 1, 3]> (X)\n"
           "  m1 = Mul (%s)\n  x1 = Slice (x, zero, h, ax, one)\n"
           "  x2 = Slice (x, h, big, ax, one)\n  nx = Neg (x2)\n"
           "  r = Concat <axis = -1> (nx, x1)\n  m2 = Mul (%s)\n  Y = Add (%s)\n}\n",
           B, S, H, D, S, Dc, S, Dc, B, H, S, D, h, form ? -1 : 3, form ? "C, x" : "x, C",
           form ? "N, r" : "r, N", form ? "m2, m1" : "m1, m2");
  return t;
}

/* SwiGLU's gate: Y = G * Sigmoid(G) * U (U of shape ushape) */
static char *swiglu_text(int rows, int cols, const char *ushape, int form) {
  char *t = malloc(1024);
  snprintf(t, 1024,
           "<ir_version: 8, opset_import: [\"\" : 13]>\n"
           "mlp (float[%d,%d] G, float%s U) => (float[%d,%d] Y)\n"
           "{\n  s = Sigmoid (G)\n  t = Mul (%s)\n  Y = Mul (%s)\n}\n",
           rows, cols, ushape, rows, cols, form ? "s, G" : "G, s", form ? "U, t" : "t, U");
  return t;
}

int main(void) {
  /* RMSNorm: rows of 40 and of 1,000 (the vector loops' tails), one row,
   * rows spread over two threads */
  static const struct {
    int form, D, rows;
    size_t n0;
  } rms[] = {{0, 40, 14, 7}, {1, 40, 3, 5}, {2, 1000, 3, 7}, {0, 1000, 1, 7}, {1, 64, 300, 5}};
  for (size_t k = 0; k < sizeof rms / sizeof *rms; k++) {
    char *t = rms_text(rms[k].form, rms[k].D, rms[k].rows);
    io x = {"X", {rms[k].rows, rms[k].D}, 2};
    char what[48];
    snprintf(what, sizeof what, "rmsnorm %zu", k);
    /* unfused: the Add of eps and Sqrt are one ElementwiseChain */
    compare(what, t, &x, 1, rms[k].n0 - 1, 1, false);
    free(t);
  }
  /* rotary: HF's geometry (split = D / 2), odd sizes, a split other than
   * half, cos / sin of one column, and enough rows for two threads */
  static const struct {
    int form, B, S, H, D, Dc, h;
  } rot[] = {{0, 1, 6, 4, 32, 32, 16},
             {1, 2, 5, 3, 10, 10, 5},
             {0, 1, 7, 2, 12, 12, 5},
             {1, 2, 3, 2, 8, 1, 4},
             {0, 2, 64, 8, 64, 64, 32}};
  for (size_t k = 0; k < sizeof rot / sizeof *rot; k++) {
    char *t = rot_text(rot[k].form, rot[k].B, rot[k].S, rot[k].H, rot[k].D, rot[k].Dc, rot[k].h);
    io in[3] = {{"X", {rot[k].B, rot[k].S, rot[k].H, rot[k].D}, 4},
                {"C", {rot[k].S, rot[k].Dc}, 2},
                {"N", {rot[k].S, rot[k].Dc}, 2}};
    char what[48];
    snprintf(what, sizeof what, "rotary %zu", k);
    compare(what, t, in, 3, 8, 2, true); /* the Transpose stays */
    free(t);
  }
  /* SwiGLU's gate: one shape (blocks of 2,048 over two threads), U a row
   * broadcast over G, operands swapped */
  static const struct {
    int rows, cols;
    const char *ushape;
    int64_t ud[2];
    size_t ur;
    int form;
  } sw[] = {{3, 50, "[3,50]", {3, 50}, 2, 0},
            {64, 1100, "[64,1100]", {64, 1100}, 2, 1},
            {5, 37, "[37]", {37}, 1, 0},
            {4, 9, "[4,1]", {4, 1}, 2, 1}};
  for (size_t k = 0; k < sizeof sw / sizeof *sw; k++) {
    char *t = swiglu_text(sw[k].rows, sw[k].cols, sw[k].ushape, sw[k].form);
    io in[2] = {{"G", {sw[k].rows, sw[k].cols}, 2}, {"U", {sw[k].ud[0], sw[k].ud[1]}, sw[k].ur}};
    char what[48];
    snprintf(what, sizeof what, "swiglu %zu", k);
    compare(what, t, in, 2, 2, 1, true); /* unfused: Sigmoid and its Mul one chain */
    free(t);
  }
  if (fails) return 1;
  printf("test_fuse_llama: ok\n");
  return 0;
}
