/* vmath_ref.c - vmath.h's portable level: the body as plain C */
#define OX_LEVEL 0
#include "levels.h"
#include "vmath_body.h"
