/* conv_direct.c - conv_direct.h's dispatch: the entries of the level the
 * CPU probe allows. */
#include "conv_direct.h"

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
