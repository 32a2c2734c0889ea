/* conv_transpose.c - ConvTranspose, Col2Im and DeformConv (float): the
 * transposed convolution as a GEMM of W's packed groups scattered into Y,
 * Col2Im's column sums, and the deformable convolution's sampled columns.
 * Shares conv_state and the float staging with conv.c (conv_common.h). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/convt_wasm.h"
#include "../../kernels/gemm.h"
#include "../../kernels/levels.h"
#include "../../kernels/nn.h"
#include "../../runtime/kernel.h"
#include "../nn_attrs.h"
#include "../nn_stage.h"
#include "conv_common.h"

/* ---------------- ConvTranspose ---------------- */

static int convt_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  conv_state *s = ox_conv_state_new(info, e);
  if (!s) return e ? e->code : OX_ENOMEM;
  *state = s;
  const ox_attr *op = ox_node_attr(info->node, "output_padding");
  const ox_attr *os = ox_node_attr(info->node, "output_shape");
  if ((op && op->n_ints > OX_NN_MAXD) || (os && os->n_ints > OX_NN_MAXD + 2))
    return ox_err_set(e, OX_EINVAL, "output_padding/output_shape too long"),
           ox_conv_prep_err(info, e);
  if (op) {
    s->n_out_padding = op->n_ints;
    if (op->n_ints) memcpy(s->out_padding, op->ints, op->n_ints * sizeof(int64_t));
  }
  if (os) {
    s->n_out_shape = os->n_ints;
    if (os->n_ints) memcpy(s->out_shape, os->ints, os->n_ints * sizeof(int64_t));
  }
  /* constant float W (C x M/group x k...): W^T of each group packed once */
  const ox_value *w = info->const_inputs && info->n_inputs > 1 ? info->const_inputs[1] : NULL;
  if (w && w->kind == OX_VAL_TENSOR && w->dtype == OX_FLOAT && w->rank >= 3 &&
      w->dims[0] % s->a.group == 0 && w->dims[0] > 0 && w->numel > 0)
    return ox_conv_pack_groups(info, s, w, true, e);
  return OX_OK;
}

/* 2-D kernels equal to the strides, no dilation or padding: every output
 * pixel receives exactly one column value, so Y is written (bias + column)
 * row by row instead of accumulated. */
OX_LEVEL_BODY void convt_tiles_c(const ox_nn_geom *g, int64_t M, const float *col, int64_t ldcol,
                                 int64_t o0, int64_t o1, const float *bias, float *y) {
  int64_t KH = g->k[0], KW = g->k[1], XW = g->out[1], YW = g->in[1];
  for (int64_t m = 0; m < M; m++) {
    float b = bias ? bias[m] : 0.0f;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t oh = o0; oh < o1; oh++) {
        float *yr = y + m * g->in_size + (oh * KH + kh) * YW;
        const float *src = col + (m * KH + kh) * KW * ldcol + (oh - o0) * XW;
        if (KW == 2) {
          const float *s1 = src + ldcol;
          for (int64_t w = 0; w < XW; w++) {
            yr[2 * w] = b + src[w];
            yr[2 * w + 1] = b + s1[w];
          }
        } else {
          for (int64_t kw = 0; kw < KW; kw++)
            for (int64_t w = 0; w < XW; w++) yr[w * KW + kw] = b + src[kw * ldcol + w];
        }
      }
  }
}
OX_LEVELS_VOID(convt_tiles,
               (const ox_nn_geom *g, int64_t M, const float *col, int64_t ldcol, int64_t o0,
                int64_t o1, const float *bias, float *y),
               g, M, col, ldcol, o0, o1, bias, y)

typedef struct convt_job {
  const ox_nn_geom *g; /* in = Y spatial, out = X spatial */
  const float *x, *w, *bias;
  float *y;
  int64_t G, Cg, Mg, Pin;
  ox_sgemm_packed *const *packed; /* W^T per group when W is constant */
  bool tiled;                     /* convt_tiles applies */
  int64_t chunk, n_chunks;        /* rows of X per chunk, chunks per image */
  ox_thread_pool *inner_pool;
  atomic_int oom;
  OX_LEVEL_PTR(convt_tiles) tiles; /* convt_tiles of the level in use, when tiled */
} convt_job;

