/* gather.c - kernels of the gather family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_gather[] = {
    {0},
};
