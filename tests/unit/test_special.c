/* test_special.c - the specialised operators (random, signal, string, image)
 * beyond what the conformance cases can check bit for bit.
 *
 *  - random: Philox4x32-10 against the known-answer vectors of its authors
 *    (Random123 kat_vectors); the conformance cases whose reference values
 *    come from numpy's generator (test_bernoulli*, test_training_dropout*),
 *    run on their own inputs and checked by shape, type, value set and
 *    statistics; large-sample moments of RandomNormal/Uniform(+Like),
 *    Bernoulli, Multinomial and training-mode Dropout; seeded runs repeat,
 *    unseeded ones differ;
 *  - signal: DFT of lengths 1..1000 (radix-2, direct and Bluestein paths),
 *    forward, inverse, one-sided both ways, against a direct long double sum
 *    written here; STFT with a complex signal;
 *  - string: Unicode case mapping, invalid UTF-8 and a bad regex as errors,
 *    splitting edge cases, TfIdfVectorizer with a string pool in IDF/TFIDF;
 *  - image: BMP/PNM variants encoded here from the reference decode of
 *    test_image_decoder_decode_bmp_rgb, and every conformance image stream
 *    cut short or corrupted, which must decode or give the empty [0, 0, C]
 *    tensor Operators.md prescribes, never crash (run under ASan by
 *    `make test`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_file.h"
#include "ops/registry.h"
#include "ops/opcore.h"
#include "ops/onnx/rng.h"
#include "proto/proto.h"
#include "runtime/session.h"
#include "text/text.h"

#ifndef ONNXC_TESTDATA_DIR
#define ONNXC_TESTDATA_DIR "../shared/testdata"
#endif

static int failures, cases_checked;

#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      printf("FAIL %s:%d: ", __func__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
      failures++;                                 \
    }                                             \
  } while (0)

/* ------------------------------------------------------------------ */
/* harness                                                              */

typedef struct prog {
  ox_model *m;
  ox_session *s;
  ox_err e;
} prog;

/* Parses ONNX text and creates a session; false (with p->e) on failure. */
static bool prog_open(prog *p, const char *text) {
  memset(p, 0, sizeof *p);
  p->m = ox_model_new();
  ox_model_proto *mp = NULL;
  if (!p->m || ox_text_parse_model(text, strlen(text), "test", p->m->arena, &mp, &p->e))
    return false;
  p->m->proto = mp;
  return ox_session_create(p->m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &p->s, &p->e) == 0;
}

static void prog_close(prog *p) {
  ox_session_free(p->s);
  ox_model_free(p->m);
}

/* Runs with inputs in graph order; outputs in graph order. */
static bool prog_run(prog *p, ox_value *const *in, size_t n_in, ox_value **out, size_t n_out) {
  const char *names[8];
  for (size_t i = 0; i < n_in; i++) names[i] = ox_session_input_name(p->s, i);
  memset(out, 0, n_out * sizeof *out);
  return ox_session_run(p->s, names, in, n_in, NULL, out, n_out, &p->e) == 0;
}

/* One-output model run: returns the output (caller unrefs) or NULL. */
static ox_value *run1(const char *text, ox_value *const *in, size_t n_in, char *err, size_t n) {
  prog p;
  ox_value *out = NULL;
  if (!prog_open(&p, text) || !prog_run(&p, in, n_in, &out, 1)) {
    snprintf(err, n, "%s", p.e.msg);
    out = NULL;
  }
  prog_close(&p);
  return out;
}

static ox_value *tensor(int32_t dt, const int64_t *dims, size_t rank, const void *data) {
  ox_value *v = ox_tensor_new(dt, dims, rank, NULL);
  if (v && data && v->numel) {
    if (dt == OX_STRING) {
      for (int64_t i = 0; i < v->numel; i++) {
        const char *s = ((const char *const *)data)[i];
        char *c = malloc(strlen(s) + 1);
        if (c) strcpy(c, s);
        ((char **)v->data)[i] = c;
      }
    } else {
      memcpy(v->data, data, v->nbytes);
    }
  }
  return v;
}

static ox_value *scalar_i64(int64_t x) { return tensor(OX_INT64, NULL, 0, &x); }

static double get(const ox_value *v, int64_t i) { return oc_get(v->data, v->dtype, i); }

/* Reads a file into malloc'd memory. */
static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
  if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *n = (size_t)sz;
  return b;
}

static ox_value *load_pb(const char *path) {
  size_t n;
  uint8_t *b = slurp(path, &n);
  if (!b) return NULL;
  ox_arena *a = ox_arena_new();
  ox_tensor *t = NULL;
  ox_err e = {0};
  ox_value *v = NULL;
  if (a && ox_pb_decode_tensor(b, n, a, &t, &e) == 0) v = ox_value_from_tensor_proto(t, false, &e);
  ox_arena_free(a);
  free(b);
  return v;
}

/* A conformance case: model, inputs and expected outputs. */
typedef struct ccase {
  prog p;
  ox_value *in[4], *want[4], *got[4];
  size_t n_in, n_out;
  bool ok;
} ccase;

static bool case_open(ccase *c, const char *name) {
  memset(c, 0, sizeof *c);
  char path[512];
  snprintf(path, sizeof path, "%s/node/%s/model.onnx", ONNXC_TESTDATA_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) return false; /* conformance data absent: nothing to check */
  fclose(f);
  ox_err e = {0};
  if (ox_api_model_load(path, NULL, &c->p.m, &e) ||
      ox_session_create(c->p.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &c->p.s, &c->p.e)) {
    CHECK(0, "%s: %s%s", name, e.msg, c->p.e.msg);
    return false;
  }
  for (size_t k = 0; k < 4; k++) {
    snprintf(path, sizeof path, "%s/node/%s/test_data_set_0/input_%zu.pb", ONNXC_TESTDATA_DIR, name,
             k);
    if ((c->in[k] = load_pb(path))) c->n_in = k + 1;
    snprintf(path, sizeof path, "%s/node/%s/test_data_set_0/output_%zu.pb", ONNXC_TESTDATA_DIR,
             name, k);
    if ((c->want[k] = load_pb(path))) c->n_out = k + 1;
  }
  c->ok = prog_run(&c->p, c->in, c->n_in, c->got, c->n_out);
  cases_checked++;
  CHECK(c->ok, "%s: %s", name, c->p.e.msg);
  for (size_t k = 0; c->ok && k < c->n_out; k++) {
    CHECK(c->got[k]->dtype == c->want[k]->dtype &&
              ox_shape_equal(c->got[k]->dims, c->got[k]->rank, c->want[k]->dims, c->want[k]->rank),
          "%s: output %zu type or shape differs", name, k);
  }
  return c->ok;
}

