/* session_flags.h - the session options of `run`, `bench` and `test`, built
 * in one place from the flags run and bench share: --threads N,
 * --max-memory SIZE, --no-quant-fusion, --low-bit-int8 and --disable-pass
 * NAME[,NAME...] (pass_flags.h). */
#ifndef OX_CLI_SESSION_FLAGS_H
#define OX_CLI_SESSION_FLAGS_H

#include <onnxc.h>
#include <stdbool.h>

#include "pass_flags.h"

typedef struct ox_cli_session_flags {
  int threads; /* 0: all cores */
  size_t max_memory;
  bool no_quant_fusion, low_bit_int8, parallel_branches;
  ox_cli_passes off; /* --disable-pass names */
} ox_cli_session_flags;

/* When argv[*i] is one of the flags above: takes it and its value
 * (advancing *i) and returns 1; 0 for another argument (a flag whose value
 * is missing too: the caller reports it as unknown); -1 after printing an
 * error naming `cmd` (a bad size, too many pass names). */
int ox_cli_session_flag(ox_cli_session_flags *f, int argc, char **argv, int *i, const char *cmd);

/* The options of a session for the tool: optimization level 1 (constant
 * folding, the passes) and the flags. The pass names stay in f, which must
 * outlive the session's creation. */
onnxc_session_options ox_cli_session_options(const ox_cli_session_flags *f);

#endif
