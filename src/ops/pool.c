/* pool.c - kernels of the pool family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_pool[] = {
    {0},
};
