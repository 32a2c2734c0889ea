/* emit_types.c - the element types that C has no arithmetic type for:
 * float16 and bfloat16 (kept as uint16_t bits) and the four float8 kinds
 * (uint8_t bits). Generators load them as float and store float results
 * back through static inline helpers that this file writes into the
 * generated source, only those a model needs, under the model's prefix (so
 * that several generated files still build as one unit). The rounding is
 * ONNX's (Operators.md, Cast): to nearest, ties to even; float8 saturates
 * or gives NaN/inf as the `saturate` attribute says. The helpers use only
 * integer operations and memcpy, so they need no libm. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

bool cg_is_small_float(int32_t dt) {
  return dt == OX_FLOAT16 || dt == OX_BFLOAT16 || dt == OX_FLOAT8E8M0 ||
         (dt >= OX_FLOAT8E4M3FN && dt <= OX_FLOAT8E5M2FNUZ);
}

/* The parameters of a float8 kind for the generic helpers: mantissa bits,
 * exponent bias, largest finite code, positive NaN code, kind (0: E4M3FN,
 * NaN is S.1111.111, no inf; 1: FNUZ, NaN is 0x80, no inf, no -0; 2: E5M2,
 * IEEE-like with inf). */
typedef struct f8_kind {
  int32_t dt;
  unsigned man, bias, maxc, nanc, kind;
} f8_kind;

static const f8_kind f8_kinds[] = {
    {OX_FLOAT8E4M3FN, 3, 7, 0x7E, 0x7F, 0},   /* max 448 */
    {OX_FLOAT8E4M3FNUZ, 3, 8, 0x7F, 0x80, 1}, /* max 240 */
    {OX_FLOAT8E5M2, 2, 15, 0x7B, 0x7E, 2},    /* max 57344; NaN 0x7E as ONNX writes it */
    {OX_FLOAT8E5M2FNUZ, 2, 16, 0x7F, 0x80, 1},
};

static const f8_kind *f8_of(int32_t dt) {
  for (size_t i = 0; i < sizeof f8_kinds / sizeof f8_kinds[0]; i++)
    if (f8_kinds[i].dt == dt) return &f8_kinds[i];
  return NULL;
}

const char *cg_load(cg_ctx *c, int32_t dt, const char *e) {
  const char *P = c->prefix;
  if (dt == OX_FLOAT16) {
    c->conv_used |= CG_CONV_F16;
    return ox_arena_printf(c->a, "%s_f16_f32(%s)", P, e);
  }
  if (dt == OX_BFLOAT16) {
    c->conv_used |= CG_CONV_BF16;
    return ox_arena_printf(c->a, "%s_bf16_f32(%s)", P, e);
  }
  const f8_kind *k = f8_of(dt);
  if (k) {
    c->conv_used |= CG_CONV_F8;
    return ox_arena_printf(c->a, "%s_f8_f32(%s, %uu, %uu, %uu)", P, e, k->man, k->bias, k->kind);
  }
  if (dt == OX_FLOAT8E8M0) {
    c->conv_used |= CG_CONV_E8M0;
    return ox_arena_printf(c->a, "%s_e8m0_f32(%s)", P, e);
  }
  return ox_arena_printf(c->a, "(float)(%s)", e);
}

const char *cg_store(cg_ctx *c, int32_t dt, const char *e, bool saturate) {
  const char *P = c->prefix;
  if (dt == OX_FLOAT16) {
    c->conv_used |= CG_CONV_F16 << 8;
    return ox_arena_printf(c->a, "%s_f32_f16(%s)", P, e);
  }
  if (dt == OX_BFLOAT16) {
    c->conv_used |= CG_CONV_BF16 << 8;
    return ox_arena_printf(c->a, "%s_f32_bf16(%s)", P, e);
  }
  const f8_kind *k = f8_of(dt);
  if (k) {
    c->conv_used |= CG_CONV_F8 << 8;
    return ox_arena_printf(c->a, "%s_f32_f8(%s, %uu, %uu, 0x%02Xu, 0x%02Xu, %uu, %du)", P, e,
                           k->man, k->bias, k->maxc, k->nanc, k->kind, saturate ? 1 : 0);
  }
  if (dt == OX_FLOAT8E8M0) return cg_store_e8m0(c, e, saturate, 0);
  if (dt == OX_BOOL) return ox_arena_printf(c->a, "(uint8_t)((%s) != 0)", e);
  return ox_arena_printf(c->a, "(%s)(%s)", cg_ctype(dt), e);
}

