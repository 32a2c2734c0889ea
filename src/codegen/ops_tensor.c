/* ops_tensor.c - C generators for the operators that move data: the
 * shape-only ones (a copy, since shapes are fixed here), Transpose, Slice,
 * Tile, Expand, Pad, Concat, Split, Gather, Cast and the fills
 * (ConstantOfShape, Range). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: the bytes do not change. */
static int gen_copy(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_in;
  if (strcmp(n->op_type, "Dropout") == 0) {
    if (n_in > 2 && in[2]) {
      double t;
      if (!cg_const_scalar(in[2], &t) || t != 0) /* training: ops_training.c */
        return cg_gen_dropout_train(c, n, in, n_in, out, n_out);
    }
    if (n_out > 1 && out[1]) cg_printf(c, "  memset(Y1, 1, %zu);\n", out[1]->nbytes);
  }
  if (out[0]->nbytes != in[0]->nbytes)
    return cg_fail(c, OX_EMODEL, "input and output sizes differ");
  cg_printf(c, "  memcpy(Y0, X0, %zu);\n", out[0]->nbytes);
  return OX_OK;
}

/* Y0[o++] = X0[base + sum d_i * coef_i] over the output's dims; with mod,
 * each d_i is taken modulo mod_i first (Tile). */
static void strided(cg_ctx *c, const cg_val *y, int64_t base, const int64_t *coef,
                    const int64_t *mod) {
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < y->rank; d++)
    cg_printf(c, "%*sfor (size_t d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)y->dims[d], d);
  cg_printf(c, "%*sY0[o++] = X0[%lld", (int)(2 + 2 * y->rank), "", (long long)base);
  for (size_t d = 0; d < y->rank; d++) {
    if (!coef[d]) continue;
    if (mod)
      cg_printf(c, " + (long long)(d%zu %% %lld) * %lld", d, (long long)mod[d], (long long)coef[d]);
    else
      cg_printf(c, " + (long long)d%zu * %lld", d, (long long)coef[d]);
  }
  cg_printf(c, "];\n");
}

static int gen_transpose(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0];
  int64_t perm[CG_MAX_RANK], st[CG_MAX_RANK], coef[CG_MAX_RANK];
  size_t cnt = 0;
  if (!cg_attr_ints(n, "perm", perm, CG_MAX_RANK, &cnt) || cnt == 0) {
    cnt = X->rank;
    for (size_t i = 0; i < cnt; i++) perm[i] = (int64_t)(cnt - 1 - i);
  }
  if (cnt != X->rank)
    return cg_fail(c, OX_EMODEL, "perm has %zu entries for rank %zu", cnt, X->rank);
  cg_strides(X, st);
  for (size_t i = 0; i < cnt; i++) {
    size_t p;
    if (!cg_axis(perm[i], X->rank, &p)) return cg_fail(c, OX_EMODEL, "perm out of range");
    coef[i] = st[p];
  }
  strided(c, out[0], 0, coef, NULL);
  return OX_OK;
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Slice whose starts, axes or steps are computed: the output shape is
 * static, so only where each axis starts and its step are found at run
 * time, by the same clamping rules. */
static int slice_computed(cg_ctx *c, cg_val **in, size_t n_in, const cg_val *y) {
  const cg_val *X = in[0];
  size_t R = X->rank;
  if (!R || y->rank != R) return cg_fail(c, OX_EMODEL, "rank");
  bool axes = n_in > 3 && in[3], steps = n_in > 4 && in[4];
  int64_t st[CG_MAX_RANK];
  cg_strides(X, st);
  cg_printf(c, "  static const long long dims[%zu] = {", R);
  for (size_t d = 0; d < R; d++) cg_printf(c, "%s%lld", d ? ", " : "", (long long)X->dims[d]);
  cg_printf(c, "};\n  long long b[%zu] = {0}, s[%zu];\n", R, R);
  cg_printf(c, "  for (size_t d = 0; d < %zu; d++) s[d] = 1;\n", R);
  cg_printf(c, "  for (size_t a = 0; a < %lld; a++) {\n", (long long)in[1]->numel);
  cg_printf(c, "    long long ax = %s;\n    if (ax < 0) ax += %zu;\n",
            axes ? "(long long)X3[a]" : "(long long)a", R);
  cg_printf(c, "    if (ax < 0 || ax >= %zu) continue;\n", R);
  cg_printf(c, "    const long long dim = dims[ax], step = %s;\n",
            steps ? "(long long)X4[a]" : "1");
  cg_printf(c, "    long long v = (long long)X1[a];\n    if (v < 0) v += dim;\n");
  cg_printf(c, "    const long long hi = step > 0 ? dim : dim - 1;\n");
  cg_printf(c, "    b[ax] = v < 0 ? 0 : v > hi ? hi : v;\n    s[ax] = step;\n  }\n");
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < R; d++)
    cg_printf(c, "%*sfor (long long d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)y->dims[d], d);
  cg_printf(c, "%*sY0[o++] = X0[0", (int)(2 + 2 * R), "");
  for (size_t d = 0; d < R; d++)
    cg_printf(c, " + (b[%zu] + d%zu * s[%zu]) * %lld", d, d, d, (long long)st[d]);
  cg_printf(c, "];\n");
  return OX_OK;
}

