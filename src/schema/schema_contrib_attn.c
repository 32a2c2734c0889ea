/* schema_contrib_attn.c - schemas of onnxruntime's com.microsoft
 * Attention and MultiHeadAttention, as onnxruntime's docs/ContribOperators.md and its CPU kernels
 * define them. Shape functions: src/infer/infer_ops_contrib_attn.c; kernels:
 * src/ops/contrib/attn.c. */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

static const char *const float_types[] = {"tensor(float)", "tensor(float16)", NULL};
static const char *const int32_types[] = {"tensor(int32)", NULL};
static const ox_type_constraint tc_attention[] = {{"T", float_types, 2}, {"M", int32_types, 1}};
static const ox_type_constraint tc_mha[] = {
    {"T", float_types, 2}, {"M", int32_types, 1}, {"QK", float_types, 2}};

/* ---- Attention ---- */
static const ox_formal attention_in[] = {OX_HONE("input", "T"),
                                         OX_HONE("weights", "T"),
                                         OX_HOPT("bias", "T"),
                                         OX_HOPT("mask_index", "M"),
                                         OX_HOPT("past", "T"),
                                         OX_HOPT("attention_bias", "T"),
                                         OX_HOPT("past_sequence_length", "M")};
static const ox_formal attention_out[] = {OX_HONE("output", "T"), OX_HOPT("present", "T")};
static const ox_attr_schema attention_attrs[] = {
    {"num_heads", OX_ATTR_INT, true, NULL},
    {"unidirectional", OX_ATTR_INT, false, "0"},
    {"qkv_hidden_sizes", OX_ATTR_INTS, false, NULL},
    {"mask_filter_value", OX_ATTR_FLOAT, false, "-10000"},
    {"scale", OX_ATTR_FLOAT, false, "0"},
    {"do_rotary", OX_ATTR_INT, false, "0"},
    {"rotary_embedding_dim", OX_ATTR_INT, false, "0"},
    {"past_present_share_buffer", OX_ATTR_INT, false, "0"},
};

/* ---- MultiHeadAttention ---- */
static const ox_formal mha_in[] = {OX_HONE("query", "T"),
                                   OX_HOPT("key", "T"),
                                   OX_HOPT("value", "T"),
                                   OX_HOPT("bias", "T"),
                                   OX_HOPT("key_padding_mask", "M"),
                                   OX_HOPT("attention_bias", "T"),
                                   OX_HOPT("past_key", "T"),
                                   OX_HOPT("past_value", "T"),
                                   OX_HOPT("past_sequence_length", "M"),
                                   OX_HOPT("cache_indirection", "M")};
static const ox_formal mha_out[] = {OX_HONE("output", "T"), OX_HOPT("present_key", "T"),
                                    OX_HOPT("present_value", "T"), OX_HOPT("qk", "QK")};
static const ox_attr_schema mha_attrs[] = {
    {"num_heads", OX_ATTR_INT, true, NULL},
    {"mask_filter_value", OX_ATTR_FLOAT, false, "-10000"},
    {"scale", OX_ATTR_FLOAT, false, "0"},
    {"unidirectional", OX_ATTR_INT, false, "0"},
};

const ox_schema *const ox_schema_contrib_attn[] = {
    MS("Attention", attention_in, 2, attention_out, 1, OX_HTC(tc_attention),
       OX_HAT(attention_attrs),
       "Self-attention of BERT / GPT-2 with its input projection: input [B, S, D_in] times "
       "weights [D_in, q + k + v] (q = k = v = the hidden size unless qkv_hidden_sizes says "
       "otherwise) plus bias gives Q, K, V, split into num_heads heads. Scores are Q K^T times "
       "scale (default 1/sqrt(head size)); a masked key gets mask_filter_value added: "
       "mask_index is int32 [B] (right-padding end positions), [2B] (end then start "
       "positions), [B, T] or [B, S, T] (1 keeps, 0 masks) or [B, 1, M, M] (GPT-2's 0/1 "
       "mask, rows past..past+S and columns 0..T used); unidirectional drops future keys "
       "(key j > past + i). attention_bias [B or 1, N or 1, S, T] is added. past "
       "[2, B, N, P, H] is put in front of K and V (T = P + S) and present returns the "
       "concatenation. Output [B, S, v]. onnxruntime's CPU kernel refuses the 4-D mask "
       "(onnxc follows the documented meaning) and crashes without bias (onnxc treats it as "
       "zero); do_rotary and past_present_share_buffer are refused by both."),
    MS("MultiHeadAttention", mha_in, 1, mha_out, 1, OX_HTC(tc_mha), OX_HAT(mha_attrs),
       "Multi-head attention on projected inputs. query [B, S, D] with key [B, L, D] and "
       "value [B, L, D_v]; or query [B, S, N, 3, H] (packed Q, K, V; no key, value); or "
       "key [B, L, N, 2, H] (packed K, V; no value, no bias); or key and value [B, N, L, H] "
       "(already in heads; bias then applies to Q only). bias [D + D + D_v] is added to Q, K, "
       "V. past_key and past_value [B, N, P, H] are put in front of K and V (every form) and "
       "present_key / present_value return [B, N, P + L, H]. key_padding_mask is int32 [B] "
       "(valid key counts over T = P + L), [B, T] or [B, S, T] (1 keeps, 0 adds "
       "mask_filter_value); attention_bias [B or 1, N or 1, S, T] is added; unidirectional "
       "drops keys j > P + i for every query row but the last (onnxruntime's rule, which "
       "matters only with more keys than queries). qk returns the scores before softmax: "
       "Q K^T times scale plus the masks. Output [B, S, N * H_v]. onnxruntime's CPU kernel "
       "refuses the packed forms and, with a past and a key_padding_mask but no causality, "
       "masks every past key; onnxc follows the documented meaning there. Beam-search "
       "step: with past_sequence_length P and cache_indirection [B / beams, beams, M], "
       "past_key and past_value are buffers [B, N, M, H] filled up to P, one new token's key "
       "and value go to position P of present_key / present_value (the buffers, same shape) "
       "and beam j of batch i reads past position t from beam cache_indirection[i, j, t]; "
       "onnxc requires both inputs together (onnxruntime's CPU kernel leaves the presents "
       "unfilled without cache_indirection or with P = 0; onnxc does not)."),
};
const size_t ox_schema_contrib_attn_n = OX_HN_OF(ox_schema_contrib_attn);
