/* graph.c - reading a model's graphs, nodes, attributes, functions and
 * training info through include/onnxc.h (onnxc_graph is an ox_graph,
 * onnxc_node an ox_node, onnxc_function an ox_function, all borrowed from
 * their model): what tools such as `onnxc info`, `dot` and `infer` need to
 * walk a model. */
#include <onnxc.h>
#include <string.h>

#include "../ir/ir.h"

#define G(g) ((const ox_graph *)(g))
#define N(n) ((const ox_node *)(n))
#define F(f) ((const ox_function *)(f))

static const char *str(const char *s) { return s ? s : ""; }
static const ox_model_proto *P(const onnxc_model *m) {
  return m ? ((const ox_model *)m)->proto : NULL;
}

const onnxc_graph *onnxc_model_graph(const onnxc_model *m) {
  return P(m) ? (const onnxc_graph *)P(m)->graph : NULL;
}

const char *onnxc_graph_name(const onnxc_graph *g) { return g ? str(G(g)->name) : ""; }

/* the value list `which` of g, its length in *n */
static const ox_value_info *values(const onnxc_graph *g, onnxc_graph_values which, size_t *n) {
  *n = 0;
  if (!g) return NULL;
  switch (which) {
    case ONNXC_GRAPH_INPUTS: *n = G(g)->n_input; return G(g)->input;
    case ONNXC_GRAPH_VALUE_INFO: *n = G(g)->n_value_info; return G(g)->value_info;
    case ONNXC_GRAPH_OUTPUTS: *n = G(g)->n_output; return G(g)->output;
  }
  return NULL;
}

size_t onnxc_graph_value_count(const onnxc_graph *g, onnxc_graph_values which) {
  size_t n;
  values(g, which, &n);
  return n;
}

const char *onnxc_graph_value_name(const onnxc_graph *g, onnxc_graph_values which, size_t i) {
  size_t n;
  const ox_value_info *v = values(g, which, &n);
  return i < n ? str(v[i].name) : NULL;
}

const onnxc_type *onnxc_graph_value_type(const onnxc_graph *g, onnxc_graph_values which,
                                         size_t i) {
  size_t n;
  const ox_value_info *v = values(g, which, &n);
  return i < n ? (const onnxc_type *)v[i].type : NULL;
}

size_t onnxc_graph_node_count(const onnxc_graph *g) { return g ? G(g)->n_node : 0; }

const onnxc_node *onnxc_graph_node(const onnxc_graph *g, size_t i) {
  return g && i < G(g)->n_node ? (const onnxc_node *)&G(g)->node[i] : NULL;
}

const char *onnxc_node_name(const onnxc_node *n) { return n ? str(N(n)->name) : ""; }
const char *onnxc_node_op_type(const onnxc_node *n) { return n ? str(N(n)->op_type) : ""; }
const char *onnxc_node_domain(const onnxc_node *n) { return n ? str(N(n)->domain) : ""; }
const char *onnxc_node_overload(const onnxc_node *n) { return n ? str(N(n)->overload) : ""; }

size_t onnxc_node_input_count(const onnxc_node *n) { return n ? N(n)->n_input : 0; }
const char *onnxc_node_input(const onnxc_node *n, size_t i) {
  return n && i < N(n)->n_input ? str(N(n)->input[i]) : NULL;
}
size_t onnxc_node_output_count(const onnxc_node *n) { return n ? N(n)->n_output : 0; }
const char *onnxc_node_output(const onnxc_node *n, size_t i) {
  return n && i < N(n)->n_output ? str(N(n)->output[i]) : NULL;
}

/* ------------------------------------------------------------ attributes */

size_t onnxc_node_attr_count(const onnxc_node *n) { return n ? N(n)->n_attribute : 0; }

static const ox_attr *attr(const onnxc_node *n, size_t i) {
  return n && i < N(n)->n_attribute ? &N(n)->attribute[i] : NULL;
}

