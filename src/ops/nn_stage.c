/* nn_stage.c - float32 and float64 staging by element type (see nn_stage.h). */
#include "nn_stage.h"

#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "../ir/ir.h"

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

bool ox_nn_load_f64(const void *src, int32_t dtype, int64_t n, double *dst) {
  switch (dtype) {
#define OX_LD(T, code)                                                    \
  case code:                                                              \
    for (int64_t i = 0; i < n; i++) dst[i] = (double)((const T *)src)[i]; \
    return true;
    OX_LD(float, OX_FLOAT)
    OX_LD(double, OX_DOUBLE)
    OX_LD(int8_t, OX_INT8)
    OX_LD(uint8_t, OX_UINT8)
    OX_LD(int16_t, OX_INT16)
    OX_LD(uint16_t, OX_UINT16)
    OX_LD(int32_t, OX_INT32)
    OX_LD(uint32_t, OX_UINT32)
    OX_LD(int64_t, OX_INT64)
    OX_LD(uint64_t, OX_UINT64)
    OX_LD(uint8_t, OX_BOOL)
#undef OX_LD
    case OX_FLOAT16:
      for (int64_t i = 0; i < n; i++) dst[i] = ox_f16_to_f32(((const uint16_t *)src)[i]);
      return true;
    case OX_BFLOAT16:
      for (int64_t i = 0; i < n; i++) dst[i] = ox_bf16_to_f32(((const uint16_t *)src)[i]);
      return true;
    default:
      return false;
  }
}

void ox_nn_store_f64(const double *src, int32_t dtype, int64_t n, void *dst) {
  switch (dtype) {
#define OX_ST(T, code)                                         \
  case code:                                                   \
    for (int64_t i = 0; i < n; i++) ((T *)dst)[i] = (T)src[i]; \
    break;
    OX_ST(float, OX_FLOAT)
    OX_ST(double, OX_DOUBLE)
    OX_ST(int8_t, OX_INT8)
    OX_ST(uint8_t, OX_UINT8)
    OX_ST(int16_t, OX_INT16)
    OX_ST(uint16_t, OX_UINT16)
    OX_ST(int32_t, OX_INT32)
    OX_ST(uint32_t, OX_UINT32)
    OX_ST(int64_t, OX_INT64)
    OX_ST(uint64_t, OX_UINT64)
#undef OX_ST
    case OX_BOOL:
      for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = src[i] != 0.0;
      break;
    case OX_FLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ox_f32_to_f16((float)src[i]);
      break;
    case OX_BFLOAT16:
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ox_f32_to_bf16((float)src[i]);
      break;
    default:
      break;
  }
}
