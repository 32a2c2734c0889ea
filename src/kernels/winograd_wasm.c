/* winograd_wasm.c - F(4 x 4, 3 x 3) convolutions in WebAssembly SIMD128
 * (see winograd_wasm.h; the matrices and the kernel transform are
 * winograd.c's).
 *
 * Why: SIMD128 has no fused multiply-add, so the GEMM's 4 x 8 tile peaks
 * near half the engine's ceiling on the models' shapes
 * (tools/wasm_simd_peak.c); only fewer multiply-adds bring a 3 x 3 layer
 * much below the im2col GEMM's time, and Winograd takes 36 per input
 * channel for 16 outputs instead of 144.
 *
 * A task takes one image, a band of whole tile rows and a range of output
 * channels:
 * 1. input transform: each input channel's rows of the band are copied into
 *    a plane with zero borders, then four consecutive tiles of the band per
 *    vector (counted across tile rows, so a 7-tile row leaves no lane idle:
 *    a group reaching into the next tile row takes those lanes from a
 *    second load, by a lane mask); each of a tile's six rows is five
 *    loads transposed into its six taps; B^T d B; the 36 values go where
 *    the GEMM's packed B panels want them (8 tiles per panel, depth blocks
 *    of the packing's kc), so the products need no packing copy;
 * 2. a chunk of 32 output channels at a time, the 36 products U[xi] V[xi]
 *    by the GEMM's 4 x 8 micro-kernel (each B panel stays in L1 while the
 *    chunk's A panels pass over it);
 * 3. the chunk's output transform A^T m A, four tiles per vector,
 *    transposed back into rows with the bias; the epilogue runs over the
 *    band's rows of each channel while they are in cache.
 * Without fused multiply-adds the transforms round 4 d and 5 d before the
 * sums where the AVX-512 ones fuse them: the same arithmetic otherwise
 * (docs/numerics.md). */
#include "winograd_wasm.h"

#include "../base/base.h"

#ifdef __wasm_simd128__
#include <stdatomic.h>
#include <string.h>
#include <wasm_simd128.h>

#include "../base/cpu.h"
#include "gemm_impl.h"

enum {
  WW_XI = 36,     /* values of a transformed tile */
  WW_KCHUNK = 32, /* output channels per product chunk (whole 4-row panels) */
  WW_TILES = 64,  /* the most tiles per band ... */
  /* ... unless the band's transformed input passes this (it is read once
   * per chunk: kept in L2) */
  WW_V_BYTES = 768 * 1024,
  /* scratch slots (base.h: a Winograd task's) */
  WW_SCRATCH_V = 5,
  WW_SCRATCH_M = 6,
  WW_SCRATCH_PAD = 7
};

bool ox_wino_wasm_ok(void) {
  const ox_gemm_table *t = ox_gemm_dispatch();
  return ox_cpu_get()->simd128 && t->uk.mr == 4 && t->uk.nr == 8;
}

typedef struct ww_job {
  ox_sgemm_packed *const *u;
  int64_t M, C;
  const ox_nn_geom *g;
  const float *x, *bias;
  const ox_sgemm_epi *ep; /* NULL when it does nothing */
  float *y;
  ukernel_fn uk;
  int64_t kc;                 /* the packing's depth block */
  int64_t TH, TW;             /* tile rows and columns */
  int64_t rb, nbands;         /* tile rows per band, bands per image */
  int64_t kpart, kparts;      /* output channels per part (whole panels), parts */
  int64_t PW;                 /* row stride of the zero-bordered plane */
  atomic_int fail;            /* no scratch memory */
} ww_job;

/* The distance between the 36 slabs of the transformed input and of the
 * products: n floats rounded up to an odd number of 64-byte lines. The
 * transforms store (and load) a value of each slab in turn; at a stride of
 * an even number of lines they fell into a few L1 sets (16 KB apart, 256
 * channels by 16 tiles: all 36 in one set of 12 ways) and the input
 * transform ran five times slower than at an odd one. */
static inline int64_t ww_slab(int64_t n) {
  int64_t lines = (n + 15) / 16;
  return (lines | 1) * 16;
}

