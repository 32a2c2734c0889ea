/* loss.c - kernels of the loss family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_loss[] = {
    {0},
};
