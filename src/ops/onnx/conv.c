/* conv.c - Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv, Col2Im.
 *
 * Floating-point convolutions compute in float32 (bfloat16, float16 and
 * double are staged through float32 buffers; the integer convolutions are in
 * conv_int.c). Conv works on chunks of output
 * rows (about 1 MiB of columns, in parallel): im2col writes the GEMM's packed
 * B panels directly (1x1 unpadded kernels copy input rows), and the weights
 * are either packed once in prepare (constant W) or, with AVX-512, read in
 * place by the micro-kernel (W computed at run time); 2-D depthwise
 * convolutions are direct (conv_dw.c). ConvTranspose is GEMM (W^T X) + col2im. The
 * integer convolutions use the same im2col on zero-point-shifted values with
 * exact integer accumulation. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/fma_wasm.h"
#include "../../kernels/gemm.h"
#include "../../kernels/levels.h"
#include "../../kernels/nn.h"
#include "../../kernels/split.h"
#include "../../kernels/vmath.h"
#include "../../runtime/kernel.h"
#include "../fused.h"
#include "../nn_attrs.h"
#include "../nn_stage.h"
#include "conv_common.h"

int ox_conv_prep_err(const ox_kinfo *info, ox_err *e) {
  return ox_err_prefix(e, "node '%s' (%s)", info->node->name ? info->node->name : "",
                       info->node->op_type ? info->node->op_type : "");
}

void ox_conv_release(void *st) {
  conv_state *s = st;
  if (!s) return;
  for (int64_t i = 0; i < s->n_packed; i++) ox_sgemm_packed_free(s->packed[i]);
  free(s->packed);
  for (int64_t i = 0; i < s->n_qw; i++) ox_qconv_free_w(&s->qw[i]);
  free(s->qw);
  free(s->pre_scale);
  free(s->pre_bias);
  ox_wino_free(atomic_load(&s->wino));
  pthread_mutex_destroy(&s->wino_mu);
  free(s);
}

conv_state *ox_conv_state_new(const ox_kinfo *info, ox_err *e) {
  conv_state *s = calloc(1, sizeof *s);
  if (!s) {
    ox_err_set(e, OX_ENOMEM, "out of memory");
    ox_conv_prep_err(info, e);
    return NULL;
  }
  if (ox_nn_attrs_read(info->node, &s->a, e)) {
    ox_conv_prep_err(info, e);
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->wino_mu, NULL);
  return s;
}

/* Packs constant weights per group: Conv's W (M x C/group x k...) as M/group
 * rows of C/group * k values; ConvTranspose's (C x M/group x k...)
 * transposed, as M/group * k rows of C/group values. */
int ox_conv_pack_groups(const ox_kinfo *info, conv_state *s, const ox_value *w, bool transposed,
                        ox_err *e) {
  int64_t G = s->a.group, per = w->dims[0] / G, inner = w->numel / w->dims[0];
  s->packed = calloc((size_t)G, sizeof *s->packed);
  if (!s->packed) return ox_err_set(e, OX_ENOMEM, "out of memory"), ox_conv_prep_err(info, e);
  s->n_packed = G;
  for (int64_t g = 0; g < G; g++) {
    const float *wg = (const float *)w->data + g * per * inner;
    s->packed[g] = transposed ? ox_sgemm_pack_a(true, inner, per, wg, inner, e)
                              : ox_sgemm_pack_a(false, per, inner, wg, inner, e);
    if (!s->packed[g]) return ox_conv_prep_err(info, e);
  }
  s->packed_w = w;
  return OX_OK;
}

static int conv_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  conv_state *s = ox_conv_state_new(info, e);
  if (!s) return e ? e->code : OX_ENOMEM;
  *state = s;
  const ox_value *w = info->const_inputs && info->n_inputs > 1 ? info->const_inputs[1] : NULL;
  if (w && w->kind == OX_VAL_TENSOR && w->dtype == OX_FLOAT && w->rank >= 3 &&
      w->dims[0] % s->a.group == 0 && w->dims[0] > 0 && w->numel > 0)
    return ox_conv_pack_groups(info, s, w, false, e);
  return OX_OK;
}

/* ---------------- float Conv ---------------- */

/* images of at most this many output positions split their output
 * channels over the threads (conv_run_epi) */
enum { CONV_SMALL_IMAGE = 100 };
/* the largest input (columns' worth) that every part of a channel split
 * reads again when rows do not share evenly: about half of L2 */
enum { CONV_SPLIT_INPUT_BYTES = 512 * 1024 };
/* weights large enough that a small stride-2 image splits its output
 * channels rather than its rows (each thread then reads its share of W;
 * Inception v2's 885 KB 3x3 stride-2 layer at 7x7 ran slower on two
 * threads than on one, split by rows, inside the model) */
enum { CONV_HEAVY_W_BYTES = 256 * 1024 };
/* the most gathered columns shared by the parts of the output channels at
 * many threads (all the chunks of a layer at once) */
enum { CONV_SHARED_COL_BYTES = 8 << 20 };
/* the packed columns of one chunk of a 1-D signal: about half of L2 */
enum { CONV_1D_COL_BYTES = 512 * 1024 };

typedef struct conv_job {
  const ox_nn_geom *g;
  const float *x, *w, *bias;
  float *y;
  int64_t N, G, Cg, Mg, Kg, P;
  int64_t outer, chunk_rows, n_chunks;
  int64_t m_parts, m_chunk; /* output channels split in parts of m_chunk rows (small images) */
  int64_t cols_1d;          /* 1-D: the chunks are this many output positions of the row */
  bool pointwise;           /* 1x1, stride 1, no pad: B = x */
  bool ua;                  /* W used in place by the GEMM (not constant, AVX-512) */
  ox_sgemm_packed *const *packed;
  ox_thread_pool *inner_pool; /* for the GEMM when there is a single task */
  ox_sgemm_strip_fn strip;    /* implicit GEMM (packed W, shifted-plane geometry) */
  const ox_sgemm_epi *epi;    /* FusedConv epilogue (residual laid out like y), or NULL */
  const ox_sgemm_pro *pro;    /* FusedConv prologue, read with x (1x1 only), or NULL */
  /* many threads, output channels in parts over gathered columns: every
   * chunk's columns (Kg x its columns, chunk after chunk of each image and
   * group) gathered once by conv_gather_task, in parts of sc_c channels */
  float *shared_cols;
  int64_t sc_c, sc_cparts;
  atomic_int oom;
} conv_job;

/* split.h's cost of a task of `panels` 12-row panels of output channels
 * by `rows` output rows, in multiply-adds: the product (small blocks pay
 * their edges), reading or building its columns of B (`strip` per value:
 * 2 for X read in place — from other cores' caches, at many threads —, 3
 * with a prologue applied as it is copied, 4 for shifted copies, 8 for
 * gathered columns), reading its rows of W (2 per value), and a hand-off.
 * The reads keep the tasks square-ish: channel parts alone made every
 * DenseNet 1 x 1 task read all of a 0.8 MB X, rows alone all of W. */
typedef struct conv_cost_ctx {
  int64_t Mg, Kg, OW;
  double strip;
} conv_cost_ctx;

static double conv_task_cost(const void *ctx, int64_t panels, int64_t rows) {
  const conv_cost_ctx *c = ctx;
  double m = (double)(panels * 12 < c->Mg ? panels * 12 : c->Mg), cols = (double)(rows * c->OW);
  return m * (double)c->Kg * cols * (1.0 + 16.0 / cols) * (1.0 + 4.0 / m) +
         c->strip * (double)c->Kg * cols + 2.0 * (double)c->Kg * m + 5e4;
}

/* Output channels in parts of whole 12-row panels for `outer` (images x
 * groups) tasks each, 2 to `most` parts: the part size whose busiest
 * thread (tasks taken as threads free up) has the fewest rows, a part
 * costing 2 rows more for its hand-off and its pass over X; fewer parts
 * only for 3% less. Parts of ceil(panels / want) panels had left threads
 * uneven: SqueezeNet's 64 channels as 24 + 24 + 16 on two threads (48
 * rows on one), 256 as 7 x 36 + 4 (144 against 112). */
