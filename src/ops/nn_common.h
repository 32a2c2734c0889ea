/* nn_common.h - small helpers shared by the neural-network kernel families
 * (norm.c, rnn.c, attention.c, quant.c, loss.c): element access by dtype,
 * float32 staging of float16/bfloat16/double tensors, and the reading of
 * attributes. The arithmetic of these families is done in float32; a
 * tensor of another float type is converted once on the way in and out. */
#ifndef OX_NN_COMMON_H
#define OX_NN_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "../runtime/kernel.h"

/* The float types of the usual `T: float16, float, double, bfloat16`. */
static inline bool nn_is_real(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* Element i of a numeric tensor as double (sub-byte types are unpacked). */
static inline double nn_get(const void *d, int32_t dt, int64_t i) {
  switch (dt) {
    case OX_FLOAT:
      return ((const float *)d)[i];
    case OX_DOUBLE:
      return ((const double *)d)[i];
    case OX_FLOAT16:
      return ox_f16_to_f32(((const uint16_t *)d)[i]);
    case OX_BFLOAT16:
      return ox_bf16_to_f32(((const uint16_t *)d)[i]);
    case OX_INT8:
    case OX_INT4:
    case OX_INT2:
      return ((const int8_t *)d)[i];
    case OX_UINT8:
    case OX_UINT4:
    case OX_UINT2:
    case OX_BOOL:
      return ((const uint8_t *)d)[i];
    case OX_INT16:
      return ((const int16_t *)d)[i];
    case OX_UINT16:
      return ((const uint16_t *)d)[i];
    case OX_INT32:
      return ((const int32_t *)d)[i];
    case OX_UINT32:
      return ((const uint32_t *)d)[i];
    case OX_INT64:
      return (double)((const int64_t *)d)[i];
    case OX_UINT64:
      return (double)((const uint64_t *)d)[i];
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
      return ox_f8_to_f32(((const uint8_t *)d)[i], dt);
    case OX_FLOAT8E8M0:
      return ox_e8m0_to_f32(((const uint8_t *)d)[i]);
    case OX_FLOAT4E2M1:
      return ox_f4_to_f32(((const uint8_t *)d)[i]);
    default:
      return 0.0;
  }
}

/* Integer element i (exact for 64-bit integers). */
static inline int64_t nn_get_int(const void *d, int32_t dt, int64_t i) {
  if (dt == OX_INT64) return ((const int64_t *)d)[i];
  if (dt == OX_UINT64) return (int64_t)((const uint64_t *)d)[i];
  return (int64_t)nn_get(d, dt, i);
}

/* Stores v as element i of a float tensor (float, double, float16, bfloat16). */
static inline void nn_set_real(void *d, int32_t dt, int64_t i, double v) {
  switch (dt) {
    case OX_FLOAT:
      ((float *)d)[i] = (float)v;
      break;
    case OX_DOUBLE:
      ((double *)d)[i] = v;
      break;
    case OX_FLOAT16:
      ((uint16_t *)d)[i] = ox_f32_to_f16((float)v);
      break;
    case OX_BFLOAT16:
      ((uint16_t *)d)[i] = ox_f32_to_bf16((float)v);
      break;
    default:
      break;
  }
}

/* A float32 view of a tensor: the tensor's own data when it is float32, else
 * a malloc'd converted copy. */
typedef struct nn_fbuf {
  float *p;
  bool owned;
} nn_fbuf;

static inline int nn_fload(ox_kctx *c, const ox_value *v, nn_fbuf *b) {
  b->owned = false;
  b->p = NULL;
  if (v->dtype == OX_FLOAT) {
    b->p = (float *)v->data;
    return OX_OK;
  }
  b->p = calloc((size_t)v->numel + 1, sizeof(float));
  if (!b->p) return ox_kctx_fail(c, OX_ENOMEM, "out of memory converting an input to float");
  b->owned = true;
  for (int64_t i = 0; i < v->numel; i++) b->p[i] = (float)nn_get(v->data, v->dtype, i);
  return OX_OK;
}

static inline void nn_ffree(nn_fbuf *b) {
  if (b->owned) free(b->p);
  b->p = NULL;
  b->owned = false;
}

/* Where a kernel writes float32 results for output tensor `out`: out's own
 * storage when it is float32, else a scratch buffer that nn_fstore converts
 * into out and frees. */
static inline int nn_fout(ox_kctx *c, ox_value *out, nn_fbuf *b) {
  b->owned = false;
  b->p = NULL;
  if (out->dtype == OX_FLOAT) {
    b->p = (float *)out->data;
    return OX_OK;
  }
  b->p = calloc((size_t)out->numel + 1, sizeof(float));
  if (!b->p) return ox_kctx_fail(c, OX_ENOMEM, "out of memory for a float scratch buffer");
  b->owned = true;
  return OX_OK;
}

static inline void nn_fstore(ox_value *out, nn_fbuf *b) {
  if (b->owned)
    for (int64_t i = 0; i < out->numel; i++) nn_set_real(out->data, out->dtype, i, b->p[i]);
  nn_ffree(b);
}

/* A zeroed float32 buffer of a*b*c*d elements; NULL when the count is
 * negative, overflows, or memory runs out. */
static inline float *nn_falloc(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t n;
  if (a < 0 || b < 0 || c < 0 || d < 0 || !ox_mul_i64(a, b, &n) || !ox_mul_i64(n, c, &n) ||
      !ox_mul_i64(n, d, &n) || (uint64_t)n >= SIZE_MAX / sizeof(float))
    return NULL;
  return calloc((size_t)n + 1, sizeof(float));
}

/* Normalises an axis in [-rank, rank) (or [-rank, rank] with `inclusive`). */
static inline bool nn_axis(int64_t axis, size_t rank, bool inclusive, int64_t *out) {
  int64_t r = (int64_t)rank;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r || (!inclusive && axis == r)) return false;
  *out = axis;
  return true;
}

