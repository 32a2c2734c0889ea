/* schema_contrib_nn.c - schemas of onnxruntime's com.microsoft encoder
 * building blocks (layer norms with a skip input, the GELU forms,
 * FusedMatMul, FusedConv, BiasSoftmax), and of the operators onnxruntime
 * registers in the default domain (SimplifiedLayerNormalization), as
 * onnxruntime's docs/ContribOperators.md and its CPU kernels define them.
 * Shape functions: src/infer/infer_ops_contrib_nn.c; kernels:
 * src/ops/contrib/nn.c. */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

/* onnxruntime's CPU kernels of these take float; the schemas also admit
 * the half types, as onnxruntime's do */
static const char *const float_types[] = {"tensor(float)", "tensor(double)", "tensor(float16)",
                                          "tensor(bfloat16)", NULL};
static const char *const stat_types[] = {"tensor(float)", "tensor(double)", "tensor(bfloat16)",
                                         NULL};
static const char *const int32_types[] = {"tensor(int32)", NULL};
static const ox_type_constraint tc_t[] = {{"T", float_types, 4}};
static const ox_type_constraint tc_tu[] = {{"T", float_types, 4}, {"U", stat_types, 3}};
static const ox_type_constraint tc_tvu[] = {
    {"T", float_types, 4}, {"V", float_types, 4}, {"U", stat_types, 3}};
static const ox_type_constraint tc_embed[] = {{"T1", int32_types, 1}, {"T", float_types, 4}};

/* ---- QuickGelu, Gelu, FastGelu, BiasGelu ---- */
static const ox_formal x_in[] = {OX_HONE("X", "T")};
static const ox_formal y_out[] = {OX_HONE("Y", "T")};
static const ox_formal c_out[] = {OX_HONE("C", "T")};
static const ox_attr_schema quick_gelu_attrs[] = {{"alpha", OX_ATTR_FLOAT, false, "1.702"}};
static const ox_formal fast_gelu_in[] = {OX_HONE("X", "T"), OX_HOPT("bias", "T")};
static const ox_formal bias_gelu_in[] = {OX_HONE("A", "T"), OX_HONE("B", "T")};

/* ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization ---- */
static const ox_formal skip_ln_in[] = {OX_HONE("input", "T"), OX_HONE("skip", "T"),
                                       OX_HONE("gamma", "T"), OX_HOPT("beta", "T"),
                                       OX_HOPT("bias", "T")};
static const ox_formal skip_rms_in[] = {OX_HONE("input", "T"), OX_HONE("skip", "T"),
                                        OX_HONE("gamma", "T"), OX_HOPT("bias", "T")};
static const ox_formal skip_ln_out[] = {OX_HONE("output", "T"), OX_HOPT("mean", "U"),
                                        OX_HOPT("inv_std_var", "U"),
                                        OX_HOPT("input_skip_bias_sum", "T")};
static const ox_attr_schema skip_ln_attrs[] = {{"epsilon", OX_ATTR_FLOAT, false, "1e-12"}};

/* ---- EmbedLayerNormalization ---- */
static const ox_formal embed_in[] = {OX_HONE("input_ids", "T1"),
                                     OX_HOPT("segment_ids", "T1"),
                                     OX_HONE("word_embedding", "T"),
                                     OX_HONE("position_embedding", "T"),
                                     OX_HOPT("segment_embedding", "T"),
                                     OX_HONE("gamma", "T"),
                                     OX_HONE("beta", "T"),
                                     OX_HOPT("mask", "T1"),
                                     OX_HOPT("position_ids", "T1")};
static const ox_formal embed_out[] = {OX_HONE("output", "T"), OX_HONE("mask_index", "T1"),
                                      OX_HOPT("embedding_sum", "T")};
static const ox_attr_schema embed_attrs[] = {{"epsilon", OX_ATTR_FLOAT, false, "1e-12"},
                                             {"mask_index_type", OX_ATTR_INT, false, "1"}};

