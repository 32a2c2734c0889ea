/* tensor_proto.c - the tensors a model stores (include/onnxc.h "graphs and
 * nodes"): initializers, the parts of sparse initializers, TENSOR attribute
 * values. An onnxc_tensor_proto is the model's ox_tensor (TensorProto),
 * borrowed: what a tool reports about weights without decoding them. */
#include <onnxc.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"

#define G(g) ((const ox_graph *)(g))
#define T(t) ((const ox_tensor *)(t))

size_t onnxc_graph_initializer_count(const onnxc_graph *g) { return g ? G(g)->n_initializer : 0; }

const onnxc_tensor_proto *onnxc_graph_initializer(const onnxc_graph *g, size_t i) {
  return g && i < G(g)->n_initializer ? (const onnxc_tensor_proto *)&G(g)->initializer[i] : NULL;
}

size_t onnxc_graph_sparse_initializer_count(const onnxc_graph *g) {
  return g ? G(g)->n_sparse_initializer : 0;
}

static const ox_sparse_tensor *sparse(const onnxc_graph *g, size_t i) {
  return g && i < G(g)->n_sparse_initializer ? &G(g)->sparse_initializer[i] : NULL;
}

const onnxc_tensor_proto *onnxc_graph_sparse_values(const onnxc_graph *g, size_t i) {
  const ox_sparse_tensor *s = sparse(g, i);
  return s ? (const onnxc_tensor_proto *)s->values : NULL;
}

const onnxc_tensor_proto *onnxc_graph_sparse_indices(const onnxc_graph *g, size_t i) {
  const ox_sparse_tensor *s = sparse(g, i);
  return s ? (const onnxc_tensor_proto *)s->indices : NULL;
}

const int64_t *onnxc_graph_sparse_dims(const onnxc_graph *g, size_t i, size_t *rank) {
  const ox_sparse_tensor *s = sparse(g, i);
  if (rank) *rank = s ? s->n_dims : 0;
  return s ? s->dims : NULL;
}

const char *onnxc_tensor_proto_name(const onnxc_tensor_proto *t) {
  return t && T(t)->name ? T(t)->name : "";
}

int32_t onnxc_tensor_proto_dtype(const onnxc_tensor_proto *t) { return t ? T(t)->data_type : 0; }
size_t onnxc_tensor_proto_rank(const onnxc_tensor_proto *t) { return t ? T(t)->n_dims : 0; }

int64_t onnxc_tensor_proto_dim(const onnxc_tensor_proto *t, size_t i) {
  return t && i < T(t)->n_dims ? T(t)->dims[i] : -1;
}

int onnxc_tensor_proto_is_external(const onnxc_tensor_proto *t) {
  return t && T(t)->has_data_location && T(t)->data_location == 1;
}

uint64_t onnxc_tensor_proto_stored_bytes(const onnxc_tensor_proto *t) {
  if (!t) return 0;
  const ox_tensor *x = T(t);
  if (onnxc_tensor_proto_is_external(t)) {
    if (x->external.data) return x->external.size;
    /* not resolved (no_external_data): what the file says it holds */
    for (size_t i = 0; i < x->n_external_data; i++)
      if (x->external_data[i].key && strcmp(x->external_data[i].key, "length") == 0)
        return strtoull(x->external_data[i].value ? x->external_data[i].value : "0", NULL, 10);
    return x->external.size;
  }
  uint64_t n = x->raw_data.size;
  n += (uint64_t)x->n_float_data * 4 + (uint64_t)x->n_int32_data * 4 +
       (uint64_t)x->n_int64_data * 8 + (uint64_t)x->n_double_data * 8 +
       (uint64_t)x->n_uint64_data * 8;
  for (size_t i = 0; i < x->n_string_data; i++) n += x->string_data[i].size;
  return n;
}
