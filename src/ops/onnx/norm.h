/* norm.h - what norm.c lends the layer norms of other families
 * (contrib/nn.c's SkipLayerNormalization, SimplifiedLayerNormalization,
 * EmbedLayerNormalization): the float32 row normalisation with its
 * residual sum fused in, spread over the thread pool. */
#ifndef OX_OPS_ONNX_NORM_H
#define OX_OPS_ONNX_NORM_H

#include <stdbool.h>
#include <stdint.h>

#include "../../base/threadpool.h"

/* `outer` rows of `inner` floats: s = x + skip + add (each term when not
 * NULL), then y = (s - mean) * inv * scale + bias, inv = 1 / sqrt(var +
 * eps); rms: no centring (mean 0, var the mean square). */
typedef struct ox_norm_rows_args {
  const float *x;
  const float *skip;  /* NULL: none; row r reads skip row r % skip_rows */
  int64_t skip_rows;  /* rows of skip (0: as many as x) */
  const float *add;   /* one row added to every row after skip, or NULL */
  float *sum;         /* s stored here (outer x inner) when not NULL */
  float *y;           /* may be x */
  float *mean, *inv;  /* per row when not NULL (mean 0 when rms) */
  const float *scale; /* per column, or NULL */
  const float *bias;  /* per column (only with scale), or NULL */
  int64_t outer, inner;
  double eps;
  bool rms;
} ox_norm_rows_args;

void ox_norm_rows(ox_thread_pool *pool, const ox_norm_rows_args *a);

#endif
