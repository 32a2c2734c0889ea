/* custom.c - custom operators (include/onnxc.h "custom operators"): a
 * registry of a caller's kernels, each wrapped as an ox_kernel_def that the
 * session looks up before the built-in tables; its arity and inference
 * callbacks for the checker and shape inference. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/kernel.h"
#include "api_impl.h"
#include "onnxc.h"

typedef struct custom_entry {
  ox_kernel_def def; /* def.user points back here */
  onnxc_custom_op op;
  char *domain, *op_type;
} custom_entry;

struct onnxc_op_registry {
  custom_entry **entries;
  size_t n, cap;
  ox_custom_ops view; /* entries' defs, as the session wants them */
  const ox_kernel_def **defs;
};

typedef struct custom_state {
  const custom_entry *ce;
  void *user_state;
} custom_state;

struct onnxc_infer_context {
  const ox_node *n;
  const ox_type *const *in;
  size_t n_in;
  ox_type **out;
  size_t n_out;
  ox_arena *a;
  char *why;
  size_t why_size;
};

static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

/* ------------------------------------------------------------ the wrapper kernel */

static bool arity_ok(const onnxc_custom_op *op, size_t n_in, size_t n_out, char *why, size_t wn) {
  if ((op->min_inputs > 0 && n_in < (size_t)op->min_inputs) ||
      (op->max_inputs >= 0 && n_in > (size_t)op->max_inputs)) {
    snprintf(why, wn, "has %zu inputs, the custom operator takes %d to %d", n_in, op->min_inputs,
             op->max_inputs);
    return false;
  }
  if ((op->min_outputs > 0 && n_out < (size_t)op->min_outputs) ||
      (op->max_outputs >= 0 && n_out > (size_t)op->max_outputs)) {
    snprintf(why, wn, "has %zu outputs, the custom operator makes %d to %d", n_out,
             op->min_outputs, op->max_outputs);
    return false;
  }
  return true;
}

static const char *node_name(const ox_node *n) { return n->name ? n->name : ""; }

static int custom_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const custom_entry *ce = info->def->user;
  char why[300];
  if (!arity_ok(&ce->op, info->n_inputs, info->n_outputs, why, sizeof why))
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): %s", node_name(info->node), ce->op_type,
                      why);
  custom_state *cs = calloc(1, sizeof *cs);
  if (!cs) return ox_err_set(e, OX_ENOMEM, "out of memory");
  cs->ce = ce;
  *state = cs;
  if (ce->op.prepare) {
    onnxc_error pe = {0};
    onnxc_status rc = ce->op.prepare(ce->op.user, (const onnxc_kernel_info *)info,
                                     &cs->user_state, &pe);
    if (rc != ONNXC_OK)
      return ox_err_set(e, rc, "node '%s' (%s): %s", node_name(info->node), ce->op_type,
                        pe.msg[0] ? pe.msg : "the custom operator's prepare failed");
  }
  return OX_OK;
}

static int custom_run(ox_kctx *ctx, void *state) {
  const custom_state *cs = state;
  const custom_entry *ce = cs->ce;
  onnxc_status rc = ce->op.run(ce->op.user, (onnxc_kernel_context *)ctx, cs->user_state);
  if (rc == ONNXC_OK) return OX_OK;
  if (ox_kctx_error(ctx) == OX_OK)
    return ox_kctx_fail(ctx, (int)rc, "the custom operator failed (status %d)", (int)rc);
  return ox_kctx_error(ctx);
}

static void custom_release(void *state) {
  custom_state *cs = state;
  if (!cs) return;
  if (cs->ce->op.release && cs->user_state) cs->ce->op.release(cs->ce->op.user, cs->user_state);
  free(cs);
}

/* ------------------------------------------------------------ the registry */

onnxc_status onnxc_op_registry_create(onnxc_op_registry **out, onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  *out = calloc(1, sizeof **out);
  if (!*out) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  return ONNXC_OK;
}

