/* ops_ms_nn.c - C generators of onnxruntime's com.microsoft encoder building blocks
 * (FusedConv, FusedMatMul, the GELU forms, BiasSoftmax, the skip layer norms,
 * EmbedLayerNormalization) and of its default-domain SimplifiedLayerNormalization.
 * Semantics as the runtime's kernels in src/ops/contrib/nn.c.
 *
 * Each is the standard operator it extends, run by that operator's own
 * generator (cg_std_gen): the node seen as the standard one (a copy with the
 * attributes that generator reads), its operands renamed in a block of their
 * own (call_std), after a prologue that forms what the standard operator
 * reads (the residual sum, the gathered embeddings, data + bias, the
 * permuted operands) and before an epilogue (FusedConv's Z and activation,
 * FusedMatMul's alpha). float16 is computed in float and rounded once on the
 * way out (cg_gen_widened), as the runtime's kernels do. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* ---- the node seen as a standard operator ---- */
typedef struct as_std {
  ox_node n;
  ox_attr a[4];
} as_std;

static const ox_node *std_node(as_std *s, const ox_node *n, const char *op) {
  s->n = *n;
  s->n.op_type = (char *)op;
  s->n.domain = (char *)"";
  s->n.attribute = s->a;
  s->n.n_attribute = 0;
  return &s->n;
}

static ox_attr *std_attr(as_std *s, const char *name, int32_t type) {
  ox_attr *a = &s->a[s->n.n_attribute++];
  memset(a, 0, sizeof *a);
  a->name = (char *)name;
  a->type = type;
  a->has_type = true;
  return a;
}

static void std_float(as_std *s, const char *name, float v) {
  ox_attr *a = std_attr(s, name, OX_ATTR_FLOAT);
  a->f = v;
  a->has_f = true;
}

static void std_int(as_std *s, const char *name, int64_t v) {
  ox_attr *a = std_attr(s, name, OX_ATTR_INT);
  a->i = v;
  a->has_i = true;
}

static void std_str(as_std *s, const char *name, const char *v) {
  ox_attr *a = std_attr(s, name, OX_ATTR_STRING);
  a->s.data = (const uint8_t *)v;
  a->s.size = strlen(v);
}

/* Runs the ai.onnx generator of `op` on node sn, whose X<i> are the C
 * pointers xs[i] described by in[i] and Y<j> ys[j] described by out[j]
 * (absent: NULL), declared in a block of their own. A Y may be an X's
 * memory (an in-place pass), so none is restrict. */
static int call_std(cg_ctx *c, const char *op, const ox_node *sn, cg_val **in,
                    const char *const *xs, size_t n_in, cg_val **out, const char *const *ys,
                    size_t n_out) {
  cg_gen_fn g = cg_std_gen(op);
  if (!g) return cg_fail(c, OX_EUNSUPPORTED, "no C generator for %s", op);
  cg_printf(c, "  {\n");
  for (size_t i = 0; i < n_in; i++)
    if (in[i]) cg_printf(c, "    const %s *const a%zu = %s;\n", cg_ctype(in[i]->dtype), i, xs[i]);
  for (size_t j = 0; j < n_out; j++)
    if (out[j]) cg_printf(c, "    %s *const b%zu = %s;\n", cg_ctype(out[j]->dtype), j, ys[j]);
  cg_printf(c, "    {\n");
  for (size_t i = 0; i < n_in; i++)
    if (in[i])
      cg_printf(c, "      const %s *const X%zu = a%zu;\n      (void)X%zu;\n",
                cg_ctype(in[i]->dtype), i, i, i);
  for (size_t j = 0; j < n_out; j++)
    if (out[j])
      cg_printf(c, "      %s *const Y%zu = b%zu;\n      (void)Y%zu;\n", cg_ctype(out[j]->dtype), j,
                j, j);
  int rc = g(c, sn, in, n_in, out, n_out);
  cg_printf(c, "    }\n  }\n");
  return rc;
}

