/* cmd_print.c - `onnxc print MODEL [-o FILE]`: the model in the ONNX textual syntax. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "text/text.h"

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
  ox_model *m = ox_cli_load_model(in);
  if (!m) return 1;
  ox_buf b = {0};
  ox_err e = {0};
  int rc = ox_text_print_model(m->proto, &b, &e);
  if (rc == OX_OK) {
    if (out)
      rc = ox_file_write_all(out, b.data, b.size, &e);
    else if (b.size && fwrite(b.data, 1, b.size, stdout) != b.size)
      rc = ox_err_set(&e, OX_EIO, "cannot write to standard output");
  }
  if (rc != OX_OK) fprintf(stderr, "onnxc: %s\n", e.msg);
  ox_buf_free(&b);
  ox_model_free(m);
  return rc == OX_OK ? 0 : 1;
}
