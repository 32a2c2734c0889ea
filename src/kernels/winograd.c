/* winograd.c - F(4 x 4, 3 x 3) convolutions (see winograd.h).
 *
 * The matrices are Lavin and Gray's ("Fast Algorithms for Convolutional
 * Neural Networks", 2016) for the interpolation points 0, 1, -1, 2, -2:
 *   U = G g G^T (6 x 6 per kernel), V = B^T d B (6 x 6 per input tile),
 *   Y = A^T (sum over input channels of U . V) A (4 x 4 per output tile).
 *
 * A task takes one image, a band of consecutive tiles (row-major, across
 * tile rows) and a range of output channels:
 * 1. input transform: each input channel's rows of the band are copied into
 *    a plane with zero borders (padding and the tiles past the image need
 *    no tests), then 16 tiles at a time (one per lane) go through B^T d B;
 *    value xi of tile t lands at V[xi][c][t];
 * 2. the 36 products M[xi] (outputs x tiles) = U[xi] (outputs x inputs) x
 *    V[xi] by the GEMM's packed-A kernel reading V in place, a chunk of
 *    output channels at a time so that the chunk's products stay in cache;
 * 3. output transform A^T m A of the chunk, 16 tiles at a time, the four
 *    columns of each tile interleaved back into rows, bias and epilogue
 *    applied as the rows are stored.
 * On more than two threads, where that plan would transform the same input
 * in three or more parts of the output channels, the shared plan runs the
 * three steps as three rounds of tasks over whole images instead (see
 * wino_in_task). */
#include "winograd.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/cpu.h"
#include "split.h"
#include "winograd_wasm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define OX_WINO_X86 1
#include <immintrin.h>

#include "epi_avx512.h"
#endif

enum {
  WINO_XI = 36,       /* values of a transformed tile */
  WINO_TILES = 128,   /* the most tiles per band (the table's tiles at most this) */
  WINO_SCRATCH_V = 5, /* scratch slots (base.h) */
  WINO_SCRATCH_M = 6,
  WINO_SCRATCH_PAD = 7
};

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): whether the transforms' level (AVX-512 with VL, and the
 * GEMM's in-place 12-row tiles) is there, and the blocking. */
typedef struct wino_table {
  bool ok;
  int64_t kchunk;    /* output channels per product chunk (whole 12-row panels) */
  int64_t tiles;     /* tiles per band (the products' columns) ... */
  int64_t v_bytes;   /* ... unless the band's transformed input gets larger */
  int64_t min_tiles; /* the least tiles of a band split for the threads */
} wino_table;

/* Blocking per microarchitecture (today's values on every row; a core
 * that wants others gets its row here). */
#define OX_WINO_BLOCKING \
  { true, 48, 128, 2048 * 1024, 32 }
static const wino_table k_wino_blocking[] = {
    [OX_UARCH_GENERIC] = OX_WINO_BLOCKING,    [OX_UARCH_INTEL] = OX_WINO_BLOCKING,
    [OX_UARCH_INTEL_AVX2] = OX_WINO_BLOCKING, [OX_UARCH_ZEN2_3] = OX_WINO_BLOCKING,
    [OX_UARCH_ZEN4] = OX_WINO_BLOCKING,       [OX_UARCH_ZEN5] = OX_WINO_BLOCKING,
};

static wino_table g_wino;
static pthread_once_t g_wino_once = PTHREAD_ONCE_INIT;

static void wino_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  size_t u =
      (size_t)c->uarch < sizeof k_wino_blocking / sizeof *k_wino_blocking ? (size_t)c->uarch : 0;
  g_wino = k_wino_blocking[u];
#ifdef OX_WINO_X86
  g_wino.ok = ox_sgemm_has_ua() && c->avx512vl;
#elif defined(__wasm_simd128__)
  g_wino.ok = ox_wino_wasm_ok(); /* the SIMD128 level (winograd_wasm.c) */
#else
  g_wino.ok = false;
#endif
}

static const wino_table *wino_dispatch(void) {
  pthread_once(&g_wino_once, wino_fill);
  return &g_wino;
}

struct ox_wino {
  int64_t M, C;
  ox_sgemm_packed *u[WINO_XI]; /* U[xi] (M x C), packed for the GEMM */
};

/* G of F(4, 3): the kernel transform. */
static const double wino_g[6][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};

bool ox_wino_fits(const ox_nn_geom *g, int64_t C, int64_t M) {
#if defined(OX_WINO_X86) || defined(__wasm_simd128__)
  if (g->nd != 2 || g->k[0] != 3 || g->k[1] != 3) return false;
  for (size_t d = 0; d < 2; d++)
    if (g->stride[d] != 1 || g->dil[d] != 1 || g->pb[d] > 2 || g->pe[d] > 2 || g->pb[d] < 0 ||
        g->pe[d] < 0)
      return false;
  /* too few channels: the transforms cost more than the products save */
  if (C < 16 || M < 16) return false;
  /* the transformed kernels take four times W's memory: not for the
   * largest layers (at most ~300 MB of them) */
  if (C * M > ((int64_t)1 << 21)) return false;
  /* too small an image: 4 x 4 tiles mostly outside it, and too few of them
   * for the products (an 8 x 8 map, 4 tiles, ran slower than the direct
   * sum; 10 x 10, 9 tiles, faster) */
  if (g->out[0] < 9 || g->out[1] < 9) return false;
  return wino_dispatch()->ok;
#else
  (void)g, (void)C, (void)M;
  return false;
#endif
}