static int64_t conv_m_chunk(int64_t Mg, int64_t outer, int64_t most, int nt) {
  int64_t panels = (Mg + 11) / 12, best = 0;
  double best_span = 0;
  if (most > panels) most = panels;
  for (int64_t want = most; want >= 2; want--) {
    int64_t chunk = (panels + want - 1) / want * 12, parts = (Mg + chunk - 1) / chunk;
    double load[64] = {0}, span = 0;
    int th = nt < 64 ? nt : 64;
    for (int64_t t = 0; t < outer * parts; t++) {
      int64_t p = t % parts, rows = p + 1 < parts ? chunk : Mg - p * chunk;
      int k = 0;
      for (int i = 1; i < th; i++)
        if (load[i] < load[k]) k = i;
      load[k] += (double)rows + 2.0;
      if (load[k] > span) span = load[k];
    }
    if (!best || span * 100 < best_span * 97) best = chunk, best_span = span;
  }
  return best ? best : (panels + 1) / 2 * 12;
}

/* Column buffers of a task: packed panels (+ one padded row) when direct,
 * else a plain im2col matrix, in the thread's scratch slots 2 and 3 (the
 * GEMM called on them takes 0 and 1; buffers allocated per call were
 * faulted in anew on every run). false (OOM flagged) on failure. */
static bool alloc_cols(conv_job *j, bool direct, float **col, float **rowbuf) {
  int64_t maxcols = j->cols_1d ? j->cols_1d : j->chunk_rows * j->g->out[j->g->nd - 1];
  size_t n = direct ? ox_sgemm_packed_b_floats(j->Kg, maxcols) : (size_t)(j->Kg * maxcols);
  *col = ox_scratch(2, n * sizeof(float));
  *rowbuf = direct ? ox_scratch(3, (size_t)(maxcols + ox_sgemm_nr()) * sizeof(float)) : NULL;
  if (!*col || (direct && !*rowbuf)) {
    *col = *rowbuf = NULL;
    atomic_store(&j->oom, 1);
    return false;
  }
  return true;
}

/* Y (+)= W B for group gi, B the packed columns col (ncols of them), W
 * packed or read in place (j->ua) */
static void gemm_panels(const conv_job *j, int64_t gi, const float *col, int64_t ncols, float beta,
                        float *yc) {
  ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_PANELS,
                          .M = j->Mg,
                          .N = ncols,
                          .K = j->Kg,
                          .A = j->w + gi * j->Mg * j->Kg,
                          .lda = j->Kg,
                          .pa = j->ua ? NULL : j->packed[gi],
                          .B = col,
                          .beta = beta,
                          .C = yc,
                          .ldc = j->P});
}

/* Output positions chunk ch (of cols_1d) of a 1-D convolution, image n,
 * group gi: the columns packed as the GEMM's panels (a chunk of them stays
 * in cache while every row of W passes over it), then the GEMM of packed
 * (or in-place) W, bias first in Y. */
static void conv_chunk_1d(const conv_job *j, int64_t n, int64_t gi, int64_t ch, float *col) {
  int64_t OL = j->g->out[0], c0 = ch * j->cols_1d, c1 = c0 + j->cols_1d < OL ? c0 + j->cols_1d : OL;
  int64_t ncols = c1 - c0;
  const float *xg = j->x + (n * j->G + gi) * j->Cg * j->g->in_size;
  float *yc = j->y + (n * j->G + gi) * j->Mg * j->P + c0;
  const float *bias = j->bias ? j->bias + gi * j->Mg : NULL;
  if (bias)
    for (int64_t m = 0; m < j->Mg; m++)
      for (int64_t c = 0; c < ncols; c++) yc[m * j->P + c] = bias[m];
  ox_nn_im2col_packed_1d(j->g, j->Cg, xg, c0, c1, col, ox_sgemm_nr(), ox_sgemm_kc());
  gemm_panels(j, gi, col, ncols, bias ? 1.0f : 0.0f, yc);
  if (j->epi) {
    ox_sgemm_epi ep = ox_sgemm_epi_at(j->epi, 0, yc - j->y);
    ep.ldr = j->P;                                   /* the residual's rows are Y's */
    ox_sgemm_epi_apply(&ep, j->Mg, ncols, yc, j->P); /* the chunk is still in cache */
  }
}

static void conv_task(void *arg, int64_t t0, int64_t t1) {
  conv_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OW = g->out[g->nd - 1];
  /* with packed weights the columns go straight into GEMM panels */
  bool direct = j->ua || (j->packed && !j->pointwise);
  int nr = ox_sgemm_nr();
  float *col = NULL, *rowbuf = NULL;
  /* the implicit GEMM needs no columns */
  bool implicit = j->strip && !j->pointwise && ox_sgemm_has_ua();
  if ((direct || !j->pointwise) && !implicit && !j->shared_cols &&
      !alloc_cols(j, direct, &col, &rowbuf))
    return;
  for (int64_t t = t0; t < t1; t++) {
    int64_t mp = t % j->m_parts, ct = t / j->m_parts;
    int64_t ch = ct % j->n_chunks, ng = ct / j->n_chunks, gi = ng % j->G, n = ng / j->G;
    if (j->cols_1d) {
      conv_chunk_1d(j, n, gi, ch, col);
      continue;
    }
    int64_t m0 = mp * j->m_chunk, m1 = m0 + j->m_chunk < j->Mg ? m0 + j->m_chunk : j->Mg;
    int64_t o0 = ch * j->chunk_rows,
            o1 = o0 + j->chunk_rows < j->outer ? o0 + j->chunk_rows : j->outer;
    if (o0 >= o1) continue;
    int64_t ncols = (o1 - o0) * OW;
    const float *xg = j->x + (n * j->G + gi) * j->Cg * g->in_size;
    float *yc = j->y + (n * j->G + gi) * j->Mg * j->P + o0 * OW;
    const float *bias = j->bias ? j->bias + gi * j->Mg : NULL;
    /* the epilogue of this block: residual at the same offset as yc */
    ox_sgemm_epi ep = {0}, *epp = NULL;
    if (j->epi) {
      ep = ox_sgemm_epi_at(j->epi, 0, yc - j->y);
      ep.ldr = j->P; /* the residual's rows are Y's */
      epp = &ep;
    }
    if (j->m_parts > 1) { /* a part of the output channels (conv_run_epi checked the paths) */
      ox_nn_shift sc = {g, xg, o0};
      ox_gemm_b kind = j->pointwise ? OX_GEMM_B_INPLACE : OX_GEMM_B_STRIPS;
      const float *B = xg + o0 * OW;
      int64_t ldb = j->P;
      if (j->shared_cols) { /* gathered before the tasks (conv_gather_task) */
        kind = OX_GEMM_B_INPLACE;
        B = j->shared_cols + (ng * j->n_chunks + ch) * j->Kg * j->chunk_rows * OW;
        ldb = ncols;
      } else if (!j->pointwise && !j->strip) {
        /* no strips for this geometry (a ViT's 16 x 16 stride-16 patches):
         * the part gathers its rows' columns, read in place */
        if (!col) return; /* (allocated above: no strips, so not implicit) */
        ox_nn_im2col(g, j->Cg, xg, o0, o1, col, ncols, 0.0f);
        kind = OX_GEMM_B_INPLACE;
        B = col;
        ldb = ncols;
      }
      bool done = ox_gemm(&(ox_gemm_desc){.b = kind,
                                          .pa = j->packed[gi],
                                          .rows = true,
                                          .m0 = m0,
                                          .m1 = m1,
                                          .N = ncols,
                                          .B = B,
                                          .ldb = ldb,
                                          .strip = kind == OX_GEMM_B_STRIPS ? j->strip : NULL,
                                          .strip_ctx = &sc,
                                          .bias = bias,
                                          .ep = epp,
                                          .pro = j->pro,
                                          .C = yc,
                                          .ldc = j->P});
      if (!done) atomic_store(&j->oom, 2);
      continue;
    }
    if (j->strip && !j->pointwise) { /* bias and epilogue applied by the GEMM's stores */
      ox_nn_shift sc = {g, xg, o0};
      if (ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_STRIPS,
                                  .pa = j->packed[gi],
                                  .N = ncols,
                                  .strip = j->strip,
                                  .strip_ctx = &sc,
                                  .bias = bias,
                                  .ep = epp,
                                  .C = yc,
                                  .ldc = j->P}))
        continue;
      if (!col && !alloc_cols(j, direct, &col, &rowbuf)) return;
    }
    if (j->packed && j->pointwise && !j->inner_pool) {
      if (!ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_INPLACE,
                                   .pa = j->packed[gi],
                                   .rows = true,
                                   .m0 = 0,
                                   .m1 = j->Mg,
                                   .N = ncols,
                                   .B = xg + o0 * OW,
                                   .ldb = j->P,
                                   .bias = bias,
                                   .ep = epp,
                                   .pro = j->pro,
                                   .C = yc,
                                   .ldc = j->P}))
        atomic_store(&j->oom, 2); /* a prologue off the x86 tiles: conv_run_epi checked */
      continue;
    }
    float beta = 0.0f;
    if (bias) {
      for (int64_t m = 0; m < j->Mg; m++) {
        float *row = yc + m * j->P;
        for (int64_t c = 0; c < ncols; c++) row[c] = bias[m];
      }
      beta = 1.0f;
    }
    if (direct) {
      ox_nn_im2col_packed(g, j->Cg, xg, o0, o1, col, nr, ox_sgemm_kc(), rowbuf);
      /* A read in place (j->ua) or packed */
      gemm_panels(j, gi, col, ncols, beta, yc);
      ox_sgemm_epi_apply(epp, j->Mg, ncols, yc, j->P); /* the block is still in cache */
      continue;
    }
    const float *B;
    int64_t ldb;
    if (j->pointwise) {
      B = xg + o0 * OW;
      ldb = j->P;
    } else {
      ox_nn_im2col(g, j->Cg, xg, o0, o1, col, ncols, 0.0f);
      B = col;
      ldb = ncols;
    }
    /* A packed once, or plain */
    ox_gemm(&(ox_gemm_desc){.M = j->Mg,
                            .N = ncols,
                            .K = j->Kg,
                            .A = j->w + gi * j->Mg * j->Kg,
                            .lda = j->Kg,
                            .pa = j->packed ? j->packed[gi] : NULL,
                            .B = B,
                            .ldb = ldb,
                            .alpha = 1.0f,
                            .beta = beta,
                            .C = yc,
                            .ldc = j->P,
                            .pool = j->inner_pool});
    ox_sgemm_epi_apply(epp, j->Mg, ncols, yc, j->P);
  }
}