static void case_close(ccase *c) {
  for (size_t k = 0; k < 4; k++) {
    if (c->in[k]) ox_value_unref(c->in[k]);
    if (c->want[k]) ox_value_unref(c->want[k]);
    if (c->got[k]) ox_value_unref(c->got[k]);
  }
  prog_close(&c->p);
}

/* |count - n p| within z standard deviations of a binomial. */
static bool binomial_ok(double count, double n, double p, double z) {
  return fabs(count - n * p) <= z * sqrt(n * p * (1 - p)) + 1.0;
}

/* ------------------------------------------------------------------ */
/* random                                                               */

static void philox_kat(void) {
  static const uint32_t in[3][6] = {
      {0, 0, 0, 0, 0, 0},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0}};
  static const uint32_t out[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int k = 0; k < 3; k++) {
    uint32_t c[4] = {in[k][0], in[k][1], in[k][2], in[k][3]};
    ox_philox4x32_10(c, in[k][4], in[k][5]);
    CHECK(!memcmp(c, out[k], sizeof c), "Philox4x32-10 known answer %d", k);
  }
}

/* The conformance cases with numpy-generated reference values. */
static void random_conformance(void) {
  static const char *bern[] = {"test_bernoulli",          "test_bernoulli_double",
                               "test_bernoulli_expanded", "test_bernoulli_double_expanded",
                               "test_bernoulli_seed",     "test_bernoulli_seed_expanded"};
  for (size_t k = 0; k < sizeof bern / sizeof *bern; k++) {
    ccase c;
    if (case_open(&c, bern[k]) && c.n_out == 1) {
      const ox_value *x = c.in[0], *y = c.got[0];
      double ones = 0, psum = 0, pvar = 0;
      for (int64_t i = 0; i < y->numel; i++) {
        double v = get(y, i), p = get(x, i);
        CHECK(v == 0 || v == 1, "%s: element %lld = %g is not 0 or 1", bern[k], (long long)i, v);
        CHECK(p > 0 || v == 0, "%s: 1 drawn with p = 0", bern[k]);
        CHECK(p < 1 || v == 1, "%s: 0 drawn with p = 1", bern[k]);
        ones += v, psum += p, pvar += p * (1 - p);
      }
      CHECK(fabs(ones - psum) <= 4.5 * sqrt(pvar) + 1, "%s: %g ones, expected about %g", bern[k],
            ones, psum);
    }
    case_close(&c);
  }
  static const char *drop[] = {"test_training_dropout", "test_training_dropout_default",
                               "test_training_dropout_default_mask", "test_training_dropout_mask"};
  for (size_t k = 0; k < sizeof drop / sizeof *drop; k++) {
    ccase c;
    if (case_open(&c, drop[k])) {
      const ox_value *x = c.in[0], *y = c.got[0], *mask = c.n_out > 1 ? c.got[1] : NULL;
      double r = c.n_in > 1 ? get(c.in[1], 0) : 0.5, dropped = 0;
      for (int64_t i = 0; i < y->numel; i++) {
        double xv = get(x, i), yv = get(y, i), keep = xv / (1 - r);
        bool kept = fabs(yv - keep) <= 1e-5 * fabs(keep) + 1e-7;
        CHECK(kept || yv == 0, "%s: element %lld = %g is neither 0 nor x/(1-r) = %g", drop[k],
              (long long)i, yv, keep);
        bool m = mask ? get(mask, i) != 0 : yv != 0 || xv == 0;
        if (mask) CHECK(m == kept || xv == 0, "%s: mask disagrees at %lld", drop[k], (long long)i);
        dropped += !m;
      }
      CHECK(binomial_ok(dropped, (double)y->numel, r, 4.5), "%s: %g of %lld dropped, ratio %g",
            drop[k], dropped, (long long)y->numel, r);
    }
    case_close(&c);
  }
}

static void moments(const ox_value *y, double *mean, double *var) {
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < y->numel; i++) s += get(y, i);
  *mean = s / (double)y->numel;
  for (int64_t i = 0; i < y->numel; i++) s2 += (get(y, i) - *mean) * (get(y, i) - *mean);
  *var = s2 / (double)(y->numel - 1);
}

