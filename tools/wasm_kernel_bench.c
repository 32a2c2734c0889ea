/* wasm_kernel_bench.c - GFLOP/s of the float GEMM and the rate of a few
 * vector-math entries at the level in use, one thread, the minimum over
 * repeated runs (of CPU time under node). Built with emscripten (with and without -msimd128) and
 * run under node to compare the plain C level, the compiler's autovectorised C and the SIMD128
 * kernels (ONNXC_ISA=portable in the module's ENV turns the SIMD128 entries off); it builds
 * natively as well.
 *
 *   wasm_kernel_bench [reps]          (default 5)
 *   wasm_kernel_bench shapes [reps]   the bench models' GEMMs as the
 *       operators call them: MiniLM's MatMuls by a weight packed once
 *       (OX_GEMM_B_WHOLE), its attention's plain products, ResNet-50's and
 *       SqueezeNet's 1 x 1 convolutions (W packed once, the input planes
 *       read in place, OX_GEMM_B_INPLACE)
 *
 * Built against the wasm library:
 *   emcc -O3 -msimd128 -Isrc -Iinclude tools/wasm_kernel_bench.c
 *     build-wasm/libonnxc.a -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1 -o /tmp/kb.js
 *   node --no-experimental-fetch /tmp/kb.js shapes 7 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cpu.h"
#include "kernels/gemm.h"
#include "kernels/vmath.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
/* the node process's CPU time: on a machine shared with other jobs the
 * wall clock counts their time slices too */
EM_JS(double, now_s, (void), {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e-6;
});
#else
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

static float *rnd(int64_t n, unsigned *seed) {
  float *p = malloc((size_t)n * sizeof *p);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    p[i] = (float)((*seed >> 9) & 0xffff) / 32768.0f - 1.0f;
  }
  return p;
}

static void bench_gemm(int64_t M, int64_t N, int64_t K, int reps) {
  unsigned seed = 7;
  float *A = rnd(M * K, &seed), *B = rnd(K * N, &seed), *C = rnd(M * N, &seed);
  ox_gemm_desc d = {.b = OX_GEMM_B_PLAIN,
                    .M = M,
                    .N = N,
                    .K = K,
                    .A = A,
                    .lda = K,
                    .B = B,
                    .ldb = N,
                    .alpha = 1.0f,
                    .beta = 0.0f,
                    .C = C,
                    .ldc = N};
  double flops = 2.0 * (double)M * (double)N * (double)K, best = 1e30;
  /* enough calls per run for ~20 ms of work at 10 GFLOP/s */
  int inner = (int)(2e8 / flops) + 1;
  ox_gemm(&d); /* warm-up */
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (int i = 0; i < inner; i++) ox_gemm(&d);
    double t = (now_s() - t0) / inner;
    if (t < best) best = t;
  }
  printf("gemm %5lldx%5lldx%5lld  %8.3f ms  %6.2f GFLOP/s\n", (long long)M, (long long)N,
         (long long)K, best * 1e3, flops / best * 1e-9);
  free(A);
  free(B);
  free(C);
}

/* the calls per run and the best time over reps runs of f(ctx) */
static double best_time(void (*f)(void *), void *ctx, double flops, int reps) {
  int inner = (int)(2e8 / flops) + 1; /* ~20 ms of work at 10 GFLOP/s */
  double best = 1e30;
  f(ctx); /* warm-up */
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (int i = 0; i < inner; i++) f(ctx);
    double t = (now_s() - t0) / inner;
    if (t < best) best = t;
  }
  return best;
}

static void run_desc(void *d) { ox_gemm(d); }