/* Shared checks of X and W; fills the geometry and output dims. */
int ox_conv_shapes(ox_kctx *ctx, const conv_state *s, const ox_value *x, const ox_value *w,
                   ox_nn_geom *g, int64_t *ydims) {
  if (!x || !w) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input X or W");
  if (x->rank < 3 || w->rank != x->rank)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X has rank %zu and W rank %zu (need equal ranks >= 3)",
                        x->rank, w->rank);
  int64_t G = s->a.group;
  if (x->dims[1] != w->dims[1] * G)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "X has %lld channels but W expects %lld per group x %lld groups",
                        (long long)x->dims[1], (long long)w->dims[1], (long long)G);
  if (w->dims[0] % G != 0)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "W has %lld feature maps, not a multiple of group %lld",
                        (long long)w->dims[0], (long long)G);
  ox_err e = {0};
  if (ox_nn_geom_make(&s->a, x->rank - 2, x->dims + 2, w->dims + 2, false, g, &e))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", e.msg);
  ydims[0] = x->dims[0];
  ydims[1] = w->dims[0];
  for (size_t d = 0; d < g->nd; d++) ydims[2 + d] = g->out[d];
  return OX_OK;
}

int ox_conv_check_float(ox_kctx *ctx, const ox_value *v, const char *what, int32_t want) {
  if (v->kind != OX_VAL_TENSOR || !ox_nn_is_float_type(v->dtype) || (want && v->dtype != want))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s has an unsupported element type %d", what,
                        (int)v->dtype);
  return OX_OK;
}

/* float32 views of X, W, B and the output (copies for the non-float types). */
int ox_conv_stage_in(ox_kctx *ctx, fstage *st, const ox_value *x, const ox_value *w,
                     const ox_value *b, ox_value *y) {
  memset(st, 0, sizeof *st);
  st->xf = ox_nn_as_f32(x->data, x->dtype, x->numel, &st->own[0]);
  st->wf = ox_nn_as_f32(w->data, w->dtype, w->numel, &st->own[1]);
  st->bf = b ? ox_nn_as_f32(b->data, b->dtype, b->numel, &st->own[2]) : NULL;
  st->yf = x->dtype == OX_FLOAT ? y->data : (st->own[3] = malloc((size_t)y->numel * sizeof(float)));
  if (!st->xf || !st->wf || (b && !st->bf) || !st->yf)
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory staging float32 buffers");
  return OX_OK;
}

int ox_conv_stage_out(fstage *st, int rc, ox_value *y) {
  if (rc == OX_OK && st->own[3]) ox_nn_store_f32(st->own[3], y->dtype, y->numel, y->data);
  for (int i = 0; i < 4; i++) free(st->own[i]);
  return rc;
}

/* Few output positions per image (1-D convolutions over short signals such
 * as STFT front ends, the last steps of strided encoders): a 12 x 32 GEMM
 * tile would be mostly padding. Instead, per image and group, the im2col
 * columns are laid out as rows (P x Kg) and every output is the dot product
 * of one of them with a row of W (16 partial sums, vectorised), W streamed
 * once (kernels/conv_direct.h's few_task); the bias and the epilogue
 * follow. */
/* Rows of W per task of conv_few_positions: the product in parts of at
 * least 32K multiply-adds (a part of a few microseconds, against a
 * hand-off of about one), all rows in one part when there is not work for
 * two. Parts of 32K / (P Kg) rows had split Silero's 64 x 768 layer (49K)
 * as 43 + 21 rows, the hand-off costing what the second thread saved. */
static int64_t few_grain(int64_t rows, int64_t per_row) {
  int64_t parts = rows * per_row / 32768;
  return parts <= 1 ? rows : (rows + parts - 1) / parts;
}

static int conv_few_positions(ox_kctx *ctx, const ox_nn_geom *g, const float *xf, const float *wf,
                              const float *bf, float *yf, int64_t N, int64_t G, int64_t Cg,
                              int64_t Mg, const ox_sgemm_epi *epi) {
  int64_t P = g->out_size, Kg = Cg * g->k_size;
  float *col = malloc((size_t)(2 * Kg * P) * sizeof(float));
  if (!col) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory for im2col columns");
  float *colt = col + Kg * P;
  const ox_conv_direct_kernels *dk = ox_conv_direct_kernels_get();
  for (int64_t n = 0; n < N; n++)
    for (int64_t gi = 0; gi < G; gi++) {
      const float *xg = xf + (n * G + gi) * Cg * g->in_size;
      if (g->nd == 1) { /* each column is a run of the signal: copy it */
        int64_t L = g->in[0], kk = g->k[0], st = g->stride[0], dl = g->dil[0], pb = g->pb[0];
        for (int64_t p = 0; p < P; p++)
          for (int64_t c = 0; c < Cg; c++) {
            const float *xc = xg + c * L;
            float *dst = colt + p * Kg + c * kk;
            int64_t base = p * st - pb;
            for (int64_t t = 0; t < kk; t++) {
              int64_t at = base + t * dl;
              dst[t] = at >= 0 && at < L ? xc[at] : 0.0f;
            }
          }
      } else {
        ox_nn_im2col(g, Cg, xg, 0, ox_nn_outer(g), col, P, 0.0f);
        for (int64_t k = 0; k < Kg; k++)
          for (int64_t p = 0; p < P; p++) colt[p * Kg + k] = col[k * P + p];
      }
      float *yb = yf + (n * G + gi) * Mg * P;
      ox_few_job fj = {colt, wf + gi * Mg * Kg, bf ? bf + gi * Mg : NULL, yb, P, Kg};
      ox_parallel_for(ox_kctx_pool(ctx), Mg, few_grain(Mg, P * Kg), dk->few_task, &fj);
      if (epi) {
        ox_sgemm_epi ep = ox_sgemm_epi_at(epi, 0, yb - yf);
        ox_sgemm_epi_apply(&ep, Mg, P, yb, P);
      }
    }
  free(col);
  return OX_OK;
}

/* Conv; FusedConv adds the epilogue epi (NULL: none; its residual has Y's
 * shape). tmp NULL: Y is output 0; else Y is a new tensor returned in *tmp
 * (the caller's reference, also on failure). */
/* The prologue applied to all of x (N images of C planes of P values) into
 * out: the path for geometries whose GEMM does not read X in strips. */
