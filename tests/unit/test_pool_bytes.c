/* test_pool_bytes.c - 2-D MaxPool of uint8 and int8 tensors (src/ops/pool.c
 * pools the bytes themselves) against the same MaxPool on the values as
 * float (the conformance-checked float path): kernels 1 to 4, strides 1 to
 * 3, dilations, pads, ceil_mode, windows that lie partly outside the image,
 * the extremes of each type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct pcase {
  int k, s, d, pad, ceil;
  int H, W;
} pcase;

static uint32_t rng = 77;
static uint8_t next_byte(void) {
  rng = rng * 1664525u + 1013904223u;
  return (uint8_t)(rng >> 24);
}

/* MaxPool of X (type t) by the case, output Y */
static onnxc_value *pool(const pcase *c, const char *t, int32_t dt, const void *x, int64_t C) {
  char text[1024];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 12]>\n"
           "p (%s[1,%lld,%d,%d] X) => (%s Y) {\n"
           "  Y = MaxPool <kernel_shape = [%d, %d], strides = [%d, %d], dilations = [%d, %d], "
           "pads = [%d, %d, %d, %d], ceil_mode = %d> (X)\n}\n",
           t, (long long)C, c->H, c->W, t, c->k, c->k, c->s, c->s, c->d, c->d, c->pad, c->pad,
           c->pad, c->pad, c->ceil);
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_error e;
  onnxc_value *out = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "p", &m, &e) != ONNXC_OK ||
      onnxc_session_create(m, NULL, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "%s\n%s", e.msg, text);
    fails++;
  } else {
    int64_t dims[4] = {1, C, c->H, c->W};
    onnxc_value *in = onnxc_tensor_wrap(dt, dims, 4, (void *)x, &e);
    const char *names[1] = {"X"}, *outs[1] = {"Y"};
    if (onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
      fprintf(stderr, "run: %s\n", e.msg);
      fails++;
    }
    onnxc_value_free(in);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  return out;
}

int main(void) {
  const pcase cases[] = {{3, 2, 1, 1, 0, 112, 112}, {2, 2, 1, 0, 0, 9, 7},  {3, 1, 1, 1, 0, 5, 6},
                         {3, 3, 2, 2, 1, 17, 13},   {4, 2, 1, 3, 1, 8, 11}, {1, 1, 1, 0, 0, 3, 4},
                         {3, 2, 1, 0, 1, 10, 10},   {2, 3, 3, 1, 0, 14, 19}};
  const int64_t C = 3;
  int checked = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int sgn = 0; sgn < 2; sgn++) {
      const pcase *c = &cases[i];
      int64_t n = C * c->H * c->W;
      uint8_t *x = malloc((size_t)n);
      float *xf = malloc((size_t)n * sizeof *xf);
      for (int64_t j = 0; j < n; j++) {
        /* the type's extremes now and then */
        x[j] = j % 17 == 0 ? 0 : j % 19 == 0 ? 255 : j % 23 == 0 ? 0x80 : next_byte();
        xf[j] = sgn ? (float)(int8_t)x[j] : (float)x[j];
      }
      onnxc_value *yb = pool(c, sgn ? "int8" : "uint8", sgn ? 3 : 2, x, C);
      onnxc_value *yf = pool(c, "float", 1, xf, C);
      if (yb && yf) {
        int64_t m = 1;
        for (size_t d = 0; d < onnxc_tensor_rank(yb); d++) m *= onnxc_tensor_dims(yb)[d];
        CHECK(onnxc_tensor_rank(yb) == onnxc_tensor_rank(yf));
        const uint8_t *b = onnxc_tensor_data(yb);
        const float *f = onnxc_tensor_data(yf);
        int bad = 0;
        for (int64_t j = 0; j < m; j++)
          if ((sgn ? (float)(int8_t)b[j] : (float)b[j]) != f[j]) bad++;
        if (bad)
          fprintf(stderr, "case %zu %s: %d of %lld differ\n", i, sgn ? "int8" : "uint8", bad,
                  (long long)m);
        CHECK(bad == 0);
        checked++;
      }
      onnxc_value_free(yb);
      onnxc_value_free(yf);
      free(x);
      free(xf);
    }
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%d 8-bit max pools agree with the float path\n", checked);
  return fails != 0 || checked == 0;
}