static void random_moments(void) {
  char err[1024];
  const double n = 200000;
  /* normal: mean 2, sd 3, as float, double and float16 */
  static const char *normal[] = {
      "<ir_version: 8, opset_import: [\"\" : 22]> g () => (float[200000] y) "
      "{ y = RandomNormal <shape = [200000], mean = 2.0, scale = 3.0, seed = 1.0> () }",
      "<ir_version: 8, opset_import: [\"\" : 1]> g () => (double[200000] y) "
      "{ y = RandomNormal <shape = [200000], mean = 2.0, scale = 3.0, dtype = 11> () }",
      "<ir_version: 8, opset_import: [\"\" : 22]> g (int32[400,500] x) => (float16[400,500] y) "
      "{ y = RandomNormalLike <mean = 2.0, scale = 3.0, dtype = 10, seed = 7.0> (x) }"};
  for (int k = 0; k < 3; k++) {
    int64_t d[2] = {400, 500};
    ox_value *x = k == 2 ? tensor(OX_INT32, d, 2, NULL) : NULL;
    ox_value *y = run1(normal[k], &x, x ? 1 : 0, err, sizeof err);
    CHECK(y, "normal %d: %s", k, err);
    if (y) {
      double m, v;
      moments(y, &m, &v);
      CHECK(y->numel == (int64_t)n, "normal %d: %lld elements", k, (long long)y->numel);
      CHECK(fabs(m - 2) < 5 * 3 / sqrt(n), "normal %d: mean %g", k, m);
      CHECK(fabs(v - 9) < 5 * 9 * sqrt(2 / n) + (k == 2 ? 0.02 : 0), "normal %d: variance %g", k,
            v);
      double beyond = 0; /* P(|z| > 2) = 0.0455 */
      for (int64_t i = 0; i < y->numel; i++) beyond += fabs(get(y, i) - 2) > 6;
      CHECK(binomial_ok(beyond, n, 0.0455, 5), "normal %d: %g beyond 2 sd", k, beyond);
      ox_value_unref(y);
    }
    if (x) ox_value_unref(x);
  }
  /* uniform on [-1, 3): range, mean 1, variance 16/12 */
  static const char *uniform[] = {
      "<ir_version: 8, opset_import: [\"\" : 22]> g () => (float[200000] y) "
      "{ y = RandomUniform <shape = [200000], low = -1.0, high = 3.0, seed = 3.0> () }",
      "<ir_version: 8, opset_import: [\"\" : 1]> g (double[200000] x) => (double[200000] y) "
      "{ y = RandomUniformLike <low = -1.0, high = 3.0> (x) }"};
  for (int k = 0; k < 2; k++) {
    int64_t d = 200000;
    ox_value *x = k == 1 ? tensor(OX_DOUBLE, &d, 1, NULL) : NULL;
    ox_value *y = run1(uniform[k], &x, x ? 1 : 0, err, sizeof err);
    CHECK(y, "uniform %d: %s", k, err);
    if (y) {
      double m, v, lo = 1e9, hi = -1e9;
      moments(y, &m, &v);
      for (int64_t i = 0; i < y->numel; i++) {
        lo = fmin(lo, get(y, i));
        hi = fmax(hi, get(y, i));
      }
      CHECK(lo >= -1 && hi < 3 && lo < -0.99 && hi > 2.99, "uniform %d: range [%g, %g]", k, lo, hi);
      CHECK(fabs(m - 1) < 5 * sqrt(16.0 / 12 / n), "uniform %d: mean %g", k, m);
      CHECK(fabs(v - 16.0 / 12) < 0.02, "uniform %d: variance %g", k, v);
      ox_value_unref(y);
    }
    if (x) ox_value_unref(x);
  }
  /* Bernoulli with p = 0.3 to bool */
  {
    int64_t d = 100000;
    ox_value *x = tensor(OX_FLOAT, &d, 1, NULL);
    for (int64_t i = 0; i < d; i++) ((float *)x->data)[i] = 0.3f;
    ox_value *y = run1(
        "<ir_version: 8, opset_import: [\"\" : 15]> g (float[100000] x) => (bool[100000] y) "
        "{ y = Bernoulli <dtype = 9, seed = 5.0> (x) }",
        &x, 1, err, sizeof err);
    CHECK(y && y->dtype == OX_BOOL, "bernoulli: %s", err);
    if (y) {
      double ones = 0;
      for (int64_t i = 0; i < d; i++) ones += get(y, i);
      CHECK(binomial_ok(ones, (double)d, 0.3, 5), "bernoulli: %g ones of %lld", ones, (long long)d);
      ox_value_unref(y);
    }
    ox_value_unref(x);
  }
  /* Multinomial: frequencies follow softmax(logits) per row */
  {
    int64_t d[2] = {2, 3};
    double pr[2][3] = {{0.1, 0.2, 0.7}, {0.5, 0.25, 0.25}};
    float lg[6];
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 3; c++) lg[r * 3 + c] = (float)log(pr[r][c]) + (float)r;
    ox_value *x = tensor(OX_FLOAT, d, 2, lg);
    ox_value *y = run1(
        "<ir_version: 8, opset_import: [\"\" : 7]> g (float[2,3] x) => (int64[2,30000] y) "
        "{ y = Multinomial <sample_size = 30000, dtype = 7, seed = 2.0> (x) }",
        &x, 1, err, sizeof err);
    CHECK(y && y->dtype == OX_INT64 && y->rank == 2 && y->dims[1] == 30000, "multinomial: %s", err);
    if (y) {
      for (int r = 0; r < 2; r++) {
        double cnt[3] = {0, 0, 0};
        bool range = true;
        for (int64_t s = 0; s < 30000; s++) {
          int64_t v = ((int64_t *)y->data)[r * 30000 + s];
          if (v < 0 || v > 2)
            range = false;
          else
            cnt[v]++;
        }
        CHECK(range, "multinomial: class out of range");
        for (int c = 0; c < 3; c++)
          CHECK(binomial_ok(cnt[c], 30000, pr[r][c], 5), "multinomial row %d class %d: %g", r, c,
                cnt[c]);
      }
      ox_value_unref(y);
    }
    ox_value_unref(x);
  }
}

static void random_repeat(void) {
  static const char *seeded =
      "<ir_version: 8, opset_import: [\"\" : 22]> g () => (float[1000] y) "
      "{ y = RandomUniform <shape = [1000], seed = 11.0> () }";
  static const char *unseeded =
      "<ir_version: 8, opset_import: [\"\" : 22]> g () => (float[1000] y) "
      "{ y = RandomNormal <shape = [1000]> () }";
  char err[1024];
  ox_value *a = run1(seeded, NULL, 0, err, sizeof err), *b = run1(seeded, NULL, 0, err, sizeof err);
  CHECK(a && b && !memcmp(a->data, b->data, a->nbytes), "a seeded RandomUniform must repeat");
  if (a) ox_value_unref(a);
  if (b) ox_value_unref(b);
  prog p;
  ox_value *r1 = NULL, *r2 = NULL;
  bool ok =
      prog_open(&p, unseeded) && prog_run(&p, NULL, 0, &r1, 1) && prog_run(&p, NULL, 0, &r2, 1);
  CHECK(ok, "unseeded: %s", p.e.msg);
  if (ok) CHECK(memcmp(r1->data, r2->data, r1->nbytes) != 0, "unseeded runs must differ");
  if (r1) ox_value_unref(r1);
  if (r2) ox_value_unref(r2);
  prog_close(&p);
}

/* Dropout: training statistics, and the masks of the old versions. */
static void dropout(void) {
  char err[1024];
  int64_t d = 100000;
  ox_value *in[3] = {tensor(OX_FLOAT, &d, 1, NULL), NULL, NULL};
  for (int64_t i = 0; i < d; i++) ((float *)in[0]->data)[i] = 1.0f;
  float r = 0.3f;
  uint8_t t = 1;
  in[1] = tensor(OX_FLOAT, NULL, 0, &r);
  in[2] = tensor(OX_BOOL, NULL, 0, &t);
  prog p;
  ox_value *out[2] = {0};
  bool ok = prog_open(&p,
                      "<ir_version: 8, opset_import: [\"\" : 13]> g (float[100000] x, float r, "
                      "bool t) => (float[100000] y, bool[100000] m) "
                      "{ y, m = Dropout <seed = 4> (x, r, t) }") &&
            prog_run(&p, in, 3, out, 2);
  CHECK(ok, "dropout: %s", p.e.msg);
  if (ok) {
    double dropped = 0;
    bool consistent = true;
    for (int64_t i = 0; i < d; i++) {
      float y = ((float *)out[0]->data)[i];
      uint8_t m = ((uint8_t *)out[1]->data)[i];
      dropped += !m;
      if (m ? fabsf(y - 1.0f / 0.7f) > 1e-6f : y != 0) consistent = false;
    }
    CHECK(consistent, "dropout: y is not mask * x / (1 - ratio)");
    CHECK(binomial_ok(dropped, (double)d, 0.3, 5), "dropout: %g dropped", dropped);
  }
  for (int k = 0; k < 2; k++)
    if (out[k]) ox_value_unref(out[k]);
  prog_close(&p);
  /* versions 7 (mask of type T) and 10 (bool mask): inference, all kept */
  static const char *old[] = {
      "<ir_version: 8, opset_import: [\"\" : 7]> g (float[100000] x) => (float[100000] y, "
      "float[100000] m) { y, m = Dropout <ratio = 0.2> (x) }",
      "<ir_version: 8, opset_import: [\"\" : 10]> g (float[100000] x) => (float[100000] y, "
      "bool[100000] m) { y, m = Dropout <ratio = 0.2> (x) }",
      "<ir_version: 3, opset_import: [\"\" : 6]> g (float[100000] x) => (float[100000] y) "
      "{ y = Dropout <is_test = 1> (x) }"};
  for (int k = 0; k < 3; k++) {
    ok = prog_open(&p, old[k]) && prog_run(&p, in, 1, out, k < 2 ? 2 : 1);
    CHECK(ok, "dropout old %d: %s", k, p.e.msg);
    if (ok) {
      CHECK(!memcmp(out[0]->data, in[0]->data, in[0]->nbytes), "dropout old %d: y != x", k);
      if (k < 2) {
        CHECK(out[1]->dtype == (k == 0 ? OX_FLOAT : OX_BOOL), "dropout old %d: mask type", k);
        bool ones = true;
        for (int64_t i = 0; i < d; i++) ones &= get(out[1], i) == 1;
        CHECK(ones, "dropout old %d: mask not all ones", k);
      }
    }
    for (int j = 0; j < 2; j++)
      if (out[j]) ox_value_unref(out[j]), out[j] = NULL;
    prog_close(&p);
  }
  for (int k = 0; k < 3; k++) ox_value_unref(in[k]);
  (void)err;
}

