/* test_check.c - the checker on valid models and on mutations of them.
 *
 * Each mutation breaks one rule of the spec (notes §2.2-2.11) in a valid base
 * model (test_check_models.h) and must be rejected for that rule; strict
 * mutations must pass the default checks and fail --strict. Control cases
 * change a model in a way the rules allow and must stay valid.
 *
 * usage: test_check [-s SHARED_DIR] [OUTDIR]
 * With SHARED_DIR, generic mutations of the shared pytorch-converted,
 * pytorch-operator and simple models are added. With OUTDIR, every case is also written there as
 * OUTDIR/NNN_name.onnx with a line in OUTDIR/manifest.txt ("file expect rule flags") for the oracle
 * test (tests/check/oracle.py). */
#include <dirent.h>
#include <errno.h>
#include <onnxc.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/model_file.h"
#include "check/check.h"
#include "proto/proto.h"
#include "test_check_models.h"

static int fails;

/* ---------------------------------------------------------------- finders */

static ox_node *find_node(ox_node *nodes, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (nodes[i].name && strcmp(nodes[i].name, name) == 0) return &nodes[i];
  return NULL;
}
#define NODE(m, name) find_node((m)->proto->graph->node, (m)->proto->graph->n_node, name)

static ox_tensor *find_init(ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
      return &g->initializer[i];
  return NULL;
}
#define INIT(m, name) find_init((m)->proto->graph, name)

static ox_attr *find_attr(ox_node *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (strcmp(n->attribute[i].name, name) == 0) return &n->attribute[i];
  return NULL;
}

static ox_graph *loop_body(ox_model *m) { return find_attr(NODE(m, "loop1"), "body")->g; }
static ox_function *fn0(ox_model *m) { return &m->proto->functions[0]; }
static ox_sparse_tensor *sp0(ox_model *m) { return &m->proto->graph->sparse_initializer[0]; }
static ox_tensor *ext_w(ox_model *m) { return INIT(m, "W"); }
static void set_location(ox_model *m, const char *loc) {
  ext_w(m)->external_data[0].value = ox_arena_strdup(m->arena, loc);
}
static char *S(ox_model *m, const char *s) { return ox_arena_strdup(m->arena, s); }

/* ---------------------------------------------------------------- cases */

enum {
  F_STRICT = 1,    /* valid by default, invalid with --strict */
  F_VALID = 2,     /* control: must stay valid */
  F_NO_ORACLE = 4, /* python-onnx 1.12 cannot judge it (newer IR, types, opsets) */
  F_FULL = 8,      /* the oracle must use full_check (type constraints) */
  F_NEEDS_FS = 16, /* needs files next to the model */
  F_FULLMODE = 32, /* valid, but not under --full (strict shape inference) */
};

typedef struct tcase {
  const char *name;
  int base;
  const char *rule; /* expected rule; NULL for controls */
  void (*fn)(ox_model *m, int k);
  int k;
  int flags;
} tcase;

/* -- model -- */
static void m_ir(ox_model *m, int k) { m->proto->ir_version = k; }
static void m_no_ir(ox_model *m, int k) {
  (void)k;
  m->proto->has_ir_version = false;
  m->proto->ir_version = 0;
}
static void m_meta_dup(ox_model *m, int k) {
  (void)k;
  for (int i = 0; i < 2; i++) {
    ox_str_pair *p = OX_VEC_PUSH(m->arena, m->proto->metadata_props, m->proto->n_metadata_props);
    p->key = S(m, "author");
    p->value = S(m, i ? "b" : "a");
  }
}
static void m_opset_ver(ox_model *m, int k) {
  m->proto->opset_import[0].version = k == 0 ? (int64_t)INT32_MAX + 1 : (int64_t)INT32_MIN - 1;
}
static void m_no_opsets(ox_model *m, int k) {
  (void)k;
  m->proto->n_opset_import = 0;
}
static void m_ir2_opsets(ox_model *m, int k) {
  (void)k;
  m->proto->ir_version = 2;
}
static void m_no_graph(ox_model *m, int k) {
  (void)k;
  m->proto->graph = NULL;
}
static void m_opset_99(ox_model *m, int k) {
  (void)k;
  m->proto->opset_import[0].version = 99;
}
static void m_meta_other(ox_model *m, int k) {
  (void)k;
  ox_str_pair *p = OX_VEC_PUSH(m->arena, m->proto->metadata_props, m->proto->n_metadata_props);
  p->key = S(m, "author");
  p->value = S(m, "x");
}

/* -- graph -- */
static void g_name(ox_model *m, int k) { m->proto->graph->name = k ? NULL : S(m, ""); }
static void g_dup_input(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "X", OX_FLOAT, tm_x_dims, 4);
}
static void g_init_noname(ox_model *m, int k) { INIT(m, "B")->name = k ? NULL : S(m, ""); }
static void g_init_dup(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "W", OX_FLOAT, tm_d1, 1);
  tm_floats(m, t, 1);
}
static void g_ir3_init(ox_model *m, int k) {
  (void)k;
  m->proto->ir_version = 3;
}
static void g_ir3_init_ok(ox_model *m, int k) {
  (void)k;
  m->proto->ir_version = 3;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "W", OX_FLOAT, tm_w_dims, 4);
  tm_vi(m, &g->input, &g->n_input, "B", OX_FLOAT, tm_d1, 1);
  tm_vi(m, &g->input, &g->n_input, "S", OX_INT64, tm_d2, 1);
}
static void g_undef_input(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->input[0] = S(m, "nope");
}
static void g_swap(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_node t = g->node[0];
  g->node[0] = g->node[1];
  g->node[1] = t;
}
static void g_cycle(ox_model *m, int k) {
  (void)k;
  NODE(m, "conv1")->input[0] = S(m, "R");
}
static void g_out_is_input(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->output[0] = S(m, "X");
}
static void g_out_is_init(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->output[0] = S(m, "W");
}
static void g_out_twice(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->output[0] = S(m, "C");
}
static void g_out_undef(ox_model *m, int k) {
  (void)k;
  m->proto->graph->output[0].name = S(m, "nope");
}
static void g_out_noname(ox_model *m, int k) {
  (void)k;
  m->proto->graph->output[0].name = S(m, "");
}
static void g_in_notype(ox_model *m, int k) {
  (void)k;
  m->proto->graph->input[0].type = NULL;
}
static void g_in_noshape(ox_model *m, int k) {
  (void)k;
  m->proto->graph->input[0].type->shape = NULL;
}
/* An unused extra graph input whose type breaks a rule of onnx.proto:
 * k 0 element type UNDEFINED (set), 1 element type 999, 2 a map keyed by
 * float; k 3 a map keyed by string (valid). */
static void g_type_strict(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  ox_type *t = tm_vi(m, &g->input, &g->n_input, "extra", OX_FLOAT, tm_d1, 1)->type;
  if (k == 0) {
    t->elem_type = OX_UNDEFINED;
  } else if (k == 1) {
    t->elem_type = 999;
  } else {
    ox_type *v = ox_arena_alloc(m->arena, sizeof *v);
    *v = *t; /* tensor(float)[1] as the value type */
    t->kind = OX_TYPE_MAP;
    t->shape = NULL;
    t->elem = v;
    t->elem_type = k == 2 ? OX_FLOAT : OX_STRING;
  }
}
static void g_in_noelem(ox_model *m, int k) {
  (void)k;
  m->proto->graph->input[0].type->has_elem_type = false;
  m->proto->graph->input[0].type->elem_type = 0;
}
static void g_out_kind(ox_model *m, int k) {
  ox_type *t = m->proto->graph->output[0].type;
  if (k == 0) {
    t->kind = OX_TYPE_NONE;
  } else if (k == 1) { /* sequence without element type */
    t->kind = OX_TYPE_SEQUENCE;
    t->elem = NULL;
  } else if (k == 2) { /* map without value type */
    t->kind = OX_TYPE_MAP;
    t->elem_type = OX_INT64;
    t->elem = NULL;
  } else if (k == 3) { /* optional without element type */
    t->kind = OX_TYPE_OPTIONAL;
    t->elem = NULL;
  } else { /* sparse tensor without shape */
    t->kind = OX_TYPE_SPARSE_TENSOR;
    t->shape = NULL;
  }
}
static void g_value_info_extra(ox_model *m, int k) {
  /* value_info is not checked by the reference: a partial entry is fine */
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_value_info *v = ox_value_info_push(m->arena, &g->value_info, &g->n_value_info, "C");
  (void)v;
}
static void g_dup_node_name(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->name = S(m, "conv1");
}
static void g_c90(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->output[0] = S(m, "7-R");
  NODE(m, "add1")->input[0] = S(m, "7-R");
}
static void g_unused_input_ok(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "unused", OX_FLOAT, tm_d1, 1);
}
static void g_init_is_input_ok(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "W", OX_FLOAT, tm_w_dims, 4);
}
static void g_empty_optional_ok(ox_model *m, int k) {
  (void)k;
  NODE(m, "conv1")->input[2] = S(m, "");
}

static void g_value_info_strict(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  if (k == 0) { /* a value that does not exist */
    tm_vi(m, &g->value_info, &g->n_value_info, "ghost", OX_FLOAT, tm_d1, 1);
  } else if (k == 1) { /* the same value twice */
    tm_vi(m, &g->value_info, &g->n_value_info, "R", OX_FLOAT, tm_x_dims, 4);
    tm_vi(m, &g->value_info, &g->n_value_info, "R", OX_FLOAT, tm_x_dims, 4);
  } else if (k == 2) { /* a symbolic dim that is not an identifier */
    ox_dim *d = &g->input[0].type->shape->dim[0];
    d->has_value = false;
    d->param = S(m, "batch size");
  } else { /* a valid one: a symbolic batch dim and value_info of an intermediate */
    ox_dim *d = &g->input[0].type->shape->dim[0];
    d->has_value = false;
    d->param = S(m, "N");
    tm_vi(m, &g->value_info, &g->n_value_info, "R", OX_FLOAT, tm_x_dims, 4);
  }
}
static void t_segment(ox_model *m, int k) {
  ox_tensor *t = INIT(m, "W");
  t->segment = ox_arena_alloc(m->arena, sizeof *t->segment);
  t->segment->begin = k ? 0 : 5;
  t->segment->end = k ? 9 : 2;
  t->segment->has_begin = t->segment->has_end = true;
}

