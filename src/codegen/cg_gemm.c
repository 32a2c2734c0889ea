/* cg_gemm.c - the matrix product that MatMul, Gemm and Conv (im2col) call:
 * one static function per element type, written once per compilation, with
 * an MR x NR register tile (MR rows of A times NR unit-stride columns of B,
 * the accumulators in local arrays of literal size that the compiler keeps
 * in registers and vectorises at -O2), and the compile-time transposition
 * of constant weights into the layout that tile reads. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* The register tile: 4 rows x NV vectors of VB bytes. With GNU C's vector
 * extension (gcc, clang) the accumulators are named vector variables, which
 * gcc 12 keeps in registers at -O2 (plain loops over local arrays of the
 * same size were vectorised but left the accumulators on the stack: 16
 * GFLOP/s on SSE2 against 35 with vectors; AVX2 87, AVX-512 155, measured on
 * a 96 x 288 x 64 product). Other compilers, and CPUs without float vectors
 * (Cortex-M, where GCC would emulate them on the stack), get the plain
 * loops. VB: 16
 * bytes (SSE2, NEON: the baseline of every 64-bit CPU), 32 for --target
 * avx2, 64 for avx512. Cortex-M has no float vectors: plain loops, 4 x 4. */
static int vec_bytes(const cg_ctx *c) {
  switch (c->o->target) {
    case OX_CG_AVX2:
      return 32;
    case OX_CG_AVX512:
      return 64;
    case OX_CG_CORTEXM:
      return 0;
    default:
      return 16;
  }
}
#define CG_NV 2 /* vectors per tile row */

int64_t cg_gemm_nr(const cg_ctx *c) {
  int vb = vec_bytes(c);
  return vb ? CG_NV * vb / 4 : 4;
}

/* The tiles with vector variables (GNU C), the plain ones for other
 * compilers after #else. */
static void put_vector_tiles(cg_ctx *c, ox_buf *b, const char *T, const char *P, int vb, int es) {
  int vl = vb / es, nr = CG_NV * vl;
  ox_buf_printf(b,
                "#if defined(__GNUC__) && (defined(__SSE2__) || defined(__ARM_NEON) || \\\n"
                "    defined(__wasm_simd128__) || defined(__ALTIVEC__))\n"
                "  typedef %s %s_v%s __attribute__((vector_size(%d)));\n"
                "  for (; j0 + %d <= N; j0 += %d) {\n"
                "    size_t i0 = 0;\n"
                "    for (; i0 < M; i0 += 4) { /* 4 rows, or the 1 to 3 last ones */\n"
                "      const size_t mr = M - i0 < 4 ? M - i0 : 4;\n",
                T, P, T, vb, nr, nr);
  /* the bias: a vector of bias[j] (bmode 2), else 0 plus bias[i] (bmode 1) */
  for (int v = 0; v < CG_NV; v++)
    ox_buf_printf(b,
                  "      %s_v%s t%d = {0};\n"
                  "      if (bmode == 2) memcpy(&t%d, bias + j0 + %d, sizeof t%d);\n",
                  P, T, v, v, v * vl, v);
  for (int r = 0; r < 4; r++)
    for (int v = 0; v < CG_NV; v++)
      ox_buf_printf(b, "      %s_v%s c%d_%d = t%d + (bmode == 1 && %d < mr ? bias[i0 + %d] : 0);\n",
                    P, T, r, v, v, r, r);
  /* rows past M read row 0 again (a valid row) and are not stored */
  ox_buf_printf(b,
                "      const %s *a = A + i0 * ars, *bk = B + j0;\n"
                "      const size_t r1 = mr > 1 ? ars : 0, r2 = mr > 2 ? 2 * ars : 0, r3 = mr > 3 "
                "? 3 * ars : 0;\n"
                "      for (size_t k = 0; k < K; k++, a += acs, bk += ldb) {\n",
                T);
  for (int v = 0; v < CG_NV; v++)
    ox_buf_printf(b, "        %s_v%s b%d;\n        memcpy(&b%d, bk + %d, sizeof b%d);\n", P, T, v,
                  v, v * vl, v);
  ox_buf_printf(b, "        const %s x0 = a[0], x1 = a[r1], x2 = a[r2], x3 = a[r3];\n", T);
  for (int r = 0; r < 4; r++)
    for (int v = 0; v < CG_NV; v++) ox_buf_printf(b, "        c%d_%d += x%d * b%d;\n", r, v, r, v);
  ox_buf_printf(b, "      }\n");
  for (int r = 0; r < 4; r++)
    for (int v = 0; v < CG_NV; v++)
      ox_buf_printf(b,
                    "      if (%d < mr) {\n"
                    "        %s *c = C + (i0 + %d) * rsc + (j0 + %d) * csc;\n"
                    "        if (csc == 1) memcpy(c, &c%d_%d, sizeof c%d_%d);\n"
                    "        else for (size_t l = 0; l < %d; l++) c[l * csc] = c%d_%d[l];\n"
                    "      }\n",
                    r, T, r, v * vl, r, v, r, v, vl, r, v);
  ox_buf_printf(b, "    }\n  }\n#else\n");
  (void)c;
}

