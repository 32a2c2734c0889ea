/* pool.c - AveragePool, MaxPool (with Indices), LpPool, the global pools and
 * MaxUnpool, over any number of spatial dimensions.
 *
 * Values are staged in double (exact for every allowed type), windows are
 * walked with precomputed per-axis tap ranges, and (batch, channel) planes run
 * in parallel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/levels.h"
#include "../../kernels/nn.h"
#include "../nn_attrs.h"
#include "../nn_stage.h"
#include "../../runtime/kernel.h"

typedef enum pool_kind { POOL_AVG, POOL_MAX, POOL_LP } pool_kind;

typedef struct pool_state {
  ox_nn_attrs a;
  pool_kind kind;
  bool global;
  bool count_include_pad;
  int64_t storage_order;
  double p;
} pool_state;

static bool pool_type_ok(int32_t t, bool allow8) {
  return ox_nn_is_float_type(t) || (allow8 && (t == OX_INT8 || t == OX_UINT8));
}

static int pool_prepare_kind(const ox_kinfo *info, void **state, ox_err *e, pool_kind kind,
                             bool global) {
  pool_state *s = calloc(1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = s;
  s->kind = kind;
  s->global = global;
  const ox_node *n = info->node;
  if (ox_nn_attrs_read(n, &s->a, e))
    return ox_err_prefix(e, "node '%s' (%s)", n->name ? n->name : "", n->op_type);
  if (!global && !s->a.n_kernel)
    return ox_err_set(e, OX_EINVAL, "node '%s' (%s): attribute kernel_shape is required",
                      n->name ? n->name : "", n->op_type);
  s->count_include_pad = ox_node_attr_int(n, "count_include_pad", 0) != 0;
  s->storage_order = ox_node_attr_int(n, "storage_order", 0);
  const ox_attr *p = ox_node_attr(n, "p");
  s->p = 2.0;
  if (p) s->p = p->type == OX_ATTR_FLOAT ? (double)p->f : (double)p->i;
  return OX_OK;
}

static int avg_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_AVG, false);
}
static int max_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_MAX, false);
}
static int lp_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_LP, false);
}
static int gavg_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_AVG, true);
}
static int gmax_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_MAX, true);
}
static int glp_prepare(const ox_kinfo *i, void **s, ox_err *e) {
  return pool_prepare_kind(i, s, e, POOL_LP, true);
}

typedef struct pool_job {
  const pool_state *s;
  const ox_nn_geom *g;
  const double *x;
  double *y;
  int64_t *idx; /* MaxPool indices or NULL */
} pool_job;

static void pool_task(void *arg, int64_t p0, int64_t p1) {
  const pool_job *j = arg;
  const ox_nn_geom *g = j->g;
  size_t nd = g->nd;
  int64_t oi[OX_NN_MAXD], kk[OX_NN_MAXD], pos[OX_NN_MAXD], start[OX_NN_MAXD];
  for (int64_t plane = p0; plane < p1; plane++) {
    const double *xp = j->x + plane * g->in_size;
    double *yp = j->y + plane * g->out_size;
    memset(oi, 0, sizeof oi);
    for (int64_t o = 0; o < g->out_size; o++) {
      for (size_t d = 0; d < nd; d++) start[d] = oi[d] * g->stride[d] - g->pb[d];
      double acc = j->s->kind == POOL_MAX ? -INFINITY : 0.0;
      int64_t count = 0, padcount = 0, best = -1;
      memset(kk, 0, sizeof kk);
      for (int64_t t = 0; t < g->k_size; t++) {
        bool inside = true, inpad = true;
        int64_t lin = 0;
        for (size_t d = 0; d < nd; d++) {
          pos[d] = start[d] + kk[d] * g->dil[d];
          if (pos[d] < 0 || pos[d] >= g->in[d]) inside = false;
          if (pos[d] < -g->pb[d] || pos[d] >= g->in[d] + g->pe[d]) inpad = false;
          lin = lin * g->in[d] + pos[d];
        }
        if (inpad) padcount++;
        if (inside) {
          double v = xp[lin];
          count++;
          if (j->s->kind == POOL_MAX) {
            if (v > acc || best < 0) {
              acc = v;
              best = lin;
              if (j->idx && j->s->storage_order == 1) {
                int64_t cm = 0;
                for (size_t d = nd; d-- > 0;) cm = cm * g->in[d] + pos[d];
                best = cm;
              }
            }
          } else if (j->s->kind == POOL_AVG) {
            acc += v;
          } else {
            acc += pow(fabs(v), j->s->p);
          }
        }
        for (size_t d = nd; d-- > 0;) {
          if (++kk[d] < g->k[d]) break;
          kk[d] = 0;
        }
      }
      if (j->s->kind == POOL_AVG) {
        int64_t div = j->s->count_include_pad ? padcount : count;
        acc = div > 0 ? acc / (double)div : NAN;
      } else if (j->s->kind == POOL_LP) {
        acc = pow(acc, 1.0 / j->s->p);
      }
      yp[o] = acc;
      if (j->idx) j->idx[plane * g->out_size + o] = best < 0 ? 0 : plane * g->in_size + best;
      for (size_t d = nd; d-- > 0;) {
        if (++oi[d] < g->out[d]) break;
        oi[d] = 0;
      }
    }
  }
}

