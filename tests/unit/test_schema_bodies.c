/* test_schema_bodies.c - every function body of the schema table parses with
 * the text parser and passes the checker as a model-local function, at the
 * opset it is registered for. */
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "schema/schema.h"
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
      /* the body must be the op's own signature */
      bool sig = f->name && strcmp(f->name, s->name) == 0 && f->n_input == s->n_inputs &&
                 f->n_output == s->n_outputs;
      for (size_t k = 0; sig && k < f->n_input; k++) sig = !strcmp(f->input[k], s->inputs[k].name);
      for (size_t k = 0; sig && k < f->n_output; k++)
        sig = !strcmp(f->output[k], s->outputs[k].name);
      if (!sig) {
        fprintf(stderr, "%s: the function's signature is not the operator's\n", name);
        fails++;
      }
      /* a model with the body as a local function, called once */
      ox_model_proto *mp = m->proto;
      mp->ir_version = 10;
      mp->has_ir_version = true;
      ox_opset *o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
      o->domain = ox_arena_strdup(m->arena, "");
      o->version = fb->opset;
      o->has_version = true;
      ox_function *slot = OX_VEC_PUSH(m->arena, mp->functions, mp->n_functions);
      *slot = *f;
      slot->domain = ox_arena_strdup(m->arena, "local");
      o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
      o->domain = ox_arena_strdup(m->arena, "local");
      o->version = 1;
      o->has_version = true;
      ox_graph *g = mp->graph = ox_arena_alloc(m->arena, sizeof *g);
      g->name = ox_arena_strdup(m->arena, "G");
      ox_node *call = ox_graph_add_node(m->arena, g, s->name, "local", "call");
      for (size_t k = 0; k < f->n_input; k++) {
        ox_value_info *v = ox_value_info_push(m->arena, &g->input, &g->n_input, f->input[k]);
        int64_t d = 3;
        v->type = ox_type_new_tensor(m->arena, OX_FLOAT, &d, 1);
        ox_node_add_input(m->arena, call, f->input[k]);
      }
      for (size_t k = 0; k < f->n_output; k++) {
        ox_value_info *v = ox_value_info_push(m->arena, &g->output, &g->n_output, f->output[k]);
        int64_t d = 3;
        v->type = ox_type_new_tensor(m->arena, OX_FLOAT, &d, 1);
        ox_node_add_output(m->arena, call, f->output[k]);
      }
      ox_buf r = {0};
      if (ox_check_model(m, NULL, &r, NULL, &e) != OX_OK) {
        fprintf(stderr, "%s: the body does not pass the checker:\n%.*s", name, (int)r.size,
                (char *)r.data);
        fails++;
      }
      ox_buf_free(&r);
      ox_model_free(m);
      n++;
    }
  }
  printf("%d function bodies parsed and checked, %d failures\n", n, fails);
  return fails || n == 0 ? 1 : 0;
}
