/* cmd_schema.c - `onnxc schema`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_schema(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'schema' is not implemented yet\n");
  return 2;
}
