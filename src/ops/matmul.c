/* matmul.c - kernels of the matmul family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_matmul[] = {
    {0},
};
