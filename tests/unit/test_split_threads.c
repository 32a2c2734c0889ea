/* test_split_threads.c - operators split over threads give the bytes of
 * the one-thread run. Reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSumExp,SumSquare}
 * over every set of axes of a [6, 40, 200] float tensor (split along a kept
 * dim, along the last dim's columns, or not at all when everything is
 * reduced), keepdims on and off, ReduceSum / ReduceMax of int64, and
 * ArgMax / ArgMin along each axis. Resize (linear, cubic, nearest with
 * extrapolation) of a [6, 40, 200] tensor, split by its outer blocks or
 * by output positions. Element-wise operators whose operands coalesce to
 * one long row (same shapes, a scalar), cut into runs for the threads,
 * transposes of fewer blocks than threads (cut into tiles), Gathers of
 * fewer rows than threads (rows copied in pieces), and
 * a batched MatMul whose small products go to the threads one each. The
 * one-thread run is the reference: each output element must be summed by
 * one thread in the serial order, whatever the split. */
#include <math.h>
#include <onnxc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

static onnxc_value *run(const char *text, int threads, onnxc_value *x) {
  onnxc_error e = {0};
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_value *y = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "reduce", &m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n%s", e.msg, text);
    return NULL;
  }
  onnxc_session_options o = {.threads = threads, .optimization_level = 1};
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK ||
      onnxc_session_run(s, NULL, &x, 1, NULL, &y, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", e.msg);
    y = NULL;
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  return y;
}

static bool same_bytes(onnxc_value *a, onnxc_value *b) {
  return a && b && onnxc_tensor_nbytes(a) == onnxc_tensor_nbytes(b) &&
         memcmp(onnxc_tensor_data_const(a), onnxc_tensor_data_const(b), onnxc_tensor_nbytes(a)) ==
             0;
}

/* ArgMax / ArgMin along one axis: lines split over the threads */
static void compare_arg(const char *op, int axis, int last, onnxc_value *x) {
  char text[512];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 13]>\n"
           "g (float[6,40,200] X) => (int64 Y)\n"
           "{ Y = %s <axis = %d, select_last_index = %d> (X) }\n",
           op, axis, last);
  onnxc_value *a = run(text, 1, x), *b = run(text, 3, x);
  CHECK(same_bytes(a, b));
  onnxc_value_free(a);
  onnxc_value_free(b);
}

static void compare_resize(const char *mode, const char *sizes, onnxc_value *x) {
  char text[512];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 19]>\n"
           "g (float[6,40,200] X) => (float Y)\n<int64[3] sz = {%s}>\n"
           "{ Y = Resize <mode = \"%s\"> (X, , , sz) }\n",
           sizes, mode);
  onnxc_value *a = run(text, 1, x), *b = run(text, 3, x);
  if (!same_bytes(a, b)) fprintf(stderr, "Resize %s to %s: 3 threads differ\n", mode, sizes);
  CHECK(same_bytes(a, b));
  onnxc_value_free(a);
  onnxc_value_free(b);
}

static void compare(const char *op, const char *type, int axes_mask, int keep, onnxc_value *x) {
  char axes[64] = "", text[1024];
  size_t k = 0;
  for (int a = 0; a < 3; a++)
    if (axes_mask >> a & 1)
      k += (size_t)snprintf(axes + k, sizeof axes - k, "%s%d", k ? ", " : "", a);
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 18]>\n"
           "g (%s[6,40,200] X) => (%s Y)\n<int64[%d] ax = {%s}>\n"
           "{ Y = %s <keepdims = %d> (X, ax) }\n",
           type, type, __builtin_popcount((unsigned)axes_mask), axes, op, keep);
  onnxc_value *a = run(text, 1, x), *b = run(text, 3, x);
  CHECK(a && b);
  if (a && b) {
    bool same =
        onnxc_tensor_nbytes(a) == onnxc_tensor_nbytes(b) &&
        memcmp(onnxc_tensor_data_const(a), onnxc_tensor_data_const(b), onnxc_tensor_nbytes(a)) == 0;
    if (!same)
      fprintf(stderr, "%s %s axes {%s} keepdims %d: 3 threads differ\n", op, type, axes, keep);
    CHECK(same);
  }
  onnxc_value_free(a);
  onnxc_value_free(b);
}

/* one model over X [6, 40, 800] at 1, 3 and 16 threads: the same bytes;
 * `want`, when given, is the expected output of every element */
static void compare_long(const char *body, const char *ytype, onnxc_value *x, const float *want) {
  char text[1024];
  snprintf(
      text, sizeof text,
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[6,40,800] X) => (%s Y)\n<float s = {0.37}, int64[3] shp = {12, 40, 400}, int64[2] flat = {240, 800}, int64[2] tall = {3200, 60}, int64[2] three = {3, 64000},"
           " int64 one = {1}, int64[2] two = {2, 0}>\n{ %s }\n",
      ytype, body);
  onnxc_value *a = run(text, 1, x);
  CHECK(a != NULL);
  if (a && want) {
    const float *y = onnxc_tensor_data_const(a);
    int64_t bad = 0;
    int64_t cnt = (int64_t)(onnxc_tensor_nbytes(a) / sizeof *y);
    for (int64_t i = 0; i < cnt; i++) bad += memcmp(&y[i], &want[i], sizeof *y) != 0;
    if (bad) fprintf(stderr, "%s: %lld elements differ from the expected\n", body, (long long)bad);
    CHECK(bad == 0);
  }
  for (int t = 3; t <= 16; t += 13) {
    onnxc_value *b = run(text, t, x);
    if (!same_bytes(a, b)) fprintf(stderr, "%s: %d threads differ from one\n", body, t);
    CHECK(same_bytes(a, b));
    onnxc_value_free(b);
  }
  onnxc_value_free(a);
}

