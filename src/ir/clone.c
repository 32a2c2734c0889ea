/* clone.c - deep copies of model parts into an arena, for graph rewriting
 * and function inlining. Strings, bytes, unknown fields, shapes,
 * sub-messages and arrays are copied; only the payload bytes of raw_data and
 * of resolved external data are shared with the source (they live in its
 * file mapping or buffer, which must outlive the copy). Arrays get the
 * power-of-two capacity that OX_VEC_PUSH expects, so copies can grow. */
#include <string.h>

#include "ir.h"

/* Allocates an array for n elements (capacity: next power of two). */
static void *arr_dup(ox_arena *a, const void *src, size_t n, size_t es, bool *ok) {
  if (!n || !src) return NULL;
  size_t cap = 1;
  while (cap < n) cap <<= 1;
  void *d = ox_arena_calloc(a, cap, es);
  if (!d) {
    *ok = false;
    return NULL;
  }
  memcpy(d, src, n * es);
  return d;
}

#define DUP_ARR(a, dst, src, f, ok) \
  ((dst)->f = arr_dup((a), (src)->f, (src)->n_##f, sizeof *(src)->f, (ok)))

static char *str(ox_arena *a, const char *s, bool *ok) {
  if (!s) return NULL;
  char *d = ox_arena_strdup(a, s);
  if (!d) *ok = false;
  return d;
}

static ox_bytes bytes(ox_arena *a, ox_bytes b, bool *ok) {
  ox_bytes r = {NULL, 0};
  if (!b.data) return r;
  uint8_t *d = ox_arena_alloc(a, b.size + 1);
  if (!d) {
    *ok = false;
    return r;
  }
  memcpy(d, b.data, b.size);
  d[b.size] = 0; /* bytes fields stay usable as C strings */
  r.data = d;
  r.size = b.size;
  return r;
}

/* Re-homes a field that still points at the source's bytes. */
static void own(ox_arena *a, ox_bytes *b, bool *ok) {
  if (b->size) *b = bytes(a, *b, ok);
}

static void strs(ox_arena *a, char ***dst, char *const *src, size_t n, bool *ok) {
  *dst = arr_dup(a, src, n, sizeof *src, ok);
  for (size_t i = 0; *dst && i < n; i++) (*dst)[i] = str(a, src[i], ok);
}

static void pairs(ox_arena *a, ox_str_pair **dst, const ox_str_pair *src, size_t n, bool *ok) {
  *dst = arr_dup(a, src, n, sizeof *src, ok);
  for (size_t i = 0; *dst && i < n; i++) {
    (*dst)[i].key = str(a, src[i].key, ok);
    (*dst)[i].value = str(a, src[i].value, ok);
    own(a, &(*dst)[i].unknown, ok);
  }
}

static void *obj_dup(ox_arena *a, const void *src, size_t size, bool *ok) {
  if (!src) return NULL;
  void *d = ox_arena_memdup(a, src, size);
  if (!d) *ok = false;
  return d;
}

static void type_in(ox_arena *a, ox_type *d, const ox_type *s, bool *ok, int depth);

static ox_type *type_dup(ox_arena *a, const ox_type *s, bool *ok, int depth) {
  ox_type *d = obj_dup(a, s, sizeof *s, ok);
  if (d) type_in(a, d, s, ok, depth);
  return d;
}

static void type_in(ox_arena *a, ox_type *d, const ox_type *s, bool *ok, int depth) {
  if (depth > 256) {
    *ok = false;
    return;
  }
  if (s->shape) {
    d->shape = obj_dup(a, s->shape, sizeof *s->shape, ok);
    if (d->shape) {
      DUP_ARR(a, d->shape, s->shape, dim, ok);
      own(a, &d->shape->unknown, ok);
      for (size_t i = 0; d->shape->dim && i < s->shape->n_dim; i++) {
        own(a, &d->shape->dim[i].unknown, ok);
        d->shape->dim[i].param = str(a, s->shape->dim[i].param, ok);
        d->shape->dim[i].denotation = str(a, s->shape->dim[i].denotation, ok);
      }
    }
  }
  if (s->elem) d->elem = type_dup(a, s->elem, ok, depth + 1);
  d->opaque_domain = str(a, s->opaque_domain, ok);
  d->opaque_name = str(a, s->opaque_name, ok);
  d->denotation = str(a, s->denotation, ok);
  own(a, &d->unknown, ok);
  own(a, &d->inner_unknown, ok);
}

static void tensor_in(ox_arena *a, ox_tensor *d, const ox_tensor *s, bool *ok) {
  DUP_ARR(a, d, s, dims, ok);
  d->segment = obj_dup(a, s->segment, sizeof *s->segment, ok);
  if (d->segment) own(a, &d->segment->unknown, ok);
  own(a, &d->unknown, ok);
  DUP_ARR(a, d, s, float_data, ok);
  DUP_ARR(a, d, s, int32_data, ok);
  DUP_ARR(a, d, s, int64_data, ok);
  DUP_ARR(a, d, s, double_data, ok);
  DUP_ARR(a, d, s, uint64_data, ok);
  DUP_ARR(a, d, s, string_data, ok);
  for (size_t i = 0; d->string_data && i < s->n_string_data; i++)
    d->string_data[i] = bytes(a, s->string_data[i], ok);
  d->name = str(a, s->name, ok);
  d->doc_string = str(a, s->doc_string, ok);
  pairs(a, &d->external_data, s->external_data, s->n_external_data, ok);
  pairs(a, &d->metadata_props, s->metadata_props, s->n_metadata_props, ok);
}

static void sparse_in(ox_arena *a, ox_sparse_tensor *d, const ox_sparse_tensor *s, bool *ok) {
  if (s->values && (d->values = obj_dup(a, s->values, sizeof *s->values, ok)))
    tensor_in(a, d->values, s->values, ok);
  if (s->indices && (d->indices = obj_dup(a, s->indices, sizeof *s->indices, ok)))
    tensor_in(a, d->indices, s->indices, ok);
  DUP_ARR(a, d, s, dims, ok);
  own(a, &d->unknown, ok);
}

static void value_infos(ox_arena *a, ox_value_info **dst, const ox_value_info *src, size_t n,
                        bool *ok) {
  *dst = arr_dup(a, src, n, sizeof *src, ok);
  for (size_t i = 0; *dst && i < n; i++) {
    ox_value_info *d = &(*dst)[i];
    d->name = str(a, src[i].name, ok);
    d->doc_string = str(a, src[i].doc_string, ok);
    own(a, &d->unknown, ok);
    if (src[i].type) d->type = type_dup(a, src[i].type, ok, 0);
    pairs(a, &d->metadata_props, src[i].metadata_props, src[i].n_metadata_props, ok);
  }
}

static void graph_in(ox_arena *a, ox_graph *d, const ox_graph *s, bool *ok, int depth);
static void node_in(ox_arena *a, ox_node *d, const ox_node *s, bool *ok, int depth);

static void attr_in(ox_arena *a, ox_attr *d, const ox_attr *s, bool *ok, int depth) {
  d->name = str(a, s->name, ok);
  d->ref_attr_name = str(a, s->ref_attr_name, ok);
  d->doc_string = str(a, s->doc_string, ok);
  d->s = bytes(a, s->s, ok);
  own(a, &d->unknown, ok);
  if (s->t && (d->t = obj_dup(a, s->t, sizeof *s->t, ok))) tensor_in(a, d->t, s->t, ok);
  if (s->g && (d->g = obj_dup(a, s->g, sizeof *s->g, ok))) graph_in(a, d->g, s->g, ok, depth + 1);
  if (s->sparse_tensor &&
      (d->sparse_tensor = obj_dup(a, s->sparse_tensor, sizeof *s->sparse_tensor, ok)))
    sparse_in(a, d->sparse_tensor, s->sparse_tensor, ok);
  if (s->tp) d->tp = type_dup(a, s->tp, ok, 0);
  DUP_ARR(a, d, s, floats, ok);
  DUP_ARR(a, d, s, ints, ok);
  DUP_ARR(a, d, s, strings, ok);
  for (size_t i = 0; d->strings && i < s->n_strings; i++)
    d->strings[i] = bytes(a, s->strings[i], ok);
  DUP_ARR(a, d, s, tensors, ok);
  for (size_t i = 0; d->tensors && i < s->n_tensors; i++)
    tensor_in(a, &d->tensors[i], &s->tensors[i], ok);
  DUP_ARR(a, d, s, graphs, ok);
  for (size_t i = 0; d->graphs && i < s->n_graphs; i++)
    graph_in(a, &d->graphs[i], &s->graphs[i], ok, depth + 1);
  DUP_ARR(a, d, s, sparse_tensors, ok);
  for (size_t i = 0; d->sparse_tensors && i < s->n_sparse_tensors; i++)
    sparse_in(a, &d->sparse_tensors[i], &s->sparse_tensors[i], ok);
  DUP_ARR(a, d, s, type_protos, ok);
  for (size_t i = 0; d->type_protos && i < s->n_type_protos; i++)
    type_in(a, &d->type_protos[i], &s->type_protos[i], ok, 0);
}

static void device_configs(ox_arena *a, ox_node *d, const ox_node *s, bool *ok) {
  DUP_ARR(a, d, s, device_configurations, ok);
  for (size_t i = 0; d->device_configurations && i < s->n_device_configurations; i++) {
    ox_node_device_config *dc = &d->device_configurations[i];
    const ox_node_device_config *sc = &s->device_configurations[i];
    dc->configuration_id = str(a, sc->configuration_id, ok);
    own(a, &dc->unknown, ok);
    DUP_ARR(a, dc, sc, sharding_spec, ok);
    for (size_t j = 0; dc->sharding_spec && j < sc->n_sharding_spec; j++) {
      ox_sharding_spec *ds = &dc->sharding_spec[j];
      const ox_sharding_spec *ss = &sc->sharding_spec[j];
      ds->tensor_name = str(a, ss->tensor_name, ok);
      own(a, &ds->unknown, ok);
      DUP_ARR(a, ds, ss, device, ok);
      DUP_ARR(a, ds, ss, index_to_device_group_map, ok);
      for (size_t k = 0; ds->index_to_device_group_map && k < ss->n_index_to_device_group_map;
           k++) {
        DUP_ARR(a, &ds->index_to_device_group_map[k], &ss->index_to_device_group_map[k], value, ok);
        own(a, &ds->index_to_device_group_map[k].unknown, ok);
      }
      DUP_ARR(a, ds, ss, sharded_dim, ok);
      for (size_t k = 0; ds->sharded_dim && k < ss->n_sharded_dim; k++) {
        ox_sharded_dim *dd = &ds->sharded_dim[k];
        DUP_ARR(a, dd, &ss->sharded_dim[k], simple_sharding, ok);
        own(a, &dd->unknown, ok);
        for (size_t l = 0; dd->simple_sharding && l < dd->n_simple_sharding; l++) {
          dd->simple_sharding[l].dim_param =
              str(a, ss->sharded_dim[k].simple_sharding[l].dim_param, ok);
          own(a, &dd->simple_sharding[l].unknown, ok);
        }
      }
    }
  }
}

static void node_in(ox_arena *a, ox_node *d, const ox_node *s, bool *ok, int depth) {
  strs(a, &d->input, s->input, s->n_input, ok);
  strs(a, &d->output, s->output, s->n_output, ok);
  d->name = str(a, s->name, ok);
  d->op_type = str(a, s->op_type, ok);
  d->domain = str(a, s->domain, ok);
  d->overload = str(a, s->overload, ok);
  own(a, &d->unknown, ok);
  d->doc_string = str(a, s->doc_string, ok);
  DUP_ARR(a, d, s, attribute, ok);
  for (size_t i = 0; d->attribute && i < s->n_attribute; i++)
    attr_in(a, &d->attribute[i], &s->attribute[i], ok, depth);
  pairs(a, &d->metadata_props, s->metadata_props, s->n_metadata_props, ok);
  device_configs(a, d, s, ok);
}

static void graph_in(ox_arena *a, ox_graph *d, const ox_graph *s, bool *ok, int depth) {
  if (depth > 256) {
    *ok = false;
    return;
  }
  DUP_ARR(a, d, s, node, ok);
  for (size_t i = 0; d->node && i < s->n_node; i++) node_in(a, &d->node[i], &s->node[i], ok, depth);
  d->name = str(a, s->name, ok);
  d->doc_string = str(a, s->doc_string, ok);
  own(a, &d->unknown, ok);
  DUP_ARR(a, d, s, initializer, ok);
  for (size_t i = 0; d->initializer && i < s->n_initializer; i++)
    tensor_in(a, &d->initializer[i], &s->initializer[i], ok);
  DUP_ARR(a, d, s, sparse_initializer, ok);
  for (size_t i = 0; d->sparse_initializer && i < s->n_sparse_initializer; i++)
    sparse_in(a, &d->sparse_initializer[i], &s->sparse_initializer[i], ok);
  value_infos(a, &d->input, s->input, s->n_input, ok);
  value_infos(a, &d->output, s->output, s->n_output, ok);
  value_infos(a, &d->value_info, s->value_info, s->n_value_info, ok);
  DUP_ARR(a, d, s, quantization_annotation, ok);
  for (size_t i = 0; d->quantization_annotation && i < s->n_quantization_annotation; i++) {
    ox_tensor_annotation *ta = &d->quantization_annotation[i];
    const ox_tensor_annotation *sa = &s->quantization_annotation[i];
    ta->tensor_name = str(a, sa->tensor_name, ok);
    own(a, &ta->unknown, ok);
    pairs(a, &ta->quant_parameter_tensor_names, sa->quant_parameter_tensor_names,
          sa->n_quant_parameter_tensor_names, ok);
  }
  pairs(a, &d->metadata_props, s->metadata_props, s->n_metadata_props, ok);
}

ox_type *ox_type_clone(ox_arena *a, const ox_type *t) {
  bool ok = true;
  ox_type *d = t ? type_dup(a, t, &ok, 0) : NULL;
  return ok ? d : NULL;
}

ox_tensor *ox_tensor_clone(ox_arena *a, const ox_tensor *t) {
  bool ok = true;
  ox_tensor *d = t ? obj_dup(a, t, sizeof *t, &ok) : NULL;
  if (d) tensor_in(a, d, t, &ok);
  return ok ? d : NULL;
}

ox_graph *ox_graph_clone(ox_arena *a, const ox_graph *g) {
  bool ok = true;
  ox_graph *d = g ? obj_dup(a, g, sizeof *g, &ok) : NULL;
  if (d) graph_in(a, d, g, &ok, 0);
  return ok ? d : NULL;
}

int ox_attr_copy(ox_arena *a, ox_attr *dst, const ox_attr *src) {
  bool ok = true;
  *dst = *src;
  attr_in(a, dst, src, &ok, 0);
  return ok ? OX_OK : OX_ENOMEM;
}

int ox_node_copy(ox_arena *a, ox_node *dst, const ox_node *src) {
  bool ok = true;
  *dst = *src;
  node_in(a, dst, src, &ok, 0);
  return ok ? OX_OK : OX_ENOMEM;
}
