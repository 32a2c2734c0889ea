/* attn_shape.h - the shape rules of com.microsoft Attention, MultiHeadAttention
 * and QAttention that the runtime's kernels (attn.c, quant_attn.c) and the
 * generators of `onnxc compile` (src/codegen/ops_ms_attn.c) both check, on
 * bare dims so that each side keeps its own value type. Each returns the
 * reason a shape does not fit ("" when it fits); the ones with numbers in it
 * write it into why. */
#ifndef OX_OPS_CONTRIB_ATTN_SHAPE_H
#define OX_OPS_CONTRIB_ATTN_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ir/ir.h"

/* The attributes the three share: num_heads, unidirectional, mask_filter_value and scale (0: 1 /
 * sqrt(head size)); do_rotary and past_present_share_buffer are refused, as onnxruntime's CPU
 * kernels refuse them. */
typedef struct ox_attn_attrs {
  int64_t heads;
  bool causal;
  float filter, scale;
} ox_attn_attrs;
const char *ox_attn_attrs_read(const ox_node *n, ox_attn_attrs *a, char *why, size_t why_size);

/* A key mask (mask_index, key_padding_mask) of element type dt and dims d
 * against batch B, sequence S, total length T, past P: int32, [B] end
 * positions, [2B] end and start, [B, T], [B, S, T], or [B, 1, M, M] with M
 * covering the past and sequence (not with causal). */
const char *ox_attn_key_mask_problem(int32_t dt, const int64_t *d, size_t rank, int64_t B,
                                     int64_t S, int64_t T, int64_t P, bool causal);

/* MultiHeadAttention's query / key / value layouts */
enum { OX_MHA_SEPARATE, OX_MHA_PACKED_QKV, OX_MHA_PACKED_KV, OX_MHA_BNSH };
typedef struct ox_mha_shape {
  int form;
  int64_t B, S, L, Hq, Hv; /* L: the new keys */
} ox_mha_shape;

/* One input of an attention node: element type (OX_UNDEFINED when absent), dims. */
typedef struct ox_attn_in {
  int32_t dt;
  size_t rank;
  int64_t numel;
  const int64_t *d;
} ox_attn_in;

/* MultiHeadAttention's inputs in[0..n) for N heads: the layout into *s,
 * whether they are a beam-search step (past_sequence_length and
 * cache_indirection given: the past length is then a value, *P 0) and the
 * past length *P. */
const char *ox_mha_inputs_problem(const ox_attn_in *in, size_t n, int64_t N, bool causal,
                                  ox_mha_shape *s, bool *beam, int64_t *P, char *why,
                                  size_t why_size);

/* QAttention's input, weight, bias, scales and zero points (in[i] for node
 * input i, 0 to 7; in[5], the mask, is not looked at) for `heads` heads. */
const char *ox_qattn_problem(const ox_attn_in *in, int64_t heads, char *why, size_t why_size);

#endif
