/* q8_ref.c - q8.h's portable level: the body as plain C */
#define OX_LEVEL 0
#include "levels.h"
#include "q8_body.h"
