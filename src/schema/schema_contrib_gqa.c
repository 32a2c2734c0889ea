/* schema_contrib_gqa.c - schemas of onnxruntime's com.microsoft
 * GroupQueryAttention, RotaryEmbedding and SparseAttention, as onnxruntime's
 * docs/ContribOperators.md and its CPU kernels define them. Shape functions:
 * src/infer/infer_ops_contrib_gqa.c; kernels: src/ops/contrib/gqa.c.
 * SparseAttention's kernel is src/ops/contrib/sparse_attn.c. */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

static const char *const float_types[] = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)",
                                          NULL};
static const char *const i32_types[] = {"tensor(int32)", NULL};
static const char *const i64_types[] = {"tensor(int64)", NULL};

/* ---- GroupQueryAttention ---- */
static const ox_formal gqa_in[] = {
    OX_HONE("query", "T"),
    OX_HOPT("key", "T"),
    OX_HOPT("value", "T"),
    OX_HOPT("past_key", "T"),
    OX_HOPT("past_value", "T"),
    OX_HONE("seqlens_k", "M"),
    OX_HONE("total_sequence_length", "M"),
    OX_HOPT("cos_cache", "T"),
    OX_HOPT("sin_cache", "T"),
    OX_HOPT("position_ids", "tensor(int64)"),
    OX_HOPT("attention_bias", "T"),
    OX_HOPT("head_sink", "T"),
};
static const ox_formal gqa_out[] = {OX_HONE("output", "T"), OX_HOPT("present_key", "T"),
                                    OX_HOPT("present_value", "T"), OX_HOPT("output_qk", "T")};
static const ox_type_constraint gqa_tc[] = {{"T", float_types, 3}, {"M", i32_types, 1}};
static const ox_attr_schema gqa_attrs[] = {
    {"num_heads", OX_ATTR_INT, true, NULL},
    {"kv_num_heads", OX_ATTR_INT, true, NULL},
    {"scale", OX_ATTR_FLOAT, false, "0.0"},
    {"softcap", OX_ATTR_FLOAT, false, "0.0"},
    {"local_window_size", OX_ATTR_INT, false, "-1"},
    {"do_rotary", OX_ATTR_INT, false, "0"},
    {"rotary_interleaved", OX_ATTR_INT, false, "0"},
    {"smooth_softmax", OX_ATTR_INT, false, "-1"},
    {"qk_output", OX_ATTR_INT, false, "0"},
    {"causal", OX_ATTR_INT, false, "1"},
    {"mask_filter_value", OX_ATTR_FLOAT, false, "-10000.0"},
};

/* ---- RotaryEmbedding ---- */
static const ox_formal rope_in[] = {OX_HONE("input", "T"), OX_HONE("position_ids", "M"),
                                    OX_HONE("cos_cache", "T"), OX_HONE("sin_cache", "T")};
static const ox_formal rope_out[] = {OX_HONE("output", "T")};
static const ox_type_constraint rope_tc[] = {{"T", float_types, 3}, {"M", i64_types, 1}};
static const ox_attr_schema rope_attrs[] = {
    {"interleaved", OX_ATTR_INT, false, "0"},          {"num_heads", OX_ATTR_INT, false, "0"},
    {"rotary_embedding_dim", OX_ATTR_INT, false, "0"}, {"scale", OX_ATTR_FLOAT, false, "1.0"},
    {"is_packed_batching", OX_ATTR_INT, false, "0"},
};

/* ---- SparseAttention ---- */
static const ox_formal sparse_in[] = {
    OX_HONE("query", "T"),
    OX_HOPT("key", "T"),
    OX_HOPT("value", "T"),
    OX_HONE("past_key", "T"),
    OX_HONE("past_value", "T"),
    OX_HONE("block_row_indices", "M"),
    OX_HONE("block_col_indices", "M"),
    OX_HONE("total_sequence_length", "M"),
    OX_HONE("key_total_sequence_lengths", "M"),
    OX_HOPT("cos_cache", "T"),
    OX_HOPT("sin_cache", "T"),
};
static const ox_formal sparse_out[] = {OX_HONE("output", "T"), OX_HONE("present_key", "T"),
                                       OX_HONE("present_value", "T")};
