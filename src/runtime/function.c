/* function.c - expansion of function calls at session creation. */
#include "rt.h"

int ox_rt_expand_functions(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e) {
  (void)s;
  (void)e;
  *out = g;
  return OX_OK;
}
