/* floatconv.c - float32 <-> float16, bfloat16, float8 kinds, float8e8m0,
 * float4e2m1. Rounding is round-to-nearest-even unless stated otherwise. */
#include "floatconv.h"

#include <math.h>
#include <string.h>

#include "cpu.h"

/* The float8 kinds by their TensorProto.DataType numbers, which onnx.proto
 * fixes (ox_dtype in ir/ir.h has the same values; base sits below ir). */
enum { F8_E4M3FNUZ = 18, F8_E5M2 = 19, F8_E5M2FNUZ = 20 };

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- float16 ---- */

float ox_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1F) return bits_f32(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {
    float v = (float)man * 5.9604644775390625e-8f; /* man * 2^-24 */
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t ox_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) /* inf or NaN */
    return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds to >= 65520: inf */
  if (a < 0x38800000u) {                                   /* below 2^-14: subnormal or zero */
    if (a < 0x33000000u) return sign;                      /* below 2^-25: rounds to 0 */
    uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24: value = m * 2^(e-150), unit 2^-24 */
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = a - 0x38000000u; /* rebias exponent 127 -> 15 */
  uint32_t q = r >> 13, rem = r & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

/* ---- bfloat16 ---- */

float ox_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t ox_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* The array forms are written without branches or calls so that the loops
 * vectorise; they give the same bits as the scalar functions. */
void ox_bf16_to_f32_n(const uint16_t *h, float *f, size_t n) {
  for (size_t i = 0; i < n; i++) f[i] = bits_f32((uint32_t)h[i] << 16);
}

void ox_f32_to_bf16_n(const float *f, uint16_t *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = f32_bits(f[i]);
    uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x40u;
    h[i] = (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded);
  }
}

/* ---- generic small float formats ---- */

typedef struct small_fmt {
  int man_bits; /* mantissa bits */
  int bias;     /* exponent bias */
  float max;    /* largest finite value */
  bool has_inf; /* E5M2 */
  bool uz;      /* FNUZ: no negative zero, NaN is 0x80 */
  uint8_t nan;  /* positive NaN code */
  int total;    /* total bits (8 or 4) */
} small_fmt;

static const small_fmt fmt_e4m3fn = {3, 7, 448.0f, false, false, 0x7F, 8};
static const small_fmt fmt_e4m3fnuz = {3, 8, 240.0f, false, true, 0x80, 8};
static const small_fmt fmt_e5m2 = {2, 15, 57344.0f, true, false, 0x7E, 8};
static const small_fmt fmt_e5m2fnuz = {2, 16, 57344.0f, false, true, 0x80, 8};
static const small_fmt fmt_e2m1 = {1, 1, 6.0f, false, false, 0, 4};

static const small_fmt *f8_fmt(int dtype) {
  switch (dtype) {
    case F8_E4M3FNUZ:
      return &fmt_e4m3fnuz;
    case F8_E5M2:
      return &fmt_e5m2;
    case F8_E5M2FNUZ:
      return &fmt_e5m2fnuz;
    default:
      return &fmt_e4m3fn;
  }
}

static float small_decode(uint8_t v, const small_fmt *f) {
  int ebits = f->total - 1 - f->man_bits;
  unsigned sign = (v >> (f->total - 1)) & 1u;
  unsigned exp = (v >> f->man_bits) & ((1u << ebits) - 1u);
  unsigned man = v & ((1u << f->man_bits) - 1u);
  if (f->total == 8) {
    if (f->uz && v == 0x80) return NAN;
    if (!f->uz && !f->has_inf && (v & 0x7F) == 0x7F) return sign ? -NAN : NAN;
    if (f->has_inf && exp == (1u << ebits) - 1u) {
      if (man) return sign ? -NAN : NAN;
      return sign ? -INFINITY : INFINITY;
    }
  }
  float r;
  if (exp == 0)
    r = ldexpf((float)man, 1 - f->bias - f->man_bits);
  else
    r = ldexpf((float)((1u << f->man_bits) | man), (int)exp - f->bias - f->man_bits);
  return sign ? -r : r;
}

/* Encodes |x| (finite, >= 0) rounded to nearest even; returns false when the
 * rounded value exceeds the format's maximum. */
static bool small_encode_abs(float a, const small_fmt *f, uint8_t *code) {
  int emin = 1 - f->bias;
  if (a == 0.0f) {
    *code = 0;
    return true;
  }
  int e;
  (void)frexpf(a, &e);
  e -= 1; /* a = 1.m * 2^e */
  if (e < emin) e = emin;
  int qexp = e - f->man_bits;             /* quantum 2^qexp */
  float n = nearbyintf(ldexpf(a, -qexp)); /* round to nearest even */
  float r = ldexpf(n, qexp);
  if (r > f->max) return false;
  if (r == 0.0f) {
    *code = 0;
    return true;
  }
  (void)frexpf(r, &e);
  e -= 1;
  unsigned c;
  if (e < emin) {
    c = (unsigned)ldexpf(r, f->man_bits - emin);
  } else {
    unsigned man = (unsigned)ldexpf(r, f->man_bits - e) - (1u << f->man_bits);
    c = ((unsigned)(e + f->bias) << f->man_bits) | man;
  }
  *code = (uint8_t)c;
  return true;
}

float ox_f8_to_f32(uint8_t v, int dtype) { return small_decode(v, f8_fmt(dtype)); }

uint8_t ox_f32_to_f8(float x, int dtype, bool saturate) {
  const small_fmt *f = f8_fmt(dtype);
  bool neg = signbit(x) != 0;
  uint8_t sbit = neg && !f->uz ? 0x80 : 0;
  if (isnan(x)) return f->uz ? 0x80 : (uint8_t)(f->nan | sbit);
  uint8_t code;
  if (isinf(x) || !small_encode_abs(fabsf(x), f, &code)) {
    if (saturate) {
      small_encode_abs(f->max, f, &code);
      return (uint8_t)(code | (neg ? 0x80 : 0));
    }
    if (f->has_inf) return (uint8_t)(0x7C | sbit);
    return f->uz ? 0x80 : (uint8_t)(f->nan | sbit);
  }
  if (code == 0) return sbit; /* zero keeps its sign except in FNUZ */
  return (uint8_t)(code | (neg ? 0x80 : 0));
}

/* ---- float8e8m0 ---- */

float ox_e8m0_to_f32(uint8_t v) {
  if (v == 0xFF) return NAN;
  if (v == 0) return bits_f32(0x00400000u); /* 2^-127 */
  return bits_f32((uint32_t)v << 23);
}

uint8_t ox_f32_to_e8m0(float f, bool saturate, int round_mode) {
  uint32_t u = f32_bits(f) & 0x7FFFFFFFu;
  if (u > 0x7F800000u) return 0xFF;
  if (u == 0x7F800000u) return saturate ? 0xFE : 0xFF;
  uint32_t exp = u >> 23, man = u & 0x7FFFFFu;
  if (exp == 0) {
    /* zero or float32 subnormal: 2^-127 is the smallest code */
    if (!saturate && man == 0) return 0xFF;
    if (round_mode == 0 && man > 0x400000u) return 1; /* up: above 2^-127 */
    if (round_mode == 2 && man >= 0x600000u) return 1;
    return 0;
  }
  if (round_mode == 0 && man)
    exp++;
  else if (round_mode == 2 && man >= 0x400000u)
    exp++;
  if (exp >= 0xFF) return saturate ? 0xFE : 0xFF;
  return (uint8_t)exp;
}

/* ---- float4e2m1 ---- */

float ox_f4_to_f32(uint8_t v) { return small_decode(v & 0x0F, &fmt_e2m1); }

uint8_t ox_f32_to_f4(float x) {
  bool neg = signbit(x) != 0;
  uint8_t sbit = neg ? 0x8 : 0;
  if (isnan(x)) return 0x8; /* no NaN in the format: the reference gives -0 */
  uint8_t code;
  if (isinf(x) || !small_encode_abs(fabsf(x), &fmt_e2m1, &code)) return (uint8_t)(0x7 | sbit);
  return (uint8_t)(code | sbit);
}

/* ---- arrays, with the F16C instructions when the CPU probe (cpu.h,
 * capped by ONNXC_ISA) has them ---- */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OX_HAVE_F16C_PATH 1

__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *h, float *f,
                                                                size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
  for (; i < n; i++) f[i] = ox_f16_to_f32(h[i]);
}

__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *f, uint16_t *h,
                                                                size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(h + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) h[i] = ox_f32_to_f16(f[i]);
}
#endif

void ox_f16_to_f32_n(const uint16_t *h, float *f, size_t n) {
#if defined(OX_HAVE_F16C_PATH)
  if (ox_cpu_get()->f16c) {
    f16_to_f32_f16c(h, f, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) f[i] = ox_f16_to_f32(h[i]);
}

void ox_f32_to_f16_n(const float *f, uint16_t *h, size_t n) {
#if defined(OX_HAVE_F16C_PATH)
  if (ox_cpu_get()->f16c) {
    f32_to_f16_f16c(f, h, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) h[i] = ox_f32_to_f16(f[i]);
}