/* One image and group: Y = bias, then for chunks of X rows (columns of about
 * 1 MiB, kept in cache) W^T X into columns and col2im into Y. */
static void convt_task(void *arg, int64_t t0, int64_t t1) {
  convt_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t rows = j->Mg * g->k_size, XW = g->out[g->nd - 1], outer = ox_nn_outer(g);
  float *col = malloc((size_t)(rows * j->chunk * XW + 1) * sizeof(float));
  if (!col) {
    atomic_store(&j->oom, 1);
    return;
  }
  /* tiled: t = (n * G + gi) * n_chunks + chunk (chunks write disjoint rows of
   * Y); else t = n * G + gi, all chunks in turn */
  for (int64_t t = t0; t < t1; t++) {
    int64_t img = j->tiled ? t / j->n_chunks : t, gi = img % j->G;
    int64_t c0 = j->tiled ? t % j->n_chunks : 0, c1 = j->tiled ? c0 + 1 : j->n_chunks;
    const float *xg = j->x + img * j->Cg * j->Pin;
    const float *wg = j->w + gi * j->Cg * rows;
    float *yg = j->y + img * j->Mg * g->in_size;
    for (int64_t m = 0; m < j->Mg && !j->tiled; m++) {
      float b = j->bias ? j->bias[gi * j->Mg + m] : 0.0f;
      float *ym = yg + m * g->in_size;
      for (int64_t i = 0; i < g->in_size; i++) ym[i] = b;
    }
    for (int64_t ch = c0; ch < c1; ch++) {
      int64_t o0 = ch * j->chunk, o1 = o0 + j->chunk < outer ? o0 + j->chunk : outer;
      int64_t ncols = (o1 - o0) * XW;
      /* A (W transposed) packed once, or plain */
      ox_gemm(&(ox_gemm_desc){.M = rows,
                              .N = ncols,
                              .K = j->Cg,
                              .A = wg,
                              .lda = rows,
                              .trans_a = true,
                              .pa = j->packed ? j->packed[gi] : NULL,
                              .B = xg + o0 * XW,
                              .ldb = j->Pin,
                              .alpha = 1.0f,
                              .C = col,
                              .ldc = ncols,
                              .pool = j->inner_pool});
      if (j->tiled)
        j->tiles(g, j->Mg, col, ncols, o0, o1, j->bias ? j->bias + gi * j->Mg : NULL, yg);
      else
        ox_nn_col2im_add_rows(g, j->Mg, col, ncols, o0, o1, yg);
    }
  }
  free(col);
}

