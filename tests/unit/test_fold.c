/* test_fold.c - constant folding at session creation (optimization_level 1):
 * a chain of nodes over initializers gives the same result folded or not (Add
 * and Mul by Operators.md: [1,2,3] + [10,20,30] = [11,22,33], times 2 =
 * [22,44,66]); an initializer that is also a graph input is folded while
 * the default is used, and a run that overrides it gets the overriding
 * value (then the default again); a random op over constants is never folded
 * (two runs of an unseeded RandomUniformLike differ). */
#include <stdio.h>
#include <string.h>

#include "onnxc.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static const char *chain =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "G (float[3] X) => (float[3] Y, float[3] Z)\n"
    "<float[3] A = {1, 2, 3}, float[3] B = {10, 20, 30}, float two = {2}>\n"
    "{ S = Add(A, B)\n  Y = Mul(S, two)\n  Z = Add(Y, X) }\n";

static const char *overridable =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "G (float[3] X, float[3] B) => (float[3] Y)\n"
    "<float[3] A = {1, 2, 3}, float[3] B = {10, 20, 30}>\n"
    "{ Y = Add(A, B) }\n";

static const char *random_model =
    "<ir_version: 8, opset_import: [\"\" : 18]>\n"
    "G (float[1] X) => (float[64] Y)\n"
    "<float[64] A = {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
    "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}>\n"
    "{ Y = RandomUniformLike(A) }\n";

/* the model must outlive its session; one at a time here */
static onnxc_model *m;

static onnxc_session *open_session(const char *text, int level) {
  onnxc_error e;
  onnxc_model_free(m);
  m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "test", &m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", e.msg);
    return NULL;
  }
  onnxc_session_options o = {1, level, NULL, NULL};
  onnxc_session *s = NULL;
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) fprintf(stderr, "session: %s\n", e.msg);
  return s;
}

static void test_chain(int level) {
  onnxc_session *s = open_session(chain, level);
  CHECK(s != NULL);
  if (!s) return;
  float x[3] = {1, 1, 1};
  int64_t d[1] = {3};
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, d, 1, x, &e);
  const char *names[1] = {"X"};
  onnxc_value *out[2] = {NULL, NULL};
  CHECK(onnxc_session_run(s, names, &in, 1, NULL, out, 2, &e) == ONNXC_OK);
  for (int run = 0; run < 2 && out[0] && out[1]; run++) {
    const float *y = onnxc_tensor_data(out[0]), *z = onnxc_tensor_data(out[1]);
    CHECK(y[0] == 22 && y[1] == 44 && y[2] == 66);
    CHECK(z[0] == 23 && z[1] == 45 && z[2] == 67);
    onnxc_value_free(out[0]);
    onnxc_value_free(out[1]);
    out[0] = out[1] = NULL;
    if (run == 0) CHECK(onnxc_session_run(s, names, &in, 1, NULL, out, 2, &e) == ONNXC_OK);
  }
  onnxc_value_free(in);
  onnxc_session_free(s);
}

static void test_overridable(void) {
  onnxc_session *s = open_session(overridable, 1);
  CHECK(s != NULL);
  if (!s) return;
  float x[3] = {0, 0, 0}, b[3] = {100, 200, 300};
  int64_t d[1] = {3};
  onnxc_error e;
  onnxc_value *in[2] = {onnxc_tensor_wrap(1, d, 1, x, &e), onnxc_tensor_wrap(1, d, 1, b, &e)};
  const char *names[2] = {"X", "B"};
  /* default B, overridden B, default B again */
  static const float want[3][3] = {{11, 22, 33}, {101, 202, 303}, {11, 22, 33}};
  for (int r = 0; r < 3; r++) {
    onnxc_value *out = NULL;
    CHECK(onnxc_session_run(s, names, in, r == 1 ? 2 : 1, NULL, &out, 1, &e) == ONNXC_OK);
    if (out) {
      const float *y = onnxc_tensor_data(out);
      CHECK(y[0] == want[r][0] && y[1] == want[r][1] && y[2] == want[r][2]);
      onnxc_value_free(out);
    }
  }
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  onnxc_session_free(s);
}

static void test_random(void) {
  onnxc_session *s = open_session(random_model, 1);
  CHECK(s != NULL);
  if (!s) return;
  float x[1] = {0};
  int64_t d[1] = {1};
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, d, 1, x, &e);
  const char *names[1] = {"X"};
  onnxc_value *a = NULL, *b = NULL;
  CHECK(onnxc_session_run(s, names, &in, 1, NULL, &a, 1, &e) == ONNXC_OK);
  CHECK(onnxc_session_run(s, names, &in, 1, NULL, &b, 1, &e) == ONNXC_OK);
  if (a && b) CHECK(memcmp(onnxc_tensor_data(a), onnxc_tensor_data(b), 64 * sizeof(float)) != 0);
  onnxc_value_free(a);
  onnxc_value_free(b);
  onnxc_value_free(in);
  onnxc_session_free(s);
}

int main(void) {
  test_chain(0);
  test_chain(1);
  test_overridable();
  test_random();
  onnxc_model_free(m);
  if (fails) return 1;
  printf("test_fold: ok\n");
  return 0;
}
