/* optimize.c - the graph-pass part of include/onnxc.h: the table of passes
 * (src/opt/passes.c) as users see it, and onnxc_model_optimize, the graph a
 * session would run written out as a model. */
#include <onnxc.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/registry.h"
#include "../opt/opt.h"
#include "../proto/proto.h"
#include "../schema/onnxc_ops.h"
#include "api_impl.h"

static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

size_t onnxc_pass_count(void) { return ox_opt_pass_count(); }

const char *onnxc_pass_name(size_t i) {
  const ox_opt_pass *p = ox_opt_pass_at(i);
  return p ? p->name : NULL;
}

const char *onnxc_pass_description(size_t i) {
  const ox_opt_pass *p = ox_opt_pass_at(i);
  return p ? p->description : NULL;
}

int onnxc_pass_level(size_t i) {
  const ox_opt_pass *p = ox_opt_pass_at(i);
  return p ? p->level : 0;
}

int onnxc_pass_default_on(size_t i) {
  const ox_opt_pass *p = ox_opt_pass_at(i);
  return p && p->default_on;
}

/* g's value_info without the entries of values no longer in the graph (the
 * passes fuse values away, e.g. the residual Add a LayerNormFused takes in,
 * and check --strict rejects value_info that names nothing): a copy in *out
 * when some go; false when all stay or on OOM (g is then written as it is).
 * kept receives the array to free. */
static bool drop_stale_value_info(const ox_graph *g, ox_graph *out, ox_value_info **kept_out) {
  ox_map live;
  ox_map_init(&live);
  bool ok = true;
  for (size_t i = 0; i < g->n_node && ok; i++)
    for (size_t o = 0; o < g->node[i].n_output && ok; o++)
      if (g->node[i].output[o]) ok = ox_map_put(&live, g->node[i].output[o], 1) == OX_OK;
  for (size_t i = 0; i < g->n_input && ok; i++)
    if (g->input[i].name) ok = ox_map_put(&live, g->input[i].name, 1) == OX_OK;
  for (size_t i = 0; i < g->n_initializer && ok; i++)
    if (g->initializer[i].name) ok = ox_map_put(&live, g->initializer[i].name, 1) == OX_OK;
  size_t n = 0;
  uintptr_t v;
  for (size_t i = 0; i < g->n_value_info && ok; i++)
    n += g->value_info[i].name && ox_map_get(&live, g->value_info[i].name, &v);
  ox_value_info *kept = ok && n < g->n_value_info ? calloc(n + 1, sizeof *kept) : NULL;
  if (kept) {
    *out = *g;
    out->value_info = kept;
    out->n_value_info = 0;
    for (size_t i = 0; i < g->n_value_info; i++)
      if (g->value_info[i].name && ox_map_get(&live, g->value_info[i].name, &v))
        kept[out->n_value_info++] = g->value_info[i];
  }
  ox_map_free(&live);
  *kept_out = kept;
  return kept != NULL;
}

/* m's proto with the session's graph and the ai.onnxc import, encoded */
static int encode_optimized(const ox_model *m, const ox_graph *g, ox_buf *buf, ox_err *e) {
  const ox_model_proto *orig = m->proto;
  ox_model_proto copy = *orig;
  bool has = false;
  for (size_t i = 0; i < orig->n_opset_import; i++)
    has = has || (orig->opset_import[i].domain &&
                  strcmp(orig->opset_import[i].domain, OX_ONNXC_DOMAIN) == 0);
  ox_opset *imp = calloc(orig->n_opset_import + 1, sizeof *imp);
  if (!imp) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (orig->n_opset_import) memcpy(imp, orig->opset_import, orig->n_opset_import * sizeof *imp);
  copy.opset_import = imp;
  if (!has) {
    imp[copy.n_opset_import].domain = (char *)OX_ONNXC_DOMAIN;
    imp[copy.n_opset_import].version = OX_ONNXC_OPSET;
    imp[copy.n_opset_import].has_version = true;
    copy.n_opset_import++;
  }
  copy.graph = (ox_graph *)g;
  ox_graph pruned;
  ox_value_info *kept = NULL;
  if (g != orig->graph && drop_stale_value_info(g, &pruned, &kept)) copy.graph = &pruned;
  /* before IR version 4 every initializer must also be a graph input; the
   * folded weights are not: the same graph is valid from version 4 on (the
   * original initializers stay inputs, overridable as before) */
  if (g != orig->graph && copy.has_ir_version && copy.ir_version < 4) copy.ir_version = 4;
  int rc = ox_pb_encode_model(&copy, buf, e);
  free(kept);
  free(imp);
  return rc;
}

onnxc_status onnxc_model_optimize(const onnxc_model *model, const onnxc_optimize_options *opts,
                                  onnxc_model **out, onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  *out = NULL;
  if (!model) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "model is NULL");
  const ox_model *m = (const ox_model *)model;
  ox_session_opts o = {.kernels = &ox_registry_builtin};
  o.optimization_level = opts && opts->optimization_level > 0 ? opts->optimization_level : 1;
  o.threads = 1;
  if (opts) {
    o.disabled_passes = opts->disabled_passes;
    o.n_disabled_passes = opts->n_disabled_passes;
    o.quant_fusion_off = opts->no_quant_fusion != 0;
    o.low_bit_int8 = opts->low_bit_int8 != 0;
  }
  /* a session runs the passes exactly as it would for a run (functions
   * expanded first, the same constants) */
  ox_session *s = NULL;
  int rc = ox_session_create(m, &o, &s, E(err));
  if (rc) return (onnxc_status)rc;
  ox_buf buf = {0};
  rc = encode_optimized(m, ox_session_graph(s), &buf, E(err));
  ox_session_free(s);
  ox_model *nm = NULL;
  ox_load_opts lo = {0};
  if (!rc) rc = ox_model_load_buffer(buf.data, buf.size, m->dir, &lo, &nm, E(err));
  if (rc) {
    ox_buf_free(&buf);
    return (onnxc_status)rc;
  }
  nm->owned = buf.data; /* the new model's tensors point into the buffer */
  *out = (onnxc_model *)nm;
  return ONNXC_OK;
}