/* ------------------------------------------------------------------ */
/* signal                                                               */

static uint64_t lcg = 88172645463325252ull;
static double rnd(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(lcg >> 11) * 0x1.0p-53 * 2 - 1;
}

/* Direct DFT in long double: out[k] = sum_j x[j] e^{sign 2 pi i j k / n}. */
static void naive_dft(const double *x, size_t n, int sign, double *out) {
  const long double pi = 3.141592653589793238462643383279502884L;
  for (size_t k = 0; k < n; k++) {
    long double sr = 0, si = 0;
    for (size_t j = 0; j < n; j++) {
      long double a = sign * 2 * pi * (long double)((j * k) % n) / (long double)n;
      sr += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
      si += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
    }
    out[2 * k] = (double)sr;
    out[2 * k + 1] = (double)si;
  }
}

static void dft_lengths(void) {
  static const size_t lens[] = {1, 2, 7, 16, 60, 97, 128, 1000};
  char text[512], err[1024];
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    size_t n = lens[li];
    double *x = malloc(2 * n * sizeof *x), *want = malloc(2 * n * sizeof *want);
    for (size_t k = 0; k < 2 * n; k++) x[k] = rnd();
    for (int inv = 0; inv < 2; inv++) {
      snprintf(
          text, sizeof text,
          "<ir_version: 8, opset_import: [\"\" : 20]> g (double[2,%zu,2] x) => (double[2,%zu,2] "
          "y) { y = DFT <inverse = %d> (x) }",
          n, n, inv);
      int64_t d[3] = {2, (int64_t)n, 2};
      ox_value *xv = tensor(OX_DOUBLE, d, 3, NULL);
      for (size_t b = 0; b < 2; b++) memcpy((double *)xv->data + b * 2 * n, x, 2 * n * sizeof *x);
      ox_value *y = run1(text, &xv, 1, err, sizeof err);
      CHECK(y, "DFT n=%zu: %s", n, err);
      if (y) {
        naive_dft(x, n, inv ? 1 : -1, want);
        double worst = 0, scale = inv ? 1.0 / (double)n : 1.0;
        for (size_t b = 0; b < 2; b++)
          for (size_t k = 0; k < 2 * n; k++)
            worst = fmax(worst, fabs(((double *)y->data)[b * 2 * n + k] - want[k] * scale));
        CHECK(worst < 1e-11 * sqrt((double)n) * (inv ? 1.0 / (double)n : 1.0) * 10 + 1e-12,
              "DFT n=%zu inverse=%d: error %g", n, inv, worst);
        ox_value_unref(y);
      }
      ox_value_unref(xv);
    }
    free(x);
    free(want);
  }
}

/* Complex float32 data take the single-precision engine (src/ops/fft32.c):
 * every pass (2, 3, 4, 5, 7, 8, 11, a generic prime, Bluestein) against a
 * long-double DFT of the same float inputs. Bit-exact agreement with
 * numpy is checked by the conformance cases node/test_dft_inverse*. */
static void dft_float32(void) {
  static const size_t lens[] = {1,  2,  3,  4,  5,  7,  8,  10,  11,  13,  16,   26,  48,
                                60, 64, 77, 97, 101, 128, 243, 512, 1000, 1009, 2039, 4096};
  char text[512], err[1024];
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
    size_t n = lens[li];
    double *x = malloc(2 * n * sizeof *x), *want = malloc(2 * n * sizeof *want);
    for (size_t k = 0; k < 2 * n; k++) x[k] = (float)rnd();
    for (int inv = 0; inv < 2; inv++) {
      snprintf(text, sizeof text,
               "<ir_version: 8, opset_import: [\"\" : 20]> g (float[1,%zu,2] x) => (float[1,%zu,2] "
               "y) { y = DFT <inverse = %d> (x) }",
               n, n, inv);
      int64_t d[3] = {1, (int64_t)n, 2};
      ox_value *xv = tensor(OX_FLOAT, d, 3, NULL);
      for (size_t k = 0; k < 2 * n; k++) ((float *)xv->data)[k] = (float)x[k];
      ox_value *y = run1(text, &xv, 1, err, sizeof err);
      CHECK(y, "float DFT n=%zu: %s", n, err);
      if (y) {
        naive_dft(x, n, inv ? 1 : -1, want);
        double worst = 0, big = 0, scale = inv ? 1.0 / (double)n : 1.0;
        for (size_t k = 0; k < 2 * n; k++) {
          worst = fmax(worst, fabs(((float *)y->data)[k] - want[k] * scale));
          big = fmax(big, fabs(want[k] * scale));
        }
        /* single precision: a few ulps of the largest bin per pass */
        CHECK(worst <= 2e-6 * big * (1 + log2((double)n)),
              "float DFT n=%zu inverse=%d: error %g (largest bin %g)", n, inv, worst, big);
        ox_value_unref(y);
      }
      ox_value_unref(xv);
    }
    free(x);
    free(want);
  }
}

/* RFFT with dft_length padding, IRFFT with an odd length, DFT-17's axis
 * attribute, and the shape errors. */
