/* attn_decode_impl.h - what attn_decode.c and the AVX-512 block pass
 * (attn_decode_avx512.c) share inside the family; callers use the table of
 * attn_decode.h. */
#ifndef OX_KERNELS_ATTN_DECODE_IMPL_H
#define OX_KERNELS_ATTN_DECODE_IMPL_H

#include "attn_decode.h"

/* attn_decode.c, AVX-512 level: the step between the score and value
 * passes (scores of G heads x n keys, row stride n, capped, biased and
 * exponentiated against the new running maxima; st rescaled to them) */
void ox_attn_decode_softmax_avx512(const ox_attn_dec *d, int64_t n, ox_attn_part *st, float *sc);

/* attn_decode_avx512.c: the block pass of the table at the AVX-512 level */
void ox_attn_decode_block_avx512(const ox_attn_dec *d, const float *k, const float *v, int64_t n,
                                 ox_attn_part *st, float *scratch);

#endif
