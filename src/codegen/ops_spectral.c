/* ops_spectral.c - C generators for STFT and MelWeightMatrix (opset 17),
 * whose scalar inputs (frame step and length; the mel parameters) may be
 * run-time values as long as the output shape is static: the generated
 * code reads them, checks them against that shape and, since it cannot
 * fail, writes zeros when they do not fit (where the runtime,
 * src/ops/onnx/signal.c, reports an error). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* An int32 or int64 scalar input as a C expression. */
static bool int_scalar(const cg_val *v) {
  return v && v->numel == 1 && (v->dtype == OX_INT32 || v->dtype == OX_INT64);
}

/* Each frame of `frame_length` samples (times the window) transformed by a
 * direct DFT over a twiddle table computed once per call (exact at the
 * quarter turns), in double: bins k < L/2+1 (onesided) or < L. */
static int gen_stft(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  (void)n_out;
  const cg_val *X = in[0], *S = n_in > 1 ? in[1] : NULL, *Wn = n_in > 2 ? in[2] : NULL;
  const cg_val *FL = n_in > 3 ? in[3] : NULL, *Y = out[0];
  if (cg_need_float(c, X)) return c->e->code;
  if (X->rank != 3 || (X->dims[2] != 1 && X->dims[2] != 2))
    return cg_fail(c, OX_EMODEL, "signal must have shape [batch, length, 1 or 2]");
  if (!int_scalar(S)) return cg_fail(c, OX_EMODEL, "frame_step must be an int32 or int64 scalar");
  if (FL && !int_scalar(FL))
    return cg_fail(c, OX_EMODEL, "frame_length must be an int32 or int64 scalar");
  if (Wn && (Wn->rank != 1 || (Wn->dtype != OX_FLOAT && Wn->dtype != OX_DOUBLE)))
    return cg_fail(c, OX_EMODEL, "window must be a 1-D float tensor");
  if (!Wn && !FL) return cg_fail(c, OX_EMODEL, "either window or frame_length must be given");
  int64_t one = ox_node_attr_int(n, "onesided", 1);
  if (one != 0 && one != 1) return cg_fail(c, OX_EMODEL, "onesided must be 0 or 1");
  long long B = (long long)X->dims[0], slen = (long long)X->dims[1], ic = (long long)X->dims[2];
  if (one && ic == 2) return cg_fail(c, OX_EMODEL, "onesided output needs a real signal");
  if (Y->rank != 4 || Y->dims[0] != B || Y->dims[3] != 2)
    return cg_fail(c, OX_EMODEL, "output must be [batch, frames, bins, 2]");
  long long frames = (long long)Y->dims[1], bins = (long long)Y->dims[2];
  /* the longest frame the static bin count allows: the twiddle table's size */
  long long lmax = one ? 2 * bins - 1 : bins;
  if (Wn) lmax = (long long)Wn->dims[0];
  if (lmax < 1 || lmax > slen) return cg_fail(c, OX_EMODEL, "frame length does not fit the signal");
  const char *T = cg_ctype(X->dtype);
  cg_printf(c, "  const long long step = (long long)X1[0];\n");
  if (Wn)
    cg_printf(c, "  const long long L = %lld;\n", lmax);
  else
    cg_printf(c, "  const long long L = (long long)X3[0];\n");
  if (Wn && FL) cg_printf(c, "  if ((long long)X3[0] != L) goto bad;\n");
  cg_printf(c,
            "  if (step < 1 || L < 1 || L > %lld || (%lld - L) / step + 1 != %lld || %s != %lld) "
            "goto bad;\n",
            lmax, slen, frames, one ? "L / 2 + 1" : "L", bins);
  cg_printf(c, "  double tc[%lld], ts[%lld]; /* cos and sin of 2 pi j / L */\n", lmax, lmax);
  cg_printf(c, "  for (long long j = 0; j < L; j++) {\n");
  cg_printf(c, "    if (4 * j %% L == 0) {\n      const long long q = 4 * j / L;\n");
  cg_printf(c, "      tc[j] = q == 0 ? 1.0 : q == 2 ? -1.0 : 0.0;\n");
  cg_printf(c, "      ts[j] = q == 1 ? 1.0 : q == 3 ? -1.0 : 0.0;\n    } else {\n");
  cg_printf(c, "      const double a = 6.283185307179586 * (double)j / (double)L;\n");
  cg_printf(c, "      tc[j] = cos(a);\n      ts[j] = sin(a);\n    }\n  }\n");
  cg_printf(c, "  for (long long b = 0; b < %lld; b++)\n", B);
  cg_printf(c, "    for (long long f = 0; f < %lld; f++) {\n", frames);
  cg_printf(c, "      const %s *x = X0 + (b * %lld + f * step) * %lld;\n", T, slen, ic);
  cg_printf(c, "      %s *y = Y0 + (b * %lld + f) * %lld;\n", T, frames, bins * 2);
  cg_printf(c, "      for (long long k = 0; k < %lld; k++) {\n", bins);
  cg_printf(c, "        double re = 0.0, im = 0.0;\n        long long j = 0; /* k * t mod L */\n");
  cg_printf(c, "        for (long long t = 0; t < L; t++) {\n");
  cg_printf(c, "          const double w = %s;\n", Wn ? "(double)X2[t]" : "1.0");
  cg_printf(c, "          const double xr = (double)x[t * %lld] * w;\n", ic);
  if (ic == 2) {
    cg_printf(c, "          const double xi = (double)x[t * 2 + 1] * w;\n");
    cg_printf(
        c, "          re += xr * tc[j] + xi * ts[j];\n          im += xi * tc[j] - xr * ts[j];\n");
  } else {
    cg_printf(c, "          re += xr * tc[j];\n          im -= xr * ts[j];\n");
  }
  cg_printf(c, "          j += k;\n          if (j >= L) j %%= L;\n        }\n");
  cg_printf(c, "        y[2 * k] = (%s)re;\n        y[2 * k + 1] = (%s)im;\n      }\n    }\n", T,
            T);
  cg_printf(c, "  return;\nbad: /* refused by the runtime */\n  memset(Y0, 0, %zu);\n", Y->nbytes);
  return OX_OK;
}