OX_LEVEL_BODY void pro_apply_c(const ox_sgemm_pro *pro, int64_t N, int64_t C, int64_t P,
                               const float *x, float *out) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const float *xc = x + (n * C + c) * P;
      float *oc = out + (n * C + c) * P;
      float a = pro->scale[c], b = pro->bias[c];
      if (pro->relu)
        for (int64_t i = 0; i < P; i++) {
          float v = fmaf(xc[i], a, b);
          oc[i] = v > 0.0f ? v : 0.0f;
        }
      else
        for (int64_t i = 0; i < P; i++) oc[i] = fmaf(xc[i], a, b);
    }
}
OX_LEVELS_VOID(pro_apply,
               (const ox_sgemm_pro *pro, int64_t N, int64_t C, int64_t P, const float *x,
                float *out),
               pro, N, C, P, x, out)
#ifdef __wasm_simd128__
/* SIMD128 builds: fmaf's bits four lanes at a time (libm's fmaf is software
 * there: a PP-OCRv4 detector spent 7% of its run in it) */
static void pro_apply_wasm(const ox_sgemm_pro *pro, int64_t N, int64_t C, int64_t P, const float *x,
                           float *out) {
  for (int64_t q = 0; q < N * C; q++)
    ox_fma_affine_wasm(x + q * P, pro->scale[q % C], pro->bias[q % C], pro->relu, out + q * P, P);
}
#endif

/* pro_apply over planes [b, e) of a job, for the thread pool: a DenseNet's
 * pre-activation prologue over its concatenated input was the serial part
 * of its 1 x 1 layers (13 ms on one thread, 9.9 on sixteen). */
typedef struct pro_job {
  const ox_sgemm_pro *pro;
  int64_t C, P;
  const float *x;
  float *out;
  void (*fn)(const ox_sgemm_pro *, int64_t, int64_t, int64_t, const float *, float *);
} pro_job;

static void pro_planes(void *arg, int64_t b, int64_t e) {
  const pro_job *j = arg;
  for (int64_t q = b; q < e; q++) {
    int64_t c = q % j->C;
    ox_sgemm_pro one = {j->pro->scale + c, j->pro->bias + c, j->pro->relu};
    j->fn(&one, 1, 1, j->P, j->x + q * j->P, j->out + q * j->P);
  }
}

/* The Winograd kernels of the constant W (M x C x 3 x 3), made by the first
 * run that asks (sessions run from several threads: under the state's
 * lock); NULL when they could not be made. */
static const ox_wino *conv_wino(conv_state *s, const float *w, int64_t M, int64_t C) {
  ox_wino *wp = atomic_load_explicit(&s->wino, memory_order_acquire);
  if (wp || atomic_load(&s->wino_failed)) return wp;
  pthread_mutex_lock(&s->wino_mu);
  wp = atomic_load(&s->wino);
  if (!wp && !atomic_load(&s->wino_failed)) {
    ox_err e = {0};
    if ((wp = ox_wino_pack(M, C, w, &e)))
      atomic_store_explicit(&s->wino, wp, memory_order_release);
    else
      atomic_store(&s->wino_failed, true); /* the GEMM path instead */
  }
  pthread_mutex_unlock(&s->wino_mu);
  return wp;
}

/* The columns of chunk ct (image and group ct / n_chunks) for input
 * channels [c0, c1), into the shared buffer as conv_task reads them. */
static void conv_gather_task(void *arg, int64_t t0, int64_t t1) {
  conv_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t OW = g->out[g->nd - 1];
  for (int64_t t = t0; t < t1; t++) {
    int64_t cp = t % j->sc_cparts, ct = t / j->sc_cparts;
    int64_t ch = ct % j->n_chunks, ng = ct / j->n_chunks;
    int64_t o0 = ch * j->chunk_rows,
            o1 = o0 + j->chunk_rows < j->outer ? o0 + j->chunk_rows : j->outer;
    int64_t c0 = cp * j->sc_c, c1 = c0 + j->sc_c < j->Cg ? c0 + j->sc_c : j->Cg;
    if (o0 >= o1 || c0 >= c1) continue;
    int64_t ncols = (o1 - o0) * OW;
    float *col = j->shared_cols + ct * j->Kg * j->chunk_rows * OW + c0 * g->k_size * ncols;
    ox_nn_im2col(g, c1 - c0, j->x + (ng * j->Cg + c0) * g->in_size, o0, o1, col, ncols, 0.0f);
  }
}

/* X (given, or input 0), W, B -> Y (output 0, or *tmp when tmp is given) */
/* A 1-D depthwise convolution as a 2-D one of height 1 (the same sums), for
 * the direct depthwise kernels (else a GEMM of one row per group). */
static void geom_height_1(ox_nn_geom *g) {
  g->nd = 2;
  g->in[1] = g->in[0], g->out[1] = g->out[0], g->k[1] = g->k[0];
  g->stride[1] = g->stride[0], g->dil[1] = g->dil[0], g->pb[1] = g->pb[0], g->pe[1] = g->pe[0];
  g->in[0] = g->out[0] = g->k[0] = g->stride[0] = g->dil[0] = 1;
  g->pb[0] = g->pe[0] = 0;
}

