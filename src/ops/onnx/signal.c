/* signal.c - DFT, STFT, HannWindow, HammingWindow, BlackmanWindow and
 * MelWeightMatrix.
 *
 * Transforms run in double precision: an iterative radix-2 FFT for
 * power-of-two lengths, Bluestein's chirp-z algorithm (a power-of-two
 * circular convolution) for the others, and a direct O(n^2) sum for short
 * odd lengths where it is both exact enough and cheaper. The inverse
 * transform is the forward one on conjugated data, scaled by 1/n.
 * Complex-to-complex DFTs of complex float32 data instead run in single
 * precision in fft32.c, with the operations and rounding of numpy >= 2 on
 * complex64 arrays (the generator of the conformance data: its inverse
 * cases differ from the exact transform by more than the test tolerance
 * near zero, and only the same single-precision evaluation reproduces
 * them).
 *
 * DFT (17: axis attribute, default 1; 20: axis input, default -2): the last
 * input dimension holds 1 (real) or 2 (complex) components. dft_length pads
 * with zeros or truncates along the axis. onesided=1 with inverse=0 is the
 * real-to-complex transform keeping floor(n/2)+1 bins; with inverse=1 it is
 * the complex-to-real transform: bins beyond the input are zero, the rest of
 * the spectrum is the Hermitian extension, and the real part of the inverse
 * is returned (default n = 2 * (bins - 1)). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fft32.h"
#include "../opcore.h"

#define SG_PI 3.14159265358979323846264338327950288

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *d = ox_dtype_get(dt);
  return d ? d->name : "?";
}

static bool sg_float_type(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* ------------------------------------------------------------------ */
/* FFT plan                                                             */

typedef struct fft_plan {
  size_t n;
  int kind;             /* FFT_POW2, FFT_DIRECT, FFT_BLUESTEIN */
  double *tw;           /* pow2: n/2 twiddles e^{-2 pi i j / n}; direct: n twiddles */
  size_t m;             /* Bluestein: power-of-two convolution length >= 2n - 1 */
  double *chirp;        /* Bluestein: n values e^{-i pi k^2 / n} */
  double *kern;         /* Bluestein: FFT of the conjugate chirp, m values */
  struct fft_plan *sub; /* Bluestein: the length-m plan */
} fft_plan;

enum { FFT_POW2, FFT_DIRECT, FFT_BLUESTEIN };

static void fft_free(fft_plan *p) {
  if (!p) return;
  free(p->tw);
  free(p->chirp);
  free(p->kern);
  fft_free(p->sub);
  free(p);
}

static bool is_pow2(size_t n) { return n && !(n & (n - 1)); }

static void fft_pow2(const fft_plan *p, double *x) {
  size_t n = p->n;
  /* bit reversal */
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double tr = x[2 * i], ti = x[2 * i + 1];
      x[2 * i] = x[2 * j];
      x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = tr;
      x[2 * j + 1] = ti;
    }
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    size_t half = len >> 1, step = n / len;
    for (size_t s = 0; s < n; s += len) {
      for (size_t k = 0; k < half; k++) {
        double wr = p->tw[2 * k * step], wi = p->tw[2 * k * step + 1];
        double *a = x + 2 * (s + k), *b = x + 2 * (s + k + half);
        double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br;
        b[1] = a[1] - bi;
        a[0] += br;
        a[1] += bi;
      }
    }
  }
}

static fft_plan *fft_new(size_t n);

/* e^{-2 pi i j / n} for j < count, angles reduced exactly. */
static double *twiddles(size_t n, size_t count) {
  double *t = malloc((count ? count : 1) * 2 * sizeof *t);
  if (!t) return NULL;
  for (size_t j = 0; j < count; j++) {
    double a = -2.0 * SG_PI * (double)j / (double)n;
    t[2 * j] = cos(a);
    t[2 * j + 1] = sin(a);
  }
  return t;
}

