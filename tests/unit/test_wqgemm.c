/* test_wqgemm.c - products with packed low-bit weights (src/kernels/
 * wqgemm.c) on every path this CPU has and in both forms (block sums, and
 * dequantized slabs through the float GEMM), against a double-precision
 * reference of sum_k A[m][k] * w[k][n] with w[k][n] = (q - z) * s computed
 * as DequantizeLinear does (the integer difference times the float scale,
 * rounded to float). Widths 8, 4 and 2, signed and unsigned, per-column
 * and blockwise scales (the last block short), zero points at the type's
 * extremes or none, odd shapes, a thread pool; a scale of infinity and an
 * infinite activation follow the reference's non-finite results. The int8
 * form (activations quantized per block) against its own definition,
 * computed here, and within its quantization error of the float product.
 * The fixed-point form (the default for one and two rows with VNNI) within
 * float rounding plus its documented rounding of the activations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/wqgemm.h"
#include "../../src/runtime/session.h"

static int failures, cases;

static uint32_t rng = 2024;
static uint32_t next_u32(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}
static float next_float(void) { return (float)((double)(next_u32() % 20001) / 10000.0 - 1.0); }

typedef struct wcase {
  int bits;
  bool sgn;
  int64_t M, K, N, kb; /* kb 0: one block per column */
  int zmode;           /* 0 none, 1 extremes, 2 random */
  bool inf_scale, inf_act;
  float act_scale; /* activations times this (0: 1) */
  bool outliers;   /* one activation in 16 a thousand times the others */
} wcase;

/* The int8 form's definition (wqgemm.h), computed here in double: row m's
 * block b quantized with scale max|a| / 127 and values rounded to nearest
 * even, the integer sum, then s * scale_a * (dot - z * qsum). */
static double int8_reference(const float *A, int64_t K, int64_t N, int64_t kb, int64_t m, int64_t n,
                             const uint8_t *q, bool sgn, const float *s, const uint8_t *zp,
                             double *bound) {
  double y = 0;
  *bound = 0; /* sum over blocks of (max|a| / 254) * sum |w|: the quantization's worst */
  for (int64_t k0 = 0; k0 < K; k0 += kb) {
    int64_t k1 = k0 + kb < K ? k0 + kb : K, b = (k0 / kb) * N + n;
    float amax = 0;
    for (int64_t k = k0; k < k1; k++) amax = fmaxf(amax, fabsf(A[m * K + k]));
    float inv = amax > 0 ? 127.0f / amax : 0.0f;
    int64_t dot = 0, qsum = 0;
    int zv = !zp ? 0 : sgn ? (int8_t)zp[b] : zp[b];
    for (int64_t k = k0; k < k1; k++) {
      float v = nearbyintf(A[m * K + k] * inv);
      int aq = v > 127 ? 127 : v < -127 ? -127 : (int)v;
      int qv = sgn ? (int8_t)q[k * N + n] : q[k * N + n];
      dot += (int64_t)aq * qv;
      qsum += aq;
      *bound += (double)amax / 254.0 * fabs((double)(qv - zv) * (double)s[b]);
    }
    y += (double)s[b] * (double)(amax / 127.0f) * ((double)dot - (double)zv * (double)qsum);
  }
  return y;
}

