/* test_kernel_dispatch.c - every kernel family's dispatch table honours the
 * level the CPU probe allows (ONNXC_ISA caps it; the test runs once per
 * level): the float GEMM's micro-kernel and its AVX-512-only entries, the
 * fp16/bf16 paths, the int8 GEMM and convolution paths, the int8 depthwise
 * kernel, the low-bit decode paths, Winograd and the implicit-GEMM strips.
 * At the level found, the best of each is taken. A product at the level in
 * use still matches a double-precision reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/cpu.h"
#include "../../src/kernels/gemm.h"
#include "../../src/kernels/gemm_h.h"
#include "../../src/kernels/qconv.h"
#include "../../src/kernels/qconv_dw.h"
#include "../../src/kernels/qgemm.h"
#include "../../src/kernels/winograd.h"
#include "../../src/kernels/wqgemm.h"

static int failures;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      printf("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                    \
    }                                                                \
  } while (0)

/* a 3 x 3, stride 1, pad 1 geometry over an H x W image */
static ox_nn_geom geom3x3(int64_t H, int64_t W) {
  ox_nn_attrs a;
  memset(&a, 0, sizeof a);
  a.n_pads = 4;
  for (int i = 0; i < 4; i++) a.pads[i] = 1;
  int64_t in[2] = {H, W}, k[2] = {3, 3};
  ox_nn_geom g;
  ox_nn_geom_make(&a, 2, in, k, false, &g, NULL);
  return g;
}

int main(void) {
  const ox_cpu *c = ox_cpu_get();
  ox_isa lv = c->isa;
  const char *cap = getenv("ONNXC_ISA");
  printf("found %s, in use %s (ONNXC_ISA=%s)\n", ox_isa_name(c->found), ox_isa_name(lv),
         cap ? cap : "");
  if (cap && strcmp(cap, "portable") == 0) CHECK(lv == OX_ISA_PORTABLE);
  if (cap && strcmp(cap, "avx2") == 0) CHECK(lv <= OX_ISA_AVX2);

  /* float GEMM: the micro-kernel of the level; the 12-row tiles only with AVX-512 */
  /* a SIMD128 WebAssembly build replaces the portable level's table with gemm_wasm.c's
   * 6 x 8 tile (a property of the build: ox_cpu.simd128) */
  const char *want = lv == OX_ISA_AVX512 ? "avx512"
                     : lv == OX_ISA_AVX2 ? "avx2"
                     : c->simd128        ? "wasm"
                                         : "portable";
  CHECK(strcmp(ox_sgemm_isa(), want) == 0);
  CHECK(ox_sgemm_has_ua() == (lv == OX_ISA_AVX512));
  CHECK(ox_sgemm_nr() == (lv == OX_ISA_AVX512 ? 32 : c->simd128 ? 8 : 16));
  ox_nn_geom g = geom3x3(20, 20);
  CHECK((ox_nn_shift_strip_fn(&g) != NULL) == (lv == OX_ISA_AVX512));
  CHECK(!ox_wino_fits(&g, 32, 32) || lv == OX_ISA_AVX512);
  if (lv == OX_ISA_AVX512 && c->avx512vl) CHECK(ox_wino_fits(&g, 32, 32));

  /* fp16 / bf16 paths */
  CHECK(ox_hgemm_path_ok(OX_HG_PORTABLE));
  CHECK(ox_hgemm_path_ok(OX_HG_AVX512) == (lv == OX_ISA_AVX512));
  CHECK(!ox_hgemm_path_ok(OX_HG_AVX2) || lv >= OX_ISA_AVX2);
  CHECK(!ox_hgemm_path_ok(OX_HG_AVX512BF16) || lv == OX_ISA_AVX512);

  /* int8 products: nothing above the level */
  if (lv < OX_ISA_AVX512) {
    CHECK(strcmp(ox_qgemm_path(), "avx512vnni") != 0);
    CHECK(strcmp(ox_qconv_path(), "avx512vnni") != 0);
  } else if (c->avx512vnni && c->avx512bw) {
    CHECK(strcmp(ox_qgemm_path(), "avx512vnni") == 0);
  }
  if (lv == OX_ISA_PORTABLE) CHECK(strcmp(ox_qgemm_path(), "portable") == 0);

  /* int8 depthwise: AVX-512 only (the caller then takes the GEMM path) */
  {
    enum { C = 2 };
    static uint8_t x[C * 400], y[C * 400];
    static int8_t w[C * 9];
    float mult[C] = {0.01f, 0.02f};
    ox_qconv_req q = {mult, NULL, 0, 0, 255};
    ox_err e = {0};
    int rc = ox_qconv_dw_run(&g, x, C, 0, w, true, NULL, 0, &q, y, NULL, &e);
    if (lv < OX_ISA_AVX512) CHECK(rc == OX_EUNSUPPORTED);
    if (lv == OX_ISA_AVX512 && c->avx512bw && c->avx512vl) CHECK(rc == OX_OK);
  }

  /* low-bit decode: a named path above the level is not available */
  {
    enum { K = 64, N = 64 };
    static uint8_t qw[K * N];
    static float A[K], Cw[N], scale[1] = {0.5f};
    for (int i = 0; i < K * N; i++) qw[i] = (uint8_t)(i * 7 % 16);
    for (int i = 0; i < K; i++) A[i] = (float)(i % 5) - 2.0f;
    ox_wq_matrix W;
    ox_err e = {0};
    CHECK(ox_wq_pack(4, false, K, N, qw, scale, 1, NULL, K, &W, &e) == OX_OK);
    int r512 = ox_wq_gemm_on("avx512", "blocksum", A, 1, K, &W, Cw, N, NULL, &e);
    int r2 = ox_wq_gemm_on("avx2", "blocksum", A, 1, K, &W, Cw, N, NULL, &e);
    CHECK((r512 == OX_OK) == (lv == OX_ISA_AVX512));
    if (lv == OX_ISA_PORTABLE) CHECK(r2 == OX_EUNSUPPORTED);
    CHECK(ox_wq_gemm_on("portable", "blocksum", A, 1, K, &W, Cw, N, NULL, &e) == OX_OK);
    ox_wq_free(&W);
  }

  /* a product at the level in use (odd shape: edge tiles, two depth blocks) */
  {
    enum { M = 37, N = 29, K = 451 };
    static float A[M * K], B[K * N], Cg[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < K * N; i++) B[i] = (float)((i * 11) % 13) / 6.0f - 1.0f;
    ox_gemm(&(ox_gemm_desc){.M = M, .N = N, .K = K, .A = A, .lda = K, .B = B, .ldb = N,
                            .alpha = 1.0f, .C = Cg, .ldc = N});
    double worst = 0.0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double s = 0.0;
        for (int k = 0; k < K; k++) s += (double)A[i * K + k] * (double)B[k * N + j];
        double d = fabs(s - (double)Cg[i * N + j]);
        worst = d > worst ? d : worst;
      }
    CHECK(worst < 1e-3);
  }

  printf("kernel dispatch at %s: %d failures\n", ox_isa_name(lv), failures);
  return failures ? 1 : 0;
}
