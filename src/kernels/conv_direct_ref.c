/* conv_direct_ref.c - conv_direct.h's portable level: the body as plain C */
#define OX_LEVEL 0
#include "isa_level.h"
#include "conv_direct_body.h"