static fft_plan *fft_new(size_t n) {
  fft_plan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  if (n <= 1 || is_pow2(n)) {
    p->kind = FFT_POW2;
    p->tw = twiddles(n ? n : 1, n / 2 ? n / 2 : 1);
    if (!p->tw) goto fail;
    return p;
  }
  if (n <= 64) {
    p->kind = FFT_DIRECT;
    p->tw = twiddles(n, n);
    if (!p->tw) goto fail;
    return p;
  }
  p->kind = FFT_BLUESTEIN;
  size_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  p->m = m;
  p->chirp = malloc(2 * n * sizeof(double));
  p->kern = calloc(2 * m, sizeof(double));
  p->sub = fft_new(m);
  if (!p->chirp || !p->kern || !p->sub) goto fail;
  uint64_t n2 = 2 * (uint64_t)n;
  for (size_t k = 0; k < n; k++) {
    uint64_t kk = ((uint64_t)k * k) % n2; /* k^2 mod 2n keeps the angle exact */
    double a = -SG_PI * (double)kk / (double)n;
    p->chirp[2 * k] = cos(a);
    p->chirp[2 * k + 1] = sin(a);
  }
  /* kernel b_k = conj(chirp_|k|), circular over m */
  for (size_t k = 0; k < n; k++) {
    p->kern[2 * k] = p->chirp[2 * k];
    p->kern[2 * k + 1] = -p->chirp[2 * k + 1];
    if (k) {
      p->kern[2 * (m - k)] = p->chirp[2 * k];
      p->kern[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
    }
  }
  fft_pow2(p->sub, p->kern);
  return p;
fail:
  fft_free(p);
  return NULL;
}

/* Scratch doubles fft_exec needs for plan p. */
static size_t fft_scratch(const fft_plan *p) {
  return p->kind == FFT_BLUESTEIN ? 2 * p->m : p->kind == FFT_DIRECT ? 2 * p->n : 0;
}

/* Forward transform of x (n complex, interleaved) in place. */
static void fft_exec(const fft_plan *p, double *x, double *scratch) {
  size_t n = p->n;
  if (p->kind == FFT_POW2) {
    if (n > 1) fft_pow2(p, x);
    return;
  }
  if (p->kind == FFT_DIRECT) {
    for (size_t k = 0; k < n; k++) {
      double sr = 0, si = 0;
      size_t idx = 0;
      for (size_t j = 0; j < n; j++) {
        double wr = p->tw[2 * idx], wi = p->tw[2 * idx + 1];
        sr += x[2 * j] * wr - x[2 * j + 1] * wi;
        si += x[2 * j] * wi + x[2 * j + 1] * wr;
        idx += k;
        if (idx >= n) idx -= n;
      }
      scratch[2 * k] = sr;
      scratch[2 * k + 1] = si;
    }
    memcpy(x, scratch, 2 * n * sizeof(double));
    return;
  }
  size_t m = p->m;
  double *a = scratch;
  memset(a, 0, 2 * m * sizeof(double));
  for (size_t k = 0; k < n; k++) {
    double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
    a[2 * k] = x[2 * k] * cr - x[2 * k + 1] * ci;
    a[2 * k + 1] = x[2 * k] * ci + x[2 * k + 1] * cr;
  }
  fft_pow2(p->sub, a);
  for (size_t k = 0; k < m; k++) {
    double ar = a[2 * k], ai = a[2 * k + 1], br = p->kern[2 * k], bi = p->kern[2 * k + 1];
    /* multiply and conjugate: the inverse FFT is conj(FFT(conj(.))) */
    a[2 * k] = ar * br - ai * bi;
    a[2 * k + 1] = -(ar * bi + ai * br);
  }
  fft_pow2(p->sub, a);
  double inv = 1.0 / (double)m;
  for (size_t k = 0; k < n; k++) {
    double cr = a[2 * k] * inv, ci = -a[2 * k + 1] * inv;
    double wr = p->chirp[2 * k], wi = p->chirp[2 * k + 1];
    x[2 * k] = cr * wr - ci * wi;
    x[2 * k + 1] = cr * wi + ci * wr;
  }
}

/* ------------------------------------------------------------------ */
/* DFT                                                                  */

typedef struct dft_state {
  int64_t since;
  bool inverse, onesided;
  int64_t axis_attr;
} dft_state;

static int dft_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  dft_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->since = info->since_version;
  int64_t inv = ox_node_attr_int(info->node, "inverse", 0);
  int64_t one = ox_node_attr_int(info->node, "onesided", 0);
  if ((inv != 0 && inv != 1) || (one != 0 && one != 1))
    return oc_prep_fail(info, e, "inverse (%lld) and onesided (%lld) must be 0 or 1",
                        (long long)inv, (long long)one);
  s->inverse = inv;
  s->onesided = one;
  s->axis_attr = ox_node_attr_int(info->node, "axis", 1);
  *state = s;
  return OX_OK;
}

