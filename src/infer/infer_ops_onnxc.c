/* infer_ops_onnxc.c - shape functions of onnxc's own operators (domain
 * ai.onnxc, schemas in src/schema/schema_onnxc.c). Each gives the shape the
 * kernel gives: the shape of the operator it extends (Conv, MatMul, Gather,
 * LayerNormalization, Add ...) from the inputs it keeps, and the element
 * type it writes. Attribute values the kernel would refuse are failures
 * here too, naming the node, so that `onnxc check --full` finds them
 * before a session does. */
#include <string.h>

#include "../schema/onnxc_ops.h"
#include "infer_impl.h"

/* A view of c whose inputs are c's inputs idx[0..n) (types replaced where
 * types[k] is not NULL); outputs and failures go to c. */
typedef struct sub_ctx {
  ox_ictx c;
  const ox_type *in[4];
  const ox_dimv *data[4];
  const ox_tensor *cst[4];
  bool present[4];
} sub_ctx;

static void sub_init(sub_ctx *s, ox_ictx *c, const size_t *idx, const ox_type *const *types,
                     size_t n) {
  s->c = *c;
  for (size_t k = 0; k < n; k++) {
    size_t i = idx[k];
    bool have = i < c->n_in && c->in_present[i];
    s->in[k] = types && types[k] ? types[k] : have ? c->in[i] : NULL;
    s->present[k] = have;
    s->data[k] = NULL;
    s->cst[k] = NULL;
  }
  s->c.in = s->in;
  s->c.in_data = s->data;
  s->c.in_const = s->cst;
  s->c.in_present = s->present;
  s->c.n_in = n;
}

static void sub_done(sub_ctx *s, ox_ictx *c) { c->failed = c->failed || s->c.failed; }

/* a tensor type of el and rank dims, in the arena */
static ox_type *tensor_type(ox_ictx *c, int32_t el, const ox_dim *dims, size_t rank) {
  ox_type *t = ox_arena_calloc(c->a, 1, sizeof *t);
  ox_shape *sh = ox_arena_calloc(c->a, 1, sizeof *sh);
  ox_dim *d = ix_dims_new(c, rank);
  if (!t || !sh || !d) return NULL;
  if (rank) memcpy(d, dims, rank * sizeof *d);
  sh->dim = d;
  sh->n_dim = rank;
  t->kind = OX_TYPE_TENSOR;
  t->elem_type = el;
  t->has_elem_type = el != OX_UNDEFINED;
  t->shape = sh;
  return t;
}

/* the element type of an optional 8-bit zero point (input i), uint8 when absent */
static int32_t q8_type_of(ox_ictx *c, size_t i) {
  return ix_has_input(c, i) ? ix_elem(c, i) : OX_UINT8;
}

/* ---- ElementwiseChain: X broadcast with the program's constants ---- */
static int elementwise_chain(ox_ictx *c) {
  const int64_t *ops, *args, *crank, *cdims;
  size_t n_ops, n_args, n_crank = 0, n_cdims = 0;
  const ox_attr *params = ix_attr(c, "params");
  if (!ix_attr_ints(c, "ops", &ops, &n_ops) || !ix_attr_ints(c, "args", &args, &n_args) ||
      !params || n_ops == 0 || n_args != 2 * n_ops || params->n_floats != 2 * n_ops)
    return ix_fail(c, "malformed program: ops, two args and two params per instruction");
  for (size_t k = 0; k < n_ops; k++)
    if (ops[k] < 0 || ops[k] >= FZ_N_OPS)
      return ix_fail(c, "unknown opcode %lld", (long long)ops[k]);
  if (!ix_attr_ints(c, "crank", &crank, &n_crank)) n_crank = 0;
  if (!ix_attr_ints(c, "cdims", &cdims, &n_cdims)) n_cdims = 0;
  const ox_dim *x;
  size_t rx;
  if (!ix_shape(c, 0, &x, &rx)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  /* the output's rank is the largest; each constant's dims are known */
  size_t r = rx, off = 0;
  for (size_t k = 0; k < n_crank; k++) {
    if (crank[k] < 0 || crank[k] > 64 || off + (size_t)crank[k] > n_cdims)
      return ix_fail(c, "malformed constant %zu (crank, cdims)", k);
    if ((size_t)crank[k] > r) r = (size_t)crank[k];
    off += (size_t)crank[k];
  }
  ox_dim *o = ix_dims_new(c, r);
  if (!o) return OX_ENOMEM;
  for (size_t d = 0; d < r; d++) o[d] = d + rx >= r ? x[d + rx - r] : ox_dim_known(1);
  off = 0;
  for (size_t k = 0; k < n_crank; k++) {
    size_t rk = (size_t)crank[k];
    for (size_t d = 0; d < rk; d++) {
      int64_t v = cdims[off + d];
      ox_dim *od = &o[r - rk + d];
      if (v == 1) continue;
      if (od->has_value && od->value != 1 && od->value != v)
        return ix_fail(c, "constant %zu (dim %lld) does not broadcast with %lld", k, (long long)v,
                       (long long)od->value);
      *od = ox_dim_known(v);
    }
    off += rk;
  }
  ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)r);
  return OX_OK;
}

