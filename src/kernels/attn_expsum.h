/* attn_expsum.h - a softmax row's exponentials and their sum for fused
 * attention (attn_expsum_avx512.c): row = e^(row - shift) in place, the sum
 * returned in double. shift is the row's maximum, so every exponent is <= 0
 * (or NaN). Four independent sums instead of vmath.h's exp_sum single
 * chain, whose dependent double additions limited the pass; the order of
 * the additions is therefore not the portable one (the sum differs in its
 * last bits of double). */
#ifndef OX_KERNELS_ATTN_EXPSUM_H
#define OX_KERNELS_ATTN_EXPSUM_H

#include <stdint.h>

typedef double (*ox_attn_exp_sum_fn)(float *row, int64_t n, float shift);

/* The function for the vector level in use (ONNXC_ISA caps it), NULL where
 * there is none (below AVX-512: vmath.h's exp_sum then). */
ox_attn_exp_sum_fn ox_attn_exp_sum_get(void);

#endif
