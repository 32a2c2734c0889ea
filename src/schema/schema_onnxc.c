/* schema_onnxc.c - the schemas of onnxc's own operators, domain ai.onnxc
 * (opset 1), written by hand: the graph passes (src/opt/) make these nodes
 * and the kernels (src/ops/) run them, and these entries are the contract
 * between both, so that `onnxc check --strict`, `onnxc infer` and
 * `onnxc schema X --domain ai.onnxc` know an optimised graph like any other.
 *
 * Each entry lists the inputs, outputs and attributes exactly as the passes
 * write them and the kernels read them (types and defaults included); the
 * names come from the contract header onnxc_ops.h. Shape functions are in
 * src/infer/infer_ops_onnxc.c. The table is sorted by name (schema.c
 * searches it like the generated ones). */
#include <stddef.h>

#include "onnxc_ops.h"
#include "schema_table.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* a formal parameter: one value, or zero or one */
#define ONE(name, type) \
  { name, type, OX_PARAM_SINGLE, true, false, 1 }
#define OPT(name, type) \
  { name, type, OX_PARAM_OPTIONAL, true, false, 1 }
#define F32 "tensor(float)"

/* ---- type constraints ---- */
static const char *const q8_types[] = {"tensor(int8)", "tensor(uint8)", NULL};
static const char *const low_bit_types[] = {"tensor(int8)",
                                            "tensor(uint8)",
                                            "tensor(int4)",
                                            "tensor(uint4)",
                                            "tensor(int2)",
                                            "tensor(uint2)",
                                            NULL};
static const char *const index_types[] = {"tensor(int32)", "tensor(int64)", NULL};
/* MatMul-13's */
static const char *const matmul_types[] = {"tensor(float16)", "tensor(float)",    "tensor(double)",
                                           "tensor(uint32)",  "tensor(uint64)",   "tensor(int32)",
                                           "tensor(int64)",   "tensor(bfloat16)", NULL};
/* LayerNormalization-17's */
static const char *const norm_types[] = {"tensor(float16)", "tensor(float)", "tensor(double)",
                                         "tensor(bfloat16)", NULL};

static const ox_type_constraint tc_q8_2[] = {{"T1", q8_types, 2}, {"T2", q8_types, 2}};
static const ox_type_constraint tc_q8_3[] = {
    {"T1", q8_types, 2}, {"T2", q8_types, 2}, {"T3", q8_types, 2}};
static const ox_type_constraint tc_low_bit[] = {{"T2", low_bit_types, 6}};
static const ox_type_constraint tc_index[] = {{"Tind", index_types, 2}};
static const ox_type_constraint tc_matmul[] = {{"T", matmul_types, 8}};
static const ox_type_constraint tc_norm[] = {{"T", norm_types, 4}};

/* ---- attributes shared by several operators ---- */
/* Conv's, copied from the Conv a FusedConv or QLinearConvFused replaces */
/* clang-format off */
#define CONV_ATTRS                                                                   \
  {"auto_pad", OX_ATTR_STRING, false, "\"NOTSET\""},                                 \
  {"dilations", OX_ATTR_INTS, false, NULL},                                          \
  {"group", OX_ATTR_INT, false, "1"},                                                \
  {"kernel_shape", OX_ATTR_INTS, false, NULL},                                       \
  {"pads", OX_ATTR_INTS, false, NULL},                                               \
  {"strides", OX_ATTR_INTS, false, NULL}
/* the epilogue of MatMulFused and QMatMulScaledFused (OX_ONNXC_MM_*) */
#define MM_EPILOGUE_ATTRS                                                            \
  {"act", OX_ATTR_INT, false, "0"},                                                  \
  {"gelu_c0", OX_ATTR_FLOAT, false, NULL},                                           \
  {"gelu_c1", OX_ATTR_FLOAT, false, NULL},                                           \
  {"gelu_c2", OX_ATTR_FLOAT, false, NULL},                                           \
  {"gelu_mul", OX_ATTR_INT, false, "0"}
/* clang-format on */

