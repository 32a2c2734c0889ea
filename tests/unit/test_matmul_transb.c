/* test_matmul_transb.c - MatMul(A, Transpose(B)) with the Transpose swapping
 * B's last two axes, B not a constant (attention's q k^T), fused into
 * MatMulTransBFused (src/opt/matmul_transb.c, src/ops/matmul.c): through
 * the public API, against a double-precision product computed here from
 * the same values, for float, double, float16 and int32, ranks 2 to 4,
 * batch axes that broadcast (B's batch of 1 against A's), one-row A (decode)
 * and a 1-D A. At level 1 the profile must show MatMulTransBFused and no
 * Transpose; at level 0 the nodes run as written. A Transpose whose output
 * is read again stays; a perm that is not the swap is not fused. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

typedef struct tcase {
  const char *name;
  const char *type; /* float double float16 int32 */
  int32_t dt;       /* its ONNX number */
  size_t ar, br;
  int64_t ad[4], bd[4]; /* B as stored: [..., N, K] */
  const char *perm;
  int variant; /* 0 fused; 1 the Transpose's output is also an output; 2 perm not the swap */
} tcase;

static double val(int64_t i, int salt) { return (double)((i * (37 + salt) % 23) - 11) / 8.0; }

static void put(void *p, int32_t dt, int64_t i, double v) {
  if (dt == 1) ((float *)p)[i] = (float)v;
  if (dt == 11) ((double *)p)[i] = v;
  if (dt == 6) ((int32_t *)p)[i] = (int32_t)(v * 8);
  if (dt == 10) { /* float16 of a multiple of 1/8 in [-11/8, 11/8]: exact */
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h = 0;
    if (f != 0.0f) {
      int ex = (int)((u >> 23) & 255) - 127 + 15;
      h = (uint16_t)((u >> 16 & 0x8000) | (uint32_t)ex << 10 | (u >> 13 & 0x3FF));
    }
    ((uint16_t *)p)[i] = h;
  }
}

