/* pass.h - what a graph pass of src/opt/ sees of the graph it rewrites.
 *
 * The host (src/opt/graph_view.c, driven by ox_opt_run in pipeline.c) keeps
 * a working copy of the main graph's nodes; a pass marks nodes dropped and
 * puts a replacement node in repl[i] (allocated in the arena), which takes
 * node i's place in the order. The host answers questions about names:
 * constant initializers and who reads a value. Passes use only the model
 * layer; each is one entry of the table in passes.c. */
#ifndef OX_OPT_PASS_H
#define OX_OPT_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "../ir/ir.h"
#include "../schema/onnxc_ops.h"

typedef struct ox_pass_view ox_pass_view;
/* a float32 constant's elements and shape */
typedef struct ox_pass_floats {
  const float *data;
  const int64_t *dims;
  size_t rank;
  int64_t numel;
} ox_pass_floats;
struct ox_pass_view {
  ox_arena *a;
  ox_err *e;
  ox_node *nodes; /* working copy; nodes[i] may be edited in place */
  size_t n_node;
  const int64_t *opsets; /* imported opset of each node's domain */
  bool *drop;
  ox_node **repl;
  bool low_bit_int8; /* the session asks for int8 decode products (dq_matmul.c) */
  /* The initializer the session takes as a constant, or NULL. */
  const ox_tensor *(*constant)(const ox_pass_view *v, const char *name);
  /* constant, or the `value` tensor of the Constant node that makes `name`
   * (exporters write shapes and scalars as Constant nodes) */
  const ox_tensor *(*constant_any)(const ox_pass_view *v, const char *name);
  /* The only node reading `name` (index; not dropped), or -1 when several,
   * none, or the value is a graph output or read inside a subgraph. */
  int64_t (*sole_reader)(const ox_pass_view *v, const char *name);
  /* true for graph outputs and names read inside subgraphs */
  bool (*pinned)(const ox_pass_view *v, const char *name);
  /* a pass made the readers of `from` read `to` (the host's counts follow) */
  void (*renamed)(const ox_pass_view *v, const char *from, const char *to);
  /* the float32 constant the host knows for `name` (initializers, Constant
   * and ConstantOfShape nodes, constants raised by Unsqueeze or Reshape):
   * true with *out filled (valid while the host runs), else false */
  bool (*float_const)(const ox_pass_view *v, const char *name, ox_pass_floats *out);
  /* node `at` now reads `name` in place of a reader the pass dropped */
  void (*reads)(const ox_pass_view *v, const char *name, size_t at);
  /* float_const without the initializers passes made (conv_fold.c): only
   * what the input graph holds as a float32 constant */
  bool (*graph_float_const)(const ox_pass_view *v, const char *name, ox_pass_floats *out);
  /* how many times main-graph nodes read `name` (as counted at the start,
   * plus what renamed() moved onto it) */
  size_t (*n_reads)(const ox_pass_view *v, const char *name);
  /* 1 + the index of the last node reading `name`, 0 when none does */
  size_t (*last_read)(const ox_pass_view *v, const char *name);
  /* `name` is known to hold float32: a declared type, a float initializer or
   * raised constant, or a weight a pass folded */
  bool (*is_float)(const ox_pass_view *v, const char *name);
  /* a new float32 initializer named after `base`, of the given shape; the
   * pass fills *data (valid while the host runs), the name comes in *name */
  int (*new_float_init)(ox_pass_view *v, const char *base, const int64_t *dims, size_t rank,
                        float **data, const char **name);
  /* the graph the passes rewrite, as given: its inputs, outputs and
   * initializers (its nodes are the working copy's start, not its state) */
  const ox_graph *graph;
  /* a new graph input `name` of type t (both in the arena), after g's own:
   * an input a run may leave out (kv_cache.c's optional cache buffers; the
   * session lists only the model's inputs) */
  int (*new_input)(ox_pass_view *v, const char *name, ox_type *t);
  void *host;
};

