/* cmd_bench.c - `onnxc bench`. Not built yet. */
#include <stdio.h>

#include "cli.h"

int ox_cmd_bench(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "onnxc: 'bench' is not implemented yet\n");
  return 2;
}
