/* fuzz_check.c - libFuzzer target for the checker: a decoded model is
 * checked with --full (strict shape inference) and --strict. Any model must
 * give a verdict or an error: never a crash, a leak or undefined behaviour. */
#include <onnxc.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnxc_model *m = NULL;
  onnxc_error e;
  onnxc_load_options lo = {0};
  lo.no_external_data = 1;
  if (onnxc_model_load_buffer(data, size, NULL, &lo, &m, &e) != ONNXC_OK) return 0;
  for (int mode = 0; mode < 2; mode++) {
    onnxc_check_options co = {.full = mode, .strict = 1};
    char *report = NULL;
    onnxc_status st = onnxc_check(m, &co, &report, &e);
    if (st != ONNXC_OK && st != ONNXC_ERR_INVALID_MODEL && st != ONNXC_ERR_NOMEM &&
        st != ONNXC_ERR_UNSUPPORTED)
      __builtin_trap(); /* the checker must judge, not fail otherwise */
    free(report);
  }
  onnxc_model_free(m);
  return 0;
}
