/* schema_contrib_quant.c - schemas of onnxruntime's com.microsoft
 * the QOperator forms (QLinear*, QGemm), DynamicQuantizeMatMul and
 * MatMulIntegerToFloat, as onnxruntime's docs/ContribOperators.md and its CPU kernels define them.
 * Shape functions: src/infer/infer_ops_contrib_quant.c; kernels: src/ops/contrib/quant.c
 * (the products) and src/ops/contrib/quant_eltwise.c (the elementwise, pooling, concatenation
 * and convolution forms). */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)
#define MSV(...) OX_HAND_SCHEMA_VARIADIC(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

static const char *const q8_types[] = {"tensor(uint8)", "tensor(int8)", NULL};
static const char *const f32_types[] = {"tensor(float)", NULL};
static const char *const i32_types[] = {"tensor(int32)", NULL};
static const char *const f32_f16_types[] = {"tensor(float)", "tensor(float16)", NULL};
static const char *const f32_q8_types[] = {"tensor(float)", "tensor(uint8)", "tensor(int8)", NULL};

/* ---- the products ---- */
static const ox_type_constraint tc_dqmm[] = {{"T1", f32_types, 1}, {"T2", q8_types, 2}};
static const ox_formal dqmm_in[] = {OX_HONE("A", "T1"), OX_HONE("B", "T2"),
                                    OX_HONE("b_scale", "T1"), OX_HOPT("b_zero_point", "T2"),
                                    OX_HOPT("bias", "T1")};
static const ox_formal y_f_out[] = {OX_HONE("Y", "T1")};

static const ox_type_constraint tc_mmitf[] = {
    {"T1", q8_types, 2}, {"T2", q8_types, 2}, {"T3", f32_f16_types, 2}};
static const ox_formal mmitf_in[] = {OX_HONE("A", "T1"),
                                     OX_HONE("B", "T2"),
                                     OX_HONE("a_scale", "T3"),
                                     OX_HONE("b_scale", "T3"),
                                     OX_HOPT("a_zero_point", "T1"),
                                     OX_HOPT("b_zero_point", "T2"),
                                     OX_HOPT("bias", "T3")};
static const ox_formal y_t3_out[] = {OX_HONE("Y", "T3")};

static const ox_type_constraint tc_qgemm[] = {{"T", f32_types, 1},  {"TA", q8_types, 2},
                                              {"TB", q8_types, 2},  {"TC", i32_types, 1},
                                              {"TYZ", q8_types, 2}, {"TY", f32_q8_types, 3}};
static const ox_formal qgemm_in[] = {
    OX_HONE("A", "TA"), OX_HONE("a_scale", "T"), OX_HONE("a_zero_point", "TA"),
    OX_HONE("B", "TB"), OX_HONE("b_scale", "T"), OX_HONE("b_zero_point", "TB"),
    OX_HOPT("C", "TC"), OX_HOPT("y_scale", "T"), OX_HOPT("y_zero_point", "TYZ")};
static const ox_formal qgemm_out[] = {OX_HONE("Y", "TY")};
static const ox_attr_schema qgemm_attrs[] = {{"alpha", OX_ATTR_FLOAT, false, "1.0"},
                                             {"transA", OX_ATTR_INT, false, "0"},
                                             {"transB", OX_ATTR_INT, false, "0"}};

/* ---- elementwise: 8-bit in and out, float scales ---- */
static const ox_type_constraint tc_q[] = {{"T", q8_types, 2}};
static const ox_formal qbin_in[] = {OX_HONE("A", "T"),
                                    OX_HONE("A_scale", "tensor(float)"),
                                    OX_HOPT("A_zero_point", "T"),
                                    OX_HONE("B", "T"),
                                    OX_HONE("B_scale", "tensor(float)"),
                                    OX_HOPT("B_zero_point", "T"),
                                    OX_HONE("C_scale", "tensor(float)"),
                                    OX_HOPT("C_zero_point", "T")};
static const ox_formal c_out[] = {OX_HONE("C", "T")};
static const ox_formal qun_in[] = {
    OX_HONE("X", "T"), OX_HONE("X_scale", "tensor(float)"), OX_HOPT("X_zero_point", "T"),
    OX_HONE("Y_scale", "tensor(float)"), OX_HOPT("Y_zero_point", "T")};
