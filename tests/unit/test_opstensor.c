/* test_opstensor.c - data-movement kernels on what the conformance suite
 * does not reach: the old attribute-driven versions (Slice-1, Pad-2,
 * Reshape-1, Squeeze-1, Unsqueeze-1, Split-2, Tile-1, TopK-1, Concat-1)
 * checked against the examples of Operators.md/Changelog.md, and string
 * tensors (duplicated element by element) through Transpose, Slice with a
 * negative step, Gather, Concat, Split, Tile, Pad, Unique and Compress. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "runtime/session.h"

static int failures;

typedef struct tcase {
  const char *name;
  ox_model *m;
  ox_graph *g;
  ox_node *n;
  ox_value *in[8];
  const char *in_names[8];
  size_t n_in, n_out;
} tcase;

static void start(tcase *t, const char *name, const char *op, int64_t opset) {
  memset(t, 0, sizeof *t);
  t->name = name;
  t->m = ox_model_new();
  ox_arena *a = t->m->arena;
  ox_model_proto *mp = t->m->proto;
  mp->ir_version = 8;
  mp->has_ir_version = true;
  ox_opset *o = OX_VEC_PUSH(a, mp->opset_import, mp->n_opset_import);
  o->domain = ox_arena_strdup(a, "");
  o->version = opset;
  o->has_version = true;
  mp->graph = ox_arena_calloc(a, 1, sizeof *mp->graph);
  t->g = mp->graph;
  t->g->name = ox_arena_strdup(a, "g");
  t->n = ox_graph_add_node(a, t->g, op, "", "n");
}

/* Adds graph input `name` fed with a tensor of dtype/dims and data (n
 * elements of the run-time layout; strings as const char *). */
static void input(tcase *t, const char *name, int32_t dt, const int64_t *dims, size_t rank,
                  const void *data) {
  ox_arena *a = t->m->arena;
  ox_value_info *vi = ox_value_info_push(a, &t->g->input, &t->g->n_input, name);
  vi->type = ox_type_new_tensor(a, dt, dims, rank);
  ox_node_add_input(a, t->n, name);
  ox_value *v = ox_tensor_new(dt, dims, rank, NULL);
  if (dt == OX_STRING) {
    for (int64_t i = 0; i < v->numel; i++) {
      const char *s = ((const char *const *)data)[i];
      char *p = malloc(strlen(s) + 1);
      strcpy(p, s);
      ((char **)v->data)[i] = p;
    }
  } else if (v->numel) {
    memcpy(v->data, data, v->nbytes);
  }
  t->in_names[t->n_in] = vi->name;
  t->in[t->n_in++] = v;
}

static void output(tcase *t, const char *name, int32_t dt) {
  ox_arena *a = t->m->arena;
  ox_value_info *vi = ox_value_info_push(a, &t->g->output, &t->g->n_output, name);
  vi->type = ox_type_new_tensor(a, dt, NULL, 0);
  vi->type->shape = NULL; /* unknown rank */
  ox_node_add_output(a, t->n, name);
  t->n_out++;
}

static void attr_ints(tcase *t, const char *name, const int64_t *v, size_t n) {
  ox_attr *at = ox_node_add_attr(t->m->arena, t->n, name, OX_ATTR_INTS);
  at->ints = ox_arena_memdup(t->m->arena, v, n * sizeof *v);
  at->n_ints = n;
}

static void attr_int(tcase *t, const char *name, int64_t v) {
  ox_attr *at = ox_node_add_attr(t->m->arena, t->n, name, OX_ATTR_INT);
  at->i = v;
  at->has_i = true;
}

static void attr_str(tcase *t, const char *name, const char *s) {
  ox_attr *at = ox_node_add_attr(t->m->arena, t->n, name, OX_ATTR_STRING);
  at->s.data = (const uint8_t *)ox_arena_strdup(t->m->arena, s);
  at->s.size = strlen(s);
}

static void attr_float(tcase *t, const char *name, float f) {
  ox_attr *at = ox_node_add_attr(t->m->arena, t->n, name, OX_ATTR_FLOAT);
  at->f = f;
  at->has_f = true;
}