/* The six taps of one row of four tiles, tile l's values at p[4 l .. 4 l +
 * 5]: d[jj] holds tap jj of the four tiles (reads p[0 .. 19]). */
static inline __attribute__((always_inline)) void row_taps(const float *p, v128_t d[6]) {
  v128_t a0 = wasm_v128_load(p), a1 = wasm_v128_load(p + 4), a2 = wasm_v128_load(p + 8),
         a3 = wasm_v128_load(p + 12), a4 = wasm_v128_load(p + 16);
  v128_t t0 = wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7);
  v128_t t2 = wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7);
  d[0] = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  d[1] = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  d[2] = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  d[3] = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
  /* taps 4 and 5 of tile l are taps 0 and 1 of tile l + 1 */
  d[4] = wasm_i32x4_shuffle(d[0], a4, 1, 2, 3, 4);
  d[5] = wasm_i32x4_shuffle(d[1], a4, 1, 2, 3, 5);
}

/* a[0..3] (a[i] lane l) -> a[l] lane i */
static inline __attribute__((always_inline)) void transpose4(v128_t a[4]) {
  v128_t t0 = wasm_i32x4_shuffle(a[0], a[1], 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(a[0], a[1], 2, 6, 3, 7);
  v128_t t2 = wasm_i32x4_shuffle(a[2], a[3], 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(a[2], a[3], 2, 6, 3, 7);
  a[0] = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5);
  a[1] = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
  a[2] = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5);
  a[3] = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

/* B^T d for six values (one row or column of four tiles, lane by lane) */
static inline __attribute__((always_inline)) void bt6(const v128_t *d, v128_t *t) {
  const v128_t four = wasm_f32x4_splat(4.0f), five = wasm_f32x4_splat(5.0f);
  v128_t a = wasm_f32x4_sub(d[4], wasm_f32x4_mul(four, d[2])); /* d4 - 4 d2 */
  v128_t b = wasm_f32x4_sub(d[3], wasm_f32x4_mul(four, d[1])); /* d3 - 4 d1 */
  v128_t c = wasm_f32x4_sub(d[4], d[2]);
  v128_t e = wasm_f32x4_sub(d[3], d[1]);
  e = wasm_f32x4_add(e, e);
  t[0] = wasm_f32x4_add(wasm_f32x4_mul(four, d[0]),
                        wasm_f32x4_sub(d[4], wasm_f32x4_mul(five, d[2])));
  t[1] = wasm_f32x4_add(a, b);
  t[2] = wasm_f32x4_sub(a, b);
  t[3] = wasm_f32x4_add(c, e);
  t[4] = wasm_f32x4_sub(c, e);
  t[5] = wasm_f32x4_add(wasm_f32x4_mul(four, d[1]),
                        wasm_f32x4_sub(d[5], wasm_f32x4_mul(five, d[3])));
}

/* A^T m for six values */
static inline __attribute__((always_inline)) void at6(const v128_t *m, v128_t *o) {
  v128_t s12 = wasm_f32x4_add(m[1], m[2]), d12 = wasm_f32x4_sub(m[1], m[2]);
  v128_t s34 = wasm_f32x4_add(m[3], m[4]), d34 = wasm_f32x4_sub(m[3], m[4]);
  o[0] = wasm_f32x4_add(wasm_f32x4_add(m[0], s12), s34);
  o[1] = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(2.0f), d34), d12);
  o[2] = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(4.0f), s34), s12);
  o[3] = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(8.0f), d34), d12), m[5]);
}

/* Input transform of the tile rows [ty0, ty0 + nty) of image xn into V:
 * value xi of channel c, band tile t in the packed-B layout of a C x ntp
 * matrix (xi's at V + xi ww_slab(C ntp); depth block pc at + pc ntp, its panel of
 * 8 tiles p at + p 8 kcb, row c - pc of it at + (c - pc) 8). The tiles
 * past the band (up to ntp, a multiple of 8) get zeros. */
