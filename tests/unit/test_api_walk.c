/* test_api_walk.c - walking a model through the public header only
 * (<onnxc.h>): optional fields and their presence, types (opaque,
 * denotation, stored dims), nodes' inputs, outputs and attributes of every
 * kind, subgraphs, initializers and the bytes they take (inline, external,
 * sparse), model-local functions and training info.
 *
 * Expected values come from elsewhere than the code under test:
 * tests/api/walk.onnx is written by tests/api/make_walk.py with the onnx
 * package (the values below are the ones that script puts in); the text
 * model states its values itself; the conformance models (argv[1]: the
 * shared testdata folder, skipped when absent) were counted with the onnx
 * package (python3 -c 'import onnx; ...'). */
#include <stdlib.h>
#include <sys/stat.h>

#include "api_check.h"

/* the node of g whose op_type is op, or NULL */
static const onnxc_node *find_node(const onnxc_graph *g, const char *op) {
  for (size_t i = 0; i < onnxc_graph_node_count(g); i++)
    if (streq(onnxc_node_op_type(onnxc_graph_node(g, i)), op)) return onnxc_graph_node(g, i);
  return NULL;
}

/* the index of n's attribute `name`, or onnxc_node_attr_count(n) */
static size_t find_attr(const onnxc_node *n, const char *name) {
  size_t i = 0;
  while (i < onnxc_node_attr_count(n) && !streq(onnxc_node_attr_name(n, i), name)) i++;
  return i;
}

/* ------------------------------------------------------------ walk.onnx */

static void test_fields_and_types(const onnxc_model *m) {
  /* set to "" and 0 by make_walk.py: present; doc_string never set */
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_IR_VERSION) && onnxc_model_ir_version(m) == 8);
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_PRODUCER_NAME));
  CHECK(streq(onnxc_model_producer_name(m), ""));
  CHECK(!onnxc_model_has_field(m, ONNXC_MODEL_PRODUCER_VERSION));
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_MODEL_VERSION) && onnxc_model_version(m) == 0);
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_DOMAIN) && streq(onnxc_model_domain(m), ""));
  CHECK(!onnxc_model_has_field(m, ONNXC_MODEL_DOC_STRING));
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_GRAPH_NAME));
  CHECK(!onnxc_model_has_field(NULL, ONNXC_MODEL_IR_VERSION));

  const onnxc_graph *g = onnxc_model_graph(m);
  CHECK(onnxc_graph_value_count(g, ONNXC_GRAPH_INPUTS) == 4);
  const onnxc_type *x = onnxc_graph_value_type(g, ONNXC_GRAPH_INPUTS, 0);
  CHECK(streq(onnxc_type_denotation(x), "TENSOR"));
  CHECK(onnxc_type_dim_kind(x, 0) == ONNXC_DIM_PARAM && streq(onnxc_type_dim_param(x, 0), "N"));
  CHECK(onnxc_type_dim_kind(x, 1) == ONNXC_DIM_VALUE && onnxc_type_dim(x, 1) == 3);
  CHECK(onnxc_type_dim_kind(x, 2) == ONNXC_DIM_UNKNOWN);
  CHECK(!onnxc_type_opaque_name(x) && !onnxc_type_opaque_domain(x));
  /* odd: float[-1, ""] */
  const onnxc_type *odd = onnxc_graph_value_type(g, ONNXC_GRAPH_INPUTS, 1);
  CHECK(!onnxc_type_denotation(odd));
  CHECK(onnxc_type_dim_kind(odd, 0) == ONNXC_DIM_VALUE && onnxc_type_dim(odd, 0) == -1);
  CHECK(onnxc_type_dim_kind(odd, 1) == ONNXC_DIM_PARAM && onnxc_type_dim_param(odd, 1) == NULL);
  const onnxc_type *blob = onnxc_graph_value_type(g, ONNXC_GRAPH_INPUTS, 2);
  CHECK(onnxc_type_kind_of(blob) == ONNXC_TYPE_OPAQUE);
  CHECK(streq(onnxc_type_opaque_domain(blob), "com.test"));
  CHECK(streq(onnxc_type_opaque_name(blob), "Blob"));
  char buf[64];
  CHECK(onnxc_type_describe(blob, buf, sizeof buf) == strlen("opaque(com.test,Blob)"));
  CHECK(streq(buf, "opaque(com.test,Blob)"));
  CHECK(onnxc_type_dim_kind(blob, 0) == ONNXC_DIM_UNKNOWN && !onnxc_type_denotation(NULL));
}