/* FusedConv's max_pool [kh, kw, sh, sw]: the spatial dims of Y pooled by
 * an unpadded window (floor), after Conv's shape was set (rc its code) */
static int max_pooled(ox_ictx *c, int rc) {
  const int64_t *mp;
  size_t n;
  if (rc || !ix_attr_ints(c, OX_ONNXC_ATTR_MAX_POOL, &mp, &n)) return rc;
  if (n != 4 || mp[0] != 3 || mp[1] != 3 || mp[2] != 2 || mp[3] != 2)
    return ix_fail(c, "max_pool must be [3, 3, 2, 2]");
  ox_type *t = c->n_out ? c->out[0] : NULL;
  if (!t || !t->shape || t->shape->n_dim != 4) return rc;
  for (size_t d = 0; d < 2; d++) {
    ox_dim *od = &t->shape->dim[2 + d];
    if (!od->has_value) {
      *od = ox_dim_unknown();
      continue;
    }
    if (od->value < mp[d])
      return ix_fail(c, "max_pool's window %lld exceeds the convolution's output %lld",
                     (long long)mp[d], (long long)od->value);
    *od = ox_dim_known((od->value - mp[d]) / mp[2 + d] + 1);
  }
  return rc;
}

/* ---- FusedConv: Conv's shape of X (or X as in_shuffle_shape) and W ---- */
static int fused_conv(ox_ictx *c) {
  const ox_attr *act = ix_attr(c, OX_ONNXC_ATTR_ACTIVATION);
  if (act && act->type == OX_ATTR_STRING) {
    char name[32] = "";
    size_t n = act->s.size < sizeof name - 1 ? act->s.size : sizeof name - 1;
    if (n) memcpy(name, act->s.data, n);
    if (act->s.size >= sizeof name || ox_onnxc_act_from_name(name) < 0)
      return ix_fail(c, "unknown activation '%s'", name);
  }
  int64_t bound = ix_attr_int(c, OX_ONNXC_ATTR_BOUND, 0);
  if (bound < 0 || bound > 2)
    return ix_fail(c, "bound must be 0, 1 or 2, not %lld", (long long)bound);
  const ox_attr *ps = ix_attr(c, OX_ONNXC_ATTR_PRE_SCALE), *pb = ix_attr(c, OX_ONNXC_ATTR_PRE_BIAS);
  if ((ps || pb) && (!ps || !pb || ps->n_floats != pb->n_floats || ps->n_floats == 0))
    return ix_fail(c, "pre_scale and pre_bias must be float lists of one length");
  bool in_scale = ix_attr_int(c, OX_ONNXC_ATTR_IN_SCALE, 0) != 0;
  if (in_scale && ps) return ix_fail(c, "in_scale and pre_scale exclude each other");
  if (in_scale && !ix_has_input(c, 4)) return ix_fail(c, "in_scale needs the gate G (input 4)");
  const ox_attr *sh = ix_attr(c, OX_ONNXC_ATTR_IN_SHUFFLE);
  const int64_t *ss;
  size_t n_ss;
  bool has_ss = ix_attr_ints(c, OX_ONNXC_ATTR_IN_SHUFFLE_SHAPE, &ss, &n_ss);
  if (!sh && !has_ss) {
    size_t idx[2] = {0, 1};
    sub_ctx s;
    sub_init(&s, c, idx, NULL, 2);
    int rc = ix_conv_shape(&s.c, 1, OX_FLOAT);
    sub_done(&s, c);
    return max_pooled(c, rc);
  }
  bool ok = sh && has_ss && n_ss == 4 && sh->i >= 1 && ss[1] % sh->i == 0;
  for (size_t d = 0; ok && d < 4; d++) ok = ss[d] > 0;
  if (!ok)
    return ix_fail(c,
                   "in_shuffle must be a group count dividing in_shuffle_shape[1], and "
                   "in_shuffle_shape 4 positive dims");
  /* X's elements taken as [N, C, H, W]: as many of them */
  const ox_dim *x;
  size_t rx;
  if (ix_shape(c, 0, &x, &rx)) {
    int64_t want = ss[0] * ss[1] * ss[2] * ss[3], have = 1;
    bool known = true;
    for (size_t d = 0; d < rx && known; d++)
      known = x[d].has_value && ox_mul_i64(have, x[d].value, &have);
    if (known && have != want)
      return ix_fail(c, "the channel shuffle cannot take X of %lld elements as %lld",
                     (long long)have, (long long)want);
  }
  ox_dim d4[4];
  for (size_t d = 0; d < 4; d++) d4[d] = ox_dim_known(ss[d]);
  const ox_type *xt = tensor_type(c, OX_FLOAT, d4, 4);
  if (!xt) return OX_ENOMEM;
  size_t idx[2] = {0, 1};
  const ox_type *types[2] = {xt, NULL};
  sub_ctx s;
  sub_init(&s, c, idx, types, 2);
  s.present[0] = true;
  int rc = ix_conv_shape(&s.c, 1, OX_FLOAT);
  sub_done(&s, c);
  return max_pooled(c, rc);
}