/* ---- pattern helpers (src/opt/match.c) ---- */
/* op_type is `op` in the default domain */
bool ox_opt_op_is(const ox_node *n, const char *op);
/* input i is given (not "" nor beyond the node's inputs) */
bool ox_opt_given(const ox_node *n, size_t i);
/* elements of an initializer, -1 for NULL or an overflowing shape */
int64_t ox_opt_elems(const ox_tensor *t);
bool ox_opt_is_q8(int32_t dtype);
/* the live node before `before` whose output 0 is `name`, or -1 */
int64_t ox_opt_producer(const ox_pass_view *v, const char *name, size_t before);
/* node `at` is a DequantizeLinear (opset >= 10, no blocks) with a constant
 * float32 scale and a constant 8-bit zero point of as many elements
 * (required when need_zp: it gives the input's type) */
bool ox_opt_dq_unit(const ox_pass_view *v, int64_t at, bool need_zp);
/* node `at` is a QuantizeLinear of `input` with a constant float32 scalar
 * scale and a constant 8-bit scalar zero point (or none: uint8) */
bool ox_opt_q_unit(const ox_pass_view *v, int64_t at, const char *input);
/* a new ai.onnxc node op with like's name and attributes, n_in inputs and
 * one output to fill, and room for n_extra_attrs more attributes */
ox_node *ox_opt_new_node(ox_pass_view *v, const ox_node *like, const char *op, size_t n_in,
                         size_t n_extra_attrs);
void ox_opt_add_int_attr(ox_node *n, const char *name, int64_t value);
void ox_opt_add_float_attr(ox_node *n, const char *name, float value);
/* an ints attribute (values copied into the arena); false on OOM */
bool ox_opt_add_ints_attr(ox_pass_view *v, ox_node *n, const char *name, const int64_t *vals,
                          size_t count);
/* the n values of a constant int64 tensor of n elements (a shape) */
bool ox_opt_const_ints(const ox_pass_view *v, const char *name, int64_t *out, int64_t n);
/* the value of an int8/uint8 constant of one element */
bool ox_opt_scalar_q8(const ox_tensor *t, int32_t *out);
/* the value of a float32 constant of one element */
bool ox_opt_scalar_f32(const ox_tensor *t, float *out);
/* readers of `from` after node `after` read `to` (their input arrays are
 * copied first: they may be the caller's model's); the host is told */
int ox_opt_rename_reads(ox_pass_view *v, size_t after, const char *from, const char *to);
/* a float32 scalar the host knows for `name`: an initializer, a Constant
 * node (exporters write scalars as these), or another float_const */
bool ox_opt_scalar_const(const ox_pass_view *v, const char *name, float *out);
/* a ReduceMean (or other reduction) over the last axis only, keeping it:
 * axes = [-1] as attribute (opset < 18) or constant input */
bool ox_opt_axes_last(const ox_pass_view *v, const ox_node *n, int64_t opset);

/* op_type has the default domain ("" or "ai.onnx") */
bool ox_opt_default_domain(const ox_node *n);
/* one of n's attributes holds a graph */
bool ox_opt_has_subgraph(const ox_node *n);
/* "fused FIRST .. LAST": how errors name a node made of nodes first..last
 * (their names, or index and op), so that a user finds them in the model */
char *ox_opt_fused_name(ox_pass_view *v, size_t first, size_t last);

/* the other input of binary node n when one input is `name`, else NULL */
const char *ox_opt_other_of(const ox_node *n, const char *name);
/* node j is `op` (opset >= min) with one named output */
bool ox_opt_is_node(const ox_pass_view *v, int64_t j, const char *op, int64_t min);
/* the sole reader of `name` after node `after` when it is `op` (opset >=
 * min, one named output), else -1 */
int64_t ox_opt_next_op(const ox_pass_view *v, const char *name, int64_t after, const char *op,
                       int64_t min);
/* GELU's erf form on h (made by node `at`): d = Div(h, c0) or Mul(h, c0),
 * Erf, Add c1, g = Mul(h, .), Mul c2 — c0..c2 constant float scalars, h
 * read by d and g only, each intermediate by the next node only */