typedef struct dft_job {
  const fft_plan *plan;
  const ox_fft32 *plan32; /* complex float32 data: numpy's single-precision transform */
  const ox_value *x;
  ox_value *y;
  int64_t inner;   /* stride of the axis (elements of the [.., 1|2] grid) */
  int64_t in_len;  /* axis length of the input */
  int64_t out_len; /* axis length of the output */
  int64_t n;       /* transform length */
  int64_t in_comp; /* 1 or 2 */
  int mode;        /* DM_C2C, DM_R2C, DM_C2R */
  bool inverse;
  atomic_bool oom;
} dft_job;

enum { DM_C2C, DM_R2C, DM_C2R };

static void dft_chunk(void *arg, int64_t b, int64_t e) {
  dft_job *j = arg;
  size_t n = (size_t)j->n;
  size_t sc = fft_scratch(j->plan);
  double *buf = malloc((2 * n + sc + 1) * sizeof(double));
  if (!buf) {
    atomic_store(&j->oom, true);
    return;
  }
  double *scratch = buf + 2 * n;
  int32_t dt = j->x->dtype;
  int64_t inner = j->inner, ic = j->in_comp, oc = j->mode == DM_C2R ? 1 : 2;
  for (int64_t line = b; line < e; line++) {
    int64_t o = line / inner, i = line % inner;
    int64_t xbase = (o * j->in_len * inner + i) * ic;
    int64_t ybase = (o * j->out_len * inner + i) * oc;
    memset(buf, 0, 2 * n * sizeof(double));
    if (j->mode == DM_C2R) {
      /* Hermitian extension of the bins 0 .. n/2 present in the input */
      int64_t have = j->in_len;
      for (int64_t k = 0; k <= j->n / 2; k++) {
        if (k >= have) break;
        double re = oc_get(j->x->data, dt, xbase + k * inner * ic);
        double im = ic == 2 ? oc_get(j->x->data, dt, xbase + k * inner * ic + 1) : 0.0;
        buf[2 * k] = re;
        buf[2 * k + 1] = im;
        if (k > 0 && j->n - k != k) {
          buf[2 * (j->n - k)] = re;
          buf[2 * (j->n - k) + 1] = -im;
        }
      }
    } else {
      int64_t take = j->in_len < j->n ? j->in_len : j->n;
      for (int64_t k = 0; k < take; k++) {
        buf[2 * k] = oc_get(j->x->data, dt, xbase + k * inner * ic);
        if (ic == 2) buf[2 * k + 1] = oc_get(j->x->data, dt, xbase + k * inner * ic + 1);
      }
    }
    if (j->inverse)
      for (size_t k = 0; k < n; k++) buf[2 * k + 1] = -buf[2 * k + 1];
    fft_exec(j->plan, buf, scratch);
    double scale = j->inverse && n ? 1.0 / (double)n : 1.0, isign = j->inverse ? -1.0 : 1.0;
    for (int64_t k = 0; k < j->out_len; k++) {
      oc_set(j->y->data, dt, ybase + k * inner * oc, buf[2 * k] * scale);
      if (oc == 2)
        oc_set(j->y->data, dt, ybase + k * inner * oc + 1, isign * buf[2 * k + 1] * scale);
    }
  }
  free(buf);
}

