/* test_ops_exclude.c - a build that leaves operator families out
 * (cmake/wasm.cmake's ONNXC_WASM_EXCLUDE): this test links its own copy of
 * src/ops/registry.c compiled with ONNXC_NO_OPS_STRINGS and ONNXC_NO_OPS_ML
 * (tests/opsexclude.cmake), which the linker takes in place of the library's,
 * as the WebAssembly build does. A model using a left-out operator must fail
 * at session creation saying that the operator is not in this build; the
 * operators kept must still run. Through the public API only. */
#include <onnxc.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

/* Session creation of a text model: its status, the message in err. */
static onnxc_status create(const char *text, onnxc_error *err) {
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_status st = onnxc_model_parse_text(text, strlen(text), "test", &m, err);
  if (st == ONNXC_OK) st = onnxc_session_create(m, NULL, &s, err);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return st;
}

int main(void) {
  onnxc_error err = {0};
  /* strings: left out */
  onnxc_status st = create(
      "<ir_version: 8, opset_import: [\"\" : 10]> g (string[2] x) => (string[2] y) "
      "{ y = StringNormalizer <case_change_action = \"LOWER\"> (x) }",
      &err);
  CHECK(st != ONNXC_OK, "StringNormalizer ran in a build without strings");
  CHECK(strstr(err.msg, "StringNormalizer") && strstr(err.msg, "not in this build") &&
            strstr(err.msg, "strings, ml"),
        "StringNormalizer: unclear message: %s", err.msg);
  printf("a left-out operator: %s\n", err.msg);
  /* ml (ai.onnx.ml): left out */
  memset(&err, 0, sizeof err);
  st = create(
      "<ir_version: 8, opset_import: [\"\" : 17, \"ai.onnx.ml\" : 3]> g (float[2] x) => (float[2] "
      "y) "
      "{ y = ai.onnx.ml.Normalizer <norm = \"MAX\"> (x) }",
      &err);
  CHECK(st != ONNXC_OK, "Normalizer ran in a build without ml");
  CHECK(strstr(err.msg, "Normalizer") && strstr(err.msg, "not in this build"),
        "Normalizer: unclear message: %s", err.msg);
  /* the families kept: a session of Add and Relu is made */
  memset(&err, 0, sizeof err);
  st = create(
      "<ir_version: 8, opset_import: [\"\" : 17]> g (float[2] x) => (float[2] y) "
      "{ t = Add (x, x) y = Relu (t) }",
      &err);
  CHECK(st == ONNXC_OK, "Add/Relu in a build without strings and ml: %s", err.msg);
  if (failures) {
    fprintf(stderr, "test_ops_exclude: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_ops_exclude: ok\n");
  return 0;
}