static const ox_formal y_out[] = {OX_HONE("Y", "T")};
static const ox_attr_schema leaky_attrs[] = {{"alpha", OX_ATTR_FLOAT, false, "0.01"}};
static const ox_formal qsoftmax_in[] = {
    OX_HONE("X", "T"), OX_HONE("X_scale", "tensor(float)"), OX_HOPT("x_zero_point", "T"),
    OX_HONE("y_scale", "tensor(float)"), OX_HONE("y_zero_point", "T")};
static const ox_attr_schema softmax_attrs[] = {{"axis", OX_ATTR_INT, false, "-1"},
                                               {"opset", OX_ATTR_INT, true, NULL}};

static const ox_type_constraint tc_where[] = {{"T", q8_types, 2}};
static const ox_formal qwhere_in[] = {OX_HONE("condition", "tensor(bool)"),
                                      OX_HONE("X", "T"),
                                      OX_HONE("x_scale", "tensor(float)"),
                                      OX_HONE("x_zero_point", "T"),
                                      OX_HONE("Y", "T"),
                                      OX_HONE("y_scale", "tensor(float)"),
                                      OX_HONE("y_zero_point", "T"),
                                      OX_HONE("z_scale", "tensor(float)"),
                                      OX_HONE("z_zero_point", "T")};
static const ox_formal z_out[] = {OX_HONE("Z", "T")};

static const ox_type_constraint tc_concat[] = {
    {"TF", f32_types, 1}, {"T8", q8_types, 2}, {"TV", f32_q8_types, 3}};
static const ox_formal qconcat_in[] = {OX_HONE("Y_scale", "TF"), OX_HONE("Y_zero_point", "T8"),
                                       OX_HVAR_MIXED("inputs", "TV", 3)};
static const ox_formal y8_out[] = {OX_HONE("Y", "T8")};
static const ox_attr_schema concat_attrs[] = {{"axis", OX_ATTR_INT, true, NULL}};

/* ---- pooling ---- */
static const ox_formal qpool_in[] = {
    OX_HONE("X", "T"), OX_HONE("x_scale", "tensor(float)"), OX_HOPT("x_zero_point", "T"),
    OX_HONE("y_scale", "tensor(float)"), OX_HOPT("y_zero_point", "T")};
static const ox_attr_schema gap_attrs[] = {{"channels_last", OX_ATTR_INT, false, "0"}};
static const ox_attr_schema ap_attrs[] = {{"auto_pad", OX_ATTR_STRING, false, "\"NOTSET\""},
                                          {"ceil_mode", OX_ATTR_INT, false, "0"},
                                          {"channels_last", OX_ATTR_INT, false, "0"},
                                          {"count_include_pad", OX_ATTR_INT, false, "0"},
                                          {"kernel_shape", OX_ATTR_INTS, true, NULL},
                                          {"pads", OX_ATTR_INTS, false, NULL},
                                          {"strides", OX_ATTR_INTS, false, NULL}};

/* ---- convolution ---- */
static const ox_type_constraint tc_conv[] = {
    {"T1", q8_types, 2}, {"T2", q8_types, 2}, {"T3", q8_types, 2}, {"T4", i32_types, 1}};
static const ox_formal qconv_in[] = {OX_HONE("x", "T1"),
                                     OX_HONE("x_scale", "tensor(float)"),
                                     OX_HONE("x_zero_point", "T1"),
                                     OX_HONE("w", "T2"),
                                     OX_HONE("w_scale", "tensor(float)"),
                                     OX_HONE("w_zero_point", "T2"),
                                     OX_HONE("y_scale", "tensor(float)"),
                                     OX_HONE("y_zero_point", "T3"),
                                     OX_HOPT("B", "T4")};
static const ox_formal qconv_out[] = {OX_HONE("y", "T3")};
static const ox_attr_schema conv_attrs[] = {{"auto_pad", OX_ATTR_STRING, false, "\"NOTSET\""},
                                            {"channels_last", OX_ATTR_INT, false, "0"},
                                            {"dilations", OX_ATTR_INTS, false, NULL},
                                            {"group", OX_ATTR_INT, false, "1"},
                                            {"kernel_shape", OX_ATTR_INTS, false, NULL},
                                            {"pads", OX_ATTR_INTS, false, NULL},
                                            {"strides", OX_ATTR_INTS, false, NULL}};

