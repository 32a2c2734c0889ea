/* test_api_schema.c - operator schemas through the public header only
 * (<onnxc.h>). Expected values are facts of the spec, not of the table:
 * ../shared/spec/onnx/Operators.md and Changelog.md (Conv's versions 1, 11
 * and 22, its attributes, formals and constraint; Softmax's; Elu's function
 * body registered at opset 18; CastLike casting to the second input's
 * element type) and the counts of ../shared/spec/notes/onnx-reference-notes.md
 * §4.1 (612 ai.onnx schema versions, latest opsets 28, 5 and 1) and §4.2
 * (which bodies are context-dependent). */
#include <stdlib.h>

#include "api_check.h"

static size_t attr_index(const onnxc_schema *s, const char *name) {
  size_t i = 0;
  while (i < onnxc_schema_attr_count(s) && !streq(onnxc_schema_attr_name(s, i), name)) i++;
  return i;
}

static void test_lookup(void) {
  /* Conv-1, Conv-11, Conv-22 */
  CHECK(onnxc_schema_version_count("", "Conv") == 3);
  CHECK(onnxc_schema_version_count("ai.onnx", "Conv") == 3);
  CHECK(onnxc_schema_since_version(onnxc_schema_version("", "Conv", 0)) == 1);
  CHECK(onnxc_schema_since_version(onnxc_schema_version("", "Conv", 1)) == 11);
  CHECK(onnxc_schema_since_version(onnxc_schema_version("", "Conv", 2)) == 22);
  CHECK(onnxc_schema_version("", "Conv", 3) == NULL);
  CHECK(onnxc_schema_since_version(onnxc_schema_lookup("", "Conv", 10)) == 1);
  CHECK(onnxc_schema_since_version(onnxc_schema_lookup("", "Conv", 21)) == 11);
  CHECK(onnxc_schema_lookup("ai.onnx", "Conv", 22) == onnxc_schema_version("", "Conv", 2));
  CHECK(onnxc_schema_lookup("", "Conv", 0) == NULL);
  CHECK(onnxc_schema_lookup("", "NoSuchOp", 22) == NULL);
  CHECK(onnxc_schema_version_count("", "NoSuchOp") == 0);
  CHECK(onnxc_schema_lookup("", NULL, 22) == NULL);
  /* ai.onnx.ml LabelEncoder 1, 2, 4 */
  CHECK(onnxc_schema_version_count("ai.onnx.ml", "LabelEncoder") == 3);
  CHECK(onnxc_schema_since_version(onnxc_schema_lookup("ai.onnx.ml", "LabelEncoder", 3)) == 2);
  /* latest opsets: 28, 5, 1; an unknown domain 0 */
  CHECK(onnxc_schema_latest_opset("") == 28 && onnxc_schema_latest_opset("ai.onnx") == 28);
  CHECK(onnxc_schema_latest_opset("ai.onnx.ml") == 5);
  CHECK(onnxc_schema_latest_opset("ai.onnx.preview.training") == 1);
  CHECK(onnxc_schema_latest_opset("com.nowhere") == 0);
  /* the whole table: 612 versions of ai.onnx operators, and onnxruntime's
     SimplifiedLayerNormalization, which it registers in the default domain */
  size_t n_default = 0;
  for (size_t i = 0; i < onnxc_schema_count(); i++)
    n_default += streq(onnxc_schema_domain(onnxc_schema_at(i)), "");
  CHECK(n_default == 612 + onnxc_schema_version_count("", "SimplifiedLayerNormalization"));
  CHECK(onnxc_schema_at(onnxc_schema_count()) == NULL);
}

