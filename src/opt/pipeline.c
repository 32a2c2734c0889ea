/* pipeline.c - ox_opt_run: the enabled passes of the table over a graph,
 * and the new graph they make.
 *
 * The graph is never modified: passes edit a working copy of its node list
 * (graph_view.c), and when anything changed a new graph is built in the
 * caller's arena: the kept nodes in order (a replacement in its node's
 * place), g's initializers plus those passes made, everything else shared
 * with g. */
#include <string.h>

#include "graph_view.h"
#include "opt.h"

/* the opset each node's domain imports (a default-domain node of a model
 * importing nothing counts as opset 1) */
static int64_t *node_opsets(const ox_opt_request *r, ox_arena *a, const ox_graph *g) {
  int64_t *ops = ox_arena_calloc(a, g->n_node + 1, sizeof *ops);
  if (!ops) return NULL;
  for (size_t i = 0; i < g->n_node; i++) {
    if (r->node_opsets) {
      ops[i] = r->node_opsets[i];
      continue;
    }
    const ox_node *n = &g->node[i];
    const char *dom = n->domain ? n->domain : "";
    int64_t v = ox_opset_version(r->imports, r->n_imports, dom);
    if (v < 0 && ox_is_default_domain(dom) && r->n_imports == 0) v = 1;
    ops[i] = v;
  }
  return ops;
}

static int run_passes(const ox_opt_request *r, ox_opt_host *h, ox_pass_view *v) {
  for (size_t p = 0; p < ox_opt_pass_count(); p++) {
    const ox_opt_pass *pass = ox_opt_pass_at(p);
    if (!pass->run || !ox_opt_pass_enabled(r, pass)) continue;
    int rc = pass->run(v);
    if (!rc && ox_opt_host_oom(h))
      rc = ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
    if (rc) return rc;
  }
  return OX_OK;
}

/* the new graph: kept nodes, replacements, initializers passes made */
static int build(ox_arena *a, const ox_graph *g, const ox_pass_view *v, const int64_t *opsets,
                 const ox_tensor *inits, size_t n_inits, const ox_value_info *ins, size_t n_ins,
                 const ox_graph **out, const int64_t **out_opsets, ox_err *e) {
  size_t kept = 0;
  bool changed = n_inits > 0 || n_ins > 0;
  for (size_t i = 0; i < g->n_node; i++) {
    kept += !v->drop[i];
    changed = changed || v->drop[i] || v->repl[i];
  }
  if (!changed) return OX_OK;
  ox_graph *ng = ox_arena_calloc(a, 1, sizeof *ng);
  ox_node *nodes = ox_arena_calloc(a, kept + 1, sizeof *nodes);
  int64_t *nops = ox_arena_calloc(a, kept + 1, sizeof *nops);
  ox_tensor *ini =
      n_inits ? ox_arena_calloc(a, g->n_initializer + n_inits, sizeof *ini) : NULL;
  ox_value_info *gin = n_ins ? ox_arena_calloc(a, g->n_input + n_ins, sizeof *gin) : NULL;
  if (!ng || !nodes || !nops || (n_inits && !ini) || (n_ins && !gin))
    return ox_err_set(e, OX_ENOMEM, "out of memory fusing the graph");
  *ng = *g;
  size_t k = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    if (v->drop[i]) continue;
    nodes[k] = v->repl[i] ? *v->repl[i] : v->nodes[i];
    nops[k++] = v->repl[i] ? 1 : opsets[i];
  }
  ng->node = nodes;
  ng->n_node = kept;
  if (n_inits) {
    if (g->n_initializer) memcpy(ini, g->initializer, g->n_initializer * sizeof *ini);
    memcpy(ini + g->n_initializer, inits, n_inits * sizeof *ini);
    ng->initializer = ini;
    ng->n_initializer = g->n_initializer + n_inits;
  }
  if (n_ins) { /* after the graph's own: their indices stay */
    if (g->n_input) memcpy(gin, g->input, g->n_input * sizeof *gin);
    memcpy(gin + g->n_input, ins, n_ins * sizeof *gin);
    ng->input = gin;
    ng->n_input = g->n_input + n_ins;
  }
  *out = ng;
  if (out_opsets) *out_opsets = nops;
  return OX_OK;
}

int ox_opt_run(const ox_opt_request *r, ox_arena *a, const ox_graph *g, const ox_graph **out,
               const int64_t **out_opsets, ox_err *e) {
  *out = g;
  if (out_opsets) *out_opsets = NULL;
  if (ox_opt_check_names(r->disabled, r->n_disabled, e)) return e->code;
  if (r->level < 1 || g->n_node < 2) return OX_OK;
  int64_t *opsets = node_opsets(r, a, g);
  if (!opsets) return ox_err_set(e, OX_ENOMEM, "out of memory fusing the graph");
  ox_pass_view v;
  ox_opt_host *h = ox_opt_host_new(a, g, opsets, r->inputs_const, r->low_bit_int8, &v, e);
  if (!h) return e->code;
  int rc = run_passes(r, h, &v);
  if (!rc) {
    size_t n_inits, n_ins;
    const ox_tensor *inits = ox_opt_host_inits(h, &n_inits);
    const ox_value_info *ins = ox_opt_host_new_inputs(h, &n_ins);
    rc = build(a, g, &v, opsets, inits, n_inits, ins, n_ins, out, out_opsets, e);
  }
  ox_opt_host_free(h);
  return rc;
}
