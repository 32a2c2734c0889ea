/* text.c - placeholder until the parser and printer land. */
#include "text.h"

int ox_text_parse_model(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_model_proto **out, ox_err *e) {
  (void)text, (void)size, (void)a, (void)out;
  return ox_err_set(e, OX_EUNSUPPORTED, "%s: the text parser is not built yet", name);
}

int ox_text_print_model(const ox_model_proto *m, ox_buf *out, ox_err *e) {
  (void)m, (void)out;
  return ox_err_set(e, OX_EUNSUPPORTED, "the text printer is not built yet");
}
