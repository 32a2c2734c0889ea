/* ops_signal.c - C generators for the window functions HannWindow,
 * HammingWindow and BlackmanWindow: the length is fixed by the (static)
 * output shape, the values follow the ONNX definitions (periodic: the
 * denominator is N, symmetric: N - 1); and DFT (forward, inverse, onesided
 * real-to-complex and its inverse) as a direct sum over a table of twiddle
 * factors written at compile time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static int gen_window(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  (void)in, (void)n_in, (void)n_out;
  const cg_val *Y = out[0];
  if (Y->rank != 1) return cg_fail(c, OX_EMODEL, "the output must be 1-D");
  long long N = (long long)Y->dims[0];
  bool periodic = ox_node_attr_int(n, "periodic", 1) != 0;
  long long den = periodic ? N : N - 1;
  const char *T = cg_ctype(Y->dtype), *op = n->op_type;
  /* the cosine terms a0 - a1 cos(2 pi k / den) + a2 cos(4 pi k / den) */
  const char *expr = strcmp(op, "HannWindow") == 0 ? "0.5 - 0.5 * cos(w)"
                     : strcmp(op, "HammingWindow") == 0
                         ? "25.0 / 46.0 - (1.0 - 25.0 / 46.0) * cos(w)"
                         : "0.42 - 0.5 * cos(w) + 0.08 * cos(2.0 * w)";
  cg_printf(c, "  for (long long k = 0; k < %lld; k++) {\n", N);
  if (den > 0)
    cg_printf(c, "    const double w = 6.283185307179586476925 * (double)k / %lld.0;\n", den);
  else
    cg_printf(c, "    const double w = 0.0; /* one point, symmetric */\n");
  cg_printf(c, "    Y0[k] = (%s)(%s);\n  }\n", T, expr);
  return OX_OK;
}

/* One DFT along axis ax: X [outer, n_in, inner, ci] -> Y [outer, n_out,
 * inner, co]. The twiddles cos/sin(2 pi t / n) are the tables tc/ts; the
 * sums run in acc type A. Inverse onesided (irfft): the n-point spectrum is
 * the m = n_in given bins and their conjugates mirrored, the output real. */
static void put_dft_axis(cg_ctx *c, const cg_val *X, const cg_val *Y, size_t ax, int64_t n,
                         bool inverse, bool onesided, const char *A, const char *ind) {
  int64_t outer = 1, inner = 1, n_in = X->dims[ax], n_out = Y->dims[ax];
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax + 1; d + 1 < X->rank; d++) inner *= X->dims[d];
  int64_t ci = X->dims[X->rank - 1], co = Y->dims[Y->rank - 1];
  bool irfft = inverse && onesided;
  /* the bins read: the input's, up to n (dft_length pads with zeros) */
  int64_t nj = irfft ? n : (n_in < n ? n_in : n);
  const char *T = cg_ctype(Y->dtype);
  cg_printf(c, "%sfor (long long o = 0; o < %lld; o++)\n", ind, (long long)outer);
  cg_printf(c, "%s  for (long long i = 0; i < %lld; i++)\n", ind, (long long)inner);
  cg_printf(c, "%s    for (long long k = 0; k < %lld; k++) {\n", ind, (long long)n_out);
  cg_printf(c, "%s      %s re = 0, im = 0;\n", ind, A);
  cg_printf(c, "%s      for (long long j = 0; j < %lld; j++) {\n", ind, (long long)nj);
  if (irfft) {
    /* bin j of the full spectrum: given (j < m) or the conjugate of n - j */
    cg_printf(c, "%s        const long long jj = j < %lld ? j : %lld - j;\n", ind, (long long)n_in,
              (long long)n);
    cg_printf(c, "%s        if (jj >= %lld) continue; /* past the given bins */\n", ind,
              (long long)n_in);
    cg_printf(c, "%s        const %s *x = X0 + ((o * %lld + jj) * %lld + i) * %lld;\n", ind, T,
              (long long)n_in, (long long)inner, (long long)ci);
    cg_printf(c, "%s        const %s xr = x[0], xi = j < %lld ? x[1] : -x[1];\n", ind, A,
              (long long)n_in);
  } else {
    cg_printf(c, "%s        const %s *x = X0 + ((o * %lld + j) * %lld + i) * %lld;\n", ind, T,
              (long long)n_in, (long long)inner, (long long)ci);
    cg_printf(c, "%s        const %s xr = x[0], xi = %s;\n", ind, A, ci == 2 ? "x[1]" : "0");
  }
  cg_printf(c, "%s        const long long t = (j * k) %% %lld;\n", ind, (long long)n);
  /* e^{-+2 pi i t/n} = cos -+ i sin */
  if (inverse)
    cg_printf(
        c, "%s        re += xr * tc[t] - xi * ts[t];\n%s        im += xr * ts[t] + xi * tc[t];\n",
        ind, ind);
  else
    cg_printf(
        c, "%s        re += xr * tc[t] + xi * ts[t];\n%s        im += xi * tc[t] - xr * ts[t];\n",
        ind, ind);
  cg_printf(c, "%s      }\n", ind);
  cg_printf(c, "%s      %s *y = Y0 + ((o * %lld + k) * %lld + i) * %lld;\n", ind, T,
            (long long)n_out, (long long)inner, (long long)co);
  const char *sc = inverse ? ox_arena_printf(c->a, " / %lld", (long long)n) : "";
  cg_printf(c, "%s      y[0] = (%s)(re%s);\n", ind, T, sc);
  if (co == 2)
    cg_printf(c, "%s      y[1] = (%s)(im%s);\n", ind, T, sc);
  else
    cg_printf(c, "%s      (void)im;\n", ind);
  cg_printf(c, "%s    }\n", ind);
}

