/* test_infer.c - symbolic dims and shape functions on models built in
 * memory. Expected shapes come from the operators' definitions in
 * Operators.md and the examples (flatten of [N,3,H,W] is [N,3*H*W]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer/infer.h"
#include "infer/infer_impl.h"

static int fails;
#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                                \
    }                                                                         \
  } while (0)

static ox_type *sym_tensor(ox_arena *a, int32_t el, const char *const *dims, size_t r) {
  ox_type *t = ox_type_new_tensor(a, el, NULL, r);
  for (size_t i = 0; i < r; i++) {
    char *end;
    long long v = strtoll(dims[i], &end, 10);
    if (*end == 0) {
      t->shape->dim[i].has_value = true;
      t->shape->dim[i].value = v;
    } else {
      t->shape->dim[i].param = ox_arena_strdup(a, dims[i]);
    }
  }
  return t;
}

static const ox_type *find_type(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_value_info; i++)
    if (strcmp(g->value_info[i].name, name) == 0) return g->value_info[i].type;
  for (size_t i = 0; i < g->n_output; i++)
    if (strcmp(g->output[i].name, name) == 0) return g->output[i].type;
  return NULL;
}

static void dims_str(const ox_type *t, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  if (!t || !t->shape) {
    snprintf(buf, n, "<none>");
    return;
  }
  k += (size_t)snprintf(buf + k, n - k, "[");
  for (size_t i = 0; i < t->shape->n_dim && k < n; i++) {
    const ox_dim *d = &t->shape->dim[i];
    if (d->has_value) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)d->value);
    else k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? "," : "", d->param ? d->param : "?");
  }
  if (k < n) snprintf(buf + k, n - k, "]");
}

static void test_dims(void) {
  ox_arena *a = ox_arena_new();
  ox_dim N = ox_dim_sym(a, "N"), H = ox_dim_sym(a, "H");
  ox_dim r = ox_dim_mul(a, N, ox_dim_known(3));
  CHECK(r.param && strcmp(r.param, "N*3") == 0);
  r = ox_dim_add(a, N, ox_dim_known(1));
  CHECK(r.param && strcmp(r.param, "N+1") == 0);
  /* (H-1)/2+1: the output length of a stride-2 window of size 1 */
  r = ox_dim_addc(a, ox_dim_div(a, ox_dim_addc(a, H, -1), ox_dim_known(2)), 1);
  CHECK(r.param && strcmp(r.param, "(H-1)/2+1") == 0);
  r = ox_dim_mul(a, ox_dim_known(2), ox_dim_known(21));
  CHECK(r.has_value && r.value == 42);
  r = ox_dim_div(a, ox_dim_known(-7), ox_dim_known(2));
  CHECK(r.has_value && r.value == -4);
  r = ox_dim_sub(a, H, H);
  CHECK(r.has_value && r.value == 0);
  ox_arena_free(a);
}

