/* ops_conv.c - C generators for convolution and pooling over 1 to 3
 * spatial dims (groups, pads, strides, dilations, auto_pad, ceil_mode),
 * the global pools and inference BatchNormalization. Every bound is a
 * literal, so the compiler sees fixed trip counts. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

typedef struct win {
  size_t r; /* spatial rank */
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} win;

/* Kernel, strides, dilations and the begin pads of a windowed op; the
 * output dims come from shape inference. */
static int window(cg_ctx *c, const ox_node *n, const cg_val *x, const cg_val *y,
                  const int64_t *kdims, win *w) {
  if (x->rank < 3 || x->rank > 5) return cg_fail(c, OX_EUNSUPPORTED, "only 1 to 3 spatial dims");
  w->r = x->rank - 2;
  size_t cnt;
  int64_t tmp[6];
  for (size_t i = 0; i < w->r; i++) {
    w->in[i] = x->dims[2 + i];
    w->out[i] = y->dims[2 + i];
    w->k[i] = kdims[i];
    w->s[i] = w->d[i] = 1;
    w->pb[i] = w->pe[i] = 0;
  }
  if (cg_attr_ints(n, "strides", tmp, 3, &cnt) && cnt == w->r) memcpy(w->s, tmp, cnt * 8);
  if (cg_attr_ints(n, "dilations", tmp, 3, &cnt) && cnt == w->r) memcpy(w->d, tmp, cnt * 8);
  const char *ap = ox_node_attr_str(n, "auto_pad", "NOTSET");
  if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
    for (size_t i = 0; i < w->r; i++) {
      int64_t total = (w->out[i] - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - w->in[i];
      if (total < 0) total = 0;
      w->pb[i] = ap[5] == 'U' ? total / 2 : total - total / 2;
      w->pe[i] = total - w->pb[i];
    }
  } else if (strcmp(ap, "VALID") != 0 && cg_attr_ints(n, "pads", tmp, 6, &cnt)) {
    if (cnt != 2 * w->r) return cg_fail(c, OX_EMODEL, "pads has %zu values", cnt);
    for (size_t i = 0; i < w->r; i++) {
      w->pb[i] = tmp[i];
      w->pe[i] = tmp[w->r + i];
    }
  }
  return OX_OK;
}

/* Opens loops o<i> over the output and, inside, k<i> over the window with
 * p<i> the input position; `valid` decides what happens at the edges. */
static void open_out(cg_ctx *c, const win *w, int ind) {
  for (size_t i = 0; i < w->r; i++)
    cg_printf(c, "%*sfor (long o%zu = 0; o%zu < %lld; o%zu++)\n", ind + 2 * (int)i, "", i, i,
              (long long)w->out[i], i);
}
static void open_win(cg_ctx *c, const win *w, int ind, bool skip) {
  for (size_t i = 0; i < w->r; i++) {
    int in = ind + 2 * (int)i;
    cg_printf(c, "%*sfor (long k%zu = 0; k%zu < %lld; k%zu++) {\n", in, "", i, i,
              (long long)w->k[i], i);
    cg_printf(c, "%*s  const long p%zu = o%zu * %lld - %lld + k%zu * %lld;\n", in, "", i, i,
              (long long)w->s[i], (long long)w->pb[i], i, (long long)w->d[i]);
    if (skip)
      cg_printf(c, "%*s  if (p%zu < 0 || p%zu >= %lld) continue;\n", in, "", i, i,
                (long long)w->in[i]);
  }
}
static void close_win(cg_ctx *c, const win *w, int ind) {
  for (size_t i = w->r; i-- > 0;) cg_printf(c, "%*s}\n", ind + 2 * (int)i, "");
}
/* "p0 * 7 + p1" */
static void flat(char *buf, size_t size, const char *v, const int64_t *dims, size_t r) {
  size_t k = 0;
  buf[0] = 0;
  for (size_t i = 0; i < r; i++) {
    int64_t st = 1;
    for (size_t j = i + 1; j < r; j++) st *= dims[j];
    k += (size_t)snprintf(buf + k, size - k, "%s%s%zu * %lld", i ? " + " : "", v, i, (long long)st);
  }
}

/* The general conv loops for output channels [m0, m1), MB (1 or 4) of them
 * per pass: each input value is loaded once for MB products. */
