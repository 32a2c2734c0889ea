/* test_channel_shuffle.c - ShuffleNet's channel shuffle (Reshape, Transpose
 * (0, 2, 1, 3, 4), Reshape) read by a depthwise convolution becomes the
 * convolution reading X's channels where they lie (src/opt/channel_shuffle.c,
 * src/ops/conv_dw.c). Each model runs at optimisation level 0 (the nodes as
 * written: the Transpose copies) and 1; the outputs must be the same bits
 * (the same depthwise sums in the same order), every weight and bias
 * distinct per channel so that a wrong channel shows. The profile tells
 * whether the Transpose ran: gone where the rule applies (one and two
 * images, a FusedConv with a residual-free Relu epilogue), kept where it
 * does not (another perm, a shape with -1, the shuffled value read twice). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

static float xval(int64_t i) { return (float)((i * 53) % 31 - 15) / 16.0f; }

/* "... Transpose ..." line of the operator table present */
static bool ran_transpose(onnxc_session *s) {
  char *prof = onnxc_session_profile(s);
  bool yes = prof && strstr(prof, "\nTranspose ") != NULL;
  free(prof);
  return yes;
}

static onnxc_session *open_at(const char *text, int level, int threads, onnxc_model **m) {
  onnxc_error e;
  if (onnxc_model_parse_text(text, strlen(text), "shuffle", m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", e.msg);
    return NULL;
  }
  onnxc_session_options o = {0};
  o.threads = threads;
  o.optimization_level = level;
  o.profile = 1;
  onnxc_session *s = NULL;
  if (onnxc_session_create(*m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", e.msg);
    onnxc_model_free(*m);
    *m = NULL;
    return NULL;
  }
  return s;
}

/* Y of the model on X [N, C, H, W]; NULL after printing why */
static onnxc_value *run_once(onnxc_session *s, const int64_t *dims) {
  int64_t n = dims[0] * dims[1] * dims[2] * dims[3];
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = xval(i);
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, dims, 4, x, &e), *out = NULL;
  const char *names[1] = {"X"}, *outs[1] = {"Y"};
  if (onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", e.msg);
    out = NULL;
  }
  onnxc_value_free(in);
  free(x);
  return out;
}

/* The model text: X [N, C, H, W] -> Reshape s1 -> Transpose perm ->
 * Reshape s2 -> depthwise 3x3 Conv (W, B distinct per channel) [-> Relu],
 * with `extra` appended inside the graph. */
static void model_text(char *buf, size_t cap, const int64_t *d, const char *s1, const char *perm,
                       bool relu, const char *extra, const char *outs) {
  int64_t C = d[1];
  int k =
      snprintf(buf, cap,
               "<ir_version: 8, opset_import: [\"\" : 13]>\n"
               "G (float[%lld,%lld,%lld,%lld] X) => (%s)\n<float[%lld,1,3,3] W = {",
               (long long)d[0], (long long)C, (long long)d[2], (long long)d[3], outs, (long long)C);
  for (int64_t i = 0; i < C * 9; i++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%g", i ? "," : "", (double)((i * 7) % 19 - 9) / 8.0);
  k += snprintf(buf + k, cap - (size_t)k, "}, float[%lld] B = {", (long long)C);
  for (int64_t i = 0; i < C; i++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%g", i ? "," : "", (double)i / 4.0 - 1.0);
  k += snprintf(buf + k, cap - (size_t)k,
                "}, int64[5] s1 = {%s}, int64[4] s2 = {%lld,%lld,%lld,%lld}> {\n"
                "  a = Reshape (X, s1)\n  t = Transpose <perm = [%s]> (a)\n"
                "  r = Reshape (t, s2)\n"
                "  %s = Conv <group = %lld, kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (r, W, "
                "B)\n%s%s}\n",
                s1, (long long)d[0], (long long)C, (long long)d[2], (long long)d[3], perm,
                relu ? "c" : "Y", (long long)C, relu ? "  Y = Relu (c)\n" : "", extra);
}

static void check_case(const char *name, const char *text, const int64_t *dims, int threads,
                       bool want_fused) {
  onnxc_model *m0 = NULL, *m1 = NULL;
  onnxc_session *s0 = open_at(text, 0, threads, &m0), *s1 = open_at(text, 1, threads, &m1);
  CHECK(s0 && s1);
  if (s0 && s1) {
    for (int r = 0; r < 2; r++) {
      onnxc_value *y0 = run_once(s0, dims), *y1 = run_once(s1, dims);
      CHECK(y0 && y1);
      if (y0 && y1) {
        int64_t n = onnxc_tensor_numel(y0);
        CHECK(onnxc_tensor_numel(y1) == n);
        const float *a = onnxc_tensor_data(y0), *b = onnxc_tensor_data(y1);
        int bad = 0;
        for (int64_t i = 0; i < n && onnxc_tensor_numel(y1) == n; i++)
          bad += memcmp(&a[i], &b[i], sizeof *a) != 0;
        if (bad) fprintf(stderr, "%s (threads %d): %d values differ\n", name, threads, bad);
        CHECK(bad == 0);
      }
      onnxc_value_free(y0);
      onnxc_value_free(y1);
    }
    CHECK(ran_transpose(s0));
    bool fused = !ran_transpose(s1);
    if (fused != want_fused)
      fprintf(stderr, "%s: the Transpose %s\n", name, fused ? "went" : "stayed");
    CHECK(fused == want_fused);
  }
  onnxc_session_free(s0);
  onnxc_session_free(s1);
  onnxc_model_free(m0);
  onnxc_model_free(m1);
}

typedef struct shuffle_case {
  const char *name;
  int64_t dims[4];
  const char *s1, *perm;
  bool relu;
  const char *extra, *outs;
  bool fused; /* the rule applies */
} shuffle_case;

int main(void) {
  static char text[65536];
  static const shuffle_case cases[] = {
      {"g=3 one image",
       {1, 12, 7, 9},
       "1,3,4,7,9",
       "0, 2, 1, 3, 4",
       false,
       "",
       "float[1,12,7,9] Y",
       true},
      {"g=4 two images, Relu",
       {2, 24, 5, 6},
       "2,4,6,5,6",
       "0, 2, 1, 3, 4",
       true,
       "",
       "float[2,24,5,6] Y",
       true},
      /* not the shuffle: another perm */
      {"other perm",
       {1, 12, 7, 9},
       "1,3,4,7,9",
       "0, 1, 2, 4, 3",
       false,
       "",
       "float[1,12,7,9] Y",
       false},
      /* a shape with -1 */
      {"shape with -1",
       {1, 12, 7, 9},
       "1,3,-1,7,9",
       "0, 2, 1, 3, 4",
       false,
       "",
       "float[1,12,7,9] Y",
       false},
      /* the shuffled value read by another node too */
      {"shuffled value read twice",
       {1, 12, 7, 9},
       "1,3,4,7,9",
       "0, 2, 1, 3, 4",
       false,
       "  Z = Neg (r)\n",
       "float[1,12,7,9] Y, float[1,12,7,9] Z",
       false},
  };
  for (int threads = 1; threads <= 2; threads++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      const shuffle_case *c = &cases[i];
      model_text(text, sizeof text, c->dims, c->s1, c->perm, c->relu, c->extra, c->outs);
      check_case(c->name, text, c->dims, threads, c->fused);
    }
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