static void test_model(void) {
  ox_model *m = ox_model_new();
  ox_arena *a = m->arena;
  ox_model_proto *p = m->proto;
  ox_opset *os = OX_VEC_PUSH(a, p->opset_import, p->n_opset_import);
  os->domain = ox_arena_strdup(a, "");
  os->version = 17;
  os->has_version = true;
  p->ir_version = 8;
  p->has_ir_version = true;
  ox_graph *g = p->graph = ox_arena_alloc(a, sizeof *g);
  g->name = ox_arena_strdup(a, "g");
  const char *xd[] = {"N", "3", "H", "W"};
  ox_value_info *x = ox_value_info_push(a, &g->input, &g->n_input, "X");
  x->type = sym_tensor(a, OX_FLOAT, xd, 4);
  /* F = Flatten(X) ; S = Shape(X) ; T = Reshape(X, Concat(Gather(S,0), [-1])) */
  ox_node *n = ox_graph_add_node(a, g, "Flatten", "", "flat");
  ox_node_add_input(a, n, "X");
  ox_node_add_output(a, n, "F");
  n = ox_graph_add_node(a, g, "Shape", "", "shape");
  ox_node_add_input(a, n, "X");
  ox_node_add_output(a, n, "S");
  ox_tensor *zero = OX_VEC_PUSH(a, g->initializer, g->n_initializer);
  zero->name = ox_arena_strdup(a, "zero");
  zero->data_type = OX_INT64;
  zero->has_data_type = true;
  zero->dims = ox_arena_alloc(a, sizeof(int64_t));
  zero->dims[0] = 1;
  zero->n_dims = 1;
  zero->int64_data = ox_arena_alloc(a, sizeof(int64_t));
  zero->n_int64_data = 1;
  ox_tensor *neg = OX_VEC_PUSH(a, g->initializer, g->n_initializer);
  *neg = *zero;
  neg->name = ox_arena_strdup(a, "minus1");
  neg->int64_data = ox_arena_alloc(a, sizeof(int64_t));
  neg->int64_data[0] = -1;
  n = ox_graph_add_node(a, g, "Gather", "", "g0");
  ox_node_add_input(a, n, "S");
  ox_node_add_input(a, n, "zero");
  ox_node_add_output(a, n, "S0");
  n = ox_graph_add_node(a, g, "Concat", "", "cat");
  ox_node_add_input(a, n, "S0");
  ox_node_add_input(a, n, "minus1");
  ox_node_add_output(a, n, "target");
  ox_node_add_attr(a, n, "axis", OX_ATTR_INT)->i = 0;
  n = ox_graph_add_node(a, g, "Reshape", "", "rs");
  ox_node_add_input(a, n, "X");
  ox_node_add_input(a, n, "target");
  ox_node_add_output(a, n, "T");
  /* C = Conv(X, Wt) with 3x3 kernel, stride 2, pads 1 */
  ox_tensor *w = OX_VEC_PUSH(a, g->initializer, g->n_initializer);
  w->name = ox_arena_strdup(a, "Wt");
  w->data_type = OX_FLOAT;
  w->has_data_type = true;
  w->dims = ox_arena_calloc(a, 4, sizeof(int64_t));
  w->dims[0] = 8, w->dims[1] = 3, w->dims[2] = 3, w->dims[3] = 3;
  w->n_dims = 4;
  n = ox_graph_add_node(a, g, "Conv", "", "conv");
  ox_node_add_input(a, n, "X");
  ox_node_add_input(a, n, "Wt");
  ox_node_add_output(a, n, "C");
  ox_attr *at = ox_node_add_attr(a, n, "strides", OX_ATTR_INTS);
  at->ints = ox_arena_calloc(a, 2, sizeof(int64_t));
  at->ints[0] = at->ints[1] = 2;
  at->n_ints = 2;
  at = ox_node_add_attr(a, n, "pads", OX_ATTR_INTS);
  at->ints = ox_arena_calloc(a, 4, sizeof(int64_t));
  for (int i = 0; i < 4; i++) at->ints[i] = 1;
  at->n_ints = 4;
  ox_value_info_push(a, &g->output, &g->n_output, "T");

  ox_err e = {0};
  ox_buf warn = {0};
  ox_infer_opts o = {true, NULL, 0};
  int rc = ox_infer_model(m, &o, &warn, &e);
  if (rc) fprintf(stderr, "infer failed: %s\n%.*s", e.msg, (int)warn.size, (char *)warn.data);
  CHECK(rc == OX_OK);
  char buf[256];
  dims_str(find_type(g, "F"), buf, sizeof buf);
  CHECK(strcmp(buf, "[N,3*H*W]") == 0);
  if (strcmp(buf, "[N,3*H*W]")) fprintf(stderr, "F: %s\n", buf);
  dims_str(find_type(g, "S"), buf, sizeof buf);
  CHECK(strcmp(buf, "[4]") == 0);
  dims_str(find_type(g, "T"), buf, sizeof buf);
  CHECK(strcmp(buf, "[N,3*H*W]") == 0);
  if (strcmp(buf, "[N,3*H*W]")) fprintf(stderr, "T: %s\n", buf);
  dims_str(find_type(g, "C"), buf, sizeof buf);
  /* (H + 2 - 3)/2 + 1 */
  CHECK(strcmp(buf, "[N,8,(H-1)/2+1,(W-1)/2+1]") == 0);
  if (strcmp(buf, "[N,8,(H-1)/2+1,(W-1)/2+1]")) fprintf(stderr, "C: %s\n", buf);
  ox_buf_free(&warn);

  /* bind N=2, H=W=5: everything becomes concrete */
  ox_model_free(m);
}

int main(void) {
  test_dims();
  test_model();
  if (fails) return 1;
  printf("test_infer: ok\n");
  return 0;
}
