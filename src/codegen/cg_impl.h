/* cg_impl.h - what the files of src/codegen share: the values of the graph
 * with their static shapes and places, the generation context, the emit
 * helpers and the operator tables (one table per family file). */
#ifndef OX_CG_IMPL_H
#define OX_CG_IMPL_H

#include "../runtime/value.h"
#include "codegen.h"

#define CG_MAX_RANK 8

typedef enum cg_kind { CG_INPUT, CG_OUTPUT, CG_CONST, CG_TEMP } cg_kind;

typedef struct cg_val {
  const char *name;
  int32_t dtype;
  int64_t dims[CG_MAX_RANK];
  size_t rank;
  int64_t numel;
  cg_kind kind;
  bool in_body; /* made inside a control-flow body (written there) */
  size_t index;  /* graph input / output index */
  ox_value *cv;  /* CG_CONST: the data (owned) */
  char *cname;   /* C expression of the pointer in the run function */
  size_t offset; /* CG_TEMP: arena offset */
  size_t nbytes;
  long first, last; /* CG_TEMP: producing node and last reader */
  struct cg_val *alias; /* CG_TEMP written in place: the value whose storage it takes */
  long end;             /* the planner's: last node of the storage (aliases included) */
  bool in_blob;         /* CG_CONST in the weights blob, at blob_off */
  size_t blob_off;
} cg_val;

typedef struct cg_ctx {
  ox_model *m;
  ox_graph *g;
  int64_t opset; /* of the default domain */
  const char *prefix;
  ox_arena *a; /* strings of this compilation */
  cg_val **vals;
  size_t n_vals;
  ox_map by_name;
  ox_buf consts, funcs, body;
  ox_buf fdone; /* finished functions (funcs holds the one being written) */
  size_t n_consts, n_funcs;
  cg_val **ins, **outs; /* graph inputs (not initializers) and outputs */
  size_t n_ins, n_outs;
  ox_err *e;
  const ox_cg_opts *o;
  ox_map last_read; /* value name -> index of the last node that reads it */
  /* the node being generated */
  const ox_node *node;
  size_t node_idx;
  /* control flow: inferred types by name (subgraphs' too), the graph
   * outputs, the top-level node whose bodies are being generated (every
   * body value lives in the arena for that node's whole call), and the
   * operands of the control-flow function being written: its inputs X<i>,
   * outputs Y<j> and the other values its bodies touch, passed as V<k> */
  ox_map *types;
  const ox_map *out_names;
  int depth;
  long top_idx;
  size_t n_body_nodes;
  cg_val **cf_in, **cf_out, **extra;
  size_t cf_n_in, cf_n_out, n_extra;
  unsigned gemm_done; /* cg_gemm.c: the helpers already written, one bit per type */
  unsigned conv_used; /* CG_CONV_* bits: the conversion helpers the file needs */
} cg_ctx;

/* An operator generator: appends the body of the node's function (its
 * parameters are X<i> for present input i and Y<j> for output j, typed
 * pointers; constant inputs are also readable through in[i]->cv). Returns
 * OX_OK, or an error set with cg_fail. */
typedef int (*cg_gen_fn)(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out);
typedef struct cg_op {
  const char *op;
  cg_gen_fn gen;
} cg_op;

/* One table per family file, ended by {NULL, NULL}. */
extern const cg_op ox_cg_ops_elementwise[];
extern const cg_op ox_cg_ops_linalg[];
extern const cg_op ox_cg_ops_conv[];
extern const cg_op ox_cg_ops_tensor[];
extern const cg_op ox_cg_ops_reduce[];
extern const cg_op ox_cg_ops_quant[];
/* ops_quant.c: the integer nodes of folded QDQ units (not listed) */
extern const cg_op ox_cg_ops_quant_folded[];
/* Rewrites DequantizeLinear -> Conv|MatMul|Gemm [-> Relu] -> QuantizeLinear
 * units of c->g into integer-only nodes (c->g becomes a copy; the
 * initializers must be values of c already). */