static bool half(int32_t dt) { return dt == OX_FLOAT16 || dt == OX_BFLOAT16; }

/* the float generator f, through float copies when an operand is float16 */
static int widened(cg_ctx *c, cg_gen_fn f, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  bool h = false;
  for (size_t i = 0; i < n_in; i++) h |= in[i] && half(in[i]->dtype);
  for (size_t j = 0; j < n_out; j++) h |= out[j] && half(out[j]->dtype);
  if (h) return cg_gen_widened(c, f, n, in, n_in, out, n_out);
  for (size_t i = 0; i < n_in; i++)
    if (in[i] && in[i]->dtype != OX_INT32 && cg_need_float(c, in[i])) return c->e->code;
  return f(c, n, in, n_in, out, n_out);
}

/* A scratch array's C expression (NULL when out of memory, the error set);
 * alive through the node's call, inside a control-flow body too. */
static const char *scratch(cg_ctx *c, int32_t dt, int64_t numel) {
  cg_val *s = cg_scratch_in_body(c, dt, numel);
  const char *r = s ? cg_ref(c, s) : NULL;
  if (!r) ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  return r;
}

static int need_vec(cg_ctx *c, const cg_val *v, const char *what, int64_t n) {
  if (v && (v->rank != 1 || v->dims[0] != n))
    return cg_fail(c, OX_EMODEL, "%s must be 1-D of the hidden size %lld", what, (long long)n);
  return OX_OK;
}

/* ---- the GELU forms ---- */
/* Y0 = X0 + bias (X1, along the last axis), rounded to Y0's type as the Add
 * node these fuse does (the runtime's order), for the GELU pass to read */
static void bias_into_y(cg_ctx *c, const cg_val *x) {
  int64_t H = x->rank ? x->dims[x->rank - 1] : 1;
  bool sf = cg_is_small_float(x->dtype);
  const char *a = sf ? cg_load(c, x->dtype, "X0[i]") : "X0[i]";
  const char *b = sf ? cg_load(c, x->dtype, "X1[i % H]") : "X1[i % H]";
  const char *sum = ox_arena_printf(c->a, "(%s + %s)", a ? a : "0", b ? b : "0");
  const char *st = sf ? cg_store(c, x->dtype, sum, false) : sum;
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n    const size_t H = %lld;\n",
            (long long)x->numel, (long long)H);
  cg_printf(c, "    Y0[i] = %s;\n  }\n", st ? st : "0");
}

/* Gelu (erf), FastGelu (tanh, X + bias?), BiasGelu (erf, A + B): ai.onnx
 * Gelu's generator, on Y0 after the bias was added into it */
static int gen_gelu_form(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_out;
  if (n_in < 1 || !in[0]) return cg_fail(c, OX_EMODEL, "expects X");
  const cg_val *x = in[0], *b = n_in > 1 ? in[1] : NULL;
  if (!cg_is_small_float(x->dtype) && cg_need_float(c, x)) return c->e->code;
  if (b && b->dtype != x->dtype) return cg_fail(c, OX_EMODEL, "bias is of another type than X");
  if (b && need_vec(c, b, "bias", x->rank ? x->dims[x->rank - 1] : 1)) return c->e->code;
  as_std s;
  const ox_node *sn = std_node(&s, n, "Gelu");
  if (strcmp(n->op_type, "FastGelu") == 0) std_str(&s, "approximate", "tanh");
  if (!b)
    return call_std(c, "Gelu", sn, in, (const char *const[]){"X0"}, 1, out,
                    (const char *const[]){"Y0"}, 1);
  bias_into_y(c, x);
  cg_val *y_in[1] = {out[0]};
  return call_std(c, "Gelu", sn, y_in, (const char *const[]){"Y0"}, 1, out,
                  (const char *const[]){"Y0"}, 1);
}

