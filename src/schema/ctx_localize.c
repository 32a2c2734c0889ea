/* ctx_localize.c - turns nodes with context-dependent bodies into calls of
 * model-local functions holding the bodies built for them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../text/text.h"
#include "schema.h"

#define OX_CTX_DOMAIN "onnxc.ctxbody"

static const ox_type *type_in(const ox_value_info *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (v[i].name && strcmp(v[i].name, name) == 0 && v[i].type) return v[i].type;
  return NULL;
}

/* the declared type of a main-graph name, and its element type (of the
 * tensors held, for a sequence) */
static int32_t dtype_of(const ox_graph *g, const char *name, const ox_type **type) {
  *type = NULL;
  if (!name || !*name) return 0;
  const ox_type *t = type_in(g->input, g->n_input, name);
  if (!t) t = type_in(g->value_info, g->n_value_info, name);
  *type = t;
  while (t && !t->has_elem_type && t->elem) t = t->elem;
  if (t && t->has_elem_type) return t->elem_type;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
      return g->initializer[i].data_type;
  return 0;
}

int ox_schema_localize_ctx_bodies(ox_model *m, size_t *n_done, ox_err *e) {
  if (n_done) *n_done = 0;
  ox_model_proto *mp = m->proto;
  ox_graph *g = mp ? mp->graph : NULL;
  if (!g) return OX_OK;
  size_t done = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    ox_node *n = &g->node[i];
    const char *dom = n->domain ? n->domain : "";
    int64_t opset = ox_opset_version(mp->opset_import, mp->n_opset_import, dom);
    const ox_schema *s = opset < 0 ? NULL : ox_schema_lookup(dom, n->op_type, opset);
    if (!ox_schema_has_ctx_body(s)) continue;
    int32_t dt[32] = {0};
    const ox_type *ty[32] = {0};
    size_t nin = n->n_input < 32 ? n->n_input : 32;
    for (size_t k = 0; k < nin; k++) dt[k] = dtype_of(g, n->input[k], &ty[k]);
    ox_buf text = {0};
    int rc = ox_schema_build_body_typed(s, opset, n, dt, ty, nin, &text, e);
    ox_function *f = NULL;
    char name[160];
    snprintf(name, sizeof name, "%s body for node %zu", s->name, i);
    if (!rc) rc = ox_text_parse_function((const char *)text.data, text.size, name, m->arena, &f, e);
    ox_buf_free(&text);
    if (rc) return rc;
    char *fname = ox_arena_printf(m->arena, "%s_%zu", s->name, i);
    char *fdom = ox_arena_strdup(m->arena, OX_CTX_DOMAIN);
    ox_function *slot = OX_VEC_PUSH(m->arena, mp->functions, mp->n_functions);
    if (!fname || !fdom || !slot) return ox_err_set(e, OX_ENOMEM, "out of memory");
    *slot = *f;
    slot->name = fname;
    slot->domain = fdom;
    n->op_type = fname;
    n->domain = fdom;
    n->n_attribute = 0; /* the attribute values are baked into the body */
    done++;
  }
  if (done) {
    ox_opset *o = OX_VEC_PUSH(m->arena, mp->opset_import, mp->n_opset_import);
    if (!o) return ox_err_set(e, OX_ENOMEM, "out of memory");
    o->domain = ox_arena_strdup(m->arena, OX_CTX_DOMAIN);
    o->version = 1;
    o->has_version = true;
  }
  if (n_done) *n_done = done;
  return OX_OK;
}
