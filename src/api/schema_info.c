/* schema_info.c - operator schemas through include/onnxc.h ("operator
 * schemas"): lookup, versions, attributes, formals, type constraints,
 * function bodies and context-dependent bodies. An onnxc_schema is the
 * static ox_schema of src/schema behind an opaque pointer. */
#include <onnxc.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/schema.h"

#define S(s) ((const ox_schema *)(s))

static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

const onnxc_schema *onnxc_schema_lookup(const char *domain, const char *op_type, int64_t opset) {
  if (!op_type) return NULL;
  return (const onnxc_schema *)ox_schema_lookup(domain ? domain : "", op_type, opset);
}

int64_t onnxc_schema_latest_opset(const char *domain) {
  return ox_schema_max_opset(domain ? domain : "");
}

size_t onnxc_schema_version_count(const char *domain, const char *op_type) {
  size_t n = 0;
  if (op_type) ox_schema_versions(domain ? domain : "", op_type, &n);
  return n;
}

const onnxc_schema *onnxc_schema_version(const char *domain, const char *op_type, size_t i) {
  size_t n = 0;
  const ox_schema *const *v = op_type ? ox_schema_versions(domain ? domain : "", op_type, &n) : NULL;
  return i < n ? (const onnxc_schema *)v[i] : NULL;
}

size_t onnxc_schema_count(void) { return ox_schema_count(); }
const onnxc_schema *onnxc_schema_at(size_t i) { return (const onnxc_schema *)ox_schema_at(i); }

const char *onnxc_schema_domain(const onnxc_schema *s) { return s ? S(s)->domain : ""; }
const char *onnxc_schema_name(const onnxc_schema *s) { return s ? S(s)->name : ""; }
int onnxc_schema_since_version(const onnxc_schema *s) { return s ? S(s)->since_version : 0; }
int onnxc_schema_deprecated(const onnxc_schema *s) { return s && S(s)->deprecated; }
int onnxc_schema_experimental(const onnxc_schema *s) { return s && S(s)->experimental; }
const char *onnxc_schema_doc(const onnxc_schema *s) { return s ? S(s)->doc : NULL; }

/* ------------------------------------------------------------ attributes */

static const ox_attr_schema *attr(const onnxc_schema *s, size_t i) {
  return s && i < S(s)->n_attrs ? &S(s)->attrs[i] : NULL;
}

size_t onnxc_schema_attr_count(const onnxc_schema *s) { return s ? S(s)->n_attrs : 0; }

const char *onnxc_schema_attr_name(const onnxc_schema *s, size_t i) {
  const ox_attr_schema *a = attr(s, i);
  return a ? a->name : NULL;
}

onnxc_attr_type onnxc_schema_attr_type(const onnxc_schema *s, size_t i) {
  const ox_attr_schema *a = attr(s, i);
  return a ? (onnxc_attr_type)a->type : ONNXC_ATTR_UNDEFINED;
}

int onnxc_schema_attr_required(const onnxc_schema *s, size_t i) {
  const ox_attr_schema *a = attr(s, i);
  return a && a->required;
}

const char *onnxc_schema_attr_default(const onnxc_schema *s, size_t i) {
  const ox_attr_schema *a = attr(s, i);
  return a ? a->default_text : NULL;
}

const char *onnxc_attr_type_description(onnxc_attr_type type) {
  return ox_schema_attr_type_doc((int32_t)type);
}

/* ------------------------------------------------------------ formals */

int onnxc_schema_min_arity(const onnxc_schema *s, onnxc_schema_formals which) {
  if (!s) return 0;
  return which == ONNXC_SCHEMA_OUTPUTS ? S(s)->min_outputs : S(s)->min_inputs;
}

int onnxc_schema_max_arity(const onnxc_schema *s, onnxc_schema_formals which) {
  if (!s) return 0;
  return which == ONNXC_SCHEMA_OUTPUTS ? S(s)->max_outputs : S(s)->max_inputs;
}

size_t onnxc_schema_formal_count(const onnxc_schema *s, onnxc_schema_formals which) {
  if (!s) return 0;
  return which == ONNXC_SCHEMA_OUTPUTS ? S(s)->n_outputs : S(s)->n_inputs;
}

static const ox_formal *formal(const onnxc_schema *s, onnxc_schema_formals which, size_t i) {
  if (i >= onnxc_schema_formal_count(s, which)) return NULL;
  return which == ONNXC_SCHEMA_OUTPUTS ? &S(s)->outputs[i] : &S(s)->inputs[i];
}

const char *onnxc_schema_formal_name(const onnxc_schema *s, onnxc_schema_formals which,
                                     size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f ? f->name : NULL;
}

