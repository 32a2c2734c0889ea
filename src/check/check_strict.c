/* check_strict.c - whole-model rules of --strict that the reference checker
 * does not apply (IR.md and onnx.proto state them; notes §2.11):
 *
 *  - graph names are unique within the model (IR.md, "Names Within a Graph":
 *    the Graph namespace), main graph, subgraphs, training graphs;
 *  - every TypeProto of a signature (graph inputs, outputs, value_info,
 *    function value_info) has an element type that is a DataType value other
 *    than UNDEFINED, and map keys are integral or string (onnx.proto:
 *    "key_type ... MUST be an integral or string type");
 *  - a call of a model-local function passes no more inputs and outputs than
 *    the function declares and only attributes it declares.
 *
 * Rules that need the lexical scope (shadowing, ref_attr_name) are in
 * check.c. */
#include <string.h>

#include "check_impl.h"

/* ------------------------------------------------------------ types */

static bool key_type_ok(int32_t t) {
  switch (t) {
    case OX_INT8:
    case OX_INT16:
    case OX_INT32:
    case OX_INT64:
    case OX_UINT8:
    case OX_UINT16:
    case OX_UINT32:
    case OX_UINT64:
    case OX_STRING:
      return true;
    default:
      return false;
  }
}

static void strict_type(ox_ck *c, const char *value, const ox_type *t, int depth) {
  if (!t || depth > 64) return;
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (t->has_elem_type && (t->elem_type == OX_UNDEFINED || !ox_dtype_get(t->elem_type)))
        ox_ck_fail(c, "strict-elem-type",
                   "value '%s': element type %d is %s", value, (int)t->elem_type,
                   t->elem_type == OX_UNDEFINED ? "UNDEFINED" : "not a TensorProto.DataType");
      break;
    case OX_TYPE_MAP:
      if (t->has_elem_type && !key_type_ok(t->elem_type))
        ox_ck_fail(c, "strict-map-key",
                   "value '%s': map key type %d is not an integral or string type", value,
                   (int)t->elem_type);
      strict_type(c, value, t->elem, depth + 1);
      break;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      strict_type(c, value, t->elem, depth + 1);
      break;
    default:
      break;
  }
}

static void strict_vis(ox_ck *c, const char *what, const ox_value_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!v[i].type) continue;
    size_t p = ox_ck_push(c, "%s '%s'", what, ox_ck_str(v[i].name));
    strict_type(c, ox_ck_str(v[i].name), v[i].type, 0);
    ox_ck_pop(c, p);
  }
}

/* ------------------------------------------------------ function calls */

static const ox_function *local_function(const ox_model_proto *mp, const ox_node *n) {
  const char *nd = n->domain ? n->domain : "";
  const char *no = n->overload ? n->overload : "";
  for (size_t i = 0; i < mp->n_functions; i++) {
    const ox_function *f = &mp->functions[i];
    const char *fd = f->domain ? f->domain : "";
    const char *fo = f->overload ? f->overload : "";
    if (f->name && n->op_type && strcmp(f->name, n->op_type) == 0 && strcmp(fd, nd) == 0 &&
        strcmp(fo, no) == 0)
      return f;
  }
  return NULL;
}

static bool function_declares(const ox_function *f, const char *attr) {
  for (size_t i = 0; i < f->n_attribute; i++)
    if (f->attribute[i] && strcmp(f->attribute[i], attr) == 0) return true;
  for (size_t i = 0; i < f->n_attribute_proto; i++)
    if (f->attribute_proto[i].name && strcmp(f->attribute_proto[i].name, attr) == 0) return true;
  return false;
}

static void strict_call(ox_ck *c, const ox_node *n) {
  const ox_function *f = local_function(c->mp, n);
  if (!f) return;
  if (n->n_input > f->n_input)
    ox_ck_fail(c, "strict-function-call", "function '%s' takes %zu inputs; the call passes %zu",
               f->name, f->n_input, n->n_input);
  if (n->n_output > f->n_output)
    ox_ck_fail(c, "strict-function-call",
               "function '%s' has %zu outputs; the call asks for %zu", f->name, f->n_output,
               n->n_output);
  for (size_t i = 0; i < n->n_attribute; i++) {
    const char *a = n->attribute[i].name;
    if (a && !function_declares(f, a))
      ox_ck_fail(c, "strict-function-call",
                 "function '%s' declares no attribute '%s'", f->name, a);
  }
}

/* ------------------------------------------------------------ walking */

typedef struct walk {
  ox_ck *c;
  ox_map graph_names; /* name -> 1 */
} walk;

static void walk_nodes(walk *w, const ox_node *nodes, size_t n, int depth);

static void walk_graph(walk *w, const ox_graph *g, int depth) {
  ox_ck *c = w->c;
  if (!g || depth > 64) return;
  size_t p = ox_ck_push(c, "graph '%s'", ox_ck_str(g->name));
  if (g->name && g->name[0]) {
    uintptr_t v;
    if (ox_map_get(&w->graph_names, g->name, &v))
      ox_ck_fail(c, "strict-graph-name",
                 "graph name '%s' is used by more than one graph of the model", g->name);
    else if (ox_map_put(&w->graph_names, g->name, 1) != OX_OK)
      c->oom = true;
  }
  strict_vis(c, "input", g->input, g->n_input);
  strict_vis(c, "output", g->output, g->n_output);
  strict_vis(c, "value_info", g->value_info, g->n_value_info);
  walk_nodes(w, g->node, g->n_node, depth);
  ox_ck_pop(c, p);
}

static void walk_nodes(walk *w, const ox_node *nodes, size_t n, int depth) {
  ox_ck *c = w->c;
  for (size_t i = 0; i < n; i++) {
    const ox_node *nd = &nodes[i];
    size_t p = nd->name && nd->name[0]
                   ? ox_ck_push(c, "node '%s' (%s)", nd->name, ox_ck_str(nd->op_type))
                   : ox_ck_push(c, "node #%zu (%s)", i, ox_ck_str(nd->op_type));
    strict_call(c, nd);
    for (size_t k = 0; k < nd->n_attribute; k++) {
      const ox_attr *a = &nd->attribute[k];
      if (a->g) walk_graph(w, a->g, depth + 1);
      for (size_t j = 0; j < a->n_graphs; j++) walk_graph(w, &a->graphs[j], depth + 1);
    }
    ox_ck_pop(c, p);
  }
}

void ox_ck_strict_model(ox_ck *c, const ox_model_proto *mp) {
  walk w = {.c = c};
  ox_map_init(&w.graph_names);
  walk_graph(&w, mp->graph, 0);
  for (size_t t = 0; t < mp->n_training_info; t++) {
    const ox_training_info *ti = &mp->training_info[t];
    size_t p = ox_ck_push(c, "training_info %zu", t);
    /* an initialization graph without a name or nodes is "absent" */
    if (ti->initialization && (ti->initialization->n_node || ti->initialization->name))
      walk_graph(&w, ti->initialization, 0);
    walk_graph(&w, ti->algorithm, 0);
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < mp->n_functions; i++) {
    const ox_function *f = &mp->functions[i];
    size_t p = ox_ck_push(c, "function '%s'", ox_ck_str(f->name));
    strict_vis(c, "value_info", f->value_info, f->n_value_info);
    walk_nodes(&w, f->node, f->n_node, 0);
    ox_ck_pop(c, p);
  }
  ox_map_free(&w.graph_names);
}