/* Taps k in [lo, hi) of a window starting at `start` with dilation `dil` that
 * land in [0, len); *padn counts the taps inside [-pb, len + pe). */
static void tap_range(int64_t start, int64_t k, int64_t dil, int64_t len, int64_t pb, int64_t pe,
                      int64_t *lo, int64_t *hi, int64_t *padn) {
  int64_t l = start < 0 ? (-start + dil - 1) / dil : 0;
  int64_t h = len - start <= 0 ? 0 : (len - start + dil - 1) / dil;
  if (h > k) h = k;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
  int64_t pl = start < -pb ? (-pb - start + dil - 1) / dil : 0;
  int64_t ph = len + pe - start <= 0 ? 0 : (len + pe - start + dil - 1) / dil;
  if (ph > k) ph = k;
  *padn = ph > pl ? ph - pl : 0;
}

/* float32, 2-D, max or average, no indices: direct loops over valid taps. */
/* The valid taps of every output column, computed once per call (integer
 * divisions per output would cost more than the pooling itself). */
typedef struct pool_cols {
  int64_t lo, hi, pad;
} pool_cols;

typedef struct pool2d_job {
  const pool_state *s;
  const ox_nn_geom *g;
  const float *x;
  float *y;
  const pool_cols *cols; /* g->out[1] entries */
  const pool_cols *rows; /* g->out[0] entries: the taps of each output row */
  /* sep_pool2d_task of the level in use: the bordered and "same" tasks'
   * fallback when no scratch plane could be had */
  void (*sep)(void *arg, int64_t p0, int64_t p1);
} pool2d_job;

/* Planes per task for a 2-D pool: about 32K outputs each; a pool of under
 * 256K taps in all stays on one thread, since waking a second costs more
 * than it saves (oww_embedding's pools ran slower on two threads). */
static int64_t pool_grain(const ox_nn_geom *g, int64_t out_numel, int64_t planes) {
  int64_t per = out_numel / (planes ? planes : 1);
  if ((double)out_numel * (double)(g->k[0] * g->k[1]) < (double)(1 << 18)) return planes;
  return (32768 + per) / (per + 1);
}

/* 8-bit max pooling in 2-D on the bytes themselves: int8 compares as
 * unsigned once its sign bit is flipped (flip 0x80), which keeps the
 * order; a window with no tap in the image gives the type's least value
 * (as the float path's -inf saturated). */
typedef struct pool2d_u8_job {
  const ox_nn_geom *g;
  const uint8_t *x;
  uint8_t *y;
  const pool_cols *cols;
  uint8_t flip;
} pool2d_u8_job;