static void ww_input(const ww_job *j, const float *xn, int64_t ty0, int64_t nty, float *V,
                     int64_t ntp, float *pad) {
  const ox_nn_geom *g = j->g;
  const int64_t C = j->C, IH = g->in[0], IW = g->in[1], TW = j->TW, PW = j->PW, kc = j->kc;
  const int64_t nt = nty * TW, rows = 4 * nty + 2, top = 4 * ty0 - g->pb[0];
  const int64_t xs = ww_slab(C * ntp);
  const int64_t ng = (nt + 3) / 4, ngp = ntp / 4;
  const v128_t lanes = wasm_i32x4_make(0, 1, 2, 3);
  /* borders and rows outside the image are the same for every channel:
   * zeroed once, the image rows overwritten per channel */
  memset(pad, 0, (size_t)(rows * PW) * sizeof *pad);
  for (int64_t c = 0; c < C; c++) {
    const float *xc = xn + c * IH * IW;
    for (int64_t r = 0; r < rows; r++) {
      int64_t iy = top + r;
      if (iy >= 0 && iy < IH)
        memcpy(pad + r * PW + g->pb[1], xc + iy * IW, (size_t)IW * sizeof *xc);
    }
    int64_t pc = c / kc * kc, kcb = C - pc < kc ? C - pc : kc;
    float *vc = V + pc * ntp + (c - pc) * 8;
    for (int64_t q = 0; q < ngp; q++) {
      float *vq = vc + (q >> 1) * 8 * kcb + (q & 1) * 4;
      if (q >= ng) {
        for (int xi = 0; xi < WW_XI; xi++) wasm_v128_store(vq + xi * xs, wasm_f32x4_splat(0.0f));
        continue;
      }
      /* tiles ta .. tb (the last one in the band), tile rows tya .. tyb */
      int64_t ta = 4 * q, tb = ta + 3 < nt ? ta + 3 : nt - 1, tya = ta / TW, tyb = tb / TW;
      v128_t h[6][6];
      for (int r = 0; r < 6; r++) {
        v128_t d[6];
        row_taps(pad + (4 * tya + r) * PW + 4 * (ta - tya * TW), d);
        /* lanes in later tile rows: loaded from there (the offset reaches
         * back at most three tiles, into the rows above) */
        for (int64_t ty = tya + 1; ty <= tyb; ty++) {
          v128_t e[6];
          row_taps(pad + (4 * ty + r) * PW + 4 * (ta - ty * TW), e);
          v128_t mk = wasm_i32x4_ge(lanes, wasm_i32x4_splat((int32_t)(ty * TW - ta)));
          for (int jj = 0; jj < 6; jj++) d[jj] = wasm_v128_bitselect(e[jj], d[jj], mk);
        }
        bt6(d, h[r]);
      }
      for (int jj = 0; jj < 6; jj++) {
        v128_t col[6] = {h[0][jj], h[1][jj], h[2][jj], h[3][jj], h[4][jj], h[5][jj]}, t[6];
        bt6(col, t);
        for (int i = 0; i < 6; i++) wasm_v128_store(vq + (i * 6 + jj) * xs, t[i]);
      }
    }
  }
}

/* The 36 products of output channels [k0, k1) (multiples of 4, k1 at most
 * the packing's padded rows) into Mb: value xi of channel k, tile t at
 * Mb[xi ww_slab(WW_KCHUNK ntp) + (k - k0) ntp + t]. */
static void ww_products(const ww_job *j, const float *V, int64_t ntp, int64_t k0, int64_t k1,
                        float *Mb) {
  const int64_t C = j->C, kc = j->kc, xs = ww_slab(C * ntp), ms = ww_slab(WW_KCHUNK * ntp);
  for (int xi = 0; xi < WW_XI; xi++) {
    const ox_sgemm_packed *A = j->u[xi];
    float *mx = Mb + xi * ms;
    for (int64_t pc = 0; pc < C; pc += kc) {
      int64_t kcb = C - pc < kc ? C - pc : kc;
      const float *ab = A->data + pc * A->Mpad, *vb = V + xi * xs + pc * ntp;
      float beta = pc ? 1.0f : 0.0f;
      for (int64_t jp = 0; jp < ntp; jp += 8)
        for (int64_t ir = k0; ir < k1; ir += 4)
          j->uk(kcb, ab + ir * kcb, vb + jp * kcb, mx + (ir - k0) * ntp + jp, ntp, 1.0f, beta);
    }
  }
}