/* QuickGelu: x * sigmoid(alpha x), ai.onnx Swish's generator (the
 * runtime's kernel is Swish's too) */
static int gen_quick_gelu(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  as_std s;
  const ox_node *sn = std_node(&s, n, "Swish");
  std_float(&s, "alpha", ox_node_attr_float(n, "alpha", 1.702f));
  return call_std(c, "Swish", sn, in, (const char *const[]){"X0"}, n_in > 1 ? 1 : n_in, out,
                  (const char *const[]){"Y0"}, n_out > 1 ? 1 : n_out);
}

/* ---- the layer norms ---- */
/* LayerNormalization (or RMSNormalization when rms) over the last axis of
 * the rows at `src` (described by x), gamma X<g>, beta X<b> (-1: none),
 * into Y0 and the statistics outputs mean_o / inv_o (-1: none) */
static int norm_rows(cg_ctx *c, const ox_node *n, const cg_val *x, const char *src, cg_val **in,
                     int g, int b, cg_val **out, int mean_o, int inv_o, bool rms, float eps) {
  as_std s;
  const ox_node *sn = std_node(&s, n, rms ? "RMSNormalization" : "LayerNormalization");
  std_float(&s, "epsilon", eps);
  std_int(&s, "axis", -1);
  cg_val xv = *x, *nin[3] = {&xv, in[g], b >= 0 ? in[b] : NULL}, *nout[3] = {out[0], NULL, NULL};
  const char *xs[3] = {src, ox_arena_printf(c->a, "X%d", g), ox_arena_printf(c->a, "X%d", b)};
  const char *ys[3] = {"Y0", NULL, NULL};
  if (rms) { /* RMSNormalization's generator writes inv_std_var as its Y1 */
    if (inv_o >= 0 && out[inv_o]) nout[1] = out[inv_o], ys[1] = ox_arena_printf(c->a, "Y%d", inv_o);
  } else {
    if (mean_o >= 0 && out[mean_o])
      nout[1] = out[mean_o], ys[1] = ox_arena_printf(c->a, "Y%d", mean_o);
    if (inv_o >= 0 && out[inv_o]) nout[2] = out[inv_o], ys[2] = ox_arena_printf(c->a, "Y%d", inv_o);
  }
  return call_std(c, sn->op_type, sn, nin, xs, b >= 0 ? 3 : 2, nout, ys, 3);
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) and
 * SkipSimplifiedLayerNormalization (input, skip, gamma, bias?): s = input +
 * skip + bias (skip of input's shape, or [1, S, H] / [S, H] repeated over
 * the batch), the norm of s over the last axis; outputs mean?, inv_std_var?,
 * input_skip_bias_sum? (s) */
