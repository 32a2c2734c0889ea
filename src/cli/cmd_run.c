/* cmd_run.c - `onnxc run`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'run' is not implemented yet\n");
  return 2;
}
