/* session_check.h - what the tests of session-level rewrites share: a
 * counting CHECK and the number of nodes a profiled session ran. */
#ifndef ONNXC_TEST_SESSION_CHECK_H
#define ONNXC_TEST_SESSION_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

/* The node count of the profile's "... in N nodes" line (0 if absent). */
static inline size_t profiled_nodes(onnxc_session *s) {
  char *prof = onnxc_session_profile(s);
  const char *p = prof ? strstr(prof, " nodes") : NULL;
  while (p && p > prof && p[-1] >= '0' && p[-1] <= '9') p--;
  size_t n = p ? (size_t)strtoul(p, NULL, 10) : 0;
  free(prof);
  return n;
}

#endif