const char *cg_gemm_fn(cg_ctx *c, int32_t dtype) {
  unsigned bit = dtype == OX_FLOAT ? 1u : dtype == OX_DOUBLE ? 2u : 0u;
  if (!bit) return NULL;
  const char *T = cg_ctype(dtype), *name = ox_arena_printf(c->a, "%s_gemm_%c", c->prefix,
                                                           dtype == OX_FLOAT ? 'f' : 'd');
  if (!name || (c->gemm_done & bit)) return name;
  c->gemm_done |= bit;
  int vb = vec_bytes(c), es = dtype == OX_FLOAT ? 4 : 8;
  long long nr = 4; /* the plain tile */
  ox_buf *b = &c->consts; /* before every node function */
  ox_buf_printf(
      b,
      "/* C(i,j) = bias + sum over k of A(i,k) B(k,j), k in order for every element:\n"
      " * A(i,k) = A[i*ars + k*acs], B(k,j) = B[k*ldb + j], C(i,j) = C[i*rsc + j*csc];\n"
      " * bmode 0: no bias (bias is any valid pointer then: never read), 1: bias[i],\n"
      " * 2: bias[j]. Register tiles of 4 rows. Not inlined nor cloned: one copy\n"
      " * serves every node (and gcc then makes no false out-of-bounds findings in\n"
      " * the copies specialised for one call's constants). gcc 12 still propagates\n"
      " * the constants of a lone call, and when C is an arena array of known size\n"
      " * claims an iteration of the last-columns loop out of bounds (that loop\n"
      " * stops at N): that warning is off here. */\n"
      "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC diagnostic push\n"
      "#pragma GCC diagnostic ignored \"-Waggressive-loop-optimizations\"\n#endif\n"
      "#if defined(__clang__)\n__attribute__((noinline))\n"
      "#elif defined(__GNUC__)\n__attribute__((noinline, noclone))\n#endif\n"
      "static void %s(size_t M, size_t N, size_t K, const %s *restrict A, size_t ars,\n"
      "    size_t acs, const %s *restrict B, size_t ldb, %s *restrict C, size_t rsc, size_t csc,\n"
      "    const %s *restrict bias, int bmode) {\n"
      "  size_t j0 = 0;\n",
      name, T, T, T, T);
  if (vb) put_vector_tiles(c, b, T, c->prefix, vb, es);
  /* the plain tiles (then the last columns one at a time) */
  ox_buf_printf(
      b,
      "  for (; j0 + %lld <= N; j0 += %lld) {\n"
      "    size_t i0 = 0;\n"
      "    for (; i0 + 4 <= M; i0 += 4) {\n"
      "      %s c0[%lld], c1[%lld], c2[%lld], c3[%lld];\n"
      "      for (size_t j = 0; j < %lld; j++) {\n"
      "        const %s bj = bmode == 2 ? bias[j0 + j] : 0;\n"
      "        c0[j] = bmode == 1 ? bias[i0] : bj;\n"
      "        c1[j] = bmode == 1 ? bias[i0 + 1] : bj;\n"
      "        c2[j] = bmode == 1 ? bias[i0 + 2] : bj;\n"
      "        c3[j] = bmode == 1 ? bias[i0 + 3] : bj;\n"
      "      }\n"
      "      const %s *a = A + i0 * ars, *bk = B + j0;\n"
      "      for (size_t k = 0; k < K; k++, a += acs, bk += ldb) {\n"
      "        const %s x0 = a[0], x1 = a[ars], x2 = a[2 * ars], x3 = a[3 * ars];\n"
      "        for (size_t j = 0; j < %lld; j++) {\n"
      "          c0[j] += x0 * bk[j];\n"
      "          c1[j] += x1 * bk[j];\n"
      "          c2[j] += x2 * bk[j];\n"
      "          c3[j] += x3 * bk[j];\n"
      "        }\n"
      "      }\n"
      "      %s *c = C + i0 * rsc + j0 * csc;\n"
      "      for (size_t j = 0; j < %lld; j++) {\n"
      "        c[j * csc] = c0[j];\n"
      "        c[rsc + j * csc] = c1[j];\n"
      "        c[2 * rsc + j * csc] = c2[j];\n"
      "        c[3 * rsc + j * csc] = c3[j];\n"
      "      }\n"
      "    }\n"
      "    for (; i0 < M; i0++) { /* the last rows, one at a time */\n"
      "      %s c0[%lld];\n"
      "      for (size_t j = 0; j < %lld; j++) c0[j] = bmode == 1 ? bias[i0] : bmode == 2 ? "
      "bias[j0 + j] : 0;\n"
      "      const %s *a = A + i0 * ars, *bk = B + j0;\n"
      "      for (size_t k = 0; k < K; k++, a += acs, bk += ldb) {\n"
      "        const %s x0 = a[0];\n"
      "        for (size_t j = 0; j < %lld; j++) c0[j] += x0 * bk[j];\n"
      "      }\n"
      "      for (size_t j = 0; j < %lld; j++) C[i0 * rsc + (j0 + j) * csc] = c0[j];\n"
      "    }\n"
      "  }\n%s"
      /* counted down: GCC 12 inlining `for (; j0 < N; j0++)` with a constant N
       * warns of an overflowing iteration (-Waggressive-loop-optimizations) */
      "  for (size_t jn = N - j0; jn > 0; jn--, j0++) /* the last columns, one at a time */\n"
      "    for (size_t i = 0; i < M; i++) {\n"
      "      %s acc = bmode == 1 ? bias[i] : bmode == 2 ? bias[j0] : 0;\n"
      "      for (size_t k = 0; k < K; k++) acc += A[i * ars + k * acs] * B[k * ldb + j0];\n"
      "      C[i * rsc + j0 * csc] = acc;\n"
      "    }\n"
      "}\n"
      "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC diagnostic pop\n#endif\n\n",
      nr, nr, T, nr, nr, nr, nr, nr, T, T, T, nr, T, nr, T, nr, nr, T, T, nr, nr,
      vb ? "#endif\n" : "", T);
  return name;
}

