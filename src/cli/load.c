/* load.c - loading a model for a subcommand, with the error printed. */
#include <stdio.h>

#include "../api/model_file.h"
#include "../proto/proto.h"
#include "cli.h"

ox_model *ox_cli_load_model(const char *path) {
  ox_err e = {0};
  ox_model *m = NULL;
  if (ox_api_model_load(path, NULL, &m, &e) != OX_OK) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    return NULL;
  }
  return m;
}
