/* check.c - model, graph, node, attribute and function rules of the checker
 * (notes §2.2, 2.3, 2.6, 2.7), plus the strict rules of §2.11. The order of the
 * checks follows the reference; unlike it, checking goes on after an error so
 * that every error is reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/onnxc_ops.h"
#include "check_impl.h"

#define OX_CHECKER_IR_VERSION 14

/* ----------------------------------------------------------- reporting */

size_t ox_ck_push(ox_ck *c, const char *fmt, ...) {
  size_t old = c->path_len;
  size_t len = old;
  if (len && len + 3 < sizeof c->path) {
    memcpy(c->path + len, " / ", 4);
    len += 3;
  }
  if (len < sizeof c->path) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(c->path + len, sizeof c->path - len, fmt, ap);
    va_end(ap);
    if (k > 0) len += (size_t)k;
    if (len >= sizeof c->path) len = sizeof c->path - 1;
  }
  c->path_len = len;
  return old;
}

void ox_ck_pop(ox_ck *c, size_t len) {
  c->path_len = len;
  c->path[len] = '\0';
}

void ox_ck_fail(ox_ck *c, const char *rule, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *path = c->path_len ? c->path : "model";
  if (c->n_errors == 0) ox_err_set(&c->first, OX_EMODEL, "%s: %s [%s]", path, msg, rule);
  c->n_errors++;
  if (c->report) ox_buf_printf(c->report, "%s: %s [%s]\n", path, msg, rule);
}

void ox_ck_warn(ox_ck *c, const char *fmt, ...) {
  if (!c->report) return;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ox_buf_printf(c->report, "warning: %s%s%s\n", c->path_len ? c->path : "", c->path_len ? ": " : "",
                msg);
}

/* --------------------------------------------------------------- scopes */

static void scope_init(ox_ck_scope *s, const ox_ck_scope *parent) {
  ox_map_init(&s->names);
  s->parent = parent;
}

static void scope_free(ox_ck_scope *s) { ox_map_free(&s->names); }

static bool scope_has_here(const ox_ck_scope *s, const char *n) {
  uintptr_t v;
  return ox_map_get(&s->names, n, &v);
}

static bool scope_has(const ox_ck_scope *s, const char *n) {
  for (; s; s = s->parent)
    if (scope_has_here(s, n)) return true;
  return false;
}

static void scope_add(ox_ck *c, ox_ck_scope *s, const char *n) {
  if (ox_map_put(&s->names, n, 1) != OX_OK) c->oom = true;
}

/* --------------------------------------------------------------- opsets */

static bool is_default(const char *d) { return !d || !d[0] || strcmp(d, "ai.onnx") == 0; }
static const char *dname(const char *d) { return d && d[0] ? d : "ai.onnx"; }

/* The imported version of a domain in a list of imports (the last entry
 * wins, like the reference's map). Exact match on the domain string. */
static bool opset_exact(const ox_opset *o, size_t n, const char *domain, int64_t *v) {
  bool found = false;
  for (size_t i = 0; i < n; i++) {
    const char *d = o[i].domain ? o[i].domain : "";
    if (strcmp(d, domain) == 0) {
      *v = o[i].version;
      found = true;
    }
  }
  return found;
}

/* Node domain resolution of check_node. "ai.onnx" is the default domain's
 * other name (IR.md, Syntax.md): a node written with either spelling takes
 * the version imported under either spelling, the exact one first. */
static bool node_opset(const ox_ck *c, const char *domain, int64_t *v) {
  const char *d = domain ? domain : "";
  if (c->implied_default) {
    *v = 1;
    return is_default(d);
  }
  if (opset_exact(c->opsets, c->n_opsets, d, v)) return true;
  if (!is_default(d)) return false;
  return opset_exact(c->opsets, c->n_opsets, d[0] ? "" : "ai.onnx", v);
}

static bool is_experimental(const char *domain, const char *op) {
  static const char *const ops[] = {"ATen",
                                    "Affine",
                                    "ConstantFill",
                                    "Crop",
                                    "DynamicSlice",
                                    "GRUUnit",
                                    "GivenTensorFill",
                                    "ImageScaler",
                                    "ParametricSoftplus",
                                    "Scale",
                                    "ScaledTanh"};
  if (!is_default(domain)) return false;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i], op) == 0) return true;
  return false;
}

/* "ai.onnx" finds the default domain's schemas. (onnx 1.12's checker looks
 * the literal domain up and finds nothing; the spec names both spellings.) */
static const ox_schema *schema_for(const char *domain, const char *op, int64_t version) {
  return ox_schema_lookup(domain ? domain : "", op, version);
}

/* --------------------------------------------------------- C90 names */

