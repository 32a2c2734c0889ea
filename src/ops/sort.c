/* sort.c - kernels of the sort family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_sort[] = {
    {0},
};
