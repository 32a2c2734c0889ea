/* registry.c - the list of kernel tables; one per family file in src/ops.
 * A build may leave families out (ONNXC_NO_OPS_<FAMILY>, set by
 * cmake/wasm.cmake's ONNXC_WASM_EXCLUDE): their tables are not named here,
 * so the linker leaves their files out of the module. */
#include "registry.h"

#include <string.h>

extern const ox_kernel_def ox_ops_elementwise[];
extern const ox_kernel_def ox_ops_unary[];
extern const ox_kernel_def ox_ops_cast[];
extern const ox_kernel_def ox_ops_reduce[];
extern const ox_kernel_def ox_ops_softmax[];
extern const ox_kernel_def ox_ops_matmul[];
extern const ox_kernel_def ox_ops_tensor[];
extern const ox_kernel_def ox_ops_gather[];
extern const ox_kernel_def ox_ops_pad[];
extern const ox_kernel_def ox_ops_sort[];
extern const ox_kernel_def ox_ops_control[];
extern const ox_kernel_def ox_ops_sequence[];
extern const ox_kernel_def ox_ops_optional[];
extern const ox_kernel_def ox_ops_conv[];
extern const ox_kernel_def ox_ops_conv_transpose[];
extern const ox_kernel_def ox_ops_conv_int[];
extern const ox_kernel_def ox_ops_pool[];
extern const ox_kernel_def ox_ops_resize[];
extern const ox_kernel_def ox_ops_roi[];
extern const ox_kernel_def ox_ops_nms[];
extern const ox_kernel_def ox_ops_norm[];
#ifndef ONNXC_NO_OPS_RNN
extern const ox_kernel_def ox_ops_rnn[];
#endif
extern const ox_kernel_def ox_ops_attention[];
extern const ox_kernel_def ox_ops_quant[];
#ifndef ONNXC_NO_OPS_TRAINING
extern const ox_kernel_def ox_ops_loss[];
#endif
#ifndef ONNXC_NO_OPS_SIGNAL
extern const ox_kernel_def ox_ops_signal[];
#endif
extern const ox_kernel_def ox_ops_random[];
#ifndef ONNXC_NO_OPS_STRINGS
extern const ox_kernel_def ox_ops_string[];
#endif
#ifndef ONNXC_NO_OPS_IMAGE
extern const ox_kernel_def ox_ops_image[];
#endif
#ifndef ONNXC_NO_OPS_ML
extern const ox_kernel_def ox_ops_ml[];
extern const ox_kernel_def ox_ops_ml_linear[];
extern const ox_kernel_def ox_ops_ml_tree[];
#endif
#ifndef ONNXC_NO_OPS_TRAINING
extern const ox_kernel_def ox_ops_training[];
#endif
extern const ox_kernel_def ox_ops_fused[];
extern const ox_kernel_def ox_ops_qfused[];
extern const ox_kernel_def ox_ops_attn_fused[];
extern const ox_kernel_def ox_ops_matmul_epi[];
extern const ox_kernel_def ox_ops_matmul_dq[];
extern const ox_kernel_def ox_ops_rms_norm[];
extern const ox_kernel_def ox_ops_rotary[];
extern const ox_kernel_def ox_ops_silu_mul[];
#ifndef ONNXC_NO_OPS_CONTRIB
extern const ox_kernel_def ox_ops_contrib_nn[];
extern const ox_kernel_def ox_ops_contrib_attn[];
extern const ox_kernel_def ox_ops_contrib_gqa[];
extern const ox_kernel_def ox_ops_contrib_sparse[];
extern const ox_kernel_def ox_ops_contrib_lowbit[];
extern const ox_kernel_def ox_ops_contrib_quant[];
#endif

static const ox_kernel_def *const tables[] = {
    ox_ops_elementwise,
    ox_ops_unary,
    ox_ops_cast,
    ox_ops_reduce,
    ox_ops_softmax,
    ox_ops_matmul,
    ox_ops_tensor,
    ox_ops_gather,
    ox_ops_pad,
    ox_ops_sort,
    ox_ops_control,
    ox_ops_sequence,
    ox_ops_optional,
    ox_ops_conv,
    ox_ops_conv_transpose,
    ox_ops_conv_int,
    ox_ops_pool,
    ox_ops_resize,
    ox_ops_roi,
    ox_ops_norm,
#ifndef ONNXC_NO_OPS_RNN
    ox_ops_rnn,
#endif
    ox_ops_attention,
    ox_ops_quant,
    ox_ops_matmul_dq,
#ifndef ONNXC_NO_OPS_TRAINING
    ox_ops_loss,
#endif
#ifndef ONNXC_NO_OPS_SIGNAL
    ox_ops_signal,
#endif
    ox_ops_random,
#ifndef ONNXC_NO_OPS_STRINGS
    ox_ops_string,
#endif
#ifndef ONNXC_NO_OPS_IMAGE
    ox_ops_image,
#endif
#ifndef ONNXC_NO_OPS_ML
    ox_ops_ml,
    ox_ops_ml_linear,
    ox_ops_ml_tree,
#endif
#ifndef ONNXC_NO_OPS_TRAINING
    ox_ops_training,
#endif
    ox_ops_fused,
    ox_ops_qfused,
    ox_ops_attn_fused,
    ox_ops_matmul_epi,
    ox_ops_rms_norm,
    ox_ops_rotary,
    ox_ops_silu_mul,
    ox_ops_nms,
#ifndef ONNXC_NO_OPS_CONTRIB
    ox_ops_contrib_nn,
    ox_ops_contrib_attn,
    ox_ops_contrib_gqa,
    ox_ops_contrib_sparse,
    ox_ops_contrib_lowbit,
    ox_ops_contrib_quant,
#endif
};

static bool same_domain(const char *a, const char *b) {
  bool da = !*a || strcmp(a, "ai.onnx") == 0, db = !*b || strcmp(b, "ai.onnx") == 0;
  return da || db ? da == db : strcmp(a, b) == 0;
}

const ox_kernel_def *ox_registry_find(const char *domain, const char *op, int64_t since_version) {
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ox_kernel_def *k = tables[t]; k->op; k++)
      if (strcmp(k->op, op) == 0 && same_domain(k->domain, domain ? domain : "") &&
          since_version >= k->since_min && since_version <= k->since_max)
        return k;
  return NULL;
}

bool ox_registry_has_op(const char *domain, const char *op) {
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ox_kernel_def *k = tables[t]; k->op; k++)
      if (strcmp(k->op, op) == 0 && same_domain(k->domain, domain ? domain : "")) return true;
  return false;
}

size_t ox_registry_count(void) {
  size_t n = 0;
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ox_kernel_def *k = tables[t]; k->op; k++) n++;
  return n;
}

const ox_kernel_def *ox_registry_at(size_t i) {
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ox_kernel_def *k = tables[t]; k->op; k++)
      if (i-- == 0) return k;
  return NULL;
}

const ox_kernel_registry ox_registry_builtin = {ox_registry_find, ox_registry_has_op};

/* ONNXC_OPS_EXCLUDED: the families cmake/wasm.cmake's ONNXC_WASM_EXCLUDE
 * left out above, for the error of a model that uses one */
const char *ox_registry_left_out(void) {
#ifdef ONNXC_OPS_EXCLUDED
  return ONNXC_OPS_EXCLUDED;
#else
  return NULL;
#endif
}
