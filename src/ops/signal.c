/* signal.c - kernels of the signal family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_signal[] = {
    {0},
};
