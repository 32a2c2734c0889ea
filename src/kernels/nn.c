/* nn.c - geometry, float32 staging, im2col / col2im (see nn.h). */
#include "nn.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "copy_wasm.h"
#include "levels.h"

/* The family's dispatch table (filled at the end of the file, once, from
 * the CPU probe with ONNXC_ISA): the vector forms of the row helpers (NULL:
 * the plain loops below), the strip producers of the implicit GEMM, and
 * the byte im2col row of the level in use. */
typedef struct nn_table {
  void (*gather2_u8)(uint8_t *dst, const uint8_t *src, int64_t n);
  void (*gather2_f32)(float *dst, const float *src, int64_t n);
  void (*pool2_f32)(float *dst, const float *src, int64_t n, int k, bool is_max, float div);
  void (*pool3x3s2_rows_f32)(float *dst, int64_t ldd, const float *x, int64_t ldx, int64_t rows,
                             int64_t n, bool is_max);
  void (*deinterleave)(const uint8_t *p, int64_t n, uint8_t *even, uint8_t *odd);
  void (*copy_rows64)(uint8_t *dst, const uint8_t *src, int64_t ls, int64_t rows, int64_t n);
  void (*im2col_row_u8)(const ox_nn_geom *g, const uint8_t *xc, int64_t kidx, int64_t o0,
                        int64_t o1, uint8_t *dst, uint8_t padv);
  ox_sgemm_strip_fn shift_strip, gen_strip;
} nn_table;

static const nn_table *nn_dispatch(void);

int ox_nn_geom_make(const ox_nn_attrs *a, size_t nd, const int64_t *in, const int64_t *kdims,
                    bool pool, ox_nn_geom *g, ox_err *e) {
  memset(g, 0, sizeof *g);
  if (nd < 1 || nd > OX_NN_MAXD)
    return ox_err_set(e, OX_EINVAL, "%zu spatial dimensions (1..%d supported)", nd, OX_NN_MAXD);
  if ((a->n_kernel && a->n_kernel != nd) || (a->n_strides && a->n_strides != nd) ||
      (a->n_dils && a->n_dils != nd) || (a->n_pads && a->n_pads != 2 * nd))
    return ox_err_set(e, OX_EINVAL,
                      "kernel_shape/strides/dilations/pads do not match %zu spatial dimensions",
                      nd);
  g->nd = nd;
  g->in_size = g->out_size = g->k_size = 1;
  for (size_t d = 0; d < nd; d++) {
    g->in[d] = in[d];
    g->k[d] = a->n_kernel ? a->kernel[d] : kdims ? kdims[d] : 1;
    if (kdims && a->n_kernel && kdims[d] != a->kernel[d])
      return ox_err_set(e, OX_EINVAL, "kernel_shape[%zu]=%lld differs from the weight's %lld", d,
                        (long long)a->kernel[d], (long long)kdims[d]);
    g->stride[d] = a->n_strides ? a->strides[d] : 1;
    g->dil[d] = a->n_dils ? a->dils[d] : 1;
    int64_t kext = (g->k[d] - 1) * g->dil[d] + 1;
    if (a->auto_pad == OX_PAD_SAME_UPPER || a->auto_pad == OX_PAD_SAME_LOWER) {
      g->out[d] = (in[d] + g->stride[d] - 1) / g->stride[d];
      int64_t total = (g->out[d] - 1) * g->stride[d] + kext - in[d];
      if (total < 0) total = 0;
      int64_t small = total / 2;
      g->pb[d] = a->auto_pad == OX_PAD_SAME_UPPER ? small : total - small;
      g->pe[d] = total - g->pb[d];
    } else {
      if (a->auto_pad == OX_PAD_NOTSET && a->n_pads) {
        g->pb[d] = a->pads[d];
        g->pe[d] = a->pads[d + nd];
      }
      int64_t span = in[d] + g->pb[d] + g->pe[d] - kext;
      if (span < 0)
        return ox_err_set(e, OX_EINVAL,
                          "kernel extent %lld exceeds the padded input %lld on spatial axis %zu",
                          (long long)kext, (long long)(in[d] + g->pb[d] + g->pe[d]), d);
      if (pool && a->ceil_mode) {
        g->out[d] = (span + g->stride[d] - 1) / g->stride[d] + 1;
        /* a window that would start in the end padding is dropped */
        if ((g->out[d] - 1) * g->stride[d] >= in[d] + g->pb[d]) g->out[d]--;
      } else {
        g->out[d] = span / g->stride[d] + 1;
      }
    }
    if (!ox_mul_i64(g->in_size, in[d], &g->in_size) ||
        !ox_mul_i64(g->out_size, g->out[d], &g->out_size) ||
        !ox_mul_i64(g->k_size, g->k[d], &g->k_size))
      return ox_err_set(e, OX_EINVAL, "spatial size overflows");
  }
  return OX_OK;
}

int64_t ox_nn_outer(const ox_nn_geom *g) {
  int64_t n = 1;
  for (size_t d = 0; d + 1 < g->nd; d++) n *= g->out[d];
  return n;
}

/* Range [lo, hi) of outputs o along the last axis whose tap o*s - pb + kk*dil
 * lies in [0, in). */