/* Runs the node; checks output k against dims and data (numeric: bytes;
 * strings: const char *). */
typedef struct want {
  int32_t dt;
  size_t rank;
  int64_t dims[4];
  const void *data;
} want;

static void finish(tcase *t, const want *w) {
  ox_err e = {0};
  ox_session *s = NULL;
  ox_value *outs[4] = {0};
  if (ox_session_create(t->m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e) ||
      ox_session_run(s, t->in_names, t->in, t->n_in, NULL, outs, t->n_out, &e)) {
    printf("FAIL %s: %s\n", t->name, e.msg);
    failures++;
    goto done;
  }
  for (size_t k = 0; k < t->n_out; k++) {
    ox_value *v = outs[k];
    const want *x = &w[k];
    if (!v || v->dtype != x->dt || !ox_shape_equal(v->dims, v->rank, x->dims, x->rank)) {
      printf("FAIL %s: output %zu has the wrong type or shape\n", t->name, k);
      failures++;
      continue;
    }
    for (int64_t i = 0; i < v->numel; i++) {
      bool same;
      if (x->dt == OX_STRING) {
        const char *got = ((char **)v->data)[i];
        same = strcmp(got ? got : "", ((const char *const *)x->data)[i]) == 0;
      } else {
        size_t es = ox_value_elem_size(x->dt);
        same =
            memcmp((const uint8_t *)v->data + i * es, (const uint8_t *)x->data + i * es, es) == 0;
      }
      if (!same) {
        printf("FAIL %s: output %zu differs at %lld\n", t->name, k, (long long)i);
        failures++;
        break;
      }
    }
  }
done:
  for (size_t k = 0; k < t->n_out; k++)
    if (outs[k]) ox_value_unref(outs[k]);
  for (size_t i = 0; i < t->n_in; i++) ox_value_unref(t->in[i]);
  ox_session_free(s);
  ox_model_free(t->m);
}

/* Runs the node and expects the run to fail with a message holding `what`
 * and the node's name. */
static void finish_err(tcase *t, const char *what) {
  ox_err e = {0};
  ox_session *s = NULL;
  ox_value *outs[4] = {0};
  int rc = ox_session_create(t->m, &(ox_session_opts){.kernels = &ox_registry_builtin}, &s, &e);
  if (!rc) rc = ox_session_run(s, t->in_names, t->in, t->n_in, NULL, outs, t->n_out, &e);
  if (!rc || !strstr(e.msg, what) || !strstr(e.msg, "'n'")) {
    printf("FAIL %s: expected an error with '%s', got %s\n", t->name, what, rc ? e.msg : "success");
    failures++;
  }
  for (size_t k = 0; k < t->n_out; k++)
    if (outs[k]) ox_value_unref(outs[k]);
  for (size_t i = 0; i < t->n_in; i++) ox_value_unref(t->in[i]);
  ox_session_free(s);
  ox_model_free(t->m);
}

