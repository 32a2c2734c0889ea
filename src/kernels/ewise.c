/* ewise.c - ewise.h's dispatch: the SIMD128 entries in a -msimd128 build
 * (unless ONNXC_ISA=portable cleared ox_cpu_get()->simd128), else none. */
#include "ewise.h"

#include "../base/cpu.h"

#ifdef __wasm_simd128__
extern const ox_ew_kernels ox_ew_kernels_wasm; /* ewise_wasm.c */
#endif

const ox_ew_kernels *ox_ew_kernels_get(void) {
#ifdef __wasm_simd128__
  if (ox_cpu_get()->simd128) return &ox_ew_kernels_wasm;
#endif
  return NULL;
}