static void valid_range(int64_t out, int64_t in, int64_t s, int64_t off, int64_t *lo, int64_t *hi) {
  /* need 0 <= o*s + off < in */
  int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t h = in - off <= 0 ? 0 : (in - off + s - 1) / s;
  if (h > out) h = out;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

/* Row-major multi-index of linear index t over dims[0..n). */
static void unravel(int64_t t, const int64_t *dims, size_t n, int64_t *idx) {
  for (size_t d = n; d-- > 0;) {
    idx[d] = t % dims[d];
    t /= dims[d];
  }
}

/* Advances the outer output multi-index (all dims but the last). */
static void next_outer(const ox_nn_geom *g, int64_t *oi) {
  for (size_t d = g->nd - 1; d-- > 0;) {
    if (++oi[d] < g->out[d]) break;
    oi[d] = 0;
  }
}

/* Linear index of the input row tapped by outer position oi and kernel
 * offset kk; false when it falls in the padding. */
static bool outer_base(const ox_nn_geom *g, const int64_t *oi, const int64_t *kk, int64_t *base) {
  int64_t b = 0;
  for (size_t d = 0; d + 1 < g->nd; d++) {
    int64_t ii = oi[d] * g->stride[d] - g->pb[d] + kk[d] * g->dil[d];
    if (ii < 0 || ii >= g->in[d]) return false;
    b = b * g->in[d] + ii;
  }
  *base = b;
  return true;
}

/* One im2col row (channel plane xc, kernel offset kk) over outer output rows
 * [o0, o1) into dst (contiguous). */
static void im2col_row(const ox_nn_geom *g, const float *xc, const int64_t *kk, int64_t o0,
                       int64_t o1, float *dst, float padv) {
  size_t L = g->nd - 1;
  int64_t OW = g->out[L], IW = g->in[L], sw = g->stride[L];
  int64_t oi[OX_NN_MAXD];
  int64_t off = kk[L] * g->dil[L] - g->pb[L], lo, hi;
  valid_range(OW, IW, sw, off, &lo, &hi);
  unravel(o0, g->out, L, oi);
  for (int64_t o = o0; o < o1; o++, dst += OW) {
    int64_t base;
    if (!outer_base(g, oi, kk, &base)) {
      for (int64_t w = 0; w < OW; w++) dst[w] = padv;
    } else {
      const float *src = xc + base * IW + off;
      int64_t w = 0;
      for (; w < lo; w++) dst[w] = padv;
      if (sw == 1 && hi - lo >= 32)
        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
      else if (sw == 1)
        for (w = lo; w < hi; w++) dst[w] = src[w];
      else
        for (w = lo; w < hi; w++) dst[w] = src[w * sw];
      for (w = hi; w < OW; w++) dst[w] = padv;
    }
    next_outer(g, oi);
  }
}

/* dst[i] = src[2 i], i < n: the taps of a stride-2 convolution row */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void gather2_avx512(uint8_t *dst,
                                                                                const uint8_t *src,
                                                                                int64_t n) {
  int64_t i = 0;
  /* 32 outputs from 64 source bytes read as 16-bit lanes: keep the low bytes */
  /* the last load ends at src[2 i + 63], inside the n taps while i + 33 <= n */
  for (; i + 33 <= n; i += 32) {
    __m512i v = _mm512_loadu_si512(src + 2 * i);
    _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi16_epi8(v));
  }
  if (i < n) { /* the last m <= 32: 2 m - 1 source bytes, masked */
    int64_t m = n - i;
    __mmask64 lm = ((__mmask64)1 << (2 * m - 1)) - 1;
    __m512i v = _mm512_maskz_loadu_epi8(lm, src + 2 * i);
    _mm256_mask_storeu_epi8(dst + i, (__mmask32)(((uint64_t)1 << m) - 1), _mm512_cvtepi16_epi8(v));
  }
}

__attribute__((target("avx512f"))) static void gather2_f32_avx512(float *dst, const float *src,
                                                                  int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int64_t i = 0;
  for (; i + 17 <= n; i += 16) /* the loads end at src[2 i + 31] <= src[2 (n - 1)] */
    _mm512_storeu_ps(dst + i, _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * i), even,
                                                     _mm512_loadu_ps(src + 2 * i + 16)));
  if (i < n) { /* the last m <= 16: 2 m - 1 source values, masked */
    int64_t m = n - i, k = 2 * m - 1;
    __mmask16 l0 = (__mmask16)(k >= 16 ? 0xFFFF : (1u << k) - 1);
    __mmask16 l1 = (__mmask16)(k > 16 ? (1u << (k - 16)) - 1 : 0);
    __m512 v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(l0, src + 2 * i), even,
                                      _mm512_maskz_loadu_ps(l1, src + 2 * i + 16));
    _mm512_mask_storeu_ps(dst + i, (__mmask16)((1u << m) - 1), v);
  }
}

/* The first count lanes (none below 1, all above 15). */
static inline __mmask16 lanes_upto(int64_t count) {
  return (__mmask16)(count >= 16 ? 0xFFFFu : count > 0 ? (1u << count) - 1u : 0u);
}

/* ox_nn_pool2_f32 with AVX-512: even and odd columns split by permutes
 * (the window's third column is the next even one: a second pair of loads
 * two floats on). */
__attribute__((target("avx512f"))) static void pool2_f32_avx512(float *dst, const float *src,
                                                                int64_t n, int k, bool is_max,
                                                                float div) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  __m512 vdiv = _mm512_set1_ps(div);
  for (int64_t i = 0; i < n; i += 16) {
    int64_t m = n - i < 16 ? n - i : 16, last = 2 * (m - 1) + k - 1; /* last source read */
    const float *p = src + 2 * i;
    __m512 a = _mm512_maskz_loadu_ps(lanes_upto(last + 1), p),
           b = _mm512_maskz_loadu_ps(lanes_upto(last + 1 - 16), p + 16);
    __m512 e = _mm512_permutex2var_ps(a, even, b), o = _mm512_permutex2var_ps(a, odd, b), r;
    /* the comparisons x > r ? x : r and the sums in the scalar order */
    if (is_max)
      r = _mm512_max_ps(o, e);
    else
      r = _mm512_add_ps(e, o);
    if (k == 3) {
      __m512 e2 =
          _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lanes_upto(last + 1 - 2), p + 2), even,
                                 _mm512_maskz_loadu_ps(lanes_upto(last + 1 - 18), p + 18));
      r = is_max ? _mm512_max_ps(e2, r) : _mm512_add_ps(r, e2);
    }
    if (!is_max) r = _mm512_div_ps(r, vdiv);
    _mm512_mask_storeu_ps(dst + i, (__mmask16)((1u << m) - 1), r);
  }
}

