/* test_matmul_const.c - MatMul by a constant weight: B packed once at
 * session creation (ox_sgemm_pack_b; one to four rows stream the panels,
 * more rows run the blocked GEMM on them) and MatMul(A, Transpose(W)) read
 * in place (src/opt/matmul_transb.c). Each model runs with
 * optimization_level 0 (no constants known: the plain path) and 1, on one
 * and two threads, with A of 1, 3, 4, 5 and 70 rows (batched too), N not a
 * multiple of a panel and K over several depth blocks; the results must
 * agree to float rounding against an independent double-precision product
 * computed here, and the Transpose must be gone from the profile. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

enum { K = 777, N = 45 };

static float wval(int64_t i) { return (float)((i * 37 % 101) - 50) / 64.0f; }
static float aval(int64_t i) { return (float)((i * 53 % 89) - 44) / 32.0f; }

/* the text model: W constant (K x N, or N x K transposed) */
static char *model(bool transposed, const char *adims) {
  size_t cap = (size_t)K * N * 12 + 4096, at = 0;
  char *t = malloc(cap);
  at += (size_t)snprintf(t + at, cap - at,
                         "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                         "mm (float[%s] A) => (float Y) <float[%d,%d] w = {",
                         adims, transposed ? N : K, transposed ? K : N);
  for (int64_t i = 0; i < (int64_t)K * N; i++)
    at += (size_t)snprintf(t + at, cap - at, "%s%g", i ? "," : "", (double)wval(i));
  snprintf(t + at, cap - at, "}>\n{ %s }\n",
           transposed ? "wt = Transpose <perm = [1, 0]> (w)\n  Y = MatMul (A, wt)"
                      : "Y = MatMul (A, w)");
  return t;
}

static void check(bool transposed, const int64_t *ad, size_t ar, int level, int threads) {
  char dims[64] = "";
  for (size_t d = 0; d < ar; d++)
    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? "," : "",
             (long long)ad[d]);
  char *text = model(transposed, dims);
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  CHECK(onnxc_model_parse_text(text, strlen(text), "mm", &m, &e) == ONNXC_OK);
  onnxc_session_options o = {0};
  o.threads = threads;
  o.optimization_level = level;
  o.profile = 1;
  if (m) CHECK(onnxc_session_create(m, &o, &s, &e) == ONNXC_OK);
  int64_t na = 1;
  for (size_t d = 0; d < ar; d++) na *= ad[d];
  int64_t rows = na / K;
  float *a = malloc((size_t)na * sizeof *a);
  for (int64_t i = 0; i < na; i++) a[i] = aval(i);
  onnxc_value *in = onnxc_tensor_wrap(1, ad, ar, a, &e), *out = NULL;
  const char *names[1] = {"A"}, *outs[1] = {"Y"};
  if (s && onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) == ONNXC_OK) {
    const float *y = onnxc_tensor_data(out);
    CHECK(onnxc_tensor_rank(out) == ar && onnxc_tensor_dims(out)[ar - 1] == N);
    int bad = 0;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t n = 0; n < N; n++) {
        double want = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          double w = transposed ? wval(n * K + k) : wval(k * N + n);
          want += (double)a[r * K + k] * w;
          mag += fabs((double)a[r * K + k] * w);
        }
        if (fabs(y[r * N + n] - want) > 1e-5 * mag + 1e-6) bad++;
      }
    if (bad)
      fprintf(stderr, "%s rows %lld level %d threads %d: %d values off\n",
              transposed ? "transposed" : "plain", (long long)rows, level, threads, bad);
    CHECK(bad == 0);
    if (transposed && level >= 1) CHECK(profiled_nodes(s) == 1); /* no Transpose left */
  } else {
    fprintf(stderr, "run: %s\n", e.msg);
    fails++;
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  free(a);
  onnxc_session_free(s);
  onnxc_model_free(m);
  free(text);
}

int main(void) {
  const int64_t shapes[][3] = {{K, 0, 0}, {1, K, 0}, {3, K, 0}, {4, K, 0}, {5, K, 0}, {70, K, 0}};
  const size_t ranks[] = {1, 2, 2, 2, 2, 2};
  const int64_t batched[3] = {2, 3, K};
  for (int tr = 0; tr < 2; tr++)
    for (int level = 0; level <= 1; level++)
      for (int threads = 1; threads <= 2; threads++) {
        for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++)
          check(tr, shapes[i], ranks[i], level, threads);
        check(tr, batched, 3, level, threads);
      }
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("MatMul by constant weights (packed, and transposed in place) agrees\n");
  return fails != 0;
}
