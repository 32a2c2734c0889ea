/* test_runtime.c - values, TensorProto conversion, the thread pool, and the
 * error paths of sessions: unknown ops, wrong input type/rank, missing
 * inputs, run-time shape mismatch, a Loop with a huge trip count stopped by
 * the cancellation callback, a huge declared shape (out of memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/ops/registry.h"
#include "../../src/proto/proto.h"
#include "../../src/runtime/session.h"

static int failures;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

/* ---- packed int4 from a conformance file (spec: low nibble first) */
static void test_int4_proto(void) {
  const char *path =
      "../shared/testdata/node/test_dequantizelinear_int4/test_data_set_0/input_0.pb";
  uint8_t *d;
  size_t n;
  ox_err e = {0};
  if (ox_file_read_all(path, &d, &n, &e)) {
    printf("skip int4 file test: %s\n", e.msg);
    return;
  }
  ox_arena *a = ox_arena_new();
  ox_tensor *t;
  CHECK(ox_pb_decode_tensor(d, n, a, &t, &e) == OX_OK);
  ox_value *v = ox_value_from_tensor_proto(t, false, &e);
  CHECK(v && v->dtype == OX_INT4 && v->numel == 5);
  if (v) {
    /* int32_data holds bytes 0x10, 0xC7, 0x08 -> 0, 1, 7, -4, 8->-8 */
    const int8_t want[5] = {0, 1, 7, -4, -8};
    CHECK(memcmp(v->data, want, 5) == 0);
    ox_tensor back;
    CHECK(ox_value_to_tensor_proto(v, a, &back, &e) == OX_OK);
    CHECK(back.raw_data.size == 3 && back.raw_data.data[0] == 0x10 &&
          back.raw_data.data[1] == 0xC7 && back.raw_data.data[2] == 0x08);
  }
  ox_value_unref(v);
  ox_arena_free(a);
  free(d);
}

static void test_values(void) {
  ox_err e = {0};
  int64_t dims[2] = {2, 3};
  ox_value *t = ox_tensor_new(OX_STRING, dims, 2, &e);
  CHECK(t && t->numel == 6);
  ((char **)t->data)[1] = strdup("hello");
  ox_value *c = ox_value_clone(t, &e);
  CHECK(c && strcmp(((char **)c->data)[1], "hello") == 0 && ((char **)c->data)[0]);
  ox_value *s = ox_sequence_new(&e);
  CHECK(ox_sequence_push(s, ox_value_ref(t), &e) == OX_OK);
  CHECK(t->refcount == 2);
  ox_value *o = ox_optional_new(s, &e);
  ox_value_unref(o); /* frees s, drops one ref of t */
  CHECK(t->refcount == 1);
  ox_value_unref(t);
  ox_value_unref(c);
  /* overflow of the element count is an error, not a crash */
  int64_t huge[3] = {INT64_MAX / 2, 4, 4};
  CHECK(ox_tensor_new(OX_FLOAT, huge, 3, &e) == NULL && e.code == OX_ENOMEM);
  int64_t neg[1] = {-1};
  CHECK(ox_tensor_new(OX_FLOAT, neg, 1, &e) == NULL && e.code == OX_EINVAL);
  /* broadcasting: [2,1,3] x [4,1] -> [2,4,3]; [2] x [3] fails */
  int64_t a3[3] = {2, 1, 3}, b2[2] = {4, 1}, out[3];
  size_t r;
  CHECK(ox_broadcast_shape(a3, 3, b2, 2, out, &r, &e) == OX_OK && r == 3 && out[0] == 2 &&
        out[1] == 4 && out[2] == 3);
  int64_t x1[1] = {2}, y1[1] = {3};
  CHECK(ox_broadcast_shape(x1, 1, y1, 1, out, &r, &e) == OX_ERUNTIME);
}

/* ---- thread pool */
typedef struct sum_arg {
  const int64_t *v;
  int64_t *partial; /* one slot per element index block */
} sum_arg;

static void sum_fn(void *arg, int64_t b, int64_t en) {
  sum_arg *s = arg;
  for (int64_t i = b; i < en; i++) s->partial[i] = s->v[i] * 2;
}

