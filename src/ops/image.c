/* image.c - kernels of the image family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_image[] = {
    {0},
};