typedef struct ox_opt_gelu {
  float c[3];
  bool mul_first;   /* Mul by c0 instead of Div */
  int64_t nodes[5]; /* d, Erf, Add, g, the last Mul */
} ox_opt_gelu;
bool ox_opt_match_gelu(const ox_pass_view *v, const char *h, int64_t at, ox_opt_gelu *m);

/* DequantizeLinear -> Conv -> [Relu] -> QuantizeLinear units with constant
 * 8-bit weights become ai.onnxc QLinearConvFused nodes (src/opt/qdq_conv.c). */
int ox_opt_qdq_conv(ox_pass_view *v);

/* DequantizeLinear -> {Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid,
 * HardSwish} -> QuantizeLinear becomes an ai.onnxc QLookupFused (a 256-entry
 * table), and two DequantizeLinear -> Add [-> Relu] -> QuantizeLinear an
 * ai.onnxc QAddFused; DequantizeLinear -> {MaxPool, Reshape, Transpose,
 * Flatten, Squeeze, Unsqueeze, Identity} -> QuantizeLinear with the same
 * scale and zero point runs the op on the bytes (src/opt/qdq_eltwise.c). */
int ox_opt_qdq_eltwise(ox_pass_view *v);

/* MatMulInteger (constant 8-bit B) -> Cast(float) -> Mul(scale) [-> Add(bias)]
 * becomes an ai.onnxc QMatMulScaledFused (src/opt/dyn_matmul.c). */
int ox_opt_dyn_matmul(ox_pass_view *v);

/* MatMul(A, DequantizeLinear(Wq const 8/4/2-bit [K, N], scale [, zp])) with
 * one scale, one per column or blocks down the columns becomes an ai.onnxc
 * MatMulDQFused (src/opt/dq_matmul.c). */
int ox_opt_dq_matmul(ox_pass_view *v);

/* MatMul(A, Transpose(B)) with the Transpose swapping B's last two axes (or
 * B a constant 2-D float) becomes an ai.onnxc MatMulTransBFused(A, B)
 * (src/opt/matmul_transb.c). */
int ox_opt_matmul_transb(ox_pass_view *v);

/* Gather<axis = 0>(W, ids) of a constant float W that a MatMulTransBFused
 * also reads (a tied embedding) becomes an ai.onnxc GatherTiedFused(W, ids),
 * reading the rows out of the head's packed W^T (src/opt/tied_gather.c).
 * Runs after ox_opt_matmul_transb. */
int ox_opt_tied_gather(ox_pass_view *v);

/* MatMul(x, W const 2-D float) -> Add(bias const, 1 or N values), or
 * Gemm(x, W const 2-D float [, C const]) with transA 0, [-> Relu, GELU's
 * erf or tanh form spelled out, Gelu, or SiLU] becomes an ai.onnxc
 * MatMulFused (src/opt/matmul_epi.c). */
int ox_opt_matmul_epi(ox_pass_view *v);

/* Layer normalisation written out (ReduceMean, Sub, Pow 2, ReduceMean, Add
 * epsilon, Sqrt, Div, Mul gamma, Add beta over the last axis) becomes an
 * ai.onnxc LayerNormFused (src/opt/layernorm.c). */
int ox_opt_layernorm(ox_pass_view *v);

/* RMS normalisation written out (Pow 2 or Mul, ReduceMean, Add epsilon,
 * Sqrt and Div, or a reciprocal square root and Mul, [Mul gamma]) over the
 * last axis becomes an ai.onnxc RMSNormFused (src/opt/rmsnorm.c). Runs
 * after ox_opt_layernorm. */
int ox_opt_rmsnorm(ox_pass_view *v);

/* The rotate-half rotary embedding x * cos + Concat(Neg(Slice(x, h:)),
 * Slice(x, :h)) * sin becomes an ai.onnxc RotaryFused(x, cos, sin)
 * (src/opt/rotary.c). Runs before ox_opt_attention. */
int ox_opt_rotary(ox_pass_view *v);