static void check_case(const char *path, const char *form, const wcase *c, ox_thread_pool *pool) {
  int64_t M = c->M, K = c->K, N = c->N;
  int64_t kb = c->kb ? c->kb : K, n_blk = (K + kb - 1) / kb;
  int lo = c->sgn ? -(1 << (c->bits - 1)) : 0,
      hi = c->sgn ? (1 << (c->bits - 1)) - 1 : (1 << c->bits) - 1;
  uint8_t *q = malloc((size_t)(K * N)), *zp = malloc((size_t)(n_blk * N));
  float *s = malloc((size_t)(n_blk * N) * sizeof(float)),
        *A = malloc((size_t)(M * K) * sizeof(float));
  float *C = malloc((size_t)(M * N) * sizeof(float));
  for (int64_t i = 0; i < K * N; i++) {
    int v = lo + (int)(next_u32() % (uint32_t)(hi - lo + 1));
    q[i] = (uint8_t)(int8_t)v;
  }
  for (int64_t i = 0; i < n_blk * N; i++) {
    int v = c->zmode == 1 ? (i % 2 ? hi : lo) : lo + (int)(next_u32() % (uint32_t)(hi - lo + 1));
    zp[i] = (uint8_t)(int8_t)v;
    s[i] = 0.001f + 0.02f * (float)(next_u32() % 1000) / 1000.0f;
  }
  if (c->inf_scale) s[n_blk * N / 2] = INFINITY;
  float as = c->act_scale ? c->act_scale : 1.0f;
  for (int64_t i = 0; i < M * K; i++)
    A[i] = next_float() * as * (c->outliers && i % 16 == 5 ? 1000.0f : 1.0f);
  if (c->inf_act) A[M * K / 2] = -INFINITY;
  ox_wq_matrix W;
  ox_err e = {0};
  const void *z = c->zmode ? zp : NULL;
  cases++;
  if (ox_wq_pack(c->bits, c->sgn, K, N, q, s, n_blk * N, z, kb, &W, &e) ||
      ox_wq_gemm_on(path, form, A, M, K, &W, C, N, pool, &e)) {
    printf("%s/%s: %s\n", path, form ? form : "auto", e.msg);
    failures++;
  } else {
    double *bmax = calloc((size_t)n_blk, sizeof(double)); /* row m's largest |a| per block */
    for (int64_t m = 0; m < M && bmax; m++) {
      for (int64_t k = 0; k < K; k++)
        bmax[k / kb] = fmax(k % kb ? bmax[k / kb] : 0, fabs((double)A[m * K + k]));
      for (int64_t n = 0; n < N; n++) {
        double want = 0, mag = 0, fxbound = 0;
        for (int64_t k = 0; k < K; k++) {
          int64_t b = (k / kb) * N + n;
          int qv = c->sgn ? (int8_t)q[k * N + n] : q[k * N + n];
          int zv = !z ? 0 : c->sgn ? (int8_t)zp[b] : zp[b];
          float w = (float)(qv - zv) * s[b];
          want += (double)A[m * K + k] * (double)w;
          mag += fabs((double)A[m * K + k] * (double)w);
          /* the fixed-point form rounds each activation to 2^-22 of its
           * block's largest one at worst (half of 2^-21) */
          fxbound += ldexp(bmax[k / kb], -22) * fabs((double)w);
        }
        float got = C[m * N + n];
        bool fixed = form && strcmp(form, "fixed") == 0;
        bool ok = isnan(want) ? isnan(got)
                  : isinf(want)
                      ? got == want
                      : fabs(got - want) <= 1e-5 * mag + 1e-6 * as + (fixed ? fxbound : 0);
        if (form && strcmp(form, "int8") == 0 && !c->inf_act && !c->inf_scale) {
          /* its own definition within float rounding, and the float
           * product within the activations' quantization (1/254 of each
           * block's largest activation on every term) */
          double bound;
          double i8 = int8_reference(A, K, N, kb, m, n, q, c->sgn, s, z, &bound);
          ok = fabs(got - i8) <= 1e-5 * mag + 1e-6 && fabs(got - want) <= bound + 1e-5 * mag + 1e-6;
        }
        if (!ok) {
          printf(
              "%s/%s bits %d %s M=%lld K=%lld N=%lld kb=%lld z%d%s%s: C[%lld][%lld] = %.9g, want "
              "%.9g\n",
              path, form ? form : "auto", c->bits, c->sgn ? "signed" : "unsigned", (long long)M,
              (long long)K, (long long)N, (long long)kb, c->zmode, c->inf_scale ? " inf-scale" : "",
              c->inf_act ? " inf-act" : "", (long long)m, (long long)n, got, want);
          failures++;
          m = M;
          break;
        }
      }
    }
    free(bmax);
  }
  ox_wq_free(&W);
  free(q);
  free(zp);
  free(s);
  free(A);
  free(C);
}

