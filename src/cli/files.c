/* files.c - whole files written by the subcommands (print -o): plain stdio,
 * with the library's style of message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

onnxc_status ox_cli_write_file(const char *path, const void *data, size_t size, onnxc_error *e) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!f) {
    snprintf(e->msg, sizeof e->msg, "%s: %s", path, strerror(errno));
    return (onnxc_status)(e->code = ONNXC_ERR_IO);
  }
  size_t w = size ? fwrite(data, 1, size, f) : 0;
  int bad = w != size || fflush(f) != 0;
  if (f != stdout && fclose(f) != 0) bad = 1;
  if (bad) {
    snprintf(e->msg, sizeof e->msg, "%s: write error", path);
    return (onnxc_status)(e->code = ONNXC_ERR_IO);
  }
  return ONNXC_OK;
}