/* -- tensors -- */
static void t_no_dtype(ox_model *m, int k) {
  (void)k;
  INIT(m, "W")->has_data_type = false;
}
static void t_dtype(ox_model *m, int k) { INIT(m, "W")->data_type = k; }
static void t_raw_size(ox_model *m, int k) { INIT(m, "W")->raw_data.size = (size_t)k; }
static void t_dims(ox_model *m, int k) {
  ox_tensor *t = INIT(m, "W");
  if (k == 0)
    t->dims[3] = 4;
  else if (k == 1)
    t->dims[1] = -1;
  else {
    t->dims[0] = (int64_t)1 << 40;
    t->dims[1] = (int64_t)1 << 40;
  }
}
static void t_two_fields(ox_model *m, int k) {
  (void)k;
  tm_floats(m, INIT(m, "W"), 9);
}
static void t_no_data(ox_model *m, int k) {
  (void)k;
  INIT(m, "W")->raw_data.data = NULL;
  INIT(m, "W")->raw_data.size = 0;
}
static void t_float_few(ox_model *m, int k) {
  (void)k;
  INIT(m, "B")->dims[0] = 2;
}
static void t_i64_in_i32(ox_model *m, int k) {
  (void)k;
  ox_tensor *t = INIT(m, "S");
  t->n_int64_data = 0;
  for (int i = 0; i < 2; i++) *OX_VEC_PUSH(m->arena, t->int32_data, t->n_int32_data) = 5;
}
static void t_zero_with_data(ox_model *m, int k) {
  (void)k;
  INIT(m, "B")->dims[0] = 0;
}
static void t_zero_ok(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_tensor(m, &g->initializer, &g->n_initializer, "E", OX_FLOAT, tm_d0, 1);
}
static void t_raw_larger(ox_model *m, int k) {
  (void)k;
  tm_raw(m, INIT(m, "W"), 40);
}
/* A tensor of 3 elements of type k, stored in raw_data one byte short. */
static void t_raw_short_type(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "T3", k, tm_d3, 1);
  size_t need = 0;
  ox_dtype_nbytes(k, 3, &need);
  tm_raw(m, t, need - 1);
}
/* ... or in the wrong typed field (int64_data for everything but INT64,
 * which goes to float_data). */
static void t_wrong_field_type(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "T3", k, tm_d3, 1);
  static const int64_t v[] = {1, 0, 1};
  if (k == OX_INT64)
    tm_floats(m, t, 3);
  else
    tm_i64s(m, t, v, 3);
}
/* ... or in the right typed field, too few values. */
static void t_few_values_type(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  static const int64_t big[] = {40};
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "T3", k, big, 1);
  static const int64_t v[] = {1};
  switch (k) {
    case OX_FLOAT:
    case OX_COMPLEX64:
      tm_floats(m, t, 1);
      break;
    case OX_DOUBLE:
    case OX_COMPLEX128:
      *OX_VEC_PUSH(m->arena, t->double_data, t->n_double_data) = 1;
      break;
    case OX_INT64:
      tm_i64s(m, t, v, 1);
      break;
    case OX_UINT32:
    case OX_UINT64:
      *OX_VEC_PUSH(m->arena, t->uint64_data, t->n_uint64_data) = 1;
      break;
    case OX_STRING: {
      ox_bytes *b = OX_VEC_PUSH(m->arena, t->string_data, t->n_string_data);
      b->data = (const uint8_t *)S(m, "a");
      b->size = 1;
      break;
    }
    default:
      *OX_VEC_PUSH(m->arena, t->int32_data, t->n_int32_data) = 1;
      break;
  }
}
static void t_string_raw(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "T3", OX_STRING, tm_d1, 1);
  tm_raw(m, t, 8);
}
static void t_int4_exact(ox_model *m, int k) {
  /* 3 int4 values: the reference accepts 1 int32 entry, the spec packs 2 per entry */
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "T3", OX_INT4, tm_d3, 1);
  *OX_VEC_PUSH(m->arena, t->int32_data, t->n_int32_data) = 0x21;
}
static void t_const_attr_bad(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "const1"), "value")->t->data_type = 0;
}

/* -- attributes -- */
static void a_field_mismatch(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "conv1"), "kernel_shape")->type = OX_ATTR_INT;
}
static void a_type_int(ox_model *m, int k) {
  (void)k;
  ox_attr *a = find_attr(NODE(m, "conv1"), "kernel_shape");
  a->type = OX_ATTR_INT;
  a->n_ints = 0;
  a->i = 3;
  a->has_i = true;
}
static void a_two_values(ox_model *m, int k) {
  (void)k;
  ox_attr *a = find_attr(NODE(m, "conv1"), "group");
  a->f = 1;
  a->has_f = true;
}
static void a_no_name(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "conv1"), "group")->name = S(m, "");
}
static void a_no_type(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "conv1"), "group")->has_type = false;
}
static void a_dup(ox_model *m, int k) {
  (void)k;
  tm_attr_int(m, NODE(m, "conv1"), "group", 1);
}
static void a_unknown(ox_model *m, int k) {
  (void)k;
  tm_attr_int(m, NODE(m, "conv1"), "foo", 1);
}
static void a_internal_ok(ox_model *m, int k) {
  (void)k;
  tm_attr_int(m, NODE(m, "conv1"), "__hint", 1);
}
static void a_group_float(ox_model *m, int k) {
  (void)k;
  ox_attr *a = find_attr(NODE(m, "conv1"), "group");
  a->type = OX_ATTR_FLOAT;
  a->has_i = false;
  a->f = 1;
  a->has_f = true;
}
static void a_autopad_ints(ox_model *m, int k) {
  (void)k;
  static const int64_t v[] = {1};
  tm_attr_ints(m, NODE(m, "conv1"), "auto_pad", v, 1);
}
static void a_dilations_str(ox_model *m, int k) {
  (void)k;
  tm_attr_str(m, NODE(m, "conv1"), "dilations", "1,1");
}
static void a_tensor_missing(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "const1"), "value")->t = NULL;
}
static void a_empty_list_ok(ox_model *m, int k) {
  (void)k;
  find_attr(NODE(m, "conv1"), "pads")->n_ints = 0;
}

/* -- nodes -- */
static void n_no_op(ox_model *m, int k) { NODE(m, "relu1")->op_type = k ? NULL : S(m, ""); }
static void n_no_io(ox_model *m, int k) {
  (void)k;
  tm_gnode(m, m->proto->graph, "Relu", "lonely", NULL, NULL);
}
static void n_domain(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->domain = S(m, "com.unknown");
}
static void n_domain_aionnx(ox_model *m, int k) {
  /* k: also import "ai.onnx" by that name (both spellings name one domain) */
  NODE(m, "relu1")->domain = S(m, "ai.onnx");
  if (k) tm_opset(m, "ai.onnx", 13);
}
static void n_unknown_op(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->op_type = S(m, "Frobnicate");
}
static void n_case_op(ox_model *m, int k) {
  (void)k;
  NODE(m, "relu1")->op_type = S(m, "relu");
}
static void n_custom_ok(ox_model *m, int k) {
  (void)k;
  tm_opset(m, "com.example", 1);
  NODE(m, "relu1")->domain = S(m, "com.example");
  NODE(m, "relu1")->op_type = S(m, "Anything");
}
/* ops that do not exist at opset 13 (introduced later, Changelog.md) */
static const char *const newer_ops[] = {"Gelu",
                                        "Mish",
                                        "HardSwish",
                                        "Trilu",
                                        "LayerNormalization",
                                        "BitwiseNot",
                                        "CenterCropPad",
                                        "Col2Im",
                                        "DFT",
                                        "BlackmanWindow",
                                        "GridSample",
                                        "Shrink_",
                                        "IsInf_",
                                        "Bernoulli",
                                        "Optional",
                                        "SequenceMap",
                                        "STFT",
                                        "MelWeightMatrix",
                                        "RMSNormalization",
                                        "Swish"};
