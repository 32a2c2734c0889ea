/* wasm_simd_peak.c - the engine's ceiling for the float GEMM in
 * WebAssembly SIMD128: how many GFLOP/s one thread gets from f32x4
 * multiplies and adds (SIMD128 has no fused multiply-add, so every step of a
 * sum is a mul and an add: 8 flops per pair of instructions).
 *
 *   emcc -O3 -msimd128 -sENVIRONMENT=node tools/wasm_simd_peak.c -o /tmp/peak.js
 *   node --no-experimental-fetch /tmp/peak.js [reps]
 * (emscripten 3.1.6's loader would fetch() the .wasm by path in node 20)
 *
 * Two measures, the minimum over reps runs of CPU time (a shared machine):
 *   chains N   N independent chains acc = acc + acc * k, no memory at all:
 *              the engine's mul + add throughput once there are enough chains
 *              to cover the latency (the peak);
 *   tile MxN   a register-blocked GEMM micro-kernel (M broadcast rows of A
 *              times N columns of B as N/4 vectors, M*N/4 accumulators) over
 *              packed panels that stay in L1: the peak less what the loads,
 *              splats and the register allocation cost. V8 maps wasm values
 *              to x86's 16 XMM registers and keeps one as scratch, so a tile
 *              whose accumulators + operands + the product's temporary pass
 *              15 spills to the stack.
 * It needs no part of onnxc; it also builds natively (the same C under SSE
 * via clang's wasm_simd128.h is not available there, so natively it prints
 * nothing useful and is not meant to). */
#include <stdio.h>
#include <stdlib.h>

#ifdef __wasm_simd128__
#include <emscripten.h>
#include <wasm_simd128.h>

/* the node process's CPU time (other jobs' time slices do not count) */
EM_JS(double, now_s, (void), {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e-6;
});

/* keeps results alive without the optimiser proving them unused */
static volatile float g_sink;
static volatile float g_k = 1.0f;

static float hsum(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) +
         wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

/* N chains of mul then add; the values run to infinity (or stay there),
 * which x86 handles at full speed, unlike subnormals */
#define STEP(x) x = wasm_f32x4_add(x, wasm_f32x4_mul(x, k))
#define CHAINS(NAME, N, BODY, SUM)                                         \
  __attribute__((noinline)) static void NAME(long iters) {               \
    v128_t k = wasm_f32x4_splat(g_k);                                      \
    v128_t x0 = wasm_f32x4_splat(g_k * 0.5f), x1 = x0, x2 = x0, x3 = x0,   \
           x4 = x0, x5 = x0, x6 = x0, x7 = x0, x8 = x0, x9 = x0, x10 = x0, \
           x11 = x0, x12 = x0, x13 = x0;                                   \
    for (long i = 0; i < iters; i++) {                                     \
      BODY                                                                 \
    }                                                                      \
    g_sink = hsum(SUM);                                                    \
  }
CHAINS(chains4, 4, STEP(x0); STEP(x1); STEP(x2); STEP(x3);, x0 + x1 + x2 + x3)
CHAINS(chains8, 8, STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6);
       STEP(x7);, x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7)
CHAINS(chains12, 12, STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6);
       STEP(x7); STEP(x8); STEP(x9); STEP(x10); STEP(x11);,
       x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11)
CHAINS(chains14, 14, STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6);
       STEP(x7); STEP(x8); STEP(x9); STEP(x10); STEP(x11); STEP(x12); STEP(x13);,
       x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11 + x12 + x13)

/* ---- micro-kernel tiles over L1-resident packed panels ---- */
enum { KC = 256 };
static float g_a[KC * 8], g_b[KC * 16];

#define MAC(c, a, b) c = wasm_f32x4_add(c, wasm_f32x4_mul(a, b))

/* MR rows x 8 columns: 2*MR accumulators, 2 B vectors, the broadcast A */
#define TILE_X8(NAME, MR)                                                       \
  static void NAME(const float *a, const float *b, float *c) {                 \
    v128_t acc[MR][2];                                                          \
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = wasm_f32x4_splat(0); \
    for (int k = 0; k < KC; k++) {                                              \
      v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);                \
      _Pragma("clang loop unroll(full)") for (int i = 0; i < MR; i++) {         \
        v128_t av = wasm_v128_load32_splat(a + i);                              \
        MAC(acc[i][0], av, b0);                                                 \
        MAC(acc[i][1], av, b1);                                                 \
      }                                                                         \
      a += MR;                                                                  \
      b += 8;                                                                   \
    }                                                                           \
    for (int i = 0; i < MR; i++) {                                              \
      wasm_v128_store(c + 8 * i, acc[i][0]);                                    \
      wasm_v128_store(c + 8 * i + 4, acc[i][1]);                                \
    }                                                                           \
  }
TILE_X8(tile4x8, 4)
TILE_X8(tile5x8, 5)
TILE_X8(tile6x8, 6)