static void test_nodes_and_attributes(const onnxc_model *m) {
  const onnxc_graph *g = onnxc_model_graph(m);
  CHECK(onnxc_graph_node_count(g) == 3);
  const onnxc_node *c = find_node(g, "Custom");
  CHECK(streq(onnxc_node_name(c), "custom") && streq(onnxc_node_domain(c), "com.test"));
  CHECK(streq(onnxc_node_overload(c), ""));
  /* inputs ["x", "", "w"], outputs ["y"] */
  CHECK(onnxc_node_input_count(c) == 3 && streq(onnxc_node_input(c, 0), "x"));
  CHECK(streq(onnxc_node_input(c, 1), "") && streq(onnxc_node_input(c, 2), "w"));
  CHECK(onnxc_node_input(c, 3) == NULL);
  CHECK(onnxc_node_output_count(c) == 1 && streq(onnxc_node_output(c, 0), "y"));
  CHECK(onnxc_node_output(c, 1) == NULL);
  CHECK(onnxc_node_attr_count(c) == 8);

  size_t i = find_attr(c, "alpha");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_FLOAT && onnxc_node_attr_size(c, i) == 1);
  CHECK(onnxc_node_attr_float(c, i, 0) == 0.5f && onnxc_node_attr_float(c, i, 1) == 0.0f);
  CHECK(onnxc_node_attr_int(c, i, 0) == 0); /* another type */
  i = find_attr(c, "axis");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_INT && onnxc_node_attr_int(c, i, 0) == -1);
  size_t len = 99;
  i = find_attr(c, "mode");
  const char *s = onnxc_node_attr_string(c, i, 0, &len);
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_STRING && len == 4 && s && !memcmp(s, "edge", 4));
  CHECK(onnxc_node_attr_string(c, i, 1, &len) == NULL && len == 0);
  i = find_attr(c, "scales");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_FLOATS && onnxc_node_attr_size(c, i) == 2);
  CHECK(onnxc_node_attr_float(c, i, 0) == 1.5f && onnxc_node_attr_float(c, i, 1) == 2.5f);
  i = find_attr(c, "perm");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_INTS && onnxc_node_attr_size(c, i) == 3);
  CHECK(onnxc_node_attr_int(c, i, 0) == 1 && onnxc_node_attr_int(c, i, 1) == 0 &&
        onnxc_node_attr_int(c, i, 2) == 2 && onnxc_node_attr_int(c, i, 3) == 0);
  i = find_attr(c, "tags");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_STRINGS && onnxc_node_attr_size(c, i) == 2);
  s = onnxc_node_attr_string(c, i, 1, &len);
  CHECK(len == 2 && s && !memcmp(s, "qr", 2));
  i = find_attr(c, "t");
  const onnxc_tensor_proto *t = onnxc_node_attr_tensor(c, i, 0);
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_TENSOR && t);
  CHECK(onnxc_tensor_proto_dtype(t) == 6 /* int32 */ && onnxc_tensor_proto_rank(t) == 1);
  CHECK(onnxc_tensor_proto_dim(t, 0) == 3 && onnxc_tensor_proto_stored_bytes(t) == 12);
  CHECK(onnxc_node_attr_tensor(c, find_attr(c, "axis"), 0) == NULL);
  /* bodies: GRAPHS [b1 (1 node), b2 (2 nodes)] */
  i = find_attr(c, "bodies");
  CHECK(onnxc_node_attr_type(c, i) == ONNXC_ATTR_GRAPHS && onnxc_node_attr_size(c, i) == 2);
  CHECK(onnxc_node_attr_graph(c, i) == NULL && onnxc_node_attr_graph_count(c, i) == 2);
  CHECK(streq(onnxc_graph_name(onnxc_node_attr_graph_at(c, i, 0)), "b1"));
  CHECK(onnxc_graph_node_count(onnxc_node_attr_graph_at(c, i, 1)) == 2);
  CHECK(onnxc_node_attr_graph_at(c, i, 2) == NULL);
  CHECK(onnxc_node_attr_type(c, 8) == ONNXC_ATTR_UNDEFINED && onnxc_node_attr_size(c, 8) == 0);
  CHECK(onnxc_node_attr_graph_count(c, 8) == 0);

  const onnxc_node *branch = find_node(g, "If");
  i = find_attr(branch, "then_branch");
  CHECK(onnxc_node_attr_type(branch, i) == ONNXC_ATTR_GRAPH);
  CHECK(onnxc_node_attr_size(branch, i) == 1 && onnxc_node_attr_graph_count(branch, i) == 1);
  CHECK(onnxc_node_attr_graph_at(branch, i, 0) == onnxc_node_attr_graph(branch, i));
  CHECK(streq(onnxc_graph_name(onnxc_node_attr_graph_at(branch, i, 0)), "then_g"));
  CHECK(onnxc_node_attr_graph_at(branch, i, 1) == NULL);
}