static bool c90_ident(const char *s) {
  if (!s || !s[0]) return true; /* empty names are judged elsewhere */
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return false;
  for (const char *p = s + 1; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return false;
  return true;
}

/* IR.md says names SHOULD be C90 identifiers: a recommendation, so even
 * --strict only warns (exporters name values "conv1/weight:0"). */
static void strict_name(ox_ck *c, const char *what, const char *name) {
  if (c->strict && !c90_ident(name))
    ox_ck_warn(c, "%s name '%s' is not a C90 identifier (IR.md: SHOULD)", what, name);
}

/* ----------------------------------------------------------- attributes */

static void check_graph(ox_ck *c, const ox_graph *g, const ox_ck_scope *parent, bool main);

static void check_attribute(ox_ck *c, const ox_attr *a, const ox_ck_scope *scope) {
  if (!a->name || !a->name[0]) {
    ox_ck_fail(c, "attr-name", "field 'name' of attribute is required to be non-empty");
    return;
  }
  if (c->ir >= 2 && !a->has_type) {
    ox_ck_fail(c, "attr-type", "attribute '%s': field 'type' is required but missing", a->name);
    return;
  }
  struct {
    bool set;
    int32_t type;
  } f[] = {
      {a->has_f, OX_ATTR_FLOAT},
      {a->has_i, OX_ATTR_INT},
      {a->s.data != NULL, OX_ATTR_STRING},
      {a->t != NULL, OX_ATTR_TENSOR},
      {a->g != NULL, OX_ATTR_GRAPH},
      {a->sparse_tensor != NULL, OX_ATTR_SPARSE_TENSOR},
      {a->tp != NULL, OX_ATTR_TYPE_PROTO},
      {a->n_floats > 0, OX_ATTR_FLOATS},
      {a->n_ints > 0, OX_ATTR_INTS},
      {a->n_strings > 0, OX_ATTR_STRINGS},
      {a->n_tensors > 0, OX_ATTR_TENSORS},
      {a->n_graphs > 0, OX_ATTR_GRAPHS},
      {a->n_sparse_tensors > 0, OX_ATTR_SPARSE_TENSORS},
      {a->n_type_protos > 0, OX_ATTR_TYPE_PROTOS},
  };
  int used = 0;
  bool bad = false;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    if (!f[i].set) continue;
    used++;
    if (a->has_type && a->type != f[i].type && !bad) {
      ox_ck_fail(c, "attr-type",
                 "attribute '%s': type %s does not match the value field, which holds %s", a->name,
                 ox_attr_type_name(a->type), ox_attr_type_name(f[i].type));
      bad = true;
    }
  }
  if (used > 1) {
    ox_ck_fail(c, "attr-value", "attribute '%s' has %d value fields, at most one is allowed",
               a->name, used);
    return;
  }
  if (!c->is_main_graph && a->ref_attr_name && a->ref_attr_name[0] && used) {
    ox_ck_fail(c, "attr-ref",
               "attribute '%s' refers to attribute '%s' of the parent and must not have a value",
               a->name, a->ref_attr_name);
  }
  if (bad) return;
  if (a->t) {
    size_t p = ox_ck_push(c, "attribute '%s'", a->name);
    ox_ck_tensor(c, a->t);
    ox_ck_pop(c, p);
  }
  if (a->sparse_tensor) {
    size_t p = ox_ck_push(c, "attribute '%s'", a->name);
    ox_ck_sparse(c, a->sparse_tensor);
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < a->n_tensors; i++) {
    size_t p = ox_ck_push(c, "attribute '%s'[%zu]", a->name, i);
    ox_ck_tensor(c, &a->tensors[i]);
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < a->n_sparse_tensors; i++) {
    size_t p = ox_ck_push(c, "attribute '%s'[%zu]", a->name, i);
    ox_ck_sparse(c, &a->sparse_tensors[i]);
    ox_ck_pop(c, p);
  }
  if (a->g) {
    size_t p = ox_ck_push(c, "attribute '%s'", a->name);
    check_graph(c, a->g, scope, false);
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < a->n_graphs; i++) {
    size_t p = ox_ck_push(c, "attribute '%s'[%zu]", a->name, i);
    check_graph(c, &a->graphs[i], scope, false);
    ox_ck_pop(c, p);
  }
}

/* ----------------------------------------------------------- node types */

/* Known types of values in the graphs being checked: declared inputs,
 * outputs, value_info and initializers, innermost scope last. */
typedef struct ox_ck_types {
  ox_map map; /* name -> const ox_type* or (tagged) data type of an initializer */
  const struct ox_ck_types *parent;
} ox_ck_types;

static bool known_type(const ox_ck_types *ty, const char *name, char *buf, size_t cap) {
  for (; ty; ty = ty->parent) {
    uintptr_t v;
    if (ox_map_get(&ty->map, name, &v)) {
      if (v & 1) { /* initializer: data type << 1 | 1 */
        const ox_dtype_info *di = ox_dtype_get((int32_t)(v >> 1));
        if (!di || v >> 1 == 0) return false;
        snprintf(buf, cap, "tensor(%s)", di->name);
        return true;
      }
      return ox_ck_type_str((const ox_type *)v, buf, cap);
    }
  }
  return false;
}

static bool allowed_in(const ox_type_constraint *tc, const char *t) {
  for (size_t i = 0; i < tc->n_allowed; i++)
    if (strcmp(tc->allowed[i], t) == 0) return true;
  return false;
}

/* Checks the declared types of a node's inputs/outputs against the formal
 * parameters (type constraints, concrete types, one type per constraint). */
static void check_types(ox_ck *c, const ox_schema *s, const ox_node *n, const ox_ck_types *ty) {
  if (!ty) return;
  const char *bound_name[32];
  char bound[32][96];
  size_t nb = 0;
  for (int side = 0; side < 2; side++) {
    const ox_formal *fs = side ? s->outputs : s->inputs;
    size_t nf = side ? s->n_outputs : s->n_inputs;
    char **names = side ? n->output : n->input;
    size_t nn = side ? n->n_output : n->n_input;
    if (!nf) continue;
    for (size_t i = 0; i < nn; i++) {
      if (!names[i] || !names[i][0]) continue;
      const ox_formal *f = &fs[i < nf ? i : nf - 1];
      if (i >= nf && f->option != OX_PARAM_VARIADIC) break;
      char t[96];
      if (!known_type(ty, names[i], t, sizeof t)) continue;
      const ox_type_constraint *tc = ox_schema_find_constraint(s, f->type_str);
      if (!tc) {
        if (strchr(f->type_str, '(') && strcmp(f->type_str, t) != 0)
          ox_ck_fail(c, "node-type", "%s '%s' (%s) has type %s, the operator requires %s",
                     side ? "output" : "input", names[i], f->name, t, f->type_str);
        continue;
      }
      bool has_map = false;
      for (size_t k = 0; k < tc->n_allowed; k++)
        if (strstr(tc->allowed[k], "map(")) has_map = true;
      if (has_map) continue; /* map spellings differ between documents */
      if (!allowed_in(tc, t)) {
        ox_ck_fail(c, "node-type", "%s '%s' (%s) has type %s, not allowed for %s",
                   side ? "output" : "input", names[i], f->name, t, tc->name);
        continue;
      }
      if (f->option == OX_PARAM_VARIADIC && !f->homogeneous) continue;
      size_t k = 0;
      while (k < nb && strcmp(bound_name[k], tc->name) != 0) k++;
      if (k == nb) {
        if (nb < 32) {
          bound_name[nb] = tc->name;
          snprintf(bound[nb], sizeof bound[nb], "%s", t);
          nb++;
        }
      } else if (strcmp(bound[k], t) != 0) {
        ox_ck_fail(c, "node-type",
                   "%s '%s' (%s) has type %s, but %s is already bound to %s by another value",
                   side ? "output" : "input", names[i], f->name, t, tc->name, bound[k]);
      }
    }
  }
}