static void conv_pass(cg_ctx *c, win w, const char *T, bool bias, long long B, long long M,
                      long long Mg, long long C, long long Cg, int64_t isz, int64_t ksz,
                      int64_t osz, long long m0, long long m1, int MB) {
  cg_printf(c,
            "  for (size_t b = 0; b < %lld; b++)\n    for (size_t m = %lld; m < %lld; m += %d) {\n",
            B, m0, m1, MB);
  cg_printf(c, "      const size_t g = m / %lld;\n", Mg);
  for (int j = 0; j < MB; j++) {
    cg_printf(c, "      %s *y%d = Y0 + (b * %lld + m + %d) * %lld;\n", T, j, (long long)M, j,
              (long long)osz);
    cg_printf(c, "      for (size_t i = 0; i < %lld; i++) y%d[i] = %s%s;\n", (long long)osz, j,
              bias ? "X2[m + " : "0", bias ? (const char *[]){"0]", "1]", "2]", "3]"}[j] : "");
  }
  cg_printf(c, "      for (size_t ci = 0; ci < %lld; ci++) {\n", (long long)Cg);
  cg_printf(c, "        const %s *x = X0 + (b * %lld + g * %lld + ci) * %lld;\n", T, (long long)C,
            (long long)Cg, (long long)isz);
  for (int j = 0; j < MB; j++)
    cg_printf(c, "        const %s *wk%d = X1 + ((m + %d) * %lld + ci) * %lld;\n", T, j, j,
              (long long)Cg, (long long)ksz);
  /* the taps: k<i> with the output range [lo<i>, hi<i>) whose input
   * position o * s - pad + k * d lies inside the input */
  int ind = 8;
  for (size_t i = 0; i < w.r; i++, ind += 2) {
    long long s = w.s[i];
    cg_printf(c, "%*sfor (long k%zu = 0; k%zu < %lld; k%zu++) {\n", ind, "", i, i,
              (long long)w.k[i], i);
    cg_printf(c, "%*s  const long t%zu = %lld - k%zu * %lld, u%zu = %lld + t%zu;\n", ind, "", i,
              (long long)w.pb[i], i, (long long)w.d[i], i, (long long)(w.in[i] - 1), i);
    cg_printf(c, "%*s  const long lo%zu = t%zu > 0 ? (t%zu + %lld) / %lld : 0;\n", ind, "", i, i, i,
              s - 1, s);
    cg_printf(c,
              "%*s  const long hi%zu = u%zu < 0 ? 0 : (u%zu / %lld + 1 < %lld ? u%zu / %lld + 1 : "
              "%lld);\n",
              ind, "", i, i, i, s, (long long)w.out[i], i, s, (long long)w.out[i]);
  }
  char ko[160];
  flat(ko, sizeof ko, "k", w.k, w.r);
  for (int j = 0; j < MB; j++)
    cg_printf(c, "%*s  const %s wv%d = wk%d[%s];\n", ind - 2, "", T, j, j, ko);
  /* the output positions: outer dims give the row offsets xo and yo */
  int64_t ist[3], ost[3];
  for (size_t i = 0; i < w.r; i++) {
    ist[i] = ost[i] = 1;
    for (size_t j = i + 1; j < w.r; j++) ist[i] *= w.in[j], ost[i] *= w.out[j];
  }
  cg_printf(c, "%*s  const long xb = 0", ind - 2, "");
  for (size_t i = 0; i < w.r; i++)
    cg_printf(c, " + (k%zu * %lld - %lld) * %lld", i, (long long)w.d[i], (long long)w.pb[i],
              (long long)ist[i]);
  cg_printf(c, ";\n");
  for (size_t i = 0; i + 1 < w.r; i++, ind += 2)
    cg_printf(c, "%*sfor (long o%zu = lo%zu; o%zu < hi%zu; o%zu++)\n", ind, "", i, i, i, i, i);
  cg_printf(c, "%*s{\n%*s  const long xo = xb", ind, "", ind, "");
  for (size_t i = 0; i + 1 < w.r; i++)
    cg_printf(c, " + o%zu * %lld", i, (long long)(w.s[i] * ist[i]));
  cg_printf(c, ", yo = 0");
  for (size_t i = 0; i + 1 < w.r; i++) cg_printf(c, " + o%zu * %lld", i, (long long)ost[i]);
  size_t L = w.r - 1;
  cg_printf(c, ";\n%*s  for (long o%zu = lo%zu; o%zu < hi%zu; o%zu++) {\n", ind, "", L, L, L, L,
            L);
  cg_printf(c, "%*s    const %s xv = x[xo + o%zu * %lld];\n", ind, "", T, L, (long long)w.s[L]);
  for (int j = 0; j < MB; j++) cg_printf(c, "%*s    y%d[yo + o%zu] += wv%d * xv;\n", ind, "", j, L, j);
  cg_printf(c, "%*s  }\n%*s}\n", ind, "", ind, "");
  for (size_t i = w.r; i-- > 0;) cg_printf(c, "%*s}\n", 8 + 2 * (int)i, "");
  cg_printf(c, "      }\n    }\n");
}

/* Emits the copy of the window rows of channel x (ci of the group) into
 * the im2col rows of S: row (ci, tap) holds, for the output positions whose
 * first spatial index is in [r0, r0 + nb) (runtime variables, ncol = nb
 * times the other output dims), the input value under that tap, 0 in the
 * padding. Per tap and dim, [lo, hi) is the output range inside the input,
 * so the copy loops test nothing. */
