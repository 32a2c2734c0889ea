/* cast.c - kernels of the cast family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_cast[] = {
    {0},
};