void onnxc_op_registry_free(onnxc_op_registry *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    free(r->entries[i]->domain);
    free(r->entries[i]->op_type);
    free(r->entries[i]);
  }
  free(r->entries);
  free(r->defs);
  free(r);
}

static int64_t upper(int64_t max) { return max <= 0 ? INT64_MAX : max; }

onnxc_status onnxc_op_registry_add(onnxc_op_registry *r, const onnxc_custom_op *op,
                                   onnxc_error *err) {
  if (!r || !op) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "registry or op is NULL");
  if (!op->domain || !op->op_type || !*op->op_type || !op->run)
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL,
                                    "a custom operator needs a domain, an op_type and run");
  if (!*op->domain || ox_is_default_domain(op->domain) || strcmp(op->domain, "ai.onnx.ml") == 0 ||
      strcmp(op->domain, "ai.onnx.preview.training") == 0)
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL,
                                    "custom operator %s: domain '%s' is a standard one",
                                    op->op_type, op->domain);
  int64_t lo = op->since_version_min < 1 ? 1 : op->since_version_min, hi = upper(op->since_version_max);
  if (hi < lo)
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "custom operator %s: empty version range",
                                    op->op_type);
  for (size_t i = 0; i < r->n; i++) {
    const custom_entry *x = r->entries[i];
    if (strcmp(x->domain, op->domain) == 0 && strcmp(x->op_type, op->op_type) == 0 &&
        lo <= x->def.since_max && x->def.since_min <= hi)
      return (onnxc_status)ox_err_set(E(err), OX_EINVAL,
                                      "custom operator %s of '%s': its versions overlap one added before",
                                      op->op_type, op->domain);
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 8;
    custom_entry **ne = realloc(r->entries, cap * sizeof *ne);
    if (!ne) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
    r->entries = ne;
    const ox_kernel_def **nd = realloc(r->defs, cap * sizeof *nd);
    if (!nd) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
    r->defs = nd;
    r->cap = cap;
  }
  custom_entry *ce = calloc(1, sizeof *ce);
  if (ce) {
    ce->domain = strdup(op->domain);
    ce->op_type = strdup(op->op_type);
  }
  if (!ce || !ce->domain || !ce->op_type) {
    if (ce) {
      free(ce->domain);
      free(ce->op_type);
    }
    free(ce);
    return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  }
  ce->op = *op;
  ce->op.domain = ce->domain;
  ce->op.op_type = ce->op_type;
  ce->def = (ox_kernel_def){ce->domain, ce->op_type, (int)(lo > INT_MAX ? INT_MAX : lo),
                            (int)(hi > INT_MAX ? INT_MAX : hi), custom_prepare, custom_run,
                            custom_release, ce};
  r->entries[r->n] = ce;
  r->defs[r->n] = &ce->def;
  r->n++;
  r->view.defs = r->defs;
  r->view.n = r->n;
  return ONNXC_OK;
}

const ox_custom_ops *ox_api_custom_ops(const onnxc_op_registry *r) {
  return r && r->n ? &r->view : NULL;
}

/* ------------------------------------------------------------ kernel info and context */

static const ox_kinfo *KI(const onnxc_kernel_info *i) { return (const ox_kinfo *)i; }

int64_t onnxc_kernel_attr_int(const onnxc_kernel_info *info, const char *name, int64_t dflt) {
  return info && name ? ox_node_attr_int(KI(info)->node, name, dflt) : dflt;
}

float onnxc_kernel_attr_float(const onnxc_kernel_info *info, const char *name, float dflt) {
  return info && name ? ox_node_attr_float(KI(info)->node, name, dflt) : dflt;
}

const char *onnxc_kernel_attr_string(const onnxc_kernel_info *info, const char *name,
                                     const char *dflt) {
  return info && name ? ox_node_attr_str(KI(info)->node, name, dflt) : dflt;
}

const char *onnxc_kernel_node_name(const onnxc_kernel_info *info) {
  return info ? node_name(KI(info)->node) : "";
}

