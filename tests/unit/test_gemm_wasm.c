/* test_gemm_wasm.c - the float GEMM's WebAssembly SIMD128 level
 * (kernels/gemm_wasm.c) against the portable one (gemm_ref.c) it replaces:
 * both form every sum in the same order with separately rounded multiplies
 * and adds, so the micro-kernel, the GEMV, the dot product and the packed-B
 * rows must give the same bits (NaN and infinity included), over odd depths,
 * alpha and beta (beta 0 ignoring a NaN in C) and every row and column
 * count at the edges. The dispatch table must hold the SIMD128 entries in a
 * -msimd128 build (unless ONNXC_ISA=portable) and the portable ones
 * otherwise. Elsewhere (no SIMD128 compiled in) only that last check runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "kernels/gemm.h"
#include "kernels/gemm_impl.h"

static int failures;

static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 4096.0f - 8.0f;
}

static void fill(float *p, int64_t n, uint32_t *s) {
  for (int64_t i = 0; i < n; i++) p[i] = rnd(s);
}

/* bit equality, any NaN equal to any NaN */
static int64_t count_diff(const float *a, const float *b, int64_t n) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i]))) bad++;
  return bad;
}

static void check(const char *what, int64_t bad, long long a, long long b) {
  if (bad) {
    printf("FAIL %s (%lld, %lld): %lld values differ\n", what, a, b, (long long)bad);
    failures++;
  }
}

/* the micro-kernel: the wasm tile against the portable 4 x 16 one over the
 * same operands, through a plain triple loop of tiles of each */
static void test_ukernel(const ox_gemm_table *ref, const ox_gemm_table *w) {
  uint32_t s = 1;
  const int M = 12, N = 16; /* a multiple of both tiles' rows and columns */
  for (int kc = 1; kc <= 67; kc += 11)
    for (int bi = 0; bi < 3; bi++) {
      float alpha = bi == 2 ? 0.5f : 1.0f, beta = bi == 0 ? 0.0f : bi == 1 ? 1.0f : -2.0f;
      float *A = malloc(sizeof(float) * (size_t)(M * kc)),
            *B = malloc(sizeof(float) * (size_t)(kc * N));
      float C0[12 * 16], C1[12 * 16], C2[12 * 16];
      fill(A, M * kc, &s);
      fill(B, kc * N, &s);
      fill(C0, M * N, &s);
      if (beta == 0.0f) C0[5] = NAN; /* ignored by beta 0 */
      if (bi == 1) A[3] = INFINITY;  /* carried through */
      memcpy(C1, C0, sizeof C0);
      memcpy(C2, C0, sizeof C0);
      const ukernel *uks[2] = {&ref->uk, &w->uk};
      float *Cs[2] = {C1, C2};
      for (int v = 0; v < 2; v++) {
        int mr = uks[v]->mr, nr = uks[v]->nr;
        float *ap = malloc(sizeof(float) * (size_t)(mr * kc)),
              *bp = malloc(sizeof(float) * (size_t)(kc * nr));
        for (int i0 = 0; i0 < M; i0 += mr)
          for (int j0 = 0; j0 < N; j0 += nr) {
            for (int k = 0; k < kc; k++) {
              for (int i = 0; i < mr; i++) ap[k * mr + i] = A[(i0 + i) * kc + k];
              for (int j = 0; j < nr; j++) bp[k * nr + j] = B[k * N + j0 + j];
            }
            uks[v]->fn(kc, ap, bp, Cs[v] + i0 * N + j0, N, alpha, beta);
          }
        free(ap);
        free(bp);
      }
      check("ukernel", count_diff(C1, C2, M * N), kc, bi);
      free(A);
      free(B);
    }
}

