/* test_nn.c - convolution geometry + im2col + GEMM against the examples of
 * the Conv section of Operators.md (basic conv with padding, with strides and
 * padding, auto_pad SAME_LOWER), and col2im as the adjoint of im2col. */
#include <stdio.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/nn.h"

static int failures;

/* 1 input channel, 1 output channel, 3x3 kernel of ones. */
static void conv_case(const char *name, int64_t H, int64_t W, ox_nn_attrs *a, const float *want,
                      int64_t OH, int64_t OW) {
  float x[64], col[9 * 64], y[64], w[9];
  for (int64_t i = 0; i < H * W; i++) x[i] = (float)i;
  for (int i = 0; i < 9; i++) w[i] = 1.0f;
  int64_t in[2] = {H, W}, k[2] = {3, 3};
  ox_nn_geom g;
  ox_err e = {0};
  if (ox_nn_geom_make(a, 2, in, k, false, &g, &e) || g.out[0] != OH || g.out[1] != OW) {
    printf("FAIL %s: geometry (%s) %lldx%lld\n", name, e.msg, (long long)g.out[0],
           (long long)g.out[1]);
    failures++;
    return;
  }
  ox_nn_im2col(&g, 1, x, 0, ox_nn_outer(&g), col, g.out_size, 0.0f);
  ox_gemm(&(ox_gemm_desc){.M = 1, .N = g.out_size, .K = 9, .A = w, .lda = 9, .B = col,
                          .ldb = g.out_size, .alpha = 1.0f, .C = y, .ldc = g.out_size});
  for (int64_t i = 0; i < OH * OW; i++)
    if (y[i] != want[i]) {
      printf("FAIL %s: y[%lld] = %g, want %g\n", name, (long long)i, y[i], want[i]);
      failures++;
      return;
    }
}