/* ---- BiasSoftmax ---- */
static const ox_formal bsm_in[] = {OX_HONE("data", "T"), OX_HONE("bias", "T")};
static const ox_formal bsm_out[] = {OX_HONE("output", "T")};
static const ox_attr_schema bsm_attrs[] = {{"axis", OX_ATTR_INT, false, "1"},
                                           {"is_inner_broadcast", OX_ATTR_INT, true, NULL}};

/* ---- FusedMatMul ---- */
static const ox_formal fmm_in[] = {OX_HONE("A", "T"), OX_HONE("B", "T")};
static const ox_formal fmm_out[] = {OX_HONE("Y", "T")};
static const ox_attr_schema fmm_attrs[] = {
    {"alpha", OX_ATTR_FLOAT, false, "1.0"},   {"transA", OX_ATTR_INT, false, "0"},
    {"transB", OX_ATTR_INT, false, "0"},      {"transBatchA", OX_ATTR_INT, false, "0"},
    {"transBatchB", OX_ATTR_INT, false, "0"},
};

/* ---- FusedConv ---- */
static const char *const conv_types[] = {"tensor(float)", "tensor(float16)", "tensor(double)",
                                         NULL};
static const ox_type_constraint tc_conv[] = {{"T", conv_types, 3}};
static const ox_formal fconv_in[] = {OX_HONE("X", "T"), OX_HONE("W", "T"), OX_HOPT("B", "T"),
                                     OX_HOPT("Z", "T")};
static const ox_attr_schema fconv_attrs[] = {
    {"auto_pad", OX_ATTR_STRING, false, "\"NOTSET\""},
    {"dilations", OX_ATTR_INTS, false, NULL},
    {"group", OX_ATTR_INT, false, "1"},
    {"kernel_shape", OX_ATTR_INTS, false, NULL},
    {"pads", OX_ATTR_INTS, false, NULL},
    {"strides", OX_ATTR_INTS, false, NULL},
    {"activation", OX_ATTR_STRING, false, NULL},
    {"activation_params", OX_ATTR_FLOATS, false, NULL},
};

