/* test_text.c - the textual syntax: the seed examples (examples/), every
 * construct of the grammar and our extensions, error messages, locale
 * independence, and printing that parses back. Runs from the source root. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/model_file.h"
#include "proto/proto.h"
#include "text/text.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static ox_arena *A;

static ox_model_proto *parse(const char *text) {
  ox_err e = {0};
  ox_model_proto *m = NULL;
  if (ox_text_parse_model(text, strlen(text), "t.onnxtxt", A, &m, &e) != OX_OK) {
    fprintf(stderr, "unexpected parse error: %s\n", e.msg);
    fails++;
    return NULL;
  }
  return m;
}

/* parses a model whose graph is G (float X) => (float Y) with the given nodes */
static const ox_node *parse_node(const char *node) {
  char buf[4096];
  snprintf(buf, sizeof buf,
           "<ir_version: 10, opset_import: [\"\" : 21]>\nG (float X) => (float Y) {\n%s\n}", node);
  ox_model_proto *m = parse(buf);
  return m && m->graph->n_node ? &m->graph->node[0] : NULL;
}

static const ox_attr *parse_attr(const char *attr) {
  char buf[4096];
  snprintf(buf, sizeof buf, "Y = Op <%s> (X)", attr);
  const ox_node *n = parse_node(buf);
  return n && n->n_attribute ? &n->attribute[0] : NULL;
}

static const char *parse_error(const char *text) {
  static ox_err e;
  ox_model_proto *m = NULL;
  memset(&e, 0, sizeof e);
  if (ox_text_parse_model(text, strlen(text), "model.onnxtxt", A, &m, &e) == OX_OK) return "";
  CHECK(e.code == OX_EPARSE);
  return e.msg;
}

static char *read_file(const char *path, size_t *n) {
  uint8_t *d = NULL;
  ox_err e;
  if (ox_file_read_all(path, &d, n, &e) != OX_OK) {
    fprintf(stderr, "%s\n", e.msg);
    fails++;
    return NULL;
  }
  return (char *)d;
}

/* text -> model -> text -> model: both models encode to the same bytes */
static void reprint(const ox_model_proto *m) {
  ox_buf t = {0}, b1 = {0}, b2 = {0};
  ox_err e = {0};
  ox_model_proto *m2 = NULL;
  CHECK(ox_text_print_model(m, &t, &e) == OX_OK);
  if (ox_text_parse_model((const char *)t.data, t.size, "printed", A, &m2, &e) != OX_OK) {
    fprintf(stderr, "printed text does not parse: %s\n%.*s\n", e.msg, (int)t.size, t.data);
    fails++;
  } else {
    CHECK(ox_pb_encode_model(m, &b1, &e) == OX_OK);
    CHECK(ox_pb_encode_model(m2, &b2, &e) == OX_OK);
    CHECK(b1.size == b2.size && memcmp(b1.data, b2.data, b1.size) == 0);
  }
  ox_buf_free(&t);
  ox_buf_free(&b1);
  ox_buf_free(&b2);
}

