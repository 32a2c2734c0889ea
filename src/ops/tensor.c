/* tensor.c - kernels of the tensor family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_tensor[] = {
    {0},
};
