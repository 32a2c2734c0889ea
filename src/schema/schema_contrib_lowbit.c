/* schema_contrib_lowbit.c - schemas of onnxruntime's com.microsoft
 * MatMulNBits, GatherBlockQuantized and the contrib QuantizeLinear / DequantizeLinear, as
 * onnxruntime's docs/ContribOperators.md and its CPU kernels define them. Shape functions:
 * src/infer/infer_ops_contrib_lowbit.c; kernels: src/ops/contrib/lowbit.c. */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

/* ---- MatMulNBits ---- */
static const char *const nb_t1[] = {"tensor(float)", "tensor(float16)", NULL};
static const char *const nb_t2[] = {"tensor(uint8)", NULL};
static const char *const nb_t3[] = {"tensor(uint8)", "tensor(float)", "tensor(float16)", NULL};
static const char *const nb_t4[] = {"tensor(int32)", NULL};
static const ox_type_constraint nb_tc[] = {
    {"T1", nb_t1, 2}, {"T2", nb_t2, 1}, {"T3", nb_t3, 3}, {"T4", nb_t4, 1}};
static const ox_formal nb_in[] = {OX_HONE("A", "T1"),      OX_HONE("B", "T2"),
                                  OX_HONE("scales", "T1"), OX_HOPT("zero_points", "T3"),
                                  OX_HOPT("g_idx", "T4"),  OX_HOPT("bias", "T1")};
static const ox_formal nb_out[] = {OX_HONE("Y", "T1")};
static const ox_attr_schema nb_attrs[] = {
    {"K", OX_ATTR_INT, true, NULL},
    {"N", OX_ATTR_INT, true, NULL},
    {"bits", OX_ATTR_INT, false, "4"},
    {"block_size", OX_ATTR_INT, true, NULL},
    {"accuracy_level", OX_ATTR_INT, false, "0"},
};

/* ---- GatherBlockQuantized ---- */
static const char *const gbq_t1[] = {"tensor(uint8)", "tensor(int4)", "tensor(uint4)", NULL};
static const char *const gbq_t2[] = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", NULL};
static const char *const gbq_tind[] = {"tensor(int32)", "tensor(int64)", NULL};
static const ox_type_constraint gbq_tc[] = {
    {"T1", gbq_t1, 3}, {"T2", gbq_t2, 3}, {"Tind", gbq_tind, 2}};
static const ox_formal gbq_in[] = {OX_HONE("data", "T1"), OX_HONE("indices", "Tind"),
                                   OX_HONE("scales", "T2"), OX_HOPT("zero_points", "T1")};
static const ox_formal gbq_out[] = {OX_HONE("output", "T2")};
static const ox_attr_schema gbq_attrs[] = {
    {"gather_axis", OX_ATTR_INT, false, "0"},
    {"quantize_axis", OX_ATTR_INT, false, "1"},
    {"block_size", OX_ATTR_INT, false, "128"},
    {"bits", OX_ATTR_INT, false, "4"},
};

/* ---- QuantizeLinear / DequantizeLinear ---- */
static const char *const q_real[] = {"tensor(float)", "tensor(float16)", NULL};
static const char *const q_ints[] = {"tensor(int8)",
                                     "tensor(uint8)",
                                     "tensor(int16)",
                                     "tensor(uint16)",
                                     "tensor(int4)",
                                     "tensor(uint4)",
                                     NULL};
static const char *const dq_ints[] = {
    "tensor(int8)",  "tensor(uint8)", "tensor(int16)", "tensor(uint16)",
    "tensor(int32)", "tensor(int4)",  "tensor(uint4)", NULL};
static const ox_type_constraint q_tc[] = {{"T1", q_real, 2}, {"T2", q_ints, 6}};
static const ox_type_constraint dq_tc[] = {{"T1", dq_ints, 7}, {"T2", q_real, 2}};
static const ox_formal q_in[] = {OX_HONE("x", "T1"), OX_HONE("y_scale", "T1"),
                                 OX_HOPT("y_zero_point", "T2")};