static int gen_slice(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0];
  int64_t starts[CG_MAX_RANK], ends[CG_MAX_RANK], axes[CG_MAX_RANK], steps[CG_MAX_RANK];
  size_t ns, ne, na = 0, nst = 0;
  if (c->opset < 10) {
    if (!cg_attr_ints(n, "starts", starts, CG_MAX_RANK, &ns) ||
        !cg_attr_ints(n, "ends", ends, CG_MAX_RANK, &ne))
      return cg_fail(c, OX_EMODEL, "starts and ends are required");
    cg_attr_ints(n, "axes", axes, CG_MAX_RANK, &na);
  } else {
    if (n_in < 3 || !in[1] || !in[2]) return cg_fail(c, OX_EMODEL, "starts and ends are required");
    if (!cg_const_ints(in[1], starts, CG_MAX_RANK, &ns) ||
        !cg_const_ints(in[2], ends, CG_MAX_RANK, &ne) ||
        (n_in > 3 && in[3] && !cg_const_ints(in[3], axes, CG_MAX_RANK, &na)) ||
        (n_in > 4 && in[4] && !cg_const_ints(in[4], steps, CG_MAX_RANK, &nst)))
      return slice_computed(c, in, n_in, out[0]);
  }
  if (ns != ne || (na && na != ns) || (nst && nst != ns))
    return cg_fail(c, OX_EMODEL, "starts, ends, axes and steps differ in length");
  int64_t b[CG_MAX_RANK] = {0}, s[CG_MAX_RANK], st[CG_MAX_RANK], coef[CG_MAX_RANK];
  for (size_t d = 0; d < X->rank; d++) s[d] = 1;
  for (size_t i = 0; i < ns; i++) {
    size_t ax;
    if (!cg_axis(na ? axes[i] : (int64_t)i, X->rank, &ax))
      return cg_fail(c, OX_EMODEL, "axis out of range");
    int64_t dim = X->dims[ax], step = nst ? steps[i] : 1, st0 = starts[i];
    if (step == 0) return cg_fail(c, OX_EMODEL, "step 0");
    if (st0 < 0) st0 += dim;
    st0 = step > 0 ? clampi(st0, 0, dim) : clampi(st0, 0, dim - 1);
    b[ax] = st0;
    s[ax] = step;
  }
  cg_strides(X, st);
  int64_t base = 0;
  for (size_t d = 0; d < X->rank; d++) {
    base += b[d] * st[d];
    coef[d] = s[d] * st[d];
  }
  strided(c, out[0], base, coef, NULL);
  return OX_OK;
}

static int gen_tile(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n, (void)n_in, (void)n_out;
  int64_t st[CG_MAX_RANK];
  cg_strides(in[0], st);
  strided(c, out[0], 0, st, in[0]->dims);
  return OX_OK;
}

static int gen_expand(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n, (void)n_in, (void)n_out;
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 1, "Y0[o] = X0[i0];");
  return OX_OK;
}