static void n_newer(ox_model *m, int k) {
  ox_node *n = NODE(m, "relu1");
  n->op_type = S(m, newer_ops[k]);
}
static void n_newer_ml(ox_model *m, int k) {
  (void)k;
  /* TreeEnsemble exists from ai.onnx.ml 5 */
  ox_node *n = NODE(m, "bin1");
  n->op_type = S(m, "TreeEnsemble");
  n->n_attribute = 0;
}
static void n_unknown_ml(ox_model *m, int k) {
  (void)k;
  NODE(m, "bin1")->op_type = S(m, "Binariser");
}
static void n_conv_inputs(ox_model *m, int k) {
  ox_node *n = NODE(m, "conv1");
  if (k == 0)
    n->n_input = 1;
  else
    ox_node_add_input(m->arena, n, "B");
}
static void n_relu_outputs(ox_model *m, int k) {
  (void)k;
  ox_node_add_output(m->arena, NODE(m, "relu1"), "R2");
}
static void n_single_empty(ox_model *m, int k) {
  (void)k;
  NODE(m, "conv1")->input[1] = S(m, "");
}
static void n_deprecated(ox_model *m, int k) {
  m->proto->opset_import[0].version = k ? 11 : 10;
  ox_node *n = NODE(m, "relu1");
  n->op_type = S(m, k ? "Scatter" : "Upsample");
}
/* ops with a required attribute (Changelog.md), built without it */
typedef struct req_op {
  const char *op;
  int n_in;
  const char *attr;
} req_op;
static const req_op req_ops[] = {
    {"Concat", 2, "axis"},
    {"Cast", 1, "to"},
    {"LRN", 1, "size"},
    {"DepthToSpace", 1, "blocksize"},
    {"SpaceToDepth", 1, "blocksize"},
    {"MaxPool", 1, "kernel_shape"},
    {"AveragePool", 1, "kernel_shape"},
    {"LpPool", 1, "kernel_shape"},
    {"MaxRoiPool", 2, "pooled_shape"},
    {"RandomNormal", 0, "shape"},
    {"RandomUniform", 0, "shape"},
    {"Scan", 1, "body"},
    {"Loop", 3, "body"},
    {"If", 1, "then_branch"},
};
static void n_required(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  const char *ins[4] = {"X", "X", "X", NULL};
  ins[req_ops[k].n_in] = NULL;
  tm_gnode(m, g, req_ops[k].op, "extra", ins, TM_IN("extra_out"));
}
static const int32_t sqrt_bad[] = {OX_INT64, OX_INT32, OX_UINT8, OX_BOOL, OX_STRING, OX_INT8};
static void n_type_bad(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "I", sqrt_bad[k], tm_d3, 1);
  tm_gnode(m, g, "Sqrt", "sqrt1", TM_IN("I"), TM_IN("sq"));
}
static void n_type_shape_float(ox_model *m, int k) {
  (void)k;
  ox_tensor *s = INIT(m, "S");
  s->data_type = OX_FLOAT;
  s->n_int64_data = 0;
  tm_floats(m, s, 2);
}
static void n_type_mixed(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->input, &g->n_input, "D", OX_DOUBLE, tm_d1, 1);
  tm_gnode(m, g, "Add", "add_mixed", TM_IN("X", "D"), TM_IN("mixed"));
}

/* -- subgraphs -- */
static void s_out_undef(ox_model *m, int k) {
  (void)k;
  loop_body(m)->output[1].name = S(m, "nope");
}
static void s_out_outer(ox_model *m, int k) {
  /* a body output that only exists in the outer scope */
  (void)k;
  ox_graph *b = loop_body(m);
  b->output[1].name = S(m, "one");
  b->n_node = 1;
}
static void s_undef_input(ox_model *m, int k) {
  (void)k;
  loop_body(m)->node[1].input[1] = S(m, "nope");
}
static void s_shadow(ox_model *m, int k) {
  (void)k;
  loop_body(m)->node[1].output[0] = S(m, "X");
  loop_body(m)->output[1].name = S(m, "X");
}
static void s_no_name(ox_model *m, int k) {
  (void)k;
  loop_body(m)->name = S(m, "");
}
static void s_later_outer(ox_model *m, int k) {
  /* the then-branch uses Q, which the If itself produces */
  (void)k;
  ox_graph *th = find_attr(NODE(m, "if1"), "then_branch")->g;
  th->node[0].input[0] = S(m, "Q");
}
static void s_no_body(ox_model *m, int k) {
  (void)k;
  NODE(m, "loop1")->n_attribute = 0;
}
static void s_body_graphs(ox_model *m, int k) {
  (void)k;
  ox_attr *a = find_attr(NODE(m, "loop1"), "body");
  a->type = OX_ATTR_GRAPHS;
  a->graphs = a->g;
  a->n_graphs = 1;
  a->g = NULL;
}
static void s_ref_with_value(ox_model *m, int k) {
  (void)k;
  ox_node *n = &loop_body(m)->node[1];
  tm_attr_int(m, n, "axis", 0);
  n->attribute[n->n_attribute - 1].ref_attr_name = S(m, "axis");
}
static void s_dup_input(ox_model *m, int k) {
  (void)k;
  loop_body(m)->input[2].name = S(m, "cond_in");
  loop_body(m)->node[1].input[0] = S(m, "cond_in");
}
static void s_unknown_op(ox_model *m, int k) {
  (void)k;
  loop_body(m)->node[1].op_type = S(m, "Plus");
}
static void s_untyped_ok(ox_model *m, int k) {
  /* subgraph inputs and outputs may leave out their types */
  (void)k;
  ox_graph *b = loop_body(m);
  b->input[2].type = NULL;
  b->output[1].type = NULL;
}
static void s_init_clash(ox_model *m, int k) {
  (void)k;
  ox_graph *b = loop_body(m);
  ox_tensor *t = tm_tensor(m, &b->initializer, &b->n_initializer, "v_in", OX_FLOAT, tm_d3, 1);
  tm_floats(m, t, 3);
}
static void s_then_missing_else(ox_model *m, int k) {
  (void)k;
  ox_node *n = NODE(m, "if1");
  n->n_attribute = 1; /* then_branch only */
}
static void s_body_bad_tensor(ox_model *m, int k) {
  (void)k;
  ox_graph *b = loop_body(m);
  ox_tensor *t = tm_tensor(m, &b->initializer, &b->n_initializer, "bad", OX_FLOAT, tm_d3, 1);
  tm_floats(m, t, 1);
}

/* -- functions -- */
static void f_self(ox_model *m, int k) {
  (void)k;
  ox_function *f = fn0(m);
  tm_fn_opset(m, f, "local", 1);
  f->node[1].op_type = S(m, "AddTwice");
  f->node[1].domain = S(m, "local");
  f->node[1].n_input = 1;
}
static void f_mutual(ox_model *m, int k) {
  (void)k;
  ox_function *f = fn0(m);
  tm_fn_opset(m, f, "local", 1);
  f->node[1].op_type = S(m, "Helper");
  f->node[1].domain = S(m, "local");
  f->node[1].n_input = 1;
  ox_function *h = tm_function(m, "local", "Helper");
  tm_fn_str(m, &h->input, &h->n_input, "a");
  tm_fn_str(m, &h->output, &h->n_output, "b");
  tm_fn_opset(m, h, "local", 1);
  tm_node(m, &h->node, &h->n_node, "AddTwice", "local", "h_call", TM_IN("a"), TM_IN("b"));
}
static void f_via_loop(ox_model *m, int k) {
  /* recursion hidden in a Loop body inside the function */
  (void)k;
  ox_function *f = fn0(m);
  tm_fn_opset(m, f, "local", 1);
  ox_graph *body = tm_graph(m, "fbody");
  tm_vi(m, &body->input, &body->n_input, "i", OX_INT64, NULL, 0);
  tm_vi(m, &body->input, &body->n_input, "c", OX_BOOL, NULL, 0);
  tm_vi(m, &body->input, &body->n_input, "v", OX_FLOAT, tm_d3, 1);
  tm_vi(m, &body->output, &body->n_output, "c2", OX_BOOL, NULL, 0);
  tm_vi(m, &body->output, &body->n_output, "v2", OX_FLOAT, tm_d3, 1);
  tm_node(m, &body->node, &body->n_node, "Identity", "", "fb_id", TM_IN("c"), TM_IN("c2"));
  tm_node(m, &body->node, &body->n_node, "AddTwice", "local", "fb_call", TM_IN("v"), TM_IN("v2"));
  f->n_node = 1; /* t = Add(x, x) */
  ox_node *lp =
      tm_node(m, &f->node, &f->n_node, "Loop", "", "f_loop", TM_IN("", "", "t"), TM_IN("y"));
  tm_attr_graph(m, lp, "body", body);
}
static void f_dup_id(ox_model *m, int k) {
  (void)k;
  ox_function *f = tm_function(m, "local", "AddTwice");
  tm_fn_str(m, &f->input, &f->n_input, "x");
  tm_fn_str(m, &f->output, &f->n_output, "y");
  tm_fn_opset(m, f, "", 15);
  tm_node(m, &f->node, &f->n_node, "Identity", "", "dup_id", TM_IN("x"), TM_IN("y"));
}
static void f_overload_ok(ox_model *m, int k) {
  /* same name, another overload: a different id */
  f_dup_id(m, k);
  m->proto->functions[1].overload = S(m, "v2");
  m->proto->ir_version = 10; /* overloads came with IR 10 */
}
static void f_no_name(ox_model *m, int k) {
  (void)k;
  fn0(m)->name = S(m, "");
}
static void f_no_domain(ox_model *m, int k) {
  (void)k;
  fn0(m)->domain = NULL;
}
static void f_dup_input(ox_model *m, int k) {
  (void)k;
  tm_fn_str(m, &fn0(m)->input, &fn0(m)->n_input, "x");
}
static void f_dup_output(ox_model *m, int k) {
  (void)k;
  tm_fn_str(m, &fn0(m)->output, &fn0(m)->n_output, "y");
}
static void f_dup_attr(ox_model *m, int k) {
  (void)k;
  tm_fn_str(m, &fn0(m)->attribute, &fn0(m)->n_attribute, "alpha");
  tm_fn_str(m, &fn0(m)->attribute, &fn0(m)->n_attribute, "alpha");
}
static void f_undef(ox_model *m, int k) {
  (void)k;
  fn0(m)->node[1].input[0] = S(m, "nope");
}
static void f_outer_name(ox_model *m, int k) {
  (void)k;
  fn0(m)->node[1].input[0] = S(m, "X");
}
static void f_no_opset(ox_model *m, int k) {
  (void)k;
  fn0(m)->n_opset_import = 0;
}
static void f_incompatible(ox_model *m, int k) {
  /* Add: versions 7, 13, 14; the function imports 12 (-> Add-7), the model 15 (-> Add-14) */
  (void)k;
  fn0(m)->opset_import[0].version = 12;
}
static void f_compatible_ok(ox_model *m, int k) {
  /* 14 and 15 both bind Add-14 */
  (void)k;
  fn0(m)->opset_import[0].version = 14;
}
static void f_ssa(ox_model *m, int k) {
  (void)k;
  fn0(m)->node[1].output[0] = S(m, "t");
  fn0(m)->output[0] = S(m, "t");
}
static void f_unknown_op(ox_model *m, int k) {
  (void)k;
  fn0(m)->node[0].op_type = S(m, "Sum3");
}
static void f_opset_range(ox_model *m, int k) {
  (void)k;
  fn0(m)->opset_import[0].version = (int64_t)1 << 33;
}
static void f_out_unproduced(ox_model *m, int k) {
  (void)k;
  fn0(m)->output[0] = S(m, "z");
}
static void f_bad_ref(ox_model *m, int k) {
  (void)k;
  ox_node *n = &fn0(m)->node[0];
  ox_attr *a = ox_node_add_attr(m->arena, n, "unused_ref", OX_ATTR_FLOAT);
  a->ref_attr_name = S(m, "gamma");
  /* Add has no such attribute either: declare a Cast instead */
  n->op_type = S(m, "Cast");
  n->n_input = 1;
  a->name = S(m, "to");
  a->type = OX_ATTR_INT;
}
static void f_ref_ok(ox_model *m, int k) {
  f_bad_ref(m, k);
  tm_fn_str(m, &fn0(m)->attribute, &fn0(m)->n_attribute, "gamma");
}
static void f_ir7(ox_model *m, int k) {
  /* functions are ignored below IR 8 (a recursive one too), but strict flags them */
  f_self(m, k);
  m->proto->ir_version = 7;
}
static void f_unknown_caller_ok(ox_model *m, int k) {
  /* a node of a custom domain with no schema and no function passes */
  (void)k;
  m->proto->graph->node[0].op_type = S(m, "NotDefinedAnywhere");
}

