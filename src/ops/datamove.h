/* datamove.h - helpers shared by the data-movement kernels (tensor, gather,
 * pad, sort families): element copies with string semantics, strided
 * N-d copies, scalar loads/stores of any element type, comparisons and
 * small input readers. Scalar element access, axis normalisation and
 * prepare errors come from opcore.h (oc_get, oc_set, oc_axis, ...). Element storage is the run-time
 * layout of value.h. */
#ifndef OX_DATAMOVE_H
#define OX_DATAMOVE_H

#include "../runtime/kernel.h"
#include "opcore.h"

/* Copies n elements; strings are duplicated (the destination must hold
 * NULL or owned strings, which are freed first). OX_ENOMEM on failure. */
int ox_dm_copy(void *dst, const void *src, int64_t n, int32_t dt);
/* Copies one element `elem` into n consecutive slots. */
int ox_dm_fill(void *dst, int64_t n, const void *elem, int32_t dt);

/* Copies `rows` rows of n elements: row q from src + q*spitch to
 * dst + q*dpitch (pitches in elements); large copies run on the pool. */
int ox_dm_copy2d(ox_thread_pool *pool, void *dst, int64_t dpitch, const void *src, int64_t spitch,
                 int64_t rows, int64_t n, int32_t dt);

/* Strided gather: dst (contiguous, row-major over dims) receives
 * src[sum_k i_k * strides[k]] (strides in elements, may be zero or
 * negative; src points at the element of index 0). Dims are coalesced
 * first; large copies run on the pool. */
int ox_dm_strided(void *dst, const void *src, int32_t dt, size_t rank, const int64_t *dims,
                  const int64_t *strides, ox_thread_pool *pool);

/* Row-major strides (in elements) of dims. */
void ox_dm_strides(const int64_t *dims, size_t rank, int64_t *strides);

/* True when element i is not zero (strings: not empty). */
bool ox_dm_nonzero(int32_t dt, const void *p, int64_t i);
/* Total order for sorting: <0, 0, >0 (NaN after every number). */
int ox_dm_cmp(int32_t dt, const void *p, int64_t i, int64_t j);
/* true for dtypes stored as a real/integer number that oc_get reads
 * (everything except string and complex). */
bool ox_dm_is_real(int32_t dt);

/* Reads an integer tensor (int32 or int64; any shape) into out[0..n) with
 * n = numel <= cap. Fails on other types or n > cap. */
int ox_dm_read_ints(ox_kctx *c, const ox_value *v, const char *what, int64_t *out, size_t cap,
                    size_t *n);
#define OX_DM_MAX_RANK 64

/* Element i of an integer (or bool) array as int64; an axis normalised into
 * [0, rank). Kept for the families that use them (sequence, control). */
static inline int64_t ox_dm_get_i64(int32_t dt, const void *p, int64_t i) {
  return oc_get_i64(p, dt, i);
}
static inline int ox_dm_axis(ox_kctx *c, int64_t axis, size_t rank, const char *what, size_t *out) {
  return oc_axis(c, axis, rank, out, what);
}

/* Copies a box of `count` elements per dim (rank dims) from src (dims
 * sdims, starting at sstart) into dst (dims ddims, starting at dstart).
 * Both are contiguous row-major arrays. */
int ox_dm_box(void *dst, const int64_t *ddims, const int64_t *dstart, const void *src,
              const int64_t *sdims, const int64_t *sstart, const int64_t *count, size_t rank,
              int32_t dt);

/* Output i allocated for a kernel that writes every element (string
 * outputs are zeroed so that copies can free what they replace). */
ox_value *ox_dm_output(ox_kctx *c, size_t i, int32_t dt, const int64_t *dims, size_t rank);
/* Output i as a view of tensor `in` with new dims (same element count):
 * it shares the storage and holds a reference to `in` (value.h `base`).
 * Values are read-only once produced, so the sharing is invisible. Borrowed
 * storage (a caller's buffer, the model mapping) is copied instead. */
int ox_dm_view_out(ox_kctx *c, size_t i, ox_value *in, const int64_t *dims, size_t rank);
/* The tensor input i, or an error when it is missing or not a tensor. */
ox_value *ox_dm_tensor_in(ox_kctx *c, size_t i);

#endif