void ox_wino_free(ox_wino *wp) {
  if (!wp) return;
  for (int xi = 0; xi < WINO_XI; xi++) ox_sgemm_packed_free(wp->u[xi]);
  free(wp);
}

ox_wino *ox_wino_pack(int64_t M, int64_t C, const float *w, ox_err *e) {
  if (M <= 0 || C <= 0 || M > ((int64_t)1 << 30) / C) {
    ox_err_set(e, OX_EINVAL, "Winograd: %lld x %lld kernels", (long long)M, (long long)C);
    return NULL;
  }
  /* a NaN or infinity would reach every transformed value of its kernel
   * (and inf - inf make NaN): such a W keeps the direct sum */
  for (int64_t i = 0; i < M * C * 9; i++)
    if (!isfinite(w[i])) {
      ox_err_set(e, OX_EINVAL, "Winograd: W holds a NaN or infinity");
      return NULL;
    }
  ox_wino *wp = calloc(1, sizeof *wp);
  if (!wp) {
    ox_err_set(e, OX_ENOMEM, "out of memory (Winograd kernels)");
    return NULL;
  }
  wp->M = M;
  wp->C = C;
  for (int xi = 0; xi < WINO_XI; xi++)
    if (!(wp->u[xi] = ox_sgemm_packed_alloc(M, C, e))) {
      ox_wino_free(wp);
      return NULL;
    }
  /* a panel of output channels at a time: its 36 transformed blocks (36 x
   * mr x C floats) stay in cache, and no 36 x M x C copy is faulted in */
  int64_t mr = ox_sgemm_packed_mr(wp->u[0]);
  float *u = malloc((size_t)(WINO_XI * mr * C) * sizeof *u);
  if (!u) {
    ox_wino_free(wp);
    ox_err_set(e, OX_ENOMEM, "out of memory (Winograd kernels)");
    return NULL;
  }
  for (int64_t m0 = 0; m0 < M; m0 += mr) {
    int64_t m1 = m0 + mr < M ? m0 + mr : M;
    /* in double, rounded once: U carries no more error than its float */
    for (int64_t m = m0; m < m1; m++)
      for (int64_t c = 0; c < C; c++) {
        const float *k = w + (m * C + c) * 9;
        double t[6][3]; /* G g */
        for (int i = 0; i < 6; i++)
          for (int bcol = 0; bcol < 3; bcol++)
            t[i][bcol] =
                wino_g[i][0] * k[bcol] + wino_g[i][1] * k[3 + bcol] + wino_g[i][2] * k[6 + bcol];
        for (int i = 0; i < 6; i++)
          for (int jj = 0; jj < 6; jj++) {
            double v = t[i][0] * wino_g[jj][0] + t[i][1] * wino_g[jj][1] + t[i][2] * wino_g[jj][2];
            u[((int64_t)(i * 6 + jj) * mr + (m - m0)) * C + c] = (float)v;
          }
      }
    for (int xi = 0; xi < WINO_XI; xi++)
      ox_sgemm_packed_fill(wp->u[xi], m0, m1, u + (int64_t)xi * mr * C, C);
  }
  free(u);
  return wp;
}

typedef struct wino_job {
  const ox_wino *wp;
  const ox_nn_geom *g;
  const float *x, *bias;
  float *y;
  const ox_sgemm_epi *ep;
  int64_t TH, TW;        /* tile rows and columns */
  int64_t band, nbands;  /* tiles per band, bands per image */
  int64_t kpart, kparts; /* output channels per part (whole panels), parts */
  int64_t PW;            /* row stride of the zero-bordered plane */
  atomic_int fail;       /* 1: no scratch memory, 2: the GEMM refused */
  /* the shared plan (many threads): every image's transformed input and
   * products in one buffer each, [n][xi][channel][tile]; the phases'
   * parts (channels or tiles per part, and the counts) */
  float *Vs, *Ms;
  int64_t in_c, in_cparts, in_band, in_nbands; /* 1: input channels x tiles */
  int64_t pr_k, pr_kparts, pr_band, pr_nbands; /* 2: per (image, xi): outputs x tiles */
  int64_t out_k, out_kparts;                   /* 3: output channels (all tiles) */
} wino_job;

#ifdef OX_WINO_X86
/* Lanes 0-7: elements j, j + 4, ..., j + 28 of a 32-value pair. */
__attribute__((target("avx512f"), always_inline)) static inline __m512i deint_idx(int j) {
  return _mm512_add_epi32(_mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28, 24, 20, 16, 12, 8, 4, 0),
                          _mm512_set1_epi32(j));
}

/* p[4 i + j] for i = 0..15, from the 64 values a0..a3 (p[0..63]). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 deint4(__m512 a0, __m512 a1,
                                                                              __m512 a2, __m512 a3,
                                                                              __m512i idx) {
  __m512 lo = _mm512_permutex2var_ps(a0, idx, a1), hi = _mm512_permutex2var_ps(a2, idx, a3);
  return _mm512_shuffle_f32x4(lo, hi, 0x44);
}

/* B^T d for six values (one row or column of a tile, lane by lane). */
__attribute__((target("avx512f"), always_inline)) static inline void bt6(const __m512 *d,
                                                                         __m512 *t) {
  __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
  __m512 a = _mm512_fnmadd_ps(four, d[2], d[4]); /* d4 - 4 d2 */
  __m512 b = _mm512_fnmadd_ps(four, d[1], d[3]); /* d3 - 4 d1 */
  __m512 c = _mm512_sub_ps(d[4], d[2]);
  __m512 e = _mm512_mul_ps(two, _mm512_sub_ps(d[3], d[1]));
  t[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));
  t[1] = _mm512_add_ps(a, b);
  t[2] = _mm512_sub_ps(a, b);
  t[3] = _mm512_add_ps(c, e);
  t[4] = _mm512_sub_ps(c, e);
  t[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));
}

