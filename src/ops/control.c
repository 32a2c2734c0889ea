/* control.c - kernels of the control family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_control[] = {
    {0},
};
