/* introspect.c - the public view of types and of a model's interface and
 * metadata (include/onnxc.h "types" and "model introspection"). An
 * onnxc_type is the model's ox_type (TypeProto) behind an opaque pointer. */
#include <stdio.h>
#include <string.h>

#include "../runtime/session.h"
#include "onnxc.h"

static const ox_type *T(const onnxc_type *t) { return (const ox_type *)t; }
static const ox_model_proto *P(const onnxc_model *m) {
  return m ? ((const ox_model *)m)->proto : NULL;
}
static const ox_graph *G(const onnxc_model *m) {
  const ox_model_proto *p = P(m);
  return p ? p->graph : NULL;
}
static const char *str(const char *s) { return s ? s : ""; }

/* ------------------------------------------------------------ types */

onnxc_type_kind onnxc_type_kind_of(const onnxc_type *t) {
  if (!t) return ONNXC_TYPE_UNKNOWN;
  switch (T(t)->kind) {
    case OX_TYPE_TENSOR: return ONNXC_TYPE_TENSOR;
    case OX_TYPE_SEQUENCE: return ONNXC_TYPE_SEQUENCE;
    case OX_TYPE_MAP: return ONNXC_TYPE_MAP;
    case OX_TYPE_OPTIONAL: return ONNXC_TYPE_OPTIONAL;
    case OX_TYPE_SPARSE_TENSOR: return ONNXC_TYPE_SPARSE_TENSOR;
    case OX_TYPE_OPAQUE: return ONNXC_TYPE_OPAQUE;
    default: return ONNXC_TYPE_UNKNOWN;
  }
}

static bool is_tensorish(const ox_type *t) {
  return t && (t->kind == OX_TYPE_TENSOR || t->kind == OX_TYPE_SPARSE_TENSOR);
}

int32_t onnxc_type_elem_type(const onnxc_type *t) {
  return is_tensorish(T(t)) ? T(t)->elem_type : 0;
}

int64_t onnxc_type_rank(const onnxc_type *t) {
  if (!is_tensorish(T(t)) || !T(t)->shape) return -1;
  return (int64_t)T(t)->shape->n_dim;
}

static const ox_dim *dim_at(const onnxc_type *t, size_t i) {
  if (!is_tensorish(T(t)) || !T(t)->shape || i >= T(t)->shape->n_dim) return NULL;
  return &T(t)->shape->dim[i];
}

int64_t onnxc_type_dim(const onnxc_type *t, size_t i) {
  const ox_dim *d = dim_at(t, i);
  return d && d->has_value ? d->value : -1;
}

const char *onnxc_type_dim_param(const onnxc_type *t, size_t i) {
  const ox_dim *d = dim_at(t, i);
  return d && !d->has_value && d->param && *d->param ? d->param : NULL;
}

onnxc_dim_kind onnxc_type_dim_kind(const onnxc_type *t, size_t i) {
  const ox_dim *d = dim_at(t, i);
  if (!d) return ONNXC_DIM_UNKNOWN;
  return d->has_value ? ONNXC_DIM_VALUE : d->param ? ONNXC_DIM_PARAM : ONNXC_DIM_UNKNOWN;
}

const onnxc_type *onnxc_type_element(const onnxc_type *t) {
  if (!t || (T(t)->kind != OX_TYPE_SEQUENCE && T(t)->kind != OX_TYPE_OPTIONAL)) return NULL;
  return (const onnxc_type *)T(t)->elem;
}

int32_t onnxc_type_map_key(const onnxc_type *t) {
  return t && T(t)->kind == OX_TYPE_MAP ? T(t)->elem_type : 0;
}

const onnxc_type *onnxc_type_map_value(const onnxc_type *t) {
  return t && T(t)->kind == OX_TYPE_MAP ? (const onnxc_type *)T(t)->elem : NULL;
}

const char *onnxc_type_opaque_domain(const onnxc_type *t) {
  return t && T(t)->kind == OX_TYPE_OPAQUE ? str(T(t)->opaque_domain) : NULL;
}

