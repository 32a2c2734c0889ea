/* infer_ops_contrib_attn.c - shape functions of onnxruntime's com.microsoft
 * Attention and MultiHeadAttention (schemas in src/schema/schema_contrib_attn.c).
 * Each rejects, naming the node, the shapes the kernel (src/ops/contrib/attn.c) would reject
 * when they are known here. */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

/* d is known and differs from v */
static bool known_not(const ox_dim *d, int64_t v) { return d->has_value && d->value != v; }

/* Checks an int32 key mask (input i) against batch B, sequence S, total T (values or -1). */
static int check_key_mask(ox_ictx *c, size_t i, const char *what, bool allow_4d, int64_t B,
                          int64_t S, int64_t T) {
  const ox_dim *m;
  size_t r;
  if (!ix_has_input(c, i) || !ix_shape(c, i, &m, &r)) return OX_OK;
  bool bad = false;
  if (r == 1) {
    bad = B >= 0 && m[0].has_value && m[0].value != B && m[0].value != 2 * B;
  } else if (r == 2) {
    bad = (B >= 0 && known_not(&m[0], B)) || (T >= 0 && known_not(&m[1], T));
  } else if (r == 3) {
    bad = (B >= 0 && known_not(&m[0], B)) || (S >= 0 && known_not(&m[1], S)) ||
          (T >= 0 && known_not(&m[2], T));
  } else if (r == 4 && allow_4d) {
    bad = (B >= 0 && known_not(&m[0], B)) || known_not(&m[1], 1);
  } else {
    return ix_fail(c, "%s must have rank 1, 2, 3%s, got %zu", what, allow_4d ? " or 4" : "", r);
  }
  if (bad)
    return ix_fail(c, "%s of rank %zu has a wrong shape for batch %lld", what, r, (long long)B);
  return OX_OK;
}

static int64_t val(const ox_dim *d) { return d->has_value ? d->value : -1; }

static int attention(ox_ictx *c) {
  int32_t el = ix_elem(c, 0);
  int64_t N = ix_attr_int(c, "num_heads", 0);
  if (N <= 0) return ix_fail(c, "num_heads must be positive");
  const int64_t *qkv = NULL;
  size_t nq = 0;
  if (ix_attr_ints(c, "qkv_hidden_sizes", &qkv, &nq) && nq != 3)
    return ix_fail(c, "qkv_hidden_sizes must have 3 values, got %zu", nq);
  int64_t hq = -1, hv = -1;
  const ox_dim *w;
  size_t wr;
  if (ix_shape(c, 1, &w, &wr)) {
    if (wr != 2) return ix_fail(c, "weights must be 2-D, got rank %zu", wr);
    if (w[1].has_value) {
      int64_t width = w[1].value;
      if (qkv && qkv[0] + qkv[1] + qkv[2] != width)
        return ix_fail(c,
                       "qkv_hidden_sizes (%lld, %lld, %lld) do not sum to the weights width %lld",
                       (long long)qkv[0], (long long)qkv[1], (long long)qkv[2], (long long)width);
      if (!qkv && width % 3)
        return ix_fail(c, "weights width %lld is not 3 * hidden size", (long long)width);
      if (!qkv) hq = hv = width / 3;
    }
  }
  if (qkv) {
    if (qkv[0] != qkv[1]) return ix_fail(c, "qkv_hidden_sizes must have q equal to k");
    hq = qkv[0], hv = qkv[2];
  }
  if ((hq > 0 && hq % N) || (hv > 0 && hv % N))
    return ix_fail(c, "num_heads %lld does not divide the hidden size %lld", (long long)N,
                   (long long)(hq % N ? hq : hv));
  const ox_dim *x;
  size_t xr;
  ox_dim B = ox_dim_unknown(), S = ox_dim_unknown();
  if (ix_shape(c, 0, &x, &xr)) {
    if (xr != 3) return ix_fail(c, "input must be 3-D (batch, sequence, hidden), got rank %zu", xr);
    B = x[0], S = x[1];
    if (ix_shape(c, 1, &w, &wr) && x[2].has_value && w[0].has_value && x[2].value != w[0].value)
      return ix_fail(c, "input hidden size %lld does not match weights rows %lld",
                     (long long)x[2].value, (long long)w[0].value);
  }
  const ox_dim *b;
  size_t br;
  if (ix_has_input(c, 2) && ix_shape(c, 2, &b, &br) && hq > 0 &&
      (br != 1 || known_not(&b[0], 2 * hq + hv)))
    return ix_fail(c, "bias must be 1-D of length %lld", (long long)(2 * hq + hv));
  ox_dim P = ox_dim_known(0);
  const ox_dim *p;
  size_t pr;
  if (ix_has_input(c, 4) && ix_shape(c, 4, &p, &pr)) {
    if (pr != 5 || known_not(&p[0], 2) || (B.has_value && known_not(&p[1], B.value)) ||
        known_not(&p[2], N) || (hq > 0 && known_not(&p[4], hq / N)))
      return ix_fail(c, "past must be (2, batch, num_heads, past_length, head_size)");
    P = p[3];
  }
  ox_dim T = ox_dim_add(c->a, P, S);
  int rc = check_key_mask(c, 3, "mask_index", true, val(&B), val(&S), val(&T));
  if (rc) return rc;
  ox_dim y[3] = {B, S, hv > 0 ? ox_dim_known(hv) : ox_dim_unknown()};
  ix_set_tensor(c, 0, el, y, 3);
  if (c->n_out > 1) {
    ox_dim pd[5] = {ox_dim_known(2), B, ox_dim_known(N), T,
                    hq > 0 ? ox_dim_known(hq / N) : ox_dim_unknown()};
    ix_set_tensor(c, 1, el, pd, 5);
  }
  return OX_OK;
}