/* ---- QLinearConvFused: Conv's shape of x and w (input 3) ---- */
static int qlinear_conv(ox_ictx *c) {
  if (ix_attr(c, "clip_lo") && ix_attr(c, "clip_hi")) {
    const ox_attr *lo = ix_attr(c, "clip_lo"), *hi = ix_attr(c, "clip_hi");
    if (!(lo->f <= hi->f)) return ix_fail(c, "clip_lo must not exceed clip_hi");
  }
  return ix_conv_shape(c, 3, q8_type_of(c, 7));
}

/* ---- GatherTiedFused: indices' shape + [D] of data [V, D] ---- */
static int gather_tied(ox_ictx *c) {
  if (ix_attr_int(c, "axis", 0) != 0) return ix_fail(c, "axis must be 0");
  const ox_dim *w, *ind;
  size_t rw, ri;
  if (ix_shape(c, 0, &w, &rw) && rw != 2)
    return ix_fail(c, "data must be 2-D, not of rank %zu", rw);
  if (!ix_shape(c, 1, &ind, &ri)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, ri + 1);
  if (!o) return OX_ENOMEM;
  if (ri) memcpy(o, ind, ri * sizeof *o);
  o[ri] = ix_shape(c, 0, &w, &rw) ? w[1] : ox_dim_unknown();
  ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)ri + 1);
  return OX_OK;
}

/* ---- LayerNormFused: X's shape (X + Skip's when Skip is given) ---- */
static int layer_norm(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  int64_t axis = ix_attr_int(c, "axis", -1);
  size_t ax;
  if (ix_shape(c, 0, &x, &r) && !ix_axis(axis, r, &ax))
    return ix_fail(c, "axis %lld out of range for rank %zu", (long long)axis, r);
  if (!ix_has_input(c, 3)) return ix_same_shape_as(c, 0, 0, ix_elem(c, 0));
  size_t idx[2] = {0, 3};
  sub_ctx s;
  sub_init(&s, c, idx, NULL, 2);
  ox_dim *o;
  size_t ro;
  if (ix_broadcast(&s.c, 0, 2, &o, &ro))
    ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)ro);
  else if (!s.c.failed)
    ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1);
  sub_done(&s, c);
  return OX_OK;
}

