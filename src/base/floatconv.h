/* floatconv.h - conversions between float32 and the small float formats
 * (float16, bfloat16, the float8 kinds, float8e8m0, float4e2m1), by the
 * rules of onnx's Operators.md (Cast) and IR.md. */
#ifndef OX_FLOATCONV_H
#define OX_FLOATCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

float ox_f16_to_f32(uint16_t h);
uint16_t ox_f32_to_f16(float f); /* round to nearest even */
/* Arrays (F16C instructions when the CPU has them; same results). */
void ox_f16_to_f32_n(const uint16_t *h, float *f, size_t n);
void ox_f32_to_f16_n(const float *f, uint16_t *h, size_t n);
float ox_bf16_to_f32(uint16_t h);
uint16_t ox_f32_to_bf16(float f); /* round to nearest even, NaN kept */
/* Arrays, the same bits as the functions above. */
void ox_bf16_to_f32_n(const uint16_t *h, float *f, size_t n);
void ox_f32_to_bf16_n(const float *f, uint16_t *h, size_t n);

/* dtype is one of OX_FLOAT8E4M3FN, OX_FLOAT8E4M3FNUZ, OX_FLOAT8E5M2,
 * OX_FLOAT8E5M2FNUZ. saturate: out-of-range finite values (and inf where the
 * format has no inf) go to the largest finite value instead of NaN/inf. */
float ox_f8_to_f32(uint8_t v, int dtype);
uint8_t ox_f32_to_f8(float f, int dtype, bool saturate);

/* float8e8m0: exponent only; 0xFF is NaN. round_mode: 0 up, 1 down, 2 nearest */
float ox_e8m0_to_f32(uint8_t v);
uint8_t ox_f32_to_e8m0(float f, bool saturate, int round_mode);

/* float4e2m1 in the low 4 bits. Saturates (no inf/NaN in the format). */
float ox_f4_to_f32(uint8_t v);
uint8_t ox_f32_to_f4(float f);

#endif
