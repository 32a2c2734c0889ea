/* opcore.c - helpers shared by the core operator families. */
#include "opcore.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool oc_is_float(int32_t dt) {
  switch (dt) {
    case OX_FLOAT:
    case OX_DOUBLE:
    case OX_FLOAT16:
    case OX_BFLOAT16:
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
    case OX_FLOAT8E8M0:
    case OX_FLOAT4E2M1:
      return true;
    default:
      return false;
  }
}

bool oc_is_unsigned(int32_t dt) {
  return dt == OX_UINT8 || dt == OX_UINT16 || dt == OX_UINT32 || dt == OX_UINT64 ||
         dt == OX_UINT4 || dt == OX_UINT2;
}

bool oc_is_int(int32_t dt) {
  return oc_is_unsigned(dt) || dt == OX_INT8 || dt == OX_INT16 || dt == OX_INT32 ||
         dt == OX_INT64 || dt == OX_INT4 || dt == OX_INT2;
}

double oc_get(const void *data, int32_t dt, int64_t i) {
  switch (dt) {
    case OX_FLOAT:
      return ((const float *)data)[i];
    case OX_DOUBLE:
      return ((const double *)data)[i];
    case OX_FLOAT16:
      return ox_f16_to_f32(((const uint16_t *)data)[i]);
    case OX_BFLOAT16:
      return ox_bf16_to_f32(((const uint16_t *)data)[i]);
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
      return ox_f8_to_f32(((const uint8_t *)data)[i], dt);
    case OX_FLOAT8E8M0:
      return ox_e8m0_to_f32(((const uint8_t *)data)[i]);
    case OX_FLOAT4E2M1:
      return ox_f4_to_f32(((const uint8_t *)data)[i]);
    case OX_UINT64:
      return (double)((const uint64_t *)data)[i];
    default:
      return (double)oc_get_i64(data, dt, i);
  }
}

