/* softmax.c - kernels of the softmax family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_softmax[] = {
    {0},
};