static const float slice_data[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const int64_t d24[] = {2, 4};

static void old_versions(void) {
  tcase t;
  /* Slice-1, example 1 and 2 of the Changelog */
  start(&t, "Slice-1 example 1", "Slice", 1);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  attr_ints(&t, "axes", (int64_t[]){0, 1}, 2);
  attr_ints(&t, "starts", (int64_t[]){1, 0}, 2);
  attr_ints(&t, "ends", (int64_t[]){2, 3}, 2);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 2, {1, 3}, (float[]){5, 6, 7}});

  start(&t, "Slice-1 example 2", "Slice", 1);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  attr_ints(&t, "starts", (int64_t[]){0, 1}, 2);
  attr_ints(&t, "ends", (int64_t[]){-1, 1000}, 2);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 2, {1, 3}, (float[]){2, 3, 4}});

  /* Pad-2 examples (constant value 0, reflect, edge) */
  static const float pd[] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
  static const int64_t d32[] = {3, 2};
  static const char *const modes[] = {"constant", "reflect", "edge"};
  static const float pw[3][12] = {
      {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f},
      {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f},
      {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}};
  for (int m = 0; m < 3; m++) {
    start(&t, modes[m], "Pad", 2);
    input(&t, "x", OX_FLOAT, d32, 2, pd);
    attr_ints(&t, "pads", (int64_t[]){0, 2, 0, 0}, 4);
    attr_str(&t, "mode", modes[m]);
    attr_float(&t, "value", 0.0f);
    output(&t, "y", OX_FLOAT);
    finish(&t, &(want){OX_FLOAT, 2, {3, 4}, pw[m]});
  }

  /* Reshape-1 with the shape attribute (0 copies, -1 infers) */
  start(&t, "Reshape-1", "Reshape", 1);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  attr_ints(&t, "shape", (int64_t[]){0, -1, 2}, 3);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 3, {2, 2, 2}, slice_data});

  /* Squeeze-1 / Unsqueeze-1 with the axes attribute */
  static const int64_t d131[] = {1, 3, 1};
  start(&t, "Squeeze-1", "Squeeze", 1);
  input(&t, "x", OX_FLOAT, d131, 3, slice_data);
  attr_ints(&t, "axes", (int64_t[]){2}, 1);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 2, {1, 3}, slice_data});

  start(&t, "Unsqueeze-1", "Unsqueeze", 1);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  attr_ints(&t, "axes", (int64_t[]){0, 3}, 2);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 4, {1, 2, 4, 1}, slice_data});

  /* Split-2 with the split attribute along axis 1 */
  start(&t, "Split-2", "Split", 2);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  attr_int(&t, "axis", 1);
  attr_ints(&t, "split", (int64_t[]){1, 3}, 2);
  output(&t, "a", OX_FLOAT);
  output(&t, "b", OX_FLOAT);
  finish(&t, (want[]){{OX_FLOAT, 2, {2, 1}, (float[]){1, 5}},
                      {OX_FLOAT, 2, {2, 3}, (float[]){2, 3, 4, 6, 7, 8}}});

  /* Tile-1: scalar inputs tiles and axis; the schema types them T (the
   * float types of the data), so they are float here */
  start(&t, "Tile-1", "Tile", 1);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "tiles", OX_FLOAT, NULL, 0, (float[]){2});
  input(&t, "axis", OX_FLOAT, NULL, 0, (float[]){1});
  output(&t, "y", OX_FLOAT);
  finish(&t,
         &(want){OX_FLOAT, 2, {2, 8}, (float[]){1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8}});

  /* TopK-1: k attribute, last axis, largest first, ties by lower index */
  start(&t, "TopK-1", "TopK", 1);
  input(&t, "x", OX_FLOAT, d24, 2, (float[]){3, 1, 3, 2, 0, 9, 9, 1});
  attr_int(&t, "k", 2);
  output(&t, "v", OX_FLOAT);
  output(&t, "i", OX_INT64);
  finish(&t, (want[]){{OX_FLOAT, 2, {2, 2}, (float[]){3, 3, 9, 9}},
                      {OX_INT64, 2, {2, 2}, (int64_t[]){0, 2, 1, 2}}});

  /* Concat-1: axis defaults to 1 */
  start(&t, "Concat-1", "Concat", 1);
  input(&t, "a", OX_FLOAT, d24, 2, slice_data);
  input(&t, "b", OX_FLOAT, d24, 2, slice_data);
  output(&t, "y", OX_FLOAT);
  finish(&t,
         &(want){OX_FLOAT, 2, {2, 8}, (float[]){1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8}});
}

static const char *const sx[] = {"a", "bb", "", "dddd", "e", "ff"};
static const int64_t d23[] = {2, 3};