/* ----------------------------------------------------------------- node */

/* OpSchema::Verify */
static void verify(ox_ck *c, const ox_schema *s, const ox_node *n) {
  const char *op = n->op_type;
  if (s->deprecated) {
    ox_ck_fail(c, "node-deprecated", "operator '%s' has been deprecated since version %d", op,
               s->since_version);
    return;
  }
  if ((int64_t)n->n_input < s->min_inputs || (int64_t)n->n_input > s->max_inputs) {
    if (s->max_inputs == OX_SCHEMA_INF)
      ox_ck_fail(c, "node-arity", "%zu inputs, %s-%d takes at least %d", n->n_input, op,
                 s->since_version, s->min_inputs);
    else
      ox_ck_fail(c, "node-arity", "%zu inputs, %s-%d takes %d to %d", n->n_input, op,
                 s->since_version, s->min_inputs, s->max_inputs);
  }
  if ((int64_t)n->n_output < s->min_outputs || (int64_t)n->n_output > s->max_outputs) {
    if (s->max_outputs == OX_SCHEMA_INF)
      ox_ck_fail(c, "node-arity", "%zu outputs, %s-%d produces at least %d", n->n_output, op,
                 s->since_version, s->min_outputs);
    else
      ox_ck_fail(c, "node-arity", "%zu outputs, %s-%d produces %d to %d", n->n_output, op,
                 s->since_version, s->min_outputs, s->max_outputs);
  }
  for (int side = 0; side < 2; side++) {
    const ox_formal *fs = side ? s->outputs : s->inputs;
    size_t nf = side ? s->n_outputs : s->n_inputs;
    char **names = side ? n->output : n->input;
    size_t nn = side ? n->n_output : n->n_input;
    for (size_t i = 0; i < nn; i++) {
      if (i >= nf && (nf == 0 || fs[nf - 1].option != OX_PARAM_VARIADIC)) {
        /* reported as an arity error above */
        break;
      }
      const ox_formal *f = &fs[i < nf ? i : nf - 1];
      if (f->option == OX_PARAM_SINGLE && (!names[i] || !names[i][0]))
        ox_ck_fail(c, "node-arity", "%s %zu (%s) is required but its name is empty",
                   side ? "output" : "input", i, f->name);
    }
  }
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *a = &n->attribute[i];
    if (!a->name) continue;
    const ox_attr_schema *as = ox_schema_find_attr(s, a->name);
    if (!as) {
      if (strncmp(a->name, "__", 2) == 0) continue;
      ox_ck_fail(c, "node-attr-unknown", "unrecognized attribute '%s' for operator %s-%d", a->name,
                 op, s->since_version);
      continue;
    }
    int32_t t = a->has_type ? a->type : OX_ATTR_UNDEFINED;
    if (t != as->type) {
      ox_ck_fail(c, "node-attr-type", "attribute '%s' must be %s, got %s", a->name,
                 ox_attr_type_name(as->type), ox_attr_type_name(t));
      continue;
    }
    if (a->ref_attr_name && a->ref_attr_name[0]) continue;
    const char *field = NULL;
    switch (as->type) {
      case OX_ATTR_TENSOR:
        field = a->t ? NULL : "t";
        break;
      case OX_ATTR_SPARSE_TENSOR:
        field = a->sparse_tensor ? NULL : "sparse_tensor";
        break;
      case OX_ATTR_GRAPH:
        field = a->g ? NULL : "g";
        break;
      case OX_ATTR_TYPE_PROTO:
        field = a->tp ? NULL : "tp";
        break;
      default:
        break;
    }
    if (field)
      ox_ck_fail(c, "node-attr-type", "attribute '%s' is expected to have field '%s'", a->name,
                 field);
  }
  for (size_t i = 0; i < s->n_attrs; i++) {
    if (!s->attrs[i].required) continue;
    if (!ox_node_attr(n, s->attrs[i].name))
      ox_ck_fail(c, "node-attr-required", "required attribute '%s' is missing", s->attrs[i].name);
  }
}

