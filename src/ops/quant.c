/* quant.c - kernels of the quant family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_quant[] = {
    {0},
};
