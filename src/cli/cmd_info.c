/* cmd_info.c - `onnxc info`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_info(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'info' is not implemented yet\n");
  return 2;
}
