/* test_api_tools.c - what the `onnxc` tool's test runner and benchmark use,
 * through the public header only (<onnxc.h>): comparing values as the
 * conformance tests do, the lowest opset a model can be converted to,
 * running context-dependent bodies instead of kernels, the threads of a
 * session and a profile of chosen length.
 *
 * Expected values: first versions from ../shared/spec/onnx/Changelog.md
 * (Add-1, Relu-1, Gelu-20), softmax of [0, ln 2] worked out by hand (1/3,
 * 2/3), and examples/perceptron.onnxtxt's four nodes (Gemm, Relu, Gemm,
 * Sigmoid). */
#include <math.h>
#include <stdlib.h>

#include "api_check.h"

static onnxc_value *floats(const float *v, int64_t n) {
  onnxc_error err = {0};
  onnxc_value *t = onnxc_tensor_create(1, &n, 1, &err);
  if (t) memcpy(onnxc_tensor_data(t), v, (size_t)n * sizeof *v);
  return t;
}

static void test_compare(void) {
  char why[256];
  onnxc_value *a = floats((const float[]){1, 2, NAN}, 3);
  onnxc_value *close = floats((const float[]){1.0005f, 2, NAN}, 3);
  onnxc_value *far = floats((const float[]){1.01f, 2, NAN}, 3);
  onnxc_value *shorter = floats((const float[]){1, 2}, 2);
  /* |1.0005 - 1| <= 1e-7 + 1e-3 * 1, and NaN equals NaN */
  CHECK(onnxc_value_compare(a, close, 1e-3, 1e-7, why, sizeof why) == 0);
  CHECK(onnxc_value_compare(a, far, 1e-3, 1e-7, why, sizeof why) != 0);
  CHECK(strstr(why, "element 0") != NULL);
  CHECK(onnxc_value_compare(a, far, 1e-1, 0, why, sizeof why) == 0);
  CHECK(onnxc_value_compare(a, shorter, 1e-3, 1e-7, why, sizeof why) != 0 && why[0]);
  CHECK(onnxc_value_compare(a, far, 1e-3, 1e-7, NULL, 0) != 0);
  char tiny[6];
  CHECK(onnxc_value_compare(a, far, 1e-3, 1e-7, tiny, sizeof tiny) != 0 && strlen(tiny) < 6);
  /* integers exactly */
  onnxc_error err = {0};
  int64_t two = 2;
  onnxc_value *i1 = onnxc_tensor_create(7, &two, 1, &err);
  onnxc_value *i2 = onnxc_tensor_create(7, &two, 1, &err);
  ((int64_t *)onnxc_tensor_data(i2))[1] = 1;
  CHECK(onnxc_value_compare(i1, i2, 1, 1, why, sizeof why) != 0);
  CHECK(onnxc_value_compare(i1, i1, 0, 0, why, sizeof why) == 0);
  /* an optional holding a value equals the value; types must agree */
  onnxc_value *opt = onnxc_optional_create(a, &err);
  CHECK(onnxc_value_compare(opt, close, 1e-3, 1e-7, why, sizeof why) == 0);
  CHECK(onnxc_value_compare(a, i1, 1, 1, why, sizeof why) != 0);
  CHECK(onnxc_value_compare(NULL, NULL, 0, 0, why, sizeof why) == 0);
  CHECK(onnxc_value_compare(a, NULL, 0, 0, why, sizeof why) != 0);
  onnxc_value *all[] = {a, close, far, shorter, i1, i2, opt};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) onnxc_value_free(all[i]);
}

static void test_min_opset(void) {
  onnxc_model *m = parse(
      "<ir_version: 9, opset_import: [\"\" : 21]>\n"
      "g (float[2] x) => (float[2] y) { t = Relu (x)\n y = Add (t, x) }\n");
  CHECK(onnxc_model_min_opset(m) == 1); /* Relu-1, Add-1 */
  onnxc_model_free(m);
  /* Gelu first appears in opset 20; inside a Loop body it counts too */
  m = parse(
      "<ir_version: 9, opset_import: [\"\" : 21]>\n"
      "g (int64 n, bool c, float[2] x) => (float[2] y) {\n"
      "  y = Loop (n, c, x) <body = b (int64 i, bool ci, float[2] xi) => (bool co, float[2] xo) {\n"
      "    co = Identity (ci)\n    xo = Gelu (xi)\n  }>\n"
      "}\n");
  CHECK(onnxc_model_min_opset(m) == 20);
  onnxc_model_free(m);
  m = parse(
      "<ir_version: 9, opset_import: [\"com.test\" : 1]>\n"
      "g (float[2] x) => (float[2] y) { y = com.test.Op (x) }\n");
  CHECK(onnxc_model_min_opset(m) == 1); /* no ai.onnx operator */
  onnxc_model_free(m);
  CHECK(onnxc_model_min_opset(NULL) == 1);
}

static const char *softmax_model =
    "<ir_version: 9, opset_import: [\"\" : 18]>\n"
    "g (float[2] x) => (float[2] y) { y = Softmax <axis = 0> (x) }\n";

