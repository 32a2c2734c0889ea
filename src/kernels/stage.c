/* stage.c - float32 staging of the floating-point element types (see nn.h). */
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "nn.h"

bool ox_nn_is_float_type(int32_t dtype) {
  return dtype == OX_FLOAT || dtype == OX_FLOAT16 || dtype == OX_BFLOAT16 || dtype == OX_DOUBLE;
}

void ox_nn_load_f32(const void *src, int32_t dtype, int64_t n, float *dst) {
  switch (dtype) {
    case OX_FLOAT:
      memcpy(dst, src, (size_t)n * sizeof(float));
      break;
    case OX_DOUBLE:
      for (int64_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[i];
      break;
    case OX_FLOAT16:
      for (int64_t i = 0; i < n; i++) dst[i] = ox_f16_to_f32(((const uint16_t *)src)[i]);
      break;
    case OX_BFLOAT16:
      for (int64_t i = 0; i < n; i++) dst[i] = ox_bf16_to_f32(((const uint16_t *)src)[i]);
      break;
    default:
      break;
  }
}

void ox_nn_store_f32(const float *src, int32_t dtype, int64_t n, void *dst) {
  switch (dtype) {
    case OX_FLOAT:
      memcpy(dst, src, (size_t)n * sizeof(float));
      break;
    case OX_DOUBLE:
      for (int64_t i = 0; i < n; i++) ((double *)dst)[i] = (double)src[i];
      break;
    case OX_FLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ox_f32_to_f16(src[i]);
      break;
    case OX_BFLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ox_f32_to_bf16(src[i]);
      break;
    default:
      break;
  }
}

const float *ox_nn_as_f32(const void *src, int32_t dtype, int64_t n, float **owned) {
  *owned = NULL;
  if (dtype == OX_FLOAT) return src;
  float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (!p) return NULL;
  ox_nn_load_f32(src, dtype, n, p);
  *owned = p;
  return p;
}
