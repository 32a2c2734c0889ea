/* test_check_models.h - small valid models built with the IR builders, the
 * bases that test_check.c mutates. Each builder returns a fresh model. */
#ifndef TEST_CHECK_MODELS_H
#define TEST_CHECK_MODELS_H

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ---- builder shorthands (abort-free: a failed allocation leaves the
 * model incomplete, which the test then reports as a failure) ---- */

static ox_model *tm_model(int64_t ir) {
  ox_model *m = ox_model_new();
  if (!m) return NULL;
  m->proto->ir_version = ir;
  m->proto->has_ir_version = true;
  m->proto->producer_name = ox_arena_strdup(m->arena, "onnxc-test");
  return m;
}

static void tm_opset(ox_model *m, const char *domain, int64_t v) {
  ox_opset *o = OX_VEC_PUSH(m->arena, m->proto->opset_import, m->proto->n_opset_import);
  if (!o) return;
  o->domain = ox_arena_strdup(m->arena, domain);
  o->version = v;
  o->has_version = true;
}

static ox_graph *tm_graph(ox_model *m, const char *name) {
  ox_graph *g = ox_arena_alloc(m->arena, sizeof *g);
  if (g && name) g->name = ox_arena_strdup(m->arena, name);
  return g;
}

static ox_value_info *tm_vi(ox_model *m, ox_value_info **arr, size_t *n, const char *name,
                            int32_t dt, const int64_t *dims, size_t rank) {
  ox_value_info *v = ox_value_info_push(m->arena, arr, n, name);
  if (v && dt >= 0) v->type = ox_type_new_tensor(m->arena, dt, dims, rank);
  return v;
}

static ox_tensor *tm_tensor(ox_model *m, ox_tensor **arr, size_t *n, const char *name, int32_t dt,
                            const int64_t *dims, size_t rank) {
  ox_tensor *t = OX_VEC_PUSH(m->arena, *arr, *n);
  if (!t) return NULL;
  if (name) t->name = ox_arena_strdup(m->arena, name);
  t->data_type = dt;
  t->has_data_type = true;
  for (size_t i = 0; i < rank; i++) {
    int64_t *d = OX_VEC_PUSH(m->arena, t->dims, t->n_dims);
    if (d) *d = dims[i];
  }
  return t;
}

static void tm_raw(ox_model *m, ox_tensor *t, size_t bytes) {
  uint8_t *p = ox_arena_alloc(m->arena, bytes ? bytes : 1);
  if (!p) return;
  for (size_t i = 0; i < bytes; i++) p[i] = (uint8_t)(i * 7 + 1);
  t->raw_data.data = p;
  t->raw_data.size = bytes;
}

static void tm_floats(ox_model *m, ox_tensor *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float *f = OX_VEC_PUSH(m->arena, t->float_data, t->n_float_data);
    if (f) *f = 0.5f * (float)i;
  }
}

static void tm_i64s(ox_model *m, ox_tensor *t, const int64_t *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int64_t *x = OX_VEC_PUSH(m->arena, t->int64_data, t->n_int64_data);
    if (x) *x = v[i];
  }
}

static ox_node *tm_node(ox_model *m, ox_node **nodes, size_t *n_nodes, const char *op,
                        const char *domain, const char *name, const char *const *ins,
                        const char *const *outs) {
  ox_graph tmp = {0};
  tmp.node = *nodes;
  tmp.n_node = *n_nodes;
  ox_node *n = ox_graph_add_node(m->arena, &tmp, op, domain, name);
  *nodes = tmp.node;
  *n_nodes = tmp.n_node;
  if (!n) return NULL;
  for (; ins && *ins; ins++) ox_node_add_input(m->arena, n, *ins);
  for (; outs && *outs; outs++) ox_node_add_output(m->arena, n, *outs);
  return n;
}
#define TM_IN(...) ((const char *const[]){__VA_ARGS__, NULL})

static ox_node *tm_gnode(ox_model *m, ox_graph *g, const char *op, const char *name,
                         const char *const *ins, const char *const *outs) {
  return tm_node(m, &g->node, &g->n_node, op, "", name, ins, outs);
}

static void tm_attr_ints(ox_model *m, ox_node *n, const char *name, const int64_t *v, size_t k) {
  ox_attr *a = ox_node_add_attr(m->arena, n, name, OX_ATTR_INTS);
  if (!a) return;
  for (size_t i = 0; i < k; i++) {
    int64_t *x = OX_VEC_PUSH(m->arena, a->ints, a->n_ints);
    if (x) *x = v[i];
  }
}

static void tm_attr_int(ox_model *m, ox_node *n, const char *name, int64_t v) {
  ox_attr *a = ox_node_add_attr(m->arena, n, name, OX_ATTR_INT);
  if (!a) return;
  a->i = v;
  a->has_i = true;
}