/* ---- QAttention ---- */
static const char *const u8_types[] = {"tensor(uint8)", NULL};
static const ox_type_constraint tc_qattn[] = {
    {"T1", u8_types, 1}, {"T2", q8_types, 2}, {"T3", f32_types, 1}, {"T4", i32_types, 1}};
static const ox_formal qattn_in[] = {OX_HONE("input", "T1"),
                                     OX_HONE("weight", "T2"),
                                     OX_HONE("bias", "T3"),
                                     OX_HONE("input_scale", "T3"),
                                     OX_HONE("weight_scale", "T3"),
                                     OX_HOPT("mask_index", "T4"),
                                     OX_HOPT("input_zero_point", "T1"),
                                     OX_HOPT("weight_zero_point", "T2"),
                                     OX_HOPT("past", "T3")};
static const ox_formal qattn_out[] = {OX_HONE("output", "T3"), OX_HOPT("present", "T3")};
static const ox_attr_schema qattn_attrs[] = {
    {"do_rotary", OX_ATTR_INT, false, "0"}, {"mask_filter_value", OX_ATTR_FLOAT, false, "-10000.0"},
    {"num_heads", OX_ATTR_INT, true, NULL}, {"past_present_share_buffer", OX_ATTR_INT, false, "0"},
    {"scale", OX_ATTR_FLOAT, false, "0.0"}, {"unidirectional", OX_ATTR_INT, false, "0"}};