static void test_examples(void) {
  size_t n;
  char *s = read_file("examples/perceptron.onnxtxt", &n);
  ox_model_proto *m = NULL;
  ox_err e = {0};
  CHECK(s && ox_text_parse_model(s, n, "perceptron", A, &m, &e) == OX_OK);
  if (m) {
    CHECK(m->ir_version == 7 && m->n_opset_import == 1 && m->opset_import[0].version == 21);
    CHECK(strcmp(m->graph->name, "G") == 0 && m->graph->n_initializer == 4);
    const ox_tensor *w1 = &m->graph->initializer[0];
    CHECK(strcmp(w1->name, "W1") == 0 && w1->n_dims == 2 && w1->dims[0] == 3 && w1->dims[1] == 4);
    CHECK(w1->data_type == OX_FLOAT && w1->n_float_data == 12 && w1->float_data[0] == 0.01f &&
          w1->float_data[11] == 0.12f);
    CHECK(m->graph->n_node == 4 && strcmp(m->graph->node[0].op_type, "Gemm") == 0);
    CHECK(m->graph->node[0].n_input == 3 && strcmp(m->graph->node[0].input[2], "B1") == 0);
    const ox_dim *d = &m->graph->input[0].type->shape->dim[0];
    CHECK(d->param && strcmp(d->param, "N") == 0 && !d->has_value);
    reprint(m);
  }
  free(s);

  s = read_file("examples/perceptron_external.onnxtxt", &n);
  m = NULL;
  CHECK(s && ox_text_parse_model(s, n, "ext", A, &m, &e) == OX_OK);
  if (m) {
    const ox_tensor *w2 = &m->graph->initializer[1];
    CHECK(w2->has_data_location && w2->data_location == 1 && w2->n_external_data == 3);
    CHECK(strcmp(w2->external_data[0].key, "location") == 0 &&
          strcmp(w2->external_data[0].value, "weights.bin") == 0);
    CHECK(strcmp(w2->external_data[1].value, "262144") == 0);
    CHECK(!w2->float_data && !w2->raw_data.data);
    reprint(m);
  }
  free(s);

  s = read_file("examples/root.onnxtxt", &n);
  m = NULL;
  CHECK(s && ox_text_parse_model(s, n, "root", A, &m, &e) == OX_OK);
  if (m) {
    CHECK(m->n_functions == 1);
    const ox_function *f = &m->functions[0];
    CHECK(strcmp(f->name, "Root") == 0 && strcmp(f->domain, "com.example") == 0);
    CHECK(f->n_attribute == 0 && f->n_attribute_proto == 1);
    CHECK(strcmp(f->attribute_proto[0].name, "nth") == 0 && f->attribute_proto[0].i == 2 &&
          f->attribute_proto[0].type == OX_ATTR_INT);
    CHECK(f->n_value_info == 2); /* the typed input and output */
    const ox_attr *r = &f->node[1].attribute[0];
    CHECK(r->ref_attr_name && strcmp(r->ref_attr_name, "nth") == 0 && !r->has_i);
    const ox_node *call = &m->graph->node[0];
    CHECK(strcmp(call->domain, "com.example") == 0 && strcmp(call->op_type, "Root") == 0);
    reprint(m);
  }
  free(s);

  s = read_file("examples/double.onnxtxt", &n);
  m = NULL;
  CHECK(s && ox_text_parse_model(s, n, "double", A, &m, &e) == OX_OK);
  if (m) {
    CHECK(m->n_functions == 1 && strcmp(m->functions[0].node[0].op_type, "Add") == 0);
    reprint(m);
  }
  free(s);

  s = read_file("examples/fizzbuzz.onnxtxt", &n);
  m = NULL;
  CHECK(s && ox_text_parse_model(s, n, "fizzbuzz", A, &m, &e) == OX_OK);
  if (m) {
    const ox_node *loop = &m->graph->node[6];
    CHECK(strcmp(loop->op_type, "Loop") == 0 && loop->n_attribute == 1);
    const ox_graph *body = loop->attribute[0].g;
    CHECK(loop->attribute[0].type == OX_ATTR_GRAPH && body && strcmp(body->name, "Body") == 0);
    CHECK(body && body->n_input == 2 && body->n_output == 2 && body->n_node == 5);
    const ox_node *iff = &body->node[4];
    CHECK(strcmp(iff->op_type, "If") == 0 && iff->n_attribute == 2);
    const ox_graph *els = iff->attribute[1].g;
    /* the innermost else branch omits the input parentheses */
    const ox_graph *inner = els->node[2].attribute[1].g->node[2].attribute[1].g;
    CHECK(inner && inner->n_input == 0 && strcmp(inner->node[0].op_type, "Cast") == 0);
    reprint(m);
  }
  /* every prefix of a valid text fails cleanly (never a crash) */
  for (size_t k = 0; s && k < n; k++) {
    ox_model_proto *mm = NULL;
    int rc = ox_text_parse_model(s, k, "prefix", A, &mm, &e);
    if (rc == OX_OK) {
      /* only a prefix ending in whitespace/comments after the last '}' may parse */
      CHECK(k > n - 3);
    }
  }
  free(s);
}