static void test_gemv_dot(const ox_gemm_table *ref, const ox_gemm_table *w) {
  uint32_t s = 2;
  const int64_t sizes[][2] = {{1, 1}, {3, 5}, {4, 8}, {7, 13}, {33, 130}, {64, 4099}};
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    int64_t K = sizes[t][0], N = sizes[t][1];
    float *a = malloc(sizeof(float) * (size_t)K), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *c1 = malloc(sizeof(float) * (size_t)N), *c2 = malloc(sizeof(float) * (size_t)N);
    fill(a, K, &s);
    fill(B, K * N, &s);
    fill(c1, N, &s);
    memcpy(c2, c1, sizeof(float) * (size_t)N);
    gemv_job g1 = {.K = K, .ldb = N, .alpha = 1.5f, .beta = 0.25f, .a = a, .B = B, .c = c1, .N = N};
    gemv_job g2 = g1;
    g2.c = c2;
    ref->gemv_rows(&g1, 0, N);
    w->gemv_rows(&g2, 0, N);
    check("gemv", count_diff(c1, c2, N), K, N);
    /* dot products over rows of B's data taken as K-long vectors */
    for (int64_t j = 0; j + K <= K * N && j < 40; j++) {
      float d1 = ref->dot(a, B + j, K), d2 = w->dot(a, B + j, K);
      check("dot", count_diff(&d1, &d2, 1), K, j);
    }
    free(a);
    free(B);
    free(c1);
    free(c2);
  }
}

/* packed-B rows: a B packed in the wasm layout (8-column panels) through
 * the wasm entry, against the portable body over the same panels */
static void test_pgemv(const ox_gemm_table *ref, const ox_gemm_table *w) {
  uint32_t s = 3;
  const int64_t shapes[][3] = {{1, 5, 3}, {2, 17, 9}, {3, 40, 400}, {4, 9, 800}};
  for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++) {
    int64_t M = shapes[t][0], N = shapes[t][1], K = shapes[t][2];
    int64_t kc = ref->kc, npad = (N + 7) / 8 * 8;
    float *A = malloc(sizeof(float) * (size_t)(M * K)),
          *B = malloc(sizeof(float) * (size_t)(K * N));
    float *data = malloc(sizeof(float) * (size_t)(K * npad));
    float *c1 = calloc((size_t)(M * N), sizeof(float)),
          *c2 = calloc((size_t)(M * N), sizeof(float));
    fill(A, M * K, &s);
    fill(B, K * N, &s);
    for (int64_t pc = 0; pc < K; pc += kc) {
      int64_t k1 = K - pc < kc ? K - pc : kc;
      ox_gemm_pack_b_panels(8, false, B, N, pc, k1, 0, N, data + pc * npad);
    }
    ox_sgemm_bpack bp = {.K = K, .N = N, .npad = npad, .nr = 8, .kc = kc, .data = data};
    pgemv_job j = {.B = &bp, .A = A, .M = M, .lda = K, .ldc = N, .C = c2};
    w->pgemv(&j, 0, npad / 8);
    /* the portable body reads the same panels as 8-wide rows: plain sums */
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        float acc = 0.0f;
        for (int64_t k = 0; k < K; k++) acc += A[m * K + k] * B[k * N + n];
        c1[m * N + n] = acc;
      }
    (void)ref;
    check("pgemv", count_diff(c1, c2, M * N), M, N);
    free(A);
    free(B);
    free(data);
    free(c1);
    free(c2);
  }
}

/* B read in place with packed A (OX_GEMM_B_INPLACE: a 1 x 1 convolution):
 * the SIMD128 level's column blocks, each finished with the bias and the
 * epilogue, against what the portable path does (the product of packed A
 * through OX_GEMM_B_PLAIN, then the bias added row by row, then the
 * epilogue over all of C), over row ranges, several depth and column
 * blocks, odd sizes and a B row stride past N */