/* A^T m for six values. */
__attribute__((target("avx512f"), always_inline)) static inline void at6(const __m512 *m,
                                                                         __m512 *o) {
  __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
  o[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d34, d12);
  o[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), s34, s12);
  o[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d34, d12), m[5]);
}

/* The tiles [t0, t1) of an image by tile row: row ty holds columns
 * [*tx0, *tx1). */
static inline void band_row(const wino_job *j, int64_t t0, int64_t t1, int64_t ty, int64_t *tx0,
                            int64_t *tx1) {
  int64_t first = ty * j->TW;
  *tx0 = t0 > first ? t0 - first : 0;
  *tx1 = t1 < first + j->TW ? t1 - first : j->TW;
}

/* The column transforms of 16 tiles' row transforms h, stored at v
 * (value xi at v[xi * xs], lanes mk). */
__attribute__((target("avx512f"), always_inline)) static inline void cols_store(__m512 h[6][6],
                                                                                float *v,
                                                                                int64_t xs,
                                                                                __mmask16 mk) {
  for (int jj = 0; jj < 6; jj++) {
    __m512 col[6] = {h[0][jj], h[1][jj], h[2][jj], h[3][jj], h[4][jj], h[5][jj]}, t[6];
    bt6(col, t);
    for (int i = 0; i < 6; i++) _mm512_mask_storeu_ps(v + (int64_t)(i * 6 + jj) * xs, mk, t[i]);
  }
}

/* Input transform of input channels [c0, c1) of tiles [t0, t1) of image
 * xn into V (value xi of channel c, tile t at V[(xi C + c) ldv + t - t0]),
 * through the zero-bordered plane pad. Images up to 5 tiles wide
 * gather 16 consecutive tiles of the band per vector, across tile rows (a
 * vector per tile row of a 14 x 14 map left 12 of 16 lanes idle). */
__attribute__((target("avx512f"))) static void wino_input(const wino_job *j, const float *xn,
                                                          int64_t t0, int64_t t1, int64_t c0,
                                                          int64_t c1, float *V, int64_t ldv,
                                                          float *pad) {
  const ox_nn_geom *g = j->g;
  int64_t C = j->wp->C, IH = g->in[0], IW = g->in[1], TW = j->TW, PW = j->PW, nt = t1 - t0;
  int64_t ty0 = t0 / TW, ty1 = (t1 - 1) / TW + 1;
  int64_t rows = 4 * (ty1 - ty0) + 2, top = 4 * ty0 - g->pb[0];
  /* borders and rows outside the image are the same for every channel:
   * zeroed once, the image rows overwritten per channel */
  memset(pad, 0, (size_t)(rows * PW) * sizeof *pad);
  __m512i i0 = deint_idx(0), i1 = deint_idx(1), i2 = deint_idx(2), i3 = deint_idx(3);
  __m512i base[WINO_TILES / 16]; /* flat: each lane's tile's corner in pad */
  /* (gathers only pay where a row vector would leave most lanes idle: a
   * 28 x 28 map's 7-tile rows were faster loaded whole) */
  bool flat = TW <= 5 && nt <= WINO_TILES;
  for (int64_t q = 0; flat && q * 16 < nt; q++) {
    int32_t b[16] = {0};
    for (int i = 0; i < 16 && q * 16 + i < nt; i++) {
      int64_t tt = t0 + q * 16 + i;
      b[i] = (int32_t)(4 * (tt / TW - ty0) * PW + 4 * (tt % TW));
    }
    base[q] = _mm512_loadu_si512(b);
  }
  for (int64_t c = c0; c < c1; c++) {
    const float *xc = xn + c * IH * IW;
    for (int64_t r = 0; r < rows; r++) {
      int64_t iy = top + r;
      if (iy >= 0 && iy < IH) memcpy(pad + r * PW + g->pb[1], xc + iy * IW, (size_t)IW * 4);
    }
    float *vc = V + c * ldv;
    if (flat) { /* 16 consecutive tiles per vector, each tap gathered */
      for (int64_t q = 0; q * 16 < nt; q++) {
        int n = nt - q * 16 < 16 ? (int)(nt - q * 16) : 16;
        __mmask16 mk = (__mmask16)((1u << n) - 1u);
        __m512 h[6][6];
        for (int r = 0; r < 6; r++) {
          __m512 d[6];
          for (int jj = 0; jj < 6; jj++)
            d[jj] = _mm512_mask_i32gather_ps(
                _mm512_setzero_ps(), mk,
                _mm512_add_epi32(base[q], _mm512_set1_epi32((int)(r * PW + jj))), pad, 4);
          bt6(d, h[r]);
        }
        cols_store(h, vc + q * 16, C * ldv, mk);
      }
      continue;
    }
    for (int64_t ty = ty0; ty < ty1; ty++) {
      const float *prow = pad + 4 * (ty - ty0) * PW;
      int64_t txa, txb;
      band_row(j, t0, t1, ty, &txa, &txb);
      for (int64_t tx0 = txa; tx0 < txb; tx0 += 16) {
        int n = txb - tx0 < 16 ? (int)(txb - tx0) : 16;
        __mmask16 mk = (__mmask16)((1u << n) - 1u);
        __m512 h[6][6];
        for (int r = 0; r < 6; r++) {
          const float *p = prow + r * PW + 4 * tx0;
          __m512 a0 = _mm512_loadu_ps(p), a1 = _mm512_loadu_ps(p + 16),
                 a2 = _mm512_loadu_ps(p + 32), a3 = _mm512_loadu_ps(p + 48);
          __m512 b0 = _mm512_loadu_ps(p + 4), b1 = _mm512_loadu_ps(p + 20),
                 b2 = _mm512_loadu_ps(p + 36), b3 = _mm512_loadu_ps(p + 52);
          __m512 d[6] = {deint4(a0, a1, a2, a3, i0), deint4(a0, a1, a2, a3, i1),
                         deint4(a0, a1, a2, a3, i2), deint4(a0, a1, a2, a3, i3),
                         deint4(b0, b1, b2, b3, i0), deint4(b0, b1, b2, b3, i1)};
          bt6(d, h[r]);
        }
        cols_store(h, vc + ty * TW + tx0 - t0, C * ldv, mk);
      }
    }
  }
}