static void test_pool(void) {
  ox_err e = {0};
  ox_thread_pool *p = ox_thread_pool_new(4, &e);
  CHECK(p && ox_thread_pool_size(p) == 4);
  enum { N = 100000 };
  int64_t *v = malloc(N * sizeof *v), *out = calloc(N, sizeof *out);
  for (int64_t i = 0; i < N; i++) v[i] = i;
  sum_arg s = {v, out};
  for (int rep = 0; rep < 50; rep++) {
    memset(out, 0, N * sizeof *out);
    ox_parallel_for(p, N, 100, sum_fn, &s);
    int64_t bad = 0;
    for (int64_t i = 0; i < N; i++) bad += out[i] != 2 * i;
    CHECK(bad == 0);
  }
  free(v);
  free(out);
  ox_thread_pool_free(p);
}

/* ---- sessions built in memory */
typedef struct mb {
  ox_model *m;
  ox_arena *a;
  ox_graph *g;
} mb;

static mb model_new(int64_t opset) {
  mb b;
  b.m = ox_model_new();
  b.a = b.m->arena;
  ox_model_proto *p = b.m->proto;
  p->ir_version = 8;
  p->has_ir_version = true;
  ox_opset *o = OX_VEC_PUSH(b.a, p->opset_import, p->n_opset_import);
  o->domain = ox_arena_strdup(b.a, "");
  o->version = opset;
  o->has_version = true;
  p->graph = ox_arena_calloc(b.a, 1, sizeof *p->graph);
  p->graph->name = ox_arena_strdup(b.a, "g");
  b.g = p->graph;
  return b;
}

static void add_io(mb *b, bool input, const char *name, int32_t dt, const int64_t *dims,
                   size_t rank) {
  ox_value_info *vi = input ? ox_value_info_push(b->a, &b->g->input, &b->g->n_input, name)
                            : ox_value_info_push(b->a, &b->g->output, &b->g->n_output, name);
  vi->type = ox_type_new_tensor(b->a, dt, dims, rank);
}

static ox_node *add_node(ox_graph *g, ox_arena *a, const char *op, const char *name,
                         const char *in0, const char *in1, const char *out) {
  ox_node *n = ox_graph_add_node(a, g, op, "", name);
  if (in0) ox_node_add_input(a, n, in0);
  if (in1) ox_node_add_input(a, n, in1);
  ox_node_add_output(a, n, out);
  return n;
}