static void tm_attr_float(ox_model *m, ox_node *n, const char *name, float v) {
  ox_attr *a = ox_node_add_attr(m->arena, n, name, OX_ATTR_FLOAT);
  if (!a) return;
  a->f = v;
  a->has_f = true;
}

static void tm_attr_str(ox_model *m, ox_node *n, const char *name, const char *v) {
  ox_attr *a = ox_node_add_attr(m->arena, n, name, OX_ATTR_STRING);
  if (!a) return;
  a->s.data = (const uint8_t *)ox_arena_strdup(m->arena, v);
  a->s.size = strlen(v);
}

static void tm_attr_graph(ox_model *m, ox_node *n, const char *name, ox_graph *g) {
  ox_attr *a = ox_node_add_attr(m->arena, n, name, OX_ATTR_GRAPH);
  if (a) a->g = g;
}

static const int64_t tm_d1[] = {1}, tm_d3[] = {3}, tm_d2[] = {2}, tm_d0[] = {0};
static const int64_t tm_x_dims[] = {1, 1, 5, 5}, tm_w_dims[] = {1, 1, 3, 3};
static const int64_t tm_y_dims[] = {1, 25};

/* B_CONV: X -> Conv(W, B) -> Relu -> Reshape(S) -> Y, plus a Constant. IR 7,
 * opset 13. Initializers: W float raw_data, B float_data, S int64_data. */
static ox_model *tm_base_conv(void) {
  ox_model *m = tm_model(7);
  if (!m) return NULL;
  tm_opset(m, "", 13);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_x_dims, 4);
  tm_vi(m, &g->output, &g->n_output, "Y", OX_FLOAT, tm_y_dims, 2);
  ox_tensor *w = tm_tensor(m, &g->initializer, &g->n_initializer, "W", OX_FLOAT, tm_w_dims, 4);
  if (w) tm_raw(m, w, 36);
  ox_tensor *b = tm_tensor(m, &g->initializer, &g->n_initializer, "B", OX_FLOAT, tm_d1, 1);
  if (b) tm_floats(m, b, 1);
  ox_tensor *s = tm_tensor(m, &g->initializer, &g->n_initializer, "S", OX_INT64, tm_d2, 1);
  if (s) tm_i64s(m, s, tm_y_dims, 2);
  ox_node *conv = tm_gnode(m, g, "Conv", "conv1", TM_IN("X", "W", "B"), TM_IN("C"));
  if (conv) {
    static const int64_t ks[] = {3, 3}, pads[] = {1, 1, 1, 1};
    tm_attr_ints(m, conv, "kernel_shape", ks, 2);
    tm_attr_ints(m, conv, "pads", pads, 4);
    tm_attr_int(m, conv, "group", 1);
  }
  tm_gnode(m, g, "Relu", "relu1", TM_IN("C"), TM_IN("R"));
  ox_node *k = tm_gnode(m, g, "Constant", "const1", NULL, TM_IN("K"));
  if (k) {
    ox_attr *a = ox_node_add_attr(m->arena, k, "value", OX_ATTR_TENSOR);
    if (a) {
      ox_tensor *arr = NULL;
      size_t na = 0;
      a->t = tm_tensor(m, &arr, &na, "kval", OX_FLOAT, tm_d1, 1);
      if (a->t) tm_floats(m, a->t, 1);
    }
  }
  tm_gnode(m, g, "Add", "add1", TM_IN("R", "K"), TM_IN("A"));
  tm_gnode(m, g, "Reshape", "reshape1", TM_IN("A", "S"), TM_IN("Y"));
  return m;
}

/* B_LOOP: Loop over X with a body that adds an outer-scope initializer, and
 * an If. IR 7, opset 13. */