static void long_rows(void) {
  const int64_t dims[3] = {6, 40, 800};
  const int64_t n = 6 * 40 * 800;
  onnxc_error e = {0};
  onnxc_value *x = onnxc_tensor_create(1, dims, 3, &e);
  float *want = malloc((size_t)n * sizeof *want);
  if (!x || !want) {
    CHECK(0);
    free(want);
    onnxc_value_free(x);
    return;
  }
  float *f = onnxc_tensor_data(x);
  for (int64_t i = 0; i < n; i++) f[i] = (float)sin((double)i * 0.29) * 3.0f;
  for (int64_t i = 0; i < n; i++) want[i] = f[i] * 0.37f;
  compare_long("Y = Mul(X, s)", "float[6,40,800]", x, want);
  for (int64_t i = 0; i < n; i++) want[i] = f[i] + f[i];
  compare_long("Y = Add(X, X)", "float[6,40,800]", x, want);
  for (int64_t i = 0; i < n; i++) want[i] = f[i] > 0.37f ? f[i] : 0.37f;
  compare_long("G = Greater(X, s)\n Y = Where(G, X, s)", "float[6,40,800]", x, want);
  compare_long("R = ReduceMean <axes = [0, 1], keepdims = 0> (X)\n Y = Sub(X, R)",
               "float[6,40,800]", x, NULL);
  /* transposes with fewer blocks than threads: the blocks cut in tiles */
  for (int64_t b = 0; b < 6; b++)
    for (int64_t i = 0; i < 40; i++)
      for (int64_t k = 0; k < 800; k++) want[(b * 800 + k) * 40 + i] = f[(b * 40 + i) * 800 + k];
  compare_long("Y = Transpose <perm = [0, 2, 1]> (X)", "float[6,800,40]", x, want);
  for (int64_t i = 0; i < 240; i++)
    for (int64_t k = 0; k < 800; k++) want[k * 240 + i] = f[i * 800 + k];
  compare_long("A = Reshape(X, flat)\n Y = Transpose(A)", "float[800,240]", x, want);
  for (int64_t i = 0; i < 3200; i++) /* few rows of tiles: the columns cut too */
    for (int64_t k = 0; k < 60; k++) want[k * 3200 + i] = f[i * 60 + k];
  compare_long("A = Reshape(X, tall)\n Y = Transpose(A)", "float[60,3200]", x, want);
  /* Gathers of fewer rows than threads: the rows copied in pieces */
  compare_long("A = Reshape(X, three)\n Y = Gather(A, one)", "float[64000]", x, f + 64000);
  memcpy(want, f + 128000, 64000 * sizeof *want);
  memcpy(want + 64000, f, 64000 * sizeof *want);
  compare_long("A = Reshape(X, three)\n Y = Gather(A, two)", "float[2,64000]", x, want);
  compare_long("A = Reshape(X, shp)\n B = Transpose <perm = [0, 2, 1]> (A)\n Y = MatMul(A, B)",
               "float[12,40,40]", x, NULL);
  free(want);
  onnxc_value_free(x);
}

int main(void) {
  const int64_t dims[3] = {6, 40, 200};
  onnxc_error e = {0};
  onnxc_value *xf = onnxc_tensor_create(1, dims, 3, &e), *xi = onnxc_tensor_create(7, dims, 3, &e);
  if (!xf || !xi) return 1;
  float *f = onnxc_tensor_data(xf);
  int64_t *q = onnxc_tensor_data(xi);
  for (int64_t i = 0; i < 6 * 40 * 200; i++) {
    /* values whose float sums depend on the order they are added in */
    f[i] = (float)sin((double)i * 0.37) * (i % 7 == 0 ? 1e4f : 0.5f) + 0.01f;
    q[i] = (i * 2654435761LL) % 1000 - 500;
  }
  static const char *const ops[] = {"ReduceSum", "ReduceMean",      "ReduceMax",
                                    "ReduceMin", "ReduceProd",      "ReduceL1",
                                    "ReduceL2",  "ReduceLogSumExp", "ReduceSumSquare"};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (int mask = 1; mask < 8; mask++)
      for (int keep = 0; keep < 2; keep++) compare(ops[o], "float", mask, keep, xf);
  static const char *const modes[] = {"linear", "cubic", "nearest"};
  for (int m = 0; m < 3; m++) {
    compare_resize(modes[m], "6, 80, 400", xf);  /* outer blocks (the last axis: outer 480) */
    compare_resize(modes[m], "12, 40, 200", xf); /* positions (the first axis: outer 1) */
  }
  for (int axis = 0; axis < 3; axis++) {
    compare_arg("ArgMax", axis, axis == 1, xf);
    compare_arg("ArgMin", axis, 0, xf);
  }
  for (int mask = 1; mask < 8; mask++) {
    compare("ReduceSum", "int64", mask, 1, xi);
    compare("ReduceMax", "int64", mask, 0, xi);
  }
  onnxc_value_free(xf);
  onnxc_value_free(xi);
  long_rows();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_split_threads: ok\n");
  return failures ? 1 : 0;
}
