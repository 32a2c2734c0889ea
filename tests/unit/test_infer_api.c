/* test_infer_api.c - onnxc_infer_shapes through the public header: the
 * perceptron of the ONNX introduction (examples/perceptron.onnxtxt) with N
 * bound to 5 gives Out float[5,2] (Gemm [N,3]x[3,4] -> Relu -> Gemm x[4,2]
 * -> Sigmoid, by Operators.md); without the binding the symbol N flows
 * through; a binding whose rank differs from the declared one is an error
 * in strict mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"

static int fails;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                                \
    }                                                                         \
  } while (0)

static char *printed(onnxc_model *m) {
  char *t = NULL;
  onnxc_error e;
  if (onnxc_model_print(m, &t, &e) != ONNXC_OK) fprintf(stderr, "print: %s\n", e.msg);
  return t;
}

int main(void) {
  onnxc_error e;
  onnxc_model *m = NULL;
  CHECK(onnxc_model_load("examples/perceptron.onnxtxt", NULL, &m, &e) == ONNXC_OK);
  if (!m) return 1;
  const char *names[] = {"X"};
  const int64_t dims5[] = {5, 3};
  const int64_t *dims[] = {dims5};
  const size_t ranks[] = {2};
  onnxc_infer_options o = {1, 1, names, dims, ranks};
  char *warn = NULL;
  CHECK(onnxc_infer_shapes(m, &o, &warn, &e) == ONNXC_OK);
  free(warn);
  char *t = printed(m);
  CHECK(t && strstr(t, "float[5,2] Out") != NULL);
  CHECK(t && strstr(t, "float[5,4] Y1") != NULL);
  if (t && !strstr(t, "float[5,2] Out")) fprintf(stderr, "%s\n", t);
  free(t);
  onnxc_model_free(m);

  m = NULL;
  CHECK(onnxc_model_load("examples/perceptron.onnxtxt", NULL, &m, &e) == ONNXC_OK);
  if (!m) return 1;
  CHECK(onnxc_infer_shapes(m, NULL, NULL, &e) == ONNXC_OK);
  t = printed(m);
  CHECK(t && strstr(t, "float[N,4] Y1") != NULL);
  free(t);
  onnxc_model_free(m);

  /* X is declared [N,3]: a rank-3 binding is rejected in strict mode */
  m = NULL;
  CHECK(onnxc_model_load("examples/perceptron.onnxtxt", NULL, &m, &e) == ONNXC_OK);
  if (!m) return 1;
  const int64_t bad[] = {5, 3, 1};
  const int64_t *bdims[] = {bad};
  const size_t branks[] = {3};
  onnxc_infer_options ob = {1, 1, names, bdims, branks};
  CHECK(onnxc_infer_shapes(m, &ob, NULL, &e) != ONNXC_OK);
  CHECK(strstr(e.msg, "rank") != NULL);
  onnxc_model_free(m);
  CHECK(onnxc_infer_shapes(NULL, NULL, NULL, &e) == ONNXC_ERR_INVALID_ARG);
  if (fails) return 1;
  printf("test_infer_api: ok\n");
  return 0;
}
