/* test_floatconv.c - small float conversions against values taken from the
 * onnx conformance data (node/test_cast_*) and the IEEE formats. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/floatconv.h"
#include "ir/ir.h"

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* the 15 inputs of node/test_cast_FLOAT_to_FLOAT8* (as float32 bits) */
static const uint32_t f8_in[15] = {0x3ef535b8, 0x3ef5eeb0, 0x3effd6b2, 0x3f51b0e5, 0x3ef0cccc,
                                   0x3f391039, 0x49742400, 0x33d6bf95, 0x7fc00000, 0x7f800000,
                                   0x7f800000, 0xff800000, 0xb3d6bf95, 0x33d6bf95, 0xc9742400};

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void test_f8(void) {
  /* node/test_cast_FLOAT_to_FLOAT8E4M3FN (saturate) */
  static const uint8_t e4m3fn[15] = {0x2f, 0x2f, 0x30, 0x35, 0x2f, 0x34, 0x7e, 0x00,
                                     0x7f, 0x7e, 0x7e, 0xfe, 0x80, 0x00, 0xfe};
  /* node/test_cast_no_saturate_FLOAT_to_FLOAT8E5M2 */
  static const uint8_t e5m2[15] = {0x38, 0x38, 0x38, 0x3b, 0x38, 0x3a, 0x7c, 0x00,
                                   0x7e, 0x7c, 0x7c, 0xfc, 0x80, 0x00, 0xfc};
  for (int i = 0; i < 15; i++) {
    float x = from_bits(f8_in[i]);
    CHECK(ox_f32_to_f8(x, OX_FLOAT8E4M3FN, true) == e4m3fn[i]);
    CHECK(ox_f32_to_f8(x, OX_FLOAT8E5M2, false) == e5m2[i]);
  }
  CHECK(ox_f8_to_f32(0x7e, OX_FLOAT8E4M3FN) == 448.0f);
  CHECK(isnan(ox_f8_to_f32(0x7f, OX_FLOAT8E4M3FN)));
  CHECK(ox_f8_to_f32(0x7f, OX_FLOAT8E4M3FNUZ) == 240.0f);
  CHECK(isnan(ox_f8_to_f32(0x80, OX_FLOAT8E4M3FNUZ)));
  CHECK(ox_f8_to_f32(0x7b, OX_FLOAT8E5M2) == 57344.0f);
  CHECK(isinf(ox_f8_to_f32(0x7c, OX_FLOAT8E5M2)));
  CHECK(ox_f8_to_f32(0x7f, OX_FLOAT8E5M2FNUZ) == 57344.0f);
  CHECK(ox_f8_to_f32(0x01, OX_FLOAT8E4M3FN) == ldexpf(1.0f, -9)); /* smallest subnormal */
  CHECK(ox_f32_to_f8(-0.0f, OX_FLOAT8E4M3FNUZ, true) == 0x00);    /* no -0 in FNUZ */
  CHECK(ox_f32_to_f8(1e6f, OX_FLOAT8E4M3FNUZ, false) == 0x80);
  CHECK(ox_f32_to_f8(1e6f, OX_FLOAT8E5M2FNUZ, true) == 0x7f);
  for (int v = 0; v < 256; v++) /* every finite code round-trips */
    for (int k = OX_FLOAT8E4M3FN; k <= OX_FLOAT8E5M2FNUZ; k++) {
      float f = ox_f8_to_f32((uint8_t)v, k);
      if (isnan(f) || isinf(f) || (f == 0.0f && v != 0)) continue;
      CHECK(ox_f32_to_f8(f, k, false) == v);
    }
}

static void test_f4_e8m0(void) {
  /* node/test_cast_FLOAT_to_FLOAT4E2M1: inputs and unpacked outputs */
  static const float in[15] = {0.48f, 0.25f,    1.05f,    -3.5f,     -8.0f, 9.0f,  1e6f, 1e-7f,
                               NAN,   INFINITY, INFINITY, -INFINITY, -4.0f, 0.01f, -0.0f};
  static const uint8_t out[15] = {1, 0, 2, 0xe, 0xf, 7, 7, 0, 8, 7, 7, 0xf, 0xe, 0, 8};
  for (int i = 0; i < 15; i++) CHECK(ox_f32_to_f4(in[i]) == out[i]);
  CHECK(ox_f4_to_f32(0x7) == 6.0f && ox_f4_to_f32(0x1) == 0.5f && ox_f4_to_f32(0xb) == -1.5f);
  /* node/test_cast_e8m0_FLOAT_to_FLOAT8E8M0 (saturate, round up) */
  static const float ein[8] = {0.0f, 0.124f, 0.25f, 0.5f, 1.1f, 2.0f, 4.0f, 8.0f};
  static const uint8_t eout[8] = {0x00, 0x7c, 0x7d, 0x7e, 0x80, 0x80, 0x81, 0x82};
  for (int i = 0; i < 8; i++) CHECK(ox_f32_to_e8m0(ein[i], true, 0) == eout[i]);
  CHECK(ox_e8m0_to_f32(127) == 1.0f && isnan(ox_e8m0_to_f32(255)));
  CHECK(ox_f32_to_e8m0(1.1f, true, 1) == 127 && ox_f32_to_e8m0(1.6f, true, 2) == 128);
}