/* M x K times a K x N weight packed once (a MatMul by an initializer) */
static void bench_whole(const char *name, int64_t M, int64_t K, int64_t N, int reps) {
  unsigned seed = 3;
  float *A = rnd(M * K, &seed), *B = rnd(K * N, &seed), *C = rnd(M * N, &seed);
  ox_err e = {0};
  ox_sgemm_bpack *bp = ox_sgemm_pack_b(false, K, N, B, N, &e);
  if (!bp) exit(1);
  ox_gemm_desc d = {.b = OX_GEMM_B_WHOLE, .M = M, .A = A, .lda = K, .bp = bp, .C = C, .ldc = N};
  double flops = 2.0 * (double)M * (double)N * (double)K, t = best_time(run_desc, &d, flops, reps);
  printf("%-16s whole   %5lld x %5lld x %5lld  %8.3f ms  %6.2f GFLOP/s\n", name, (long long)M,
         (long long)K, (long long)N, t * 1e3, flops / t * 1e-9);
  ox_sgemm_bpack_free(bp);
  free(A);
  free(B);
  free(C);
}

/* plain A times plain (or transposed) B, B packed per call */
static void bench_plain(const char *name, int64_t M, int64_t K, int64_t N, bool tb, int reps) {
  unsigned seed = 5;
  float *A = rnd(M * K, &seed), *B = rnd(K * N, &seed), *C = rnd(M * N, &seed);
  ox_gemm_desc d = {.b = OX_GEMM_B_PLAIN,
                    .M = M,
                    .N = N,
                    .K = K,
                    .A = A,
                    .lda = K,
                    .B = B,
                    .ldb = tb ? K : N,
                    .trans_b = tb,
                    .alpha = 1.0f,
                    .C = C,
                    .ldc = N};
  double flops = 2.0 * (double)M * (double)N * (double)K, t = best_time(run_desc, &d, flops, reps);
  printf("%-16s plain%s %5lld x %5lld x %5lld  %8.3f ms  %6.2f GFLOP/s\n", name, tb ? "T" : " ",
         (long long)M, (long long)K, (long long)N, t * 1e3, flops / t * 1e-9);
  free(A);
  free(B);
  free(C);
}

/* a 1 x 1 convolution: Cout x Cin weights packed once, Cin x P planes in place */
static void bench_pointwise(const char *name, int64_t Cout, int64_t Cin, int64_t P, int reps) {
  unsigned seed = 9;
  float *W = rnd(Cout * Cin, &seed), *X = rnd(Cin * P, &seed), *Y = rnd(Cout * P, &seed),
        *bias = rnd(Cout, &seed);
  ox_err e = {0};
  ox_sgemm_packed *pa = ox_sgemm_pack_a(false, Cout, Cin, W, Cin, &e);
  if (!pa) exit(1);
  ox_gemm_desc d = {.b = OX_GEMM_B_INPLACE,
                    .pa = pa,
                    .rows = true,
                    .m0 = 0,
                    .m1 = Cout,
                    .N = P,
                    .B = X,
                    .ldb = P,
                    .bias = bias,
                    .C = Y,
                    .ldc = P};
  double flops = 2.0 * (double)Cout * (double)Cin * (double)P,
         t = best_time(run_desc, &d, flops, reps);
  printf("%-16s 1x1     %5lld x %5lld x %5lld  %8.3f ms  %6.2f GFLOP/s\n", name, (long long)Cout,
         (long long)Cin, (long long)P, t * 1e3, flops / t * 1e-9);
  ox_sgemm_packed_free(pa);
  free(W);
  free(X);
  free(Y);
  free(bias);
}