static int conv_run_epi(ox_kctx *ctx, conv_state *s, const ox_sgemm_epi *epi, ox_value **tmp,
                        const ox_value *xin, const ox_sgemm_pro *gate) {
  const ox_value *x = xin ? xin : ox_kctx_input(ctx, 0);
  ox_value *w = ox_kctx_input(ctx, 1), *b = ox_kctx_input(ctx, 2);
  ox_nn_geom g;
  int64_t ydims[OX_NN_MAXD + 2];
  if (ox_conv_shapes(ctx, s, x, w, &g, ydims)) return OX_ERUNTIME;
  if (ox_conv_check_float(ctx, x, "X", 0) || ox_conv_check_float(ctx, w, "W", x->dtype) ||
      (b && ox_conv_check_float(ctx, b, "B", x->dtype)))
    return OX_ERUNTIME;
  if (b && b->numel != w->dims[0])
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B has %lld elements, expected %lld", (long long)b->numel,
                        (long long)w->dims[0]);
  ox_value *y;
  if (tmp) {
    ox_err te = {0};
    if (!(y = *tmp = ox_tensor_new_uninit(x->dtype, ydims, x->rank, &te)))
      return ox_kctx_fail(ctx, te.code, "%s", te.msg);
  } else if (!(y = ox_kctx_output(ctx, 0, x->dtype, ydims, x->rank))) {
    return OX_ERUNTIME;
  }
  if (y->numel == 0) return OX_OK;
  float *xpro = NULL; /* X with the prologue applied, when not read in strips */
  fstage fs;
  int rc = ox_conv_stage_in(ctx, &fs, x, w, b, y);
  const float *xf = fs.xf, *wf = fs.wf, *bf = fs.bf;
  float *yf = fs.yf;
  if (rc) {
    goto done;
  }
  int64_t N = x->dims[0], G = s->a.group, Cg = w->dims[1], Mg = w->dims[0] / G;
  ox_thread_pool *pool = ox_kctx_pool(ctx);
  int nt = ox_thread_pool_size(pool);
  /* a prologue: read with X by the 1 x 1 GEMM's strips, else applied first */
  /* (a gate: a prologue of X's channels made for this run) */
  ox_sgemm_pro pro = gate ? *gate : (ox_sgemm_pro){s->pre_scale, s->pre_bias, s->pre_relu};
  int64_t n_pre = gate ? x->dims[1] : s->n_pre;
  bool pro_strips = false;
  if (n_pre) {
    if (x->dims[1] != n_pre) {
      rc = ox_kctx_fail(ctx, OX_ERUNTIME, "X has %lld channels, the prologue %lld",
                        (long long)x->dims[1], (long long)n_pre);
      goto done;
    }
    bool pw = g.k_size == 1 && G == 1 && g.out_size > 8 && ox_sgemm_has_ua() && s->packed &&
              s->packed_w == w && s->n_packed == 1;
    for (size_t d = 0; d < g.nd; d++)
      if (g.stride[d] != 1 || g.pb[d] != 0 || g.pe[d] != 0) pw = false;
    pro_strips = pw;
    if (!pw) {
      int64_t P = x->numel / (N * x->dims[1] > 0 ? N * x->dims[1] : 1);
      if (!(xpro = malloc((size_t)x->numel * sizeof *xpro))) {
        rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory (convolution prologue)");
        goto done;
      }
      pro_job pj = {&pro, x->dims[1], P, xf, xpro, OX_LEVEL_PICK(pro_apply)};
#ifdef __wasm_simd128__
      if (ox_cpu_get()->simd128) pj.fn = pro_apply_wasm;
#endif
      ox_parallel_for(pool, N * x->dims[1], 1 + 32768 / (P + 1), pro_planes, &pj);
      xf = xpro;
    }
  }
  if (g.nd == 1 && Cg == 1 && G > 1) geom_height_1(&g);
  if (g.nd == 2 && Cg == 1 && G > 1 && (!s->shuffle || G % s->shuffle == 0)) {
    ox_conv_depthwise(pool, &g, N, G, Mg, xf, wf, bf, epi, s->shuffle, yf);
    goto done;
  }
  if (s->shuffle) { /* channel_shuffle.c matches depthwise layers only */
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "in_shuffle needs a 2-D depthwise layer of %lld groups",
                      (long long)s->shuffle);
    goto done;
  }
  if (g.out_size <= 8 && Cg * g.k_size >= 32) {
    rc = conv_few_positions(ctx, &g, xf, wf, bf, yf, N, G, Cg, Mg, epi);
    goto done;
  }
  /* a few input channels (a network's stem): direct (kernels/conv_direct.h) */
  if (ox_conv_stem_fits(&g, Cg, G)) {
    if ((rc = ox_conv_stem(pool, &g, N, Cg, Mg, xf, wf, bf, epi, yf)))
      rc = ox_kctx_fail(ctx, rc, "out of memory (stem convolution)");
    goto done;
  }
  if (G == 1 && s->packed && s->packed_w == w && ox_wino_fits(&g, Cg, Mg)) {
    const ox_wino *wp = conv_wino(s, wf, Mg, Cg);
    if (wp) {
      rc = ox_wino_conv(wp, &g, N, xf, bf, epi, yf, pool);
      if (rc == OX_ENOMEM)
        rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory (Winograd convolution)");
      else if (rc)
        rc = ox_kctx_fail(ctx, rc, "internal: the Winograd products were refused");
      goto done;
    }
  }
  conv_job j = {.g = &g,
                .x = xf,
                .w = wf,
                .bias = bf,
                .y = yf,
                .N = N,
                .G = G,
                .Cg = Cg,
                .Mg = Mg,
                .Kg = Cg * g.k_size,
                .P = g.out_size,
                .epi = epi};
  j.outer = ox_nn_outer(&g);
  int64_t OW = g.out[g.nd - 1];
  j.pointwise = g.k_size == 1;
  for (size_t d = 0; d < g.nd; d++)
    if (g.stride[d] != 1 || g.pb[d] != 0 || g.pe[d] != 0) j.pointwise = false;
  ox_sgemm_packed **run_packs = NULL; /* W packed for this run when it is not constant */
  if (s->packed && s->packed_w == w && s->n_packed == G) {
    j.packed = s->packed;
  } else if (ox_sgemm_has_ua()) {
    j.ua = true;
  } else if (N * G * ((j.outer * OW + 255) / 256) > 1) {
    run_packs = calloc((size_t)G, sizeof *run_packs);
    ox_err pe = {0};
    for (int64_t gi = 0; run_packs && gi < G; gi++)
      if (!(run_packs[gi] = ox_sgemm_pack_a(false, Mg, j.Kg, wf + gi * Mg * j.Kg, j.Kg, &pe))) {
        for (int64_t q = 0; q < gi; q++) ox_sgemm_packed_free(run_packs[q]);
        free(run_packs);
        run_packs = NULL;
      }
    j.packed = run_packs;
  }
  /* chunk of output rows: ~1 MiB of im2col columns, and enough tasks for the threads */
  int64_t target = 262144 / (j.Kg > 0 ? j.Kg : 1);
  if (target < 256) target = 256;
  if (target > 8192) target = 8192;
  int64_t rows = (target + OW - 1) / OW;
  if (rows > j.outer) rows = j.outer;
  if (rows < 1) rows = 1;
  int64_t rows_cap = rows; /* the columns' buffer bound */
  if (N * G * ((j.outer + rows - 1) / rows) < nt && j.outer >= nt) rows = (j.outer + nt - 1) / nt;
  /* with few tasks, chunks that the threads share evenly: down to half the
   * size, the rows giving the least time for the busiest thread (tasks are
   * taken as threads free up), the largest such. A count the threads divide
   * is not enough: 28 rows in chunks of 9, 9, 9 and 1 left one thread 18
   * rows and the other 10 */
  if (nt > 1 && N * G * ((j.outer + rows - 1) / rows) < 16 * nt) {
    int64_t best = rows, best_span = INT64_MAX;
    for (int64_t r = rows; r >= 1 && 2 * r >= rows; r--) {
      int64_t tasks = N * G * ((j.outer + r - 1) / r), span = (tasks + nt - 1) / nt * r;
      if (span < best_span) best = r, best_span = span;
    }
    rows = best;
  }
  j.chunk_rows = rows;
  j.n_chunks = (j.outer + rows - 1) / rows;
  j.m_parts = 1;
  j.m_chunk = Mg;
  /* A small image (a 7 x 7 map has 7 rows, cut 4 + 3 for two threads, in
   * tiles of 28 and 21 columns): whole images, the threads splitting the
   * output channels in parts of whole 12-row panels, at least two each. */
  int64_t panels = (Mg + 11) / 12;
  /* (1 x 1 or stride 1: strips cheap enough to build in every part; a
   * stride-2 layer's gathered strips built four times cost more than the
   * balance gained) */
  bool rows_path = j.packed && j.packed[0] && ox_sgemm_has_ua() &&
                   (j.pointwise || (ox_nn_shifted_plane(&g) && g.k_size <= OX_NN_SHIFT_MAXK &&
                                    ox_nn_shift_strip_fn(&g) != NULL));
  /* (also when whole rows cannot be shared evenly and the input is small
   * enough to be read by every part from cache: SqueezeNet's 13 x 13 maps
   * went 7 + 6 rows, one thread idle a thirteenth of the layer) */
  int64_t row_tasks = N * G * j.n_chunks, busiest = (row_tasks + nt - 1) / nt * j.chunk_rows;
  bool uneven = N * G == 1 && busiest * nt * 100 > j.outer * 104 &&
                j.Kg * j.outer * OW * (int64_t)sizeof(float) <= CONV_SPLIT_INPUT_BYTES;
  if (nt > 1 && rows_path && (j.outer * OW <= CONV_SMALL_IMAGE || uneven) && N * G < 2 * nt &&
      panels >= 4) {
    int64_t want = (4 * nt + N * G - 1) / (N * G);
    j.chunk_rows = j.outer;
    j.n_chunks = 1;
    j.m_chunk = conv_m_chunk(Mg, N * G, want, nt);
    j.m_parts = (Mg + j.m_chunk - 1) / j.m_chunk;
  }
  /* A small image of a layer whose strips are gathered (stride 2) and whose
   * weights are not small (ResNet-50's 7 x 7 downsampling layers, 4 to 8 MB
   * of W; Inception v2's, 885 KB): one part of output channels per thread, each thread streaming
   * only its half of W. Split by rows (4 + 3), both threads read all of W, and two threads ran the
   * 1 x 1 stride-2 1024 -> 2048 layer slower than one; the strips are gathered once per part. */
  if (nt > 1 && j.m_parts == 1 && !rows_path && j.packed && j.packed[0] && ox_sgemm_has_ua() &&
      ox_nn_shift_strip_fn(&g) != NULL && j.outer * OW <= CONV_SMALL_IMAGE && N * G == 1 &&
      panels >= 2 * nt && Mg * j.Kg * (int64_t)sizeof(float) >= CONV_HEAVY_W_BYTES) {
    j.chunk_rows = j.outer;
    j.n_chunks = 1;
    j.m_chunk = (panels + nt - 1) / nt * 12;
    j.m_parts = (Mg + j.m_chunk - 1) / j.m_chunk;
  }
  /* Many threads: the rules above were measured on two. Split the output
   * two ways, rows of the image by parts of the output channels (whole
   * 12-row panels, each part reading X in place, building its strips, or
   * gathering its columns: nothing shared between parts), as split.h's plan finds
   * best for the busiest thread. On a 16-core Xeon the row split alone ran
   * ResNet-18's 14 x 14 stride-2 layer as 2 tasks (1.2x over one thread). */
  if (nt > 2 && g.nd >= 2) {
    ox_sgemm_strip_fn sf = ox_nn_shift_strip_fn(&g);
    bool msplit = j.packed && j.packed[0] && ox_sgemm_has_ua();
    double strip = j.pointwise ? (pro_strips ? 3.0 : 2.0)
                   : sf && ox_nn_shifted_plane(&g) && g.k_size <= OX_NN_SHIFT_MAXK ? 4.0
                                                                                   : 8.0;
    conv_cost_ctx cc = {Mg, j.Kg, OW, strip};
    ox_split sp = ox_split_plan(nt, N * G, panels, msplit ? panels : 1, j.outer, rows_cap,
                                conv_task_cost, &cc);
    j.chunk_rows = sp.b_per;
    j.n_chunks = sp.b_parts;
    j.m_parts = 1;
    j.m_chunk = Mg;
    if (sp.a_parts > 1) {
      j.m_chunk = sp.a_per * 12;
      j.m_parts = (Mg + j.m_chunk - 1) / j.m_chunk;
    }
    /* Gathered columns (a stride-2 layer) and output channels in parts:
     * each part gathered all of its chunk's columns again (ResNet-50's
     * 3 x 3 stride-2 layer at 14 x 14 in 15 parts took twice the CPU time
     * of one thread). They are gathered once, by input channels, into the
     * calling thread's scratch (slot 4, held across the tasks), then read
     * in place by every part. */
    int64_t all_cols = N * G * j.n_chunks * j.chunk_rows * OW * j.Kg;
    if (j.m_parts > 1 && strip == 8.0 &&
        all_cols * (int64_t)sizeof(float) <= CONV_SHARED_COL_BYTES &&
        (j.shared_cols = ox_scratch(4, (size_t)all_cols * sizeof(float)))) {
      int64_t cp = (2 * (int64_t)nt + N * G * j.n_chunks - 1) / (N * G * j.n_chunks);
      if (cp > Cg) cp = Cg;
      j.sc_c = (Cg + cp - 1) / cp;
      j.sc_cparts = (Cg + j.sc_c - 1) / j.sc_c;
      ox_parallel_for(pool, N * G * j.n_chunks * j.sc_cparts, 1, conv_gather_task, &j);
    }
  }
  /* A 1-D signal is one row: its output positions in chunks of about
   * CONV_1D_COL_BYTES of packed columns, the chunks shared by the threads
   * (a whole row of Whisper's stride-2 layer packed 7 MB of columns, read
   * from memory by the GEMM for every block of W's rows; one thread:
   * 9.6 -> 8.3 ms at one thread, the rate of a MatMul of its shape). At one
   * thread the implicit GEMM's strips (stride 1, AVX-512) stay: Whisper's
   * first layer ran 2.8 ms on them, 3.0 in chunks; at two threads the
   * chunks took it from 3.2 to 2.2 ms. */
  if (g.nd == 1 && !j.pointwise && (j.ua || (j.packed && j.packed[0])) &&
      !(nt == 1 && j.packed && ox_nn_shift_strip_fn(&g))) {
    int64_t nr = ox_sgemm_nr();
    int64_t cols = CONV_1D_COL_BYTES / (int64_t)sizeof(float) / (j.Kg > 0 ? j.Kg : 1) / nr * nr;
    if (cols < nr) cols = nr;
    int64_t chunks = (OW + cols - 1) / cols;
    /* at least one chunk per thread when the row is long enough */
    if (chunks < nt && OW >= nt * nr) chunks = nt;
    cols = ((OW + chunks - 1) / chunks + nr - 1) / nr * nr;
    j.cols_1d = cols;
    j.n_chunks = (OW + cols - 1) / cols;
    j.chunk_rows = 1;
    j.m_parts = 1;
    j.m_chunk = Mg;
  }
  int64_t ntasks = N * G * j.n_chunks * j.m_parts;
  j.inner_pool = ntasks == 1 && nt > 1 && !pro_strips ? pool : NULL;
  if (pro_strips) j.pro = &pro;
  if (j.packed && !j.inner_pool && !j.cols_1d) j.strip = ox_nn_shift_strip_fn(&g);
  atomic_init(&j.oom, 0);
  if (ntasks == 1)
    conv_task(&j, 0, 1);
  else
    ox_parallel_for(pool, ntasks, 1, conv_task, &j);
  if (atomic_load(&j.oom) == 2)
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "internal: the output channels could not be split");
  else if (atomic_load(&j.oom))
    rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory for im2col columns");
  if (run_packs) {
    for (int64_t gi = 0; gi < G; gi++) ox_sgemm_packed_free(run_packs[gi]);
    free(run_packs);
  }