static int convt_run(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *w = ox_kctx_input(ctx, 1), *b = ox_kctx_input(ctx, 2);
  if (!x || !w) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input X or W");
  if (ox_conv_check_float(ctx, x, "X", 0) || ox_conv_check_float(ctx, w, "W", x->dtype) ||
      (b && ox_conv_check_float(ctx, b, "B", x->dtype)))
    return OX_ERUNTIME;
  if (x->rank < 3 || w->rank != x->rank)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X has rank %zu and W rank %zu (need equal ranks >= 3)",
                        x->rank, w->rank);
  size_t nd = x->rank - 2;
  if (nd > OX_NN_MAXD) return ox_kctx_fail(ctx, OX_ERUNTIME, "too many spatial dimensions");
  int64_t G = s->a.group, C = x->dims[1];
  if (w->dims[0] != C || C % G != 0)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "W's first dimension %lld must equal X's channels %lld "
                        "(a multiple of group %lld)",
                        (long long)w->dims[0], (long long)C, (long long)G);
  int64_t Mg = w->dims[1], M = Mg * G, Cg = C / G;
  const ox_nn_attrs *a = &s->a;
  if ((a->n_kernel && a->n_kernel != nd) || (a->n_strides && a->n_strides != nd) ||
      (a->n_dils && a->n_dils != nd) || (a->n_pads && a->n_pads != 2 * nd) ||
      (s->n_out_padding && s->n_out_padding != nd) ||
      (s->n_out_shape && s->n_out_shape != nd && s->n_out_shape != nd + 2))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "attribute lengths do not match %zu spatial dimensions",
                        nd);
  if (b && b->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B has %lld elements, expected %lld", (long long)b->numel,
                        (long long)M);
  ox_nn_geom g;
  memset(&g, 0, sizeof g);
  g.nd = nd;
  g.in_size = g.out_size = g.k_size = 1;
  int64_t ydims[OX_NN_MAXD + 2];
  ydims[0] = x->dims[0];
  ydims[1] = M;
  for (size_t d = 0; d < nd; d++) {
    int64_t in = x->dims[2 + d];
    g.k[d] = a->n_kernel ? a->kernel[d] : w->dims[2 + d];
    if (g.k[d] != w->dims[2 + d])
      return ox_kctx_fail(ctx, OX_ERUNTIME, "kernel_shape differs from W's shape");
    g.stride[d] = a->n_strides ? a->strides[d] : 1;
    g.dil[d] = a->n_dils ? a->dils[d] : 1;
    int64_t opad = s->n_out_padding ? s->out_padding[d] : 0;
    int64_t kext = (g.k[d] - 1) * g.dil[d] + 1, full = g.stride[d] * (in - 1) + opad + kext, out;
    if (s->n_out_shape || a->auto_pad == OX_PAD_SAME_UPPER || a->auto_pad == OX_PAD_SAME_LOWER) {
      out = s->n_out_shape ? s->out_shape[s->n_out_shape - nd + d] : in * g.stride[d];
      int64_t total = full - out;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor(total / 2) */
      if (a->auto_pad == OX_PAD_SAME_UPPER) {
        g.pb[d] = half;
        g.pe[d] = total - half;
      } else {
        g.pb[d] = total - half;
        g.pe[d] = half;
      }
    } else {
      if (a->auto_pad == OX_PAD_NOTSET && a->n_pads) {
        g.pb[d] = a->pads[d];
        g.pe[d] = a->pads[nd + d];
      }
      out = full - g.pb[d] - g.pe[d];
    }
    if (out < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "negative output size on axis %zu", d);
    g.in[d] = out; /* the col2im image */
    g.out[d] = in; /* the column positions */
    ydims[2 + d] = out;
    g.in_size *= out;
    g.out_size *= in;
    g.k_size *= g.k[d];
  }
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  fstage fs;
  int rc = ox_conv_stage_in(ctx, &fs, x, w, b, y);
  const float *xf = fs.xf, *wf = fs.wf, *bf = fs.bf;
  float *yf = fs.yf;
  if (rc) {
#ifdef __wasm_simd128__
  } else if (ox_convt2_wasm_fits(&g, Cg)) { /* 2 x 2 at stride 2: direct (convt_wasm.h) */
    ox_convt2_wasm(ox_kctx_pool(ctx), &g, x->dims[0], G, Cg, Mg, xf, wf, bf, yf);
#endif
  } else {
    convt_job j = {&g, xf, wf, bf, yf, G, Cg, Mg, g.out_size, NULL, false, 0, 0, NULL, 0};
    if (s->packed && s->packed_w == w && s->n_packed == G) j.packed = s->packed;
    int64_t rows = Mg * g.k_size, XW = g.out[nd - 1], outer = ox_nn_outer(&g);
    j.chunk = 262144 / (rows > 0 ? rows : 1) / (XW > 0 ? XW : 1);
    if (j.chunk > outer) j.chunk = outer;
    if (j.chunk < 1) j.chunk = 1;
    j.n_chunks = (outer + j.chunk - 1) / j.chunk;
    j.tiled = nd == 2;
    for (size_t d = 0; d < nd; d++)
      if (g.k[d] != g.stride[d] || g.dil[d] != 1 || g.pb[d] != 0 || g.pe[d] != 0 ||
          g.in[d] != g.out[d] * g.stride[d])
        j.tiled = false;
    if (j.tiled) j.tiles = OX_LEVEL_PICK(convt_tiles);
    int64_t ntasks = x->dims[0] * G * (j.tiled ? j.n_chunks : 1);
    j.inner_pool = ntasks == 1 ? ox_kctx_pool(ctx) : NULL;
    atomic_init(&j.oom, 0);
    if (ntasks == 1)
      convt_task(&j, 0, 1);
    else if (ntasks > 1)
      ox_parallel_for(ox_kctx_pool(ctx), ntasks, 1, convt_task, &j);
    if (atomic_load(&j.oom)) rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory for columns");
  }
  return ox_conv_stage_out(&fs, rc, y);
}

