/* fuzz_tensorio.c - libFuzzer target for the value readers of the API
 * (onnxc_value_read_file, which `onnxc run/test/bench` use): a fuzzed
 * file read as .npy or as a .pb TensorProto (the first byte chooses), with or
 * without a declared float tensor type. A value that reads must write as
 * .pb and read back with the same type and shape. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/value.h"
#include <onnxc.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char folder[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!folder[0]) {
    snprintf(folder, sizeof folder, "/tmp/onnxc_fuzz_tensorio_XXXXXX");
    if (!mkdtemp(folder)) return 0;
  }
  if (size < 1) return 0;
  uint8_t sel = data[0];
  char in[128], out[128];
  snprintf(in, sizeof in, "%s/in.%s", folder, sel & 1 ? "npy" : "pb");
  snprintf(out, sizeof out, "%s/out.pb", folder);
  FILE *f = fopen(in, "wb");
  if (!f) return 0;
  size_t w = fwrite(data + 1, 1, size - 1, f);
  if (fclose(f) != 0 || w != size - 1) return 0;
  ox_type declared = {.kind = OX_TYPE_TENSOR, .elem_type = OX_FLOAT, .has_elem_type = true};
  onnxc_error e = {0};
  ox_value *v = NULL, *v2 = NULL;
  onnxc_value_read_file(in, sel & 2 ? (const onnxc_type *)&declared : NULL, (onnxc_value **)&v,
                        &e);
  if (!v) return 0;
  if (v->kind == OX_VAL_TENSOR && onnxc_value_write_file(out, (onnxc_value *)v, "x", &e) == ONNXC_OK) {
    onnxc_value_read_file(out, NULL, (onnxc_value **)&v2, &e);
    if (!v2 || v2->kind != OX_VAL_TENSOR || v2->dtype != v->dtype || v2->rank != v->rank ||
        (v->rank && memcmp(v2->dims, v->dims, v->rank * sizeof *v->dims) != 0))
      __builtin_trap(); /* a tensor that does not come back as written */
    ox_value_unref(v2);
  }
  ox_value_unref(v);
  return 0;
}