/* One column of a 3-row window: the rows combined as the row buffer did. */
__attribute__((target("avx512f"), always_inline)) static inline __m512
pool3_rows(__mmask16 mk, const float *p, int64_t ldx, bool is_max, __m512 init) {
  __m512 a = _mm512_maskz_loadu_ps(mk, p), b = _mm512_maskz_loadu_ps(mk, p + ldx),
         c = _mm512_maskz_loadu_ps(mk, p + 2 * ldx);
  return is_max ? _mm512_max_ps(c, _mm512_max_ps(b, _mm512_max_ps(a, init)))
                : _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(init, a), b), c);
}

/* ox_nn_pool3x3s2_rows_f32 with AVX-512: the three rows of each of 32
 * columns combined once (two vectors), then the window's columns 2i, 2i + 1
 * and 2i + 2 taken from them by permutes, all in registers; the 16th
 * output's last column (2i + 32) from a one-lane third vector. The rows are
 * looped here: SqueezeNet's 13 x 13 maps had paid a call and the row's set-up
 * per 13 outputs, and loaded each column twice (a pair of loads two floats
 * on for the third column). */
__attribute__((target("avx512f"))) static void pool3x3s2_rows_avx512(float *dst, int64_t ldd,
                                                                     const float *x, int64_t ldx,
                                                                     int64_t rows, int64_t n,
                                                                     bool is_max) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i next = _mm512_add_epi32(even, _mm512_set1_epi32(2)); /* lane 15 replaced */
  const __m512 init = _mm512_set1_ps(is_max ? -INFINITY : 0.0f);
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + 2 * r * ldx;
    float *yr = dst + r * ldd;
    for (int64_t i = 0; i < n; i += 16) {
      int64_t m = n - i < 16 ? n - i : 16, last = 2 * (m - 1) + 2; /* last column read */
      const float *p = xr + 2 * i;
      __m512 v0 = pool3_rows(lanes_upto(last + 1), p, ldx, is_max, init);
      __m512 v1 = pool3_rows(lanes_upto(last + 1 - 16), p + 16, ldx, is_max, init);
      __m512 e = _mm512_permutex2var_ps(v0, even, v1), o = _mm512_permutex2var_ps(v0, odd, v1);
      __m512 e2 = _mm512_permutex2var_ps(v0, next, v1);
      if (m == 16) {
        __m512 v2 = pool3_rows(1, p + 32, ldx, is_max, init);
        e2 = _mm512_mask_broadcastss_ps(e2, (__mmask16)0x8000, _mm512_castps512_ps128(v2));
      }
      __m512 y =
          is_max ? _mm512_max_ps(e2, _mm512_max_ps(o, e)) : _mm512_add_ps(_mm512_add_ps(e, o), e2);
      _mm512_mask_storeu_ps(yr + i, (__mmask16)((1u << m) - 1), y);
    }
  }
}
#endif

void ox_nn_pool3x3s2_rows_f32(float *dst, int64_t ldd, const float *x, int64_t ldx, int64_t rows,
                              int64_t n, bool is_max) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->pool3x3s2_rows_f32) {
    nn_dispatch()->pool3x3s2_rows_f32(dst, ldd, x, ldx, rows, n, is_max);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; r++) {
    const float *x0 = x + 2 * r * ldx;
    ox_nn_pool3x3s2_f32(dst + r * ldd, x0, x0 + ldx, x0 + 2 * ldx, n, is_max);
  }
}

void ox_nn_pool3x3s2_f32(float *dst, const float *x0, const float *x1, const float *x2, int64_t n,
                         bool is_max) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->pool3x3s2_rows_f32 && x1 - x0 == x2 - x1) {
    nn_dispatch()->pool3x3s2_rows_f32(dst, 0, x0, x1 - x0, 1, n, is_max);
    return;
  }
#endif
  const float init = is_max ? -INFINITY : 0.0f;
  for (int64_t i = 0; i < n; i++) {
    float r = init;
    for (int c = 0; c < 3; c++) { /* the rows of each column, then the columns */
      const float a = x0[2 * i + c], b = x1[2 * i + c], d = x2[2 * i + c];
      float v;
      if (is_max) {
        v = a > init ? a : init;
        v = b > v ? b : v;
        v = d > v ? d : v;
        r = c == 0 ? v : v > r ? v : r;
      } else {
        v = ((init + a) + b) + d;
        r = c == 0 ? v : r + v;
      }
    }
    dst[i] = r;
  }
}

void ox_nn_pool2_f32(float *dst, const float *src, int64_t n, int k, bool is_max, float div) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->pool2_f32) {
    nn_dispatch()->pool2_f32(dst, src, n, k, is_max, div);
    return;
  }
#endif
  for (int64_t i = 0; i < n; i++) {
    const float *p = src + 2 * i;
    float r = p[0];
    for (int j = 1; j < k; j++) r = is_max ? (p[j] > r ? p[j] : r) : r + p[j];
    dst[i] = is_max ? r : r / div;
  }
}