/* Triangular filters on the mel scale (the runtime's mel_run): the edges in
 * single precision, mapped to spectrogram bins in double. */
static int gen_mel(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  (void)n, (void)n_out;
  const cg_val *Y = out[0];
  if (n_in < 5) return cg_fail(c, OX_EMODEL, "five inputs are required");
  for (size_t i = 0; i < 3; i++)
    if (!int_scalar(in[i])) return cg_fail(c, OX_EMODEL, "input %zu must be an integer scalar", i);
  for (size_t i = 3; i < 5; i++)
    if (!in[i] || in[i]->numel != 1 || (in[i]->dtype != OX_FLOAT && in[i]->dtype != OX_DOUBLE))
      return cg_fail(c, OX_EMODEL, "input %zu must be a float scalar", i);
  const char *T = cg_ctype(Y->dtype);
  const ox_dtype_info *ti = ox_dtype_get(Y->dtype);
  if (!T || !ti || (!ti->is_float && !ti->is_int) || cg_is_small_float(Y->dtype) || Y->rank != 2)
    return cg_fail(c, OX_EUNSUPPORTED, "output type is not compiled for this operator");
  long long nspec = (long long)Y->dims[0], nmel = (long long)Y->dims[1];
  cg_printf(c, "  memset(Y0, 0, %zu);\n", Y->nbytes);
  cg_printf(c,
            "  const long long nmel = (long long)X0[0], dftlen = (long long)X1[0], rate = (long "
            "long)X2[0];\n");
  cg_printf(c, "  const float lo = (float)X3[0], hi = (float)X4[0];\n");
  cg_printf(c, "  if (nmel != %lld || dftlen < 1 || dftlen / 2 + 1 != %lld || rate < 1 ||\n", nmel,
            nspec);
  cg_printf(
      c,
      "      !(lo >= 0 && hi > lo && isfinite(hi)))\n    return; /* refused by the runtime */\n");
  cg_printf(c, "  const float mlo = 2595.0f * log10f(1.0f + lo / 700.0f);\n");
  cg_printf(c, "  const float mhi = 2595.0f * log10f(1.0f + hi / 700.0f);\n");
  cg_printf(c, "  const float mstep = (mhi - mlo) / (float)%lld;\n", nmel + 2);
  cg_printf(c, "  long long edge[%lld];\n", nmel + 2);
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", nmel + 2);
  cg_printf(c, "    const double m = (double)i * (double)mstep + (double)mlo;\n");
  cg_printf(c, "    const double f = 700.0 * (pow(10.0, m / 2595.0) - 1.0);\n");
  cg_printf(c, "    const double bin = floor((double)(dftlen + 1) * f / (double)rate);\n");
  cg_printf(c, "    edge[i] = bin < 1.15e18 ? (long long)bin : 1LL << 60;\n  }\n");
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", nmel);
  cg_printf(c, "    const long long l = edge[i], c = edge[i + 1], h = edge[i + 2];\n");
  cg_printf(c, "    if (c == l) {\n      if (c >= 0 && c < %lld) Y0[c * %lld + i] = (%s)1;\n",
            nspec, nmel, T);
  cg_printf(c, "    } else {\n      for (long long k = l > 0 ? l : 0; k <= c && k < %lld; k++)\n",
            nspec);
  cg_printf(c, "        Y0[k * %lld + i] = (%s)((double)(k - l) / (double)(c - l));\n    }\n", nmel,
            T);
  cg_printf(c, "    if (h > c)\n      for (long long k = c > 0 ? c : 0; k < h && k < %lld; k++)\n",
            nspec);
  cg_printf(c, "        Y0[k * %lld + i] = (%s)((double)(h - k) / (double)(h - c));\n  }\n", nmel,
            T);
  return OX_OK;
}

const cg_op ox_cg_ops_spectral[] = {
    {"STFT", gen_stft},
    {"MelWeightMatrix", gen_mel},
    {NULL, NULL},
};
