/* ops_linalg.c - C generators for MatMul (numpy batching and 1-D rules),
 * Gemm and Einsum. Float and double products call the tiled helper of
 * cg_gemm.c; the integer ones run i-k-j loops whose innermost one walks B
 * and Y contiguously. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static int gen_matmul(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n, (void)n_out;
  if (n_in != 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects two inputs");
  const cg_val *A = in[0], *B = in[1];
  if (A->dtype == OX_BOOL || A->rank == 0 || B->rank == 0)
    return cg_fail(c, OX_EUNSUPPORTED, "bool or scalar inputs");
  int64_t M = A->rank == 1 ? 1 : A->dims[A->rank - 2], K = A->dims[A->rank - 1];
  int64_t N = B->rank == 1 ? 1 : B->dims[B->rank - 1];
  int64_t KB = B->rank == 1 ? B->dims[0] : B->dims[B->rank - 2];
  if (K != KB)
    return cg_fail(c, OX_EMODEL, "inner dims %lld and %lld differ", (long long)K, (long long)KB);
  /* batch dims: the output's, against each input's leading dims */
  cg_val ba = {0}, bb = {0}, *ops[2] = {&ba, &bb};
  ba.rank = A->rank > 2 ? A->rank - 2 : 0;
  bb.rank = B->rank > 2 ? B->rank - 2 : 0;
  memcpy(ba.dims, A->dims, ba.rank * sizeof(int64_t));
  memcpy(bb.dims, B->dims, bb.rank * sizeof(int64_t));
  ox_numel(ba.dims, ba.rank, &ba.numel);
  ox_numel(bb.dims, bb.rank, &bb.numel);
  size_t orank = ba.rank > bb.rank ? ba.rank : bb.rank;
  int64_t od[CG_MAX_RANK];
  for (size_t d = 0; d < orank; d++) {
    int64_t x = d + ba.rank >= orank ? ba.dims[d + ba.rank - orank] : 1;
    int64_t y = d + bb.rank >= orank ? bb.dims[d + bb.rank - orank] : 1;
    od[d] = x == 1 ? y : x;
  }
  const char *T = cg_ctype(out[0]->dtype);
  char body[1024];
  const char *gemm = cg_gemm_fn(c, out[0]->dtype);
  if (gemm) { /* float, double: the tiled helper, the same sums in the same order */
    snprintf(body, sizeof body,
             "%s(%lld, %lld, %lld, X0 + i0 * %lld, %lld, 1, X1 + i1 * %lld, %lld, Y0 + o * %lld, "
             "%lld, 1, X1, 0);",
             gemm, (long long)M, (long long)N, (long long)K, (long long)(M * K), (long long)K,
             (long long)(K * N), (long long)N, (long long)(M * N), (long long)N);
    cg_bcast_loop(c, od, orank, ops, 2, body);
    return OX_OK;
  }
  snprintf(body, sizeof body,
           "const %s *a = X0 + i0 * %lld, *b = X1 + i1 * %lld;\n"
           "    %s *y = Y0 + o * %lld;\n"
           "    for (size_t i = 0; i < %lld; i++) {\n"
           "      %s *yr = y + i * %lld;\n"
           "      for (size_t j = 0; j < %lld; j++) yr[j] = 0;\n"
           "      for (size_t k = 0; k < %lld; k++) {\n"
           "        const %s av = a[i * %lld + k];\n"
           "        const %s *br = b + k * %lld;\n"
           "        for (size_t j = 0; j < %lld; j++) yr[j] += av * br[j];\n"
           "      }\n"
           "    }",
           T, (long long)(M * K), (long long)(K * N), T, (long long)(M * N), (long long)M, T,
           (long long)N, (long long)N, (long long)K, T, (long long)K, T, (long long)N,
           (long long)N);
  cg_bcast_loop(c, od, orank, ops, 2, body);
  return OX_OK;
}

