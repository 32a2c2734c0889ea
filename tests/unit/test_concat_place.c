/* test_concat_place.c - Concat in place (src/runtime/concat_place.c): from a
 * session's second run on, the producers of a Concat's inputs write into the
 * Concat's output. Every run's outputs are checked against values computed
 * here from the operators' definitions (exact: small integer weights and
 * inputs in eighths), and the profile's count of inputs found in place is
 * checked too: all of them where the rules allow (a convolution pair, a chain
 * of Concats whose first is read again after the second, inputs read after
 * the Concat, the last axis), none where they forbid (an input that is a
 * graph output, one given twice, a view made by Reshape, a batch of two, a
 * range that is not a multiple of 64 bytes), and shapes that change between
 * runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

static float xval(int64_t i) { return (float)((i * 37) % 23 - 11) / 8.0f; }

/* "placed of total per run" from the profile, or -1 when the line is absent. */
static void placed_counts(onnxc_session *s, double *placed, double *total) {
  char *prof = onnxc_session_profile(s);
  const char *p = prof ? strstr(prof, "written in place by their producers: ") : NULL;
  *placed = *total = -1;
  if (p && sscanf(p, "written in place by their producers: %lf of %lf", placed, total) != 2)
    *placed = *total = -1;
  free(prof);
}

/* Runs s on X of the given dims; fills outs (freed by the caller). */
static int run(onnxc_session *s, const int64_t *dims, size_t rank, const char *const *out_names,
               onnxc_value **outs, size_t n_out, float **xout) {
  int64_t n = 1;
  for (size_t k = 0; k < rank; k++) n *= dims[k];
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = xval(i);
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, dims, rank, x, &e);
  const char *names[1] = {"X"};
  int rc = onnxc_session_run(s, names, &in, 1, out_names, outs, n_out, &e);
  if (rc != ONNXC_OK) fprintf(stderr, "run: %s\n", e.msg);
  onnxc_value_free(in);
  *xout = x;
  return rc;
}

static bool same(onnxc_value *v, const float *want, int64_t n) {
  if (!v || onnxc_tensor_numel(v) != n) return false;
  const float *y = onnxc_tensor_data(v);
  for (int64_t i = 0; i < n; i++)
    if (y[i] != want[i]) {
      fprintf(stderr, "  [%lld] = %g, expected %g\n", (long long)i, y[i], want[i]);
      return false;
    }
  return true;
}

/* ---- 1. two 1x1 convolutions (one with Relu) concatenated, spatial size
 * changing between runs */
static float w1(int o, int c) { return (float)((o * 3 + c * 5) % 7 - 3); }
static float w2(int o, int c) { return (float)((o * 5 + c * 2) % 5 - 2); }