/* How many nodes of g (subgraphs included) read name. */
static size_t readers(const ox_graph *g, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const ox_node *nd = &g->node[i];
    for (size_t k = 0; k < nd->n_input; k++) n += strcmp(nd->input[k], name) == 0;
    for (size_t a = 0; a < nd->n_attribute; a++) {
      const ox_attr *at = &nd->attribute[a];
      if (at->g) n += readers(at->g, name);
      for (size_t j = 0; j < at->n_graphs; j++) n += readers(&at->graphs[j], name);
    }
  }
  return n;
}

bool cg_transpose_const(cg_ctx *c, cg_val *v, int64_t rows, int64_t cols) {
  uintptr_t k;
  if (!v || v->kind != CG_CONST || !v->cv || !v->cv->data || rows * cols != v->numel ||
      (v->dtype != OX_FLOAT && v->dtype != OX_DOUBLE) || c->depth ||
      ox_map_get(c->out_names, v->name, &k) || readers(c->g, v->name) != 1)
    return false;
  int64_t dims[2] = {cols, rows};
  ox_value *t = ox_tensor_new(v->dtype, dims, 2, c->e);
  if (!t) return false;
  size_t es = v->dtype == OX_FLOAT ? 4 : 8;
  const unsigned char *src = v->cv->data;
  unsigned char *dst = t->data;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t q = 0; q < cols; q++)
      memcpy(dst + (size_t)(q * rows + r) * es, src + (size_t)(r * cols + q) * es, es);
  ox_value_unref(v->cv);
  v->cv = t;
  v->rank = 2;
  v->dims[0] = cols;
  v->dims[1] = rows;
  return true;
}