static int gen_pad(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0];
  size_t r = X->rank, np = 0, na = 0;
  int64_t pads[2 * CG_MAX_RANK], axes[CG_MAX_RANK], pb[CG_MAX_RANK] = {0};
  const char *mode = ox_node_attr_str(n, "mode", "constant");
  bool rt = false; /* begin pads computed: read at run time into pb[] */
  if (c->opset < 11) {
    if (!cg_attr_ints(n, "pads", pads, 2 * CG_MAX_RANK, &np))
      return cg_fail(c, OX_EMODEL, "no pads");
  } else if (n_in < 2 || !in[1]) {
    return cg_fail(c, OX_EMODEL, "no pads");
  } else if (!cg_const_ints(in[1], pads, 2 * CG_MAX_RANK, &np)) {
    rt = true;
    np = (size_t)in[1]->numel;
  }
  bool rt_axes = false; /* axes computed: pb[] filled at run time */
  if (n_in > 3 && in[3]) {
    if (!cg_const_ints(in[3], axes, CG_MAX_RANK, &na)) {
      rt_axes = true;
      na = (size_t)in[3]->numel;
      if (na > r) return cg_fail(c, OX_EMODEL, "more axes than dims");
    }
  } else {
    na = r;
    for (size_t i = 0; i < r; i++) axes[i] = (int64_t)i;
  }
  if (np != 2 * na) return cg_fail(c, OX_EMODEL, "pads has %zu values for %zu axes", np, na);
  if (rt_axes) {
    /* an axis out of range is skipped (the generated code cannot fail) */
    if (r) cg_printf(c, "  long long pb[%zu] = {0};\n", r);
    for (size_t i = 0; i < na; i++) {
      cg_printf(c, "  {\n    long long ax = (long long)X3[%zu];\n    if (ax < 0) ax += %zu;\n", i, r);
      if (rt)
        cg_printf(c, "    if (ax >= 0 && ax < %zu) pb[ax] = (long long)X1[%zu];\n  }\n", r, i);
      else
        cg_printf(c, "    if (ax >= 0 && ax < %zu) pb[ax] = %lld;\n  }\n", r, (long long)pads[i]);
    }
    rt = true;
  } else if (rt && r) {
    cg_printf(c, "  long long pb[%zu] = {0};\n", r);
  }
  for (size_t i = 0; i < na && !rt_axes; i++) {
    size_t ax;
    if (!cg_axis(axes[i], r, &ax)) return cg_fail(c, OX_EMODEL, "axis out of range");
    if (rt)
      cg_printf(c, "  pb[%zu] = (long long)X1[%zu];\n", ax, i);
    else
      pb[ax] = pads[i];
  }
  bool cst = strcmp(mode, "constant") == 0, edge = strcmp(mode, "edge") == 0;
  bool wrap = strcmp(mode, "wrap") == 0;
  if (!cst && !edge && !wrap && strcmp(mode, "reflect") != 0)
    return cg_fail(c, OX_EUNSUPPORTED, "mode %s", mode);
  if (!cst && X->numel == 0) return cg_fail(c, OX_EUNSUPPORTED, "%s of an empty tensor", mode);
  int64_t st[CG_MAX_RANK];
  cg_strides(X, st);
  const char *T = cg_ctype(X->dtype);
  if (cst) cg_printf(c, "  const %s cv = %s;\n", T, n_in > 2 && in[2] ? "X2[0]" : "0");
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < r; d++)
    cg_printf(c, "%*sfor (long d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)out[0]->dims[d], d);
  int ind = (int)(2 + 2 * r);
  cg_printf(c, "%*s{\n%*s  int inb = 1;\n", ind, "", ind, "");
  for (size_t d = 0; d < r; d++) {
    long long I = (long long)X->dims[d];
    if (rt)
      cg_printf(c, "%*s  long q%zu = d%zu - (long)pb[%zu];\n", ind, "", d, d, d);
    else
      cg_printf(c, "%*s  long q%zu = d%zu - %lld;\n", ind, "", d, d, (long long)pb[d]);
    if (cst)
      cg_printf(c, "%*s  if (q%zu < 0 || q%zu >= %lld) inb = 0;\n", ind, "", d, d, I);
    else if (edge)
      cg_printf(c, "%*s  q%zu = q%zu < 0 ? 0 : q%zu >= %lld ? %lld : q%zu;\n", ind, "", d, d, d, I,
                I - 1, d);
    else if (wrap) /* the input repeated: q modulo I, made non-negative */
      cg_printf(c, "%*s  q%zu %%= %lld;\n%*s  if (q%zu < 0) q%zu += %lld;\n", ind, "", d, I, ind, "",
                d, d, I);
    else
      cg_printf(c, "%*s  if (q%zu < 0) q%zu = -q%zu;\n%*s  if (q%zu >= %lld) q%zu = %lld - q%zu;\n",
                ind, "", d, d, d, ind, "", d, I, d, 2 * (I - 1), d);
  }
  cg_printf(c, "%*s  (void)inb;\n%*s  Y0[o++] = ", ind, "", ind, "");
  if (cst) cg_printf(c, "!inb ? cv : ");
  cg_printf(c, "X0[0");
  for (size_t d = 0; d < r; d++) cg_printf(c, " + q%zu * %lld", d, (long long)st[d]);
  cg_printf(c, "];\n%*s}\n", ind, "");
  return OX_OK;
}

static int gen_concat(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  size_t ax;
  const cg_val *Y = out[0];
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), Y->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t outer, inner;
  cg_split(Y, ax, &outer, &inner);
  size_t es = Y->nbytes / (size_t)(Y->numel ? Y->numel : 1);
  int64_t off = 0, ychunk = Y->dims[ax] * inner;
  for (size_t i = 0; i < n_in; i++) {
    if (!in[i]) return cg_fail(c, OX_EMODEL, "missing input");
    if (!in[i]->numel) continue;
    int64_t chunk = in[i]->dims[ax] * inner;
    cg_printf(c,
              "  for (size_t o = 0; o < %lld; o++)\n    memcpy(Y0 + o * %lld + %lld, X%zu + o * "
              "%lld, %zu);\n",
              (long long)outer, (long long)ychunk, (long long)off, i, (long long)chunk,
              (size_t)chunk * es);
    off += chunk;
  }
  return OX_OK;
}

