/* opcore.c - helpers shared by the core operator families. */
#include "opcore.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../kernels/vexp.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
} each_job;

static void each_rows(void *arg, int64_t begin, int64_t end) {
  const each_job *j = arg;
  const oc_bcast *b = j->b;
  size_t r = b->rank;
  int64_t inner = b->dims[r - 1];
  int64_t step[3] = {0, 0, 0}, off[3] = {0, 0, 0};
  for (int k = 0; k < b->nin; k++) step[k] = b->st[k][r - 1];
  int64_t idx[OC_MAXRANK];
  /* multi-index of row `begin` over dims[0..r-2] */
  int64_t rem = begin;
  for (size_t d = r - 1; d-- > 0;) {
    idx[d] = rem % b->dims[d];
    rem /= b->dims[d];
  }
  for (int k = 0; k < b->nin; k++) {
    off[k] = 0;
    for (size_t d = 0; d + 1 < r; d++) off[k] += idx[d] * b->st[k][d];
  }
  for (int64_t row = begin; row < end; row++) {
    j->fn(j->arg, off, step, row * inner, inner);
    for (size_t d = r - 1; d-- > 0;) {
      idx[d]++;
      for (int k = 0; k < b->nin; k++) off[k] += b->st[k][d];
      if (idx[d] < b->dims[d]) break;
      for (int k = 0; k < b->nin; k++) off[k] -= b->st[k][d] * b->dims[d];
      idx[d] = 0;
    }
  }
}

void oc_bcast_each(const oc_bcast *b, ox_thread_pool *pool, oc_run_fn fn, void *arg) {
  if (b->numel == 0) return;
  each_job j = {b, fn, arg};
  int64_t inner = b->dims[b->rank - 1];
  int64_t rows = b->numel / inner;
  int64_t grain = (1 << 15) / inner + 1;
  if (b->numel < (1 << 16)) grain = rows;
  ox_parallel_for(pool, rows, grain, each_rows, &j);
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

/* e^x for float32 arrays by src/kernels/vexp.h's ox_exp1, written as one
 * loop the compiler vectorises (AVX-512, AVX2 and SSE2 clones). */
OC_CLONES static void exp_block(const float *x, float shift, float *y, int64_t n) {
  /* x - shift is exact for shift 0 (-0 - 0 = +0: e^0 either way) */
  for (int64_t i = 0; i < n; i++) y[i] = ox_exp1(x[i] - shift);
}

void oc_exp_f32(const float *x, float *y, int64_t n) {
  if (oc_vmath_avx512())
    oc_exp_avx512(x, 0.0f, y, n);
  else
    exp_block(x, 0.0f, y, n);
}

void oc_exp_shift_f32(const float *x, float shift, float *y, int64_t n) {
  if (oc_vmath_avx512())
    oc_exp_avx512(x, shift, y, n);
  else
    exp_block(x, shift, y, n);
}

/* eight partial sums: one vector of doubles per step */
OC_CLONES static double row_sum(const float *x, int64_t n) {
  double s[8] = {0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int q = 0; q < 8; q++) s[q] += x[k + q];
  for (; k < n; k++) s[0] += x[k];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

double oc_row_sum_f32(const float *x, int64_t n) { return row_sum(x, n); }

double oc_exp_shift_sum_f32(const float *x, float shift, float *y, int64_t n) {
  if (oc_vmath_avx512()) return oc_exp_sum_avx512(x, shift, y, n);
  exp_block(x, shift, y, n);
  return row_sum(y, n);
}

/* erf over a block, written so that the compiler vectorises it whole
 * (the clones give AVX-512 and AVX2 bodies): e^{-x^2} by the same range
 * reduction as exp_block with the power of two built from its bits, then
 * both forms computed without branches and the right one picked. Near 0
 * the Taylor series keeps the relative error small (A&S 7.1.26 alone has
 * an absolute bound only). */
OC_CLONES static void erf_block(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i], a = fabsf(v), v2 = v * v;
    /* 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320) */
    float small = -1.0f / 1320.0f;
    small = small * v2 + 1.0f / 216.0f;
    small = small * v2 - 1.0f / 42.0f;
    small = small * v2 + 1.0f / 10.0f;
    small = small * v2 - 1.0f / 3.0f;
    small = small * v2 + 1.0f;
    small = small * v * 1.12837916709551257f;
    /* e^{-x^2}, the argument kept in [-87, 0] (the result stays normal;
     * past |x| = 4 erf rounds to 1 anyway) */
    float z = oc_select_f32(v2 < 87.0f, -v2, -87.0f);
    z = oc_select_f32(z != z, 0.0f, z); /* NaN: the result is replaced below */
    float fk, p = ox_exp_reduced(z, &fk);
    uint32_t bits = (uint32_t)((int32_t)fk + 127) << 23;
    float two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    float ex = p * two_k;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float q = 1.061405429f;
    q = q * t - 1.453152027f;
    q = q * t + 1.421413741f;
    q = q * t - 0.284496736f;
    q = q * t + 0.254829592f;
    float big = 1.0f - q * t * ex;
    big = copysignf(big, v);
    float res = oc_select_f32(a < 0.5f, small, big);
    y[i] = oc_select_f32(v != v, v, res);
  }
}

