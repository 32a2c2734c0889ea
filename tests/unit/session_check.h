/* session_check.h - what the tests of session-level rewrites share: a
 * counting CHECK and the number of nodes a profiled session ran. */
#ifndef ONNXC_TEST_SESSION_CHECK_H
#define ONNXC_TEST_SESSION_CHECK_H

#include <stdbool.h>
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

/* A profiled session of a text model at optimisation level 1, with the
 * quantized-unit rewrites on (fuse) or off, on `threads` threads; NULL after
 * printing why. The model is returned in *m for the caller to free after
 * the session. */
static inline onnxc_session *open_text_session(const char *name, const char *text, bool fuse,
                                               int threads, onnxc_model **m) {
  onnxc_error e;
  *m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), name, m, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: parse: %s\n", name, e.msg);
    return NULL;
  }
  onnxc_session_options o = {0};
  o.threads = threads;
  o.optimization_level = 1;
  o.profile = 1;
  o.no_quant_fusion = !fuse;
  onnxc_session *s = NULL;
  if (onnxc_session_create(*m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: session: %s\n", name, e.msg);
    onnxc_model_free(*m);
    *m = NULL;
    return NULL;
  }
  return s;
}

#endif
