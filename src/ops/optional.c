/* optional.c - kernels of the optional family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_optional[] = {
    {0},
};
