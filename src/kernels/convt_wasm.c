/* convt_wasm.c - ConvTranspose of 2 x 2 kernels at stride 2 in WebAssembly
 * SIMD128 (see convt_wasm.h).
 *
 * A task takes one image, group and output channel and a band of input
 * rows. For eight input pixels of a row, eight accumulators (the four taps
 * of each half) start at zero and take x[c] * w[c, m, kh, kw] for c in
 * order; output row 2h + kh is then the kw = 0 and kw = 1 vectors
 * interleaved, each plus the bias. The GEMM path (conv_transpose.c) forms
 * each column value the same way (its micro-kernel starts at zero, one
 * rounded multiply and one rounded add per channel) and its tiles add the
 * bias: the bits are the same. Row tails go through the same code on a
 * zero-padded copy of the channels' last pixels. */
#include "convt_wasm.h"

#include "../base/cpu.h"

#ifdef __wasm_simd128__
#include <string.h>
#include <wasm_simd128.h>

enum {
  CT_MAXC = 128,         /* input channels per group taken */
  CT_TASK_OUT = 1 << 15, /* about this many outputs per task */
};

bool ox_convt2_wasm_fits(const ox_nn_geom *g, int64_t Cg) {
  if (!ox_cpu_get()->simd128 || g->nd != 2 || Cg < 1 || Cg > CT_MAXC) return false;
  for (int d = 0; d < 2; d++)
    if (g->k[d] != 2 || g->stride[d] != 2 || g->dil[d] != 1 || g->pb[d] != 0 || g->pe[d] != 0 ||
        g->in[d] != 2 * g->out[d])
      return false;
  return true;
}

typedef struct ct_job {
  const float *x, *w, *bias;
  float *y;
  int64_t G, Cg, Mg, H, W;
  int64_t band, nbands; /* input rows per task, tasks per output plane */
} ct_job;

/* The four taps of NV * 4 pixels starting at xs (channel stride P),
 * accumulated over the Cg channels: a[q][t] for vector q, tap t = 2 kh + kw. */
static inline __attribute__((always_inline)) void ct_sums(const float *xs, int64_t P,
                                                          const float *wm, int64_t wstride,
                                                          int64_t Cg, int NV, v128_t a[2][4]) {
  for (int q = 0; q < NV; q++)
    for (int t = 0; t < 4; t++) a[q][t] = wasm_f32x4_splat(0.0f);
  for (int64_t c = 0; c < Cg; c++) {
    const float *xc = xs + c * P, *wc = wm + c * wstride;
    v128_t x0 = wasm_v128_load(xc), x1 = NV > 1 ? wasm_v128_load(xc + 4) : x0;
    for (int t = 0; t < 4; t++) {
      v128_t wv = wasm_v128_load32_splat(wc + t);
      a[0][t] = wasm_f32x4_add(a[0][t], wasm_f32x4_mul(x0, wv));
      if (NV > 1) a[1][t] = wasm_f32x4_add(a[1][t], wasm_f32x4_mul(x1, wv));
    }
  }
}

/* Stores the 2 x 2 outputs of NV * 4 pixels: rows y0 (kh = 0) and y1 */
static inline __attribute__((always_inline)) void ct_store(v128_t a[2][4], v128_t bv, float *y0,
                                                           float *y1, int NV) {
  for (int q = 0; q < NV; q++) {
    float *r0 = y0 + 8 * q, *r1 = y1 + 8 * q;
    v128_t t0 = wasm_f32x4_add(bv, a[q][0]), t1 = wasm_f32x4_add(bv, a[q][1]);
    v128_t t2 = wasm_f32x4_add(bv, a[q][2]), t3 = wasm_f32x4_add(bv, a[q][3]);
    wasm_v128_store(r0, wasm_i32x4_shuffle(t0, t1, 0, 4, 1, 5));
    wasm_v128_store(r0 + 4, wasm_i32x4_shuffle(t0, t1, 2, 6, 3, 7));
    wasm_v128_store(r1, wasm_i32x4_shuffle(t2, t3, 0, 4, 1, 5));
    wasm_v128_store(r1 + 4, wasm_i32x4_shuffle(t2, t3, 2, 6, 3, 7));
  }
}

