/* match.c - small pattern helpers shared by the passes of src/opt/. */
#include <stdio.h>
#include <string.h>

#include "pass.h"

bool ox_opt_op_is(const ox_node *n, const char *op) {
  return n->op_type && strcmp(n->op_type, op) == 0 &&
         (!n->domain || ox_is_default_domain(n->domain));
}

bool ox_opt_given(const ox_node *n, size_t i) {
  return i < n->n_input && n->input[i] && *n->input[i];
}

int64_t ox_opt_elems(const ox_tensor *t) {
  int64_t n;
  return t && ox_numel(t->dims, t->n_dims, &n) ? n : -1;
}

bool ox_opt_is_q8(int32_t t) { return t == OX_UINT8 || t == OX_INT8; }

int64_t ox_opt_producer(const ox_pass_view *v, const char *name, size_t before) {
  if (!name || !*name) return -1;
  for (size_t i = before; i-- > 0;) {
    const ox_node *n = &v->nodes[i];
    if (v->drop[i] || v->repl[i]) continue;
    for (size_t k = 0; k < n->n_output; k++)
      if (n->output[k] && strcmp(n->output[k], name) == 0) return k == 0 ? (int64_t)i : -1;
  }
  return -1;
}

bool ox_opt_dq_unit(const ox_pass_view *v, int64_t at, bool need_zp) {
  if (at < 0) return false;
  const ox_node *d = &v->nodes[at];
  if (!ox_opt_op_is(d, "DequantizeLinear") || v->opsets[at] < 10 || d->n_output != 1 ||
      d->n_input < 2 || d->n_input > 3 || ox_node_attr_int(d, "block_size", 0) != 0)
    return false;
  const ox_tensor *s = v->constant(v, d->input[1]);
  if (!s || s->data_type != OX_FLOAT) return false;
  if (!ox_opt_given(d, 2)) return !need_zp;
  const ox_tensor *z = v->constant(v, d->input[2]);
  return z && ox_opt_is_q8(z->data_type) && ox_opt_elems(z) == ox_opt_elems(s);
}

bool ox_opt_q_unit(const ox_pass_view *v, int64_t at, const char *input) {
  if (at < 0) return false;
  const ox_node *q = &v->nodes[at];
  if (!ox_opt_op_is(q, "QuantizeLinear") || v->opsets[at] < 10 || q->n_input < 2 ||
      q->n_output != 1 || !q->output[0] || !*q->output[0] || strcmp(q->input[0], input) != 0)
    return false;
  const ox_tensor *ys = v->constant(v, q->input[1]);
  if (!ys || ys->data_type != OX_FLOAT || ox_opt_elems(ys) != 1) return false;
  if (ox_opt_given(q, 2)) {
    const ox_tensor *yz = v->constant(v, q->input[2]);
    return yz && ox_opt_is_q8(yz->data_type) && ox_opt_elems(yz) == 1;
  }
  /* without a zero point the output is uint8, unless an attribute says otherwise */
  return !(v->opsets[at] >= 21 && ox_node_attr_int(q, "output_dtype", 0) != 0);
}

ox_node *ox_opt_new_node(ox_pass_view *v, const ox_node *like, const char *op, size_t n_in,
                         size_t n_extra_attrs) {
  ox_node *fn = ox_arena_calloc(v->a, 1, sizeof *fn);
  char **ins = ox_arena_calloc(v->a, n_in + 1, sizeof *ins);
  char **outs = ox_arena_calloc(v->a, 1, sizeof *outs);
  ox_attr *at = ox_arena_calloc(v->a, like->n_attribute + n_extra_attrs + 1, sizeof *at);
  if (!fn || !ins || !outs || !at) {
    ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
    return NULL;
  }
  *fn = *like;
  fn->op_type = (char *)op;
  fn->domain = (char *)OX_ONNXC_DOMAIN;
  fn->input = ins;
  fn->n_input = n_in;
  fn->output = outs;
  fn->n_output = 1;
  if (like->n_attribute) memcpy(at, like->attribute, like->n_attribute * sizeof *at);
  fn->attribute = at;
  fn->n_attribute = like->n_attribute;
  return fn;
}

/* the next attribute slot of n (room made by ox_opt_new_node), cleared */
static ox_attr *next_attr(ox_node *n, const char *name, int type) {
  ox_attr *r = &n->attribute[n->n_attribute++];
  memset(r, 0, sizeof *r); /* the slot may hold a copied attribute */
  r->name = (char *)name;
  r->type = type;
  r->has_type = true;
  return r;
}

void ox_opt_add_int_attr(ox_node *n, const char *name, int64_t value) {
  ox_attr *r = next_attr(n, name, OX_ATTR_INT);
  r->i = value;
  r->has_i = true;
}

