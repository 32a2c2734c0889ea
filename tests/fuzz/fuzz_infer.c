/* fuzz_infer.c - libFuzzer target for shape inference on decoded models, in
 * the lenient and the strict mode, and for the re-encoding of what it
 * writes: the inferred model must encode and decode again. */
#include <onnxc.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnxc_load_options lo = {0};
  lo.no_external_data = 1;
  for (int strict = 0; strict < 2; strict++) {
    onnxc_model *m = NULL;
    onnxc_error e;
    if (onnxc_model_load_buffer(data, size, NULL, &lo, &m, &e) != ONNXC_OK) return 0;
    onnxc_infer_options io = {.strict = strict};
    char *warnings = NULL;
    if (onnxc_infer_shapes(m, &io, &warnings, &e) == ONNXC_OK) {
      void *bytes = NULL;
      size_t n = 0;
      if (onnxc_model_encode(m, &bytes, &n, &e) == ONNXC_OK) {
        onnxc_model *m2 = NULL;
        if (onnxc_model_load_buffer(bytes, n, NULL, &lo, &m2, &e) != ONNXC_OK)
          __builtin_trap(); /* what inference wrote does not decode */
        onnxc_model_free(m2);
        free(bytes);
      }
    }
    free(warnings);
    onnxc_model_free(m);
  }
  return 0;
}
