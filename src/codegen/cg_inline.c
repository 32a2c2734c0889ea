/* cg_inline.c - model-local functions (ModelProto.functions, IR >= 8) in
 * onnxc compile. The generated code has one function per node of one flat
 * graph, so every call of a local function is replaced by the function's
 * nodes first, by the runtime's own inlining (src/runtime/function.c:
 * formal names renamed to the call's, the body's other names made fresh,
 * ref_attr_name attributes taken from the call or the function's defaults,
 * nested calls inlined in turn, a local function named like an operator of
 * its domain taking precedence). Shape inference then runs on the flat
 * graph as on any other. The runtime keeps each body's own opset imports
 * per node; the generators read one opset per domain, so a function that
 * imports a domain at another version than the model is refused, and a
 * domain only the functions import is added to the copy's imports. */
#include "cg_inline.h"

#include <string.h>

#include "../runtime/rt.h"

/* the copy's imports: the model's, plus the domains only functions import */
static int merge_imports(cg_inlined *fi, const ox_model_proto *mp, ox_err *e) {
  ox_opset *imp = NULL;
  size_t n = 0;
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    ox_opset *o = OX_VEC_PUSH(fi->a, imp, n);
    if (!o) return ox_err_set(e, OX_ENOMEM, "compile: out of memory");
    *o = mp->opset_import[i];
  }
  for (size_t k = 0; k < mp->n_functions; k++) {
    const ox_function *f = &mp->functions[k];
    for (size_t i = 0; i < f->n_opset_import; i++) {
      const ox_opset *fo = &f->opset_import[i];
      int64_t v = ox_opset_version(imp, n, fo->domain);
      if (v >= 0 && v != fo->version)
        return ox_err_set(e, OX_EUNSUPPORTED,
                          "compile: local function '%s' imports domain '%s' at version %lld, the "
                          "model at %lld: not compiled (the generators read one opset per domain)",
                          f->name ? f->name : "", fo->domain ? fo->domain : "",
                          (long long)fo->version, (long long)v);
      if (v >= 0) continue;
      ox_opset *o = OX_VEC_PUSH(fi->a, imp, n);
      if (!o) return ox_err_set(e, OX_ENOMEM, "compile: out of memory");
      *o = *fo;
    }
  }
  fi->proto.opset_import = imp;
  fi->proto.n_opset_import = n;
  return OX_OK;
}

int ox_cg_inline(ox_model *m, cg_inlined *fi, ox_err *e) {
  memset(fi, 0, sizeof *fi);
  fi->m = m;
  ox_map_init(&fi->origin);
  if (!m || !m->proto || !m->proto->graph || !m->proto->n_functions) return OX_OK;
  const ox_model_proto *mp = m->proto;
  fi->any = true;
  if (!(fi->a = ox_arena_new())) return ox_err_set(e, OX_ENOMEM, "compile: out of memory");
  fi->proto = *mp;
  int rc = merge_imports(fi, mp, e);
  const ox_graph *g = NULL;
  if (!rc && (rc = ox_rt_inline_functions(fi->a, mp, mp->graph, &fi->origin, &g, e)))
    ox_err_prefix(e, "compile: inlining the model's local functions");
  if (rc) return rc;
  fi->proto.graph = (ox_graph *)g;
  fi->proto.functions = NULL;
  fi->proto.n_functions = 0;
  fi->copy = *m;
  fi->copy.proto = &fi->proto;
  fi->m = &fi->copy;
  return OX_OK;
}

void ox_cg_inline_blame(const cg_inlined *fi, const ox_node *n, ox_err *e) {
  uintptr_t v;
  for (size_t k = 0; fi->any && k < n->n_output; k++)
    if (*n->output[k] && ox_map_get(&fi->origin, n->output[k], &v)) {
      ox_err_prefix(e, "node %s, a call of a model-local function, inlined", (const char *)v);
      return;
    }
}

void ox_cg_inline_free(cg_inlined *fi) {
  ox_map_free(&fi->origin);
  ox_arena_free(fi->a);
  fi->a = NULL;
}
