/* reduce.c - kernels of the reduce family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_reduce[] = {
    {0},
};