/* Product of dims[b..e). */
static inline int64_t nn_prod(const int64_t *dims, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; i++) p *= dims[i];
  return p;
}

/* Expands `src` (float32, shape sd[sr]) to shape td[tr] by unidirectional
 * numpy broadcasting into dst (numel(td) floats). false if not broadcastable. */
static inline bool nn_expand(const float *src, const int64_t *sd, size_t sr, const int64_t *td,
                             size_t tr, float *dst) {
  if (sr > tr) return false;
  int64_t st[16] = {0}, idx[16] = {0};
  if (tr > 16) return false;
  int64_t s = 1;
  for (size_t k = tr; k-- > 0;) {
    int64_t d = k >= tr - sr ? sd[k - (tr - sr)] : 1;
    if (d != 1 && d != td[k]) return false;
    st[k] = d == 1 ? 0 : s;
    s *= d;
  }
  int64_t n = nn_prod(td, 0, tr), inner = tr ? td[tr - 1] : 1, ist = tr ? st[tr - 1] : 0;
  if (n == 0) return true;
  int64_t off = 0;
  for (int64_t i = 0; i < n; i += inner) {
    for (int64_t j = 0; j < inner; j++) dst[i + j] = src[off + j * ist];
    for (size_t k = tr - 1; k-- > 0;) {
      idx[k]++;
      off += st[k];
      if (idx[k] < td[k]) break;
      off -= st[k] * idx[k];
      idx[k] = 0;
    }
  }
  return true;
}

/* The activation functions of RNN/GRU/LSTM (and of CausalConvWithState). */
typedef enum nn_act_kind {
  NN_ACT_RELU,
  NN_ACT_TANH,
  NN_ACT_SIGMOID,
  NN_ACT_AFFINE,
  NN_ACT_LEAKYRELU,
  NN_ACT_THRESHOLDEDRELU,
  NN_ACT_SCALEDTANH,
  NN_ACT_HARDSIGMOID,
  NN_ACT_ELU,
  NN_ACT_SOFTSIGN,
  NN_ACT_SOFTPLUS,
  NN_ACT_SILU,
  NN_ACT_NONE,
} nn_act_kind;

typedef struct nn_act {
  nn_act_kind kind;
  float alpha, beta;
} nn_act;

static inline float nn_act_apply(const nn_act *a, float x) {
  switch (a->kind) {
    case NN_ACT_RELU:
      return x > 0 ? x : 0.0f;
    case NN_ACT_TANH:
      return tanhf(x);
    case NN_ACT_SIGMOID:
      return 1.0f / (1.0f + expf(-x));
    case NN_ACT_AFFINE:
      return a->alpha * x + a->beta;
    case NN_ACT_LEAKYRELU:
      return x >= 0 ? x : a->alpha * x;
    case NN_ACT_THRESHOLDEDRELU:
      return x > a->alpha ? x : 0.0f;
    case NN_ACT_SCALEDTANH:
      return a->alpha * tanhf(a->beta * x);
    case NN_ACT_HARDSIGMOID: {
      float y = a->alpha * x + a->beta;
      return y < 0 ? 0.0f : y > 1 ? 1.0f : y;
    }
    case NN_ACT_ELU:
      return x >= 0 ? x : a->alpha * (expf(x) - 1.0f);
    case NN_ACT_SOFTSIGN:
      return x / (1.0f + fabsf(x));
    case NN_ACT_SOFTPLUS:
      return x > 20.0f ? x : log1pf(expf(x));
    case NN_ACT_SILU:
      return x / (1.0f + expf(-x));
    case NN_ACT_NONE:
      return x;
  }
  return x;
}

#endif