static void bench_shapes(int reps) {
  /* MiniLM-L6 at 128 tokens */
  bench_whole("minilm_qkv", 128, 384, 384, reps);
  bench_whole("minilm_mlp_up", 128, 384, 1536, reps);
  bench_whole("minilm_mlp_down", 128, 1536, 384, reps);
  bench_plain("minilm_qk", 128, 32, 128, true, reps);
  bench_plain("minilm_av", 128, 128, 32, false, reps);
  /* odd sizes: edge tiles in both directions */
  bench_whole("odd", 37, 301, 203, reps);
  /* ResNet-50's 1 x 1 convolutions at 224 x 224 */
  bench_pointwise("resnet_s1_in", 64, 256, 3136, reps);
  bench_pointwise("resnet_s1_out", 256, 64, 3136, reps);
  bench_pointwise("resnet_s2_in", 128, 512, 784, reps);
  bench_pointwise("resnet_s2_out", 512, 128, 784, reps);
  bench_pointwise("resnet_s3_in", 256, 1024, 196, reps);
  bench_pointwise("resnet_s3_out", 1024, 256, 196, reps);
  bench_pointwise("resnet_s4_in", 512, 2048, 49, reps);
  bench_pointwise("resnet_s4_out", 2048, 512, 49, reps);
  /* SqueezeNet's squeeze and expand 1 x 1 at 55 x 55 and 13 x 13 */
  bench_pointwise("squeeze_55", 16, 128, 3025, reps);
  bench_pointwise("expand_55", 64, 16, 3025, reps);
  bench_pointwise("squeeze_13", 64, 512, 169, reps);
  bench_pointwise("expand_13", 256, 64, 169, reps);
}

typedef enum { V_EXP, V_TANH, V_ERF, V_SIGMOID, V_GELU, V_SOFTMAX, V_ADD, V_RELU } vop;

static void bench_vmath(const char *name, vop op, int reps) {
  const ox_vmath_kernels *k = ox_vmath_kernels_get();
  enum { N = 1 << 16 };
  unsigned seed = 11;
  float *x = rnd(N, &seed), *y = rnd(N, &seed), *z = rnd(N, &seed);
  ox_gelu_erf g = {1.41421356f, 1.0f, 0.5f, false};
  double best = 1e30;
  for (int r = 0; r < reps + 1; r++) {
    double t0 = now_s();
    for (int i = 0; i < 20; i++) switch (op) {
        case V_EXP:
          k->exp(x, 0.0f, y, N);
          break;
        case V_TANH:
          k->tanh(x, y, N);
          break;
        case V_ERF:
          k->erf(x, y, N);
          break;
        case V_SIGMOID:
          k->sigmoid(x, y, N, 1.0f, true);
          break;
        case V_GELU:
          k->gelu_erf(x, y, N, &g);
          break;
        case V_SOFTMAX:
          k->softmax_row(x, y, N, false);
          break;
        case V_ADD:
          k->add(x, z, y, N);
          break;
        case V_RELU:
          k->bias_relu(y, N, z, false, true);
          break;
      }
    double t = (now_s() - t0) / 20;
    if (r > 0 && t < best) best = t;
  }
  printf("%-8s %8.3f ns/elem  %7.1f Melem/s\n", name, best * 1e9 / N, N / best * 1e-6);
  free(x);
  free(y);
  free(z);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "shapes")) {
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    printf("kernel: %s (simd128 %d)\n", ox_sgemm_isa(), (int)ox_cpu_get()->simd128);
    bench_shapes(reps < 1 ? 1 : reps);
    return 0;
  }
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  printf("kernel: %s (simd128 %d)\n", ox_sgemm_isa(), (int)ox_cpu_get()->simd128);
  bench_gemm(64, 64, 64, reps);
  bench_gemm(256, 256, 256, reps);
  bench_gemm(1024, 1024, 256, reps);
  bench_gemm(1, 1024, 1024, reps);
  bench_gemm(1, 4096, 1024, reps);
  bench_vmath("exp", V_EXP, reps);
  bench_vmath("tanh", V_TANH, reps);
  bench_vmath("erf", V_ERF, reps);
  bench_vmath("swish", V_SIGMOID, reps);
  bench_vmath("gelu", V_GELU, reps);
  bench_vmath("softmax", V_SOFTMAX, reps);
  bench_vmath("add", V_ADD, reps);
  bench_vmath("biasrelu", V_RELU, reps);
  return 0;
}