static void test_types(void) {
  ox_model_proto *m = parse(
      "<> G (float[?, \"M + N\", 3, batch] a, float[] b, float c, seq(int64[2]) d,\n"
      " map(string, optional(float[1])) e, sparse_tensor(float[3,4]) f,\n"
      " opaque(my.dom, T) g, opaque(x.y.z) h, opaque() i, bfloat16 j, float8e5m2fnuz k,\n"
      " int2 l, float4e2m1 m, undefined n, untyped) => (\"float\") {}");
  if (!m) return;
  const ox_value_info *in = m->graph->input;
  CHECK(m->graph->n_input == 15);
  const ox_shape *s = in[0].type->shape;
  CHECK(s->n_dim == 4 && !s->dim[0].has_value && !s->dim[0].param);
  CHECK(strcmp(s->dim[1].param, "M + N") == 0 && s->dim[2].value == 3);
  CHECK(!in[1].type->shape && in[2].type->shape && in[2].type->shape->n_dim == 0);
  CHECK(in[3].type->kind == OX_TYPE_SEQUENCE && in[3].type->elem->elem_type == OX_INT64);
  CHECK(in[4].type->kind == OX_TYPE_MAP && in[4].type->elem_type == OX_STRING &&
        in[4].type->elem->kind == OX_TYPE_OPTIONAL);
  CHECK(in[5].type->kind == OX_TYPE_SPARSE_TENSOR && in[5].type->shape->n_dim == 2);
  CHECK(strcmp(in[6].type->opaque_domain, "my.dom") == 0 &&
        strcmp(in[6].type->opaque_name, "T") == 0);
  CHECK(!in[7].type->opaque_domain && strcmp(in[7].type->opaque_name, "x.y.z") == 0);
  CHECK(in[8].type->kind == OX_TYPE_OPAQUE && !in[8].type->opaque_name);
  CHECK(in[9].type->elem_type == OX_BFLOAT16 && in[10].type->elem_type == OX_FLOAT8E5M2FNUZ);
  CHECK(in[11].type->elem_type == OX_INT2 && in[12].type->elem_type == OX_FLOAT4E2M1);
  CHECK(in[13].type && in[13].type->kind == OX_TYPE_NONE);
  CHECK(!in[14].type && strcmp(in[14].name, "untyped") == 0);
  CHECK(strcmp(m->graph->output[0].name, "float") == 0 && !m->graph->output[0].type);
  reprint(m);
}

static void test_tensors(void) {
  ox_model_proto *m = parse(
      "<> G () => () <\n"
      "  float16[3] h = {1.0, 15360, -inf},\n"
      "  bfloat16[1] b = {1.0},\n"
      "  float8e4m3fn[2] f8 = {1.0, 448.0},\n"
      "  int4[3] i4 = {1, -2, 3},\n"
      "  uint2[5] u2 = {1, 2, 3, 0, 1},\n"
      "  <raw_data: true> int4[3] r4 = {1, -2, 3},\n"
      "  <raw_data: true> float[2] rf = {1.5, -0.0},\n"
      "  <raw_data: true, doc_string: \"d\"> int16[2] r16 = {-2, 300},\n"
      "  uint64[1] u64 = {18446744073709551615},\n"
      "  uint32[1] u32 = {4294967295},\n"
      "  bool[2] bb = {true, 0},\n"
      "  string[2] s = {\"a\\\"b\", \"\"},\n"
      "  double[1] d = {0.1},\n"
      "  complex64[1] c = {1, 2},\n"
      "  float[2] nodata = {},\n"
      "  int64 scalar = {-9223372036854775808}\n"
      "> {}");
  if (!m) return;
  const ox_tensor *t = m->graph->initializer;
  CHECK(m->graph->n_initializer == 16);
  CHECK(t[0].n_int32_data == 3 && t[0].int32_data[0] == 0x3C00 && t[0].int32_data[1] == 0x3C00 &&
        t[0].int32_data[2] == 0xFC00);
  CHECK(t[1].int32_data[0] == 0x3F80);
  CHECK(t[2].int32_data[0] == 0x38 && t[2].int32_data[1] == 0x7E);
  /* 4-bit: two per int32 entry, first element in the low nibble */
  CHECK(t[3].n_int32_data == 2 && t[3].int32_data[0] == 0xE1 && t[3].int32_data[1] == 0x03);
  /* 2-bit: four per entry */
  CHECK(t[4].n_int32_data == 2 && t[4].int32_data[0] == 0x39 && t[4].int32_data[1] == 0x01);
  CHECK(t[5].raw_data.size == 2 && t[5].raw_data.data[0] == 0xE1 && t[5].raw_data.data[1] == 0x03);
  float rf[2];
  CHECK(t[6].raw_data.size == 8);
  memcpy(rf, t[6].raw_data.data, 8);
  CHECK(rf[0] == 1.5f && rf[1] == 0 && signbit(rf[1]));
  CHECK(t[7].raw_data.size == 4 && t[7].raw_data.data[0] == 0xFE && t[7].raw_data.data[1] == 0xFF &&
        t[7].raw_data.data[2] == 0x2C && t[7].raw_data.data[3] == 0x01 &&
        strcmp(t[7].doc_string, "d") == 0);
  CHECK(t[8].n_uint64_data == 1 && t[8].uint64_data[0] == UINT64_MAX);
  CHECK(t[9].uint64_data[0] == 4294967295u);
  CHECK(t[10].int32_data[0] == 1 && t[10].int32_data[1] == 0);
  CHECK(t[11].n_string_data == 2 && t[11].string_data[0].size == 3 &&
        memcmp(t[11].string_data[0].data, "a\"b", 3) == 0 && t[11].string_data[1].size == 0);
  CHECK(t[12].double_data[0] == 0.1);
  CHECK(t[13].n_float_data == 2);
  CHECK(!t[14].float_data && !t[14].raw_data.data);
  CHECK(t[15].n_dims == 0 && t[15].int64_data[0] == INT64_MIN);
  reprint(m);

  CHECK(strstr(parse_error("<> G () => () <uint8[1] x = {256}> {}"), "out of range of uint8"));
  CHECK(strstr(parse_error("<> G () => () <int32[N] x = {1}> {}"), "numeric dimensions"));
  CHECK(strstr(parse_error("<> G () => () <float16[1] x = {65536}> {}"), "bit pattern"));
  CHECK(strstr(parse_error("<> G () => () <float[1] x = {1e39}> {}"), "out of range"));
}