/* ---------------- Col2Im ---------------- */

static int col2im_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  conv_state *s = ox_conv_state_new(info, e);
  if (!s) return e ? e->code : OX_ENOMEM;
  *state = s;
  return OX_OK;
}

static int col2im_run(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *is = ox_kctx_input(ctx, 1), *bs = ox_kctx_input(ctx, 2);
  if (!x || !is || !bs) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input");
  if (is->dtype != OX_INT64 || bs->dtype != OX_INT64 || is->numel != bs->numel || is->numel < 1 ||
      is->numel > OX_NN_MAXD)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "image_shape and block_shape must be int64 of equal "
                        "length 1..%d",
                        OX_NN_MAXD);
  if (x->rank != 3)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be 3-D [N, C*prod(block), L]");
  size_t nd = (size_t)is->numel;
  const int64_t *img = is->data, *blk = bs->data;
  ox_nn_attrs a = s->a;
  a.n_kernel = 0;
  ox_nn_geom g;
  ox_err e = {0};
  if (ox_nn_geom_make(&a, nd, img, blk, false, &g, &e))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", e.msg);
  if (g.k_size <= 0 || x->dims[1] % g.k_size != 0 || x->dims[2] != g.out_size)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "input shape [%lld, %lld, %lld] does not match %lld "
                        "blocks of %lld elements",
                        (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2],
                        (long long)g.out_size, (long long)g.k_size);
  int64_t C = x->dims[1] / g.k_size, ydims[OX_NN_MAXD + 2];
  ydims[0] = x->dims[0];
  ydims[1] = C;
  for (size_t d = 0; d < nd; d++) ydims[2 + d] = img[d];
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, nd + 2);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  double *xd = malloc((size_t)(x->numel > 0 ? x->numel : 1) * sizeof(double));
  double *yd = calloc((size_t)y->numel, sizeof(double));
  int rc = OX_OK;
  if (!xd || !yd)
    rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  else if (!ox_nn_load_f64(x->data, x->dtype, x->numel, xd))
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "unsupported element type %d", (int)x->dtype);
  else {
    for (int64_t n = 0; n < x->dims[0]; n++)
      ox_nn_col2im_add_f64(&g, C, xd + n * x->dims[1] * x->dims[2], yd + n * C * g.in_size);
    ox_nn_store_f64(yd, y->dtype, y->numel, y->data);
  }
  free(xd);
  free(yd);
  return rc;
}

/* ---------------- DeformConv ---------------- */

/* N-linear sample of one channel plane at fractional position pos; corners
 * outside the input read zero. */
static float deform_sample(const ox_nn_geom *g, const float *xc, const double *pos) {
  size_t nd = g->nd;
  int64_t base[OX_NN_MAXD];
  double frac[OX_NN_MAXD];
  for (size_t d = 0; d < nd; d++) {
    if (pos[d] <= -1.0 || pos[d] >= (double)g->in[d]) return 0.0f;
    double f = floor(pos[d]);
    base[d] = (int64_t)f;
    frac[d] = pos[d] - f;
  }
  double acc = 0.0;
  for (int64_t corner = 0; corner < ((int64_t)1 << nd); corner++) {
    double w = 1.0;
    int64_t lin = 0;
    bool inside = true;
    for (size_t d = 0; d < nd; d++) {
      int64_t bit = (corner >> (nd - 1 - d)) & 1, i = base[d] + bit;
      w *= bit ? frac[d] : 1.0 - frac[d];
      if (i < 0 || i >= g->in[d]) inside = false;
      lin = lin * g->in[d] + i;
    }
    if (inside && w != 0.0) acc += w * (double)xc[lin];
  }
  return (float)acc;
}