static int gen_skip_ln_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  bool rms = strcmp(n->op_type, "SkipSimplifiedLayerNormalization") == 0;
  if (n_in < 3 || !in[0] || !in[1] || !in[2])
    return cg_fail(c, OX_EMODEL, "expects input, skip, gamma");
  const cg_val *x = in[0], *skip = in[1];
  int bi = rms ? 3 : 4, be = rms ? -1 : 3;
  const cg_val *beta = be >= 0 && (size_t)be < n_in ? in[be] : NULL;
  const cg_val *bias = (size_t)bi < n_in ? in[bi] : NULL;
  if (x->rank != 2 && x->rank != 3)
    return cg_fail(c, OX_EMODEL, "input must be 2-D or 3-D, got rank %zu", x->rank);
  int64_t H = x->dims[x->rank - 1], S = x->dims[x->rank - 2];
  bool same = skip->rank == x->rank && memcmp(skip->dims, x->dims, x->rank * sizeof(int64_t)) == 0;
  bool bcast = x->rank == 3 && ((skip->rank == 3 && skip->dims[0] == 1) || skip->rank == 2) &&
               skip->dims[skip->rank - 1] == H && skip->dims[skip->rank - 2] == S;
  if (!same && !bcast)
    return cg_fail(c, OX_EMODEL,
                   "skip must have the input's shape, or [1, S, H] or [S, H] for a 3-D input");
  if (need_vec(c, in[2], "gamma", H) || need_vec(c, beta, "beta", H) ||
      need_vec(c, bias, "bias", H))
    return c->e->code;
  bool want_sum = n_out > 3 && out[3];
  const char *sum = want_sum ? "Y3" : scratch(c, x->dtype, x->numel);
  if (!sum) return c->e->code;
  const char *T = cg_ctype(x->dtype);
  cg_printf(c, "  {\n    %s *s = %s;\n", T, sum);
  cg_printf(c,
            "    for (size_t i = 0; i < %lld; i++)\n      s[i] = X0[i] + X1[i %% %lld]%s;\n  }\n",
            (long long)x->numel, (long long)skip->numel,
            bias ? ox_arena_printf(c->a, " + X%d[i %% %lld]", bi, (long long)H) : "");
  if (rms && n_out > 1 && out[1]) /* mean: none for the RMS form (0, as the runtime writes) */
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y1[i] = 0;\n", (long long)out[1]->numel);
  float eps = ox_node_attr_float(n, "epsilon", 1e-12f);
  return norm_rows(c, n, x, sum, in, 2, beta ? be : -1, out, n_out > 1 ? 1 : -1, n_out > 2 ? 2 : -1,
                   rms, eps);
}

static int gen_skip_ln(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  return widened(c, gen_skip_ln_f, n, in, n_in, out, n_out);
}

/* SimplifiedLayerNormalization (default domain; float16 widened by the
 * driver, cg_widen.c): RMSNormalization over the axes from `axis`, scale
 * broadcast (numpy) to those axes first when it has fewer values;
 * inv_std_var? */
static int gen_simplified_ln(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects X and scale");
  const cg_val *x = in[0];
  if (cg_need_float(c, x)) return c->e->code;
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), x->rank, &ax))
    return cg_fail(c, OX_EMODEL, "axis is out of range");
  cg_val norm = {0}, sc = *in[1];
  norm.rank = x->rank - ax;
  memcpy(norm.dims, x->dims + ax, norm.rank * sizeof(int64_t));
  ox_numel(norm.dims, norm.rank, &norm.numel);
  const char *scale = "X1";
  if (sc.numel != norm.numel) {
    bool ok = sc.rank <= norm.rank;
    for (size_t k = 0; ok && k < sc.rank; k++) {
      int64_t d = sc.dims[sc.rank - 1 - k];
      ok = d == 1 || d == norm.dims[norm.rank - 1 - k];
    }
    if (!ok)
      return cg_fail(c, OX_EMODEL, "scale of %lld values does not broadcast to the normalized axes",
                     (long long)sc.numel);
    if (!(scale = scratch(c, x->dtype, norm.numel))) return c->e->code;
    cg_val *ops[1] = {in[1]};
    cg_printf(c, "  {\n    %s *w = %s;\n", cg_ctype(x->dtype), scale);
    cg_bcast_loop(c, norm.dims, norm.rank, ops, 1, "w[o] = X1[i0];");
    cg_printf(c, "  }\n");
    sc.rank = 1;
    sc.dims[0] = sc.numel = norm.numel;
  }
  as_std s;
  const ox_node *sn = std_node(&s, n, "RMSNormalization");
  std_float(&s, "epsilon", ox_node_attr_float(n, "epsilon", 1e-5f));
  std_int(&s, "axis", (int64_t)ax);
  cg_val *nin[2] = {in[0], &sc};
  return call_std(c, "RMSNormalization", sn, nin, (const char *const[]){"X0", scale}, 2, out,
                  (const char *const[]){"Y0", "Y1"}, n_out > 1 ? 2 : 1);
}