static int gen_split(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_in;
  size_t ax;
  const cg_val *X = in[0];
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  int64_t outer, inner;
  cg_split(X, ax, &outer, &inner);
  size_t es = X->nbytes / (size_t)(X->numel ? X->numel : 1);
  int64_t off = 0, xchunk = X->dims[ax] * inner;
  for (size_t i = 0; i < n_out; i++) {
    if (!out[i]) return cg_fail(c, OX_EUNSUPPORTED, "missing output");
    int64_t chunk = out[i]->dims[ax] * inner;
    if (out[i]->numel)
      cg_printf(c,
                "  for (size_t o = 0; o < %lld; o++)\n    memcpy(Y%zu + o * %lld, X0 + o * %lld + "
                "%lld, %zu);\n",
                (long long)outer, i, (long long)chunk, (long long)xchunk, (long long)off,
                (size_t)chunk * es);
    off += chunk;
  }
  if (off != xchunk) return cg_fail(c, OX_EMODEL, "the outputs do not cover the axis");
  return OX_OK;
}

static int gen_gather(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  const cg_val *X = in[0], *I = in[1];
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), X->rank, &ax))
    return cg_fail(c, OX_EMODEL, "bad axis");
  if (I->dtype != OX_INT64 && I->dtype != OX_INT32) return cg_fail(c, OX_EMODEL, "indices type");
  int64_t outer, inner, A = X->dims[ax];
  cg_split(X, ax, &outer, &inner);
  size_t es = X->nbytes / (size_t)(X->numel ? X->numel : 1);
  /* an index out of range (only possible when the indices are computed)
   * reads row 0 rather than memory outside the tensor */
  cg_printf(c, "  for (size_t o = 0; o < %lld; o++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)outer, (long long)I->numel);
  cg_printf(c, "      long long ix = (long long)X1[j];\n      if (ix < 0) ix += %lld;\n",
            (long long)A);
  cg_printf(c, "      if (ix < 0 || ix >= %lld) ix = 0;\n", (long long)A);
  cg_printf(c,
            "      memcpy(Y0 + (o * %lld + j) * %lld, X0 + (o * %lld + (size_t)ix) * %lld, %zu);\n "
            "   }\n",
            (long long)I->numel, (long long)inner, (long long)A, (long long)inner,
            (size_t)inner * es);
  return OX_OK;
}

/* Cast, CastLike: a C conversion between C types; through float for
 * float16, bfloat16 and float8 (the runtime's cast.c does the same, so a
 * double or int64 becomes float first, then the small type: two roundings,
 * as there). Float to integer is C's conversion, as the runtime's. */
static int gen_cast(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_in, (void)n_out;
  int32_t src = in[0]->dtype, dst = out[0]->dtype;
  bool sat = ox_node_attr_int(n, "saturate", 1) != 0;
  if (src == dst) {
    cg_printf(c, "  memcpy(Y0, X0, %zu);\n", out[0]->nbytes);
    return OX_OK;
  }
  if (cg_packed_bits(src) || cg_packed_bits(dst)) {
    /* element i of the source as an int (the integer types) or a float */
    bool src_f = src == OX_FLOAT4E2M1 || src == OX_FLOAT || src == OX_DOUBLE ||
                 cg_is_small_float(src);
    const char *x = cg_packed_bits(src)      ? cg_load_packed(c, src, "X0", "i")
                    : cg_is_small_float(src) ? cg_load(c, src, "X0[i]")
                                             : "X0[i]";
    if (!x) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    if (src == OX_FLOAT) x = "X0[i]";
    if (cg_packed_bits(dst)) {
      if (dst == OX_FLOAT4E2M1 && !src_f) x = ox_arena_printf(c->a, "(float)%s", x);
      if (src == OX_DOUBLE && dst == OX_FLOAT4E2M1) x = "(float)X0[i]";
      cg_store_packed(c, dst, in[0]->numel, x, src_f);
      return OX_OK;
    }
    int mode = strcmp(ox_node_attr_str(n, "round_mode", "up"), "down") == 0      ? 1
               : strcmp(ox_node_attr_str(n, "round_mode", "up"), "nearest") == 0 ? 2
                                                                                : 0;
    const char *fx = ox_arena_printf(c->a, "(float)%s", x);
    const char *y = dst == OX_FLOAT8E8M0     ? cg_store_e8m0(c, fx, sat, mode)
                    : cg_is_small_float(dst) ? cg_store(c, dst, fx, sat)
                    : dst == OX_BOOL ? ox_arena_printf(c->a, "%s != 0", x)
                                     : ox_arena_printf(c->a, "(%s)%s", cg_ctype(dst), x);
    if (!y) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s;\n", (long long)in[0]->numel, y);
    return OX_OK;
  }
  if (cg_is_small_float(src) || cg_is_small_float(dst)) {
    const char *x = cg_is_small_float(src) ? cg_load(c, src, "X0[i]") : "(float)X0[i]";
    const char *rm = ox_node_attr_str(n, "round_mode", "up");
    int mode = strcmp(rm, "down") == 0 ? 1 : strcmp(rm, "nearest") == 0 ? 2 : 0;
    /* to double or an integer type: from the exact float value */
    const char *y = dst == OX_FLOAT8E8M0     ? cg_store_e8m0(c, x, sat, mode)
                    : cg_is_small_float(dst) ? cg_store(c, dst, x, sat)
                    : dst == OX_BOOL       ? ox_arena_printf(c->a, "%s != 0", x)
                                           : ox_arena_printf(c->a, "(%s)%s", cg_ctype(dst), x);
    if (!y) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = %s;\n", (long long)in[0]->numel, y);
    return OX_OK;
  }
  if (dst == OX_BOOL)
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = X0[i] != 0;\n",
              (long long)in[0]->numel);
  else
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = (%s)X0[i];\n",
              (long long)in[0]->numel, cg_ctype(dst));
  return OX_OK;
}