/* double -> int64 without undefined behaviour (NaN -> 0, saturating) */
static int64_t d2i64(double v) {
  if (isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

int64_t oc_get_i64(const void *data, int32_t dt, int64_t i) {
  switch (dt) {
    case OX_BOOL:
    case OX_UINT8:
    case OX_UINT4:
    case OX_UINT2:
      return ((const uint8_t *)data)[i];
    case OX_INT8:
    case OX_INT4:
    case OX_INT2:
      return ((const int8_t *)data)[i];
    case OX_UINT16:
      return ((const uint16_t *)data)[i];
    case OX_INT16:
      return ((const int16_t *)data)[i];
    case OX_UINT32:
      return ((const uint32_t *)data)[i];
    case OX_INT32:
      return ((const int32_t *)data)[i];
    case OX_INT64:
      return ((const int64_t *)data)[i];
    case OX_UINT64:
      return (int64_t)((const uint64_t *)data)[i];
    default: /* a float type: truncated, NaN -> 0, saturating */
      return d2i64(oc_get(data, dt, i));
  }
}

void oc_set_i64(void *data, int32_t dt, int64_t i, int64_t v) {
  uint64_t u = (uint64_t)v;
  switch (dt) {
    case OX_BOOL:
      ((uint8_t *)data)[i] = v != 0;
      break;
    case OX_UINT8:
      ((uint8_t *)data)[i] = (uint8_t)u;
      break;
    case OX_UINT4:
      ((uint8_t *)data)[i] = (uint8_t)(u & 0xFu);
      break;
    case OX_UINT2:
      ((uint8_t *)data)[i] = (uint8_t)(u & 0x3u);
      break;
    case OX_INT8:
      ((int8_t *)data)[i] = (int8_t)(uint8_t)u;
      break;
    case OX_INT4:
      ((int8_t *)data)[i] = (int8_t)(((int)(u & 0xFu) ^ 8) - 8);
      break;
    case OX_INT2:
      ((int8_t *)data)[i] = (int8_t)(((int)(u & 0x3u) ^ 2) - 2);
      break;
    case OX_UINT16:
      ((uint16_t *)data)[i] = (uint16_t)u;
      break;
    case OX_INT16:
      ((int16_t *)data)[i] = (int16_t)(uint16_t)u;
      break;
    case OX_UINT32:
      ((uint32_t *)data)[i] = (uint32_t)u;
      break;
    case OX_INT32:
      ((int32_t *)data)[i] = (int32_t)(uint32_t)u;
      break;
    case OX_INT64:
      ((int64_t *)data)[i] = v;
      break;
    case OX_UINT64:
      ((uint64_t *)data)[i] = u;
      break;
    default:
      oc_set(data, dt, i, (double)v);
      break;
  }
}

void oc_set(void *data, int32_t dt, int64_t i, double v) {
  switch (dt) {
    case OX_FLOAT:
      ((float *)data)[i] = (float)v;
      break;
    case OX_DOUBLE:
      ((double *)data)[i] = v;
      break;
    case OX_FLOAT16:
      ((uint16_t *)data)[i] = ox_f32_to_f16((float)v);
      break;
    case OX_BFLOAT16:
      ((uint16_t *)data)[i] = ox_f32_to_bf16((float)v);
      break;
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
      ((uint8_t *)data)[i] = ox_f32_to_f8((float)v, dt, true);
      break;
    case OX_FLOAT8E8M0:
      ((uint8_t *)data)[i] = ox_f32_to_e8m0((float)v, true, 0);
      break;
    case OX_FLOAT4E2M1:
      ((uint8_t *)data)[i] = ox_f32_to_f4((float)v);
      break;
    case OX_BOOL:
      ((uint8_t *)data)[i] = v != 0;
      break;
    case OX_UINT64:
      if (v >= 9223372036854775808.0)
        ((uint64_t *)data)[i] = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
      else
        ((uint64_t *)data)[i] = (uint64_t)d2i64(v);
      break;
    default:
      oc_set_i64(data, dt, i, d2i64(v));
      break;
  }
}

int oc_prep_fail(const ox_kinfo *info, ox_err *e, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const ox_node *n = info->node;
  return ox_err_set(e, OX_EMODEL, "node '%s' (%s): %s", n && n->name ? n->name : "",
                    n && n->op_type ? n->op_type : "", msg);
}

int oc_bcast_init(oc_bcast *b, ox_kctx *ctx, const int64_t *const *dims, const size_t *ranks,
                  int nin) {
  memset(b, 0, sizeof *b);
  b->nin = nin;
  size_t r = 0;
  for (int k = 0; k < nin; k++)
    if (ranks[k] > r) r = ranks[k];
  if (r > OC_MAXRANK) return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "rank %zu above %d", r, OC_MAXRANK);
  b->out_rank = r;
  /* per input, dims aligned to the right */
  int64_t in[3][OC_MAXRANK];
  for (int k = 0; k < nin; k++)
    for (size_t d = 0; d < r; d++) in[k][d] = d < r - ranks[k] ? 1 : dims[k][d - (r - ranks[k])];
  int64_t numel = 1;
  for (size_t d = 0; d < r; d++) {
    int64_t o = 1;
    for (int k = 0; k < nin; k++) {
      int64_t x = in[k][d];
      if (x == 1) continue;
      if (o != 1 && o != x) {
        char buf[256];
        size_t len = 0;
        for (int q = 0; q < nin && len < sizeof buf - 40; q++) {
          len += (size_t)snprintf(buf + len, sizeof buf - len, "%s[", q ? " and " : "");
          for (size_t j = 0; j < ranks[q] && len < sizeof buf - 24; j++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%lld", j ? "," : "",
                                    (long long)dims[q][j]);
          len += (size_t)snprintf(buf + len, sizeof buf - len, "]");
        }
        return ox_kctx_fail(ctx, OX_ERUNTIME, "shapes %s do not broadcast", buf);
      }
      o = x;
    }
    b->out_dims[d] = o;
    if (!ox_mul_i64(numel, o, &numel)) return ox_kctx_fail(ctx, OX_ENOMEM, "output size overflows");
  }
  b->numel = numel;
  /* strides per input in its own layout; 0 where broadcast */
  int64_t st[3][OC_MAXRANK];
  for (int k = 0; k < nin; k++) {
    int64_t s = 1;
    for (size_t d = r; d-- > 0;) {
      st[k][d] = in[k][d] == 1 && b->out_dims[d] != 1 ? 0 : s;
      s *= in[k][d];
    }
  }
  /* coalesce: drop size-1 dims, merge neighbours that are contiguous for all */
  size_t n = 0;
  for (size_t d = 0; d < r; d++) {
    if (b->out_dims[d] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < nin; k++)
        if (b->st[k][n - 1] != st[k][d] * b->out_dims[d]) merge = false;
      if (merge) {
        b->dims[n - 1] *= b->out_dims[d];
        for (int k = 0; k < nin; k++) b->st[k][n - 1] = st[k][d];
        continue;
      }
    }
    b->dims[n] = b->out_dims[d];
    for (int k = 0; k < nin; k++) b->st[k][n] = st[k][d];
    n++;
  }
  if (n == 0) {
    b->dims[0] = 1;
    for (int k = 0; k < nin; k++) b->st[k][0] = 1;
    n = 1;
  }
  b->rank = n;
  return OX_OK;
}

