/* conv_direct.c - conv_direct.h's dispatch: the entries of the level the
 * CPU probe allows. */
#include "conv_direct.h"

#include "conv_direct_impl.h"
#include "levels.h"

extern const ox_conv_direct_kernels ox_conv_direct_kernels_ref;
#if OX_LEVELS_X86
extern const ox_conv_direct_kernels ox_conv_direct_kernels_avx2, ox_conv_direct_kernels_avx512;
#endif
#ifdef __wasm_simd128__
extern const ox_conv_direct_kernels ox_conv_direct_kernels_wasm; /* conv_direct_wasm.c */
#endif

const ox_conv_direct_kernels *ox_conv_direct_kernels_at(ox_isa isa) {
#ifdef __wasm_simd128__
  /* the SIMD128 build's entries over the portable ones (levels.h: a build,
   * not a pick; ONNXC_ISA=portable clears simd128) */
  if (ox_cpu_get()->simd128) return &ox_conv_direct_kernels_wasm;
#endif
  return OX_LEVEL_TABLE(isa, ox_conv_direct_kernels);
}

const ox_conv_direct_kernels *ox_conv_direct_kernels_get(void) {
  return ox_conv_direct_kernels_at(ox_cpu_get()->isa);
}

void ox_conv_depthwise(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Mg,
                       const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                       int64_t shuffle, float *y) {
  ox_conv_direct_kernels_get()->depthwise(pool, g, N, G, Mg, x, w, bias, epi, shuffle, y);
}

/* the stem kernel's geometry, at any depth */
static bool stem_geometry(const ox_nn_geom *g, int64_t C, int64_t G) {
  if (g->nd != 2 || G != 1 || C < 1 || C > STEM_MAXC || g->out[1] > STEM_MAXW) return false;
  for (int d = 0; d < 2; d++)
    if (g->dil[d] != 1 || g->stride[d] < 1 || g->stride[d] > 2 || g->k[d] < 1 ||
        g->k[d] > STEM_MAXK)
      return false;
  return true;
}

bool ox_conv_stem_pool_fits(const ox_nn_geom *g, int64_t C, int64_t G) {
  return stem_geometry(g, C, G) && g->out[0] >= 3 && g->out[1] >= 3 &&
         ox_conv_direct_kernels_get()->stem_pool != NULL;
}

int ox_conv_stem_pool(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                      const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                      float *y) {
  return ox_conv_direct_kernels_get()->stem_pool(pool, g, N, C, M, x, w, bias, epi, y);
}

bool ox_conv_stem_fits(const ox_nn_geom *g, int64_t C, int64_t G) {
  if (!stem_geometry(g, C, G)) return false;
  /* Shallow kernels (3 x 3 of up to 4 channels, depth 27 or 36) stay with
   * the GEMM. At stride 1 its implicit GEMM over shifted planes ran 3 -> 64
   * channels on 224 x 224 in 1.37 ms against 1.67 here (one thread, Zen 5);
   * at stride 2 this kernel ran SqueezeNet's 3 -> 64 stem alone or in a
   * short chain 0.31-0.34 ms against 0.35-0.44, but inside SqueezeNet 0.62
   * against 0.53 (the minimum of 200 runs, twice: not understood yet). From
   * depth 45 on it was faster everywhere measured: 5 x 5 of 3 channels and
   * 7 x 7 of one at stride 1 1.3 and 1.6 times, ResNet's 7 x 7 stride-2 stem
   * 1.1 to 1.2 times. */
  int64_t T = C * g->k[0] * g->k[1];
  if (T < 45) return false;
  /* Below AVX-512 (no fused multiply-add at the AVX2 level, 16 registers)
   * the GEMM's tiles did as well or better except on deep kernels: at
   * AVX2, 3 x 3 stride 2 ran 1.28 ms against the GEMM's 0.76, 7 x 7
   * stride 2 3.7 against 3.9 */
  if (ox_conv_direct_kernels_get()->isa < OX_ISA_AVX512 && T < 100) return false;
#ifdef __wasm_simd128__
  /* In WebAssembly the stem's C (autovectorised) ran ResNet-50's 7 x 7
   * stride-2 3 -> 64 stem in 66 ms of CPU time against onnxruntime-web's
   * 15 (im2col + its GEMM); the SIMD128 GEMM takes it */
  if (ox_cpu_get()->simd128) return false;
#endif
  return true;
}

int ox_conv_stem(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t C, int64_t M,
                 const float *x, const float *w, const float *bias, const ox_sgemm_epi *epi,
                 float *y) {
  return ox_conv_direct_kernels_get()->stem(pool, g, N, C, M, x, w, bias, epi, y);
}