static void test_initializers(const onnxc_model *m) {
  const onnxc_graph *g = onnxc_model_graph(m);
  /* w float[2,3] raw_data; b int64[2] int64_data; names string[2] "ab","cde";
     e float[1024] in walk.bin */
  CHECK(onnxc_graph_initializer_count(g) == 4 && onnxc_graph_initializer(g, 4) == NULL);
  const onnxc_tensor_proto *w = onnxc_graph_initializer(g, 0);
  CHECK(streq(onnxc_tensor_proto_name(w), "w") && onnxc_tensor_proto_dtype(w) == 1);
  CHECK(onnxc_tensor_proto_rank(w) == 2 && onnxc_tensor_proto_dim(w, 0) == 2);
  CHECK(onnxc_tensor_proto_dim(w, 1) == 3 && onnxc_tensor_proto_dim(w, 2) == -1);
  CHECK(!onnxc_tensor_proto_is_external(w) && onnxc_tensor_proto_stored_bytes(w) == 24);
  const onnxc_tensor_proto *b = onnxc_graph_initializer(g, 1);
  CHECK(onnxc_tensor_proto_dtype(b) == 7 && onnxc_tensor_proto_stored_bytes(b) == 16);
  const onnxc_tensor_proto *names = onnxc_graph_initializer(g, 2);
  CHECK(onnxc_tensor_proto_dtype(names) == 8 && onnxc_tensor_proto_stored_bytes(names) == 5);
  const onnxc_tensor_proto *e = onnxc_graph_initializer(g, 3);
  CHECK(streq(onnxc_tensor_proto_name(e), "e") && onnxc_tensor_proto_is_external(e));
  CHECK(onnxc_tensor_proto_stored_bytes(e) == 4096);
  CHECK(onnxc_graph_has_initializer(g, "e"));
  /* sp: values float[2] {1, 2} (8 bytes), indices int64[2] {0, 3} (16), dims [5] */
  CHECK(onnxc_graph_sparse_initializer_count(g) == 1);
  const onnxc_tensor_proto *v = onnxc_graph_sparse_values(g, 0);
  const onnxc_tensor_proto *idx = onnxc_graph_sparse_indices(g, 0);
  CHECK(streq(onnxc_tensor_proto_name(v), "sp") && onnxc_tensor_proto_stored_bytes(v) == 8);
  CHECK(onnxc_tensor_proto_dtype(idx) == 7 && onnxc_tensor_proto_stored_bytes(idx) == 16);
  size_t rank = 0;
  const int64_t *dims = onnxc_graph_sparse_dims(g, 0, &rank);
  CHECK(rank == 1 && dims && dims[0] == 5);
  CHECK(!onnxc_graph_sparse_values(g, 1) && !onnxc_graph_sparse_dims(g, 1, &rank) && rank == 0);
  CHECK(onnxc_tensor_proto_rank(NULL) == 0 && streq(onnxc_tensor_proto_name(NULL), ""));

  /* without external data the size is the `length` the file records */
  onnxc_load_options lo = {.no_external_data = 1};
  onnxc_model *lazy = load("tests/api/walk.onnx", &lo);
  if (!lazy) return;
  const onnxc_tensor_proto *le = onnxc_graph_initializer(onnxc_model_graph(lazy), 3);
  CHECK(onnxc_tensor_proto_is_external(le) && onnxc_tensor_proto_stored_bytes(le) == 4096);
  onnxc_model_free(lazy);
}