static void dft_modes(void) {
  char err[1024];
  /* real signal of 5, zero padded to 9, one-sided: 5 bins */
  double sig[5] = {1, -2, 3.5, 0.25, 4}, full[18] = {0}, want[18];
  for (int k = 0; k < 5; k++) full[2 * k] = sig[k];
  naive_dft(full, 9, -1, want);
  int64_t d[3] = {1, 5, 1};
  ox_value *in[2] = {tensor(OX_DOUBLE, d, 3, sig), scalar_i64(9)};
  ox_value *y = run1(
      "<ir_version: 8, opset_import: [\"\" : 20]> g (double[1,5,1] x, int64 n) => (double[1,5,2] "
      "y) "
      "{ y = DFT <onesided = 1> (x, n) }",
      in, 2, err, sizeof err);
  CHECK(y && y->dims[1] == 5 && y->dims[2] == 2, "rfft: %s", err);
  if (y) {
    for (int k = 0; k < 10; k++)
      CHECK(fabs(((double *)y->data)[k] - want[k]) < 1e-12, "rfft bin %d", k / 2);
    /* and back: IRFFT of the 5 bins with n = 9 gives the padded signal */
    ox_value *in2[2] = {y, scalar_i64(9)};
    ox_value *z = run1(
        "<ir_version: 8, opset_import: [\"\" : 20]> g (double[1,5,2] x, int64 n) => (double[1,9,1] "
        "y) { y = DFT <onesided = 1, inverse = 1> (x, n) }",
        in2, 2, err, sizeof err);
    CHECK(z && z->dims[1] == 9 && z->dims[2] == 1, "irfft: %s", err);
    if (z)
      for (int k = 0; k < 9; k++)
        CHECK(fabs(((double *)z->data)[k] - (k < 5 ? sig[k] : 0)) < 1e-12, "irfft sample %d", k);
    if (z) ox_value_unref(z);
    ox_value_unref(in2[1]);
    ox_value_unref(y);
  }
  ox_value_unref(in[0]);
  ox_value_unref(in[1]);
  /* DFT-17 along axis 2 of [1, 2, 4, 1] (truncated to dft_length 3) */
  double m[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t d4[4] = {1, 2, 4, 1};
  ox_value *x4[2] = {tensor(OX_DOUBLE, d4, 4, m), scalar_i64(3)};
  y = run1(
      "<ir_version: 8, opset_import: [\"\" : 17]> g (double[1,2,4,1] x, int64 n) => "
      "(double[1,2,3,2] "
      "y) { y = DFT <axis = 2> (x, n) }",
      x4, 2, err, sizeof err);
  CHECK(y && y->dims[2] == 3, "DFT-17 axis 2: %s", err);
  if (y) {
    for (int r = 0; r < 2; r++) {
      double row[6] = {m[4 * r], 0, m[4 * r + 1], 0, m[4 * r + 2], 0}, w[6];
      naive_dft(row, 3, -1, w);
      for (int k = 0; k < 6; k++)
        CHECK(fabs(((double *)y->data)[6 * r + k] - w[k]) < 1e-12, "DFT-17 row %d value %d", r, k);
    }
    ox_value_unref(y);
  }
  ox_value_unref(x4[1]);
  /* the last axis (components) is not a valid DFT axis */
  y = run1(
      "<ir_version: 8, opset_import: [\"\" : 17]> g (double[1,2,4,1] x) => (double[1,2,4,2] y) "
      "{ y = DFT <axis = 3> (x) }",
      x4, 1, err, sizeof err);
  CHECK(!y && strstr(err, "axis"), "DFT axis 3 must fail: %s", err);
  if (y) ox_value_unref(y);
  ox_value_unref(x4[0]);
}

static void stft_complex(void) {
  char err[1024];
  double sig[2 * 2 * 12];
  for (int k = 0; k < 48; k++) sig[k] = rnd();
  int64_t d[3] = {2, 12, 2};
  float dummy = 0;
  (void)dummy;
  ox_value *in[2] = {tensor(OX_DOUBLE, d, 3, sig), scalar_i64(3)};
  ox_value *len = scalar_i64(5);
  ox_value *args[4] = {in[0], in[1], NULL, len};
  prog p;
  ox_value *y = NULL;
  /* frames = (12 - 5) / 3 + 1 = 3; onesided=0: 5 bins */
  bool ok = prog_open(&p,
                      "<ir_version: 8, opset_import: [\"\" : 17]> g (double[2,12,2] x, int64 s, "
                      "int64 l) => (double[2,3,5,2] y) { y = STFT <onesided = 0> (x, s, , l) }") &&
            prog_run(&p, (ox_value *[]){args[0], args[1], args[3]}, 3, &y, 1);
  CHECK(ok, "stft: %s", p.e.msg);
  if (ok) {
    CHECK(y->rank == 4 && y->dims[1] == 3 && y->dims[2] == 5, "stft shape");
    for (int b = 0; b < 2; b++)
      for (int f = 0; f < 3; f++) {
        double w[10];
        naive_dft(sig + (b * 12 + f * 3) * 2, 5, -1, w);
        for (int k = 0; k < 10; k++)
          CHECK(fabs(((double *)y->data)[((b * 3 + f) * 5) * 2 + k] - w[k]) < 1e-12,
                "stft b%d f%d value %d", b, f, k);
      }
    ox_value_unref(y);
  }
  prog_close(&p);
  ox_value_unref(in[0]);
  ox_value_unref(in[1]);
  ox_value_unref(len);
  (void)err;
}

/* ------------------------------------------------------------------ */
/* string                                                               */

static bool strings_are(const ox_value *v, const char *const *want, int64_t n) {
  if (!v || v->dtype != OX_STRING || v->numel != n) return false;
  for (int64_t i = 0; i < n; i++) {
    const char *s = ((char **)v->data)[i];
    if (strcmp(s ? s : "", want[i])) return false;
  }
  return true;
}

static void strings(void) {
  char err[1024];
  int64_t d4 = 4, d14[2] = {1, 2};
  /* Unicode case mapping; case-insensitive stopword with accents */
  const char *words[4] = {"\xc3\x89t\xc3\xa9", "Stra\303\237e", "\xc3\x80la", "\xce\xa3\xce\x9f"};
  ox_value *x = tensor(OX_STRING, &d4, 1, words);
  ox_value *y = run1(
      "<ir_version: 8, opset_import: [\"\" : 10]> g (string[4] x) => (string[M] y) "
      "{ y = StringNormalizer <case_change_action = \"LOWER\", stopwords = "
      "[\"\xc3\xa9t\xc3\xa9\"]> "
      "(x) }",
      &x, 1, err, sizeof err);
#ifdef ONNXC_HAVE_UTF8PROC
  const char *low[3] = {"stra\303\237e", "\xc3\xa0la", "\xcf\x83\xce\xbf"};
#else /* ASCII-only case mapping; the stopword does not match "\xc3\x89t\xc3\xa9" */
  const char *low[4] = {"\xc3\x89t\xc3\xa9", "stra\303\237e", "\xc3\x80la", "\xce\xa3\xce\x9f"};
#endif
  CHECK(strings_are(y, low, sizeof low / sizeof *low), "StringNormalizer LOWER: %s", err);
  if (y) ox_value_unref(y);
  ox_value_unref(x);
  /* [1, C] with every word a stopword: [1, 1] holding "" */
  const char *two[2] = {"a", "A"};
  x = tensor(OX_STRING, d14, 2, two);
  y = run1(
      "<ir_version: 8, opset_import: [\"\" : 10]> g (string[1,2] x) => (string[1,1] y) "
      "{ y = StringNormalizer <stopwords = [\"a\"]> (x) }",
      &x, 1, err, sizeof err);
  CHECK(y && y->rank == 2 && y->dims[0] == 1 && y->dims[1] == 1 &&
            strings_are(y, (const char *[]){""}, 1),
        "StringNormalizer all stopwords: %s", err);
  if (y) ox_value_unref(y);
  ox_value_unref(x);
  /* invalid UTF-8 is an error naming the node */
  const char *bad[2] = {"ok", "\xc3\x28"};
  x = tensor(OX_STRING, d14 + 1, 1, bad);
  y = run1(
      "<ir_version: 8, opset_import: [\"\" : 20]> g (string[2] x) => (string[2] y) "
      "{ y = StringConcat (x, x) }",
      &x, 1, err, sizeof err);
  CHECK(!y && strstr(err, "UTF-8") && strstr(err, "StringConcat"), "invalid UTF-8: %s", err);
  if (y) ox_value_unref(y);
  ox_value_unref(x);
  /* every string operator rejects invalid UTF-8 input (a truncated
   * sequence, an overlong form, a surrogate, a code point > U+10FFFF) */
  static const char *const bad_utf8[] = {"\xc3\x28", "\xc0\xaf", "\xed\xa0\x80",
                                         "\xf4\x90\x80\x80"};
  static const struct {
    const char *op, *text;
  } str_ops[] = {
      {"StringNormalizer", "<ir_version: 8, opset_import: [\"\" : 10]> g (string[2] x) => "
                           "(string[N] y) { y = StringNormalizer <case_change_action = \"UPPER\"> "
                           "(x) }"},
      {"StringConcat", "<ir_version: 8, opset_import: [\"\" : 20]> g (string[2] x) => "
                       "(string[2] y) { y = StringConcat (x, x) }"},
      {"StringSplit", "<ir_version: 8, opset_import: [\"\" : 20]> g (string[2] x) => "
                      "(string[2,N] y) { y, z = StringSplit (x) }"},
      {"RegexFullMatch", "<ir_version: 8, opset_import: [\"\" : 20]> g (string[2] x) => "
                         "(bool[2] y) { y = RegexFullMatch <pattern = \"o.*\"> (x) }"},
      {"TfIdfVectorizer",
       "<ir_version: 8, opset_import: [\"\" : 9]> g (string[2] x) => (float[1] y) "
       "{ y = TfIdfVectorizer <mode = \"TF\", min_gram_length = 1, max_gram_length = 1, "
       "max_skip_count = 0, ngram_counts = [0], ngram_indexes = [0], pool_strings = [\"ok\"]> "
       "(x) }"},
  };
  for (size_t o = 0; o < sizeof str_ops / sizeof *str_ops; o++)
    for (size_t b = 0; b < sizeof bad_utf8 / sizeof *bad_utf8; b++) {
      const char *pair[2] = {"ok", bad_utf8[b]};
      x = tensor(OX_STRING, d14 + 1, 1, pair);
      y = run1(str_ops[o].text, &x, 1, err, sizeof err);
      CHECK(!y && strstr(err, str_ops[o].op) && strstr(err, "UTF-8") && strstr(err, "element 1"),
            "%s with invalid UTF-8 #%zu: %s", str_ops[o].op, b, y ? "no error" : err);
      if (y) ox_value_unref(y);
      ox_value_unref(x);
    }
  /* a regex that does not compile is a clear error */
  prog p;
  CHECK(!prog_open(&p,
                   "<ir_version: 8, opset_import: [\"\" : 20]> g (string[2] x) => (bool[2] y) "
                   "{ y = RegexFullMatch <pattern = \"(ab\"> (x) }") &&
            strstr(p.e.msg, "RegexFullMatch") &&
#ifdef ONNXC_HAVE_PCRE2
            strstr(p.e.msg, "compile"),
#else
            strstr(p.e.msg, "PCRE2"),
#endif
        "bad regex: %s", p.e.msg);
  prog_close(&p);
  /* splitting: maxsplit with a delimiter, whitespace-only and empty strings */
  const char *sp[3] = {"a,b,,c", "   ", ""};
  int64_t d3 = 3;
  x = tensor(OX_STRING, &d3, 1, sp);
  ox_value *out[2];
  bool ok =
      prog_open(&p,
                "<ir_version: 8, opset_import: [\"\" : 20]> g (string[3] x) => (string[3,3] "
                "y, int64[3] z) { y, z = StringSplit <delimiter = \",\", maxsplit = 2> (x) }") &&
      prog_run(&p, &x, 1, out, 2);
  CHECK(ok, "StringSplit: %s", p.e.msg);
  if (ok) {
    const char *w[9] = {"a", "b", ",c", "   ", "", "", "", "", ""};
    CHECK(strings_are(out[0], w, 9), "StringSplit pieces");
    int64_t *z = out[1]->data;
    CHECK(z[0] == 3 && z[1] == 1 && z[2] == 1, "StringSplit counts");
    ox_value_unref(out[0]);
    ox_value_unref(out[1]);
  }
  prog_close(&p);
  ok = prog_open(&p,
                 "<ir_version: 8, opset_import: [\"\" : 20]> g (string[3] x) => (string[3,2] y, "
                 "int64[3] z) { y, z = StringSplit (x) }") &&
       prog_run(&p, &x, 1, out, 2);
  CHECK(ok, "StringSplit whitespace: %s", p.e.msg);
  if (ok) {
    const char *w[3] = {"a,b,,c", "", ""};
    CHECK(out[0]->dims[1] == 1 && strings_are(out[0], w, 3), "StringSplit whitespace pieces");
    int64_t *z = out[1]->data;
    CHECK(z[0] == 1 && z[1] == 0 && z[2] == 0, "StringSplit whitespace counts");
    ox_value_unref(out[0]);
    ox_value_unref(out[1]);
  }
  prog_close(&p);
  ox_value_unref(x);
  /* TfIdfVectorizer, string pool: 1-grams {a, b}, 2-grams {a b, b a};
   * "a b a b" has a:2 b:2 "a b":2 "b a":1 (skip 0) plus "a a", "b b"
   * with skip 1 (not in the pool) */
  const char *toks[4] = {"a", "b", "a", "b"};
  x = tensor(OX_STRING, &d4, 1, toks);
  static const char *modes[2] = {"IDF", "TFIDF"};
  static const float wants[2][4] = {{0.5f, 1.5f, 2.0f, 4.0f}, {1.0f, 3.0f, 4.0f, 4.0f}};
  for (int k = 0; k < 2; k++) {
    char text[600];
    snprintf(text, sizeof text,
             "<ir_version: 8, opset_import: [\"\" : 9]> g (string[4] x) => (float[4] y) "
             "{ y = TfIdfVectorizer <mode = \"%s\", min_gram_length = 1, max_gram_length = 2, "
             "max_skip_count = 1, ngram_counts = [0, 2], ngram_indexes = [0, 1, 2, 3], "
             "pool_strings = [\"a\", \"b\", \"a\", \"b\", \"b\", \"a\"], "
             "weights = [0.5, 1.5, 2.0, 4.0]> (x) }",
             modes[k]);
    y = run1(text, &x, 1, err, sizeof err);
    CHECK(y && y->numel == 4, "TfIdf %s: %s", modes[k], err);
    if (y) {
      for (int i = 0; i < 4; i++)
        CHECK(((float *)y->data)[i] == wants[k][i], "TfIdf %s [%d] = %g, want %g", modes[k], i,
              ((float *)y->data)[i], wants[k][i]);
      ox_value_unref(y);
    }
  }
  ox_value_unref(x);
}

/* ------------------------------------------------------------------ */
/* image                                                                */

static const char *img_model(const char *pf) {
  static char text[300];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 20]> g (uint8[N] x) => (uint8[H,W,C] y) "
           "{ y = ImageDecoder <pixel_format = \"%s\"> (x) }",
           pf);
  return text;
}