/* ---- MatMulDQFused: A's shape with K replaced by N of W [K, N] ---- */
static int matmul_dq(ox_ictx *c) {
  if (ix_attr_int(c, "block_size", 0) < 0) return ix_fail(c, "block_size must not be negative");
  const ox_dim *a, *w;
  size_t ra, rw;
  bool have_w = ix_shape(c, 1, &w, &rw);
  if (have_w && rw != 2) return ix_fail(c, "W must be 2-D, not of rank %zu", rw);
  if (!ix_shape(c, 0, &a, &ra)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  if (ra == 0) return ix_fail(c, "A must have rank 1 or more");
  if (have_w && a[ra - 1].has_value && w[0].has_value && a[ra - 1].value != w[0].value)
    return ix_fail(c, "inner dimensions differ: A has %lld, W has %lld", (long long)a[ra - 1].value,
                   (long long)w[0].value);
  ox_dim *o = ix_dims_new(c, ra);
  if (!o) return OX_ENOMEM;
  memcpy(o, a, ra * sizeof *o);
  o[ra - 1] = have_w ? w[1] : ox_dim_unknown();
  ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)ra);
  return OX_OK;
}

/* `act` of MatMulFused and QMatMulScaledFused (up to `last`) */
static int check_mm_act(ox_ictx *c, int64_t last) {
  int64_t act = ix_attr_int(c, "act", OX_ONNXC_MM_NONE);
  if (act < OX_ONNXC_MM_NONE || act > last) return ix_fail(c, "unknown act %lld", (long long)act);
  if (act == OX_ONNXC_MM_GELU &&
      (!ix_attr(c, "gelu_c0") || !ix_attr(c, "gelu_c1") || !ix_attr(c, "gelu_c2")))
    return ix_fail(c, "act 2 needs gelu_c0, gelu_c1 and gelu_c2");
  return OX_OK;
}

/* ---- MatMulFused: MatMul(A, W), float ---- */
static int matmul_trans_b(ox_ictx *c);
static int matmul_fused(ox_ictx *c) {
  if (check_mm_act(c, OX_ONNXC_MM_SILU)) return OX_EMODEL;
  /* trans_b: W is [N, K], MatMulTransBFused's shape */
  if (ix_attr_int(c, "trans_b", 0)) return matmul_trans_b(c);
  return ix_matmul_shape(c, 0, 1, OX_FLOAT);
}

/* ---- QMatMulScaledFused: MatMulInteger(A, B)'s shape, float ---- */
static int qmatmul_scaled(ox_ictx *c) {
  if (check_mm_act(c, OX_ONNXC_MM_GELU)) return OX_EMODEL;
  return ix_matmul_shape(c, 0, 1, OX_FLOAT);
}

/* ---- MatMulTransBFused: MatMul(A, B with its last two axes swapped) ---- */
static int matmul_trans_b(ox_ictx *c) {
  const ox_dim *a, *b;
  size_t ra, rb;
  if (!ix_shape(c, 1, &b, &rb) || rb < 2) return ix_matmul_shape(c, 0, 1, ix_elem(c, 0));
  /* A's last axis against B's last one (the kernel's K) */
  if (ix_shape(c, 0, &a, &ra) && ra >= 1 && a[ra - 1].has_value && b[rb - 1].has_value &&
      a[ra - 1].value != b[rb - 1].value)
    return ix_fail(c, "inner dimensions differ: A has %lld, B (transposed) has %lld",
                   (long long)a[ra - 1].value, (long long)b[rb - 1].value);
  ox_dim *bt = ix_dims_new(c, rb);
  if (!bt) return OX_ENOMEM;
  memcpy(bt, b, rb * sizeof *bt);
  bt[rb - 2] = b[rb - 1];
  bt[rb - 1] = b[rb - 2];
  const ox_type *t = tensor_type(c, ix_elem(c, 1), bt, rb);
  if (!t) return OX_ENOMEM;
  size_t idx[2] = {0, 1};
  const ox_type *types[2] = {NULL, t};
  sub_ctx s;
  sub_init(&s, c, idx, types, 2);
  int rc = ix_matmul_shape(&s.c, 0, 1, ix_elem(c, 0));
  sub_done(&s, c);
  return rc;
}

