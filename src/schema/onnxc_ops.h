/* onnxc_ops.h - the contract of onnxc's own operator domain, ai.onnxc.
 *
 * The graph passes (src/opt/) write these operators, the kernels
 * (src/ops/fused/ and the families that share a kernel) run them, and the
 * schema table registers them like any other domain, so a model written by
 * `onnxc convert --optimize` checks, infers and loads anywhere onnxc runs.
 * Everything both sides must agree on is named here: the domain, the
 * activation names of FusedConv-like operators and the opcodes of
 * ElementwiseChain's `ops` attribute. */
#ifndef OX_SCHEMA_ONNXC_OPS_H
#define OX_SCHEMA_ONNXC_OPS_H

#define OX_ONNXC_DOMAIN "ai.onnxc"
#define OX_ONNXC_OPSET 1

/* The operators of the domain (opset 1). Each one's inputs, outputs,
 * attributes and what it fuses: src/schema/schema_onnxc.c; its shape
 * function: src/infer/infer_ops_onnxc.c; its kernel: src/ops/ (fused/ or
 * the family of the operator it extends). */
#define OX_ONNXC_ATTN_BHSD "AttentionBHSDFused"
#define OX_ONNXC_ELEMENTWISE_CHAIN "ElementwiseChain"
#define OX_ONNXC_FUSED_CONV "FusedConv"
#define OX_ONNXC_GATHER_TIED "GatherTiedFused"
#define OX_ONNXC_KV_APPEND "KVCacheAppend"
#define OX_ONNXC_LAYER_NORM "LayerNormFused"
#define OX_ONNXC_MATMUL_DQ "MatMulDQFused"
#define OX_ONNXC_MATMUL "MatMulFused"
#define OX_ONNXC_MATMUL_TRANS_B "MatMulTransBFused"
#define OX_ONNXC_MHA "MultiHeadAttentionFused"
#define OX_ONNXC_QADD "QAddFused"
#define OX_ONNXC_QLINEAR_CONV "QLinearConvFused"
#define OX_ONNXC_QLOOKUP "QLookupFused"
#define OX_ONNXC_QMATMUL_SCALED "QMatMulScaledFused"
#define OX_ONNXC_RMS_NORM "RMSNormFused"
#define OX_ONNXC_ROTARY "RotaryFused"
#define OX_ONNXC_SILU_MUL "SiLUMulFused"

/* FusedConv's attributes beyond Conv's (auto_pad, dilations, group,
 * kernel_shape, pads, strides): Y = bound(act(Conv(pre(X) or X * G, W, B)
 * + R)). */
#define OX_ONNXC_ATTR_ACTIVATION "activation" /* string: ox_onnxc_act_name */
#define OX_ONNXC_ATTR_ALPHA "alpha"           /* float, the activation's */
#define OX_ONNXC_ATTR_BETA "beta"             /* float, the activation's */
#define OX_ONNXC_ATTR_BOUND "bound"           /* int: 0 none, 1 Max, 2 Min */
#define OX_ONNXC_ATTR_BOUND_VALUE "bound_value"
#define OX_ONNXC_ATTR_PRE_SCALE "pre_scale"               /* floats, one per input channel */
#define OX_ONNXC_ATTR_PRE_BIAS "pre_bias"                 /* floats, as many */
#define OX_ONNXC_ATTR_PRE_RELU "pre_relu"                 /* int */
#define OX_ONNXC_ATTR_IN_SCALE "in_scale"                 /* int: X * G (input 4) */
#define OX_ONNXC_ATTR_IN_SHUFFLE "in_shuffle"             /* int: groups of the channel shuffle */
#define OX_ONNXC_ATTR_IN_SHUFFLE_SHAPE "in_shuffle_shape" /* ints: X's [N, C, H, W] */
/* ints [kh, kw, sh, sw]: Y is a MaxPool of that (unpadded) window and stride
 * over the convolution's result (src/opt/conv_maxpool.c); 3, 3, 2, 2 only */
#define OX_ONNXC_ATTR_MAX_POOL "max_pool"

/* The epilogue code of MatMulFused and QMatMulScaledFused (`act`, int):
 * GELU's erf form takes gelu_c0, gelu_c1, gelu_c2 (floats) and gelu_mul.
 * GELU's tanh form and SiLU are MatMulFused's only. */
enum {
  OX_ONNXC_MM_NONE = 0,
  OX_ONNXC_MM_RELU = 1,
  OX_ONNXC_MM_GELU = 2,
  OX_ONNXC_MM_GELU_TANH = 3,
  OX_ONNXC_MM_SILU = 4
};

/* A fused activation, written as the string attribute `activation` (the
 * names of the ONNX operators it stands for, as onnxruntime's FusedConv;
 * "SiLU" is Mul(x, Sigmoid(x))). Parameters in `activation_params`-like
 * float attributes are named by each operator's schema. */
typedef enum ox_onnxc_act {
  OX_ONNXC_ACT_NONE = 0,
  OX_ONNXC_ACT_RELU,
  OX_ONNXC_ACT_LEAKY_RELU, /* alpha */
  OX_ONNXC_ACT_CLIP,       /* alpha = min, beta = max */
  OX_ONNXC_ACT_HARD_SIGMOID,
  OX_ONNXC_ACT_HARD_SWISH,
  OX_ONNXC_ACT_SILU,
  OX_ONNXC_ACT_COUNT
} ox_onnxc_act;

/* "" / "none" -> NONE, "Relu", "LeakyRelu", "Clip", "HardSigmoid",
 * "HardSwish", "SiLU"; -1 for any other name */
int ox_onnxc_act_from_name(const char *name);
/* the attribute value for an activation ("none" for NONE) */
const char *ox_onnxc_act_name(ox_onnxc_act a);

/* ElementwiseChain opcodes: binary ops first, then ops of one value
 * operand (the `ops` attribute holds these numbers). */
enum {
  FZ_ADD,
  FZ_SUB,
  FZ_MUL,
  FZ_DIV,
  FZ_MAX,
  FZ_MIN,
  FZ_CLIP, /* params: lo, hi */
  FZ_RELU,
  FZ_LEAKY,    /* params: alpha */
  FZ_HSIGMOID, /* params: alpha, beta */
  FZ_HSWISH,
  FZ_NEG,
  FZ_ABS,
  FZ_SQRT,
  FZ_TANH,
  FZ_ERF,
  FZ_POW2, /* Pow by a float32 constant 2: x * x, as the Pow kernel */
  FZ_POW3, /* and 3: x * x * x */
  FZ_SIGMOID,
  FZ_N_OPS
};

#endif
