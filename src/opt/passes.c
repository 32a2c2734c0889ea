/* passes.c - the declared table of graph passes, in the order they run.
 *
 * To add a pass: write src/opt/NAME.c with `int ox_opt_NAME(ox_pass_view *)`
 * (declared in pass.h; mark nodes dropped, put replacements in repl[i]),
 * add one row here where it must run, and a before/after text model pair
 * under tests/opt/passes/ (tests/unit/test_passes.c runs every row). Names
 * are what users type (--disable-pass, disabled_passes,
 * disabled_optimizers): keep them stable. */
#include <string.h>

#include "opt.h"
#include "pass.h"

static const ox_opt_pass passes[] = {
    {"identity", 1, true, 0,
     "Identity nodes removed, their readers reading the input (exporters name shared weights "
     "this way)",
     ox_opt_identity},
    {"cse", 1, true, 0, "merges duplicate nodes (same domain, op, inputs and attributes)",
     ox_opt_cse},
    {"matmul_transb", 1, true, 0,
     "MatMul(A, Transpose(B)) or MatMul by a constant 2-D float B -> MatMulTransBFused",
     ox_opt_matmul_transb},
    {"tied_gather", 1, true, 0,
     "Gather of a constant W a MatMulTransBFused also reads (tied embedding) -> GatherTiedFused",
     ox_opt_tied_gather},
    {"layernorm", 1, true, 0, "layer normalisation written out (ReduceMean .. Add beta) -> LayerNormFused",
     ox_opt_layernorm},
    {"rmsnorm", 1, true, 0,
     "RMS normalisation written out (Pow 2, ReduceMean, Add eps, Sqrt/Reciprocal or Pow -0.5, "
     "Div/Mul [, Mul gamma]) -> RMSNormFused",
     ox_opt_rmsnorm},
    {"rotary", 1, true, 0,
     "rotate-half rotary embedding x * cos + Concat(Neg(Slice(x)), Slice(x)) * sin -> "
     "RotaryFused",
     ox_opt_rotary},
    {"attention", 1, true, 0,
     "exported multi-head attention (Reshape, Transpose, MatMul, Softmax, ...) -> "
     "MultiHeadAttentionFused",
     ox_opt_attention},
    {"attention_bhsd", 1, true, 0,
     "attention on split heads (MatMul(q, k^T) [scale] [Where] [Add mask] Softmax MatMul v; "
     "SDPA's q and k scaling, grouped-query repeat_kv) -> AttentionBHSDFused",
     ox_opt_attention_bhsd},
    {"kv_cache", 1, true, 0,
     "Concat(past input, new, axis 2) read by fused attentions -> KVCacheAppend with an optional "
     "cache input (not listed; a plain run computes the Concat), which the generation loop feeds "
     "to append in place",
     ox_opt_kv_cache},
    {"matmul_epi", 1, true, 0,
     "MatMul by a constant W + bias, or Gemm by a constant W [+ Relu, GELU or SiLU] -> "
     "MatMulFused",
     ox_opt_matmul_epi},
    {"swiglu", 1, true, 0, "g * Sigmoid(g) * u (a SwiGLU gate) -> SiLUMulFused", ox_opt_swiglu},
    {"qdq_conv", 1, true, OX_OPT_QUANT,
     "DequantizeLinear -> Conv [-> Relu/Clip] -> QuantizeLinear -> QLinearConvFused",
     ox_opt_qdq_conv},
    {"qdq_eltwise", 1, true, OX_OPT_QUANT,
     "DequantizeLinear -> elementwise op / Add / data movement -> QuantizeLinear on the bytes "
     "(QLookupFused, QAddFused)",
     ox_opt_qdq_eltwise},
    {"dyn_matmul", 1, true, OX_OPT_QUANT,
     "MatMulInteger -> Cast -> Mul scale [-> Add bias] -> QMatMulScaledFused", ox_opt_dyn_matmul},
    {"dq_matmul", 1, true, OX_OPT_QUANT | OX_OPT_LOW_BIT,
     "MatMul by DequantizeLinear of constant 8/4/2-bit weights -> MatMulDQFused",
     ox_opt_dq_matmul},
    {"conv_fold", 1, true, 0,
     "BatchNormalization, or Mul/Add by a per-channel constant, after a Conv folded into its "
     "weights",
     ox_opt_conv_fold},
    {"conv_epilogue", 1, true, 0,
     "float Conv [+ residual Add] [+ activation] [+ Max/Min bound] -> FusedConv",
     ox_opt_conv_epilogue},
    {"conv_prologue", 1, true, 0,
     "[BatchNormalization] [Mul] [Add] [Relu] before a 1x1 Conv -> the Conv's prologue",
     ox_opt_conv_prologue},
    {"channel_shuffle", 1, true, 0,
     "Reshape -> Transpose -> Reshape channel shuffle read by a depthwise Conv -> the Conv's "
     "input order",
     ox_opt_channel_shuffle},
    {"conv_gate", 1, true, 0,
     "Mul by a Sigmoid/HardSigmoid gate read by a 1x1 Conv -> the Conv's input scale",
     ox_opt_conv_gate},
    {"conv_maxpool", 1, true, 0,
     "a stem Conv (at most 4 input channels) read only by MaxPool 3x3 stride 2 -> FusedConv "
     "with max_pool (the Conv's output pooled while in cache)",
     ox_opt_conv_maxpool},
    {"elementwise_chain", 1, true, 0,
     "float elementwise nodes rooted at one value, constant operands -> ElementwiseChain",
     ox_opt_elementwise_chain},
    {"dead_constants", 1, true, 0, "Constant / ConstantOfShape nodes nothing reads any more removed",
     ox_opt_dead_constants},
    {"constant_folding", 1, true, OX_OPT_IN_RUNTIME,
     "nodes whose inputs are all constants run once at session creation (in the runtime)", NULL},
};

size_t ox_opt_pass_count(void) { return sizeof passes / sizeof passes[0]; }

const ox_opt_pass *ox_opt_pass_at(size_t i) {
  return i < ox_opt_pass_count() ? &passes[i] : NULL;
}

const ox_opt_pass *ox_opt_pass_find(const char *name) {
  for (size_t i = 0; name && i < ox_opt_pass_count(); i++)
    if (strcmp(passes[i].name, name) == 0) return &passes[i];
  return NULL;
}

int ox_opt_check_names(const char *const *names, size_t n, ox_err *e) {
  for (size_t i = 0; i < n; i++)
    if (!ox_opt_pass_find(names[i]))
      return ox_err_set(e, OX_EINVAL, "unknown graph pass '%s' (onnxc convert --list-passes lists them)",
                        names[i] ? names[i] : "(null)");
  return OX_OK;
}

bool ox_opt_pass_enabled(const ox_opt_request *r, const ox_opt_pass *p) {
  if (!p || r->level < p->level || !p->default_on) return false;
  if ((p->needs & OX_OPT_QUANT) && r->quant_fusion_off) return false;
  for (size_t i = 0; i < r->n_disabled; i++)
    if (r->disabled[i] && strcmp(r->disabled[i], p->name) == 0) return false;
  return true;
}