static void strings(void) {
  tcase t;
  start(&t, "Transpose strings", "Transpose", 21);
  input(&t, "x", OX_STRING, d23, 2, sx);
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 2, {3, 2}, (const char *[]){"a", "dddd", "bb", "e", "", "ff"}});

  start(&t, "Slice strings, negative step", "Slice", 13);
  input(&t, "x", OX_STRING, d23, 2, sx);
  input(&t, "starts", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){-1});
  input(&t, "ends", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){INT64_MIN});
  input(&t, "axes", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){1});
  input(&t, "steps", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){-2});
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 2, {2, 2}, (const char *[]){"", "a", "ff", "dddd"}});

  start(&t, "Gather strings", "Gather", 13);
  input(&t, "x", OX_STRING, d23, 2, sx);
  input(&t, "i", OX_INT64, (int64_t[]){2}, 1, (int64_t[]){-1, 0});
  attr_int(&t, "axis", 1);
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 2, {2, 2}, (const char *[]){"", "a", "ff", "dddd"}});

  start(&t, "Concat strings", "Concat", 13);
  input(&t, "a", OX_STRING, d23, 2, sx);
  input(&t, "b", OX_STRING, (int64_t[]){2, 1}, 2, (const char *[]){"x", "y"});
  attr_int(&t, "axis", 1);
  output(&t, "y", OX_STRING);
  finish(
      &t,
      &(want){OX_STRING, 2, {2, 4}, (const char *[]){"a", "bb", "", "x", "dddd", "e", "ff", "y"}});

  start(&t, "Split strings", "Split", 18);
  input(&t, "x", OX_STRING, d23, 2, sx);
  attr_int(&t, "axis", 1);
  attr_int(&t, "num_outputs", 2);
  output(&t, "a", OX_STRING);
  output(&t, "b", OX_STRING);
  finish(&t, (want[]){{OX_STRING, 2, {2, 2}, (const char *[]){"a", "bb", "dddd", "e"}},
                      {OX_STRING, 2, {2, 1}, (const char *[]){"", "ff"}}});

  start(&t, "Tile strings", "Tile", 13);
  input(&t, "x", OX_STRING, (int64_t[]){2}, 1, sx);
  input(&t, "r", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){2});
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 1, {4}, (const char *[]){"a", "bb", "a", "bb"}});

  start(&t, "Pad strings, edge", "Pad", 21);
  input(&t, "x", OX_STRING, (int64_t[]){2}, 1, sx);
  input(&t, "p", OX_INT64, (int64_t[]){2}, 1, (int64_t[]){1, 2});
  attr_str(&t, "mode", "edge");
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 1, {5}, (const char *[]){"a", "a", "bb", "bb", "bb"}});

  start(&t, "Unique strings", "Unique", 11);
  input(&t, "x", OX_STRING, (int64_t[]){5}, 1, (const char *[]){"b", "a", "b", "c", "a"});
  attr_int(&t, "sorted", 0);
  output(&t, "y", OX_STRING);
  output(&t, "i", OX_INT64);
  output(&t, "inv", OX_INT64);
  output(&t, "cnt", OX_INT64);
  finish(&t, (want[]){{OX_STRING, 1, {3}, (const char *[]){"b", "a", "c"}},
                      {OX_INT64, 1, {3}, (int64_t[]){0, 1, 3}},
                      {OX_INT64, 1, {5}, (int64_t[]){0, 1, 0, 2, 1}},
                      {OX_INT64, 1, {3}, (int64_t[]){2, 2, 1}}});

  start(&t, "Compress strings", "Compress", 11);
  input(&t, "x", OX_STRING, d23, 2, sx);
  input(&t, "c", OX_BOOL, (int64_t[]){3}, 1, (uint8_t[]){1, 0, 1});
  attr_int(&t, "axis", 1);
  output(&t, "y", OX_STRING);
  finish(&t, &(want){OX_STRING, 2, {2, 2}, (const char *[]){"a", "", "dddd", "ff"}});
}

/* Constant with sparse_value (IR.md: COO indices, linear [NNZ] or
 * coordinates [NNZ, rank]) densified with zeros elsewhere. */