int ox_cg_fold_qdq(cg_ctx *c);
/* cg_fold.c: the values known at compile time (Shape/Size of static
 * shapes, nodes whose inputs are all constants, run once by the runtime's
 * kernel) made initializers of a copy of m's graph, shape inference run
 * again, until nothing more folds; *out is m itself when nothing folded
 * (else a shallow copy in arena a). */
struct ox_infer_opts;
int ox_cg_fold_static(ox_model *m, const struct ox_infer_opts *io, ox_arena *a, ox_model **out,
                      ox_err *e);
extern const cg_op ox_cg_ops_loss[];
extern const cg_op ox_cg_ops_control[];
extern const cg_op ox_cg_ops_attention[];
extern const cg_op ox_cg_ops_resize[];
extern const cg_op ox_cg_ops_signal[];
extern const cg_op ox_cg_ops_recurrent[];
/* operators added after the families above, one file each: ops_image.c,
 * ops_stateful.c, ops_movement.c, ops_numeric.c, ops_deform.c, ops_spectral.c,
 * ops_tfidf.c */
extern const cg_op ox_cg_ops_image[];
extern const cg_op ox_cg_ops_stateful[];
extern const cg_op ox_cg_ops_movement[];
extern const cg_op ox_cg_ops_numeric[];
extern const cg_op ox_cg_ops_deform[];
extern const cg_op ox_cg_ops_spectral[];
extern const cg_op ox_cg_ops_tfidf[];
/* ops_random.c: RandomUniform, RandomNormal (and *Like), Bernoulli,
 * Multinomial */
extern const cg_op ox_cg_ops_random[];
/* ops_random.c: the key of a random node's draws: its `seed` attribute (an
 * integral float seed as that integer, another one its bits), else a hash
 * of its first output's name. */
unsigned long long cg_random_key(const ox_node *n);
/* Writes, indented by ind, the definition of `u` (const double, or float
 * with --float-only): the uniform in [0, 1) of draw number `draw` (a C
 * expression, 0, 1, ...) of the counter-based generator keyed by key:
 * splitmix64(key + (draw + 1) * golden gamma), its top 53 (24) bits; a
 * uint64_t u_z is defined too. The one generator of the random operators and
 * of Dropout's training mode. */
void cg_emit_uniform(cg_ctx *c, const char *ind, const char *u, unsigned long long key,
                     const char *draw);
/* The tables of the other domains (codegen.c looks a generator up by
 * domain and operator type): ops_ml.c (ai.onnx.ml), ops_training.c
 * (ai.onnx.preview.training), ops_flex.c (ai.onnx.preview). Their rows name
 * the operator as DOMAIN:Op (CG_DOMAIN_ML ":Binarizer"). */
#define CG_DOMAIN_ML "ai.onnx.ml"
#define CG_DOMAIN_TRAINING "ai.onnx.preview.training"
#define CG_DOMAIN_PREVIEW "ai.onnx.preview"
#define CG_DOMAIN_MS "com.microsoft"
extern const cg_op ox_cg_ops_ml[];
extern const cg_op ox_cg_ops_training[];
extern const cg_op ox_cg_ops_flex[];
/* onnxruntime's com.microsoft operators: ops_ms_quant.c, ops_ms_nn.c,
 * ops_ms_attn.c, ops_ms_gqa.c, ops_ms_lowbit.c (MatMulNBits, GatherBlockQuantized) */
extern const cg_op ox_cg_ops_ms_quant[];
extern const cg_op ox_cg_ops_ms_nn[];
extern const cg_op ox_cg_ops_ms_nn_default[]; /* onnxruntime's default-domain additions */
extern const cg_op ox_cg_ops_ms_attn[];
extern const cg_op ox_cg_ops_ms_gqa[];
/* The generator of ai.onnx operator op (NULL when none), for the generators
 * of other domains that run on a standard one (ops_ms_nn.c). */
