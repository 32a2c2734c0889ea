/* vmath_avx2.c - vmath.h's AVX2 level: the portable body compiled for AVX2 */
#define OX_LEVEL 1
#include "levels.h"
#if OX_LEVELS_X86
#include "vmath_body.h"
#endif