onnxc_attr_type onnxc_node_attr_type(const onnxc_node *n, size_t i) {
  const ox_attr *a = attr(n, i);
  return a ? (onnxc_attr_type)a->type : ONNXC_ATTR_UNDEFINED;
}

size_t onnxc_node_attr_size(const onnxc_node *n, size_t i) {
  const ox_attr *a = attr(n, i);
  if (!a) return 0;
  switch (a->type) {
    case OX_ATTR_FLOATS: return a->n_floats;
    case OX_ATTR_INTS: return a->n_ints;
    case OX_ATTR_STRINGS: return a->n_strings;
    case OX_ATTR_TENSORS: return a->n_tensors;
    case OX_ATTR_GRAPHS: return a->n_graphs;
    case OX_ATTR_SPARSE_TENSORS: return a->n_sparse_tensors;
    case OX_ATTR_TYPE_PROTOS: return a->n_type_protos;
    case OX_ATTR_UNDEFINED: return 0;
    default: return 1;
  }
}

float onnxc_node_attr_float(const onnxc_node *n, size_t i, size_t j) {
  const ox_attr *a = attr(n, i);
  if (a && a->type == OX_ATTR_FLOAT && j == 0) return a->f;
  return a && a->type == OX_ATTR_FLOATS && j < a->n_floats ? a->floats[j] : 0.0f;
}

int64_t onnxc_node_attr_int(const onnxc_node *n, size_t i, size_t j) {
  const ox_attr *a = attr(n, i);
  if (a && a->type == OX_ATTR_INT && j == 0) return a->i;
  return a && a->type == OX_ATTR_INTS && j < a->n_ints ? a->ints[j] : 0;
}

const char *onnxc_node_attr_string(const onnxc_node *n, size_t i, size_t j, size_t *len) {
  const ox_attr *a = attr(n, i);
  const ox_bytes *b = NULL;
  if (a && a->type == OX_ATTR_STRING && j == 0) b = &a->s;
  if (a && a->type == OX_ATTR_STRINGS && j < a->n_strings) b = &a->strings[j];
  if (len) *len = b ? b->size : 0;
  /* an empty string may have no storage: still a string */
  return b ? (b->data ? (const char *)b->data : "") : NULL;
}

const onnxc_tensor_proto *onnxc_node_attr_tensor(const onnxc_node *n, size_t i, size_t j) {
  const ox_attr *a = attr(n, i);
  if (a && a->type == OX_ATTR_TENSOR && j == 0) return (const onnxc_tensor_proto *)a->t;
  return a && a->type == OX_ATTR_TENSORS && j < a->n_tensors
             ? (const onnxc_tensor_proto *)&a->tensors[j]
             : NULL;
}

size_t onnxc_node_attr_graph_count(const onnxc_node *n, size_t i) {
  const ox_attr *a = attr(n, i);
  return a ? (a->g ? 1 : 0) + a->n_graphs : 0;
}

const onnxc_graph *onnxc_node_attr_graph_at(const onnxc_node *n, size_t i, size_t j) {
  const ox_attr *a = attr(n, i);
  if (!a) return NULL;
  if (a->g && j-- == 0) return (const onnxc_graph *)a->g;
  return j < a->n_graphs ? (const onnxc_graph *)&a->graphs[j] : NULL;
}

const char *onnxc_node_attr_name(const onnxc_node *n, size_t i) {
  return n && i < N(n)->n_attribute ? str(N(n)->attribute[i].name) : NULL;
}

const onnxc_graph *onnxc_node_attr_graph(const onnxc_node *n, size_t i) {
  return n && i < N(n)->n_attribute ? (const onnxc_graph *)N(n)->attribute[i].g : NULL;
}

int onnxc_graph_has_initializer(const onnxc_graph *g, const char *name) {
  for (size_t i = 0; g && name && i < G(g)->n_initializer; i++)
    if (G(g)->initializer[i].name && !strcmp(G(g)->initializer[i].name, name)) return 1;
  return 0;
}

/* ------------------------------------------------------------ functions */

size_t onnxc_model_function_count(const onnxc_model *m) { return P(m) ? P(m)->n_functions : 0; }

