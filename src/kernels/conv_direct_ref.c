/* conv_direct_ref.c - conv_direct.h's portable level: the body as plain C */
#define OX_LEVEL 0
#include "conv_direct_body.h"
#include "levels.h"