/* EmbedLayerNormalization: s = word[input_ids] + position[position_ids or
 * s] + segment[segment_ids], LayerNorm(s) over the hidden axis;
 * mask_index[b] = the count of ones in mask row b (0 without a mask);
 * embedding_sum? s. An id out of its table (the runtime's error) adds a
 * row of zeros here: the generated code reads nothing out of bounds. */
static int gen_embed_ln_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  cg_val *v[9] = {0};
  for (size_t i = 0; i < n_in && i < 9; i++) v[i] = in[i];
  const cg_val *ids = v[0], *seg = v[1], *word = v[2], *pos = v[3], *segemb = v[4], *mask = v[7],
               *pids = v[8];
  if (!ids || ids->rank != 2 || ids->dtype != OX_INT32)
    return cg_fail(c, OX_EMODEL, "input_ids must be 2-D int32");
  if (!word || !pos || !v[5] || !v[6] || word->rank != 2 || pos->rank != 2)
    return cg_fail(c, OX_EMODEL, "expects 2-D word and position embeddings, gamma and beta");
  if ((!seg) != (!segemb))
    return cg_fail(c, OX_EMODEL, "segment_ids and segment_embedding go together");
  int64_t B = ids->dims[0], S = ids->dims[1], H = word->dims[1];
  if (pos->dims[1] != H || (segemb && (segemb->rank != 2 || segemb->dims[1] != H)))
    return cg_fail(c, OX_EMODEL, "the embedding tables must have word_embedding's width");
  if (need_vec(c, v[5], "gamma", H) || need_vec(c, v[6], "beta", H)) return c->e->code;
  if (pids && (pids->rank != 2 || pids->dims[1] != S || (pids->dims[0] != 1 && pids->dims[0] != B)))
    return cg_fail(c, OX_EMODEL, "position_ids must be [1, S] or [B, S]");
  if ((seg && seg->numel != B * S) || (mask && mask->numel != B * S))
    return cg_fail(c, OX_EMODEL, "segment_ids and mask must have input_ids' shape");
  if (n_out > 1 && out[1]) {
    cg_printf(c, "  for (size_t b = 0; b < %lld; b++) {\n    int32_t k = 0;\n", (long long)B);
    if (mask)
      cg_printf(c, "    for (size_t j = 0; j < %lld; j++) k += X7[b * %lld + j] == 1;\n",
                (long long)S, (long long)S);
    cg_printf(c, "    Y1[b] = k;\n  }\n");
  }
  bool want_sum = n_out > 2 && out[2];
  const char *sum = want_sum ? "Y2" : scratch(c, out[0]->dtype, out[0]->numel);
  if (!sum) return c->e->code;
  const char *T = cg_ctype(out[0]->dtype);
  cg_printf(c, "  {\n    %s *s = %s;\n", T, sum);
  cg_printf(c, "    for (long long r = 0; r < %lld; r++) {\n", (long long)(B * S));
  cg_printf(c, "      const long long w = X0[r], sp = r %% %lld;\n      (void)sp;\n", (long long)S);
  /* position_ids [B, S]: row r's own; [1, S]: the one row for every batch */
  cg_printf(c, "      const long long p = %s;\n",
            pids ? (pids->dims[0] > 1 ? "X8[r]" : "X8[sp]") : "sp");
  cg_printf(c, "      const long long g = %s;\n", seg ? "X1[r]" : "0");
  cg_printf(
      c, "      const int ok = w >= 0 && w < %lld && p >= 0 && p < %lld && g >= 0 && g < %lld;\n",
      (long long)word->dims[0], (long long)pos->dims[0], (long long)(segemb ? segemb->dims[0] : 1));
  cg_printf(c, "      for (long long h = 0; h < %lld; h++)\n", (long long)H);
  cg_printf(c, "        s[r * %lld + h] = ok ? X2[w * %lld + h] + X3[p * %lld + h]%s : 0;\n",
            (long long)H, (long long)H, (long long)H,
            segemb ? ox_arena_printf(c->a, " + X4[g * %lld + h]", (long long)H) : "");
  cg_printf(c, "    }\n  }\n");
  cg_val x = *out[0];
  return norm_rows(c, n, &x, sum, in, 5, 6, out, -1, -1, false,
                   ox_node_attr_float(n, "epsilon", 1e-12f));
}

