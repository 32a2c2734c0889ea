/* elementwise.c - kernels of the elementwise family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_elementwise[] = {
    {0},
};
