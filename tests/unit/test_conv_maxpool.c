/* test_conv_maxpool.c - a stem convolution read only by a 3 x 3 stride-2
 * MaxPool runs as one FusedConv with max_pool (src/opt/conv_maxpool.c,
 * the stem-and-pool kernel of src/kernels/conv_stem_body.h). Each model is
 * checked against a double-precision convolution, activation and max pool
 * written out below (within 1e-5 relative), at optimisation levels 0 and 1
 * and 1 to 3 threads; at level 1 the outputs of every thread count must be
 * the same bits (each output row is computed by one thread, in one order).
 * The profile tells whether the MaxPool ran on its own: gone where the rule
 * applies (strides 1 and 2, kernels 3 x 3 to 7 x 7, one to three input
 * channels, output rows of one to seven vectors, two images), kept where
 * it does not (a padded MaxPool, eight input channels, the convolution's
 * output read twice). A FusedConv written with max_pool over eight input
 * channels takes the general path (the convolution, then the pool). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct cm_case {
  const char *name;
  int64_t n, c, h, w; /* X */
  int64_t m, k, s, p; /* W [m, c, k, k], stride s, pads p */
  bool relu;
  const char *pool_attrs; /* MaxPool's, after kernel_shape and strides */
  bool read_twice;        /* the convolution's output is also a graph output */
  bool fused_text;        /* written as ai.onnxc.FusedConv with max_pool */
  bool fused;             /* the MaxPool is gone at level 1 */
} cm_case;

static float xval(int64_t i) { return (float)((i * 53) % 31 - 15) / 16.0f; }
static float wval(int64_t i) { return (float)((i * 7) % 19 - 9) / 32.0f; }
static float bval(int64_t i) { return (float)(i % 5) / 8.0f - 0.25f; }

static int64_t conv_out(const cm_case *c, int64_t in) { return (in + 2 * c->p - c->k) / c->s + 1; }