int oc_bcast_values(oc_bcast *b, ox_kctx *ctx, ox_value *const *v, int nin) {
  const int64_t *dims[3];
  size_t ranks[3];
  for (int k = 0; k < nin; k++) {
    dims[k] = v[k]->dims;
    ranks[k] = v[k]->rank;
  }
  return oc_bcast_init(b, ctx, dims, ranks, nin);
}

typedef struct each_job {
  const oc_bcast *b;
  oc_run_fn fn;
  void *arg;
  int64_t piece, pieces; /* a row cut in `pieces` runs of `piece` elements */
} each_job;

/* tasks [begin, end): task t is piece t % pieces of row t / pieces */
static void each_rows(void *arg, int64_t begin, int64_t end) {
  const each_job *j = arg;
  const oc_bcast *b = j->b;
  size_t r = b->rank;
  int64_t inner = b->dims[r - 1];
  int64_t step[3] = {0, 0, 0}, off[3] = {0, 0, 0};
  for (int k = 0; k < b->nin; k++) step[k] = b->st[k][r - 1];
  int64_t idx[OC_MAXRANK];
  int64_t row = begin / j->pieces, p = begin % j->pieces;
  /* multi-index of the first row over dims[0..r-2] */
  int64_t rem = row;
  for (size_t d = r - 1; d-- > 0;) {
    idx[d] = rem % b->dims[d];
    rem /= b->dims[d];
  }
  for (int k = 0; k < b->nin; k++) {
    off[k] = 0;
    for (size_t d = 0; d + 1 < r; d++) off[k] += idx[d] * b->st[k][d];
  }
  for (int64_t t = begin; t < end; t++) {
    int64_t e0 = p * j->piece, n = inner - e0 < j->piece ? inner - e0 : j->piece;
    int64_t at[3];
    for (int k = 0; k < 3; k++) at[k] = off[k] + e0 * step[k];
    j->fn(j->arg, at, step, row * inner + e0, n);
    if (++p < j->pieces) continue;
    p = 0;
    row++;
    for (size_t d = r - 1; d-- > 0;) {
      idx[d]++;
      for (int k = 0; k < b->nin; k++) off[k] += b->st[k][d];
      if (idx[d] < b->dims[d]) break;
      for (int k = 0; k < b->nin; k++) off[k] -= b->st[k][d] * b->dims[d];
      idx[d] = 0;
    }
  }
}

void oc_bcast_each_grain(const oc_bcast *b, ox_thread_pool *pool, int64_t grain, oc_run_fn fn,
                         void *arg) {
  if (b->numel == 0) return;
  if (grain < 1) grain = 1;
  int64_t inner = b->dims[b->rank - 1];
  int64_t rows = b->numel / inner;
  /* a row longer than two grains (tensors of one shape, a scalar operand:
   * the whole tensor is one row) is cut so that the threads share it */
  each_job j = {b, fn, arg, inner, 1};
  if (pool && ox_thread_pool_size(pool) > 1 && inner >= 2 * grain) {
    j.piece = (grain + 15) / 16 * 16;
    j.pieces = (inner + j.piece - 1) / j.piece;
  }
  int64_t tasks = rows * j.pieces, run = j.piece < inner ? j.piece : inner;
  ox_parallel_for(pool, tasks, (grain + run - 1) / run, each_rows, &j);
}