/* Complex-to-complex transform of float32 data in single precision. */
static void dft_chunk32(void *arg, int64_t b, int64_t e) {
  dft_job *j = arg;
  size_t n = (size_t)j->n;
  float *buf = malloc((2 * n + ox_fft32_scratch(j->plan32) + 1) * sizeof(float));
  if (!buf) {
    atomic_store(&j->oom, true);
    return;
  }
  float *scratch = buf + 2 * n;
  const float *xd = j->x->data;
  float *yd = j->y->data;
  int64_t inner = j->inner;
  /* numpy scales the inverse by the float32 reciprocal of n */
  float fct = j->inverse ? 1.0f / (float)n : 1.0f;
  for (int64_t line = b; line < e; line++) {
    int64_t o = line / inner, i = line % inner;
    const float *xl = xd + (o * j->in_len * inner + i) * 2;
    float *yl = yd + (o * j->out_len * inner + i) * 2;
    int64_t take = j->in_len < j->n ? j->in_len : j->n;
    for (int64_t k = 0; k < take; k++) {
      buf[2 * k] = xl[k * inner * 2];
      buf[2 * k + 1] = xl[k * inner * 2 + 1];
    }
    memset(buf + 2 * take, 0, 2 * (n - (size_t)take) * sizeof(float));
    ox_fft32_exec(j->plan32, buf, fct, !j->inverse, scratch);
    for (int64_t k = 0; k < j->out_len; k++) {
      yl[k * inner * 2] = buf[2 * k];
      yl[k * inner * 2 + 1] = buf[2 * k + 1];
    }
  }
  free(buf);
}

/* Reads a scalar integer input (int32 or int64). */
static int sg_scalar_int(ox_kctx *ctx, const ox_value *v, const char *what, int64_t *out) {
  if (v->kind != OX_VAL_TENSOR || v->numel != 1 || (v->dtype != OX_INT32 && v->dtype != OX_INT64))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be an int32 or int64 scalar", what);
  *out = oc_get_i64(v->data, v->dtype, 0);
  return OX_OK;
}

static int dft_run(ox_kctx *ctx, void *state) {
  const dft_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  if (!sg_float_type(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input type %s is not supported", dt_name(x->dtype));
  size_t r = x->rank;
  if (r < 2 || r > OC_MAXRANK)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must have rank >= 2, got %zu", r);
  int64_t ic = x->dims[r - 1];
  if (ic != 1 && ic != 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "the last input dimension must be 1 (real) or 2 (complex), got %lld",
                        (long long)ic);
  int64_t axis = s->axis_attr;
  if (s->since >= 20) {
    axis = -2;
    ox_value *a = ox_kctx_input(ctx, 2);
    if (a && sg_scalar_int(ctx, a, "axis", &axis)) return OX_ERUNTIME;
  }
  int64_t rr = (int64_t)r;
  if (!((axis >= -rr && axis <= -2) || (axis >= 0 && axis <= rr - 2)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "axis %lld is outside [-%zu, -2] and [0, %zu]",
                        (long long)axis, r, r - 2);
  if (axis < 0) axis += rr;
  int64_t in_len = x->dims[axis];
  int mode = !s->onesided ? DM_C2C : s->inverse ? DM_C2R : DM_R2C;
  if (mode == DM_R2C && ic != 1)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "onesided forward DFT needs real input (last dim 1)");
  int64_t n = mode == DM_C2R ? 2 * (in_len - 1) : in_len;
  ox_value *dl = ox_kctx_input(ctx, 1);
  if (dl) {
    if (sg_scalar_int(ctx, dl, "dft_length", &n)) return OX_ERUNTIME;
  }
  if (n < 1 || n > ((int64_t)1 << 40))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "dft_length %lld must be positive", (long long)n);
  int64_t out_len = mode == DM_R2C ? n / 2 + 1 : n;
  int64_t od[OC_MAXRANK];
  memcpy(od, x->dims, r * sizeof(int64_t));
  od[axis] = out_len;
  od[r - 1] = mode == DM_C2R ? 1 : 2;
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, od, r);
  if (!y) return OX_ENOMEM;
  if (y->numel == 0) return OX_OK;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < rr - 1; d++) inner *= x->dims[d];
  /* Complex float32 data are transformed in single precision exactly as
   * numpy >= 2 transforms complex64 arrays (the conformance data come from
   * there); real input, other types and the one-sided modes in double. */
  bool single = x->dtype == OX_FLOAT && ic == 2 && mode == DM_C2C;
  fft_plan *p = single ? NULL : fft_new((size_t)n);
  ox_fft32 *p32 = single ? ox_fft32_new((size_t)n) : NULL;
  if (!p && !p32)
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory (FFT of length %lld)", (long long)n);
  dft_job j = {p, p32, x, y, inner, in_len, out_len, n, ic, mode, s->inverse, false};
  int64_t grain = 65536 / n + 1;
  ox_parallel_for(ox_kctx_pool(ctx), outer * inner, grain, single ? dft_chunk32 : dft_chunk, &j);
  fft_free(p);
  ox_fft32_free(p32);
  if (atomic_load(&j.oom)) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* STFT                                                                 */

