/* cmd_train.c - `onnxc train`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_train(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'train' is not implemented yet\n");
  return 2;
}