const ox_schema *const ox_schema_contrib_quant[] = {
    MS("DynamicQuantizeMatMul", dqmm_in, 3, y_f_out, 1, OX_HTC(tc_dqmm), OX_HNONE,
       "Y = MatMul(A, dequantize(B)) (+ bias), A quantized per tensor at run time as "
       "DynamicQuantizeLinear does (uint8, scale (max - min) / 255 with 0 in the range), then an "
       "exact integer product scaled by a_scale * b_scale. B is 2-D [K, N]; b_scale and "
       "b_zero_point are one value or one per column; bias has N values."),
    MS("MatMulIntegerToFloat", mmitf_in, 4, y_t3_out, 1, OX_HTC(tc_mmitf), OX_HNONE,
       "Y = float((A - a_zero_point) x (B - b_zero_point)) * a_scale * b_scale (+ bias): the "
       "exact integer product of MatMulInteger scaled to float. A is [..., M, K] with per-tensor "
       "a_scale and a_zero_point; B is [K, N], or [batch..., K, N] beside an A of the same batch "
       "dimensions, with b_scale and b_zero_point one value or one per column (onnxruntime refuses "
       "per-column ones beside a batched B; onnxc takes them); bias has N values. "
       "Scales, bias and Y are float or float16 (computed in float, "
       "Y rounded to float16 once)."),
    MS("QGemm", qgemm_in, 6, qgemm_out, 1, OX_HTC(tc_qgemm), OX_HAT(qgemm_attrs),
       "Quantized Gemm: acc = (A' - a_zero_point)(B' - b_zero_point) + C in int32 (A' = A or "
       "A^T by transA, B' likewise by transB; C an int32 bias of shape (), (N), (1, N), (M, 1) or "
       "(M, N)); then Y = acc * alpha * a_scale * b_scale as float when y_zero_point is absent "
       "(divided by y_scale when y_scale alone is given), or, with y_scale and y_zero_point, "
       "saturate(round_half_even(acc * alpha * a_scale * b_scale / y_scale) + y_zero_point) of "
       "y_zero_point's type. b_scale and b_zero_point: one value or one per column (N)."),
    MS("QLinearAdd", qbin_in, 7, c_out, 1, OX_HTC(tc_q), OX_HNONE,
       "C = quantize(dequantize(A) + dequantize(B)) with numpy broadcasting; per-tensor scales "
       "and zero points (absent: 0), rounding half to even, saturating."),
    MS("QLinearMul", qbin_in, 7, c_out, 1, OX_HTC(tc_q), OX_HNONE,
       "C = quantize(dequantize(A) * dequantize(B)) with numpy broadcasting; per-tensor scales "
       "and zero points (absent: 0), rounding half to even, saturating."),
    MS("QLinearSigmoid", qun_in, 4, y_out, 1, OX_HTC(tc_q), OX_HNONE,
       "Y = quantize(Sigmoid(dequantize(X))), per tensor; computed as a 256-byte table."),
    MS("QLinearLeakyRelu", qun_in, 4, y_out, 1, OX_HTC(tc_q), OX_HAT(leaky_attrs),
       "Y = quantize(LeakyRelu(dequantize(X), alpha)), per tensor; computed as a 256-byte "
       "table."),
    MS("QLinearSoftmax", qsoftmax_in, 5, y_out, 1, OX_HTC(tc_q), OX_HAT(softmax_attrs),
       "Y = quantize(Softmax(dequantize(X))) along axis, as onnxruntime computes it: a table "
       "of e^((v - 255 + shift) x_scale) aligned on each row's largest byte (the zero point "
       "cancels), float sums in order, y = saturate(round(e floor(1 / y_scale) / sum) + "
       "y_zero_point) (so y_scale enters as the integer floor(1 / y_scale)). opset is the "
       "Softmax opset the node replaces: below 13, X is flattened to 2-D at axis and the softmax "
       "runs over the second dimension, from 13 over axis alone (axis defaults to -1 for both, as "
       "onnxruntime's schema default)."),
    MS("QLinearWhere", qwhere_in, 9, z_out, 1, OX_HTC(tc_where), OX_HNONE,
       "Z = condition ? requantize(X) : requantize(Y), X and Y brought to z_scale and "
       "z_zero_point (numpy broadcasting of the three)."),
    MSV("QLinearConcat", qconcat_in, 5, y8_out, 1, OX_HTC(tc_concat), OX_HAT(concat_attrs),
        "Y = Concat of the inputs along axis, each given as a triple (tensor, scale, zero point) "
        "and requantized to Y_scale and Y_zero_point."),
    MS("QLinearAveragePool", qpool_in, 4, y_out, 1, OX_HTC(tc_q), OX_HAT(ap_attrs),
       "Y = quantize(AveragePool(dequantize(X))) with AveragePool's attributes; channels_last: X "
       "and Y are [N, spatial..., C]."),
    MS("QLinearGlobalAveragePool", qpool_in, 4, y_out, 1, OX_HTC(tc_q), OX_HAT(gap_attrs),
       "Y = quantize(mean of dequantize(X) over the spatial dimensions); channels_last: X is [N, "
       "spatial..., C] and Y [N, 1..., C], else X [N, C, spatial...] and Y [N, C, 1...]."),
    MS("QLinearConv", qconv_in, 8, qconv_out, 1, OX_HTC(tc_conv), OX_HAT(conv_attrs),
       "ONNX's QLinearConv with attribute channels_last: when 1, x and y are [N, spatial..., C] "
       "(w stays [M, C/group, kernel...])."),
    MS("QAttention", qattn_in, 5, qattn_out, 1, OX_HTC(tc_qattn), OX_HAT(qattn_attrs),
       "The int8 Attention: Q, K, V = float((input - input_zero_point) x (weight - "
       "weight_zero_point)) * input_scale * weight_scale + bias (input [B, S, D], weight [D, 3 "
       "hidden], weight_scale and weight_zero_point one value or 3 hidden), split into num_heads "
       "heads; K and V follow past [2, B, num_heads, P, head size] and make present. Scores "
       "scale Q K^T (scale 0: 1 / sqrt(head size)) plus mask_filter_value at each masked key: "
       "mask_index is key lengths (B), end and start positions (2 B), or a 0/1 mask (B, P + S) "
       "or (B, S, P + S); unidirectional masks the keys after each query. Output [B, S, "
       "hidden]. do_rotary and past_present_share_buffer are refused (onnxruntime's CPU kernel "
       "has neither)."),
};
const size_t ox_schema_contrib_quant_n = OX_HN_OF(ox_schema_contrib_quant);
