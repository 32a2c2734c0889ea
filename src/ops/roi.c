/* roi.c - kernels of the roi family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_roi[] = {
    {0},
};
