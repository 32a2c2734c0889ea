/* pad.c - kernels of the pad family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_pad[] = {
    {0},
};