/* ---- the inverse complex DFT of float32 data in single precision ----
 * The ONNX conformance data of this transform come from numpy's complex64
 * FFT (pocketfft in single precision), whose round-off near zero exceeds
 * the test tolerance of a double-precision sum. The runtime reproduces it
 * bit for bit (src/ops/onnx/fft32.c); so does the code written here: the
 * same mixed-radix plan (factors 8, 4, one 2 moved first, then 3, 5, 7, 11),
 * the same float twiddles (two double tables multiplied and rounded once,
 * computed here at compile time), the same butterflies in the same order of
 * float operations, the backward direction and numpy's float32 1/n. Only
 * plans of those radices are written: a length with a prime factor above 11
 * (the generic pass, or Bluestein's algorithm) is declined. The generated
 * code must then be compiled without floating-point contraction (the
 * default of -std=c99; -ffp-contract=fast would fuse products into FMAs). */
#define FFT_MAXF 64

/* The plan of length n: its factors; false when one is not 2, 3, 4, 5, 7, 8
 * or 11, or when the runtime would choose Bluestein's algorithm (n >= 50
 * with a prime factor above sqrt(n): only possible here with 11 and 7). */
static bool fft_plan(int64_t n, int64_t *f, size_t *nf) {
  size_t k = 0;
  int64_t len = n;
  while (len % 8 == 0 && k < FFT_MAXF) f[k++] = 8, len /= 8;
  while (len % 4 == 0 && k < FFT_MAXF) f[k++] = 4, len /= 4;
  if (len % 2 == 0 && k < FFT_MAXF) {
    len /= 2;
    f[k++] = 2;
    int64_t t = f[0];
    f[0] = f[k - 1], f[k - 1] = t;
  }
  int64_t big = 1;
  for (int64_t d = 3; d * d <= len; d += 2)
    while (len % d == 0 && k < FFT_MAXF) f[k++] = d, len /= d, big = d;
  if (len > 1 && k < FFT_MAXF) f[k++] = len, big = len;
  *nf = k;
  for (size_t i = 0; i < k; i++)
    if (f[i] != 2 && f[i] != 3 && f[i] != 4 && f[i] != 5 && f[i] != 7 && f[i] != 8 && f[i] != 11)
      return false;
  return !(n >= 50 && big * big > n);
}

/* e^{2 pi i x / n} from the octant of x (ang = pi / (4 n)), as the runtime's
 * twiddle tables compute it. */
static void fft_tw_calc(int64_t x, int64_t n, double ang, double *re, double *im) {
  x *= 8;
  double s = 1.0;
  if (x >= 4 * n) x = 8 * n - x, s = -1.0; /* the lower half: conjugate */
  if (x < 2 * n) {
    if (x < n)
      *re = cos((double)x * ang), *im = sin((double)x * ang);
    else
      *re = sin((double)(2 * n - x) * ang), *im = cos((double)(2 * n - x) * ang);
  } else {
    x -= 2 * n;
    if (x < n)
      *re = -sin((double)x * ang), *im = cos((double)x * ang);
    else
      *re = -cos((double)(2 * n - x) * ang), *im = sin((double)(2 * n - x) * ang);
  }
  *im *= s;
}