/* [b, s] of the exporter's Reshape(x, [b0, s0, H, D]) (0 copies x's dim,
 * -1 is inferred), as the kernel's split_dims; false if x cannot split. */
static bool split_dims(ox_ictx *c, const ox_dim *x, size_t r, int64_t b0, int64_t s0, int64_t hd,
                       ox_dim *b, ox_dim *s) {
  if (b0 == -1 && s0 == -1) return false;
  if ((b0 == 0 && r < 1) || (s0 == 0 && r < 2) || b0 < -1 || s0 < -1) return false;
  *b = b0 > 0 ? ox_dim_known(b0) : b0 == 0 ? x[0] : ox_dim_unknown();
  *s = s0 > 0 ? ox_dim_known(s0) : s0 == 0 ? x[1] : ox_dim_unknown();
  /* x's elements / (H * D), when every dim is known */
  int64_t n = 1;
  bool known = true;
  for (size_t d = 0; d < r && known; d++) known = x[d].has_value && ox_mul_i64(n, x[d].value, &n);
  if (known) {
    if (n % hd) return false;
    int64_t rest = n / hd;
    if (b0 == -1 && s->has_value) *b = ox_dim_known(s->value ? rest / s->value : 0);
    if (s0 == -1 && b->has_value) *s = ox_dim_known(b->value ? rest / b->value : 0);
    return b->has_value && s->has_value ? b->value * s->value == rest : true;
  }
  /* [B, S, H * D]: the unknown one is the other of B and S */
  if (r == 3 && ox_dim_is(&x[2], hd)) {
    if (b0 == -1 && s0 == 0) *b = x[0];
    if (s0 == -1 && b0 == 0) *s = x[1];
  }
  (void)c;
  return true;
}

/* ---- MultiHeadAttentionFused: Y [B, Sq, H, D] ---- */
static int mha(ox_ictx *c) {
  int64_t H = ix_attr_int(c, "num_heads", 0), D = ix_attr_int(c, "head_dim", 0);
  if (H <= 0 || D <= 0 || H > ((int64_t)1 << 20) || D > ((int64_t)1 << 20))
    return ix_fail(c, "num_heads and head_dim must be positive");
  const ox_dim *q;
  size_t r;
  if (!ix_shape(c, 0, &q, &r)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, 4), OX_OK;
  ox_dim o[4];
  int64_t qb = ix_attr_int(c, "q_b", -1), qs = ix_attr_int(c, "q_s", -1);
  /* Q with one head of D (q_heads_inferred) is read by every head */
  if (!split_dims(c, q, r, qb, qs, H * D, &o[0], &o[1]) &&
      !(ix_attr_int(c, "q_heads_inferred", 0) && split_dims(c, q, r, qb, qs, D, &o[0], &o[1])))
    return ix_fail(c, "Q does not split into %lld heads of %lld", (long long)H, (long long)D);
  o[2] = ox_dim_known(H);
  o[3] = ox_dim_known(D);
  ix_set_tensor(c, 0, OX_FLOAT, o, 4);
  return OX_OK;
}

/* ---- AttentionBHSDFused: Y [B, H, S, Dv] or [B, S, H, Dv] (y_bshd) ---- */
static int attn_bhsd(ox_ictx *c) {
  if (ix_attr_int(c, "k_transposed", 0) && ix_attr_int(c, "k_bshd", 0))
    return ix_fail(c, "k_transposed and k_bshd cannot both be set");
  const ox_dim *q, *k, *v;
  size_t rq, rk, rv;
  bool have_q = ix_shape(c, 0, &q, &rq), have_k = ix_shape(c, 1, &k, &rk),
       have_v = ix_shape(c, 2, &v, &rv);
  if ((have_q && rq != 4) || (have_k && rk != 4) || (have_v && rv != 4))
    return ix_fail(c, "Q, K and V must have rank 4");
  if (!have_q || !have_k || !have_v) return ix_set_tensor(c, 0, OX_FLOAT, NULL, 4), OX_OK;
  bool qs = ix_attr_int(c, "q_bshd", 0) != 0, kt = ix_attr_int(c, "k_transposed", 0) != 0;
  if (q[3].has_value && k[kt ? 2 : 3].has_value && q[3].value != k[kt ? 2 : 3].value)
    return ix_fail(c, "Q and K have head sizes %lld and %lld", (long long)q[3].value,
                   (long long)k[kt ? 2 : 3].value);
  /* a batch or head count of 1 broadcasts (MatMul's), except Q's heads under kv_groups */
  ox_dim b = ox_dim_is(&q[0], 1) ? k[0] : q[0], h = qs ? q[2] : q[1];
  if (!ix_attr_int(c, "kv_groups", 0) && ox_dim_is(&h, 1))
    h = ix_attr_int(c, "k_bshd", 0) ? k[2] : k[1];
  ox_dim s = qs ? q[1] : q[2];
  ox_dim o[4] = {b, h, s, v[3]};
  if (ix_attr_int(c, "y_bshd", 0)) o[1] = s, o[2] = h;
  ix_set_tensor(c, 0, OX_FLOAT, o, 4);
  return OX_OK;
}