static int deform_run(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *w = ox_kctx_input(ctx, 1), *off = ox_kctx_input(ctx, 2);
  ox_value *b = ox_kctx_input(ctx, 3), *mask = ox_kctx_input(ctx, 4);
  if (!off) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input offset");
  ox_nn_geom g;
  int64_t ydims[OX_NN_MAXD + 2];
  if (ox_conv_shapes(ctx, s, x, w, &g, ydims)) return OX_ERUNTIME;
  if (ox_conv_check_float(ctx, x, "X", 0) || ox_conv_check_float(ctx, w, "W", x->dtype) ||
      ox_conv_check_float(ctx, off, "offset", x->dtype) ||
      (b && ox_conv_check_float(ctx, b, "B", x->dtype)) ||
      (mask && ox_conv_check_float(ctx, mask, "mask", x->dtype)))
    return OX_ERUNTIME;
  int64_t N = x->dims[0], C = x->dims[1], G = s->a.group, Cg = w->dims[1], M = w->dims[0];
  int64_t Mg = M / G, ks = g.k_size, P = g.out_size, nd = (int64_t)g.nd;
  int64_t OG = ox_node_attr_int(ox_kctx_node(ctx), "offset_group", 1);
  if (OG <= 0 || C % OG != 0)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "offset_group %lld does not divide %lld channels",
                        (long long)OG, (long long)C);
  if (off->numel != N * OG * ks * nd * P || (mask && mask->numel != N * OG * ks * P))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "offset or mask has the wrong number of elements");
  if (b && b->numel != M)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B must have %lld elements", (long long)M);
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  fstage fs;
  int rc = ox_conv_stage_in(ctx, &fs, x, w, b, y);
  float *oo = NULL, *mo = NULL;
  const float *of = rc ? NULL : ox_nn_as_f32(off->data, off->dtype, off->numel, &oo);
  const float *mf = rc || !mask ? NULL : ox_nn_as_f32(mask->data, mask->dtype, mask->numel, &mo);
  float *col = rc ? NULL : malloc((size_t)(Cg * ks * P) * sizeof(float));
  if (!rc && (!of || (mask && !mf) || !col)) rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  int64_t cpo = C / OG; /* channels per offset group */
  for (int64_t n = 0; !rc && n < N; n++)
    for (int64_t gi = 0; gi < G; gi++) {
      for (int64_t cl = 0; cl < Cg; cl++) {
        int64_t c = gi * Cg + cl, og = c / cpo;
        const float *xc = fs.xf + (n * C + c) * g.in_size;
        for (int64_t kidx = 0; kidx < ks; kidx++) {
          int64_t kk[OX_NN_MAXD], r = kidx;
          for (int64_t d = nd; d-- > 0;) {
            kk[d] = r % g.k[d];
            r /= g.k[d];
          }
          float *row = col + (cl * ks + kidx) * P;
          const float *offk = of + ((n * OG + og) * ks + kidx) * nd * P;
          const float *mk = mf ? mf + ((n * OG + og) * ks + kidx) * P : NULL;
          int64_t oi[OX_NN_MAXD] = {0};
          for (int64_t p = 0; p < P; p++) {
            double pos[OX_NN_MAXD];
            for (int64_t d = 0; d < nd; d++)
              pos[d] = (double)(oi[d] * g.stride[d] - g.pb[d] + kk[d] * g.dil[d]) +
                       (double)offk[d * P + p];
            float v = deform_sample(&g, xc, pos);
            row[p] = mk ? v * mk[p] : v;
            for (int64_t d = nd; d-- > 0;) {
              if (++oi[d] < g.out[d]) break;
              oi[d] = 0;
            }
          }
        }
      }
      float *yg = fs.yf + (n * M + gi * Mg) * P;
      for (int64_t m = 0; m < Mg; m++)
        for (int64_t p = 0; p < P; p++) yg[m * P + p] = fs.bf ? fs.bf[gi * Mg + m] : 0.0f;
      ox_gemm(&(ox_gemm_desc){.M = Mg,
                              .N = P,
                              .K = Cg * ks,
                              .A = fs.wf + gi * Mg * Cg * ks,
                              .lda = Cg * ks,
                              .B = col,
                              .ldb = P,
                              .alpha = 1.0f,
                              .beta = 1.0f,
                              .C = yg,
                              .ldc = P,
                              .pool = ox_kctx_pool(ctx)});
    }
  free(oo);
  free(mo);
  free(col);
  return ox_conv_stage_out(&fs, rc, y);
}

const ox_kernel_def ox_ops_conv_transpose[] = {
    {"", "ConvTranspose", 1, 1000, convt_prepare, convt_run, ox_conv_release},
    {"", "DeformConv", 19, 1000, col2im_prepare, deform_run, ox_conv_release},
    {"", "Col2Im", 18, 1000, col2im_prepare, col2im_run, ox_conv_release},
    {0},
};
