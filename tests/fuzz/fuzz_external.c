/* fuzz_external.c - libFuzzer target for external data: a fuzzed model and a
 * fuzzed data file beside it in a folder of its own. The first four bytes
 * (little endian) give the model's length, the model follows and the rest is
 * written to the folder as "weights.bin" (the name the seeds' tensors use).
 * Loading resolves and verifies every external reference (paths that escape
 * the folder, ranges past the end, bad checksums must be errors); a loaded
 * model is checked and encoded with its data inline. */
#include <onnxc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char folder[64];

static bool write_file(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!folder[0]) {
    snprintf(folder, sizeof folder, "/tmp/onnxc_fuzz_external_XXXXXX");
    if (!mkdtemp(folder)) return 0;
  }
  if (size < 4) return 0;
  size_t n = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
  data += 4;
  size -= 4;
  if (n > size) n = size;
  char path[128];
  snprintf(path, sizeof path, "%s/weights.bin", folder);
  if (!write_file(path, data + n, size - n)) return 0;
  onnxc_model *m = NULL;
  onnxc_error e;
  if (onnxc_model_load_buffer(data, n, folder, NULL, &m, &e) == ONNXC_OK) {
    onnxc_check_options co = {.strict = 1};
    char *report = NULL;
    (void)onnxc_check(m, &co, &report, &e);
    free(report);
    void *bytes = NULL;
    size_t nb = 0;
    if (onnxc_model_encode(m, &bytes, &nb, &e) == ONNXC_OK) free(bytes);
    onnxc_model_free(m);
  }
  return 0;
}
