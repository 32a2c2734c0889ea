/* body_check.h - shared by the function-body unit tests (test_schema_bodies,
 * test_ctx_bodies): a body parsed into f must have the signature of schema s,
 * and pass the checker as the model-local function of a model (of m, in m's
 * arena) importing `opset` of s's domain, called once on float tensors of
 * shape dims. Prints what fails under `name`; returns the number of failures. */
#ifndef OX_TEST_BODY_CHECK_H
#define OX_TEST_BODY_CHECK_H

#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "schema/schema.h"

static void body_check_import(ox_model *m, const char *domain, int64_t version) {
  ox_model_proto *mp = m->proto;
  ox_opset *o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
  o->domain = ox_arena_strdup(m->arena, domain);
  o->version = version;
  o->has_version = true;
}

static int body_check(ox_model *m, const ox_schema *s, const ox_function *f, int64_t opset,
                      const int64_t *dims, size_t rank, const char *name) {
  int fails = 0;
  bool sig = f->name && strcmp(f->name, s->name) == 0 && f->n_input == s->n_inputs &&
             f->n_output == s->n_outputs;
  for (size_t k = 0; sig && k < f->n_input; k++) sig = !strcmp(f->input[k], s->inputs[k].name);
  for (size_t k = 0; sig && k < f->n_output; k++) sig = !strcmp(f->output[k], s->outputs[k].name);
  if (!sig) {
    fprintf(stderr, "%s: the function's signature is not the operator's\n", name);
    fails++;
  }
  ox_model_proto *mp = m->proto;
  mp->ir_version = 10;
  mp->has_ir_version = true;
  body_check_import(m, s->domain, opset);
  /* a preview op's body is made of ai.onnx ops */
  if (s->domain[0]) body_check_import(m, "", 26);
  ox_function *slot = OX_VEC_PUSH(m->arena, mp->functions, mp->n_functions);
  *slot = *f;
  slot->domain = ox_arena_strdup(m->arena, "local");
  body_check_import(m, "local", 1);
  ox_graph *g = mp->graph = ox_arena_alloc(m->arena, sizeof *g);
  g->name = ox_arena_strdup(m->arena, "G");
  ox_node *call = ox_graph_add_node(m->arena, g, s->name, "local", "call");
  for (size_t k = 0; k < f->n_input; k++) {
    ox_value_info *v = ox_value_info_push(m->arena, &g->input, &g->n_input, f->input[k]);
    v->type = ox_type_new_tensor(m->arena, OX_FLOAT, dims, rank);
    ox_node_add_input(m->arena, call, f->input[k]);
  }
  for (size_t k = 0; k < f->n_output; k++) {
    ox_value_info *v = ox_value_info_push(m->arena, &g->output, &g->n_output, f->output[k]);
    v->type = ox_type_new_tensor(m->arena, OX_FLOAT, dims, rank);
    ox_node_add_output(m->arena, call, f->output[k]);
  }
  ox_buf r = {0};
  ox_err e = {0};
  if (ox_check_model(m, NULL, &r, NULL, &e) != OX_OK) {
    fprintf(stderr, "%s: the body does not pass the checker:\n%.*s", name, (int)r.size,
            (char *)r.data);
    fails++;
  }
  ox_buf_free(&r);
  return fails;
}

#endif