const char *onnxc_type_opaque_name(const onnxc_type *t) {
  return t && T(t)->kind == OX_TYPE_OPAQUE ? str(T(t)->opaque_name) : NULL;
}

const char *onnxc_type_denotation(const onnxc_type *t) { return t ? T(t)->denotation : NULL; }

const char *onnxc_dtype_name(int32_t dtype) {
  const ox_dtype_info *d = ox_dtype_get(dtype);
  return d && d->name ? d->name : "";
}

/* Appends to buf as snprintf would, and returns the full length so far. */
static size_t put(char *buf, size_t size, size_t at, const char *text) {
  size_t n = strlen(text);
  if (at < size) {
    size_t room = size - at - 1;
    memcpy(buf + at, text, n < room ? n : room);
    buf[at + (n < room ? n : room)] = 0;
  }
  return at + n;
}

/* onnxruntime's spelling: tensor(float), seq(tensor(int64)), map(string,tensor(float)) */
static size_t describe(const ox_type *t, char *buf, size_t size, size_t at) {
  const char *en = t && t->elem_type ? onnxc_dtype_name(t->elem_type) : "unknown";
  if (!*en) en = "unknown";
  switch (onnxc_type_kind_of((const onnxc_type *)t)) {
    case ONNXC_TYPE_TENSOR:
      at = put(buf, size, at, "tensor(");
      at = put(buf, size, at, en);
      return put(buf, size, at, ")");
    case ONNXC_TYPE_SPARSE_TENSOR:
      at = put(buf, size, at, "sparse_tensor(");
      at = put(buf, size, at, en);
      return put(buf, size, at, ")");
    case ONNXC_TYPE_SEQUENCE:
      at = put(buf, size, at, "seq(");
      at = describe(t->elem, buf, size, at);
      return put(buf, size, at, ")");
    case ONNXC_TYPE_OPTIONAL:
      at = put(buf, size, at, "optional(");
      at = describe(t->elem, buf, size, at);
      return put(buf, size, at, ")");
    case ONNXC_TYPE_MAP:
      at = put(buf, size, at, "map(");
      at = put(buf, size, at, en);
      at = put(buf, size, at, ",");
      at = describe(t->elem, buf, size, at);
      return put(buf, size, at, ")");
    case ONNXC_TYPE_OPAQUE:
      at = put(buf, size, at, "opaque(");
      at = put(buf, size, at, str(t->opaque_domain));
      at = put(buf, size, at, ",");
      at = put(buf, size, at, str(t->opaque_name));
      return put(buf, size, at, ")");
    default:
      return put(buf, size, at, "unknown");
  }
}

size_t onnxc_type_describe(const onnxc_type *t, char *buf, size_t size) {
  if (buf && size) buf[0] = 0;
  return describe(T(t), buf && size ? buf : NULL, buf ? size : 0, 0);
}

/* ------------------------------------------------------------ model interface */

static bool has_initializer(const ox_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && name && strcmp(g->initializer[i].name, name) == 0) return true;
  for (size_t i = 0; i < g->n_sparse_initializer; i++) {
    const ox_tensor *v = g->sparse_initializer[i].values;
    if (v && v->name && name && strcmp(v->name, name) == 0) return true;
  }
  return false;
}

/* The i-th graph input that has no initializer, or NULL. */
static const ox_value_info *fed_input(const onnxc_model *m, size_t i) {
  const ox_graph *g = G(m);
  for (size_t j = 0, k = 0; g && j < g->n_input; j++)
    if (!has_initializer(g, g->input[j].name) && k++ == i) return &g->input[j];
  return NULL;
}

size_t onnxc_model_input_count(const onnxc_model *m) {
  const ox_graph *g = G(m);
  size_t k = 0;
  for (size_t j = 0; g && j < g->n_input; j++) k += !has_initializer(g, g->input[j].name);
  return k;
}

