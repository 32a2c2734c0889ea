/* nn.h - helpers shared by the convolution and pooling kernels: spatial
 * geometry (kernel, strides, dilations, pads, auto_pad) and im2col / col2im
 * over 1..OX_NN_MAXD spatial dimensions. No node knowledge: the operators
 * read the attributes (src/ops/nn_attrs.h) and stage other float types
 * (src/ops/nn_stage.h). */
#ifndef OX_NN_H
#define OX_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "gemm.h"

#define OX_NN_MAXD 8

typedef enum ox_autopad {
  OX_PAD_NOTSET,
  OX_PAD_SAME_UPPER,
  OX_PAD_SAME_LOWER,
  OX_PAD_VALID
} ox_autopad;

/* Attributes as written on the node (n_* == 0: absent). */
typedef struct ox_nn_attrs {
  ox_autopad auto_pad;
  int64_t kernel[OX_NN_MAXD], strides[OX_NN_MAXD], dils[OX_NN_MAXD], pads[2 * OX_NN_MAXD];
  size_t n_kernel, n_strides, n_dils, n_pads;
  int64_t group;
  bool ceil_mode;
} ox_nn_attrs;

/* Geometry of one sliding-window operation over nd spatial dimensions. */
typedef struct ox_nn_geom {
  size_t nd;
  int64_t in[OX_NN_MAXD], out[OX_NN_MAXD], k[OX_NN_MAXD], stride[OX_NN_MAXD], dil[OX_NN_MAXD],
      pb[OX_NN_MAXD], pe[OX_NN_MAXD];
  int64_t in_size, out_size, k_size; /* products */
} ox_nn_geom;

/* Fills g from the attributes, the input spatial dims and the kernel dims
 * (kernel_shape wins when given). `pool` selects the pooling output formula
 * (ceil_mode; windows starting in the end padding dropped). Message in *e
 * (without node prefix) on inconsistent attributes. */
int ox_nn_geom_make(const ox_nn_attrs *a, size_t nd, const int64_t *in, const int64_t *kdims,
                    bool pool, ox_nn_geom *g, ox_err *e);

/* im2col for one image of C channels (x: C x in_size): rows c*k_size + kidx,
 * columns = output positions whose outer index (all dims but the last) is in
 * [o0, o1); col row stride ldc. Out-of-image taps read `padv`. */
void ox_nn_im2col(const ox_nn_geom *g, int64_t C, const float *x, int64_t o0, int64_t o1,
                  float *col, int64_t ldc, float padv);
/* One im2col row of bytes: channel plane xc, kernel offset kidx (linear over
 * the kernel dims), outer output rows [o0, o1) into dst ((o1 - o0) * last
 * output dim bytes); taps in the padding read padv. */
void ox_nn_im2col_row_u8(const ox_nn_geom *g, const uint8_t *xc, int64_t kidx, int64_t o0,
                         int64_t o1, uint8_t *dst, uint8_t padv);
/* dst[i] = src[2 i], i < n (the taps of a stride-2 row): vector code on
 * AVX-512. */
void ox_nn_gather2_u8(uint8_t *dst, const uint8_t *src, int64_t n);
void ox_nn_gather2_f32(float *dst, const float *src, int64_t n);
/* A stride-2 pooling window of k (2 or 3) columns along a row: dst[i] =
 * src[2 i] combined with src[2 i + 1] (and src[2 i + 2]) in that order, as
 * the comparisons x > r ? x : r (is_max) or as a sum divided by div; reads
 * src[0 .. 2 (n - 1) + k - 1]. Vector code on AVX-512. */
void ox_nn_pool2_f32(float *dst, const float *src, int64_t n, int k, bool is_max, float div);
/* Pooling over 3 x 3 windows at stride 2 of three input rows: dst[i]
 * combines x_r[2 i + c] (r, c < 3), each column's rows from the identity
 * (-inf, or 0 for a sum) in row order, then the columns in order: the
 * comparisons x > r ? x : r (is_max; a NaN never wins) or the sum (not
 * divided); reads columns 0 .. 2 n of each row. */
void ox_nn_pool3x3s2_f32(float *dst, const float *x0, const float *x1, const float *x2, int64_t n,
                         bool is_max);