bool ox_opt_add_ints_attr(ox_pass_view *v, ox_node *n, const char *name, const int64_t *vals,
                          size_t count) {
  int64_t *copy = ox_arena_calloc(v->a, count ? count : 1, sizeof *copy);
  if (!copy) return false;
  if (count) memcpy(copy, vals, count * sizeof *copy);
  ox_attr *r = next_attr(n, name, OX_ATTR_INTS);
  r->ints = copy;
  r->n_ints = count;
  return true;
}

bool ox_opt_const_ints(const ox_pass_view *v, const char *name, int64_t *out, int64_t n) {
  const ox_tensor *t = v->constant_any(v, name);
  if (!t || t->data_type != OX_INT64 || ox_opt_elems(t) != n) return false;
  if ((int64_t)t->n_int64_data == n) {
    memcpy(out, t->int64_data, (size_t)n * sizeof *out);
    return true;
  }
  ox_bytes pl = ox_tensor_payload(t);
  if (!pl.data || pl.size != (size_t)n * 8) return false;
  for (int64_t i = 0; i < n; i++) { /* little-endian, as raw_data is */
    uint64_t x = 0;
    for (int b = 7; b >= 0; b--) x = x << 8 | pl.data[i * 8 + b];
    out[i] = (int64_t)x;
  }
  return true;
}

void ox_opt_add_float_attr(ox_node *n, const char *name, float value) {
  ox_attr *r = next_attr(n, name, OX_ATTR_FLOAT);
  r->f = value;
  r->has_f = true;
}

bool ox_opt_scalar_f32(const ox_tensor *t, float *out) {
  if (!t || t->data_type != OX_FLOAT || ox_opt_elems(t) != 1) return false;
  if (t->n_float_data == 1) {
    *out = t->float_data[0];
    return true;
  }
  ox_bytes pl = ox_tensor_payload(t);
  if (!pl.data || pl.size != 4) return false;
  uint32_t u = (uint32_t)pl.data[0] | (uint32_t)pl.data[1] << 8 | (uint32_t)pl.data[2] << 16 |
               (uint32_t)pl.data[3] << 24;
  memcpy(out, &u, 4);
  return true;
}

bool ox_opt_axes_last(const ox_pass_view *v, const ox_node *n, int64_t opset) {
  if (ox_node_attr_int(n, "keepdims", 1) != 1) return false;
  if (opset < 18) {
    const ox_attr *a = ox_node_attr(n, "axes");
    return a && a->n_ints == 1 && a->ints[0] == -1;
  }
  if (!ox_opt_given(n, 1)) return false;
  const ox_tensor *t = v->constant(v, n->input[1]);
  if (!t || t->data_type != OX_INT64 || ox_opt_elems(t) != 1) return false;
  if (t->n_int64_data == 1) return t->int64_data[0] == -1;
  ox_bytes pl = ox_tensor_payload(t);
  if (!pl.data || pl.size != 8) return false;
  int64_t x = 0;
  for (int b = 7; b >= 0; b--) x = (int64_t)((uint64_t)x << 8 | pl.data[b]);
  return x == -1;
}

bool ox_opt_scalar_q8(const ox_tensor *t, int32_t *out) {
  if (!t || !ox_opt_is_q8(t->data_type) || ox_opt_elems(t) != 1) return false;
  bool sign = t->data_type == OX_INT8;
  if (t->n_int32_data == 1) {
    *out = sign ? (int8_t)t->int32_data[0] : (uint8_t)t->int32_data[0];
    return true;
  }
  ox_bytes pl = ox_tensor_payload(t);
  if (!pl.data || pl.size != 1) return false;
  *out = sign ? (int8_t)pl.data[0] : pl.data[0];
  return true;
}

/* the other input of binary node n when one input is `name`, else NULL */
const char *ox_opt_other_of(const ox_node *n, const char *name) {
  if (n->n_input != 2) return NULL;
  if (strcmp(n->input[0], name) == 0) return n->input[1];
  if (strcmp(n->input[1], name) == 0) return n->input[0];
  return NULL;
}

/* node j is `op` (opset >= min) with one named output */
bool ox_opt_is_node(const ox_pass_view *v, int64_t j, const char *op, int64_t min) {
  const ox_node *n = &v->nodes[j];
  return ox_opt_op_is(n, op) && v->opsets[j] >= min && n->n_output == 1 && n->output[0] &&
         *n->output[0];
}

/* the sole reader of `name` after node `after` when it is `op`, else -1 */
int64_t ox_opt_next_op(const ox_pass_view *v, const char *name, int64_t after, const char *op,
                       int64_t min) {
  int64_t j = v->sole_reader(v, name);
  return j > after && ox_opt_is_node(v, j, op, min) ? j : -1;
}

bool ox_opt_scalar_const(const ox_pass_view *v, const char *name, float *out) {
  if (!name || !*name) return false;
  if (ox_opt_scalar_f32(v->constant_any(v, name), out)) return true;
  ox_pass_floats f;
  if (!v->float_const(v, name, &f) || f.numel != 1) return false;
  *out = f.data[0];
  return true;
}