static void test_f16_bf16(void) {
  CHECK(ox_f32_to_f16(1.0f) == 15360); /* IR.md: float16 {15360} = 1.0 */
  CHECK(ox_f32_to_f16(65504.0f) == 0x7bff && ox_f32_to_f16(65520.0f) == 0x7c00);
  CHECK(ox_f32_to_f16(-2.0f) == 0xc000 && ox_f32_to_f16(ldexpf(1.0f, -24)) == 0x0001);
  CHECK(ox_f32_to_f16(ldexpf(1.0f, -25)) == 0 && ox_f32_to_f16(ldexpf(1.5f, -25)) == 1);
  CHECK(ox_f32_to_f16(1.0f + ldexpf(1.0f, -11)) == 15360);     /* tie to even */
  CHECK(ox_f32_to_f16(1.0f + 3 * ldexpf(1.0f, -11)) == 15362); /* tie to even, up */
  CHECK((ox_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (ox_f32_to_f16(NAN) & 0x3ff) != 0);
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = ox_f16_to_f32((uint16_t)h);
    if (isnan(f)) continue;
    CHECK(ox_f32_to_f16(f) == h);
  }
  CHECK(ox_f32_to_bf16(1.0f) == 0x3f80 && ox_bf16_to_f32(0x3f80) == 1.0f);
  CHECK(ox_f32_to_bf16(from_bits(0x3f808000)) == 0x3f80); /* tie to even */
  CHECK(ox_f32_to_bf16(from_bits(0x3f818000)) == 0x3f82);
  CHECK(isnan(ox_bf16_to_f32(ox_f32_to_bf16(NAN))));
}

/* the array forms (F16C when present) give the scalar results bit for bit */
static void test_f16_arrays(void) {
  static uint16_t h[65536], h2[65536];
  static float f[65536];
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  ox_f16_to_f32_n(h, f, 65536);
  for (uint32_t i = 0; i < 65536; i++) {
    float r = ox_f16_to_f32((uint16_t)i);
    CHECK(memcmp(&r, &f[i], sizeof r) == 0 || (isnan(r) && isnan(f[i])));
  }
  /* exact values, ties (+0x1000), subnormals and overflow: 2^-26 to 2^38 */
  static float g[65536];
  uint32_t start = 0x32800000u;
  for (uint32_t i = 0; i < 65536; i++) {
    uint32_t u = start + i * 8192u + (i & 1u ? 0x1000u : 0u);
    memcpy(&g[i], &u, sizeof u);
    if (i & 2u) g[i] = -g[i];
  }
  ox_f32_to_f16_n(g, h2, 65536);
  for (uint32_t i = 0; i < 65536; i++) CHECK(h2[i] == ox_f32_to_f16(g[i]));
}

/* the bfloat16 array forms give the scalar results bit for bit: every
 * bfloat16, and float32 bit patterns across the whole range (ties, NaNs with
 * payloads, infinities, subnormals, both signs) */
static void test_bf16_arrays(void) {
  static uint16_t h[65536], h2[65536];
  static float f[65536], g[65536];
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  ox_bf16_to_f32_n(h, f, 65536);
  for (uint32_t i = 0; i < 65536; i++) {
    float r = ox_bf16_to_f32((uint16_t)i);
    CHECK(memcmp(&r, &f[i], sizeof r) == 0);
  }
  for (uint32_t i = 0; i < 65536; i++) {
    uint32_t u = i * 65537u + (i & 1u ? 0x8000u : 0u); /* every upper half, ties in odd */
    memcpy(&g[i], &u, sizeof u);
  }
  ox_f32_to_bf16_n(g, h2, 65536);
  for (uint32_t i = 0; i < 65536; i++) CHECK(h2[i] == ox_f32_to_bf16(g[i]));
}

int main(void) {
  test_f16_arrays();
  test_bf16_arrays();
  test_f8();
  test_f4_e8m0();
  test_f16_bf16();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("floatconv ok\n");
  return 0;
}