cg_gen_fn cg_std_gen(const char *op);
/* ops_quant.c's generators that ops_ms_quant.c's com.microsoft forms run
 * on: QuantizeLinear dividing in float (the contrib form), DequantizeLinear,
 * DynamicQuantizeLinear (its Y0 and the locals sc, z), QLinearConv (NCHW) */
int cg_gen_quantize_ms(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out);
int cg_gen_dequantize(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out);
int cg_gen_dynq(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                size_t n_out);
int cg_gen_qlinearconv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out);
extern const cg_op ox_cg_ops_ms_lowbit[];
/* ops_attention.c: writes, indented by ind, the rotary embedding of one head
 * (RotaryEmbedding, com.microsoft's and GroupQueryAttention's do_rotary): its
 * first 2 * half values of src turned into dst (pointer expressions of
 * element type T; dst may be src) by `cs` and `sn` (pointers in scope, half
 * values each): pairs (i, i + half), or (2i, 2i + 1) when interleaved. */
void cg_emit_rotate(cg_ctx *c, const char *ind, const char *T, const char *src, const char *dst,
                    int64_t half, bool il);
/* The same over the N heads of position (b, s) (loop variables of the caller) of X0 into
 * Y0: heads of D values laid out [B, N, S, D] when four, else [B, S, N * D]. */
void cg_emit_rotate_heads(cg_ctx *c, const char *T, int64_t N, int64_t S, int64_t D, bool four,
                          int64_t half, bool il);
/* ops_training.c: Dropout whose training_mode is read at run time (called
 * by ops_tensor.c's Dropout when that input is not a constant false). */
int cg_gen_dropout_train(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out);
/* ops_declined.c: why an operator without a generator is refused on
 * purpose (a data-dependent output length, strings, randomness ...); NULL
 * for the others ("no C generator"). domain: the node's. */
const char *cg_declined_reason(const char *domain, const char *op);

/* ---- the subgraph walk (codegen.c), for the control-flow generators ---- */
/* A body's graph input as a value in the arena (type from inference). */
cg_val *cg_body_input(cg_ctx *c, const ox_value_info *vi);
/* Generates the functions of body g's nodes and writes, into the
 * control-flow function being generated, the calls to them (indented by
 * ind). Its graph inputs must have been made with cg_body_input first. */
int cg_body_run(cg_ctx *c, const ox_graph *g, const char *ind);
/* The C expression of value v inside the control-flow function being
 * written: X<i>, Y<j>, or V<k> (v is then passed to it as an extra
 * operand). NULL when out of memory. */
const char *cg_ref(cg_ctx *c, cg_val *v);
/* A value by name (NULL when none). */
cg_val *cg_find(cg_ctx *c, const char *name);
/* A scratch array of numel elements in the arena, alive through the node
 * being generated only; pass it with cg_ref. NULL inside control-flow
 * bodies (and when out of memory). */
cg_val *cg_scratch(cg_ctx *c, int32_t dtype, int64_t numel);
/* The same, also inside a control-flow body (FlexAttention's scores): alive
 * for the top-level node's whole call, as the bodies' values are. */
cg_val *cg_scratch_in_body(cg_ctx *c, int32_t dtype, int64_t numel);

/* ---- the matrix-product helper (cg_gemm.c) ---- */
/* Name of the static function, written once per compilation before the node
 * functions, that computes C(i,j) = bias + sum_k A(i,k) B(k,j) for
 * i < M, j < N, in the order k = 0, 1, ... for every element (so the bits do
 * not depend on the target): A(i,k) = A[i*ars + k*acs], B(k,j) = B[k*ldb + j],
 * C(i,j) = C[i*rsc + j*csc], bias: 0 none (bias any valid pointer, not read), 1 bias[i], 2 bias[j]. Its
 * parameters: (M, N, K, A, ars, acs, B, ldb, C, rsc, csc, bias, bmode).
 * NULL for element types other than float and double. */
const char *cg_gemm_fn(cg_ctx *c, int32_t dtype);
/* Columns of the helper's register tile for the target (the N worth
 * vectorising over). */
