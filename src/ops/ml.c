/* ml.c - kernels of the ml family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_ml[] = {
    {0},
};