static size_t model_text(char *buf, size_t cap, const cm_case *c) {
  int64_t oh = conv_out(c, c->h), ow = conv_out(c, c->w);
  int k = snprintf(buf, cap,
                   "<ir_version: 8, opset_import: [\"\" : 13, \"ai.onnxc\" : 1]>\n"
                   "G (float[%lld,%lld,%lld,%lld] X) => (float[%lld,%lld,%lld,%lld] Y%s)\n"
                   "<float[%lld,%lld,%lld,%lld] W = {",
                   (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w,
                   (long long)c->n, (long long)c->m, (long long)((oh - 3) / 2 + 1),
                   (long long)((ow - 3) / 2 + 1), c->read_twice ? ", float C" : "", (long long)c->m,
                   (long long)c->c, (long long)c->k, (long long)c->k);
  for (int64_t i = 0; i < c->m * c->c * c->k * c->k; i++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%g", i ? "," : "", (double)wval(i));
  k += snprintf(buf + k, cap - (size_t)k, "}, float[%lld] B = {", (long long)c->m);
  for (int64_t i = 0; i < c->m; i++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%g", i ? "," : "", (double)bval(i));
  char conv[160];
  snprintf(conv, sizeof conv,
           "kernel_shape = [%lld, %lld], strides = [%lld, %lld], "
           "pads = [%lld, %lld, %lld, %lld]",
           (long long)c->k, (long long)c->k, (long long)c->s, (long long)c->s, (long long)c->p,
           (long long)c->p, (long long)c->p, (long long)c->p);
  if (c->fused_text)
    k += snprintf(buf + k, cap - (size_t)k,
                  "}> {\n  Y = ai.onnxc.FusedConv <%s, activation = \"%s\", max_pool = [3, 3, 2, "
                  "2]> (X, W, B)\n}\n",
                  conv, c->relu ? "Relu" : "none");
  else
    k += snprintf(buf + k, cap - (size_t)k,
                  "}> {\n  %s = Conv <%s> (X, W, B)\n%s"
                  "  Y = MaxPool <kernel_shape = [3, 3], strides = [2, 2]%s> (C)\n}\n",
                  c->relu ? "A" : "C", conv, c->relu ? "  C = Relu (A)\n" : "", c->pool_attrs);
  return (size_t)k;
}

/* Y in double: the convolution, Relu, then the max pool (pads of the
 * MaxPool taken as -inf) */
static double *reference(const cm_case *c, int64_t pad, int64_t *ph, int64_t *pw) {
  int64_t oh = conv_out(c, c->h), ow = conv_out(c, c->w);
  *ph = (oh + 2 * pad - 3) / 2 + 1;
  *pw = (ow + 2 * pad - 3) / 2 + 1;
  double *y = malloc((size_t)(c->n * c->m * oh * ow) * sizeof *y);
  double *z = malloc((size_t)(c->n * c->m * *ph * *pw) * sizeof *z);
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t m = 0; m < c->m; m++)
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          double acc = bval(m);
          for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t a = 0; a < c->k; a++)
              for (int64_t b = 0; b < c->k; b++) {
                int64_t r = i * c->s - c->p + a, q = j * c->s - c->p + b;
                if (r < 0 || r >= c->h || q < 0 || q >= c->w) continue;
                acc += (double)xval(((n * c->c + ch) * c->h + r) * c->w + q) *
                       (double)wval(((m * c->c + ch) * c->k + a) * c->k + b);
              }
          y[((n * c->m + m) * oh + i) * ow + j] = c->relu && acc < 0 ? 0 : acc;
        }
  for (int64_t p = 0; p < c->n * c->m; p++)
    for (int64_t i = 0; i < *ph; i++)
      for (int64_t j = 0; j < *pw; j++) {
        double best = -INFINITY;
        for (int64_t a = 0; a < 3; a++)
          for (int64_t b = 0; b < 3; b++) {
            int64_t r = 2 * i - pad + a, q = 2 * j - pad + b;
            if (r >= 0 && r < oh && q >= 0 && q < ow && y[(p * oh + r) * ow + q] > best)
              best = y[(p * oh + r) * ow + q];
          }
        z[(p * *ph + i) * *pw + j] = best;
      }
  free(y);
  return z;
}

