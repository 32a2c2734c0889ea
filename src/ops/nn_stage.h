/* nn_stage.h - staging of tensors by element type for the convolution,
 * pooling and resampling operators, whose arithmetic runs in float32 (or
 * float64): conversions in and out of the ONNX data types. */
#ifndef OX_OPS_NN_STAGE_H
#define OX_OPS_NN_STAGE_H

#include <stdbool.h>
#include <stdint.h>

/* Float32 staging: bfloat16, float16, double (and float, copied) to/from
 * float32. */
bool ox_nn_is_float_type(int32_t dtype);
void ox_nn_load_f32(const void *src, int32_t dtype, int64_t n, float *dst);
void ox_nn_store_f32(const float *src, int32_t dtype, int64_t n, void *dst);
/* Returns src as float32: the data itself for float, else a malloc'd copy put
 * in *owned (NULL on OOM). */
const float *ox_nn_as_f32(const void *src, int32_t dtype, int64_t n, float **owned);

/* Double staging of every numeric type (bool as 0/1): exact for all but
 * 64-bit integers beyond 2^53. load returns false for other types. */
bool ox_nn_load_f64(const void *src, int32_t dtype, int64_t n, double *dst);
void ox_nn_store_f64(const double *src, int32_t dtype, int64_t n, void *dst);

#endif
