/* q8_avx2.c - q8.h's AVX2 level: the portable body compiled for AVX2 */
#define OX_LEVEL 1
#include "levels.h"
#if OX_LEVELS_X86
#include "q8_body.h"
#endif
