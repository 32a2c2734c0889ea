/* session_flags.c - the flags run and bench share, and the session options
 * every subcommand that runs a model builds from them (session_flags.h). */
#include "session_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int ox_cli_session_flag(ox_cli_session_flags *f, int argc, char **argv, int *i, const char *cmd) {
  const char *a = argv[*i];
  bool has_value = *i + 1 < argc;
  if (strcmp(a, "--threads") == 0 && has_value) {
    f->threads = atoi(argv[++*i]);
  } else if (strcmp(a, "--max-memory") == 0 && has_value) {
    if (!ox_cli_parse_size(argv[++*i], &f->max_memory)) {
      fprintf(stderr, "onnxc %s: bad --max-memory '%s' (bytes, or with K, M, G, T)\n", cmd,
              argv[*i]);
      return -1;
    }
  } else if (strcmp(a, "--no-quant-fusion") == 0) {
    f->no_quant_fusion = true;
  } else if (strcmp(a, "--low-bit-int8") == 0) {
    f->low_bit_int8 = true;
  } else if (strcmp(a, "--parallel-branches") == 0) {
    f->parallel_branches = true;
  } else {
    return ox_cli_disable_pass(&f->off, argc, argv, i, cmd);
  }
  return 1;
}

onnxc_session_options ox_cli_session_options(const ox_cli_session_flags *f) {
  onnxc_session_options o = {0};
  o.optimization_level = 1; /* constant folding */
  o.threads = f->threads;
  o.max_memory = f->max_memory;
  o.no_quant_fusion = f->no_quant_fusion;
  o.low_bit_int8 = f->low_bit_int8;
  o.parallel_branches = f->parallel_branches;
  o.disabled_passes = f->off.names;
  o.n_disabled_passes = f->off.n;
  return o;
}
