/* fma_wasm.h - fmaf over arrays for WebAssembly SIMD128 builds. SIMD128 has
 * no fused multiply-add, so a loop of fmaf calls C's libm (musl's software
 * fmaf) per element; these give the same bits four lanes at a time. Only
 * under __wasm_simd128__ (callers check ox_cpu_get()->simd128, which
 * ONNXC_ISA=portable clears). */
#ifndef OX_KERNELS_FMA_WASM_H
#define OX_KERNELS_FMA_WASM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __wasm_simd128__
/* y[i] = fmaf(x[i], a, b) for i < n, then `v > 0 ? v : 0` when relu (NaN
 * and -0 give +0) */
void ox_fma_affine_wasm(const float *x, float a, float b, bool relu, float *y, int64_t n);
#endif

#endif
