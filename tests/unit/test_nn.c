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
  ox_sgemm(false, false, 1, g.out_size, 9, 1.0f, w, 9, col, g.out_size, 0.0f, y, g.out_size, NULL);
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
  printf("nn: %d failures\n", failures);
  return failures ? 1 : 0;
}