static void im2col_rows(cg_ctx *c, const win *w, const char *T, long long ksz) {
  int ind = 8;
  for (size_t i = 0; i < w->r; i++, ind += 2) {
    long long s = w->s[i];
    cg_printf(c, "%*sfor (long k%zu = 0; k%zu < %lld; k%zu++) {\n", ind, "", i, i,
              (long long)w->k[i], i);
    cg_printf(c, "%*s  const long t%zu = %lld - k%zu * %lld, u%zu = %lld + t%zu;\n", ind, "", i,
              (long long)w->pb[i], i, (long long)w->d[i], i, (long long)(w->in[i] - 1), i);
    cg_printf(c, "%*s  long lo%zu = t%zu > 0 ? (t%zu + %lld) / %lld : 0;\n", ind, "", i, i, i, s - 1,
              s);
    cg_printf(c, "%*s  long hi%zu = u%zu < 0 ? 0 : (u%zu / %lld + 1 < %lld ? u%zu / %lld + 1 : %lld);\n",
              ind, "", i, i, i, s, (long long)w->out[i], i, s, (long long)w->out[i]);
    cg_printf(c, "%*s  if (lo%zu > %lld) lo%zu = %lld;\n%*s  if (hi%zu < lo%zu) hi%zu = lo%zu;\n", ind,
              "", i, (long long)w->out[i], i, (long long)w->out[i], ind, "", i, i, i, i);
  }
  char kf[160];
  flat(kf, sizeof kf, "k", w->k, w->r);
  cg_printf(c, "%*s  %s *r_ = S + (ci * %lld + %s) * ncol;\n", ind - 2, "", T, ksz, kf);
  cg_printf(c, "%*s  const %s *x_ = x;\n", ind - 2, "", T);
  int64_t ist[3], cst[3];
  for (size_t i = 0; i < w->r; i++) {
    ist[i] = cst[i] = 1;
    for (size_t j = i + 1; j < w->r; j++) ist[i] *= w->in[j], cst[i] *= w->out[j];
  }
  size_t L = w->r - 1;
  const char *rp = "r_", *xp = "x_";
  char a[32], e[32];
  for (size_t i = 0; i < L; i++, ind += 2) {
    snprintf(a, sizeof a, i ? "0" : "r0");
    if (i)
      snprintf(e, sizeof e, "%lld", (long long)w->out[i]);
    else
      snprintf(e, sizeof e, "r0 + nb");
    cg_printf(c, "%*sfor (long o%zu = %s; o%zu < %s; o%zu++) {\n", ind, "", i, a, i, e, i);
    cg_printf(c, "%*s  %s *rw%zu = %s + (o%zu - %s) * %lld;\n", ind, "", T, i, rp, i, a,
              (long long)cst[i]);
    cg_printf(c, "%*s  if (o%zu < lo%zu || o%zu >= hi%zu) {\n", ind, "", i, i, i, i);
    cg_printf(c, "%*s    for (long q = 0; q < %lld; q++) rw%zu[q] = 0;\n%*s    continue;\n%*s  }\n",
              ind, "", (long long)cst[i], i, ind, "", ind, "");
    cg_printf(c, "%*s  const %s *x%zu = %s + (o%zu * %lld - %lld + k%zu * %lld) * %lld;\n", ind, "",
              T, i, xp, i, (long long)w->s[i], (long long)w->pb[i], i, (long long)w->d[i],
              (long long)ist[i]);
    rp = ox_arena_printf(c->a, "rw%zu", i);
    xp = ox_arena_printf(c->a, "x%zu", i);
  }
  /* the last dim: zeros, the copy, zeros */
  if (L) {
    snprintf(a, sizeof a, "0");
    snprintf(e, sizeof e, "%lld", (long long)w->out[L]);
  } else {
    snprintf(a, sizeof a, "r0");
    snprintf(e, sizeof e, "r0 + nb");
  }
  cg_printf(c, "%*s{\n%*s  const long a_ = %s, e_ = %s;\n", ind, "", ind, "", a, e);
  cg_printf(c, "%*s  const long l_ = lo%zu < a_ ? a_ : lo%zu > e_ ? e_ : lo%zu;\n", ind, "", L, L, L);
  cg_printf(c, "%*s  const long h_ = hi%zu < l_ ? l_ : hi%zu > e_ ? e_ : hi%zu;\n", ind, "", L, L, L);
  cg_printf(c, "%*s  for (long o = a_; o < l_; o++) %s[o - a_] = 0;\n", ind, "", rp);
  cg_printf(c, "%*s  for (long o = l_; o < h_; o++) %s[o - a_] = %s[o * %lld - %lld + k%zu * %lld];\n",
            ind, "", rp, xp, (long long)w->s[L], (long long)w->pb[L], L, (long long)w->d[L]);
  cg_printf(c, "%*s  for (long o = h_; o < e_; o++) %s[o - a_] = 0;\n%*s}\n", ind, "", rp, ind, "");
  for (size_t i = L; i-- > 0;) cg_printf(c, "%*s}\n", 8 + 2 * (int)(w->r + i), "");
  for (size_t i = w->r; i-- > 0;) cg_printf(c, "%*s}\n", 8 + 2 * (int)i, "");
}

/* Conv as matrix products through the helper of cg_gemm.c: Y (Mg x
 * positions) = W (Mg x Cg.taps, as stored) x the im2col matrix (Cg.taps x
 * positions), built in an arena scratch by blocks of output rows (about 512
 * columns, so the scratch stays small); pointwise convolutions read the
 * input as that matrix. With fewer positions than a tile has columns, the
 * product runs transposed (positions x M, W transposed at compile time) so
 * that it vectorises over the output channels. Every output is bias + the
 * products in (channel, tap) order, the order of the direct loops, so the
 * results are the same bits. Returns OX_OK, or -1 when the direct loops
 * should be used (depthwise, inside control flow, Cortex-M: no scratch). */
