/* api_check.h - what the tests of the public header share (they include
 * only <onnxc.h> besides): a counting CHECK, string equality that takes
 * NULL, loading or parsing a model with the error counted, and the closing
 * line. */
#ifndef ONNXC_TEST_API_CHECK_H
#define ONNXC_TEST_API_CHECK_H

#include <onnxc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

/* false when either is NULL */
static inline bool streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* A model from ONNX text (NULL, counted as a failure, when it does not parse). */
static inline onnxc_model *parse(const char *text) {
  onnxc_model *m = NULL;
  onnxc_error err = {0};
  if (onnxc_model_parse_text(text, strlen(text), "test", &m, &err) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", err.msg);
    failures++;
  }
  return m;
}

/* A model from a file (NULL, counted as a failure, when it does not load). */
static inline onnxc_model *load(const char *path, const onnxc_load_options *opts) {
  onnxc_model *m = NULL;
  onnxc_error err = {0};
  if (onnxc_model_load(path, opts, &m, &err) != ONNXC_OK) {
    fprintf(stderr, "load %s: %s\n", path, err.msg);
    failures++;
  }
  return m;
}

/* The closing line and the exit status. */
static inline int finish(const char *test) {
  if (failures) {
    fprintf(stderr, "%s: %d checks failed\n", test, failures);
    return 1;
  }
  printf("%s: all checks passed\n", test);
  return 0;
}

#endif