/* MR rows x 12 columns: 3*MR accumulators, 3 B vectors */
#define TILE_X12(NAME, MR)                                                      \
  static void NAME(const float *a, const float *b, float *c) {                 \
    v128_t acc[MR][3];                                                          \
    for (int i = 0; i < MR; i++)                                                \
      acc[i][0] = acc[i][1] = acc[i][2] = wasm_f32x4_splat(0);                  \
    for (int k = 0; k < KC; k++) {                                              \
      v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4),                \
             b2 = wasm_v128_load(b + 8);                                        \
      _Pragma("clang loop unroll(full)") for (int i = 0; i < MR; i++) {         \
        v128_t av = wasm_v128_load32_splat(a + i);                              \
        MAC(acc[i][0], av, b0);                                                 \
        MAC(acc[i][1], av, b1);                                                 \
        MAC(acc[i][2], av, b2);                                                 \
      }                                                                         \
      a += MR;                                                                  \
      b += 12;                                                                  \
    }                                                                           \
    for (int i = 0; i < MR; i++)                                                \
      for (int h = 0; h < 3; h++) wasm_v128_store(c + 12 * i + 4 * h, acc[i][h]); \
  }
TILE_X12(tile3x12, 3)
TILE_X12(tile4x12, 4)

/* MR rows x 16 columns (4 B vectors) */
#define TILE_X16(NAME, MR)                                                      \
  static void NAME(const float *a, const float *b, float *c) {                 \
    v128_t acc[MR][4];                                                          \
    for (int i = 0; i < MR; i++)                                                \
      acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = wasm_f32x4_splat(0);      \
    for (int k = 0; k < KC; k++) {                                              \
      v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4),                \
             b2 = wasm_v128_load(b + 8), b3 = wasm_v128_load(b + 12);           \
      _Pragma("clang loop unroll(full)") for (int i = 0; i < MR; i++) {         \
        v128_t av = wasm_v128_load32_splat(a + i);                              \
        MAC(acc[i][0], av, b0);                                                 \
        MAC(acc[i][1], av, b1);                                                 \
        MAC(acc[i][2], av, b2);                                                 \
        MAC(acc[i][3], av, b3);                                                 \
      }                                                                         \
      a += MR;                                                                  \
      b += 16;                                                                  \
    }                                                                           \
    for (int i = 0; i < MR; i++)                                                \
      for (int h = 0; h < 4; h++) wasm_v128_store(c + 16 * i + 4 * h, acc[i][h]); \
  }
TILE_X16(tile2x16, 2)
TILE_X16(tile3x16, 3)

typedef void (*tile_fn)(const float *, const float *, float *);

__attribute__((noinline)) static double time_tile(tile_fn f, int mr, int nr, long calls) {
  float c[8 * 16];
  double t0 = now_s();
  for (long i = 0; i < calls; i++) {
    f(g_a, g_b, c);
    g_a[i & 7] = c[0] * 0.0f + 0.5f; /* a dependence the optimiser cannot drop */
  }
  double t = now_s() - t0;
  return 2.0 * mr * nr * KC * (double)calls / t * 1e-9;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  for (int i = 0; i < KC * 8; i++) g_a[i] = 0.5f + (float)(i % 7) * 0.01f;
  for (int i = 0; i < KC * 16; i++) g_b[i] = 0.25f + (float)(i % 5) * 0.01f;
  static const struct {
    const char *name;
    void (*fn)(long);
    int n;
  } chains[] = {{"chains 4", chains4, 4}, {"chains 8", chains8, 8}, {"chains 12", chains12, 12},
                {"chains 14", chains14, 14}};
  /* many short calls: V8 first runs a function as baseline (Liftoff) code
   * and moves to the optimised tier only for the calls after it is hot
   * (there is no on-stack replacement for wasm), so a first long call would
   * measure the baseline compiler */
  const long iters = 100000, calls = 500;
  for (size_t c = 0; c < sizeof chains / sizeof chains[0]; c++) {
    double best = 0;
    for (int r = 0; r < reps + 1; r++) {
      double t0 = now_s();
      /* through a volatile pointer: binaryen would inline the function
       * into main, which runs once, so as baseline code */
      void (*volatile fn)(long) = chains[c].fn;
      for (long i = 0; i < calls; i++) fn(iters);
      double g = 8.0 * chains[c].n * (double)iters * calls / (now_s() - t0) * 1e-9;
      if (r > 0 && g > best) best = g;
    }
    printf("%-10s %6.1f GFLOP/s\n", chains[c].name, best);
  }
  static const struct {
    const char *name;
    tile_fn fn;
    int mr, nr;
  } tiles[] = {{"tile 4x8", tile4x8, 4, 8},    {"tile 5x8", tile5x8, 5, 8},
               {"tile 6x8", tile6x8, 6, 8},    {"tile 3x12", tile3x12, 3, 12},
               {"tile 4x12", tile4x12, 4, 12}, {"tile 2x16", tile2x16, 2, 16},
               {"tile 3x16", tile3x16, 3, 16}};
  for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
    double best = 0;
    long calls = (long)(4e9 / (2.0 * tiles[t].mr * tiles[t].nr * KC));
    for (int r = 0; r < reps + 1; r++) { /* the first: the tier-up */
      double g = time_tile(tiles[t].fn, tiles[t].mr, tiles[t].nr, calls);
      if (r > 0 && g > best) best = g;
    }
    printf("%-10s %6.1f GFLOP/s\n", tiles[t].name, best);
  }
  return 0;
}
#else
int main(void) {
  fprintf(stderr, "wasm_simd_peak: build it with emcc -msimd128 (it measures WebAssembly)\n");
  return 1;
}
#endif