typedef struct stft_state {
  bool onesided;
} stft_state;

static int stft_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  stft_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int64_t one = ox_node_attr_int(info->node, "onesided", 1);
  if (one != 0 && one != 1) return oc_prep_fail(info, e, "onesided must be 0 or 1");
  s->onesided = one;
  *state = s;
  return OX_OK;
}

static int stft_run(ox_kctx *ctx, void *state) {
  const stft_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0), *stepv = ox_kctx_input(ctx, 1);
  ox_value *win = ox_kctx_input(ctx, 2), *lenv = ox_kctx_input(ctx, 3);
  if (!x || x->kind != OX_VAL_TENSOR || !sg_float_type(x->dtype))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "signal must be a float tensor");
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "signal must have shape [batch, length, 1 or 2], got rank %zu", x->rank);
  if (!stepv) return ox_kctx_fail(ctx, OX_ERUNTIME, "frame_step is required");
  int64_t step = 0, flen = -1;
  if (sg_scalar_int(ctx, stepv, "frame_step", &step)) return OX_ERUNTIME;
  if (step < 1)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "frame_step %lld must be positive", (long long)step);
  if (lenv && sg_scalar_int(ctx, lenv, "frame_length", &flen)) return OX_ERUNTIME;
  if (win) {
    if (win->kind != OX_VAL_TENSOR || win->rank != 1 || !sg_float_type(win->dtype))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "window must be a 1-D float tensor");
    if (flen >= 0 && flen != win->dims[0])
      return ox_kctx_fail(ctx, OX_ERUNTIME, "frame_length %lld differs from the window length %lld",
                          (long long)flen, (long long)win->dims[0]);
    flen = win->dims[0];
  }
  if (flen < 0)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "either window or frame_length must be given");
  int64_t batch = x->dims[0], slen = x->dims[1], ic = x->dims[2];
  if (flen < 1 || flen > slen)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "frame_length %lld must lie in [1, %lld]",
                        (long long)flen, (long long)slen);
  if (s->onesided && ic == 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "onesided output needs a real signal");
  int64_t frames = (slen - flen) / step + 1;
  int64_t bins = s->onesided ? flen / 2 + 1 : flen;
  int64_t od[4] = {batch, frames, bins, 2};
  ox_value *y = ox_kctx_output(ctx, 0, x->dtype, od, 4);
  if (!y) return OX_ENOMEM;
  if (y->numel == 0) return OX_OK;
  fft_plan *p = fft_new((size_t)flen);
  double *buf = p ? malloc((2 * (size_t)flen + fft_scratch(p) + 1) * sizeof(double)) : NULL;
  if (!buf) {
    fft_free(p);
    return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  double *scratch = buf + 2 * flen;
  int64_t o = 0;
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t f = 0; f < frames; f++) {
      int64_t base = (b * slen + f * step) * ic;
      for (int64_t k = 0; k < flen; k++) {
        double w = win ? oc_get(win->data, win->dtype, k) : 1.0;
        buf[2 * k] = oc_get(x->data, x->dtype, base + k * ic) * w;
        buf[2 * k + 1] = ic == 2 ? oc_get(x->data, x->dtype, base + k * ic + 1) * w : 0.0;
      }
      fft_exec(p, buf, scratch);
      for (int64_t k = 0; k < bins; k++, o += 2) {
        oc_set(y->data, y->dtype, o, buf[2 * k]);
        oc_set(y->data, y->dtype, o + 1, buf[2 * k + 1]);
      }
    }
  }
  free(buf);
  fft_free(p);
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* Windows and MelWeightMatrix                                          */