/* -- external data (needs w.bin etc. in the model folder) -- */
static void e_loc(ox_model *m, int k) {
  static const char *const locs[] = {"../w.bin",
                                     "/tmp/w.bin",
                                     "",
                                     "a..b.bin",
                                     "missing.bin",
                                     "link.bin",
                                     "hard.bin",
                                     "sub/../../w.bin",
                                     "sub",
                                     "./sub/../../../etc/passwd"};
  set_location(m, locs[k]);
}
static void e_no_location(ox_model *m, int k) {
  (void)k;
  ext_w(m)->external_data[0].key = S(m, "offset");
}
static void e_with_raw(ox_model *m, int k) {
  (void)k;
  tm_raw(m, ext_w(m), 36);
}
static void e_dotted_ok(ox_model *m, int k) {
  (void)k;
  set_location(m, "sub/../w.bin");
}

/* -- sparse -- */
static void p_no_values(ox_model *m, int k) {
  (void)k;
  sp0(m)->values = NULL;
}
static void p_values_rank(ox_model *m, int k) {
  (void)k;
  ox_tensor *v = sp0(m)->values;
  int64_t *d = OX_VEC_PUSH(m->arena, v->dims, v->n_dims);
  *d = 1;
}
static void p_no_dims(ox_model *m, int k) {
  (void)k;
  sp0(m)->n_dims = 0;
}
static void p_zero_dim(ox_model *m, int k) {
  (void)k;
  sp0(m)->dims[1] = 0;
}
static void p_idx_type(ox_model *m, int k) {
  (void)k;
  ox_tensor *ix = sp0(m)->indices;
  ix->data_type = OX_INT32;
  ix->n_int64_data = 0;
  for (int i = 0; i < 3; i++) *OX_VEC_PUSH(m->arena, ix->int32_data, ix->n_int32_data) = i;
}
static void p_idx_count(ox_model *m, int k) {
  (void)k;
  ox_tensor *ix = sp0(m)->indices;
  ix->dims[0] = 2;
  ix->n_int64_data = 2;
}
static void p_idx_value(ox_model *m, int k) {
  static const int64_t bad[][3] = {{1, 5, 12}, {5, 1, 7}, {1, 5, 5}, {-1, 5, 7}};
  memcpy(sp0(m)->indices->int64_data, bad[k], sizeof bad[k]);
}
static void p_coo(ox_model *m, int k) {
  /* COO indices [3, 2]; k: 0 valid, 1 wrong second dim, 2 out of range, 3 unsorted */
  ox_tensor *ix = sp0(m)->indices;
  static const int64_t good[] = {0, 1, 1, 1, 1, 3}, oor[] = {0, 1, 1, 4, 1, 3},
                       uns[] = {1, 1, 0, 1, 1, 3};
  const int64_t *v = k == 2 ? oor : k == 3 ? uns : good;
  ix->n_int64_data = 0;
  tm_i64s(m, ix, v, 6);
  ix->n_dims = 0;
  int64_t *d = OX_VEC_PUSH(m->arena, ix->dims, ix->n_dims);
  *d = 3;
  d = OX_VEC_PUSH(m->arena, ix->dims, ix->n_dims);
  *d = k == 1 ? 3 : 2;
  if (k == 1) tm_i64s(m, ix, v, 3);
}
static void p_idx_rank3(ox_model *m, int k) {
  (void)k;
  ox_tensor *ix = sp0(m)->indices;
  int64_t *d = OX_VEC_PUSH(m->arena, ix->dims, ix->n_dims);
  *d = 1;
  d = OX_VEC_PUSH(m->arena, ix->dims, ix->n_dims);
  *d = 1;
}
static void p_no_indices(ox_model *m, int k) {
  (void)k;
  sp0(m)->indices = NULL;
}
static void p_no_name(ox_model *m, int k) {
  (void)k;
  sp0(m)->values->name = S(m, "");
}
static void p_dup_name(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "SP", OX_FLOAT, tm_d1, 1);
  tm_floats(m, t, 1);
}
static void p_values_bad(ox_model *m, int k) {
  (void)k;
  sp0(m)->values->n_float_data = 1;
}

/* -- ml -- */
static void ml_not_imported(ox_model *m, int k) {
  (void)k;
  m->proto->n_opset_import = 1;
}
static void ml_attr_type(ox_model *m, int k) {
  (void)k;
  ox_attr *a =
      find_attr(find_node(m->proto->graph->node, m->proto->graph->n_node, "scaler1"), "scale");
  a->type = OX_ATTR_FLOAT;
  a->n_floats = 0;
  a->has_f = true;
  a->f = 2;
}

/* -- shape inference (--full) -- */
static void u_out_shape(ox_model *m, int k) {
  static const int64_t wrong[][2] = {{1, 26}, {2, 25}};
  ox_dim *d = m->proto->graph->output[0].type->shape->dim;
  d[0].value = wrong[k][0];
  d[1].value = wrong[k][1];
}
static void u_out_type(ox_model *m, int k) {
  (void)k;
  m->proto->graph->output[0].type->elem_type = OX_INT64;
}
static void u_value_info_rank(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  tm_vi(m, &g->value_info, &g->n_value_info, "R", OX_FLOAT, tm_d3, 1);
}

/* -- IR version features (strict) -- */
static void v_float8(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  ox_tensor *t = tm_tensor(m, &g->initializer, &g->n_initializer, "F8", k, tm_d3, 1);
  size_t need = 0;
  ox_dtype_nbytes(k, 3, &need);
  tm_raw(m, t, need);
}
static void v_optional_input(ox_model *m, int k) {
  (void)k;
  ox_graph *g = m->proto->graph;
  ox_value_info *v = tm_vi(m, &g->input, &g->n_input, "maybe", OX_FLOAT, tm_d1, 1);
  ox_type *o = ox_arena_alloc(m->arena, sizeof *o);
  o->kind = OX_TYPE_OPTIONAL;
  o->elem = v->type;
  v->type = o;
}
static void v_overload(ox_model *m, int k) {
  (void)k;
  m->proto->graph->node[0].overload = S(m, "v2");
}
static void v_quant(ox_model *m, int k) {
  (void)k;
  m->proto->ir_version = 4;
  ox_graph *g = m->proto->graph;
  ox_tensor_annotation *a =
      OX_VEC_PUSH(m->arena, g->quantization_annotation, g->n_quantization_annotation);
  a->tensor_name = S(m, "C");
}
static void v_node_metadata(ox_model *m, int k) {
  (void)k;
  ox_node *n = NODE(m, "relu1");
  ox_str_pair *p = OX_VEC_PUSH(m->arena, n->metadata_props, n->n_metadata_props);
  p->key = S(m, "k");
  p->value = S(m, "v");
}
static void v_ir3_node_domain(ox_model *m, int k) {
  /* IR 2 has no opset imports and no node domains */
  (void)k;
  m->proto->ir_version = 2;
  m->proto->n_opset_import = 0;
  ox_graph *g = m->proto->graph;
  g->n_initializer = 0;
  g->n_node = 0;
  tm_gnode(m, g, "Relu", "r", TM_IN("X"), TM_IN("Y"));
  g->node[0].domain = S(m, "");
}

