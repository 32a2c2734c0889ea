/* fft32.h - single-precision complex FFT with numpy's rounding.
 *
 * NumPy >= 2 transforms complex64 data in single precision with pocketfft:
 * a mixed-radix Cooley-Tukey plan (passes of 8, 4, 2, 3, 5, 7, 11 and a
 * generic odd prime) or, for lengths with a large prime factor where it is
 * cheaper, Bluestein's algorithm over such a plan. The ONNX conformance
 * data of complex DFTs were produced that way, so this engine performs the
 * same operations in the same order on floats (twiddles computed in double
 * and rounded once), which reproduces those results bit for bit. The
 * source file is compiled without floating-point contraction: an FMA would
 * round differently. */
#ifndef ONNXC_OPS_FFT32_H
#define ONNXC_OPS_FFT32_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ox_fft32 ox_fft32;

/* A plan for length n >= 1; NULL when out of memory. */
ox_fft32 *ox_fft32_new(size_t n);
void ox_fft32_free(ox_fft32 *p);
/* Floats of scratch ox_fft32_exec needs. */
size_t ox_fft32_scratch(const ox_fft32 *p);
/* Transforms c (n complex values, interleaved re/im) in place: forward
 * (e^{-2 pi i jk/n}) or backward (e^{+...}), then multiplies by fct. */
void ox_fft32_exec(const ox_fft32 *p, float *c, float fct, bool forward, float *scratch);

#endif