const char *cg_store_e8m0(cg_ctx *c, const char *e, bool saturate, int round_mode) {
  c->conv_used |= CG_CONV_E8M0 << 8;
  return ox_arena_printf(c->a, "%s_f32_e8m0(%s, %du, %du)", c->prefix, e, saturate ? 1 : 0,
                         round_mode);
}

/* The helpers' texts; "@" stands for the prefix. */
static const char f16_ld[] =
    "/* float16 <-> float: exact one way, rounded to nearest even the other */\n"
    "static inline float @_f16_f32(uint16_t h) {\n"
    "  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, u;\n"
    "  float f;\n"
    "  if (e == 0) { /* zero or subnormal: m * 2^-24 */\n"
    "    f = (float)m * 0x1p-24f;\n"
    "    return s ? -f : f;\n"
    "  }\n"
    "  u = e == 0x1Fu ? s | 0x7F800000u | m << 13 : s | (e + 112u) << 23 | m << 13;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n";

static const char f16_st[] =
    "static inline uint16_t @_f32_f16(float f) {\n"
    "  uint32_t u, q, r;\n"
    "  memcpy(&u, &f, 4);\n"
    "  uint32_t s = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;\n"
    "  if (a > 0x7F800000u) return (uint16_t)(s | 0x7E00u | ((a >> 13) & 0x3FFu)); /* NaN */\n"
    "  if (a >= 0x477FF000u) return (uint16_t)(s | 0x7C00u); /* rounds to 65520 or more */\n"
    "  if (a < 0x38800000u) { /* below 2^-14: a subnormal result, in units of 2^-24 */\n"
    "    if (a < 0x33000000u) return (uint16_t)s; /* up to 2^-25: the tie goes to 0 */\n"
    "    uint32_t m = (a & 0x7FFFFFu) | 0x800000u, sh = 126u - (a >> 23), half = 1u << (sh - 1u);\n"
    "    q = m >> sh;\n"
    "    r = m & ((1u << sh) - 1u);\n"
    "    q += r > half || (r == half && (q & 1u));\n"
    "    return (uint16_t)(s | q);\n"
    "  }\n"
    "  a -= 0x38000000u; /* exponent bias 127 -> 15; a carry into it is right */\n"
    "  q = a >> 13;\n"
    "  r = a & 0x1FFFu;\n"
    "  q += r > 0x1000u || (r == 0x1000u && (q & 1u));\n"
    "  return (uint16_t)(s | q);\n"
    "}\n";

static const char bf16_ld[] =
    "/* bfloat16 <-> float: the high half, rounded to nearest even; NaN stays NaN */\n"
    "static inline float @_bf16_f32(uint16_t h) {\n"
    "  uint32_t u = (uint32_t)h << 16;\n"
    "  float f;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n";

static const char bf16_st[] =
    "static inline uint16_t @_f32_bf16(float f) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, 4);\n"
    "  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
    "  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);\n"
    "}\n";

static const char f8_ld[] =
    "/* float8 <-> float. man: mantissa bits, bias: exponent bias, kind 0:\n"
    " * E4M3FN (NaN S.1111.111, no inf), 1: FNUZ (NaN 0x80, no inf, no -0),\n"
    " * 2: E5M2 (inf and NaN as IEEE), 3: neither (float4e2m1's use). */\n"
    "static inline float @_f8_f32(uint8_t v, unsigned man, unsigned bias, unsigned kind) {\n"
    "  uint32_t s = (uint32_t)(v >> 7) << 31, e = (v & 0x7Fu) >> man, m = v & ((1u << man) - 1u), u;\n"
    "  float f;\n"
    "  if ((kind == 1 && v == 0x80u) || (kind == 0 && (v & 0x7Fu) == 0x7Fu) ||\n"
    "      (kind == 2 && e == (0x7Fu >> man) && m))\n"
    "    u = (kind == 1 ? 0u : s) | 0x7FC00000u; /* NaN (FNUZ's 0x80: positive) */\n"
    "  else if (kind == 2 && e == (0x7Fu >> man))\n"
    "    u = s | 0x7F800000u; /* inf */\n"
    "  else if (e)\n"
    "    u = s | (e + 127u - bias) << 23 | m << (23u - man);\n"
    "  else { /* zero or subnormal: m * 2^(1 - bias - man) */\n"
    "    uint32_t scale = (128u - bias - man) << 23;\n"
    "    memcpy(&f, &scale, 4);\n"
    "    f *= (float)m;\n"
    "    return s ? -f : f;\n"
    "  }\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n";