static int gen_embed_ln(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  return widened(c, gen_embed_ln_f, n, in, n_in, out, n_out);
}

/* ---- BiasSoftmax ---- */
/* Y = Softmax(data + bias) over the axes from `axis` taken as one; bias
 * (right-aligned) matches data from `axis` on and, before it, repeats over
 * the leading axes (is_inner_broadcast 0) or the trailing ones (1): row q
 * of data adds bias row q % brows, or q / (rows / brows). ai.onnx Softmax's
 * generator then runs in place on the rows. */
static int gen_bias_softmax_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                              size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects data and bias");
  const cg_val *x = in[0], *b = in[1];
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 1), x->rank, &ax))
    return cg_fail(c, OX_EMODEL, "axis is out of range");
  if (!ox_node_attr(n, "is_inner_broadcast"))
    return cg_fail(c, OX_EMODEL, "attribute is_inner_broadcast is required");
  bool inner = ox_node_attr_int(n, "is_inner_broadcast", 0) != 0;
  int64_t rows, len;
  cg_split(x, ax, &rows, &len);
  len *= x->dims[ax];
  bool ok = b->rank <= x->rank && len > 0 && b->numel % len == 0;
  for (size_t k = 0; ok && k < b->rank; k++) { /* from axis on: data's dims */
    size_t d = x->rank - b->rank + k;
    ok = d < ax || b->dims[k] == x->dims[d];
  }
  /* before axis, bias's dims (1 where it has none) equal data's on the
   * leading axes and are 1 on the trailing ones (inner), or the reverse */
  int64_t bd[CG_MAX_RANK];
  for (size_t k = 0; ok && k < ax; k++)
    bd[k] = k + b->rank >= x->rank ? b->dims[k + b->rank - x->rank] : 1;
  size_t first = ax, last = 0; /* the axes where bias repeats */
  for (size_t k = 0; ok && k < ax; k++)
    if (bd[k] != x->dims[k]) {
      ok = bd[k] == 1;
      if (first == ax) first = k;
      last = k;
    }
  for (size_t k = 0; ok && first < ax && k < ax; k++)
    if (bd[k] != 1 && (inner ? k > first : k < last)) ok = false;
  int64_t brows = ok ? b->numel / len : 0;
  if (!ok || !brows || rows % brows)
    return cg_fail(c, OX_EMODEL, "bias does not broadcast to data as is_inner_broadcast=%d allows",
                   inner ? 1 : 0);
  cg_printf(c, "  for (size_t q = 0; q < %lld; q++)\n    for (size_t k = 0; k < %lld; k++)\n",
            (long long)rows, (long long)len);
  cg_printf(c, "      Y0[q * %lld + k] = X0[q * %lld + k] + X1[(%s) * %lld + k];\n", (long long)len,
            (long long)len,
            inner ? ox_arena_printf(c->a, "q / %lld", (long long)(rows / brows))
                  : ox_arena_printf(c->a, "q %% %lld", (long long)brows),
            (long long)len);
  as_std s;
  const ox_node *sn = std_node(&s, n, "Softmax");
  std_int(&s, "axis", 1); /* the rows as a [rows, len] matrix: axis 1 in every opset */
  cg_val y = *out[0];
  y.rank = 2;
  y.dims[0] = rows;
  y.dims[1] = len;
  cg_val *sin[1] = {&y}, *sout[1] = {&y};
  return call_std(c, "Softmax", sn, sin, (const char *const[]){"Y0"}, 1, sout,
                  (const char *const[]){"Y0"}, 1);
}

static int gen_bias_softmax(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  return widened(c, gen_bias_softmax_f, n, in, n_in, out, n_out);
}