static void test_attributes(void) {
  const ox_attr *a;
  a = parse_attr("alpha = 2");
  CHECK(a && a->type == OX_ATTR_INT && a->has_i && a->i == 2);
  a = parse_attr("alpha: float = 2");
  CHECK(a && a->type == OX_ATTR_FLOAT && a->has_f && a->f == 2.0f);
  a = parse_attr("alpha = -0.0");
  CHECK(a && a->type == OX_ATTR_FLOAT && a->f == 0 && signbit(a->f));
  a = parse_attr("alpha = -nan(0x1234)");
  uint32_t nb = 0;
  if (a) memcpy(&nb, &a->f, 4);
  CHECK(a && a->type == OX_ATTR_FLOAT && nb == 0xFF801234u);
  a = parse_attr("alpha = -inf");
  CHECK(a && a->type == OX_ATTR_FLOAT && isinf(a->f) && a->f < 0);
  a = parse_attr("s = \"a\\\\b\"");
  CHECK(a && a->type == OX_ATTR_STRING && a->s.size == 3 && memcmp(a->s.data, "a\\b", 3) == 0);
  a = parse_attr("v = [1, 2.5]"); /* the reference rejects this; we promote */
  CHECK(a && a->type == OX_ATTR_FLOATS && a->n_floats == 2 && a->floats[0] == 1.0f && !a->n_ints);
  a = parse_attr("v: ints = []");
  CHECK(a && a->type == OX_ATTR_INTS && a->n_ints == 0);
  a = parse_attr("v: float = @other");
  CHECK(a && a->type == OX_ATTR_FLOAT && strcmp(a->ref_attr_name, "other") == 0 && !a->has_f);
  a = parse_attr("t = float[2] {1, 2}");
  CHECK(a && a->type == OX_ATTR_TENSOR && a->t->n_float_data == 2 && !a->t->name);
  a = parse_attr("t = int64[1] \"my name\" {7}");
  CHECK(a && a->t && strcmp(a->t->name, "my name") == 0 && a->t->int64_data[0] == 7);
  a = parse_attr("tp = seq(float[N])");
  CHECK(a && a->type == OX_ATTR_TYPE_PROTO && a->tp->kind == OX_TYPE_SEQUENCE);
  a = parse_attr("ts = [float[1] {1}, int64[2] {1, 2}]");
  CHECK(a && a->type == OX_ATTR_TENSORS && a->n_tensors == 2 && a->tensors[1].n_int64_data == 2);
  a = parse_attr("tps = [float, seq(int64[])]");
  CHECK(a && a->type == OX_ATTR_TYPE_PROTOS && a->n_type_protos == 2);
  a = parse_attr("gs = [a () => (float z) { z = Abs(X) }, \"b c\" () => () {}]");
  CHECK(a && a->type == OX_ATTR_GRAPHS && a->n_graphs == 2 &&
        strcmp(a->graphs[1].name, "b c") == 0);
  a = parse_attr(
      "sp = sparse_tensor {dims: [3, 4], values: float[2] {1, 2}, indices: int64[2] {0, 5}}");
  CHECK(a && a->type == OX_ATTR_SPARSE_TENSOR && a->sparse_tensor->n_dims == 2 &&
        a->sparse_tensor->values->n_float_data == 2 &&
        a->sparse_tensor->indices->int64_data[1] == 5);
  a = parse_attr("sps: sparse_tensors = [sparse_tensor {dims: [2]}]");
  CHECK(a && a->type == OX_ATTR_SPARSE_TENSORS && a->n_sparse_tensors == 1);
  a = parse_attr("<doc_string: \"why\"> k = 1");
  CHECK(a && strcmp(a->doc_string, "why") == 0 && a->i == 1);
  a = parse_attr("g = nan () => () {}"); /* a graph named nan */
  CHECK(a && a->type == OX_ATTR_GRAPH);
  CHECK(strstr(parse_error("<> G () => () { Y = Op <v = []> (X) }"), "type annotation"));
  CHECK(strstr(parse_error("<> G () => () { Y = Op <v: ints = 1> (X) }"), "needs a list"));
  CHECK(strstr(parse_error("<> G () => () { Y = Op <v: int = 1.5> (X) }"), "expected a int value"));
}