/* ---- ElementwiseChain ---- */
static const ox_formal chain_in[] = {ONE("X", F32)};
static const ox_formal f32_out[] = {ONE("Y", F32)};
static const ox_attr_schema chain_attrs[] = {
    {"ops", OX_ATTR_INTS, true, NULL},      {"args", OX_ATTR_INTS, true, NULL},
    {"params", OX_ATTR_FLOATS, true, NULL}, {"crank", OX_ATTR_INTS, false, NULL},
    {"cdims", OX_ATTR_INTS, false, NULL},   {"cdata", OX_ATTR_FLOATS, false, NULL},
};

/* ---- FusedConv ---- */
static const ox_formal fconv_in[] = {ONE("X", F32), ONE("W", F32), OPT("B", F32), OPT("R", F32),
                                     OPT("G", F32)};
static const ox_attr_schema fconv_attrs[] = {
    CONV_ATTRS,
    {OX_ONNXC_ATTR_ACTIVATION, OX_ATTR_STRING, false, "\"none\""},
    {OX_ONNXC_ATTR_ALPHA, OX_ATTR_FLOAT, false, "0.0"},
    {OX_ONNXC_ATTR_BETA, OX_ATTR_FLOAT, false, "0.0"},
    {OX_ONNXC_ATTR_BOUND, OX_ATTR_INT, false, "0"},
    {OX_ONNXC_ATTR_BOUND_VALUE, OX_ATTR_FLOAT, false, "0.0"},
    {OX_ONNXC_ATTR_PRE_SCALE, OX_ATTR_FLOATS, false, NULL},
    {OX_ONNXC_ATTR_PRE_BIAS, OX_ATTR_FLOATS, false, NULL},
    {OX_ONNXC_ATTR_PRE_RELU, OX_ATTR_INT, false, "0"},
    {OX_ONNXC_ATTR_IN_SCALE, OX_ATTR_INT, false, "0"},
    {OX_ONNXC_ATTR_IN_SHUFFLE, OX_ATTR_INT, false, NULL},
    {OX_ONNXC_ATTR_IN_SHUFFLE_SHAPE, OX_ATTR_INTS, false, NULL},
    {OX_ONNXC_ATTR_MAX_POOL, OX_ATTR_INTS, false, NULL},
};

/* ---- GatherTiedFused ---- */
static const ox_formal tied_in[] = {ONE("data", F32), ONE("indices", "Tind")};
static const ox_formal tied_out[] = {ONE("output", F32)};
static const ox_attr_schema tied_attrs[] = {{"axis", OX_ATTR_INT, false, "0"}};

/* ---- LayerNormFused ---- */
static const ox_formal ln_in[] = {ONE("X", "T"), ONE("Scale", "T"), OPT("B", "T"),
                                  OPT("Skip", "T")};
static const ox_formal t_out[] = {ONE("Y", "T")};
static const ox_attr_schema ln_attrs[] = {{"axis", OX_ATTR_INT, false, "-1"},
                                          {"epsilon", OX_ATTR_FLOAT, false, "1e-05"}};

/* ---- MatMulDQFused ---- */
static const ox_formal mmdq_in[] = {ONE("A", F32), ONE("W", "T2"), ONE("scale", F32),
                                    OPT("zero_point", "T2")};
static const ox_attr_schema mmdq_attrs[] = {{"block_size", OX_ATTR_INT, false, "0"},
                                            {"int8_decode", OX_ATTR_INT, false, "0"}};

/* ---- MatMulFused ---- */
static const ox_formal mmf_in[] = {ONE("A", F32), ONE("W", F32), OPT("bias", F32)};
static const ox_attr_schema mm_epilogue_attrs[] = {MM_EPILOGUE_ATTRS};
static const ox_attr_schema mmf_attrs[] = {MM_EPILOGUE_ATTRS,
                                           {"trans_b", OX_ATTR_INT, false, "0"},
                                           {"alpha", OX_ATTR_FLOAT, false, "1.0"},
                                           {"beta", OX_ATTR_FLOAT, false, "1.0"},
                                           {"a_matrix", OX_ATTR_INT, false, "0"}};