static double get(const void *p, int32_t dt, int64_t i) {
  if (dt == 1) return ((const float *)p)[i];
  if (dt == 11) return ((const double *)p)[i];
  if (dt == 6) return ((const int32_t *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  int ex = h >> 10 & 31, mant = h & 0x3FF;
  double m = ex ? (1.0 + mant / 1024.0) * ldexp(1.0, ex - 15) : mant / 1024.0 * ldexp(1.0, -14);
  return h & 0x8000 ? -m : m;
}

static int64_t numel(const int64_t *d, size_t r) {
  int64_t n = 1;
  for (size_t i = 0; i < r; i++) n *= d[i];
  return n;
}

static void dims_text(char *buf, size_t cap, const int64_t *d, size_t r) {
  buf[0] = 0;
  for (size_t i = 0; i < r; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%lld", i ? "," : "", (long long)d[i]);
}

static void check(const tcase *c, int level) {
  char ad[64], bd[64], text[1024];
  dims_text(ad, sizeof ad, c->ad, c->ar);
  dims_text(bd, sizeof bd, c->bd, c->br);
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 17]>\n"
           "tb (%s[%s] A, %s[%s] B) => (%s Y%s) {\n"
           "  bt = Transpose <perm = %s> (B)\n  Y = MatMul (A, bt)\n}\n",
           c->type, ad, c->type, bd, c->type, c->variant == 1 ? ", " : "", c->perm);
  if (c->variant == 1) /* bt is an output too */
    snprintf(text, sizeof text,
             "<ir_version: 8, opset_import: [\"\" : 17]>\n"
             "tb (%s[%s] A, %s[%s] B) => (%s Y, %s bt) {\n"
             "  bt = Transpose <perm = %s> (B)\n  Y = MatMul (A, bt)\n}\n",
             c->type, ad, c->type, bd, c->type, c->type, c->perm);
  onnxc_model *m = NULL;
  onnxc_error e;
  onnxc_session *s = NULL;
  if (onnxc_model_parse_text(text, strlen(text), c->name, &m, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: parse: %s\n%s", c->name, e.msg, text);
    fails++;
    return;
  }
  onnxc_session_options o = {0};
  o.optimization_level = level;
  o.profile = 1;
  o.threads = 2;
  CHECK(onnxc_session_create(m, &o, &s, &e) == ONNXC_OK);
  int64_t na = numel(c->ad, c->ar), nb = numel(c->bd, c->br);
  void *a = calloc((size_t)na, 8), *b = calloc((size_t)nb, 8);
  for (int64_t i = 0; i < na; i++) put(a, c->dt, i, val(i, 0));
  for (int64_t i = 0; i < nb; i++) put(b, c->dt, i, val(i, 5));
  onnxc_value *in[2] = {onnxc_tensor_wrap(c->dt, c->ad, c->ar, a, &e),
                        onnxc_tensor_wrap(c->dt, c->bd, c->br, b, &e)};
  const char *names[2] = {"A", "B"}, *outs[1] = {"Y"};
  onnxc_value *out = NULL;
  if (s && onnxc_session_run(s, names, in, 2, outs, &out, 1, &e) == ONNXC_OK) {
    /* the product here: B's last two axes are N, K; batch axes broadcast */
    /* with perm [1, 2, 0] (variant 2) B is [N, batch, K] */
    int64_t K = c->ad[c->ar - 1], N = c->variant == 2 ? c->bd[0] : c->bd[c->br - 2];
    int64_t M = c->ar > 1 ? c->ad[c->ar - 2] : 1;
    int64_t nbat = numel(onnxc_tensor_dims(out), onnxc_tensor_rank(out)) / (M * N);
    int64_t abat = na / (M * K), bbat = nb / (N * K);
    const void *y = onnxc_tensor_data(out);
    int bad = 0;
    for (int64_t t = 0; t < nbat; t++)
      for (int64_t r = 0; r < M; r++)
        for (int64_t n = 0; n < N; n++) {
          double want = 0, mag = 0;
          for (int64_t k = 0; k < K; k++) {
            int64_t bi =
                c->variant == 2 ? (n * c->bd[1] + t) * K + k : (t % bbat) * N * K + n * K + k;
            double p = get(a, c->dt, (t % abat) * M * K + r * K + k) * get(b, c->dt, bi);
            want += p;
            mag += fabs(p);
          }
          double got = get(y, c->dt, (t * M + r) * N + n);
          double tol = c->dt == 6 ? 0 : c->dt == 10 ? 1e-3 * mag + 1e-3 : 1e-6 * mag + 1e-9;
          if (fabs(got - want) > tol) bad++;
        }
    if (bad) fprintf(stderr, "%s level %d: %d values off\n", c->name, level, bad);
    CHECK(bad == 0);
    char *prof = onnxc_session_profile(s);
    bool fused = prof && strstr(prof, "MatMulTransBFused"),
         transpose = prof && strstr(prof, "Transpose");
    if (level == 0 || c->variant == 2) CHECK(!fused && transpose);
    if (level == 1 && c->variant == 0) CHECK(fused && !transpose);
    if (level == 1 && c->variant == 1) CHECK(fused && transpose);
    if (level == 1 && c->variant != 2 && !fused)
      fprintf(stderr, "%s: not fused\n%s", c->name, prof);
    free(prof);
  } else {
    fprintf(stderr, "%s level %d: run: %s\n", c->name, level, e.msg);
    fails++;
  }
  onnxc_value_free(out);
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  free(a);
  free(b);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

int main(void) {
  const tcase cases[] = {
      {"scores 4-D", "float", 1, 4, 4, {1, 12, 1, 64}, {1, 12, 128, 64}, "[0, 1, 3, 2]", 0},
      {"scores several rows", "float", 1, 4, 4, {2, 3, 17, 40}, {2, 3, 33, 40}, "[0, 1, 3, 2]", 0},
      {"B batch broadcast", "float", 1, 4, 4, {2, 3, 5, 8}, {1, 3, 7, 8}, "[0, 1, 3, 2]", 0},
      {"2-D input B", "float", 1, 2, 2, {6, 9}, {11, 9}, "[1, 0]", 0},
      {"1-D A", "float", 1, 1, 3, {9}, {4, 11, 9}, "[0, 2, 1]", 0},
      {"double", "double", 11, 3, 3, {2, 5, 7}, {2, 6, 7}, "[0, 2, 1]", 0},
      {"float16", "float16", 10, 3, 3, {2, 1, 16}, {2, 20, 16}, "[0, 2, 1]", 0},
      {"int32", "int32", 6, 3, 3, {3, 4, 5}, {3, 6, 5}, "[0, 2, 1]", 0},
      {"Transpose also read", "float", 1, 3, 3, {2, 4, 5}, {2, 6, 5}, "[0, 2, 1]", 1},
      {"perm not the swap", "float", 1, 3, 3, {2, 5, 4}, {3, 2, 4}, "[1, 2, 0]", 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    for (int level = 0; level <= 1; level++) check(&cases[i], level);
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%zu transposed products: fused and as written agree with the reference\n",
           sizeof cases / sizeof *cases);
  return fails != 0;
}