static int conv_gemm(cg_ctx *c, const ox_node *n, cg_val **in, const win *w, long long G,
                     long long B, long long C, long long M, long long Cg, int64_t isz, int64_t ksz,
                     int64_t osz, bool pointwise) {
  (void)n;
  const cg_val *X = in[0];
  long long Mg = M / G, K = Cg * ksz, nr = (long long)cg_gemm_nr(c);
  bool bias = in[2] != NULL;
  if (c->o->target == OX_CG_CORTEXM || c->depth || (G > 1 && Mg < 4)) return -1;
  if (X->dtype != OX_FLOAT && X->dtype != OX_DOUBLE) return -1;
  /* the helper is written at the first call that uses it (unused, it
   * would be a warning) */
  const char *gemm = NULL, *T = cg_ctype(X->dtype);
  bool ok1d = w->r == 1 && Cg == 1 && w->d[0] == 1 && w->pb[0] == 0 &&
              (w->out[0] - 1) * w->s[0] + w->k[0] <= w->in[0];
  if (osz < nr && G == 1 && M >= 2 * osz && !pointwise && cg_transpose_const(c, in[1], M, K)) {
    /* transposed: positions x M = patches (positions x K) x W^T (K x M) */
    const char *S = NULL;
    if (!ok1d) {
      cg_val *sv = cg_scratch(c, X->dtype, K * osz);
      S = sv ? cg_ref(c, sv) : NULL;
      if (!S) return c->e->code ? c->e->code : ox_err_set(c->e, OX_ENOMEM, "out of memory");
    }
    if (!(gemm = cg_gemm_fn(c, X->dtype))) return ox_err_set(c->e, OX_ENOMEM, "out of memory");
    cg_printf(c, "  for (size_t b = 0; b < %lld; b++) {\n", B);
    if (ok1d) {
      cg_printf(c, "    %s(%lld, %lld, %lld, X0 + b * %lld, %lld, 1, X1, %lld, Y0 + b * %lld, 1, %lld, %s, %d);\n",
                gemm, (long long)osz, M, K, (long long)(C * isz), (long long)w->s[0], M,
                (long long)(M * osz),
                (long long)osz, bias ? "X2" : "X1", bias ? 2 : 0);
    } else {
      cg_printf(c, "    %s *S = %s;\n    const long r0 = 0, nb = %lld, ncol = %lld;\n", T, S,
                (long long)w->out[0], (long long)osz);
      cg_printf(c, "    for (size_t ci = 0; ci < %lld; ci++) {\n", Cg);
      cg_printf(c, "      const %s *x = X0 + (b * %lld + ci) * %lld;\n", T, C, (long long)isz);
      im2col_rows(c, w, T, ksz);
      cg_printf(c, "    }\n    (void)r0;\n");
      cg_printf(c, "    %s(%lld, %lld, %lld, S, 1, %lld, X1, %lld, Y0 + b * %lld, 1, %lld, %s, %d);\n",
                gemm, (long long)osz, M, K, (long long)osz, M, (long long)(M * osz),
                (long long)osz, bias ? "X2" : "X1", bias ? 2 : 0);
    }
    cg_printf(c, "  }\n");
    return OX_OK;
  }
  const char *bx = bias ? ox_arena_printf(c->a, "X2 + g * %lld", Mg) : "X1";
  if (!bx) return ox_err_set(c->e, OX_ENOMEM, "out of memory");
  if (pointwise) {
    if (!(gemm = cg_gemm_fn(c, X->dtype))) return ox_err_set(c->e, OX_ENOMEM, "out of memory");
    cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t g = 0; g < %lld; g++)\n", B,
              G);
    cg_printf(c,
              "      %s(%lld, %lld, %lld, X1 + g * %lld, %lld, 1, X0 + (b * %lld + g * %lld) * %lld, "
              "%lld, Y0 + (b * %lld + g * %lld) * %lld, %lld, 1, %s, %d);\n",
              gemm, Mg, (long long)osz, K, Mg * K, K, C, Cg, (long long)isz, (long long)isz, M, Mg,
              (long long)osz, (long long)osz, bx, bias ? 1 : 0);
    return OX_OK;
  }
  /* few products per output (one input channel): the direct loops are as
   * fast and need no scratch */
  if (K < 16) return -1;
  /* rows of output per block: about 512 columns, and a scratch no larger
   * than the node's input and output together (at least 8 KiB): so the
   * arena, which holds those two at this node, grows little (an MCU's RAM) */
  int64_t inner = osz / w->out[0], rows = 512 / inner, es = X->dtype == OX_FLOAT ? 4 : 8;
  int64_t budget = (isz * C + osz * M) * es, rb;
  if (budget < 8192) budget = 8192;
  rb = budget / (K * inner * es);
  if (rb < rows) rows = rb;
  if (rows < 1) rows = 1;
  if (rows > w->out[0]) rows = w->out[0];
  cg_val *sv = cg_scratch(c, X->dtype, K * rows * inner);
  const char *S = sv ? cg_ref(c, sv) : NULL;
  if (!sv) return -1;
  if (!S) return c->e->code ? c->e->code : ox_err_set(c->e, OX_ENOMEM, "out of memory");
  if (!(gemm = cg_gemm_fn(c, X->dtype))) return ox_err_set(c->e, OX_ENOMEM, "out of memory");
  cg_printf(c, "  %s *S = %s;\n", T, S);
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t g = 0; g < %lld; g++)\n", B, G);
  cg_printf(c, "      for (long r0 = 0; r0 < %lld; r0 += %lld) {\n", (long long)w->out[0],
            (long long)rows);
  cg_printf(c, "      const long nb = %lld - r0 < %lld ? %lld - r0 : %lld, ncol = nb * %lld;\n",
            (long long)w->out[0], (long long)rows, (long long)w->out[0], (long long)rows,
            (long long)inner);
  cg_printf(c, "      for (size_t ci = 0; ci < %lld; ci++) {\n", Cg);
  cg_printf(c, "        const %s *x = X0 + (b * %lld + g * %lld + ci) * %lld;\n", T, C, Cg,
            (long long)isz);
  im2col_rows(c, w, T, ksz);
  cg_printf(c, "      }\n");
  cg_printf(c,
            "      %s(%lld, (size_t)ncol, %lld, X1 + g * %lld, %lld, 1, S, (size_t)ncol, Y0 + (b * "
            "%lld + g * %lld) * %lld + r0 * %lld, %lld, 1, %s, %d);\n",
            gemm, Mg, K, Mg * K, K, M, Mg, (long long)osz, (long long)inner, (long long)osz,
            bx, bias ? 1 : 0);
  cg_printf(c, "    }\n");
  return OX_OK;
}

/* Conv as a sum of shifted, scaled input rows: for each output channel,
 * input channel and kernel tap, the output positions whose input position
 * is inside the input (a range computed once per tap, so no bounds check
 * runs in the inner loops) get w * x added, the innermost loop walking the
 * output row with unit stride (and the input with the conv's stride) so that
 * compilers vectorise it. The sum runs in the order of the direct form
 * (bias, then channel by channel, tap by tap), so results do not change.
 * Pointwise convolutions (1x1, stride 1, no pads) run over the whole map at
 * once with four output channels per pass, each input value loaded once for
 * four products (a 4 x N tile of the matrix product they are). */