static onnxc_session *open_at(const char *text, size_t len, int level, int threads,
                              onnxc_model **m) {
  onnxc_error e;
  if (onnxc_model_parse_text(text, len, "conv_maxpool", m, &e) != ONNXC_OK) {
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

/* the MaxPool ran as a node of its own */
static bool ran_max_pool(onnxc_session *s) {
  char *prof = onnxc_session_profile(s);
  bool yes = prof && strstr(prof, "\nMaxPool ") != NULL;
  free(prof);
  return yes;
}

/* Y of one run compared with the reference; a copy of Y in *keep */
static void run_check(const cm_case *c, onnxc_session *s, const double *ref, int64_t numel,
                      float **keep) {
  int64_t dims[4] = {c->n, c->c, c->h, c->w}, nx = c->n * c->c * c->h * c->w;
  float *x = malloc((size_t)nx * sizeof *x);
  for (int64_t i = 0; i < nx; i++) x[i] = xval(i);
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, dims, 4, x, &e), *out = NULL;
  const char *names[1] = {"X"}, *outs[1] = {"Y"};
  int rc = onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e);
  if (rc != ONNXC_OK) fprintf(stderr, "%s: run: %s\n", c->name, e.msg);
  CHECK(rc == ONNXC_OK);
  if (rc == ONNXC_OK) {
    CHECK(onnxc_tensor_numel(out) == numel);
    const float *y = onnxc_tensor_data(out);
    int bad = 0;
    for (int64_t i = 0; i < numel && onnxc_tensor_numel(out) == numel; i++)
      bad += !(fabs((double)y[i] - ref[i]) <= 1e-5 * (1.0 + fabs(ref[i])));
    if (bad) fprintf(stderr, "%s: %d of %lld values off\n", c->name, bad, (long long)numel);
    CHECK(bad == 0);
    *keep = malloc((size_t)numel * sizeof **keep);
    memcpy(*keep, y, (size_t)numel * sizeof **keep);
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  free(x);
}

static void check_case(const cm_case *c) {
  static char text[1 << 17];
  size_t len = model_text(text, sizeof text, c);
  int64_t pad = strstr(c->pool_attrs, "pads") ? 1 : 0, ph, pw;
  double *ref = reference(c, pad, &ph, &pw);
  int64_t numel = c->n * c->m * ph * pw;
  float *first = NULL;
  for (int level = 0; level <= 1; level++)
    for (int threads = 1; threads <= 3; threads++) {
      onnxc_model *m = NULL;
      onnxc_session *s = open_at(text, len, level, threads, &m);
      CHECK(s != NULL);
      if (!s) continue;
      float *y = NULL;
      run_check(c, s, ref, numel, &y);
      if (level == 1 && y && !first) {
        first = y;
        y = NULL;
      } else if (level == 1 && y && first) {
        bool same = memcmp(first, y, (size_t)numel * sizeof *y) == 0;
        if (!same) fprintf(stderr, "%s: %d threads differ from one\n", c->name, threads);
        CHECK(same);
      }
      free(y);
      if (!c->fused_text) {
        bool alone = ran_max_pool(s), want = level == 0 || !c->fused;
        if (alone != want)
          fprintf(stderr, "%s (level %d): the MaxPool %s\n", c->name, level,
                  alone ? "ran" : "went");
        CHECK(alone == want);
      }
      onnxc_session_free(s);
      onnxc_model_free(m);
    }
  free(first);
  free(ref);
}

int main(void) {
  static const cm_case cases[] = {
      /* SqueezeNet's stem, smaller: 3 x 3 stride 2, 10 channels (a part block of 8) */
      {"3x3 s2 Relu", 1, 3, 23, 29, 10, 3, 2, 0, true, "", false, false, true},
      /* stride 1, padded 5 x 5, two images, no activation, rows of 7 vectors */
      {"5x5 s1 two images", 2, 3, 17, 110, 16, 5, 1, 2, false, "", false, false, true},
      /* ResNet's stem geometry on one channel, an even output height */
      {"7x7 s2 one channel", 1, 1, 40, 41, 8, 7, 2, 3, true, "", false, false, true},
      /* the smallest output: 3 x 3 */
      {"3 x 3 output", 1, 2, 5, 5, 9, 3, 1, 0, true, "", false, false, true},
      /* not fused: a padded MaxPool, eight input channels, Y read twice */
      {"padded pool", 1, 3, 23, 29, 10, 3, 2, 0, true, ", pads = [1, 1, 1, 1]", false, false,
       false},
      {"eight channels", 1, 8, 15, 15, 10, 3, 1, 1, true, "", false, false, false},
      {"read twice", 1, 3, 23, 29, 10, 3, 2, 0, false, "", true, false, false},
      /* written fused over eight channels: the convolution, then the pool */
      {"FusedConv general path", 1, 8, 15, 17, 12, 3, 1, 1, true, "", false, true, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
  /* another window is refused when the session is made, saying so */
  static const char bad[] =
      "<ir_version: 8, opset_import: [\"\" : 13, \"ai.onnxc\" : 1]>\n"
      "G (float[1,1,9,9] X) => (float Y)\n<float[1,1,3,3] W = {1,2,3,4,5,6,7,8,9}> {\n"
      "  Y = ai.onnxc.FusedConv <kernel_shape = [3, 3], max_pool = [2, 2, 2, 2]> (X, W)\n}\n";
  onnxc_model *m = NULL;
  onnxc_error e;
  CHECK(onnxc_model_parse_text(bad, strlen(bad), "bad", &m, &e) == ONNXC_OK);
  if (m) {
    onnxc_session *s = NULL;
    onnxc_session_options o = {0};
    int rc = onnxc_session_create(m, &o, &s, &e);
    CHECK(rc != ONNXC_OK && strstr(e.msg, "max_pool") != NULL);
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