static int mha(ox_ictx *c) {
  int32_t el = ix_elem(c, 0);
  int64_t N = ix_attr_int(c, "num_heads", 0);
  if (N <= 0) return ix_fail(c, "num_heads must be positive");
  const ox_dim *q, *k, *v;
  size_t qr, kr = 0, vr = 0;
  if (!ix_shape(c, 0, &q, &qr)) {
    for (size_t o = 0; o < c->n_out; o++) ix_set_tensor(c, o, el, NULL, -1);
    return OX_OK;
  }
  bool hk = ix_has_input(c, 1) && ix_shape(c, 1, &k, &kr);
  bool hv = ix_has_input(c, 2) && ix_shape(c, 2, &v, &vr);
  ox_dim B = q[0], S = qr > 1 ? q[1] : ox_dim_unknown(), L = ox_dim_unknown();
  ox_dim Hq = ox_dim_unknown(), Hv = ox_dim_unknown();
  if (qr == 5) {
    if (known_not(&q[2], N) || known_not(&q[3], 3))
      return ix_fail(c, "packed query must be (batch, sequence, num_heads, 3, head_size)");
    L = S, Hq = Hv = q[4];
  } else if (qr == 3) {
    if (known_not(&q[2], q[2].value / N * N))
      return ix_fail(c, "num_heads %lld does not divide the query hidden size %lld", (long long)N,
                     (long long)q[2].value);
    Hq = ox_dim_div(c->a, q[2], ox_dim_known(N));
    if (hk && kr == 5) {
      L = k[1], Hv = Hq;
    } else if (hk && kr == 3) {
      L = k[1];
      if (hv && vr == 3) {
        if (known_not(&v[2], v[2].value / N * N))
          return ix_fail(c, "num_heads %lld does not divide the value hidden size %lld",
                         (long long)N, (long long)v[2].value);
        Hv = ox_dim_div(c->a, v[2], ox_dim_known(N));
      }
    } else if (hk && kr == 4) {
      L = k[2];
      if (hv && vr == 4) Hv = v[3];
    } else if (hk) {
      return ix_fail(c, "key must have rank 3, 4 or 5, got %zu", kr);
    }
  } else {
    return ix_fail(c, "query must have rank 3 or 5, got %zu", qr);
  }
  ox_dim P = ox_dim_known(0);
  const ox_dim *p;
  size_t pr;
  if (ix_has_input(c, 6) && ix_shape(c, 6, &p, &pr)) {
    if (pr != 4 || known_not(&p[1], N))
      return ix_fail(c, "past_key must be (batch, num_heads, past_length, head_size)");
    P = p[2];
  }
  ox_dim T = ox_dim_add(c->a, P, L);
  /* a beam-search step: the presents are the past buffers [B, N, M, H] */
  bool beam = ix_has_input(c, 9);
  ox_dim present_len = beam ? P : T;
  if (beam) T = ox_dim_unknown();
  int rc = check_key_mask(c, 4, "key_padding_mask", false, val(&B), val(&S), val(&T));
  if (rc) return rc;
  ox_dim y[3] = {B, S, ox_dim_mul(c->a, ox_dim_known(N), Hv)};
  ix_set_tensor(c, 0, el, y, 3);
  if (c->n_out > 1) {
    ox_dim pk[4] = {B, ox_dim_known(N), present_len, Hq};
    ix_set_tensor(c, 1, el, pk, 4);
  }
  if (c->n_out > 2) {
    ox_dim pv[4] = {B, ox_dim_known(N), present_len, Hv};
    ix_set_tensor(c, 2, el, pv, 4);
  }
  if (c->n_out > 3) {
    ox_dim qk[4] = {B, ox_dim_known(N), S, T};
    ix_set_tensor(c, 3, el, qk, 4);
  }
  return OX_OK;
}

const ox_infer_def ox_infer_defs_contrib_attn[] = {
    {OX_CONTRIB_DOMAIN, "Attention", 1, 1, attention},
    {OX_CONTRIB_DOMAIN, "MultiHeadAttention", 1, 1, mha},
    {NULL, NULL, 0, 0, NULL},
};