/* ---- MatMulTransBFused ---- */
static const ox_formal mmtb_in[] = {ONE("A", "T"), ONE("B", "T")};

/* ---- MultiHeadAttentionFused ---- */
static const ox_formal mha_in[] = {ONE("Q", F32), ONE("K", F32), ONE("V", F32), OPT("mask", F32)};
static const ox_attr_schema mha_attrs[] = {
    {"num_heads", OX_ATTR_INT, true, NULL}, {"head_dim", OX_ATTR_INT, true, NULL},
    {"scale", OX_ATTR_FLOAT, false, "1.0"}, {"scale_div", OX_ATTR_INT, false, "1"},
    {"q_b", OX_ATTR_INT, false, "-1"},      {"q_s", OX_ATTR_INT, false, "-1"},
    {"k_b", OX_ATTR_INT, false, "-1"},      {"k_s", OX_ATTR_INT, false, "-1"},
    {"q_heads_inferred", OX_ATTR_INT, false, "0"},
};

/* ---- AttentionBHSDFused ---- */
static const ox_formal bhsd_in[] = {ONE("Q", F32),
                                    ONE("K", F32),
                                    ONE("V", F32),
                                    OPT("mask", F32),
                                    OPT("condition", "tensor(bool)"),
                                    OPT("kv_expand", "tensor(int64)"),
                                    OPT("kv_shape", "tensor(int64)"),
                                    OPT("qk_factor", F32),
                                    OPT("kv_len", "tensor(int64)")};
static const ox_attr_schema bhsd_attrs[] = {
    {"scale", OX_ATTR_FLOAT, false, "1.0"},      {"scale_div", OX_ATTR_INT, false, "0"},
    {"k_transposed", OX_ATTR_INT, false, "0"},   {"q_bshd", OX_ATTR_INT, false, "0"},
    {"k_bshd", OX_ATTR_INT, false, "0"},         {"v_bshd", OX_ATTR_INT, false, "0"},
    {"y_bshd", OX_ATTR_INT, false, "0"},         {"kv_groups", OX_ATTR_INT, false, "0"},
    {"where_fill", OX_ATTR_FLOAT, false, "0.0"}, {"where_keep", OX_ATTR_INT, false, "1"},
    {"kv_expand", OX_ATTR_INTS, false, NULL},    {"kv_allowzero", OX_ATTR_INT, false, "0"},
    {"qk_factor_pow", OX_ATTR_INT, false, "1"},
};

/* ---- KVCacheAppend ---- */
static const ox_formal kv_in[] = {ONE("past", F32), ONE("new", F32), OPT("cache", F32)};
static const ox_formal kv_out[] = {ONE("present", F32), OPT("total_len", "tensor(int64)"),
                                   OPT("present_shape", "tensor(int64)")};

/* ---- QAddFused ---- */
static const ox_formal qadd_in[] = {
    ONE("a", "T1"),      ONE("a_scale", F32),      OPT("a_zero_point", "T1"),
    ONE("b", "T2"),      ONE("b_scale", F32),      OPT("b_zero_point", "T2"),
    ONE("y_scale", F32), OPT("y_zero_point", "T3")};
static const ox_formal q_out3[] = {ONE("y", "T3")};
static const ox_attr_schema relu_attrs[] = {{"relu", OX_ATTR_INT, false, "0"}};

/* ---- QLinearConvFused ---- */
static const ox_formal qconv_in[] = {
    ONE("x", "T1"),      ONE("x_scale", F32),       ONE("x_zero_point", "T1"),
    ONE("w", "T2"),      ONE("w_scale", F32),       OPT("w_zero_point", "T2"),
    ONE("y_scale", F32), OPT("y_zero_point", "T3"), OPT("B", F32)};
static const ox_attr_schema qconv_attrs[] = {
    CONV_ATTRS,
    {"relu", OX_ATTR_INT, false, "0"},
    {"clip_lo", OX_ATTR_FLOAT, false, NULL},
    {"clip_hi", OX_ATTR_FLOAT, false, NULL},
};