static ox_value *decode(const uint8_t *d, size_t n, const char *pf, char *err, size_t en) {
  int64_t dim = (int64_t)n;
  ox_value *x = tensor(OX_UINT8, &dim, 1, d);
  ox_value *y = run1(img_model(pf), &x, 1, err, en);
  ox_value_unref(x);
  return y;
}

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v), put16(p + 2, v >> 16); }

/* BMP of the reference picture: 24-bit top-down, or 32-bit with bit fields
 * (B in the high byte ... to exercise the masks). */
static uint8_t *make_bmp(const uint8_t *rgb, int w, int h, int bpp, size_t *n) {
  size_t stride = (size_t)((w * bpp + 31) / 32) * 4, hdr = 14 + 40 + (bpp == 32 ? 12 : 0);
  *n = hdr + stride * (size_t)h;
  uint8_t *b = calloc(*n, 1);
  b[0] = 'B', b[1] = 'M';
  put32(b + 2, (uint32_t)*n);
  put32(b + 10, (uint32_t)hdr);
  put32(b + 14, 40);
  put32(b + 18, (uint32_t)w);
  put32(b + 22, bpp == 24 ? (uint32_t)-h : (uint32_t)h);
  put16(b + 26, 1);
  put16(b + 28, (uint32_t)bpp);
  put32(b + 30, bpp == 32 ? 3 : 0);
  if (bpp == 32) put32(b + 54, 0x0000FF00), put32(b + 58, 0x00FF0000), put32(b + 62, 0xFF000000);
  for (int y = 0; y < h; y++) {
    uint8_t *row = b + hdr + stride * (size_t)(bpp == 24 ? y : h - 1 - y);
    for (int x = 0; x < w; x++) {
      const uint8_t *p = rgb + ((size_t)y * w + x) * 3;
      if (bpp == 24)
        row[3 * x] = p[2], row[3 * x + 1] = p[1], row[3 * x + 2] = p[0];
      else
        put32(row + 4 * x, (uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24);
    }
  }
  return b;
}

/* Palette BMPs written by hand: RLE8, RLE4 and 1-bit, 4 pixels wide. The
 * palette is {0: black, 1: (10, 20, 30), 2: (200, 100, 50)}. */
static void bmp_palette(void) {
  static const uint8_t pal[3][3] = {{0, 0, 0}, {10, 20, 30}, {200, 100, 50}};
  /* RLE8, 2 rows, bottom-up: bottom = run of 4 x index 1; top = absolute
   * (2, 0, 1) padded, then a run of 1 x index 2 */
  static const uint8_t rle8[] = {4, 1, 0, 0, 0, 3, 2, 0, 1, 0, 1, 2, 0, 0, 0, 1};
  static const int idx8[8] = {2, 0, 1, 2, 1, 1, 1, 1}; /* top row first */
  /* RLE4, 1 row: a run of 4 alternating 1, 2 */
  static const uint8_t rle4[] = {4, 0x12, 0, 1};
  static const int idx4[4] = {1, 2, 1, 2};
  /* 1-bit, 1 row: bits 1010 */
  static const uint8_t bits1[] = {0xA0, 0, 0, 0};
  static const int idx1[4] = {1, 0, 1, 0};
  struct {
    const char *name;
    int bpp, comp, h;
    const uint8_t *px;
    size_t n;
    const int *want;
  } cases[3] = {{"RLE8", 8, 1, 2, rle8, sizeof rle8, idx8},
                {"RLE4", 4, 2, 1, rle4, sizeof rle4, idx4},
                {"1-bit", 1, 0, 1, bits1, sizeof bits1, idx1}};
  for (int c = 0; c < 3; c++) {
    size_t hdr = 14 + 40 + 3 * 4, n = hdr + cases[c].n;
    uint8_t b[128] = {0};
    b[0] = 'B', b[1] = 'M';
    put32(b + 2, (uint32_t)n);
    put32(b + 10, (uint32_t)hdr);
    put32(b + 14, 40);
    put32(b + 18, 4);
    put32(b + 22, (uint32_t)cases[c].h);
    put16(b + 26, 1);
    put16(b + 28, (uint32_t)cases[c].bpp);
    put32(b + 30, (uint32_t)cases[c].comp);
    put32(b + 46, 3);
    for (int k = 0; k < 3; k++)
      b[54 + 4 * k] = pal[k][2], b[55 + 4 * k] = pal[k][1], b[56 + 4 * k] = pal[k][0];
    memcpy(b + hdr, cases[c].px, cases[c].n);
    char err[1024];
    ox_value *y = decode(b, n, "RGB", err, sizeof err);
    bool same = y && y->dims[0] == cases[c].h && y->dims[1] == 4;
    for (int i = 0; same && i < 4 * cases[c].h; i++)
      same = !memcmp((uint8_t *)y->data + 3 * i, pal[cases[c].want[i]], 3);
    CHECK(same, "BMP %s: %s", cases[c].name, y ? "wrong pixels" : err);
    if (y) ox_value_unref(y);
  }
}

static void images(void) {
  char path[512], err[1024];
  snprintf(path, sizeof path,
           "%s/node/test_image_decoder_decode_bmp_rgb/test_data_set_0/output_0.pb",
           ONNXC_TESTDATA_DIR);
  ox_value *ref = load_pb(path);
  if (ref && ref->rank == 3) {
    int h = (int)ref->dims[0], w = (int)ref->dims[1];
    const uint8_t *rgb = ref->data;
    for (int bpp = 24; bpp <= 32; bpp += 8) {
      size_t n;
      uint8_t *b = make_bmp(rgb, w, h, bpp, &n);
      ox_value *y = decode(b, n, "RGB", err, sizeof err);
      CHECK(y && y->nbytes == ref->nbytes && !memcmp(y->data, rgb, ref->nbytes), "BMP %d-bit: %s",
            bpp, err);
      if (y) ox_value_unref(y);
      /* BGR and Grayscale of the same stream */
      y = decode(b, n, "BGR", err, sizeof err);
      bool same = y != NULL;
      for (int64_t i = 0; same && i < (int64_t)w * h; i++)
        same = ((uint8_t *)y->data)[3 * i] == rgb[3 * i + 2] &&
               ((uint8_t *)y->data)[3 * i + 2] == rgb[3 * i];
      CHECK(same, "BMP %d-bit as BGR: %s", bpp, err);
      if (y) ox_value_unref(y);
      y = decode(b, n, "Grayscale", err, sizeof err);
      same = y && y->dims[2] == 1;
      for (int64_t i = 0; same && i < (int64_t)w * h; i++) {
        const uint8_t *p = rgb + 3 * i;
        /* ITU-R 601-2 luma, rounded: 0.299 R + 0.587 G + 0.114 B */
        double l = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
        same = fabs(((uint8_t *)y->data)[i] - l) <= 0.5 + 1e-3;
      }
      CHECK(same, "BMP %d-bit as Grayscale: %s", bpp, err);
      if (y) ox_value_unref(y);
      /* every truncation gives the empty [0, 0, 3] tensor (Operators.md) */
      for (size_t cut = 0; cut < n; cut += 97) {
        y = decode(b, cut, "RGB", err, sizeof err);
        CHECK(y && y->rank == 3 && y->dims[0] == 0 && y->dims[1] == 0 && y->dims[2] == 3,
              "BMP cut at %zu: %s", cut, y ? "not empty" : err);
        if (y) ox_value_unref(y);
      }
      free(b);
    }
    /* PNM: ASCII P3 with maxval 255, and P5 of the red channel with maxval 1000 scaled */
    size_t cap = 64 + (size_t)w * h * 12;
    char *pnm = malloc(cap);
    int o = snprintf(pnm, cap, "P3\n# comment\n%d %d\n255\n", w, h);
    for (int64_t i = 0; i < (int64_t)w * h * 3; i++)
      o += snprintf(pnm + o, cap - (size_t)o, "%d ", rgb[i]);
    ox_value *y = decode((const uint8_t *)pnm, (size_t)o, "RGB", err, sizeof err);
    CHECK(y && y->nbytes == ref->nbytes && !memcmp(y->data, rgb, ref->nbytes), "PNM P3: %s", err);
    if (y) ox_value_unref(y);
    o = snprintf(pnm, cap, "P5 %d %d 1000\n", w, h);
    for (int64_t i = 0; i < (int64_t)w * h; i++) {
      uint32_t v = (uint32_t)((rgb[3 * i] * 1000 + 127) / 255);
      pnm[o++] = (char)(v >> 8), pnm[o++] = (char)v;
    }
    y = decode((const uint8_t *)pnm, (size_t)o, "Grayscale", err, sizeof err);
    bool same = y && y->dims[2] == 1;
    for (int64_t i = 0; same && i < (int64_t)w * h; i++)
      same = abs(((uint8_t *)y->data)[i] - rgb[3 * i]) <= 1;
    CHECK(same, "PNM P5 16-bit: %s", err);
    if (y) ox_value_unref(y);
    free(pnm);
  }
  if (ref) ox_value_unref(ref);
  /* each conformance stream cut short or with flipped bytes: an empty
   * tensor or a decode, never an error or a crash */
  static const char *fmts[] = {"bmp_rgb", "jpeg2k_rgb", "jpeg_rgb", "png_rgb",
                               "pnm_rgb", "tiff_rgb",   "webp_rgb"};
  for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
    snprintf(path, sizeof path, "%s/node/test_image_decoder_decode_%s/test_data_set_0/input_0.pb",
             ONNXC_TESTDATA_DIR, fmts[f]);
    ox_value *x = load_pb(path);
    if (!x) continue;
    size_t n = (size_t)x->numel;
    uint8_t *b = malloc(n);
    for (size_t cut = 1; cut < n; cut += n / 7 + 1) {
      ox_value *y = decode(x->data, cut, "RGB", err, sizeof err);
      CHECK(y && y->rank == 3 && y->dims[2] == 3, "%s cut: %s", fmts[f], y ? "bad shape" : err);
      if (y) ox_value_unref(y);
    }
    for (size_t at = 0; at < n; at += n / 5 + 1) {
      memcpy(b, x->data, n);
      for (size_t k = at; k < at + 16 && k < n; k++) b[k] ^= 0x5A;
      ox_value *y = decode(b, n, "Grayscale", err, sizeof err);
      CHECK(y && y->rank == 3 && y->dims[2] == 1, "%s flipped: %s", fmts[f], y ? "bad shape" : err);
      if (y) ox_value_unref(y);
    }
    free(b);
    ox_value_unref(x);
  }
  ox_value *y = decode((const uint8_t *)"not an image", 12, "RGB", err, sizeof err);
  CHECK(y && y->numel == 0 && y->dims[2] == 3, "garbage: %s", y ? "not empty" : err);
  if (y) ox_value_unref(y);
}

int main(void) {
  philox_kat();
  random_conformance();
  random_moments();
  random_repeat();
  dropout();
  dft_lengths();
  dft_float32();
  dft_modes();
  stft_complex();
  strings();
  images();
  bmp_palette();
  if (failures) {
    printf("%d failure(s)\n", failures);
    return 1;
  }
  printf("test_special: all passed (%d conformance cases checked statistically)\n", cases_checked);
  return 0;
}