static void sparse_constant(bool linear) {
  tcase t;
  start(&t, linear ? "Constant sparse, linear indices" : "Constant sparse, coordinates", "Constant",
        13);
  ox_arena *a = t.m->arena;
  ox_attr *at = ox_node_add_attr(a, t.n, "sparse_value", OX_ATTR_SPARSE_TENSOR);
  ox_sparse_tensor *sp = ox_arena_calloc(a, 1, sizeof *sp);
  static int64_t dims[] = {2, 3}, lin[] = {1, 5}, coo[] = {0, 1, 1, 2}, nnz = 2, cdims[] = {2, 2};
  static float vals[] = {5, 7};
  sp->dims = dims;
  sp->n_dims = 2;
  sp->values = ox_arena_calloc(a, 1, sizeof *sp->values);
  sp->values->data_type = OX_FLOAT;
  sp->values->has_data_type = true;
  sp->values->dims = &nnz;
  sp->values->n_dims = 1;
  sp->values->float_data = vals;
  sp->values->n_float_data = 2;
  sp->indices = ox_arena_calloc(a, 1, sizeof *sp->indices);
  sp->indices->data_type = OX_INT64;
  sp->indices->has_data_type = true;
  sp->indices->dims = linear ? &nnz : cdims;
  sp->indices->n_dims = linear ? 1 : 2;
  sp->indices->int64_data = linear ? lin : coo;
  sp->indices->n_int64_data = linear ? 2 : 4;
  at->sparse_tensor = sp;
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 2, {2, 3}, (float[]){0, 5, 0, 0, 0, 7}});
}

/* Transposes large enough for the tiled path (source-contiguous dim not
 * last, both tiled dims >= 8), checked against the definition
 * y[i0, i1, i2] = x[i_perm^-1...] computed by plain loops. */
static void big_transpose(const int64_t *perm) {
  enum { D0 = 3, D1 = 16, D2 = 12, N = D0 * D1 * D2 };
  static const int64_t dims[3] = {D0, D1, D2};
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  int64_t od[3] = {dims[perm[0]], dims[perm[1]], dims[perm[2]]}, idx[3];
  for (idx[0] = 0; idx[0] < D0; idx[0]++)
    for (idx[1] = 0; idx[1] < D1; idx[1]++)
      for (idx[2] = 0; idx[2] < D2; idx[2]++) {
        int64_t o = (idx[perm[0]] * od[1] + idx[perm[1]]) * od[2] + idx[perm[2]];
        y[o] = x[(idx[0] * D1 + idx[1]) * D2 + idx[2]];
      }
  char name[64];
  snprintf(name, sizeof name, "Transpose perm %d%d%d", (int)perm[0], (int)perm[1], (int)perm[2]);
  tcase t;
  start(&t, name, "Transpose", 13);
  input(&t, "x", OX_FLOAT, dims, 3, x);
  attr_ints(&t, "perm", perm, 3);
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 3, {od[0], od[1], od[2]}, y});
}

/* Bad inputs give errors that name the node, never a crash. */
static void errors(void) {
  tcase t;
  start(&t, "Gather index out of range", "Gather", 13);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "i", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){2});
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "out of range");

  start(&t, "Reshape element count", "Reshape", 14);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "s", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){7});
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "cannot reshape");

  start(&t, "Slice step 0", "Slice", 13);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "b", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){0});
  input(&t, "e", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){2});
  input(&t, "a", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){1});
  input(&t, "st", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){0});
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "step 0");

  start(&t, "Pad below zero", "Pad", 21);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "p", OX_INT64, (int64_t[]){4}, 1, (int64_t[]){0, -3, 0, -3});
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "negative");

  start(&t, "TopK k too large", "TopK", 11);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "k", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){5});
  output(&t, "v", OX_FLOAT);
  output(&t, "i", OX_INT64);
  finish_err(&t, "out of range");

  start(&t, "Split sizes", "Split", 13);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "s", OX_INT64, (int64_t[]){2}, 1, (int64_t[]){1, 2});
  attr_int(&t, "axis", 1);
  output(&t, "a", OX_FLOAT);
  output(&t, "b", OX_FLOAT);
  finish_err(&t, "sums to 3");

  start(&t, "Expand shapes", "Expand", 13);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "s", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){3});
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "broadcast");

  start(&t, "ScatterND index out of range", "ScatterND", 18);
  input(&t, "x", OX_FLOAT, d24, 2, slice_data);
  input(&t, "i", OX_INT64, (int64_t[]){1, 1}, 2, (int64_t[]){-3});
  input(&t, "u", OX_FLOAT, (int64_t[]){1, 4}, 2, slice_data);
  output(&t, "y", OX_FLOAT);
  finish_err(&t, "out of range");
}

/* TopK with k much smaller than the axis (the heap selection): values
 * i % 10 for i < 40, so ties resolve to the lower indices. */
