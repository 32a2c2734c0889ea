/* binding.c - the `--input NAME=D1,D2,...` argument of infer and compile:
 * dims bound to a graph input by name. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool ox_cli_parse_binding(char *arg, const char **name, int64_t **dims, size_t *rank) {
  char *eq = strrchr(arg, '=');
  if (!eq || eq == arg) return false;
  *eq = 0;
  *name = arg;
  size_t n = 1;
  for (char *p = eq + 1; *p; p++) n += *p == ',';
  int64_t *d = calloc(n, sizeof(int64_t));
  if (!d) {
    *eq = '=';
    return false;
  }
  size_t k = 0;
  for (char *p = eq + 1; *p;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || (*end && *end != ',')) {
      free(d);
      *eq = '='; /* the argument whole again, for the caller's message */
      return false;
    }
    d[k++] = v;
    p = *end ? end + 1 : end;
  }
  *dims = d;
  *rank = k;
  return true;
}