int main(void) {
  ox_nn_attrs a;
  memset(&a, 0, sizeof a);
  a.n_pads = 4;
  for (int i = 0; i < 4; i++) a.pads[i] = 1;
  static const float pad1[] = {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                               117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  conv_case("test_basic_conv_with_padding", 5, 5, &a, pad1, 5, 5);
  a.n_strides = 2;
  a.strides[0] = a.strides[1] = 2;
  static const float str[] = {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124};
  conv_case("test_conv_with_strides_padding", 7, 5, &a, str, 4, 3);
  a.n_pads = 0;
  a.auto_pad = OX_PAD_SAME_LOWER;
  static const float same[] = {12, 27, 24, 63, 108, 81, 72, 117, 84};
  conv_case("test_conv_with_autopad_same", 5, 5, &a, same, 3, 3);

  /* <im2col(x), c> == <x, col2im(c)> for a strided, dilated, padded 3-D case */
  memset(&a, 0, sizeof a);
  a.n_strides = 3;
  a.strides[0] = 2, a.strides[1] = 1, a.strides[2] = 3;
  a.n_dils = 3;
  a.dils[0] = 1, a.dils[1] = 2, a.dils[2] = 1;
  a.n_pads = 6;
  a.pads[0] = 1, a.pads[1] = 0, a.pads[2] = 2, a.pads[3] = 0, a.pads[4] = 1, a.pads[5] = 1;
  int64_t in[3] = {5, 6, 7}, k[3] = {2, 3, 2};
  ox_nn_geom g;
  if (ox_nn_geom_make(&a, 3, in, k, false, &g, NULL)) {
    printf("FAIL 3-D geometry\n");
    return 1;
  }
  static float x[2 * 210], c[2 * 12 * 600], back[2 * 210], col[2 * 12 * 600];
  for (int i = 0; i < 2 * 210; i++) x[i] = (float)((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < 2 * 12 * g.out_size; i++) c[i] = (float)((i * 5) % 13) - 6.0f;
  ox_nn_im2col(&g, 2, x, 0, ox_nn_outer(&g), col, g.out_size, 0.0f);
  memset(back, 0, sizeof back);
  ox_nn_col2im_add(&g, 2, c, back);
  double s1 = 0, s2 = 0;
  for (int64_t i = 0; i < 2 * 12 * g.out_size; i++) s1 += (double)col[i] * c[i];
  for (int i = 0; i < 2 * 210; i++) s2 += (double)x[i] * back[i];
  if (s1 != s2) {
    printf("FAIL im2col/col2im adjoint: %g vs %g\n", s1, s2);
    failures++;
  }
  /* im2col written straight into GEMM panels == plain im2col + GEMM, with a
   * depth (30 channels x 12 taps = 360) spanning two depth blocks and
   * 13 output channels (a partial row panel) */
  {
    enum { CH = 30, MO = 13 };
    static float xin[CH * 210], w[MO * CH * 12], yref[MO * 600], ygot[MO * 600];
    static float cols[CH * 12 * 600], bp[CH * 12 * 640 + 4096], rowbuf[700];
    for (int i = 0; i < CH * 210; i++) xin[i] = (float)((i * 13) % 17) - 8.0f;
    for (int i = 0; i < MO * CH * 12; i++) w[i] = (float)((i * 3) % 7) - 3.0f;
    int64_t P = g.out_size, K = CH * 12;
    ox_nn_im2col(&g, CH, xin, 0, ox_nn_outer(&g), cols, P, 0.0f);
    for (int64_t m = 0; m < MO; m++)
      for (int64_t p = 0; p < P; p++) {
        float acc = 0.0f;
        for (int64_t q = 0; q < K; q++) acc += w[m * K + q] * cols[q * P + p];
        yref[m * P + p] = acc;
      }
    if (ox_sgemm_packed_b_floats(K, P) > sizeof bp / sizeof bp[0]) {
      printf("FAIL packed buffer too small\n");
      return 1;
    }
    ox_sgemm_packed *pa = ox_sgemm_pack_a(false, MO, K, w, K, NULL);
    ox_nn_im2col_packed(&g, CH, xin, 0, ox_nn_outer(&g), bp, ox_sgemm_nr(), ox_sgemm_kc(), rowbuf);
    ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_PANELS, .pa = pa, .N = P, .B = bp, .C = ygot, .ldc = P});
    ox_sgemm_packed_free(pa);
    if (ox_sgemm_has_ua()) { /* A in place: compare the two packed-B products */
      static float yua[MO * 600];
      ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_PANELS, .M = MO, .N = P, .K = K, .A = w, .lda = K,
                              .B = bp, .C = yua, .ldc = P});
      if (memcmp(yua, ygot, sizeof(float) * (size_t)(MO * P)) != 0) {
        printf("FAIL in-place A product differs\n");
        failures++;
      }
    }
    for (int64_t i = 0; i < MO * P; i++)
      if (ygot[i] != yref[i]) { /* small integers: exact in float32 */
        printf("FAIL packed im2col: y[%lld] = %g, want %g\n", (long long)i, ygot[i], yref[i]);
        failures++;
        break;
      }
  }
  /* 1x1 kernel: the panels are copies of the input rows (70 columns: two full
   * panels and a partial one) */
  {
    ox_nn_attrs pa1;
    memset(&pa1, 0, sizeof pa1);
    int64_t in2[2] = {7, 10}, k2[2] = {1, 1};
    ox_nn_geom g1;
    if (ox_nn_geom_make(&pa1, 2, in2, k2, false, &g1, NULL)) return 1;
    static float xin[5 * 70], bp[5 * 96 + 512], rowbuf[200];
    for (int i = 0; i < 5 * 70; i++) xin[i] = (float)i;
    int nr = ox_sgemm_nr();
    ox_nn_im2col_packed(&g1, 5, xin, 0, ox_nn_outer(&g1), bp, nr, ox_sgemm_kc(), rowbuf);
    int64_t npad = (70 + nr - 1) / nr * nr;
    for (int64_t kr = 0; kr < 5 && !failures; kr++)
      for (int64_t n = 0; n < npad; n++) {
        float want = n < 70 ? xin[kr * 70 + n] : 0.0f;
        if (bp[(n / nr) * nr * 5 + kr * nr + n % nr] != want) {
          printf("FAIL pointwise panels at kr=%lld n=%lld\n", (long long)kr, (long long)n);
          failures++;
          break;
        }
      }
  }
  printf("nn: %d failures\n", failures);
  return failures ? 1 : 0;
}