static void conv_pair(int threads) {
  char text[16384];
  int k = snprintf(text, sizeof text,
                   "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                   "G (float[1,8,H,W] X) => (float[1,32,H,W] Y)\n<float[16,8,1,1] W1 = {");
  for (int o = 0; o < 16; o++)
    for (int c = 0; c < 8; c++)
      k += snprintf(text + k, sizeof text - k, "%s%g", o + c ? "," : "", w1(o, c));
  k += snprintf(text + k, sizeof text - k, "}, float[16,8,1,1] W2 = {");
  for (int o = 0; o < 16; o++)
    for (int c = 0; c < 8; c++)
      k += snprintf(text + k, sizeof text - k, "%s%g", o + c ? "," : "", w2(o, c));
  snprintf(text + k, sizeof text - k,
           "}> {\n  a = Conv (X, W1)\n  b0 = Conv (X, W2)\n  b = Relu (b0)\n"
           "  Y = Concat <axis = 1> (a, b)\n}\n");
  onnxc_model *m = NULL;
  onnxc_session *s = open_text_session("conv_pair", text, true, threads, &m);
  CHECK(s != NULL);
  if (!s) return;
  /* (h, w) per run, and whether the run before saw the same shape */
  const int64_t sizes[][2] = {{6, 6}, {6, 6}, {6, 6}, {4, 4}, {4, 4}, {5, 5}, {6, 6}, {6, 6}};
  const size_t n_sizes = sizeof sizes / sizeof *sizes;
  for (size_t r = 0; r < n_sizes; r++) {
    int64_t h = sizes[r][0], w = sizes[r][1], hw = h * w;
    int64_t dims[4] = {1, 8, h, w};
    const char *outs[1] = {"Y"};
    onnxc_value *y = NULL;
    float *x = NULL;
    onnxc_session_profile_reset(s);
    CHECK(run(s, dims, 4, outs, &y, 1, &x) == ONNXC_OK);
    float *want = malloc((size_t)(32 * hw) * sizeof *want);
    for (int o = 0; o < 32; o++)
      for (int64_t p = 0; p < hw; p++) {
        float acc = 0;
        for (int c = 0; c < 8; c++) acc += (o < 16 ? w1(o, c) : w2(o - 16, c)) * x[c * hw + p];
        want[o * hw + p] = o < 16 ? acc : acc > 0 ? acc : 0;
      }
    CHECK(same(y, want, 32 * hw));
    double placed, total;
    placed_counts(s, &placed, &total);
    bool repeat = r > 0 && sizes[r - 1][0] == h && sizes[r - 1][1] == w;
    CHECK(total == 2);
    CHECK(placed == (repeat ? 2 : 0));
    if (placed != (repeat ? 2 : 0))
      fprintf(stderr, "conv_pair run %zu (%lldx%lld): %g of %g placed\n", r, (long long)h,
              (long long)w, placed, total);
    free(want);
    free(x);
    onnxc_value_free(y);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* ---- 2. a chain: c2 = Concat(c1, d) with c1 = Concat(a, b) read again
 * after c2 (e), and a read after c1 (f) */
static void chain(int threads) {
  const char *text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "G (float[1,4,4,4] X) => (float[1,12,4,4] c2, float[1,8,4,4] e, "
      "float[1,4,4,4] f) {\n"
      "  a = Relu (X)\n  b = Neg (X)\n  c1 = Concat <axis = 1> (a, b)\n"
      "  d = Abs (X)\n  c2 = Concat <axis = 1> (c1, d)\n"
      "  e = Add (c1, c1)\n  f = Add (a, a)\n}\n";
  onnxc_model *m = NULL;
  onnxc_session *s = open_text_session("chain", text, true, threads, &m);
  CHECK(s != NULL);
  if (!s) return;
  for (int r = 0; r < 3; r++) {
    int64_t dims[4] = {1, 4, 4, 4};
    const char *outs[3] = {"c2", "e", "f"};
    onnxc_value *y[3] = {0};
    float *x = NULL;
    onnxc_session_profile_reset(s);
    CHECK(run(s, dims, 4, outs, y, 3, &x) == ONNXC_OK);
    float c2[192], e[128], f[64];
    for (int i = 0; i < 64; i++) {
      float relu = x[i] > 0 ? x[i] : 0;
      c2[i] = relu;
      c2[64 + i] = -x[i];
      c2[128 + i] = fabsf(x[i]);
      e[i] = 2 * relu;
      e[64 + i] = -2 * x[i];
      f[i] = 2 * relu;
    }
    CHECK(same(y[0], c2, 192));
    CHECK(same(y[1], e, 128));
    CHECK(same(y[2], f, 64));
    double placed, total;
    placed_counts(s, &placed, &total);
    CHECK(total == 4);
    CHECK(placed == (r ? 4 : 0));
    for (int k = 0; k < 3; k++) onnxc_value_free(y[k]);
    free(x);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* ---- 3. inputs that must be copied, and one Concat along the last axis */
typedef struct copy_case {
  const char *name, *text;
  int64_t dims[4];
  size_t rank;
  double placed; /* from the second run on */
  double total;
} copy_case;

/* expected output for the cases below (Y), computed from X */
static void copy_case_want(const copy_case *cc, const float *x, float *want, int64_t *n) {
  int64_t numel = 1;
  for (size_t k = 0; k < cc->rank; k++) numel *= cc->dims[k];
  if (strcmp(cc->name, "batch2") == 0) { /* Concat(Relu, Neg) on axis 1, two images */
    int64_t per = numel / 2;
    for (int b = 0; b < 2; b++)
      for (int64_t i = 0; i < per; i++) {
        float v = x[b * per + i];
        want[b * 2 * per + i] = v > 0 ? v : 0;
        want[b * 2 * per + per + i] = -v;
      }
    *n = 2 * numel;
    return;
  }
  if (strcmp(cc->name, "last_axis") == 0) { /* [1,1,1,16] + [1,1,1,16] */
    for (int64_t i = 0; i < numel; i++) {
      want[i] = x[i] > 0 ? x[i] : 0;
      want[numel + i] = -x[i];
    }
    *n = 2 * numel;
    return;
  }
  if (strcmp(cc->name, "unaligned") == 0) { /* [1,3,5,5] twice: 300-byte ranges */
    for (int64_t i = 0; i < numel; i++) {
      want[i] = x[i] > 0 ? x[i] : 0;
      want[numel + i] = -x[i];
    }
    *n = 2 * numel;
    return;
  }
  /* "forbidden": Concat(a graph output, b twice, Reshape of c) */
  for (int64_t i = 0; i < numel; i++) {
    want[i] = x[i] > 0 ? x[i] : 0;
    want[numel + i] = -x[i];
    want[2 * numel + i] = -x[i];
    want[3 * numel + i] = fabsf(x[i]);
  }
  *n = 4 * numel;
}

static void copy_cases(int threads) {
  const copy_case cases[] = {
      {"batch2",
       "<ir_version: 8, opset_import: [\"\" : 13]>\n"
       "G (float[2,4,4,4] X) => (float[2,8,4,4] Y) {\n"
       "  a = Relu (X)\n  b = Neg (X)\n  Y = Concat <axis = 1> (a, b)\n}\n",
       {2, 4, 4, 4},
       4,
       0,
       2},
      {"last_axis",
       "<ir_version: 8, opset_import: [\"\" : 13]>\n"
       "G (float[1,1,1,16] X) => (float[1,1,1,32] Y) {\n"
       "  a = Relu (X)\n  b = Neg (X)\n  Y = Concat <axis = -1> (a, b)\n}\n",
       {1, 1, 1, 16},
       4,
       2,
       2},
      {"unaligned",
       "<ir_version: 8, opset_import: [\"\" : 13]>\n"
       "G (float[1,3,5,5] X) => (float[1,6,5,5] Y) {\n"
       "  a = Relu (X)\n  b = Neg (X)\n  Y = Concat <axis = 1> (a, b)\n}\n",
       {1, 3, 5, 5},
       4,
       0,
       2},
      {"forbidden",
       "<ir_version: 8, opset_import: [\"\" : 13]>\n"
       "G (float[1,4,4,4] X) => (float[1,16,4,4] Y, float[1,4,4,4] a) {\n"
       "  a = Relu (X)\n  b = Neg (X)\n  c = Abs (X)\n  shape = Constant <value = int64[4] "
       "{1,4,4,4}> ()\n  r = Reshape (c, shape)\n"
       "  Y = Concat <axis = 1> (a, b, b, r)\n}\n",
       {1, 4, 4, 4},
       4,
       0,
       4},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    const copy_case *cc = &cases[ci];
    onnxc_model *m = NULL;
    onnxc_session *s = open_text_session(cc->name, cc->text, true, threads, &m);
    CHECK(s != NULL);
    if (!s) continue;
    for (int r = 0; r < 3; r++) {
      const char *outs[1] = {"Y"};
      onnxc_value *y = NULL;
      float *x = NULL;
      onnxc_session_profile_reset(s);
      CHECK(run(s, cc->dims, cc->rank, outs, &y, 1, &x) == ONNXC_OK);
      float want[512];
      int64_t n = 0;
      copy_case_want(cc, x, want, &n);
      CHECK(same(y, want, n));
      double placed, total;
      placed_counts(s, &placed, &total);
      double want_placed = r ? cc->placed : 0;
      /* a graph with no planned Concat prints no line */
      bool ok = (total == cc->total && placed == want_placed) || (cc->total == 0 && total < 0);
      if (!ok)
        fprintf(stderr, "%s run %d: %g of %g placed, expected %g of %g\n", cc->name, r, placed,
                total, want_placed, cc->total);
      CHECK(ok);
      free(x);
      onnxc_value_free(y);
    }
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
}

int main(void) {
  for (int threads = 1; threads <= 2; threads++) {
    conv_pair(threads);
    chain(threads);
    copy_cases(threads);
  }
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