/* -- training (strict) -- */
static ox_training_info *ti0(ox_model *m) { return &m->proto->training_info[0]; }
static void r_key_not_init(ox_model *m, int k) {
  (void)k;
  ti0(m)->update_binding[0].key = S(m, "X");
}
static void r_value_not_out(ox_model *m, int k) {
  (void)k;
  ti0(m)->update_binding[0].value = S(m, "nothing");
}
static void r_dup_key(ox_model *m, int k) {
  (void)k;
  ox_training_info *ti = ti0(m);
  ox_str_pair *b = OX_VEC_PUSH(m->arena, ti->update_binding, ti->n_update_binding);
  b->key = S(m, "W");
  b->value = S(m, "W_new");
}
static void r_init_inputs(ox_model *m, int k) {
  (void)k;
  ox_graph *ig = ti0(m)->initialization = tm_graph(m, "init");
  tm_vi(m, &ig->input, &ig->n_input, "seed", OX_FLOAT, tm_d1, 1);
  tm_vi(m, &ig->output, &ig->n_output, "W0", OX_FLOAT, tm_d1, 1);
  tm_gnode(m, ig, "Identity", "init_id", TM_IN("seed"), TM_IN("W0"));
}
static void r_init_binding(ox_model *m, int k) {
  (void)k;
  ox_training_info *ti = ti0(m);
  ox_str_pair *b = OX_VEC_PUSH(m->arena, ti->initialization_binding, ti->n_initialization_binding);
  b->key = S(m, "W");
  b->value = S(m, "not_an_output");
}
static void r_init_dup(ox_model *m, int k) {
  /* an initialization graph making W0, bound to W once (k) or twice */
  ox_training_info *ti = ti0(m);
  ox_graph *ig = ti->initialization = tm_graph(m, "init");
  tm_vi(m, &ig->output, &ig->n_output, "W0", OX_FLOAT, tm_d1, 1);
  tm_floats(m, tm_tensor(m, &ig->initializer, &ig->n_initializer, "W0c", OX_FLOAT, tm_d1, 1), 1);
  tm_gnode(m, ig, "Identity", "init_id", TM_IN("W0c"), TM_IN("W0"));
  for (int i = 0; i < (k ? 1 : 2); i++) {
    ox_str_pair *b =
        OX_VEC_PUSH(m->arena, ti->initialization_binding, ti->n_initialization_binding);
    b->key = S(m, "W");
    b->value = S(m, "W0");
  }
}
static void r_alg_undef(ox_model *m, int k) {
  (void)k;
  ti0(m)->algorithm->node[0].input[0] = S(m, "nope");
}

#define C(name, base, rule, fn, k, flags) \
  { name, base, rule, fn, k, flags }

