/* cmd_test.c - `onnxc test`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_test(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'test' is not implemented yet\n");
  return 2;
}
