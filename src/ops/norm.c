/* norm.c - kernels of the norm family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_norm[] = {
    {0},
};