static const tcase fixed_cases[] = {
    /* model (§2.2) */
    C("ir_version_0", B_CONV, "ir-version", m_ir, 0, 0),
    C("ir_version_missing", B_CONV, "ir-version", m_no_ir, 0, 0),
    C("ir_version_15", B_CONV, "ir-version", m_ir, 15, 0),
    C("ir_version_100", B_CONV, "ir-version", m_ir, 100, 0),
    C("ir_version_negative", B_CONV, "ir-version", m_ir, -1, 0),
    C("metadata_duplicate_key", B_CONV, "metadata-duplicate", m_meta_dup, 0, 0),
    C("opset_version_over_int32", B_CONV, "opset-range", m_opset_ver, 0, 0),
    C("opset_version_under_int32", B_CONV, "opset-range", m_opset_ver, 1, 0),
    C("no_opset_import_ir7", B_CONV, "opset-import", m_no_opsets, 0, 0),
    C("opset_import_ir2", B_CONV, "opset-import", m_ir2_opsets, 0, 0),
    C("no_graph", B_CONV, "graph-name", m_no_graph, 0, 0),
    C("opset_99_strict", B_CONV, "strict-opset-range", m_opset_99, 0, F_STRICT | F_NO_ORACLE),
    C("metadata_ok", B_CONV, NULL, m_meta_other, 0, F_VALID),
    /* graph (§2.3) */
    C("graph_name_empty", B_CONV, "graph-name", g_name, 0, 0),
    C("graph_name_missing", B_CONV, "graph-name", g_name, 1, 0),
    C("graph_input_twice", B_CONV, "ssa", g_dup_input, 0, 0),
    C("initializer_name_empty", B_CONV, "initializer-name", g_init_noname, 0, 0),
    C("initializer_name_missing", B_CONV, "initializer-name", g_init_noname, 1, 0),
    C("initializer_duplicate", B_CONV, "initializer-duplicate", g_init_dup, 0, 0),
    C("ir3_initializer_not_input", B_CONV, "initializer-not-input", g_ir3_init, 0, 0),
    C("ir3_initializers_as_inputs", B_CONV, NULL, g_ir3_init_ok, 0, F_VALID),
    C("undefined_input", B_CONV, "undefined-input", g_undef_input, 0, 0),
    C("use_before_definition", B_CONV, "use-before-def", g_swap, 0, 0),
    C("cycle", B_CONV, "use-before-def", g_cycle, 0, 0),
    C("ssa_output_is_graph_input", B_CONV, "ssa", g_out_is_input, 0, 0),
    C("ssa_output_is_initializer", B_CONV, "ssa", g_out_is_init, 0, 0),
    C("ssa_output_twice", B_CONV, "ssa", g_out_twice, 0, 0),
    C("graph_output_undefined", B_CONV, "graph-output", g_out_undef, 0, 0),
    C("graph_output_no_name", B_CONV, "value-info", g_out_noname, 0, 0),
    C("graph_input_no_type", B_CONV, "value-info", g_in_notype, 0, 0),
    C("graph_input_no_shape", B_CONV, "value-info", g_in_noshape, 0, 0),
    C("graph_input_no_elem_type", B_CONV, "value-info", g_in_noelem, 0, 0),
    C("graph_output_type_unset", B_CONV, "value-info", g_out_kind, 0, 0),
    C("graph_output_seq_no_elem", B_CONV, "value-info", g_out_kind, 1, 0),
    C("graph_output_map_no_value", B_CONV, "value-info", g_out_kind, 2, 0),
    C("graph_output_optional_no_elem", B_CONV, "value-info", g_out_kind, 3, 0),
    C("graph_output_sparse_no_shape", B_CONV, "value-info", g_out_kind, 4, 0),
    C("value_info_partial_ok", B_CONV, NULL, g_value_info_extra, 0, F_VALID),
    C("unused_input_ok", B_CONV, NULL, g_unused_input_ok, 0, F_VALID),
    C("initializer_also_input_ok", B_CONV, NULL, g_init_is_input_ok, 0, F_VALID),
    C("omitted_optional_input_ok", B_CONV, NULL, g_empty_optional_ok, 0, F_VALID),
    C("duplicate_node_name_strict", B_CONV, "strict-node-name", g_dup_node_name, 0, F_STRICT),
    /* C90 names are a SHOULD of IR.md: --strict warns only */
    C("non_c90_name_strict_warns", B_CONV, NULL, g_c90, 0, F_VALID),
    C("value_info_unknown_value_strict", B_CONV, "strict-value-info", g_value_info_strict, 0,
      F_STRICT),
    C("value_info_twice_strict", B_CONV, "strict-value-info", g_value_info_strict, 1, F_STRICT),
    C("dim_param_not_identifier_warns", B_CONV, NULL, g_value_info_strict, 2, F_VALID),
    C("value_info_and_dim_param_ok", B_CONV, NULL, g_value_info_strict, 3, F_VALID),
    /* onnx.proto's type rules, which onnx 1.12 does not apply */
    C("input_elem_type_undefined_strict", B_CONV, "strict-elem-type", g_type_strict, 0,
      F_STRICT | F_NO_ORACLE),
    C("input_elem_type_999_strict", B_CONV, "strict-elem-type", g_type_strict, 1,
      F_STRICT | F_NO_ORACLE),
    C("input_map_key_float_strict", B_CONV, "strict-map-key", g_type_strict, 2,
      F_STRICT | F_NO_ORACLE),
    C("input_map_key_string_ok", B_CONV, NULL, g_type_strict, 3, F_VALID | F_NO_ORACLE),
    C("tensor_segment_reversed_strict", B_CONV, "strict-segment", t_segment, 0, F_STRICT),
    C("tensor_segment_ok", B_CONV, NULL, t_segment, 1, F_VALID),
    /* tensors (§2.4) */
    C("tensor_no_data_type", B_CONV, "tensor-data-type", t_no_dtype, 0, 0),
    C("tensor_data_type_undefined", B_CONV, "tensor-data-type", t_dtype, 0, 0),
    C("tensor_data_type_99", B_CONV, "tensor-data-type", t_dtype, 99, 0),
    C("tensor_raw_too_small", B_CONV, "tensor-payload", t_raw_size, 35, 0),
    C("tensor_raw_empty", B_CONV, "tensor-payload", t_raw_size, 0, 0),
    C("tensor_dims_larger_than_data", B_CONV, "tensor-payload", t_dims, 0, 0),
    C("tensor_negative_dim", B_CONV, "tensor-dims", t_dims, 1, 0),
    C("tensor_dims_overflow", B_CONV, "tensor-dims", t_dims, 2, 0),
    C("tensor_two_value_fields", B_CONV, "tensor-payload", t_two_fields, 0, 0),
    C("tensor_no_value_field", B_CONV, "tensor-payload", t_no_data, 0, 0),
    C("tensor_float_data_too_few", B_CONV, "tensor-payload", t_float_few, 0, 0),
    C("tensor_int64_in_int32_data", B_CONV, "tensor-payload", t_i64_in_i32, 0, 0),
    C("tensor_zero_elements_with_data", B_CONV, "tensor-payload", t_zero_with_data, 0, 0),
    C("tensor_zero_elements_ok", B_CONV, NULL, t_zero_ok, 0, F_VALID),
    C("tensor_string_in_raw_data", B_CONV, "tensor-payload", t_string_raw, 0, 0),
    C("tensor_raw_larger_strict", B_CONV, "strict-payload-size", t_raw_larger, 0, F_STRICT),
    C("tensor_int4_packing_strict", B_CONV, "strict-payload-size", t_int4_exact, 0,
      F_STRICT | F_NO_ORACLE),
    C("constant_value_bad_tensor", B_CONV, "tensor-data-type", t_const_attr_bad, 0, 0),
    /* attributes (§2.6) */
    C("attribute_type_field_mismatch", B_CONV, "attr-type", a_field_mismatch, 0, 0),
    C("attribute_wrong_type_int", B_CONV, "node-attr-type", a_type_int, 0, 0),
    C("attribute_two_values", B_CONV, "attr-value", a_two_values, 0, 0),
    C("attribute_no_name", B_CONV, "attr-name", a_no_name, 0, 0),
    C("attribute_no_type", B_CONV, "attr-type", a_no_type, 0, 0),
    C("attribute_duplicate", B_CONV, "node-attr-duplicate", a_dup, 0, 0),
    C("attribute_unknown", B_CONV, "node-attr-unknown", a_unknown, 0, 0),
    C("attribute_internal_ok", B_CONV, NULL, a_internal_ok, 0, F_VALID),
    C("attribute_group_float", B_CONV, "node-attr-type", a_group_float, 0, 0),
    C("attribute_auto_pad_ints", B_CONV, "node-attr-type", a_autopad_ints, 0, 0),
    C("attribute_dilations_string", B_CONV, "node-attr-type", a_dilations_str, 0, 0),
    C("attribute_tensor_field_missing", B_CONV, "node-attr-type", a_tensor_missing, 0, 0),
    C("attribute_empty_list_ok", B_CONV, NULL, a_empty_list_ok, 0, F_VALID),
    /* nodes (§2.6) */
    C("node_op_type_empty", B_CONV, "node-op-type", n_no_op, 0, 0),
    C("node_op_type_missing", B_CONV, "node-op-type", n_no_op, 1, 0),
    C("node_no_inputs_no_outputs", B_CONV, "node-io", n_no_io, 0, 0),
    C("node_domain_not_imported", B_CONV, "node-domain", n_domain, 0, 0),
    /* "ai.onnx" is the default domain's other name (IR.md); onnx 1.12 rejects it */
    C("node_domain_ai_onnx_imported_as_empty", B_CONV, NULL, n_domain_aionnx, 0,
      F_VALID | F_NO_ORACLE),
    C("node_domain_ai_onnx", B_CONV, NULL, n_domain_aionnx, 1, F_VALID | F_NO_ORACLE),
    C("node_unknown_op", B_CONV, "node-unknown-op", n_unknown_op, 0, 0),
    C("node_op_wrong_case", B_CONV, "node-unknown-op", n_case_op, 0, 0),
    C("node_custom_domain_ok", B_CONV, NULL, n_custom_ok, 0, F_VALID),
    C("node_conv_one_input", B_CONV, "node-arity", n_conv_inputs, 0, 0),
    C("node_conv_four_inputs", B_CONV, "node-arity", n_conv_inputs, 1, 0),
    C("node_relu_two_outputs", B_CONV, "node-arity", n_relu_outputs, 0, 0),
    C("node_single_input_empty", B_CONV, "node-arity", n_single_empty, 0, 0),
    C("node_deprecated_upsample_10", B_CONV, "node-deprecated", n_deprecated, 0, 0),
    C("node_deprecated_scatter_11", B_CONV, "node-deprecated", n_deprecated, 1, 0),
    C("node_input_type_float_shape", B_CONV, "node-type", n_type_shape_float, 0, F_FULL),
    C("node_input_types_mixed", B_CONV, "node-type", n_type_mixed, 0, F_FULL),
    C("ml_domain_not_imported", B_ML, "node-domain", ml_not_imported, 0, 0),
    C("ml_attribute_type", B_ML, "node-attr-type", ml_attr_type, 0, 0),
    C("ml_op_too_new", B_ML, "node-opset", n_newer_ml, 0, 0),
    C("ml_unknown_op", B_ML, "node-unknown-op", n_unknown_ml, 0, 0),
    /* subgraphs (§2.3, 2.6) */
    C("body_output_undefined", B_LOOP, "graph-output", s_out_undef, 0, 0),
    C("body_output_from_outer_scope", B_LOOP, "graph-output", s_out_outer, 0, 0),
    C("body_undefined_input", B_LOOP, "undefined-input", s_undef_input, 0, 0),
    C("body_shadows_outer_name", B_LOOP, "ssa", s_shadow, 0, 0),
    C("body_no_name", B_LOOP, "graph-name", s_no_name, 0, 0),
    C("branch_uses_own_output", B_LOOP, "undefined-input", s_later_outer, 0, 0),
    C("loop_without_body", B_LOOP, "node-attr-required", s_no_body, 0, 0),
    C("loop_body_as_graphs", B_LOOP, "node-attr-type", s_body_graphs, 0, 0),
    C("body_ref_attr_with_value", B_LOOP, "attr-ref", s_ref_with_value, 0, 0),
    C("body_duplicate_input", B_LOOP, "ssa", s_dup_input, 0, 0),
    C("body_unknown_op", B_LOOP, "node-unknown-op", s_unknown_op, 0, 0),
    C("body_bad_initializer", B_LOOP, "tensor-payload", s_body_bad_tensor, 0, 0),
    C("if_without_else", B_LOOP, "node-attr-required", s_then_missing_else, 0, 0),
    C("body_untyped_ok", B_LOOP, NULL, s_untyped_ok, 0, F_VALID),
    C("body_initializer_clash_strict", B_LOOP, "strict-subgraph-initializer", s_init_clash, 0,
      F_STRICT),
    /* functions (§2.7) */
    C("function_self_recursion", B_FUNC, "function-cycle", f_self, 0, 0),
    C("function_mutual_recursion", B_FUNC, "function-cycle", f_mutual, 0, 0),
    C("function_recursion_via_loop", B_FUNC, "function-cycle", f_via_loop, 0, 0),
    C("function_duplicate_id", B_FUNC, "function-duplicate", f_dup_id, 0, 0),
    C("function_overload_ok", B_FUNC, NULL, f_overload_ok, 0, F_VALID | F_NO_ORACLE),
    C("function_no_name", B_FUNC, "function-name", f_no_name, 0, 0),
    C("function_no_domain", B_FUNC, "function-domain", f_no_domain, 0, 0),
    C("function_duplicate_input", B_FUNC, "ssa", f_dup_input, 0, 0),
    C("function_duplicate_output", B_FUNC, "function-output-duplicate", f_dup_output, 0, 0),
    C("function_duplicate_attribute", B_FUNC, "function-attr-duplicate", f_dup_attr, 0, 0),
    C("function_undefined_input", B_FUNC, "undefined-input", f_undef, 0, 0),
    C("function_uses_graph_name", B_FUNC, "undefined-input", f_outer_name, 0, 0),
    C("function_no_opset_import", B_FUNC, "function-opset", f_no_opset, 0, 0),
    C("function_opset_incompatible", B_FUNC, "function-opset", f_incompatible, 0, 0),
    C("function_opset_compatible_ok", B_FUNC, NULL, f_compatible_ok, 0, F_VALID),
    C("function_ssa", B_FUNC, "ssa", f_ssa, 0, 0),
    C("function_unknown_op", B_FUNC, "node-unknown-op", f_unknown_op, 0, 0),
    C("function_opset_out_of_range", B_FUNC, "opset-range", f_opset_range, 0, 0),
    C("function_output_unproduced_strict", B_FUNC, "strict-function-output", f_out_unproduced, 0,
      F_STRICT),
    C("function_undeclared_ref_strict", B_FUNC, "strict-function-attr-ref", f_bad_ref, 0, F_STRICT),
    C("function_declared_ref_ok", B_FUNC, NULL, f_ref_ok, 0, F_VALID),
    C("function_below_ir8_strict", B_FUNC, "strict-ir-feature", f_ir7, 0, F_STRICT),
    C("custom_op_without_function_ok", B_FUNC, NULL, f_unknown_caller_ok, 0, F_VALID),
    /* external data (§2.8) */
    C("external_parent_dir", B_EXT, "external-path", e_loc, 0, F_NEEDS_FS),
    C("external_absolute", B_EXT, "external-path", e_loc, 1, F_NEEDS_FS),
    C("external_empty_location", B_EXT, "external-path", e_loc, 2, F_NEEDS_FS),
    C("external_double_dot_in_name", B_EXT, "external-path", e_loc, 3, F_NEEDS_FS),
    C("external_missing_file", B_EXT, "external-path", e_loc, 4, F_NEEDS_FS),
    C("external_symlink", B_EXT, "external-path", e_loc, 5, F_NEEDS_FS),
    C("external_hard_link", B_EXT, "external-path", e_loc, 6, F_NEEDS_FS),
    C("external_escapes_via_subdir", B_EXT, "external-path", e_loc, 7, F_NEEDS_FS),
    C("external_is_directory", B_EXT, "external-path", e_loc, 8, F_NEEDS_FS),
    C("external_escapes_deep", B_EXT, "external-path", e_loc, 9, F_NEEDS_FS),
    C("external_no_location", B_EXT, "tensor-external", e_no_location, 0, F_NEEDS_FS),
    C("external_with_raw_data", B_EXT, "tensor-external", e_with_raw, 0, F_NEEDS_FS),
    C("external_dotted_inside_ok", B_EXT, NULL, e_dotted_ok, 0, F_VALID | F_NEEDS_FS),
    /* sparse tensors (§2.9) */
    C("sparse_no_values", B_SPARSE, "initializer-name", p_no_values, 0, 0),
    C("sparse_values_rank_2", B_SPARSE, "sparse-tensor", p_values_rank, 0, 0),
    C("sparse_no_dims", B_SPARSE, "sparse-tensor", p_no_dims, 0, 0),
    C("sparse_zero_dim", B_SPARSE, "sparse-tensor", p_zero_dim, 0, 0),
    C("sparse_indices_int32", B_SPARSE, "sparse-tensor", p_idx_type, 0, 0),
    C("sparse_indices_count", B_SPARSE, "sparse-tensor", p_idx_count, 0, 0),
    C("sparse_index_out_of_range", B_SPARSE, "sparse-tensor", p_idx_value, 0, 0),
    C("sparse_indices_unsorted", B_SPARSE, "sparse-tensor", p_idx_value, 1, 0),
    C("sparse_indices_repeated", B_SPARSE, "sparse-tensor", p_idx_value, 2, 0),
    C("sparse_index_negative", B_SPARSE, "sparse-tensor", p_idx_value, 3, 0),
    C("sparse_coo_ok", B_SPARSE, NULL, p_coo, 0, F_VALID),
    C("sparse_coo_second_dim", B_SPARSE, "sparse-tensor", p_coo, 1, 0),
    C("sparse_coo_out_of_range", B_SPARSE, "sparse-tensor", p_coo, 2, 0),
    C("sparse_coo_unsorted", B_SPARSE, "sparse-tensor", p_coo, 3, 0),
    C("sparse_indices_rank_3", B_SPARSE, "sparse-tensor", p_idx_rank3, 0, 0),
    C("sparse_no_indices", B_SPARSE, "sparse-tensor", p_no_indices, 0, 0),
    C("sparse_initializer_no_name", B_SPARSE, "initializer-name", p_no_name, 0, 0),
    C("sparse_initializer_name_clash", B_SPARSE, "initializer-duplicate", p_dup_name, 0, 0),
    C("sparse_values_payload", B_SPARSE, "tensor-payload", p_values_bad, 0, 0),
    /* --full: strict shape inference on a valid model */
    C("full_output_shape_conflict", B_CONV, "full-inference", u_out_shape, 0, F_FULLMODE),
    C("full_output_batch_conflict", B_CONV, "full-inference", u_out_shape, 1, F_FULLMODE),
    C("full_value_info_rank_conflict", B_CONV, "full-inference", u_value_info_rank, 0, F_FULLMODE),
    C("full_output_type_conflict", B_CONV, "full-inference", u_out_type, 0, F_FULLMODE),
    /* IR version features (§2.11, strict only) */
    C("ir7_float8_strict", B_CONV, "strict-ir-feature", v_float8, OX_FLOAT8E4M3FN,
      F_STRICT | F_NO_ORACLE),
    C("ir7_int4_strict", B_CONV, "strict-ir-feature", v_float8, OX_INT4, F_STRICT | F_NO_ORACLE),
    C("ir7_bfloat16_ok", B_CONV, NULL, v_float8, OX_BFLOAT16, F_VALID),
    C("ir7_optional_type_strict", B_CONV, "strict-ir-feature", v_optional_input, 0,
      F_STRICT | F_NO_ORACLE),
    C("ir8_overload_strict", B_FUNC, "strict-ir-feature", v_overload, 0, F_STRICT | F_NO_ORACLE),
    C("ir4_quantization_annotation_strict", B_CONV, "strict-ir-feature", v_quant, 0, F_STRICT),
    C("ir7_node_metadata_strict", B_CONV, "strict-ir-feature", v_node_metadata, 0,
      F_STRICT | F_NO_ORACLE),
    C("ir2_empty_node_domain_ok", B_CONV, NULL, v_ir3_node_domain, 0, F_VALID),
    /* training info (§2.11, strict only) */
    C("training_key_not_initializer", B_TRAIN, "strict-training", r_key_not_init, 0, F_STRICT),
    C("training_value_not_output", B_TRAIN, "strict-training", r_value_not_out, 0, F_STRICT),
    C("training_duplicate_key", B_TRAIN, "strict-training", r_dup_key, 0, F_STRICT),
    C("training_init_graph_inputs", B_TRAIN, "strict-training", r_init_inputs, 0, F_STRICT),
    C("training_init_binding_value", B_TRAIN, "strict-training", r_init_binding, 0, F_STRICT),
    C("training_init_binding_duplicate", B_TRAIN, "strict-training", r_init_dup, 0,
      F_STRICT | F_NO_ORACLE),
    C("training_init_binding_once_ok", B_TRAIN, NULL, r_init_dup, 1, F_VALID | F_NO_ORACLE),
    C("training_algorithm_undefined", B_TRAIN, "undefined-input", r_alg_undef, 0, F_STRICT),
};

