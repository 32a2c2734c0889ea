/* test_qconv.c - the integer convolution kernel (src/kernels/qconv.c) on
 * every path this CPU has, against a plain reference written here: the
 * exact int64 sum of (x - zx)(w - zw) over the taps inside the image, then
 * y = clamp(round(acc * mult + bias) + zy). Geometries: 1x1, 3x3 padded,
 * strided, dilated, 7x7 stride 2, 1-D and 3-D, odd channel counts (depth
 * not a multiple of 4, rows not a multiple of 8), outputs narrower than a
 * panel; weights int8 and uint8 with zero and non-zero zero points, signed
 * and unsigned outputs, a Relu floor, with and without a pool. The float
 * epilogue may round a value that sits on a .5 boundary the other way
 * (fused multiply-add), so a difference of one quantum is allowed on a
 * handful of values and nothing more. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/qconv.h"
#include "../../src/runtime/session.h"

static int failures;
static uint32_t rng = 2024;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct geo {
  size_t nd;
  int64_t in[3], k[3], stride[3], dil[3], pad[3];
  int64_t C, M;
} geo;

static void make_geom(const geo *c, ox_nn_geom *g) {
  memset(g, 0, sizeof *g);
  g->nd = c->nd;
  g->in_size = g->out_size = g->k_size = 1;
  for (size_t d = 0; d < c->nd; d++) {
    g->in[d] = c->in[d];
    g->k[d] = c->k[d];
    g->stride[d] = c->stride[d];
    g->dil[d] = c->dil[d];
    g->pb[d] = g->pe[d] = c->pad[d];
    g->out[d] = (c->in[d] + 2 * c->pad[d] - (c->k[d] - 1) * c->dil[d] - 1) / c->stride[d] + 1;
    g->in_size *= g->in[d];
    g->out_size *= g->out[d];
    g->k_size *= g->k[d];
  }
}

/* exact accumulator of output channel m at output position p */
static int64_t ref_acc(const ox_nn_geom *g, const uint8_t *x, int64_t C, int32_t zx,
                       const uint8_t *w, bool ws, int32_t zw, int64_t m, int64_t p) {
  int64_t oi[3], rem = p;
  for (size_t d = g->nd; d-- > 0;) {
    oi[d] = rem % g->out[d];
    rem /= g->out[d];
  }
  int64_t acc = 0;
  for (int64_t c = 0; c < C; c++)
    for (int64_t t = 0; t < g->k_size; t++) {
      int64_t ki[3], r = t, lin = 0;
      bool inside = true;
      for (size_t d = g->nd; d-- > 0;) {
        ki[d] = r % g->k[d];
        r /= g->k[d];
      }
      for (size_t d = 0; d < g->nd; d++) {
        int64_t ii = oi[d] * g->stride[d] - g->pb[d] + ki[d] * g->dil[d];
        if (ii < 0 || ii >= g->in[d]) inside = false;
        lin = lin * g->in[d] + ii;
      }
      if (!inside) continue; /* padding holds zx: contributes nothing */
      int32_t wv = ws ? (int8_t)w[(m * C + c) * g->k_size + t] : w[(m * C + c) * g->k_size + t];
      acc += (int64_t)(x[c * g->in_size + lin] - zx) * (wv - zw);
    }
  return acc;
}

