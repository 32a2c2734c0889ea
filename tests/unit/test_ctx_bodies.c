/* test_ctx_bodies.c - the context-dependent function bodies (src/schema/
 * ctx_bodies*.c) built for a default node of every schema version that has
 * one: each parses with the text parser, has the operator's signature, and
 * passes the checker as a model-local function called once. (Running them
 * against the node cases is tests/ctxbodies.cmake.) Also checks the errors:
 * an op without such a body, a version before its first body. */
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "schema/schema.h"
#include "text/text.h"

/* ops whose body needs more than a default node: SequenceMap reads its body
 * graph attribute, CausalConvWithState the channel count of its input type */
static bool needs_context(const ox_schema *s) {
  return !strcmp(s->name, "SequenceMap") || !strcmp(s->name, "CausalConvWithState");
}

static int check_one(const ox_schema *s, int64_t opset, const char *text, size_t len) {
  char name[128];
  snprintf(name, sizeof name, "%s-%d@%lld", s->name, s->since_version, (long long)opset);
  ox_model *m = ox_model_new();
  ox_err e = {0};
  ox_function *f = NULL;
  int fails = 0;
  if (!m || ox_text_parse_function(text, len, name, m->arena, &f, &e) != OX_OK) {
    fprintf(stderr, "%s: does not parse: %s\n%.*s", name, e.msg, (int)len, text);
    ox_model_free(m);
    return 1;
  }
  bool sig = f->name && !strcmp(f->name, s->name) && f->n_input == s->n_inputs &&
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
  ox_opset *o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
  o->domain = ox_arena_strdup(m->arena, s->domain);
  o->version = opset;
  o->has_version = true;
  if (s->domain[0]) {
    o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
    o->domain = ox_arena_strdup(m->arena, "");
    o->version = 26;
    o->has_version = true;
  }
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
  const int64_t dims[4] = {-1, -1, -1, -1};
  for (size_t k = 0; k < f->n_input; k++) {
    ox_value_info *v = ox_value_info_push(m->arena, &g->input, &g->n_input, f->input[k]);
    v->type = ox_type_new_tensor(m->arena, OX_FLOAT, dims, 4); /* rank 4, sizes unknown */
    ox_node_add_input(m->arena, call, f->input[k]);
  }
  for (size_t k = 0; k < f->n_output; k++) {
    ox_value_info *v = ox_value_info_push(m->arena, &g->output, &g->n_output, f->output[k]);
    v->type = ox_type_new_tensor(m->arena, OX_FLOAT, dims, 4);
    ox_node_add_output(m->arena, call, f->output[k]);
  }
  ox_buf r = {0};
  if (ox_check_model(m, NULL, &r, NULL, &e) != OX_OK) {
    fprintf(stderr, "%s: the body does not pass the checker:\n%.*s%.*s", name, (int)r.size,
            (char *)r.data, (int)len, text);
    fails++;
  }
  ox_buf_free(&r);
  ox_model_free(m);
  return fails;
}

int main(void) {
  int fails = 0, n = 0, versions = 0;
  for (size_t i = 0; i < ox_schema_count(); i++) {
    const ox_schema *s = ox_schema_at(i);
    if (!ox_schema_has_ctx_body(s)) continue;
    versions++;
    int32_t dt[16];
    char *names[16];
    static const char present[] = "x";
    for (size_t k = 0; k < 16; k++) {
      dt[k] = OX_FLOAT;
      names[k] = (char *)present;
    }
    ox_node node = {0};
    node.input = names;
    node.n_input = s->n_inputs < 16 ? s->n_inputs : 16;
    node.output = names;
    node.n_output = s->n_outputs < 16 ? s->n_outputs : 16;
    /* attributes the op requires */
    ox_attr heads[2] = {{0}, {0}};
    if (!strcmp(s->name, "LinearAttention")) {
      heads[0].name = (char *)"q_num_heads";
      heads[1].name = (char *)"kv_num_heads";
      heads[0].type = heads[1].type = OX_ATTR_INT;
      heads[0].i = heads[1].i = 2;
      node.attribute = heads;
      node.n_attribute = 2;
    }
    ox_buf b = {0};
    ox_err e = {0};
    int64_t opset = s->since_version;
    int rc = ox_schema_build_body(s, opset, &node, dt, node.n_input, &b, &e);
    if (needs_context(s)) {
      if (rc == OX_OK) {
        fprintf(stderr, "%s: built without the context it needs\n", s->name);
        fails++;
      }
    } else if (rc != OX_OK) {
      fprintf(stderr, "%s-%d: %s\n", s->name, s->since_version, e.msg);
      fails++;
    } else {
      fails += check_one(s, opset, (const char *)b.data, b.size);
      n++;
    }
    ox_buf_free(&b);
  }
  /* errors: no such body; a version before the first body */
  ox_buf b = {0};
  ox_err e = {0};
  const ox_schema *relu = ox_schema_lookup("", "Relu", 18),
                  *sm1 = ox_schema_lookup("", "Softmax", 11);
  if (ox_schema_has_ctx_body(relu) ||
      ox_schema_build_body(relu, 18, NULL, NULL, 0, &b, &e) == OX_OK || !strstr(e.msg, "Relu")) {
    fprintf(stderr, "Relu: expected no context-dependent body\n");
    fails++;
  }
  if (ox_schema_has_ctx_body(sm1) || b.size) {
    fprintf(stderr, "Softmax-11: expected no body (and nothing written)\n");
    fails++;
  }
  ox_buf_free(&b);
  printf(
      "%d schema versions with context-dependent bodies, %d default bodies parsed and "
      "checked, %d failures\n",
      versions, n, fails);
  return fails || n == 0 ? 1 : 0;
}