/* softmax([0, ln 2]) = [1, 2] / 3 */
static void check_softmax(const onnxc_model *m) {
  onnxc_session *s = NULL;
  onnxc_error err = {0};
  if (onnxc_session_create(m, NULL, &s, &err) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", err.msg);
    failures++;
    return;
  }
  onnxc_value *x = floats((const float[]){0, logf(2)}, 2), *y = NULL;
  CHECK(onnxc_session_run(s, NULL, &x, 1, NULL, &y, 1, &err) == ONNXC_OK);
  const float *v = onnxc_tensor_data_const(y);
  CHECK(v && fabsf(v[0] - 1.0f / 3) < 1e-6f && fabsf(v[1] - 2.0f / 3) < 1e-6f);
  onnxc_value_free(x);
  onnxc_value_free(y);
  onnxc_session_free(s);
}

static void test_localize(void) {
  onnxc_model *m = parse(softmax_model);
  if (!m) return;
  size_t n = 99;
  onnxc_error err = {0};
  CHECK(onnxc_model_localize_context_bodies(m, &n, &err) == ONNXC_OK && n == 1);
  /* the node now calls a model-local function holding Softmax's body */
  const onnxc_node *call = onnxc_graph_node(onnxc_model_graph(m), 0);
  CHECK(onnxc_model_function_count(m) == 1);
  const onnxc_function *f = onnxc_model_function(m, 0);
  CHECK(strcmp(onnxc_node_op_type(call), onnxc_function_name(f)) == 0);
  CHECK(strcmp(onnxc_node_domain(call), onnxc_function_domain(f)) == 0);
  CHECK(strcmp(onnxc_node_op_type(call), "Softmax") != 0 && onnxc_function_node_count(f) > 1);
  check_softmax(m);
  onnxc_model_free(m);
  /* nothing to replace */
  m = parse("<ir_version: 9, opset_import: [\"\" : 18]>\ng (float[2] x) => (float[2] y) "
            "{ y = Relu (x) }\n");
  n = 99;
  CHECK(onnxc_model_localize_context_bodies(m, &n, &err) == ONNXC_OK && n == 0);
  CHECK(onnxc_model_localize_context_bodies(m, NULL, &err) == ONNXC_OK);
  CHECK(onnxc_model_function_count(m) == 0);
  onnxc_model_free(m);
  CHECK(onnxc_model_localize_context_bodies(NULL, &n, &err) == ONNXC_ERR_INVALID_ARG);
}

/* the lines of the "slowest nodes" list of a profile */
static int slowest_lines(const char *text) {
  const char *p = text ? strstr(text, "slowest nodes") : NULL;
  if (!p) return 0;
  int n = 0;
  for (p = strchr(p, '\n'); p && p[1]; p = strchr(p + 1, '\n')) n++;
  return n;
}

static void test_session(void) {
  onnxc_error err = {0};
  onnxc_model *m = load("examples/perceptron.onnxtxt", NULL);
  if (!m) return;
  for (int threads = 1; threads <= 3; threads++) {
    onnxc_session_options o = {.threads = threads, .profile = 1};
    onnxc_session *s = NULL;
    CHECK(onnxc_session_create(m, &o, &s, &err) == ONNXC_OK);
    CHECK(onnxc_session_threads(s) == threads);
    if (threads == 1) {
      /* 4 nodes: the default profile lists all, a top of 2 lists 2 */
      int64_t dims[2] = {2, 3};
      onnxc_value *x = onnxc_tensor_create(1, dims, 2, &err), *y = NULL;
      CHECK(onnxc_session_run(s, NULL, &x, 1, NULL, &y, 1, &err) == ONNXC_OK);
      char *all = onnxc_session_profile(s), *top2 = onnxc_session_profile_top(s, 2);
      char *none = onnxc_session_profile_top(s, 0);
      CHECK(slowest_lines(all) == 4 && slowest_lines(top2) == 2);
      CHECK(none && !strstr(none, "slowest nodes") && strstr(none, "Gemm"));
      free(all);
      free(top2);
      free(none);
      onnxc_value_free(x);
      onnxc_value_free(y);
    }
    onnxc_session_free(s);
  }
  /* with an environment: its pool */
  onnxc_env *env = NULL;
  CHECK(onnxc_env_create(2, &env, &err) == ONNXC_OK);
  onnxc_session *s = NULL;
  CHECK(onnxc_session_create(m, &(onnxc_session_options){.env = env}, &s, &err) == ONNXC_OK);
  CHECK(onnxc_session_threads(s) == 2);
  onnxc_session_free(s);
  onnxc_env_free(env);
  CHECK(onnxc_session_threads(NULL) == 0 && onnxc_session_profile_top(NULL, 3) == NULL);
  onnxc_model_free(m);
}

int main(void) {
  test_compare();
  test_min_opset();
  test_localize();
  test_session();
  return finish("test_api_tools");
}
