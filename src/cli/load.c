/* load.c - loading a model for a subcommand, with the error printed. */
#include <stdio.h>

#include "cli.h"

onnxc_model *ox_cli_load_model(const char *path) {
  onnxc_error e = {0};
  onnxc_model *m = NULL;
  if (onnxc_model_load(path, NULL, &m, &e) != ONNXC_OK) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    return NULL;
  }
  return m;
}