static void test_functions_and_training(const onnxc_model *m) {
  /* com.test.Twice (a) => (c) { t = Add(a, a); c = Relu(t) } */
  CHECK(onnxc_model_function_count(m) == 1 && onnxc_model_function(m, 1) == NULL);
  const onnxc_function *f = onnxc_model_function(m, 0);
  CHECK(streq(onnxc_function_name(f), "Twice") && streq(onnxc_function_domain(f), "com.test"));
  CHECK(onnxc_function_input_count(f) == 1 && streq(onnxc_function_input(f, 0), "a"));
  CHECK(onnxc_function_output_count(f) == 1 && streq(onnxc_function_output(f, 0), "c"));
  CHECK(onnxc_function_input(f, 1) == NULL && onnxc_function_output(f, 1) == NULL);
  CHECK(onnxc_function_node_count(f) == 2);
  CHECK(streq(onnxc_node_op_type(onnxc_function_node(f, 1)), "Relu"));
  CHECK(onnxc_function_node(f, 2) == NULL);
  /* one entry: initialization 1 node, algorithm 2 nodes, bindings w <- w_init;
     w <- w_new, e <- e_new */
  CHECK(onnxc_model_training_info_count(m) == 1);
  CHECK(onnxc_graph_node_count(onnxc_model_training_initialization(m, 0)) == 1);
  CHECK(streq(onnxc_graph_name(onnxc_model_training_initialization(m, 0)), "init"));
  CHECK(onnxc_graph_node_count(onnxc_model_training_algorithm(m, 0)) == 2);
  CHECK(onnxc_model_training_initialization(m, 1) == NULL);
  onnxc_training_bindings ib = ONNXC_TRAINING_INITIALIZATION_BINDING;
  onnxc_training_bindings ub = ONNXC_TRAINING_UPDATE_BINDING;
  CHECK(onnxc_model_training_binding_count(m, 0, ib) == 1);
  CHECK(streq(onnxc_model_training_binding_key(m, 0, ib, 0), "w"));
  CHECK(streq(onnxc_model_training_binding_value(m, 0, ib, 0), "w_init"));
  CHECK(onnxc_model_training_binding_count(m, 0, ub) == 2);
  CHECK(streq(onnxc_model_training_binding_key(m, 0, ub, 1), "e"));
  CHECK(streq(onnxc_model_training_binding_value(m, 0, ub, 1), "e_new"));
  CHECK(onnxc_model_training_binding_key(m, 0, ub, 2) == NULL);
  CHECK(onnxc_model_training_binding_count(m, 1, ub) == 0);
}

/* ------------------------------------------------------------ a text model */

/* What the text syntax states: a function with an overload and value_info,
 * a call of it, and a node reaching it by overload. */
static const char *function_text =
    "<ir_version: 10, opset_import: [\"\" : 21, \"com.test\" : 1]>\n"
    "main (float[2] x) => (float[2] y) {\n"
    "  y = com.test.Fn:o1 (x, x)\n"
    "}\n"
    "<domain: \"com.test\", overload: \"o1\", opset_import: [\"\" : 21]>\n"
    "Fn (a, b) => (c) <float[2] t, float[2] c> {\n"
    "  t = Add (a, b)\n"
    "  c = Relu (t)\n"
    "}\n";