const onnxc_function *onnxc_model_function(const onnxc_model *m, size_t i) {
  return i < onnxc_model_function_count(m) ? (const onnxc_function *)&P(m)->functions[i] : NULL;
}

const char *onnxc_function_name(const onnxc_function *f) { return f ? str(F(f)->name) : ""; }
const char *onnxc_function_domain(const onnxc_function *f) { return f ? str(F(f)->domain) : ""; }
const char *onnxc_function_overload(const onnxc_function *f) {
  return f ? str(F(f)->overload) : "";
}
size_t onnxc_function_input_count(const onnxc_function *f) { return f ? F(f)->n_input : 0; }
const char *onnxc_function_input(const onnxc_function *f, size_t i) {
  return f && i < F(f)->n_input ? str(F(f)->input[i]) : NULL;
}
size_t onnxc_function_output_count(const onnxc_function *f) { return f ? F(f)->n_output : 0; }
const char *onnxc_function_output(const onnxc_function *f, size_t i) {
  return f && i < F(f)->n_output ? str(F(f)->output[i]) : NULL;
}
size_t onnxc_function_node_count(const onnxc_function *f) { return f ? F(f)->n_node : 0; }
const onnxc_node *onnxc_function_node(const onnxc_function *f, size_t i) {
  return f && i < F(f)->n_node ? (const onnxc_node *)&F(f)->node[i] : NULL;
}
size_t onnxc_function_value_info_count(const onnxc_function *f) {
  return f ? F(f)->n_value_info : 0;
}
const char *onnxc_function_value_info_name(const onnxc_function *f, size_t i) {
  return f && i < F(f)->n_value_info ? str(F(f)->value_info[i].name) : NULL;
}
const onnxc_type *onnxc_function_value_info_type(const onnxc_function *f, size_t i) {
  return f && i < F(f)->n_value_info ? (const onnxc_type *)F(f)->value_info[i].type : NULL;
}

/* ------------------------------------------------------------ training info */

size_t onnxc_model_training_info_count(const onnxc_model *m) {
  return P(m) ? P(m)->n_training_info : 0;
}

const onnxc_graph *onnxc_model_training_algorithm(const onnxc_model *m, size_t i) {
  if (i >= onnxc_model_training_info_count(m)) return NULL;
  return (const onnxc_graph *)P(m)->training_info[i].algorithm;
}

const onnxc_graph *onnxc_model_training_initialization(const onnxc_model *m, size_t i) {
  if (i >= onnxc_model_training_info_count(m)) return NULL;
  return (const onnxc_graph *)P(m)->training_info[i].initialization;
}

/* the binding list `which` of entry i, its length in *n */
static const ox_str_pair *bindings(const onnxc_model *m, size_t i, onnxc_training_bindings which,
                                   size_t *n) {
  *n = 0;
  if (i >= onnxc_model_training_info_count(m)) return NULL;
  const ox_training_info *t = &P(m)->training_info[i];
  switch (which) {
    case ONNXC_TRAINING_INITIALIZATION_BINDING:
      *n = t->n_initialization_binding;
      return t->initialization_binding;
    case ONNXC_TRAINING_UPDATE_BINDING: *n = t->n_update_binding; return t->update_binding;
  }
  return NULL;
}

size_t onnxc_model_training_binding_count(const onnxc_model *m, size_t i,
                                          onnxc_training_bindings which) {
  size_t n;
  bindings(m, i, which, &n);
  return n;
}

const char *onnxc_model_training_binding_key(const onnxc_model *m, size_t i,
                                             onnxc_training_bindings which, size_t j) {
  size_t n;
  const ox_str_pair *b = bindings(m, i, which, &n);
  return j < n ? str(b[j].key) : NULL;
}

const char *onnxc_model_training_binding_value(const onnxc_model *m, size_t i,
                                               onnxc_training_bindings which, size_t j) {
  size_t n;
  const ox_str_pair *b = bindings(m, i, which, &n);
  return j < n ? str(b[j].value) : NULL;
}