/* whether this CPU has `path` for `form` (a one-element product says) */
static bool path_here(const char *path, const char *form) {
  uint8_t q = 0;
  float one = 1, a = 1, c = 0;
  ox_wq_matrix probe;
  ox_err pe = {0};
  bool here = !(ox_wq_pack(8, false, 1, 1, &q, &one, 1, NULL, 1, &probe, &pe) == OX_OK &&
                ox_wq_gemm_on(path, form, &a, 1, 1, &probe, &c, 1, NULL, &pe) == OX_EUNSUPPORTED);
  ox_wq_free(&probe);
  if (!here) printf("skip path %s (form %s): not on this CPU\n", path, form ? form : "auto");
  return here;
}

/* every shape, width, signedness and zero-point mode in `form` on `path` */
static void sweep(const char *path, const char *form, const int64_t (*shapes)[4], size_t n_shapes,
                  ox_thread_pool *pool) {
  for (size_t s = 0; s < n_shapes; s++)
    for (int bits = 2; bits <= 8; bits *= 2)
      for (int t = 0; t < 6; t++) {
        wcase wc = {bits, t & 1, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], t / 2};
        /* blocks must not split a 32-bit unit of 32 / bits rows */
        if (wc.kb && wc.kb < wc.K && wc.kb % (32 / bits)) continue;
        check_case(path, form, &wc, s % 2 ? pool : NULL);
      }
}

