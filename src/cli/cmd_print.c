/* cmd_print.c - `onnxc print`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_print(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'print' is not implemented yet\n");
  return 2;
}