static int gen_conv(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects X and W");
  if (cg_need_float(c, in[0])) return c->e->code;
  const cg_val *X = in[0], *W = in[1];
  if (W->rank != X->rank) return cg_fail(c, OX_EMODEL, "W rank differs from X rank");
  win w;
  int rc = window(c, n, X, out[0], W->dims + 2, &w);
  if (rc) return rc;
  int64_t G = ox_node_attr_int(n, "group", 1), C = X->dims[1], M = W->dims[0], Cg = W->dims[1];
  if (G < 1 || C != Cg * G || M % G)
    return cg_fail(c, OX_EMODEL, "group %lld does not fit C %lld, W %lld/%lld", (long long)G,
                   (long long)C, (long long)M, (long long)Cg);
  int64_t isz = 1, ksz = 1, osz = 1;
  bool pointwise = true;
  for (size_t i = 0; i < w.r; i++) {
    isz *= w.in[i], ksz *= w.k[i], osz *= w.out[i];
    if (w.k[i] != 1 || w.s[i] != 1 || w.pb[i] || w.pe[i] || w.in[i] != w.out[i]) pointwise = false;
  }
  const char *T = cg_ctype(X->dtype);
  bool bias = n_in > 2 && in[2];
  long long B = X->dims[0], Mg = M / G;
  rc = conv_gemm(c, n, in, &w, G, B, C, M, Cg, isz, ksz, osz, pointwise);
  if (rc >= 0) return rc;
  if (pointwise && Mg % 4 == 0) {
    cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n", B);
    cg_printf(c, "    for (size_t m = 0; m < %lld; m += 4) {\n", (long long)M);
    cg_printf(c, "      const size_t g = m / %lld;\n", Mg);
    cg_printf(c, "      %s *y0 = Y0 + (b * %lld + m) * %lld, *y1 = y0 + %lld, *y2 = y1 + %lld, "
                 "*y3 = y2 + %lld;\n",
              T, (long long)M, (long long)osz, (long long)osz, (long long)osz, (long long)osz);
    cg_printf(c, "      for (size_t i = 0; i < %lld; i++) {\n", (long long)osz);
    if (bias)
      cg_printf(c, "        y0[i] = X2[m];\n        y1[i] = X2[m + 1];\n        y2[i] = X2[m + 2];\n"
                   "        y3[i] = X2[m + 3];\n      }\n");
    else
      cg_printf(c, "        y0[i] = 0;\n        y1[i] = 0;\n        y2[i] = 0;\n        y3[i] = "
                   "0;\n      }\n");
    cg_printf(c, "      for (size_t ci = 0; ci < %lld; ci++) {\n", (long long)Cg);
    cg_printf(c, "        const %s *x = X0 + (b * %lld + g * %lld + ci) * %lld;\n", T,
              (long long)C, (long long)Cg, (long long)isz);
    cg_printf(c, "        const %s w0 = X1[m * %lld + ci], w1 = X1[(m + 1) * %lld + ci],\n", T,
              (long long)Cg, (long long)Cg);
    cg_printf(c, "                 w2 = X1[(m + 2) * %lld + ci], w3 = X1[(m + 3) * %lld + ci];\n",
              (long long)Cg, (long long)Cg);
    cg_printf(c, "        for (size_t i = 0; i < %lld; i++) {\n", (long long)osz);
    cg_printf(c, "          const %s xv = x[i];\n          y0[i] += w0 * xv;\n          y1[i] += "
                 "w1 * xv;\n          y2[i] += w2 * xv;\n          y3[i] += w3 * xv;\n",
              T);
    cg_printf(c, "        }\n      }\n    }\n");
    return OX_OK;
  }
  if (Mg % 4 == 0) {
    conv_pass(c, w, T, bias, B, M, Mg, C, Cg, isz, ksz, osz, 0, M, 4);
  } else if (G == 1 && M > 4) { /* four at a time, then the rest */
    conv_pass(c, w, T, bias, B, M, Mg, C, Cg, isz, ksz, osz, 0, M - M % 4, 4);
    conv_pass(c, w, T, bias, B, M, Mg, C, Cg, isz, ksz, osz, M - M % 4, M, 1);
  } else {
    conv_pass(c, w, T, bias, B, M, Mg, C, Cg, isz, ksz, osz, 0, M, 1);
  }
  return OX_OK;
}