static void check_node(ox_ck *c, const ox_node *n, const ox_ck_scope *scope,
                       const ox_ck_types *ty) {
  if (!n->op_type || !n->op_type[0]) {
    ox_ck_fail(c, "node-op-type", "field 'op_type' of node is required to be non-empty");
    return;
  }
  if (n->n_input == 0 && n->n_output == 0) {
    ox_ck_fail(c, "node-io", "node has zero inputs and zero outputs");
    return;
  }
  int64_t ver = 0;
  if (!node_opset(c, n->domain, &ver)) {
    ox_ck_fail(c, "node-domain", "no opset import for domain '%s'", n->domain ? n->domain : "");
    return;
  }
  bool attrs_ok = true;
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *a = &n->attribute[i];
    for (size_t j = 0; j < i; j++)
      if (a->name && n->attribute[j].name && strcmp(a->name, n->attribute[j].name) == 0) {
        ox_ck_fail(c, "node-attr-duplicate", "attribute '%s' appears more than once", a->name);
        attrs_ok = false;
        break;
      }
    size_t errs = c->n_errors;
    if (c->strict && !c->in_function && a->ref_attr_name && a->ref_attr_name[0])
      ox_ck_fail(c, "strict-ref-attr",
                 "attribute '%s' refers to '%s', but only nodes of a function body may refer to "
                 "the function's attributes",
                 ox_ck_str(a->name), a->ref_attr_name);
    check_attribute(c, a, scope);
    if (c->n_errors != errs) attrs_ok = false;
  }
  (void)attrs_ok;
  if (is_experimental(n->domain, n->op_type)) {
    ox_ck_warn(c, "experimental operator %s", n->op_type);
    return;
  }
  const ox_schema *s = schema_for(n->domain, n->op_type, ver);
  if (!s) {
    const char *d = n->domain ? n->domain : "";
    /* domains whose every operator has a schema: an unknown one is an error */
    if (!d[0] || strcmp(d, "ai.onnx") == 0 || strcmp(d, "ai.onnx.ml") == 0 ||
        strcmp(d, "ai.onnx.training") == 0 || strcmp(d, OX_ONNXC_DOMAIN) == 0) {
      size_t nv = 0;
      const ox_schema *const *vs = ox_schema_versions(d, n->op_type, &nv);
      if (nv)
        ox_ck_fail(c, "node-opset",
                   "operator %s does not exist at opset %lld of domain '%s' (introduced in %d)",
                   n->op_type, (long long)ver, dname(d), vs[0]->since_version);
      else
        ox_ck_fail(c, "node-unknown-op", "no operator %s registered in domain '%s' (opset %lld)",
                   n->op_type, dname(d), (long long)ver);
    }
    return;
  }
  verify(c, s, n);
  if (!s->deprecated) check_types(c, s, n, ty);
}

/* ---------------------------------------------------------------- graph */

static void node_path(ox_ck *c, const ox_node *n, size_t idx) {
  const char *op = n->op_type ? n->op_type : "";
  int64_t ver = 0;
  const ox_schema *s = node_opset(c, n->domain, &ver) ? schema_for(n->domain, op, ver) : NULL;
  const char *d = n->domain && n->domain[0] ? n->domain : NULL;
  char opdesc[256];
  if (s)
    snprintf(opdesc, sizeof opdesc, "%s%s%s-%d", d ? d : "", d ? "." : "", op, s->since_version);
  else
    snprintf(opdesc, sizeof opdesc, "%s%s%s", d ? d : "", d ? "." : "", op);
  if (n->name && n->name[0])
    ox_ck_push(c, "node '%s' (%s)", n->name, opdesc);
  else
    ox_ck_push(c, "node #%zu (%s)", idx, opdesc);
}

static void types_add_vi(ox_ck *c, ox_ck_types *ty, const ox_value_info *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (v[i].name && v[i].type && ox_map_put(&ty->map, v[i].name, (uintptr_t)v[i].type) != OX_OK)
      c->oom = true;
}

/* Where a name is defined later in the graph (for a clearer message). */
static bool defined_later(const ox_graph *g, size_t from, const char *name) {
  for (size_t i = from; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i].n_output; j++)
      if (g->node[i].output[j] && strcmp(g->node[i].output[j], name) == 0) return true;
  return false;
}

static void strict_graph(ox_ck *c, const ox_graph *g, const ox_ck_scope *scope);

static void check_graph(ox_ck *c, const ox_graph *g, const ox_ck_scope *parent, bool main) {
  bool saved_main = c->is_main_graph;
  c->is_main_graph = main;
  size_t p0 = ox_ck_push(c, "graph '%s'", g->name ? g->name : "");
  if (!g->name || !g->name[0])
    ox_ck_fail(c, "graph-name", "field 'name' of graph is required to be non-empty");
  for (size_t i = 0; i < g->n_input; i++) {
    size_t p = ox_ck_push(c, "input %zu", i);
    ox_ck_value_info(c, &g->input[i]);
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < g->n_output; i++) {
    size_t p = ox_ck_push(c, "output %zu", i);
    ox_ck_value_info(c, &g->output[i]);
    ox_ck_pop(c, p);
  }
  ox_ck_scope sc;
  scope_init(&sc, parent);
  ox_ck_types ty;
  ox_map_init(&ty.map);
  ty.parent = NULL;
  for (size_t i = 0; i < g->n_input; i++) {
    const char *nm = g->input[i].name;
    if (!nm || !nm[0]) continue;
    if (scope_has_here(&sc, nm))
      ox_ck_fail(c, "ssa", "graph input '%s' is declared more than once", nm);
    else if (c->strict && scope_has(parent, nm))
      ox_ck_fail(c, "strict-shadow",
                 "subgraph input '%s' has the name of a value of an enclosing graph (IR.md: no "
                 "shadowing)",
                 nm);
    scope_add(c, &sc, nm);
  }
  for (size_t i = 0; i < g->n_initializer; i++) {
    const ox_tensor *t = &g->initializer[i];
    size_t p = ox_ck_push(c, "initializer '%s'", t->name ? t->name : "");
    if (!t->name || !t->name[0]) {
      ox_ck_fail(c, "initializer-name", "initializers must have a non-empty name");
      ox_ck_pop(c, p);
      continue;
    }
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = g->initializer[j].name && strcmp(g->initializer[j].name, t->name) == 0;
    if (dup) ox_ck_fail(c, "initializer-duplicate", "initializer name '%s' is not unique", t->name);
    if (c->strict && scope_has(parent, t->name))
      ox_ck_fail(c, "strict-shadow",
                 "subgraph initializer '%s' has the name of a value of an enclosing graph "
                 "(IR.md: no shadowing)",
                 t->name);
    ox_ck_tensor(c, t);
    if (c->ir <= 3) {
      if (!scope_has_here(&sc, t->name))
        ox_ck_fail(c, "initializer-not-input",
                   "'%s' is an initializer but not a graph input (required for IR version %lld)",
                   t->name, (long long)c->ir);
    } else {
      scope_add(c, &sc, t->name);
    }
    uintptr_t tagged = ((uintptr_t)(uint32_t)t->data_type << 1) | 1u;
    if (t->has_data_type && ox_map_put(&ty.map, t->name, tagged) != OX_OK) c->oom = true;
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < g->n_sparse_initializer; i++) {
    const ox_sparse_tensor *st = &g->sparse_initializer[i];
    const char *nm = st->values ? st->values->name : NULL;
    size_t p = ox_ck_push(c, "sparse initializer '%s'", nm ? nm : "");
    if (!nm || !nm[0]) {
      ox_ck_fail(c, "initializer-name", "sparse initializers must have a non-empty name");
      ox_ck_pop(c, p);
      continue;
    }
    bool dup = false;
    for (size_t j = 0; j < g->n_initializer && !dup; j++)
      dup = g->initializer[j].name && strcmp(g->initializer[j].name, nm) == 0;
    for (size_t j = 0; j < i && !dup; j++) {
      const ox_tensor *v = g->sparse_initializer[j].values;
      dup = v && v->name && strcmp(v->name, nm) == 0;
    }
    if (dup)
      ox_ck_fail(c, "initializer-duplicate",
                 "sparse initializer name '%s' is not unique across initializers and sparse "
                 "initializers",
                 nm);
    ox_ck_sparse(c, st);
    scope_add(c, &sc, nm);
    ox_ck_pop(c, p);
  }
  /* declared types, for the type-constraint check of nodes */
  types_add_vi(c, &ty, g->input, g->n_input);
  types_add_vi(c, &ty, g->output, g->n_output);
  types_add_vi(c, &ty, g->value_info, g->n_value_info);

  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *n = &g->node[i];
    size_t p = c->path_len;
    node_path(c, n, i);
    for (size_t j = 0; j < n->n_input; j++) {
      const char *in = n->input[j];
      if (!in || !in[0]) continue;
      if (!scope_has(&sc, in)) {
        if (defined_later(g, i, in))
          ox_ck_fail(c, "use-before-def",
                     "input '%s' is used before the node that produces it (nodes must be "
                     "topologically sorted)",
                     in);
        else
          ox_ck_fail(c, "undefined-input",
                     "input '%s' is not a graph input, an initializer or the output of a "
                     "previous node",
                     in);
      }
    }
    check_node(c, n, &sc, &ty);
    for (size_t j = 0; j < n->n_output; j++) {
      const char *out = n->output[j];
      if (!out || !out[0]) continue;
      if (scope_has(&sc, out))
        ox_ck_fail(c, "ssa", "'%s' is assigned more than once (graphs must be in SSA form)", out);
      scope_add(c, &sc, out);
    }
    ox_ck_pop(c, p);
  }
  for (size_t i = 0; i < g->n_output; i++) {
    const char *nm = g->output[i].name;
    if (nm && nm[0] && !scope_has_here(&sc, nm))
      ox_ck_fail(c, "graph-output", "graph output '%s' is not produced in this graph", nm);
  }
  if (c->strict) strict_graph(c, g, &sc);
  ox_map_free(&ty.map);
  scope_free(&sc);
  ox_ck_pop(c, p0);
  c->is_main_graph = saved_main;
}

