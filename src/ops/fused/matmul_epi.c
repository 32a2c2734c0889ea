/* matmul_epi.c - MatMulFused (domain ai.onnxc, made by src/opt/matmul_epi.c
 * from MatMul -> Add(bias) [-> activation], or Gemm [-> activation]):
 *
 *   Y = act(alpha * MatMul(A, W) + beta * bias)
 *
 * W a constant 2-D float [K, N] ([N, K] when trans_b: Gemm's transB), packed
 * once as MatMul (MatMulTransBFused) packs it; bias (input 2, may be absent)
 * one value or one per column ([N] or [1, N]); alpha and beta (Gemm's, 1 by
 * default); attribute act: 0 none, 1 Relu, 2 GELU's erf form (attributes
 * gelu_c0, gelu_c1, gelu_c2 and gelu_mul: x * c0 in place of x / c0, see
 * oc_gelu_erf_f32), 3 GELU's tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x +
 * 0.044715 x^3))) as the Gelu kernel computes it, 4 SiLU x * Sigmoid(x).
 * The bias and the activation run on each block of Y as the GEMM finishes
 * it, while it is in cache, instead of two or six more passes over Y in
 * memory. With alpha = beta = 1 and act 0..2 each step is the float
 * operation of the node it replaces, in their order: the same bits as the
 * unfused nodes; the tanh form and SiLU run the Gelu and Swish kernels'
 * functions (within their rounding of the spelled-out nodes). */
#include <stdlib.h>

#include "../fused.h"
#include "../onnx/matmul.h"
#include "../onnx/unary.h"
#include "../opcore.h"

enum { MMF_NONE, MMF_RELU, MMF_GELU, MMF_GELU_TANH, MMF_SILU };

typedef struct mmf_state {
  void *mm; /* MatMul's state: W packed, or NULL */
  int act;
  bool tb;           /* W is [N, K] */
  float alpha, beta; /* Gemm's scales (1, 1: MatMul + Add) */
  bool a_matrix;     /* from a Gemm: A must be 2-D */
  oc_gelu_erf gelu;
} mmf_state;

static void mmf_release(void *state) {
  mmf_state *s = state;
  if (!s) return;
  ox_mm_release(s->mm);
  free(s);
}

static int mmf_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  int64_t act = ox_node_attr_int(n, "act", MMF_NONE);
  if (act < MMF_NONE || act > MMF_SILU)
    return oc_prep_fail(info, e, "unknown act %lld", (long long)act);
  oc_gelu_erf g = {0};
  if (act == MMF_GELU) {
    if (!ox_node_attr(n, "gelu_c0") || !ox_node_attr(n, "gelu_c1") || !ox_node_attr(n, "gelu_c2"))
      return oc_prep_fail(info, e, "act 2 needs gelu_c0, gelu_c1 and gelu_c2");
    g = (oc_gelu_erf){ox_node_attr_float(n, "gelu_c0", 0), ox_node_attr_float(n, "gelu_c1", 0),
                      ox_node_attr_float(n, "gelu_c2", 0), ox_node_attr_int(n, "gelu_mul", 0) != 0};
  }
  mmf_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->act = (int)act;
  s->gelu = g;
  s->tb = ox_node_attr_int(n, "trans_b", 0) != 0;
  s->alpha = ox_node_attr_float(n, "alpha", 1.0f);
  s->beta = ox_node_attr_float(n, "beta", 1.0f);
  s->a_matrix = ox_node_attr_int(n, "a_matrix", 0) != 0;
  int rc = s->tb ? ox_mm_prepare_tb(info, &s->mm, e) : ox_mm_prepare(info, &s->mm, e);
  if (rc) {
    free(s);
    return rc;
  }
  *state = s;
  return OX_OK;
}

typedef struct mmf_ctx {
  ox_mm_post post; /* first: the product calls back with this struct */
  const float *bias;
  bool bias_one; /* one value for every column */
  const mmf_state *s;
} mmf_ctx;

/* the bias Add and the activation of each row's columns (kernels/vmath.h),
 * as their kernels compute them; Gemm's alpha and beta first when not 1 */
static void mmf_post(void *arg, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const mmf_ctx *c = arg;
  const mmf_state *s = c->s;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  int64_t n = n1 - n0;
  const float *bias = !c->bias ? NULL : c->bias_one ? c->bias : c->bias + n0;
  bool scaled = s->alpha != 1.0f || s->beta != 1.0f;
  for (int64_t i = m0; i < m1; i++) {
    float *y = c->post.y + i * c->post.N + n0;
    if (scaled) { /* Gemm: alpha * (A B) + beta * C, then Relu as the Relu kernel */
      float al = s->alpha, be = s->beta;
      if (!bias)
        for (int64_t k = 0; k < n; k++) y[k] = al * y[k];
      else if (c->bias_one)
        for (int64_t k = 0; k < n; k++) y[k] = al * y[k] + be * bias[0];
      else
        for (int64_t k = 0; k < n; k++) y[k] = al * y[k] + be * bias[k];
      if (s->act == MMF_RELU) vk->bias_relu(y, n, NULL, false, true);
    } else
      vk->bias_relu(y, n, bias, c->bias_one, s->act == MMF_RELU);
    if (s->act == MMF_GELU)
      vk->gelu_erf(y, y, n, &s->gelu);
    else if (s->act == MMF_GELU_TANH)
      ox_unary_gelu_tanh_f32(y, y, n);
    else if (s->act == MMF_SILU)
      oc_sigmoid_f32(y, y, n, 1.0f, true);
  }
}

static int mmf_run(ox_kctx *ctx, void *state) {
  const mmf_state *s = state;
  ox_value *a = ox_kctx_input(ctx, 0), *b = ox_kctx_input(ctx, 1), *bias = ox_kctx_input(ctx, 2);
  int64_t N = ox_mm_packed_n(s->mm);
  if (N < 0) N = b && b->kind == OX_VAL_TENSOR && b->rank == 2 ? b->dims[s->tb ? 0 : 1] : -1;
  if (N < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "W must be a 2-D tensor");
  if (s->a_matrix && (!a || a->kind != OX_VAL_TENSOR || a->rank != 2))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A must be a 2-D tensor (the node is a Gemm)");
  /* one value, or one per column as [N] or [1, N] (Gemm's C) */
  if (bias && (bias->kind != OX_VAL_TENSOR || bias->dtype != OX_FLOAT || bias->rank > 2 ||
               (bias->rank == 2 && bias->dims[0] != 1) || (bias->numel != 1 && bias->numel != N)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the bias must be float, one value or %lld",
                        (long long)N);
  mmf_ctx c = {{mmf_post, NULL, 0}, bias ? bias->data : NULL, bias && bias->numel == 1, s};
  return ox_mm_compute_post(ctx, s->mm, a, b, s->tb, &c.post);
}

const ox_kernel_def ox_ops_matmul_epi[] = {
    {OX_FUSED_DOMAIN, "MatMulFused", 1, 1, mmf_prepare, mmf_run, mmf_release, NULL, 2},
    {0},
};