static ox_model *tm_base_loop(void) {
  ox_model *m = tm_model(7);
  if (!m) return NULL;
  tm_opset(m, "", 13);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_d3, 1);
  tm_vi(m, &g->output, &g->n_output, "Z", OX_FLOAT, tm_d3, 1);
  tm_vi(m, &g->output, &g->n_output, "Q", OX_FLOAT, tm_d3, 1);
  static const int64_t two = 2;
  ox_tensor *mt = tm_tensor(m, &g->initializer, &g->n_initializer, "M", OX_INT64, NULL, 0);
  if (mt) tm_i64s(m, mt, &two, 1);
  ox_tensor *ct = tm_tensor(m, &g->initializer, &g->n_initializer, "cond", OX_BOOL, NULL, 0);
  if (ct) {
    int32_t *v = OX_VEC_PUSH(m->arena, ct->int32_data, ct->n_int32_data);
    if (v) *v = 1;
  }
  ox_tensor *one = tm_tensor(m, &g->initializer, &g->n_initializer, "one", OX_FLOAT, tm_d3, 1);
  if (one) tm_floats(m, one, 3);
  ox_graph *body = tm_graph(m, "body");
  if (body) {
    tm_vi(m, &body->input, &body->n_input, "iter", OX_INT64, NULL, 0);
    tm_vi(m, &body->input, &body->n_input, "cond_in", OX_BOOL, NULL, 0);
    tm_vi(m, &body->input, &body->n_input, "v_in", OX_FLOAT, tm_d3, 1);
    tm_vi(m, &body->output, &body->n_output, "cond_out", OX_BOOL, NULL, 0);
    tm_vi(m, &body->output, &body->n_output, "v_out", OX_FLOAT, tm_d3, 1);
    tm_gnode(m, body, "Identity", "body_id", TM_IN("cond_in"), TM_IN("cond_out"));
    tm_gnode(m, body, "Add", "body_add", TM_IN("v_in", "one"), TM_IN("v_out"));
  }
  ox_node *loop = tm_gnode(m, g, "Loop", "loop1", TM_IN("M", "cond", "X"), TM_IN("Z"));
  if (loop) tm_attr_graph(m, loop, "body", body);
  ox_graph *th = tm_graph(m, "then_g"), *el = tm_graph(m, "else_g");
  if (th && el) {
    tm_vi(m, &th->output, &th->n_output, "t_out", OX_FLOAT, tm_d3, 1);
    tm_gnode(m, th, "Identity", "then_id", TM_IN("Z"), TM_IN("t_out"));
    tm_vi(m, &el->output, &el->n_output, "e_out", OX_FLOAT, tm_d3, 1);
    tm_gnode(m, el, "Neg", "else_neg", TM_IN("X"), TM_IN("e_out"));
  }
  ox_node *iff = tm_gnode(m, g, "If", "if1", TM_IN("cond"), TM_IN("Q"));
  if (iff) {
    tm_attr_graph(m, iff, "then_branch", th);
    tm_attr_graph(m, iff, "else_branch", el);
  }
  return m;
}

static ox_function *tm_function(ox_model *m, const char *domain, const char *name) {
  ox_model_proto *mp = m->proto;
  ox_function *f = OX_VEC_PUSH(m->arena, mp->functions, mp->n_functions);
  if (!f) return NULL;
  f->name = ox_arena_strdup(m->arena, name);
  f->domain = ox_arena_strdup(m->arena, domain);
  return f;
}

static void tm_fn_str(ox_model *m, char ***arr, size_t *n, const char *s) {
  char **slot = OX_VEC_PUSH(m->arena, *arr, *n);
  if (slot) *slot = ox_arena_strdup(m->arena, s);
}

static void tm_fn_opset(ox_model *m, ox_function *f, const char *domain, int64_t v) {
  ox_opset *o = OX_VEC_PUSH(m->arena, f->opset_import, f->n_opset_import);
  if (!o) return;
  o->domain = ox_arena_strdup(m->arena, domain);
  o->version = v;
  o->has_version = true;
}

/* B_FUNC: a model-local function local.AddTwice(x) => (y) called by the
 * main graph. IR 8, opsets "" 15 and local 1. */
static ox_model *tm_base_func(void) {
  ox_model *m = tm_model(8);
  if (!m) return NULL;
  tm_opset(m, "", 15);
  tm_opset(m, "local", 1);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_d3, 1);
  tm_vi(m, &g->output, &g->n_output, "Y", OX_FLOAT, tm_d3, 1);
  tm_node(m, &g->node, &g->n_node, "AddTwice", "local", "call1", TM_IN("X"), TM_IN("Y"));
  ox_function *f = tm_function(m, "local", "AddTwice");
  if (!f) return m;
  tm_fn_str(m, &f->input, &f->n_input, "x");
  tm_fn_str(m, &f->output, &f->n_output, "y");
  tm_fn_opset(m, f, "", 15);
  tm_node(m, &f->node, &f->n_node, "Add", "", "f_add1", TM_IN("x", "x"), TM_IN("t"));
  tm_node(m, &f->node, &f->n_node, "Add", "", "f_add2", TM_IN("t", "x"), TM_IN("y"));
  return m;
}

/* B_SPARSE: a sparse initializer (linear indices) added to a dense input.
 * IR 7, opset 13. */