int64_t cg_gemm_nr(const cg_ctx *c);
/* Replaces constant v (2-D view rows x cols of its data) by its transpose
 * when the node being generated is its only reader; false otherwise (v
 * unchanged). Its dims become {cols, rows}. */
bool cg_transpose_const(cg_ctx *c, cg_val *v, int64_t rows, int64_t cols);

/* ---- one query row of attention (ops_attention.c), for the Attention
 * generators of every domain (ops_ms_attn.c) ----
 * Inside loops that define b, h and i, with the query row declared as the
 * caller likes: cg_attn_scores declares `row` (Tmax elements) and sets
 * row[j] = scale * q.k for j < T; the caller then adjusts row (masks);
 * cg_attn_softmax turns it into probabilities (a row of -inf or NaN gives
 * zeros); cg_attn_values writes y = row . V. */
typedef struct cg_attn_row {
  int32_t dtype;   /* float or double */
  const char *T;   /* the key count: a C expression */
  int64_t Tmax;    /* its largest value */
  int64_t D, Dv;   /* head sizes of q and k, of v */
  int64_t P;       /* keys j < P are past rows pk[j], pv[j] (rows of D / Dv) */
  const char *q;   /* the query row (a C pointer expression) */
  const char *k, *v; /* key / value row P (row 0 of the current ones), for this b and head */
  int64_t ks, vs;  /* their row strides */
  const char *pk, *pv; /* past row 0 for this b and head (unused when P is 0) */
  const char *y;   /* the output row */
} cg_attn_row;
void cg_attn_scores(cg_ctx *c, const cg_attn_row *r, double scale);
void cg_attn_softmax(cg_ctx *c, const cg_attn_row *r);
void cg_attn_values(cg_ctx *c, const cg_attn_row *r);