/* The 4 x 4 outputs of 16 tiles (lanes; mk16 the valid ones) of one output
 * channel from its products m (value xi of lane i at m[xi * xs + i]), bias
 * added: out[r][q] holds output row r of tiles 4q..4q+3, each tile's four
 * columns consecutive (a 128-bit lane per tile). */
__attribute__((target("avx512f"), always_inline)) static inline void tiles_out(
    const float *m, int64_t xs, __mmask16 mk16, __m512 bias, __m512 out[4][4]) {
  __m512 o[4][6];
  for (int jj = 0; jj < 6; jj++) {
    __m512 mv[6], oc[4];
    for (int i = 0; i < 6; i++) mv[i] = _mm512_maskz_loadu_ps(mk16, m + (int64_t)(i * 6 + jj) * xs);
    at6(mv, oc);
    for (int r = 0; r < 4; r++) o[r][jj] = oc[r];
  }
  for (int r = 0; r < 4; r++) {
    __m512 c[4];
    at6(o[r], c);
    for (int q = 0; q < 4; q++) c[q] = _mm512_add_ps(c[q], bias);
    /* c[q] lane i is column q of tile i: interleave to 64 consecutive values */
    __m512 ablo = _mm512_unpacklo_ps(c[0], c[1]), abhi = _mm512_unpackhi_ps(c[0], c[1]);
    __m512 cdlo = _mm512_unpacklo_ps(c[2], c[3]), cdhi = _mm512_unpackhi_ps(c[2], c[3]);
    __m512 r0 =
               _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(ablo), _mm512_castps_pd(cdlo))),
           r1 =
               _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(ablo), _mm512_castps_pd(cdlo))),
           r2 =
               _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(abhi), _mm512_castps_pd(cdhi))),
           r3 =
               _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(abhi), _mm512_castps_pd(cdhi)));
    __m512 s0 = _mm512_shuffle_f32x4(r0, r1, 0x44), s1 = _mm512_shuffle_f32x4(r2, r3, 0x44);
    __m512 s2 = _mm512_shuffle_f32x4(r0, r1, 0xEE), s3 = _mm512_shuffle_f32x4(r2, r3, 0xEE);
    out[r][0] = _mm512_shuffle_f32x4(s0, s1, 0x88);
    out[r][1] = _mm512_shuffle_f32x4(s0, s1, 0xDD);
    out[r][2] = _mm512_shuffle_f32x4(s2, s3, 0x88);
    out[r][3] = _mm512_shuffle_f32x4(s2, s3, 0xDD);
  }
}

/* Output transform of channels [k0, k1) of the products Mb of tiles [t0,
 * t1) (value xi of channel k, tile t at Mb[(xi M + k) ldm + t - t0]) into
 * image n_img of Y: 16 tiles of a tile row at a time, 64 outputs of a row
 * per store group (images at least 64 wide). */
__attribute__((target("avx512f"))) static void wino_output(const wino_job *j, const float *Mb,
                                                           int64_t ldm, int64_t t0, int64_t t1,
                                                           int64_t k0, int64_t k1, int64_t n_img) {
  const ox_nn_geom *g = j->g;
  int64_t M = j->wp->M, OH = g->out[0], OW = g->out[1], P = OH * OW, TW = j->TW;
  int64_t ty0 = t0 / TW, ty1 = (t1 - 1) / TW + 1;
  const ox_sgemm_epi *ep = j->ep;
  for (int64_t k = k0; k < k1; k++) {
    int64_t yoff = (n_img * M + k) * P;
    float *yk = j->y + yoff;
    const float *rk = ep && ep->res ? ep->res + yoff : NULL;
    const float *mk = Mb + k * ldm;
    __m512 bias = _mm512_set1_ps(j->bias ? j->bias[k] : 0.0f);
    for (int64_t ty = ty0; ty < ty1; ty++) {
      int64_t txa, txb;
      band_row(j, t0, t1, ty, &txa, &txb);
      for (int64_t tx0 = txa; tx0 < txb; tx0 += 16) {
        int n = txb - tx0 < 16 ? (int)(txb - tx0) : 16;
        __m512 out[4][4];
        tiles_out(mk + ty * TW + tx0 - t0, M * ldm, (__mmask16)((1u << n) - 1u), bias, out);
        int64_t ox = 4 * tx0, nval = OW - ox < 4 * n ? OW - ox : 4 * n;
        for (int r = 0; r < 4; r++) {
          int64_t oy = 4 * ty + r;
          if (oy >= OH) break;
          float *yr = yk + oy * OW + ox;
          const float *rr = rk ? rk + oy * OW + ox : NULL;
          for (int q = 0; q < 4; q++) {
            int64_t cnt = nval - 16 * q;
            if (cnt <= 0) break;
            __mmask16 sm = cnt >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cnt) - 1u);
            __m512 v = out[r][q];
            if (ep) {
              if (rr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(sm, rr + 16 * q));
              v = ox_bound16(ep, ox_act16(ep, v));
            }
            _mm512_mask_storeu_ps(yr + 16 * q, sm, v);
          }
        }
      }
    }
  }
}

