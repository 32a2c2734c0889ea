/* main.c - onnxc: dispatch to the subcommands. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct cmd {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
} cmd;

static const cmd cmds[] = {
    {"info", ox_cmd_info, "describe a model: versions, inputs, outputs, ops, initializers"},
    {"convert", ox_cmd_convert,
     "convert between binary and text; move data to/from external files"},
    {"print", ox_cmd_print, "print a model in the ONNX textual syntax"},
    {"check", ox_cmd_check, "check a model against the IR rules and operator schemas"},
    {"schema", ox_cmd_schema, "print an operator schema"},
    {"infer", ox_cmd_infer, "infer types and shapes of every value"},
    {"compile", ox_cmd_compile, "write a model as dependency-free C source (static shapes)"},
    {"dot", ox_cmd_dot, "draw the graph with Graphviz (SVG, PNG or .dot text)"},
    {"run", ox_cmd_run, "run a model on input files"},
    {"test", ox_cmd_test, "run ONNX conformance test cases"},
    {"bench", ox_cmd_bench, "measure run latency"},
    {"generate", ox_cmd_generate, "generate token ids with a decoder-only language model"},
    {"train", ox_cmd_train, "run training-info steps and save the trained model"},
    {"serve", ox_cmd_serve, "serve a model repository over HTTP (Open Inference Protocol)"},
    {"batch", ox_cmd_batch, "run many onnxc commands (one a line) in one process's children"},
};

bool ox_cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

bool ox_cli_parse_size(const char *arg, size_t *out) {
  char *end;
  if (!arg || *arg < '0' || *arg > '9') return false;
  errno = 0;
  unsigned long long v = strtoull(arg, &end, 10);
  if (errno) return false;
  int shift = 0;
  switch (*end) {
    case 0:
      break;
    case 'K':
    case 'k':
      shift = 10;
      end++;
      break;
    case 'M':
    case 'm':
      shift = 20;
      end++;
      break;
    case 'G':
    case 'g':
      shift = 30;
      end++;
      break;
    case 'T':
    case 't':
      shift = 40;
      end++;
      break;
    default:
      return false;
  }
  if (*end || (shift && v > (SIZE_MAX >> shift))) return false;
  *out = (size_t)(v << shift);
  return true;
}

static void usage(FILE *f) {
  fprintf(f, "usage: onnxc COMMAND [ARGS]...\n\ncommands:\n");
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
  fprintf(f, "\n`onnxc COMMAND --help` lists the options of a command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (ox_cli_is_help(argv[1])) {
    usage(stdout);
    return 0;
  }
  return ox_cli_dispatch(argc, argv);
}

int ox_cli_dispatch(int argc, char **argv) {
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (strcmp(argv[1], cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "onnxc: unknown command '%s' (see onnxc --help)\n", argv[1]);
  return 2;
}
