/* wasm_kernel_bench.c - GFLOP/s of the float GEMM and the rate of a few
 * vector-math entries at the level in use, one thread, the minimum over
 * repeated runs (of CPU time under node). Built with emscripten (with and without -msimd128) and run
 * under node to compare the plain C level, the compiler's autovectorised
 * C and the SIMD128 kernels (ONNXC_ISA=portable in the module's ENV turns
 * the SIMD128 entries off); it builds natively as well.
 *
 *   wasm_kernel_bench [reps]   (default 5) */
#include <stdio.h>
#include <stdlib.h>
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
  ox_gemm_desc d = {.b = OX_GEMM_B_PLAIN, .M = M, .N = N, .K = K, .A = A, .lda = K, .B = B,
                    .ldb = N, .alpha = 1.0f, .beta = 0.0f, .C = C, .ldc = N};
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
        case V_EXP: k->exp(x, 0.0f, y, N); break;
        case V_TANH: k->tanh(x, y, N); break;
        case V_ERF: k->erf(x, y, N); break;
        case V_SIGMOID: k->sigmoid(x, y, N, 1.0f, true); break;
        case V_GELU: k->gelu_erf(x, y, N, &g); break;
        case V_SOFTMAX: k->softmax_row(x, y, N, false); break;
        case V_ADD: k->add(x, z, y, N); break;
        case V_RELU: k->bias_relu(y, N, z, false, true); break;
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