/* g * Sigmoid(g) * u (the gate of a SwiGLU feed-forward) becomes an
 * ai.onnxc SiLUMulFused(g, u) (src/opt/swiglu.c). Runs before
 * ox_opt_elementwise_chain. */
int ox_opt_swiglu(ox_pass_view *v);

/* Later duplicates of a node (same domain, op, inputs, attributes) go, their
 * readers reading the first one's outputs (src/opt/cse.c). */
int ox_opt_cse(ox_pass_view *v);
/* Identity nodes (identity.c): their readers read the input instead */
int ox_opt_identity(ox_pass_view *v);

/* Exported multi-head attention (Reshape, Transpose, MatMul, scale, mask,
 * Softmax, MatMul, Transpose) becomes an ai.onnxc MultiHeadAttentionFused
 * (src/opt/attention.c). */
int ox_opt_attention(ox_pass_view *v);
/* Attention on heads already split ([B, H, S, D]: HF eager, SDPA, GPT-2's
 * Where mask, grouped-query repeat_kv) becomes an ai.onnxc
 * AttentionBHSDFused (src/opt/attention_bhsd.c). Runs after attention.c. */
int ox_opt_attention_bhsd(ox_pass_view *v);
int ox_opt_kv_cache(ox_pass_view *v);

/* X -> [BatchNormalization] -> [Mul c] -> [Add c] -> [Relu] -> 1 x 1 Conv
 * (per-channel constants, each value read once) becomes the convolution
 * with a prologue (attributes pre_scale, pre_bias, pre_relu), read with X
 * (src/opt/conv_prologue.c). Runs after conv_epilogue.c's FusedConv epilogues. */
int ox_opt_conv_prologue(ox_pass_view *v);
/* channel_shuffle.c: Reshape [N, g, C/g, H, W] -> Transpose(0, 2, 1, 3, 4)
 * -> Reshape [N, C, H, W] (ShuffleNet's channel shuffle) read only by a
 * depthwise convolution -> that convolution (FusedConv) reading the
 * unshuffled X, attributes in_shuffle = g and in_shuffle_shape. Runs after
 * the epilogue fusion (conv_epilogue.c). */
int ox_opt_channel_shuffle(ox_pass_view *v);
/* conv_gate.c: Mul(Y, G) with G made by a Sigmoid, HardSigmoid or FusedConv, read only
 * by a 1 x 1 convolution -> that convolution (FusedConv) with in_scale = 1
 * and G as input 4 (squeeze-and-excitation). Runs after conv_epilogue.c's
 * epilogue fusion. */
int ox_opt_conv_gate(ox_pass_view *v);
/* conv_maxpool.c: a Conv or FusedConv of a stem's geometry (constant W of
 * at most 4 input channels, one group) read only by an unpadded 3 x 3,
 * stride-2 MaxPool -> one FusedConv with max_pool = [3, 3, 2, 2]. Runs
 * after conv_epilogue.c's epilogue fusion. */
int ox_opt_conv_maxpool(ox_pass_view *v);

/* Conv with constant weights followed by an inference BatchNormalization,
 * or a Mul / Add by a scalar or per-channel constant: new weights and bias,
 * the following nodes dropped (src/opt/conv_fold.c). */
int ox_opt_conv_fold(ox_pass_view *v);
/* float32 Conv -> [Add/Sum residual] -> [activation] -> [Max/Min scalar]
 * becomes an ai.onnxc FusedConv (src/opt/conv_epilogue.c). */
int ox_opt_conv_epilogue(ox_pass_view *v);
/* groups of float32 elementwise nodes rooted at one value become one
 * ai.onnxc ElementwiseChain (src/opt/elementwise_chain.c). */
int ox_opt_elementwise_chain(ox_pass_view *v);
/* Constant and ConstantOfShape nodes that nothing reads any more go
 * (src/opt/dead.c). */
int ox_opt_dead_constants(ox_pass_view *v);

/* Drops the nodes of op `op` (default domain) whose outputs no live node
 * reads and that are no graph outputs (src/opt/dead.c). */
void ox_opt_drop_unread(ox_pass_view *v, const char *op);

#endif
