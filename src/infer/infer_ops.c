/* infer_ops.c - what the operator files of shape inference share (the
 * helpers declared at the end of infer_impl.h), and the lookup of an
 * operator's shape function in their tables. One file per operator family:
 * infer_ops_elementwise.c, infer_ops_tensor.c, infer_ops_nn.c,
 * infer_ops_control.c, infer_ops_signal.c, infer_ops_ml.c, and onnxc's own
 * operators (ai.onnxc) in infer_ops_onnxc.c, onnxruntime's com.microsoft
 * ones in infer_ops_contrib_*.c. */
#include <string.h>

#include "infer_impl.h"

int ix_same_as_input0(ox_ictx *c) {
  ix_copy_type(c, 0, 0);
  return OX_OK;
}

const ox_dimv *ix_dimv_of(ox_ictx *c, size_t i) {
  if (!ix_has_input(c, i)) return NULL;
  if (c->in_data[i]) return c->in_data[i];
  int64_t *v;
  size_t n;
  if (c->in_const[i] && ix_const_ints(c, i, &v, &n)) {
    ox_dimv *d = ix_dimv_new(c, n);
    if (!d) return NULL;
    for (size_t k = 0; k < n; k++) d->d[k] = ox_dim_known(v[k]);
    d->is_scalar = c->in_const[i]->n_dims == 0;
    c->in_data[i] = d;
    return d;
  }
  return NULL;
}

/* Output 0 carries input 0's values in the same flat order (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity). */
void ix_pass_values(ox_ictx *c) {
  const ox_dimv *v = ix_dimv_of(c, 0);
  if (!v || c->out_data[0]) return;
  ox_dimv *r = ix_dimv_new(c, v->n);
  if (!r) return;
  if (v->n) memcpy(r->d, v->d, v->n * sizeof(ox_dim));
  r->is_scalar = c->out[0] && c->out[0]->shape && c->out[0]->shape->n_dim == 0;
  c->out_data[0] = r;
}

ox_dim *ix_dims_new(ox_ictx *c, size_t n) {
  return ox_arena_calloc(c->a, n ? n : 1, sizeof(ox_dim));
}

int ix_same_shape_as(ox_ictx *c, size_t out, size_t in, int32_t el) {
  const ox_dim *d;
  size_t r;
  if (ix_shape(c, in, &d, &r))
    ix_set_tensor(c, out, el, d, (int64_t)r);
  else
    ix_set_tensor(c, out, el, NULL, -1);
  return OX_OK;
}

/* The tables share no (domain, op) pair, so their order does not matter. */
static const ox_infer_def *const tables[] = {
    ox_infer_defs_elementwise, ox_infer_defs_tensor,         ox_infer_defs_nn,
    ox_infer_defs_control,     ox_infer_defs_signal,         ox_infer_defs_ml,
    ox_infer_defs_onnxc,       ox_infer_defs_contrib_nn,     ox_infer_defs_contrib_attn,
    ox_infer_defs_contrib_gqa, ox_infer_defs_contrib_lowbit, ox_infer_defs_contrib_quant,
};

const ox_infer_def *ox_infer_find(const char *domain, const char *op, int64_t since) {
  bool dflt = ox_is_default_domain(domain);
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ox_infer_def *d = tables[t]; d->op; d++) {
      bool dd = ox_is_default_domain(d->domain);
      if (dd != dflt || (!dd && strcmp(d->domain, domain) != 0)) continue;
      if (strcmp(d->op, op) == 0 && since >= d->since_min && since <= d->since_max) return d;
    }
  return NULL;
}