void ox_nn_gather2_f32(float *dst, const float *src, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->gather2_f32) {
    nn_dispatch()->gather2_f32(dst, src, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; i++) dst[i] = src[2 * i];
}

void ox_nn_gather2_u8(uint8_t *dst, const uint8_t *src, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->gather2_u8) {
    nn_dispatch()->gather2_u8(dst, src, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; i++) dst[i] = src[2 * i];
}

/* the byte im2col row in plain C, compiled per level (levels.h) */
OX_LEVEL_BODY void im2col_row_u8_c(const ox_nn_geom *g, const uint8_t *xc, int64_t kidx, int64_t o0,
                                   int64_t o1, uint8_t *dst, uint8_t padv) {
  size_t L = g->nd - 1;
  int64_t OW = g->out[L], IW = g->in[L], sw = g->stride[L];
  int64_t kk[OX_NN_MAXD], oi[OX_NN_MAXD];
  unravel(kidx, g->k, g->nd, kk);
  int64_t off = kk[L] * g->dil[L] - g->pb[L], lo, hi;
  valid_range(OW, IW, sw, off, &lo, &hi);
  if (ox_nn_shifted_plane(g)) {
    /* the row over whole output rows is the plane shifted by a constant:
     * one copy, then the taps left or right of the image (wrapped into a
     * neighbouring row) and above or below it set to padv */
    int64_t shift = off + (L ? (kk[0] * g->dil[0] - g->pb[0]) * IW : 0);
    int64_t ncols = (o1 - o0) * OW, s0 = o0 * OW + shift;
    int64_t vlo = s0 < 0 ? -s0 : 0, vhi = g->in_size - s0 < ncols ? g->in_size - s0 : ncols;
    if (vhi < vlo) vhi = vlo = 0;
    if (vlo > 0) memset(dst, padv, (size_t)vlo);
    if (vhi > vlo) memcpy(dst + vlo, xc + s0 + vlo, (size_t)(vhi - vlo));
    if (vhi < ncols) memset(dst + vhi, padv, (size_t)(ncols - vhi));
    if (lo > 0 || hi < OW)
      for (int64_t r = 0; r < o1 - o0; r++) {
        uint8_t *d = dst + r * OW;
        for (int64_t w = 0; w < lo; w++) d[w] = padv;
        for (int64_t w = hi > lo ? hi : lo; w < OW; w++) d[w] = padv;
      }
    return;
  }
  unravel(o0, g->out, L, oi);
  for (int64_t o = o0; o < o1; o++, dst += OW) {
    int64_t base;
    if (!outer_base(g, oi, kk, &base)) {
      memset(dst, padv, (size_t)OW);
    } else {
      const uint8_t *src = xc + base * IW + off;
      if (lo > 0) memset(dst, padv, (size_t)lo);
      if (sw == 1)
        memcpy(dst + lo, src + lo, (size_t)(hi - lo));
      else if (sw == 2)
        ox_nn_gather2_u8(dst + lo, src + 2 * lo, hi - lo);
      else
        for (int64_t w = lo; w < hi; w++) dst[w] = src[w * sw];
      if (hi < OW) memset(dst + hi, padv, (size_t)(OW - hi));
    }
    next_outer(g, oi);
  }
}

OX_LEVELS_VOID(im2col_row_u8,
               (const ox_nn_geom *g, const uint8_t *xc, int64_t kidx, int64_t o0, int64_t o1,
                uint8_t *dst, uint8_t padv),
               g, xc, kidx, o0, o1, dst, padv)

void ox_nn_im2col_row_u8(const ox_nn_geom *g, const uint8_t *xc, int64_t kidx, int64_t o0,
                         int64_t o1, uint8_t *dst, uint8_t padv) {
  nn_dispatch()->im2col_row_u8(g, xc, kidx, o0, o1, dst, padv);
}

bool ox_nn_phases_fit(const ox_nn_geom *g, ox_nn_phases *ph) {
  if (g->nd != 2 || g->stride[0] != 2 || g->stride[1] != 2 || g->dil[0] != 1 || g->dil[1] != 1)
    return false;
  /* tap (kh, kw) of output (oh, ow) reads padded (2 oh + kh, 2 ow + kw): row
   * oh + kh / 2 of the phase plane (kh % 2, kw % 2), column ow + kw / 2 */
  ph->ph_rows = g->out[0] + (g->k[0] - 1) / 2;
  ph->ph_cols = g->out[1] + (g->k[1] - 1) / 2;
  ph->plane = ph->ph_rows * ph->ph_cols;
  return true;
}

/* even[q] = p[2 q], odd[q] = p[2 q + 1], q < n (odd NULL: not wanted) */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void deinterleave_avx512(
    const uint8_t *p, int64_t n, uint8_t *even, uint8_t *odd) {
  for (int64_t q = 0; q < n; q += 32) {
    int64_t m = n - q < 32 ? n - q : 32;
    __mmask64 lm = m == 32 ? ~(__mmask64)0 : (((__mmask64)1 << (2 * m)) - 1);
    __mmask32 sm = m == 32 ? ~(__mmask32)0 : (((__mmask32)1 << m) - 1);
    __m512i v = _mm512_maskz_loadu_epi8(lm, p + 2 * q); /* 16-bit lanes: low byte even */
    _mm256_mask_storeu_epi8(even + q, sm, _mm512_cvtepi16_epi8(v));
    if (odd) _mm256_mask_storeu_epi8(odd + q, sm, _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
  }
}
#endif

static void deinterleave(const uint8_t *p, int64_t n, uint8_t *even, uint8_t *odd) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (nn_dispatch()->deinterleave) {
    nn_dispatch()->deinterleave(p, n, even, odd);
    return;
  }
#endif
  for (int64_t q = 0; q < n; q++) {
    even[q] = p[2 * q];
    if (odd) odd[q] = p[2 * q + 1];
  }
}