done:
  free(xpro);
  rc = ox_conv_stage_out(&fs, rc, y);
  if (!rc && !tmp && s->post != OX_CONV_POST_NONE && y->dtype == OX_FLOAT) {
    /* Tanh or Sigmoid after the epilogue's bias and residual */
    const ox_vmath_kernels *vk = ox_vmath_kernels_get();
    if (s->post == OX_CONV_POST_TANH)
      vk->tanh(y->data, y->data, y->numel);
    else
      vk->sigmoid(y->data, y->data, y->numel, 1.0f, false);
  }
  return rc;
}

static int conv_run(ox_kctx *ctx, void *st) {
  return conv_run_epi(ctx, st, NULL, NULL, NULL, NULL);
}

#define OX_MAX_RANK_BC 16

/* FusedConv (domain ai.onnxc, made by the session's fusion pass): Conv's
 * inputs and attributes, an optional 4th input R of Y's shape and
 * attributes activation (a name of src/schema/onnxc_ops.h), alpha, beta, bound (0 none, 1 Max,
 * 2 Min) and bound_value: Y = bound(act(Conv(X, W, B) + R)),
 * float32 only. */
static int fconv_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = conv_prepare(info, state, e);
  if (rc) return rc;
  conv_state *s = *state;
  /* the activation by name (onnxc_ops.h), as the kernels' OX_ACT_* code */
  static const int acts[OX_ONNXC_ACT_COUNT] = {[OX_ONNXC_ACT_NONE] = OX_ACT_NONE,
                                               [OX_ONNXC_ACT_RELU] = OX_ACT_RELU,
                                               [OX_ONNXC_ACT_LEAKY_RELU] = OX_ACT_LEAKY,
                                               [OX_ONNXC_ACT_CLIP] = OX_ACT_CLIP,
                                               [OX_ONNXC_ACT_HARD_SIGMOID] = OX_ACT_HSIGMOID,
                                               [OX_ONNXC_ACT_HARD_SWISH] = OX_ACT_HSWISH,
                                               [OX_ONNXC_ACT_SILU] = OX_ACT_SILU};
  const char *act_name = ox_node_attr_str(info->node, "activation", "none");
  int act = ox_onnxc_act_from_name(act_name);
  if (act < 0 || act >= OX_ONNXC_ACT_COUNT) {
    ox_err_set(e, OX_EINVAL,
               "unknown activation '%s' (Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, SiLU "
               "or none)",
               act_name);
    return ox_conv_prep_err(info, e);
  }
  s->epi.act = acts[act];
  s->epi.alpha = ox_node_attr_float(info->node, "alpha", 0.0f);
  s->epi.beta = ox_node_attr_float(info->node, "beta", 0.0f);
  int64_t bound = ox_node_attr_int(info->node, "bound", 0);
  if (bound < 0 || bound > 2) {
    ox_err_set(e, OX_EINVAL, "unknown bound %lld", (long long)bound);
    return ox_conv_prep_err(info, e);
  }
  s->epi.bound = (int)bound;
  s->epi.bval = ox_node_attr_float(info->node, "bound_value", 0.0f);
  const ox_attr *ps = ox_node_attr(info->node, "pre_scale"),
                *pb = ox_node_attr(info->node, "pre_bias");
  if (ps || pb) {
    if (!ps || !pb || ps->type != OX_ATTR_FLOATS || pb->type != OX_ATTR_FLOATS ||
        ps->n_floats != pb->n_floats || ps->n_floats == 0) {
      ox_err_set(e, OX_EINVAL, "pre_scale and pre_bias must be float lists of one length");
      return ox_conv_prep_err(info, e);
    }
    s->n_pre = (int64_t)ps->n_floats;
    s->pre_scale = malloc(ps->n_floats * sizeof(float));
    s->pre_bias = malloc(ps->n_floats * sizeof(float));
    if (!s->pre_scale || !s->pre_bias) {
      ox_err_set(e, OX_ENOMEM, "out of memory");
      return ox_conv_prep_err(info, e);
    }
    memcpy(s->pre_scale, ps->floats, ps->n_floats * sizeof(float));
    memcpy(s->pre_bias, pb->floats, pb->n_floats * sizeof(float));
    s->pre_relu = ox_node_attr_int(info->node, "pre_relu", 0) != 0;
  }
  s->in_scale = ox_node_attr_int(info->node, "in_scale", 0) != 0;
  if (s->in_scale && s->n_pre) {
    ox_err_set(e, OX_EINVAL, "in_scale and pre_scale exclude each other");
    return ox_conv_prep_err(info, e);
  }
  const ox_attr *sh = ox_node_attr(info->node, "in_shuffle"),
                *ss = ox_node_attr(info->node, "in_shuffle_shape");
  if (sh || ss) {
    bool ok = sh && ss && sh->type == OX_ATTR_INT && ss->type == OX_ATTR_INTS && ss->n_ints == 4 &&
              sh->i >= 1 && ss->ints[1] % sh->i == 0;
    for (size_t d = 0; ok && d < 4; d++) ok = ss->ints[d] > 0;
    if (!ok) {
      ox_err_set(e, OX_EINVAL,
                 "in_shuffle must be a group count dividing in_shuffle_shape[1], and "
                 "in_shuffle_shape 4 positive dims");
      return ox_conv_prep_err(info, e);
    }
    s->shuffle = sh->i;
    memcpy(s->shuffle_shape, ss->ints, sizeof s->shuffle_shape);
  }
  const ox_attr *mp = ox_node_attr(info->node, OX_ONNXC_ATTR_MAX_POOL);
  if (mp) {
    static const int64_t want[4] = {3, 3, 2, 2};
    if (mp->type != OX_ATTR_INTS || mp->n_ints != 4 || memcmp(mp->ints, want, sizeof want) != 0) {
      ox_err_set(e, OX_EINVAL, "max_pool must be [3, 3, 2, 2]");
      return ox_conv_prep_err(info, e);
    }
    if (s->n_pre || s->in_scale || s->shuffle || info->node->n_input > 3) {
      ox_err_set(e, OX_EINVAL, "max_pool takes no residual, prologue, gate or channel shuffle");
      return ox_conv_prep_err(info, e);
    }
    s->max_pool = true;
  }
  return OX_OK;
}