static void test_nodes(void) {
  const ox_node *n = parse_node("[] , Z = .Op:ovl (, X, ) <a = 1>");
  CHECK(n && n->name && !*n->name && n->n_output == 2 && !*n->output[0]);
  CHECK(n && n->domain && !*n->domain && strcmp(n->overload, "ovl") == 0);
  CHECK(n && n->n_input == 2 && !*n->input[0] && n->n_attribute == 1);
  n = parse_node("[\"n 1\"] \"a/b\" = com.ms.\"Fused Op\" (\"\")");
  CHECK(n && strcmp(n->name, "n 1") == 0 && strcmp(n->output[0], "a/b") == 0);
  CHECK(n && strcmp(n->domain, "com.ms") == 0 && strcmp(n->op_type, "Fused Op") == 0);
  CHECK(n && n->n_input == 1 && !*n->input[0]);
  n = parse_node(
      "Y = Relu (X) # a comment\n<doc_string: \"d\", metadata_props: [\"k\": \"v\"]> Z = Abs (Y)");
  CHECK(n && !n->domain && n->n_attribute == 0);
  ox_model_proto *m = parse(
      "<ir_version: 10, opset_import: [\"\" : 21, 1], producer_name: \"p\", producer_version: "
      "\"v\",\n"
      " domain: \"d\", model_version: 3, doc_string: \"doc\", metadata_props: [\"a\": \"b\"]>\n"
      "<doc_string: \"graph doc\", sparse_initializer: [sparse_tensor {dims: [4], values: float[1] "
      "v {1},"
      " indices: int64[1] {2}}]>\n"
      "G (<doc_string: \"in\"> float X, float[2] W = {1, 2}) => (float Y) <float T> {\n"
      "  Y = Relu (X)\n  <doc_string: \"d\"> Z = Abs (Y)\n}\n"
      "<domain: \"f\", overload: \"o\", opset_import: [\"\" : 21], doc_string: \"fd\","
      " metadata_props: [\"x\": \"y\"]>\n"
      "F <a, b: float = 1.0> (float A, B) => (C) <float D> { C = Identity (A) }\n");
  if (!m) return;
  CHECK(m->n_opset_import == 2 && !m->opset_import[1].domain && m->opset_import[1].version == 1);
  CHECK(m->has_model_version && m->model_version == 3 && strcmp(m->doc_string, "doc") == 0);
  const ox_graph *g = m->graph;
  CHECK(strcmp(g->doc_string, "graph doc") == 0 && g->n_sparse_initializer == 1);
  CHECK(g->n_input == 2 && g->n_initializer == 1 && strcmp(g->initializer[0].name, "W") == 0);
  CHECK(strcmp(g->input[0].doc_string, "in") == 0 && g->n_value_info == 1);
  CHECK(g->n_node == 2 && strcmp(g->node[1].doc_string, "d") == 0);
  CHECK(g->node[1].n_metadata_props == 0);
  const ox_function *f = &m->functions[0];
  CHECK(strcmp(f->overload, "o") == 0 && f->n_metadata_props == 1);
  CHECK(f->n_attribute == 1 && f->n_attribute_proto == 1 && f->attribute_proto[0].f == 1.0f);
  CHECK(f->n_value_info == 2 && strcmp(f->value_info[1].name, "D") == 0);
  CHECK(f->n_input == 2 && f->n_output == 1);
  reprint(m);
  /* the same text without the parts 1.12 cannot read keeps meaning */
  const char *g112 =
      "<ir_version: 8, opset_import: [\"\" : 15]>\nG (float X) => (float Y) { Y = Relu(X) }";
  m = parse(g112);
  if (m) reprint(m);
}