static void test_errors(void) {
  ox_err e = {0};
  ox_session *s = NULL;
  /* unknown operator: a clear error naming the node */
  mb b = model_new(13);
  int64_t d23[2] = {2, 3};
  add_io(&b, true, "x", OX_FLOAT, d23, 2);
  add_io(&b, false, "y", OX_FLOAT, d23, 2);
  add_node(b.g, b.a, "NoSuchOp", "bad1", "x", NULL, "y");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_EUNSUPPORTED);
  CHECK(strstr(e.msg, "node 'bad1' (NoSuchOp, ai.onnx opset 13): no kernel") != NULL);
  ox_model_free(b.m);

  /* a type the schema does not allow: Abs of strings */
  b = model_new(13);
  add_io(&b, true, "x", OX_STRING, d23, 2);
  add_io(&b, false, "y", OX_STRING, d23, 2);
  add_node(b.g, b.a, "Abs", "abs1", "x", NULL, "y");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_EUNSUPPORTED);
  CHECK(strstr(e.msg, "node 'abs1' (Abs, ai.onnx opset 13): no kernel for tensor(string)") != NULL);
  ox_model_free(b.m);

  /* Identity: wrong type, wrong rank, wrong dims, missing input */
  b = model_new(13);
  add_io(&b, true, "x", OX_FLOAT, d23, 2);
  add_io(&b, false, "y", OX_FLOAT, d23, 2);
  add_node(b.g, b.a, "Identity", "id", "x", NULL, "y");
  ox_session_opts so = {.kernels = &ox_registry_builtin};
  so.threads = 2;
  CHECK(ox_session_create(b.m, &so, &s, &e) == OX_OK);
  if (s) {
    const char *nm = "x";
    ox_value *out = NULL;
    ox_value *xi = ox_tensor_new(OX_INT64, d23, 2, &e);
    CHECK(ox_session_run(s, &nm, &xi, 1, NULL, &out, 1, &e) == OX_EINVAL);
    CHECK(strstr(e.msg, "input 'x'") && strstr(e.msg, "tensor(float)"));
    ox_value_unref(xi);
    int64_t d3[1] = {6};
    ox_value *xr = ox_tensor_new(OX_FLOAT, d3, 1, &e);
    CHECK(ox_session_run(s, &nm, &xr, 1, NULL, &out, 1, &e) == OX_EINVAL);
    CHECK(strstr(e.msg, "rank 2") != NULL);
    ox_value_unref(xr);
    int64_t d24[2] = {2, 4};
    ox_value *xd = ox_tensor_new(OX_FLOAT, d24, 2, &e);
    CHECK(ox_session_run(s, &nm, &xd, 1, NULL, &out, 1, &e) == OX_EINVAL);
    ox_value_unref(xd);
    CHECK(ox_session_run(s, NULL, NULL, 0, NULL, &out, 1, &e) == OX_EINVAL);
    CHECK(strstr(e.msg, "missing") != NULL);
    /* and a good run, twice (buffers reused) */
    ox_value *xg = ox_tensor_new(OX_FLOAT, d23, 2, &e);
    ((float *)xg->data)[4] = 2.5f;
    for (int k = 0; k < 2; k++) {
      CHECK(ox_session_run(s, &nm, &xg, 1, NULL, &out, 1, &e) == OX_OK);
      CHECK(out && out->numel == 6 && ((float *)out->data)[4] == 2.5f);
      ox_value_unref(out);
      out = NULL;
    }
    ox_value_unref(xg);
    ox_session_free(s);
    s = NULL;
  }
  ox_model_free(b.m);

  /* run-time shape mismatch: Add of [2,3] and [4] with unknown declared dims */
  b = model_new(13);
  add_io(&b, true, "x", OX_FLOAT, NULL, 0);
  b.g->input[0].type->shape = NULL;
  add_io(&b, true, "z", OX_FLOAT, NULL, 0);
  b.g->input[1].type->shape = NULL;
  add_io(&b, false, "y", OX_FLOAT, NULL, 0);
  add_node(b.g, b.a, "Add", "add", "x", "z", "y");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_OK);
  if (s) {
    int64_t d4[1] = {4};
    ox_value *in[2] = {ox_tensor_new(OX_FLOAT, d23, 2, &e), ox_tensor_new(OX_FLOAT, d4, 1, &e)};
    const char *names[2] = {"x", "z"};
    ox_value *out = NULL;
    int rc = ox_session_run(s, names, in, 2, NULL, &out, 1, &e);
    CHECK(rc != OX_OK && out == NULL);
    CHECK(strstr(e.msg, "node 'add' (Add)") != NULL);
    ox_value_unref(in[0]);
    ox_value_unref(in[1]);
    ox_session_free(s);
    s = NULL;
  }
  ox_model_free(b.m);
}

/* ConstantOfShape with a huge shape: out of memory is an error */
static void test_huge_shape(void) {
  ox_err e = {0};
  ox_session *s = NULL;
  mb b = model_new(13);
  add_io(&b, true, "shape", OX_INT64, NULL, 0);
  b.g->input[0].type->shape = NULL;
  add_io(&b, false, "y", OX_FLOAT, NULL, 0);
  add_node(b.g, b.a, "ConstantOfShape", "cos", "shape", NULL, "y");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_OK);
  if (s) {
    const int64_t shapes[2][3] = {{1 << 20, 1 << 20, 1 << 12}, {INT64_MAX / 4, 8, 8}};
    for (int k = 0; k < 2; k++) {
      int64_t d3[1] = {3};
      ox_value *in = ox_tensor_new(OX_INT64, d3, 1, &e);
      memcpy(in->data, shapes[k], sizeof shapes[k]);
      const char *nm = "shape";
      ox_value *out = NULL;
      CHECK(ox_session_run(s, &nm, &in, 1, NULL, &out, 1, &e) == OX_ENOMEM);
      CHECK(out == NULL && strstr(e.msg, "node 'cos'") != NULL);
      ox_value_unref(in);
    }
    ox_session_free(s);
  }
  ox_model_free(b.m);
}

/* Loop with M = INT64_MAX: the cancellation callback stops it */
static int cancel_after(void *user) {
  int *n = user;
  return ++*n > 1000;
}

