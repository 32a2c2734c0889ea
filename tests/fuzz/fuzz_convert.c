/* fuzz_convert.c - libFuzzer target for opset conversion. The first byte
 * picks the target opset (1 to 28), the rest is a model. A conversion must
 * succeed or be refused with an error; a converted model must encode and
 * decode, and converting it back to its original opset must not crash. */
#include <onnxc.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/ir.h" /* an onnxc_model is an ox_model: its default-domain import */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  int64_t target = 1 + data[0] % 28;
  onnxc_load_options lo = {0};
  lo.no_external_data = 1;
  onnxc_model *m = NULL;
  onnxc_error e;
  if (onnxc_model_load_buffer(data + 1, size - 1, NULL, &lo, &m, &e) != ONNXC_OK) return 0;
  const ox_model_proto *mp = ((const ox_model *)m)->proto;
  int64_t from = ox_opset_version(mp->opset_import, mp->n_opset_import, "");
  if (onnxc_convert_opset(m, target, &e) == ONNXC_OK) {
    void *bytes = NULL;
    size_t n = 0;
    if (onnxc_model_encode(m, &bytes, &n, &e) == ONNXC_OK) {
      onnxc_model *m2 = NULL;
      if (onnxc_model_load_buffer(bytes, n, NULL, &lo, &m2, &e) != ONNXC_OK)
        __builtin_trap(); /* a converted model that does not decode */
      if (from >= 1 && from <= 28) (void)onnxc_convert_opset(m2, from, &e);
      onnxc_model_free(m2);
      free(bytes);
    }
  }
  onnxc_model_free(m);
  return 0;
}