/* Twiddle idx of length n as the runtime rounds it: the product of an entry
 * of the fine table (idx & mask) and one of the coarse table (idx >> shift),
 * rounded to float; the upper half conjugated. */
static void fft_twiddle(int64_t n, int64_t idx, float *re, float *im) {
  const long double pi = 3.141592653589793238462643383279502884197L;
  double ang = (double)(0.25L * pi / (long double)n);
  int64_t nval = (n + 2) / 2, shift = 1;
  while ((1LL << shift) * (1LL << shift) < nval) shift++;
  int64_t mask = (1LL << shift) - 1;
  bool upper = 2 * idx > n;
  if (upper) idx = n - idx;
  double ar = 1.0, ai = 0.0, br = 1.0, bi = 0.0;
  if (idx & mask) fft_tw_calc(idx & mask, n, ang, &ar, &ai);
  if (idx >> shift) fft_tw_calc((idx >> shift) * (mask + 1), n, ang, &br, &bi);
  *re = (float)(ar * br - ai * bi);
  float i = (float)(ar * bi + ai * br);
  *im = upper ? -i : i;
}

static const char *flit(cg_ctx *c, float v) {
  char b[64];
  cg_float_lit(b, sizeof b, v, true);
  return ox_arena_printf(c->a, "%s", b);
}

/* The backward butterfly of radix p on x0 .. x<p-1> into y0 .. y<p-1>
 * (variables of type cf), the runtime's operations in its order. */