const ox_schema *const ox_schema_contrib_nn[] = {
    MS("BiasGelu", bias_gelu_in, 2, c_out, 1, OX_HTC(tc_t), OX_HNONE,
       "C = Gelu(A + B), the erf form; B is 1-D of A's last dimension."),
    MS("BiasSoftmax", bsm_in, 2, bsm_out, 1, OX_HTC(tc_t), OX_HAT(bsm_attrs),
       "output = Softmax(data + bias) over the axes from axis on taken as one (Softmax before "
       "opset 13). bias matches data on those axes; before axis it repeats over leading axes "
       "(is_inner_broadcast = 0: bias [1.., d_k.., ...]) or trailing ones (1: bias [d_0.., "
       "1.., ...]). onnxruntime has no CPU kernel for it."),
    MS("EmbedLayerNormalization", embed_in, 7, embed_out, 2, OX_HTC(tc_embed), OX_HAT(embed_attrs),
       "s[b, i] = word_embedding[input_ids[b, i]] + position_embedding[position_ids or i] + "
       "segment_embedding[segment_ids[b, i]] (segment inputs optional, together); output = "
       "LayerNorm(s) * gamma + beta over the hidden axis, [B, S, H]. mask_index[b] (int32, [B]) "
       "counts the ones in mask row b (0 without mask). embedding_sum, when asked, is s. "
       "position_ids is [1, S] or [B, S]; an id outside its table is an error."),
    MS("FastGelu", fast_gelu_in, 1, y_out, 1, OX_HTC(tc_t), OX_HNONE,
       "Y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) with x = X + bias: GELU "
       "in its tanh approximation. bias, when given, is 1-D of X's last dimension and is added "
       "first (rounded to X's type)."),
    MS("FusedConv", fconv_in, 2, y_out, 1, OX_HTC(tc_conv), OX_HAT(fconv_attrs),
       "Y = activation(Conv(X, W, B) + Z): Conv's attributes, Z (optional) of Y's shape, "
       "activation one of Relu, Tanh, Sigmoid, LeakyRelu (activation_params [alpha]), Clip "
       "([min, max]), HardSigmoid ([alpha, beta]), none when absent. float32 kernels, as "
       "onnxruntime's CPU one."),
    MS("FusedMatMul", fmm_in, 2, fmm_out, 1, OX_HTC(tc_t), OX_HAT(fmm_attrs),
       "Y = alpha * op(A) x op(B), numpy MatMul broadcasting of the batch axes. transBatchA "
       "reads A [d0, b.., K] as [b.., d0, K] (axis 0 moved behind the batch axes); transA then "
       "swaps the last two axes; likewise for B."),
    MS("Gelu", x_in, 1, y_out, 1, OX_HTC(tc_t), OX_HNONE,
       "Y = 0.5 * X * (1 + erf(X / sqrt(2))), elementwise: GELU in its exact (erf) form."),
    MS("QuickGelu", x_in, 1, y_out, 1, OX_HTC(tc_t), OX_HAT(quick_gelu_attrs),
       "Y = X * Sigmoid(alpha * X), elementwise (CLIP's activation)."),
    MS("SkipLayerNormalization", skip_ln_in, 3, skip_ln_out, 1, OX_HTC(tc_tu),
       OX_HAT(skip_ln_attrs),
       "s = input + skip + bias; output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma + beta "
       "over the last axis (hidden size H). input is [B, S, H] or [S, H]; skip has input's "
       "shape, or [1, S, H] or [S, H] when input is 3-D; gamma, beta and bias are 1-D of H. "
       "Optional outputs: mean and inv_std_var per row (input's shape with last dimension 1; "
       "onnxruntime's CPU kernel leaves them unset, onnxc computes them) and "
       "input_skip_bias_sum, s. onnxc also takes double, which onnxruntime's schema refuses."),
    MS("SkipSimplifiedLayerNormalization", skip_rms_in, 3, skip_ln_out, 1, OX_HTC(tc_tu),
       OX_HAT(skip_ln_attrs),
       "s = input + skip + bias; output = s / sqrt(mean(s^2) + epsilon) * gamma over the last "
       "axis (RMS norm with a residual). Shapes as SkipLayerNormalization's; the mean output is "
       "0."),
};
const size_t ox_schema_contrib_nn_n = OX_HN_OF(ox_schema_contrib_nn);

/* onnxruntime's operators of the default domain, since opset 1 */
static const ox_formal rms_in[] = {OX_HONE("X", "T"), OX_HONE("scale", "V")};
static const ox_formal rms_out[] = {OX_HONE("Y", "V"), OX_HOPT("inv_std_var", "U")};
static const ox_attr_schema rms_attrs[] = {{"axis", OX_ATTR_INT, false, "-1"},
                                           {"epsilon", OX_ATTR_FLOAT, false, "1e-05"},
                                           {"stash_type", OX_ATTR_INT, false, "1"}};

const ox_schema *const ox_schema_contrib_default[] = {
    OX_HAND_SCHEMA("", 1, "SimplifiedLayerNormalization", rms_in, 2, rms_out, 1, OX_HTC(tc_tvu),
                   OX_HAT(rms_attrs),
                   "Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean over the axes from axis "
                   "on (RMS normalisation, as onnxruntime registers it in the default domain). "
                   "scale broadcasts (numpy) to X's dims from axis on; inv_std_var (optional) is "
                   "1 / sqrt(mean(X^2) + epsilon), X's dims before axis and ones after."),
};
const size_t ox_schema_contrib_default_n = OX_HN_OF(ox_schema_contrib_default);
