/* check_ir.c - strict rule: every feature a model uses exists in the IR
 * version it declares (the version history of onnx.proto's `Version` enum).
 * The reference checker does not look at this (notes §2.11). */
#include <string.h>

#include "check_impl.h"

enum {
  FT_NODE_DOMAIN,   /* 3: NodeProto.domain */
  FT_BFLOAT16,      /* 4 */
  FT_QUANT_ANNOT,   /* 5: GraphProto.quantization_annotation */
  FT_SPARSE,        /* 6: sparse initializers and sparse tensor attributes */
  FT_TRAINING,      /* 7: ModelProto.training_info */
  FT_FUNCTIONS,     /* 8: ModelProto.functions */
  FT_SPARSE_TYPE,   /* 8: TypeProto.SparseTensor */
  FT_OPTIONAL_TYPE, /* 8: TypeProto.Optional */
  FT_FN_ATTR_PROTO, /* 9: FunctionProto.attribute_proto */
  FT_FLOAT8,        /* 9 */
  FT_INT4,          /* 10: UINT4, INT4 */
  FT_OVERLOAD,      /* 10: overload of nodes and functions */
  FT_METADATA,      /* 10: metadata_props below the model */
  FT_FLOAT4,        /* 11: FLOAT4E2M1 */
  FT_DEVICES,       /* 11: multi-device configurations */
  FT_FLOAT8E8M0,    /* 12 */
  FT_INT2,          /* 13: UINT2, INT2 */
  FT_COUNT
};

static const struct {
  int ir;
  const char *what;
} features[FT_COUNT] = {
    [FT_NODE_DOMAIN] = {3, "a node domain"},
    [FT_BFLOAT16] = {4, "the BFLOAT16 data type"},
    [FT_QUANT_ANNOT] = {5, "quantization annotations"},
    [FT_SPARSE] = {6, "sparse tensors"},
    [FT_TRAINING] = {7, "training_info"},
    [FT_FUNCTIONS] = {8, "model-local functions"},
    [FT_SPARSE_TYPE] = {8, "sparse tensor types"},
    [FT_OPTIONAL_TYPE] = {8, "optional types"},
    [FT_FN_ATTR_PROTO] = {9, "function attributes with default values"},
    [FT_FLOAT8] = {9, "the FLOAT8 data types"},
    [FT_INT4] = {10, "the UINT4/INT4 data types"},
    [FT_OVERLOAD] = {10, "function overloads"},
    [FT_METADATA] = {10, "metadata_props below the model"},
    [FT_FLOAT4] = {11, "the FLOAT4E2M1 data type"},
    [FT_DEVICES] = {11, "device configurations"},
    [FT_FLOAT8E8M0] = {12, "the FLOAT8E8M0 data type"},
    [FT_INT2] = {13, "the UINT2/INT2 data types"},
};

typedef struct ir_walk {
  bool used[FT_COUNT];
} ir_walk;

static void dtype(ir_walk *w, int32_t dt) {
  switch (dt) {
    case OX_BFLOAT16:
      w->used[FT_BFLOAT16] = true;
      break;
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
      w->used[FT_FLOAT8] = true;
      break;
    case OX_UINT4:
    case OX_INT4:
      w->used[FT_INT4] = true;
      break;
    case OX_FLOAT4E2M1:
      w->used[FT_FLOAT4] = true;
      break;
    case OX_FLOAT8E8M0:
      w->used[FT_FLOAT8E8M0] = true;
      break;
    case OX_UINT2:
    case OX_INT2:
      w->used[FT_INT2] = true;
      break;
    default:
      break;
  }
}

static void type(ir_walk *w, const ox_type *t, int depth) {
  if (!t || depth > 64) return;
  if (t->kind == OX_TYPE_SPARSE_TENSOR) w->used[FT_SPARSE_TYPE] = true;
  if (t->kind == OX_TYPE_OPTIONAL) w->used[FT_OPTIONAL_TYPE] = true;
  if (t->has_elem_type &&
      (t->kind == OX_TYPE_TENSOR || t->kind == OX_TYPE_SPARSE_TENSOR || t->kind == OX_TYPE_MAP))
    dtype(w, t->elem_type);
  type(w, t->elem, depth + 1);
}

