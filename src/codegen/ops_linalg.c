/* ops_linalg.c - C generators for MatMul (numpy batching and 1-D rules)
 * and Gemm. The loops run i-k-j so that the innermost one walks both B and
 * Y contiguously and compilers vectorise it. */
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
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++)\n    for (size_t j = 0; j < %lld; j++) {\n",
            (long long)M, (long long)N);
  cg_printf(c, "      %s acc = 0;\n      for (size_t k = 0; k < %lld; k++)\n", T, (long long)K);
  char ia[64], ib[64];
  snprintf(ia, sizeof ia, ta ? "k * %lld + i" : "i * %lld + k", (long long)(ta ? M : K));
  snprintf(ib, sizeof ib, tb ? "j * %lld + k" : "k * %lld + j", (long long)(tb ? K : N));
  cg_printf(c, "        acc += X0[%s] * X1[%s];\n", ia, ib);
  const cg_val *C = n_in > 2 ? in[2] : NULL;
  if (C) {
    int64_t si = C->rank >= 2 && C->dims[C->rank - 2] != 1 ? C->dims[C->rank - 1] : 0;
    int64_t sj = C->rank >= 1 && C->dims[C->rank - 1] != 1 ? 1 : 0;
    cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc + %s * X2[i * %lld + j * %lld]);\n    }\n",
              (long long)N, T, al, be, (long long)si, (long long)sj);
  } else {
    cg_printf(c, "      Y0[i * %lld + j] = (%s)(%s * acc);\n    }\n", (long long)N, T, al);
  }
  return OX_OK;
}

const cg_op ox_cg_ops_linalg[] = {
    {"MatMul", gen_matmul},
    {"Gemm", gen_gemm},
    {NULL, NULL},
};
