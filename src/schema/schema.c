/* schema.c - lookup in the generated schema table (schema_table.c) and in
 * the hand-written ones (schema_hand.h): onnxc's own domain
 * (schema_onnxc.c), onnxruntime's com.microsoft operators
 * (schema_contrib_*.c) and onnxruntime's additions to the default domain.
 * The generated table is sorted by (domain, name, since_version), so its
 * lookup is a binary search over the operators plus a short scan of their
 * versions; the hand tables hold one version per operator and a few dozen
 * entries, and are scanned. No index is built at run time. ox_schema_at
 * numbers the generated table first, then the hand tables in the order of
 * ox_schema_hands. An operator of the generated table is never looked up
 * in a hand table. */
#include <string.h>

#include "onnxc_ops.h"
#include "schema_hand.h"
#include "schema_table.h"

static const ox_schema_hand hands[] = {
    {OX_ONNXC_DOMAIN, ox_schema_onnxc_ptrs, &ox_schema_onnxc_table_n},
    {OX_CONTRIB_DOMAIN, ox_schema_contrib_nn, &ox_schema_contrib_nn_n},
    {OX_CONTRIB_DOMAIN, ox_schema_contrib_attn, &ox_schema_contrib_attn_n},
    {OX_CONTRIB_DOMAIN, ox_schema_contrib_gqa, &ox_schema_contrib_gqa_n},
    {OX_CONTRIB_DOMAIN, ox_schema_contrib_lowbit, &ox_schema_contrib_lowbit_n},
    {OX_CONTRIB_DOMAIN, ox_schema_contrib_quant, &ox_schema_contrib_quant_n},
    {"", ox_schema_contrib_default, &ox_schema_contrib_default_n},
};
#define N_HANDS (sizeof hands / sizeof hands[0])

static const char *norm_domain(const char *d) {
  if (!d || strcmp(d, "ai.onnx") == 0) return "";
  return d;
}

/* the hand-table slot holding (domain, op), or NULL */
static const ox_schema *const *find_hand(const char *domain, const char *op) {
  for (size_t t = 0; t < N_HANDS; t++) {
    if (strcmp(hands[t].domain, domain) != 0) continue;
    for (size_t i = 0; i < *hands[t].n; i++)
      if (strcmp(hands[t].entries[i]->name, op) == 0) return &hands[t].entries[i];
  }
  return NULL;
}

static const ox_schema_op *find_op(const char *domain, const char *op) {
  if (!op) return NULL;
  domain = norm_domain(domain);
  size_t lo = 0, hi = ox_schema_ops_n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const ox_schema_op *o = &ox_schema_ops[mid];
    int c = strcmp(o->domain, domain);
    if (c == 0) c = strcmp(o->name, op);
    if (c == 0) return o;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const ox_schema *ox_schema_lookup(const char *domain, const char *op, int64_t opset) {
  if (!op) return NULL;
  const ox_schema_op *o = find_op(domain, op);
  if (!o) {
    const ox_schema *const *h = find_hand(norm_domain(domain), op);
    return h && (*h)->since_version <= opset ? *h : NULL;
  }
  const ox_schema *best = NULL;
  for (int i = 0; i < o->count; i++) {
    const ox_schema *s = &ox_schema_table[o->first + i];
    if (s->since_version <= opset) best = s;
  }
  return best;
}

const ox_schema *const *ox_schema_versions(const char *domain, const char *op, size_t *n) {
  const ox_schema_op *o = find_op(domain, op);
  if (!o) {
    const ox_schema *const *h = op ? find_hand(norm_domain(domain), op) : NULL;
    if (n) *n = h ? 1 : 0;
    return h;
  }
  if (n) *n = (size_t)o->count;
  return &ox_schema_ptrs[o->first];
}

size_t ox_schema_count(void) {
  size_t n = ox_schema_table_n;
  for (size_t t = 0; t < N_HANDS; t++) n += *hands[t].n;
  return n;
}

const ox_schema *ox_schema_at(size_t i) {
  if (i < ox_schema_table_n) return &ox_schema_table[i];
  i -= ox_schema_table_n;
  for (size_t t = 0; t < N_HANDS; t++) {
    if (i < *hands[t].n) return hands[t].entries[i];
    i -= *hands[t].n;
  }
  return NULL;
}

int64_t ox_schema_max_opset(const char *domain) {
  domain = norm_domain(domain);
  if (strcmp(domain, OX_ONNXC_DOMAIN) == 0) return OX_ONNXC_OPSET;
  if (strcmp(domain, OX_CONTRIB_DOMAIN) == 0) return OX_CONTRIB_OPSET;
  for (size_t i = 0; i < ox_schema_domains_n; i++)
    if (strcmp(ox_schema_domains[i].domain, domain) == 0) return ox_schema_domains[i].max_opset;
  /* ai.onnx.training exists with version 1 and no operators (notes §4.1). */
  if (strcmp(domain, "ai.onnx.training") == 0) return 1;
  return 0;
}

const char *ox_schema_function_body(const ox_schema *s, int64_t opset) {
  if (!s) return NULL;
  const char *best = NULL;
  for (size_t i = 0; i < s->n_bodies; i++)
    if (s->bodies[i].opset <= opset) best = s->bodies[i].text;
  return best;
}

const char *ox_schema_attr_type_doc(int32_t type) {
  switch (type) {
    case OX_ATTR_FLOAT:
      return "float";
    case OX_ATTR_INT:
      return "int";
    case OX_ATTR_STRING:
      return "string";
    case OX_ATTR_TENSOR:
      return "tensor";
    case OX_ATTR_GRAPH:
      return "graph";
    case OX_ATTR_SPARSE_TENSOR:
      return "sparse_tensor";
    case OX_ATTR_TYPE_PROTO:
      return "type_proto";
    case OX_ATTR_FLOATS:
      return "list of floats";
    case OX_ATTR_INTS:
      return "list of ints";
    case OX_ATTR_STRINGS:
      return "list of strings";
    case OX_ATTR_TENSORS:
      return "list of tensors";
    case OX_ATTR_GRAPHS:
      return "list of graphs";
    case OX_ATTR_SPARSE_TENSORS:
      return "list of sparse_tensors";
    case OX_ATTR_TYPE_PROTOS:
      return "list of type_protos";
    default:
      return "undefined";
  }
}

const ox_attr_schema *ox_schema_find_attr(const ox_schema *s, const char *name) {
  if (!s || !name) return NULL;
  for (size_t i = 0; i < s->n_attrs; i++)
    if (strcmp(s->attrs[i].name, name) == 0) return &s->attrs[i];
  return NULL;
}

const ox_type_constraint *ox_schema_find_constraint(const ox_schema *s, const char *name) {
  if (!s || !name) return NULL;
  for (size_t i = 0; i < s->n_constraints; i++)
    if (strcmp(s->constraints[i].name, name) == 0) return &s->constraints[i];
  return NULL;
}
