/* unary.c - kernels of the unary family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_unary[] = {
    {0},
};
