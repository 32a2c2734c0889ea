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

/* The layout of query dims q (rank qr), key k and value v (NULL when
 * absent) for N heads; bias: whether a bias is given. */
const char *ox_mha_shape_of(const int64_t *q, size_t qr, const int64_t *k, size_t kr,
                            const int64_t *v, size_t vr, bool bias, int64_t N, ox_mha_shape *o,
                            char *why, size_t why_size);

/* past_key / past_value [B, N, P or max_sequence_length, Hq / Hv]. */
bool ox_mha_past_fits(const int64_t *pk, size_t pkr, const int64_t *pv, size_t pvr,
                      const ox_mha_shape *s, int64_t N);

/* The beam-search step's past_sequence_length (psl_n values of type psl_dt)
 * and cache_indirection (type ci_dt, dims ci) for a buffer of M positions. */
const char *ox_mha_beam_problem(int32_t psl_dt, int64_t psl_n, int32_t ci_dt, const int64_t *ci,
                                size_t cir, int64_t B, int64_t M, char *why, size_t why_size);

#endif