static void fft_butterfly(cg_ctx *c, int64_t p, const char *ind) {
  const char *H = flit(c, (float)0.707106781186547524400844362104849L);
#define ADD(d, a, b) cg_printf(c, "%scf " d " = {" a ".r + " b ".r, " a ".i + " b ".i};\n", ind)
#define SUB(d, a, b) cg_printf(c, "%scf " d " = {" a ".r - " b ".r, " a ".i - " b ".i};\n", ind)
#define ROT90(d, a) cg_printf(c, "%scf " d " = {-" a ".i, " a ".r};\n", ind)
  switch (p) {
    case 2:
      ADD("y0", "x0", "x1");
      SUB("y1", "x0", "x1");
      return;
    case 3:
      ADD("t1", "x1", "x2");
      SUB("t2", "x1", "x2");
      ADD("y0", "x0", "t1");
      cg_printf(c, "%scf ca = {x0.r + t1.r * -0.5f, x0.i + t1.i * -0.5f};\n", ind);
      cg_printf(c, "%scf cb = {-t2.i * %s, t2.r * %s};\n", ind,
                flit(c, (float)0.8660254037844386467637231707529362L),
                flit(c, (float)0.8660254037844386467637231707529362L));
      ADD("y1", "ca", "cb");
      SUB("y2", "ca", "cb");
      return;
    case 4:
      ADD("t2", "x0", "x2");
      SUB("t1", "x0", "x2");
      ADD("t3", "x1", "x3");
      SUB("d13", "x1", "x3");
      ROT90("t4", "d13");
      ADD("y0", "t2", "t3");
      ADD("y1", "t1", "t4");
      SUB("y2", "t2", "t3");
      SUB("y3", "t1", "t4");
      return;
    case 8:
      ADD("a1", "x1", "x5");
      SUB("a5", "x1", "x5");
      ADD("a3", "x3", "x7");
      SUB("a7", "x3", "x7");
      ADD("s13", "a1", "a3");
      SUB("d13", "a1", "a3");
      ROT90("b3", "d13");
      ROT90("b7", "a7");
      ADD("s57", "a5", "b7");
      SUB("d57", "a5", "b7");
      cg_printf(c, "%scf b5 = {%s * (s57.r - s57.i), %s * (s57.i + s57.r)};\n", ind, H, H);
      cg_printf(c, "%scf c7 = {%s * (-d57.r - d57.i), %s * (d57.r - d57.i)};\n", ind, H, H);
      ADD("a0", "x0", "x4");
      SUB("a4", "x0", "x4");
      ADD("a2", "x2", "x6");
      SUB("a6", "x2", "x6");
      ADD("e0", "a0", "a2");
      SUB("e2", "a0", "a2");
      ROT90("b6", "a6");
      ADD("e4", "a4", "b6");
      SUB("e6", "a4", "b6");
      ADD("y0", "e0", "s13");
      SUB("y4", "e0", "s13");
      ADD("y2", "e2", "b3");
      SUB("y6", "e2", "b3");
      ADD("y1", "e4", "b5");
      SUB("y5", "e4", "b5");
      ADD("y3", "e6", "c7");
      SUB("y7", "e6", "c7");
      return;
    default:
      break;
  }
#undef ADD
#undef SUB
#undef ROT90
  /* odd p (5, 7, 11): s_j = x_j + x_{p-j}, d_j = x_j - x_{p-j}; output u
   * sums cos(2 pi ju/p) s_j and +-i sin(2 pi ju/p) d_j left to right */
  static const long double c5[2] = {0.3090169943749474241022934171828191L,
                                    -0.8090169943749474241022934171828191L};
  static const long double s5[2] = {0.9510565162951535721164393333793821L,
                                    0.5877852522924731291687059546390728L};
  static const long double c7[3] = {0.6234898018587335305250048840042398L,
                                    -0.2225209339563144042889025644967948L,
                                    -0.9009688679024191262361023195074451L};
  static const long double s7[3] = {0.7818314824680298087084445266740578L,
                                    0.9749279121818236070181316829939312L,
                                    0.433883739117558120475768332848359L};
  static const long double c11[5] = {
      0.8412535328311811688618116489193677L, 0.4154150130018864255292741492296232L,
      -0.1423148382732851404437926686163697L, -0.6548607339452850640569250724662936L,
      -0.9594929736144973898903680570663277L};
  static const long double s11[5] = {
      0.5406408174555975821076359543186917L, 0.9096319953545183714117153830790285L,
      0.9898214418809327323760920377767188L, 0.7557495743542582837740358439723444L,
      0.2817325568414296977114179153466169L};
  const long double *cl = p == 5 ? c5 : p == 7 ? c7 : c11, *sl = p == 5 ? s5 : p == 7 ? s7 : s11;
  int64_t h = (p - 1) / 2;
  for (int64_t j = 1; j <= h; j++)
    cg_printf(c,
              "%scf s%lld = {x%lld.r + x%lld.r, x%lld.i + x%lld.i}, d%lld = {x%lld.r - x%lld.r, "
              "x%lld.i - x%lld.i};\n",
              ind, (long long)j, (long long)j, (long long)(p - j), (long long)j, (long long)(p - j),
              (long long)j, (long long)j, (long long)(p - j), (long long)j, (long long)(p - j));
  cg_printf(c, "%scf y0 = x0", ind);
  for (int64_t u = 1; u < p; u++) cg_printf(c, ", y%lld", (long long)u);
  cg_printf(c, ";\n");
  for (int64_t j = 1; j <= h; j++)
    cg_printf(c, "%sy0.r = y0.r + s%lld.r;\n%sy0.i = y0.i + s%lld.i;\n", ind, (long long)j, ind,
              (long long)j);
  for (int64_t u = 1; u <= h; u++) {
    cg_printf(c, "%s{\n%s  cf ca = x0;\n%s  float bi, br;\n", ind, ind, ind);
    for (int64_t j = 1; j <= h; j++) {
      int64_t m = (j * u) % p;
      const char *cr = flit(c, (float)cl[(m <= h ? m : p - m) - 1]);
      const char *si = flit(c, m <= h ? (float)sl[m - 1] : -(float)sl[p - m - 1]);
      cg_printf(c, "%s  ca.r = ca.r + %s * s%lld.r;\n%s  ca.i = ca.i + %s * s%lld.i;\n", ind, cr,
                (long long)j, ind, cr, (long long)j);
      if (j == 1)
        cg_printf(c, "%s  bi = %s * d1.r;\n%s  br = %s * d1.i;\n", ind, si, ind, si);
      else
        cg_printf(c, "%s  bi = bi + %s * d%lld.r;\n%s  br = br + %s * d%lld.i;\n", ind, si,
                  (long long)j, ind, si, (long long)j);
    }
    cg_printf(c, "%s  y%lld.r = ca.r + -br;\n%s  y%lld.i = ca.i + bi;\n", ind, (long long)u, ind,
              (long long)u);
    cg_printf(c, "%s  y%lld.r = ca.r - -br;\n%s  y%lld.i = ca.i - bi;\n%s}\n", ind,
              (long long)(p - u), ind, (long long)(p - u), ind);
  }
}