/* The same for `rows` output rows: row r (at dst + r ldd) from the input
 * rows at x + 2 r ldx, one and two ldx on (stride 2 down the plane too;
 * ldx may be negative: rows held bottom up). */
void ox_nn_pool3x3s2_rows_f32(float *dst, int64_t ldd, const float *x, int64_t ldx, int64_t rows,
                              int64_t n, bool is_max);
/* Stride 2 on both axes of a 2-D geometry, dilation 1: the input can be
 * split into its phase planes (even / odd rows x even / odd columns of the
 * padded image), on which every im2col row is a run of contiguous copies.
 * A plane holds ph_rows x ph_cols bytes; the four of a channel follow one
 * another (phase 2 * row parity + column parity). */
typedef struct ox_nn_phases {
  int64_t ph_rows, ph_cols, plane; /* plane = ph_rows * ph_cols */
} ox_nn_phases;
bool ox_nn_phases_fit(const ox_nn_geom *g, ox_nn_phases *ph);
/* The phase planes of channels [c0, c1) of x (C planes of g's input) into
 * dst (4 * plane bytes per channel, from channel c0); taps in the padding
 * read padv. Phases no kernel tap reads are left unwritten. */
void ox_nn_phases_build_u8(const ox_nn_geom *g, const ox_nn_phases *ph, const uint8_t *x,
                           int64_t c0, int64_t c1, uint8_t padv, uint8_t *dst);
/* ox_nn_im2col_row_u8 of channel c's phase planes (q: the channel's four). */
void ox_nn_phases_row_u8(const ox_nn_geom *g, const ox_nn_phases *ph, const uint8_t *q,
                         int64_t kidx, int64_t o0, int64_t o1, uint8_t *dst);
/* The same columns written as the packed B of OX_GEMM_B_PANELS (panels of nr
 * columns, depth blocks of kcb rows). rowbuf holds one padded row
 * (ncols rounded up to nr). */
void ox_nn_im2col_packed(const ox_nn_geom *g, int64_t C, const float *x, int64_t o0, int64_t o1,
                         float *bp, int nr, int64_t kcb, float *rowbuf);
/* The same packed B for a 1-D geometry (g->nd == 1), over the output
 * positions [j0, j1) of its one row: a long signal (Whisper's 3,000 frames)
 * in chunks of columns that stay in cache, each read by its own GEMM. */
void ox_nn_im2col_packed_1d(const ox_nn_geom *g, int64_t C, const float *x, int64_t j0, int64_t j1,
                            float *bp, int nr, int64_t kcb);
/* Stride 1 on every axis, 1-D or 2-D, as many output as input columns: an
 * im2col row over whole output rows is a shifted copy of the input plane. */
bool ox_nn_shifted_plane(const ox_nn_geom *g);
/* For such geometries (kernels of up to OX_NN_SHIFT_MAXK taps) on a CPU with
 * AVX-512: a strip producer for OX_GEMM_B_STRIPS over the im2col of x (C
 * channels) restricted to outer output rows from o0 (ctx: ox_nn_shift);
 * NULL otherwise. */
#define OX_NN_SHIFT_MAXK 64
typedef struct ox_nn_shift {
  const ox_nn_geom *g;
  const float *x;
  int64_t o0;
} ox_nn_shift;
ox_sgemm_strip_fn ox_nn_shift_strip_fn(const ox_nn_geom *g);

/* Number of outer output rows (product of out dims except the last; 1 for 1-D). */
int64_t ox_nn_outer(const ox_nn_geom *g);
/* Adds the columns (C*k_size rows x out_size) back into the image y (C x in_size).
 * Here `out` are the column positions and `in` the image: the col2im of Col2Im
 * and ConvTranspose. */
void ox_nn_col2im_add(const ox_nn_geom *g, int64_t C, const float *col, float *y);
void ox_nn_col2im_add_f64(const ox_nn_geom *g, int64_t C, const double *col, double *y);
/* The same for the column positions of outer rows [o0, o1) only (col row
 * stride ldcol; its column 0 is the first position of row o0). */
void ox_nn_col2im_add_rows(const ox_nn_geom *g, int64_t C, const float *col, int64_t ldcol,
                           int64_t o0, int64_t o1, float *y);
void ox_nn_col2im_add_rows_f64(const ox_nn_geom *g, int64_t C, const double *col, int64_t ldcol,
                               int64_t o0, int64_t o1, double *y);

#endif