void oc_erf_f32(const float *x, float *y, int64_t n) {
  if (oc_vmath_avx512())
    oc_erf_avx512(x, y, n);
  else
    erf_block(x, y, n);
}

/* tanh over a block, vectorised like erf_block: for |x| >= 0.5,
 * (1 - e^{-2|x|}) / (1 + e^{-2|x|}) with the sign put back (no cancellation
 * there: e^{-2|x|} <= 0.37); below, the Taylor series to x^15 (the next term
 * is under 3e-8 of the result at 0.5); within 3 ulp of tanh in double
 * over [-12, 12]. Past |x| = 9 the result rounds to
 * +-1; the argument of e is kept there so it never underflows. */
OC_CLONES static void tanh_block(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i], a = fabsf(v), v2 = v * v;
    float small = -929569.0f / 638512875.0f;
    small = small * v2 + 21844.0f / 6081075.0f;
    small = small * v2 - 1382.0f / 155925.0f;
    small = small * v2 + 62.0f / 2835.0f;
    small = small * v2 - 17.0f / 315.0f;
    small = small * v2 + 2.0f / 15.0f;
    small = small * v2 - 1.0f / 3.0f;
    small = small * v2 * v + v;
    float z = oc_select_f32(a < 9.0f, -2.0f * a, -18.0f);
    z = oc_select_f32(z != z, 0.0f, z); /* NaN: the result is replaced below */
    float fk, p = ox_exp_reduced(z, &fk);
    uint32_t bits = (uint32_t)((int32_t)fk + 127) << 23;
    float two_k;
    memcpy(&two_k, &bits, sizeof two_k);
    float ex = p * two_k;
    float big = copysignf((1.0f - ex) / (1.0f + ex), v);
    /* tanh is odd: the sign of v, also for -0 */
    float res = copysignf(oc_select_f32(a < 0.5f, small, big), v);
    y[i] = oc_select_f32(v != v, v, res);
  }
}

void oc_tanh_f32(const float *x, float *y, int64_t n) { tanh_block(x, y, n); }

/* Four vectors of four lanes: the max's latency is hidden (a serial max
 * with a NaN test per element cost more than the softmax around it). */
float oc_row_max_f32(const float *x, int64_t n) {
  float r = x[0];
  int64_t k = 0;
  bool nan = false;
#if defined(__SSE2__)
  if (n >= 16) {
    __m128 m[4], bad = _mm_setzero_ps();
    for (int q = 0; q < 4; q++) m[q] = _mm_loadu_ps(x + 4 * q);
    for (; k + 16 <= n; k += 16)
      for (int q = 0; q < 4; q++) {
        __m128 v = _mm_loadu_ps(x + k + 4 * q);
        bad = _mm_or_ps(bad, _mm_cmpunord_ps(v, v));
        m[q] = _mm_max_ps(m[q], v);
      }
    float t[4];
    _mm_storeu_ps(t, _mm_max_ps(_mm_max_ps(m[0], m[1]), _mm_max_ps(m[2], m[3])));
    r = t[0];
    for (int q = 1; q < 4; q++) r = t[q] > r ? t[q] : r;
    nan = _mm_movemask_ps(bad) != 0;
  }
#endif
  for (; k < n; k++) {
    if (isnan(x[k])) nan = true;
    r = x[k] > r ? x[k] : r;
  }
  return nan ? NAN : r;
}

/* sigmoid (Swish: x times it) over at most 512 values, built on the
 * vectorisable exponential */
OC_CLONES static void sig_block(const float *x, float *y, int64_t n, float scale, bool times_x) {
  float z[512] = {0}, e[512];
  for (int64_t k = 0; k < n; k++) { /* z = -|scale*x| (bit operations: vectorisable) */
    float v = scale * x[k];
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u |= 0x80000000u;
    memcpy(&z[k], &u, sizeof u);
  }
  oc_exp_f32(z, e, n);
  for (int64_t k = 0; k < n; k++) { /* x >= 0: 1/(1+e), else e/(1+e) */
    float v = scale * x[k];
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    float neg = (float)(u >> 31);
    float sg = (1.0f + (e[k] - 1.0f) * neg) / (1.0f + e[k]);
    y[k] = times_x ? x[k] * sg : sg;
  }
}

void oc_sigmoid_f32(const float *x, float *y, int64_t n, float scale, bool times_x) {
  for (int64_t b = 0; b < n; b += 512)
    sig_block(x + b, y + b, n - b < 512 ? n - b : 512, scale, times_x);
}