/* The inverse transform of n points along axis ax of complex float32 X
 * [outer, n_in, inner, 2] into Y [outer, n, inner, 2], one line at a time
 * through the passes of the plan f (nf factors), ping-ponging between the
 * local arrays fa and fb. */
static void put_fft32_axis(cg_ctx *c, const cg_val *X, size_t ax, int64_t n, const int64_t *f,
                           size_t nf, const char *ind) {
  int64_t outer = 1, inner = 1, n_in = X->dims[ax];
  for (size_t d = 0; d < ax; d++) outer *= X->dims[d];
  for (size_t d = ax + 1; d + 1 < X->rank; d++) inner *= X->dims[d];
  long long N = (long long)n, I = (long long)inner, take = (long long)(n_in < n ? n_in : n);
  cg_printf(c, "%s{\n%s  typedef struct { float r, i; } cf;\n", ind, ind);
  cg_printf(c, "%s  cf fa[%lld], fb[%lld];\n%s  (void)fb;\n", ind, N, N, ind);
  /* the twiddles of each pass: (p - 1)(ido - 1) values, WA(x, i) at x(ido - 1) + i - 1 */
  int64_t l1 = 1;
  for (size_t k = 0; k < nf; k++) {
    int64_t p = f[k], ido = n / (l1 * p);
    if (ido > 1) {
      cg_printf(c, "%s  static const cf w%zu[%lld] = {", ind, k, (long long)((p - 1) * (ido - 1)));
      for (int64_t j = 1; j < p; j++)
        for (int64_t i = 1; i < ido; i++) {
          float re, im;
          fft_twiddle(n, j * l1 * i, &re, &im);
          cg_printf(c, "%s{%s, %s}", j == 1 && i == 1 ? "" : ", ", flit(c, re), flit(c, im));
        }
      cg_printf(c, "};\n");
    }
    l1 *= p;
  }
  cg_printf(c, "%s  for (long long o = 0; o < %lld; o++)\n", ind, (long long)outer);
  cg_printf(c, "%s    for (long long q = 0; q < %lld; q++) {\n", ind, I);
  cg_printf(c, "%s      const float *xl = X0 + (o * %lld * %lld + q) * 2;\n", ind,
            (long long)n_in, I);
  cg_printf(c, "%s      float *yl = Y0 + (o * %lld * %lld + q) * 2;\n", ind, N, I);
  cg_printf(c, "%s      for (long long k = 0; k < %lld; k++) {\n", ind, N);
  cg_printf(c, "%s        fa[k].r = k < %lld ? xl[k * %lld] : 0.0f;\n", ind, take, 2 * I);
  cg_printf(c, "%s        fa[k].i = k < %lld ? xl[k * %lld + 1] : 0.0f;\n      }\n", ind, take,
            2 * I);
  const char *cur = "fa", *oth = "fb";
  char in2[64];
  snprintf(in2, sizeof in2, "%s          ", ind);
  l1 = 1;
  for (size_t k = 0; k < nf; k++) {
    long long p = (long long)f[k], ido = (long long)(n / (l1 * f[k])), L1 = (long long)l1;
    cg_printf(c, "%s      /* pass %zu: radix %lld, l1 %lld, ido %lld */\n", ind, k, p, L1, ido);
    cg_printf(c, "%s      for (long long k = 0; k < %lld; k++)\n", ind, L1);
    cg_printf(c, "%s        for (long long i = 0; i < %lld; i++) {\n", ind, ido);
    for (long long j = 0; j < p; j++)
      cg_printf(c, "%s          const cf x%lld = %s[i + %lld * (%lld + %lld * k)];\n", ind, j, cur,
                ido, j, p);
    fft_butterfly(c, p, in2);
    cg_printf(c, "%s          %s[i + %lld * k] = y0;\n", ind, oth, ido);
    for (long long u = 1; u < p; u++) {
      if (ido == 1) {
        cg_printf(c, "%s          %s[%lld * k + %lld] = y%lld;\n", ind, oth, ido, L1 * u * ido, u);
        continue;
      }
      cg_printf(c, "%s          if (i == 0) {\n", ind);
      cg_printf(c, "%s            %s[%lld * k + %lld] = y%lld;\n", ind, oth, ido, L1 * u * ido, u);
      cg_printf(c, "%s          } else {\n", ind);
      cg_printf(c, "%s            const cf w = w%zu[%lld + i - 1];\n", ind, k, (u - 1) * (ido - 1));
      cg_printf(c,
                "%s            %s[i + %lld * k + %lld] = (cf){y%lld.r * w.r - y%lld.i * w.i, "
                "y%lld.r * w.i + y%lld.i * w.r};\n",
                ind, oth, ido, L1 * u * ido, u, u, u, u);
      cg_printf(c, "%s          }\n", ind);
    }
    cg_printf(c, "%s        }\n", ind);
    const char *t = cur;
    cur = oth, oth = t;
    l1 *= f[k];
  }
  /* numpy scales the inverse by the float32 reciprocal of n */
  cg_printf(c, "%s      const float fct = 1.0f / %lld.0f;\n", ind, N);
  cg_printf(c, "%s      for (long long k = 0; k < %lld; k++) {\n", ind, N);
  cg_printf(c, "%s        yl[k * %lld] = %s[k].r * fct;\n", ind, 2 * I, cur);
  cg_printf(c, "%s        yl[k * %lld + 1] = %s[k].i * fct;\n      }\n", ind, 2 * I, cur);
  cg_printf(c, "%s    }\n%s}\n", ind, ind);
  (void)oth;
}

