/* qconv_dw.c - depthwise 8-bit convolution with requantisation (see
 * qconv_dw.h).
 *
 * The GEMM kernel of qconv.c runs a depthwise layer as one product per
 * channel of a single weight row: MobileNet's int8 depthwise layers took
 * longer than the rest of the network. Here each task takes whole channels:
 * the channel's plane is widened once to float with the zero point taken
 * off, into a bordered plane whose border is 0 (the padding's value zx - zx),
 * stride-2 layers as two planes of even and odd columns; then every tap of
 * a 16-wide run of outputs is one FMA from a contiguous row. The sums are
 * exact: each product is an integer of at most 255 * 255 and a 7 x 7
 * window's sum stays below 2^24. The requantisation is qconv.c's: fma(sum,
 * mult, bias + zy), clamped to [lo, hi], rounded to nearest even. */
#include "qconv_dw.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"
#include "../base/threadpool.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define QDW_X86 1
#endif

enum { QDW_MAXK = 7 };

typedef struct qdw_job {
  const ox_nn_geom *g;
  const uint8_t *x;
  int32_t zx;
  const void *w;
  bool w_signed;
  const void *zw;
  int64_t zw_n;
  const ox_qconv_req *q;
  uint8_t *y;
  int64_t pw, ph; /* bordered plane: width (per phase) and height */
  int fail;
#ifdef QDW_X86
  __m512i idx[2]; /* VNNI path: lane l of group q takes bytes l sw + 4q .. + 3 of a load */
  __m512i shift;  /* and byte i of a row's first chunk is x's byte i - pl */
#endif
} qdw_job;

bool ox_qconv_dw_supported(const ox_nn_geom *g) {
  if (g->nd != 2) return false;
  for (int d = 0; d < 2; d++)
    if (g->k[d] < 1 || g->k[d] > QDW_MAXK || g->dil[d] != 1 || g->stride[d] < 1 ||
        g->stride[d] > 2 || g->pb[d] < 0 || g->pe[d] < 0 || g->pb[d] >= g->k[d] ||
        g->pe[d] >= g->k[d])
      return false;
  /* columns 2-strided only (rows index the plane directly) */
  return true;
}

