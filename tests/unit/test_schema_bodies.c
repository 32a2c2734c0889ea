/* test_schema_bodies.c - every function body of the schema table parses with
 * the text parser and passes the checker as a model-local function, at the
 * opset it is registered for. */
#include <stdio.h>
#include <string.h>

#include "body_check.h"
#include "text/text.h"

int main(void) {
  int fails = 0, n = 0;
  for (size_t i = 0; i < ox_schema_count(); i++) {
    const ox_schema *s = ox_schema_at(i);
    for (size_t b = 0; b < s->n_bodies; b++) {
      const ox_function_body *fb = &s->bodies[b];
      char name[128];
      snprintf(name, sizeof name, "%s-%d@%d", s->name, s->since_version, fb->opset);
      ox_model *m = ox_model_new();
      ox_err e = {0};
      ox_function *f = NULL;
      if (!m ||
          ox_text_parse_function(fb->text, strlen(fb->text), name, m->arena, &f, &e) != OX_OK) {
        fprintf(stderr, "%s: does not parse: %s\n", name, e.msg);
        fails++;
        ox_model_free(m);
        continue;
      }
      const int64_t d = 3;
      fails += body_check(m, s, f, fb->opset, &d, 1, name);
      ox_model_free(m);
      n++;
    }
  }
  printf("%d function bodies parsed and checked, %d failures\n", n, fails);
  return fails || n == 0 ? 1 : 0;
}