void oc_bcast_each(const oc_bcast *b, ox_thread_pool *pool, oc_run_fn fn, void *arg) {
  if (b->numel == 0) return;
  /* small outputs in one task */
  if (b->numel < ox_thread_pool_floor(pool, 1 << 16)) pool = NULL;
  oc_bcast_each_grain(b, pool, 1 << 15, fn, arg);
}

int oc_read_ints(ox_kctx *ctx, const ox_value *v, int64_t *out, size_t max, size_t *n,
                 const char *what) {
  if (v->kind != OX_VAL_TENSOR || (v->dtype != OX_INT64 && v->dtype != OX_INT32))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be an int64 tensor", what);
  if (v->rank > 1) return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be a scalar or 1-D", what);
  if ((uint64_t)v->numel > max)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s has %lld values, at most %zu allowed", what,
                        (long long)v->numel, max);
  for (int64_t i = 0; i < v->numel; i++) out[i] = oc_get_i64(v->data, v->dtype, i);
  *n = (size_t)v->numel;
  return OX_OK;
}

int oc_axis(ox_kctx *ctx, int64_t axis, size_t rank, size_t *out, const char *what) {
  int64_t r = (int64_t)rank;
  if (axis < -r || axis >= r || (r == 0 && axis != 0))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s %lld out of range for rank %zu", what,
                        (long long)axis, rank);
  *out = (size_t)(axis < 0 ? axis + r : axis);
  return OX_OK;
}

void oc_to_f32(const void *src, int32_t dt, float *dst, int64_t n) {
  const uint16_t *s = src;
  if (dt == OX_FLOAT16)
    ox_f16_to_f32_n(s, dst, (size_t)n);
  else if (dt == OX_BFLOAT16)
    ox_bf16_to_f32_n(s, dst, (size_t)n);
  else if (dt == OX_FLOAT)
    memcpy(dst, src, (size_t)n * sizeof(float));
  else
    for (int64_t i = 0; i < n; i++) dst[i] = (float)oc_get(src, dt, i);
}

void oc_from_f32(const float *src, int32_t dt, void *dst, int64_t n) {
  uint16_t *d = dst;
  if (dt == OX_FLOAT16)
    ox_f32_to_f16_n(src, d, (size_t)n);
  else if (dt == OX_BFLOAT16)
    ox_f32_to_bf16_n(src, d, (size_t)n);
  else if (dt == OX_FLOAT)
    memcpy(dst, src, (size_t)n * sizeof(float));
  else
    for (int64_t i = 0; i < n; i++) oc_set(dst, dt, i, src[i]);
}

/* The float32 vector math: kernels/vmath.h's table for the CPU's level */
void oc_exp_f32(const float *x, float *y, int64_t n) { ox_vmath_kernels_get()->exp(x, 0.0f, y, n); }

void oc_exp_shift_f32(const float *x, float shift, float *y, int64_t n) {
  ox_vmath_kernels_get()->exp(x, shift, y, n);
}

double oc_row_sum_f32(const float *x, int64_t n) { return ox_vmath_kernels_get()->row_sum(x, n); }

double oc_exp_shift_sum_f32(const float *x, float shift, float *y, int64_t n) {
  return ox_vmath_kernels_get()->exp_sum(x, shift, y, n);
}

void oc_erf_f32(const float *x, float *y, int64_t n) { ox_vmath_kernels_get()->erf(x, y, n); }

void oc_tanh_f32(const float *x, float *y, int64_t n) { ox_vmath_kernels_get()->tanh(x, y, n); }

float oc_row_max_f32(const float *x, int64_t n) { return ox_vmath_kernels_get()->row_max(x, n); }

void oc_sigmoid_f32(const float *x, float *y, int64_t n, float scale, bool times_x) {
  ox_vmath_kernels_get()->sigmoid(x, y, n, scale, times_x);
}

void oc_gelu_erf_f32(const float *x, float *y, int64_t n, const oc_gelu_erf *g) {
  ox_vmath_kernels_get()->gelu_erf(x, y, n, g);
}
