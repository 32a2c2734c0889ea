/* gemm_ref.c - the float GEMM's portable level (plain C, any CPU): the
 * 4 x 16 micro-kernel, the GEMV and dot products, packed-B rows and the
 * epilogue. Every table starts from these (gemm.c); the faster levels
 * replace what they have. */
#include <string.h>

#include "gemm_impl.h"
#include "gemm_loops.h"

/* ---- portable micro-kernel: 4 x 16 ---- */
static void ukernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             float alpha, float beta) {
  float acc[4][16];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) {
    const float *bk = b + k * 16, *ak = a + k * 4;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 16; j++) acc[i][j] += ak[i] * bk[j];
  }
  for (int i = 0; i < 4; i++) {
    float *ci = c + i * ldc;
    if (beta == 0.0f)
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j];
    else
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
  }
}

/* The row-vector product for every level: the AVX2 and AVX-512 wrappers
 * that called this loop never inlined it (a plain function called from a
 * target function), so all levels ran this baseline code; the table keeps
 * it so (the same bits everywhere). */
/* Columns in blocks of GEMV_BLOCK (the sums stay in L1) and rows four at a
 * time: each step reads four row segments of B (streams the prefetcher
 * follows; the rows ahead are also prefetched by hand, since a segment is
 * a small part of a page) and loads and stores the sums once per four
 * rows instead of once per row. */
enum { GEMV_BLOCK = 4096, GEMV_AHEAD = 4 };

static void gemv_rows_ref(const gemv_job *g, int64_t j0, int64_t j1) {
  float acc[GEMV_BLOCK];
  const int64_t K = g->K, ldb = g->ldb;
  for (int64_t jb = j0; jb < j1; jb += GEMV_BLOCK) {
    int64_t n = j1 - jb < GEMV_BLOCK ? j1 - jb : GEMV_BLOCK;
    memset(acc, 0, (size_t)n * sizeof(float));
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
      const float *b0 = g->B + k * ldb + jb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      float a0 = g->a[k], a1 = g->a[k + 1], a2 = g->a[k + 2], a3 = g->a[k + 3];
      if (k + GEMV_AHEAD + 4 <= K) {
        const float *p = b0 + GEMV_AHEAD * ldb;
        for (int64_t j = 0; j < n; j += 16)
          for (int r = 0; r < 4; r++) __builtin_prefetch(p + r * ldb + j);
      }
      for (int64_t j = 0; j < n; j++)
        acc[j] += (a0 * b0[j] + a1 * b1[j]) + (a2 * b2[j] + a3 * b3[j]);
    }
    for (; k < K; k++) {
      float a = g->a[k];
      const float *b = g->B + k * ldb + jb;
      for (int64_t j = 0; j < n; j++) acc[j] += a * b[j];
    }
    float *c = g->c + jb;
    for (int64_t j = 0; j < n; j++)
      c[j] = g->beta == 0.0f ? g->alpha * acc[j] : g->alpha * acc[j] + g->beta * c[j];
  }
}

/* Dot products (B transposed): c[j] = alpha * <a, B[j, :]> + beta c[j]. */
/* Dot products (B transposed): c[j] = alpha * <a, B[j, :]> + beta c[j]. */
static float dot_generic(const float *a, const float *b, int64_t K) {
  float acc[8] = {0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int i = 0; i < 8; i++) acc[i] += a[k + i] * b[k + i];
  float sum = 0.0f;
  for (int i = 0; i < 8; i++) sum += acc[i];
  for (; k < K; k++) sum += a[k] * b[k];
  return sum;
}

static void pgemv_ref(const pgemv_job *j, int64_t p0, int64_t p1) {
  if (j->B->nr == 32)
    OX_PGEMV_BODY(32);
  else
    OX_PGEMV_BODY(16);
}

static void silu_row(float *c, int64_t n) {
  for (int64_t j = 0; j < n; j++) c[j] = ox_silu1(c[j]);
}

static void epi_ref(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C, int64_t ldc) {
  epi_rows(ep, M, N, C, ldc);
}

void ox_gemm_fill_ref(ox_gemm_table *t) {
  t->uk = (ukernel){4, 16, ukernel_portable, "portable"};
  t->gemv_rows = gemv_rows_ref;
  t->dot = dot_generic;
  t->epi = epi_ref;
  t->pgemv = pgemv_ref;
}
