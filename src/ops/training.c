/* training.c - kernels of the training family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_training[] = {
    {0},
};