/* the graph and function entry points */
static void test_graph_function(void) {
  const char *gt = "g (float[N] x) => (float[N] y) { y = Relu (x) }";
  ox_graph *g = NULL;
  ox_err e = {0};
  CHECK(ox_text_parse_graph(gt, strlen(gt), "g", A, &g, &e) == OX_OK);
  ox_buf b = {0};
  CHECK(g && ox_text_print_graph(g, &b, &e) == OX_OK);
  ox_graph *g2 = NULL;
  CHECK(ox_text_parse_graph((const char *)b.data, b.size, "g2", A, &g2, &e) == OX_OK);
  CHECK(g2 && g2->n_node == 1 && strcmp(g2->node[0].op_type, "Relu") == 0 && g2->n_input == 1);
  ox_buf_free(&b);
  const char *ft =
      "<domain: \"d\", opset_import: [\"\" : 18]> f <k: int = 3> (float x) => (y) "
      "{ y = Mul (x, x) }";
  ox_function *f = NULL;
  CHECK(ox_text_parse_function(ft, strlen(ft), "f", A, &f, &e) == OX_OK);
  CHECK(f && f->n_attribute_proto == 1 && f->n_value_info == 1 && f->n_opset_import == 1);
  ox_buf fb = {0};
  CHECK(f && ox_text_print_function(f, &fb, &e) == OX_OK);
  ox_function *f2 = NULL;
  CHECK(ox_text_parse_function((const char *)fb.data, fb.size, "f2", A, &f2, &e) == OX_OK);
  CHECK(f2 && strcmp(f2->domain, "d") == 0 && f2->attribute_proto[0].i == 3 && f2->n_node == 1);
  ox_buf_free(&fb);
  CHECK(ox_text_parse_graph("g () => () {} extra", 19, "g", A, &g, &e) == OX_EPARSE);
  CHECK(strstr(e.msg, "expected end of input, found 'extra'"));
}

/* the fields the reference syntax has no place for, in headers and blocks */
static void test_extensions(void) {
  ox_model_proto *m = parse(
      "<ir_version: 10, configuration: [{name: \"mesh\", num_devices: 2, device: [\"gpu0\", "
      "\"gpu1\"]}]>\n"
      "<quantization_annotation: [{tensor_name: \"x\", quant_parameter_tensor_names: "
      "[\"SCALE_TENSOR\": \"s\"]}]>\n"
      "G (<denotation: \"IMAGE\"> float[N,3] x) => (float y)\n"
      "<<segment: [0, 2], raw_data: true> float[2] s = {1, 2}> { y = Identity (x) }\n"
      "training {\n"
      "  initialization: I () => (float[2] w) { w = Constant <value = float[2] {0, 0}> () },\n"
      "  algorithm: A (float[2] w) => (float[2] w2) { w2 = Add (w, w) },\n"
      "  initialization_binding: [\"s\": \"w\"], update_binding: [\"s\": \"w2\"]\n"
      "}\n"
      "F (a) => (b) { b = Identity (a) }\n");
  if (!m) return;
  CHECK(m->n_configuration == 1 && m->configuration[0].num_devices == 2 &&
        m->configuration[0].n_device == 2 && strcmp(m->configuration[0].device[1], "gpu1") == 0);
  const ox_graph *g = m->graph;
  CHECK(g->n_quantization_annotation == 1 &&
        strcmp(g->quantization_annotation[0].quant_parameter_tensor_names[0].value, "s") == 0);
  CHECK(strcmp(g->input[0].type->denotation, "IMAGE") == 0);
  CHECK(g->initializer[0].segment && g->initializer[0].segment->end == 2 &&
        g->initializer[0].raw_data.size == 8);
  CHECK(m->n_training_info == 1 && m->training_info[0].initialization &&
        strcmp(m->training_info[0].algorithm->name, "A") == 0 &&
        m->training_info[0].n_update_binding == 1);
  CHECK(m->n_functions == 1 && strcmp(m->functions[0].name, "F") == 0);
  reprint(m);
}