/* The same for images narrower than 16 tiles (a 14 x 14 map has rows of 4
 * tiles: a vector per tile row left 12 of 16 lanes idle): 16 consecutive
 * tiles of the band at a time, across tile rows, each tile's four columns
 * stored on their own. */
__attribute__((target("avx512f,avx512vl"))) static void wino_output_flat(
    const wino_job *j, const float *Mb, int64_t ldm, int64_t t0, int64_t t1, int64_t k0, int64_t k1,
    int64_t n_img) {
  const ox_nn_geom *g = j->g;
  int64_t M = j->wp->M, OH = g->out[0], OW = g->out[1], P = OH * OW, TW = j->TW;
  const ox_sgemm_epi *ep = j->ep;
  for (int64_t k = k0; k < k1; k++) {
    int64_t yoff = (n_img * M + k) * P;
    float *yk = j->y + yoff;
    const float *rk = ep && ep->res ? ep->res + yoff : NULL;
    __m512 bias = _mm512_set1_ps(j->bias ? j->bias[k] : 0.0f);
    for (int64_t t = t0; t < t1; t += 16) {
      int n = t1 - t < 16 ? (int)(t1 - t) : 16;
      __m512 out[4][4];
      tiles_out(Mb + k * ldm + t - t0, M * ldm, (__mmask16)((1u << n) - 1u), bias, out);
      int64_t offs[16], rows[16]; /* each tile's first output, its rows in the image */
      __mmask8 cm[16];            /* and its columns */
      for (int i = 0; i < n; i++) {
        int64_t ty = (t + i) / TW, tx = (t + i) % TW, cols = OW - 4 * tx;
        offs[i] = 4 * ty * OW + 4 * tx;
        rows[i] = OH - 4 * ty;
        cm[i] = (__mmask8)(cols >= 4 ? 0xF : (1u << cols) - 1u);
      }
      for (int r = 0; r < 4; r++)
        for (int q = 0; q < 4; q++) {
          __m512 v = out[r][q];
          if (ep) {
            if (rk) { /* the residual gathered in the same layout */
              __m512 rv = _mm512_setzero_ps();
              for (int l = 0; l < 4 && 4 * q + l < n; l++) {
                int i = 4 * q + l;
                if (r >= rows[i]) continue;
                __m128 piece = _mm_maskz_loadu_ps(cm[i], rk + offs[i] + r * OW);
                rv = l == 0   ? _mm512_insertf32x4(rv, piece, 0)
                     : l == 1 ? _mm512_insertf32x4(rv, piece, 1)
                     : l == 2 ? _mm512_insertf32x4(rv, piece, 2)
                              : _mm512_insertf32x4(rv, piece, 3);
              }
              v = _mm512_add_ps(v, rv);
            }
            v = ox_bound16(ep, ox_act16(ep, v));
          }
          __m128 lane[4] = {_mm512_extractf32x4_ps(v, 0), _mm512_extractf32x4_ps(v, 1),
                            _mm512_extractf32x4_ps(v, 2), _mm512_extractf32x4_ps(v, 3)};
          for (int l = 0; l < 4 && 4 * q + l < n; l++) {
            int i = 4 * q + l;
            if (r >= rows[i]) continue;
            _mm_mask_storeu_ps(yk + offs[i] + r * OW, cm[i], lane[l]);
          }
        }
    }
  }
}

/* [*lo, *hi): part i of `total` units in parts of `per` */
static inline void part_range(int64_t i, int64_t per, int64_t total, int64_t *lo, int64_t *hi) {
  *lo = i * per;
  *hi = *lo + per < total ? *lo + per : total;
}

/* Task t of a plan laid out [outer][band][part]: its tiles [*t0, *t1) (bands
 * of `band` of T), its channels [*c0, *c1) (parts of `per` of `total`) and
 * the outer index it returns. */
static inline int64_t task_at(int64_t t, int64_t nbands, int64_t band, int64_t T, int64_t parts,
                              int64_t per, int64_t total, int64_t *t0, int64_t *t1, int64_t *c0,
                              int64_t *c1) {
  int64_t rest = t / parts;
  part_range(rest % nbands, band, T, t0, t1);
  part_range(t % parts, per, total, c0, c1);
  return rest / nbands;
}

/* the rows of the zero-bordered plane of the tiles [t0, t1) */
static inline int64_t pad_rows(const wino_job *j, int64_t t0, int64_t t1) {
  return 4 * ((t1 - 1) / j->TW - t0 / j->TW + 1) + 2;
}

