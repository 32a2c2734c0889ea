/* test_ml.c - the ai.onnx.ml operators, one or more small models per
 * operator and version, written in the ONNX text syntax.
 *
 * How the expected values were derived: by hand from the definitions in
 * Operators-ml.md / Changelog-ml.md (each case's comment shows the
 * arithmetic). Transcendental constants (logistic, softmax, probit, exp)
 * were evaluated once with Python's math/statistics modules
 * (e.g. 1/(1+exp(-2)), NormalDist().inv_cdf(0.975)), never with onnxc.
 * Where the spec is silent (binary classifiers, SVM one-vs-one layout) the
 * case follows the rule documented at the top of src/ops/ml_linear.c /
 * ml_tree.c and the arithmetic is done by hand from that rule.
 * Error cases check that bad input fails with a message naming the node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/ops/registry.h"
#include "../../src/runtime/session.h"
#include "../../src/text/text.h"

static int failures, checks;
#define CHECK(c)                                                            \
  do {                                                                      \
    checks++;                                                               \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

#define HDR(ml) "<ir_version: 8, opset_import: [\"\" : 13, \"ai.onnx.ml\" : " #ml "]>\n"

/* ---- values ---- */
static ox_value *tens(int32_t dtype, const int64_t *d, size_t r, const void *v, size_t es) {
  ox_err e = {0};
  ox_value *t = ox_tensor_new(dtype, d, r, &e);
  memcpy(t->data, v, (size_t)t->numel * es);
  return t;
}
static ox_value *ft(const int64_t *d, size_t r, const float *v) {
  return tens(OX_FLOAT, d, r, v, sizeof *v);
}
static ox_value *dt(const int64_t *d, size_t r, const double *v) {
  return tens(OX_DOUBLE, d, r, v, sizeof *v);
}
static ox_value *it64(const int64_t *d, size_t r, const int64_t *v) {
  return tens(OX_INT64, d, r, v, sizeof *v);
}
static ox_value *it32(const int64_t *d, size_t r, const int32_t *v) {
  return tens(OX_INT32, d, r, v, sizeof *v);
}
static ox_value *st(const int64_t *d, size_t r, const char *const *v) {
  ox_err e = {0};
  ox_value *t = ox_tensor_new(OX_STRING, d, r, &e);
  for (int64_t i = 0; i < t->numel; i++) ((char **)t->data)[i] = strdup(v[i]);
  return t;
}
static ox_value *mp(ox_value *k, ox_value *v) {
  ox_err e = {0};
  return ox_map_new(k, v, &e);
}

/* ---- running ---- */
static char last_err[1024];

/* Parses and runs a model with one input X (or the given names); returns
 * the status; outs receive n_out outputs in graph order. */
static int run(const char *text, size_t n_in, const char *const *names, ox_value **ins,
               size_t n_out, ox_value **outs) {
  ox_err e = {0};
  last_err[0] = 0;
  ox_model *m = ox_model_new();
  ox_session *s = NULL;
  int rc = ox_text_parse_model(text, strlen(text), "ml.onnxtxt", m->arena, &m->proto, &e);
  if (!rc) rc = ox_session_create(m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e);
  if (!rc) rc = ox_session_run(s, names, ins, n_in, NULL, outs, n_out, &e);
  if (rc) snprintf(last_err, sizeof last_err, "%s", e.msg);
  ox_session_free(s);
  ox_model_free(m);
  for (size_t i = 0; i < n_in; i++) ox_value_unref(ins[i]);
  return rc;
}
static const char *const X1[] = {"X"};

static ox_value *run1(const char *text, ox_value *x) {
  ox_value *out = NULL;
  if (run(text, 1, X1, &x, 1, &out)) {
    fprintf(stderr, "run failed: %s\n", last_err);
    return NULL;
  }
  return out;
}
/* runs expecting failure; the message must name the node */
static void run_fails(const char *text, ox_value *x, const char *node) {
  ox_value *out = NULL;
  int rc = run(text, 1, X1, &x, 1, &out);
  CHECK(rc != 0);
  CHECK(strstr(last_err, node) != NULL);
  if (rc == 0 || !strstr(last_err, node)) fprintf(stderr, "  message: %s\n", last_err);
  ox_value_unref(out);
}

static bool dims_are(const ox_value *v, const int64_t *d, size_t r) {
  if (!v || v->kind != OX_VAL_TENSOR || v->rank != r) return false;
  for (size_t i = 0; i < r; i++)
    if (v->dims[i] != d[i]) return false;
  return true;
}
static double elem(const ox_value *v, int64_t i) {
  switch (v->dtype) {
    case OX_FLOAT:
      return ((float *)v->data)[i];
    case OX_DOUBLE:
      return ((double *)v->data)[i];
    case OX_INT64:
      return (double)((int64_t *)v->data)[i];
    case OX_INT32:
      return ((int32_t *)v->data)[i];
    case OX_INT16:
      return ((int16_t *)v->data)[i];
    default:
      return NAN;
  }
}
/* checks dtype, shape and values (abs+rel tolerance tol; NaN equals NaN) */
static void expect(ox_value *v, int32_t dtype, const int64_t *d, size_t r, const double *want,
                   double tol, int line) {
  bool ok = v && v->dtype == dtype && dims_are(v, d, r);
  for (int64_t i = 0; ok && i < v->numel; i++) {
    double g = elem(v, i), w = want[i];
    if (isnan(w) ? !isnan(g) : fabs(g - w) > tol * (1 + fabs(w))) {
      fprintf(stderr, "line %d: element %lld: got %.9g want %.9g\n", line, (long long)i, g, w);
      ok = false;
    }
  }
  if (!ok) fprintf(stderr, "line %d: output mismatch\n", line);
  CHECK(ok);
  ox_value_unref(v);
}
#define EXPECT(v, dt_, dims, want, tol) \
  expect(v, dt_, dims, sizeof(dims) / sizeof *(dims), want, tol, __LINE__)
static void expect_str(ox_value *v, const int64_t *d, size_t r, const char *const *want, int line) {
  bool ok = v && v->dtype == OX_STRING && dims_are(v, d, r);
  for (int64_t i = 0; ok && i < v->numel; i++) {
    const char *g = ((char **)v->data)[i];
    if (strcmp(g ? g : "", want[i])) {
      fprintf(stderr, "line %d: element %lld: got '%s' want '%s'\n", line, (long long)i, g,
              want[i]);
      ok = false;
    }
  }
  if (!ok) fprintf(stderr, "line %d: string output mismatch\n", line);
  CHECK(ok);
  ox_value_unref(v);
}
#define EXPECT_STR(v, dims, want) expect_str(v, dims, sizeof(dims) / sizeof *(dims), want, __LINE__)

/* ================= ArrayFeatureExtractor-1 ================= */
static void test_afe(void) {
  /* Z[..., j] = X[..., Y[j]]: rows (a b c), (d e f) with Y = [2, 0] -> (c a), (f d) */
  const char *m = HDR(1) "g (string[2,3] X, int64[2] Y) => (string[2,2] Z) {\n"
                         "  Z = ai.onnx.ml.ArrayFeatureExtractor <> (X, Y)\n}\n";
  const char *xv[] = {"a", "b", "c", "d", "e", "f"};
  int64_t d23[2] = {2, 3}, d2[1] = {2}, y[2] = {2, 0};
  ox_value *in[2] = {st(d23, 2, xv), it64(d2, 1, y)}, *out = NULL;
  const char *const nm[] = {"X", "Y"};
  CHECK(run(m, 2, nm, in, 1, &out) == 0);
  const char *want[] = {"c", "a", "f", "d"};
  int64_t d22[2] = {2, 2};
  EXPECT_STR(out, d22, want);
  /* int32, 1-D X gives [1, |Y|]: X = (7 8 9), Y = [1, 1, 2] -> (8 8 9) */
  const char *m2 = HDR(1) "g (int32[3] X, int64[3] Y) => (int32[1,3] Z) {\n"
                          "  Z = ai.onnx.ml.ArrayFeatureExtractor (X, Y)\n}\n";
  int32_t xi[3] = {7, 8, 9};
  int64_t d3[1] = {3}, y2[3] = {1, 1, 2}, d13[2] = {1, 3};
  ox_value *in2[2] = {it32(d3, 1, xi), it64(d3, 1, y2)};
  CHECK(run(m2, 2, nm, in2, 1, &out) == 0);
  EXPECT(out, OX_INT32, d13, ((double[]){8, 8, 9}), 0);
  /* index 3 of a 3-wide axis: error naming the node */
  const char *m3 = HDR(1) "g (int32[3] X, int64[1] Y) => (int32[1,1] Z) {\n"
                          "  Z = ai.onnx.ml.ArrayFeatureExtractor <> (X, Y)\n}\n";
  int64_t d1[1] = {1}, bad[1] = {3};
  ox_value *in3[2] = {it32(d3, 1, xi), it64(d1, 1, bad)};
  CHECK(run(m3, 2, nm, in3, 1, &out) != 0);
  CHECK(strstr(last_err, "ArrayFeatureExtractor") && strstr(last_err, "out of range"));
}