static void ct_task(void *arg, int64_t t0, int64_t t1) {
  const ct_job *j = arg;
  const int64_t H = j->H, W = j->W, P = H * W, Cg = j->Cg, W8 = W / 8 * 8, W4 = W / 4 * 4;
  /* the row tail's channels, zero-padded to four pixels */
  float tail[CT_MAXC * 4], out[2][8];
  for (int64_t t = t0; t < t1; t++) { /* t = ((n * G + gi) * Mg + m) * nbands + band */
    int64_t band = t % j->nbands, plane = t / j->nbands; /* plane = (n * G + gi) * Mg + m */
    int64_t m = plane % j->Mg, img = plane / j->Mg, gi = img % j->G;
    const float *xg = j->x + img * Cg * P;
    const float *wm = j->w + (gi * Cg * j->Mg + m) * 4; /* w[gi * Cg + c, m, kh, kw] */
    int64_t wstride = j->Mg * 4;
    v128_t bv = wasm_f32x4_splat(j->bias ? j->bias[gi * j->Mg + m] : 0.0f);
    float *yp = j->y + plane * 4 * P;
    int64_t h0 = band * j->band, h1 = h0 + j->band < H ? h0 + j->band : H;
    for (int64_t h = h0; h < h1; h++) {
      float *y0 = yp + 2 * h * 2 * W, *y1 = y0 + 2 * W;
      const float *xr = xg + h * W;
      v128_t a[2][4];
      int64_t w = 0;
      for (; w < W8; w += 8) {
        ct_sums(xr + w, P, wm, wstride, Cg, 2, a);
        ct_store(a, bv, y0 + 2 * w, y1 + 2 * w, 2);
      }
      for (; w < W4; w += 4) {
        ct_sums(xr + w, P, wm, wstride, Cg, 1, a);
        ct_store(a, bv, y0 + 2 * w, y1 + 2 * w, 1);
      }
      if (w < W) {
        int64_t r = W - w;
        for (int64_t c = 0; c < Cg; c++) {
          memset(tail + 4 * c, 0, 4 * sizeof(float));
          memcpy(tail + 4 * c, xr + c * P + w, (size_t)r * sizeof(float));
        }
        ct_sums(tail, 4, wm, wstride, Cg, 1, a);
        ct_store(a, bv, out[0], out[1], 1);
        memcpy(y0 + 2 * w, out[0], (size_t)(2 * r) * sizeof(float));
        memcpy(y1 + 2 * w, out[1], (size_t)(2 * r) * sizeof(float));
      }
    }
  }
}

void ox_convt2_wasm(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Cg,
                    int64_t Mg, const float *x, const float *w, const float *bias, float *y) {
  ct_job j = {x, w, bias, y, G, Cg, Mg, g->out[0], g->out[1], 1, 1};
  if (j.H <= 0 || j.W <= 0) return;
  /* bands of input rows of about CT_TASK_OUT outputs: several tasks per
   * plane for the threads when the layer has few output channels */
  j.band = CT_TASK_OUT / (4 * j.W);
  if (j.band < 1) j.band = 1;
  if (j.band > j.H) j.band = j.H;
  j.nbands = (j.H + j.band - 1) / j.band;
  ox_parallel_for(pool, N * G * Mg * j.nbands, 1, ct_task, &j);
}

#else /* a build without SIMD128: never taken */

bool ox_convt2_wasm_fits(const ox_nn_geom *g, int64_t Cg) {
  (void)g, (void)Cg;
  return false;
}

void ox_convt2_wasm(ox_thread_pool *pool, const ox_nn_geom *g, int64_t N, int64_t G, int64_t Cg,
                    int64_t Mg, const float *x, const float *w, const float *bias, float *y) {
  (void)pool, (void)g, (void)N, (void)G, (void)Cg, (void)Mg, (void)x, (void)w, (void)bias, (void)y;
}
#endif