static void check(const char *path, const geo *c, bool w_signed, int zmode, bool y_signed,
                  bool relu, ox_thread_pool *pool) {
  ox_nn_geom g;
  make_geom(c, &g);
  int64_t C = c->C, M = c->M, K = C * g.k_size, P = g.out_size;
  uint8_t *x = malloc((size_t)(C * g.in_size)), *w = malloc((size_t)(M * K));
  uint8_t *y = malloc((size_t)(M * P));
  float *mult = malloc((size_t)M * sizeof *mult), *bias = malloc((size_t)M * sizeof *bias);
  for (int64_t i = 0; i < C * g.in_size; i++) x[i] = (uint8_t)next();
  for (int64_t i = 0; i < M * K; i++) w[i] = (uint8_t)next();
  int32_t zx = (int32_t)(next() % 256);
  uint8_t zwb = zmode == 0 ? 0 : (uint8_t)next();
  int32_t zw = w_signed ? (int8_t)zwb : zwb;
  for (int64_t m = 0; m < M; m++) {
    /* about one output quantum per sqrt(K) * 64 * 64 of accumulator */
    mult[m] = (float)(1.0 / (sqrt((double)K) * 4096.0) * (0.5 + (next() % 100) / 100.0));
    bias[m] = (float)((int)(next() % 200) - 100) / 7.0f;
  }
  ox_qconv_req q = {mult, bias, 0, 0, 0, y_signed};
  q.zy = y_signed ? (int32_t)(next() % 40) - 20 : (int32_t)(next() % 60) + 100;
  q.lo = y_signed ? -128 : 0;
  q.hi = y_signed ? 127 : 255;
  if (relu && q.zy > q.lo) q.lo = q.zy;
  ox_qconv_w pw;
  ox_err e = {0};
  int rc = ox_qconv_pack_w(w, w_signed, M, K, K, zmode ? &zwb : NULL, 1, &pw, &e);
  if (!rc) rc = ox_qconv_run_on(path, &g, x, C, zx, &pw, &q, y, pool, &e);
  if (rc) {
    printf("%s: %s\n", path, e.msg);
    failures++;
  } else {
    int64_t off_by_one = 0, worse = 0;
    for (int64_t m = 0; m < M; m++)
      for (int64_t p = 0; p < P; p++) {
        int64_t acc = ref_acc(&g, x, C, zx, w, w_signed, zw, m, p);
        double f = (double)acc * mult[m] + bias[m] + q.zy;
        double r = nearbyint(f < q.lo ? q.lo : f > q.hi ? q.hi : f);
        int32_t got = y_signed ? (int8_t)y[m * P + p] : y[m * P + p];
        double d = fabs(got - r);
        if (d == 1) off_by_one++;
        if (d > 1) {
          if (!worse)
            printf("%s nd=%zu C=%lld M=%lld k=%lld: y[%lld][%lld] = %d, want %.0f (acc %lld)\n",
                   path, c->nd, (long long)C, (long long)M, (long long)c->k[0], (long long)m,
                   (long long)p, got, r, (long long)acc);
          worse++;
        }
      }
    if (worse || off_by_one > 2 + M * P / 1000) {
      printf("%s nd=%zu C=%lld M=%lld: %lld values off by one, %lld worse\n", path, c->nd,
             (long long)C, (long long)M, (long long)off_by_one, (long long)worse);
      failures++;
    }
  }
  ox_qconv_free_w(&pw);
  free(x);
  free(w);
  free(y);
  free(mult);
  free(bias);
}

int main(void) {
  static const geo cases[] = {
      {2, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 16, 8},               /* 1x1 */
      {2, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 5, 13},               /* 3x3 pad 1, odd */
      {2, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 7, 9},              /* strided */
      {2, {12, 12}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 3, 17},             /* dilated */
      {2, {23, 23}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, 3, 16},             /* stem */
      {2, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 64, 24},              /* narrow, deep */
      {2, {56, 20}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 32, 40},            /* several chunks */
      {1, {50}, {5}, {1}, {1}, {2}, 6, 10},                             /* 1-D */
      {3, {5, 6, 4}, {3, 2, 3}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1}, 4, 5}, /* 3-D */
      {2, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 1},                /* one value */
      /* stride 2 on both axes (phase planes): even and odd sizes, pads 0 to 3 */
      {2, {16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 12, 20},
      {2, {14, 13}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, 9, 7},
      {2, {13, 14}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, 5, 6},
      {2, {11, 10}, {4, 5}, {2, 2}, {1, 1}, {1, 2}, 3, 8},
      {2, {9, 9}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, 2, 5},
      {2, {2, 3}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, 3},
      /* leftover columns after whole panels (column kernel): 5 and 8, rows
       * not a multiple of the 8-row block */
      {2, {7, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 6, 13},
      {2, {8, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 10, 21},
      /* a 28 x 28 map: with a pool, chunks sized by the estimated finishing
       * time (seven rows of 28 columns, whole panels and a leftover) */
      {2, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 32, 24},
      /* shifted planes (panels loaded straight from the input rows): no
       * padding on the rows (fewer output than input rows), a wide map in
       * several chunks, a 2 x 2 kernel */
      {2, {10, 9}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, 7, 11},
      {2, {40, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 24, 16},
      {2, {6, 17}, {1, 5}, {1, 1}, {1, 1}, {0, 2}, 5, 9},
  };
  const char *paths[] = {"avx512vnni", "portable"};
  ox_err e = {0};
  ox_thread_pool *pool = ox_thread_pool_new(2, &e);
  int ran = 0;
  for (size_t p = 0; p < 2; p++) {
    if (strcmp(paths[p], "portable") != 0 && strcmp(ox_qconv_path(), paths[p]) != 0) {
      printf("skip path %s: not on this CPU\n", paths[p]);
      continue;
    }
    ran++;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
      for (int v = 0; v < 8; v++)
        check(paths[p], &cases[c], v & 1, (v >> 1) & 1, (v >> 2) & 1, (c + (size_t)v) % 3 == 0,
              v % 2 ? pool : NULL);
  }
  ox_thread_pool_free(pool);
  printf("best path here: %s; %d paths checked\n", ox_qconv_path(), ran);
  if (failures) printf("%d failures\n", failures);
  return failures != 0 || ran == 0;
}