/* numpy broadcasting of two float tensors: the result's dims and each
 * operand's element strides along them (0 where it repeats) */
typedef struct bc_plan {
  size_t rank;
  int64_t od[OX_MAX_RANK_BC], as[OX_MAX_RANK_BC], bs[OX_MAX_RANK_BC];
} bc_plan;

static int bc_plan_make(ox_kctx *ctx, const ox_value *a, const ox_value *b, const char *op,
                        const char *na, const char *nb, bc_plan *p) {
  size_t rank = a->rank > b->rank ? a->rank : b->rank;
  if (rank > OX_MAX_RANK_BC) return ox_kctx_fail(ctx, OX_ERUNTIME, "rank %zu too large", rank);
  p->rank = rank;
  int64_t ast = 1, bst = 1;
  for (size_t k = rank; k-- > 0;) {
    size_t off_a = rank - a->rank, off_b = rank - b->rank;
    int64_t da = k >= off_a ? a->dims[k - off_a] : 1, db = k >= off_b ? b->dims[k - off_b] : 1;
    if (da != db && da != 1 && db != 1)
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "%s: %s dimension %zu (%lld) and %s (%lld) do not broadcast", op, na, k,
                          (long long)da, nb, (long long)db);
    p->od[k] = da == 1 ? db : da;
    p->as[k] = da == 1 ? 0 : ast;
    p->bs[k] = db == 1 ? 0 : bst;
    ast *= da;
    bst *= db;
  }
  return OX_OK;
}

/* y = a + b or a * b over the plan's numel elements (an odometer) */
static void bc_run(const bc_plan *p, const float *a, const float *b, bool mul, float *y,
                   int64_t numel) {
  int64_t idx[OX_MAX_RANK_BC] = {0}, ai = 0, bi = 0;
  for (int64_t i = 0; i < numel; i++) {
    y[i] = mul ? a[ai] * b[bi] : a[ai] + b[bi];
    for (size_t k = p->rank; k-- > 0;) {
      ai += p->as[k];
      bi += p->bs[k];
      if (++idx[k] < p->od[k]) break;
      ai -= p->as[k] * p->od[k];
      bi -= p->bs[k] * p->od[k];
      idx[k] = 0;
    }
  }
}

/* Y = act(C + R) with numpy broadcasting of the conv result C and the
 * residual R (shapes that differ: the general, unfused order). */
static int fconv_broadcast(ox_kctx *ctx, const ox_sgemm_epi *act, const ox_value *c,
                           const ox_value *r) {
  bc_plan p;
  if (bc_plan_make(ctx, c, r, "Add", "the convolution's", "the residual's", &p)) return OX_ERUNTIME;
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, p.od, p.rank);
  if (!y) return OX_ERUNTIME;
  bc_run(&p, c->data, r->data, false, y->data, y->numel);
  ox_sgemm_epi_apply(act, 1, y->numel, y->data, y->numel);
  return OX_OK;
}

