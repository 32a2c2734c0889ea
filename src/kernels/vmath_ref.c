/* vmath_ref.c - vmath.h's portable level: the body as plain C */
#define OX_LEVEL 0
#include "isa_level.h"
#include "vmath_body.h"