size_t onnxc_kernel_info_input_count(const onnxc_kernel_info *info) {
  return info ? KI(info)->n_inputs : 0;
}

size_t onnxc_kernel_info_output_count(const onnxc_kernel_info *info) {
  return info ? KI(info)->n_outputs : 0;
}

const onnxc_value *onnxc_kernel_info_constant_input(const onnxc_kernel_info *info, size_t i) {
  if (!info || i >= KI(info)->n_inputs || !KI(info)->const_inputs) return NULL;
  return (const onnxc_value *)KI(info)->const_inputs[i];
}

static ox_kctx *KC(onnxc_kernel_context *c) { return (ox_kctx *)c; }

size_t onnxc_kernel_input_count(const onnxc_kernel_context *ctx) {
  return ctx ? ox_kctx_n_inputs((const ox_kctx *)ctx) : 0;
}

const onnxc_value *onnxc_kernel_input(const onnxc_kernel_context *ctx, size_t i) {
  return ctx ? (const onnxc_value *)ox_kctx_input((ox_kctx *)ctx, i) : NULL;
}

size_t onnxc_kernel_output_count(const onnxc_kernel_context *ctx) {
  return ctx ? ox_kctx_n_outputs((const ox_kctx *)ctx) : 0;
}

onnxc_value *onnxc_kernel_output(onnxc_kernel_context *ctx, size_t i, int32_t dtype,
                                 const int64_t *dims, size_t rank) {
  if (!ctx) return NULL;
  if (dtype == OX_STRING) {
    /* strings start as NULL elements (read as ""); the kernel fills them */
    return (onnxc_value *)ox_kctx_output_zero(KC(ctx), i, dtype, dims, rank);
  }
  return (onnxc_value *)ox_kctx_output(KC(ctx), i, dtype, dims, rank);
}

onnxc_status onnxc_kernel_fail(onnxc_kernel_context *ctx, const char *message) {
  if (!ctx) return ONNXC_ERR_INVALID_ARG;
  return (onnxc_status)ox_kctx_fail(KC(ctx), OX_ERUNTIME, "%s", message ? message : "failed");
}

/* ------------------------------------------------------------ inference */

const char *onnxc_infer_node_name(const onnxc_infer_context *ctx) {
  return ctx ? node_name(ctx->n) : "";
}

int64_t onnxc_infer_attr_int(const onnxc_infer_context *ctx, const char *name, int64_t dflt) {
  return ctx && name ? ox_node_attr_int(ctx->n, name, dflt) : dflt;
}

size_t onnxc_infer_input_count(const onnxc_infer_context *ctx) { return ctx ? ctx->n_in : 0; }

const onnxc_type *onnxc_infer_input_type(const onnxc_infer_context *ctx, size_t i) {
  return ctx && i < ctx->n_in ? (const onnxc_type *)ctx->in[i] : NULL;
}

onnxc_status onnxc_infer_set_output(onnxc_infer_context *ctx, size_t i, int32_t elem_type,
                                    const int64_t *dims, int64_t rank) {
  if (!ctx || i >= ctx->n_out) return ONNXC_ERR_INVALID_ARG;
  if (rank > 0 && !dims) return ONNXC_ERR_INVALID_ARG;
  ox_type *t = ox_arena_calloc(ctx->a, 1, sizeof *t);
  if (!t) return ONNXC_ERR_NOMEM;
  t->kind = OX_TYPE_TENSOR;
  t->elem_type = elem_type;
  t->has_elem_type = elem_type != 0;
  if (rank >= 0) {
    t->shape = ox_arena_calloc(ctx->a, 1, sizeof *t->shape);
    if (!t->shape) return ONNXC_ERR_NOMEM;
    if (rank > 0) {
      t->shape->dim = ox_arena_calloc(ctx->a, (size_t)rank, sizeof *t->shape->dim);
      if (!t->shape->dim) return ONNXC_ERR_NOMEM;
    }
    t->shape->n_dim = (size_t)rank;
    for (int64_t d = 0; d < rank; d++)
      if (dims[d] >= 0) {
        t->shape->dim[d].value = dims[d];
        t->shape->dim[d].has_value = true;
      }
  }
  ctx->out[i] = t;
  return ONNXC_OK;
}