static void test_errors(void) {
  const char *msg = parse_error("<ir_version: 7>\nG (float[N] X {\n  Y = Relu(X)\n}");
  const char *want = "model.onnxtxt:2:15: expected ')' after the input list, found '{'\n";
  CHECK(strncmp(msg, want, strlen(want)) == 0);
  CHECK(strstr(msg, "\nG (float[N] X {\n              ^"));
  msg = parse_error("<ir_version: 7>\nG (X) => (Y) {\n  Y = Relu(X\n}");
  CHECK(strstr(msg, "model.onnxtxt:4:1: expected ')' after the input list, found '}'"));
  msg = parse_error("<ir_version: \"7\"> G () => () {}");
  CHECK(strstr(msg, "1:14: expected an IR version, found a string"));
  msg = parse_error("<bogus: 1> G () => () {}");
  CHECK(strstr(msg, "unknown model header key 'bogus'"));
  msg = parse_error("<> G () => () { Y = Relu(X) } trailing");
  CHECK(strstr(msg, "expected '<' to open the model header") || strstr(msg, "expected"));
  msg = parse_error("<> G () => (\"unterminated) {}");
  CHECK(strstr(msg, "1:13: unterminated string"));
  CHECK(strstr(parse_error(""), "1:1: expected a graph name, found end of input"));
  /* deep nesting is an error, not a stack overflow */
  char *deep = malloc(100000);
  if (deep) {
    strcpy(deep, "<> G (");
    for (int i = 0; i < 20000; i++) memcpy(deep + 6 + i * 4, "seq(", 4);
    strcpy(deep + 6 + 20000 * 4, "float");
    CHECK(strstr(parse_error(deep), "nesting deeper"));
    free(deep);
  }
  /* a long line: the shown source is a window around the column */
  char *wide = malloc(20000);
  if (wide) {
    strcpy(wide, "<> G () => () <float[4000] x = {");
    size_t wl = strlen(wide);
    for (int i = 0; i < 3000; i++) memcpy(wide + wl + 3 * (size_t)i, "1, ", 3);
    strcpy(wide + wl + 9000, "oops}> {}");
    msg = parse_error(wide);
    CHECK(strstr(msg, "1:9033: expected a number, found 'oops'") && strlen(msg) < 400);
    free(wide);
  }
}

