/* graph.c - reading a model's graphs and nodes through include/onnxc.h
 * (onnxc_graph is an ox_graph, onnxc_node an ox_node, both borrowed from
 * their model): what tools such as `onnxc infer` need to walk a model. */
#include <onnxc.h>
#include <string.h>

#include "../ir/ir.h"

#define G(g) ((const ox_graph *)(g))
#define N(n) ((const ox_node *)(n))

static const char *str(const char *s) { return s ? s : ""; }

const onnxc_graph *onnxc_model_graph(const onnxc_model *m) {
  const ox_model *x = (const ox_model *)m;
  return x && x->proto ? (const onnxc_graph *)x->proto->graph : NULL;
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
size_t onnxc_node_attr_count(const onnxc_node *n) { return n ? N(n)->n_attribute : 0; }

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

size_t onnxc_model_training_info_count(const onnxc_model *m) {
  const ox_model *x = (const ox_model *)m;
  return x && x->proto ? x->proto->n_training_info : 0;
}

const onnxc_graph *onnxc_model_training_algorithm(const onnxc_model *m, size_t i) {
  if (i >= onnxc_model_training_info_count(m)) return NULL;
  return (const onnxc_graph *)((const ox_model *)m)->proto->training_info[i].algorithm;
}