static int32_t byte_at(const void *p, bool is_signed, int64_t i) {
  return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

#ifdef QDW_X86
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void qdw_channel(const qdw_job *j,
                                                                             int64_t c,
                                                                             float *plane) {
  const ox_nn_geom *g = j->g;
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t KH = g->k[0], KW = g->k[1], sh = g->stride[0], sw = g->stride[1];
  int64_t pt = g->pb[0], pl = g->pb[1], PW = j->pw, PH = j->ph;
  /* the bordered plane, zero point taken off; stride 2: even columns in
   * the first half of each row, odd ones in the second. Only the border is
   * cleared: the rows of x overwrite the rest. */
  int64_t rs = PW * sw; /* floats per plane row */
  const uint8_t *xc = j->x + c * g->in_size;
  const __m512 zx = _mm512_set1_ps((float)j->zx);
  memset(plane, 0, (size_t)(pt * rs) * sizeof *plane);
  if (PH > H + pt) memset(plane + (H + pt) * rs, 0, (size_t)((PH - H - pt) * rs) * sizeof *plane);
  /* stride 2: input column 2i goes to phase pl % 2 at i + pl / 2, column
   * 2i + 1 to phase (pl + 1) % 2 at i + (pl + 1) / 2 */
  int64_t ev_at = (pl & 1) * PW + (pl >> 1), od_at = ((pl + 1) & 1) * PW + ((pl + 1) >> 1);
  int64_t n_ev = (W + 1) / 2, n_od = W / 2;
  for (int64_t r = 0; r < H; r++) {
    float *row = plane + (r + pt) * rs;
    const uint8_t *src = xc + r * W;
    if (sw == 1) {
      for (int64_t i = 0; i < pl; i++) row[i] = 0.0f;
      for (int64_t i = W + pl; i < PW; i++) row[i] = 0.0f;
      for (int64_t i = 0; i < W; i += 16) {
        __mmask16 m = W - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (W - i)) - 1);
        __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, src + i)));
        _mm512_mask_storeu_ps(row + pl + i, m, _mm512_sub_ps(v, zx));
      }
    } else {
      memset(row, 0, (size_t)rs * sizeof *row);
      for (int64_t i = 0; i < n_ev; i += 16) {
        int64_t left = W - 2 * i;
        __mmask32 bm = left >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << left) - 1);
        __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi8(bm, src + 2 * i));
        __m512 ev =
            _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(0xFF))), zx);
        __m512 od = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v, 8)), zx);
        __mmask16 me = n_ev - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n_ev - i)) - 1);
        __mmask16 mo = n_od - i >= 16 ? (__mmask16)0xFFFF
                       : n_od > i     ? (__mmask16)((1u << (n_od - i)) - 1)
                                      : (__mmask16)0;
        _mm512_mask_storeu_ps(row + ev_at + i, me, ev);
        _mm512_mask_storeu_ps(row + od_at + i, mo, od);
      }
    }
  }
  /* this channel's weights, zero point taken off */
  float wv[QDW_MAXK * QDW_MAXK];
  int32_t zwc = j->zw ? byte_at(j->zw, j->w_signed, j->zw_n == 1 ? 0 : c) : 0;
  for (int64_t t = 0; t < KH * KW; t++)
    wv[t] = (float)(byte_at(j->w, j->w_signed, c * KH * KW + t) - zwc);
  const ox_qconv_req *q = j->q;
  const __m512 mult = _mm512_set1_ps(q->mult[c]);
  const __m512 add = _mm512_set1_ps((q->bias ? q->bias[c] : 0.0f) + (float)q->zy);
  const __m512 lo = _mm512_set1_ps((float)q->lo), hi = _mm512_set1_ps((float)q->hi);
  uint8_t *yc = j->y + c * g->out_size;
  for (int64_t oy = 0; oy < OH; oy++) {
    for (int64_t ox = 0; ox < OW; ox += 16) {
      __mmask16 m = OW - ox >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (OW - ox)) - 1);
      __m512 acc = _mm512_setzero_ps();
      for (int64_t ky = 0; ky < KH; ky++) {
        const float *row = plane + (oy * sh + ky) * rs;
        for (int64_t kx = 0; kx < KW; kx++) {
          /* stride 1: column ox + kx; stride 2: column 2 ox + kx, in phase kx % 2 at ox + kx / 2 */
          const float *p = sw == 1 ? row + ox + kx : row + (kx & 1) * PW + ox + (kx >> 1);
          acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p), _mm512_set1_ps(wv[ky * KW + kx]), acc);
        }
      }
      __m512 f = _mm512_fmadd_ps(acc, mult, add);
      f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
      __m512i r = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      _mm_mask_storeu_epi8(yc + oy * OW + ox, m, _mm512_cvtepi32_epi8(r));
    }
  }
}