/* ---- FusedMatMul ---- */
/* dst = src with its axes permuted (dst axis k is src axis perm[k]), src
 * of dims d (rank r) */
static void permute(cg_ctx *c, const char *dst, const char *src, const cg_val *v,
                    const size_t *perm) {
  int64_t st[CG_MAX_RANK];
  cg_strides(v, st);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) {\n    size_t q = i, s = 0;\n",
            (long long)v->numel);
  for (size_t k = v->rank; k-- > 0;) {
    int64_t d = v->dims[perm[k]];
    cg_printf(c, "    s += q %% %lld * %lld;\n    q /= %lld;\n", (long long)d,
              (long long)st[perm[k]], (long long)d);
  }
  cg_printf(c, "    (void)q;\n    %s[i] = %s[s];\n  }\n", dst, src);
}

/* operand i as the product reads it: transBatch moves axis 0 behind the
 * batch axes ([d0, b.., K] -> [b.., d0, K]), trans swaps the last two; a
 * permuted copy in a scratch array (*expr) when either applies */
static int fmm_operand(cg_ctx *c, cg_val *v, int i, bool tbatch, bool t, cg_val *pv,
                       const char **expr) {
  *pv = *v;
  *expr = ox_arena_printf(c->a, "X%d", i);
  if (v->rank < 2 || (!tbatch && !t) || (tbatch && v->rank == 2 && !t)) return OX_OK;
  size_t r = v->rank, perm[CG_MAX_RANK];
  for (size_t k = 0; k < r; k++) perm[k] = k;
  if (tbatch) {
    for (size_t k = 0; k + 2 < r; k++) perm[k] = k + 1;
    perm[r - 2] = 0;
  }
  if (t) {
    size_t tmp = perm[r - 2];
    perm[r - 2] = perm[r - 1];
    perm[r - 1] = tmp;
  }
  for (size_t k = 0; k < r; k++) pv->dims[k] = v->dims[perm[k]];
  if (!(*expr = scratch(c, v->dtype, v->numel))) return c->e->code;
  permute(c, *expr, ox_arena_printf(c->a, "X%d", i), v, perm);
  return OX_OK;
}

/* Y = alpha * op(A) x op(B), ai.onnx MatMul's generator on the permuted
 * operands (its batch broadcasting), alpha on the product */
static int gen_fused_matmul_f(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                              size_t n_out) {
  (void)n_out;
  if (n_in != 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects A and B");
  cg_val pa, pb;
  const char *xa, *xb;
  int rc = fmm_operand(c, in[0], 0, ox_node_attr_int(n, "transBatchA", 0) != 0,
                       ox_node_attr_int(n, "transA", 0) != 0, &pa, &xa);
  if (!rc)
    rc = fmm_operand(c, in[1], 1, ox_node_attr_int(n, "transBatchB", 0) != 0,
                     ox_node_attr_int(n, "transB", 0) != 0, &pb, &xb);
  if (rc) return rc;
  as_std s;
  const ox_node *sn = std_node(&s, n, "MatMul");
  cg_val *min[2] = {&pa, &pb};
  if ((rc = call_std(c, "MatMul", sn, min, (const char *const[]){xa, xb}, 2, out,
                     (const char *const[]){"Y0"}, 1)))
    return rc;
  float alpha = ox_node_attr_float(n, "alpha", 1.0f);
  if (alpha != 1.0f) {
    char al[64];
    cg_float_lit(al, sizeof al, alpha, out[0]->dtype == OX_FLOAT);
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] *= %s;\n", (long long)out[0]->numel,
              al);
  }
  return OX_OK;
}

static int gen_fused_matmul(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  return widened(c, gen_fused_matmul_f, n, in, n_in, out, n_out);
}

/* ---- FusedConv ---- */
/* Y = activation(Conv(X, W, B) + Z): ai.onnx Conv's generator, Z added,
 * then the activation by ONNX name (its generator, in place on Y0; Clip
 * here) with its parameters from activation_params */
