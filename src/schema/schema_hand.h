/* schema_hand.h - what the hand-written schema tables share: onnxc's own
 * domain (schema_onnxc.c), onnxruntime's com.microsoft operators
 * (schema_contrib_*.c) and the operators onnxruntime registers in the
 * default domain beyond the standard ones (SimplifiedLayerNormalization).
 *
 * A hand table is an array of pointers to schemas, one version per
 * operator (these domains are not versioned beyond opset 1), in any order;
 * schema.c lists the tables (ox_schema_hands) and searches them after the
 * generated table. The macros below write one entry as a compound literal,
 * so a table needs no second array of pointers. */
#ifndef OX_SCHEMA_HAND_H
#define OX_SCHEMA_HAND_H

#include <stddef.h>

#include "schema.h"

#define OX_HN_OF(a) (sizeof(a) / sizeof((a)[0]))

/* formal parameters: exactly one, zero or one, `lo` or more of one type */
#define OX_HONE(name, type) \
  { name, type, OX_PARAM_SINGLE, true, false, 1 }
#define OX_HOPT(name, type) \
  { name, type, OX_PARAM_OPTIONAL, true, false, 1 }
#define OX_HVAR(name, type, lo) \
  { name, type, OX_PARAM_VARIADIC, true, false, lo }
/* a variadic parameter whose values may differ in type (QLinearConcat's) */
#define OX_HVAR_MIXED(name, type, lo) \
  { name, type, OX_PARAM_VARIADIC, false, false, lo }

/* one schema of `domain` at opset `ver`: name, inputs (array, fewest
 * given), outputs (array, fewest given), type constraints and attributes
 * (arrays or NULL with 0), and the paragraph `onnxc schema` prints. The
 * most inputs and outputs are the arrays' lengths; OX_HAND_SCHEMA_VARIADIC
 * is the same for an operator whose last input is variadic (unbounded). */
#define OX_HAND_SCHEMA_(dom, ver, nm, in, lo_in, hi_in, out, lo_out, tc, n_tc, at, n_at, text)     \
  &(const ox_schema) {                                                                             \
    .domain = dom, .name = nm, .since_version = ver, .inputs = in, .n_inputs = OX_HN_OF(in),       \
    .outputs = out, .n_outputs = OX_HN_OF(out), .constraints = tc, .n_constraints = n_tc,          \
    .attrs = at, .n_attrs = n_at, .min_inputs = lo_in, .max_inputs = hi_in, .min_outputs = lo_out, \
    .max_outputs = (int)OX_HN_OF(out), .doc = text                                                 \
  }
#define OX_HAND_SCHEMA(dom, ver, nm, in, lo_in, ...) \
  OX_HAND_SCHEMA_(dom, ver, nm, in, lo_in, (int)OX_HN_OF(in), __VA_ARGS__)
#define OX_HAND_SCHEMA_VARIADIC(dom, ver, nm, in, lo_in, ...) \
  OX_HAND_SCHEMA_(dom, ver, nm, in, lo_in, OX_SCHEMA_INF, __VA_ARGS__)

/* TC(x) / AT(x): a table and its length; NONE: neither */
#define OX_HTC(x) x, OX_HN_OF(x)
#define OX_HAT(x) x, OX_HN_OF(x)
#define OX_HNONE NULL, 0

/* One hand table: its domain ("" for the default one) and its entries. */
typedef struct ox_schema_hand {
  const char *domain;
  const ox_schema *const *entries;
  const size_t *n;
} ox_schema_hand;

/* com.microsoft, the operators onnxruntime adds (opset 1 only) */
#define OX_CONTRIB_DOMAIN "com.microsoft"
#define OX_CONTRIB_OPSET 1

/* The contrib tables, one per family of src/ops/contrib/: */
/* encoder building blocks: layer norms with skip, GELU forms, FusedMatMul,
 * FusedConv, BiasSoftmax (schema_contrib_nn.c) */
extern const ox_schema *const ox_schema_contrib_nn[];
extern const size_t ox_schema_contrib_nn_n;
/* onnxruntime's operators of the default domain (schema_contrib_nn.c) */
extern const ox_schema *const ox_schema_contrib_default[];
extern const size_t ox_schema_contrib_default_n;
/* Attention and MultiHeadAttention (schema_contrib_attn.c) */
extern const ox_schema *const ox_schema_contrib_attn[];
extern const size_t ox_schema_contrib_attn_n;
/* GroupQueryAttention, RotaryEmbedding, SparseAttention (schema_contrib_gqa.c) */
extern const ox_schema *const ox_schema_contrib_gqa[];
extern const size_t ox_schema_contrib_gqa_n;
/* MatMulNBits, GatherBlockQuantized, contrib Quantize/DequantizeLinear
 * (schema_contrib_lowbit.c) */
extern const ox_schema *const ox_schema_contrib_lowbit[];
extern const size_t ox_schema_contrib_lowbit_n;
/* QOperator forms: QLinear*, QGemm, QAttention, DynamicQuantizeMatMul,
 * MatMulIntegerToFloat (schema_contrib_quant.c) */
extern const ox_schema *const ox_schema_contrib_quant[];
extern const size_t ox_schema_contrib_quant_n;

#endif