/* ================= Binarizer-1 ================= */
static void test_binarizer(void) {
  /* x > 1 -> 1 else 0, int64 keeps its type: [-1, 0, 1, 2, 5] -> [0,0,0,1,1] */
  const char *m = HDR(1) "g (int64[5] X) => (int64[5] Y) {\n"
                         "  Y = ai.onnx.ml.Binarizer <threshold = 1.0> (X)\n}\n";
  int64_t d[1] = {5}, x[5] = {-1, 0, 1, 2, 5};
  EXPECT(run1(m, it64(d, 1, x)), OX_INT64, d, ((double[]){0, 0, 0, 1, 1}), 0);
  /* double, default threshold 0: [-0.5, 0, 0.25] -> [0, 0, 1] */
  const char *m2 = HDR(1) "g (double[3] X) => (double[3] Y) {\n"
                          "  Y = ai.onnx.ml.Binarizer (X)\n}\n";
  int64_t d3[1] = {3};
  EXPECT(run1(m2, dt(d3, 1, (double[]){-0.5, 0, 0.25})), OX_DOUBLE, d3, ((double[]){0, 0, 1}), 0);
}

/* ================= CastMap-1 ================= */
static void test_castmap(void) {
  /* DENSE, TO_FLOAT: {3: "1.5", 1: "2.5"} ordered by key -> [2.5, 1.5] */
  const char *m = HDR(1) "g (map(int64, string) X) => (float[1,2] Y) {\n"
                         "  Y = ai.onnx.ml.CastMap <cast_to = \"TO_FLOAT\"> (X)\n}\n";
  int64_t d2[1] = {2}, k[2] = {3, 1};
  const char *v[] = {"1.5", "2.5"};
  int64_t d12[2] = {1, 2};
  EXPECT(run1(m, mp(it64(d2, 1, k), st(d2, 1, v))), OX_FLOAT, d12, ((double[]){2.5, 1.5}), 0);
  /* SPARSE, TO_INT64, max_map 4: {0: 1.5, 2: -2} -> [1, 0, -2, 0] (truncation) */
  const char *m2 =
      HDR(1) "g (map(int64, float) X) => (int64[1,4] Y) {\n"
             "  Y = ai.onnx.ml.CastMap <cast_to = \"TO_INT64\", map_form = \"SPARSE\", max_map = 4> "
             "(X)\n}\n";
  int64_t k2[2] = {2, 0};
  int64_t d14[2] = {1, 4};
  EXPECT(run1(m2, mp(it64(d2, 1, k2), ft(d2, 1, (float[]){-2.0f, 1.5f}))), OX_INT64, d14,
         ((double[]){1, 0, -2, 0}), 0);
  /* TO_STRING: {1: 0.5, 0: 2} -> ["2", "0.5"] */
  const char *m3 = HDR(1) "g (map(int64, float) X) => (string[1,2] Y) {\n"
                          "  Y = ai.onnx.ml.CastMap <cast_to = \"TO_STRING\"> (X)\n}\n";
  int64_t k3[2] = {1, 0};
  const char *w3[] = {"2", "0.5"};
  EXPECT_STR(run1(m3, mp(it64(d2, 1, k3), ft(d2, 1, (float[]){0.5f, 2.0f}))), d12, w3);
  /* key 5 with max_map 4: error naming the node */
  int64_t k4[2] = {5, 0};
  run_fails(m2, mp(it64(d2, 1, k4), ft(d2, 1, (float[]){1, 1})), "CastMap");
}

/* ================= CategoryMapper-1 ================= */
static void test_catmap(void) {
  /* a->10, b->20; unknown string -> default_int64 -7: [b, z, a] -> [20, -7, 10] */
  const char *m = HDR(1) "g (string[3] X) => (int64[3] Y) {\n"
                         "  Y = ai.onnx.ml.CategoryMapper <cats_strings = [\"a\", \"b\"], "
                         "cats_int64s = [10, 20], default_int64 = -7> (X)\n}\n";
  int64_t d3[1] = {3}, d2[1] = {2};
  const char *x[] = {"b", "z", "a"};
  EXPECT(run1(m, st(d3, 1, x)), OX_INT64, d3, ((double[]){20, -7, 10}), 0);
  /* int -> string with default_string: [20, 5] -> ["b", "none"] */
  const char *m2 = HDR(1) "g (int64[2] X) => (string[2] Y) {\n"
                          "  Y = ai.onnx.ml.CategoryMapper <cats_strings = [\"a\", \"b\"], "
                          "cats_int64s = [10, 20], default_string = \"none\"> (X)\n}\n";
  const char *w[] = {"b", "none"};
  EXPECT_STR(run1(m2, it64(d2, 1, (int64_t[]){20, 5})), d2, w);
}

/* ================= DictVectorizer-1 ================= */
static void test_dictvec(void) {
  /* the spec's example: vocabulary [a, c, b, z], {a: 4, c: 8} -> [4, 8, 0, 0] */
  const char *m = HDR(1) "g (map(string, float) X) => (float[1,4] Y) {\n"
                         "  Y = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\", \"c\", "
                         "\"b\", \"z\"]> (X)\n}\n";
  int64_t d2[1] = {2}, d14[2] = {1, 4};
  const char *k[] = {"a", "c"};
  EXPECT(run1(m, mp(st(d2, 1, k), ft(d2, 1, (float[]){4, 8}))), OX_FLOAT, d14,
         ((double[]){4, 8, 0, 0}), 0);
  /* int64 vocabulary [5, 1, 9] with int64 -> string map {9: "x", 5: "y"} -> [y, "", x] */
  const char *m2 = HDR(1) "g (map(int64, string) X) => (string[1,3] Y) {\n"
                          "  Y = ai.onnx.ml.DictVectorizer <int64_vocabulary = [5, 1, 9]> (X)\n}\n";
  const char *v2[] = {"x", "y"};
  const char *w2[] = {"y", "", "x"};
  int64_t d13[2] = {1, 3};
  EXPECT_STR(run1(m2, mp(it64(d2, 1, (int64_t[]){9, 5}), st(d2, 1, v2))), d13, w2);
  /* the same map with its values as a sequence of scalar tensors (the form a
   * MapProto decodes to): {a: 4, c: 8} -> [4, 8, 0, 0] */
  {
    ox_err e = {0};
    ox_value *seq = ox_sequence_new(&e);
    ox_sequence_push(seq, ox_tensor_scalar_f32(4, &e), &e);
    ox_sequence_push(seq, ox_tensor_scalar_f32(8, &e), &e);
    EXPECT(run1(m, mp(st(d2, 1, k), seq)), OX_FLOAT, d14, ((double[]){4, 8, 0, 0}), 0);
  }
  /* a map with int64 keys for a string vocabulary: error naming the node */
  const char *m3 = HDR(1) "g (map(int64, float) X) => (float[1,1] Y) {\n"
                          "  Y = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\"]> (X)\n}\n";
  run_fails(m3, mp(it64(d2, 1, (int64_t[]){1, 2}), ft(d2, 1, (float[]){1, 2})), "DictVectorizer");
}

/* ================= FeatureVectorizer-1 ================= */
static void test_featvec(void) {
  /* [[1,2],[3,4]] (int32, dim 2) ++ [[0.5],[-1]] (double, declared dim 2 -> zero pad)
   * -> [[1,2,0.5,0],[3,4,-1,0]] */
  const char *m = HDR(1) "g (int32[2,2] A, double[2,1] B) => (float[2,4] Y) {\n"
                         "  Y = ai.onnx.ml.FeatureVectorizer <inputdimensions = [2, 2]> (A, B)\n}\n";
  int64_t d22[2] = {2, 2}, d21[2] = {2, 1}, d24[2] = {2, 4};
  ox_value *in[2] = {it32(d22, 2, (int32_t[]){1, 2, 3, 4}), dt(d21, 2, (double[]){0.5, -1})};
  ox_value *out = NULL;
  const char *const nm[] = {"A", "B"};
  CHECK(run(m, 2, nm, in, 1, &out) == 0);
  EXPECT(out, OX_FLOAT, d24, ((double[]){1, 2, 0.5, 0, 3, 4, -1, 0}), 0);
}