static int gen_pool(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_in;
  const cg_val *X = in[0];
  bool mx = strcmp(n->op_type, "MaxPool") == 0, lp = strcmp(n->op_type, "LpPool") == 0;
  /* MaxPool also on int8 and uint8 (as the runtime): the maximum needs no arithmetic */
  bool byte = mx && (X->dtype == OX_INT8 || X->dtype == OX_UINT8);
  if (!byte && cg_need_float(c, in[0])) return c->e->code;
  /* MaxPool's Indices: the flat index in X of the first maximum of the
   * window (row-major, or column-major over the spatial dims with
   * storage_order 1), as the runtime; 0 for a window wholly in the padding */
  bool want_idx = mx && n_out > 1 && out[1];
  if (want_idx && out[1]->dtype != OX_INT64) return cg_fail(c, OX_EMODEL, "Indices must be int64");
  int64_t order = ox_node_attr_int(n, "storage_order", 0);
  int64_t ks[3];
  size_t cnt;
  if (!cg_attr_ints(n, "kernel_shape", ks, 3, &cnt) || cnt + 2 != X->rank)
    return cg_fail(c, OX_EMODEL, "kernel_shape missing or of the wrong length");
  win w;
  int rc = window(c, n, X, out[0], ks, &w);
  if (rc) return rc;
  /* count_include_pad counts the window's positions inside the padded
   * input [-pb, in + pe): with ceil_mode a last window may reach past it */
  bool incl = ox_node_attr_int(n, "count_include_pad", 0) != 0;
  int64_t isz = 1, osz = 1;
  for (size_t i = 0; i < w.r; i++) isz *= w.in[i], osz *= w.out[i];
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t bc = 0; bc < %lld; bc++) {\n", (long long)(X->dims[0] * X->dims[1]));
  cg_printf(c, "    const %s *x = X0 + bc * %lld;\n    %s *y = Y0 + bc * %lld;\n", T,
            (long long)isz, T, (long long)osz);
  open_out(c, &w, 4);
  int ind = 4 + 2 * (int)w.r;
  char po[160], oo[160];
  flat(po, sizeof po, "p", w.in, w.r);
  flat(oo, sizeof oo, "o", w.out, w.r);
  cg_printf(c, "%*s{\n%*s  %s acc = %s;\n%*s  long cnt = 0;\n", ind, "", ind, "", T,
            !mx ? "0" : X->dtype == OX_INT8 ? "INT8_MIN" : byte ? "0" : "-INFINITY", ind, "");
  if (want_idx) cg_printf(c, "%*s  long long best = -1;\n", ind, "");
  /* count_include_pad counts the window inside the padded input only */
  open_win(c, &w, ind + 2, !incl);
  int in2 = ind + 2 + 2 * (int)w.r;
  if (incl) {
    cg_printf(c, "%*sif (", in2, "");
    for (size_t i = 0; i < w.r; i++)
      cg_printf(c, "%sp%zu >= %lld", i ? " || " : "", i, (long long)(w.in[i] + w.pe[i]));
    cg_printf(c, ") continue;\n%*scnt++;\n%*sif (", in2, "", in2, "");
    for (size_t i = 0; i < w.r; i++)
      cg_printf(c, "%sp%zu < 0 || p%zu >= %lld", i ? " || " : "", i, i, (long long)w.in[i]);
    cg_printf(c, ") continue;\n");
  } else {
    cg_printf(c, "%*scnt++;\n", in2, "");
  }
  char p_lit[64];
  cg_float_lit(p_lit, sizeof p_lit, (double)ox_node_attr_int(n, "p", 2), X->dtype == OX_FLOAT);
  if (want_idx) {
    char lin[160];
    if (order == 1) { /* column-major: p0 + p1 * in0 + ... */
      size_t k = 0;
      int64_t st = 1;
      lin[0] = 0;
      for (size_t i = 0; i < w.r; i++) {
        k += (size_t)snprintf(lin + k, sizeof lin - k, "%sp%zu * %lld", i ? " + " : "", i,
                              (long long)st);
        st *= w.in[i];
      }
    } else {
      snprintf(lin, sizeof lin, "%s", po);
    }
    cg_printf(c, "%*sif (x[%s] > acc || best < 0) {\n%*s  acc = x[%s];\n%*s  best = %s;\n%*s}\n",
              in2, "", po, in2, "", po, in2, "", lin, in2, "");
  } else if (mx)
    cg_printf(c, "%*sif (x[%s] > acc) acc = x[%s];\n", in2, "", po, po);
  else if (lp)
    cg_printf(c, "%*sacc += %s(%s(x[%s]), %s);\n", in2, "", cg_mathfn(c, X->dtype, "pow"),
              cg_mathfn(c, X->dtype, "fabs"), po, p_lit);
  else
    cg_printf(c, "%*sacc += x[%s];\n", in2, "", po);
  close_win(c, &w, ind + 2);
  if (want_idx)
    cg_printf(c, "%*s  Y1[bc * %lld + %s] = best < 0 ? 0 : (int64_t)(bc * %lld) + best;\n", ind, "",
              (long long)osz, oo, (long long)isz);
  if (mx)
    cg_printf(c, "%*s  (void)cnt;\n%*s  y[%s] = acc;\n", ind, "", ind, "", oo);
  else if (lp)
    cg_printf(c, "%*s  (void)cnt;\n%*s  y[%s] = %s(acc, 1 / %s);\n", ind, "", ind, "", oo,
              cg_mathfn(c, X->dtype, "pow"), p_lit);
  else
    /* a window wholly in the padding (pads over the kernel) counts 0: 0/0
     * is NaN, as in the runtime and the ONNX reference */
    cg_printf(c, "%*s  y[%s] = acc / (%s)cnt;\n", ind, "", oo, T);
  cg_printf(c, "%*s}\n  }\n", ind, "");
  return OX_OK;
}

static int gen_global_pool(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)n_in, (void)n_out, (void)out;
  if (cg_need_float(c, in[0])) return c->e->code;
  const cg_val *X = in[0];
  if (X->rank < 2) return cg_fail(c, OX_EMODEL, "rank under 2");
  bool mx = strcmp(n->op_type, "GlobalMaxPool") == 0;
  int64_t sp = 1;
  for (size_t i = 2; i < X->rank; i++) sp *= X->dims[i];
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  for (size_t bc = 0; bc < %lld; bc++) {\n    %s acc = %s;\n",
            (long long)(X->dims[0] * X->dims[1]), T, mx ? "-INFINITY" : "0");
  cg_printf(c, "    for (size_t i = 0; i < %lld; i++) {\n      const %s v = X0[bc * %lld + i];\n",
            (long long)sp, T, (long long)sp);
  cg_printf(c, "      %s\n    }\n", mx ? "if (v > acc) acc = v;" : "acc += v;");
  if (mx)
    cg_printf(c, "    Y0[bc] = acc;\n  }\n");
  else
    cg_printf(c, "    Y0[bc] = acc / %lld;\n  }\n", (long long)sp);
  return OX_OK;
}

