/* unary.h - what other families borrow from the elementwise unary kernels
 * (unary.c): the contrib activations that are a standard one with other
 * attribute defaults run on the same kernel. */
#ifndef OX_OPS_ONNX_UNARY_H
#define OX_OPS_ONNX_UNARY_H

#include "../../runtime/kernel.h"
#include "../opcore.h"

/* the run of every kernel of unary.c */
int ox_unary_run(ox_kctx *ctx, void *state);
/* QuickGelu: Swish's kernel with alpha 1.702 unless the node gives one */
int ox_unary_prepare_quick_gelu(const ox_kinfo *info, void **state, ox_err *e);
/* Gelu's kernel in its erf form, or its tanh form when tanh_form (the
 * node's attributes are not read) */
int ox_unary_prepare_gelu_form(const ox_kinfo *info, void **state, ox_err *e, bool tanh_form);
/* a prepared kernel's function on n elements of x into y (x may be y) of a
 * float type dt, spread over the pool */
void ox_unary_apply(const void *state, ox_thread_pool *pool, int32_t dt, const void *x, void *y,
                    int64_t n);

/* GELU's tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) of n
 * floats (y may be x): tanh's argument for a stretch, the vector tanh,
 * then the product. Inline: unary.c's levels each compile it, and
 * MatMulFused (fused/matmul_epi.c) runs the same steps on its blocks. */
static inline void ox_unary_gelu_tanh_f32(const float *x, float *y, int64_t n) {
  float u[256];
  const float c = 0.79788458347320556640625f, a = 0.044715f;
  for (int64_t k0 = 0; k0 < n; k0 += 256) {
    int64_t m = n - k0 < 256 ? n - k0 : 256;
    for (int64_t k = 0; k < m; k++) {
      float v = x[k0 + k];
      u[k] = c * (v + a * v * v * v);
    }
    oc_tanh_f32(u, u, m);
    for (int64_t k = 0; k < m; k++) y[k0 + k] = 0.5f * x[k0 + k] * (1.0f + u[k]);
  }
}

#endif