static int gen_gemm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1] || in[0]->rank != 2 || in[1]->rank != 2)
    return cg_fail(c, OX_EMODEL, "expects 2-D A and B");
  if (in[0]->dtype == OX_BOOL) return cg_fail(c, OX_EUNSUPPORTED, "bool inputs");
  bool ta = ox_node_attr_int(n, "transA", 0) != 0, tb = ox_node_attr_int(n, "transB", 0) != 0;
  int64_t M = out[0]->dims[0], N = out[0]->dims[1];
  int64_t K = ta ? in[0]->dims[0] : in[0]->dims[1];
  bool isf = in[0]->dtype == OX_FLOAT || in[0]->dtype == OX_DOUBLE;
  char al[64], be[64];
  float alpha = ox_node_attr_float(n, "alpha", 1.0f), beta = ox_node_attr_float(n, "beta", 1.0f);
  if (isf) {
    cg_float_lit(al, sizeof al, alpha, in[0]->dtype == OX_FLOAT);
    cg_float_lit(be, sizeof be, beta, in[0]->dtype == OX_FLOAT);
  } else {
    snprintf(al, sizeof al, "%lld", (long long)alpha);
    snprintf(be, sizeof be, "%lld", (long long)beta);
  }
  const char *T = cg_ctype(out[0]->dtype);
  const cg_val *C = n_in > 2 ? in[2] : NULL;
  int64_t si = 0, sj = 0; /* C's strides under broadcasting */
  if (C) {
    si = C->rank >= 2 && C->dims[C->rank - 2] != 1 ? C->dims[C->rank - 1] : 0;
    sj = C->rank >= 1 && C->dims[C->rank - 1] != 1 ? 1 : 0;
  }
  /* B transposed and constant: stored transposed at compile time, so that
   * the helper reads its rows with unit stride */
  bool fl = out[0]->dtype == OX_FLOAT || out[0]->dtype == OX_DOUBLE;
  const char *gemm = fl && (!tb || cg_transpose_const(c, in[1], N, K))
                         ? cg_gemm_fn(c, out[0]->dtype)
                         : NULL;
  if (gemm) {
    /* the products from 0 in k order, then alpha and beta C as below */
    cg_printf(c, "  %s(%lld, %lld, %lld, X0, %lld, %lld, X1, %lld, Y0, %lld, 1, X0, 0);\n", gemm,
              (long long)M, (long long)N, (long long)K, (long long)(ta ? 1 : K),
              (long long)(ta ? M : 1), (long long)N, (long long)N);
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++)\n    for (size_t j = 0; j < %lld; j++) {\n",
              (long long)M, (long long)N);
    cg_printf(c, "      const %s acc = Y0[i * %lld + j];\n", T, (long long)N);
    if (C)
      cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc + %s * X2[i * %lld + j * %lld]);\n    }\n",
                (long long)N, T, al, be, (long long)si, (long long)sj);
    else
      cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc);\n    }\n", (long long)N, T, al);
    return OX_OK;
  }
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)M, (long long)N);
  cg_printf(c, "      %s acc = 0;\n      for (size_t k = 0; k < %lld; k++)\n", T, (long long)K);
  char ia[64], ib[64];
  snprintf(ia, sizeof ia, ta ? "k * %lld + i" : "i * %lld + k", (long long)(ta ? M : K));
  snprintf(ib, sizeof ib, tb ? "j * %lld + k" : "k * %lld + j", (long long)(tb ? K : N));
  cg_printf(c, "        acc += X0[%s] * X1[%s];\n", ia, ib);
  if (C) {
    cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc + %s * X2[i * %lld + j * %lld]);\n    }\n",
              (long long)N, T, al, be, (long long)si, (long long)sj);
  } else {
    cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc);\n    }\n", (long long)N, T, al);
  }
  return OX_OK;
}

/* Einsum: the equation's labels become loop variables, the output's
 * outermost, the summed ones inside; "..." stands for the leading dims of
 * each operand (labels '0'..'7' here, aligned from the right, a dim of 1
 * broadcast); implicit output: the labels seen once, in alphabetical order,
 * after the ellipsis dims. Repeated labels in an operand take diagonals. */
