/* pass_flags.c - --disable-pass and --list-passes (pass_flags.h), over the
 * public API's table of graph passes. */
#include "pass_flags.h"

#include <onnxc.h>
#include <string.h>

int ox_cli_disable_pass(ox_cli_passes *p, int argc, char **argv, int *i, const char *cmd) {
  if (strcmp(argv[*i], "--disable-pass") != 0) return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "onnxc %s: --disable-pass needs a pass name (see --list-passes)\n", cmd);
    return -1;
  }
  const char *v = argv[++*i];
  size_t len = strlen(v);
  if (p->used + len + 1 > sizeof p->buf) {
    fprintf(stderr, "onnxc %s: too many --disable-pass names\n", cmd);
    return -1;
  }
  char *s = p->buf + p->used;
  memcpy(s, v, len + 1);
  p->used += len + 1;
  for (char *tok = s; tok;) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    if (*tok) {
      if (p->n == sizeof p->names / sizeof p->names[0]) {
        fprintf(stderr, "onnxc %s: too many --disable-pass names\n", cmd);
        return -1;
      }
      p->names[p->n++] = tok;
    }
    tok = comma ? comma + 1 : NULL;
  }
  return 1;
}

void ox_cli_list_passes(FILE *f) {
  for (size_t i = 0; i < onnxc_pass_count(); i++)
    fprintf(f, "%-18s level %d  %-3s  %s\n", onnxc_pass_name(i), onnxc_pass_level(i),
            onnxc_pass_default_on(i) ? "on" : "off", onnxc_pass_description(i));
}
