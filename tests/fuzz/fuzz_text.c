/* fuzz_text.c - libFuzzer target for the text parser. Any input must give a
 * model or an error (never a crash, a leak or undefined behaviour); a model
 * must print, and the printed text must parse and print to the same text. */
#include <stdint.h>
#include <string.h>

#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ox_arena *a = ox_arena_new();
  if (!a) return 0;
  ox_err e = {0};
  ox_model_proto *m = NULL;
  if (ox_text_parse_model((const char *)data, size, "fuzz", a, &m, &e) == OX_OK) {
    ox_buf t1 = {0}, t2 = {0};
    if (ox_text_print_model(m, &t1, &e) == OX_OK) {
      ox_model_proto *m2 = NULL;
      if (ox_text_parse_model((const char *)t1.data, t1.size, "printed", a, &m2, &e) != OX_OK)
        __builtin_trap(); /* printed text that does not parse back */
      if (ox_text_print_model(m2, &t2, &e) != OX_OK || t1.size != t2.size ||
          memcmp(t1.data, t2.data, t1.size) != 0)
        __builtin_trap(); /* print(parse(print(m))) != print(m) */
    }
    ox_buf_free(&t1);
    ox_buf_free(&t2);
  }
  ox_arena_free(a);
  return 0;
}