/* ---- helpers (codegen.c / emit.c) ---- */
/* Fails naming the current node: "node 'N' (Op): <reason>". */
int cg_fail(cg_ctx *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Appends to the function text. */
void cg_printf(cg_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* C element type of an ONNX type; NULL when the generator has none. */
const char *cg_ctype(int32_t dt);
/* ---- element types without C arithmetic (emit.c) ----
 * float16 and bfloat16 are stored as their uint16_t bits, the float8 kinds
 * as uint8_t bits (cg_ctype gives those). Generators that compute on them
 * load each element as float and store the float result converted back,
 * through small static inline helpers written into the file only when a
 * node asked for them (cg_load / cg_store set c->conv_used). */
/* conv_used: the loads (to float) as these bits, the stores shifted left by 8 */
enum { CG_CONV_F16 = 1, CG_CONV_BF16 = 2, CG_CONV_F8 = 4, CG_CONV_F4 = 8, CG_CONV_E8M0 = 16 };
/* float16, bfloat16, one of the four float8 kinds or float8e8m0. */
bool cg_is_small_float(int32_t dt);
/* A C expression of type float for element expression `e` of type dt
 * (float16/bfloat16/float8 through a helper; other types cast). NULL when
 * out of memory. */
const char *cg_load(cg_ctx *c, int32_t dt, const char *e);
/* A C expression of type dt's C type for float expression `e` (rounded to
 * nearest even; the float8 kinds saturate when `saturate`, as Cast's
 * attribute says; other types: a plain C cast). */
const char *cg_store(cg_ctx *c, int32_t dt, const char *e, bool saturate);
/* Bits of a packed type (int4, uint4, float4e2m1: 4; int2, uint2: 2),
 * stored several to a byte, element 0 in the low bits; 0 for the others.
 * A value of such a type has numel elements in nbytes bytes. */
unsigned cg_packed_bits(int32_t dt);
/* A C expression of type float (int for the integer ones) reading element
 * `i` (a C expression) of packed array `arr` of type dt. */
const char *cg_load_packed(cg_ctx *c, int32_t dt, const char *arr, const char *i);
/* Writes a loop that fills packed output Y0 (n elements of type dt, a
 * whole number of bytes) with the float (or integer) expression `e` of
 * element `i` (size_t): the integer types wrap as C's conversion to their
 * width does (the runtime's rule and the ONNX test data's), float4e2m1
 * rounds to nearest even and saturates. */
void cg_store_packed(cg_ctx *c, int32_t dt, int64_t n, const char *e, bool is_float);
/* Whether op's generator (ops_elementwise.c) computes float16/bfloat16/
 * float8 values through cg_load / cg_store. */
bool cg_small_float_op(const char *op);
/* cg_widen.c: float16 and bfloat16 on the float generators of some
 * operators (MatMul, Gemm, Conv, Pad, Clip, pooling, normalisations ...):
 * the inputs converted into float scratch arrays, the float generator run on
 * them, the outputs rounded back. Whether op is one; whether node n's small
 * float types are all float16/bfloat16 (so it may go this way); whether it
 * has one of them; and the generation. */
bool cg_widen_op(const char *op);
bool cg_widen_node_ok(cg_ctx *c, const ox_node *n, cg_val **in);
bool cg_widen_needed(const ox_node *n, cg_val **in, size_t n_in, cg_val **out, size_t n_out);
int cg_gen_widened(cg_ctx *c, cg_gen_fn gen, const ox_node *n, cg_val **in, size_t n_in,
                   cg_val **out, size_t n_out);
/* The same for a generator of another domain (its own choice, not the list
 * above): widened when an input or output is float16/bfloat16, refused for
 * the float8 kinds, else gen itself. */
int cg_gen_maybe_widened(cg_ctx *c, cg_gen_fn gen, const ox_node *n, cg_val **in, size_t n_in,
                         cg_val **out, size_t n_out);
/* cg_store for float8e8m0 with Cast's round_mode (0 up, 1 down, 2 nearest). */
const char *cg_store_e8m0(cg_ctx *c, const char *e, bool saturate, int round_mode);
/* Appends the helpers c->conv_used names, prefixed with c->prefix. */
void cg_write_conv(cg_ctx *c, ox_buf *s);
/* Name of a math function for the element type: "exp" -> "expf" for
 * float, "exp" for double. */
const char *cg_mathfn(cg_ctx *c, int32_t dt, const char *fn);
/* A float literal that is exact ("0x1.8p+1f", "INFINITY", "NAN"). */
void cg_float_lit(char *buf, size_t size, double v, bool is_float);
/* Requires the element type to be float or double (reason: op name). */
int cg_need_float(cg_ctx *c, const cg_val *v);
/* Contiguous strides of v (elements). */
void cg_strides(const cg_val *v, int64_t *s);
/* Emits loops over the output shape (dims, rank) that define `o` (the
 * output's flat index) and, for operand k, `i<k>` (its flat index under
 * numpy broadcasting against the output), then runs `body` for each. */
void cg_bcast_loop(cg_ctx *c, const int64_t *dims, size_t rank, cg_val *const *ops, size_t n_ops,
                   const char *body);
/* Products of v's dims before and after axis. */
void cg_split(const cg_val *v, size_t axis, int64_t *outer, int64_t *inner);
/* Normalises a possibly negative axis; false when out of range. */
bool cg_axis(int64_t axis, size_t rank, size_t *out);
/* A constant input read as int64 values (any integer type); false when the
 * input is absent or not constant. */
bool cg_const_ints(const cg_val *v, int64_t *out, size_t cap, size_t *n);
/* A constant scalar input read as double; false when not constant. */
bool cg_const_scalar(const cg_val *v, double *out);
/* Integer attribute list; false when absent. */
bool cg_attr_ints(const ox_node *n, const char *name, int64_t *out, size_t cap, size_t *count);
/* float_only.c: whether C text s[0..n) does double-precision arithmetic
 * (the type double, a floating literal without f, HUGE_VAL, a double libm
 * function); what then describes the first finding. */
bool ox_cg_find_double(const char *s, size_t n, char *what, size_t what_size);
/* "float[1,3,224,224]" for comments. */
const char *cg_type_str(cg_ctx *c, const cg_val *v);

#endif