/* ---- KVCacheAppend: present Concat(past, new, axis 2)'s shape (what a
 * run without the cache input makes; the kv_cache pass's rewrite keeps
 * the graph's types); total_len one int64; present_shape four ---- */
static int kv_append(ox_ictx *c) {
  const ox_dim *p, *n;
  size_t rp, rn;
  bool have_p = ix_shape(c, 0, &p, &rp), have_n = ix_shape(c, 1, &n, &rn);
  if ((have_p && rp != 4) || (have_n && rn != 4))
    return ix_fail(c, "past and new must have rank 4 ([B, H, T, D])");
  for (size_t d = 0; have_p && have_n && d < 4; d++)
    if (d != 2 && p[d].has_value && n[d].has_value && p[d].value != n[d].value)
      return ix_fail(c, "past and new differ in dim %zu (%lld and %lld)", d, (long long)p[d].value,
                     (long long)n[d].value);
  if (have_p && have_n) {
    ox_dim o[4] = {p[0], p[1], ox_dim_add(c->a, p[2], n[2]), p[3]};
    ix_set_tensor(c, 0, OX_FLOAT, o, 4);
  } else {
    ix_set_tensor(c, 0, OX_FLOAT, NULL, 4);
  }
  if (c->n_out > 1) ix_set_tensor(c, 1, OX_INT64, NULL, 0);
  ox_dim four = ox_dim_known(4);
  if (c->n_out > 2) ix_set_tensor(c, 2, OX_INT64, &four, 1);
  return OX_OK;
}

/* ---- QAddFused: a and b (inputs 0 and 3) broadcast ---- */
static int qadd(ox_ictx *c) {
  int32_t el = q8_type_of(c, 7);
  size_t idx[2] = {0, 3};
  sub_ctx s;
  sub_init(&s, c, idx, NULL, 2);
  ox_dim *o;
  size_t r;
  if (ix_broadcast(&s.c, 0, 2, &o, &r))
    ix_set_tensor(c, 0, el, o, (int64_t)r);
  else if (!s.c.failed)
    ix_set_tensor(c, 0, el, NULL, -1);
  sub_done(&s, c);
  return OX_OK;
}

/* ---- QLookupFused: x's shape ---- */
static int qlookup(ox_ictx *c) {
  static const char *const ops[] = {"Relu", "LeakyRelu",   "Clip",     "Sigmoid",
                                    "Tanh", "HardSigmoid", "HardSwish"};
  const ox_attr *op = ix_attr(c, "op");
  bool known = false;
  for (size_t k = 0; op && k < sizeof ops / sizeof *ops; k++)
    known = known || (op->s.size == strlen(ops[k]) && memcmp(op->s.data, ops[k], op->s.size) == 0);
  if (!known)
    return ix_fail(c,
                   "op must name Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid or HardSwish");
  return ix_same_shape_as(c, 0, 0, q8_type_of(c, 4));
}