static int gen_batchnorm(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  if (n_in != 5) return cg_fail(c, OX_EMODEL, "expects 5 inputs");
  if (cg_need_float(c, in[0])) return c->e->code;
  const cg_val *X = in[0];
  int64_t C = X->rank > 1 ? X->dims[1] : 1, sp = 1;
  for (size_t i = 2; i < X->rank; i++) sp *= X->dims[i];
  char eps[64];
  cg_float_lit(eps, sizeof eps, ox_node_attr_float(n, "epsilon", 1e-5f), X->dtype == OX_FLOAT);
  const char *T = cg_ctype(X->dtype);
  /* training mode (the attribute from opset 14; before it, asking for the
   * running statistics), as the runtime: the batch's mean and biased
   * variance per channel, in double (float with --float-only); outputs 1
   * and 2 the running mean and variance, input * momentum + batch * (1 -
   * momentum); 3 and 4 (before opset 14) the batch's mean and variance */
  bool extra = false;
  for (size_t i = 1; i < n_out; i++) extra |= out[i] != NULL;
  bool training = c->opset >= 14 ? ox_node_attr_int(n, "training_mode", 0) != 0 : extra;
  if (extra && !training) return cg_fail(c, OX_EMODEL, "statistics outputs in inference mode");
  if (training) {
    if (c->opset < 9 && ox_node_attr_int(n, "spatial", 1) == 0)
      return cg_fail(c, OX_EUNSUPPORTED, "training with spatial=0");
    const char *A = c->o->float_only ? "float" : "double";
    char mom[64], one_m[64];
    double mo = ox_node_attr_float(n, "momentum", 0.9f);
    cg_float_lit(mom, sizeof mom, mo, c->o->float_only);
    cg_float_lit(one_m, sizeof one_m, 1.0 - mo, c->o->float_only);
    long long cnt = (long long)(X->dims[0] * sp);
    cg_printf(c, "  for (size_t ch = 0; ch < %lld; ch++) {\n    %s s = 0, v = 0;\n", (long long)C, A);
    cg_printf(c,
              "    for (size_t b = 0; b < %lld; b++)\n      for (size_t i = 0; i < %lld; i++) "
              "s += X0[(b * %lld + ch) * %lld + i];\n",
              (long long)X->dims[0], (long long)sp, (long long)C, (long long)sp);
    cg_printf(c, "    const %s mean = %s;\n", A, cnt ? ox_arena_printf(c->a, "s / %lld", cnt) : "0");
    cg_printf(c,
              "    for (size_t b = 0; b < %lld; b++)\n      for (size_t i = 0; i < %lld; i++) {\n"
              "        const %s d = X0[(b * %lld + ch) * %lld + i] - mean;\n        v += d * d;\n"
              "      }\n",
              (long long)X->dims[0], (long long)sp, A, (long long)C, (long long)sp);
    cg_printf(c, "    const %s var = %s;\n", A, cnt ? ox_arena_printf(c->a, "v / %lld", cnt) : "0");
    cg_printf(c, "    const %s sd = %s(var + %s);\n", A, c->o->float_only ? "sqrtf" : "sqrt", eps);
    cg_printf(c,
              "    for (size_t b = 0; b < %lld; b++)\n      for (size_t i = 0; i < %lld; i++) {\n"
              "        const size_t k = (b * %lld + ch) * %lld + i;\n"
              "        Y0[k] = (%s)(X1[ch] * ((X0[k] - mean) / sd) + X2[ch]);\n      }\n",
              (long long)X->dims[0], (long long)sp, (long long)C, (long long)sp, T);
    static const char *const what[5] = {NULL, "X3[ch] * %s + mean * %s", "X4[ch] * %s + var * %s",
                                        "mean", "var"};
    for (size_t o = 1; o < n_out && o < 5; o++) {
      if (!out[o]) continue;
      const char *e = ox_arena_printf(c->a, what[o], mom, one_m);
      cg_printf(c, "    Y%zu[ch] = (%s)(%s);\n", o, cg_ctype(out[o]->dtype), e ? e : "0");
    }
    cg_printf(c, "  }\n");
    return OX_OK;
  }
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t ch = 0; ch < %lld; ch++) {\n",
            (long long)X->dims[0], (long long)C);
  cg_printf(c, "      const %s sd = %s(X4[ch] + %s);\n", T, cg_mathfn(c, X->dtype, "sqrt"), eps);
  cg_printf(c, "      const size_t base = (b * %lld + ch) * %lld;\n", (long long)C, (long long)sp);
  cg_printf(c, "      for (size_t i = 0; i < %lld; i++)\n", (long long)sp);
  cg_printf(c, "        Y0[base + i] = X1[ch] * ((X0[base + i] - X3[ch]) / sd) + X2[ch];\n    }\n");
  (void)out;
  return OX_OK;
}

/* ConvTranspose as a scatter: each input element adds its products with
 * the kernel into the output window it maps to. Explicit pads, or those
 * that output_shape or auto_pad SAME_* imply for the static output. */