/* ------------------------------------------------------------- strict */

static void strict_dims(ox_ck *c, const ox_type *t, int depth) {
  if (!t || depth > 64) return;
  if (t->shape)
    for (size_t i = 0; i < t->shape->n_dim; i++)
      if (t->shape->dim[i].param && t->shape->dim[i].param[0] && !c90_ident(t->shape->dim[i].param))
        ox_ck_warn(c, "dimension name '%s' is not a C90 identifier (IR.md: SHOULD)",
                   t->shape->dim[i].param);
  strict_dims(c, t->elem, depth + 1);
}

static void strict_graph(ox_ck *c, const ox_graph *g, const ox_ck_scope *scope) {
  /* value_info: one entry per value, for values of this graph (or outer ones) */
  for (size_t i = 0; i < g->n_value_info; i++) {
    const char *nm = g->value_info[i].name;
    if (!nm || !nm[0]) {
      ox_ck_fail(c, "strict-value-info", "a value_info entry has no name");
      continue;
    }
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = g->value_info[j].name && strcmp(g->value_info[j].name, nm) == 0;
    if (dup)
      ox_ck_fail(c, "strict-value-info", "value_info for '%s' is given more than once", nm);
    else if (!scope_has(scope, nm))
      ox_ck_fail(c, "strict-value-info", "value_info names '%s', which is not a value of the graph",
                 nm);
    strict_dims(c, g->value_info[i].type, 0);
  }
  for (size_t i = 0; i < g->n_input; i++) strict_dims(c, g->input[i].type, 0);
  for (size_t i = 0; i < g->n_output; i++) strict_dims(c, g->output[i].type, 0);
  /* IR >= 4: a subgraph initializer must not share a name with a subgraph input */
  if (!c->is_main_graph && c->ir >= 4) {
    for (size_t i = 0; i < g->n_initializer; i++)
      for (size_t j = 0; j < g->n_input; j++)
        if (g->initializer[i].name && g->input[j].name &&
            strcmp(g->initializer[i].name, g->input[j].name) == 0)
          ox_ck_fail(c, "strict-subgraph-initializer",
                     "subgraph initializer '%s' has the name of a subgraph input",
                     g->input[j].name);
  }
  /* node names unique; value names C90 identifiers */
  ox_map seen;
  ox_map_init(&seen);
  for (size_t i = 0; i < g->n_node; i++) {
    const char *nm = g->node[i].name;
    if (!nm || !nm[0]) continue;
    uintptr_t v;
    if (ox_map_get(&seen, nm, &v))
      ox_ck_fail(c, "strict-node-name", "node name '%s' is used by more than one node", nm);
    else if (ox_map_put(&seen, nm, 1) != OX_OK)
      c->oom = true;
  }
  ox_map_free(&seen);
  for (size_t i = 0; i < g->n_input; i++) strict_name(c, "input", g->input[i].name);
  for (size_t i = 0; i < g->n_output; i++) strict_name(c, "output", g->output[i].name);
  for (size_t i = 0; i < g->n_initializer; i++)
    strict_name(c, "initializer", g->initializer[i].name);
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i].n_output; j++) strict_name(c, "value", g->node[i].output[j]);
}