static int gen_fused_conv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects X and W");
  if (in[0]->dtype != OX_FLOAT) return cg_fail(c, OX_EUNSUPPORTED, "X must be float32");
  const char *act = ox_node_attr_str(n, "activation", "");
  const ox_attr *pa = ox_node_attr(n, "activation_params");
  size_t np = pa && pa->type == OX_ATTR_FLOATS ? pa->n_floats : 0, want = 0;
  static const char *const acts[] = {"",        "Identity",  "Relu", "Tanh",
                                     "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid"};
  size_t k = 0;
  while (k < sizeof acts / sizeof acts[0] && strcmp(acts[k], act) != 0) k++;
  if (k == sizeof acts / sizeof acts[0])
    return cg_fail(c, OX_EMODEL,
                   "unknown activation '%s' (Relu, Tanh, Sigmoid, LeakyRelu, Clip or HardSigmoid)",
                   act);
  want = k == 5 ? 1 : k >= 6 ? 2 : 0;
  if (np < want)
    return cg_fail(c, OX_EMODEL, "activation %s needs %zu activation_params, got %zu", act, want,
                   np);
  cg_val *z = n_in > 3 ? in[3] : NULL;
  if (z && (z->dtype != OX_FLOAT || z->numel != out[0]->numel))
    return cg_fail(c, OX_EMODEL, "Z must be a float32 tensor of Y's shape");
  as_std s;
  const ox_node *sn;
  cg_gen_fn conv = cg_std_gen("Conv"); /* Conv's attributes are FusedConv's own: n as it is */
  int rc = conv ? conv(c, n, in, n_in > 3 ? 3 : n_in, out, n_out > 1 ? 1 : n_out)
                : cg_fail(c, OX_EUNSUPPORTED, "no C generator for Conv");
  if (rc) return rc;
  if (z) cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] += X3[i];\n", (long long)z->numel);
  if (k < 2) return OX_OK;
  if (k == 6) {
    char lo[64], hi[64];
    cg_float_lit(lo, sizeof lo, pa->floats[0], true);
    cg_float_lit(hi, sizeof hi, pa->floats[1], true);
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = fminf(fmaxf(Y0[i], %s), %s);\n",
              (long long)out[0]->numel, lo, hi);
    return OX_OK;
  }
  sn = std_node(&s, n, act);
  if (want > 0) std_float(&s, "alpha", pa->floats[0]);
  if (want > 1) std_float(&s, "beta", pa->floats[1]);
  cg_val *y[1] = {out[0]};
  return call_std(c, act, sn, y, (const char *const[]){"Y0"}, 1, y, (const char *const[]){"Y0"}, 1);
}

const cg_op ox_cg_ops_ms_nn[] = {
    {CG_DOMAIN_MS ":FusedConv", gen_fused_conv},
    {CG_DOMAIN_MS ":FusedMatMul", gen_fused_matmul},
    {CG_DOMAIN_MS ":Gelu", gen_gelu_form},
    {CG_DOMAIN_MS ":FastGelu", gen_gelu_form},
    {CG_DOMAIN_MS ":BiasGelu", gen_gelu_form},
    {CG_DOMAIN_MS ":QuickGelu", gen_quick_gelu},
    {CG_DOMAIN_MS ":BiasSoftmax", gen_bias_softmax},
    {CG_DOMAIN_MS ":SkipLayerNormalization", gen_skip_ln},
    {CG_DOMAIN_MS ":SkipSimplifiedLayerNormalization", gen_skip_ln},
    {CG_DOMAIN_MS ":EmbedLayerNormalization", gen_embed_ln},
    {NULL, NULL},
};

/* onnxruntime registers it in the default domain */
const cg_op ox_cg_ops_ms_nn_default[] = {
    {"SimplifiedLayerNormalization", gen_simplified_ln},
    {NULL, NULL},
};