__attribute__((target("avx512f,avx512vl"))) static void wino_task(void *arg, int64_t task0,
                                                                  int64_t task1) {
  wino_job *j = arg;
  const ox_wino *wp = j->wp;
  const ox_nn_geom *g = j->g;
  int64_t C = wp->C, M = wp->M, T = j->TH * j->TW;
  for (int64_t t = task0; t < task1; t++) {
    int64_t t0, t1, k0, k1;
    int64_t n = task_at(t, j->nbands, j->band, T, j->kparts, j->kpart, M, &t0, &t1, &k0, &k1);
    if (t0 >= t1 || k0 >= k1) continue;
    int64_t nt = t1 - t0, rows = pad_rows(j, t0, t1);
    float *V = ox_scratch(WINO_SCRATCH_V, (size_t)(WINO_XI * C * nt) * sizeof(float));
    float *Mb = ox_scratch(WINO_SCRATCH_M, (size_t)(WINO_XI * M * nt) * sizeof(float));
    float *pad = ox_scratch(WINO_SCRATCH_PAD, (size_t)(rows * j->PW) * sizeof(float));
    if (!V || !Mb || !pad) {
      atomic_store(&j->fail, 1);
      return;
    }
    wino_input(j, j->x + n * C * g->in_size, t0, t1, 0, C, V, nt, pad);
    const int64_t kchunk = wino_dispatch()->kchunk;
    for (int64_t c0 = k0; c0 < k1; c0 += kchunk) {
      int64_t c1 = c0 + kchunk < k1 ? c0 + kchunk : k1;
      for (int xi = 0; xi < WINO_XI; xi++)
        if (!ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_INPLACE,
                                     .pa = wp->u[xi],
                                     .rows = true,
                                     .m0 = c0,
                                     .m1 = c1,
                                     .N = nt,
                                     .B = V + (int64_t)xi * C * nt,
                                     .ldb = nt,
                                     .C = Mb + (int64_t)xi * M * nt,
                                     .ldc = nt})) {
          atomic_store(&j->fail, 2);
          return;
        }
      if (j->TW < 16)
        wino_output_flat(j, Mb, nt, t0, t1, c0, c1, n);
      else
        wino_output(j, Mb, nt, t0, t1, c0, c1, n);
    }
  }
}

/* The shared plan's three phases (many threads). A task of the band plan
 * transforms its tiles' whole input: at 16 threads a 14 x 14 map (16
 * tiles) was cut into 8 channel parts of 2 bands of 8 tiles, each part
 * transforming its band's input again and each product 8 columns wide.
 * Here the input is transformed once (phase 1), the 36 products of every
 * image are tasks of their own (phase 2: one xi reads only its slices of
 * U and V, a few tens of KB), and the output transform reads the products
 * of its channels from all of them (phase 3). Each value is computed by
 * the same operations as in the band plan: the results are the same bits. */
static void wino_in_task(void *arg, int64_t task0, int64_t task1) {
  wino_job *j = arg;
  int64_t C = j->wp->C, T = j->TH * j->TW;
  for (int64_t t = task0; t < task1; t++) {
    int64_t t0, t1, c0, c1;
    int64_t n =
        task_at(t, j->in_nbands, j->in_band, T, j->in_cparts, j->in_c, C, &t0, &t1, &c0, &c1);
    if (t0 >= t1 || c0 >= c1) continue;
    float *pad =
        ox_scratch(WINO_SCRATCH_PAD, (size_t)(pad_rows(j, t0, t1) * j->PW) * sizeof(float));
    if (!pad) {
      atomic_store(&j->fail, 1);
      return;
    }
    wino_input(j, j->x + n * C * j->g->in_size, t0, t1, c0, c1, j->Vs + n * WINO_XI * C * T + t0, T,
               pad);
  }
}

static void wino_prod_task(void *arg, int64_t task0, int64_t task1) {
  wino_job *j = arg;
  const ox_wino *wp = j->wp;
  int64_t C = wp->C, M = wp->M, T = j->TH * j->TW;
  for (int64_t t = task0; t < task1; t++) {
    int64_t t0, t1, k0, k1; /* nx: image x 36 + xi */
    int64_t nx =
        task_at(t, j->pr_nbands, j->pr_band, T, j->pr_kparts, j->pr_k, M, &t0, &t1, &k0, &k1);
    if (t0 >= t1 || k0 >= k1) continue;
    if (!ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_INPLACE,
                                 .pa = wp->u[nx % WINO_XI],
                                 .rows = true,
                                 .m0 = k0,
                                 .m1 = k1,
                                 .N = t1 - t0,
                                 .B = j->Vs + nx * C * T + t0,
                                 .ldb = T,
                                 .C = j->Ms + nx * M * T + t0,
                                 .ldc = T})) {
      atomic_store(&j->fail, 2);
      return;
    }
  }
}

__attribute__((target("avx512f,avx512vl"))) static void wino_out_task(void *arg, int64_t task0,
                                                                      int64_t task1) {
  wino_job *j = arg;
  int64_t M = j->wp->M, T = j->TH * j->TW;
  for (int64_t t = task0; t < task1; t++) {
    int64_t n = t / j->out_kparts, k0, k1;
    part_range(t % j->out_kparts, j->out_k, M, &k0, &k1);
    if (k0 >= k1) continue;
    const float *Mb = j->Ms + n * WINO_XI * M * T;
    if (j->TW < 16)
      wino_output_flat(j, Mb, T, 0, T, k0, k1, n);
    else
      wino_output(j, Mb, T, 0, T, k0, k1, n);
  }
}
#endif