const char *onnxc_schema_formal_type(const onnxc_schema *s, onnxc_schema_formals which,
                                     size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f ? f->type_str : NULL;
}

onnxc_formal_option onnxc_schema_formal_option(const onnxc_schema *s, onnxc_schema_formals which,
                                               size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f ? (onnxc_formal_option)f->option : ONNXC_FORMAL_SINGLE;
}

int onnxc_schema_formal_min_arity(const onnxc_schema *s, onnxc_schema_formals which, size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f ? f->min_arity : 0;
}

int onnxc_schema_formal_homogeneous(const onnxc_schema *s, onnxc_schema_formals which,
                                    size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f && f->homogeneous;
}

int onnxc_schema_formal_differentiable(const onnxc_schema *s, onnxc_schema_formals which,
                                       size_t i) {
  const ox_formal *f = formal(s, which, i);
  return f && f->differentiable;
}

/* ------------------------------------------------------------ type constraints */

static const ox_type_constraint *constraint(const onnxc_schema *s, size_t i) {
  return s && i < S(s)->n_constraints ? &S(s)->constraints[i] : NULL;
}

size_t onnxc_schema_constraint_count(const onnxc_schema *s) { return s ? S(s)->n_constraints : 0; }

const char *onnxc_schema_constraint_name(const onnxc_schema *s, size_t i) {
  const ox_type_constraint *c = constraint(s, i);
  return c ? c->name : NULL;
}

size_t onnxc_schema_constraint_type_count(const onnxc_schema *s, size_t i) {
  const ox_type_constraint *c = constraint(s, i);
  return c ? c->n_allowed : 0;
}

const char *onnxc_schema_constraint_type(const onnxc_schema *s, size_t i, size_t j) {
  const ox_type_constraint *c = constraint(s, i);
  return c && j < c->n_allowed ? c->allowed[j] : NULL;
}

/* ------------------------------------------------------------ function bodies */

size_t onnxc_schema_function_count(const onnxc_schema *s) { return s ? S(s)->n_bodies : 0; }

int64_t onnxc_schema_function_opset(const onnxc_schema *s, size_t i) {
  return s && i < S(s)->n_bodies ? S(s)->bodies[i].opset : 0;
}

const char *onnxc_schema_function_text(const onnxc_schema *s, size_t i) {
  return s && i < S(s)->n_bodies ? S(s)->bodies[i].text : NULL;
}

int onnxc_schema_has_context_body(const onnxc_schema *s) { return s && ox_schema_has_ctx_body(S(s)); }

/* The builders read presence from the node's input and output names, so the
 * default node names every one of them (a name that is not "" is present). */
#define MAX_DEFAULT_ARITY 64

onnxc_status onnxc_schema_context_body(const onnxc_schema *s, int64_t opset,
                                       const onnxc_node *node, const int32_t *input_dtypes,
                                       size_t n_inputs, char **text, onnxc_error *err) {
  if (!text) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "text is NULL");
  *text = NULL;
  if (!s) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "schema is NULL");
  if (n_inputs && !input_dtypes)
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "input_dtypes is NULL for %zu inputs",
                                    n_inputs);
  ox_node dflt = {0};
  char *present[MAX_DEFAULT_ARITY];
  if (!node) {
    size_t n_out = S(s)->n_outputs;
    if (n_inputs > MAX_DEFAULT_ARITY || n_out > MAX_DEFAULT_ARITY)
      return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "a default node has at most %d inputs",
                                      MAX_DEFAULT_ARITY);
    static char name[] = "x";
    for (size_t k = 0; k < MAX_DEFAULT_ARITY; k++) present[k] = name;
    dflt.input = present;
    dflt.n_input = n_inputs;
    dflt.output = present;
    dflt.n_output = n_out;
  }
  ox_buf b = {0};
  int rc = ox_schema_build_body(S(s), opset, node ? (const ox_node *)node : &dflt, input_dtypes,
                                n_inputs, &b, E(err));
  if (rc == OX_OK) {
    ox_buf_putc(&b, 0);
    if (b.failed) rc = ox_err_set(E(err), OX_ENOMEM, "out of memory");
  }
  if (rc != OX_OK) {
    ox_buf_free(&b);
    return (onnxc_status)rc;
  }
  *text = (char *)b.data; /* malloc'd by ox_buf */
  return ONNXC_OK;
}

onnxc_status onnxc_model_localize_context_bodies(onnxc_model *m, size_t *n_replaced,
                                                 onnxc_error *err) {
  if (n_replaced) *n_replaced = 0;
  if (!m) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "model is NULL");
  return (onnxc_status)ox_schema_localize_ctx_bodies((ox_model *)m, n_replaced, E(err));
}