/* ---- RMSNormFused: X's shape; Scale one value or one per column ---- */
static int rms_norm(ox_ictx *c) {
  const ox_dim *x, *g;
  size_t r, rg;
  bool have_x = ix_shape(c, 0, &x, &r);
  if (have_x && r == 0) return ix_fail(c, "X must have rank 1 or more");
  if (ix_has_input(c, 1) && ix_shape(c, 1, &g, &rg)) {
    if (rg > 1) return ix_fail(c, "Scale must have rank 0 or 1, not %zu", rg);
    if (rg == 1 && have_x && g[0].has_value && x[r - 1].has_value && g[0].value != 1 &&
        g[0].value != x[r - 1].value)
      return ix_fail(c, "Scale has %lld values, X's last axis %lld", (long long)g[0].value,
                     (long long)x[r - 1].value);
  }
  return ix_same_shape_as(c, 0, 0, OX_FLOAT);
}

/* ---- RotaryFused: the broadcast shape of X, cos and sin ---- */
static int rotary(ox_ictx *c) {
  if (ix_attr_int(c, "split", 0) < 1) return ix_fail(c, "split must be 1 or more");
  const ox_dim *x;
  size_t r;
  bool have_x = ix_shape(c, 0, &x, &r);
  if (have_x && r == 0) return ix_fail(c, "X must have rank 1 or more");
  ox_dim *o;
  size_t ro;
  if (ix_broadcast(c, 0, 3, &o, &ro)) {
    if (have_x && x[r - 1].has_value && o[ro - 1].has_value && x[r - 1].value != o[ro - 1].value)
      return ix_fail(c, "X's last axis (%lld) is broadcast to %lld by cos or sin",
                     (long long)x[r - 1].value, (long long)o[ro - 1].value);
    ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)ro);
  } else if (!c->failed) {
    ix_set_tensor(c, 0, OX_FLOAT, NULL, -1);
  }
  return OX_OK;
}

/* ---- SiLUMulFused: the broadcast shape of A and B ---- */
static int silu_mul(ox_ictx *c) {
  ox_dim *o;
  size_t ro;
  if (ix_broadcast(c, 0, 2, &o, &ro))
    ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)ro);
  else if (!c->failed)
    ix_set_tensor(c, 0, OX_FLOAT, NULL, -1);
  return OX_OK;
}

const ox_infer_def ox_infer_defs_onnxc[] = {
    {OX_ONNXC_DOMAIN, OX_ONNXC_ATTN_BHSD, 1, 1, attn_bhsd},
    {OX_ONNXC_DOMAIN, OX_ONNXC_ELEMENTWISE_CHAIN, 1, 1, elementwise_chain},
    {OX_ONNXC_DOMAIN, OX_ONNXC_FUSED_CONV, 1, 1, fused_conv},
    {OX_ONNXC_DOMAIN, OX_ONNXC_GATHER_TIED, 1, 1, gather_tied},
    {OX_ONNXC_DOMAIN, OX_ONNXC_KV_APPEND, 1, 1, kv_append},
    {OX_ONNXC_DOMAIN, OX_ONNXC_LAYER_NORM, 1, 1, layer_norm},
    {OX_ONNXC_DOMAIN, OX_ONNXC_MATMUL_DQ, 1, 1, matmul_dq},
    {OX_ONNXC_DOMAIN, OX_ONNXC_MATMUL, 1, 1, matmul_fused},
    {OX_ONNXC_DOMAIN, OX_ONNXC_MATMUL_TRANS_B, 1, 1, matmul_trans_b},
    {OX_ONNXC_DOMAIN, OX_ONNXC_MHA, 1, 1, mha},
    {OX_ONNXC_DOMAIN, OX_ONNXC_QADD, 1, 1, qadd},
    {OX_ONNXC_DOMAIN, OX_ONNXC_QLINEAR_CONV, 1, 1, qlinear_conv},
    {OX_ONNXC_DOMAIN, OX_ONNXC_QLOOKUP, 1, 1, qlookup},
    {OX_ONNXC_DOMAIN, OX_ONNXC_QMATMUL_SCALED, 1, 1, qmatmul_scaled},
    {OX_ONNXC_DOMAIN, OX_ONNXC_RMS_NORM, 1, 1, rms_norm},
    {OX_ONNXC_DOMAIN, OX_ONNXC_ROTARY, 1, 1, rotary},
    {OX_ONNXC_DOMAIN, OX_ONNXC_SILU_MUL, 1, 1, silu_mul},
    {NULL, NULL, 0, 0, NULL},
};