static int gen_conv_transpose(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                              size_t n_out) {
  (void)n_out;
  if (n_in < 2 || !in[0] || !in[1]) return cg_fail(c, OX_EMODEL, "expects X and W");
  if (cg_need_float(c, in[0])) return c->e->code;
  const cg_val *X = in[0], *W = in[1], *Y = out[0];
  if (W->rank != X->rank) return cg_fail(c, OX_EMODEL, "W rank differs from X rank");
  win w;
  /* window() reads strides, dilations and pads; in/out swap roles here */
  int rc = window(c, n, X, Y, W->dims + 2, &w);
  if (rc) return rc;
  const char *ap = ox_node_attr_str(n, "auto_pad", "NOTSET");
  if (ox_node_attr(n, "output_shape") || strcmp(ap, "SAME_UPPER") == 0 ||
      strcmp(ap, "SAME_LOWER") == 0) {
    /* the pads that give the output its (inferred) size, as the runtime
     * splits them: total = the full scatter's extent - the output's, its
     * floor half at the start for SAME_UPPER, at the end otherwise; a
     * negative total (an output larger than the scatter) pads with zeros */
    int64_t opad[3] = {0, 0, 0};
    size_t cnt;
    if (cg_attr_ints(n, "output_padding", opad, 3, &cnt) && cnt != w.r)
      return cg_fail(c, OX_EMODEL, "output_padding has %zu values", cnt);
    for (size_t i = 0; i < w.r; i++) {
      int64_t full = w.s[i] * (w.in[i] - 1) + opad[i] + (w.k[i] - 1) * w.d[i] + 1;
      int64_t total = full - w.out[i];
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor(total / 2) */
      w.pb[i] = strcmp(ap, "SAME_UPPER") == 0 ? half : total - half;
      w.pe[i] = total - w.pb[i];
    }
  }
  int64_t G = ox_node_attr_int(n, "group", 1), C = X->dims[1], Mg = W->dims[1], M = Mg * G;
  if (G < 1 || C % G || W->dims[0] != C || Y->dims[1] != M)
    return cg_fail(c, OX_EMODEL, "group %lld does not fit the channels", (long long)G);
  int64_t isz = 1, ksz = 1, osz = 1;
  for (size_t i = 0; i < w.r; i++) isz *= w.in[i], ksz *= w.k[i], osz *= w.out[i];
  const char *T = cg_ctype(X->dtype);
  char ko[160], io[160], oo[160];
  flat(ko, sizeof ko, "k", w.k, w.r);
  flat(io, sizeof io, "o", w.in, w.r); /* the loops over the input are o<i> */
  flat(oo, sizeof oo, "p", w.out, w.r);
  cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y0[i] = 0;\n", (long long)Y->numel);
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t ci = 0; ci < %lld; ci++) {\n",
            (long long)X->dims[0], (long long)C);
  cg_printf(c,
            "      const size_t g = ci / %lld;\n      const %s *x = X0 + (b * %lld + ci) * %lld;\n",
            (long long)(C / G), T, (long long)C, (long long)isz);
  win wi = w; /* loops over the input positions */
  memcpy(wi.out, w.in, sizeof w.in);
  open_out(c, &wi, 6);
  int ind = 6 + 2 * (int)w.r;
  cg_printf(c, "%*s{\n%*s  const %s xv = x[%s];\n", ind, "", ind, "", T, io);
  cg_printf(c, "%*s  for (size_t mo = 0; mo < %lld; mo++) {\n", ind, "", (long long)Mg);
  cg_printf(c, "%*s    const %s *wk = X1 + (ci * %lld + mo) * %lld;\n", ind, "", T, (long long)Mg,
            (long long)ksz);
  cg_printf(c, "%*s    %s *y = Y0 + (b * %lld + g * %lld + mo) * %lld;\n", ind, "", T, (long long)M,
            (long long)Mg, (long long)osz);
  win wo = w; /* p<i> = o<i> * s - pad + k<i> * d, checked against the output */
  memcpy(wo.in, w.out, sizeof w.out);
  open_win(c, &wo, ind + 4, true);
  cg_printf(c, "%*s  y[%s] += xv * wk[%s];\n", ind + 4 + 2 * (int)w.r, "", oo, ko);
  close_win(c, &wo, ind + 4);
  cg_printf(c, "%*s  }\n%*s}\n    }\n", ind, "", ind, "");
  if (n_in > 2 && in[2])
    cg_printf(c,
              "  for (size_t b = 0; b < %lld; b++)\n    for (size_t m = 0; m < %lld; m++)\n"
              "      for (size_t i = 0; i < %lld; i++) Y0[(b * %lld + m) * %lld + i] += X2[m];\n",
              (long long)X->dims[0], (long long)M, (long long)osz, (long long)M, (long long)osz);
  return OX_OK;
}

static int gen_depth_space(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (X->rank != 4) return cg_fail(c, OX_EUNSUPPORTED, "only 4-D inputs");
  int64_t bs = ox_node_attr_int(n, "blocksize", 0);
  if (bs < 1) return cg_fail(c, OX_EMODEL, "blocksize");
  bool d2s = strcmp(n->op_type, "DepthToSpace") == 0;
  bool crd = strcmp(ox_node_attr_str(n, "mode", "DCR"), "CRD") == 0;
  /* the small side (C' x H' x W') and the big one (C' bs bs x H/W), as one
   * index map: depth index of (c, i, j) */
  const cg_val *S = d2s ? Y : X; /* the spatial-large tensor */
  int64_t Cs = S->dims[1], H = S->dims[2], Wd = S->dims[3], Cd = Cs * bs * bs;
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++)\n    for (size_t ch = 0; ch < %lld; ch++)\n",
            (long long)S->dims[0], (long long)Cs);
  cg_printf(
      c, "      for (size_t h = 0; h < %lld; h++)\n        for (size_t w = 0; w < %lld; w++) {\n",
      (long long)H, (long long)Wd);
  cg_printf(c, "          const size_t i = h %% %lld, j = w %% %lld;\n", (long long)bs,
            (long long)bs);
  if (crd)
    cg_printf(c, "          const size_t dc = ch * %lld + i * %lld + j;\n", (long long)(bs * bs),
              (long long)bs);
  else
    cg_printf(c, "          const size_t dc = (i * %lld + j) * %lld + ch;\n", (long long)bs,
              (long long)Cs);
  cg_printf(c, "          const size_t big = ((b * %lld + ch) * %lld + h) * %lld + w;\n",
            (long long)Cs, (long long)H, (long long)Wd);
  cg_printf(
      c, "          const size_t small = ((b * %lld + dc) * %lld + h / %lld) * %lld + w / %lld;\n",
      (long long)Cd, (long long)(H / bs), (long long)bs, (long long)(Wd / bs), (long long)bs);
  cg_printf(c, "          %s;\n        }\n", d2s ? "Y0[big] = X0[small]" : "Y0[small] = X0[big]");
  return OX_OK;
}

const cg_op ox_cg_ops_conv[] = {
    {"ConvTranspose", gen_conv_transpose},
    {"DepthToSpace", gen_depth_space},
    {"SpaceToDepth", gen_depth_space},
    {"LpPool", gen_pool},
    {"Conv", gen_conv},
    {"MaxPool", gen_pool},
    {"AveragePool", gen_pool},
    {"GlobalAveragePool", gen_global_pool},
    {"GlobalMaxPool", gen_global_pool},
    {"BatchNormalization", gen_batchnorm},
    {NULL, NULL},
};