static int gen_constant_of_shape(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                                 cg_val **out, size_t n_out) {
  (void)in, (void)n_in, (void)n_out;
  const ox_attr *a = ox_node_attr(n, "value");
  char lit[64] = "0";
  if (a && a->t) {
    ox_value *v = ox_value_from_tensor_proto(a->t, false, c->e);
    if (!v) return c->e->code;
    cg_val tmp = {0};
    tmp.kind = CG_CONST;
    tmp.cv = v;
    tmp.dtype = v->dtype;
    tmp.numel = v->numel;
    double d;
    bool ok = cg_const_scalar(&tmp, &d);
    if (ok && v->dtype == OX_INT64)
      snprintf(lit, sizeof lit, "INT64_C(%lld)", (long long)((const int64_t *)v->data)[0]);
    else if (ok)
      cg_float_lit(lit, sizeof lit, d, false);
    ox_value_unref(v);
    if (!ok) return cg_fail(c, OX_EUNSUPPORTED, "value of this type");
  }
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = (%s)%s;\n", (long long)out[0]->numel,
            cg_ctype(out[0]->dtype), lit);
  return OX_OK;
}

static int gen_range(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n, (void)n_in, (void)n_out, (void)in;
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = (%s)(X0[0] + (%s)i * X2[0]);\n",
            (long long)out[0]->numel, cg_ctype(out[0]->dtype), cg_ctype(out[0]->dtype));
  return OX_OK;
}

static int gen_gather_elements(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                               size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *I = in[1];
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), X->rank, &ax) || I->rank != X->rank)
    return cg_fail(c, OX_EMODEL, "bad axis or indices rank");
  int64_t st[CG_MAX_RANK];
  cg_strides(X, st);
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < I->rank; d++)
    cg_printf(c, "%*sfor (size_t d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)out[0]->dims[d], d);
  int ind = (int)(2 + 2 * I->rank);
  cg_printf(c, "%*s{\n%*s  long long ix = (long long)X1[o];\n%*s  if (ix < 0) ix += %lld;\n", ind,
            "", ind, "", ind, "", (long long)X->dims[ax]);
  cg_printf(c, "%*s  if (ix < 0 || ix >= %lld) ix = 0; /* never outside the tensor */\n", ind, "",
            (long long)X->dims[ax]);
  cg_printf(c, "%*s  Y0[o++] = X0[ix * %lld", ind, "", (long long)st[ax]);
  for (size_t d = 0; d < X->rank; d++)
    if (d != ax) cg_printf(c, " + d%zu * %lld", d, (long long)st[d]);
  cg_printf(c, "];\n%*s}\n", ind, "");
  return OX_OK;
}

static int gen_trilu(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  (void)n_out, (void)out;
  const cg_val *X = in[0];
  if (X->rank < 2) return cg_fail(c, OX_EMODEL, "rank under 2");
  int64_t N = X->dims[X->rank - 2], M = X->dims[X->rank - 1];
  bool upper = ox_node_attr_int(n, "upper", 1) != 0;
  cg_printf(c, "  const long long k = %s;\n", n_in > 1 && in[1] ? "(long long)X1[0]" : "0");
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (long long i = 0; i < %lld; i++)\n",
            (long long)(X->numel / (N * M)), (long long)N);
  cg_printf(c, "      for (long long j = 0; j < %lld; j++) {\n", (long long)M);
  cg_printf(c, "        const size_t at = b * %lld + (size_t)(i * %lld + j);\n", (long long)(N * M),
            (long long)M);
  cg_printf(c, "        Y0[at] = j - i %s k ? X0[at] : 0;\n      }\n", upper ? ">=" : "<=");
  return OX_OK;
}

/* CumSum, CumProd. The axis may be computed: the output's shape does not
 * depend on it, so the loop bounds are then worked out at run time. */
