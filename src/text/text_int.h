/* text_int.h - what the parser and the printer of the textual syntax share. */
#ifndef OX_TEXT_INT_H
#define OX_TEXT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true for [A-Za-z_][A-Za-z0-9_]* */
bool ox_text_is_id(const char *s, size_t n);
/* true for words that a bare name may not be where a type or a value could
 * start: the primitive type names, seq/map/optional/sparse_tensor/opaque,
 * and inf/infinity/nan (any case). The printer quotes such names. */
bool ox_text_is_reserved(const char *s, size_t n);

/* Attribute type annotation names ("float", "ints", ...) indexed by
 * ox_attr_type; NULL for UNDEFINED. */
extern const char *const ox_text_attr_type_names[15];

/* float16, bfloat16, the float8 kinds, float8e8m0, float4e2m1 */
bool ox_text_is_small_float(int32_t dt);
/* the bit pattern of f in such a type (round to nearest even, saturating) */
uint32_t ox_text_small_float_bits(int32_t dt, float f);

#endif
