/* conv_direct_avx2.c - conv_direct.h's AVX2 level: the portable body compiled for AVX2 */
#define OX_LEVEL 1
#include "levels.h"
#if OX_LEVELS_X86
#include "conv_direct_body.h"
#endif