/* Output transform of channels [k0, k1) of the tile rows [ty0, ty0 + nty)
 * of image n from Mb (ww_products), bias added, then the epilogue over the
 * band's rows of each channel. */
static void ww_output(const ww_job *j, const float *Mb, int64_t ntp, int64_t n, int64_t ty0,
                      int64_t nty, int64_t k0, int64_t k1) {
  const ox_nn_geom *g = j->g;
  const int64_t M = j->M, OH = g->out[0], OW = g->out[1], P = OH * OW, TW = j->TW;
  const int64_t nt = nty * TW, ms = ww_slab(WW_KCHUNK * ntp);
  const int64_t oy0 = 4 * ty0, oy1 = 4 * (ty0 + nty) < OH ? 4 * (ty0 + nty) : OH;
  for (int64_t k = k0; k < k1; k++) {
    float *yk = j->y + (n * M + k) * P;
    const float *mk = Mb + (k - k0) * ntp;
    v128_t bias = wasm_f32x4_splat(j->bias ? j->bias[k] : 0.0f);
    int64_t ty = ty0, tx = 0; /* the group's first tile */
    for (int64_t t0 = 0; t0 < nt; t0 += 4) {
      v128_t tr[6][4];
      for (int i = 0; i < 6; i++) {
        v128_t m[6];
        for (int jj = 0; jj < 6; jj++) m[jj] = wasm_v128_load(mk + (i * 6 + jj) * ms + t0);
        at6(m, tr[i]);
      }
      v128_t o[4][4]; /* o[r][c]: row r, column c of the four tiles */
      for (int c = 0; c < 4; c++) {
        v128_t col[6] = {tr[0][c], tr[1][c], tr[2][c], tr[3][c], tr[4][c], tr[5][c]}, v[4];
        at6(col, v);
        for (int r = 0; r < 4; r++) o[r][c] = wasm_f32x4_add(v[r], bias);
      }
      for (int r = 0; r < 4; r++) transpose4(o[r]); /* o[r][l]: tile l's row r */
      /* the four tiles inside one tile row and the image: 16 stores */
      if (tx + 4 <= TW && 4 * (tx + 4) <= OW && 4 * ty + 4 <= OH && t0 + 4 <= nt) {
        float *yo = yk + 4 * ty * OW + 4 * tx;
        for (int r = 0; r < 4; r++)
          for (int l = 0; l < 4; l++) wasm_v128_store(yo + r * OW + 4 * l, o[r][l]);
      } else {
        for (int l = 0; l < 4 && t0 + l < nt; l++) {
          int64_t lx = tx + l, ly = ty;
          if (lx >= TW) lx -= TW, ly++; /* TW >= 3: at most one row on */
          int64_t rows = OH - 4 * ly < 4 ? OH - 4 * ly : 4, cols = OW - 4 * lx < 4 ? OW - 4 * lx : 4;
          float *yo = yk + 4 * ly * OW + 4 * lx;
          for (int r = 0; r < rows; r++) {
            float part[4];
            wasm_v128_store(part, o[r][l]);
            memcpy(yo + r * OW, part, (size_t)cols * sizeof *part);
          }
        }
      }
      /* the next group's first tile */
      tx += 4;
      while (tx >= TW) tx -= TW, ty++;
    }
    if (j->ep) { /* the rows just written, one run of (oy1 - oy0) OW values */
      ox_sgemm_epi e = *j->ep;
      if (e.res) e.res += (n * M + k) * P + oy0 * OW;
      e.ldr = (oy1 - oy0) * OW;
      ox_sgemm_epi_apply(&e, 1, (oy1 - oy0) * OW, yk + oy0 * OW, (oy1 - oy0) * OW);
    }
  }
}