static int gen_einsum(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)n_out;
  const char *eq = ox_node_attr_str(n, "equation", "");
  char lab[8][CG_MAX_RANK + 1], olab[CG_MAX_RANK + 1];
  size_t nl[8] = {0}, no = 0, k = 0, ell_max = 0;
  if (n_in == 0 || n_in > 8) return cg_fail(c, OX_EUNSUPPORTED, "1 to 8 operands");
  const cg_val *Y = out[0];
  bool isf = Y->dtype == OX_FLOAT || Y->dtype == OX_DOUBLE;
  for (size_t i = 0; i < n_in; i++)
    if (!in[i] || in[i]->dtype != Y->dtype) return cg_fail(c, OX_EMODEL, "operand types differ");
  const char *p = eq, *arrow = strstr(eq, "->");
  /* the operands' labels, ellipsis expanded */
  for (k = 0; k < n_in; k++) {
    char raw[32];
    size_t m = 0;
    bool ell = false;
    while (*p == ' ') p++;
    while (*p && *p != ',' && !(p[0] == '-' && p[1] == '>')) {
      if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
        ell = true;
        raw[m++] = '*';
        p += 3;
      } else if (*p != ' ') {
        bool letter = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
        if (!letter) return cg_fail(c, OX_EMODEL, "label '%c' is not a letter", *p);
        if (m >= sizeof raw - 1) return cg_fail(c, OX_EMODEL, "equation too long");
        raw[m++] = *p++;
      } else {
        p++;
      }
    }
    if (*p == ',') p++;
    size_t explicit_n = m - (ell ? 1 : 0), rank = in[k]->rank;
    if (rank < explicit_n || (!ell && rank != explicit_n) || rank > CG_MAX_RANK)
      return cg_fail(c, OX_EMODEL, "operand %zu's labels do not match its rank", k);
    size_t ne = rank - explicit_n;
    if (ne > ell_max) ell_max = ne;
    for (size_t j = 0; j < m; j++) {
      if (raw[j] == '*')
        for (size_t e = 0; e < ne; e++) lab[k][nl[k]++] = (char)('0' + (8 - ne + e));
      else
        lab[k][nl[k]++] = raw[j];
    }
  }
  if (ell_max > 8) return cg_fail(c, OX_EUNSUPPORTED, "ellipsis of more than 8 dims");
  /* the size of every label */
  int64_t size[128];
  for (int i = 0; i < 128; i++) size[i] = -1;
  for (k = 0; k < n_in; k++)
    for (size_t j = 0; j < nl[k]; j++) {
      unsigned char l = (unsigned char)lab[k][j];
      int64_t d = in[k]->dims[j];
      if (size[l] < 0 || size[l] == 1)
        size[l] = d;
      else if (d != 1 && d != size[l])
        return cg_fail(c, OX_EMODEL, "label '%c' has sizes %lld and %lld", l,
                       (long long)size[l], (long long)d);
    }
  if (arrow) {
    for (const char *q = arrow + 2; *q; q++) {
      if (q[0] == '.' && q[1] == '.' && q[2] == '.') {
        for (size_t e = 0; e < ell_max; e++) olab[no++] = (char)('0' + (8 - ell_max + e));
        q += 2;
      } else if (*q != ' ') {
        if (no >= CG_MAX_RANK || size[(unsigned char)*q] < 0)
          return cg_fail(c, OX_EMODEL, "output label '%c' is in no operand", *q);
        olab[no++] = *q;
      }
    }
  } else {
    for (size_t e = 0; e < ell_max; e++) olab[no++] = (char)('0' + (8 - ell_max + e));
    for (int l = 'A'; l <= 'z'; l++) {
      size_t cnt = 0;
      for (k = 0; k < n_in; k++)
        for (size_t j = 0; j < nl[k]; j++) cnt += lab[k][j] == l;
      if (cnt == 1 && no < CG_MAX_RANK) olab[no++] = (char)l;
    }
  }
  if (no != Y->rank) return cg_fail(c, OX_EMODEL, "the output's rank is not the equation's");
  /* loops: output labels, then the summed ones */
  bool used[128] = {false};
  int ind = 2;
  const char *T = cg_ctype(Y->dtype);
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t j = 0; j < no; j++) {
    unsigned char l = (unsigned char)olab[j];
    if (used[l]) return cg_fail(c, OX_EUNSUPPORTED, "a repeated output label");
    used[l] = true;
    cg_printf(c, "%*sfor (long long i_%c = 0; i_%c < %lld; i_%c++)\n", ind, "", l, l,
              (long long)size[l], l);
    ind += 2;
  }
  cg_printf(c, "%*s{\n%*s  %s acc = 0;\n", ind, "", ind, "", isf ? "double" : T);
  ind += 2;
  for (k = 0; k < n_in; k++)
    for (size_t j = 0; j < nl[k]; j++) {
      unsigned char l = (unsigned char)lab[k][j];
      if (used[l]) continue;
      used[l] = true;
      cg_printf(c, "%*sfor (long long i_%c = 0; i_%c < %lld; i_%c++)\n", ind, "", l, l,
                (long long)size[l], l);
      ind += 2;
    }
  cg_printf(c, "%*sacc += ", ind, "");
  for (k = 0; k < n_in; k++) {
    int64_t st[CG_MAX_RANK];
    cg_strides(in[k], st);
    cg_printf(c, "%s%sX%zu[0", k ? " * " : "", isf ? "(double)" : "", k);
    for (size_t j = 0; j < nl[k]; j++)
      if (in[k]->dims[j] != 1)
        cg_printf(c, " + i_%c * %lld", lab[k][j], (long long)st[j]);
    cg_printf(c, "]");
  }
  cg_printf(c, ";\n");
  ind = 2 + 2 * (int)no;
  cg_printf(c, "%*s  Y0[o++] = (%s)acc;\n%*s}\n", ind, "", T, ind, "");
  return OX_OK;
}

const cg_op ox_cg_ops_linalg[] = {
    {"Einsum", gen_einsum},
    {"MatMul", gen_matmul},
    {"Gemm", gen_gemm},
    {NULL, NULL},
};