/* ================= Imputer-1 ================= */
static void test_imputer(void) {
  /* NaN replaced per feature by [10, 20, 30]: [[NaN,1,NaN],[2,NaN,3]] -> [[10,1,30],[2,20,3]] */
  const char *m = HDR(1) "g (float[2,3] X) => (float[2,3] Y) {\n"
                         "  Y = ai.onnx.ml.Imputer <imputed_value_floats = [10.0, 20.0, 30.0], "
                         "replaced_value_float = nan> (X)\n}\n";
  int64_t d23[2] = {2, 3};
  EXPECT(run1(m, ft(d23, 2, (float[]){NAN, 1, NAN, 2, NAN, 3})), OX_FLOAT, d23,
         ((double[]){10, 1, 30, 2, 20, 3}), 0);
  /* int64: 0 (default replaced_value_int64) -> 9 broadcast: [0, 4, 0] -> [9, 4, 9] */
  const char *m2 = HDR(1) "g (int64[3] X) => (int64[3] Y) {\n"
                          "  Y = ai.onnx.ml.Imputer <imputed_value_int64s = [9]> (X)\n}\n";
  int64_t d3[1] = {3};
  EXPECT(run1(m2, it64(d3, 1, (int64_t[]){0, 4, 0})), OX_INT64, d3, ((double[]){9, 4, 9}), 0);
  /* both imputed lists: error naming the node */
  const char *m3 = HDR(1) "g (int64[3] X) => (int64[3] Y) {\n"
                          "  Y = ai.onnx.ml.Imputer <imputed_value_int64s = [9], "
                          "imputed_value_floats = [1.0]> (X)\n}\n";
  run_fails(m3, it64(d3, 1, (int64_t[]){0, 4, 0}), "Imputer");
}

/* ================= LabelEncoder-1/2/4 ================= */
static void test_label_encoder(void) {
  /* v1: string -> index in classes_strings, else default_int64: [y, q] -> [1, -1] */
  const char *m1 = HDR(1) "g (string[2] X) => (int64[2] Y) {\n"
                          "  Y = ai.onnx.ml.LabelEncoder <classes_strings = [\"x\", \"y\", \"z\"]> "
                          "(X)\n}\n";
  int64_t d2[1] = {2}, d3[1] = {3};
  const char *x1[] = {"y", "q"};
  EXPECT(run1(m1, st(d2, 1, x1)), OX_INT64, d2, ((double[]){1, -1}), 0);
  /* v1: int64 -> classes_strings[x], else default_string: [2, 7] -> [z, ?] */
  const char *m1b = HDR(1) "g (int64[2] X) => (string[2] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <classes_strings = [\"x\", \"y\", "
                           "\"z\"], default_string = \"?\"> (X)\n}\n";
  const char *w1b[] = {"z", "?"};
  EXPECT_STR(run1(m1b, it64(d2, 1, (int64_t[]){2, 7})), d2, w1b);
  /* v2: int64 keys [3, 7] -> floats [0.5, 0.25], default_float -0.0: [7, 3, 4] -> [.25, .5, -0] */
  const char *m2 = HDR(2) "g (int64[3] X) => (float[3] Y) {\n"
                          "  Y = ai.onnx.ml.LabelEncoder <keys_int64s = [3, 7], values_floats = "
                          "[0.5, 0.25]> (X)\n}\n";
  ox_value *o = run1(m2, it64(d3, 1, (int64_t[]){7, 3, 4}));
  CHECK(o && signbit(((float *)o->data)[2]));
  EXPECT(o, OX_FLOAT, d3, ((double[]){0.25, 0.5, -0.0}), 0);
  /* v2: float keys -> strings: [1.5, 2, 1.5] -> [p, d, p] */
  const char *m2b = HDR(2) "g (float[3] X) => (string[3] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <keys_floats = [1.5, 2.5], values_strings "
                           "= [\"p\", \"q\"], default_string = \"d\"> (X)\n}\n";
  const char *w2b[] = {"p", "d", "p"};
  EXPECT_STR(run1(m2b, ft(d3, 1, (float[]){1.5f, 2, 1.5f})), d3, w2b);
  /* v4: int32 keys_tensor with a repeated key (the last wins) -> double values_tensor,
   * default_tensor -5: keys [1, 2, 1] values [10, 20, 30]; [1, 2, 3] -> [30, 20, -5] */
  const char *m4 =
      HDR(4) "g (int32[3] X) => (double[3] Y) {\n"
             "  Y = ai.onnx.ml.LabelEncoder <keys_tensor = int32[3] {1, 2, 1}, values_tensor = "
             "double[3] {10.0, 20.0, 30.0}, default_tensor = double[1] {-5.0}> (X)\n}\n";
  EXPECT(run1(m4, it32(d3, 1, (int32_t[]){1, 2, 3})), OX_DOUBLE, d3, ((double[]){30, 20, -5}), 0);
  /* v4: a NaN key matches any NaN input: keys [nan, 1] -> [7, 8]; [nan, 1, 2] -> [7, 8, -1] */
  const char *m4b = HDR(4) "g (float[3] X) => (int64[3] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <keys_floats = [nan, 1.0], values_int64s "
                           "= [7, 8]> (X)\n}\n";
  EXPECT(run1(m4b, ft(d3, 1, (float[]){NAN, 1, 2})), OX_INT64, d3, ((double[]){7, 8, -1}), 0);
  /* two keys_* attributes: error naming the node */
  const char *m4c = HDR(4) "g (float[3] X) => (int64[3] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <keys_floats = [1.0], keys_int64s = [1], "
                           "values_int64s = [7]> (X)\n}\n";
  run_fails(m4c, ft(d3, 1, (float[]){NAN, 1, 2}), "LabelEncoder");
  /* keys_tensor is a v4 attribute: at opset 2 it is an error */
  const char *m2c = HDR(2) "g (int32[3] X) => (int64[3] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <keys_tensor = int32[1] {1}, "
                           "values_int64s = [7]> (X)\n}\n";
  run_fails(m2c, it32(d3, 1, (int32_t[]){1, 2, 3}), "LabelEncoder");
}