static void ww_task(void *arg, int64_t task0, int64_t task1) {
  ww_job *j = arg;
  const int64_t C = j->C, M = j->M;
  for (int64_t t = task0; t < task1; t++) {
    int64_t part = t % j->kparts, band = t / j->kparts % j->nbands, n = t / j->kparts / j->nbands;
    int64_t ty0 = band * j->rb, nty = j->TH - ty0 < j->rb ? j->TH - ty0 : j->rb;
    int64_t k0 = part * j->kpart, k1 = k0 + j->kpart < M ? k0 + j->kpart : M;
    if (nty <= 0 || k0 >= k1) continue;
    int64_t ntp = (nty * j->TW + 7) / 8 * 8;
    float *V = ox_scratch(WW_SCRATCH_V, (size_t)(WW_XI * ww_slab(C * ntp)) * sizeof(float));
    float *Mb = ox_scratch(WW_SCRATCH_M, (size_t)(WW_XI * ww_slab(WW_KCHUNK * ntp)) * sizeof(float));
    float *pad = ox_scratch(WW_SCRATCH_PAD, (size_t)((4 * nty + 2) * j->PW) * sizeof(float));
    if (!V || !Mb || !pad) {
      atomic_store(&j->fail, 1);
      return;
    }
    ww_input(j, j->x + n * C * j->g->in_size, ty0, nty, V, ntp, pad);
    for (int64_t c0 = k0; c0 < k1; c0 += WW_KCHUNK) {
      int64_t c1 = c0 + WW_KCHUNK < k1 ? c0 + WW_KCHUNK : k1;
      ww_products(j, V, ntp, c0, (c1 + 3) / 4 * 4, Mb);
      ww_output(j, Mb, ntp, n, ty0, nty, c0, c1);
    }
  }
}

int ox_wino_wasm_conv(ox_sgemm_packed *const *u, int64_t M, int64_t C, const ox_nn_geom *g,
                      int64_t N, const float *x, const float *bias, const ox_sgemm_epi *ep,
                      float *y, ox_thread_pool *pool) {
  if (!ox_wino_wasm_ok() || u[0]->mr != 4) return OX_ERUNTIME;
  ww_job j = {.u = u, .M = M, .C = C, .g = g, .x = x, .bias = bias, .y = y};
  if (ep && (ep->res || ep->act != OX_ACT_NONE || ep->bound)) j.ep = ep;
  j.uk = ox_gemm_dispatch()->uk.fn;
  j.kc = u[0]->kc;
  j.TH = (g->out[0] + 3) / 4;
  j.TW = (g->out[1] + 3) / 4;
  /* the image after the left pad, and the reads of a four-tile group
   * starting at the row's last tile (20 values from its corner) */
  j.PW = 4 * j.TW + 24;
  if (j.PW < g->pb[1] + g->in[1]) j.PW = g->pb[1] + g->in[1];
  /* bands of whole tile rows (the epilogue's rows are whole), about the
   * tiles the transformed input may hold, in even parts */
  int64_t target = WW_V_BYTES / (WW_XI * (int64_t)sizeof(float) * C);
  if (target > WW_TILES) target = WW_TILES;
  int64_t rb = target / j.TW;
  if (rb < 1) rb = 1;
  if (rb > j.TH) rb = j.TH;
  j.nbands = (j.TH + rb - 1) / rb;
  j.rb = (j.TH + j.nbands - 1) / j.nbands;
  /* threads (the threaded module): output channels in parts too when the
   * bands are too few for two tasks a thread (each part transforms its
   * band's input again), parts of at least 16 channels */
  int nth = ox_thread_pool_size(pool);
  int64_t tasks = N * j.nbands, parts = 1;
  if (nth > 1 && tasks < 2 * nth) {
    parts = (2 * nth + tasks - 1) / tasks;
    if (parts > M / 16) parts = M / 16;
    if (parts < 1) parts = 1;
  }
  j.kpart = ((M + parts - 1) / parts + 3) / 4 * 4;
  j.kparts = (M + j.kpart - 1) / j.kpart;
  atomic_init(&j.fail, 0);
  ox_parallel_for(pool, tasks * j.kparts, 1, ww_task, &j);
  return atomic_load(&j.fail) ? OX_ENOMEM : OX_OK;
}

#else
bool ox_wino_wasm_ok(void) { return false; }

int ox_wino_wasm_conv(ox_sgemm_packed *const *u, int64_t M, int64_t C, const ox_nn_geom *g,
                      int64_t N, const float *x, const float *bias, const ox_sgemm_epi *ep,
                      float *y, ox_thread_pool *pool) {
  (void)u, (void)M, (void)C, (void)g, (void)N, (void)x, (void)bias, (void)ep, (void)y, (void)pool;
  return OX_ERUNTIME;
}
#endif