static const char f8_st[] =
    "/* maxc: the largest finite code, nanc: the positive NaN code; sat: values\n"
    " * beyond the largest finite one, and inf, saturate to it, else they give\n"
    " * inf (E5M2) or NaN. */\n"
    "static inline uint8_t @_f32_f8(float f, unsigned man, unsigned bias, unsigned maxc,\n"
    "                                unsigned nanc, unsigned kind, unsigned sat) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, 4);\n"
    "  uint32_t a = u & 0x7FFFFFFFu, neg = u >> 31 ? 0x80u : 0u, sb = kind == 1 ? 0u : neg;\n"
    "  if (a > 0x7F800000u) return (uint8_t)(kind == 1 ? 0x80u : nanc | sb);\n"
    "  int be = (int)(a >> 23), e = be - 127, emin = 1 - (int)bias;\n"
    "  uint32_t code = 0x100u; /* beyond every format */\n"
    "  if (be < 145) { /* below 2^18 */\n"
    "    /* |f| = m * 2^(be - 150); the result's quantum is 2^(max(e, emin) - man) */\n"
    "    uint32_t m = be ? (a & 0x7FFFFFu) | 0x800000u : a;\n"
    "    int sh = (e < emin ? emin : e) - (int)man - ((be ? be : 1) - 150);\n"
    "    uint32_t q = 0;\n"
    "    if (sh <= 25) {\n"
    "      uint32_t r = m & ((1u << sh) - 1u), half = 1u << (sh - 1);\n"
    "      q = m >> sh;\n"
    "      q += r > half || (r == half && (q & 1u));\n"
    "    }\n"
    "    /* a normal result's exponent field; a carry out of the mantissa is right */\n"
    "    code = q + (e >= emin ? (uint32_t)(e + (int)bias - 1) << man : 0u);\n"
    "  }\n"
    "  if (code > maxc) {\n"
    "    if (sat) return (uint8_t)(maxc | neg);\n"
    "    return (uint8_t)(kind == 2 ? 0x7Cu | sb : kind == 1 ? 0x80u : nanc | sb);\n"
    "  }\n"
    "  return (uint8_t)(code ? code | neg : sb);\n"
    "}\n";

static const char e8m0_ld[] =
    "/* float8e8m0 (a power of two: the exponent only; 0xFF is NaN) <-> float. rm:\n"
    " * 0 rounds up, 1 down, 2 to nearest (ties up); sat: inf and overflow give\n"
    " * 2^127 (0xFE), else NaN; zero gives 2^-127 when saturating, else NaN */\n"
    "static inline float @_e8m0_f32(uint8_t v) {\n"
    "  uint32_t u = v == 0xFFu ? 0x7FC00000u : v ? (uint32_t)v << 23 : 0x00400000u;\n"
    "  float f;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n";

static const char e8m0_st[] =
    "static inline uint8_t @_f32_e8m0(float f, unsigned sat, unsigned rm) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, 4);\n"
    "  u &= 0x7FFFFFFFu; /* the sign is dropped */\n"
    "  if (u > 0x7F800000u) return 0xFFu;\n"
    "  if (u == 0x7F800000u) return (uint8_t)(sat ? 0xFEu : 0xFFu);\n"
    "  uint32_t e = u >> 23, m = u & 0x7FFFFFu;\n"
    "  if (e == 0) { /* zero or a float subnormal: 2^-127 is code 0 */\n"
    "    if (!sat && m == 0) return 0xFFu;\n"
    "    return (uint8_t)((rm == 0 && m > 0x400000u) || (rm == 2 && m >= 0x600000u));\n"
    "  }\n"
    "  e += (rm == 0 && m) || (rm == 2 && m >= 0x400000u);\n"
    "  return (uint8_t)(e >= 0xFFu ? (sat ? 0xFEu : 0xFFu) : e);\n"
    "}\n";