/* ================= LinearClassifier-1, LinearRegressor-1 ================= */
static void test_linear(void) {
  /* 3 classes, 2 features: rows (1,0), (0,1), (-1,-1), intercepts (0, .5, 0)
   * x=(2,1): scores (2, 1.5, -3) -> label 10; x=(0,0): (0, .5, 0) -> label 20 */
  const char *m = HDR(1) "g (float[2,2] X) => (int64[2] Y, float[2,3] Z) {\n"
                         "  Y, Z = ai.onnx.ml.LinearClassifier <coefficients = [1.0, 0.0, 0.0, 1.0, "
                         "-1.0, -1.0], intercepts = [0.0, 0.5, 0.0], classlabels_ints = [10, 20, "
                         "30]> (X)\n}\n";
  int64_t d22[2] = {2, 2}, d2[1] = {2}, d23[2] = {2, 3};
  ox_value *in = ft(d22, 2, (float[]){2, 1, 0, 0}), *out[2] = {0};
  CHECK(run(m, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d2, ((double[]){10, 20}), 0);
  EXPECT(out[1], OX_FLOAT, d23, ((double[]){2, 1.5, -3, 0, 0.5, 0}), 1e-6);
  /* binary, LOGISTIC: one row (1, -1) for labels [neg, pos]; x=(3,1): s=2 -> pos,
   * Z = (1-sig(2), sig(2)) = (0.119202922, 0.880797078); x=(0,2): s=-2 -> neg, swapped */
  const char *mb = HDR(1) "g (float[2,2] X) => (string[2] Y, float[2,2] Z) {\n"
                          "  Y, Z = ai.onnx.ml.LinearClassifier <coefficients = [1.0, -1.0], "
                          "classlabels_strings = [\"neg\", \"pos\"], post_transform = "
                          "\"LOGISTIC\"> (X)\n}\n";
  in = ft(d22, 2, (float[]){3, 1, 0, 2});
  CHECK(run(mb, 1, X1, &in, 2, out) == 0);
  const char *wl[] = {"pos", "neg"};
  EXPECT_STR(out[0], d2, wl);
  EXPECT(out[1], OX_FLOAT, d22,
         ((double[]){0.11920292202211755, 0.8807970779778823, 0.8807970779778823,
                     0.11920292202211755}),
         1e-6);
  /* regressor, 2 targets over 3 features: (1,2,3).(1,1,1)+1 = 7, (0,0,1).(1,1,1)-1 = 0;
   * SOFTMAX: (e^7/(e^7+1), 1/(e^7+1)) = (0.999088949, 0.000911051) */
  const char *mr = HDR(1) "g (int32[1,3] X) => (float[1,2] Y) {\n"
                          "  Y = ai.onnx.ml.LinearRegressor <coefficients = [1.0, 2.0, 3.0, 0.0, "
                          "0.0, 1.0], intercepts = [1.0, -1.0], targets = 2, post_transform = "
                          "\"SOFTMAX\"> (X)\n}\n";
  int64_t d13[2] = {1, 3}, d12[2] = {1, 2};
  EXPECT(run1(mr, it32(d13, 2, (int32_t[]){1, 1, 1})), OX_FLOAT, d12,
         ((double[]){0.9990889488055994, 0.0009110511944006454}), 1e-6);
  /* PROBIT: coefficient 1, x = 0.975 -> Phi^-1(0.975) = 1.959963985 */
  const char *mp1 = HDR(1) "g (double[1,1] X) => (float[1,1] Y) {\n"
                           "  Y = ai.onnx.ml.LinearRegressor <coefficients = [1.0], post_transform "
                           "= \"PROBIT\"> (X)\n}\n";
  int64_t d11[2] = {1, 1};
  EXPECT(run1(mp1, dt(d11, 2, (double[]){0.975})), OX_FLOAT, d11, ((double[]){1.9599639845400536}),
         1e-5);
  /* SOFTMAX_ZERO: 3 targets of one feature, coefficients (1, 0, 2), x = 1 -> (1, 0, 2);
   * the zero stays 0, the others e^1/(e^1+e^2), e^2/(e^1+e^2) */
  const char *mz = HDR(1) "g (float[1,1] X) => (float[1,3] Y) {\n"
                          "  Y = ai.onnx.ml.LinearRegressor <coefficients = [1.0, 0.0, 2.0], "
                          "targets = 3, post_transform = \"SOFTMAX_ZERO\"> (X)\n}\n";
  int64_t d13b[2] = {1, 3};
  EXPECT(run1(mz, ft(d11, 2, (float[]){1})), OX_FLOAT, d13b,
         ((double[]){0.2689414213699951, 0, 0.7310585786300049}), 1e-6);
  /* SOFTMAX_ZERO of an all-zero row: 0.5 everywhere */
  const char *mz0 = HDR(1) "g (float[1,1] X) => (float[1,2] Y) {\n"
                           "  Y = ai.onnx.ml.LinearRegressor <coefficients = [0.0, 0.0], targets = "
                           "2, post_transform = \"SOFTMAX_ZERO\"> (X)\n}\n";
  EXPECT(run1(mz0, ft(d11, 2, (float[]){1})), OX_FLOAT, d12, ((double[]){0.5, 0.5}), 0);
  /* 6 coefficients do not fit 4 features: error naming the node */
  const char *mr4 = HDR(1) "g (int32[1,4] X) => (float[1,2] Y) {\n"
                           "  Y = ai.onnx.ml.LinearRegressor <coefficients = [1.0, 2.0, 3.0, 0.0, "
                           "0.0, 1.0], targets = 2> (X)\n}\n";
  int64_t d14[2] = {1, 4};
  run_fails(mr4, it32(d14, 2, (int32_t[]){1, 1, 1, 1}), "LinearRegressor");
}

/* ================= SVMRegressor-1, SVMClassifier-1 ================= */
static void test_svm(void) {
  /* linear kernel, 2 support vectors (1,0), (0,1), coefficients (2,-1), rho .5:
   * x=(3,4): 2*3 - 4 + .5 = 2.5 */
  const char *m = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                         "  Y = ai.onnx.ml.SVMRegressor <n_supports = 2, support_vectors = [1.0, "
                         "0.0, 0.0, 1.0], coefficients = [2.0, -1.0], rho = [0.5]> (X)\n}\n";
  int64_t d12[2] = {1, 2}, d11[2] = {1, 1};
  EXPECT(run1(m, ft(d12, 2, (float[]){3, 4})), OX_FLOAT, d11, ((double[]){2.5}), 1e-6);
  /* RBF gamma .5: |x-sv1|^2 = 4+16, |x-sv2|^2 = 9+9 -> 2e^-10 - e^-9 + .5 = 0.49996739 */
  const char *mr = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                          "  Y = ai.onnx.ml.SVMRegressor <n_supports = 2, support_vectors = [1.0, "
                          "0.0, 0.0, 1.0], coefficients = [2.0, -1.0], rho = [0.5], kernel_type = "
                          "\"RBF\", kernel_params = [0.5, 0.0, 0.0]> (X)\n}\n";
  EXPECT(run1(mr, ft(d12, 2, (float[]){3, 4})), OX_FLOAT, d11, ((double[]){0.4999673900554383}),
         1e-6);
  /* one_class: the sign of the linear-kernel score 2.5 -> 1; POLY (gamma 1, coef0 1,
   * degree 2) without support vectors: (x.c + 1)^2 + rho = (1*1+2*1+1)^2 - 1 = 15 */
  const char *mo = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                          "  Y = ai.onnx.ml.SVMRegressor <n_supports = 2, support_vectors = [1.0, "
                          "0.0, 0.0, 1.0], coefficients = [2.0, -1.0], rho = [0.5], one_class = "
                          "1> (X)\n}\n";
  EXPECT(run1(mo, ft(d12, 2, (float[]){3, 4})), OX_FLOAT, d11, ((double[]){1}), 0);
  const char *mp = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                          "  Y = ai.onnx.ml.SVMRegressor <coefficients = [1.0, 2.0], rho = [-1.0], "
                          "kernel_type = \"POLY\", kernel_params = [1.0, 1.0, 2.0]> (X)\n}\n";
  EXPECT(run1(mp, ft(d12, 2, (float[]){1, 1})), OX_FLOAT, d11, ((double[]){15}), 1e-6);

  /* classifier, one-vs-one with 3 classes, one support vector each (1), (2), (3),
   * linear kernel, coef rows a = (1,-1,-1), b = (1,1,-1), rho 0:
   *  d01 = a0 K(x,1) + a1 K(x,2), d02 = b0 K(x,1) + a2 K(x,3), d12 = b1 K(x,2) + b2 K(x,3)
   *  x=5:  d = (5-10, 5-15, 10-15) = (-5,-10,-5): votes 1,2,2 -> class c
   *  x=-1: d = (-1+2, -1+3, -2+3) = (1, 2, 1): votes 0,0,1 -> class a */
  const char *mc = HDR(1) "g (float[2,1] X) => (string[2] Y, float[2,3] Z) {\n"
                          "  Y, Z = ai.onnx.ml.SVMClassifier <classlabels_strings = [\"a\", \"b\", "
                          "\"c\"], vectors_per_class = [1, 1, 1], support_vectors = [1.0, 2.0, "
                          "3.0], coefficients = [1.0, -1.0, -1.0, 1.0, 1.0, -1.0], rho = [0.0, "
                          "0.0, 0.0]> (X)\n}\n";
  int64_t d21[2] = {2, 1}, d2[1] = {2}, d23[2] = {2, 3};
  ox_value *in = ft(d21, 2, (float[]){5, -1}), *out[2] = {0};
  CHECK(run(mc, 1, X1, &in, 2, out) == 0);
  const char *wc[] = {"c", "a"};
  EXPECT_STR(out[0], d2, wc);
  EXPECT(out[1], OX_FLOAT, d23, ((double[]){-5, -10, -5, 1, 2, 1}), 1e-6);
  /* probabilities, 2 classes: sv (1) class 0, (-1) class 1, coef (1, -1), rho 0:
   * d = 1*x + (-1)*(-x) = 2x; x = .5 -> d = 1; prob_a -1, prob_b 0:
   * r01 = 1/(1+exp(-1)) = 0.731058579; coupling of two classes gives (r01, 1-r01) */
  const char *mpb = HDR(1) "g (float[1,1] X) => (int64[1] Y, float[1,2] Z) {\n"
                           "  Y, Z = ai.onnx.ml.SVMClassifier <classlabels_ints = [7, 9], "
                           "vectors_per_class = [1, 1], support_vectors = [1.0, -1.0], "
                           "coefficients = [1.0, -1.0], rho = [0.0], prob_a = [-1.0], prob_b = "
                           "[0.0]> (X)\n}\n";
  int64_t d1[1] = {1};
  in = ft(d11, 2, (float[]){0.5f});
  CHECK(run(mpb, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d1, ((double[]){7}), 0);
  EXPECT(out[1], OX_FLOAT, d12, ((double[]){0.7310585786300049, 0.2689414213699951}), 2e-3);
  /* the same without probabilities: one decision d = 1 for two labels and one rho ->
   * Z = (-d, d); coefficients not all >= 0, so the label is the voted class 0 -> 7 */
  const char *mnp = HDR(1) "g (float[1,1] X) => (int64[1] Y, float[1,2] Z) {\n"
                           "  Y, Z = ai.onnx.ml.SVMClassifier <classlabels_ints = [7, 9], "
                           "vectors_per_class = [1, 1], support_vectors = [1.0, -1.0], "
                           "coefficients = [1.0, -1.0], rho = [0.0]> (X)\n}\n";
  in = ft(d11, 2, (float[]){0.5f});
  CHECK(run(mnp, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d1, ((double[]){7}), 0);
  EXPECT(out[1], OX_FLOAT, d12, ((double[]){-1, 1}), 1e-6);
  /* linear mode: rows (1,0), (0,1), one rho .5: x = (1,3) -> (1.5, 3.5) -> label 2nd */
  const char *ml = HDR(1) "g (float[1,2] X) => (int64[1] Y, float[1,2] Z) {\n"
                          "  Y, Z = ai.onnx.ml.SVMClassifier <classlabels_ints = [4, 6], "
                          "coefficients = [1.0, 0.0, 0.0, 1.0], rho = [0.5]> (X)\n}\n";
  in = ft(d12, 2, (float[]){1, 3});
  CHECK(run(ml, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d1, ((double[]){6}), 0);
  EXPECT(out[1], OX_FLOAT, d12, ((double[]){1.5, 3.5}), 1e-6);
  /* vectors_per_class not matching the labels: error naming the node */
  const char *mbad = HDR(1) "g (float[1,1] X) => (int64[1] Y, float[1,2] Z) {\n"
                            "  Y, Z = ai.onnx.ml.SVMClassifier <classlabels_ints = [7, 9], "
                            "vectors_per_class = [2], support_vectors = [1.0, -1.0], "
                            "coefficients = [1.0, -1.0], rho = [0.0]> (X)\n}\n";
  run_fails(mbad, ft(d11, 2, (float[]){0.5f}), "SVMClassifier");
}

/* ================= TreeEnsembleRegressor-1/3 ================= */
/* tree 0: node 0 x0 <= 2 ? node 1 (leaf) : node 2; node 2 x1 < 0 ? node 3 (leaf) : node 4 (leaf)
 * tree 1: node 0 a leaf.
 * votes: (0,1) t0 1 | (0,3) t0 2, t1 5 | (0,4) t0 3 | (1,0) t0 10, t1 1
 * rows (1,9) -> leaf (0,1); (3,-1) -> (0,3); (3,0) -> (0,4); (nan,0): LEQ false -> (0,4) */
#define TREE_NODES                                                                               \
  "nodes_treeids = [0, 0, 0, 0, 0, 1], nodes_nodeids = [0, 1, 2, 3, 4, 0], nodes_featureids = "  \
  "[0, 0, 1, 0, 0, 0], nodes_modes = [\"BRANCH_LEQ\", \"LEAF\", \"BRANCH_LT\", \"LEAF\", "       \
  "\"LEAF\", \"LEAF\"], nodes_truenodeids = [1, 0, 3, 0, 0, 0], nodes_falsenodeids = [2, 0, 4, " \
  "0, 0, 0], "
#define TREE_VOTES(p)                                                       \
  p "_treeids = [0, 0, 0, 0, 1, 1], " p "_nodeids = [1, 3, 3, 4, 0, 0], " p \
    "_ids = [0, "                                                           \
    "0, 1, 0, 0, 1], "
static void test_tree_regressor(void) {
  int64_t d42[2] = {4, 2};
  const float x[8] = {1, 9, 3, -1, 3, 0, NAN, 0};
  /* SUM + base (100, 0): t0 = 1+10, 2+10, 3+10, 3+10 (+100); t1 = 1, 5+1, 1, 1 */
  const char *m = HDR(1) "g (float[4,2] X) => (float[4,2] Y) {\n"
                         "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                             "target") "nodes_values = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0], "
                                       "target_weights = [1.0, 2.0, 5.0, 3.0, 10.0, 1.0], n_targets "
                                       "= 2, base_values = [100.0, 0.0]> (X)\n}\n";
  EXPECT(run1(m, ft(d42, 2, x)), OX_FLOAT, d42, ((double[]){111, 1, 112, 6, 113, 1, 113, 1}), 1e-6);
  /* v3 with the *_as_tensor (double) forms: same numbers */
  const char *m3 =
      HDR(3) "g (double[4,2] X) => (float[4,2] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                 "target") "nodes_values_as_tensor = double[6] {2.0, 0.0, 0.0, 0.0, 0.0, 0.0}, "
                           "target_weights_as_tensor = double[6] {1.0, 2.0, 5.0, 3.0, 10.0, 1.0}, "
                           "n_targets = 2, base_values_as_tensor = double[2] {100.0, 0.0}> "
                           "(X)\n}\n";
  const double xd[8] = {1, 9, 3, -1, 3, 0, NAN, 0};
  EXPECT(run1(m3, dt(d42, 2, xd)), OX_FLOAT, d42, ((double[]){111, 1, 112, 6, 113, 1, 113, 1}),
         1e-6);
  /* AVERAGE over the 2 trees, NaN follows the true branch at node 0 (tracks_true):
   * rows: t0 (1+10)/2, (2+10)/2, (3+10)/2, (1+10)/2; t1 1/2, 6/2, 1/2, 1/2 */
  const char *ma =
      HDR(1) "g (float[4,2] X) => (float[4,2] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                 "target") "nodes_values = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0], "
                           "nodes_missing_value_tracks_true = [1, 0, 0, 0, 0, 0], target_weights = "
                           "[1.0, 2.0, 5.0, 3.0, 10.0, 1.0], n_targets = 2, aggregate_function = "
                           "\"AVERAGE\"> (X)\n}\n";
  EXPECT(run1(ma, ft(d42, 2, x)), OX_FLOAT, d42, ((double[]){5.5, 0.5, 6, 3, 6.5, 0.5, 5.5, 0.5}),
         1e-6);
  /* MIN: t0 min(leaf, 10) = 1, 2, 3, 3; t1 min over voting trees: 1, min(5,1), 1, 1 */
  const char *mmin =
      HDR(1) "g (float[4,2] X) => (float[4,2] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                 "target") "nodes_values = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0], target_weights = [1.0, "
                           "2.0, 5.0, 3.0, 10.0, 1.0], n_targets = 2, aggregate_function = "
                           "\"MIN\"> (X)\n}\n";
  EXPECT(run1(mmin, ft(d42, 2, x)), OX_FLOAT, d42, ((double[]){1, 1, 2, 1, 3, 1, 3, 1}), 1e-6);
  /* MAX: t0 = 10 everywhere; t1 = 1, 5, 1, 1 */
  const char *mmax =
      HDR(1) "g (float[4,2] X) => (float[4,2] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                 "target") "nodes_values = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0], target_weights = [1.0, "
                           "2.0, 5.0, 3.0, 10.0, 1.0], n_targets = 2, aggregate_function = "
                           "\"MAX\"> (X)\n}\n";
  EXPECT(run1(mmax, ft(d42, 2, x)), OX_FLOAT, d42, ((double[]){10, 1, 10, 5, 10, 1, 10, 1}), 1e-6);
  /* a vote for target 2 of 2: error naming the node */
  const char *mbad =
      HDR(1) "g (float[4,2] X) => (float[4,2] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES
             "target_treeids = [0], target_nodeids = [1], target_ids = [2], nodes_values = [2.0, "
             "0.0, 0.0, 0.0, 0.0, 0.0], target_weights = [1.0], n_targets = 2> (X)\n}\n";
  run_fails(mbad, ft(d42, 2, x), "TreeEnsembleRegressor");
  /* deprecated at ai.onnx.ml 5 (replaced by TreeEnsemble): no kernel, a clear error */
  const char *m5 = HDR(5) "g (float[4,2] X) => (float[4,2] Y) {\n"
                          "  Y = ai.onnx.ml.TreeEnsembleRegressor <" TREE_NODES TREE_VOTES(
                              "target") "nodes_values = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0], "
                                        "target_weights = [1.0, 2.0, 5.0, 3.0, 10.0, 1.0], "
                                        "n_targets = 2> (X)\n}\n";
  run_fails(m5, ft(d42, 2, x), "TreeEnsembleRegressor");
}

/* ================= TreeEnsembleClassifier-1/3 ================= */
static void test_tree_classifier(void) {
  /* one split x0 <= .5: leaf 1 votes class0 .8, class1 .2; leaf 2 class2 1
   * x=0 -> scores (.8,.2,0) label 5; x=1 -> (0,0,1) label 7 */
  const char *m = HDR(1) "g (float[2,1] X) => (int64[2] Y, float[2,3] Z) {\n"
                         "  Y, Z = ai.onnx.ml.TreeEnsembleClassifier <nodes_treeids = [0, 0, 0], "
                         "nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0], nodes_modes = "
                         "[\"BRANCH_LEQ\", \"LEAF\", \"LEAF\"], nodes_values = [0.5, 0.0, 0.0], "
                         "nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], "
                         "class_treeids = [0, 0, 0], class_nodeids = [1, 1, 2], class_ids = [0, "
                         "1, 2], class_weights = [0.8, 0.2, 1.0], classlabels_int64s = [5, 6, 7]> "
                         "(X)\n}\n";
  int64_t d21[2] = {2, 1}, d2[1] = {2}, d23[2] = {2, 3}, d22[2] = {2, 2};
  ox_value *in = ft(d21, 2, (float[]){0, 1}), *out[2] = {0};
  CHECK(run(m, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d2, ((double[]){5, 7}), 0);
  EXPECT(out[1], OX_FLOAT, d23, ((double[]){0.8, 0.2, 0, 0, 0, 1}), 1e-6);
  /* SOFTMAX of (.8,.2,0) = (0.500465283, 0.274661171, 0.224873547); of (0,0,1) =
   * (1, 1, e)/(2+e) = (0.211941558, 0.211941558, 0.576116885) */
  const char *ms = HDR(3) "g (float[2,1] X) => (int64[2] Y, float[2,3] Z) {\n"
                          "  Y, Z = ai.onnx.ml.TreeEnsembleClassifier <nodes_treeids = [0, 0, 0], "
                          "nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0], nodes_modes = "
                          "[\"BRANCH_LEQ\", \"LEAF\", \"LEAF\"], nodes_values_as_tensor = "
                          "double[3] {0.5, 0.0, 0.0}, nodes_truenodeids = [1, 0, 0], "
                          "nodes_falsenodeids = [2, 0, 0], class_treeids = [0, 0, 0], "
                          "class_nodeids = [1, 1, 2], class_ids = [0, 1, 2], "
                          "class_weights_as_tensor = double[3] {0.8, 0.2, 1.0}, "
                          "classlabels_int64s = [5, 6, 7], post_transform = \"SOFTMAX\"> (X)\n}\n";
  in = ft(d21, 2, (float[]){0, 1});
  CHECK(run(ms, 1, X1, &in, 2, out) == 0);
  EXPECT(out[0], OX_INT64, d2, ((double[]){5, 7}), 0);
  EXPECT(out[1], OX_FLOAT, d23,
         ((double[]){0.500465282520298, 0.27466117050822386, 0.22487354697147813,
                     0.21194155761708544, 0.21194155761708544, 0.5761168847658291}),
         1e-6);
  /* binary case: two labels, only class 1 gets votes (.3 left, .9 right), all >= 0:
   * label yes when s > .5; Z = (1-s, s): x=0 -> no (.7,.3); x=1 -> yes (.1,.9) */
  const char *mb = HDR(1) "g (float[2,1] X) => (string[2] Y, float[2,2] Z) {\n"
                          "  Y, Z = ai.onnx.ml.TreeEnsembleClassifier <nodes_treeids = [0, 0, 0], "
                          "nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0], nodes_modes = "
                          "[\"BRANCH_LEQ\", \"LEAF\", \"LEAF\"], nodes_values = [0.5, 0.0, 0.0], "
                          "nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], "
                          "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [1, 1], "
                          "class_weights = [0.3, 0.9], classlabels_strings = [\"no\", \"yes\"]> "
                          "(X)\n}\n";
  in = ft(d21, 2, (float[]){0, 1});
  CHECK(run(mb, 1, X1, &in, 2, out) == 0);
  const char *wb[] = {"no", "yes"};
  EXPECT_STR(out[0], d2, wb);
  EXPECT(out[1], OX_FLOAT, d22, ((double[]){0.7, 0.3, 0.1, 0.9}), 1e-6);
  /* binary case with LOGISTIC: scores (-s, s) -> (sig(-s), sig(s)); s = .3 ->
   * (0.425557483, 0.574442517) label yes; s = .9 -> (0.289050497, 0.710949503) yes */
  const char *mbl = HDR(1) "g (float[2,1] X) => (string[2] Y, float[2,2] Z) {\n"
                           "  Y, Z = ai.onnx.ml.TreeEnsembleClassifier <nodes_treeids = [0, 0, 0], "
                           "nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0], nodes_modes = "
                           "[\"BRANCH_LEQ\", \"LEAF\", \"LEAF\"], nodes_values = [0.5, 0.0, 0.0], "
                           "nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], "
                           "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [1, 1], "
                           "class_weights = [0.3, 0.9], classlabels_strings = [\"no\", \"yes\"], "
                           "post_transform = \"LOGISTIC\"> (X)\n}\n";
  in = ft(d21, 2, (float[]){0, 1});
  CHECK(run(mbl, 1, X1, &in, 2, out) == 0);
  const char *wbl[] = {"yes", "yes"};
  EXPECT_STR(out[0], d2, wbl);
  EXPECT(out[1], OX_FLOAT, d22,
         ((double[]){0.425557483188341, 0.574442516811659, 0.289050497374996, 0.710949502625004}),
         1e-6);
  /* a true child id that does not exist: error naming the node */
  const char *mbad = HDR(1) "g (float[2,1] X) => (int64[2] Y, float[2,2] Z) {\n"
                            "  Y, Z = ai.onnx.ml.TreeEnsembleClassifier <nodes_treeids = [0, 0], "
                            "nodes_nodeids = [0, 1], nodes_featureids = [0, 0], nodes_modes = "
                            "[\"BRANCH_LEQ\", \"LEAF\"], nodes_values = [0.5, 0.0], "
                            "nodes_truenodeids = [9, 0], nodes_falsenodeids = [1, 0], "
                            "class_treeids = [0], class_nodeids = [1], class_ids = [1], "
                            "class_weights = [1.0], classlabels_int64s = [1, 2]> (X)\n}\n";
  run_fails(mbad, ft(d21, 2, (float[]){0, 1}), "TreeEnsembleClassifier");
}

/* ================= TreeEnsemble-5 ================= */
/* tree 0 (root 0): x0 > 0 ? leaf 0 (t0, 4) : leaf 1 (t1, 2)
 * tree 1 (root 1): x1 == 3 ? leaf 2 (t0, 6) : leaf 3 (t0, -2)
 * row (1,3): leaves 0, 2 -> t0 {4, 6}; row (-1,0): leaves 1, 3 -> t0 {-2}, t1 {2} */
#define TE5(agg, post, T)                                                                \
  HDR(5)                                                                                 \
  "g (" T "[N,2] X) => (" T                                                              \
  "[N,2] Y) {\n"                                                                         \
  "  Y = ai.onnx.ml.TreeEnsemble <n_targets = 2, tree_roots = [0, 1], nodes_featureids " \
  "= [0, 1], nodes_modes = uint8[2] {3, 4}, nodes_splits = " T                           \
  "[2] {0.0, 3.0}, "                                                                     \
  "nodes_truenodeids = [0, 2], nodes_trueleafs = [1, 1], nodes_falsenodeids = [1, 3], "  \
  "nodes_falseleafs = [1, 1], leaf_targetids = [0, 1, 0, 0], leaf_weights = " T          \
  "[4] {4.0, 2.0, 6.0, -2.0}, aggregate_function = " #agg ", post_transform = " #post "> (X)\n}\n"
static void test_tree5(void) {
  int64_t d22[2] = {2, 2};
  const float x[4] = {1, 3, -1, 0};
  /* SUM (1): (10, 0), (-2, 2) */
  EXPECT(run1(TE5(1, 0, "float"), ft(d22, 2, x)), OX_FLOAT, d22, ((double[]){10, 0, -2, 2}), 0);
  /* AVERAGE (0): divided by the 2 trees: (5, 0), (-1, 1) */
  EXPECT(run1(TE5(0, 0, "double"), dt(d22, 2, (double[]){1, 3, -1, 0})), OX_DOUBLE, d22,
         ((double[]){5, 0, -1, 1}), 0);
  /* MIN (2): (4, 0), (-2, 2); MAX (3): (6, 0), (-2, 2) */
  EXPECT(run1(TE5(2, 0, "float"), ft(d22, 2, x)), OX_FLOAT, d22, ((double[]){4, 0, -2, 2}), 0);
  EXPECT(run1(TE5(3, 0, "float"), ft(d22, 2, x)), OX_FLOAT, d22, ((double[]){6, 0, -2, 2}), 0);
  /* LOGISTIC (2) after SUM: sig(10), sig(0), sig(-2), sig(2) */
  EXPECT(run1(TE5(1, 2, "float"), ft(d22, 2, x)), OX_FLOAT, d22,
         ((double[]){0.9999546021312976, 0.5, 0.11920292202211755, 0.8807970779778823}), 1e-6);
  /* many rows (the parallel path): row i = (i odd ? -1 : 1, i % 3 ? 0 : 3); SUM gives
   * t0 = (x0 > 0 ? 4 : 0) + (x1 == 3 ? 6 : -2), t1 = x0 > 0 ? 0 : 2 */
  {
    enum { NR = 6000 };
    int64_t dn[2] = {NR, 2};
    float *xb = malloc(sizeof(float) * NR * 2);
    double *wb = malloc(sizeof(double) * NR * 2);
    for (int i = 0; i < NR; i++) {
      xb[2 * i] = i % 2 ? -1.0f : 1.0f;
      xb[2 * i + 1] = i % 3 ? 0.0f : 3.0f;
      wb[2 * i] = (i % 2 ? 0 : 4) + (i % 3 ? -2 : 6);
      wb[2 * i + 1] = i % 2 ? 2 : 0;
    }
    EXPECT(run1(TE5(1, 0, "float"), ft(dn, 2, xb)), OX_FLOAT, dn, wb, 0);
    free(xb);
    free(wb);
  }
  /* float16: 1 = 0x3C00, 3 = 0x4200, -1 = 0xBC00; SUM (10, 0), (-2, 2) =
   * 0x4900, 0, 0xC000, 0x4000 */
  ox_err e = {0};
  ox_value *h = ox_tensor_new(OX_FLOAT16, d22, 2, &e);
  const uint16_t hx[4] = {0x3C00, 0x4200, 0xBC00, 0};
  memcpy(h->data, hx, sizeof hx);
  ox_value *o = run1(TE5(1, 0, "float16"), h);
  CHECK(o && o->dtype == OX_FLOAT16 && dims_are(o, d22, 2));
  if (o) {
    const uint16_t *hy = o->data;
    CHECK(hy[0] == 0x4900 && hy[1] == 0 && hy[2] == 0xC000 && hy[3] == 0x4000);
  }
  ox_value_unref(o);
  /* BRANCH_MEMBER: sets {1, 3} (node 0) and {5} (node 1) delimited by NaN;
   * node 0: x0 in {1,3} ? leaf 0 (t0 1) : node 1; node 1: x0 in {5} ? leaf 1 (t0 2) : leaf 2
   * (t0 3); NaN with missing_value_tracks_true on node 1 goes to leaf 1.
   * x0 = 3, 5, 4, nan -> 1, 2, 3, 2 */
  const char *mm =
      HDR(5) "g (float[4,1] X) => (float[4,1] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsemble <n_targets = 1, tree_roots = [0], nodes_featureids = "
             "[0, 0], nodes_modes = uint8[2] {6, 6}, nodes_splits = float[2] {0.0, 0.0}, "
             "membership_values = float[5] {1.0, 3.0, nan, 5.0, nan}, "
             "nodes_missing_value_tracks_true = [0, 1], nodes_truenodeids = [0, 1], "
             "nodes_trueleafs = [1, 1], nodes_falsenodeids = [1, 2], nodes_falseleafs = [0, 1], "
             "leaf_targetids = [0, 0, 0], leaf_weights = float[3] {1.0, 2.0, 3.0}> (X)\n}\n";
  int64_t d41[2] = {4, 1};
  EXPECT(run1(mm, ft(d41, 2, (float[]){3, 5, 4, NAN})), OX_FLOAT, d41, ((double[]){1, 2, 3, 2}), 0);
  /* a cycle (node 0 -> node 1 -> node 0) is reported, not looped forever */
  const char *mc =
      HDR(5) "g (float[1,1] X) => (float[1,1] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsemble <n_targets = 1, tree_roots = [0], nodes_featureids = "
             "[0, 0], nodes_modes = uint8[2] {0, 0}, nodes_splits = float[2] {1.0, 1.0}, "
             "nodes_truenodeids = [1, 0], nodes_trueleafs = [0, 0], nodes_falsenodeids = [0, 0], "
             "nodes_falseleafs = [1, 1], leaf_targetids = [0], leaf_weights = float[1] {1.0}> "
             "(X)\n}\n";
  int64_t d11[2] = {1, 1};
  run_fails(mc, ft(d11, 2, (float[]){0}), "TreeEnsemble");
  /* a leaf index out of range: error naming the node */
  const char *mo =
      HDR(5) "g (float[1,1] X) => (float[1,1] Y) {\n"
             "  Y = ai.onnx.ml.TreeEnsemble <n_targets = 1, tree_roots = [0], nodes_featureids = "
             "[0], nodes_modes = uint8[1] {0}, nodes_splits = float[1] {1.0}, nodes_truenodeids = "
             "[3], nodes_trueleafs = [1], nodes_falsenodeids = [0], nodes_falseleafs = [1], "
             "leaf_targetids = [0], leaf_weights = float[1] {1.0}> (X)\n}\n";
  run_fails(mo, ft(d11, 2, (float[]){0}), "TreeEnsemble");
}

/* ================= Normalizer-1, OneHotEncoder-1, Scaler-1 ================= */
static void test_norm_ohe_scaler(void) {
  /* L1: (1,-3)/4 = (.25,-.75); a zero row stays as is */
  const char *m1 = HDR(1) "g (float[2,2] X) => (float[2,2] Y) {\n"
                          "  Y = ai.onnx.ml.Normalizer <norm = \"L1\"> (X)\n}\n";
  int64_t d22[2] = {2, 2};
  EXPECT(run1(m1, ft(d22, 2, (float[]){1, -3, 0, 0})), OX_FLOAT, d22,
         ((double[]){0.25, -0.75, 0, 0}), 1e-6);
  /* L2: (3,4)/5; MAX: (2,4)/4 (int64 input) */
  const char *m2 = HDR(1) "g (float[1,2] X) => (float[1,2] Y) {\n"
                          "  Y = ai.onnx.ml.Normalizer <norm = \"L2\"> (X)\n}\n";
  int64_t d12[2] = {1, 2};
  EXPECT(run1(m2, ft(d12, 2, (float[]){3, 4})), OX_FLOAT, d12, ((double[]){0.6, 0.8}), 1e-6);
  const char *m3 = HDR(1) "g (int64[1,2] X) => (float[1,2] Y) {\n"
                          "  Y = ai.onnx.ml.Normalizer <norm = \"MAX\"> (X)\n}\n";
  EXPECT(run1(m3, it64(d12, 2, (int64_t[]){2, 4})), OX_FLOAT, d12, ((double[]){0.5, 1}), 1e-6);
  /* OneHotEncoder: categories (1,3,5), doubles (3, 2, 5) -> rows e1, 0, e2 */
  const char *mo = HDR(1) "g (double[3] X) => (float[3,3] Y) {\n"
                          "  Y = ai.onnx.ml.OneHotEncoder <cats_int64s = [1, 3, 5]> (X)\n}\n";
  int64_t d3[1] = {3}, d33[2] = {3, 3};
  EXPECT(run1(mo, dt(d3, 1, (double[]){3, 2, 5})), OX_FLOAT, d33,
         ((double[]){0, 1, 0, 0, 0, 0, 0, 0, 1}), 0);
  /* strings: cats (x, y), input [[y],[x]] -> [[[0,1]],[[1,0]]] */
  const char *ms = HDR(1) "g (string[2,1] X) => (float[2,1,2] Y) {\n"
                          "  Y = ai.onnx.ml.OneHotEncoder <cats_strings = [\"x\", \"y\"]> (X)\n}\n";
  int64_t d21[2] = {2, 1}, d212[3] = {2, 1, 2};
  const char *xs[] = {"y", "x"};
  EXPECT(run1(ms, st(d21, 2, xs)), OX_FLOAT, d212, ((double[]){0, 1, 1, 0}), 0);
  /* zeros = 0 and an unknown category: error naming the node */
  const char *mz = HDR(1) "g (double[3] X) => (float[3,3] Y) {\n"
                          "  Y = ai.onnx.ml.OneHotEncoder <cats_int64s = [1, 3, 5], zeros = 0> "
                          "(X)\n}\n";
  run_fails(mz, dt(d3, 1, (double[]){3, 2, 5}), "OneHotEncoder");
  /* Scaler: (x - (1,2)) * (2, .5): (3,4) -> (4, 1); (1,0) -> (0, -1) */
  const char *msc = HDR(1) "g (int32[2,2] X) => (float[2,2] Y) {\n"
                           "  Y = ai.onnx.ml.Scaler <offset = [1.0, 2.0], scale = [2.0, 0.5]> "
                           "(X)\n}\n";
  EXPECT(run1(msc, it32(d22, 2, (int32_t[]){3, 4, 1, 0})), OX_FLOAT, d22, ((double[]){4, 1, 0, -1}),
         1e-6);
}

/* ================= ZipMap-1 ================= */
static void test_zipmap(void) {
  /* rows (.25,.75), (1,0) with labels (a, b) -> [{a:.25, b:.75}, {a:1, b:0}] */
  const char *m = HDR(1) "g (float[2,2] X) => (seq(map(string, float)) Z) {\n"
                         "  Z = ai.onnx.ml.ZipMap <classlabels_strings = [\"a\", \"b\"]> (X)\n}\n";
  int64_t d22[2] = {2, 2};
  ox_value *o = run1(m, ft(d22, 2, (float[]){0.25f, 0.75f, 1, 0}));
  CHECK(o && o->kind == OX_VAL_SEQUENCE && o->n_items == 2);
  if (o && o->n_items == 2) {
    const float want[2][2] = {{0.25f, 0.75f}, {1, 0}};
    for (int r = 0; r < 2; r++) {
      ox_value *mv = o->items[r];
      CHECK(mv->kind == OX_VAL_MAP && mv->keys->numel == 2 && mv->vals->numel == 2);
      CHECK(!strcmp(((char **)mv->keys->data)[0], "a") &&
            !strcmp(((char **)mv->keys->data)[1], "b"));
      CHECK(((float *)mv->vals->data)[0] == want[r][0] &&
            ((float *)mv->vals->data)[1] == want[r][1]);
    }
  }
  ox_value_unref(o);
  /* int64 labels (3, 1) on a 1-D input (.5, .5) -> [{3:.5, 1:.5}] */
  const char *m2 = HDR(1) "g (float[2] X) => (seq(map(int64, float)) Z) {\n"
                          "  Z = ai.onnx.ml.ZipMap <classlabels_int64s = [3, 1]> (X)\n}\n";
  int64_t d2[1] = {2};
  o = run1(m2, ft(d2, 1, (float[]){0.5f, 0.5f}));
  CHECK(o && o->kind == OX_VAL_SEQUENCE && o->n_items == 1);
  if (o && o->n_items == 1) {
    ox_value *mv = o->items[0];
    CHECK(((int64_t *)mv->keys->data)[0] == 3 && ((int64_t *)mv->keys->data)[1] == 1);
    CHECK(((float *)mv->vals->data)[0] == 0.5f && ((float *)mv->vals->data)[1] == 0.5f);
  }
  ox_value_unref(o);
  /* three columns for two labels: error naming the node */
  int64_t d13[2] = {1, 3};
  const char *m3 = HDR(1) "g (float[1,3] X) => (seq(map(string, float)) Z) {\n"
                          "  Z = ai.onnx.ml.ZipMap <classlabels_strings = [\"a\", \"b\"]> (X)\n}\n";
  run_fails(m3, ft(d13, 2, (float[]){1, 2, 3}), "ZipMap");
}

/* ================= bad input, one or more per operator ================= */
/* Each case fails with a message that names the node and says what is
 * wrong (the word given). Together with the error cases above, every
 * ai.onnx.ml operator is covered. */
static void fails_with(const char *text, size_t n_in, const char *const *names, ox_value **ins,
                       const char *node, const char *word) {
  ox_value *out = NULL;
  int rc = run(text, n_in, names, ins, 1, &out);
  CHECK(rc != 0);
  bool named = strstr(last_err, node) != NULL, says = strstr(last_err, word) != NULL;
  CHECK(named);
  CHECK(says);
  if (rc == 0 || !named || !says)
    fprintf(stderr, "  %s (want '%s'): %s\n", node, word, rc ? last_err : "no error");
  if (getenv("SHOWERR")) fprintf(stderr, "%s\n", last_err);
  ox_value_unref(out);
}

static void test_bad_inputs(void) {
  int64_t d2[1] = {2}, d12[2] = {1, 2}, d22[2] = {2, 2};
  const char *k2[] = {"a", "b"};
  /* Binarizer: a string tensor is outside T */
  {
    const char *m = HDR(1) "g (string[2] X) => (string[2] Y) {\n"
                           "  Y = ai.onnx.ml.Binarizer (X)\n}\n";
    ox_value *in[1] = {st(d2, 1, k2)};
    fails_with(m, 1, X1, in, "Binarizer", "string");
  }
  /* CastMap: a map with string keys (keys must be int64) */
  {
    const char *m = HDR(1) "g (map(string, float) X) => (float[1,2] Y) {\n"
                           "  Y = ai.onnx.ml.CastMap (X)\n}\n";
    ox_value *in[1] = {mp(st(d2, 1, k2), ft(d2, 1, (float[]){1, 2}))};
    fails_with(m, 1, X1, in, "CastMap", "keys must be int64");
  }
  /* CategoryMapper: the two category lists differ in length */
  {
    const char *m = HDR(1) "g (string[2] X) => (int64[2] Y) {\n"
                           "  Y = ai.onnx.ml.CategoryMapper <cats_strings = [\"a\", \"b\"], "
                           "cats_int64s = [1]> (X)\n}\n";
    ox_value *in[1] = {st(d2, 1, k2)};
    fails_with(m, 1, X1, in, "CategoryMapper", "length");
  }
  /* DictVectorizer: int64 keys against a string vocabulary, as a runtime map */
  {
    const char *m = HDR(1) "g (map(int64, float) X) => (float[1,2] Y) {\n"
                           "  Y = ai.onnx.ml.DictVectorizer <string_vocabulary = [\"a\", \"b\"]> "
                           "(X)\n}\n";
    ox_value *in[1] = {mp(it64(d2, 1, (int64_t[]){1, 2}), ft(d2, 1, (float[]){1, 2}))};
    fails_with(m, 1, X1, in, "DictVectorizer", "key");
  }
  /* FeatureVectorizer: two inputs, one declared dimension */
  {
    const char *m = HDR(1) "g (float[1,2] A, float[1,2] B) => (float[1,4] Y) {\n"
                           "  Y = ai.onnx.ml.FeatureVectorizer <inputdimensions = [2]> (A, B)\n}\n";
    const char *const nm[] = {"A", "B"};
    ox_value *in[2] = {ft(d12, 2, (float[]){1, 2}), ft(d12, 2, (float[]){3, 4})};
    fails_with(m, 2, nm, in, "FeatureVectorizer", "inputdimensions");
  }
  /* LabelEncoder: int64 input for string keys */
  {
    const char *m = HDR(2) "g (int64[2] X) => (int64[2] Y) {\n"
                           "  Y = ai.onnx.ml.LabelEncoder <keys_strings = [\"a\", \"b\"], "
                           "values_int64s = [1, 2]> (X)\n}\n";
    ox_value *in[1] = {it64(d2, 1, (int64_t[]){1, 2})};
    fails_with(m, 1, X1, in, "LabelEncoder", "key");
  }
  /* LinearRegressor: 3 coefficients for 2 features and 1 target */
  {
    const char *m = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                           "  Y = ai.onnx.ml.LinearRegressor <coefficients = [1.0, 2.0, 3.0]> "
                           "(X)\n}\n";
    ox_value *in[1] = {ft(d12, 2, (float[]){1, 2})};
    fails_with(m, 1, X1, in, "LinearRegressor", "coefficients");
  }
  /* Normalizer: an unknown norm */
  {
    const char *m = HDR(1) "g (float[1,2] X) => (float[1,2] Y) {\n"
                           "  Y = ai.onnx.ml.Normalizer <norm = \"L3\"> (X)\n}\n";
    ox_value *in[1] = {ft(d12, 2, (float[]){1, 2})};
    fails_with(m, 1, X1, in, "Normalizer", "L3");
  }
  /* Scaler: 3 scales for 2 features */
  {
    const char *m = HDR(1) "g (float[2,2] X) => (float[2,2] Y) {\n"
                           "  Y = ai.onnx.ml.Scaler <offset = [0.0], scale = [1.0, 2.0, 3.0]> "
                           "(X)\n}\n";
    ox_value *in[1] = {ft(d22, 2, (float[]){1, 2, 3, 4})};
    fails_with(m, 1, X1, in, "Scaler", "scale");
  }
  /* SVMRegressor: 2 support vectors of 2 features, 3 coefficients */
  {
    const char *m = HDR(1) "g (float[1,2] X) => (float[1,1] Y) {\n"
                           "  Y = ai.onnx.ml.SVMRegressor <n_supports = 2, support_vectors = "
                           "[1.0, 0.0, 0.0, 1.0], coefficients = [1.0, 1.0, 1.0], rho = [0.0]> "
                           "(X)\n}\n";
    ox_value *in[1] = {ft(d12, 2, (float[]){1, 2})};
    fails_with(m, 1, X1, in, "SVMRegressor", "coefficients");
  }
  /* ZipMap: a double tensor (T is float only) */
  {
    const char *m = HDR(1) "g (double[1,2] X) => (seq(map(string, float)) Y) {\n"
                           "  Y = ai.onnx.ml.ZipMap <classlabels_strings = [\"a\", \"b\"]> "
                           "(X)\n}\n";
    ox_value *in[1] = {dt(d12, 2, (double[]){1, 2})};
    fails_with(m, 1, X1, in, "ZipMap", "double");
  }
}

int main(void) {
  test_afe();
  test_binarizer();
  test_castmap();
  test_catmap();
  test_dictvec();
  test_featvec();
  test_imputer();
  test_label_encoder();
  test_linear();
  test_svm();
  test_tree_regressor();
  test_tree_classifier();
  test_tree5();
  test_norm_ohe_scaler();
  test_zipmap();
  test_bad_inputs();
  printf("test_ml: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