/* DFT (17, 20): X [..., n, 1 or 2]; dft_length (constant) and, from 20, the
 * axis as input 2 (a run-time axis becomes a switch over the axes whose
 * output shape is the static one); onesided forward keeps n/2 + 1 bins;
 * inverse divides by n; inverse onesided takes n/2 + 1 bins and gives the
 * real n-point signal. */
static int gen_dft(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank < 3 || Y->rank != X->rank || Y->dtype != X->dtype)
    return cg_fail(c, OX_EMODEL, "X must be [batch, ..., signal, 1 or 2]");
  int64_t ci = X->dims[X->rank - 1], co = Y->dims[Y->rank - 1];
  if ((ci != 1 && ci != 2) || (co != 1 && co != 2))
    return cg_fail(c, OX_EMODEL, "the last dim must be 1 (real) or 2 (complex)");
  bool inverse = ox_node_attr_int(n, "inverse", 0) != 0;
  bool onesided = ox_node_attr_int(n, "onesided", 0) != 0;
  /* the inverse complex transform of float32 data: numpy's single-
   * precision FFT, as the runtime (put_fft32_axis) */
  bool fft32 = inverse && !onesided && ci == 2 && X->dtype == OX_FLOAT;
  int64_t len = -1, axes[CG_MAX_RANK];
  size_t cnt = 0;
  if (n_in > 1 && in[1]) {
    if (!cg_const_ints(in[1], &len, 1, &cnt) || cnt != 1)
      return cg_fail(c, OX_EUNSUPPORTED, "dft_length must be a constant scalar");
  }
  int64_t r = (int64_t)X->rank;
  bool runtime_axis = false;
  if (c->opset >= 20) {
    axes[0] = -2;
    if (n_in > 2 && in[2] && !cg_const_ints(in[2], &axes[0], 1, &cnt)) runtime_axis = true;
  } else {
    axes[0] = ox_node_attr_int(n, "axis", 1);
  }
  /* the candidate axes: the given one, or every one a run-time axis may be */
  size_t n_ax = 0;
  int64_t cand[CG_MAX_RANK], nn[CG_MAX_RANK];
  for (int64_t a = runtime_axis ? 0 : axes[0]; runtime_axis ? a < r - 1 : a == axes[0]; a++) {
    int64_t ax = a < 0 ? a + r : a;
    if (ax < 0 || ax >= r - 1) {
      if (runtime_axis) continue;
      return cg_fail(c, OX_EMODEL, "axis %lld is outside [-%lld, %lld]", (long long)a, (long long)r,
                     (long long)(r - 2));
    }
    int64_t m = X->dims[ax];
    int64_t npts = len > 0 ? len : inverse && onesided ? 2 * (m - 1) : m;
    int64_t want = onesided && !inverse ? npts / 2 + 1 : npts;
    bool fits = npts > 0 && Y->dims[ax] == want && co == (inverse && onesided ? 1 : 2);
    for (size_t d = 0; d + 1 < X->rank; d++)
      if ((int64_t)d != ax && Y->dims[d] != X->dims[d]) fits = false;
    if (inverse && onesided && (ci != 2 || m < npts / 2 + 1)) fits = false;
    if (onesided && !inverse && ci != 1) fits = false; /* onesided needs a real input */
    if (!fits) {
      if (runtime_axis) continue;
      return cg_fail(c, OX_EUNSUPPORTED,
                     "the output %s does not fit a DFT of X %s along axis %lld (onesided %d, "
                     "inverse %d)",
                     cg_type_str(c, Y), cg_type_str(c, X), (long long)ax, onesided, inverse);
    }
    cand[n_ax] = ax;
    nn[n_ax++] = npts;
  }
  if (!n_ax)
    return cg_fail(c, OX_EUNSUPPORTED, "no axis gives the output shape %s from X %s",
                   cg_type_str(c, Y), cg_type_str(c, X));
  const char *A = c->o->float_only ? cg_ctype(X->dtype) : "double";
  bool af = c->o->float_only && X->dtype == OX_FLOAT;
  if (runtime_axis) {
    cg_printf(c, "  long long ax = (long long)X2[0];\n  if (ax < 0) ax += %lld;\n", (long long)r);
    cg_printf(c, "  memset(Y0, 0, %zu); /* an axis whose shape is not the static one */\n",
              Y->nbytes);
    cg_printf(c, "  switch (ax) {\n");
  }
  for (size_t k = 0; k < n_ax; k++) {
    int64_t np = nn[k];
    const char *ind = runtime_axis ? "      " : "  ";
    if (runtime_axis) cg_printf(c, "    case %lld: {\n", (long long)cand[k]);
    if (fft32) {
      int64_t f[FFT_MAXF];
      size_t nf = 0;
      if (!fft_plan(np, f, &nf))
        return cg_fail(c, OX_EUNSUPPORTED,
                       "an inverse complex DFT of float32 data of length %lld is not compiled "
                       "(numpy's single-precision FFT is written for lengths whose prime factors "
                       "are 2, 3, 5, 7 and 11, not where it would use Bluestein's algorithm: "
                       "length 50 or more with a prime factor above its square root)",
                       (long long)np);
      put_fft32_axis(c, X, (size_t)cand[k], np, f, nf, ind);
      if (runtime_axis) cg_printf(c, "      break;\n    }\n");
      continue;
    }
    /* the twiddle tables, exact to the last bit of the accumulation type */
    for (int tab = 0; tab < 2; tab++) {
      cg_printf(c, "%sstatic const %s %s[%lld] = {", ind, A, tab ? "ts" : "tc", (long long)np);
      for (int64_t t = 0; t < np; t++) {
        char lit[64];
        /* cos/sin of 2 pi t / n, exact at the quarter turns */
        double v;
        int64_t q = 4 * t;
        if (q % np == 0) {
          int64_t qq = (q / np) % 4;
          v = tab ? (qq == 1 ? 1.0 : qq == 3 ? -1.0 : 0.0) : (qq == 0 ? 1.0 : qq == 2 ? -1.0 : 0.0);
        } else {
          double w = 6.283185307179586476925 * (double)t / (double)np;
          v = tab ? sin(w) : cos(w);
        }
        cg_float_lit(lit, sizeof lit, af ? (double)(float)v : v, af);
        cg_printf(c, "%s%s%s", t ? "," : "", t % 4 ? " " : "\n  ", lit);
      }
      cg_printf(c, "};\n");
    }
    put_dft_axis(c, X, Y, (size_t)cand[k], np, inverse, onesided, A, ind);
    if (runtime_axis) cg_printf(c, "      break;\n    }\n");
  }
  if (runtime_axis) cg_printf(c, "    default:\n      break;\n  }\n");
  return OX_OK;
}

const cg_op ox_cg_ops_signal[] = {
    {"DFT", gen_dft},
    {"HannWindow", gen_window},
    {"HammingWindow", gen_window},
    {"BlackmanWindow", gen_window},
    {NULL, NULL},
};