static void test_conv(void) {
  const onnxc_schema *s = onnxc_schema_lookup("", "Conv", 22);
  CHECK(streq(onnxc_schema_name(s), "Conv") && streq(onnxc_schema_domain(s), ""));
  CHECK(!onnxc_schema_deprecated(s) && !onnxc_schema_experimental(s));
  CHECK(onnxc_schema_doc(s) == NULL);
  /* auto_pad : string (default NOTSET), dilations : ints, group : int
     (default 1), kernel_shape, pads, strides : ints */
  CHECK(onnxc_schema_attr_count(s) == 6);
  size_t i = attr_index(s, "auto_pad");
  CHECK(onnxc_schema_attr_type(s, i) == ONNXC_ATTR_STRING && !onnxc_schema_attr_required(s, i));
  CHECK(streq(onnxc_schema_attr_default(s, i), "\"NOTSET\""));
  i = attr_index(s, "group");
  CHECK(onnxc_schema_attr_type(s, i) == ONNXC_ATTR_INT);
  CHECK(streq(onnxc_schema_attr_default(s, i), "1"));
  i = attr_index(s, "kernel_shape");
  CHECK(onnxc_schema_attr_type(s, i) == ONNXC_ATTR_INTS && !onnxc_schema_attr_default(s, i));
  CHECK(streq(onnxc_attr_type_description(onnxc_schema_attr_type(s, i)), "list of ints"));
  CHECK(streq(onnxc_attr_type_description(ONNXC_ATTR_INT), "int"));
  CHECK(streq(onnxc_attr_type_description((onnxc_attr_type)99), "undefined"));
  CHECK(onnxc_schema_attr_name(s, 6) == NULL && !onnxc_schema_attr_default(s, 6));
  CHECK(onnxc_schema_attr_type(s, 6) == ONNXC_ATTR_UNDEFINED);
  /* Inputs (2 - 3): X (differentiable) : T, W (differentiable) : T,
     B (optional, differentiable) : T; Outputs: Y (differentiable) : T */
  CHECK(onnxc_schema_min_arity(s, ONNXC_SCHEMA_INPUTS) == 2);
  CHECK(onnxc_schema_max_arity(s, ONNXC_SCHEMA_INPUTS) == 3);
  CHECK(onnxc_schema_min_arity(s, ONNXC_SCHEMA_OUTPUTS) == 1);
  CHECK(onnxc_schema_max_arity(s, ONNXC_SCHEMA_OUTPUTS) == 1);
  CHECK(onnxc_schema_formal_count(s, ONNXC_SCHEMA_INPUTS) == 3);
  CHECK(streq(onnxc_schema_formal_name(s, ONNXC_SCHEMA_INPUTS, 1), "W"));
  CHECK(streq(onnxc_schema_formal_type(s, ONNXC_SCHEMA_INPUTS, 1), "T"));
  CHECK(onnxc_schema_formal_option(s, ONNXC_SCHEMA_INPUTS, 0) == ONNXC_FORMAL_SINGLE);
  CHECK(onnxc_schema_formal_option(s, ONNXC_SCHEMA_INPUTS, 2) == ONNXC_FORMAL_OPTIONAL);
  CHECK(onnxc_schema_formal_differentiable(s, ONNXC_SCHEMA_INPUTS, 2));
  CHECK(onnxc_schema_formal_name(s, ONNXC_SCHEMA_INPUTS, 3) == NULL);
  CHECK(streq(onnxc_schema_formal_name(s, ONNXC_SCHEMA_OUTPUTS, 0), "Y"));
  CHECK(onnxc_schema_formal_count(s, ONNXC_SCHEMA_OUTPUTS) == 1);
  /* T : tensor(bfloat16), tensor(float16), tensor(float), tensor(double) */
  CHECK(onnxc_schema_constraint_count(s) == 1 && streq(onnxc_schema_constraint_name(s, 0), "T"));
  CHECK(onnxc_schema_constraint_type_count(s, 0) == 4);
  bool has_bf16 = false;
  for (size_t j = 0; j < onnxc_schema_constraint_type_count(s, 0); j++)
    has_bf16 |= streq(onnxc_schema_constraint_type(s, 0, j), "tensor(bfloat16)");
  CHECK(has_bf16 && onnxc_schema_constraint_type(s, 0, 4) == NULL);
  CHECK(onnxc_schema_constraint_name(s, 1) == NULL);
  /* Conv is primitive: no body */
  CHECK(onnxc_schema_function_count(s) == 0 && !onnxc_schema_has_context_body(s));
}

static void test_variadic(void) {
  /* Concat-13: inputs (1 - &#8734;): inputs (variadic, differentiable) : T */
  const onnxc_schema *s = onnxc_schema_lookup("", "Concat", 13);
  CHECK(onnxc_schema_max_arity(s, ONNXC_SCHEMA_INPUTS) == ONNXC_SCHEMA_UNBOUNDED);
  CHECK(onnxc_schema_formal_option(s, ONNXC_SCHEMA_INPUTS, 0) == ONNXC_FORMAL_VARIADIC);
  CHECK(onnxc_schema_formal_min_arity(s, ONNXC_SCHEMA_INPUTS, 0) == 1);
  CHECK(onnxc_schema_formal_homogeneous(s, ONNXC_SCHEMA_INPUTS, 0));
  /* Loop-16's v_initial is heterogeneous */
  const onnxc_schema *loop = onnxc_schema_lookup("", "Loop", 16);
  size_t k = onnxc_schema_formal_count(loop, ONNXC_SCHEMA_INPUTS) - 1;
  CHECK(streq(onnxc_schema_formal_name(loop, ONNXC_SCHEMA_INPUTS, k), "v_initial"));
  CHECK(!onnxc_schema_formal_homogeneous(loop, ONNXC_SCHEMA_INPUTS, k));
  /* Scatter-11 is deprecated */
  CHECK(onnxc_schema_deprecated(onnxc_schema_lookup("", "Scatter", 11)));
}