/* Families over data types and operators. */
static tcase family[512];
static char family_names[512][64];
static size_t n_family;

static void add_family(const char *name, int base, const char *rule, void (*fn)(ox_model *, int),
                       int k, int flags) {
  if (n_family >= sizeof family / sizeof family[0]) return;
  snprintf(family_names[n_family], sizeof family_names[n_family], "%s", name);
  family[n_family] = (tcase){family_names[n_family], base, rule, fn, k, flags};
  n_family++;
}

static void build_families(void) {
  char nm[64];
  for (int dt = 1; dt < OX_DTYPE_COUNT; dt++) {
    const ox_dtype_info *di = ox_dtype_get(dt);
    int no = dt > OX_BFLOAT16 ? F_NO_ORACLE : 0;
    if (dt != OX_STRING) {
      snprintf(nm, sizeof nm, "raw_short_%s", di->name);
      add_family(nm, B_CONV, "tensor-payload", t_raw_short_type, dt, no);
    }
    snprintf(nm, sizeof nm, "wrong_field_%s", di->name);
    add_family(nm, B_CONV, "tensor-payload", t_wrong_field_type, dt, no);
    snprintf(nm, sizeof nm, "few_values_%s", di->name);
    add_family(nm, B_CONV, "tensor-payload", t_few_values_type, dt, no);
  }
  for (size_t i = 0; i < sizeof newer_ops / sizeof newer_ops[0]; i++) {
    snprintf(nm, sizeof nm, "op_too_new_%s", newer_ops[i]);
    /* names ending in '_' are not operators at all */
    bool fake = newer_ops[i][strlen(newer_ops[i]) - 1] == '_';
    add_family(nm, B_CONV, fake ? "node-unknown-op" : "node-opset", n_newer, (int)i, 0);
  }
  for (size_t i = 0; i < sizeof req_ops / sizeof req_ops[0]; i++) {
    snprintf(nm, sizeof nm, "missing_required_%s_%s", req_ops[i].op, req_ops[i].attr);
    add_family(nm, B_CONV, "node-attr-required", n_required, (int)i, 0);
  }
  for (size_t i = 0; i < sizeof sqrt_bad / sizeof sqrt_bad[0]; i++) {
    snprintf(nm, sizeof nm, "sqrt_input_%s", ox_dtype_get(sqrt_bad[i])->name);
    add_family(nm, B_CONV, "node-type", n_type_bad, (int)i, F_FULL);
  }
}

/* ---------------------------------------------------------------- driver */

static int run_check(const ox_model *m, bool strict, const char *dir, ox_buf *report) {
  ox_check_opts o = {.strict = strict, .model_dir = dir};
  report->size = 0;
  size_t n = 0;
  return ox_check_model(m, &o, report, &n, NULL);
}

static bool has_rule(const ox_buf *r, const char *rule) {
  char tag[96];
  snprintf(tag, sizeof tag, "[%s]\n", rule);
  size_t k = strlen(tag);
  for (size_t i = 0; i + k <= r->size; i++)
    if (memcmp(r->data + i, tag, k) == 0) return true;
  return false;
}

static void make_files(const char *dir) {
  char p[4096], q[4096];
  static const uint8_t w[36] = {0};
  snprintf(p, sizeof p, "%s/w.bin", dir);
  ox_file_write_all(p, w, sizeof w, NULL);
  snprintf(p, sizeof p, "%s/link.bin", dir);
  snprintf(q, sizeof q, "%s/w.bin", dir);
  unlink(p);
  if (symlink(q, p) != 0) fprintf(stderr, "symlink %s: %s\n", p, strerror(errno));
  snprintf(p, sizeof p, "%s/hard_src.bin", dir);
  ox_file_write_all(p, w, sizeof w, NULL);
  snprintf(q, sizeof q, "%s/hard.bin", dir);
  unlink(q);
  if (link(p, q) != 0) fprintf(stderr, "link %s: %s\n", q, strerror(errno));
  snprintf(p, sizeof p, "%s/sub", dir);
  mkdir(p, 0755);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void write_case(const char *outdir, FILE *manifest, size_t idx, const tcase *tc,
                       const ox_model *m, bool valid) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%03zu_%s.onnx", outdir, idx, tc->name);
  ox_buf b = {0};
  ox_err e = {0};
  if (ox_pb_encode_model(m->proto, &b, &e) != OX_OK ||
      ox_file_write_all(path, b.data, b.size, &e) != OX_OK) {
    /* some mutations cannot be encoded (e.g. an absent required string) */
    fprintf(manifest, "# %03zu_%s not written: %s\n", idx, tc->name, e.msg);
    ox_buf_free(&b);
    return;
  }
  ox_buf_free(&b);
  fprintf(manifest, "%03zu_%s.onnx %s %s%s%s%s%s\n", idx, tc->name, valid ? "valid" : "invalid",
          tc->rule ? tc->rule : "-", (tc->flags & F_NO_ORACLE) ? " no-oracle" : "",
          (tc->flags & F_FULL) ? " full" : "", (tc->flags & F_STRICT) ? " strict" : "",
          (tc->flags & F_FULLMODE) ? " fullmode" : "");
}