#ifdef OX_WINO_X86
/* split.h's cost of a task of `panels` 12-row panels of output channels by
 * `tiles` tiles, in multiply-adds: the 36 products, the input transform
 * (every part transforms its tiles' input again) and the output transform
 * at about 112 each per tile and channel (a dozen vector operations per 16
 * tiles), products over fewer tiles than the table's least paying their
 * edges, and a hand-off. */
typedef struct wino_cost_ctx {
  int64_t C, M, min_tiles;
} wino_cost_ctx;

static double wino_task_cost(const void *ctx, int64_t panels, int64_t tiles) {
  const wino_cost_ctx *c = ctx;
  double m = (double)(panels * 12 < c->M ? panels * 12 : c->M), t = (double)tiles;
  double edge = 1.0 + (double)c->min_tiles / (4.0 * t);
  return 36.0 * m * (double)c->C * t * edge + 112.0 * t * ((double)c->C + m) + 5e4;
}

/* The same for one of the shared plan's products (one xi): the product,
 * reading its slices of V (from other cores' caches) and of U, a hand-off. */
static double wino_prod_cost(const void *ctx, int64_t panels, int64_t tiles) {
  const wino_cost_ctx *c = ctx;
  double m = (double)(panels * 12 < c->M ? panels * 12 : c->M), t = (double)tiles;
  double edge = 1.0 + (double)c->min_tiles / (4.0 * t);
  return m * (double)c->C * t * edge + 2.0 * (double)c->C * (t + m) + 5e4;
}

/* The shared plan's buffers are the calling thread's scratch (slot 4, held
 * across its tasks): at most this many bytes, else the band plan (such
 * images have tiles enough for bands). */
enum { WINO_SHARED_BYTES = 16 << 20 };

/* Runs the shared plan (see wino_in_task) for nth threads; false when its
 * buffers are too large or could not be had (the band plan then runs). */
static bool wino_shared(wino_job *j, int64_t N, int nth, ox_thread_pool *pool) {
  const ox_wino *wp = j->wp;
  int64_t C = wp->C, M = wp->M, T = j->TH * j->TW;
  int64_t v = N * WINO_XI * C * T, m = N * WINO_XI * M * T;
  if ((v + m) * (int64_t)sizeof(float) > WINO_SHARED_BYTES) return false;
  float *buf = ox_scratch(4, (size_t)(v + m) * sizeof(float));
  if (!buf) return false;
  j->Vs = buf;
  j->Ms = buf + v;
  /* 1: input channels in parts, at least 4 channels each, two tasks per
   * thread; bands of at most the gathers' tiles */
  j->in_band = T < WINO_TILES ? T : WINO_TILES;
  j->in_nbands = (T + j->in_band - 1) / j->in_band;
  int64_t cp = (2 * (int64_t)nth + N * j->in_nbands - 1) / (N * j->in_nbands);
  if (cp > C / 4) cp = C / 4;
  if (cp < 1) cp = 1;
  j->in_c = (C + cp - 1) / cp;
  j->in_cparts = (C + j->in_c - 1) / j->in_c;
  /* 2: split.h's plan over the 36 products of each image */
  wino_cost_ctx cc = {C, M, wino_dispatch()->min_tiles};
  int64_t panels = (M + 11) / 12;
  ox_split sp = ox_split_plan(nth, N * WINO_XI, panels, panels, T, T, wino_prod_cost, &cc);
  j->pr_k = sp.a_parts > 1 ? sp.a_per * 12 : M;
  j->pr_kparts = (M + j->pr_k - 1) / j->pr_k;
  j->pr_band = sp.b_per;
  j->pr_nbands = (T + j->pr_band - 1) / j->pr_band;
  /* 3: output channels in parts, two tasks per thread */
  int64_t kp = (2 * (int64_t)nth + N - 1) / N;
  if (kp > M) kp = M;
  j->out_k = (M + kp - 1) / kp;
  j->out_kparts = (M + j->out_k - 1) / j->out_k;
  ox_parallel_for(pool, N * j->in_nbands * j->in_cparts, 1, wino_in_task, j);
  if (!atomic_load(&j->fail))
    ox_parallel_for(pool, N * WINO_XI * j->pr_nbands * j->pr_kparts, 1, wino_prod_task, j);
  if (!atomic_load(&j->fail)) ox_parallel_for(pool, N * j->out_kparts, 1, wino_out_task, j);
  return true;
}
#endif

/* The estimated time of the busiest of nth threads over `tasks` tasks of
 * `tiles` tiles by m output channels each (the band plan): the products in
 * whole 32-column blocks (a 49-tile band costs as much as 64 tiles), and
 * the transforms. Two threads on a 7 x 7 tile map with M = 128 were split
 * by whole 12-row panels, 72 + 56 channels, each part transforming all of
 * the input again; two bands of whole rows of tiles, 28 and 21, cost each
 * thread less (the busiest task's CPU time: 307 against 319 us for
 * 128 -> 128 channels at 28 x 28, 113 against 116 for 32 -> 128 at 27 x 27). */
#ifdef OX_WINO_X86
static double wino_busiest(const ox_wino *wp, int64_t tasks, int64_t tiles, int64_t m, int nth) {
  double per = 36.0 * (double)m * (double)wp->C * (double)((tiles + 31) / 32 * 32) +
               112.0 * (double)tiles * (double)(wp->C + m);
  return (double)((tasks + nth - 1) / nth) * per;
}
#endif