void ox_nn_phases_build_u8(const ox_nn_geom *g, const ox_nn_phases *ph, const uint8_t *x,
                           int64_t c0, int64_t c1, uint8_t padv, uint8_t *dst) {
  int64_t IH = g->in[0], IW = g->in[1], QH = ph->ph_rows, QW = ph->ph_cols, pl = g->pb[1];
  bool odd_cols = g->k[1] >= 2;
  /* one padded input row: prow[i] is column i - pl, 2 QW bytes (the phase
   * columns q read 2 q and 2 q + 1) */
  int64_t plen = 2 * QW;
  uint8_t stack[4096], *prow = plen <= (int64_t)sizeof stack ? stack : malloc((size_t)plen);
  if (!prow) return; /* the caller's planes stay unset: cannot happen below 2 GiB rows */
  /* the input columns that land in the padded row */
  int64_t vlo = pl, vhi = pl + IW < plen ? pl + IW : plen;
  if (vlo > plen) vlo = plen;
  if (vlo > 0) memset(prow, padv, (size_t)vlo);
  if (vhi < plen) memset(prow + vhi, padv, (size_t)(plen - vhi));
  for (int64_t c = c0; c < c1; c++) {
    const uint8_t *xc = x + c * g->in_size;
    uint8_t *qc = dst + (c - c0) * 4 * ph->plane;
    for (int pr = 0; pr < 2; pr++) {
      if (pr && g->k[0] < 2) continue; /* no tap on odd rows */
      uint8_t *even = qc + 2 * pr * ph->plane, *odd = odd_cols ? even + ph->plane : NULL;
      for (int64_t r = 0; r < QH; r++) {
        int64_t ih = 2 * r + pr - g->pb[0];
        if (ih < 0 || ih >= IH) {
          memset(even + r * QW, padv, (size_t)QW);
          if (odd) memset(odd + r * QW, padv, (size_t)QW);
          continue;
        }
        if (vhi > vlo) memcpy(prow + vlo, xc + ih * IW, (size_t)(vhi - vlo));
        deinterleave(prow, QW, even + r * QW, odd ? odd + r * QW : NULL);
      }
    }
  }
  if (prow != stack) free(prow);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* rows of n <= 64 bytes, source stride ls, destination stride n */
__attribute__((target("avx512f,avx512bw"))) static void copy_rows64(uint8_t *dst,
                                                                    const uint8_t *src, int64_t ls,
                                                                    int64_t rows, int64_t n) {
  __mmask64 m = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
  for (int64_t r = 0; r < rows; r++)
    _mm512_mask_storeu_epi8(dst + r * n, m, _mm512_maskz_loadu_epi8(m, src + r * ls));
}
#endif

void ox_nn_phases_row_u8(const ox_nn_geom *g, const ox_nn_phases *ph, const uint8_t *q,
                         int64_t kidx, int64_t o0, int64_t o1, uint8_t *dst) {
  int64_t kh = kidx / g->k[1], kw = kidx % g->k[1], OW = g->out[1], QW = ph->ph_cols;
  const uint8_t *src = q + (2 * (kh & 1) + (kw & 1)) * ph->plane + (o0 + kh / 2) * QW + kw / 2;
  if (QW == OW) { /* whole rows follow one another */
    memcpy(dst, src, (size_t)((o1 - o0) * OW));
    return;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  if (OW <= 64 && nn_dispatch()->copy_rows64) {
    nn_dispatch()->copy_rows64(dst, src, QW, o1 - o0, OW);
    return;
  }
#endif
  for (int64_t r = 0; r < o1 - o0; r++) memcpy(dst + r * OW, src + r * QW, (size_t)OW);
}

void ox_nn_im2col(const ox_nn_geom *g, int64_t C, const float *x, int64_t o0, int64_t o1,
                  float *col, int64_t ldc, float padv) {
  int64_t kk[OX_NN_MAXD];
  for (int64_t c = 0; c < C; c++)
    for (int64_t kidx = 0; kidx < g->k_size; kidx++) {
      unravel(kidx, g->k, g->nd, kk);
      im2col_row(g, x + c * g->in_size, kk, o0, o1, col + (c * g->k_size + kidx) * ldc, padv);
    }
}

/* 1-D or 2-D, stride 1 and as many output as input columns (e.g. a 3x3
 * kernel with pads of 1, or a 3x1 kernel without padding): the im2col row of
 * one (channel, kernel offset) over whole output rows is the input plane
 * shifted by a constant, with the taps that fall left or right of the image
 * (wrapped into a neighbouring row) or above or below it set to zero. */
bool ox_nn_shifted_plane(const ox_nn_geom *g) {
  if (g->nd > 2) return false;
  for (size_t d = 0; d < g->nd; d++)
    if (g->stride[d] != 1) return false;
  return g->out[g->nd - 1] == g->in[g->nd - 1];
}

static void im2col_packed_shifted(const ox_nn_geom *g, int64_t C, const float *x, int64_t o0,
                                  int64_t o1, float *bp, int nr, int64_t kcb) {
  size_t L = g->nd - 1;
  int64_t OW = g->out[L], IW = g->in[L], S = g->in_size;
  int64_t ncols = (o1 - o0) * OW, npad = (ncols + nr - 1) / nr * nr, K = C * g->k_size;
  int64_t KW = g->k[L], KH = L ? g->k[0] : 1;
  for (int64_t c = 0; c < C; c++) {
    const float *xc = x + c * S;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        int64_t k = (c * KH + kh) * KW + kw, pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
        int64_t off = kw * g->dil[L] - g->pb[L], lo, hi;
        valid_range(OW, IW, 1, off, &lo, &hi);
        int64_t shift = off + (L ? (kh * g->dil[0] - g->pb[0]) * IW : 0);
        /* source index of column j: s0 + j, valid in [0, S) and for j < ncols */
        int64_t s0 = o0 * OW + shift, vlo = -s0, vhi = S - s0;
        if (vlo < 0) vlo = 0;
        if (vhi > ncols) vhi = ncols;
        float *row = bp + pc * npad + (k - pc) * nr;
        float *d = row;
        for (int64_t j = 0; j < npad; j += nr, d += nr * kc) {
          if (j >= vlo && j + nr <= vhi) {
            ox_copy_panel(d, xc + s0 + j, nr);
            continue;
          }
          int64_t a = vlo > j ? vlo : j, b = vhi < j + nr ? vhi : j + nr;
          memset(d, 0, (size_t)nr * sizeof(float));
          if (a < b) memcpy(d + (a - j), xc + s0 + a, (size_t)(b - a) * sizeof(float));
        }
        if (lo == 0 && hi == OW) continue;
        int64_t stride = nr * kc, mask = nr - 1, jj = 0;
        int lg = 0;
        while ((1 << lg) < nr) lg++;
        for (int64_t r = 0; r < o1 - o0; r++, jj += OW) {
          for (int64_t w = 0; w < lo; w++) row[((jj + w) >> lg) * stride + ((jj + w) & mask)] = 0;
          for (int64_t w = hi > lo ? hi : lo; w < OW; w++)
            row[((jj + w) >> lg) * stride + ((jj + w) & mask)] = 0;
        }
      }
  }
}

void ox_nn_im2col_packed(const ox_nn_geom *g, int64_t C, const float *x, int64_t o0, int64_t o1,
                         float *bp, int nr, int64_t kcb, float *rowbuf) {
  int64_t kk[OX_NN_MAXD];
  int64_t ncols = (o1 - o0) * g->out[g->nd - 1], npad = (ncols + nr - 1) / nr * nr;
  int64_t K = C * g->k_size;
  for (int64_t j = ncols; j < npad; j++) rowbuf[j] = 0.0f;
  bool pointwise = g->k_size == 1;
  for (size_t d = 0; d < g->nd; d++)
    if (g->stride[d] != 1 || g->pb[d] != 0 || g->pe[d] != 0) pointwise = false;
  if (pointwise) { /* rows of x are the rows of B: copy them into panels */
    int64_t full = ncols / nr * nr;
    for (int64_t k = 0; k < C; k++) {
      const float *src = x + k * g->in_size + o0 * g->out[g->nd - 1];
      int64_t pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
      float *d = bp + pc * npad + (k - pc) * nr;
      int64_t j = 0;
      for (; j < full; j += nr, d += nr * kc) ox_copy_panel(d, src + j, nr);
      if (j < ncols) {
        memcpy(d, src + j, (size_t)(ncols - j) * sizeof(float));
        memset(d + (ncols - j), 0, (size_t)(nr - (ncols - j)) * sizeof(float));
      }
    }
    return;
  }
  if (ox_nn_shifted_plane(g) && (nr & (nr - 1)) == 0) {
    im2col_packed_shifted(g, C, x, o0, o1, bp, nr, kcb);
    return;
  }
  for (int64_t c = 0; c < C; c++)
    for (int64_t kidx = 0; kidx < g->k_size; kidx++) {
      unravel(kidx, g->k, g->nd, kk);
      im2col_row(g, x + c * g->in_size, kk, o0, o1, rowbuf, 0.0f);
      int64_t k = c * g->k_size + kidx, pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
      float *d = bp + pc * npad + (k - pc) * nr;
      for (int64_t j = 0; j < npad; j += nr, d += nr * kc)
        ox_copy_panel(d, rowbuf + j, nr);
    }
}

void ox_nn_im2col_packed_1d(const ox_nn_geom *g, int64_t C, const float *x, int64_t j0, int64_t j1,
                            float *bp, int nr, int64_t kcb) {
  int64_t L = g->in[0], OL = g->out[0], st = g->stride[0], KW = g->k[0];
  int64_t ncols = j1 - j0, npad = (ncols + nr - 1) / nr * nr, K = C * KW;
  /* (looked up once: the table's lookup costs as much as a panel) */
  void (*g2)(float *, const float *, int64_t) = st == 2 ? nn_dispatch()->gather2_f32 : NULL;
  for (int64_t c = 0; c < C; c++) {
    const float *xc = x + c * L;
    for (int64_t kw = 0; kw < KW; kw++) {
      int64_t k = c * KW + kw, pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
      int64_t off = kw * g->dil[0] - g->pb[0], lo, hi;
      /* output positions [lo, hi) read inside x; the others read the padding */
      valid_range(OL, L, st, off, &lo, &hi);
      float *row = bp + pc * npad + (k - pc) * nr;
      for (int64_t jp = 0; jp < npad; jp += nr, row += nr * kc) {
        int64_t a = j0 + jp, b = a + nr; /* this panel's output positions */
        if (a >= lo && b <= hi && b <= j1) {
          const float *src = xc + a * st + off;
          if (st == 1)
            ox_copy_panel(row, src, nr);
          else if (g2) /* even columns by permutes (AVX-512) */
            g2(row, src, nr);
          else
            for (int q = 0; q < nr; q++) row[q] = src[q * st];
          continue;
        }
        for (int q = 0; q < nr; q++) {
          int64_t j = a + q;
          row[q] = j < j1 && j >= lo && j < hi ? xc[j * st + off] : 0.0f;
        }
      }
    }
  }
}

/* col2im for one element type (float for ConvTranspose, double for Col2Im)
 * over the column positions of outer rows [o0, o1) (column row stride ldcol,
 * column 0 = first position of row o0). */
#define OX_NN_COL2IM(NAME, T)                                                                    \
  void NAME(const ox_nn_geom *g, int64_t C, const T *col, int64_t ldcol, int64_t o0, int64_t o1, \
            T *y) {                                                                              \
    size_t nd = g->nd, L = nd - 1;                                                               \
    int64_t OW = g->out[L], IW = g->in[L], sw = g->stride[L];                                    \
    int64_t kk[OX_NN_MAXD], oi[OX_NN_MAXD];                                                      \
    for (int64_t c = 0; c < C; c++) {                                                            \
      T *yc = y + c * g->in_size;                                                                \
      for (int64_t kidx = 0; kidx < g->k_size; kidx++) {                                         \
        unravel(kidx, g->k, nd, kk);                                                             \
        const T *row = col + (c * g->k_size + kidx) * ldcol;                                     \
        int64_t off = kk[L] * g->dil[L] - g->pb[L], lo, hi;                                      \
        valid_range(OW, IW, sw, off, &lo, &hi);                                                  \
        unravel(o0, g->out, L, oi);                                                              \
        for (int64_t o = o0; o < o1; o++) {                                                      \
          const T *src = row + (o - o0) * OW;                                                    \
          int64_t base;                                                                          \
          if (outer_base(g, oi, kk, &base)) {                                                    \
            T *dst = yc + base * IW + off;                                                       \
            for (int64_t w = lo; w < hi; w++) dst[w * sw] += src[w];                             \
          }                                                                                      \
          next_outer(g, oi);                                                                     \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }

OX_NN_COL2IM(ox_nn_col2im_add_rows, float)
OX_NN_COL2IM(ox_nn_col2im_add_rows_f64, double)

void ox_nn_col2im_add(const ox_nn_geom *g, int64_t C, const float *col, float *y) {
  ox_nn_col2im_add_rows(g, C, col, g->out_size, 0, ox_nn_outer(g), y);
}

void ox_nn_col2im_add_f64(const ox_nn_geom *g, int64_t C, const double *col, double *y) {
  ox_nn_col2im_add_rows_f64(g, C, col, g->out_size, 0, ox_nn_outer(g), y);
}

/* the general strip producer's limits: segments per strip, kernel width */
enum { GS_MAXSEG = 8, GS_MAXKW = 16 };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Rows [k0, k0+kc) x columns [j0, j0+n) of the shifted-plane im2col as one
 * strip: per row, two masked loads of the input plane (lanes outside the
 * image or left/right of it are zero, never read). */
__attribute__((target("avx512f"))) static void shift_strip_avx512(void *vctx, int64_t k0,
                                                                  int64_t kc, int64_t j0, int n,
                                                                  float *buf) {
  const ox_nn_shift *sc = vctx;
  const ox_nn_geom *g = sc->g;
  size_t L = g->nd - 1;
  int64_t OW = g->out[L], IW = g->in[L], S = g->in_size, KW = g->k[L], ksz = g->k_size;
  int64_t p0 = sc->o0 * OW + j0; /* output position of column j0 */
  /* per kernel offset: source index of column j0 and the lanes inside the image */
  uint32_t kmask[OX_NN_SHIFT_MAXK];
  int64_t kshift[OX_NN_SHIFT_MAXK];
  for (int64_t kw = 0; kw < KW; kw++) {
    int64_t off = kw * g->dil[L] - g->pb[L], ow = p0 % OW;
    uint32_t cm = 0;
    for (int q = 0; q < n; q++) {
      if (ow + off >= 0 && ow + off < IW) cm |= 1u << q;
      if (++ow == OW) ow = 0;
    }
    for (int64_t kh = 0; kh < ksz / KW; kh++) {
      int64_t s0 = p0 + off + (L ? (kh * g->dil[0] - g->pb[0]) * IW : 0);
      int64_t qlo = s0 < 0 ? -s0 : 0, qhi = S - s0;
      uint32_t m = 0;
      if (qlo < 32 && qhi > qlo) {
        m = qhi >= 32 ? 0xffffffffu : (1u << qhi) - 1u;
        m &= ~((1u << qlo) - 1u);
      }
      kmask[kh * KW + kw] = m & cm;
      kshift[kh * KW + kw] = s0;
    }
  }
  int64_t c = k0 / ksz, kidx = k0 % ksz;
  const float *xc = sc->x + c * S;
  for (int64_t k = 0; k < kc; k++) {
    uint32_t m = kmask[kidx];
    const float *src = xc + kshift[kidx];
    _mm_prefetch((const char *)(src + 96), _MM_HINT_T0);
    _mm512_store_ps(buf + k * 32, _mm512_maskz_loadu_ps((__mmask16)m, src));
    _mm512_store_ps(buf + k * 32 + 16, _mm512_maskz_loadu_ps((__mmask16)(m >> 16), src + 16));
    if (++kidx == ksz) {
      kidx = 0;
      xc += S;
    }
  }
}

/* Any 2-D geometry with column stride 1 or 2: the 32 columns of a strip are
 * cut into segments, one per output row (at most GS_MAXSEG); each segment
 * of each tap row is two (stride 1) or four masked loads (stride 2, even
 * elements picked by a permute) from a virtual start such that strip lane q
 * reads element q * sw; lanes outside the segment or the image are masked. */
__attribute__((target("avx512f"))) static void gen_strip_avx512(void *vctx, int64_t k0, int64_t kc,
                                                                int64_t j0, int n, float *buf) {
  const ox_nn_shift *sc = vctx;
  const ox_nn_geom *g = sc->g;
  int64_t IH = g->in[0], IW = g->in[1], OW = g->out[1], KH = g->k[0], KW = g->k[1];
  int64_t sh = g->stride[0], sw = g->stride[1], S = g->in_size, ksz = g->k_size;
  int64_t p0 = sc->o0 * OW + j0;
  int64_t seg_oh[GS_MAXSEG], seg_base[GS_MAXSEG];
  uint64_t seg_mask[GS_MAXSEG][GS_MAXKW];
  uint32_t seg_lanes[GS_MAXSEG]; /* strip lanes of the segment */
  int nseg = 0;
  for (int q0 = 0; q0 < n && nseg < GS_MAXSEG;) {
    int64_t p = p0 + q0, oh = p / OW, ow = p % OW;
    int q1 = q0 + (int)(OW - ow < n - q0 ? OW - ow : n - q0);
    seg_oh[nseg] = oh;
    seg_lanes[nseg] = (q1 >= 32 ? 0xffffffffu : (1u << q1) - 1u) & ~((1u << q0) - 1u);
    seg_base[nseg] = (ow - q0) * sw - g->pb[1]; /* input column of lane 0 at kw = 0 */
    for (int64_t kw = 0; kw < KW; kw++) {
      uint64_t m = 0;
      for (int q = q0; q < q1; q++) {
        int64_t iw = seg_base[nseg] + q * sw + kw * g->dil[1];
        if (iw >= 0 && iw < IW) m |= 1ull << (q * sw);
      }
      seg_mask[nseg][kw] = m;
    }
    nseg++;
    q0 = q1;
  }
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  int64_t c = k0 / ksz, kidx = k0 % ksz, kh = kidx / KW, kw = kidx % KW;
  const float *xc = sc->x + c * S;
  for (int64_t k = 0; k < kc; k++) {
    __m512 lo = _mm512_setzero_ps(), hi = lo;
    for (int sgi = 0; sgi < nseg; sgi++) {
      int64_t ih = seg_oh[sgi] * sh - g->pb[0] + kh * g->dil[0];
      if (ih < 0 || ih >= IH) continue;
      uint64_t m = seg_mask[sgi][kw];
      const float *src = xc + ih * IW + seg_base[sgi] + kw * g->dil[1];
      _mm_prefetch((const char *)(src + 64 * sw), _MM_HINT_T0); /* two strips ahead */
      if (sw == 1) {
        lo = _mm512_mask_loadu_ps(lo, (__mmask16)m, src);
        hi = _mm512_mask_loadu_ps(hi, (__mmask16)(m >> 16), src + 16);
      } else {
        __m512 a = _mm512_maskz_loadu_ps((__mmask16)m, src);
        __m512 b = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), src + 16);
        __m512 c2 = _mm512_maskz_loadu_ps((__mmask16)(m >> 32), src + 32);
        __m512 d = _mm512_maskz_loadu_ps((__mmask16)(m >> 48), src + 48);
        lo = _mm512_mask_mov_ps(lo, (__mmask16)seg_lanes[sgi], _mm512_permutex2var_ps(a, even, b));
        hi = _mm512_mask_mov_ps(hi, (__mmask16)(seg_lanes[sgi] >> 16),
                                _mm512_permutex2var_ps(c2, even, d));
      }
    }
    _mm512_store_ps(buf + k * 32, lo);
    _mm512_store_ps(buf + k * 32 + 16, hi);
    if (++kw == KW) {
      kw = 0;
      if (++kh == KH) {
        kh = 0;
        xc += S;
      }
    }
  }
}
#endif

ox_sgemm_strip_fn ox_nn_shift_strip_fn(const ox_nn_geom *g) {
  const nn_table *t = nn_dispatch();
  if (!t->shift_strip) return NULL;
  if (ox_nn_shifted_plane(g) && g->k_size <= OX_NN_SHIFT_MAXK) return t->shift_strip;
  /* segments of at least 5 columns: at most GS_MAXSEG per strip of 32 */
  if (g->nd == 2 && (g->stride[1] == 1 || g->stride[1] == 2) && g->out[1] >= 5 &&
      g->k[1] <= GS_MAXKW)
    return t->gen_strip;
  return NULL;
}

static nn_table g_nn;
static pthread_once_t g_nn_once = PTHREAD_ONCE_INIT;

static void nn_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  nn_table *t = &g_nn;
  t->im2col_row_u8 = OX_LEVEL_PICK(im2col_row_u8);
#if defined(__x86_64__) && defined(__GNUC__)
  if (c->avx512f) {
    t->gather2_f32 = gather2_f32_avx512;
    t->pool2_f32 = pool2_f32_avx512;
    t->pool3x3s2_rows_f32 = pool3x3s2_rows_avx512;
    t->shift_strip = shift_strip_avx512;
    t->gen_strip = gen_strip_avx512;
  }
  if (c->avx512bw && c->avx512vl) {
    t->gather2_u8 = gather2_avx512;
    t->deinterleave = deinterleave_avx512;
  }
  if (c->avx512bw) t->copy_rows64 = copy_rows64;
#endif
}

static const nn_table *nn_dispatch(void) {
  pthread_once(&g_nn_once, nn_fill);
  return &g_nn;
}
