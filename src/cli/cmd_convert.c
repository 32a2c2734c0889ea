/* cmd_convert.c - `onnxc convert`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_convert(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'convert' is not implemented yet\n");
  return 2;
}