/* the value of a float scalar constant */
static bool scalar(const ox_pass_view *v, const char *name, float *out) {
  return ox_opt_scalar_const(v, name, out);
}

/* d = Div(h, c0) or Mul(h, c0) -> Erf -> Add c1 -> g = Mul(h, .) -> Mul c2 */
static bool gelu_chain(const ox_pass_view *v, const char *h, int64_t d, int64_t g, ox_opt_gelu *m) {
  const ox_node *dn = &v->nodes[d];
  if (ox_opt_is_node(v, d, "Div", 7)) {
    if (dn->n_input != 2 || strcmp(dn->input[0], h) != 0) return false;
    m->mul_first = false;
  } else if (ox_opt_is_node(v, d, "Mul", 7)) {
    m->mul_first = true;
  } else {
    return false;
  }
  if (!ox_opt_is_node(v, g, "Mul", 7) || !scalar(v, ox_opt_other_of(dn, h), &m->c[0])) return false;
  int64_t e = ox_opt_next_op(v, dn->output[0], d, "Erf", 9);
  if (e < 0 || v->nodes[e].n_input != 1) return false;
  int64_t f = ox_opt_next_op(v, v->nodes[e].output[0], e, "Add", 7);
  if (f < 0 || !scalar(v, ox_opt_other_of(&v->nodes[f], v->nodes[e].output[0]), &m->c[1]))
    return false;
  if (ox_opt_next_op(v, v->nodes[f].output[0], f, "Mul", 7) != g) return false;
  const char *x = ox_opt_other_of(&v->nodes[g], v->nodes[f].output[0]);
  if (!x || strcmp(x, h) != 0) return false;
  int64_t y = ox_opt_next_op(v, v->nodes[g].output[0], g, "Mul", 7);
  if (y < 0 || !scalar(v, ox_opt_other_of(&v->nodes[y], v->nodes[g].output[0]), &m->c[2]))
    return false;
  int64_t nodes[5] = {d, e, f, g, y};
  memcpy(m->nodes, nodes, sizeof nodes);
  return true;
}

/* GELU's erf form on h (made by node `at`): h read once each by exactly
 * two nodes, d and g of the chain (either found first) */
bool ox_opt_match_gelu(const ox_pass_view *v, const char *h, int64_t at, ox_opt_gelu *m) {
  if (v->pinned(v, h)) return false;
  int64_t r[2] = {-1, -1};
  size_t readers = 0, nodes = 0;
  for (size_t k = (size_t)at + 1; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    const ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    bool reads = false;
    for (size_t q = 0; q < n->n_input; q++)
      if (n->input[q] && strcmp(n->input[q], h) == 0) readers++, reads = true;
    if (!reads) continue;
    if (v->repl[k] || nodes == 2) return false;
    r[nodes++] = (int64_t)k;
  }
  if (readers != 2 || nodes != 2) return false;
  return gelu_chain(v, h, r[0], r[1], m) || gelu_chain(v, h, r[1], r[0], m);
}

bool ox_opt_default_domain(const ox_node *n) {
  return !n->domain || ox_is_default_domain(n->domain);
}

bool ox_opt_has_subgraph(const ox_node *n) {
  for (size_t k = 0; k < n->n_attribute; k++)
    if (n->attribute[k].g || n->attribute[k].n_graphs) return true;
  return false;
}

/* node i by its name, or its index and op */
static void node_ref(const ox_pass_view *v, size_t i, char *buf, size_t size) {
  const ox_node *n = &v->nodes[i];
  if (n->name && *n->name)
    snprintf(buf, size, "%s", n->name);
  else
    snprintf(buf, size, "#%zu %s", i, n->op_type ? n->op_type : "?");
}

char *ox_opt_fused_name(ox_pass_view *v, size_t first, size_t last) {
  char fa[160], fb[160];
  node_ref(v, first, fa, sizeof fa);
  node_ref(v, last, fb, sizeof fb);
  return ox_arena_printf(v->a, "fused %s .. %s", fa, fb);
}

/* Readers of `from` after node `after` read `to`; their input arrays are
 * copied first (they may be the caller's model's). */
int ox_opt_rename_reads(ox_pass_view *v, size_t after, const char *from, const char *to) {
  for (size_t k = after + 1; k < v->n_node; k++) {
    if (v->drop[k]) continue;
    ox_node *n = v->repl[k] ? v->repl[k] : &v->nodes[k];
    bool hit = false;
    for (size_t q = 0; q < n->n_input && !hit; q++)
      hit = n->input[q] && strcmp(n->input[q], from) == 0;
    if (!hit) continue;
    char **in = ox_arena_calloc(v->a, n->n_input + 1, sizeof *in);
    if (!in) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
    for (size_t q = 0; q < n->n_input; q++)
      in[q] = n->input[q] && strcmp(n->input[q], from) == 0 ? (char *)to : n->input[q];
    n->input = in;
  }
  v->renamed(v, from, to);
  return OX_OK;
}