/* uint8..uint64, int8..int64, float16, float, double, bfloat16 */
static bool sg_numeric_out(int32_t dt) {
  return sg_float_type(dt) ||
         (oc_is_int(dt) && dt != OX_INT4 && dt != OX_UINT4 && dt != OX_INT2 && dt != OX_UINT2);
}

enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN, WIN_MEL };

typedef struct win_state {
  int kind;
  bool periodic;
  int32_t dtype;
} win_state;

static int win_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const char *op = info->node->op_type;
  int kind = !strcmp(op, "HannWindow")       ? WIN_HANN
             : !strcmp(op, "HammingWindow")  ? WIN_HAMMING
             : !strcmp(op, "BlackmanWindow") ? WIN_BLACKMAN
                                             : WIN_MEL;
  win_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->kind = kind;
  s->periodic = ox_node_attr_int(info->node, "periodic", 1) != 0;
  s->dtype = (int32_t)ox_node_attr_int(info->node, "output_datatype", OX_FLOAT);
  if (!sg_numeric_out(s->dtype))
    return oc_prep_fail(info, e, "output_datatype %d (%s) is not a numeric type", (int)s->dtype,
                        dt_name(s->dtype));
  *state = s;
  return OX_OK;
}
static int win_run(ox_kctx *ctx, void *state) {
  const win_state *s = state;
  ox_value *sz = ox_kctx_input(ctx, 0);
  int64_t n;
  if (!sz || sg_scalar_int(ctx, sz, "size", &n)) return OX_ERUNTIME;
  if (n < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "size %lld is negative", (long long)n);
  ox_value *y = ox_kctx_output(ctx, 0, s->dtype, &n, 1);
  if (!y) return OX_ENOMEM;
  /* periodic: period n; symmetric: period n - 1 */
  double period = s->periodic ? (double)n : (double)(n - 1);
  for (int64_t k = 0; k < n; k++) {
    double t = period > 0 ? 2.0 * SG_PI * (double)k / period : 0.0, v;
    if (s->kind == WIN_HANN)
      v = 0.5 - 0.5 * cos(t);
    else if (s->kind == WIN_HAMMING)
      v = 25.0 / 46.0 - (21.0 / 46.0) * cos(t);
    else
      v = 0.42 - 0.5 * cos(t) + 0.08 * cos(2.0 * t);
    oc_set(y->data, s->dtype, k, v);
  }
  return OX_OK;
}

/* Triangular filters on the mel scale mel(f) = 2595 log10(1 + f / 700):
 * num_mel_bins + 2 edges spaced by (mel_hi - mel_lo) / (num_mel_bins + 2),
 * mapped to spectrogram bins floor((dft_length + 1) * f / sample_rate);
 * filter i rises from edge i to edge i+1 and falls to edge i+2 (peak 1). */