/* ---- QLookupFused ---- */
static const ox_formal qlk_in[] = {
    ONE("x", "T1"),      ONE("x_scale", F32),       OPT("x_zero_point", "T1"),
    ONE("y_scale", F32), OPT("y_zero_point", "T2"), OPT("min", F32),
    OPT("max", F32)};
static const ox_formal q_out2[] = {ONE("y", "T2")};
static const ox_attr_schema qlk_attrs[] = {
    {"op", OX_ATTR_STRING, true, NULL},    {"alpha", OX_ATTR_FLOAT, false, NULL},
    {"beta", OX_ATTR_FLOAT, false, "0.5"}, {"min", OX_ATTR_FLOAT, false, NULL},
    {"max", OX_ATTR_FLOAT, false, NULL},
};

/* ---- QMatMulScaledFused ---- */
static const ox_formal qmm_in[] = {
    ONE("A", "T1"),    ONE("B", "T2"),  OPT("a_zero_point", "T1"), OPT("b_zero_point", "T2"),
    ONE("scale", F32), OPT("bias", F32)};

/* ---- RMSNormFused ---- */
static const ox_formal rms_in[] = {ONE("X", F32), OPT("Scale", F32)};
static const ox_attr_schema rms_attrs[] = {{"epsilon", OX_ATTR_FLOAT, false, "1e-05"}};

/* ---- RotaryFused ---- */
static const ox_formal rot_in[] = {ONE("X", F32), ONE("cos", F32), ONE("sin", F32)};
static const ox_attr_schema rot_attrs[] = {{"split", OX_ATTR_INT, true, NULL}};

/* ---- SiLUMulFused ---- */
static const ox_formal silu_in[] = {ONE("A", F32), ONE("B", F32)};

/* TC(x) / AT(x): a table and its length; NONE: neither */
#define TC(x) x, N_OF(x)
#define AT(x) x, N_OF(x)
#define NONE NULL, 0
#define OP(...) OP_(__VA_ARGS__)
#define OP_(nm, in, lo, out, tc, n_tc, at, n_at, text)                                    \
  {                                                                                       \
    .domain = OX_ONNXC_DOMAIN, .name = nm, .since_version = OX_ONNXC_OPSET, .inputs = in, \
    .n_inputs = N_OF(in), .outputs = out, .n_outputs = N_OF(out), .constraints = tc,      \
    .n_constraints = n_tc, .attrs = at, .n_attrs = n_at, .min_inputs = lo,                \
    .max_inputs = (int)N_OF(in), .min_outputs = 1, .max_outputs = 1, .doc = text          \
  }

