/* test_ctx_bodies.c - the context-dependent function bodies (src/schema/
 * ctx_bodies*.c) built for a default node of every schema version that has
 * one: each parses with the text parser, has the operator's signature, and
 * passes the checker as a model-local function called once. (Running them
 * against the node cases is tests/ctxbodies.cmake.) Also checks the errors:
 * an op without such a body, a version before its first body. */
#include <stdio.h>
#include <string.h>

#include "body_check.h"
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
  const int64_t dims[4] = {-1, -1, -1, -1}; /* rank 4, sizes unknown */
  fails += body_check(m, s, f, opset, dims, 4, name);
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
