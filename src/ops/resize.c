/* resize.c - kernels of the resize family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_resize[] = {
    {0},
};
