/* cmd_check.c - `onnxc check`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_check(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'check' is not implemented yet\n");
  return 2;
}