static const ox_attr_schema sparse_attrs[] = {
    {"num_heads", OX_ATTR_INT, true, NULL},         {"kv_num_heads", OX_ATTR_INT, true, NULL},
    {"sparse_block_size", OX_ATTR_INT, true, NULL}, {"scale", OX_ATTR_FLOAT, false, "0.0"},
    {"do_rotary", OX_ATTR_INT, false, "0"},         {"rotary_interleaved", OX_ATTR_INT, false, "0"},
};

const ox_schema *const ox_schema_contrib_gqa[] = {
    MS("GroupQueryAttention", gqa_in, 7, gqa_out, 1, OX_HTC(gqa_tc), OX_HAT(gqa_attrs),
       "Causal grouped-query attention over a key/value cache (the attention of the LLMs "
       "onnxruntime-genai builds). query [B, S, num_heads*H], or Q, K and V packed in it "
       "[B, S, (num_heads + 2 kv_num_heads) H] when key and value are absent; key and value "
       "[B, S, kv_num_heads*H]; past_key and past_value [B, kv_num_heads, P, H], P the past "
       "length or the length of a buffer shared with present. seqlens_k[b] is the total length "
       "of sequence b minus one, total_sequence_length the largest total. The new K and V rows "
       "(rotated first when do_rotary, by cos_cache and sin_cache [positions, R/2] at "
       "positions_ids or at the rows' positions) go after the past's valid rows in present_key "
       "and present_value [B, kv_num_heads, max(P, total), H] (rows past a sequence's end are "
       "zero); query head h attends with key/value head h / (num_heads / kv_num_heads). Scores "
       "are scaled (scale, default 1/sqrt(H)), soft-capped (softcap * tanh(x / softcap)), "
       "biased (attention_bias, broadcast over batch and heads), limited to the causal past and "
       "the last local_window_size positions (-1: all), and normalised by a softmax whose "
       "denominator also holds e^sink (head_sink[h], or 0 with smooth_softmax = 1). output_qk "
       "holds the scores before (qk_output 1) or after (2) the softmax. onnxruntime requires a "
       "head size that is a multiple of 8 (16 with rotary) and a rotary width that is a "
       "multiple of 16, and a batch of one when several rows continue a past; onnxc accepts any "
       "head size, any even rotary width up to it, and any batch."),
    MS("RotaryEmbedding", rope_in, 4, rope_out, 1, OX_HTC(rope_tc), OX_HAT(rope_attrs),
       "Rotary position embedding: input [B, S, hidden] or [B, num_heads, S, H]; the first "
       "rotary_embedding_dim values of every head (all when 0) are rotated in pairs (i, i + R/2), "
       "or (2i, 2i + 1) when interleaved, by the angle whose cosine and sine are row p of "
       "cos_cache and sin_cache [positions, R/2]; p is position_ids[b, s], or position_ids[0] + "
       "s when position_ids holds one value. The rest of each head is copied."),
    MS("SparseAttention", sparse_in, 9, sparse_out, 3, OX_HTC(gqa_tc), OX_HAT(sparse_attrs),
       "Causal grouped-query attention restricted to a block-sparse pattern (Phi-3-small). "
       "query [B, S, num_heads*H], or Q, K and V packed in it when key and value are absent; "
       "past_key and past_value [B, kv_num_heads, M, H] hold the cache (M at least "
       "total_sequence_length); present_key and present_value are that buffer with the S new K "
       "and V rows written at the sequence's past length (key_total_sequence_lengths[b] - S, or "
       "0 on the prompt, when total_sequence_length = S). Positions are cut into blocks of "
       "sparse_block_size; block_row_indices [L, max_blocks + 1] and block_col_indices [L, nnz] "
       "are the CSR of L lower-triangular block masks, query head h using layout h % L: a query "
       "at position p sees the keys up to p in the key blocks its block row keeps. Q and K are "
       "rotated (do_rotary, rotary_interleaved) by cos_cache / sin_cache [positions, R/2] at "
       "their positions; scores are scaled by scale (default 1/sqrt(H)). onnxruntime requires "
       "head sizes that are multiples of 8 (16 with rotary) and rotary widths that are "
       "multiples of 16; onnxc accepts any head size and any even rotary width up to it, but "
       "refuses a layout row without its diagonal block or a malformed CSR."),
};
const size_t ox_schema_contrib_gqa_n = OX_HN_OF(ox_schema_contrib_gqa);