static ox_model *tm_base_sparse(void) {
  ox_model *m = tm_model(7);
  if (!m) return NULL;
  tm_opset(m, "", 13);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  static const int64_t dense[] = {3, 4};
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, dense, 2);
  tm_vi(m, &g->output, &g->n_output, "Y", OX_FLOAT, dense, 2);
  ox_sparse_tensor *sp = OX_VEC_PUSH(m->arena, g->sparse_initializer, g->n_sparse_initializer);
  if (sp) {
    ox_tensor *arr = NULL, *arr2 = NULL;
    size_t na = 0, na2 = 0;
    sp->values = tm_tensor(m, &arr, &na, "SP", OX_FLOAT, tm_d3, 1);
    if (sp->values) tm_floats(m, sp->values, 3);
    static const int64_t idx[] = {1, 5, 7};
    sp->indices = tm_tensor(m, &arr2, &na2, "SP_idx", OX_INT64, tm_d3, 1);
    if (sp->indices) tm_i64s(m, sp->indices, idx, 3);
    for (int i = 0; i < 2; i++) {
      int64_t *d = OX_VEC_PUSH(m->arena, sp->dims, sp->n_dims);
      if (d) *d = dense[i];
    }
  }
  tm_gnode(m, g, "Add", "add1", TM_IN("X", "SP"), TM_IN("Y"));
  return m;
}

/* B_EXT: a weight stored in the external file "w.bin" (36 bytes, created by
 * the test in the model folder). IR 7, opset 13. */
static ox_model *tm_base_ext(void) {
  ox_model *m = tm_model(7);
  if (!m) return NULL;
  tm_opset(m, "", 13);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_w_dims, 4);
  tm_vi(m, &g->output, &g->n_output, "Y", OX_FLOAT, tm_w_dims, 4);
  ox_tensor *w = tm_tensor(m, &g->initializer, &g->n_initializer, "W", OX_FLOAT, tm_w_dims, 4);
  if (w) {
    w->data_location = 1;
    w->has_data_location = true;
    ox_str_pair *kv = OX_VEC_PUSH(m->arena, w->external_data, w->n_external_data);
    if (kv) {
      kv->key = ox_arena_strdup(m->arena, "location");
      kv->value = ox_arena_strdup(m->arena, "w.bin");
    }
  }
  tm_gnode(m, g, "Mul", "mul1", TM_IN("X", "W"), TM_IN("Y"));
  return m;
}

/* B_ML: ai.onnx.ml Scaler and Binarizer. IR 7, opsets "" 13, ai.onnx.ml 3. */
static ox_model *tm_base_ml(void) {
  ox_model *m = tm_model(7);
  if (!m) return NULL;
  tm_opset(m, "", 13);
  tm_opset(m, "ai.onnx.ml", 3);
  ox_graph *g = m->proto->graph = tm_graph(m, "G");
  if (!g) return m;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_d3, 1);
  tm_vi(m, &g->output, &g->n_output, "Y", OX_FLOAT, tm_d3, 1);
  ox_node *sc =
      tm_node(m, &g->node, &g->n_node, "Scaler", "ai.onnx.ml", "scaler1", TM_IN("X"), TM_IN("S"));
  if (sc) {
    ox_attr *a = ox_node_add_attr(m->arena, sc, "scale", OX_ATTR_FLOATS);
    float *f = a ? OX_VEC_PUSH(m->arena, a->floats, a->n_floats) : NULL;
    if (f) *f = 2.0f;
  }
  ox_node *bz =
      tm_node(m, &g->node, &g->n_node, "Binarizer", "ai.onnx.ml", "bin1", TM_IN("S"), TM_IN("Y"));
  if (bz) tm_attr_float(m, bz, "threshold", 0.5f);
  return m;
}

/* B_TRAIN: B_CONV plus a training step that updates W. IR 7. */
static ox_model *tm_base_train(void) {
  ox_model *m = tm_base_conv();
  if (!m || !m->proto->graph) return m;
  ox_training_info *ti = OX_VEC_PUSH(m->arena, m->proto->training_info, m->proto->n_training_info);
  if (!ti) return m;
  ox_graph *alg = ti->algorithm = tm_graph(m, "algorithm");
  if (!alg) return m;
  tm_vi(m, &alg->output, &alg->n_output, "W_new", OX_FLOAT, tm_w_dims, 4);
  tm_gnode(m, alg, "Identity", "upd", TM_IN("W"), TM_IN("W_new"));
  ox_str_pair *b = OX_VEC_PUSH(m->arena, ti->update_binding, ti->n_update_binding);
  if (b) {
    b->key = ox_arena_strdup(m->arena, "W");
    b->value = ox_arena_strdup(m->arena, "W_new");
  }
  return m;
}

enum { B_CONV, B_LOOP, B_FUNC, B_SPARSE, B_EXT, B_ML, B_TRAIN, B_COUNT };

static ox_model *tm_base(int b) {
  switch (b) {
    case B_CONV:
      return tm_base_conv();
    case B_LOOP:
      return tm_base_loop();
    case B_FUNC:
      return tm_base_func();
    case B_SPARSE:
      return tm_base_sparse();
    case B_EXT:
      return tm_base_ext();
    case B_ML:
      return tm_base_ml();
    case B_TRAIN:
      return tm_base_train();
    default:
      return NULL;
  }
}

#endif