static const char f4_ld[] =
    "/* float4e2m1 (in the low 4 bits) <-> float, through the float8 helpers:\n"
    " * 1 mantissa bit, bias 1, no inf or NaN (NaN gives -0, as ONNX's\n"
    " * reference), saturating at 6 */\n"
    "static inline float @_f4_f32(uint8_t v) {\n"
    "  return @_f8_f32((uint8_t)((v & 7u) | (v & 8u) << 4), 1u, 1u, 3u);\n"
    "}\n";

static const char f4_st[] =
    "static inline uint8_t @_f32_f4(float f) {\n"
    "  uint8_t c = @_f32_f8(f, 1u, 1u, 0x07u, 0x80u, 3u, 1u);\n"
    "  return (uint8_t)((c & 7u) | (c & 0x80u) >> 4);\n"
    "}\n";

unsigned cg_packed_bits(int32_t dt) {
  switch (dt) {
    case OX_INT4:
    case OX_UINT4:
    case OX_FLOAT4E2M1:
      return 4;
    case OX_INT2:
    case OX_UINT2:
      return 2;
    default:
      return 0;
  }
}

const char *cg_load_packed(cg_ctx *c, int32_t dt, const char *arr, const char *i) {
  unsigned bits = cg_packed_bits(dt), per = 8 / bits, mask = (1u << bits) - 1u;
  const char *field = ox_arena_printf(c->a, "((%s[(%s) / %u] >> ((%s) %% %u * %u)) & %uu)", arr,
                                      i, per, i, per, bits, mask);
  if (!field) return NULL;
  if (dt == OX_FLOAT4E2M1) {
    c->conv_used |= CG_CONV_F4 | CG_CONV_F8;
    return ox_arena_printf(c->a, "%s_f4_f32((uint8_t)%s)", c->prefix, field);
  }
  if (dt == OX_INT4 || dt == OX_INT2) /* sign-extended */
    return ox_arena_printf(c->a, "(((int)%s ^ %u) - %u)", field, 1u << (bits - 1),
                           1u << (bits - 1));
  return ox_arena_printf(c->a, "(int)%s", field);
}

void cg_store_packed(cg_ctx *c, int32_t dt, int64_t n, const char *e, bool is_float) {
  unsigned bits = cg_packed_bits(dt), per = 8 / bits, mask = (1u << bits) - 1u;
  const char *v;
  if (dt == OX_FLOAT4E2M1) {
    c->conv_used |= (CG_CONV_F4 | CG_CONV_F8) << 8;
    v = ox_arena_printf(c->a, "(unsigned)%s_f32_f4(%s)", c->prefix, e);
  } else /* wraps: the low bits of the (truncated) integer */
    v = ox_arena_printf(c->a, is_float ? "(unsigned)(long long)(%s)" : "(unsigned)(%s)", e);
  int64_t nb = (n + per - 1) / per;
  cg_printf(c, "  for (size_t b = 0; b < %lld; b++) {\n    unsigned acc = 0;\n", (long long)nb);
  cg_printf(c, "    for (size_t j = 0; j < %u; j++) {\n      const size_t i = b * %u + j;\n", per,
            per);
  cg_printf(c, "      if (i < %lld) acc |= (%s & %uu) << (j * %u);\n    }\n", (long long)n,
            v ? v : "0u", mask, bits);
  cg_printf(c, "    Y0[b] = (uint8_t)acc;\n  }\n");
}

static void put_text(ox_buf *s, const char *t, const char *P) {
  for (; *t; t++)
    if (*t == '@')
      ox_buf_puts(s, P);
    else
      ox_buf_putc(s, *t);
}

/* Each direction only when used: clang warns about an unused static
 * inline function in a .c file. */
void cg_write_conv(cg_ctx *c, ox_buf *s) {
  static const struct {
    unsigned bit;
    const char *text;
  } parts[] = {{CG_CONV_F16, f16_ld},   {CG_CONV_F16 << 8, f16_st}, {CG_CONV_BF16, bf16_ld},
               {CG_CONV_BF16 << 8, bf16_st}, {CG_CONV_F8, f8_ld},   {CG_CONV_F8 << 8, f8_st},
               {CG_CONV_F4, f4_ld},     {CG_CONV_F4 << 8, f4_st},   {CG_CONV_E8M0, e8m0_ld},
               {CG_CONV_E8M0 << 8, e8m0_st}};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (c->conv_used & parts[i].bit) put_text(s, parts[i].text, c->prefix);
  if (c->conv_used) ox_buf_putc(s, '\n');
}