/* ------------------------------------------------------------ functions */

typedef struct fn_ref {
  const ox_function *f;
  char id[512];
  int state; /* 0 new, 1 on stack, 2 done */
} fn_ref;

static void function_id(char *buf, size_t cap, const char *domain, const char *name,
                        const char *overload) {
  snprintf(buf, cap, "%s::%s%s%s", is_default(domain) ? "" : domain, name ? name : "",
           overload && overload[0] ? "::" : "", overload && overload[0] ? overload : "");
}

static int find_fn(const fn_ref *refs, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(refs[i].id, id) == 0) return (int)i;
  return -1;
}

typedef struct cycle_ctx {
  ox_ck *c;
  fn_ref *refs;
  size_t n;
  int stack[128];
  int depth;
  bool reported_depth;
  bool found;
} cycle_ctx;

static void visit_fn(cycle_ctx *x, int k);

static void visit_nodes(cycle_ctx *x, const ox_node *nodes, size_t n) {
  for (size_t i = 0; i < n && !x->found; i++) {
    const ox_node *nd = &nodes[i];
    char id[512];
    function_id(id, sizeof id, nd->domain, nd->op_type, nd->overload);
    int k = find_fn(x->refs, x->n, id);
    if (k >= 0) visit_fn(x, k);
    for (size_t a = 0; a < nd->n_attribute && !x->found; a++) {
      const ox_attr *at = &nd->attribute[a];
      if (at->g) visit_nodes(x, at->g->node, at->g->n_node);
      for (size_t j = 0; j < at->n_graphs; j++)
        visit_nodes(x, at->graphs[j].node, at->graphs[j].n_node);
    }
  }
}

static void visit_fn(cycle_ctx *x, int k) {
  fn_ref *r = &x->refs[k];
  if (r->state == 2) return;
  if (r->state == 1) {
    char chain[1024];
    size_t len = 0;
    int start = 0;
    while (start < x->depth && x->stack[start] != k) start++;
    for (int i = start; i < x->depth; i++)
      len += (size_t)snprintf(chain + len, len < sizeof chain ? sizeof chain - len : 0, "%s -> ",
                              x->refs[x->stack[i]].id);
    if (len < sizeof chain) snprintf(chain + len, sizeof chain - len, "%s", r->id);
    ox_ck_fail(x->c, "function-cycle",
               "cycle in model-local function references: %s (functions must not be recursive)",
               chain);
    x->found = true;
    return;
  }
  if (x->depth >= 100) {
    if (!x->reported_depth)
      ox_ck_fail(x->c, "function-depth", "function call chain depth exceeds the limit (100)");
    x->reported_depth = true;
    x->found = true;
    return;
  }
  r->state = 1;
  x->stack[x->depth++] = k;
  visit_nodes(x, r->f->node, r->f->n_node);
  x->depth--;
  r->state = 2;
}

static void check_function(ox_ck *c, const ox_function *f, const ox_opset *merged,
                           size_t n_merged) {
  if (!f->name || !f->name[0]) {
    ox_ck_fail(c, "function-name", "field 'name' of function is required to be non-empty");
    return;
  }
  if (c->ir >= 8 && !f->domain)
    ox_ck_fail(c, "function-domain", "field 'domain' of function is required but missing");
  for (size_t i = 0; i < f->n_opset_import; i++)
    if (f->opset_import[i].version < INT32_MIN || f->opset_import[i].version > INT32_MAX)
      ox_ck_fail(c, "opset-range", "opset import version %lld is out of the supported range",
                 (long long)f->opset_import[i].version);
  ox_ck_scope sc;
  scope_init(&sc, NULL);
  for (size_t i = 0; i < f->n_input; i++) {
    if (scope_has_here(&sc, f->input[i]))
      ox_ck_fail(c, "ssa", "function input '%s' is declared more than once", f->input[i]);
    scope_add(c, &sc, f->input[i]);
  }
  for (size_t i = 0; i < f->n_output; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(f->output[i], f->output[j]) == 0) {
        ox_ck_fail(c, "function-output-duplicate", "function output '%s' is declared twice",
                   f->output[i]);
        break;
      }
  for (size_t i = 0; i < f->n_attribute; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(f->attribute[i], f->attribute[j]) == 0) {
        ox_ck_fail(c, "function-attr-duplicate", "function attribute '%s' is declared twice",
                   f->attribute[i]);
        break;
      }
  const ox_opset *saved_o = c->opsets;
  size_t saved_n = c->n_opsets;
  bool saved_implied = c->implied_default, saved_fn = c->in_function;
  c->opsets = f->opset_import;
  c->n_opsets = f->n_opset_import;
  c->implied_default = false;
  c->in_function = true;
  for (size_t i = 0; i < f->n_node; i++) {
    const ox_node *n = &f->node[i];
    size_t p = c->path_len;
    node_path(c, n, i);
    for (size_t j = 0; j < n->n_input; j++) {
      const char *in = n->input[j];
      if (in && in[0] && !scope_has_here(&sc, in))
        ox_ck_fail(c, "undefined-input",
                   "input '%s' is neither a function input nor the output of a previous node", in);
    }
    const char *nd = n->domain ? n->domain : "";
    int64_t fv = 0, mv = 0;
    if (!node_opset(c, nd, &fv)) {
      ox_ck_fail(c, "function-opset", "the function imports no opset for domain '%s'", nd);
    } else {
      bool has_mv = opset_exact(merged, n_merged, nd, &mv) ||
                    (!nd[0] && opset_exact(merged, n_merged, "ai.onnx", &mv));
      if (has_mv && mv != fv && n->op_type) {
        const ox_schema *a = schema_for(nd, n->op_type, fv), *b = schema_for(nd, n->op_type, mv);
        if ((a || b) && (!a || !b || a->since_version != b->since_version))
          ox_ck_fail(c, "function-opset",
                     "opset %lld of domain '%s' imported by the function is not compatible with "
                     "version %lld imported by the model for operator %s",
                     (long long)fv, dname(nd), (long long)mv, n->op_type);
      }
    }
    check_node(c, n, &sc, NULL);
    for (size_t j = 0; j < n->n_output; j++) {
      const char *out = n->output[j];
      if (!out || !out[0]) continue;
      if (scope_has_here(&sc, out))
        ox_ck_fail(c, "ssa", "'%s' is assigned more than once (functions must be in SSA form)",
                   out);
      scope_add(c, &sc, out);
    }
    if (c->strict) {
      for (size_t a = 0; a < n->n_attribute; a++) {
        const char *ref = n->attribute[a].ref_attr_name;
        if (!ref || !ref[0]) continue;
        bool declared = false;
        for (size_t k = 0; k < f->n_attribute && !declared; k++)
          declared = strcmp(f->attribute[k], ref) == 0;
        for (size_t k = 0; k < f->n_attribute_proto && !declared; k++)
          declared = f->attribute_proto[k].name && strcmp(f->attribute_proto[k].name, ref) == 0;
        if (!declared)
          ox_ck_fail(c, "strict-function-attr-ref",
                     "attribute '%s' refers to '@%s', which the function does not declare",
                     n->attribute[a].name ? n->attribute[a].name : "", ref);
      }
    }
    ox_ck_pop(c, p);
  }
  if (c->strict)
    for (size_t i = 0; i < f->n_output; i++)
      if (!scope_has_here(&sc, f->output[i]))
        ox_ck_fail(c, "strict-function-output", "function output '%s' is never produced",
                   f->output[i]);
  c->opsets = saved_o;
  c->n_opsets = saved_n;
  c->implied_default = saved_implied;
  c->in_function = saved_fn;
  scope_free(&sc);
}