static int mel_run(ox_kctx *ctx, void *state) {
  const win_state *s = state;
  int64_t nmel = 0, dftlen = 0, rate = 0;
  ox_value *v[5];
  for (size_t i = 0; i < 5; i++)
    if (!(v[i] = ox_kctx_input(ctx, i)))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "input %zu is required", i);
  if (sg_scalar_int(ctx, v[0], "num_mel_bins", &nmel) ||
      sg_scalar_int(ctx, v[1], "dft_length", &dftlen) ||
      sg_scalar_int(ctx, v[2], "sample_rate", &rate))
    return OX_ERUNTIME;
  for (size_t i = 3; i < 5; i++)
    if (v[i]->kind != OX_VAL_TENSOR || v[i]->numel != 1 || !sg_float_type(v[i]->dtype))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "%s must be a float scalar",
                          i == 3 ? "lower_edge_hertz" : "upper_edge_hertz");
  if (nmel < 1 || dftlen < 1 || rate < 1 || nmel > ((int64_t)1 << 24) ||
      dftlen > ((int64_t)1 << 40))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "num_mel_bins (%lld), dft_length (%lld) and sample_rate (%lld) must be "
                        "positive",
                        (long long)nmel, (long long)dftlen, (long long)rate);
  float lo = (float)oc_get(v[3]->data, v[3]->dtype, 0);
  float hi = (float)oc_get(v[4]->data, v[4]->dtype, 0);
  if (!(lo >= 0 && hi > lo && isfinite(hi)))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "need 0 <= lower_edge_hertz (%g) < upper_edge_hertz (%g)",
                        (double)lo, (double)hi);
  int64_t nspec = dftlen / 2 + 1;
  int64_t od[2] = {nspec, nmel};
  ox_value *y = ox_kctx_output_zero(ctx, 0, s->dtype, od, 2);
  if (!y) return OX_ENOMEM;
  /* the mel edges are computed in single precision, the bins in double */
  float mlo = 2595.0f * log10f(1.0f + lo / 700.0f);
  float mhi = 2595.0f * log10f(1.0f + hi / 700.0f);
  float mstep = (mhi - mlo) / (float)(nmel + 2);
  int64_t *edge = malloc((size_t)(nmel + 2) * sizeof *edge);
  if (!edge) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < nmel + 2; i++) {
    double m = (double)i * (double)mstep + (double)mlo;
    double f = 700.0 * (pow(10.0, m / 2595.0) - 1.0);
    /* an edge far past the spectrum (a huge upper_edge_hertz) is kept at
     * 2^60: the weights stay those of the formula within double precision */
    double bin = floor((double)(dftlen + 1) * f / (double)rate);
    edge[i] = bin < 1.15e18 ? (int64_t)bin : (int64_t)1 << 60;
  }
  for (int64_t i = 0; i < nmel; i++) {
    int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
    if (c == l) {
      if (c >= 0 && c < nspec) oc_set(y->data, s->dtype, c * nmel + i, 1.0);
    } else {
      for (int64_t k = l > 0 ? l : 0; k <= c && k < nspec; k++)
        oc_set(y->data, s->dtype, k * nmel + i, (double)(k - l) / (double)(c - l));
    }
    if (h > c)
      for (int64_t k = c > 0 ? c : 0; k < h && k < nspec; k++)
        oc_set(y->data, s->dtype, k * nmel + i, (double)(h - k) / (double)(h - c));
  }
  free(edge);
  return OX_OK;
}

const ox_kernel_def ox_ops_signal[] = {
    {"", "DFT", 17, 19, dft_prepare, dft_run, NULL},
    {"", "DFT", 20, 1000, dft_prepare, dft_run, NULL},
    {"", "STFT", 17, 1000, stft_prepare, stft_run, NULL},
    {"", "HannWindow", 17, 1000, win_prepare, win_run, NULL},
    {"", "HammingWindow", 17, 1000, win_prepare, win_run, NULL},
    {"", "BlackmanWindow", 17, 1000, win_prepare, win_run, NULL},
    {"", "MelWeightMatrix", 17, 1000, win_prepare, mel_run, NULL},
    {0},
};
