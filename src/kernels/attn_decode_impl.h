/* attn_decode_impl.h - what attn_decode.c and the vector block passes
 * (attn_decode_avx2.c, attn_decode_avx512.c) share inside the family;
 * callers use the table of attn_decode.h. */
#ifndef OX_KERNELS_ATTN_DECODE_IMPL_H
#define OX_KERNELS_ATTN_DECODE_IMPL_H

#include "attn_decode.h"

/* attn_decode.c, AVX2 and AVX-512 levels: the step between the score and
 * value passes (scores of G heads x n keys, row stride n, capped, biased and
 * exponentiated against the new running maxima; st rescaled to them) */
void ox_attn_decode_softmax_avx2(const ox_attn_dec *d, int64_t n, ox_attn_part *st, float *sc);
void ox_attn_decode_softmax_avx512(const ox_attn_dec *d, int64_t n, ox_attn_part *st, float *sc);

/* attn_decode_avx2.c, attn_decode_avx512.c: the block pass of the table
 * at the AVX2 and AVX-512 levels */
void ox_attn_decode_block_avx2(const ox_attn_dec *d, const float *k, const float *v, int64_t n,
                               ox_attn_part *st, float *scratch);
void ox_attn_decode_block_avx512(const ox_attn_dec *d, const float *k, const float *v, int64_t n,
                                 ox_attn_part *st, float *scratch);

#endif
