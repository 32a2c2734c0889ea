/* matmul_epi.c - MatMulFused (domain ai.onnxc, made by src/opt/matmul_epi.c
 * from MatMul -> Add(bias) [-> activation]):
 *
 *   Y = act(MatMul(A, W) + bias)
 *
 * W a constant 2-D float (packed once, as MatMul packs it); bias (input 2,
 * may be absent) one value or one per column; attribute act: 0 none, 1 Relu,
 * 2 GELU's erf form (attributes gelu_c0, gelu_c1, gelu_c2 and gelu_mul: x *
 * c0 in place of x / c0, see oc_gelu_erf_f32). The bias and the activation run
 * on each block of Y as the GEMM finishes it, while it is in cache, instead
 * of two or six more passes over Y in memory. Each step is the float
 * operation of the node it replaces, in their order: the same bits as the
 * unfused nodes. */
#include <stdlib.h>

#include "../fused.h"
#include "../onnx/matmul.h"
#include "../opcore.h"

enum { MMF_NONE, MMF_RELU, MMF_GELU };

typedef struct mmf_state {
  void *mm; /* MatMul's state: W packed, or NULL */
  int act;
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
  if (act < MMF_NONE || act > MMF_GELU)
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
  int rc = ox_mm_prepare(info, &s->mm, e);
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

/* the bias Add and the Relu of each row's columns (kernels/vmath.h), as
 * their kernels compute them */
static void mmf_post(void *arg, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const mmf_ctx *c = arg;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  int64_t n = n1 - n0;
  const float *bias = !c->bias ? NULL : c->bias_one ? c->bias : c->bias + n0;
  for (int64_t i = m0; i < m1; i++) {
    float *y = c->post.y + i * c->post.N + n0;
    vk->bias_relu(y, n, bias, c->bias_one, c->s->act == MMF_RELU);
    if (c->s->act == MMF_GELU) vk->gelu_erf(y, y, n, &c->s->gelu);
  }
}

static int mmf_run(ox_kctx *ctx, void *state) {
  const mmf_state *s = state;
  ox_value *a = ox_kctx_input(ctx, 0), *b = ox_kctx_input(ctx, 1), *bias = ox_kctx_input(ctx, 2);
  int64_t N = ox_mm_packed_n(s->mm);
  if (N < 0) N = b && b->kind == OX_VAL_TENSOR && b->rank == 2 ? b->dims[1] : -1;
  if (N < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "W must be a 2-D tensor");
  if (bias && (bias->kind != OX_VAL_TENSOR || bias->dtype != OX_FLOAT || bias->rank > 1 ||
               (bias->numel != 1 && bias->numel != N)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the bias must be float, one value or %lld",
                        (long long)N);
  mmf_ctx c = {{mmf_post, NULL, 0}, bias ? bias->data : NULL, bias && bias->numel == 1, s};
  return ox_mm_compute_post(ctx, s->mm, a, b, &c.post);
}

const ox_kernel_def ox_ops_matmul_epi[] = {
    {OX_FUSED_DOMAIN, "MatMulFused", 1, 1, mmf_prepare, mmf_run, mmf_release, NULL, 2},
    {0},
};