static void topk_select(int32_t dt, int64_t largest) {
  static float xf[40];
  static int32_t xi[40];
  for (int i = 0; i < 40; i++) xf[i] = (float)(xi[i] = i % 10);
  tcase t;
  start(&t, largest ? "TopK select largest" : "TopK select smallest", "TopK", 11);
  input(&t, "x", dt, (int64_t[]){40}, 1, dt == OX_FLOAT ? (const void *)xf : (const void *)xi);
  input(&t, "k", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){4});
  attr_int(&t, "largest", largest);
  output(&t, "v", dt);
  output(&t, "i", OX_INT64);
  static const float vf[2][4] = {{0, 0, 0, 0}, {9, 9, 9, 9}};
  static const int32_t vi[2][4] = {{0, 0, 0, 0}, {9, 9, 9, 9}};
  static const int64_t ix[2][4] = {{0, 10, 20, 30}, {9, 19, 29, 39}};
  finish(&t, (want[]){{dt, 1, {4}, dt == OX_FLOAT ? (const void *)vf[largest] : vi[largest]},
                      {OX_INT64, 1, {4}, ix[largest]}});
}

/* Same on a permutation: x[i] = 7i mod 40, whose inverse is v -> 23v mod 40. */
static void topk_select_order(int64_t largest) {
  static float x[40];
  for (int i = 0; i < 40; i++) x[i] = (float)((7 * i) % 40);
  tcase t;
  start(&t, largest ? "TopK select order largest" : "TopK select order smallest", "TopK", 11);
  input(&t, "x", OX_FLOAT, (int64_t[]){40}, 1, x);
  input(&t, "k", OX_INT64, (int64_t[]){1}, 1, (int64_t[]){4});
  attr_int(&t, "largest", largest);
  output(&t, "v", OX_FLOAT);
  output(&t, "i", OX_INT64);
  static const float v[2][4] = {{0, 1, 2, 3}, {39, 38, 37, 36}};
  static const int64_t ix[2][4] = {{0, 23, 6, 29}, {17, 34, 11, 28}};
  finish(&t, (want[]){{OX_FLOAT, 1, {4}, v[largest]}, {OX_INT64, 1, {4}, ix[largest]}});
}

/* A reflect Pad big enough to run on the thread pool, against the
 * definition: an index outside [0, n) mirrors at the edges (edge not
 * repeated) until it falls inside. */
static int64_t mirror(int64_t i, int64_t n) {
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

static void big_reflect_pad(void) {
  enum { A = 4, B = 64, C = 70, PB = 3, PC = 5, OB = B + PB + 1, OC = C + PC - 7 };
  static float x[A * B * C], y[A * OB * OC];
  for (int i = 0; i < A * B * C; i++) x[i] = (float)i;
  for (int64_t a = 0; a < A; a++)
    for (int64_t b = 0; b < OB; b++)
      for (int64_t c = 0; c < OC; c++)
        y[(a * OB + b) * OC + c] = x[(a * B + mirror(b - PB, B)) * C + mirror(c - PC, C)];
  tcase t;
  start(&t, "Pad reflect, large", "Pad", 19);
  input(&t, "x", OX_FLOAT, (int64_t[]){A, B, C}, 3, x);
  /* begin (0, 3, 5), end (0, 1, -7): the end of the last axis is cropped */
  input(&t, "p", OX_INT64, (int64_t[]){6}, 1, (int64_t[]){0, PB, PC, 0, 1, -7});
  attr_str(&t, "mode", "reflect");
  output(&t, "y", OX_FLOAT);
  finish(&t, &(want){OX_FLOAT, 3, {A, OB, OC}, y});
}

int main(void) {
  big_reflect_pad();
  topk_select_order(1);
  topk_select_order(0);
  topk_select(OX_FLOAT, 1);
  topk_select(OX_FLOAT, 0);
  topk_select(OX_INT32, 1);
  topk_select(OX_INT32, 0);
  errors();
  static const int64_t perms[][3] = {{2, 1, 0}, {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {1, 0, 2}};
  for (int i = 0; i < 5; i++) big_transpose(perms[i]);
  sparse_constant(true);
  sparse_constant(false);
  old_versions();
  strings();
  if (failures) {
    printf("%d failure(s)\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