static void test_text_function(void) {
  onnxc_model *m = parse(function_text);
  if (!m) return;
  const onnxc_function *f = onnxc_model_function(m, 0);
  CHECK(streq(onnxc_function_overload(f), "o1") && onnxc_function_input_count(f) == 2);
  CHECK(streq(onnxc_function_input(f, 1), "b"));
  CHECK(onnxc_function_value_info_count(f) == 2);
  CHECK(streq(onnxc_function_value_info_name(f, 0), "t"));
  CHECK(onnxc_type_dim(onnxc_function_value_info_type(f, 1), 0) == 2);
  CHECK(onnxc_function_value_info_name(f, 2) == NULL && !onnxc_function_value_info_type(f, 2));
  const onnxc_node *call = onnxc_graph_node(onnxc_model_graph(m), 0);
  CHECK(streq(onnxc_node_overload(call), "o1") && streq(onnxc_node_op_type(call), "Fn"));
  CHECK(!onnxc_model_has_field(m, ONNXC_MODEL_MODEL_VERSION));
  onnxc_model_free(m);
}

/* ------------------------------------------------------------ conformance models */

static void test_testdata(const char *testdata) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/node/test_loop11/model.onnx", testdata);
  if (stat(path, &st) != 0) {
    printf("test_api_walk: %s not found, conformance models skipped\n", path);
    return;
  }
  /* Loop (trip_count, cond, y) => (res_y, res_scan), body: loop_body of 9
     nodes and 3 outputs */
  onnxc_model *m = load(path, NULL);
  const onnxc_node *loop = onnxc_graph_node(onnxc_model_graph(m), 0);
  CHECK(streq(onnxc_node_op_type(loop), "Loop") && onnxc_node_input_count(loop) == 3);
  CHECK(streq(onnxc_node_input(loop, 2), "y") && streq(onnxc_node_output(loop, 1), "res_scan"));
  const onnxc_graph *body = onnxc_node_attr_graph_at(loop, find_attr(loop, "body"), 0);
  CHECK(streq(onnxc_graph_name(body), "loop_body") && onnxc_graph_node_count(body) == 9);
  CHECK(onnxc_graph_value_count(body, ONNXC_GRAPH_OUTPUTS) == 3);
  onnxc_model_free(m);

  /* Scan: num_scan_inputs = 1, body scan_body of 2 nodes */
  snprintf(path, sizeof path, "%s/node/test_scan9_sum/model.onnx", testdata);
  m = load(path, NULL);
  const onnxc_node *scan = onnxc_graph_node(onnxc_model_graph(m), 0);
  size_t k = find_attr(scan, "num_scan_inputs");
  CHECK(onnxc_node_attr_type(scan, k) == ONNXC_ATTR_INT && onnxc_node_attr_int(scan, k, 0) == 1);
  k = find_attr(scan, "body");
  CHECK(onnxc_graph_node_count(onnxc_node_attr_graph_at(scan, k, 0)) == 2);
  onnxc_model_free(m);

  /* light_bvlc_alexnet: 17 initializers holding 288 bytes of raw_data, the
     first conv1_b_0__SHAPE int64[1]; 40 nodes */
  snprintf(path, sizeof path, "%s/light/light_bvlc_alexnet.onnx", testdata);
  m = load(path, NULL);
  const onnxc_graph *g = onnxc_model_graph(m);
  CHECK(onnxc_graph_initializer_count(g) == 17 && onnxc_graph_node_count(g) == 40);
  uint64_t bytes = 0;
  for (size_t i = 0; i < onnxc_graph_initializer_count(g); i++)
    bytes += onnxc_tensor_proto_stored_bytes(onnxc_graph_initializer(g, i));
  CHECK(bytes == 288);
  const onnxc_tensor_proto *t0 = onnxc_graph_initializer(g, 0);
  CHECK(streq(onnxc_tensor_proto_name(t0), "conv1_b_0__SHAPE"));
  CHECK(onnxc_tensor_proto_dtype(t0) == 7 && onnxc_tensor_proto_rank(t0) == 1);
  CHECK(onnxc_model_has_field(m, ONNXC_MODEL_MODEL_VERSION));
  CHECK(streq(onnxc_model_producer_name(m), "onnx-caffe2"));
  onnxc_model_free(m);
}

int main(int argc, char **argv) {
  onnxc_model *m = load("tests/api/walk.onnx", NULL);
  if (m) {
    test_fields_and_types(m);
    test_nodes_and_attributes(m);
    test_initializers(m);
    test_functions_and_training(m);
    onnxc_model_free(m);
  }
  test_text_function();
  if (argc > 1) test_testdata(argv[1]);
  return finish("test_api_walk");
}