static void test_cancel_loop(void) {
  ox_err e = {0};
  ox_session *s = NULL;
  mb b = model_new(13);
  add_io(&b, true, "m", OX_INT64, NULL, 0);
  add_io(&b, true, "x", OX_FLOAT, NULL, 0);
  add_io(&b, false, "y", OX_FLOAT, NULL, 0);
  ox_node *loop = ox_graph_add_node(b.a, b.g, "Loop", "", "forever");
  ox_node_add_input(b.a, loop, "m");
  ox_node_add_input(b.a, loop, "");
  ox_node_add_input(b.a, loop, "x");
  ox_node_add_output(b.a, loop, "y");
  ox_attr *at = ox_node_add_attr(b.a, loop, "body", OX_ATTR_GRAPH);
  ox_graph *body = ox_arena_calloc(b.a, 1, sizeof *body);
  at->g = body;
  body->name = ox_arena_strdup(b.a, "body");
  mb bb = {b.m, b.a, body};
  add_io(&bb, true, "i", OX_INT64, NULL, 0);
  add_io(&bb, true, "c", OX_BOOL, NULL, 0);
  add_io(&bb, true, "xin", OX_FLOAT, NULL, 0);
  add_io(&bb, false, "c", OX_BOOL, NULL, 0);
  add_io(&bb, false, "xout", OX_FLOAT, NULL, 0);
  add_node(body, b.a, "Add", "acc", "xin", "x", "xout"); /* x: an outer-scope name */
  int calls = 0;
  ox_session_opts so = {.kernels = &ox_registry_builtin};
  so.threads = 1;
  so.cancel = cancel_after;
  so.cancel_user = &calls;
  CHECK(ox_session_create(b.m, &so, &s, &e) == OX_OK);
  if (s) {
    ox_value *in[2] = {ox_tensor_scalar_i64(INT64_MAX, &e), ox_tensor_scalar_f32(1.0f, &e)};
    const char *names[2] = {"m", "x"};
    ox_value *out = NULL;
    CHECK(ox_session_run(s, names, in, 2, NULL, &out, 1, &e) == OX_ECANCELLED);
    CHECK(out == NULL && calls > 1000);
    /* a bounded loop runs: 1 + 5 * 1 = 6 */
    calls = -1000000;
    ox_value_unref(in[0]);
    in[0] = ox_tensor_scalar_i64(5, &e);
    CHECK(ox_session_run(s, names, in, 2, NULL, &out, 1, &e) == OX_OK);
    CHECK(out && *(float *)out->data == 6.0f);
    ox_value_unref(out);
    ox_value_unref(in[0]);
    ox_value_unref(in[1]);
    ox_session_free(s);
  } else {
    fprintf(stderr, "%s\n", e.msg);
  }
  ox_model_free(b.m);
}

/* ---- model-local functions */
static ox_function *add_function(mb *b, const char *name, const char *in, const char *out) {
  ox_model_proto *p = b->m->proto;
  ox_function *f = OX_VEC_PUSH(b->a, p->functions, p->n_functions);
  f->name = ox_arena_strdup(b->a, name);
  f->domain = ox_arena_strdup(b->a, "local");
  f->input = ox_arena_calloc(b->a, 1, sizeof *f->input);
  f->input[0] = ox_arena_strdup(b->a, in);
  f->n_input = 1;
  f->output = ox_arena_calloc(b->a, 1, sizeof *f->output);
  f->output[0] = ox_arena_strdup(b->a, out);
  f->n_output = 1;
  ox_opset *o = OX_VEC_PUSH(b->a, f->opset_import, f->n_opset_import);
  o->domain = ox_arena_strdup(b->a, "");
  o->version = 13;
  o->has_version = true;
  return f;
}

static ox_node *fn_node(mb *b, ox_function *f, const char *op, const char *dom, const char *in0,
                        const char *in1, const char *out) {
  ox_node *n = OX_VEC_PUSH(b->a, f->node, f->n_node);
  n->op_type = ox_arena_strdup(b->a, op);
  n->domain = ox_arena_strdup(b->a, dom);
  n->name = ox_arena_strdup(b->a, "k");
  if (in0) ox_node_add_input(b->a, n, in0);
  if (in1) ox_node_add_input(b->a, n, in1);
  ox_node_add_output(b->a, n, out);
  return n;
}