/* With int8 weights whose zero points are all 0 (symmetric, as tools
 * write them) and VNNI: the byte plane bordered with zx (a padded value
 * then adds zx w, taken off with the rest of zx sum(w)), each 64-byte load
 * of a row permuted (vpermb) into the four-tap windows of 16 outputs, one
 * vpdpbusd per four taps of a row: sum x w - zx sum(w), exact in int32. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni"))) static void
qdw_channel_vnni(const qdw_job *j, int64_t c, uint8_t *bp) {
  const ox_nn_geom *g = j->g;
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t KH = g->k[0], KW = g->k[1], sh = g->stride[0], sw = g->stride[1];
  int64_t pt = g->pb[0], pl = g->pb[1], BW = j->pw, PH = j->ph;
  uint8_t zx = (uint8_t)j->zx;
  const uint8_t *xc = j->x + c * g->in_size;
  /* rows in 64-byte chunks (BW is a multiple of 64): chunk k holds x's
   * columns 64k - pl .., zx outside [0, W); the first is loaded from
   * column 0 and moved up by pl lanes */
  const __m512i zxv = _mm512_set1_epi8((char)zx);
  for (int64_t r = 0; r < PH; r++) {
    uint8_t *row = bp + r * BW;
    int64_t ir = r - pt;
    if (ir < 0 || ir >= H) {
      for (int64_t k = 0; k < BW; k += 64) _mm512_storeu_si512(row + k, zxv);
      continue;
    }
    const uint8_t *src = xc + ir * W;
    __mmask64 m0 = W >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << W) - 1);
    __m512i v = _mm512_permutexvar_epi8(j->shift, _mm512_maskz_loadu_epi8(m0, src));
    __mmask64 in0 = (W + pl >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (W + pl)) - 1)) &
                    ~(((__mmask64)1 << pl) - 1);
    _mm512_storeu_si512(row, _mm512_mask_blend_epi8(in0, zxv, v));
    for (int64_t k = 64; k < BW; k += 64) {
      int64_t at = k - pl, left = W - at; /* at >= 61 */
      __mmask64 m = left >= 64 ? ~(__mmask64)0 : left > 0 ? (((__mmask64)1 << left) - 1) : 0;
      _mm512_storeu_si512(row + k, _mm512_mask_loadu_epi8(zxv, m, left > 0 ? src + at : src));
    }
  }
  /* weights in groups of four taps per row (zeros past the row's end) */
  const int8_t *wc = (const int8_t *)j->w + c * KH * KW;
  int64_t ng = (KW + 3) / 4;
  int32_t wg[QDW_MAXK][2], wsum = 0;
  for (int64_t ky = 0; ky < KH; ky++)
    for (int64_t q = 0; q < ng; q++) {
      uint32_t v = 0;
      for (int b = 0; b < 4; b++)
        if (4 * q + b < KW) v |= (uint32_t)(uint8_t)wc[ky * KW + 4 * q + b] << (8 * b);
      wg[ky][q] = (int32_t)v;
    }
  for (int64_t t = 0; t < KH * KW; t++) wsum += wc[t];
  const __m512i *idx = j->idx;
  const ox_qconv_req *q = j->q;
  const __m512i corr = _mm512_set1_epi32(-(int32_t)zx * wsum);
  const __m512 mult = _mm512_set1_ps(q->mult[c]);
  const __m512 add = _mm512_set1_ps((q->bias ? q->bias[c] : 0.0f) + (float)q->zy);
  const __m512 lo = _mm512_set1_ps((float)q->lo), hi = _mm512_set1_ps((float)q->hi);
  uint8_t *yc = j->y + c * g->out_size;
  for (int64_t oy = 0; oy < OH; oy++) {
    const uint8_t *r0 = bp + oy * sh * BW;
    for (int64_t ox = 0; ox < OW; ox += 16) {
      __m512i acc = corr;
      for (int64_t ky = 0; ky < KH; ky++) {
        __m512i v = _mm512_loadu_si512(r0 + ky * BW + ox * sw);
        for (int64_t qq = 0; qq < ng; qq++)
          acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx[qq], v),
                                    _mm512_set1_epi32(wg[ky][qq]));
      }
      __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), mult, add);
      f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
      __m512i r = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      __mmask16 m = OW - ox >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (OW - ox)) - 1);
      _mm_mask_storeu_epi8(yc + oy * OW + ox, m, _mm512_cvtepi32_epi8(r));
    }
  }
}

static void qdw_task_vnni(void *arg, int64_t c0, int64_t c1) {
  qdw_job *j = arg;
  uint8_t *bp = ox_scratch(0, (size_t)(j->ph * j->pw) + 64);
  if (!bp) {
    __atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t c = c0; c < c1; c++) qdw_channel_vnni(j, c, bp);
}

static void qdw_task(void *arg, int64_t c0, int64_t c1) {
  qdw_job *j = arg;
  float *plane = ox_scratch(0, (size_t)(j->ph * j->pw * j->g->stride[1]) * sizeof(float) + 64);
  if (!plane) {
    __atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t c = c0; c < c1; c++) qdw_channel(j, c, plane);
}
#endif

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): the float-plane task (AVX-512 BW/VL) and the byte-plane one
 * (VBMI + VNNI, symmetric int8 weights); NULL where the CPU (or the cap)
 * lacks them: then the caller takes the GEMM path. */