static void test_bodies(void) {
  /* Elu-22: a static body registered at opset 18 */
  const onnxc_schema *elu = onnxc_schema_lookup("", "Elu", 22);
  CHECK(onnxc_schema_function_count(elu) == 1 && onnxc_schema_function_opset(elu, 0) == 18);
  const char *text = onnxc_schema_function_text(elu, 0);
  CHECK(text && strstr(text, "Elu <alpha> (X) => (Y)") && strstr(text, "Where"));
  CHECK(onnxc_schema_function_text(elu, 1) == NULL && !onnxc_schema_has_context_body(elu));

  /* Softmax-13: exp(x) / ReduceSum(exp(x)), built per node */
  const onnxc_schema *sm = onnxc_schema_lookup("", "Softmax", 13);
  CHECK(onnxc_schema_has_context_body(sm));
  char *body = NULL;
  onnxc_error err = {0};
  int32_t f32[1] = {1};
  CHECK(onnxc_schema_context_body(sm, 18, NULL, f32, 1, &body, &err) == ONNXC_OK);
  CHECK(body && strstr(body, "Softmax (input) => (output)") && strstr(body, "Exp") &&
        strstr(body, "ReduceSum"));
  free(body);

  /* CastLike: casts input to the element type of target_type */
  const onnxc_schema *cl = onnxc_schema_lookup("", "CastLike", 21);
  int32_t to_int64[2] = {1, 7}, to_float[2] = {7, 1};
  body = NULL;
  CHECK(onnxc_schema_context_body(cl, 21, NULL, to_int64, 2, &body, &err) == ONNXC_OK);
  CHECK(body && strstr(body, "Cast <to = 7"));
  free(body);
  body = NULL;
  CHECK(onnxc_schema_context_body(cl, 21, NULL, to_float, 2, &body, &err) == ONNXC_OK);
  CHECK(body && strstr(body, "Cast <to = 1"));
  free(body);
  /* the target's type unknown: no body can be built */
  int32_t unknown[2] = {1, 0};
  body = (char *)"untouched";
  CHECK(onnxc_schema_context_body(cl, 21, NULL, unknown, 2, &body, &err) ==
            ONNXC_ERR_INVALID_ARG &&
        body == NULL && err.msg[0]);

  /* a node of a model: LayerNormalization with axis = 1 and no bias; the
     reference's builder flattens X at the axis and takes ReduceMean */
  static const char *ln =
      "<ir_version: 9, opset_import: [\"\" : 17]>\n"
      "g (float[2, 4] x, float[4] s) => (float[2, 4] y) {\n"
      "  y = LayerNormalization <axis = 1> (x, s)\n"
      "}\n";
  onnxc_model *m = parse(ln);
  const onnxc_node *n = onnxc_graph_node(onnxc_model_graph(m), 0);
  const onnxc_schema *lns = onnxc_schema_lookup("", "LayerNormalization", 17);
  CHECK(onnxc_schema_has_context_body(lns));
  int32_t two_f32[2] = {1, 1};
  body = NULL;
  CHECK(onnxc_schema_context_body(lns, 17, n, two_f32, 2, &body, &err) == ONNXC_OK);
  CHECK(body && strstr(body, "Flatten <axis = 1>") && strstr(body, "ReduceMean"));
  free(body);
  onnxc_model_free(m);
  /* no body at all, bad arguments */
  CHECK(onnxc_schema_context_body(onnxc_schema_lookup("", "Conv", 22), 22, NULL, NULL, 0, &body,
                                  &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(onnxc_schema_context_body(sm, 18, NULL, NULL, 1, &body, &err) == ONNXC_ERR_INVALID_ARG);
  CHECK(onnxc_schema_context_body(sm, 18, NULL, f32, 1, NULL, &err) == ONNXC_ERR_INVALID_ARG);
}

int main(void) {
  test_lookup();
  test_conv();
  test_variadic();
  test_bodies();
  return finish("test_api_schema");
}
