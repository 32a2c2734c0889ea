/* cmd_print.c - `onnxc print MODEL [-o FILE]`: the model in the ONNX textual syntax. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int ox_cmd_print(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      printf(
          "usage: onnxc print MODEL [-o FILE]\n\n"
          "Prints MODEL (binary or text) in the ONNX textual syntax, on standard output\n"
          "or into FILE. `onnxc convert` reads the result back.\n");
      return 0;
    }
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc print: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!in) {
      in = argv[i];
    } else {
      fprintf(stderr, "onnxc print: more than one model given\n");
      return 2;
    }
  }
  if (!in) {
    fprintf(stderr, "usage: onnxc print MODEL [-o FILE]\n");
    return 2;
  }
  onnxc_model *m = ox_cli_load_model(in);
  if (!m) return 1;
  char *text = NULL;
  onnxc_error e = {0};
  onnxc_status rc = onnxc_model_print(m, &text, &e);
  if (rc == ONNXC_OK) {
    size_t n = strlen(text);
    if (out)
      rc = ox_cli_write_file(out, text, n, &e);
    else if (n && fwrite(text, 1, n, stdout) != n) {
      rc = ONNXC_ERR_IO;
      snprintf(e.msg, sizeof e.msg, "cannot write to standard output");
    }
  }
  if (rc != ONNXC_OK) fprintf(stderr, "onnxc: %s\n", e.msg);
  free(text);
  onnxc_model_free(m);
  return rc == ONNXC_OK ? 0 : 1;
}
