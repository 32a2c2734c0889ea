/* conv.c - kernels of the conv family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_conv[] = {
    {0},
};