static void check_functions(ox_ck *c, const ox_model_proto *mp) {
  if (mp->n_functions > 10000) {
    ox_ck_fail(c, "function-count", "the model has %zu local functions, over the limit of 10000",
               mp->n_functions);
    return;
  }
  /* merged imports: the model's, then domains only functions import */
  ox_opset *merged = malloc((mp->n_opset_import + 1) * sizeof *merged);
  size_t n_merged = 0;
  fn_ref *refs = calloc(mp->n_functions + 1, sizeof *refs);
  if (!merged || !refs) {
    free(merged);
    free(refs);
    c->oom = true;
    return;
  }
  for (size_t i = 0; i < mp->n_opset_import; i++) merged[n_merged++] = mp->opset_import[i];
  size_t cap = n_merged + 1;
  for (size_t i = 0; i < mp->n_functions && !c->oom; i++) {
    const ox_function *f = &mp->functions[i];
    for (size_t j = 0; j < f->n_opset_import; j++) {
      const char *d = f->opset_import[j].domain ? f->opset_import[j].domain : "";
      int64_t v;
      if (opset_exact(merged, n_merged, d, &v)) continue;
      if (n_merged == cap) {
        ox_opset *m2 = realloc(merged, 2 * cap * sizeof *m2);
        if (!m2) {
          c->oom = true;
          break;
        }
        merged = m2;
        cap *= 2;
      }
      merged[n_merged++] = f->opset_import[j];
    }
  }
  for (size_t i = 0; i < mp->n_functions; i++) {
    const ox_function *f = &mp->functions[i];
    refs[i].f = f;
    function_id(refs[i].id, sizeof refs[i].id, f->domain, f->name, f->overload);
    if (find_fn(refs, i, refs[i].id) >= 0) {
      size_t p = ox_ck_push(c, "function '%s'", refs[i].id);
      ox_ck_fail(c, "function-duplicate", "the model has more than one local function with id '%s'",
                 refs[i].id);
      ox_ck_pop(c, p);
    }
  }
  cycle_ctx x = {c, refs, mp->n_functions, {0}, 0, false, false};
  for (size_t i = 0; i < mp->n_functions && !x.found; i++) visit_fn(&x, (int)i);
  for (size_t i = 0; i < mp->n_functions; i++) {
    size_t p = ox_ck_push(c, "function '%s'", refs[i].id);
    check_function(c, &mp->functions[i], merged, n_merged);
    ox_ck_pop(c, p);
  }
  free(merged);
  free(refs);
}

/* ------------------------------------------------------ training (strict) */

static bool graph_has_init(const ox_graph *g, const char *name) {
  if (!g) return false;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0) return true;
  return false;
}

static bool graph_has_output(const ox_graph *g, const char *name) {
  if (!g) return false;
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && strcmp(g->output[i].name, name) == 0) return true;
  return false;
}