static const ox_formal q_out[] = {OX_HONE("y", "T2")};
static const ox_formal dq_in[] = {OX_HONE("x", "T1"), OX_HONE("x_scale", "T2"),
                                  OX_HOPT("x_zero_point", "T1")};
static const ox_formal dq_out[] = {OX_HONE("y", "T2")};
static const ox_attr_schema q_attrs[] = {{"axis", OX_ATTR_INT, false, "1"}};

/* in order of name, as tests/unit/test_schema.c checks */
const ox_schema *const ox_schema_contrib_lowbit[] = {
    MS("DequantizeLinear", dq_in, 2, dq_out, 1, OX_HTC(dq_tc), OX_HAT(q_attrs),
       "y = (x - x_zero_point) * x_scale, per tensor (scalar scale) or per slice along axis "
       "(1-D scale); y has the scale's type. onnxruntime's contrib form of the standard "
       "operator, with 16-bit, 32-bit and 4-bit types."),
    MS("GatherBlockQuantized", gbq_in, 3, gbq_out, 1, OX_HTC(gbq_tc), OX_HAT(gbq_attrs),
       "Gather of a block-quantized table, dequantized: output = Gather(data, indices, "
       "gather_axis) with every element (q - z) * s, s and z those of its block of "
       "block_size (a power of two of at least 16) elements along quantize_axis. data is "
       "int4 or uint4 (bits 4), or uint8 holding 8 / bits fields per byte along its last "
       "axis (bits 2, 4 or 8; then gather_axis is 0 and quantize_axis the last axis, and the "
       "output's last dimension is data's times 8 / bits). scales has data's shape (in "
       "elements) with quantize_axis divided by block_size, rounded up; zero_points (data's "
       "type, packed like data for uint8) the scales' shape; without it z is 0 for int4 / "
       "uint4 and 2^(bits - 1) for uint8. Negative indices count from the end. The tied "
       "embedding of int4 language models."),
    MS("MatMulNBits", nb_in, 3, nb_out, 1, OX_HTC(nb_tc), OX_HAT(nb_attrs),
       "Y = A x dequantized(B)^T (+ bias): a weight-only quantized matrix product. B holds "
       "the N x K weights as uint8 [N, ceil(K / block_size), block_size * bits / 8], each "
       "block of a row packed low field first; bits is 2, 4 or 8, block_size a power of two "
       "of at least 16 (onnxruntime's CPU kernel takes 16 to 256; onnxc takes larger ones "
       "too). Weight (n, k) is (q - z) * s with the scale s of its block (scales [N * "
       "k_blocks] or [N, k_blocks]) and the zero point z: packed uint8 of `bits` bits per "
       "row ([N * ceil(k_blocks * bits / 8)] or 2-D), float of A's type like scales, or "
       "2^(bits - 1) when absent. g_idx [K] (int32) gives the block of each k in place of "
       "k / block_size (act-order). A's last dimension is K; Y is A's shape with N last. "
       "onnxc runs it on its weight-only low-bit decoder (weights packed once, never made "
       "float). accuracy_level 4 (onnxruntime: A quantized to int8 per block) takes onnxc's "
       "int8 form for one- and two-row products where the CPU has AVX512-VNNI, else float. "
       "Unlike onnxruntime 1.30, onnxc applies uint8 zero points also with g_idx and takes "
       "float zero points with 8 bits."),
    MS("QuantizeLinear", q_in, 2, q_out, 1, OX_HTC(q_tc), OX_HAT(q_attrs),
       "y = saturate(round(x / y_scale) + y_zero_point), rounding half to even, per tensor "
       "(scalar scale) or per slice along axis (1-D scale). y's type is the zero point's "
       "(uint8 without one). onnxruntime's contrib form of the standard operator, with "
       "16-bit and 4-bit types."),
};
const size_t ox_schema_contrib_lowbit_n = OX_HN_OF(ox_schema_contrib_lowbit);
