/* runio.c - the summary line of an output and the made-up inputs (a ramp
 * from 0 towards 1) of `test` on the light models and of `bench`. */
#include "runio.h"

#include <stdlib.h>

onnxc_value *ox_cli_read_value(const char *path, const onnxc_type *declared, onnxc_error *e) {
  onnxc_value *v = NULL;
  return onnxc_value_read_file(path, declared, &v, e) == ONNXC_OK ? v : NULL;
}

void ox_cli_print_value(FILE *f, const char *name, const onnxc_value *v) {
  char *text = onnxc_value_summary(v);
  fprintf(f, "%s: %s\n", name ? name : "?", text ? text : "(out of memory)");
  free(text);
}

onnxc_value *ox_cli_light_input(const onnxc_type *declared, onnxc_error *e) {
  int64_t dims[16];
  int64_t rank = onnxc_type_rank(declared);
  if (rank < 0) rank = 0;
  if (rank > 16) {
    e->code = ONNXC_ERR_UNSUPPORTED;
    snprintf(e->msg, sizeof e->msg, "input of rank %lld", (long long)rank);
    return NULL;
  }
  for (size_t i = 0; i < (size_t)rank; i++) {
    int64_t d = onnxc_type_dim(declared, i);
    dims[i] = d >= 0 ? d : 1;
  }
  return ox_cli_ramp(dims, (size_t)rank, e);
}

onnxc_value *ox_cli_ramp(const int64_t *dims, size_t rank, onnxc_error *e) {
  onnxc_value *v = onnxc_tensor_create(1 /* float */, dims, rank, e);
  if (!v) return NULL;
  float *x = onnxc_tensor_data(v);
  int64_t n = onnxc_tensor_numel(v);
  for (int64_t i = 0; i < n; i++) x[i] = (float)i / (float)n;
  return v;
}