static void check_training(ox_ck *c, const ox_model_proto *mp) {
  ox_map keys;
  ox_map_init(&keys);
  for (size_t t = 0; t < mp->n_training_info; t++) {
    const ox_training_info *ti = &mp->training_info[t];
    size_t p = ox_ck_push(c, "training_info %zu", t);
    if (ti->initialization) {
      size_t q = ox_ck_push(c, "initialization");
      if (ti->initialization->n_input)
        ox_ck_fail(c, "strict-training", "the initialization graph must have no inputs");
      if (ti->initialization->n_node || ti->initialization->name)
        check_graph(c, ti->initialization, NULL, true);
      ox_ck_pop(c, q);
    }
    if (ti->algorithm) {
      size_t q = ox_ck_push(c, "algorithm");
      /* the algorithm sees the inference graph's names */
      ox_ck_scope main_sc;
      scope_init(&main_sc, NULL);
      const ox_graph *mg = mp->graph;
      if (mg) {
        for (size_t i = 0; i < mg->n_input; i++)
          if (mg->input[i].name) scope_add(c, &main_sc, mg->input[i].name);
        for (size_t i = 0; i < mg->n_initializer; i++)
          if (mg->initializer[i].name) scope_add(c, &main_sc, mg->initializer[i].name);
        for (size_t i = 0; i < mg->n_node; i++)
          for (size_t j = 0; j < mg->node[i].n_output; j++)
            if (mg->node[i].output[j][0]) scope_add(c, &main_sc, mg->node[i].output[j]);
      }
      check_graph(c, ti->algorithm, &main_sc, true);
      scope_free(&main_sc);
      ox_ck_pop(c, q);
    }
    for (size_t i = 0; i < ti->n_update_binding; i++) {
      const ox_str_pair *b = &ti->update_binding[i];
      if (!b->key || !b->value) continue;
      uintptr_t v;
      if (ox_map_get(&keys, b->key, &v))
        ox_ck_fail(c, "strict-training", "update_binding key '%s' is bound more than once", b->key);
      else if (ox_map_put(&keys, b->key, 1) != OX_OK)
        c->oom = true;
      if (!graph_has_init(mp->graph, b->key) && !graph_has_init(ti->algorithm, b->key))
        ox_ck_fail(c, "strict-training",
                   "update_binding key '%s' is not an initializer of the inference or algorithm "
                   "graph",
                   b->key);
      if (!graph_has_output(ti->algorithm, b->value))
        ox_ck_fail(c, "strict-training",
                   "update_binding value '%s' is not an output of the algorithm graph", b->value);
    }
    ox_map init_keys; /* keys of this initialization_binding */
    ox_map_init(&init_keys);
    for (size_t i = 0; i < ti->n_initialization_binding; i++) {
      const ox_str_pair *b = &ti->initialization_binding[i];
      if (!b->key || !b->value) continue;
      uintptr_t v;
      if (ox_map_get(&init_keys, b->key, &v))
        ox_ck_fail(c, "strict-training", "initialization_binding key '%s' is bound more than once",
                   b->key);
      else if (ox_map_put(&init_keys, b->key, 1) != OX_OK)
        c->oom = true;
      if (!graph_has_init(mp->graph, b->key) && !graph_has_init(ti->algorithm, b->key))
        ox_ck_fail(c, "strict-training",
                   "initialization_binding key '%s' is not an initializer of the inference or "
                   "algorithm graph",
                   b->key);
      if (!graph_has_output(ti->initialization, b->value))
        ox_ck_fail(c, "strict-training",
                   "initialization_binding value '%s' is not an output of the initialization "
                   "graph",
                   b->value);
    }
    ox_map_free(&init_keys);
    ox_ck_pop(c, p);
  }
  ox_map_free(&keys);
}

/* ---------------------------------------------------------------- model */

int ox_check_model(const ox_model *m, const ox_check_opts *opts, ox_buf *report, size_t *n_errors,
                   ox_err *e) {
  if (n_errors) *n_errors = 0;
  if (!m || !m->proto) return ox_err_set(e, OX_EINVAL, "check: no model");
  ox_ck c;
  memset(&c, 0, sizeof c);
  const ox_model_proto *mp = m->proto;
  c.mp = mp;
  c.strict = opts && opts->strict;
  c.model_dir = opts && opts->model_dir ? opts->model_dir : (m->dir ? m->dir : "");
  c.report = report;
  c.is_main_graph = true;
  c.ir = mp->has_ir_version ? mp->ir_version : 0;
  c.opsets = mp->opset_import;
  c.n_opsets = mp->n_opset_import;

  if (!mp->has_ir_version || mp->ir_version == 0)
    ox_ck_fail(&c, "ir-version", "the model does not have an ir_version set properly");
  else if (mp->ir_version > OX_CHECKER_IR_VERSION || mp->ir_version < 0)
    ox_ck_fail(&c, "ir-version", "ir_version %lld is not supported (this checker knows 1 to %d)",
               (long long)mp->ir_version, OX_CHECKER_IR_VERSION);
  for (size_t i = 0; i < mp->n_metadata_props; i++)
    for (size_t j = 0; j < i; j++)
      if (mp->metadata_props[i].key && mp->metadata_props[j].key &&
          strcmp(mp->metadata_props[i].key, mp->metadata_props[j].key) == 0) {
        ox_ck_fail(&c, "metadata-duplicate", "metadata_props key '%s' appears more than once",
                   mp->metadata_props[i].key);
        break;
      }
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const ox_opset *o = &mp->opset_import[i];
    if (o->version < INT32_MIN || o->version > INT32_MAX)
      ox_ck_fail(&c, "opset-range", "opset import version %lld of domain '%s' is out of range",
                 (long long)o->version, dname(o->domain));
    else if (c.strict) {
      int64_t mx = ox_schema_max_opset(o->domain ? o->domain : "");
      if (mx > 0 && (o->version > mx || o->version < 1))
        ox_ck_fail(&c, "strict-opset-range",
                   "opset %lld of domain '%s' is outside the known versions 1 to %lld",
                   (long long)o->version, dname(o->domain), (long long)mx);
    }
  }
  if (c.ir >= 3) {
    if (mp->n_opset_import == 0)
      ox_ck_fail(&c, "opset-import", "a model with IR version >= 3 must specify opset_import");
  } else if (c.ir > 0) {
    if (mp->n_opset_import)
      ox_ck_fail(&c, "opset-import", "a model with IR version < 3 cannot have opset_import");
    c.implied_default = true;
  }
  if (!mp->graph) {
    ox_ck_fail(&c, "graph-name", "the model has no graph");
  } else {
    check_graph(&c, mp->graph, NULL, true);
  }
  if (c.ir >= 8) check_functions(&c, mp);
  if (c.strict) {
    if (mp->n_training_info) check_training(&c, mp);
    ox_ck_strict_model(&c, mp);
    ox_ck_ir_features(&c, mp);
  }
  if (opts && opts->full && report)
    ox_buf_printf(report, "warning: --full: shape inference is not available in this build\n");
  if (n_errors) *n_errors = c.n_errors;
  if (c.oom || (report && report->failed)) return ox_err_set(e, OX_ENOMEM, "check: out of memory");
  if (c.n_errors) {
    if (e) *e = c.first;
    return OX_EMODEL;
  }
  return OX_OK;
}