onnxc_status onnxc_infer_fail(onnxc_infer_context *ctx, const char *message) {
  if (!ctx) return ONNXC_ERR_INVALID_ARG;
  snprintf(ctx->why, ctx->why_size, "%s", message ? message : "rejected");
  return ONNXC_ERR_INVALID_MODEL;
}

int ox_api_custom_infer(const void *user, const ox_node *n, const char *domain, int64_t opset,
                        const ox_type *const *in, size_t n_in, ox_type **out, size_t n_out,
                        ox_arena *a, char *why, size_t why_size) {
  const ox_custom_ops *ops = ox_api_custom_ops(user);
  const ox_kernel_def *d = ox_custom_ops_find(ops, domain, n->op_type ? n->op_type : "", opset);
  if (!d) return 0;
  const custom_entry *ce = d->user;
  if (!arity_ok(&ce->op, n_in, n_out, why, why_size)) return -1;
  if (!ce->op.infer) return 1;
  onnxc_infer_context c = {n, in, n_in, out, n_out, a, why, why_size};
  why[0] = 0;
  onnxc_status rc = ce->op.infer(ce->op.user, &c);
  if (rc == ONNXC_OK) return 1;
  if (!why[0]) snprintf(why, why_size, "its custom inference failed (status %d)", (int)rc);
  return -1;
}

/* ------------------------------------------------------------ checker */

typedef struct arity_walk {
  const onnxc_op_registry *r;
  const ox_opset *imports;
  size_t n_imports;
  ox_buf *report;
  size_t errors;
} arity_walk;

static void check_nodes(arity_walk *w, const ox_node *nodes, size_t n_nodes, const char *where);

static void check_graph(arity_walk *w, const ox_graph *g) {
  if (g) check_nodes(w, g->node, g->n_node, g->name ? g->name : "");
}

static void check_nodes(arity_walk *w, const ox_node *nodes, size_t n_nodes, const char *where) {
  for (size_t i = 0; i < n_nodes; i++) {
    const ox_node *n = &nodes[i];
    const char *dom = n->domain ? n->domain : "";
    int64_t opset = ox_opset_version(w->imports, w->n_imports, dom);
    const ox_kernel_def *d =
        opset > 0 ? ox_custom_ops_find(&w->r->view, dom, n->op_type ? n->op_type : "", opset) : NULL;
    char why[300];
    if (d && !arity_ok(&((const custom_entry *)d->user)->op, n->n_input, n->n_output, why,
                       sizeof why)) {
      w->errors++;
      if (w->report)
        ox_buf_printf(w->report, "graph '%s': node '%s' (%s, domain '%s'): %s [custom-op]\n",
                      where, node_name(n), n->op_type, dom, why);
    }
    for (size_t k = 0; k < n->n_attribute; k++) {
      const ox_attr *at = &n->attribute[k];
      check_graph(w, at->g);
      for (size_t j = 0; j < at->n_graphs; j++) check_graph(w, &at->graphs[j]);
    }
  }
}

size_t ox_api_custom_check(const onnxc_op_registry *r, const ox_model *m, ox_buf *report) {
  if (!r || !r->n || !m || !m->proto) return 0;
  arity_walk w = {r, m->proto->opset_import, m->proto->n_opset_import, report, 0};
  check_graph(&w, m->proto->graph);
  for (size_t i = 0; i < m->proto->n_functions; i++) {
    const ox_function *f = &m->proto->functions[i];
    arity_walk fw = w;
    fw.imports = f->opset_import;
    fw.n_imports = f->n_opset_import;
    fw.errors = 0;
    check_nodes(&fw, f->node, f->n_node, f->name ? f->name : "");
    w.errors += fw.errors;
  }
  return w.errors;
}
