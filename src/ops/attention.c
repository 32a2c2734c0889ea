/* attention.c - kernels of the attention family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_attention[] = {
    {0},
};