static void tensor(ir_walk *w, const ox_tensor *t) {
  if (t->has_data_type) dtype(w, t->data_type);
  if (t->n_metadata_props) w->used[FT_METADATA] = true;
}

static void graph(ir_walk *w, const ox_graph *g, int depth);

static void nodes(ir_walk *w, const ox_node *n, size_t k, int depth) {
  for (size_t i = 0; i < k; i++) {
    if (n[i].domain && n[i].domain[0]) w->used[FT_NODE_DOMAIN] = true;
    if (n[i].overload && n[i].overload[0]) w->used[FT_OVERLOAD] = true;
    if (n[i].n_metadata_props) w->used[FT_METADATA] = true;
    if (n[i].n_device_configurations) w->used[FT_DEVICES] = true;
    for (size_t j = 0; j < n[i].n_attribute; j++) {
      const ox_attr *a = &n[i].attribute[j];
      if (a->t) tensor(w, a->t);
      for (size_t q = 0; q < a->n_tensors; q++) tensor(w, &a->tensors[q]);
      if (a->sparse_tensor || a->n_sparse_tensors) w->used[FT_SPARSE] = true;
      if (a->tp) type(w, a->tp, 0);
      for (size_t q = 0; q < a->n_type_protos; q++) type(w, &a->type_protos[q], 0);
      if (a->g) graph(w, a->g, depth + 1);
      for (size_t q = 0; q < a->n_graphs; q++) graph(w, &a->graphs[q], depth + 1);
    }
  }
}

static void value_infos(ir_walk *w, const ox_value_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    type(w, v[i].type, 0);
    if (v[i].n_metadata_props) w->used[FT_METADATA] = true;
  }
}

static void graph(ir_walk *w, const ox_graph *g, int depth) {
  if (!g || depth > 64) return;
  if (g->n_quantization_annotation) w->used[FT_QUANT_ANNOT] = true;
  if (g->n_sparse_initializer) w->used[FT_SPARSE] = true;
  if (g->n_metadata_props) w->used[FT_METADATA] = true;
  for (size_t i = 0; i < g->n_initializer; i++) tensor(w, &g->initializer[i]);
  for (size_t i = 0; i < g->n_sparse_initializer; i++)
    if (g->sparse_initializer[i].values) tensor(w, g->sparse_initializer[i].values);
  value_infos(w, g->input, g->n_input);
  value_infos(w, g->output, g->n_output);
  value_infos(w, g->value_info, g->n_value_info);
  nodes(w, g->node, g->n_node, depth);
}

void ox_ck_ir_features(ox_ck *c, const ox_model_proto *mp) {
  if (c->ir <= 0) return;
  ir_walk w;
  memset(&w, 0, sizeof w);
  graph(&w, mp->graph, 0);
  if (mp->n_training_info) w.used[FT_TRAINING] = true;
  for (size_t i = 0; i < mp->n_training_info; i++) {
    graph(&w, mp->training_info[i].initialization, 0);
    graph(&w, mp->training_info[i].algorithm, 0);
  }
  if (mp->n_functions) w.used[FT_FUNCTIONS] = true;
  for (size_t i = 0; i < mp->n_functions; i++) {
    const ox_function *f = &mp->functions[i];
    if (f->n_attribute_proto) w.used[FT_FN_ATTR_PROTO] = true;
    if (f->overload && f->overload[0]) w.used[FT_OVERLOAD] = true;
    if (f->n_metadata_props) w.used[FT_METADATA] = true;
    value_infos(&w, f->value_info, f->n_value_info);
    nodes(&w, f->node, f->n_node, 0);
  }
  if (mp->n_configuration) w.used[FT_DEVICES] = true;
  for (int k = 0; k < FT_COUNT; k++)
    if (w.used[k] && c->ir < features[k].ir)
      ox_ck_fail(c, "strict-ir-feature",
                 "the model uses %s, which needs IR version %d (it declares %lld)",
                 features[k].what, features[k].ir, (long long)c->ir);
}