static void run_case(const tcase *tc, size_t idx, const char *dir, const char *outdir,
                     FILE *manifest, size_t *n_invalid) {
  if (tc->rule && !ox_check_rule_find(tc->rule)) {
    fprintf(stderr, "%s: rule [%s] is not in the rule table\n", tc->name, tc->rule);
    fails++;
  }
  ox_model *m = tm_base(tc->base);
  if (!m || !m->proto->graph) {
    fprintf(stderr, "%s: could not build the base model\n", tc->name);
    fails++;
    ox_model_free(m);
    return;
  }
  if (tc->fn) tc->fn(m, tc->k);
  ox_buf r = {0};
  int rc = run_check(m, false, dir, &r);
  bool want_valid_default = (tc->flags & (F_STRICT | F_VALID | F_FULLMODE)) != 0 || !tc->rule;
  if (tc->flags & F_FULLMODE) {
    onnxc_check_options fo = {.full = 1};
    char *rep = NULL;
    int frc = (int)onnxc_check((const onnxc_model *)m, &fo, &rep, NULL);
    if (frc != OX_EMODEL || !rep || !strstr(rep, "[full-inference]")) {
      fprintf(stderr, "%s: expected [full-inference] with --full, got rc %d: %s\n", tc->name, frc,
              rep ? rep : "");
      fails++;
    } else {
      (*n_invalid)++;
    }
    free(rep);
  }
  if (want_valid_default) {
    if (rc != OX_OK) {
      fprintf(stderr, "%s: expected valid, got:\n%.*s", tc->name, (int)r.size, (char *)r.data);
      fails++;
    }
    if (tc->flags & F_STRICT) {
      rc = run_check(m, true, dir, &r);
      if (rc != OX_EMODEL || !has_rule(&r, tc->rule)) {
        fprintf(stderr, "%s: expected [%s] with --strict, got rc %d:\n%.*s", tc->name, tc->rule, rc,
                (int)r.size, (char *)r.data);
        fails++;
      } else {
        (*n_invalid)++;
      }
    } else {
      rc = run_check(m, true, dir, &r);
      if (rc != OX_OK) {
        fprintf(stderr, "%s: expected valid with --strict too, got:\n%.*s", tc->name, (int)r.size,
                (char *)r.data);
        fails++;
      }
    }
  } else {
    if (rc != OX_EMODEL || !has_rule(&r, tc->rule)) {
      fprintf(stderr, "%s: expected [%s], got rc %d:\n%.*s", tc->name, tc->rule, rc, (int)r.size,
              (char *)r.data);
      fails++;
    } else {
      (*n_invalid)++;
    }
  }
  if (manifest) write_case(outdir, manifest, idx, tc, m, want_valid_default);
  ox_buf_free(&r);
  ox_model_free(m);
}

/* ------------------------------------------- mutations of real models */

/* Generic mutations applied to every model of the shared pytorch-converted,
 * pytorch-operator and simple suites. Each returns the rule it breaks, or
 * NULL when it does not apply to that model. */
static const char *real_mutate(ox_model *m, int k) {
  ox_graph *g = m->proto->graph;
  if (!g || !g->n_node) return NULL;
  ox_node *first = &g->node[0];
  switch (k) {
    case 0: { /* last node moved to the front, when it uses a node output */
      if (g->n_node < 2) return NULL;
      ox_node *last = &g->node[g->n_node - 1];
      bool uses = false;
      for (size_t i = 0; i < last->n_input && !uses; i++)
        for (size_t j = 0; j + 1 < g->n_node && !uses; j++)
          for (size_t o = 0; o < g->node[j].n_output && !uses; o++)
            uses = last->input[i][0] && strcmp(last->input[i], g->node[j].output[o]) == 0;
      if (!uses) return NULL;
      ox_node t = *last;
      memmove(g->node + 1, g->node, (g->n_node - 1) * sizeof *g->node);
      g->node[0] = t;
      return "use-before-def";
    }
    case 1: /* an input nobody defines */
      for (size_t i = 0; i < first->n_input; i++)
        if (first->input[i][0]) {
          first->input[i] = S(m, "onnxc_undefined_value");
          return "undefined-input";
        }
      return NULL;
    case 2: /* a node output that redefines a graph input */
      if (!g->n_input || !first->n_output || !g->input[0].name) return NULL;
      first->output[0] = S(m, g->input[0].name);
      return "ssa";
    case 3: /* an operator that does not exist */
      if (first->domain && first->domain[0]) return NULL;
      first->op_type = S(m, "NoSuchOperator");
      return "node-unknown-op";
    case 4: /* an attribute the schema does not have */
      if (first->domain && first->domain[0]) return NULL;
      tm_attr_int(m, first, "onnxc_unknown_attribute", 1);
      return "node-attr-unknown";
    case 5: /* a duplicate initializer */
      if (!g->n_initializer) return NULL;
      {
        ox_tensor copy = g->initializer[0];
        ox_tensor *t = OX_VEC_PUSH(m->arena, g->initializer, g->n_initializer);
        if (!t) return NULL;
        *t = copy;
      }
      return "initializer-duplicate";
    case 6: /* no opset import */
      if (m->proto->ir_version < 3) return NULL;
      m->proto->n_opset_import = 0;
      return "opset-import";
    default:
      return NULL;
  }
}

static void run_real(const char *shared, const char *dir, const char *outdir, FILE *manifest,
                     size_t *idx, size_t *n_invalid, size_t *total) {
  static const char *const suites[] = {"pytorch-converted", "pytorch-operator", "simple"};
  size_t models = 0;
  for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
    char sd[4096];
    snprintf(sd, sizeof sd, "%s/testdata/%s", shared, suites[s]);
    DIR *d = opendir(sd);
    if (!d) continue;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (de->d_name[0] == '.') continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        char **nn = realloc(names, cap * sizeof *nn);
        if (!nn) break;
        names = nn;
      }
      names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
      char path[4096 + 512];
      snprintf(path, sizeof path, "%s/%s/model.onnx", sd, names[i]);
      for (int k = 0; k < 7; k++) {
        ox_load_opts lo = {.skip_checksum = true, .no_external_data = true};
        ox_model *m = NULL;
        if (ox_api_model_load(path, &lo, &m, NULL) != OX_OK) break;
        if (k == 0) {
          ox_buf r = {0};
          if (run_check(m, false, dir, &r) != OX_OK) {
            fprintf(stderr, "%s: expected valid:\n%.*s", path, (int)r.size, (char *)r.data);
            fails++;
          }
          ox_buf_free(&r);
          models++;
        }
        const char *rule = real_mutate(m, k);
        if (rule) {
          char nm[512];
          snprintf(nm, sizeof nm, "real_%s_%.300s_m%d", suites[s], names[i], k);
          tcase tc = {nm, -1, rule, NULL, k, 0};
          ox_buf r = {0};
          int rc = run_check(m, false, dir, &r);
          (*total)++;
          if (rc != OX_EMODEL || !has_rule(&r, rule)) {
            fprintf(stderr, "%s: expected [%s], got rc %d:\n%.*s", nm, rule, rc, (int)r.size,
                    (char *)r.data);
            fails++;
          } else {
            (*n_invalid)++;
          }
          ox_buf_free(&r);
          if (manifest) write_case(outdir, manifest, (*idx)++, &tc, m, false);
        }
        ox_model_free(m);
      }
      free(names[i]);
    }
    free(names);
  }
  printf("%zu real models valid and mutated\n", models);
}

int main(int argc, char **argv) {
  const char *outdir = NULL, *shared = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
      shared = argv[++i];
    else
      outdir = argv[i];
  }
  char tmp[] = "/tmp/onnxc_check_XXXXXX";
  const char *dir = outdir;
  if (!dir) {
    dir = mkdtemp(tmp);
    if (!dir) {
      perror("mkdtemp");
      return 1;
    }
  } else {
    mkdir(dir, 0755);
  }
  make_files(dir);
  FILE *manifest = NULL;
  if (outdir) {
    char p[4096];
    snprintf(p, sizeof p, "%s/manifest.txt", outdir);
    manifest = fopen(p, "w");
    if (!manifest) {
      perror(p);
      return 1;
    }
  }
  /* every base is valid, with and without --strict */
  for (int b = 0; b < B_COUNT; b++) {
    tcase tc = {"base", b, NULL, NULL, 0, F_VALID};
    ox_model *bm = tm_base(b);
    bm->dir = ox_arena_strdup(bm->arena, dir); /* external data next to it */
    onnxc_check_options fo = {.full = 1};
    char *rep = NULL;
    if (onnxc_check((const onnxc_model *)bm, &fo, &rep, NULL) != ONNXC_OK) {
      fprintf(stderr, "base %d: expected valid with --full: %s\n", b, rep ? rep : "");
      fails++;
    }
    free(rep);
    ox_model_free(bm);
    char nm[32];
    snprintf(nm, sizeof nm, "base_%d", b);
    tc.name = nm;
    size_t dummy = 0;
    run_case(&tc, (size_t)b, dir, outdir, manifest, &dummy);
  }
  build_families();
  size_t n_invalid = 0, idx = 100;
  size_t total = 0;
  for (size_t i = 0; i < sizeof fixed_cases / sizeof fixed_cases[0]; i++, total++)
    run_case(&fixed_cases[i], idx++, dir, outdir, manifest, &n_invalid);
  for (size_t i = 0; i < n_family; i++, total++)
    run_case(&family[i], idx++, dir, outdir, manifest, &n_invalid);
  if (shared) run_real(shared, dir, outdir, manifest, &idx, &n_invalid, &total);
  if (manifest) fclose(manifest);
  if (!outdir) {
    /* remove the scratch folder */
    static const char *const files[] = {"w.bin", "link.bin", "hard_src.bin", "hard.bin"};
    char p[4096];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
      snprintf(p, sizeof p, "%s/%s", dir, files[i]);
      unlink(p);
    }
    snprintf(p, sizeof p, "%s/sub", dir);
    rmdir(p);
    rmdir(dir);
  }
  printf("%zu cases, %zu invalid models rejected for the right rule, %d failures\n", total,
         n_invalid, fails);
  if (n_invalid < 150) {
    fprintf(stderr, "fewer than 150 invalid models\n");
    fails++;
  }
  return fails ? 1 : 0;
}