OX_LEVEL_BODY void pool2d_u8_task_c(void *arg, int64_t p0, int64_t p1) {
  const pool2d_u8_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t dh = g->dil[0], dw = g->dil[1], sw = g->stride[1];
  uint8_t flip = j->flip;
  int64_t K1 = g->k[1], span = (K1 - 1) * dw, nfull = IW - span > 0 ? IW - span : 0;
  uint8_t stack[2048], *row = IW <= 1024 ? stack : malloc((size_t)IW * 2);
  if (!row) return; /* cannot happen for any image that fit in memory once */
  uint8_t *hm = row + IW;
  /* [in0, in1): the outputs whose window lies wholly inside the row */
  int64_t in0 = 0, in1 = 0;
  while (in0 < OW && !(j->cols[in0].lo == 0 && j->cols[in0].hi == K1)) in0++;
  in1 = in0;
  while (in1 < OW && j->cols[in1].lo == 0 && j->cols[in1].hi == K1) in1++;
  for (int64_t plane = p0; plane < p1; plane++) {
    const uint8_t *xp = j->x + plane * IH * IW;
    uint8_t *yp = j->y + plane * OH * OW;
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t hs = oh * g->stride[0] - g->pb[0], hlo, hhi, hpad;
      tap_range(hs, g->k[0], dh, IH, g->pb[0], g->pe[0], &hlo, &hhi, &hpad);
      /* the window's rows reduced first, a whole row at a time (vectorises),
       * then each output takes the maximum of its columns */
      for (int64_t w = 0; w < IW; w++) row[w] = 0;
      for (int64_t kh = hlo; kh < hhi; kh++) {
        const uint8_t *xr = xp + (hs + kh * dh) * IW;
        for (int64_t w = 0; w < IW; w++) {
          uint8_t v = (uint8_t)(xr[w] ^ flip);
          row[w] = v > row[w] ? v : row[w];
        }
      }
      /* the maxima of whole windows along the row, one tap at a time
       * (vectorises): hm[w] covers row[w .. w + span] */
      for (int64_t w = 0; w < nfull; w++) hm[w] = row[w];
      for (int64_t kw = 1; kw < K1; kw++)
        for (int64_t w = 0; w < nfull; w++) {
          uint8_t v = row[w + kw * dw];
          hm[w] = v > hm[w] ? v : hm[w];
        }
      uint8_t *yr = yp + oh * OW;
      if (hhi <= hlo) { /* no row in the image: the least value */
        memset(yr, flip, (size_t)OW);
        continue;
      }
      /* the windows wholly inside the row read hm at a stride (a loop of
       * vector copies), the others their valid taps; the flip last */
      if (in1 > in0) {
        const uint8_t *h = hm + in0 * sw - g->pb[1];
        if (sw == 1)
          memcpy(yr + in0, h, (size_t)(in1 - in0));
        else if (sw == 2)
          ox_nn_gather2_u8(yr + in0, h, in1 - in0);
        else
          for (int64_t ow = in0; ow < in1; ow++) yr[ow] = h[(ow - in0) * sw];
      }
      for (int64_t ow = 0; ow < OW; ow++) {
        if (ow == in0 && in1 > in0) ow = in1;
        if (ow >= OW) break;
        int64_t ws = ow * sw - g->pb[1];
        uint8_t acc = 0;
        for (int64_t kw = j->cols[ow].lo; kw < j->cols[ow].hi; kw++)
          acc = row[ws + kw * dw] > acc ? row[ws + kw * dw] : acc;
        yr[ow] = acc;
      }
      if (flip)
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] ^= flip;
    }
  }
  if (row != stack) free(row);
}
OX_LEVELS_VOID(pool2d_u8_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

/* float max and average pooling in 2-D, separably: each output row first
 * reduces its window's input rows (contiguous: vectorises), then whole
 * windows along that row (one contiguous pass per tap), and each output
 * reads its window's result (border windows: their valid taps). A strided
 * window read per output was the cost before. Max passes over NaN inputs
 * as before (v > acc is false) and gives -inf for no tap; average divides
 * by the valid taps, or by the padded window with count_include_pad (no
 * tap at all: NaN, as before). */
OX_LEVEL_BODY void sep_pool2d_task_c(void *arg, int64_t p0, int64_t p1) {
  const pool2d_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], K1 = g->k[1];
  int64_t dh = g->dil[0], dw = g->dil[1], sw = g->stride[1];
  bool is_max = j->s->kind == POOL_MAX, incl = j->s->count_include_pad;
  int64_t span = (K1 - 1) * dw, nfull = IW - span > 0 ? IW - span : 0;
  float stack[2048], *row = IW <= 1024 ? stack : malloc((size_t)IW * 2 * sizeof(float));
  if (!row) return; /* cannot happen for any image that fit in memory once */
  float *hm = row + IW;
  const float init = is_max ? -INFINITY : 0.0f;
  /* [in0, in1): the outputs whose window lies wholly inside the row (a
   * contiguous range: windows move right with ow) */
  int64_t in0 = 0, in1 = 0;
  while (in0 < OW && !(j->cols[in0].lo == 0 && j->cols[in0].hi == K1)) in0++;
  in1 = in0;
  while (in1 < OW && j->cols[in1].lo == 0 && j->cols[in1].hi == K1) in1++;
  /* the common max pool (3 x 3, stride 2) with no window across the left
   * edge: a row of outputs straight from its three input rows */
  bool fused3 = is_max && K1 == 3 && sw == 2 && dw == 1 && g->k[0] == 3 && in0 == 0;
  /* [r0, r1): its rows with the whole window, one kernel call per plane
   * (with stride 2 down the plane and dilation 1) */
  int64_t r0 = 0, r1 = 0;
  if (fused3 && g->stride[0] == 2 && dh == 1) {
    while (r0 < OH && j->rows[r0].hi - j->rows[r0].lo != 3) r0++;
    r1 = r0;
    while (r1 < OH && j->rows[r1].hi - j->rows[r1].lo == 3) r1++;
  }
  for (int64_t plane = p0; plane < p1; plane++) {
    const float *xp = j->x + plane * IH * IW;
    float *yp = j->y + plane * OH * OW;
    if (r1 > r0)
      ox_nn_pool3x3s2_rows_f32(yp + r0 * OW, OW, xp + (r0 * 2 - g->pb[0]) * IW, IW, r1 - r0, in1,
                               true);
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t hs = oh * g->stride[0] - g->pb[0];
      int64_t hlo = j->rows[oh].lo, hhi = j->rows[oh].hi, hpad = j->rows[oh].pad;
      if (fused3 && hhi - hlo == 3) { /* max, 3 x 3, stride 2, no window across the left edge */
        const float *x0 = xp + (hs + hlo * dh) * IW, *x1 = x0 + dh * IW, *x2 = x1 + dh * IW;
        float *yr = yp + oh * OW;
        if (oh < r0 || oh >= r1) ox_nn_pool3x3s2_f32(yr, x0, x1, x2, in1, true);
        for (int64_t ow = in1; ow < OW; ow++) { /* windows across the right edge */
          int64_t ws = ow * 2;
          float acc = -INFINITY;
          for (int64_t kw = j->cols[ow].lo; kw < j->cols[ow].hi; kw++) {
            float v = x0[ws + kw] > -INFINITY ? x0[ws + kw] : -INFINITY;
            v = x1[ws + kw] > v ? x1[ws + kw] : v;
            v = x2[ws + kw] > v ? x2[ws + kw] : v;
            acc = kw == j->cols[ow].lo ? v : v > acc ? v : acc;
          }
          yr[ow] = acc;
        }
        continue;
      }
      if (hhi - hlo == 3) { /* one pass for the common 3-row window, same operations */
        const float *x0 = xp + (hs + hlo * dh) * IW, *x1 = x0 + dh * IW, *x2 = x1 + dh * IW;
        if (is_max)
          for (int64_t w = 0; w < IW; w++) {
            float r = x0[w] > init ? x0[w] : init;
            r = x1[w] > r ? x1[w] : r;
            row[w] = x2[w] > r ? x2[w] : r;
          }
        else
          for (int64_t w = 0; w < IW; w++) row[w] = ((init + x0[w]) + x1[w]) + x2[w];
      } else {
        for (int64_t w = 0; w < IW; w++) row[w] = init;
        for (int64_t kh = hlo; kh < hhi; kh++) {
          const float *xr = xp + (hs + kh * dh) * IW;
          if (is_max)
            for (int64_t w = 0; w < IW; w++) row[w] = xr[w] > row[w] ? xr[w] : row[w];
          else
            for (int64_t w = 0; w < IW; w++) row[w] += xr[w];
        }
      }
      float *yr = yp + oh * OW;
      int64_t count = incl ? hpad * K1 : (hhi - hlo) * K1;
      /* stride 2 over 2 or 3 columns: the windows straight from the row */
      bool pair = sw == 2 && dw == 1 && (K1 == 2 || K1 == 3) && (is_max || count > 0);
      if (pair) {
        if (in1 > in0)
          ox_nn_pool2_f32(yr + in0, row + in0 * 2 - g->pb[1], in1 - in0, (int)K1, is_max,
                          (float)count);
      } else {
        for (int64_t w = 0; w < nfull; w++) hm[w] = row[w];
        for (int64_t kw = 1; kw < K1; kw++) {
          if (is_max)
            for (int64_t w = 0; w < nfull; w++) {
              float v = row[w + kw * dw];
              hm[w] = v > hm[w] ? v : hm[w];
            }
          else
            for (int64_t w = 0; w < nfull; w++) hm[w] += row[w + kw * dw];
        }
      }
      /* the windows wholly inside the row: a loop that vectorises (the
       * division stays a division: the average is sum / count) */
      if (pair) {
        /* done above */
      } else if (is_max && sw == 2) {
        if (in1 > in0) ox_nn_gather2_f32(yr + in0, hm + in0 * 2 - g->pb[1], in1 - in0);
      } else if (is_max) {
        for (int64_t ow = in0; ow < in1; ow++) yr[ow] = hm[ow * sw - g->pb[1]];
      } else {
        float div = (float)count;
        if (count > 0)
          for (int64_t ow = in0; ow < in1; ow++) yr[ow] = hm[ow * sw - g->pb[1]] / div;
        else
          for (int64_t ow = in0; ow < in1; ow++) yr[ow] = NAN;
      }
      for (int64_t ow = 0; ow < OW; ow++) {
        if (ow == in0 && in1 > in0) ow = in1;
        if (ow >= OW) break;
        int64_t ws = ow * sw - g->pb[1], wlo = j->cols[ow].lo, whi = j->cols[ow].hi;
        float acc;
        if (wlo == 0 && whi == K1) {
          acc = hm[ws];
        } else {
          acc = init;
          for (int64_t kw = wlo; kw < whi; kw++) {
            float v = row[ws + kw * dw];
            acc = is_max ? (v > acc ? v : acc) : acc + v;
          }
        }
        if (!is_max) {
          int64_t div = incl ? hpad * j->cols[ow].pad : (hhi - hlo) * (whi - wlo);
          acc = div > 0 ? acc / (float)div : NAN;
        }
        yr[ow] = acc;
      }
    }
  }
  if (row != stack) free(row);
}
OX_LEVELS_VOID(sep_pool2d_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

/* 3 x 3 windows at stride 2 with padding (ResNet's and ShuffleNet's pools):
 * each plane is copied into a bordered one holding the identity (-inf, or 0
 * for an average) around it, as large as the output's windows reach, so
 * every window is whole and each output row comes straight from three rows
 * (ox_nn_pool3x3s2_f32); an average's sums are then divided over the plane
 * by a plane of per-position counts. A border tap compares with -inf or
 * adds 0: the values of sep_pool2d_task, in its order (only the sign of a
 * zero sum can differ). */
enum { BORDERED_MAX_W = 48 };

OX_LEVEL_BODY void bordered3s2_task_c(void *arg, int64_t p0, int64_t p1) {
  const pool2d_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t pb0 = g->pb[0], pb1 = g->pb[1], PH = 2 * OH + 1, PW = 2 * OW + 1;
  bool is_max = j->s->kind == POOL_MAX, incl = j->s->count_include_pad;
  const float init = is_max ? -INFINITY : 0.0f;
  size_t np = (size_t)(PH * PW), nc = is_max ? 0 : (size_t)(OH * OW);
  float *P = ox_scratch(0, (np + nc) * sizeof(float));
  if (!P) {
    j->sep(arg, p0, p1);
    return;
  }
  float *cnt = P + np;
  for (size_t i = 0; i < np; i++) P[i] = init; /* the border stays: planes fill the inside */
  for (int64_t oh = 0; oh < OH && !is_max; oh++) {
    const pool_cols *r = &j->rows[oh];
    for (int64_t ow = 0; ow < OW; ow++) {
      const pool_cols *c = &j->cols[ow];
      cnt[oh * OW + ow] = (float)(incl ? r->pad * c->pad : (r->hi - r->lo) * (c->hi - c->lo));
    }
  }
  /* the input rows and columns the windows reach */
  int64_t h1 = IH < PH - pb0 ? IH : PH - pb0, w1 = IW < PW - pb1 ? IW : PW - pb1;
  for (int64_t plane = p0; plane < p1; plane++) {
    const float *xp = j->x + plane * IH * IW;
    float *yp = j->y + plane * OH * OW;
    for (int64_t h = 0; h < h1; h++)
      memcpy(P + (h + pb0) * PW + pb1, xp + h * IW, (size_t)w1 * sizeof(float));
    ox_nn_pool3x3s2_rows_f32(yp, OW, P, PW, OH, OW, is_max);
    if (!is_max)
      for (int64_t i = 0; i < OH * OW; i++) yp[i] /= cnt[i];
  }
}
OX_LEVELS_VOID(bordered3s2_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

/* Stride 1 with "same" padding (the 3x3 pools inside Inception modules:
 * planes of 7 x 7 to 28 x 28, where per-row loops are mostly remainders and
 * border windows): the plane is copied into a bordered one whose border
 * holds the identity (-inf for max, 0 for average), so every window is
 * whole and each pass runs over the whole plane at once: the window's rows
 * combined, then its columns over the flattened rows, then (average) each
 * output divided by its own count from a plane of counts made per call.
 * The float operations are those of sep_pool2d_task in the same order; a
 * border tap adds 0 or compares with -inf, which changes no value (only,
 * in a sum, the sign of a zero). */
OX_LEVEL_BODY void same_pool2d_task_c(void *arg, int64_t p0, int64_t p1) {
  const pool2d_job *j = arg;
  const ox_nn_geom *g = j->g;
  int64_t IH = g->in[0], IW = g->in[1], K0 = g->k[0], K1 = g->k[1], pb0 = g->pb[0];
  int64_t pb1 = g->pb[1], PW = IW + pb1 + g->pe[1], PH = IH + pb0 + g->pe[0];
  bool is_max = j->s->kind == POOL_MAX, incl = j->s->count_include_pad;
  const float init = is_max ? -INFINITY : 0.0f;
  /* bordered plane, rows combined (IH x PW, + K1 so the last window reads
   * inside), columns combined, counts */
  size_t np = (size_t)(PH * PW), nv = (size_t)(IH * PW + K1), nc = is_max ? 0 : (size_t)(IH * IW);
  float *P = ox_scratch(0, (np + 2 * nv + nc) * sizeof(float));
  if (!P) {
    j->sep(arg, p0, p1);
    return;
  }
  float *V = P + np, *hm = V + nv, *cnt = hm + nv;
  for (size_t i = 0; i < np; i++) P[i] = init; /* the border stays: planes fill the inside */
  for (size_t i = (size_t)(IH * PW); i < nv; i++) V[i] = init;
  for (int64_t oh = 0; oh < IH && !is_max; oh++) {
    const pool_cols *r = &j->rows[oh];
    for (int64_t ow = 0; ow < IW; ow++) {
      const pool_cols *c = &j->cols[ow];
      cnt[oh * IW + ow] = (float)(incl ? r->pad * c->pad : (r->hi - r->lo) * (c->hi - c->lo));
    }
  }
  int64_t m = IH * PW, nh = m;
  for (int64_t plane = p0; plane < p1; plane++) {
    const float *xp = j->x + plane * IH * IW;
    float *yp = j->y + plane * IH * IW;
    for (int64_t h = 0; h < IH; h++)
      memcpy(P + (h + pb0) * PW + pb1, xp + h * IW, (size_t)IW * sizeof(float));
    for (int64_t i = 0; i < m; i++) V[i] = init;
    for (int64_t kh = 0; kh < K0; kh++) {
      const float *pk = P + kh * PW;
      if (is_max)
        for (int64_t i = 0; i < m; i++) V[i] = pk[i] > V[i] ? pk[i] : V[i];
      else
        for (int64_t i = 0; i < m; i++) V[i] += pk[i];
    }
    for (int64_t i = 0; i < nh; i++) hm[i] = V[i];
    for (int64_t kw = 1; kw < K1; kw++) {
      if (is_max)
        for (int64_t i = 0; i < nh; i++) hm[i] = V[i + kw] > hm[i] ? V[i + kw] : hm[i];
      else
        for (int64_t i = 0; i < nh; i++) hm[i] += V[i + kw];
    }
    for (int64_t oh = 0; oh < IH; oh++)
      memcpy(yp + oh * IW, hm + oh * PW, (size_t)IW * sizeof(float));
    if (!is_max) /* over the whole plane: rows of 7 to 28 would be mostly remainders */
      for (int64_t i = 0; i < IH * IW; i++) yp[i] /= cnt[i];
  }
}
OX_LEVELS_VOID(same_pool2d_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

/* Global max or average of float planes: 16 partial results per plane,
 * combined at the end (vectorises; the order of additions differs from a
 * left-to-right sum by rounding only). */
typedef struct gpool_job {
  const float *x;
  float *y;
  int64_t size;
  bool is_max;
} gpool_job;

OX_LEVEL_BODY void gpool_task_c(void *arg, int64_t p0, int64_t p1) {
  const gpool_job *j = arg;
  int64_t n = j->size, n16 = n / 16 * 16;
  for (int64_t p = p0; p < p1; p++) {
    const float *x = j->x + p * n;
    float part[16];
    if (j->is_max) {
      for (int k = 0; k < 16; k++) part[k] = -INFINITY;
      for (int64_t i = 0; i < n16; i += 16)
        for (int k = 0; k < 16; k++) part[k] = x[i + k] > part[k] ? x[i + k] : part[k];
      float m = -INFINITY;
      for (int k = 0; k < 16; k++) m = part[k] > m ? part[k] : m;
      for (int64_t i = n16; i < n; i++) m = x[i] > m ? x[i] : m;
      j->y[p] = m;
    } else {
      for (int k = 0; k < 16; k++) part[k] = 0.0f;
      for (int64_t i = 0; i < n16; i += 16)
        for (int k = 0; k < 16; k++) part[k] += x[i + k];
      double sum = 0;
      for (int k = 0; k < 16; k++) sum += part[k];
      for (int64_t i = n16; i < n; i++) sum += x[i];
      j->y[p] = n > 0 ? (float)(sum / (double)n) : NAN;
    }
  }
}
OX_LEVELS_VOID(gpool_task, (void *arg, int64_t p0, int64_t p1), arg, p0, p1)

static int pool_run(ox_kctx *ctx, void *st) {
  const pool_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input X");
  if (!pool_type_ok(x->dtype, s->kind == POOL_MAX && !s->global))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "unsupported element type %d", (int)x->dtype);
  if (x->rank < 3) return ox_kctx_fail(ctx, OX_ERUNTIME, "X must have rank >= 3, got %zu", x->rank);
  size_t nd = x->rank - 2;
  ox_nn_geom g;
  ox_err e = {0};
  ox_nn_attrs a = s->a;
  if (s->global) {
    memset(&a, 0, sizeof a);
    a.n_kernel = nd;
    for (size_t d = 0; d < nd; d++) a.kernel[d] = x->dims[2 + d];
  }
  if (ox_nn_geom_make(&a, nd, x->dims + 2, NULL, true, &g, &e))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", e.msg);
  int64_t ydims[OX_NN_MAXD + 2];
  ydims[0] = x->dims[0];
  ydims[1] = x->dims[1];
  for (size_t d = 0; d < nd; d++) ydims[2 + d] = g.out[d];
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  ox_value *iv = NULL;
  if (s->kind == POOL_MAX && !s->global && ox_kctx_n_outputs(ctx) > 1 &&
      ox_kctx_output_wanted(ctx, 1)) {
    iv = ox_kctx_output(ctx, 1, OX_INT64, ydims, x->rank);
    if (!iv) return OX_ERUNTIME;
  }
  if (y->numel == 0) return OX_OK;
  if (x->dtype == OX_FLOAT && s->global && s->kind != POOL_LP) {
    int64_t planes = x->dims[0] * x->dims[1], size = x->numel / (planes ? planes : 1);
    gpool_job gj = {x->data, y->data, size, s->kind == POOL_MAX};
    ox_parallel_for(ox_kctx_pool(ctx), planes, 65536 / (size + 1) + 1, OX_LEVEL_PICK(gpool_task),
                    &gj);
    return OX_OK;
  }
  bool bytes = (x->dtype == OX_UINT8 || x->dtype == OX_INT8) && s->kind == POOL_MAX;
  if (bytes && nd == 2 && !iv) {
    int64_t OW = g.out[1];
    pool_cols stackc[256], *cols = OW <= 256 ? stackc : malloc((size_t)OW * sizeof *cols);
    if (!cols) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    for (int64_t ow = 0; ow < OW; ow++)
      tap_range(ow * g.stride[1] - g.pb[1], g.k[1], g.dil[1], g.in[1], g.pb[1], g.pe[1],
                &cols[ow].lo, &cols[ow].hi, &cols[ow].pad);
    pool2d_u8_job bj = {&g, x->data, y->data, cols, x->dtype == OX_INT8 ? 0x80 : 0};
    int64_t planes = x->dims[0] * x->dims[1];
    ox_parallel_for(ox_kctx_pool(ctx), planes, pool_grain(&g, y->numel, planes),
                    OX_LEVEL_PICK(pool2d_u8_task), &bj);
    if (cols != stackc) free(cols);
    return OX_OK;
  }
  if (x->dtype == OX_FLOAT && nd == 2 && !iv && s->kind != POOL_LP) {
    int64_t OW = g.out[1];
    pool_cols stackc[256], *cols = OW <= 256 ? stackc : malloc((size_t)OW * sizeof *cols);
    if (!cols) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    for (int64_t ow = 0; ow < OW; ow++)
      tap_range(ow * g.stride[1] - g.pb[1], g.k[1], g.dil[1], g.in[1], g.pb[1], g.pe[1],
                &cols[ow].lo, &cols[ow].hi, &cols[ow].pad);
    int64_t OH = g.out[0];
    pool_cols stackr[256], *rows = OH <= 256 ? stackr : malloc((size_t)OH * sizeof *rows);
    if (!rows) {
      if (cols != stackc) free(cols);
      return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    }
    for (int64_t oh = 0; oh < OH; oh++)
      tap_range(oh * g.stride[0] - g.pb[0], g.k[0], g.dil[0], g.in[0], g.pb[0], g.pe[0],
                &rows[oh].lo, &rows[oh].hi, &rows[oh].pad);
    pool2d_job pj = {s, &g, x->data, y->data, cols, rows, OX_LEVEL_PICK(sep_pool2d_task)};
    int64_t planes = x->dims[0] * x->dims[1];
    bool same = g.stride[0] == 1 && g.stride[1] == 1 && g.dil[0] == 1 && g.dil[1] == 1 &&
                g.out[0] == g.in[0] && g.out[1] == g.in[1] && g.in[1] >= g.k[1];
    /* 3 x 3 at stride 2 reaching padding on the left or top, or an average
     * (without: sep_pool2d_task reads the rows in place), on planes up to
     * BORDERED_MAX_W wide (where its per-row work was the cost: a 112 x 112
     * plane ran slower copied); every window holding a tap (no division by
     * a count of 0) */
    bool b3s2 = g.in[1] <= BORDERED_MAX_W && g.k[0] == 3 && g.k[1] == 3 && g.stride[0] == 2 &&
                g.stride[1] == 2 && g.dil[0] == 1 && g.dil[1] == 1 && g.pb[0] >= 0 &&
                g.pb[1] >= 0 && (s->kind != POOL_MAX || g.pb[0] > 0 || g.pb[1] > 0);
    for (int64_t oh = 0; b3s2 && oh < OH; oh++)
      if (rows[oh].hi <= rows[oh].lo) b3s2 = false;
    for (int64_t ow = 0; b3s2 && ow < OW; ow++)
      if (cols[ow].hi <= cols[ow].lo) b3s2 = false;
    ox_parallel_for(ox_kctx_pool(ctx), planes, pool_grain(&g, y->numel, planes),
                    same   ? OX_LEVEL_PICK(same_pool2d_task)
                    : b3s2 ? OX_LEVEL_PICK(bordered3s2_task)
                           : pj.sep,
                    &pj);
    if (cols != stackc) free(cols);
    if (rows != stackr) free(rows);
    return OX_OK;
  }
  double *xd = malloc((size_t)x->numel * sizeof(double));
  double *yd = malloc((size_t)y->numel * sizeof(double));
  if (!xd || !yd) {
    free(xd);
    free(yd);
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  ox_nn_load_f64(x->data, x->dtype, x->numel, xd);
  pool_job j = {s, &g, xd, yd, iv ? iv->data : NULL};
  ox_parallel_for(ox_kctx_pool(ctx), x->dims[0] * x->dims[1], 1, pool_task, &j);
  ox_nn_store_f64(yd, y->dtype, y->numel, y->data);
  free(xd);
  free(yd);
  return OX_OK;
}

/* ---------------- MaxUnpool ---------------- */

static int unpool_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return pool_prepare_kind(info, state, e, POOL_MAX, false);
}

static int unpool_run(ox_kctx *ctx, void *st) {
  const pool_state *s = st;
  ox_value *x = ox_kctx_input(ctx, 0), *ind = ox_kctx_input(ctx, 1), *os = ox_kctx_input(ctx, 2);
  if (!x || !ind) return ox_kctx_fail(ctx, OX_ERUNTIME, "missing input X or I");
  if (!ox_nn_is_float_type(x->dtype) || ind->dtype != OX_INT64)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a float tensor and I int64");
  if (!ox_shape_equal(x->dims, x->rank, ind->dims, ind->rank))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "I must have the shape of X");
  if (x->rank < 3) return ox_kctx_fail(ctx, OX_ERUNTIME, "X must have rank >= 3");
  size_t nd = x->rank - 2;
  const ox_nn_attrs *a = &s->a;
  if (a->n_kernel != nd || (a->n_strides && a->n_strides != nd) ||
      (a->n_pads && a->n_pads != 2 * nd))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "kernel_shape/strides/pads do not match rank %zu",
                        x->rank);
  /* the indices address the shape the pooling input had (inferred from the
   * attributes); output_shape only enlarges or crops the placement */
  int64_t idims[OX_NN_MAXD + 2], ydims[OX_NN_MAXD + 2];
  idims[0] = x->dims[0];
  idims[1] = x->dims[1];
  for (size_t d = 0; d < nd; d++)
    idims[2 + d] = (x->dims[2 + d] - 1) * (a->n_strides ? a->strides[d] : 1) + a->kernel[d] -
                   (a->n_pads ? a->pads[d] + a->pads[nd + d] : 0);
  if (os) {
    if (os->dtype != OX_INT64 || os->numel != (int64_t)x->rank)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "output_shape must be int64 with %zu values", x->rank);
    memcpy(ydims, os->data, x->rank * sizeof(int64_t));
  } else {
    memcpy(ydims, idims, x->rank * sizeof(int64_t));
  }
  ox_value *y = ox_kctx_output_zero(ctx, 0, x->dtype, ydims, x->rank);
  if (!y) return OX_ERUNTIME;
  /* an empty output may still have huge dims (the products below would
   * overflow); a non-empty one bounds every partial product */
  if (y->numel == 0) return OX_OK;
  size_t es = ox_value_elem_size(x->dtype);
  int64_t itotal = 1;
  for (size_t d = 0; d < x->rank; d++) itotal *= idims[d];
  const int64_t *ip = ind->data;
  for (int64_t i = 0; i < x->numel; i++) {
    if (ip[i] < 0 || ip[i] >= itotal)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "index %lld out of range [0, %lld)", (long long)ip[i],
                          (long long)itotal);
    int64_t t = ip[i], lin = 0, mul = 1;
    bool inside = true;
    for (size_t d = x->rank; d-- > 0;) {
      int64_t c = t % idims[d];
      t /= idims[d];
      if (c >= ydims[d]) inside = false;
      lin += c * mul;
      mul *= ydims[d];
    }
    if (inside)
      memcpy((char *)y->data + (size_t)lin * es, (const char *)x->data + (size_t)i * es, es);
  }
  return OX_OK;
}

const ox_kernel_def ox_ops_pool[] = {
    {"", "AveragePool", 1, 1000, avg_prepare, pool_run, free},
    {"", "MaxPool", 1, 1000, max_prepare, pool_run, free},
    {"", "LpPool", 1, 1000, lp_prepare, pool_run, free},
    {"", "GlobalAveragePool", 1, 1000, gavg_prepare, pool_run, free},
    {"", "GlobalMaxPool", 1, 1000, gmax_prepare, pool_run, free},
    {"", "GlobalLpPool", 1, 1000, glp_prepare, pool_run, free},
    {"", "MaxUnpool", 9, 1000, unpool_prepare, unpool_run, free},
    {0},
};
