/* string.c - kernels of the string family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_string[] = {
    {0},
};
