/* random.c - kernels of the random family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_random[] = {
    {0},
};