typedef struct qdw_table {
  void (*plane)(void *arg, int64_t c0, int64_t c1);
  void (*bytes)(void *arg, int64_t c0, int64_t c1);
} qdw_table;

static qdw_table g_qdw;
static pthread_once_t g_qdw_once = PTHREAD_ONCE_INIT;

static void qdw_fill(void) {
  const ox_cpu *c = ox_cpu_get();
#ifdef QDW_X86
  if (c->avx512bw && c->avx512vl) {
    g_qdw.plane = qdw_task;
    if (c->avx512vbmi && c->avx512vnni) g_qdw.bytes = qdw_task_vnni;
  }
#else
  (void)c;
#endif
}

static const qdw_table *qdw_dispatch(void) {
  pthread_once(&g_qdw_once, qdw_fill);
  return &g_qdw;
}

int ox_qconv_dw_run(const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx, const void *w,
                    bool w_signed, const void *zw, int64_t zw_n, const ox_qconv_req *q, void *y,
                    ox_thread_pool *pool, ox_err *e) {
#ifdef QDW_X86
  const qdw_table *tab = qdw_dispatch();
  if (!ox_qconv_dw_supported(g) || !tab->plane) return OX_EUNSUPPORTED;
  int64_t sw = g->stride[1];
  /* bordered rows: every tap of every output inside, the width rounded up
   * to whole 16-float runs of outputs per phase */
  int64_t ow_pad = (g->out[1] + 15) / 16 * 16;
  int64_t need_w = sw == 1 ? ow_pad + g->k[1] - 1 : ow_pad + (g->k[1] + 1) / 2;
  int64_t have_w = sw == 1 ? g->in[1] + g->pb[1] + g->pe[1] : (g->in[1] + g->pb[1] + 1) / 2 + 1;
  qdw_job j = {g,
               x,
               zx,
               w,
               w_signed,
               zw,
               zw_n,
               q,
               y,
               need_w > have_w ? need_w : have_w,
               (g->out[0] - 1) * g->stride[0] + g->k[0],
               0};
  if (j.ph < g->in[0] + g->pb[0]) j.ph = g->in[0] + g->pb[0];
  /* a few channels per task: each one's plane is made once */
  int64_t grain = 1 + 65536 / (g->in_size + g->out_size * g->k_size);
  bool zw_zero = true;
  for (int64_t i = 0; zw && i < zw_n; i++) zw_zero &= byte_at(zw, w_signed, i) == 0;
  if (w_signed && zw_zero && tab->bytes) {
    /* byte rows: every 64-byte load of an output run inside */
    int64_t bw = (ow_pad - 16) * sw + 64, wide = g->in[1] + g->pb[1] + g->pe[1];
    qdw_job jb = j;
    jb.pw = ((bw > wide ? bw : wide) + 63) / 64 * 64;
    uint8_t ib[64];
    for (int64_t grp = 0; grp < 2; grp++) {
      for (int l = 0; l < 16; l++)
        for (int b = 0; b < 4; b++) {
          int64_t at = l * sw + 4 * grp + b;
          ib[l * 4 + b] = (uint8_t)(at < 64 ? at : 0);
        }
      memcpy(&jb.idx[grp], ib, 64);
    }
    for (int i = 0; i < 64; i++) ib[i] = (uint8_t)(i >= g->pb[1] ? i - g->pb[1] : 0);
    memcpy(&jb.shift, ib, 64);
    ox_parallel_for(pool, C, grain, tab->bytes, &jb);
    if (jb.fail) return ox_err_set(e, OX_ENOMEM, "out of memory (depthwise integer convolution)");
    return OX_OK;
  }
  ox_parallel_for(pool, C, grain, tab->plane, &j);
  if (j.fail) return ox_err_set(e, OX_ENOMEM, "out of memory (depthwise integer convolution)");
  return OX_OK;
#else
  (void)g, (void)x, (void)C, (void)zx, (void)w, (void)w_signed, (void)zw, (void)zw_n, (void)q;
  (void)y, (void)pool, (void)e;
  return OX_EUNSUPPORTED;
#endif
}