int main(void) {
  const char *paths[] = {"avx512", "avx2", "portable"};
  const char *forms[] = {"blocksum", NULL};
  /* M, K, N, kb */
  const int64_t shapes[][4] = {{1, 1, 1, 0},       {1, 64, 64, 32},    {2, 768, 130, 32},
                               {1, 300, 77, 16},   {3, 33, 200, 0},    {7, 96, 65, 64},
                               {1, 4096, 17, 128}, {20, 130, 190, 32}, {1, 8, 1000, 4}};
  ox_err e = {0};
  ox_thread_pool *pool = ox_thread_pool_new(2, &e);
  int ran = 0;
  size_t n_shapes = sizeof shapes / sizeof *shapes;
  for (size_t p = 0; p < 3; p++) {
    /* a path this CPU lacks says so; the portable one always runs */
    if (!path_here(paths[p], NULL)) continue;
    ran++;
    for (size_t f = 0; f < 2; f++) sweep(paths[p], forms[f], shapes, n_shapes, pool);
    /* non-finite scales and activations */
    wcase inf1 = {4, true, 1, 64, 40, 32, 2, true, false};
    wcase inf2 = {4, false, 2, 64, 40, 32, 2, false, true};
    check_case(paths[p], "blocksum", &inf1, NULL);
    check_case(paths[p], "blocksum", &inf2, NULL);
  }
  /* the int8 form on its paths (one and two rows, and more) */
  const char *i8paths[] = {"avx512vnni", "portable"};
  for (size_t p = 0; p < 2; p++) {
    if (!path_here(i8paths[p], "int8")) continue;
    ran++;
    sweep(i8paths[p], "int8", shapes, n_shapes, pool);
    wcase inf2 = {4, false, 2, 64, 40, 32, 2, false, true};
    check_case(i8paths[p], "int8", &inf2, NULL);
  }
  /* the fixed-point form (activations as 22-bit integers per block, three
   * byte planes) on the same paths, within float rounding of the
   * reference; also activations near 1e-36 (a block too small for the
   * fixed point: the float form takes over), near 1e30, and a thousandfold
   * outlier in every 16 (within the fixed point's rounding of the others) */
  for (size_t p = 0; p < 2; p++) {
    if (!path_here(i8paths[p], "fixed")) continue;
    ran++;
    sweep(i8paths[p], "fixed", shapes, n_shapes, pool);
    const float scales[] = {1e-36f, 1e30f};
    for (int i = 0; i < 2; i++) {
      wcase wc = {4, true, 2, 256, 70, 32, 2, false, false, scales[i], false};
      check_case(i8paths[p], "fixed", &wc, pool);
    }
    wcase outl = {4, false, 1, 768, 130, 32, 2, false, false, 1, true};
    check_case(i8paths[p], "fixed", &outl, NULL);
    wcase outl8 = {8, true, 2, 300, 64, 0, 1, false, false, 1, true};
    check_case(i8paths[p], "fixed", &outl8, pool);
    wcase inf1 = {4, true, 1, 64, 40, 32, 2, true, false};
    wcase inf2 = {4, false, 2, 64, 40, 32, 2, false, true};
    check_case(i8paths[p], "fixed", &inf1, NULL);
    check_case(i8paths[p], "fixed", &inf2, NULL);
  }
  /* a block that splits the bytes of 4-bit weights is refused */
  {
    uint8_t q[12] = {0};
    float s[4] = {1, 1, 1, 1};
    ox_wq_matrix W;
    ox_err pe = {0};
    if (ox_wq_pack(4, false, 6, 2, q, s, 4, NULL, 3, &W, &pe) != OX_EUNSUPPORTED) {
      printf("a 3-row block of 4-bit weights was accepted\n");
      failures++;
      ox_wq_free(&W);
    }
  }
  /* one and two rows of a product several grains long, split over two and
   * three threads (each claiming its own stretch of columns, then the
   * others'): bit for bit the one-thread result, in every form */
  {
    ox_thread_pool *pool3 = ox_thread_pool_new(3, &e);
    int64_t K = 1024, N = 64 * 41 + 9;
    uint8_t *q = malloc((size_t)(K * N));
    float *s = malloc((size_t)(K / 32 * N) * sizeof *s), *A = malloc(2 * (size_t)K * sizeof *A);
    float *C1 = malloc(2 * (size_t)N * sizeof *C1), *C2 = malloc(2 * (size_t)N * sizeof *C2);
    ox_wq_matrix W;
    ox_err pe = {0};
    for (int64_t i = 0; i < K * N; i++) q[i] = (uint8_t)(next_u32() & 15);
    for (int64_t i = 0; i < K / 32 * N; i++) s[i] = 0.01f + 0.001f * (float)(next_u32() % 9);
    for (int64_t i = 0; i < 2 * K; i++) A[i] = next_float();
    if (ox_wq_pack(4, false, K, N, q, s, K / 32 * N, NULL, 32, &W, &pe)) {
      printf("packing the split case failed: %s\n", pe.msg);
      failures++;
    } else {
      const char *forms2[] = {"blocksum", "int8", "fixed", NULL};
      for (int f = 0; f < 4; f++)
        for (int64_t M = 1; M <= 2; M++)
          for (int t = 0; t < 2; t++) {
            cases++;
            int r1 = ox_wq_gemm_on(NULL, forms2[f], A, M, K, &W, C1, N, NULL, &pe);
            int r2 = ox_wq_gemm_on(NULL, forms2[f], A, M, K, &W, C2, N, t ? pool3 : pool, &pe);
            if (r1 || r2 || memcmp(C1, C2, (size_t)(M * N) * sizeof *C1)) {
              printf("form %s, %lld rows, %d threads: not the one-thread result\n",
                     forms2[f] ? forms2[f] : "default", (long long)M, t ? 3 : 2);
              failures++;
            }
          }
      ox_wq_free(&W);
    }
    free(q), free(s), free(A), free(C1), free(C2);
    ox_thread_pool_free(pool3);
  }
  ox_thread_pool_free(pool);
  printf("%d cases on %d paths, %d failures\n", cases, ran, failures);
  return failures != 0 || ran == 0;
}
