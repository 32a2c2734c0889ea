/* pass_flags.h - the graph-pass flags shared by run, bench and convert:
 * --disable-pass NAME[,NAME...] (repeatable) and --list-passes. */
#ifndef OX_CLI_PASS_FLAGS_H
#define OX_CLI_PASS_FLAGS_H

#include <stddef.h>
#include <stdio.h>

/* the names given, held in the struct itself (no allocation) */
typedef struct ox_cli_passes {
  const char *names[64];
  size_t n;
  char buf[2048];
  size_t used;
} ox_cli_passes;

/* When argv[*i] is --disable-pass: takes its value (advancing *i), adds the
 * comma-separated names and returns 1; 0 when argv[*i] is another flag; -1
 * after printing an error (a missing value, too many names). Names are
 * checked by the library (an unknown one fails naming it). */
int ox_cli_disable_pass(ox_cli_passes *p, int argc, char **argv, int *i, const char *cmd);

/* One line per pass of the table, in running order: name, level, on/off by
 * default, description. */
void ox_cli_list_passes(FILE *f);

/* the help lines of the two flags */
#define OX_CLI_PASS_FLAGS_HELP                                                         \
  "  --disable-pass NAME[,NAME]  leave a graph pass out (repeatable; see --list-passes)\n" \
  "  --list-passes   list the graph passes in the order they run, and exit\n"

#endif