/* FusedConv after X's preparation (shuffle, gate): the residual's cases */
static int fconv_body(ox_kctx *ctx, conv_state *s, const ox_value *x, ox_value *w, ox_value *r,
                      const ox_sgemm_pro *gate) {
  ox_sgemm_epi ep = s->epi;
  if (!r) return conv_run_epi(ctx, s, &ep, NULL, x, gate);
  if (r->kind != OX_VAL_TENSOR || r->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the residual must be a float32 tensor");
  ox_nn_geom g;
  int64_t ydims[OX_NN_MAXD + 2];
  if (ox_conv_shapes(ctx, s, x, w, &g, ydims)) return OX_ERUNTIME;
  if (r->rank == x->rank && memcmp(r->dims, ydims, x->rank * sizeof *ydims) == 0) {
    ep.res = r->data; /* row stride set per block (Y's layout) */
    return conv_run_epi(ctx, s, &ep, NULL, x, gate);
  }
  ox_value *c = NULL;
  int rc = conv_run_epi(ctx, s, NULL, &c, x, gate);
  if (!rc) rc = fconv_broadcast(ctx, &ep, c, r);
  ox_value_unref(c);
  return rc;
}

/* X * G with numpy broadcasting, as the Mul a gate replaces computes it */
static int mul_broadcast(ox_kctx *ctx, const ox_value *x, const ox_value *g, ox_value **out) {
  bc_plan p;
  if (bc_plan_make(ctx, x, g, "Mul", "X's", "the gate's", &p)) return OX_ERUNTIME;
  ox_err e = {0};
  ox_value *m = ox_tensor_new_uninit(OX_FLOAT, p.od, p.rank, &e);
  if (!m) return ox_kctx_fail(ctx, e.code, "%s", e.msg);
  bc_run(&p, x->data, g->data, true, m->data, m->numel);
  *out = m;
  return OX_OK;
}

/* true when `g` holds one value per channel of `x` (C = x's dims[1]),
 * broadcast over every other axis as Mul would */
static bool gate_per_channel(const ox_value *x, const ox_value *g) {
  int64_t C = x->rank >= 2 ? x->dims[1] : 0;
  if (C <= 0 || g->rank > x->rank || g->numel != C) return false;
  for (size_t d = 0; d < g->rank; d++)
    if (g->dims[d] != (x->rank - g->rank + d == 1 ? C : 1)) return false;
  return true;
}

/* A gated FusedConv: a gate of one value per channel of X becomes a
 * prologue of this run (fma(x, g, -0) is x * g, -0 included); any other
 * shape, the product made first. Mul commutes, so when X is the
 * per-channel operand and the gate the full tensor (a graph that wrote the
 * product the other way round than the pass guessed), the two swap. */
static int fconv_gated(ox_kctx *ctx, conv_state *s, const ox_value *x, ox_value *w, ox_value *r) {
  ox_value *g = ox_kctx_input(ctx, 4);
  if (!g || g->kind != OX_VAL_TENSOR || g->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the gate (input 4) must be a float32 tensor");
  const ox_value *gate = g;
  if (!gate_per_channel(x, g) && g->numel > x->numel && gate_per_channel(g, x)) {
    gate = x;
    x = g;
  }
  int rc;
  if (gate_per_channel(x, gate)) {
    int64_t C = x->dims[1];
    float *negz = malloc((size_t)C * sizeof *negz);
    if (!negz) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory (gate)");
    for (int64_t c = 0; c < C; c++) negz[c] = -0.0f;
    ox_sgemm_pro pro = {gate->data, negz, false};
    rc = fconv_body(ctx, s, x, w, r, &pro);
    free(negz);
    return rc;
  }
  ox_value *m = NULL;
  if ((rc = mul_broadcast(ctx, x, g, &m))) return rc;
  rc = fconv_body(ctx, s, m, w, r, NULL);
  ox_value_unref(m);
  return rc;
}

/* FusedConv with max_pool: the stem kernel pools each band of output rows
 * while it is in cache (kernels/conv_direct.h); any other layer (or level)
 * makes the convolution's result, then pools it as MaxPool does
 * (ox_nn_pool3x3s2_rows_f32: the same comparisons, the same values). */
static int fconv_pooled(ox_kctx *ctx, conv_state *s, const ox_value *x, ox_value *w) {
  ox_value *b = ox_kctx_input(ctx, 2);
  ox_nn_geom g;
  int64_t cd[OX_NN_MAXD + 2];
  if (ox_conv_shapes(ctx, s, x, w, &g, cd)) return OX_ERUNTIME;
  if (ox_conv_check_float(ctx, x, "X", OX_FLOAT) || ox_conv_check_float(ctx, w, "W", OX_FLOAT) ||
      (b && ox_conv_check_float(ctx, b, "B", OX_FLOAT)))
    return OX_ERUNTIME;
  if (b && b->numel != w->dims[0])
    return ox_kctx_fail(ctx, OX_ERUNTIME, "B has %lld elements, expected %lld", (long long)b->numel,
                        (long long)w->dims[0]);
  if (x->rank != 4 || cd[2] < 3 || cd[3] < 3)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "max_pool needs a 2-D convolution whose output is at least 3 x 3");
  int64_t N = cd[0], M = cd[1], OH = cd[2], OW = cd[3];
  int64_t pd[4] = {N, M, (OH - 3) / 2 + 1, (OW - 3) / 2 + 1};
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, pd, 4);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  if (ox_conv_stem_pool_fits(&g, x->dims[1], s->a.group)) {
    int rc = ox_conv_stem_pool(ox_kctx_pool(ctx), &g, N, x->dims[1], M, x->data, w->data,
                               b ? b->data : NULL, &s->epi, y->data);
    return rc ? ox_kctx_fail(ctx, rc, "out of memory (stem convolution)") : OX_OK;
  }
  ox_sgemm_epi ep = s->epi;
  ox_value *c = NULL;
  int rc = conv_run_epi(ctx, s, &ep, &c, x, NULL);
  if (!rc)
    for (int64_t p = 0; p < N * M; p++)
      ox_nn_pool3x3s2_rows_f32((float *)y->data + p * pd[2] * pd[3], pd[3],
                               (const float *)c->data + p * OH * OW, OW, pd[2], pd[3], true);
  ox_value_unref(c);
  return rc;
}

static int fconv_run(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *w = ox_kctx_input(ctx, 1), *r = ox_kctx_input(ctx, 3);
  if (!x || x->kind != OX_VAL_TENSOR || x->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a float32 tensor");
  ox_value shaped; /* in_shuffle: X's elements as the shuffle's Reshapes gave them */
  if (s->shuffle) {
    int64_t want = 1;
    for (int d = 0; d < 4; d++) want *= s->shuffle_shape[d];
    if (x->numel != want)
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "the channel shuffle cannot reshape X of %lld elements to "
                          "[%lld, %lld, %lld, %lld]",
                          (long long)x->numel, (long long)s->shuffle_shape[0],
                          (long long)s->shuffle_shape[1], (long long)s->shuffle_shape[2],
                          (long long)s->shuffle_shape[3]);
    shaped = *x;
    shaped.rank = 4;
    shaped.dims = shaped.small_dims;
    memcpy(shaped.small_dims, s->shuffle_shape, sizeof s->shuffle_shape);
    x = &shaped;
  }
  if (s->in_scale) return fconv_gated(ctx, s, x, w, r);
  if (s->max_pool) return fconv_pooled(ctx, s, x, w);
  return fconv_body(ctx, s, x, w, r, NULL);
}

/* com.microsoft FusedConv (onnxruntime's): Conv's inputs and attributes,
 * an optional Z of Y's shape, Y = activation(Conv(X, W, B) + Z) with the
 * activation by ONNX name (Relu, Tanh, Sigmoid, LeakyRelu, Clip,
 * HardSigmoid; none when the attribute is absent) and its parameters in
 * activation_params, on the ai.onnxc FusedConv's epilogue. */
int ox_conv_prepare_ms_fused(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = conv_prepare(info, state, e);
  if (rc) return rc;
  conv_state *s = *state;
  const char *act = ox_node_attr_str(info->node, "activation", "");
  const ox_attr *pa = ox_node_attr(info->node, "activation_params");
  size_t np = pa && pa->type == OX_ATTR_FLOATS ? pa->n_floats : 0;
  const float *p = np ? pa->floats : NULL;
  s->epi.act = OX_ACT_NONE;
  size_t want = 0;
  if (strcmp(act, "") == 0 || strcmp(act, "Identity") == 0) {
  } else if (strcmp(act, "Relu") == 0) {
    s->epi.act = OX_ACT_RELU;
  } else if (strcmp(act, "Tanh") == 0) {
    s->post = OX_CONV_POST_TANH;
  } else if (strcmp(act, "Sigmoid") == 0) {
    s->post = OX_CONV_POST_SIGMOID;
  } else if (strcmp(act, "LeakyRelu") == 0) {
    s->epi.act = OX_ACT_LEAKY;
    want = 1;
  } else if (strcmp(act, "Clip") == 0) {
    s->epi.act = OX_ACT_CLIP;
    want = 2;
  } else if (strcmp(act, "HardSigmoid") == 0) {
    s->epi.act = OX_ACT_HSIGMOID;
    want = 2;
  } else {
    ox_err_set(e, OX_EINVAL,
               "unknown activation '%s' (Relu, Tanh, Sigmoid, LeakyRelu, Clip or HardSigmoid)",
               act);
    return ox_conv_prep_err(info, e);
  }
  if (np < want) {
    ox_err_set(e, OX_EINVAL, "activation %s needs %zu activation_params, got %zu", act, want, np);
    return ox_conv_prep_err(info, e);
  }
  s->epi.alpha = want > 0 ? p[0] : 0.0f;
  s->epi.beta = want > 1 ? p[1] : 0.0f;
  return OX_OK;
}

int ox_conv_run_ms_fused(ox_kctx *ctx, void *st) {
  conv_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *w = ox_kctx_input(ctx, 1), *z = ox_kctx_input(ctx, 3);
  if (!x || x->kind != OX_VAL_TENSOR || x->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a float32 tensor");
  if (z) { /* onnxruntime adds Z in the product's accumulation: Y's shape only */
    ox_nn_geom g;
    int64_t ydims[OX_NN_MAXD + 2];
    if (ox_conv_shapes(ctx, s, x, w, &g, ydims)) return OX_ERUNTIME;
    if (z->kind != OX_VAL_TENSOR || z->dtype != OX_FLOAT || z->rank != x->rank ||
        memcmp(z->dims, ydims, x->rank * sizeof *ydims) != 0)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "Z must be a float32 tensor of Y's shape");
  }
  return fconv_body(ctx, s, x, w, z, NULL);
}

const ox_kernel_def ox_ops_conv[] = {
    {"", "Conv", 1, 1000, conv_prepare, conv_run, ox_conv_release},
    {OX_FUSED_DOMAIN, "FusedConv", 1, 1, fconv_prepare, fconv_run, ox_conv_release},
    {0},
};