int ox_wino_conv(const ox_wino *wp, const ox_nn_geom *g, int64_t N, const float *x,
                 const float *bias, const ox_sgemm_epi *ep, float *y, ox_thread_pool *pool) {
#if defined(__wasm_simd128__)
  return ox_wino_wasm_conv(wp->u, wp->M, wp->C, g, N, x, bias, ep, y, pool);
#elif defined(OX_WINO_X86)
  wino_job j = {.wp = wp, .g = g, .x = x, .bias = bias, .y = y};
  if (ep && (ep->res || ep->act != OX_ACT_NONE || ep->bound)) j.ep = ep;
  j.TH = (g->out[0] + 3) / 4;
  j.TW = (g->out[1] + 3) / 4;
  /* the zero-bordered rows: the image after the left pad, and the vector
   * loads of a 16-tile group starting at any tile (64 values and 4 more) */
  j.PW = 4 * j.TW + 72;
  if (j.PW < g->pb[1] + g->in[1]) j.PW = g->pb[1] + g->in[1];
  /* bands of the table's tiles (the wider the products, the fewer times U
   * is read), the transformed input at most its v_bytes, whole 32-column
   * tiles of the products */
  const wino_table *tab = wino_dispatch();
  int64_t T = j.TH * j.TW, target = tab->tiles;
  int64_t cap = tab->v_bytes / (WINO_XI * 4 * wp->C);
  if (target > cap) target = cap / 32 * 32;
  if (target < 32) target = 32;
  j.nbands = (T + target - 1) / target;
  int nth = ox_thread_pool_size(pool);
  int64_t band_tiles = 0; /* bands of this many tiles, else T / nbands */
  j.kparts = 1;
  j.kpart = wp->M;
  /* few tasks, not shared evenly by the threads: more bands if they keep
   * min_tiles tiles, else the output channels split too (each part
   * transforms the input anew) */
  if (nth > 1 && N * j.nbands < 4 * nth && (N * j.nbands) % nth) {
    int64_t nb = j.nbands + 1;
    while ((N * nb) % nth) nb++;
    int64_t panels = (wp->M + 11) / 12;
    int64_t parts = nth < panels ? nth : panels;
    int64_t kpart = (panels + parts - 1) / parts * 12;
    /* (bands of whole rows of tiles: a band starting inside a row of tiles
     * transformed its partial rows at a loss; 25 + 24 of 7 x 7 tiles took
     * 0.66 ms on one thread, 28 + 21 0.57, one band 0.52) */
    int64_t row_band = (j.TH + nb - 1) / nb * j.TW;
    if ((T + nb - 1) / nb >= tab->min_tiles) {
      j.nbands = nb;
    } else if (wino_busiest(wp, N * ((T + row_band - 1) / row_band), row_band, wp->M, nth) <
               wino_busiest(wp, N * j.nbands * ((wp->M + kpart - 1) / kpart),
                            (T + j.nbands - 1) / j.nbands, kpart, nth)) {
      band_tiles = row_band;
    } else {
      j.kpart = kpart;
      j.kparts = (wp->M + j.kpart - 1) / j.kpart;
    }
  }
  /* Many threads (the rule above was measured on two): bands of tiles by
   * parts of the output channels, as split.h's plan finds best (on a
   * 16-core Xeon the rule made ResNet-18's 56 x 56 layers 12 tasks, each
   * part of 12 channels transforming the whole input again) */
  if (nth > 2) {
    wino_cost_ctx cc = {wp->C, wp->M, tab->min_tiles};
    ox_split sp = ox_split_plan(nth, N, (wp->M + 11) / 12, (wp->M + 11) / 12, T, target,
                                wino_task_cost, &cc);
    /* (a plan that transforms each tile's input three or more times, once
     * per part of the output channels: the shared plan transforms it once.
     * On the 16-core Xeon, 14 x 14 and 28 x 28 maps ran 1.4-2.6x faster
     * so at 4 to 16 threads; a 56 x 56 map in two parts, as fast either
     * way within the noise.) */
    if (sp.a_parts > 2) {
      atomic_init(&j.fail, 0);
      if (wino_shared(&j, N, nth, pool)) {
        int f = atomic_load(&j.fail);
        return f == 1 ? OX_ENOMEM : f ? OX_ERUNTIME : OX_OK;
      }
    }
    j.nbands = sp.b_parts;
    band_tiles = 0;
    j.kpart = sp.a_parts > 1 ? sp.a_per * 12 : wp->M;
    j.kparts = (wp->M + j.kpart - 1) / j.kpart;
  }
  j.band = band_tiles ? band_tiles : (T + j.nbands - 1) / j.nbands;
  j.nbands = (T + j.band - 1) / j.band;
  int64_t tasks = N * j.nbands;
  atomic_init(&j.fail, 0);
  int64_t ntasks = tasks * j.kparts;
  if (ntasks == 1 || nth <= 1)
    wino_task(&j, 0, ntasks);
  else
    ox_parallel_for(pool, ntasks, 1, wino_task, &j);
  int f = atomic_load(&j.fail);
  return f == 1 ? OX_ENOMEM : f ? OX_ERUNTIME : OX_OK;
#else
  (void)wp, (void)g, (void)N, (void)x, (void)bias, (void)ep, (void)y, (void)pool;
  return OX_ERUNTIME;
#endif
}