static void test_sb_rows(const ox_gemm_table *w) {
  static const int64_t shapes[][5] = {/* M, K, N, m0, m1 */
                                      {5, 3, 7, 0, 5},        {13, 70, 33, 0, 13},
                                      {24, 400, 530, 12, 24}, {24, 400, 530, 0, 24},
                                      {12, 1, 9, 0, 12},      {37, 385, 1201, 0, 37}};
  uint32_t s = 9;
  for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
    for (int v = 0; v < 4; v++) {
      int64_t M = shapes[t][0], K = shapes[t][1], N = shapes[t][2], m0 = shapes[t][3],
              m1 = shapes[t][4], ldb = N + 3, ldc = N + 1;
      bool with_bias = v & 1, with_epi = v & 2;
      float *A = malloc(sizeof(float) * (size_t)(M * K)),
            *B = malloc(sizeof(float) * (size_t)(K * ldb));
      float *C0 = malloc(sizeof(float) * (size_t)(M * ldc)),
            *C1 = malloc(sizeof(float) * (size_t)(M * ldc));
      float *R = malloc(sizeof(float) * (size_t)(M * ldc)),
            *bias = malloc(sizeof(float) * (size_t)M);
      fill(A, M * K, &s);
      fill(B, K * ldb, &s);
      fill(R, M * ldc, &s);
      fill(bias, M, &s);
      fill(C1, M * ldc, &s); /* overwritten: the product has no beta */
      ox_err e = {0};
      ox_sgemm_packed *pa = ox_sgemm_pack_a(false, M, K, A, K, &e);
      if (!pa) {
        printf("FAIL sb_rows: out of memory\n");
        failures++;
        return;
      }
      ox_sgemm_epi ep = {.act = OX_ACT_RELU, .res = R, .ldr = ldc};
      ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_PLAIN,
                              .pa = pa,
                              .N = N,
                              .B = B,
                              .ldb = ldb,
                              .alpha = 1.0f,
                              .C = C0,
                              .ldc = ldc});
      for (int64_t i = 0; with_bias && i < M; i++)
        for (int64_t j = 0; j < N; j++) C0[i * ldc + j] += bias[i];
      if (with_epi) ox_sgemm_epi_apply(&ep, M, N, C0, ldc);
      /* the level's entry, then the same through ox_gemm's dispatch */
      for (int path = 0; path < 2; path++) {
        if (path == 0)
          w->sb_rows(pa, m0, m1, N, B, ldb, with_bias ? bias : NULL, with_epi ? &ep : NULL, NULL,
                     C1, ldc);
        else if (!ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_INPLACE,
                                          .pa = pa,
                                          .rows = true,
                                          .m0 = m0,
                                          .m1 = m1,
                                          .N = N,
                                          .B = B,
                                          .ldb = ldb,
                                          .bias = with_bias ? bias : NULL,
                                          .ep = with_epi ? &ep : NULL,
                                          .C = C1,
                                          .ldc = ldc})) {
          printf("FAIL sb_rows: ox_gemm declined rows [%lld, %lld)\n", (long long)m0,
                 (long long)m1);
          failures++;
        }
        int64_t bad = 0;
        for (int64_t i = m0; i < m1; i++) bad += count_diff(C0 + i * ldc, C1 + i * ldc, N);
        check(path ? "sb_rows (ox_gemm) M x N" : "sb_rows M x N", bad, (long long)M, (long long)N);
      }
      ox_sgemm_packed_free(pa);
      free(A);
      free(B);
      free(C0);
      free(C1);
      free(R);
      free(bias);
    }
}

int main(void) {
  const ox_cpu *c = ox_cpu_get();
  const ox_gemm_table *t = ox_gemm_dispatch();
  ox_gemm_table ref = *t, w = *t;
  ox_gemm_fill_ref(&ref);
  bool have = ox_gemm_fill_wasm(&w);
  /* the table holds the SIMD128 entries exactly when the probe says so */
  if (c->isa == OX_ISA_PORTABLE &&
      (c->simd128 ? strcmp(t->uk.name, "wasm") != 0 : strcmp(t->uk.name, "portable") != 0)) {
    printf("FAIL table: kernel %s with simd128 %d\n", t->uk.name, (int)c->simd128);
    failures++;
  }
  if (!have) {
    printf("gemm wasm: SIMD128 not compiled in (table: %s), %d failures\n", t->uk.name, failures);
    return failures != 0;
  }
  test_ukernel(&ref, &w);
  test_gemv_dot(&ref, &w);
  test_pgemv(&ref, &w);
  if (t->sb_rows == w.sb_rows) test_sb_rows(&w); /* packed A is the table's: wasm's */
  printf("gemm wasm (table: %s): %d failures\n", t->uk.name, failures);
  return failures != 0;
}