const char *onnxc_model_input_name(const onnxc_model *m, size_t i) {
  const ox_value_info *vi = fed_input(m, i);
  return vi ? str(vi->name) : NULL;
}

const onnxc_type *onnxc_model_input_type(const onnxc_model *m, size_t i) {
  const ox_value_info *vi = fed_input(m, i);
  return vi ? (const onnxc_type *)vi->type : NULL;
}

size_t onnxc_model_output_count(const onnxc_model *m) {
  const ox_graph *g = G(m);
  return g ? g->n_output : 0;
}

const char *onnxc_model_output_name(const onnxc_model *m, size_t i) {
  const ox_graph *g = G(m);
  return g && i < g->n_output ? str(g->output[i].name) : NULL;
}

const onnxc_type *onnxc_model_output_type(const onnxc_model *m, size_t i) {
  const ox_graph *g = G(m);
  return g && i < g->n_output ? (const onnxc_type *)g->output[i].type : NULL;
}

/* ------------------------------------------------------------ model metadata */

int64_t onnxc_model_ir_version(const onnxc_model *m) { return P(m) ? P(m)->ir_version : 0; }
int64_t onnxc_model_version(const onnxc_model *m) { return P(m) ? P(m)->model_version : 0; }
const char *onnxc_model_producer_name(const onnxc_model *m) {
  return P(m) ? str(P(m)->producer_name) : "";
}
const char *onnxc_model_producer_version(const onnxc_model *m) {
  return P(m) ? str(P(m)->producer_version) : "";
}
const char *onnxc_model_domain(const onnxc_model *m) { return P(m) ? str(P(m)->domain) : ""; }
const char *onnxc_model_doc_string(const onnxc_model *m) {
  return P(m) ? str(P(m)->doc_string) : "";
}
const char *onnxc_model_graph_name(const onnxc_model *m) { return G(m) ? str(G(m)->name) : ""; }

size_t onnxc_model_opset_count(const onnxc_model *m) { return P(m) ? P(m)->n_opset_import : 0; }

const char *onnxc_model_opset_domain(const onnxc_model *m, size_t i) {
  if (!P(m) || i >= P(m)->n_opset_import) return NULL;
  const char *d = str(P(m)->opset_import[i].domain);
  return strcmp(d, "ai.onnx") == 0 ? "" : d;
}

int64_t onnxc_model_opset_version(const onnxc_model *m, size_t i) {
  return P(m) && i < P(m)->n_opset_import ? P(m)->opset_import[i].version : 0;
}

size_t onnxc_model_metadata_count(const onnxc_model *m) {
  return P(m) ? P(m)->n_metadata_props : 0;
}

const char *onnxc_model_metadata_key(const onnxc_model *m, size_t i) {
  return P(m) && i < P(m)->n_metadata_props ? str(P(m)->metadata_props[i].key) : NULL;
}

const char *onnxc_model_metadata_value(const onnxc_model *m, size_t i) {
  return P(m) && i < P(m)->n_metadata_props ? str(P(m)->metadata_props[i].value) : NULL;
}

/* The decoder keeps proto2's presence: has_ flags for numbers, NULL for an
 * absent string (ir.h). */
int onnxc_model_has_field(const onnxc_model *m, onnxc_model_field field) {
  const ox_model_proto *p = P(m);
  if (!p) return 0;
  switch (field) {
    case ONNXC_MODEL_IR_VERSION: return p->has_ir_version;
    case ONNXC_MODEL_MODEL_VERSION: return p->has_model_version;
    case ONNXC_MODEL_PRODUCER_NAME: return p->producer_name != NULL;
    case ONNXC_MODEL_PRODUCER_VERSION: return p->producer_version != NULL;
    case ONNXC_MODEL_DOMAIN: return p->domain != NULL;
    case ONNXC_MODEL_DOC_STRING: return p->doc_string != NULL;
    case ONNXC_MODEL_GRAPH_NAME: return p->graph && p->graph->name;
  }
  return 0;
}