static int gen_cumulative(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                          size_t n_out) {
  (void)n_out, (void)out;
  const cg_val *X = in[0];
  if (n_in < 2 || !in[1]) return cg_fail(c, OX_EMODEL, "no axis");
  if (X->dtype == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool input");
  bool prod = strcmp(n->op_type, "CumProd") == 0, excl = ox_node_attr_int(n, "exclusive", 0),
       rev = ox_node_attr_int(n, "reverse", 0);
  cg_printf(c, "  static const size_t dims[%zu] = {", X->rank ? X->rank : 1);
  for (size_t d = 0; d < X->rank; d++) cg_printf(c, "%s%lld", d ? ", " : "", (long long)X->dims[d]);
  cg_printf(c, "%s};\n  long long ax = (long long)X1[0];\n  if (ax < 0) ax += %zu;\n",
            X->rank ? "" : "1", X->rank);
  cg_printf(c, "  if (ax < 0 || ax >= %zu) return; /* outside the rank: nothing written */\n",
            X->rank);
  cg_printf(c, "  size_t outer = 1, inner = 1;\n  const size_t A = dims[ax];\n");
  cg_printf(c, "  for (long long d = 0; d < ax; d++) outer *= dims[d];\n");
  cg_printf(c, "  for (long long d = ax + 1; d < %zu; d++) inner *= dims[d];\n", X->rank);
  cg_printf(c, "  for (size_t o = 0; o < outer; o++)\n    for (size_t j = 0; j < inner; j++) {\n");
  cg_printf(c, "      %s acc = %s;\n", cg_ctype(X->dtype), prod ? "1" : "0");
  cg_printf(c, "      for (size_t t = 0; t < A; t++) {\n");
  cg_printf(c, "        const size_t at = (o * A + %s) * inner + j;\n", rev ? "(A - 1 - t)" : "t");
  if (excl)
    cg_printf(c, "        Y0[at] = acc;\n        acc %s= X0[at];\n", prod ? "*" : "+");
  else
    cg_printf(c, "        acc %s= X0[at];\n        Y0[at] = acc;\n", prod ? "*" : "+");
  cg_printf(c, "      }\n    }\n");
  return OX_OK;
}

static int gen_bitshift(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  (void)n_in, (void)n_out;
  int32_t dt = in[0]->dtype;
  if (dt != OX_UINT8 && dt != OX_UINT16 && dt != OX_UINT32 && dt != OX_UINT64)
    return cg_fail(c, OX_EMODEL, "expects unsigned integers");
  bool left = strcmp(ox_node_attr_str(n, "direction", ""), "LEFT") == 0;
  char body[256];
  /* shifts by the width or more are 0 in the reference, undefined in C */
  snprintf(body, sizeof body, "Y0[o] = X1[i1] >= %d ? 0 : (%s)(X0[i0] %s X1[i1]);",
           (int)(8 * (dt == OX_UINT8    ? 1
                      : dt == OX_UINT16 ? 2
                      : dt == OX_UINT32 ? 4
                                        : 8)),
           cg_ctype(dt), left ? "<<" : ">>");
  cg_bcast_loop(c, out[0]->dims, out[0]->rank, in, 2, body);
  return OX_OK;
}

/* "Y0[at] = v", "Y0[at] += v" ... for a scatter's reduction; NULL if unknown. */
static const char *scatter_op(cg_ctx *c, const ox_node *n, const char *at, const char *v) {
  const char *r = ox_node_attr_str(n, "reduction", "none");
  if (strcmp(r, "none") == 0) return ox_arena_printf(c->a, "Y0[%s] = %s;", at, v);
  if (strcmp(r, "add") == 0) return ox_arena_printf(c->a, "Y0[%s] += %s;", at, v);
  if (strcmp(r, "mul") == 0) return ox_arena_printf(c->a, "Y0[%s] *= %s;", at, v);
  if (strcmp(r, "max") == 0)
    return ox_arena_printf(c->a, "if (%s > Y0[%s]) Y0[%s] = %s;", v, at, at, v);
  if (strcmp(r, "min") == 0)
    return ox_arena_printf(c->a, "if (%s < Y0[%s]) Y0[%s] = %s;", v, at, at, v);
  return NULL;
}

static int gen_scatter_elements(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                                size_t n_out) {
  (void)n_out;
  if (n_in != 3 || !in[1] || !in[2]) return cg_fail(c, OX_EMODEL, "expects 3 inputs");
  const cg_val *X = in[0], *I = in[1];
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", 0), X->rank, &ax) || I->rank != X->rank)
    return cg_fail(c, OX_EMODEL, "bad axis or indices rank");
  const char *op = scatter_op(c, n, "at", "X2[o]");
  if (!op)
    return cg_fail(c, OX_EUNSUPPORTED, "reduction '%s'", ox_node_attr_str(n, "reduction", ""));
  int64_t st[CG_MAX_RANK];
  cg_strides(X, st);
  cg_printf(c, "  memcpy(Y0, X0, %zu);\n  size_t o = 0;\n", out[0]->nbytes);
  for (size_t d = 0; d < I->rank; d++)
    cg_printf(c, "%*sfor (size_t d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)I->dims[d], d);
  int ind = (int)(2 + 2 * I->rank);
  cg_printf(c, "%*s{\n%*s  long long ix = (long long)X1[o];\n%*s  if (ix < 0) ix += %lld;\n", ind,
            "", ind, "", ind, "", (long long)X->dims[ax]);
  cg_printf(c, "%*s  if (ix >= 0 && ix < %lld) {\n%*s    const size_t at = (size_t)ix * %lld", ind,
            "", (long long)X->dims[ax], ind, "", (long long)st[ax]);
  for (size_t d = 0; d < X->rank; d++)
    if (d != ax) cg_printf(c, " + d%zu * %lld", d, (long long)st[d]);
  cg_printf(c, ";\n%*s    %s\n%*s  }\n%*s  o++;\n%*s}\n", ind, "", op, ind, "", ind, "", ind, "");
  return OX_OK;
}

/* ScatterND and GatherND: the last indices dim addresses the first k dims
 * of the data (after GatherND's batch dims); the rest is a contiguous slice. */
static int gen_nd(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                  size_t n_out) {
  (void)n_out;
  bool scatter = strcmp(n->op_type, "ScatterND") == 0;
  if (n_in < 2 || !in[1] || (scatter && (n_in < 3 || !in[2])))
    return cg_fail(c, OX_EMODEL, "inputs");
  /* GatherND's batch_dims b: the first b dims of data and indices pair
   * up; each batch's index tuples address dims b .. b+k of its own block */
  int64_t b = scatter ? 0 : ox_node_attr_int(n, "batch_dims", 0);
  if (scatter && ox_node_attr_int(n, "batch_dims", 0))
    return cg_fail(c, OX_EUNSUPPORTED, "batch_dims");
  const cg_val *X = in[0], *I = in[1];
  if (!I->rank) return cg_fail(c, OX_EMODEL, "scalar indices");
  int64_t k = I->dims[I->rank - 1];
  if (b < 0 || (size_t)b >= I->rank || k < 1 || (size_t)(b + k) > X->rank)
    return cg_fail(c, OX_EMODEL, "indices' last dim %lld, batch_dims %lld", (long long)k,
                   (long long)b);
  int64_t st[CG_MAX_RANK], slice = 1, cnt = I->numel / k, blk = 1, per = cnt;
  cg_strides(X, st);
  for (size_t d = (size_t)(b + k); d < X->rank; d++) slice *= X->dims[d];
  for (size_t d = (size_t)b; d < X->rank; d++) blk *= X->dims[d];
  for (int64_t d = 0; d < b; d++) per = X->dims[d] ? per / X->dims[d] : 0;
  if (b) memmove(st, st + b, (size_t)k * sizeof st[0]); /* the tables address dims b .. b+k */
  char upd[64];
  snprintf(upd, sizeof upd, "X2[j * %lld + e]", (long long)slice);
  const char *op = scatter ? scatter_op(c, n, "off + e", upd) : "";
  if (!op)
    return cg_fail(c, OX_EUNSUPPORTED, "reduction '%s'", ox_node_attr_str(n, "reduction", ""));
  if (scatter) cg_printf(c, "  memcpy(Y0, X0, %zu);\n", out[0]->nbytes);
  cg_printf(c, "  static const long long dims[%lld] = {", (long long)k);
  for (int64_t d = 0; d < k; d++) cg_printf(c, "%s%lld", d ? ", " : "", (long long)X->dims[b + d]);
  cg_printf(c, "}, st[%lld] = {", (long long)k);
  for (int64_t d = 0; d < k; d++) cg_printf(c, "%s%lld", d ? ", " : "", (long long)st[d]);
  if (b)
    cg_printf(c, "};\n  for (size_t j = 0; j < %lld; j++) {\n    size_t off = j / %lld * %lld;\n",
              (long long)cnt, (long long)(per ? per : 1), (long long)blk);
  else
    cg_printf(c, "};\n  for (size_t j = 0; j < %lld; j++) {\n    size_t off = 0;\n", (long long)cnt);
  cg_printf(c,
            "    for (size_t d = 0; d < %lld; d++) {\n      long long ix = (long long)X1[j * %lld "
            "+ d];\n",
            (long long)k, (long long)k);
  cg_printf(c,
            "      if (ix < 0) ix += dims[d];\n      if (ix < 0 || ix >= dims[d]) ix = 0; /* never "
            "outside */\n");
  cg_printf(c, "      off += (size_t)ix * (size_t)st[d];\n    }\n");
  if (scatter) {
    cg_printf(c, "    for (size_t e = 0; e < %lld; e++) %s\n  }\n", (long long)slice, op);
  } else {
    cg_printf(c, "    memcpy(Y0 + j * %lld, X0 + off, %zu);\n  }\n", (long long)slice,
              (size_t)slice * (out[0]->nbytes / (size_t)(out[0]->numel ? out[0]->numel : 1)));
  }
  return OX_OK;
}

static int gen_eyelike(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  (void)in, (void)n_in, (void)n_out;
  if (out[0]->rank != 2) return cg_fail(c, OX_EMODEL, "expects 2-D");
  cg_printf(c, "  for (long long i = 0; i < %lld; i++)\n    for (long long j = 0; j < %lld; j++)\n",
            (long long)out[0]->dims[0], (long long)out[0]->dims[1]);
  cg_printf(c, "      Y0[i * %lld + j] = (%s)(j - i == %lld);\n", (long long)out[0]->dims[1],
            cg_ctype(out[0]->dtype), (long long)ox_node_attr_int(n, "k", 0));
  return OX_OK;
}

/* OneHot: for each index, a run of depth values along axis, "on" where the
 * index (negative ones count from depth) equals the position, else "off";
 * an index out of range gives a run of "off". */
static int gen_onehot(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const cg_val *I = in[0], *V = n_in > 2 ? in[2] : NULL, *Y = out[0];
  if (!V || V->numel != 2 || V->dtype != Y->dtype)
    return cg_fail(c, OX_EMODEL, "values must be [off, on] of the output's type");
  size_t ax;
  if (!cg_axis(ox_node_attr_int(n, "axis", -1), Y->rank, &ax))
    return cg_fail(c, OX_EMODEL, "axis out of range");
  int64_t depth = Y->dims[ax], outer = 1, inner = 1;
  for (size_t d = 0; d < ax; d++) outer *= Y->dims[d];
  for (size_t d = ax + 1; d < Y->rank; d++) inner *= Y->dims[d];
  cg_printf(c, "  for (long long o = 0; o < %lld; o++)\n    for (long long i = 0; i < %lld; i++) {\n",
            (long long)outer, (long long)inner);
  cg_printf(c, "      long long v = (long long)X0[o * %lld + i];\n      if (v < 0) v += %lld;\n",
            (long long)inner, (long long)depth);
  cg_printf(c, "      for (long long d = 0; d < %lld; d++)\n", (long long)depth);
  cg_printf(c, "        Y0[(o * %lld + d) * %lld + i] = d == v ? X2[1] : X2[0];\n    }\n",
            (long long)depth, (long long)inner);
  (void)I;
  return OX_OK;
}

/* CenterCropPad: each axis is cropped (a longer input) or padded with zeros
 * (a shorter one) around its centre: output index j reads input index
 * j + (in - out) / 2 (crop) or j - (out - in) / 2 (pad), zero outside. */
static int gen_centercroppad(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                             cg_val **out, size_t n_out) {
  (void)n, (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (X->rank != Y->rank) return cg_fail(c, OX_EMODEL, "the output's rank differs");
  int64_t xs[CG_MAX_RANK];
  cg_strides(X, xs);
  size_t r = Y->rank;
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < r; d++)
    cg_printf(c, "%*sfor (long long j%zu = 0; j%zu < %lld; j%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)Y->dims[d], d);
  int ind = (int)(2 + 2 * r);
  cg_printf(c, "%*s{\n", ind, "");
  cg_printf(c, "%*s  long long at = 0;\n%*s  int inside = 1;\n", ind, "", ind, "");
  for (size_t d = 0; d < r; d++) {
    int64_t diff = X->dims[d] - Y->dims[d];
    /* crop: start at (in - out) / 2; pad: (out - in) / 2 zeros first */
    int64_t sh = diff >= 0 ? diff / 2 : -((-diff) / 2);
    cg_printf(c, "%*s  { const long long i = j%zu + %lld;\n", ind, "", d, (long long)sh);
    cg_printf(c, "%*s    if (i < 0 || i >= %lld) inside = 0;\n%*s    at += i * %lld; }\n", ind, "",
              (long long)X->dims[d], ind, "", (long long)xs[d]);
  }
  cg_printf(c, "%*s  Y0[o++] = inside ? X0[at] : 0;\n%*s}\n", ind, "", ind, "");
  return OX_OK;
}

const cg_op ox_cg_ops_tensor[] = {
    {"CenterCropPad", gen_centercroppad},
    {"OneHot", gen_onehot},
    {"ScatterElements", gen_scatter_elements},
    {"Scatter", gen_scatter_elements},
    {"ScatterND", gen_nd},
    {"GatherND", gen_nd},
    {"EyeLike", gen_eyelike},
    {"GatherElements", gen_gather_elements},
    {"Trilu", gen_trilu},
    {"CumSum", gen_cumulative},
    {"CumProd", gen_cumulative},
    {"BitShift", gen_bitshift},
    {"Reshape", gen_copy},
    {"Flatten", gen_copy},
    {"Squeeze", gen_copy},
    {"Unsqueeze", gen_copy},
    {"Identity", gen_copy},
    {"Dropout", gen_copy},
    {"Transpose", gen_transpose},
    {"Slice", gen_slice},
    {"Tile", gen_tile},
    {"Expand", gen_expand},
    {"Pad", gen_pad},
    {"Concat", gen_concat},
    {"Split", gen_split},
    {"Gather", gen_gather},
    {"Cast", gen_cast},
    {"CastLike", gen_cast},
    {"ConstantOfShape", gen_constant_of_shape},
    {"Range", gen_range},
    {NULL, NULL},
};
