/* rms_norm.c - RMSNormFused (domain ai.onnxc, made by src/opt/rmsnorm.c
 * from RMS normalisation written out):
 *
 *   Y = X / sqrt(mean(X^2) + epsilon) * Scale     (over X's last axis)
 *
 * X float32 of rank >= 1, Scale (optional) one value or one per element of
 * the last axis. The rows run on the row loop of RMSNormalization and
 * SimplifiedLayerNormalization (ox_norm_rows, src/ops/onnx/norm.h): the mean
 * square in double from kernels/vmath.h's vector sums, then one vector
 * pass scaling the row, spread over the thread pool. */
#include <stdlib.h>

#include "../fused.h"
#include "../onnx/norm.h"
#include "../opcore.h"

typedef struct rms_state {
  float eps;
} rms_state;

static int rms_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  rms_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->eps = ox_node_attr_float(info->node, "epsilon", 1e-5f);
  *state = s;
  return OX_OK;
}

static bool is_f32(const ox_value *v) {
  return v && v->kind == OX_VAL_TENSOR && v->dtype == OX_FLOAT;
}

static int rms_run(ox_kctx *c, void *st) {
  const rms_state *s = st;
  ox_value *x = ox_kctx_input(c, 0), *scale = ox_kctx_input(c, 1);
  if (!is_f32(x) || x->rank == 0)
    return ox_kctx_fail(c, OX_ERUNTIME, "X must be a float tensor of rank 1 or more");
  int64_t D = x->dims[x->rank - 1];
  if (scale && (!is_f32(scale) || scale->rank > 1 || (scale->numel != 1 && scale->numel != D)))
    return ox_kctx_fail(
        c, OX_ERUNTIME, "Scale must be a float of one value or %lld (rank <= 1), not %lld values",
        (long long)D, (long long)(scale && scale->kind == OX_VAL_TENSOR ? scale->numel : -1));
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (x->numel == 0) return OX_OK;
  /* one Scale value for the whole row: the row loop takes one per column */
  float *wide = NULL;
  const float *sc = scale ? scale->data : NULL;
  if (scale && scale->numel == 1 && D > 1) {
    if (!(wide = malloc((size_t)D * sizeof *wide)))
      return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    for (int64_t j = 0; j < D; j++) wide[j] = sc[0];
    sc = wide;
  }
  ox_norm_rows_args a = {.x = x->data,
                         .y = y->data,
                         .scale = sc,
                         .outer = x->numel / D,
                         .inner = D,
                         .eps = s->eps,
                         .rms = true};
  ox_norm_rows(ox_kctx_pool(c), &a);
  free(wide);
  return OX_OK;
}

const ox_kernel_def ox_ops_rms_norm[] = {
    {OX_FUSED_DOMAIN, OX_ONNXC_RMS_NORM, 1, 1, rms_prepare, rms_run, NULL},
    {0},
};