static void test_functions(void) {
  ox_err e = {0};
  ox_session *s = NULL;
  mb b = model_new(13);
  ox_opset *lo = OX_VEC_PUSH(b.a, b.m->proto->opset_import, b.m->proto->n_opset_import);
  lo->domain = ox_arena_strdup(b.a, "local");
  lo->version = 1;
  lo->has_version = true;
  int64_t d2[1] = {2};
  add_io(&b, true, "x", OX_FLOAT, d2, 1);
  add_io(&b, false, "y3", OX_FLOAT, d2, 1);
  add_io(&b, false, "y2", OX_FLOAT, d2, 1);
  add_io(&b, false, "y4", OX_FLOAT, d2, 1);
  /* Scale<alpha = 2.0>(x) = x * alpha ; the internal name "k" is also a
   * name of the main graph, which must not matter */
  ox_function *sc = add_function(&b, "Scale", "x", "y");
  ox_attr *def = OX_VEC_PUSH(b.a, sc->attribute_proto, sc->n_attribute_proto);
  def->name = ox_arena_strdup(b.a, "alpha");
  def->type = OX_ATTR_FLOAT;
  def->f = 2.0f;
  def->has_f = true;
  ox_node *kn = fn_node(&b, sc, "Constant", "", NULL, NULL, "k");
  ox_attr *ref = ox_node_add_attr(b.a, kn, "value_float", OX_ATTR_FLOAT);
  ref->ref_attr_name = ox_arena_strdup(b.a, "alpha");
  fn_node(&b, sc, "Mul", "", "x", "k", "y");
  /* Twice(x) = Scale<alpha = 2>(Scale(x)): a nested call */
  ox_function *tw = add_function(&b, "Twice", "x", "y");
  ox_node *c1 = fn_node(&b, tw, "Scale", "local", "x", NULL, "t");
  fn_node(&b, tw, "Scale", "local", "t", NULL, "y");
  (void)c1;
  ox_opset *fo = OX_VEC_PUSH(b.a, tw->opset_import, tw->n_opset_import);
  fo->domain = ox_arena_strdup(b.a, "local");
  fo->version = 1;
  fo->has_version = true;
  ox_node *call3 = ox_graph_add_node(b.a, b.g, "Scale", "local", "call3");
  ox_node_add_input(b.a, call3, "x");
  ox_node_add_output(b.a, call3, "y3");
  ox_attr *a3 = ox_node_add_attr(b.a, call3, "alpha", OX_ATTR_FLOAT);
  a3->f = 3.0f;
  ox_node *call2 = ox_graph_add_node(b.a, b.g, "Scale", "local", "call2");
  ox_node_add_input(b.a, call2, "x");
  ox_node_add_output(b.a, call2, "k");
  add_node(b.g, b.a, "Identity", "id", "k", NULL, "y2");
  ox_node *call4 = ox_graph_add_node(b.a, b.g, "Twice", "local", "call4");
  ox_node_add_input(b.a, call4, "x");
  ox_node_add_output(b.a, call4, "y4");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_OK);
  if (s) {
    ox_value *in = ox_tensor_new(OX_FLOAT, d2, 1, &e);
    ((float *)in->data)[0] = 1.5f;
    ((float *)in->data)[1] = -2.0f;
    const char *nm = "x";
    ox_value *out[3] = {0};
    CHECK(ox_session_run(s, &nm, &in, 1, NULL, out, 3, &e) == OX_OK);
    CHECK(out[0] && ((float *)out[0]->data)[0] == 4.5f && ((float *)out[0]->data)[1] == -6.0f);
    CHECK(out[1] && ((float *)out[1]->data)[0] == 3.0f && ((float *)out[1]->data)[1] == -4.0f);
    CHECK(out[2] && ((float *)out[2]->data)[0] == 6.0f && ((float *)out[2]->data)[1] == -8.0f);
    for (int k = 0; k < 3; k++) ox_value_unref(out[k]);
    ox_value_unref(in);
    ox_session_free(s);
    s = NULL;
  } else {
    fprintf(stderr, "%s\n", e.msg);
  }
  /* recursion: Scale calls Twice which calls Scale */
  sc = &b.m->proto->functions[0]; /* the array moved when Twice was added */
  fn_node(&b, sc, "Twice", "local", "y", NULL, "z");
  CHECK(ox_session_create(b.m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) == OX_EMODEL);
  CHECK(strstr(e.msg, "recursion") != NULL);
  ox_session_free(s);
  ox_model_free(b.m);
}

int main(void) {
  test_functions();
  test_values();
  test_int4_proto();
  test_pool();
  test_errors();
  test_huge_shape();
  test_cancel_loop();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("test_runtime: all checks passed\n");
  return 0;
}