const ox_schema ox_schema_onnxc_table[] = {
    OP(OX_ONNXC_ATTN_BHSD, bhsd_in, 3, f32_out, NONE, AT(bhsd_attrs),
       "Attention on heads already split: Y = Softmax(Where(condition, Q K^T * scale, "
       "where_fill) + mask) V per head (/ scale with `scale_div` 1; `where_keep` 0: the fill "
       "where the condition is true), mask and condition broadcast to [B, H, S, T]. Q is "
       "[B, H, S, D], K [B, Hk, T, D] ([B, Hk, D, T] with `k_transposed` 1), V [B, Hk, T, Dv]; "
       "`q_bshd`, `k_bshd`, `v_bshd` 1: that input is [B, S, H, D] instead (the head split's "
       "Transpose folded). `kv_groups` 1: grouped-query attention, head h reads K and V head "
       "h / (H / Hk) (repeat_kv folded: Reshape(Expand(Unsqueeze(K, 2), e), r), e the "
       "attribute `kv_expand` when constant, else inputs kv_expand = e and kv_shape = r with "
       "the Reshape's `kv_allowzero`; checked at run time to repeat K's and V's heads only); "
       "else Hk is 1 or H, as MatMul broadcasts. Y is [B, H, S, Dv], or [B, S, H, Dv] with "
       "`y_bshd` 1 (the Transpose after it folded). qk_factor: one value Q (and K with "
       "`qk_factor_pow` 2) was multiplied by (SDPA's computed sqrt(scale)), so the scores "
       "are multiplied by it once (twice) before the scale. kv_len (int64, one value): K and V "
       "are buffers longer than the sequence (a KV cache of fixed length, KVCacheAppend's "
       "present) of which the first kv_len rows of each head are read; T is kv_len (K and V "
       "[B, Hk, T, D] only, kv_groups allowed)."),
    OP(OX_ONNXC_ELEMENTWISE_CHAIN, chain_in, 1, f32_out, NONE, AT(chain_attrs),
       "A chain of float32 elementwise operations rooted at X (Add, Sub, Mul, Div, Max, Min "
       "with a constant, Clip, Relu, LeakyRelu, HardSigmoid, HardSwish, Neg, Abs, Sqrt, Tanh, "
       "Erf, Pow by 2 or 3, Sigmoid), run block by block so that the intermediate values stay "
       "in cache. `ops` holds one opcode per instruction (FZ_* of onnxc_ops.h), `args` two "
       "operands per instruction (v >= 0: value v, 0 being X and k the result of instruction "
       "k-1; v < 0: constant -v-1), `params` two floats per instruction (Clip's bounds, "
       "alpha and beta); the constants are `cdata`, of ranks `crank` and dims `cdims`, each one "
       "value or one per index of a single axis. Y is the last instruction's result, X "
       "broadcast with the constants. Bit for bit the nodes it replaces."),
    OP(OX_ONNXC_FUSED_CONV, fconv_in, 2, f32_out, NONE, AT(fconv_attrs),
       "Conv (float32) with what surrounded it: Y = bound(activation(Conv(X', W, B) + R)). R "
       "(optional) is a residual of Y's shape (a following Add or Sum). `activation` is "
       "\"none\", \"Relu\", \"LeakyRelu\" (alpha), \"Clip\" (alpha = min, beta = max), "
       "\"HardSigmoid\" (alpha, beta), \"HardSwish\" or \"SiLU\" (x * Sigmoid(x)); `bound` 1 or "
       "2 is a following Max or Min with the scalar `bound_value`. X' is X, or the prologue "
       "max(X * pre_scale + pre_bias, 0 if pre_relu) per input channel (a BatchNormalization, "
       "Mul, Add and Relu before a 1x1 convolution), or X * G with `in_scale` = 1 (a "
       "squeeze-and-excitation gate, input G), or X taken as `in_shuffle_shape` after a channel "
       "shuffle of `in_shuffle` groups (ShuffleNet's Reshape, Transpose, Reshape). With "
       "`max_pool` = [3, 3, 2, 2], Y is the MaxPool (3 x 3 window, stride 2, no padding) of "
       "that result (no residual, prologue, gate or shuffle then). Conv's attributes as "
       "Conv's."),
    OP(OX_ONNXC_GATHER_TIED, tied_in, 2, tied_out, TC(tc_index), AT(tied_attrs),
       "Gather(data, indices) along axis 0 of a float [V, D] embedding that a "
       "MatMulTransBFused head also reads (tied weights): the rows are read out of the head's "
       "packed copy, so that the weights are held once. output is indices' shape + [D]."),
    /* several outputs: written out (OP has one) */
    {.domain = OX_ONNXC_DOMAIN,
     .name = OX_ONNXC_KV_APPEND,
     .since_version = OX_ONNXC_OPSET,
     .inputs = kv_in,
     .n_inputs = N_OF(kv_in),
     .outputs = kv_out,
     .n_outputs = N_OF(kv_out),
     .min_inputs = 2,
     .max_inputs = 3,
     .min_outputs = 1,
     .max_outputs = 3,
     .doc = "Concat(past, new, axis 2) of a decoder's KV cache that can also append in place "
            "(the kv_cache pass's rewrite of Optimum's layout): without cache, present is the "
            "Concat, [B, H, P + n, D]; with cache [B, H, M, D] (the generation loop's buffer), "
            "present is the cache with rows [P, P + n) of every head replaced by new [B, H, n, "
            "D], past giving only P (its data is not read); when the runtime gives present the "
            "cache's own buffer nothing else is written. total_len is P + n (one int64), "
            "present_shape [B, H, P + n, D]: the length and shape of the Concat's result, for "
            "AttentionBHSDFused's kv_len and the Shape nodes that read it. P + n beyond M is "
            "an error."},
    OP(OX_ONNXC_LAYER_NORM, ln_in, 2, t_out, TC(tc_norm), AT(ln_attrs),
       "LayerNormalization over the last axis (`axis` -1, `epsilon`) of X + Skip when Skip "
       "is given (a residual Add before it), from the written-out form (ReduceMean, Sub, Pow, "
       "ReduceMean, Add, Sqrt, Div, Mul, Add) or from LayerNormalization. Only Y is produced."),
    OP(OX_ONNXC_MATMUL_DQ, mmdq_in, 3, f32_out, TC(tc_low_bit), AT(mmdq_attrs),
       "MatMul(A, DequantizeLinear(W, scale, zero_point)) with constant 8-, 4- or 2-bit "
       "weights W [K, N]: scale is one value, one per column [N], or one per block of "
       "`block_size` rows [ceil(K / block_size), N]; the weights are packed at their own width "
       "and never made float. `int8_decode` 1 runs one- and two-row products in int8. Y is A's "
       "shape with K replaced by N."),
    OP(OX_ONNXC_MATMUL, mmf_in, 2, f32_out, NONE, AT(mmf_attrs),
       "act(alpha * MatMul(A, W) + beta * bias) with W a constant 2-D float matrix ([K, N], or "
       "[N, K] when `trans_b` is 1: Gemm's transB) and bias one value or one per column ([N] or "
       "[1, N]): the Add and the activation run on each block of Y as the GEMM finishes it. "
       "`a_matrix` 1 (a Gemm's): A must be 2-D. `act` 0 none, 1 Relu, 2 GELU's erf form x * (Erf(x "
       "/ c0) + c1) * c2 (`gelu_c0`.. "
       "`gelu_c2`; `gelu_mul` 1: x * c0 in place of x / c0), 3 GELU's tanh form (Gelu "
       "approximate = tanh), 4 SiLU x * Sigmoid(x). `alpha` and `beta` (1 by default) are "
       "Gemm's. With both 1 and act 0..2, bit for bit the nodes it replaces."),
    OP(OX_ONNXC_MATMUL_TRANS_B, mmtb_in, 2, t_out, TC(tc_matmul), NONE,
       "MatMul(A, Transpose(B)) with B's last two axes swapped (numpy MatMul otherwise), from "
       "a MatMul of a Transpose or of a constant 2-D float B: a constant B is packed once, "
       "anything else read in place."),
    OP(OX_ONNXC_MHA, mha_in, 3, f32_out, NONE, AT(mha_attrs),
       "Exported multi-head attention: Q, K and V hold `num_heads` heads of `head_dim` side by "
       "side ([.., S, H * D]; `q_b`, `q_s`, `k_b`, `k_s` are the targets of the exporter's "
       "Reshape to [b, s, H, D]: 0 copies the dim, -1 is inferred); per head, "
       "Softmax(Q_h K_h^T / scale (* scale with `scale_div` 0) + mask) V_h, the mask "
       "broadcast to [B, H, Sq, Sk]. Y is [B, Sq, H, D] (the Transpose after it included). "
       "`q_heads_inferred` 1: Q's Reshape inferred its head count (-1), so Q may also hold "
       "one head of `head_dim`, which every head of K and V then shares (MatMul's "
       "broadcasting)."),
    OP(OX_ONNXC_QADD, qadd_in, 7, q_out3, TC(tc_q8_3), AT(relu_attrs),
       "DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu if `relu`] -> "
       "QuantizeLinear(y_scale, y_zero_point), on the bytes: numpy broadcasting, per-tensor "
       "scales and zero points (absent: 0 of uint8); y is int8 or uint8 as y_zero_point."),
    OP(OX_ONNXC_QLINEAR_CONV, qconv_in, 7, q_out3, TC(tc_q8_3), AT(qconv_attrs),
       "DequantizeLinear -> Conv [-> Relu or Clip] -> QuantizeLinear with constant 8-bit "
       "weights, as one integer convolution: QLinearConv's inputs, B being the Conv's float "
       "bias; `relu` 1 for a Relu, `clip_lo` and `clip_hi` for a Clip with constant bounds "
       "(ReLU6). Conv's attributes as Conv's; y is int8 or uint8 as y_zero_point (absent: "
       "uint8)."),
    OP(OX_ONNXC_QLOOKUP, qlk_in, 4, q_out2, TC(tc_q8_2), AT(qlk_attrs),
       "DequantizeLinear -> `op` -> QuantizeLinear as a 256-entry table, `op` being Relu, "
       "LeakyRelu (alpha, default 0.01), Clip (bounds as inputs min and max, or attributes "
       "before opset 11), Sigmoid, Tanh, HardSigmoid (alpha, default 0.2, and beta) or "
       "HardSwish, with that op's attributes; y has x's shape, int8 or uint8 as y_zero_point "
       "(absent: uint8)."),
    OP(OX_ONNXC_QMATMUL_SCALED, qmm_in, 5, f32_out, TC(tc_q8_2), AT(mm_epilogue_attrs),
       "MatMulInteger(A, B, a_zero_point, b_zero_point) with a constant 8-bit B -> "
       "Cast(float) -> Mul(scale) [-> Add(bias)] [-> activation]: the scale, bias and "
       "activation (`act` and the GELU constants as MatMulFused's) run in the GEMM's registers "
       "with the same roundings; scale and bias are one value or one per column."),
    OP(OX_ONNXC_RMS_NORM, rms_in, 1, f32_out, NONE, AT(rms_attrs),
       "RMS normalisation over the last axis: Y = X / sqrt(mean(X^2) + epsilon) * Scale, the "
       "mean over X's last axis; Scale (optional) is one value or one per element of that axis "
       "(rank <= 1). From the written-out form (Pow 2 or Mul, ReduceMean, Add, Sqrt and Div, or "
       "Reciprocal / Pow -0.5 and Mul, then Mul by Scale), the statistics accumulated in double "
       "as RMSNormalization's. Y has X's shape."),
    OP(OX_ONNXC_ROTARY, rot_in, 3, f32_out, NONE, AT(rot_attrs),
       "The rotate-half rotary embedding along X's last axis: Y = X * cos + R * sin with R = "
       "Concat(-X[..., split:], X[..., :split]) (Hugging Face's rotate_half when split is half "
       "the axis), cos and sin broadcast with X as Mul and Add would (their last axis X's "
       "length or 1); each product and the sum rounded as the nodes it replaces. `split` >= 1; "
       "one at or past the axis' length leaves R = X. Y has the broadcast shape of X, cos and "
       "sin; X's last axis must not be broadcast."),
    OP(OX_ONNXC_SILU_MUL, silu_in, 2, f32_out, NONE, NONE,
       "The gate of a SwiGLU feed-forward: Y = A * Sigmoid(A) * B (SiLU(A) times B), with "
       "numpy broadcasting of A and B, from Sigmoid, Mul and Mul; the same roundings as the "
       "nodes it replaces."),
};
const size_t ox_schema_onnxc_table_n = N_OF(ox_schema_onnxc_table);

const ox_schema *const ox_schema_onnxc_ptrs[] = {
    &ox_schema_onnxc_table[0],  &ox_schema_onnxc_table[1],  &ox_schema_onnxc_table[2],
    &ox_schema_onnxc_table[3],  &ox_schema_onnxc_table[4],  &ox_schema_onnxc_table[5],
    &ox_schema_onnxc_table[6],  &ox_schema_onnxc_table[7],  &ox_schema_onnxc_table[8],
    &ox_schema_onnxc_table[9],  &ox_schema_onnxc_table[10], &ox_schema_onnxc_table[11],
    &ox_schema_onnxc_table[12], &ox_schema_onnxc_table[13], &ox_schema_onnxc_table[14],
    &ox_schema_onnxc_table[15], &ox_schema_onnxc_table[16],
};
_Static_assert(N_OF(ox_schema_onnxc_ptrs) == N_OF(ox_schema_onnxc_table),
               "one pointer per ai.onnxc schema");
