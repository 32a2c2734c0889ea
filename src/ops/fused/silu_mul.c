/* silu_mul.c - SiLUMulFused (domain ai.onnxc, made by src/opt/swiglu.c from
 * the gate of a SwiGLU feed-forward):
 *
 *   Y = A * Sigmoid(A) * B
 *
 * A and B float32 with numpy broadcasting. Each block of Y is SiLU(A) from
 * the Sigmoid kernel's vector function (kernels/vmath.h, the product by A
 * included, as the Mul rounds it) times B while the block is in cache: one
 * pass over A, B and Y where the nodes it replaces made three. */
#include "../fused.h"
#include "../opcore.h"

typedef struct silu_job {
  const float *a, *b;
  float *y;
} silu_job;

/* n elements: y = silu(a) (a read with step sa: 0 or 1) times b (step sb) */
static void silu_run(void *arg, const int64_t *off, const int64_t *st, int64_t oo, int64_t n) {
  const silu_job *j = arg;
  const float *a = j->a + off[0], *b = j->b + off[1];
  float *y = j->y + oo;
  if (st[0]) {
    oc_sigmoid_f32(a, y, n, 1.0f, true);
  } else {
    float t;
    oc_sigmoid_f32(a, &t, 1, 1.0f, true);
    for (int64_t k = 0; k < n; k++) y[k] = t;
  }
  if (st[1])
    for (int64_t k = 0; k < n; k++) y[k] *= b[k];
  else
    for (int64_t k = 0; k < n; k++) y[k] *= b[0];
}

/* elements [i0, i1) of A, B and Y of one shape, in blocks that stay in cache */
static void silu_same(void *arg, int64_t i0, int64_t i1) {
  static const int64_t one[2] = {1, 1};
  for (int64_t i = i0; i < i1; i += 2048) {
    int64_t off[2] = {i, i};
    silu_run(arg, off, one, i, i1 - i < 2048 ? i1 - i : 2048);
  }
}

static int silu_mul_run(ox_kctx *c, void *st) {
  (void)st;
  ox_value *in[2] = {ox_kctx_input(c, 0), ox_kctx_input(c, 1)};
  for (int k = 0; k < 2; k++)
    if (!in[k] || in[k]->kind != OX_VAL_TENSOR || in[k]->dtype != OX_FLOAT)
      return ox_kctx_fail(c, OX_ERUNTIME, "%s must be a float tensor", k ? "B" : "A");
  silu_job j = {in[0]->data, in[1]->data, NULL};
  if (ox_shape_equal(in[0]->dims, in[0]->rank, in[1]->dims, in[1]->rank)) {
    ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, in[0]->dims, in[0]->rank);
    if (!y) return OX_ERUNTIME;
    j.y = y->data;
    ox_parallel_for(ox_kctx_pool(c), y->numel, 16384, silu_same, &j);
    return OX_OK;
  }
  oc_bcast b;
  if (oc_bcast_values(&b, c, in, 2)) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, b.out_dims, b.out_rank);
  if (!y) return OX_ERUNTIME;
  j.y = y->data;
  oc_bcast_each(&b, ox_kctx_pool(c), silu_run, &j);
  return OX_OK;
}

const ox_kernel_def ox_ops_silu_mul[] = {
    {OX_FUSED_DOMAIN, OX_ONNXC_SILU_MUL, 1, 1, NULL, silu_mul_run, NULL},
    {0},
};
