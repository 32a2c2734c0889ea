/* copy_wasm.h - one packed-B panel row of nr floats copied. In wasm a
 * memcpy of a size known only at run time is a call into libc's memcpy
 * (no bulk-memory instructions in the default build) for every panel of 8
 * floats: im2col's packing of a 3 x 3 or 1 x 1 convolution's columns spent
 * its time in those calls. Under SIMD128 the 8-float panel of the wasm
 * GEMM (gemm_wasm.c's 6 x 8 kernel) is two vector moves; every other case,
 * and every other build, is the memcpy. The same bytes either way. */
#ifndef OX_KERNELS_COPY_WASM_H
#define OX_KERNELS_COPY_WASM_H

#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static inline void ox_copy_panel(float *d, const float *s, int nr) {
#ifdef __wasm_simd128__
  if (nr == 8) {
    v128_t a = wasm_v128_load(s), b = wasm_v128_load(s + 4);
    wasm_v128_store(d, a);
    wasm_v128_store(d + 4, b);
    return;
  }
#endif
  memcpy(d, s, (size_t)nr * sizeof(float));
}

#endif