static void test_print(void) {
  ox_model_proto *m = parse(
      "<ir_version: 10> G (float X) => (float Y) <float[5] c = {0.1, 1e20, 3.0, -1.5e-7, "
      "123456789}>"
      " { Y = Op <a = 0.5, b = [1.0, 2.0], t = float16[2] {1.0, 15361}> (X) }");
  if (!m) return;
  ox_buf b = {0};
  ox_err e = {0};
  CHECK(ox_text_print_model(m, &b, &e) == OX_OK);
  ox_buf_putc(&b, 0);
  const char *s = (const char *)b.data;
  CHECK(strstr(s, "float[5] c = {0.1, 1e+20, 3.0, -1.5e-07, 123456790.0}"));
  CHECK(strstr(s, "a = 0.5, b = [1.0, 2.0], t = float16[2] {1.0, 1.0009766}"));
  /* names that are not identifiers or are keywords are quoted */
  ox_model_proto *q =
      parse("<> G (\"a b\", \"seq\", float seq) => (float \"x/y\") { \"x/y\" = Abs(\"a b\") }");
  ox_buf qb = {0};
  if (q) {
    CHECK(ox_text_print_model(q, &qb, &e) == OX_OK);
    ox_buf_putc(&qb, 0);
    CHECK(strstr((const char *)qb.data, "G (\"a b\", \"seq\", float \"seq\") => (float \"x/y\")"));
    reprint(q);
  }
  /* locale independence: a comma decimal separator changes nothing */
  if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
    const ox_attr *a = parse_attr("alpha = 1.5");
    CHECK(a && a->f == 1.5f);
    ox_buf b2 = {0};
    CHECK(ox_text_print_model(m, &b2, &e) == OX_OK);
    CHECK(b2.size == b.size - 1 && memcmp(b2.data, b.data, b2.size) == 0);
    ox_buf_free(&b2);
    setlocale(LC_NUMERIC, "C");
  }
  ox_buf_free(&b);
  ox_buf_free(&qb);
  /* random float32 and float64 bit patterns print to text that reads back exactly */
  enum { NF = 100000 };
  float *fv = ox_arena_calloc(A, NF, sizeof *fv);
  double *dv = ox_arena_calloc(A, NF, sizeof *dv);
  uint64_t st = 88172645463325252ull;
  for (int i = 0; i < NF; i++) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    uint32_t b32 = (uint32_t)st;
    memcpy(&fv[i], &b32, 4);
    memcpy(&dv[i], &st, 8);
  }
  /* NaNs: the default one and payloads (random patterns hit some too) */
  uint32_t nan1 = 0x7FC00000u, nan2 = 0xFF800001u;
  memcpy(&fv[0], &nan1, 4);
  memcpy(&fv[1], &nan2, 4);
  ox_model_proto fm = {0};
  ox_graph fg = {0};
  ox_tensor ft[2] = {{0}};
  int64_t dim = NF;
  ft[0].name = "f", ft[0].data_type = OX_FLOAT, ft[0].has_data_type = true;
  ft[0].dims = &dim, ft[0].n_dims = 1, ft[0].float_data = fv, ft[0].n_float_data = NF;
  ft[1].name = "d", ft[1].data_type = OX_DOUBLE, ft[1].has_data_type = true;
  ft[1].dims = &dim, ft[1].n_dims = 1, ft[1].double_data = dv, ft[1].n_double_data = NF;
  fg.name = "G", fg.initializer = ft, fg.n_initializer = 2;
  fm.graph = &fg;
  ox_buf fb = {0};
  ox_model_proto *back = NULL;
  CHECK(ox_text_print_model(&fm, &fb, &e) == OX_OK);
  CHECK(ox_text_parse_model((const char *)fb.data, fb.size, "floats", A, &back, &e) == OX_OK);
  if (back) {
    CHECK(back->graph->initializer[0].n_float_data == NF &&
          memcmp(back->graph->initializer[0].float_data, fv, NF * 4) == 0);
    CHECK(back->graph->initializer[1].n_double_data == NF &&
          memcmp(back->graph->initializer[1].double_data, dv, NF * 8) == 0);
  }
  ox_buf_free(&fb);

  /* an attribute type outside the enum prints its value without annotation */
  const ox_node *n = parse_node("Y = Op <k = 5> (X)");
  if (n) {
    ((ox_attr *)n->attribute)->type = 34;
    ox_graph g1 = {0};
    g1.name = "g", g1.node = (ox_node *)n, g1.n_node = 1;
    ox_buf ob = {0};
    CHECK(ox_text_print_graph(&g1, &ob, &e) == OX_OK);
    ox_buf_putc(&ob, 0);
    CHECK(strstr((const char *)ob.data, "Y = Op <k = 5> (X)"));
    ox_buf_free(&ob);
  }
}

/* the external-data perceptron reads its weights.bin */
static void test_external(void) {
  char dir[] = "/tmp/oxtextXXXXXX";
  if (!mkdtemp(dir)) return;
  char path[256];
  size_t n;
  char *s = read_file("examples/perceptron_external.onnxtxt", &n);
  snprintf(path, sizeof path, "%s/perceptron_external.onnxtxt", dir);
  CHECK(s && ox_file_write_all(path, s, n, NULL) == OX_OK);
  free(s);
  float *w = malloc(307240);
  if (!w) return;
  for (int i = 0; i < 307240 / 4; i++) w[i] = (float)i * 0.25f;
  char wpath[256];
  snprintf(wpath, sizeof wpath, "%s/weights.bin", dir);
  CHECK(ox_file_write_all(wpath, w, 307240, NULL) == OX_OK);
  free(w);
  ox_model *m = NULL;
  ox_err e = {0};
  CHECK(ox_api_model_load(path, NULL, &m, &e) == OX_OK);
  if (m) {
    const ox_tensor *w2 = &m->proto->graph->initializer[1]; /* offset 262144 */
    ox_bytes pl = ox_tensor_payload(w2);
    CHECK(pl.size == 40960);
    if (pl.size == 40960) {
      float v;
      memcpy(&v, pl.data + 4, 4);
      CHECK(v == (float)(262144 / 4 + 1) * 0.25f);
    }
    ox_model_free(m);
  }
  unlink(path);
  unlink(wpath);
  rmdir(dir);
}

int main(void) {
  A = ox_arena_new();
  test_examples();
  test_types();
  test_tensors();
  test_attributes();
  test_nodes();
  test_graph_function();
  test_extensions();
  test_errors();
  test_print();
  test_external();
  ox_arena_free(A);
  printf("%d failures\n", fails);
  return fails != 0;
}
