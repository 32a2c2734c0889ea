/* test_schema.c - lookup in the generated schema table, against facts read
 * from the spec's Changelog.md / Changelog-ml.md / Operators.md. */
#include <stdio.h>
#include <string.h>

#include "schema/schema.h"
#include "schema/schema_table.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static int since(const char *dom, const char *op, int64_t opset) {
  const ox_schema *s = ox_schema_lookup(dom, op, opset);
  return s ? s->since_version : -1;
}

int main(void) {
  /* Conv: versions 1, 11, 22 (Changelog.md) */
  CHECK(since("", "Conv", 1) == 1);
  CHECK(since("", "Conv", 10) == 1);
  CHECK(since("", "Conv", 11) == 11);
  CHECK(since("", "Conv", 21) == 11);
  CHECK(since("", "Conv", 22) == 22);
  CHECK(since("", "Conv", 28) == 22);
  CHECK(since("", "Conv", 0) == -1);
  CHECK(since("ai.onnx", "Conv", 13) == 11); /* "ai.onnx" is the default domain */
  CHECK(since(NULL, "Conv", 13) == 11);
  CHECK(since("", "NoSuchOp", 13) == -1);
  CHECK(since("", "conv", 13) == -1); /* names are case sensitive */
  CHECK(since("com.example", "Conv", 13) == -1);
  /* ops introduced late */
  CHECK(since("", "Gelu", 19) == -1);
  CHECK(since("", "Gelu", 20) == 20);
  CHECK(since("", "SwiGLU", 28) == 28);
  CHECK(since("", "Celu", 27) == 12);
  CHECK(since("", "Celu", 28) == 28);
  /* other domains */
  CHECK(since("ai.onnx.ml", "LabelEncoder", 1) == 1);
  CHECK(since("ai.onnx.ml", "LabelEncoder", 3) == 2);
  CHECK(since("ai.onnx.ml", "LabelEncoder", 5) == 4);
  CHECK(since("ai.onnx.ml", "TreeEnsemble", 5) == 5);
  CHECK(since("ai.onnx.ml", "TreeEnsemble", 4) == -1);
  CHECK(since("ai.onnx.preview.training", "Adam", 1) == 1);
  CHECK(since("ai.onnx.preview", "FlexAttention", 1) == 1);
  CHECK(since("", "Adam", 28) == -1);

  CHECK(ox_schema_max_opset("") == 28);
  CHECK(ox_schema_max_opset("ai.onnx") == 28);
  CHECK(ox_schema_max_opset("ai.onnx.ml") == 5);
  CHECK(ox_schema_max_opset("ai.onnx.preview.training") == 1);
  CHECK(ox_schema_max_opset("ai.onnx.preview") == 1);
  CHECK(ox_schema_max_opset("com.example") == 0);

  size_t n = 0;
  const ox_schema *const *v = ox_schema_versions("", "Conv", &n);
  CHECK(n == 3 && v && v[0]->since_version == 1 && v[1]->since_version == 11 &&
        v[2]->since_version == 22);
  CHECK(ox_schema_versions("", "NoSuchOp", &n) == NULL && n == 0);

  /* counts of notes §4.1: 612 ai.onnx schema versions, 25 ml, 4 training, 1 preview */
  size_t counts[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < ox_schema_count(); i++) {
    const ox_schema *s = ox_schema_at(i);
    if (i >= ox_schema_table_n) { /* the hand tables (schema_hand.h): looked up, not counted */
      CHECK(ox_schema_lookup(s->domain, s->name, s->since_version) == s);
      continue;
    }
    if (!s->domain[0])
      counts[0]++;
    else if (!strcmp(s->domain, "ai.onnx.ml"))
      counts[1]++;
    else if (!strcmp(s->domain, "ai.onnx.preview.training"))
      counts[2]++;
    else if (!strcmp(s->domain, "ai.onnx.preview"))
      counts[3]++;
    if (i) { /* sorted, and lookups find every entry */
      const ox_schema *p = ox_schema_at(i - 1);
      int c = strcmp(p->domain, s->domain);
      if (!c) c = strcmp(p->name, s->name);
      CHECK(c < 0 || (c == 0 && p->since_version < s->since_version));
    }
    CHECK(ox_schema_lookup(s->domain, s->name, s->since_version) == s);
  }
  CHECK(counts[0] == 612 && counts[1] == 25 && counts[2] == 4 && counts[3] == 1);
  CHECK(ox_schema_at(ox_schema_count()) == NULL);

  /* attributes: Conv-11 kernel_shape is INTS, optional; group defaults to 1 */
  const ox_schema *conv = ox_schema_lookup("", "Conv", 11);
  const ox_attr_schema *ks = ox_schema_find_attr(conv, "kernel_shape");
  CHECK(ks && ks->type == OX_ATTR_INTS && !ks->required && !ks->default_text);
  const ox_attr_schema *g = ox_schema_find_attr(conv, "group");
  CHECK(g && g->type == OX_ATTR_INT && g->default_text && !strcmp(g->default_text, "1"));
  const ox_attr_schema *ap = ox_schema_find_attr(conv, "auto_pad");
  CHECK(ap && ap->type == OX_ATTR_STRING && !strcmp(ap->default_text, "\"NOTSET\""));
  CHECK(ox_schema_find_attr(conv, "axis") == NULL);
  CHECK(conv->n_inputs == 3 && conv->min_inputs == 2 && conv->max_inputs == 3);
  CHECK(conv->inputs[2].option == OX_PARAM_OPTIONAL && !strcmp(conv->inputs[2].name, "B"));
  const ox_type_constraint *t = ox_schema_find_constraint(conv, "T");
  CHECK(t && t->n_allowed == 3 && !strcmp(t->allowed[1], "tensor(float)") && !t->allowed[3]);
  /* Concat-4 axis required; LSTM-14 activations are strings; Loop-11 arity */
  const ox_attr_schema *ax = ox_schema_find_attr(ox_schema_lookup("", "Concat", 13), "axis");
  CHECK(ax && ax->required && ax->type == OX_ATTR_INT);
  const ox_schema *loop = ox_schema_lookup("", "Loop", 11);
  CHECK(loop->min_inputs == 2 && loop->max_inputs == OX_SCHEMA_INF);
  CHECK(loop->inputs[2].option == OX_PARAM_VARIADIC && !loop->inputs[2].homogeneous &&
        loop->inputs[2].min_arity == 0);
  const ox_schema *concat = ox_schema_lookup("", "Concat", 13);
  CHECK(concat->inputs[0].option == OX_PARAM_VARIADIC && concat->inputs[0].homogeneous &&
        concat->inputs[0].min_arity == 1);
  /* RNN-14 activation_alpha is a list of floats; Clip-6 min default */
  const ox_attr_schema *mn = ox_schema_find_attr(ox_schema_lookup("", "Clip", 6), "min");
  CHECK(mn && mn->type == OX_ATTR_FLOAT && !strcmp(mn->default_text, "-3.402823e+38"));
  const ox_attr_schema *acts = ox_schema_find_attr(ox_schema_lookup("", "GRU", 22), "activations");
  CHECK(acts && acts->type == OX_ATTR_STRINGS);
  /* deprecation and experimental flags */
  CHECK(ox_schema_lookup("", "Upsample", 10)->deprecated);
  CHECK(!ox_schema_lookup("", "Upsample", 9)->deprecated);
  CHECK(ox_schema_lookup("", "Upsample", 1)->experimental);
  CHECK(ox_schema_lookup("", "Scatter", 11)->deprecated);
  CHECK(ox_schema_lookup("ai.onnx.ml", "TreeEnsembleRegressor", 5)->deprecated);
  CHECK(!strcmp(ox_schema_attr_type_doc(OX_ATTR_INTS), "list of ints"));

  /* function bodies (notes §4.2): the body for a model's opset is the one
   * registered for the highest opset <= it */
  const ox_schema *relu14 = ox_schema_lookup("", "Relu", 17);
  CHECK(relu14->since_version == 14 && relu14->n_bodies == 1);
  CHECK(ox_schema_function_body(relu14, 17) == NULL);
  CHECK(ox_schema_function_body(relu14, 18) != NULL);
  const ox_schema *mvn = ox_schema_lookup("", "MeanVarianceNormalization", 28);
  CHECK(mvn->since_version == 13 && mvn->n_bodies == 2);
  CHECK(ox_schema_function_body(mvn, 13) == mvn->bodies[0].text && mvn->bodies[0].opset == 13);
  CHECK(ox_schema_function_body(mvn, 20) == mvn->bodies[1].text && mvn->bodies[1].opset == 18);
  CHECK(mvn->function_body == mvn->bodies[1].text);
  const ox_schema *elu = ox_schema_lookup("", "Elu", 22);
  CHECK(elu->n_bodies == 1 && elu->bodies[0].opset == 18 &&
        strstr(elu->function_body, "Elu <alpha> (X) => (Y)") &&
        strstr(elu->function_body, "value_float: float = @alpha"));
  CHECK(ox_schema_lookup("", "Conv", 22)->function_body == NULL);
  size_t with_body = 0;
  for (size_t i = 0; i < ox_schema_count(); i++) with_body += ox_schema_at(i)->n_bodies;
  CHECK(with_body == 29); /* the static bodies of notes §4.2 */

  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
