/* cmd_infer.c - `onnxc infer`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_infer(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'infer' is not implemented yet\n");
  return 2;
}
